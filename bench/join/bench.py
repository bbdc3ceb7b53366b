#!/usr/bin/python3
"""Join-filter benchmark: runs star joins shaped like SSB Q2.1/Q3.1/Q4.1, the
more selective Q2.3/Q3.2/Q4.3, and TPC-H Q5/Q8/Q9, a multi-batch selective
join, that join and Q3.1 over a partitioned copy of the fact table, a
foreign-key join where every row matches and the fact table's scan alone
(the floor, and an A/A measure of noise: its plan is the same either way), with amq.join_filter off and on, at
work_mem 4MB (the default) and 256MB, REPS times each (interleaved, after one
untimed warm-up run), and prints a Markdown table of median wall times (psql
\\timing) and the off/on ratio. Checks that both settings return the same
rows. Serial plans (max_parallel_workers_per_gather = 0) unless
AMQ_JOIN_WORKERS names another value (Parallel Hash joins then share one
filter, see README).

The last two columns bound what any filter at the fact scan could give. A
perfect filter would cost what the fact scan costs with a probe that drops
nearly every row (the "filter drops 99.98%" query, filter on), and leave the
rest of the query only the fact rows that find a match in every join: the
same query over a table of just those rows (built once, as match_<hash>), filter
off, hash joins only, as in the filtered plans. ideal = that scan + that rest, each timed once per round with the
others, and off / ideal is the most a scan-level filter could make the query
faster here.

Usage: bench.py [REPS [MATCH]]   (only the queries whose name MATCH, a regular
       expression, finds in;
       psql from AMQ_PSQL, connection from PG*)
"""
import hashlib
import os
import re
import statistics
import subprocess
import sys

# The dimension tables, each as a star join reaches it from the fact table l.
JOINS = {
    "c": "JOIN customer c ON l.lo_custkey = c.c_custkey",
    "d": "JOIN date_dim d ON l.lo_orderdate = d.d_datekey",
    "o": "JOIN orders o ON l.lo_orderkey = o.o_orderkey",
    "p": "JOIN part p ON l.lo_partkey = p.p_partkey",
    "s": "JOIN supplier s ON l.lo_suppkey = s.s_suppkey",
}


def star(select, dims, where=None, group=None):
    """SELECT select FROM lineorder l, joined to each of dims (keys of JOINS)
    in order, then WHERE where and GROUP BY (and ORDER BY) group when given."""
    lines = [f"\nSELECT {select} FROM lineorder l"] + [JOINS[dim] for dim in dims]
    if where:
        lines.append(f"WHERE {where}")
    if group:
        lines.append(f"GROUP BY {group} ORDER BY {group}")
    return "\n".join(lines)


QUERIES = [
    ("SSB Q2.1 (part category, supplier region)",
     star("d.d_year, p.p_brand, sum(l.lo_revenue)", "dps",
          "p.p_category = 'MFGR#12' AND s.s_region = 'AMERICA'", "1, 2")),
    ("SSB Q3.1 (customer and supplier region, years)",
     star("c.c_nation, s.s_nation, d.d_year, sum(l.lo_revenue)", "csd",
          "c.c_region = 'ASIA' AND s.s_region = 'ASIA' AND d.d_year BETWEEN 1992 AND 1997",
          "1, 2, 3")),
    ("SSB Q4.1 (regions, two makers)",
     star("d.d_year, c.c_nation, sum(l.lo_revenue - l.lo_supplycost)", "dcsp",
          "c.c_region = 'AMERICA' AND s.s_region = 'AMERICA' AND p.p_mfgr IN ('MFGR#1', 'MFGR#2')",
          "1, 2")),
    ("SSB Q2.3 (one brand, supplier region)",
     star("d.d_year, p.p_brand, sum(l.lo_revenue)", "dps",
          "p.p_brand = 'MFGR#2221' AND s.s_region = 'EUROPE'", "1, 2")),
    ("SSB Q3.2 (customer and supplier nation, years)",
     star("c.c_nation, s.s_nation, d.d_year, sum(l.lo_revenue)", "csd",
          "c.c_nation = 14 AND s.s_nation = 14 AND d.d_year BETWEEN 1992 AND 1997", "1, 2, 3")),
    ("SSB Q4.3 (supplier nation, category, region, two years)",
     star("d.d_year, s.s_nation, p.p_brand, sum(l.lo_revenue - l.lo_supplycost)", "dcsp",
          "c.c_region = 'AMERICA' AND s.s_nation = 3 AND p.p_category = 'MFGR#14'\n"
          "  AND d.d_year IN (1997, 1998)", "1, 2, 3")),
    ("TPC-H Q5 shape (one region, one year)",
     star("s.s_nation, sum(l.lo_revenue)", "csd",
          "c.c_region = 'ASIA' AND s.s_region = 'ASIA' AND c.c_nation = s.s_nation\n"
          "  AND d.d_year = 1994", "1")),
    ("TPC-H Q8 shape (one brand, region, two years)",
     star("d.d_year, sum(CASE WHEN s.s_nation = 3 THEN l.lo_revenue ELSE 0 END)::numeric\n"
          "       / sum(l.lo_revenue)", "pcsd",
          "p.p_brand = 'MFGR#1211' AND c.c_region = 'AMERICA' AND d.d_year IN (1995, 1996)", "1")),
    ("TPC-H Q9 shape (5% of parts)",
     star("s.s_nation, d.d_year, sum(l.lo_revenue - l.lo_supplycost)", "psd",
          "p.p_name LIKE '%green%'", "1, 2")),
    ("multi-batch: 20% of 2.5M orders",
     star("count(*), sum(l.lo_revenue)", "o", "o.o_priority = '1-URGENT'")),
    ("FK join, every row matches", star("d.d_year, sum(l.lo_revenue)", "d", group="1")),
    # No join: the same plan with the setting off and on, so its off/on is
    # this machine's noise, and its time the floor under every query above.
    ("fact scan alone (no join)", """
SELECT count(*) FROM lineorder"""),
]

# Two of the joins again over the fact table as 8 partitions
# (gen_partitioned.sql): a probe above each partition's scan. No ideal column:
# its floor would be the partitioned scan's. Run before the FK joins.
PARTITIONED = [(f"{label}, fact table in 8 partitions",
                dict(QUERIES)[name].replace("FROM lineorder l", "FROM lineorder_p l"))
               for label, name in [("multi-batch", "multi-batch: 20% of 2.5M orders"),
                                   ("SSB Q3.1", "SSB Q3.1 (customer and supplier region, years)")]]
# The fact table in 24 partitions joined to the urgent orders of about one
# partition's range (key 520,000 to 620,000 of 2.5M): the probes of the 22
# partitions no order key reaches skip their scans (the target: at
# least 5x the plain hash join).
PARTITIONED.append(("orders of one partition's range, fact table in 24 partitions", """
SELECT count(*), sum(l.lo_revenue) FROM lineorder_p24 l JOIN orders o ON l.lo_orderkey = o.o_orderkey
WHERE o.o_orderkey BETWEEN 520000 AND 620000 AND o.o_priority = '1-URGENT'"""))
FK_AT = [name for name, _ in QUERIES].index("FK join, every row matches")
QUERIES[FK_AT:FK_AT] = PARTITIONED

# The fact scan under a probe that drops nearly every row (2 of 10,000
# suppliers): with the filter on, the cost of scanning and probing alone,
# which no scan-level filter can go below.
FLOOR = ("fact scan, filter drops 99.98% (2 of 10,000 suppliers)", """
SELECT count(*) FROM lineorder l JOIN supplier s ON l.lo_suppkey = s.s_suppkey
WHERE s.s_suppkey % 5000 = 1""")
QUERIES.append(FLOOR)

# The everything-matches join once more with the planner's decision forced,
# to show what the run-time switch-off bounds.
FORCED = ("FK join, every row matches, filter forced (max_pass_rate 1)",
          dict(QUERIES)["FK join, every row matches"], "SET amq.join_filter_max_pass_rate = 1;")

WORKERS = int(os.environ.get("AMQ_JOIN_WORKERS", "0"))
SETUP = (f"LOAD 'amq'; SET max_parallel_workers_per_gather = {WORKERS}; SET jit = off; "
         "\\o /dev/null\n\\timing on\n")


def run(sql):
    psql = os.environ.get("AMQ_PSQL", "psql")
    out = subprocess.run([psql, "-X", "-q", "-v", "ON_ERROR_STOP=1"], input=sql,
                         capture_output=True, text=True, check=True)
    return out.stdout


def timed(query, work_mem, on, extra=""):
    """Wall milliseconds of one run of query."""
    sql = (SETUP + f"SET work_mem = '{work_mem}'; SET amq.join_filter = {'on' if on else 'off'}; "
           f"{extra}\n{query};\n")
    times = re.findall(r"Time: ([\d.]+) ms", run(sql))
    return float(times[-1])


def same_rows(query, extra=""):
    """Whether the query returns the same rows with the filter off and on."""
    def rows(on):
        return run(f"LOAD 'amq'; SET max_parallel_workers_per_gather = {WORKERS}; "
                   f"SET amq.join_filter = {'on' if on else 'off'}; {extra}\n{query};\n")
    return rows(False) == rows(True)


# The query over the matching rows joins as the filtered query does: with so
# few fact rows the planner would otherwise choose nested loops, sometimes
# far slower ones, as its estimates of the dimension filters are loose.
HASH_JOINS_ONLY = "SET enable_nestloop = off; SET enable_mergejoin = off;"


def over_matching_rows(query):
    """query over only the fact rows that match in every join (a table made
    once from its FROM and WHERE, named after them), or None for a query
    without a WHERE (no join, or one where every row matches) and one over
    the partitioned copy."""
    found = re.search(r"FROM lineorder l(.*?WHERE.*?)(GROUP BY|$)", query, re.S)
    if found is None:
        return None
    table = "match_" + hashlib.md5(found.group(1).encode()).hexdigest()[:12]
    run(f"SET amq.join_filter = off; CREATE UNLOGGED TABLE IF NOT EXISTS {table} AS "
        f"SELECT l.* FROM lineorder l{found.group(1)}; ANALYZE {table};")
    return query.replace("FROM lineorder l", f"FROM {table} l")


def medians(query, work_mem, extra, reps, ideal_query):
    """Median milliseconds off, on, and, for an ideal_query, of the floor
    query (filter on) plus ideal_query (filter off), timed in the same rounds."""
    off, on, ideal = [], [], []
    timed(query, work_mem, False, extra)  # warm-up: caches, not timed
    for _ in range(reps):
        off.append(timed(query, work_mem, False, extra))
        on.append(timed(query, work_mem, True, extra))
        if ideal_query is not None:
            ideal.append(timed(FLOOR[1], work_mem, True) +
                         timed(ideal_query, work_mem, False, HASH_JOINS_ONLY))
    return (statistics.median(off), statistics.median(on),
            statistics.median(ideal) if ideal else None)


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    match = sys.argv[2] if len(sys.argv) > 2 else ""
    print("| query | work_mem | off (ms) | on (ms) | off/on | ideal (ms) | off/ideal |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, query, extra in [(n, q, "") for n, q in QUERIES] + [FORCED]:
        if not re.search(match, name):
            continue
        if not same_rows(query, extra):
            print(f"| {name} | RESULTS DIFFER | | | | | |")
            continue
        ideal_query = over_matching_rows(query) if extra == "" else None
        for work_mem in ["4MB", "256MB"]:
            m_off, m_on, m_ideal = medians(query, work_mem, extra, reps, ideal_query)
            ideal = "| | |" if m_ideal is None else f"| {m_ideal:.0f} | {m_off / m_ideal:.2f} |"
            print(f"| {name} | {work_mem} | {m_off:.0f} | {m_on:.0f} | {m_off / m_on:.2f} {ideal}",
                  flush=True)


if __name__ == "__main__":
    main()
