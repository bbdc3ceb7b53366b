#!/usr/bin/python3
"""Differential test of the automatic join filter (amq.join_filter).

Generates random tables and random join queries from one seed, runs every
query with amq.join_filter off and on in the same server, and compares the
results: the row count and the md5 of the sorted rows (only the count for a
LIMIT without ORDER BY, whose rows may legitimately differ). The queries mix
inner, left, right, full, semi (EXISTS, IN) and anti (NOT EXISTS) joins; one-
and two-column keys; NULL keys, skewed and empty tables; int2/int4/int8 across
types, numeric of two scales, text under "C" and a nondeterministic ICU
collation, uuid and bytea; and plan shapes with nested loops over hash joins
(correlated subqueries), materialized CTEs, UNION ALL and tables
partitioned by range, hash and list with default partitions (probes in each
branch or partition; joins on the partition key, whose probes skip the
partitions the build side misses), LIMIT, parallel plans, a small
and a large work_mem, and scans that probes sift (drop rows inside) or, under
a volatile qual that keeps every row, test row by row. With the
filter on, each query also runs under EXPLAIN ANALYZE, to count the queries
whose filters actually removed rows.

Usage: difftest.py SEED QUERIES  (psql from PGBINDIR, connection from PG*).
Prints one line per failing query with its number and seed (replay with
JF_SEED=SEED JF_ONLY=N), then "N passed, N failed"; exits 1 on any failure.
"""
import os
import random
import re
import sys

# psql as the other suites run it, and what the corpora share.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import corpus  # noqa: E402
import pgsql  # noqa: E402

TABLES = ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"]
# t6 is partitioned by range of id, into three partitions and a default one.
PARTITIONED = "t6"
# The partitioned tables, each with its partition key: t6 by range of id,
# t7 by hash of k_i8 (three partitions), t8 by list of k_txt (two lists and a
# default). A join on the key may skip the partitions the build side misses.
PARTITION_KEYS = {"t6": "id", "t7": "k_i8", "t8": "k_txt"}
# A column of the same type as each partition key, to join it with.
PARTITION_PARTNERS = {"id": ["id", "k_i4"], "k_i8": ["k_i8"], "k_txt": ["k_txt"]}
INT_COLS = ["k_i2", "k_i4", "k_i8"]


def psql(script, errors=True):
    """Runs script in one psql session and returns its output: stdout, then
    (with errors) stderr."""
    psql_bin = os.path.join(os.environ.get("PGBINDIR", ""), "psql")
    out = pgsql.run([psql_bin], script, stop=False)
    return out.stdout + (out.stderr if errors else "")


def setup_sql(seed):
    """Tables t1..t8 with every key type, sizes, ranges, skew and NULLs drawn
    from seed; t5 is always empty, t6 to t8 partitioned."""
    rng = random.Random(seed)
    parts = [
        "DROP COLLATION IF EXISTS ci CASCADE;",
        "CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);",
        "SELECT setseed(%f);" % (rng.random() * 2 - 1),
    ]
    partitioning = {"t6": " PARTITION BY RANGE (id)", "t7": " PARTITION BY HASH (k_i8)",
                    "t8": " PARTITION BY LIST (k_txt)"}
    for name in TABLES:
        rows = 0 if name == "t5" else rng.choice([30, 200, 800, 2000])
        lo = rng.randint(-1000, 1000)
        hi = lo + max(rows, 30) * rng.choice([1, 2, 4])
        skew = rng.choice([1, 1, 2])
        nullp = rng.choice([0.0, 0.05, 0.3])
        scale = rng.choice([1, 3])
        base = "floor(%d + %d * power(random(), %d))::int" % (lo, hi - lo, skew)
        null = "random() < %f" % nullp
        parts.append(f"DROP TABLE IF EXISTS {name};")
        parts.append(
            f"CREATE TABLE {name} (id int, v int, k_i2 int2, k_i4 int4, k_i8 int8, "
            f"k_num numeric, k_txt text COLLATE \"C\", k_ci text COLLATE ci, k_uuid uuid, "
            f"k_bytea bytea){partitioning.get(name, '')};")
        if name == PARTITIONED:
            cut = rows // 3
            parts.append(f"CREATE TABLE {name}_a PARTITION OF {name} "
                         f"FOR VALUES FROM (MINVALUE) TO ({cut});")
            parts.append(f"CREATE TABLE {name}_b PARTITION OF {name} "
                         f"FOR VALUES FROM ({cut}) TO ({2 * cut});")
            parts.append(f"CREATE TABLE {name}_c PARTITION OF {name} "
                         f"FOR VALUES FROM ({2 * cut}) TO ({rows});")
            parts.append(f"CREATE TABLE {name}_d PARTITION OF {name} DEFAULT;")
        if name == "t7":
            for r in range(3):
                parts.append(f"CREATE TABLE {name}_{r} PARTITION OF {name} "
                             f"FOR VALUES WITH (MODULUS 3, REMAINDER {r});")
        if name == "t8":
            # Two lists of keys from the drawn range, the rest (NULL too) in
            # the default partition.
            first = ", ".join(f"'k{lo + i}'" for i in range(0, 40, 2))
            second = ", ".join(f"'k{lo + i}'" for i in range(1, 40, 2))
            parts.append(f"CREATE TABLE {name}_even PARTITION OF {name} FOR VALUES IN ({first});")
            parts.append(f"CREATE TABLE {name}_odd PARTITION OF {name} FOR VALUES IN ({second});")
            parts.append(f"CREATE TABLE {name}_rest PARTITION OF {name} DEFAULT;")
        parts.append(
            f"INSERT INTO {name} SELECT g, (random() * 100)::int, "
            f"CASE WHEN {null} THEN NULL ELSE (x % 32000)::int2 END, "
            f"CASE WHEN {null} THEN NULL ELSE x END, "
            f"CASE WHEN {null} THEN NULL ELSE x::int8 END, "
            f"CASE WHEN {null} THEN NULL ELSE round(x / 2.0, {scale}) END, "
            f"CASE WHEN {null} THEN NULL ELSE 'k' || y END, "
            f"CASE WHEN {null} THEN NULL ELSE "
            f"(CASE WHEN random() < 0.5 THEN 'K' ELSE 'k' END) || y END, "
            f"CASE WHEN {null} THEN NULL ELSE md5(x::text)::uuid END, "
            f"CASE WHEN {null} THEN NULL ELSE decode(md5(y::text), 'hex') END "
            f"FROM (SELECT g, {base} AS x, {base} AS y "
            f"FROM generate_series(1, {rows}) g) s;")
        parts.append(f"CREATE INDEX ON {name} (k_i4);")
        parts.append(f"CREATE INDEX ON {name} (k_txt);")
        parts.append(f"ANALYZE {name};")
    return "\n".join(parts) + "\n"


def key_condition(rng, left, right):
    """An equality join condition between aliases left and right (sometimes two
    columns, sometimes with a cast on one side that no filter can use)."""
    return corpus.key_condition(
        rng, left, right, ["int", "int", "num", "numcast", "txt", "ci", "uuid", "bytea"],
        {"numcast": ("k_i4", "k_num"), **{k: (f"k_{k}", f"k_{k}") for k in
                                          ("num", "txt", "ci", "uuid", "bytea")}}, INT_COLS, 0.25)


def join_query(rng, outer_ref=None):
    """A random SELECT over 2-4 tables. outer_ref, when given, is an expression
    of an enclosing query that one table is correlated with."""
    ntab = rng.randint(2, 4 if outer_ref is None else 3)
    aliases = ["a0"]
    visible = ["a0"]
    first = rng.choice(TABLES)
    cte = ""
    shape = rng.random()
    if shape < 0.15:
        cte = "WITH c AS MATERIALIZED (SELECT * FROM %s WHERE v < %d) " % (
            first, rng.randint(10, 100))
        first = "c"
    elif shape < 0.3:
        first = "(SELECT * FROM %s UNION ALL SELECT * FROM %s WHERE v < %d)" % (
            first, rng.choice(TABLES), rng.randint(10, 100))
    from_sql = f"{first} a0"
    table_of = {"a0": first}
    where = []
    for j in range(1, ntab):
        alias = f"a{j}"
        table = rng.choice(TABLES)
        left = rng.choice(visible)
        if table_of[left] == PARTITIONED and rng.random() < 0.3:
            table = PARTITIONED
        table_of[alias] = table
        cond = key_condition(rng, left, alias)
        if table == table_of[left] == PARTITIONED and rng.random() < 0.5:
            # on the partition key too: a partitionwise join when enabled
            cond = f"{left}.id = {alias}.id AND {cond}"
        elif table in PARTITION_KEYS and rng.random() < 0.5:
            # on the partition key alone: partitions the build side misses
            # are skipped
            key = PARTITION_KEYS[table]
            cond = f"{left}.{rng.choice(PARTITION_PARTNERS[key])} = {alias}.{key}"
        sel = f"{alias}.v < {rng.randint(5, 100)}"
        kind = rng.choice(["inner", "inner", "left", "right", "full", "semi", "in", "anti"])
        join, conds, shown = corpus.join_clause(rng, kind, f"{table} {alias}", left, cond, sel,
                                                INT_COLS + ["k_txt", "k_uuid"], INT_COLS)
        from_sql += join
        where += conds
        if shown:
            visible.append(alias)
        aliases.append(alias)
    if outer_ref is not None:
        where.append(f"{rng.choice(visible)}.v % 5 = {outer_ref} % 5")
    if rng.random() < 0.25:
        # A volatile qual that keeps every row: its scan is not sifted, so
        # the probes above it test row by row.
        where.append(f"random() + coalesce({rng.choice(visible)}.v, 0) * 0 >= 0")
    return corpus.select(visible, from_sql, where, cte)


def make_query(rng):
    """(sql, settings, compare_rows): a query in one of the plan shapes."""
    shape = rng.choice(["plain", "plain", "plain", "limit", "limit_ordered", "correlated",
                        "lateral"])
    if shape == "correlated":
        sql = ("SELECT o.id, (SELECT count(*) FROM (%s) q) AS n FROM t%d o WHERE o.id <= 4"
               % (join_query(rng, "o.id"), rng.randint(1, 4)))
    elif shape == "lateral":
        sql = ("SELECT o.id, q.* FROM t%d o, LATERAL (%s) q WHERE o.id <= 3"
               % (rng.randint(1, 4), join_query(rng, "o.id")))
    else:
        sql = join_query(rng)
        if shape == "limit":
            sql += " LIMIT %d" % rng.randint(1, 50)
        elif shape == "limit_ordered":
            sql = "SELECT * FROM (%s) q ORDER BY q::text LIMIT %d" % (sql, rng.randint(1, 50))
    parallel = rng.random() < 0.25
    settings = {
        "work_mem": rng.choice(["64kB", "64kB", "4MB", "256MB"]),
        "enable_mergejoin": rng.choice(["on", "off", "off"]),
        "enable_nestloop": rng.choice(["on", "off"]),
        "enable_parallel_hash": rng.choice(["on", "off"]),
        "enable_memoize": rng.choice(["on", "off"]),
        # t6 joined with itself: an Append of one hash join per partition pair.
        "enable_partitionwise_join": rng.choice(["on", "off"]),
        "parallel_setup_cost": "0" if parallel else "1000",
        "parallel_tuple_cost": "0" if parallel else "0.1",
        "min_parallel_table_scan_size": "0" if parallel else "8MB",
        "max_parallel_workers_per_gather": "2" if parallel else "0",
        "amq.join_filter_max_pass_rate": rng.choice(["1", "1", "1", "0.5"]),
        "statement_timeout": "5s",
    }
    return sql, settings, shape != "limit"


def script(queries, filter_on, explain):
    lines = ["LOAD 'amq';", "SET amq.join_filter = %s;" % ("on" if filter_on else "off")]
    for i, (sql, settings, rows) in queries:
        if explain:
            statement = "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) %s;" % sql
        else:
            statement = corpus.digest(sql) if rows else corpus.count(sql)
        lines.extend(corpus.block(i, settings, [statement]))
    return "\n".join(lines) + "\n"


def main():
    seed = int(sys.argv[1])
    count = int(sys.argv[2])
    only = os.environ.get("JF_ONLY")
    out = psql(setup_sql(seed))
    if "ERROR" in out:
        print(out)
        print("setup failed (seed %d)" % seed)
        print("0 passed, 1 failed")
        return 1
    queries = []
    for i in range(count):
        rng = random.Random(seed * 1000003 + i)
        if only is None or int(only) == i:
            queries.append((i, make_query(rng)))
    off = corpus.split(psql(script(queries, False, False), errors=False))
    on = corpus.split(psql(script(queries, True, False), errors=False))
    plans = corpus.split(psql(script(queries, True, True), errors=False))
    passed = failed = with_filter = removing = skipped = skipping = 0
    for i, (sql, settings, _) in queries:
        if corpus.timed_out(off.get(i), on.get(i), plans.get(i)):
            skipped += 1  # too slow in some run: bounded by statement_timeout
            continue
        problem = corpus.compare(off.get(i), on.get(i))
        if problem is None and not corpus.succeeded(plans.get(i)):
            problem = "EXPLAIN ANALYZE failed: " + plans.get(i, "")
        if problem:
            failed += 1
            corpus.report(i, "JF_SEED=%d JF_ONLY=%d" % (seed, i), problem, settings, sql)
            continue
        passed += 1
        plan = plans[i]
        if "AmqJoinFilterProbe" in plan:
            with_filter += 1
        if any(int(n) > 0 for n in re.findall(r"Rows Removed by Bloom Filter: (\d+)", plan)):
            removing += 1
        if "Partition Skipped by Join Filter: true" in plan:
            skipping += 1
    print("%d queries (seed %d): %d with a join filter, %d where a filter removed rows, "
          "%d where one skipped a partition, %d skipped (statement_timeout)"
          % (len(queries), seed, with_filter, removing, skipping, skipped))
    failed += corpus.too_many_timeouts(skipped, len(queries))
    if only is None and removing < len(queries) // 5:
        print("FAIL too few queries where a filter removed rows: %d of %d (want >= 20%%)"
              % (removing, len(queries)))
        failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
