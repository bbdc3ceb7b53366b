"""Join prefiltering through postgres_fdw: what ships to the shards, and
that the answers stay exact with fewer rows fetched.

Data (tests/multi/run.sh loads it): orders, 200,000 rows on two shards, every
customer 0..99,999 once on each shard; on the coordinator vip, 2,000 of those
customers (int4 against the shards' bigint), and filters(name, b bloom,
c cuckoo) built from vip at fpr 0.01.
"""

import json

from nodes import fetched, foreign_scans, plan, psql, value

FPR = 0.01
JOIN = "SELECT o.id, o.amount FROM orders o JOIN vip v USING (customer_id) WHERE {probe}"
PLAIN = "SELECT o.id, o.amount FROM orders o JOIN vip v USING (customer_id)"
# probe name -> (filter column, its type, probe template, text Remote SQL must show)
PROBES = {
    "bloom_contains": ("b", "bloom", "bloom_contains({f}, o.customer_id)", "public.bloom_contains("),
    "cuckoo_contains": ("c", "cuckoo", "cuckoo_contains({f}, o.customer_id)", "public.cuckoo_contains("),
    "bloom @>": ("b", "bloom", "{f} @> o.customer_id", "OPERATOR(public.@>)"),
    "cuckoo @>": ("c", "cuckoo", "{f} @> o.customer_id", "OPERATOR(public.@>)"),
    "bloom <@": ("b", "bloom", "o.customer_id <@ {f}", "OPERATOR(public.<@)"),
}


def setup():
    psql("coord", """
        CREATE TABLE vip AS SELECT c AS customer_id FROM generate_series(0, 99999, 50) c;
        CREATE TABLE filters (name text PRIMARY KEY, b bloom NOT NULL, c cuckoo NOT NULL);
        INSERT INTO filters SELECT 'vip', bloom_agg(customer_id, 0.01), cuckoo_agg(customer_id, 0.01)
          FROM vip;
        ANALYZE vip, filters;""")


def answer(query, setup_sql=""):
    """count, sum of ids and md5 of every (id, amount) of query, in id order."""
    return value("coord", f"""{setup_sql}
        SELECT count(*) || ' ' || coalesce(sum(id), 0) || ' '
               || md5(coalesce(string_agg(id || ':' || amount, ',' ORDER BY id), ''))
          FROM ({query}) s;""")


def shard_counts(table="orders", match="customer_id IN (SELECT customer_id FROM vip)"):
    """Per foreign table of table (its partitions, or itself): (rows, rows
    for which match holds)."""
    counts = {}
    for line in psql("coord", f"""
            SELECT tableoid::regclass, count(*), count(*) FILTER (WHERE {match})
              FROM {table} GROUP BY 1;"""):
        rel, rows, matches = line.split("|")
        counts[rel] = (int(rows), int(matches))
    return counts


def check_scans(r, name, scans, marker, counts, asynchronous=True):
    """Every scan's Remote SQL carries marker (a text, or a test of the SQL),
    there is one per shard, asynchronous (async_capable: the shards work at
    the same time) or not as asked; each shard ships at most its true matches
    plus 1.5 x fpr x its non-matches."""
    carries = marker if callable(marker) else lambda sql: marker in sql
    shipped = [s for s in scans if carries(s["Remote SQL"])]
    want = len(counts)
    r.check(f"{name}: pushed down to {'both shards' if want == 2 else 'the shard'}, "
            f"scanned {'a' if asynchronous else ''}synchronously",
            len(scans) == want and len(shipped) == want
            and all(s["Async Capable"] == asynchronous for s in scans),
            " | ".join(s["Remote SQL"][:110] for s in scans))
    for s in scans:
        rows, matches = counts[s["Relation Name"]]
        bound = matches + 1.5 * FPR * (rows - matches)
        r.check(f"{name}: rows from {s['Relation Name']} <= matches + 1.5*fpr*others",
                fetched(s) <= bound,
                f"{fetched(s)} fetched of {rows} (matches {matches}, bound {bound:.0f})")


def forms(r):
    """Every probe in three forms: a literal filter, a prepared statement
    under a generic plan (and, shipped as a literal, under a custom one), a
    scalar subquery."""
    counts = shard_counts()
    expected = answer(PLAIN)
    r.check("the plain join finds every vip order", expected.startswith("4000 "), expected)
    hexes = {col: value("coord", f"SELECT {col}::text FROM filters WHERE name = 'vip'")
             for col in ("b", "c")}
    for probe, (col, typ, template, marker) in PROBES.items():
        literal = template.format(f=f"'{hexes[col]}'::{typ}")
        query = JOIN.format(probe=literal)
        check_scans(r, f"{probe}, literal filter", foreign_scans(plan("coord", query, True)),
                    marker, counts)
        r.check(f"{probe}, literal filter: same answer as the plain join",
                answer(query) == expected)

        generic = JOIN.format(probe=template.format(f="$1"))
        prepare = (f"SET plan_cache_mode = force_generic_plan; PREPARE p({typ}) AS {generic};"
                   f"PREPARE a({typ}) AS SELECT count(*) || ' ' || coalesce(sum(id), 0) || ' ' "
                   f"|| md5(coalesce(string_agg(id || ':' || amount, ',' ORDER BY id), '')) "
                   f"FROM ({generic}) s;")
        scans = foreign_scans(plan("coord", f"EXECUTE p('{hexes[col]}')", True, prepare))
        check_scans(r, f"{probe}, generic prepared plan", scans, marker, counts)
        r.check(f"{probe}, generic prepared plan: the filter travels as parameter $1",
                all(f"$1::public.{typ}" in s["Remote SQL"] for s in scans))
        got = value("coord", f"{prepare} EXECUTE a('{hexes[col]}');")
        r.check(f"{probe}, generic prepared plan: same answer as the plain join", got == expected)
        custom = prepare.replace("force_generic_plan", "force_custom_plan")
        scans = foreign_scans(plan("coord", f"EXECUTE p('{hexes[col]}')", False, custom))
        r.check(f"{probe}, custom prepared plan: the filter ships folded in as a literal",
                len(scans) == 2 and all(marker in s["Remote SQL"] and "E'\\\\x" in s["Remote SQL"]
                                        for s in scans))

        sub = JOIN.format(probe=template.format(f=f"(SELECT {col} FROM filters WHERE name = 'vip')"))
        check_scans(r, f"{probe}, scalar subquery", foreign_scans(plan("coord", sub, True)),
                    marker, counts)
        r.check(f"{probe}, scalar subquery: same answer as the plain join",
                answer(sub) == expected)


def not_shipped(r):
    """A filter from a join column or a CTE is applied on the coordinator
    (every row crosses the network); so is any filter when the server lacks
    extensions 'amq'. The answer is the same."""
    expected = answer(PLAIN)
    cases = {
        "join column": "SELECT o.id, o.amount FROM orders o JOIN vip v USING (customer_id) "
                       "JOIN filters f ON f.name = 'vip' WHERE bloom_contains(f.b, o.customer_id)",
        "CTE": "WITH f AS (SELECT b FROM filters WHERE name = 'vip') SELECT o.id, o.amount "
               "FROM orders o JOIN vip v USING (customer_id), f WHERE bloom_contains(f.b, o.customer_id)",
    }
    for name, query in cases.items():
        scans = foreign_scans(plan("coord", query, True))
        r.check(f"filter from a {name}: not in Remote SQL, every row fetched",
                all("bloom" not in s["Remote SQL"] and fetched(s) == 100000 for s in scans),
                " | ".join(s["Remote SQL"] for s in scans))
        r.check(f"filter from a {name}: same answer", answer(query) == expected)
    sub = JOIN.format(probe="bloom_contains((SELECT b FROM filters WHERE name = 'vip'), o.customer_id)")
    psql("coord", "ALTER SERVER shard1 OPTIONS (DROP extensions);")
    try:
        scans = {s["Relation Name"]: s for s in foreign_scans(plan("coord", sub, True))}
        r.check("shard1 without extensions 'amq': its scan fetches every row, shard2's is filtered",
                "bloom" not in scans["orders_s1"]["Remote SQL"]
                and fetched(scans["orders_s1"]) == 100000
                and "public.bloom_contains(" in scans["orders_s2"]["Remote SQL"],
                f"{fetched(scans['orders_s1'])} and {fetched(scans['orders_s2'])} rows fetched")
        r.check("shard1 without extensions 'amq': same answer", answer(sub) == expected)
    finally:
        psql("coord", "ALTER SERVER shard1 OPTIONS (ADD extensions 'amq');")


def cross_shard(r):
    """A filter stored on shard1 (its customers with large orders) filters
    shard2's orders: it crosses to the coordinator and on to shard2 intact."""
    psql("shard1", """
        CREATE TABLE shard_filters (name text PRIMARY KEY, f bloom NOT NULL);
        INSERT INTO shard_filters SELECT 'big', bloom_agg(customer_id, 0.01) FROM orders
         WHERE amount >= 95;""")
    psql("coord", """
        CREATE FOREIGN TABLE shard1_filters (name text, f bloom) SERVER shard1
          OPTIONS (table_name 'shard_filters');""")
    on_shard = value("shard1", "SELECT md5(f::bytea) FROM shard_filters WHERE name = 'big'")
    on_coord = value("coord", "SELECT md5(f::bytea) FROM shard1_filters WHERE name = 'big'")
    r.check("a filter stored on shard1 reads the same bytes on the coordinator",
            on_shard == on_coord, on_coord)
    probe = ("SELECT id FROM orders_s2 WHERE bloom_contains("
             "(SELECT f FROM shard1_filters WHERE name = 'big'), customer_id)")
    scans = foreign_scans(plan("coord", probe, True))
    s2 = [s for s in scans if s["Relation Name"] == "orders_s2"]
    r.check("shard1's filter is shipped to shard2 in Remote SQL",
            len(s2) == 1 and "public.bloom_contains($1::public.bloom" in s2[0]["Remote SQL"],
            s2[0]["Remote SQL"] if s2 else "no scan of orders_s2")
    exact = int(value("coord", "SELECT count(*) FROM orders_s2 WHERE customer_id IN "
                                "(SELECT customer_id FROM orders_s1 WHERE amount >= 95)"))
    missed = int(value("coord", f"SELECT count(*) FROM orders_s2 WHERE customer_id IN "
                                f"(SELECT customer_id FROM orders_s1 WHERE amount >= 95) "
                                f"AND id NOT IN ({probe})"))
    kept = fetched(s2[0])
    bound = exact + 1.5 * FPR * (100000 - exact)
    r.check("shard1's filter on shard2: no matching order missed, at most the fpr bound more",
            missed == 0 and exact <= kept <= bound,
            f"{kept} kept, {exact} exact, bound {bound:.0f}")


def sharded_build(r):
    """Each shard aggregates its own rows with one common capacity (the sum
    of the shards' row estimates from pg_class); bloom_union_agg of the two
    is byte for byte the filter of all rows built in one place."""
    psql("coord", """
        CREATE FOREIGN TABLE shard1_pg_class (relname name, reltuples real) SERVER shard1
          OPTIONS (schema_name 'pg_catalog', table_name 'pg_class');
        CREATE FOREIGN TABLE shard2_pg_class (relname name, reltuples real) SERVER shard2
          OPTIONS (schema_name 'pg_catalog', table_name 'pg_class');
        CREATE TABLE all_orders AS SELECT * FROM orders;""")
    capacity = int(value("coord", """
        SELECT ceil(sum(reltuples))::bigint FROM (
          SELECT reltuples FROM shard1_pg_class WHERE relname = 'orders' UNION ALL
          SELECT reltuples FROM shard2_pg_class WHERE relname = 'orders') s"""))
    r.check("capacity from the shards' pg_class estimates", capacity == 200000, str(capacity))
    merged = (f"SELECT bloom_union_agg(f) FROM ("
              f"SELECT bloom_agg(customer_id, 0.01, {capacity}) AS f FROM orders_s1 UNION ALL "
              f"SELECT bloom_agg(customer_id, 0.01, {capacity}) FROM orders_s2) s")
    scans = foreign_scans(plan("coord", merged))
    r.check("each shard runs bloom_agg itself (aggregate pushed down)",
            len(scans) == 2 and all("SELECT public.bloom_agg(customer_id, 0.01::double precision, "
                                    f"{capacity}::bigint) FROM public.orders" in s["Remote SQL"]
                                    for s in scans),
            " | ".join(s["Remote SQL"] for s in scans))
    same = value("coord", f"""
        SELECT ({merged})::bytea = (SELECT bloom_agg(customer_id, 0.01, {capacity})
                                     FROM all_orders)::bytea""")
    r.check("merged shard filters are byte-identical to the filter of all rows", same == "t")
    err = ""
    try:
        psql("coord", f"""
            SELECT bloom_union_agg(f) FROM (
              SELECT bloom_agg(customer_id, 0.01, 100000) AS f FROM orders_s1 UNION ALL
              SELECT bloom_agg(customer_id, 0.01, {capacity}) FROM orders_s2) s""")
    except RuntimeError as e:
        err = str(e)
    r.check("shards built with different capacities do not merge",
            "cannot combine bloom filters with different parameters" in err, err.split("\n")[0])


def types(r):
    """Values match across servers by amq's hashing, not by SQL type: an int4
    or numeric filter finds the shards' bigint customers; a text one is the
    family error (format version 4 records what a filter holds), never a
    silent miss."""
    matches = 4000
    for name, expr in (("int4", "customer_id"), ("numeric", "customer_id::numeric"),
                       ("text", "customer_id::text")):
        query = f"""
            SELECT count(*) FROM orders o WHERE bloom_contains(
              (SELECT bloom_agg({expr}, 0.01) FROM vip), o.customer_id)"""
        if name == "text":
            try:
                value("coord", query)
                error = ""
            except RuntimeError as e:
                error = str(e)
            r.check("a filter of text values probed with bigint customers: the family error",
                    "ERROR:  bloom_contains: value: the filter holds text, got number " in error
                    and "Cast the value (CAST(" in error, error)
            continue
        kept = int(value("coord", query))
        r.check(f"a filter of {name} values finds every bigint customer",
                matches <= kept <= matches + 1.5 * FPR * (200000 - matches), f"{kept} rows kept")


def new_layouts(r):
    """The layouts 0.2.0 adds ship the same way, with exact answers and the
    same bound on rows fetched: a counting filter (bloom_contains and
    bloom_frequency) and a scalable chain grown past its first link."""
    psql("coord", """
        INSERT INTO filters
        SELECT 'vip counting', bloom_agg(customer_id, 0.01, NULL, 'counting'),
               cuckoo_agg(customer_id, 0.01) FROM vip
        UNION ALL
        SELECT 'vip scalable', bloom_agg(customer_id, 0.01, 200, 'scalable'),
               cuckoo_agg(customer_id, 0.01) FROM vip;""")
    links = int(value("coord", "SELECT jsonb_array_length(bloom_info(b)->'links') FROM filters "
                               "WHERE name = 'vip scalable'"))
    r.check("the scalable filter is a chain of several links", links > 1, str(links))
    counts = shard_counts()
    expected = answer(PLAIN)
    for name, probe, marker in (
            ("counting filter, bloom_contains",
             "bloom_contains((SELECT b FROM filters WHERE name = 'vip counting'), o.customer_id)",
             "public.bloom_contains("),
            ("counting filter, bloom_frequency",
             "bloom_frequency((SELECT b FROM filters WHERE name = 'vip counting'), o.customer_id)"
             " > 0", "public.bloom_frequency("),
            ("scalable chain, @>",
             "(SELECT b FROM filters WHERE name = 'vip scalable') @> o.customer_id",
             "OPERATOR(public.@>)")):
        query = JOIN.format(probe=probe)
        check_scans(r, name, foreign_scans(plan("coord", query, True)), marker, counts)
        r.check(f"{name}: same answer as the plain join", answer(query) == expected)


def plan_nodes(node_plan, provider):
    """Every Custom Scan node of provider in a plan, with its parent."""
    found = []
    for child in node_plan.get("Plans", []):
        if child.get("Custom Plan Provider") == provider:
            found.append((node_plan, child))
        found += plan_nodes(child, provider)
    return found


def automatic_filter(r):
    """The automatic join filter over a table whose partitions are foreign
    tables scanned asynchronously, with remote filters off (tests/multi/
    remote.py tests those): its probe stays above the Append (a probe
    between the Append and an asynchronous scan would make it synchronous),
    the scans stay asynchronous, and the answer is the plain join's."""
    expected = answer(PLAIN)
    load = ("LOAD 'amq'; SET amq.join_filter_max_pass_rate = 1;"
            " SET amq.join_filter_remote = off;")
    tree = plan("coord", PLAIN, True, load)
    probes = plan_nodes(tree, "AmqJoinFilterProbe")
    scans = foreign_scans(tree)
    r.check("automatic filter over async foreign partitions: one probe, above the Append",
            len(probes) == 1 and probes[0][1]["Plans"][0]["Node Type"] == "Append",
            json.dumps([p[1]["Plans"][0]["Node Type"] for p in probes]))
    r.check("automatic filter over async foreign partitions: both scans still asynchronous",
            len(scans) == 2 and all(s["Async Capable"] for s in scans))
    removed = probes[0][1].get("Rows Removed by Bloom Filter", 0) if probes else 0
    r.check("automatic filter over async foreign partitions: removes rows",
            removed >= 190000, str(removed))
    r.check("automatic filter over async foreign partitions: same answer",
            answer(PLAIN, load) == expected)


def run_all(r):
    setup()
    r.run("pushdown forms", forms)
    r.run("new layouts", new_layouts)
    r.run("forms that do not ship", not_shipped)
    r.run("filter across shards", cross_shard)
    r.run("sharded build", sharded_build)
    r.run("types across servers", types)
    r.run("automatic join filter", automatic_filter)
