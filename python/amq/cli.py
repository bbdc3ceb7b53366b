"""The ``amq`` command (also ``python3 -m amq``): filter files from the shell.

    amq build --fpr 0.01 --type int < keys.txt > vip.amq
    amq info vip.amq
    amq contains vip.amq 42 43                 # exit status 0 when every key may be present
    amq union monday.amq tuesday.amq -o week.amq   # both built with the same --capacity
    amq hex vip.amq                            # \\x… for psql; --sqlite gives X'…'

A filter file holds a filter's bytes exactly as SQL stores them, so a file built
here can be bound into SQL, and ``SELECT f`` written to a file opens here.
``amq contains`` reads its keys as the values the filter holds (its families,
``amq info``): numbers as int (a non-integer as real), text as text, blobs as
hex digits; ``--type`` says otherwise, and is needed for a filter of mixed
families or one written before amq 0.4.0 (text by default). A key of another
family than the filter's is an error, not a "no".
Errors go to stderr as ``amq COMMAND: FILE: what is wrong``, with exit status 2.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import tempfile
import time
from typing import IO, Callable, Iterator, List, Optional, Sequence

import amq

from . import KINDS, LAYOUTS, Error, Filter

TYPES = ("int", "real", "text", "blob")
# Inputs at least this large get a progress line on a terminal.
PROGRESS_BYTES = 1 << 20


class CommandError(Exception):
    """A failure to report as ``amq COMMAND: WHERE: what``, exit status 2."""

    def __init__(self, where: str, what: str):
        super().__init__(f"{where}: {what}")


def parse_key(text: str, kind: str) -> object:
    """One key as the SQL value of --type: int, real, text or blob (hex digits);
    or "number" (a filter of numbers without --type): an int, or a float when it
    is not an integer."""
    if kind == "int":
        return int(text)
    if kind == "real":
        return float(text)
    if kind == "number":
        try:
            return int(text)
        except ValueError:
            return float(text)
    if kind == "blob":
        return bytes.fromhex(text)
    return text


# What a key of each --type but text must be, for errors.
TYPE_NAMES = {"int": "an integer", "real": "a number", "number": "a number",
              "blob": "hexadecimal digits"}

# How contains reads keys without --type, by the filter's families (Filter.families):
# a filter of one family reads them as its values; mixed, none yet or unknown ones
# (before amq 0.4.0) as text, as --type's default.
FAMILY_TYPES = {("numbers",): "number", ("text",): "text", ("blobs",): "blob"}
# The --type values that read keys of each family, for the error of a wrong one.
FAMILY_OPTIONS = {"numbers": ["int", "real"], "text": ["text"], "blobs": ["blob"]}


def key_error(kind: str, text: str, families: Optional[Sequence[str]] = None) -> str:
    """What is wrong with a key that does not parse as --type, or, when families is
    given, as the values of the filter that holds them (contains without --type)."""
    if families:
        return (f"{text!r} is not {TYPE_NAMES[kind]}, and the filter holds "
                f"{' and '.join(families)} (pass --type to read keys as another type)")
    return f"{text!r} is not {TYPE_NAMES[kind]} (--type {kind})"


def family_error(e: Error, f: Filter) -> str:
    """The error of a key of a family f does not hold (read as --type said): core's
    message, and the --type values that read keys as f's values."""
    families = f.families
    if not families:
        return str(e)
    types = [t for name in families for t in FAMILY_OPTIONS[name]]
    words = ", ".join(types[:-1]) + " or " + types[-1] if len(types) > 1 else types[0]
    if tuple(families) in FAMILY_TYPES:
        return (f"{e.message}: leave --type out to read keys as the filter's values, or pass "
                f"--type {words}")
    return f"{e.message}: pass --type {words}, the types of the filter's values"


def key_type(f: Filter, given: Optional[str]) -> str:
    """How contains reads keys: --type when given, else by f's families."""
    if given is not None:
        return given
    return FAMILY_TYPES.get(f.families or (), "text")


class Progress:
    """The progress line of ``amq build`` on stderr, on a terminal only: while a
    large input is read (keys, and the share of a file's bytes), then through
    the merge of what the build spilled past --work-mem (merge, amq.bloom's
    progress=). Redrawn at most five times a second, and at once as the finish
    starts counting and inserting (each once a build), which may follow the
    last line drawn closely and last long."""

    def __init__(self) -> None:
        self.terminal = sys.stderr.isatty()
        self.total: Optional[int] = None
        self.reading = False
        self.shown = False
        self.last = 0.0

    def read(self, total: Optional[int]) -> None:
        """Starts an input of total bytes (None: unknown, a pipe); shown when
        it is at least PROGRESS_BYTES or unknown."""
        self.total = total
        self.reading = self.terminal and (total is None or total >= PROGRESS_BYTES)

    def update(self, keys: int, done: int) -> None:
        """keys read so far of the input, done of its bytes."""
        if not self.reading:
            return
        line = f"amq build: {keys:,} keys"
        if self.total:
            line += self.bar(done / self.total)
        self.draw(line)

    def merge(self, phase: str, done: int, total: int) -> None:
        """amq.bloom's progress: done of total keys read in phase ("merging
        runs", "counting", "inserting"). A merge of runs shows only while under
        way: at its start or end its line would stay over the reading's, which
        goes on at once. The finish's phases show from their start."""
        finish = phase in ("counting", "inserting")
        if self.terminal and (finish or 0 < done < total):
            self.draw(f"amq build: {phase} {done:,} of {total:,} keys"
                      + self.bar(done / total if total else 1.0), now=finish and done == 0)

    @staticmethod
    def bar(share: float) -> str:
        """`` [####      ]  41%`` for share, at most 1."""
        share = min(share, 1.0)
        return f" [{'#' * int(share * 30):<30}] {share:4.0%}"

    def draw(self, line: str, now: bool = False) -> None:
        """Shows line in place of the last one, unless that one is shown and
        less than 0.2 s old (and not now)."""
        when = time.monotonic()
        if self.shown and when - self.last < 0.2 and not now:
            return
        self.last = when
        sys.stderr.write("\r\033[K" + line)
        sys.stderr.flush()
        self.shown = True

    def finish(self) -> None:
        """Clears the line."""
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.shown = False


def input_size(stream: IO[bytes]) -> Optional[int]:
    """The size of a regular file behind stream, or None (a pipe)."""
    try:
        st = os.fstat(stream.fileno())
    except (OSError, ValueError):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def read_keys(stream: IO[bytes], name: str, kind: str,
              progress: Optional[Progress] = None) -> Iterator[object]:
    """The keys of stream, one a line (its end of line removed), as --type says.

    Empty lines at the end (blank ones for int, real and blob, which ignore
    spaces) are the end of the input, as a file's last newline is: editors and
    ``echo`` leave them. Before a key they are keys of their own: the empty
    text or blob, and for int and real an error naming the line.
    """
    done = 0
    # Empty lines seen since the last key: keys only if another key follows.
    pending: List[int] = []
    for number, raw in enumerate(stream, 1):
        done += len(raw)
        line = raw.rstrip(b"\n")
        if line.endswith(b"\r"):
            line = line[:-1]
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CommandError(f"{name}:{number}", f"not UTF-8 ({e.reason})") from None
        if kind != "text":
            text = text.strip()
        if text == "":
            pending.append(number)
            continue
        for empty in pending:
            yield key_of("", kind, f"{name}:{empty}")
        pending.clear()
        key = key_of(text, kind, f"{name}:{number}")
        if progress is not None and number % 65536 == 0:
            progress.update(number, done)
        yield key


def key_of(text: str, kind: str, where: str) -> object:
    """parse_key, or the CommandError that names where the key is."""
    try:
        return parse_key(text, kind)
    except ValueError:
        what = (f"an empty line is not {TYPE_NAMES[kind]} (--type {kind}); only empty lines at "
                "the end are skipped") if text == "" else key_error(kind, text)
        raise CommandError(where, what) from None


def open_filter(path: str) -> Filter:
    """The filter in the file at path; errors name the file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise CommandError(path, e.strerror or str(e)) from None
    try:
        return Filter(data)
    except Error as e:
        raise CommandError(path, str(e)) from None


def write_filter(f: Filter, out: Optional[str]) -> None:
    """Writes f's bytes to the file out, or to stdout unless it is a terminal.

    The file appears whole or not at all: the bytes go to a temporary file in
    out's folder, renamed to out once written and flushed to disk, and removed
    on any error (an existing out is then left as it was).
    """
    if out is None or out == "-":
        if sys.stdout.isatty():
            raise CommandError("stdout", "is a terminal: redirect it to a file or pass -o FILE")
        sys.stdout.buffer.write(bytes(f))
        sys.stdout.buffer.flush()
        return
    folder, name = os.path.split(os.path.abspath(out))
    temp = None
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "wb") as stream:
            # mkstemp's file is private (0600): give it the mode open() would.
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(stream.fileno(), 0o666 & ~umask)
            stream.write(bytes(f))
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp, out)
        temp = None
    except OSError as e:
        raise CommandError(out, e.strerror or str(e)) from None
    finally:
        if temp is not None:
            try:
                os.unlink(temp)
            except OSError:
                pass


def cmd_build(args: argparse.Namespace) -> int:
    """Builds a filter from keys, one a line, with the bytes of the kind's aggregate."""
    build: Callable[..., Filter] = getattr(amq, args.kind)
    inputs = args.input or ["-"]

    names = ["stdin" if path == "-" else path for path in inputs]
    progress = Progress()

    def keys() -> Iterator[object]:
        for path, name in zip(inputs, names):
            try:
                stream = sys.stdin.buffer if path == "-" else open(path, "rb")
            except OSError as e:
                raise CommandError(name, e.strerror or str(e)) from None
            progress.read(input_size(stream))
            try:
                yield from read_keys(stream, name, args.type, progress)
            finally:
                progress.finish()
                if path != "-":
                    stream.close()

    try:
        # A build that spilled merges its runs: while the keys are read ("merging
        # runs") and once they all are ("counting", "inserting"), on the same line.
        # A kind whose aggregate takes no capacity or layout (fuse) gets none.
        sized = {name: value for name, value in (("capacity", args.capacity),
                                                 ("layout", args.layout)) if value is not None}
        f = build(keys(), fpr=args.fpr, work_mem=args.work_mem,
                  progress=progress.merge if progress.terminal else None, **sized)
    except Error as e:
        raise CommandError(", ".join(names), str(e)) from None
    except TypeError as e:
        raise CommandError(", ".join(names), f"--kind {args.kind}: {e}") from None
    finally:
        progress.finish()
    write_filter(f, args.output)
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """Prints the JSON that the kind's *_info function gives."""
    import json

    print(json.dumps(open_filter(args.file).info(), separators=(",", ":")))
    return 0


def cmd_contains(args: argparse.Namespace) -> int:
    """One line per key, "KEY<tab>maybe" or "KEY<tab>no"; status 0 when every key may
    be present, 1 otherwise. Keys are read as --type says, else as the filter's
    values (key_type)."""
    f = open_filter(args.file)
    kind = key_type(f, args.type)
    texts: Sequence[str] = args.keys
    if not texts:
        texts = [line.rstrip("\r\n") for line in sys.stdin]
        # Empty lines at the end are the end of the input, as for build.
        while texts and (texts[-1] if kind == "text" else texts[-1].strip()) == "":
            texts.pop()
    everything = True
    for text in texts:
        try:
            key = parse_key(text, kind)
        except ValueError:
            raise CommandError(args.file, key_error(
                kind, text, None if args.type else f.families)) from None
        try:
            present = key in f
        except Error as e:
            # Only a key of a family the filter does not hold: one --type gave.
            raise CommandError(args.file, family_error(e, f)) from None
        everything &= present
        print(f"{text}\t{'maybe' if present else 'no'}")
    return 0 if everything else 1


def cmd_union(args: argparse.Namespace) -> int:
    """Writes the union of the files' filters (bloom_union_agg)."""
    result = open_filter(args.files[0])
    for path in args.files[1:]:
        try:
            result |= open_filter(path)
        except Error as e:
            raise CommandError(path, str(e)) from None
    write_filter(result, args.output)
    return 0


def cmd_hex(args: argparse.Namespace) -> int:
    """Prints the filter as a literal: \\x… for psql, X'…' for sqlite3."""
    data = bytes(open_filter(args.file))
    print(f"X'{data.hex().upper()}'" if args.sqlite else "\\x" + data.hex())
    return 0


def parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per job, each with its own --help."""
    p = argparse.ArgumentParser(
        prog="amq", description="Bloom and cuckoo filter files, byte for byte the values "
        "amq's SQLite and PostgreSQL functions store.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, run: Callable[[argparse.Namespace], int], summary: str,
                description: str, file: bool = False) -> argparse.ArgumentParser:
        """Subcommand name, which calls run(args); file: its first argument
        is the FILE of a filter."""
        c = sub.add_parser(name, help=summary, description=description)
        c.set_defaults(run=run)
        if file:
            c.add_argument("file", metavar="FILE")
        return c

    def output(c: argparse.ArgumentParser) -> None:
        c.add_argument("-o", "--output", help="file to write, whole or not at all: nothing is "
                       "left behind on error (default: stdout)")

    b = command("build", cmd_build, "build a filter from keys, one a line",
                "Builds a filter from keys, one a line, read from the files given or stdin; "
                "the bytes are bloom_agg's (cuckoo_agg's) over the same values, with the "
                "values typed as --type says.")
    b.add_argument("input", nargs="*", help="files of keys (default: stdin; - is stdin)")
    b.add_argument("--kind", choices=KINDS, default="bloom",
                   help="filter kind (default bloom)")
    b.add_argument("--fpr", type=float, default=0.01,
                   help="false-positive rate (default 0.01)")
    b.add_argument("--capacity", type=int, default=None,
                   help="distinct keys the filter holds (default: sized for the keys given)")
    b.add_argument("--layout", default=None,
                   help="; ".join(f"{kind}: {', '.join(names)}" for kind, names in LAYOUTS.items())
                   + " (default: the kind's own for the fpr, as SQL's)")
    b.add_argument("--work-mem", type=int, default=None, metavar="BYTES",
                   help="memory the distinct keys may take while a filter without --capacity "
                   "is built (default 67108864, 64 MiB; at least 65536); past it they spill "
                   "to temporary files in $TMPDIR (or /tmp), and the filter is the same")
    b.add_argument("--type", choices=TYPES, default="text",
                   help="what a line is: int, real, text (default) or blob (hex digits); the "
                   "filter records it (numbers, text or blobs), and amq contains reads keys so")
    output(b)

    command("info", cmd_info, "print a filter's description as JSON",
            "Prints the JSON bloom_info / cuckoo_info give for the filter in FILE.", file=True)

    c = command("contains", cmd_contains, "test keys against a filter",
                "Prints KEY<tab>maybe or KEY<tab>no for each key (from the command line, or "
                "one a line from stdin), read as the values the filter holds unless --type "
                "says otherwise; a key of another family than the filter's is an error. Exit "
                "status 0 when every key may be present, 1 when one is certainly absent, 2 on "
                "error.", file=True)
    c.add_argument("keys", metavar="KEY", nargs="*")
    c.add_argument("--type", choices=TYPES, default=None,
                   help="what a key is (default: what the filter holds, by its families: int, "
                   "or real when not an integer, for numbers; text; blob for blobs; text for a "
                   "filter of mixed families or one written before amq 0.4.0)")

    u = command("union", cmd_union, "combine filters built with the same parameters",
                "Writes the union of the filters in FILEs (bloom_union): they must share "
                "kind, layout and parameters, so build them with the same --capacity, --fpr "
                "and --layout.")
    u.add_argument("files", metavar="FILE", nargs="+")
    output(u)

    h = command("hex", cmd_hex, "print a filter as a literal to paste into SQL",
                "Prints the filter in FILE as \\x… (psql: '\\x…'::bloom) or, with --sqlite, "
                "as X'…' for sqlite3.", file=True)
    h.add_argument("--sqlite", action="store_true", help="print X'…' for sqlite3")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    """Runs the command line argv (default sys.argv[1:]); returns the exit status."""
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except CommandError as e:
        print(f"amq {args.command}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # Output closed early (| head): not an error of ours.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130
