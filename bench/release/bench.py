"""This build against the previous release, side by side (bench/release/run.sh).

Prints three tables of medians, the two builds' runs interleaved round by round
so that a shared machine's noise falls on both alike:
  1. SQLite: sum(bloom_contains(:f, x)) over ROWS INTEGER rows and over the
     same numbers as TEXT, with a bound blocked filter of 10,000 of them, in
     ns per row of CPU time, beside sum(abs(x)), the built-in per-call floor;
  2. PostgreSQL: the per-row cost of bloom_contains with a 64 MiB blocked
     filter (the large-filter case; 2,000 distinct probes, half of them
     members), the difference between scans of ROWS and ROWS / 5 rows so that
     the one-time fill cancels. Each build's entry point is called through a
     function over bytea (CREATE FUNCTION ... AS '<module>'), the release's
     module loaded by path, each in sessions of its own; the server's
     execution time (EXPLAIN ANALYZE, TIMING OFF);
  3. PostgreSQL: how long bloom_new(500000000, 0.001) (a filter near 900 MB)
     runs under statement_timeout 200ms before the timeout ends it: wall ms
     past the timeout (a psql session each, its start included).
Each build makes its own filters (its own format version: 1 for the release,
4 for this build), over the same values.

Usage: bench.py RELEASE_SQLITE BUILD_SQLITE RELEASE_PG_MODULE [--rows N] [--runs N]
"""

import argparse
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                                "lib"))
import pgsql  # noqa: E402

PSQL = os.environ.get("AMQ_PSQL", "psql")
SMOKE = os.environ.get("AMQ_BENCH_SMOKE") == "1"
DB = "amq_release"
MEMBERS = 10_000
# A blocked filter of about 64 MiB at fpr 0.01 (9.93 bits per value).
LARGE_CAPACITY = 1_000 if SMOKE else 54_000_000


def connect(extension):
    con = sqlite3.connect(":memory:")
    con.enable_load_extension(True)
    con.load_extension(extension)
    return con


def sqlite_side(extension, rows):
    """A connection with t(x INTEGER) and u(s TEXT) of rows values and the
    filters of their first MEMBERS values, made by this extension."""
    con = connect(extension)
    con.execute("CREATE TABLE t(x INTEGER)")
    con.execute("CREATE TABLE u(s TEXT)")
    con.execute("INSERT INTO t WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g "
                "WHERE i < ?) SELECT i * 7919 % 1000000007 FROM g", (rows,))
    con.execute("INSERT INTO u SELECT CAST(x AS TEXT) FROM t")
    fx = con.execute("SELECT bloom_agg(x) FROM (SELECT x FROM t LIMIT ?)", (MEMBERS,)).fetchone()[0]
    fs = con.execute("SELECT bloom_agg(s) FROM (SELECT s FROM u LIMIT ?)", (MEMBERS,)).fetchone()[0]
    version = con.execute("SELECT amq_version()").fetchone()[0]
    return con, fx, fs, version


def cpu_seconds(con, sql, params=()):
    start = time.process_time()
    con.execute(sql, params).fetchone()
    return time.process_time() - start


def sqlite_table(release_ext, build_ext, rows, runs):
    sides = [sqlite_side(release_ext, rows), sqlite_side(build_ext, rows)]
    queries = [
        ("`sum(abs(x))` (per-call floor)", "SELECT sum(abs(x)) FROM t", None),
        ("`sum(bloom_contains(:f, x))`, INTEGER", "SELECT sum(bloom_contains(?, x)) FROM t", 1),
        ("`sum(bloom_contains(:f, s))`, TEXT", "SELECT sum(bloom_contains(?, s)) FROM u", 2),
    ]
    times = {(q, s): [] for q in range(len(queries)) for s in range(2)}
    for _ in range(runs):
        for q, (_, sql, f) in enumerate(queries):
            for s, side in enumerate(sides):
                params = () if f is None else (side[f],)
                times[q, s].append(cpu_seconds(side[0], sql, params))
    print(f"### SQLite {sqlite3.sqlite_version}: {rows:,} rows, medians of {runs} interleaved runs "
          "(CPU time)")
    print()
    print(f"| query | {sides[0][3]} ns/row | {sides[1][3]} ns/row | ratio |")
    print("|---|---:|---:|---:|")
    for q, (label, _, _) in enumerate(queries):
        old, new = (statistics.median(times[q, s]) * 1e9 / rows for s in range(2))
        print(f"| {label} | {old:.1f} | {new:.1f} | {new / old:.3f} |")
    print()
    return sides


def psql(sql, db=DB):
    return pgsql.lines([PSQL], sql, ["-d", db])


def execution_ms(query):
    for line in psql(f"EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF, SUMMARY ON) {query};"):
        m = re.search(r"Execution Time: ([0-9.]+) ms", line)
        if m:
            return float(m.group(1))
    raise RuntimeError(f"no execution time for {query}")


def large_filter(extension, key):
    """A blocked filter of about 64 MiB holding the 1,000 member probes (key:
    their SQL expression over i)."""
    con = connect(extension)
    return con.execute(
        "WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i < 999) "
        f"SELECT bloom_agg({key}, 0.01, ?) FROM g", (LARGE_CAPACITY,)).fetchone()[0]


def pg_table(release_ext, build_ext, release_module, rows, runs):
    psql(f"DROP DATABASE IF EXISTS {DB}; CREATE DATABASE {DB};", db="postgres")
    # One module per session: both define amq's settings.
    for name, module in (("release", release_module), ("build", "$libdir/amq")):
        for sqltype in ("bigint", "text"):
            psql(f"CREATE FUNCTION probe_{name}(bytea, {sqltype}) RETURNS boolean "
                 f"AS '{module}', 'amq_pg_bloom_contains' LANGUAGE C IMMUTABLE STRICT;")
        psql(f"CREATE FUNCTION new_{name}(bigint, float8) RETURNS bytea "
             f"AS '{module}', 'amq_pg_bloom_new' LANGUAGE C IMMUTABLE STRICT;")
    psql(f"""
        CREATE TABLE probes (k bigint, t text);
        INSERT INTO probes SELECT (i % 2000) * 7919, ((i % 2000) * 7919)::text
          FROM generate_series(1, {rows}) i;
        CREATE TABLE filters (name text, type text, version int, f bytea);
        ANALYZE probes;""")
    # The server reads each build's filter from a file it may read.
    folder = os.path.dirname(release_module)
    for name, ext in (("release", release_ext), ("build", build_ext)):
        for column, key in (("k", "i * 7919"), ("t", "CAST(i * 7919 AS TEXT)")):
            blob = large_filter(ext, key)
            with tempfile.NamedTemporaryFile(dir=folder, delete=False) as f:
                f.write(blob)
            os.chmod(f.name, 0o644)
            try:
                psql(f"INSERT INTO filters VALUES ('{name}', '{column}', {blob[4]}, "
                     f"pg_read_binary_file('{f.name}'));")
            finally:
                os.unlink(f.name)
    size = int(psql("SELECT max(length(f)) FROM filters")[0])
    versions = dict(row.split("|") for row in psql("SELECT name, max(version) FROM filters "
                                                   "GROUP BY name"))
    fifth = rows // 5
    cases = []
    for column in ("k", "t"):
        for name in ("release", "build"):
            for n in (rows, fifth):
                cases.append((column, name, n,
                              f"SELECT count(*) FROM (SELECT {column} FROM probes LIMIT {n}) p "
                              f"WHERE probe_{name}((SELECT f FROM filters WHERE name = "
                              f"'{name}' AND type = '{column}'), {column})"))
    times = {case[:3]: [] for case in cases}
    for _ in range(runs):
        for column, name, n, query in cases:
            times[column, name, n].append(execution_ms(query))
    counts = {case[:2]: psql(case[3])[0] for case in cases if case[2] == rows}
    print(f"### PostgreSQL: per-row cost of bloom_contains with a {size / 2**20:.0f} MiB blocked "
          f"filter, {rows:,} less {fifth:,} rows, medians of {runs} interleaved runs")
    print()
    print(f"| key | rows kept | release (format {versions['release']}) ns/row | "
          f"build (format {versions['build']}) ns/row | build / release |")
    print("|---|---:|---:|---:|---:|")
    for column, label in (("k", "bigint"), ("t", "text")):
        per_row = {}
        for name in ("release", "build"):
            ms = (statistics.median(times[column, name, rows]) -
                  statistics.median(times[column, name, fifth]))
            per_row[name] = ms * 1e6 / (rows - fifth)
        print(f"| {label} | {counts[column, 'build']} | {per_row['release']:.1f} | "
              f"{per_row['build']:.1f} | **{per_row['build'] / per_row['release']:.3f}** |")
        if counts[column, "release"] != counts[column, "build"]:
            print("RESULTS DIFFER")
    print()
    cancel_table(runs)


def cancel_table(runs, timeout_ms=200):
    """Wall time past statement_timeout of a bloom_new near 900 MB in each
    build, medians of runs interleaved."""
    capacity = 1_000_000 if SMOKE else 500_000_000
    times = {"release": [], "build": []}
    for _ in range(runs):
        for name in times:
            start = time.monotonic()
            proc = pgsql.run([PSQL], f"SET statement_timeout = '{timeout_ms}ms'; "
                             f"SELECT length(new_{name}({capacity}, 0.001));", ["-d", DB])
            elapsed = (time.monotonic() - start) * 1000
            canceled = "statement timeout" in pgsql.errors(proc)
            times[name].append((elapsed, canceled))
    print(f"### PostgreSQL: `bloom_new({capacity}, 0.001)` under statement_timeout {timeout_ms}ms, "
          f"medians of {runs} runs")
    print()
    print("| build | wall ms | past the timeout, ms | canceled |")
    print("|---|---:|---:|---|")
    for name, runs_of in times.items():
        ms = statistics.median(t for t, _ in runs_of)
        canceled = sum(c for _, c in runs_of)
        print(f"| {name} | {ms:.0f} | {ms - timeout_ms:.0f} | {canceled} of {len(runs_of)} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("release_sqlite")
    parser.add_argument("build_sqlite")
    parser.add_argument("release_pg_module")
    parser.add_argument("--rows", type=int, default=20_000 if SMOKE else 3_000_000)
    parser.add_argument("--pg-rows", type=int, default=20_000 if SMOKE else 10_000_000)
    parser.add_argument("--runs", type=int, default=1 if SMOKE else 11)
    args = parser.parse_args()
    sqlite_table(args.release_sqlite, args.build_sqlite, args.rows, args.runs)
    pg_table(args.release_sqlite, args.build_sqlite, args.release_pg_module, args.pg_rows,
             1 if SMOKE else 7)


if __name__ == "__main__":
    main()
