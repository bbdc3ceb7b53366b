"""SQLite benchmark of the amq extension (make bench-sqlite); not a test.

Over one table of ROWS integers (default 3M, generated with a recursive CTE)
and one of their decimal texts it times, side by side in one run:
  - bloom_contains(:f, x) with a bound 10,000-value filter (12 KB), classic
    and blocked, against the built-ins abs(x) and length(s), the per-call
    floor of a scalar function, and against x IN (SELECT id FROM small);
  - bloom_agg / cuckoo_agg throughput in rows per second over BUILD_ROWS
    (default 10M) distinct values: sized at the end for the distinct values
    seen against streaming into a filter with a capacity, in both layouts,
    beside sum(x);
  - the per-row cost of a bound 1 KiB and a 64 MiB filter, classic and
    blocked, probed by 1,000 distinct values, net of the one-time fill (the
    difference between a 1M-row and a ROWS-row scan), and the fill itself
    against a built-in that reads every byte of the same bound blob;
  - the filter passed the natural ways (scalar subquery, join column, CTE),
    which SQLite copies on every row, on fewer rows.
Every figure is the median of RUNS runs of CPU time (time.process_time: the
machine is shared, and a run is one thread), queries interleaved round by
round. glibc's malloc is told to keep large blocks in its heap, so that the
copy SQLite makes of a bound 64 MiB blob costs the same in every run. Prints Markdown for docs/BENCHMARKS.md.
Usage: /usr/bin/python3 bench/sqlite/bench.py [extension] (env ROWS, BUILD_ROWS, RUNS).
AMQ_BENCH_SMOKE=1 (make test's bench suite, which only checks that it runs)
makes every size tiny and every median one run; its figures mean nothing.
"""

import ctypes
import os
import sqlite3
import statistics
import sys
import time

EXTENSION = sys.argv[1] if len(sys.argv) > 1 else "./build/amq"
SMOKE = os.environ.get("AMQ_BENCH_SMOKE") == "1"
ROWS = int(os.environ.get("ROWS", 20_000 if SMOKE else 3_000_000))
BUILD_ROWS = int(os.environ.get("BUILD_ROWS", 20_000 if SMOKE else 10_000_000))
RUNS = int(os.environ.get("RUNS", 1 if SMOKE else 11))
NATURAL_ROWS = 200 if SMOKE else 20_000
SMALL = 10_000  # values in the "small" set the prefilter tests for
DISTINCT = 1_000  # distinct values probing the 1 KiB and 64 MiB filters
FEW_ROWS = ROWS // 2 if SMOKE else 1_000_000  # the shorter scan whose difference cancels the fill
FILL_RUNS = 4 * RUNS  # one-statement fills are cheap and noisy: more runs
BIG, BIG_CAPACITY = ("640 KiB", 530_000) if SMOKE else ("64 MiB", 53_000_000)

# Binding a blob copies it (Python binds SQLITE_TRANSIENT). glibc would map
# each 64 MiB copy afresh and fault in 16,384 pages, tens of ms that vary more
# than the fill measured below; kept in the heap, the copy is a plain memcpy.
libc = ctypes.CDLL(None)
libc.mallopt(-4, 0)  # M_MMAP_MAX: no chunk gets its own mapping
libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: freed memory stays for the next bind

db = sqlite3.connect(":memory:", isolation_level=None)
db.enable_load_extension(True)
db.load_extension(EXTENSION)


def median_seconds(sql, params=(), runs=RUNS):
    times = []
    for _ in range(runs):
        start = time.process_time()
        db.execute(sql, params).fetchall()
        times.append(time.process_time() - start)
    return statistics.median(times)


def interleaved_medians(queries, runs=RUNS):
    """Median CPU seconds of each (sql, params), run in turn round after round
    so that a noisy neighbour slows them all alike."""
    times = {name: [] for name in queries}
    for _ in range(runs):
        for name, (sql, params) in queries.items():
            start = time.process_time()
            db.execute(sql, params).fetchall()
            times[name].append(time.process_time() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def series(n):
    return f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n})"


def row(label, seconds, rows, note=""):
    print(f"| {label} | {seconds * 1e3:,.0f} | {seconds / rows * 1e9:,.1f} | {note} |")


def filter_of(values, layout, capacity=SMALL):
    """bloom_agg(v, 0.01, capacity, layout) over values, stored as they are (a
    column without affinity: text stays text, so the filter holds the family
    it is probed with)."""
    db.execute("CREATE TEMP TABLE filter_values(v)")
    db.executemany("INSERT INTO filter_values VALUES (?)", [(v,) for v in values])
    f = db.execute("SELECT bloom_agg(v, 0.01, ?, ?) FROM filter_values",
                   (capacity, layout)).fetchone()[0]
    db.execute("DROP TABLE filter_values")
    return f


start = time.perf_counter()
db.execute("CREATE TABLE t(x INTEGER NOT NULL)")
# Scattered values: 1..ROWS multiplied by a prime modulo a larger prime.
db.execute(f"INSERT INTO t {series(ROWS)} SELECT i * 7919 % 1000000007 FROM n")
db.execute("CREATE TABLE u(s TEXT NOT NULL)")
db.execute("INSERT INTO u SELECT CAST(x AS TEXT) FROM t")
db.execute("CREATE TABLE small(id INTEGER PRIMARY KEY)")
db.execute(f"INSERT INTO small SELECT x FROM t WHERE rowid % {ROWS // SMALL} = 0")
setup = time.perf_counter() - start
ints = [r[0] for r in db.execute("SELECT id FROM small")]
texts = [str(v) for v in ints]
small = {(layout, col): filter_of(values, layout)
         for layout in ("classic", "blocked") for col, values in (("x", ints), ("s", texts))}

print(f"Rows: {ROWS:,} in in-memory tables t(x INTEGER) and u(s TEXT, the same numbers as "
      f"text), generated in {setup:.1f} s; small set: {SMALL:,} values, its filters "
      f"{len(small['classic', 'x']):,} bytes (classic) and {len(small['blocked', 'x']):,} bytes "
      f"(blocked) at fpr 0.01; medians of {RUNS} runs of CPU time.\n")

print("### Per-row cost of a prefilter\n")
print("| query | ms | ns/row | note |")
print("|---|---:|---:|---|")
m = interleaved_medians({
    "scan": ("SELECT sum(x) FROM t", ()),
    "abs": ("SELECT sum(abs(x)) FROM t", ()),
    "classic x": ("SELECT sum(bloom_contains(?, x)) FROM t", (small["classic", "x"],)),
    "blocked x": ("SELECT sum(bloom_contains(?, x)) FROM t", (small["blocked", "x"],)),
    "length": ("SELECT sum(length(s)) FROM u", ()),
    "classic s": ("SELECT sum(bloom_contains(?, s)) FROM u", (small["classic", "s"],)),
    "blocked s": ("SELECT sum(bloom_contains(?, s)) FROM u", (small["blocked", "s"],)),
    "count": ("SELECT count(*) FROM t WHERE bloom_contains(?, x)", (small["blocked", "x"],)),
    "in": ("SELECT count(*) FROM t WHERE x IN (SELECT id FROM small)", ()),
    "both": ("SELECT count(*) FROM t WHERE bloom_contains(?, x) AND x IN (SELECT id FROM small)",
             (small["blocked", "x"],)),
})
row("`SELECT sum(x) FROM t` (the scan alone)", m["scan"], ROWS)
row("`sum(abs(x))` (built-in per-call floor, INTEGER)", m["abs"], ROWS)
for layout in ("classic", "blocked"):
    row(f"`sum(bloom_contains(:f, x))`, {layout}", m[f"{layout} x"], ROWS,
        f"**{m[f'{layout} x'] / m['abs']:.2f}x abs()** (target <= 1.4)")
row("`sum(length(s)) FROM u` (built-in per-call floor, TEXT)", m["length"], ROWS)
for layout in ("classic", "blocked"):
    row(f"`sum(bloom_contains(:f, s))`, {layout}", m[f"{layout} s"], ROWS,
        f"{m[f'{layout} s'] / m['length']:.2f}x length()")
row("`count(*) WHERE bloom_contains(:f, x)`, blocked", m["count"], ROWS)
row("`count(*) WHERE x IN (SELECT id FROM small)`", m["in"], ROWS,
    f"bloom_contains is {m['in'] / m['count']:.2f}x faster")
row("`bloom_contains(:f, x) AND x IN (...)` (exact)", m["both"], ROWS,
    f"{m['in'] / m['both']:.2f}x faster than IN alone")


def building_filters():
    """The aggregates over the BUILD_ROWS distinct values of b, interleaved round
    after round: sized at the end for the distinct values seen against
    streaming into a filter with a capacity, both layouts, with sum(x) as the
    scan's floor. Wall time, and the process's CPU time, which a busy shared
    machine inflates less."""
    cases = {
        "sum(x)": "sum(x)",
        "bloom_agg(x)": "length(bloom_agg(x))",
        f"bloom_agg(x, 0.01, {BUILD_ROWS})": f"length(bloom_agg(x, 0.01, {BUILD_ROWS}))",
        "bloom_agg(x, 0.01, NULL, 'classic')": "length(bloom_agg(x, 0.01, NULL, 'classic'))",
        f"bloom_agg(x, 0.01, {BUILD_ROWS}, 'classic')": f"length(bloom_agg(x, 0.01, {BUILD_ROWS}, 'classic'))",
        "cuckoo_agg(x)": "length(cuckoo_agg(x))",
        f"bloom_agg(x % {SMALL})": f"length(bloom_agg(x % {SMALL}))",
    }
    db.execute("CREATE TABLE b(x INTEGER NOT NULL)")
    db.execute(f"INSERT INTO b {series(BUILD_ROWS)} SELECT i * 7919 % 1000000007 FROM n")
    wall = {name: [] for name in cases}
    cpu = {name: [] for name in cases}
    result = {}
    for _ in range(RUNS):
        for name, expr in cases.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            result[name] = db.execute(f"SELECT {expr} FROM b").fetchone()[0]
            cpu[name].append(time.process_time() - start_cpu)
            wall[name].append(time.perf_counter() - start)
    wall = {name: statistics.median(t) for name, t in wall.items()}
    cpu = {name: statistics.median(t) for name, t in cpu.items()}
    capacity_form = {"bloom_agg(x)": f"bloom_agg(x, 0.01, {BUILD_ROWS})",
                     "bloom_agg(x, 0.01, NULL, 'classic')":
                         f"bloom_agg(x, 0.01, {BUILD_ROWS}, 'classic')"}
    print("\n### Building filters\n")
    print(f"{BUILD_ROWS:,} distinct values; blocked is the default layout; medians of {RUNS} "
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
        print(f"| `{name}` | {wall[name] * 1e3:,.0f} | {BUILD_ROWS / wall[name] / 1e6:,.2f} M | "
              f"{cpu[name] / BUILD_ROWS * 1e9:,.1f} | {BUILD_ROWS / cpu[name] / 1e6:,.2f} M | {ratio} | "
              f"{size} |")
    db.execute("DROP TABLE b")


building_filters()

print(f"\n### Filter size: 1 KiB against {BIG} (bound, {DISTINCT:,} distinct probes)\n")
print(f"Per row: the difference between scanning {ROWS:,} and {FEW_ROWS:,} rows, so the one-time "
      "fill cancels. Fill: the first call's extra time (open and verify the bound blob) over "
      "`SELECT length(:f)` (which pays the same bind copy); the built-in baseline is "
      "`SELECT :f = :f`, a memcmp that reads every byte of the same bound blob once.\n")
print("| layout | filter | bytes | ns/row (net) | ratio to 1 KiB | fill ms | `:f = :f` ms | "
      "fill / baseline |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
# The 64 MiB filters are just under 64 MiB. Each filter holds the same half
# of the probe values: the probes do the same work in both sizes, and only
# where the bits live differs.
sizes = {("classic", "1 KiB"): 850, ("classic", BIG): BIG_CAPACITY,
         ("blocked", "1 KiB"): 800, ("blocked", BIG): BIG_CAPACITY}
probe_values = [i * 7919 % 1000000007 for i in range(1, DISTINCT + 1)]
sized = {key: filter_of(probe_values[::2], key[0], capacity)
         for key, capacity in sizes.items()}
queries, fills = {}, {}
for (layout, label), f in sized.items():
    # One statement per filter (the comment makes the text differ), so that
    # no statement pays for releasing another's 64 MiB binding.
    tag = f"-- {layout} {label}"
    queries[layout, label, "many"] = (
        f"SELECT sum(bloom_contains(?, x % {DISTINCT} * 7919 % 1000000007)) FROM t {tag}", (f,))
    queries[layout, label, "few"] = (
        f"SELECT sum(bloom_contains(?, x % {DISTINCT} * 7919 % 1000000007)) FROM t "
        f"WHERE rowid <= {FEW_ROWS} {tag}", (f,))
    fills[layout, label, "fill"] = (f"SELECT bloom_contains(?, 1) {tag}", (f,))
    fills[layout, label, "bind"] = (f"SELECT length(?) {tag}", (f,))
    fills[layout, label, "read"] = (f"SELECT ? = ?1 {tag}", (f,))
m = interleaved_medians(queries)
# A fill is a few ms against a bind copy of about as much: more runs.
m.update(interleaved_medians(fills, runs=FILL_RUNS))
net = {key: (m[key + ("many",)] - m[key + ("few",)]) / (ROWS - FEW_ROWS) for key in sized}
for (layout, label), f in sized.items():
    key = (layout, label)
    fill = m[key + ("fill",)] - m[key + ("bind",)]
    read = m[key + ("read",)] - m[key + ("bind",)]
    ratio = net[key] / net[layout, "1 KiB"]
    fill_note = f"{fill / read:.2f}" if label == BIG else ""
    print(f"| {layout} | {label} | {len(f):,} | {net[key] * 1e9:,.1f} | {ratio:.2f} | "
          f"{fill * 1e3:,.2f} | {read * 1e3:,.2f} | {fill_note} |")
print(f"\nTargets: {BIG} per row <= 1.3x 1 KiB; fill <= 1.5x the built-in read.")

print(f"\n### How the filter is passed ({NATURAL_ROWS:,} rows, {DISTINCT:,} distinct probes)\n")
print("| form | filter | ns/row |")
print("|---|---|---:|")
db.execute("CREATE TABLE probes(x INTEGER)")
db.execute(f"INSERT INTO probes {series(NATURAL_ROWS)} SELECT i % {DISTINCT} FROM n")
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
        seconds = median_seconds(sql.format(fn=fn), (f if bound else name,),
                               runs=1 if SMOKE else 3)
        print(f"| {label} | {name} | {seconds / NATURAL_ROWS * 1e9:,.0f} |")
