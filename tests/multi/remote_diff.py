"""Differential corpus of the remote join filter: random join queries over a
fact table whose partitions live on the shards, run on the coordinator with
amq.join_filter off and on, compared row for row.

Data, drawn from the seed (tests/multi/run.sh has started the coordinator
and the shards):
- on the shards, the fact's partitions rd_p1 and rd_p3 (shard1), rd_p2 and
  rd_p4 (shard2), SIZE rows each, with keys k4 (int4), k8 (int8), kn
  (numeric, some not integral) and kt (text, some not ASCII), NULL keys
  among them; some partitions store a key in another type that hashes alike
  (int2, int8, numeric(12,1), varchar);
- on the coordinator, five fact tables partitioned by range of id over
  those same shard tables, each with one more, local partition: fa and fs
  (async_capable true and false), fa_f and fs_f (the same, fetch_size 40:
  many FETCHes, so a rescan closes and reopens the cursor rather than
  rereading its first batch), fr (async, use_remote_estimate: the planner
  asks the shards for estimates); local dimensions d1..d5 of random sizes with
  random key subsets and NULL keys, de always empty, and drv, the six rows
  that drive nested loops.

Queries join a fact table (sometimes two in a UNION ALL, sometimes some of
its partitions pruned by the planner, when a generic plan starts or on each
rescan) to one to three dimensions (sometimes a dimension to another, or
the fact to another fact table): inner, left, right, full,
semi (EXISTS, IN) and anti (NOT EXISTS), on int4 = int8 either way, numeric,
numeric = int4 and text keys, and on the fact's partition key (whose
probes skip partitions), in plain selects (some FOR SHARE OF the fact:
row marks), under LIMIT (counted) and LIMIT over a total ORDER BY, through a
cursor read in pieces, inside correlated subqueries and LATERAL, where
every row of drv rescans the join (and a parameter on the dimension
rebuilds its filter), and as prepared statements executed twice under a
generic or a custom plan. Settings vary per query: work_mem, merge and
nested-loop joins, Memoize, async Append, the filter's pass rate and remote
memory limit.

The runs with the filter off and on run at the same time (two sessions);
then each query runs again with the filter on under EXPLAIN ANALYZE
VERBOSE: a query counts as filtered when a Remote SQL probes a filter
(and as sent when a builder sent a filter). Fails on any difference or
error, on a filter shipped where none may be (a query whose every join to
the fact is left, full or anti), on more than 2% of the queries over
statement_timeout, and on too few filtered queries among those whose joins
qualify (under 25%), so that the corpus cannot pass by shipping nothing.

Usage: remote_diff.py SEED [QUERIES [ONLY]] (400 queries unless told):
ONLY runs that one query
(replay a failure as printed: bash tests/multi/run.sh diff SEED ONLY).
Prints one block per failing query, a summary, then "N passed, N failed".
"""

import os
import random
import re
import sys
from concurrent.futures import ThreadPoolExecutor

from nodes import psql, run_psql

# What the corpora share.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import corpus  # noqa: E402

SIZE = 6000  # rows of each foreign partition
LOCAL = 400  # rows of each fact table's local partition
# The shard of each partition, and the types it stores some keys in (the
# coordinator declares k4 int4, k8 int8, kn numeric, kt text).
PARTITIONS = {
    1: ("shard1", {}),
    2: ("shard2", {"k4": "int8", "k8": "numeric", "kt": "varchar"}),
    3: ("shard1", {"k4": "int2", "kn": "numeric(12,1)"}),
    4: ("shard2", {"k8": "int4", "kt": "varchar(20)"}),
}
# fact table -> its foreign partitions' options
FACTS = {
    "fa": "async_capable 'true'",
    "fs": "async_capable 'false'",
    "fa_f": "async_capable 'true', fetch_size '40'",
    "fs_f": "async_capable 'false', fetch_size '40'",
    "fr": "async_capable 'true', use_remote_estimate 'true'",
}
DIMS = ["d1", "d2", "d3", "d4", "d5", "de"]
TYPES = {"id": "int8", "v": "int4", "k4": "int4", "k8": "int8", "kn": "numeric", "kt": "text"}
COLUMNS = ", ".join(f"{c} {t}" for c, t in TYPES.items())
INT_COLS = ["k4", "k8"]
# Joins to the fact that may get a remote filter (the fact on the probe side
# of an inner, semi or right join), and those that never may.
QUALIFYING = {"inner", "right", "semi", "in"}
NEVER = {"left", "full", "anti"}


def keys_sql(lo, span, nullp):
    """The select list of one generated row g: id, v and the four keys drawn
    from lo..lo+span-1, each NULL with probability nullp."""
    def draw():
        return "floor(%d + %d * random())::int8" % (lo, span)

    def null(expr):
        return "CASE WHEN random() < %f THEN NULL ELSE %s END" % (nullp, expr)
    return (f"g, (random() * 100)::int4, {null(draw())}, {null(draw())}, "
            f"{null(f'{draw()} + CASE WHEN random() < 0.3 THEN 0.5 ELSE 0 END')}, "
            f"{null(f'CASE WHEN random() < 0.2 THEN chr(233) ELSE chr(107) END || {draw()}')}")


def shard_sql(rng, part, domain):
    """The SQL that creates and fills partition part on its shard."""
    types = {**TYPES, **PARTITIONS[part][1]}
    columns = ", ".join(f"{c} {t}" for c, t in types.items())
    first = (part - 1) * SIZE + 1
    return (f"DROP TABLE IF EXISTS rd_p{part};\n"
            f"CREATE TABLE rd_p{part} ({columns});\n"
            f"SELECT setseed({rng.random() * 2 - 1});\n"
            f"INSERT INTO rd_p{part} SELECT {keys_sql(0, domain, rng.choice([0.0, 0.05, 0.1]))} "
            f"FROM generate_series({first}, {first + SIZE - 1}) g;\n"
            f"ANALYZE rd_p{part};")


def coord_sql(rng, domain):
    """The SQL that creates the fact tables, the dimensions and drv on the
    coordinator."""
    local = 4 * SIZE + 1
    parts = [f"SELECT setseed({rng.random() * 2 - 1});",
             f"CREATE TABLE rd_local ({COLUMNS});",
             f"INSERT INTO rd_local SELECT {keys_sql(0, domain, 0.1)} "
             f"FROM generate_series({local}, {local + LOCAL - 1}) g;"]
    for fact, options in FACTS.items():
        parts.append(f"CREATE TABLE {fact} ({COLUMNS}) PARTITION BY RANGE (id);")
        for part, (server, _) in PARTITIONS.items():
            first = (part - 1) * SIZE + 1
            parts.append(f"CREATE FOREIGN TABLE {fact}_p{part} PARTITION OF {fact} "
                         f"FOR VALUES FROM ({first}) TO ({first + SIZE}) SERVER {server} "
                         f"OPTIONS (table_name 'rd_p{part}', {options});")
        parts.append(f"CREATE TABLE {fact}_local PARTITION OF {fact} "
                     f"FOR VALUES FROM ({local}) TO (MAXVALUE);")
        parts.append(f"INSERT INTO {fact} SELECT * FROM rd_local;")
        parts.append(f"ANALYZE {fact};")
    for dim in DIMS:
        rows = 0 if dim == "de" else rng.choice([0, 1, 20, 200, 200, 2000, 6000])
        span = max(1, domain // rng.choice([1, 5, 50]))
        lo = rng.randint(0, domain - span)
        parts.append(f"CREATE TABLE {dim} ({COLUMNS});")
        parts.append(f"INSERT INTO {dim} SELECT {keys_sql(lo, span, rng.choice([0.0, 0.1, 0.4]))} "
                     f"FROM generate_series(1, {rows}) g;")
        parts.append(f"ANALYZE {dim};")
    parts.append("CREATE TABLE drv AS SELECT g AS id, g * 10 AS v FROM generate_series(1, 6) g;")
    parts.append("ANALYZE drv;")
    return "\n".join(parts)


def setup(seed):
    """Creates the data of seed on the shards and the coordinator."""
    rng = random.Random(seed)
    domain = rng.choice([3000, 30000])
    for part, (server, _) in PARTITIONS.items():
        psql(server, shard_sql(rng, part, domain))
    psql("coord", "DROP TABLE IF EXISTS rd_local, drv, %s CASCADE;\n%s"
         % (", ".join(list(FACTS) + DIMS), coord_sql(rng, domain)))


def key_condition(rng, left, right):
    """An equality between aliases left and right: integer keys of either
    width, numeric, numeric = int4 either way (cast on the int4 side) or
    text; sometimes two of them."""
    return corpus.key_condition(
        rng, left, right, ["int", "int", "int", "num", "numint", "intnum", "txt", "txt"],
        {"num": ("kn", "kn"), "numint": ("kn", "k4"), "intnum": ("k4", "kn"), "txt": ("kt", "kt")},
        INT_COLS, 0.2)


def join_query(rng, fact, outer_ref=None):
    """(sql, kinds, sure_none): a SELECT of fact joined to dimensions; kinds
    lists the kind of each join to the fact; sure_none says that no join may
    filter the fact (every join to it is left, full or anti, and nothing
    turns one into an inner join). outer_ref, when given, is an expression
    of an enclosing query that one table is correlated with."""
    if rng.random() < 0.1:
        # Two fact tables in one Append: each shard table scanned twice, on
        # the one connection to its shard.
        from_sql = (f"(SELECT * FROM {fact} UNION ALL SELECT * FROM {rng.choice(list(FACTS))} "
                    f"WHERE v < {rng.randint(10, 100)}) f")
    else:
        from_sql = f"{fact} f"
    visible = ["f"]
    kinds = []
    where = []
    other = False  # a join between dimensions, or of the fact to a fact
    for j in range(rng.choice([1, 1, 1, 2, 2, 3])):
        alias = f"d{j}"
        table = rng.choice(DIMS)
        left = "f"
        if len(visible) > 1 and rng.random() < 0.15:
            left = rng.choice(visible[1:])
            other = True
        elif rng.random() < 0.08:
            table = rng.choice(list(FACTS))
            other = True
        cond = key_condition(rng, left, alias)
        if left == "f" and rng.random() < 0.15:
            # On the fact's partition key: the probes of synchronous
            # partitions skip those the build side misses.
            cond = f"f.id = {alias}.{rng.choice(['id', 'k8'])}"
        sel = f"{alias}.v < {rng.randint(0, 100)}"
        kind = rng.choice(["inner", "inner", "inner", "left", "right", "full", "semi", "in",
                           "anti"])
        if left == "f" and table in DIMS:
            kinds.append(kind)
        join, conds, shown = corpus.join_clause(rng, kind, f"{table} {alias}", left, cond, sel,
                                                INT_COLS + ["kn", "kt"], INT_COLS,
                                                ("left", "right", "full"))
        from_sql += join
        where += conds
        if shown:
            visible.append(alias)
    sure_none = not other and all(k in NEVER for k in kinds)
    if outer_ref is not None:
        # On a dimension the parameter changes the hashed side: each rescan
        # rebuilds the filter. Where no join may filter, only on the fact
        # (a qual on an outer join's dimension could make it an inner join).
        target = "f" if sure_none or len(visible) == 1 else rng.choice(visible)
        where.append(f"{target}.v % 4 = {outer_ref} % 4")
    if rng.random() < 0.3:
        # On the partition key: partitions pruned by the planner, when a
        # generic plan starts ($1) or on each rescan (outer_ref).
        where.append(f"f.id <= ({outer_ref or rng.randint(0, 3)} + 1) * 7000")
    return corpus.select(visible, from_sql, where), kinds, sure_none


def make_query(rng):
    """A random query: a dict of its shape, its SQL, the statements of one
    run and those of the run that explains it (EXPLAIN ANALYZE VERBOSE),
    its settings, its join kinds and sure_none."""
    fact = rng.choice(list(FACTS))
    shape = rng.choice(["plain", "plain", "plain", "limit", "ordered", "cursor", "cursor",
                        "correlated", "correlated", "lateral", "lateral", "prepared"])
    if shape == "correlated":
        sql, kinds, none = join_query(rng, fact, "o.id")
        sql = (f"SELECT o.id, (SELECT count(*) || ':' || coalesce(sum(q.f_id), 0) FROM ({sql}) q) "
               f"AS n FROM drv o WHERE o.id <= {rng.randint(2, 5)}")
    elif shape == "lateral":
        sql, kinds, none = join_query(rng, fact, "o.id")
        sql = f"SELECT o.id AS o_id, q.* FROM drv o, LATERAL ({sql}) q WHERE o.id <= 3"
    elif shape == "prepared":
        sql, kinds, none = join_query(rng, fact, "$1")
    else:
        sql, kinds, none = join_query(rng, fact)
        if shape == "limit":
            sql += f" LIMIT {rng.randint(1, 60)}"
        elif shape == "ordered":
            sql = f"SELECT * FROM ({sql}) q ORDER BY q::text LIMIT {rng.randint(1, 60)}"
        elif not any(x in sql for x in (" RIGHT JOIN ", " FULL JOIN ", " UNION ALL ")) \
                and rng.random() < 0.2:
            # row marks: the shards lock their rows (shared locks, as the
            # runs with the filter off and on run at the same time)
            sql += " FOR SHARE OF f"
    analyze = "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) "
    if shape == "cursor":
        # A cursor read in pieces: its rows are compared as a multiset.
        declare = f"DECLARE c NO SCROLL CURSOR FOR {sql};"
        statements = ["BEGIN;", declare, f"FETCH {rng.randint(1, 20)} FROM c;",
                      f"FETCH {rng.randint(1, 500)} FROM c;", "FETCH ALL FROM c;", "COMMIT;"]
        explain = [analyze + declare]
    elif shape == "prepared":
        # Executed twice with other values, under a generic or a custom plan.
        prepare = f"PREPARE p(int) AS {corpus.digest(sql)}"
        runs = [f"EXECUTE p({rng.randint(0, 3)});" for _ in range(2)]
        statements = [prepare, *runs, "DEALLOCATE p;"]
        explain = [prepare, *(analyze + x for x in runs), "DEALLOCATE p;"]
    else:
        statements = [corpus.count(sql) if shape == "limit" else corpus.digest(sql)]
        explain = [analyze + statements[0]]
    settings = {
        # 256kB: joins whose hashed side is a dimension of 6,000 rows or a
        # fact table run in batches (less: an outer join hashing the fact's
        # NULL keys, which no batch split divides, splits in vain for seconds)
        "work_mem": rng.choice(["256kB", "256kB", "4MB"]),
        "enable_mergejoin": rng.choice(["on", "off", "off"]),
        "enable_nestloop": rng.choice(["on", "off"]),
        "enable_memoize": rng.choice(["on", "off"]),
        "enable_async_append": rng.choice(["on", "on", "off"]),
        "plan_cache_mode": rng.choice(["force_generic_plan", "force_custom_plan"]),
        "amq.join_filter_max_pass_rate": rng.choice(["1", "1", "0.5"]),
        "amq.join_filter_remote_max_memory": rng.choice(["4MB"] * 9 + ["1kB"]),
        "statement_timeout": "10s",
    }
    return {"shape": shape, "sql": sql, "statements": statements, "explain": explain,
            "settings": settings, "kinds": kinds, "sure_none": none}


def script(queries, filter_on, explain):
    """The psql script of one run: every query's statements (those that
    explain it, with explain)."""
    lines = ["LOAD 'amq';", "SET amq.join_filter = %s;" % ("on" if filter_on else "off")]
    for i, q in queries:
        lines.extend(corpus.block(i, q["settings"], q["explain"] if explain else q["statements"]))
    return "\n".join(lines) + "\n"


def run_together(scripts):
    """The stdout of each script, run on the coordinator in its own session
    (not stopping at an error), all at the same time."""
    with ThreadPoolExecutor(len(scripts)) as pool:
        return [p.stdout for p in pool.map(lambda s: run_psql("coord", s, stop=False), scripts)]


def rows(output):
    """A cursor's output compared as a multiset: its row lines sorted (the
    SQLSTATE lines stay, in order, after them)."""
    lines = output.splitlines()
    states = [x for x in lines if x.startswith("state ")]
    return "\n".join(sorted(x for x in lines if not x.startswith("state ")) + states)


def remote_filters(plan):
    """The Remote SQL lines of a plan that probe a filter."""
    return [line for line in plan.splitlines()
            if "Remote SQL:" in line and "amq_join_filter_probe(" in line]


def main():
    seed = int(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    only = int(sys.argv[3]) if len(sys.argv) > 3 else None
    try:
        setup(seed)
    except RuntimeError as e:
        print(f"setup failed (seed {seed}): {e}")
        print("0 passed, 1 failed")
        return 1
    queries = []
    for i in range(count):
        rng = random.Random(seed * 1000003 + i)
        q = make_query(rng)
        if only is None or only == i:
            queries.append((i, q))
    off, on = (corpus.split(out) for out in
               run_together([script(queries, False, False), script(queries, True, False)]))
    plans = corpus.split(run_together([script(queries, True, True)])[0])
    passed = failed = skipped = 0
    qualifying = filtered = sent = 0
    by_kind = {}
    for i, q in queries:
        if corpus.timed_out(off.get(i), on.get(i), plans.get(i)):
            skipped += 1  # too slow in some run: bounded by statement_timeout
            continue
        problem = corpus.compare(off.get(i), on.get(i), rows if q["shape"] == "cursor" else None)
        shipped = remote_filters(plans.get(i, ""))
        if problem is None and not corpus.succeeded(plans.get(i)):
            problem = "EXPLAIN ANALYZE failed: " + plans.get(i, "")
        if problem is None and q["sure_none"] and shipped:
            problem = ("a remote filter where no join may filter the fact (%s): %s"
                       % (", ".join(q["kinds"]), shipped[0].strip()))
        if problem:
            failed += 1
            corpus.report(i, f"bash tests/multi/run.sh diff {seed} {i}", problem, q["settings"],
                          " ".join(q["statements"]))
            continue
        passed += 1
        if QUALIFYING & set(q["kinds"]):
            qualifying += 1
            filtered += bool(shipped)
            sent += bool(re.search(r"Filter \d+ Size: \d+ bytes", plans[i]))
        for kind in set(q["kinds"]):
            seen = by_kind.setdefault(kind, [0, 0])
            seen[0] += 1
            seen[1] += bool(shipped)
    print("%d queries (seed %d), %d compared, %d skipped (statement_timeout); with a remote "
          "filter: %d of %d whose joins qualify (sent to a shard in %d); by kind of join to the "
          "fact (filtered/queries): %s"
          % (len(queries), seed, len(queries) - skipped, skipped, filtered, qualifying, sent,
             ", ".join(f"{k} {v[1]}/{v[0]}" for k, v in sorted(by_kind.items()))))
    failed += corpus.too_many_timeouts(skipped, len(queries))
    if only is None and filtered < qualifying / 4:
        print("FAIL too few queries got a remote filter: %d of %d whose joins qualify (want >= 25%%)"
              % (filtered, qualifying))
        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
