"""The amq Python package's speed, side by side with Python's set in one run.

  1. f.contains(i) and `i in f` per call, over 1M distinct ints, against a 1M-item
     blocked filter of them; `i in s` for a set of the same ints.
  2. f.contains_many(list of 1M ints); [i in s for i in list] beside it.
  3. amq.bloom(range(10M), 0.01); set(range(10M)) beside it.
  4. SQLite: bloom_contains per row with the extension loaded through amq.load,
     and with build/amq.so loaded directly, on the same rows.

Times are medians of RUNS runs (time.perf_counter). Prints Markdown for
docs/BENCHMARKS.md. Not a test: nothing here asserts a speed.

Usage: bench.py PATH_TO_build/amq.so (run with the Python the package is
installed in); env RUNS (default 5). AMQ_BENCH_SMOKE=1 (make test's bench
suite, which only checks that it runs) makes every size 100 times smaller and
every median one run; its figures mean nothing.
"""

import os
import random
import sqlite3
import statistics
import sys
import time

import amq

SMOKE = os.environ.get("AMQ_BENCH_SMOKE") == "1"
RUNS = int(os.environ.get("RUNS", "1" if SMOKE else "5"))
# The distinct keys and SQLite rows (1M), and the values amq.bloom builds from (10M).
KEYS, BUILD = (10_000, 100_000) if SMOKE else (1_000_000, 10_000_000)


def median_time(fn):
    """The median wall time of RUNS calls of fn, in seconds."""
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def per_call(keys, f, s):
    """Rows of the per-call table: ns per contains, in, and set lookup."""
    contains = f.contains

    def amq_contains():
        for i in keys:
            contains(i)

    def amq_in():
        for i in keys:
            i in f  # pylint: disable=pointless-statement

    def set_in():
        for i in keys:
            i in s  # pylint: disable=pointless-statement

    def empty_loop():
        for i in keys:
            pass

    n = len(keys)
    loop = median_time(empty_loop) / n * 1e9
    rows = [(name, median_time(fn) / n * 1e9) for name, fn in
            [("f.contains(i)", amq_contains), ("i in f", amq_in), ("i in s (set)", set_in)]]
    return loop, rows


def sqlite_rows(extension, n=KEYS):
    """ns per row of bloom_contains over n rows: via amq.load, and via the path;
    the two connections' runs alternate, so both see the same machine."""
    vip = bytes(amq.bloom(range(0, n, 10)))
    query = "SELECT count(*) FROM t WHERE bloom_contains(?, x)"
    setups = []
    for how in ("amq.load(conn)", f"conn.load_extension({extension!r})"):
        con = sqlite3.connect(":memory:")
        if how.startswith("amq.load"):
            amq.load(con)
        else:
            con.enable_load_extension(True)
            con.load_extension(extension)
        con.execute("CREATE TABLE t(x INTEGER)")
        con.execute("INSERT INTO t WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x + 1 "
                    f"FROM s WHERE x < {n - 1}) SELECT x FROM s")
        setups.append((how, con, con.execute(query, (vip,)).fetchone()[0]))
    times = [[] for _ in setups]
    for _ in range(RUNS):
        for (_, con, _), kept in zip(setups, times):
            start = time.perf_counter()
            con.execute(query, (vip,)).fetchone()
            kept.append(time.perf_counter() - start)
    return [(how, statistics.median(t) / n * 1e9, kept)
            for (how, _, kept), t in zip(setups, times)]


def main():
    extension = sys.argv[1]
    rng = random.Random(1)
    keys = rng.sample(range(10**9), KEYS)
    s = set(keys)
    f = amq.bloom(keys, 0.01)
    print(f"Python {sys.version.split()[0]}, amq {amq.__version__}; medians of {RUNS} runs.")
    print()
    loop, rows = per_call(keys, f, s)
    print(f"{KEYS:,} distinct ints against a {KEYS:,}-item blocked filter ({len(bytes(f)):,} bytes) "
          "and a set of the same ints, one call per int:")
    print()
    print("| operation | ns per call | vs set |")
    print("|---|---:|---:|")
    set_ns = rows[-1][1]
    for name, ns in rows:
        print(f"| `{name}` | {ns:.0f} | {ns / set_ns:.2f}× |")
    print(f"| (the bare `for` loop) | {loop:.0f} | |")
    print()
    many = median_time(lambda: f.contains_many(keys))
    set_many = median_time(lambda: [i in s for i in keys])
    build = median_time(lambda: amq.bloom(range(BUILD), 0.01))
    set_build = median_time(lambda: set(range(BUILD)))
    print("| batch | values/s | beside it (set) |")
    print("|---|---:|---:|")
    print(f"| `f.contains_many(keys)`, {KEYS:,} ints | {KEYS / many / 1e6:.1f} M | "
          f"`[i in s for i in keys]`: {KEYS / set_many / 1e6:.1f} M |")
    print(f"| `amq.bloom(range({BUILD:_}), 0.01)` | {BUILD / build / 1e6:.1f} M | "
          f"`set(range({BUILD:_}))`: {BUILD / set_build / 1e6:.1f} M |")
    print()
    print(f"SQLite, `SELECT count(*) FROM t WHERE bloom_contains(?, x)` over {KEYS:,} rows "
          f"(a bound filter of {KEYS // 10:,} values):")
    print()
    print("| extension loaded through | ns per row | rows kept |")
    print("|---|---:|---:|")
    for how, ns, kept in sqlite_rows(extension):
        print(f"| `{how}` | {ns:.1f} | {kept:,} |")


if __name__ == "__main__":
    main()
