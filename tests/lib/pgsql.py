"""psql for the Python test harnesses: one way to run SQL through psql and
to turn its failure into an exception, so that the suites (interop,
joinfilter, multi, versions) build the same command and read it the same way.

The command is BEFORE (the psql program, with the connection options of a
caller that puts them first), then the flags: -X (no ~/.psqlrc), -q, with
tuples -A -t (unaligned, tuples only: one line per row) and -v
ON_ERROR_STOP=1 (or 0 without stop), then AFTER (connection options, -c
COMMAND, -F ...). The SQL goes to psql's standard input.
"""

import subprocess


def run(before, sql, after=(), tuples=True, stop=True, text=True):
    """Runs psql with sql (str; bytes with text=False; None leaves stdin as
    it is) on its standard input and returns the finished process, its
    stdout and stderr captured; a failure raises nothing (see output)."""
    flags = ["-X", "-q"] + (["-A", "-t"] if tuples else [])
    flags += ["-v", "ON_ERROR_STOP=1" if stop else "ON_ERROR_STOP=0"]
    return subprocess.run([*before, *flags, *after], input=sql, capture_output=True,
                          text=text, check=False)


def errors(proc):
    """What psql wrote to stderr, as text (bytes are read as UTF-8, an
    invalid byte replaced)."""
    err = proc.stderr
    return err if isinstance(err, str) else err.decode("utf-8", "replace")


def output(proc, where=""):
    """The stdout of a finished psql; a non-zero exit raises RuntimeError
    with where (such as "coord: ") and psql's message."""
    if proc.returncode != 0:
        raise RuntimeError(f"{where}{errors(proc).strip()}")
    return proc.stdout


def lines(before, sql, after=(), where=""):
    """The output lines of sql (one per row, unaligned, stopping at the
    first error); an error raises RuntimeError (see output)."""
    return output(run(before, sql, after), where).splitlines()
