"""SQLite benchmark of the amq extension (make bench-sqlite); not a test.

Over one table of ROWS integers (default 10M, generated with a recursive CTE)
it times, side by side in one run:
  - bloom_contains(:f, x) against the built-in abs(x), the per-call floor of
    a scalar function, and against x IN (SELECT id FROM small);
  - bloom_agg / cuckoo_agg throughput in rows per second over ROWS distinct
    values: sized at the end for the distinct values seen against streaming
    into a filter with a capacity, in both layouts, beside sum(x);
  - the per-row cost of bloom_contains with a 1 KiB and a 64 MiB bound
    filter, probing 16 values so that few cache lines are touched and only
    per-call overhead is compared;
  - the filter passed the natural ways (scalar subquery, join column, CTE),
    which SQLite copies on every row, on fewer rows.
Every figure is the median of RUNS runs. Prints Markdown for docs/BENCHMARKS.md.
Usage: /usr/bin/python3 bench/sqlite/bench.py [extension] (env ROWS, RUNS).
"""

import os
import sqlite3
import statistics
import sys
import time

EXTENSION = sys.argv[1] if len(sys.argv) > 1 else "./build/amq"
ROWS = int(os.environ.get("ROWS", 10_000_000))
RUNS = int(os.environ.get("RUNS", 5))
NATURAL_ROWS = 20_000
SMALL = 10_000  # values in the "small" set the prefilter tests for

db = sqlite3.connect(":memory:", isolation_level=None)
db.enable_load_extension(True)
db.load_extension(EXTENSION)


def median_seconds(sql, params=(), runs=RUNS):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        db.execute(sql, params).fetchall()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_medians(queries, runs=RUNS):
    """Median seconds of each (sql, params), run in turn round after round so
    that a noisy neighbour slows them all alike."""
    times = {name: [] for name in queries}
    for _ in range(runs):
        for name, (sql, params) in queries.items():
            start = time.perf_counter()
            db.execute(sql, params).fetchall()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def series(n):
    return f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n})"


def row(label, seconds, rows, note=""):
    print(f"| {label} | {seconds * 1e3:,.0f} | {seconds / rows * 1e9:,.1f} | {note} |")


start = time.perf_counter()
db.execute("CREATE TABLE t(x INTEGER NOT NULL)")
# Scattered values: 1..ROWS multiplied by a prime modulo a larger prime.
db.execute(f"INSERT INTO t {series(ROWS)} SELECT i * 7919 % 1000000007 FROM n")
db.execute("CREATE TABLE small(id INTEGER PRIMARY KEY)")
db.execute(f"INSERT INTO small SELECT x FROM t WHERE rowid % {ROWS // SMALL} = 0")
setup = time.perf_counter() - start
small_filter = db.execute("SELECT bloom_agg(id) FROM small").fetchone()[0]

print(f"Rows: {ROWS:,} in an in-memory table (generated in {setup:.1f} s); small set: "
      f"{SMALL:,} values, its filter {len(small_filter):,} bytes at fpr 0.01; "
      f"median of {RUNS} runs.\n")

print("### Per-row cost of a prefilter\n")
print("| query | ms | ns/row | note |")
print("|---|---:|---:|---|")
m = interleaved_medians({
    "scan": ("SELECT sum(x) FROM t", ()),
    "abs": ("SELECT sum(abs(x)) FROM t", ()),
    "bloom": ("SELECT sum(bloom_contains(?, x)) FROM t", (small_filter,)),
    "count": ("SELECT count(*) FROM t WHERE bloom_contains(?, x)", (small_filter,)),
    "in": ("SELECT count(*) FROM t WHERE x IN (SELECT id FROM small)", ()),
    "both": ("SELECT count(*) FROM t WHERE bloom_contains(?, x) AND x IN (SELECT id FROM small)",
             (small_filter,)),
})
scan, abs_time, bloom_time = m["scan"], m["abs"], m["bloom"]
row("`SELECT sum(x) FROM t` (the scan alone)", scan, ROWS)
row("`sum(abs(x))` (built-in per-call floor)", abs_time, ROWS)
net = (bloom_time - scan) / (abs_time - scan)
row("`sum(bloom_contains(:f, x))`", bloom_time, ROWS,
    f"{bloom_time / abs_time:.2f}x abs(); net of the scan {net:.2f}x")
row("`count(*) WHERE bloom_contains(:f, x)`", m["count"], ROWS)
row("`count(*) WHERE x IN (SELECT id FROM small)`", m["in"], ROWS,
    f"bloom_contains is {m['in'] / m['count']:.2f}x faster")
row("`bloom_contains(:f, x) AND x IN (...)` (exact)", m["both"], ROWS,
    f"{m['in'] / m['both']:.2f}x faster than IN alone")


def building_filters():
    """The aggregates over the ROWS distinct values of t, interleaved round
    after round: sized at the end for the distinct values seen against
    streaming into a filter with a capacity, both layouts, with sum(x) as the
    scan's floor. Wall time, and the process's CPU time, which a busy shared
    machine inflates less."""
    cases = {
        "sum(x)": "sum(x)",
        "bloom_agg(x)": "length(bloom_agg(x))",
        f"bloom_agg(x, 0.01, {ROWS})": f"length(bloom_agg(x, 0.01, {ROWS}))",
        "bloom_agg(x, 0.01, NULL, 'classic')": "length(bloom_agg(x, 0.01, NULL, 'classic'))",
        f"bloom_agg(x, 0.01, {ROWS}, 'classic')": f"length(bloom_agg(x, 0.01, {ROWS}, 'classic'))",
        "cuckoo_agg(x)": "length(cuckoo_agg(x))",
        f"bloom_agg(x % {SMALL})": f"length(bloom_agg(x % {SMALL}))",
    }
    wall = {name: [] for name in cases}
    cpu = {name: [] for name in cases}
    result = {}
    for _ in range(RUNS):
        for name, expr in cases.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            result[name] = db.execute(f"SELECT {expr} FROM t").fetchone()[0]
            cpu[name].append(time.process_time() - start_cpu)
            wall[name].append(time.perf_counter() - start)
    wall = {name: statistics.median(t) for name, t in wall.items()}
    cpu = {name: statistics.median(t) for name, t in cpu.items()}
    capacity_form = {"bloom_agg(x)": f"bloom_agg(x, 0.01, {ROWS})",
                     "bloom_agg(x, 0.01, NULL, 'classic')":
                         f"bloom_agg(x, 0.01, {ROWS}, 'classic')"}
    print("\n### Building filters\n")
    print(f"{ROWS:,} distinct values; blocked is the default layout; medians of {RUNS} "
          "interleaved runs; CPU is the process's own time.\n")
    print("| aggregate | wall ms | rows/s | CPU ns/row | rows/s by CPU | vs its capacity form "
          "(wall / CPU) | filter bytes |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in cases:
        ratio = ""
        if name in capacity_form:
            other = capacity_form[name]
            ratio = f"{wall[name] / wall[other]:.2f}x / {cpu[name] / cpu[other]:.2f}x"
        size = "" if name == "sum(x)" else f"{result[name]:,}"
        print(f"| `{name}` | {wall[name] * 1e3:,.0f} | {ROWS / wall[name] / 1e6:,.2f} M | "
              f"{cpu[name] / ROWS * 1e9:,.1f} | {ROWS / cpu[name] / 1e6:,.2f} M | {ratio} | "
              f"{size} |")


building_filters()

print("\n### Filter size: 1 KiB against 64 MiB (bound, 16 distinct probes)\n")
print("Setup is one call's statement: binding copies the filter, the first row verifies it.\n")
print("| filter | bytes | whole ms | setup ms | ns/row (net of setup) |")
print("|---|---:|---:|---:|---:|")
filters = {label: db.execute("SELECT bloom_new(?, 0.01)", (capacity,)).fetchone()[0]
           for label, capacity in (("1 KiB", 850), ("64 MiB", 56_200_000))}
# One statement per filter (the comment makes the text differ), so that no
# statement pays for releasing the other's 64 MiB binding.
m = interleaved_medians({
    **{label: (f"SELECT sum(bloom_contains(?, x % 16)) FROM t -- {label}", (f,))
       for label, f in filters.items()},
    **{f"setup {label}": (f"SELECT bloom_contains(?, 1) -- {label}", (f,))
       for label, f in filters.items()},
})
per_row = {}
for label, f in filters.items():
    seconds, setup = m[label], m[f"setup {label}"]
    per_row[label] = (seconds - setup) / ROWS
    print(f"| {label} | {len(f):,} | {seconds * 1e3:,.0f} | {setup * 1e3:,.1f} | "
          f"{per_row[label] * 1e9:,.1f} |")
print(f"\nRatio 64 MiB / 1 KiB per row: {per_row['64 MiB'] / per_row['1 KiB']:.3f} (target <= 1.2); "
      f"bloom_contains / abs() per row: {bloom_time / abs_time:.2f} (target <= 2).")

print(f"\n### How the filter is passed ({NATURAL_ROWS:,} rows, 16 distinct probes)\n")
print("| form | filter | ns/row |")
print("|---|---|---:|")
db.execute("CREATE TABLE probes(x INTEGER)")
db.execute(f"INSERT INTO probes {series(NATURAL_ROWS)} SELECT i % 16 FROM n")
db.execute("CREATE TABLE filters(name TEXT PRIMARY KEY, f BLOB)")
for name, sql in (("bloom 1 KiB", "bloom_new(850, 0.01)"),
                  ("bloom 1 MiB", "bloom_new(875000, 0.01)"),
                  ("cuckoo 1 MiB", "cuckoo_new(760000)")):
    db.execute(f"INSERT INTO filters VALUES (?, {sql})", (name,))
forms = [
    ("bound `:f`", "SELECT sum({fn}(?1, x)) FROM probes", True),
    ("scalar subquery", "SELECT sum({fn}((SELECT f FROM filters WHERE name = ?1), x)) FROM probes",
     False),
    ("join column", "SELECT sum({fn}(fl.f, p.x)) FROM filters fl, probes p WHERE fl.name = ?1",
     False),
    ("CTE", "WITH v AS (SELECT f FROM filters WHERE name = ?1) "
     "SELECT sum({fn}(v.f, p.x)) FROM v, probes p", False),
    ("SQLite's own copy: `length((SELECT f ...)) + x`",
     "SELECT sum(length((SELECT f FROM filters WHERE name = ?1)) + x) FROM probes", False),
]
for name in ("bloom 1 KiB", "bloom 1 MiB", "cuckoo 1 MiB"):
    fn = "bloom_contains" if name.startswith("bloom") else "cuckoo_contains"
    f = db.execute("SELECT f FROM filters WHERE name = ?", (name,)).fetchone()[0]
    for label, sql, bound in forms:
        seconds = median_seconds(sql.format(fn=fn), (f if bound else name,), runs=3)
        print(f"| {label} | {name} | {seconds / NATURAL_ROWS * 1e9:,.0f} |")
