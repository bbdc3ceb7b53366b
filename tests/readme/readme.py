"""Runs the code blocks of README.md, so that every snippet runs as shown.

Run by tests/readme/run.sh with /usr/bin/python3 from the repository root,
after it has installed the extension and started a throwaway cluster
(PGHOST, PGPORT and PGUSER in the environment):

    readme.py --bindir DIR --python PYTHON --sqlite-extension PATH [README]

Every fenced block tagged sql, python or sh is a test, in README order, one
line each: "ok   README.md:LINE KIND (SECTION)", "FAIL ...: the error" or
"skip ...: the reason"; the last line is "N passed, N failed" (skips are not
counted). LINE is the line of the opening fence; SECTION the top-level (##)
section, each of which gets a fresh PostgreSQL database with CREATE EXTENSION
amq done for it (created on first use) and a fresh SQLite database file.

- sql: SQLite's when a mark says so (below), when its heading names sqlite3
  or SQLite, or when it uses the CLI's dot-commands (.load, .param) or
  SQLite-only syntax (?1 and @name parameters, X'..' blobs, PRAGMA,
  AUTOINCREMENT): run by the sqlite3 CLI with -bail on the section's file,
  `.load` of the extension first unless the block has its own. Every other
  sql block is PostgreSQL's: psql -v ON_ERROR_STOP=1 on the section's
  database.
- python: PYTHON (the venv `make python` builds from /usr/bin/python3) in a
  temporary directory, PGDATABASE the section's database, one top-level
  statement at a time (see run_python). A statement may show its outcome in
  a comment, trailing or on the comment lines right after it: an expression
  (or an assignment whose comment starts with "<", a repr) whose value is
  not None must have a comment that starts with its value (a tuple's items
  joined by spaces); a statement that raises must be followed by the comment
  "# Name: message" of that exception, and then the block goes on. An
  untyped block right after the python block's closing fence is its
  expected standard output, line for line.
- sh: bash -e -o pipefail in the repository root, with the cluster's
  binaries (psql, pg_config) first on PATH and PGDATABASE a new database
  without amq (a shell block is where it gets installed), and none of an
  outer make's variables. Blocks that build for minutes, start servers of
  their own or need what this machine lacks carry a skip mark instead.

Marks are HTML comments on the lines right before a fence:
    <!-- readme-test: skip: why it cannot run here (and what tests it) -->
    <!-- readme-test: setup: tests/readme/setup/FILE.sql -->
    <!-- readme-test: sqlite -->
A setup file runs through psql in the section's database before the block
(a python block's too); it may \\connect elsewhere. An unknown mark, or a
mark with no fence after it, is a failure.
"""

import argparse
import ast
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import tokenize
import traceback

FENCE = re.compile(r"^(\s*)```\s*([A-Za-z0-9_+-]*)\s*$")
MARK = re.compile(r"^\s*<!--\s*readme-test:\s*(.*?)\s*-->\s*$")
HEADING = re.compile(r"^(#{2,6})\s+(.*?)\s*$")
KINDS = {"sql": "sql", "python": "python", "sh": "sh", "bash": "sh"}
SQLITE_ONLY = re.compile(r"^\s*\.\w|\?\d|(?<![\w@])@[A-Za-z_]|\bX'|\bPRAGMA\b|\bAUTOINCREMENT\b",
                         re.IGNORECASE | re.MULTILINE)
TIMEOUT = 300


class Block:
    def __init__(self, line, lang, text, section, heading, marks):
        self.line = line            # the opening fence's line, 1-based
        self.lang = lang
        self.text = text            # the lines between the fences, fence indent removed
        self.section = section      # the top-level (##) heading
        self.heading = heading      # the nearest heading
        self.marks = marks          # [(line, text)] of the marks right above
        self.output = None          # an untyped block right after it, if any
        self.end = None             # the closing fence's line


def parse(path):
    """The fenced blocks of the Markdown file at path, and the problems of
    its marks (a list of (line, message))."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, problems = [], []
    section = heading = ""
    pending = []                # marks seen since the last other line
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if not fence:
            mark = MARK.match(line)
            if mark:
                pending.append((i + 1, mark.group(1)))
            else:
                problems += [(n, "a readme-test mark must stand right before a fence")
                             for n, _ in pending]
                pending = []
                head = HEADING.match(line)
                if head:
                    heading = head.group(2)
                    if len(head.group(1)) == 2:
                        section = heading
            i += 1
            continue
        indent, lang = fence.group(1), fence.group(2)
        body = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            text = lines[j]
            body.append(text[len(indent):] if text.startswith(indent) else text.lstrip())
            j += 1
        block = Block(i + 1, lang, "\n".join(body) + "\n", section, heading, pending)
        pending = []
        if blocks and blocks[-1].lang == "python" and lang == "" and blocks[-1].end == i:
            blocks[-1].output = block.text
        block.end = j + 1
        blocks.append(block)
        i = j + 1
    problems += [(n, "a readme-test mark must stand right before a fence") for n, _ in pending]
    return blocks, problems


def marks_of(block):
    """(skip reason or None, [setup files], sqlite?, [problems])."""
    skip, setups, sqlite, problems = None, [], False, []
    for line, text in block.marks:
        word, _, rest = text.partition(":")
        word, rest = word.strip(), rest.strip()
        if word == "skip" and rest:
            skip = rest
        elif word == "setup" and rest:
            setups.append(rest)
        elif word == "sqlite" and not rest:
            sqlite = True
        else:
            problems.append(f"README.md:{line}: unknown readme-test mark {text!r}")
    return skip, setups, sqlite, problems


def is_sqlite(block, marked):
    if marked:
        return True
    if re.search(r"sqlite", block.section + " " + block.heading, re.IGNORECASE):
        return True
    code = re.sub(r"--.*", "", block.text)
    return bool(SQLITE_ONLY.search(code))


class Runner:
    def __init__(self, args):
        self.args = args
        self.root = os.getcwd()
        self.tmp = tempfile.mkdtemp(prefix="amq-readme.")
        self.databases = {}         # section -> PostgreSQL database
        self.sqlite_files = {}      # section -> SQLite file
        self.count = 0

    def psql(self, *args, sql=None, database="postgres"):
        cmd = [os.path.join(self.args.bindir, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
               "-d", database, *args]
        return run_process(cmd, input=sql)

    def new_database(self, amq=True):
        self.count += 1
        name = f"readme_{self.count}"
        sql = f"CREATE DATABASE {name};\n"
        proc = self.psql(sql=sql)
        if proc.returncode == 0 and amq:
            proc = self.psql("-c", "CREATE EXTENSION amq", database=name)
        if proc.returncode != 0:
            raise Failure(f"could not make database {name}: {proc.stderr.strip()}")
        return name

    def database(self, section):
        if section not in self.databases:
            self.databases[section] = self.new_database()
        return self.databases[section]

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def setup(self, block, setups):
        database = self.database(block.section)
        for setup in setups:
            if not os.path.isfile(setup):
                raise Failure(f"setup {setup}: no such file")
            proc = self.psql("-f", setup, database=database)
            if proc.returncode != 0:
                raise Failure(f"setup {setup}: {last_error(proc.stderr)}")
        return database

    def run_sql_pg(self, block, setups):
        database = self.setup(block, setups)
        path = self.write("block.sql", block.text)
        proc = self.psql("-f", path, database=database)
        if proc.returncode != 0:
            raise Failure(psql_error(proc.stderr, block.line))

    def run_sql_sqlite(self, block, setups):
        if setups:
            raise Failure("setup files are PostgreSQL's; a SQLite block has none")
        if block.section not in self.sqlite_files:
            self.sqlite_files[block.section] = os.path.join(
                self.tmp, f"section{len(self.sqlite_files) + 1}.db")
        text = block.text
        offset = block.line
        if not re.search(r"^\s*\.load\b", text, re.MULTILINE):
            text = f".load {self.args.sqlite_extension}\n" + text
            offset -= 1
        proc = run_process(["sqlite3", "-bail", "-batch", self.sqlite_files[block.section]],
                           input=text, cwd=self.root)
        if proc.returncode != 0 or proc.stderr.strip():
            err = proc.stderr.strip() or f"exit status {proc.returncode}"
            err = re.sub(r"near line (\d+)",
                         lambda m: f"at README.md:{offset + int(m.group(1))}", err)
            raise Failure(" ".join(err.split()))

    def run_python(self, block, setups):
        database = self.setup(block, setups)
        path = self.write("block.py", block.text)
        env = dict(os.environ, PGDATABASE=database)
        work = tempfile.mkdtemp(dir=self.tmp)
        proc = run_process([self.args.python, os.path.abspath(__file__), "--run-python",
                            path, str(block.line)], cwd=work, env=env)
        if proc.returncode != 0:
            lines = [l for l in proc.stderr.splitlines() if l.strip()]
            raise Failure(lines[-1] if lines else f"exit status {proc.returncode}")
        if block.output is not None:
            got, want = proc.stdout.splitlines(), block.output.splitlines()
            for n, (g, w) in enumerate(zip(got + [None] * len(want), want + [None] * len(got))):
                if g != w:
                    raise Failure(f"README.md:{block.end + 1 + n}: shows {w!r}, the run printed {g!r}")

    def run_sh(self, block, setups):
        if setups:
            raise Failure("setup files are for sql and python blocks")
        path = self.write("block.sh", block.text)
        # A user's shell: no outer make's variables, no PG_CONFIG (make
        # finds pg_config on PATH) and none of the cluster scripts' state
        # (AMQ_PG_ROOT would let a test suite stop this suite's cluster).
        env = {k: v for k, v in os.environ.items()
               if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PG_CONFIG")
               and not k.startswith("AMQ_")}
        env["PATH"] = self.args.bindir + os.pathsep + env.get("PATH", "")
        env["PGDATABASE"] = self.new_database(amq=False)
        proc = run_process(["bash", "-e", "-o", "pipefail", path], cwd=self.root, env=env)
        if proc.returncode != 0:
            lines = [l for l in proc.stderr.splitlines() if l.strip()] or \
                [l for l in proc.stdout.splitlines() if l.strip()]
            raise Failure(f"exit status {proc.returncode}" + (f": {lines[-1]}" if lines else ""))

    def run(self, block):
        """(status, message) of one block; status None when it is no test."""
        kind = KINDS.get(block.lang)
        if kind is None:
            return None, None, None
        skip, setups, marked_sqlite, problems = marks_of(block)
        if kind == "sql" and is_sqlite(block, marked_sqlite):
            engine = "sqlite"
        elif marked_sqlite:
            problems.append("a sqlite mark on a block that is not sql")
            engine = None
        else:
            engine = kind
        label = f"README.md:{block.line} {kind}{' (sqlite3)' if engine == 'sqlite' else ''} " \
                f"({block.section or 'top'})"
        if problems:
            return "FAIL", label, "; ".join(problems)
        if skip:
            return "skip", label, skip
        try:
            {"sqlite": self.run_sql_sqlite, "sql": self.run_sql_pg, "python": self.run_python,
             "sh": self.run_sh}[engine](block, setups)
        except Failure as e:
            return "FAIL", label, str(e)
        except subprocess.TimeoutExpired:
            return "FAIL", label, f"did not finish in {TIMEOUT} s"
        return "ok", label, None


class Failure(Exception):
    pass


def run_process(cmd, **kwargs):
    """subprocess.run with stdout and stderr captured as text, in a session
    of its own: on timeout the whole session is killed (a block's children
    too) and subprocess.TimeoutExpired raised."""
    text = kwargs.pop("input", None)
    with subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True,
                          **kwargs) as proc:
        try:
            out, err = proc.communicate(text, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def last_error(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()]
    errors = [l for l in lines if "ERROR:" in l or "FATAL:" in l]
    return (errors or lines or ["failed"])[0]


def psql_error(stderr, fence):
    """psql's first error, its line turned into README's."""
    err = last_error(stderr)
    m = re.match(r"^psql:[^:]*:(\d+): (.*)$", err)
    if m:
        err = f"README.md:{fence + int(m.group(1))}: {m.group(2)}"
    return " ".join(err.split())


def display(value):
    if isinstance(value, tuple):
        return " ".join(str(v) for v in value)
    return str(value)


def run_python(path, fence):
    """Runs a python block one top-level statement at a time, with its
    lines numbered as in README.md, checking the outcomes its comments show
    (see the module's docstring). Exits 1 with the fault on stderr's last
    line."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    lines = source.split("\n")
    comments = {}               # README line -> (text, alone on its line)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            comments[fence + tok.start[0]] = (tok.string[1:].strip(),
                                              not tok.line[:tok.start[1]].strip())
    tree = ast.parse(source, "README.md")
    ast.increment_lineno(tree, fence)
    body = tree.body
    scope = {"__name__": "__main__"}
    for n, stmt in enumerate(body):
        end = stmt.end_lineno
        after = body[n + 1].lineno if n + 1 < len(body) else fence + len(lines) + 1
        notes = []
        if end in comments and not comments[end][1] and after != end:
            notes.append(comments[end][0])
        line = end + 1
        while line < after and line in comments and comments[line][1]:
            notes.append(comments[line][0])
            line += 1
        note = " ".join(" ".join(notes).split())
        value = None
        try:
            if isinstance(stmt, ast.Expr):
                value = eval(compile(ast.Expression(stmt.value), "README.md", "eval"), scope)
            else:
                exec(compile(ast.Module([stmt], []), "README.md", "exec"), scope)
                if isinstance(stmt, ast.Assign) and note.startswith("<") and \
                        len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    value = scope[stmt.targets[0].id]
        except Exception as e:  # noqa: BLE001 - the block's own exceptions
            shown = re.match(r"^([\w.]+): (.*)$", note)
            if shown and shown.group(1).split(".")[-1] == type(e).__name__ and \
                    shown.group(2) == " ".join(str(e).split()):
                continue
            where = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == "README.md"]
            at = where[-1].lineno if where else stmt.lineno
            msg = " ".join(f"{type(e).__name__}: {e}".split())
            if shown:
                msg += f" (the comment shows {note!r})"
            sys.stdout.flush()
            print(f"README.md:{at}: {msg}", file=sys.stderr)
            sys.exit(1)
        if value is not None and note:
            got = " ".join(display(value).split())
            if not (note == got or (note.startswith(got) and note[len(got)] in ":;,( ")):
                sys.stdout.flush()
                print(f"README.md:{stmt.lineno}: the comment shows {note!r}, the run gives {got!r}",
                      file=sys.stderr)
                sys.exit(1)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--run-python":
        run_python(sys.argv[2], int(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser()
    parser.add_argument("--bindir", required=True, help="the cluster's PostgreSQL binaries")
    parser.add_argument("--python", required=True, help="the Python that runs python blocks")
    parser.add_argument("--sqlite-extension", required=True, help="what .load loads")
    parser.add_argument("readme", nargs="?", default="README.md")
    args = parser.parse_args()
    blocks, problems = parse(args.readme)
    runner = Runner(args)
    passed = failed = 0
    events = sorted([(line, None, message) for line, message in problems] +
                    [(block.line, block, None) for block in blocks], key=lambda e: e[0])
    try:
        for line, block, message in events:
            if block is None:
                print(f"FAIL README.md:{line}: {message}")
                failed += 1
                continue
            status, label, message = runner.run(block)
            if status is None:
                continue
            if status == "ok":
                passed += 1
                print(f"ok   {label}")
            elif status == "skip":
                print(f"skip {label}: {message}")
            else:
                failed += 1
                print(f"FAIL {label}: {message}")
            sys.stdout.flush()
    finally:
        shutil.rmtree(runner.tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
