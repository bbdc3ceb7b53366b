"""PostgreSQL benchmark of amq over 10M rows (driven by bench/pg/run.sh).

Prints, as medians of several runs:
  1. a join prefilter: bloom_contains over a stored filter vs IN (SELECT ...)
     (a hashed SubPlan) vs a hash semi-join, for 10M orders and 10k VIP
     customers;
  2. bloom_agg rows/s, serial and with 2 parallel workers, over 1M and 10M
     distinct values: sized for the distinct values seen against the form
     with a capacity, in both layouts, beside sum();
  3. per-row cost of bloom_contains with a 1 KiB vs a 64 MiB stored filter
     (default blocked layout), probing 2,000 distinct values, in four query
     forms; the per-row cost is the difference between scans of 10M and 2M
     rows (so the one-time fill cancels), and the fill is compared with what
     PostgreSQL itself needs to read the same bytes once (detoasting them).
Timings are the server's own (EXPLAIN ANALYZE's execution time, without
per-node timing).

Usage: bench.py [--rows N] [--runs N]
"""

import argparse
import os
import re
import statistics
import subprocess

PSQL = os.environ.get("AMQ_PSQL", "psql")
DB = "amq_bench"


def psql(sql, db=DB):
    out = subprocess.run([PSQL, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", db],
                         input=sql, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    return out.stdout.splitlines()


def execution_ms(query, settings):
    """The server's execution time of one run of query, in ms."""
    lines = psql(f"{settings}\nEXPLAIN (ANALYZE, TIMING OFF, COSTS OFF, SUMMARY ON) {query};")
    for line in lines:
        m = re.search(r"Execution Time: ([0-9.]+) ms", line)
        if m:
            return float(m.group(1))
    raise RuntimeError(f"no execution time for {query}")


def time_queries(cases, runs=5):
    """Median execution times (ms) and result rows of (query, settings) cases,
    run interleaved (case 1, case 2, ..., case 1, ...) so that noise from a
    shared machine falls on all of them alike."""
    times = [[] for _ in cases]
    for _ in range(runs):
        for i, (query, settings) in enumerate(cases):
            times[i].append(execution_ms(query, settings))
    results = []
    for query, settings in cases:
        rows = psql(f"{settings}\n{query};")
        results.append(rows[0] if rows else "")
    return [statistics.median(t) for t in times], results


def time_query(query, settings="", runs=5):
    """Median execution time (ms) of query under settings, and its result row."""
    ms, results = time_queries([(query, settings)], runs)
    return ms[0], results[0]


def plan_shape(query, settings=""):
    """The plan's node names, outermost first, for the table."""
    lines = psql(f"{settings}\nEXPLAIN (COSTS OFF) {query};")
    nodes = []
    for line in lines:
        text = line.strip().lstrip("->").strip()
        if text and not text.startswith(("Filter", "Output", "Hash Cond", "Workers", "Group",
                                          "Sort Key", "InitPlan", "SubPlan", "Index Cond",
                                          "Join Filter")):
            nodes.append(text.split("  ")[0])
    return " > ".join(nodes)


SERIAL = "SET max_parallel_workers_per_gather = 0;"
PARALLEL = ("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; "
            "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;")


def per_row_cost(n, runs):
    """Prints the per-row cost of bloom_contains with a 1 KiB and a 64 MiB
    filter in each query form, net of the one-time fill (the difference of a
    scan of N and one of N/5 rows), and the fill against a detoast of the
    same bytes."""
    short = n // 5
    print(f"3. per-row cost of bloom_contains, 1 KiB vs 64 MiB blocked filter (2,000 distinct"
          f" probe values; {n:,} vs {short:,} rows, serial)")
    floor_ms, _ = time_queries([("SELECT count(*) FROM probes WHERE v >= 0", SERIAL),
                                ("SELECT count(*) FROM probes_fifth WHERE v >= 0", SERIAL)], runs)
    print(f"   scan floor (count(*) WHERE v >= 0): "
          f"{(floor_ms[0] - floor_ms[1]) * 1e6 / (n - short):.1f} ns/row")
    # The one-time fill: a single probe against a trivial query, and what
    # PostgreSQL needs to read the same bytes once (detoast + one copy).
    fill_cases = [("SELECT 1", "")]
    for f in ("small", "large"):
        fill_cases.append((f"SELECT bloom_contains((SELECT f FROM filters WHERE name = '{f}'), 1)",
                           SERIAL))
        fill_cases.append((f"SELECT octet_length((SELECT f FROM filters WHERE name = '{f}')::bytea"
                           " || '\\x00'::bytea)", SERIAL))
    fill_ms, _ = time_queries(fill_cases, runs)
    trivial = fill_ms[0]
    amq_fill = {"small": fill_ms[1] - trivial, "large": fill_ms[3] - trivial}
    detoast = {"small": fill_ms[2] - trivial, "large": fill_ms[4] - trivial}
    print(f"   one-time fill, 64 MiB: amq {amq_fill['large']:.1f} ms (detoast, aligned copy, "
          f"checksum) vs PostgreSQL reading the bytes once (bytea || '\\x00') "
          f"{detoast['large']:.1f} ms: {amq_fill['large'] / detoast['large']:.2f}x; "
          f"1 KiB: {amq_fill['small']:.2f} vs {detoast['small']:.2f} ms")
    forms = [
        ("scalar subquery",
         "SELECT count(*) FROM {t} WHERE bloom_contains("
         "(SELECT f FROM filters WHERE name = '{f}'), v)"),
        ("CTE",
         "WITH x AS (SELECT f FROM filters WHERE name = '{f}') "
         "SELECT count(*) FROM {t}, x WHERE bloom_contains(x.f, v)"),
        ("join",
         "SELECT count(*) FROM {t} p JOIN filters x ON x.name = '{f}' "
         "WHERE bloom_contains(x.f, p.v)"),
        ("operator (join)",
         "SELECT count(*) FROM {t} p JOIN filters x ON x.name = '{f}' WHERE x.f @> p.v"),
        ("prepared, parameter",
         "EXECUTE probe_{f}_{t}"),
    ]
    prepare = " ".join(
        f"PREPARE probe_{f}_{t} AS SELECT count(*) FROM {t} WHERE bloom_contains("
        f"(SELECT f FROM filters WHERE name = '{f}'), v);"
        for f in ("small", "large") for t in ("probes", "probes_fifth"))
    print(f"   {'form':<20} {'1 KiB ns/row':>13} {'64 MiB ns/row':>14} {'ratio':>6} "
          f"{'rows kept 1 KiB / 64 MiB':>26}")
    for name, query in forms:
        settings = SERIAL + (" SET plan_cache_mode = force_generic_plan; " + prepare
                             if name.startswith("prepared") else "")
        cases = [(query.format(f=f, t=t), settings)
                 for f in ("small", "large") for t in ("probes", "probes_fifth")]
        ms, res = time_queries(cases, runs)
        small_row = (ms[0] - ms[1]) * 1e6 / (n - short)
        large_row = (ms[2] - ms[3]) * 1e6 / (n - short)
        print(f"   {name:<20} {small_row:13.1f} {large_row:14.1f} {large_row / small_row:6.2f} "
              f"{res[0]:>12} / {res[2]:<12}")
    print()


def aggregate_throughput(n, runs):
    """Section 2: the aggregates serial and with 2 parallel workers, over the
    1M-customer column and the n-distinct id column, where the distinct-sized
    bloom_agg is compared with its form with a capacity (streaming) in both
    layouts; then whether serial and parallel plans give the same bytes."""
    print(f"2. aggregates over {n:,} rows (blocked is the default layout)")
    print(f"   {'aggregate':<48} {'serial ms':>10} {'2 workers ms':>13} {'serial rows/s':>14} "
          f"{'parallel rows/s':>16} {'speed-up':>9}")
    exprs = ["sum(customer_id)", "bloom_agg(customer_id)", "bloom_agg(customer_id, 0.01, 1000000)",
             "cuckoo_agg(customer_id)", "sum(id)", "bloom_agg(id)",
             f"bloom_agg(id, 0.01, {n})", "bloom_agg(id, 0.01, NULL, 'classic')",
             f"bloom_agg(id, 0.01, {n}, 'classic')"]
    serial = {}
    for expr in exprs:
        query = (f"SELECT {expr} FROM orders" if expr.startswith("sum") else
                 f"SELECT octet_length({expr}::bytea) FROM orders")
        (s_ms, p_ms), (s_res, p_res) = time_queries([(query, SERIAL), (query, PARALLEL)], runs)
        serial[expr] = (s_ms, p_ms)
        same = "" if s_res == p_res else "  (sizes differ!)"
        print(f"   {expr:<48} {s_ms:10.1f} {p_ms:13.1f} {n / s_ms * 1e3:14,.0f} "
              f"{n / p_ms * 1e3:16,.0f} {s_ms / p_ms:8.2f}x{same}")
    for sized, capacity in (("bloom_agg(id)", f"bloom_agg(id, 0.01, {n})"),
                            ("bloom_agg(id, 0.01, NULL, 'classic')",
                             f"bloom_agg(id, 0.01, {n}, 'classic')")):
        (s_sized, p_sized), (s_cap, p_cap) = serial[sized], serial[capacity]
        print(f"   {sized} vs {capacity}: serial {s_sized / s_cap:.2f}x, "
              f"2 workers {p_sized / p_cap:.2f}x")
    for expr in ("bloom_agg(customer_id)", "bloom_agg(id)", "bloom_agg(id, 0.01, NULL, 'classic')"):
        same = psql(f"{SERIAL} CREATE TEMP TABLE agg_serial AS SELECT {expr}::bytea b FROM orders; "
                    f"{PARALLEL} SELECT {expr}::bytea = (SELECT b FROM agg_serial) FROM orders;")
        print(f"   {expr}: serial and parallel bytes identical: {same[-1] == 't'}")
    print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000, help="rows of the orders table")
    ap.add_argument("--runs", type=int, default=7, help="timings per query, of which the median")
    args = ap.parse_args()
    n = args.rows

    psql(f"DROP DATABASE IF EXISTS {DB}; CREATE DATABASE {DB};", db="postgres")
    psql(f"""
        CREATE EXTENSION amq;
        -- 10M orders over 1M customers; every 100th customer is a VIP (10k).
        CREATE TABLE orders AS
          SELECT i AS id, (i * 7919) % 1000000 AS customer_id FROM generate_series(1::int8, {n}) i;
        CREATE TABLE vip AS SELECT c AS customer_id FROM generate_series(0, 999999, 100) c;
        -- The probe sets for per-row cost: 2,000 distinct values (half of them
        -- members), over N and N/5 rows.
        CREATE TABLE probes AS SELECT (i % 2000) * 50 AS v FROM generate_series(1, {n}) i;
        CREATE TABLE probes_fifth AS SELECT * FROM probes LIMIT {n // 5};
        CREATE TABLE filters (name text PRIMARY KEY, f bloom);
        INSERT INTO filters SELECT 'vip', bloom_agg(customer_id) FROM vip;
        -- 1 KiB and 64 MiB filters holding the same 800 members.
        INSERT INTO filters SELECT 'small', bloom_agg(c, 0.01, 800) FROM generate_series(0, 79900, 100) c;
        INSERT INTO filters
          SELECT 'large', bloom_agg(c, 0.01, 54000000) FROM generate_series(0, 79900, 100) c;
        VACUUM ANALYZE orders; VACUUM ANALYZE vip; VACUUM ANALYZE probes;
        VACUUM ANALYZE probes_fifth; VACUUM ANALYZE filters;
    """)
    sizes = dict(line.split("|") for line in psql(
        "SELECT name, octet_length(f::bytea) FROM filters ORDER BY name;"))
    print(f"rows: {n:,}; runs per timing: {args.runs} (median); jit off")
    print(f"filters: vip {int(sizes['vip']):,} B, small {int(sizes['small']):,} B, "
          f"large {int(sizes['large']):,} B (stored in TOAST, uncompressed)")
    print()

    # 1. Join prefilter.
    print("1. join prefilter over 10M orders, 10k VIP customers (serial plans)")
    queries = [
        ("bloom_contains prefilter",
         "SELECT count(*) FROM orders WHERE bloom_contains("
         "(SELECT f FROM filters WHERE name = 'vip'), customer_id)"),
        ("IN (SELECT ...), hashed SubPlan",
         "SELECT count(*) FROM orders WHERE (customer_id IN (SELECT customer_id FROM vip)) IS TRUE"),
        ("hash semi-join (EXISTS)",
         "SELECT count(*) FROM orders o WHERE EXISTS "
         "(SELECT 1 FROM vip v WHERE v.customer_id = o.customer_id)"),
        ("prefilter + hash semi-join",
         "SELECT count(*) FROM orders o WHERE bloom_contains("
         "(SELECT f FROM filters WHERE name = 'vip'), o.customer_id) AND EXISTS "
         "(SELECT 1 FROM vip v WHERE v.customer_id = o.customer_id)"),
        ("full scan floor: count(*) WHERE customer_id >= 0",
         "SELECT count(*) FROM orders WHERE customer_id >= 0"),
    ]
    base = None
    print(f"   {'query':<48} {'ms':>9} {'ns/row':>8} {'rows kept':>10}  plan")
    for name, query in queries:
        ms, result = time_query(query, SERIAL, args.runs)
        base = base or ms
        print(f"   {name:<48} {ms:9.1f} {ms * 1e6 / n:8.1f} {result:>10}  "
              f"{plan_shape(query, SERIAL)}")
    print()

    # 2. bloom_agg throughput.
    aggregate_throughput(n, args.runs)

    # 3. Per-row cost: 1 KiB vs 64 MiB filter, four query forms.
    per_row_cost(n, args.runs)
    psql(f"DROP DATABASE {DB};", db="postgres")


if __name__ == "__main__":
    main()
