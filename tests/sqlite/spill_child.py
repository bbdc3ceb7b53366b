"""The child process of test_sqlite.py's spill tests: SQLite reads SQLITE_TMPDIR
and TMPDIR once per process, and a resource limit is best set in a process of
its own. Run with /usr/bin/python3 from the repository root:

    spill_child.py MODE

with SQLITE_TMPDIR (and whatever else MODE needs) in the environment. Loads
./build/amq (AMQ_SQLITE_EXTENSION), does what MODE says and prints one JSON
object. Temporary files are told apart from other files by their open
descriptors (/proc/self/fd): the unix VFS removes each one's name as it opens
it, so the directory itself is empty while they are in use.

  same       every collecting layout of bloom_agg and cuckoo_agg over 200,000
             distinct values, a duplicate-heavy column (20,000 distinct) and a
             mixed integer and text column, with amq_work_mem 64 KiB and 1 MiB
             and with the default: the filters equal, the most temporary files
             open during each smaller build, those open afterwards, and the
             directory listing
  cleanup    a spilling aggregate stopped by the progress handler and one
             stopped by an error of another function, each once it has
             temporary files open: the error and the files open afterwards
  where      a spilling aggregate: which directories its files are in (after
             PRAGMA temp_store_directory = $TEMP_STORE_DIRECTORY when set)
  fsize      RLIMIT_FSIZE of 4096 bytes: the error of a spilling aggregate
  nofile     one file descriptor to spare: the error of a spilling aggregate
"""

import json
import os
import resource
import sqlite3
import sys

EXTENSION = os.environ.get("AMQ_SQLITE_EXTENSION", "./build/amq")
N = 200_000
LAYOUTS = [("bloom", "blocked"), ("bloom", "classic"), ("bloom", "counting"),
           ("bloom", "scalable"), ("cuckoo", "b2"), ("cuckoo", "b4"), ("cuckoo", "b8"),
           ("cuckoo", "semisorted")]
COLUMNS = ["distinct_int", "duplicates", "mixed"]
SMALL = 65536
# The working memories of mode same: the least, and 1 MiB, whose runs are
# written and read in many calls (the unix VFS takes at most 128 KiB a call).
MEMORIES = [SMALL, 1 << 20]


def connect():
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.enable_load_extension(True)
    conn.load_extension(EXTENSION)
    return conn


def temp_files():
    """The directories of the open files whose name was removed (the unix
    VFS's temporary files), one entry per file."""
    dirs = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.endswith(" (deleted)") and "/etilqs_" in target:
            dirs.append(os.path.dirname(target))
    return dirs


def make_data(conn):
    conn.execute("CREATE TABLE t(distinct_int, duplicates, mixed)")
    conn.execute(f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {N}) "
                 "INSERT INTO t SELECT i * 7919, i % 20000, "
                 "CASE i % 2 WHEN 0 THEN i ELSE 'k' || i END FROM n")


class Watch:
    """A SQL function watch(x) that returns x and, every 1000 rows, notes how
    many temporary files are open and where."""

    def __init__(self, conn):
        self.rows = 0
        self.most = 0
        self.dirs = set()
        conn.create_function("watch", 1, self)

    def __call__(self, x):
        self.rows += 1
        if self.rows % 1000 == 0:
            files = temp_files()
            self.most = max(self.most, len(files))
            self.dirs.update(files)
        return x


def agg(kind, layout, column):
    return f"SELECT {kind}_agg({column}, 0.01, NULL, '{layout}') FROM t"


def same():
    conn = connect()
    make_data(conn)
    watch = Watch(conn)
    results = {}
    for column in COLUMNS:
        for kind, layout in LAYOUTS:
            whole = conn.execute(agg(kind, layout, column)).fetchone()[0]
            for memory in MEMORIES:
                conn.execute(f"SELECT amq_work_mem({memory})")
                watch.most = 0
                small = conn.execute(agg(kind, layout, f"watch({column})")).fetchone()[0]
                conn.execute("SELECT amq_work_mem(67108864)")
                results[f"{kind} {layout} {column} {memory}"] = {
                    "same": small == whole, "bytes": len(whole), "most_open": watch.most,
                    "open_after": len(temp_files())}
    return {"results": results, "listing": os.listdir(os.environ["SQLITE_TMPDIR"])}


def outcome(conn, sql):
    """[the error sql raises ("no error" without one), temporary files open
    afterwards]."""
    try:
        conn.execute(sql).fetchone()
        error = "no error"
    except sqlite3.Error as e:
        error = str(e)
    return [error, len(temp_files())]


def cleanup():
    conn = connect()
    make_data(conn)
    conn.execute(f"SELECT amq_work_mem({SMALL})")
    out = {}
    conn.set_progress_handler(lambda: len(temp_files()) > 0, 10000)
    for kind in ("bloom", "cuckoo"):
        out[f"{kind} interrupted"] = outcome(conn, f"SELECT {kind}_agg(distinct_int) FROM t")
    conn.set_progress_handler(None, 0)

    rows = [0]

    def boom(x):
        rows[0] += 1
        if rows[0] % 1000 == 0 and temp_files():
            raise ValueError("boom")
        return x
    conn.create_function("boom", 1, boom)
    for kind in ("bloom", "cuckoo"):
        out[f"{kind} error"] = outcome(conn, f"SELECT {kind}_agg(boom(distinct_int)) FROM t")
    # The connection still builds, and spills, afterwards.
    watch = Watch(conn)
    f = conn.execute("SELECT bloom_agg(watch(distinct_int)) FROM t").fetchone()[0]
    out["after"] = [conn.execute("SELECT count(*) FROM t WHERE NOT bloom_contains(?, distinct_int)",
                                 (f,)).fetchone()[0], watch.most, len(temp_files())]
    return out


def where():
    conn = connect()
    if os.environ.get("TEMP_STORE_DIRECTORY"):
        conn.execute(f"PRAGMA temp_store_directory = '{os.environ['TEMP_STORE_DIRECTORY']}'")
    make_data(conn)
    conn.execute(f"SELECT amq_work_mem({SMALL})")
    watch = Watch(conn)
    conn.execute("SELECT bloom_agg(watch(distinct_int)) FROM t").fetchone()
    return {"dirs": sorted(watch.dirs), "most_open": watch.most, "open_after": len(temp_files())}


def failing(resource_id, soft):
    """The error of a spilling aggregate under the soft limit of resource_id
    (set once the rows are in), and the files open once it is lifted."""
    conn = connect()
    make_data(conn)
    conn.execute(f"SELECT amq_work_mem({SMALL})")
    limits = resource.getrlimit(resource_id)
    resource.setrlimit(resource_id, (soft, limits[1]))
    try:
        conn.execute("SELECT bloom_agg(distinct_int) FROM t").fetchone()
        error = code = None
    except sqlite3.Error as e:
        error, code = str(e), getattr(e, "sqlite_errorcode", None)
    resource.setrlimit(resource_id, limits)
    return {"error": error, "code": code, "open_after": len(temp_files())}


def fsize():
    return failing(resource.RLIMIT_FSIZE, 4096)


def nofile():
    # One descriptor to spare (none is opened before the aggregate): the
    # first run's file opens, the second's fails.
    used = {int(fd) for fd in os.listdir("/proc/self/fd")}
    return failing(resource.RLIMIT_NOFILE,
                   next(fd for fd in range(len(used) + 1) if fd not in used) + 1)


if __name__ == "__main__":
    print(json.dumps({"same": same, "cleanup": cleanup, "where": where, "fsize": fsize,
                      "nofile": nofile}[sys.argv[1]]()))
