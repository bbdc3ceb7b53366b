"""The automatic join filter across servers: a hash join on the coordinator
ships a Bloom filter of its inner keys into the Remote SQL of the
postgres_fdw scans on its outer side, and the shards filter their own rows.

Checks, on orders (tests/multi/run.sh: 200,000 rows, ids 1..100,000 on
shard1, the rest on shard2, every customer once on each; orders_s1 and
orders_s2 its foreign partitions, async_capable by their servers) and
tables made here on the coordinator (rvip: 2,000 customers as int4, the
orders of every 50th id; ramount: every 4th amount (numeric), the orders
of every 4th id; orders_f1 and orders_f2: plain foreign tables over each
shard's orders):
- the filter is in every shard's Remote SQL, in the form the interface
  states, for a plain foreign table, foreign partitions scanned
  synchronously and asynchronously, a star join with two dimensions, a
  semi and a right join, and the builder names the scans it sends to;
- each shard sends at most its true matches plus 1.5 x fpr x the rest
  (EXPLAIN ANALYZE; fpr 0.01);
- no remote filter for left, full and anti joins, with amq.join_filter or
  amq.join_filter_remote off, for a server without extensions 'amq', and
  none sent (the scan gets every row) above amq.join_filter_remote_max_memory
  or work_mem;
- a shard without amq, or with amq in another schema than the coordinator's,
  behind a server that lists it fails the query with the shard's own error
  (postgres_fdw's contract for a declared extension), and the README's check
  query tells each case;
- remote columns whose type hashes otherwise than the local one (char(n) or
  timestamptz behind text, text behind bigint) fail the query loudly when
  key values ship, and with amq.join_filter_remote_max_set_keys = 0 get the
  filter, and the shard passes every row: never a row missed;
- at most amq.join_filter_remote_max_set_keys inner keys ship as an exact
  set, more as a range beside the Bloom filter, both of which the shard's
  btree index serves (auto_explain there); an empty inner side fetches
  nothing;
- a nested loop that rebuilds the filter on each rescan sends each new one;
- what a shard receives is format version 1 with no value families (its
  bind parameters in the shard's log), which every amq release reads and no
  shard family-checks;
- a role that is not a superuser gets the filter when its user mapping may
  connect without a password, and postgres_fdw's error when not (planning
  connects nowhere);
- a shard that goes down mid-query gives postgres_fdw's error and no rows;
- every answer is the same with amq.join_filter on and off.
"""

import os
import re
import sys
import time

import faults
from nodes import ROOT, REPO, fetched, foreign_scans, node_ctl, plan, psql, run_psql, value
from pushdown import check_scans, plan_nodes, shard_counts

# What the corpora share (a digest of a query's rows).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import corpus  # noqa: E402

ON = "LOAD 'amq'; SET amq.join_filter = on;"
OFF = "LOAD 'amq'; SET amq.join_filter = off;"
VIP_MATCH = "customer_id IN (SELECT customer_id FROM rvip)"
AMOUNT_MATCH = "amount IN (SELECT amount FROM ramount)"
VIP = "SELECT o.id, o.amount FROM {t} o JOIN rvip v ON o.customer_id = v.customer_id"
STAR = VIP + " JOIN ramount a ON a.amount = o.amount"


# The probe the remote filter ships (amq 0.5.0 and later shards).
PROBE = "amq_join_filter_probe"


def remote_filter(column, kind="bloom"):
    """The condition the interface adds to a scan's Remote SQL for column (a
    regular expression): ((($N::pg_catalog.bytea IS NULL) OR CASE WHEN (the
    remote column's type, by OID, hashes as the local one's) THEN S.amq_join_filter_probe(
    $N::pg_catalog.bytea::S.kind, column) ELSE true END)), amq's schema here
    being public, every name of the type check schema-qualified; kind bloom,
    or fuse under amq.join_filter_remote_filter = 'fuse'."""
    return re.compile(r"\(\(\(\$(\d+)::pg_catalog\.bytea IS NULL\) OR CASE WHEN \(SELECT a\.atttypid "
                      r"OPERATOR\(pg_catalog\.=\) ANY \('\{\d+(,\d+)*\}'::pg_catalog\.oid\[\]\) "
                      r"FROM pg_catalog\.pg_attribute a WHERE a\.attrelid "
                      r"OPERATOR\(pg_catalog\.=\) pg_catalog\.to_regclass\('[^']+'\) AND a\.attname "
                      r"OPERATOR\(pg_catalog\.=\) '[^']+'\) THEN public\.amq_join_filter_probe\(\$\1::pg_catalog\.bytea::public\."
                      + kind + ", "
                      + re.escape(column) + r"\) ELSE true END\)\)")


def filters_on(*columns, kind="bloom"):
    """A test that a Remote SQL carries the remote filter (of kind) of every
    column, each its own parameter."""
    def carries(sql):
        found = [remote_filter(c, kind).search(sql) for c in columns]
        return all(found) and len({m.group(1) for m in found}) == len(columns)
    return carries


def no_filter(scans):
    """Whether no scan's Remote SQL probes a filter."""
    return all(PROBE not in s["Remote SQL"] and "bloom_contains" not in s["Remote SQL"]
               for s in scans)


def answer(query, setup):
    """The row count and the md5 of the sorted rows of query, after setup."""
    return value("coord", f"{setup}\n{corpus.digest(query)}")


def same_answer(r, name, query, want=None):
    """Checks that query answers the same with the filter on and off (and,
    when given, that the answer starts with want: its row count)."""
    off, on = answer(query, OFF), answer(query, ON)
    r.check(f"{name}: same answer with amq.join_filter on and off"
            + (f" ({want} rows)" if want else ""),
            off == on and (want is None or off.startswith(f"{want}|")), f"off {off}, on {on}")


def sent_to(tree):
    """What the builders of a plan say they send (their "Filter N Sent To"
    values, joined)."""
    return " ".join(str(v) for _, b in plan_nodes(tree, "AmqJoinFilterBuild")
                    for k, v in b.items() if k.endswith("Sent To"))


def set_async(on):
    """Sets the async_capable option of orders' two partitions (setup gave
    them one, true like their servers')."""
    psql("coord", "".join(f"ALTER FOREIGN TABLE orders_s{i} OPTIONS "
                          f"(SET async_capable '{'true' if on else 'false'}');" for i in (1, 2)))


def setup():
    psql("coord", """
        CREATE TABLE rvip AS SELECT c::int4 AS customer_id FROM generate_series(0, 99999, 50) c;
        CREATE TABLE ramount AS SELECT (a / 100.0)::numeric(10, 2) AS amount
          FROM generate_series(0, 9999, 4) a;
        CREATE FOREIGN TABLE orders_f1 (id bigint, customer_id bigint, amount numeric(10, 2))
          SERVER shard1 OPTIONS (table_name 'orders');
        CREATE FOREIGN TABLE orders_f2 (id bigint, customer_id bigint, amount numeric(10, 2))
          SERVER shard2 OPTIONS (table_name 'orders');
        ALTER FOREIGN TABLE orders_s1 OPTIONS (ADD async_capable 'true');
        ALTER FOREIGN TABLE orders_s2 OPTIONS (ADD async_capable 'true');
        ANALYZE rvip, ramount, orders, orders_f1, orders_f2;""")


def shipped(r, name, query, table, columns, match, asynchronous, want):
    """The checks of one query that must get a remote filter: in every
    scan's Remote SQL (one filter per column of columns), the builder sends
    it to every scan, rows fetched within the bound, same answer."""
    tree = plan("coord", query, True, ON)
    scans = foreign_scans(tree)
    check_scans(r, name, scans, filters_on(*columns), shard_counts(table, match), asynchronous)
    targets = sent_to(tree)
    r.check(f"{name}: the builder names every scan it sends to",
            scans and all(s["Relation Name"] in targets for s in scans), targets)
    same_answer(r, name, query, want)


def ships(r):
    """Plain foreign tables, foreign partitions (asynchronous, then
    synchronous), a star join, a semi and a right join."""
    for shard in (1, 2):
        shipped(r, f"plain foreign table on shard{shard}", VIP.format(t=f"orders_f{shard}"),
                f"orders_f{shard}", ["customer_id"], VIP_MATCH, False, 2000)
    semi = ("SELECT o.id, o.amount FROM orders o WHERE EXISTS "
            "(SELECT 1 FROM rvip v WHERE v.customer_id = o.customer_id)")
    right = ("SELECT o.id, v.customer_id FROM orders o RIGHT JOIN rvip v "
             "ON o.customer_id = v.customer_id")
    both = f"{VIP_MATCH} AND {AMOUNT_MATCH}"
    for asynchronous in (True, False):
        how = "asynchronous" if asynchronous else "synchronous"
        set_async(asynchronous)
        try:
            shipped(r, f"{how} foreign partitions", VIP.format(t="orders"), "orders",
                    ["customer_id"], VIP_MATCH, asynchronous, 4000)
            shipped(r, f"{how} foreign partitions, star join of two dimensions",
                    STAR.format(t="orders"), "orders", ["customer_id", "amount"], both, asynchronous,
                    None)
            shipped(r, f"{how} foreign partitions, semi join", semi, "orders", ["customer_id"],
                    VIP_MATCH, asynchronous, 4000)
            shipped(r, f"{how} foreign partitions, right join", right, "orders", ["customer_id"],
                    VIP_MATCH, asynchronous, 4000)
        finally:
            set_async(True)
    star = int(value("coord", f"{OFF} SELECT count(*) FROM ({STAR.format(t='orders')}) s"))
    r.check("the star join's answer is the orders of both dimensions (every 100th)", star == 2000,
            str(star))


def not_shipped(r, name, query, setup=ON, local=None):
    """A query that must get no remote filter: no scan's Remote SQL calls
    bloom_contains; the same answer on and off. local, when given, is
    whether a local probe (AmqJoinFilterProbe) must be in the plan."""
    tree = plan("coord", query, False, setup)
    scans = foreign_scans(tree)
    r.check(f"{name}: no remote filter", scans and no_filter(scans),
            " | ".join(s["Remote SQL"][:140] for s in scans))
    if local is not None:
        probes = plan_nodes(tree, "AmqJoinFilterProbe")
        r.check(f"{name}: {'a' if local else 'no'} local filter", bool(probes) == local,
                f"{len(probes)} probes")
    same_answer(r, name, query)


def bound_filters(run):
    """The filters (hex, from their magic bytes on) that shard1 bound as
    parameters while run() ran, read from its log with every statement
    logged."""
    log = os.path.join(ROOT, "shard1", "server.log")
    start = os.path.getsize(log)
    psql("shard1", "ALTER SYSTEM SET log_statement = 'all'; SELECT pg_reload_conf();")
    try:
        time.sleep(1)
        run()
    finally:
        psql("shard1", "ALTER SYSTEM RESET log_statement; SELECT pg_reload_conf();")
    with open(log, encoding="utf-8", errors="replace") as f:
        f.seek(start)
        return re.findall(r"\$\d+ = '\\x(414d5146[0-9a-f]+)'", f.read())


def shipped_format(r):
    """The filter parameter a shard binds is format version 1 (header byte 4)
    with byte 44 zero: no families, readable by every amq release, never
    checked on the shard (its values are no user's)."""
    filters = bound_filters(lambda: same_answer(r, "logged shard", VIP.format(t="orders_f1"), 2000))
    r.check("the shard bound filters, each format version 1 without families",
            filters and all(h[8:10] == "01" and h[88:90] == "00" for h in filters),
            f"{len(filters)} filters, heads {sorted({h[:10] for h in filters})}")


def fuse_filters(r):
    """amq.join_filter_remote_filter = 'fuse': the scans get a binary fuse
    filter (the fuse cast and the probe's overload, which the shards have
    from amq 0.6.0), fetch the matching rows and at most the bound more, and
    the answer is the same; the filter a shard binds is a fuse filter of
    format version 5 (kind byte 3) without families."""
    fuse = ON + " SET amq.join_filter_remote_filter = 'fuse';"
    query = VIP.format(t="orders")
    tree = plan("coord", query, True, fuse)
    check_scans(r, "fuse filters", foreign_scans(tree), filters_on("customer_id", kind="fuse"),
                shard_counts("orders", VIP_MATCH), True)
    sent = " ".join(str(v) for _, b in plan_nodes(tree, "AmqJoinFilterBuild")
                    for k, v in b.items() if k.endswith(" Sent"))
    r.check("fuse filters: the builder sends a binary fuse filter", "binary fuse filter" in sent,
            sent)
    off, on = answer(query, OFF), answer(query, fuse)
    r.check("fuse filters: the same answer as without join filters", off == on and
            off.startswith("4000"), f"{off} / {on}")
    filters = bound_filters(lambda: answer(VIP.format(t="orders_f1"), fuse))
    r.check("fuse filters: the shard bound fuse filters, format version 5, no families",
            filters and all(h[8:12] == "0503" and h[88:90] == "00" for h in filters),
            f"{len(filters)} filters, heads {sorted({h[:12] for h in filters})}")


def never(r):
    """Joins that may not filter their outer side, and the switches."""
    vip = VIP.format(t="orders")
    not_shipped(r, "left join", "SELECT o.id, v.customer_id FROM orders o LEFT JOIN rvip v "
                                "ON o.customer_id = v.customer_id")
    not_shipped(r, "full join", "SELECT o.id, v.customer_id FROM orders o FULL JOIN rvip v "
                                "ON o.customer_id = v.customer_id")
    not_shipped(r, "anti join", "SELECT o.id FROM orders o WHERE NOT EXISTS "
                                "(SELECT 1 FROM rvip v WHERE v.customer_id = o.customer_id)")
    not_shipped(r, "amq.join_filter off", vip, OFF, False)
    not_shipped(r, "amq.join_filter_remote off", vip, ON + " SET amq.join_filter_remote = off;",
                True)
    not_shipped(r, "pass rate above amq.join_filter_max_pass_rate", vip,
                ON + " SET amq.join_filter_max_pass_rate = 0.001;", False)


def too_large(r):
    """A filter larger than amq.join_filter_remote_max_memory is not sent:
    the clause stays in Remote SQL with a NULL parameter, the shard sends
    every row within the range of the keys (sent beside it), and the builder
    says why."""
    query = VIP.format(t="orders")
    tree = plan("coord", query, True, ON + " SET amq.join_filter_remote_max_memory = '1kB';")
    scans = foreign_scans(tree)
    states = [str(v) for _, b in plan_nodes(tree, "AmqJoinFilterBuild")
              for k, v in b.items() if re.match(r"Filter \d+ State$", k)]
    r.check("filter over amq.join_filter_remote_max_memory: the builder says it was not sent",
            any("not sent: larger than amq.join_filter_remote_max_memory" in s for s in states),
            "; ".join(states))
    in_range = psql("coord", """SELECT count(*) FROM orders WHERE customer_id BETWEEN
                                  (SELECT min(customer_id) FROM rvip) AND (SELECT max(customer_id) FROM rvip)
                                GROUP BY tableoid ORDER BY tableoid::regclass::text""")
    r.check("filter over amq.join_filter_remote_max_memory: only the range sent, every row in it "
            f"fetched ({' and '.join(in_range)} of 100,000)",
            builder_sent(tree) == ["range"] and len(scans) == 2
            and [int(fetched(s)) for s in sorted(scans, key=lambda s: s["Relation Name"])]
            == [int(n) for n in in_range],
            f"{builder_sent(tree)} " + " ".join(str(fetched(s)) for s in scans))
    sizes = [(k, v) for _, b in plan_nodes(plan("coord", query, True, ON), "AmqJoinFilterBuild")
             for k, v in b.items() if re.match(r"Filter \d+ (Size|Keys Added)$", k)]
    r.check("a filter sent: the builder shows its keys (2,000) and its size",
            ("Filter 1 Keys Added", 2000) in sizes
            and any(k == "Filter 1 Size" and 2000 < v < 100000 for k, v in sizes), str(sizes))
    same_answer(r, "filter over amq.join_filter_remote_max_memory", query, 4000)


def without_amq(r):
    """A server without extensions 'amq': its scans get no filter (the other
    shard's still does) and the answer is right. A shard without amq behind a
    server that lists it: its scan gets the filter (nothing asks the shard),
    and the query fails with the shard's own error, as postgres_fdw fails for
    any extension a server declares but lacks: never a wrong answer."""
    query = VIP.format(t="orders")
    psql("coord", "ALTER SERVER shard1 OPTIONS (DROP extensions);")
    try:
        scans = {s["Relation Name"]: s for s in foreign_scans(plan("coord", query, False, ON))}
        r.check("server shard1 without extensions 'amq': no filter for it, shard2 still gets one",
                no_filter([scans["orders_s1"]])
                and filters_on("customer_id")(scans["orders_s2"]["Remote SQL"]),
                " | ".join(s["Remote SQL"][:140] for s in scans.values()))
        same_answer(r, "server shard1 without extensions 'amq'", query, 4000)
    finally:
        psql("coord", "ALTER SERVER shard1 OPTIONS (ADD extensions 'amq');")
    # shard2's orders again, in a database without amq.
    shard2_orders("rnoamq", "", """
        CREATE TABLE orders_mix (id bigint, customer_id bigint, amount numeric(10, 2))
          PARTITION BY RANGE (id);
        CREATE FOREIGN TABLE orders_mix1 PARTITION OF orders_mix FOR VALUES FROM (1) TO (100001)
          SERVER shard1 OPTIONS (table_name 'orders');
        ALTER TABLE orders_mix ATTACH PARTITION rnoamq_orders FOR VALUES FROM (100001) TO (200001);
        ANALYZE orders_mix;""")
    mixed = VIP.format(t="orders_mix")
    scans = {s["Relation Name"]: s for s in foreign_scans(plan("coord", mixed, False, ON))}
    r.check("a shard without amq behind extensions 'amq': both scans carry the filter",
            all(filters_on("customer_id")(s["Remote SQL"]) for s in scans.values()),
            " | ".join(s["Remote SQL"][:140] for s in scans.values()))
    shard_error(r, "a shard without amq behind extensions 'amq'", mixed)
    r.check("a shard without amq behind extensions 'amq': with amq.join_filter_remote off, "
            "the answer of orders",
            answer(mixed, ON + " SET amq.join_filter_remote = off;") == answer(query, OFF))
    # shard2's orders again, in a database whose amq is in another schema:
    # the shipped names are the coordinator's (public), so the shard fails.
    shard2_orders("rotherschema", "CREATE SCHEMA other; CREATE EXTENSION amq SCHEMA other;")
    other = VIP.format(t="rotherschema_orders")
    shard_error(r, "a shard with amq in another schema", other)
    r.check("a shard with amq in another schema: with amq.join_filter_remote off, 2,000 orders",
            answer(other, ON + " SET amq.join_filter_remote = off;").startswith("2000|"))
    for server, want in (("shard1", ["public|t"]), ("rnoamq", []), ("rotherschema", ["other|f"])):
        got = readme_check(server)
        r.check(f"the README's check query on {server}: {want or 'no row'}",
                [row.split("|", 1)[0] + "|" + row.rsplit("|", 1)[1] for row in got] == want,
                str(got))


def shard2_orders(db, setup, more=""):
    """shard2's upper half of orders again, in a new database db after the
    SQL setup there, behind a coordinator server of that name with
    extensions 'amq' (faults.py's helper: foreign table db_orders, then the
    coordinator's SQL more)."""
    psql("shard2", f"CREATE DATABASE {db};")
    psql("shard2", f"""{setup}
        CREATE TABLE orders (id bigint, customer_id bigint, amount numeric(10, 2));
        INSERT INTO orders SELECT i, (i * 7919) % 100000, (i % 10000) / 100.0
          FROM generate_series(100001::bigint, 200000) i;""", db=db)
    faults.shard2_server(db, more)


def shard_error(r, name, query):
    """Checks that query, its filter shipped to a shard whose amq is not in
    the coordinator's schema, fails with the shard's own error and no rows."""
    out = run_psql("coord", f"{ON}\n{query};")
    r.check(f"{name}: the shard's error, no rows",
            out.returncode != 0 and out.stdout == ""
            and re.search(r'ERROR:  type "public\.bloom" does not exist.*CONTEXT:  remote SQL command',
                          out.stderr, re.S) is not None,
            " / ".join(out.stderr.strip().split("\n")[:3]))


def readme_check(server):
    """The rows of the README's query that checks amq on a server (amq's
    schema there, its version, whether the schema is the coordinator's),
    through foreign tables over the server's catalog."""
    return psql("coord", f"""
        CREATE FOREIGN TABLE {server}_extension (extname name, extnamespace oid, extversion text)
          SERVER {server} OPTIONS (schema_name 'pg_catalog', table_name 'pg_extension');
        CREATE FOREIGN TABLE {server}_namespace (oid oid, nspname name)
          SERVER {server} OPTIONS (schema_name 'pg_catalog', table_name 'pg_namespace');
        SELECT n.nspname AS schema_there, e.extversion AS version_there,
               n.nspname = (SELECT extnamespace::regnamespace::name FROM pg_extension
                            WHERE extname = 'amq') AS same_schema
        FROM {server}_extension e JOIN {server}_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'amq';
        DROP FOREIGN TABLE {server}_extension, {server}_namespace;""")


def remote_types(r):
    """Remote columns in types other than the local ones. Where they hash
    alike (int4 and numeric behind int8, varchar behind text, under another
    column name and a quoted one) the shard filters, by the exact set of the
    200 keys, and so it does where a number compares by value but would hash
    otherwise (float8 behind int8: the set needs no type check); where they
    do not (char(8) or timestamptz behind text, text
    behind int8) the query fails loudly with key values on (the set compares
    the bare column: a char(8) would compare trimmed and miss rows, so the
    type check raises; the others have no operator with the keys' type), and with
    amq.join_filter_remote_max_set_keys = 0 the Bloom condition still ships,
    since nothing asks the shard, and the shard's type check passes every
    row: the scan fetches all of them, and the answers stay right."""
    psql("shard1", """
        CREATE TABLE rtypes (id int8, i4 int4, "Num" numeric, f8 float8, vc varchar(12), bp char(8),
                             tx text, tz timestamptz);
        INSERT INTO rtypes SELECT i, i % 5000, i % 5000, i % 5000, 'k' || i % 5000, 'k' || i % 5000,
               (i % 5000)::text, '2024-01-01 00:00:00+00'::timestamptz + (i % 5000) * interval '1 hour'
          FROM generate_series(1, 20000) i;""")
    psql("coord", """
        CREATE FOREIGN TABLE rtypes (id int8, ci4 int8 OPTIONS (column_name 'i4'), "Num" int8,
                                     f8 int8, vc text, bp text, tx int8, tz text)
          SERVER shard1 OPTIONS (table_name 'rtypes');
        CREATE TABLE rkeys AS SELECT i::int8 AS k, 'k' || i AS t,
               to_char('2024-01-01'::timestamp + i * interval '1 hour', 'YYYY-MM-DD HH24:MI:SS') || '+00' AS z
          FROM generate_series(0, 4999, 25) i
          UNION ALL SELECT NULL, rpad('k' || i, 8), NULL FROM generate_series(0, 4999, 50) i;
        ANALYZE rtypes, rkeys;""")
    guard = ("invalid input syntax for type integer: \"amq join filter: the remote column {} of "
             "public.rtypes does not have the type of its foreign table's column; declare the "
             "foreign column with its remote type, or SET amq.join_filter_remote_max_set_keys = 0\"")
    for name, local, remote, key, filters in (
            ("int4 behind int8, another column name", "ci4", "i4", "k", True),
            ("numeric behind int8, a quoted name", '"Num"', '"Num"', "k", True),
            ("float8 behind int8", "f8", "f8", "k", True),
            ("varchar behind text", "vc", 'vc::pg_catalog.text COLLATE pg_catalog."C"', "t", True),
            ("char(8) behind text", "bp", 'bp::pg_catalog.text COLLATE pg_catalog."C"', "t",
             guard.format("bp")),
            ("timestamptz behind text", "tz", 'tz::pg_catalog.text COLLATE pg_catalog."C"', "z",
             "operator does not exist: timestamp with time zone pg_catalog.= text"),
            ("text behind int8", "tx", "tx", "k", "operator does not exist: text pg_catalog.= bigint")):
        query = f"SELECT x.id, x.{local} FROM rtypes x JOIN rkeys y ON x.{local} = y.{key}"
        setup = ON
        if filters is not True:
            out = run_psql("coord", f"{ON}\n{query};")
            r.check(f"remote {name}: with key values, the shard's error and no rows",
                    out.returncode != 0 and out.stdout == "" and filters in out.stderr,
                    out.stderr.strip().split("\n")[0])
            setup = ON + " SET amq.join_filter_remote_max_set_keys = 0;"
        scans = foreign_scans(plan("coord", query, True, setup))
        rows = fetched(scans[0]) if len(scans) == 1 else None
        r.check(f"remote {name}: the filter ships", len(scans) == 1
                and filters_on(remote)(scans[0]["Remote SQL"]),
                scans[0]["Remote SQL"] if scans else "no foreign scan")
        if filters is True:
            # 800 of the 20,000 rows match (200 keys, 4 rows each): the set.
            r.check(f"remote {name}: the shard filters by the exact set (the 800 matches fetched)",
                    rows == 800, str(rows))
            same_answer(r, f"remote {name}", query)
        else:
            r.check(f"remote {name}, key values off: the shard passes every row (20,000 fetched)",
                    rows == 20000, str(rows))
            r.check(f"remote {name}, key values off: the answer with the filter off",
                    answer(query, setup) == answer(query, OFF))
    matches = value("coord", f"{OFF} SELECT count(*) FROM rtypes x JOIN rkeys y ON x.bp = y.t")
    r.check("remote char(8) behind text: padded keys match (the case a trimmed probe would miss)",
            matches == "400", matches)


def builder_sent(tree):
    """What the builders of a plan sent (their "Filter N Sent" values)."""
    return [str(v) for _, b in plan_nodes(tree, "AmqJoinFilterBuild")
            for k, v in b.items() if re.match(r"Filter \d+ Sent$", k)]


def shard_plans(query, setup, shard="shard1"):
    """The plans shard ran for query (auto_explain in its log, for the
    sessions postgres_fdw opens while it runs in a new coordinator session)."""
    log = os.path.join(ROOT, shard, "server.log")
    psql(shard, "LOAD 'auto_explain';"
                   "ALTER SYSTEM SET session_preload_libraries = 'auto_explain';"
                   "ALTER SYSTEM SET auto_explain.log_min_duration = 0;"
                   "SELECT pg_reload_conf();")
    try:
        time.sleep(1)
        start = os.path.getsize(log)
        psql("coord", f"{setup} {query}")
    finally:
        psql(shard, "LOAD 'auto_explain'; ALTER SYSTEM RESET session_preload_libraries;"
                       "ALTER SYSTEM RESET auto_explain.log_min_duration; SELECT pg_reload_conf();")
    with open(log, encoding="utf-8", errors="replace") as f:
        f.seek(start)
        return f.read()


HASHED = ON + " SET enable_nestloop = off; SET enable_mergejoin = off;"


def key_values(r):
    """Exact sets and ranges: at most amq.join_filter_remote_max_set_keys
    (1000) distinct inner keys go to the shard as col = ANY($set) instead of
    the Bloom filter, and the keys of an ordered type as col >= $lo AND col <=
    $hi beside it; the shard's planner sees the values and uses its btree
    index (auto_explain on the shard); an empty inner side fetches nothing;
    0 ships no key values; the answers are the same on and off."""
    psql("shard1", """
        CREATE TABLE rindexed (id int8, k int8);
        INSERT INTO rindexed SELECT i, i FROM generate_series(1, 200000) i;
        CREATE INDEX rindexed_k ON rindexed (k);
        ANALYZE rindexed;""")
    psql("coord", """
        CREATE FOREIGN TABLE rindexed (id int8, k int8) SERVER shard1 OPTIONS (table_name 'rindexed');
        CREATE TABLE rfew AS SELECT i::int8 * 997 AS k FROM generate_series(1, 50) i
          UNION ALL SELECT 997 UNION ALL SELECT NULL;
        CREATE TABLE rnarrow AS SELECT 100000 + 2 * i::int8 AS k FROM generate_series(1, 3000) i;
        CREATE TABLE rnone (k int8);
        ANALYZE rindexed, rfew, rnarrow, rnone;""")
    join = "SELECT x.id FROM rindexed x JOIN {} y ON x.k = y.k"
    few, narrow, none = join.format("rfew"), join.format("rnarrow"), join.format("rnone")
    tree = plan("coord", few, True, HASHED)
    scans = foreign_scans(tree)
    sql = scans[0]["Remote SQL"] if scans else ""
    r.check("a set and a range in the Remote SQL, on the bare column (numbers: no type check)",
            re.search(r"AND \(\(\$\d+::pg_catalog\.int8\[\] IS NULL\) OR \(k OPERATOR\(pg_catalog\.=\) "
                      r"ANY \(\$\d+::pg_catalog\.int8\[\]\)\)\)", sql)
            is not None and re.search(r"k OPERATOR\(pg_catalog\.>=\) \$\d+::pg_catalog\.int8 AND k "
                                      r"OPERATOR\(pg_catalog\.<=\) \$\d+::pg_catalog\.int8\)\)", sql)
            is not None and "bool_and" not in sql, sql)
    r.check("50 distinct keys (51 rows and a NULL): the exact set sent, exactly the 50 matches fetched",
            builder_sent(tree) == ["exact set of 50 keys"] and len(scans) == 1
            and fetched(scans[0]) == 50, f"{builder_sent(tree)}, {[fetched(s) for s in scans]}")
    log = shard_plans(few, HASHED)
    r.check("the shard plans the set with its btree index (auto_explain)",
            re.search(r"Index Cond: \(k = ANY \('\{[0-9,]+\}'::bigint\[\]\)\)", log) is not None
            and "rindexed_k" in log, log[-600:])
    tree = plan("coord", narrow, True, HASHED)
    scans = foreign_scans(tree)
    r.check("3,000 keys: the range and the Bloom filter sent, at most the 3,000 matches plus 1.5 x "
            "fpr of the range's 2,999 others fetched",
            builder_sent(tree) == ["range, Bloom filter"] and len(scans) == 1
            and 3000 <= fetched(scans[0]) <= 3000 + 1.5 * 0.01 * 2999,
            f"{builder_sent(tree)}, {[fetched(s) for s in scans]}")
    log = shard_plans(narrow, HASHED)
    r.check("the shard plans the range with its btree index (auto_explain)",
            re.search(r"Index Cond: \(\(k >= '100002'::bigint\) AND \(k <= '106000'::bigint\)\)",
                      log) is not None, log[-600:])
    # The coordinator has rindexed's statistics: a range over the whole
    # column would only cost the shard two comparisons a row.
    psql("coord", """
        CREATE TABLE rwide AS SELECT 66 * i::int8 AS k FROM generate_series(1, 3000) i;
        CREATE FOREIGN TABLE rindexed_unanalyzed (id int8, k int8)
          SERVER shard1 OPTIONS (table_name 'rindexed');
        ANALYZE rwide;""")
    wide = join.format("rwide")
    wide_unanalyzed = "SELECT x.id FROM rindexed_unanalyzed x JOIN rwide y ON x.k = y.k"
    for name, query, want in (
            ("statistics expect the range to hold every row: the Bloom filter alone", wide,
             ["Bloom filter"]),
            ("no statistics of the foreign table: the range too", wide_unanalyzed,
             ["range, Bloom filter"])):
        tree = plan("coord", query, True, HASHED)
        scans = foreign_scans(tree)
        r.check(f"3,000 keys spread over the column, {name}, the 3,000 matches plus at most 1.5 x "
                "fpr of the others fetched",
                builder_sent(tree) == want and len(scans) == 1
                and 3000 <= fetched(scans[0]) <= 3000 + 1.5 * 0.01 * 197000,
                f"{builder_sent(tree)}, {[fetched(s) for s in scans]}")
        same_answer(r, f"3,000 keys spread over the column, {name}", query)
    tree = plan("coord", none, True, HASHED + " SET amq.join_filter_max_pass_rate = 1;")
    scans = foreign_scans(tree)
    r.check("an empty inner side: nothing fetched", len(scans) == 1 and fetched(scans[0]) == 0,
            str([fetched(s) for s in scans]))
    off = HASHED + " SET amq.join_filter_remote_max_set_keys = 0;"
    tree = plan("coord", few, True, off)
    scans = foreign_scans(tree)
    r.check("amq.join_filter_remote_max_set_keys = 0: no key values in the Remote SQL, the Bloom "
            "filter sent", len(scans) == 1 and " ANY ($" not in scans[0]["Remote SQL"]
            and "OPERATOR(pg_catalog.>=)" not in scans[0]["Remote SQL"]
            and builder_sent(tree) == ["Bloom filter"],
            f"{builder_sent(tree)} {scans[0]['Remote SQL'] if scans else ''}")
    for name, query in (("the set", few), ("the range", narrow), ("an empty inner side", none)):
        same_answer(r, f"{name}", query)
        r.check(f"{name}: the same answer with key values off",
                answer(query, off) == answer(query, OFF))


def partitions(r):
    """A join on the partition key of orders (by id: shard1's partition holds
    ids 1..100,000) whose inner ids all lie in shard1's: with synchronous
    partitions, shard2's scan is skipped before its remote query starts, and
    shard1's gets the exact set; with asynchronous ones (no probe may sit
    above them), shard2's remote query gets a skip parameter set true, which
    its custom plan folds to a scan of nothing. The answer is the same on and
    off."""
    psql("coord", "CREATE TABLE rids AS SELECT i::int8 AS id FROM generate_series(7, 70000, 700) i;"
                  "ANALYZE rids;")
    query = "SELECT o.id, o.amount FROM orders o JOIN rids i ON o.id = i.id"
    set_async(False)
    try:
        tree = plan("coord", query, True, HASHED)
        scans = {s["Relation Name"]: s for s in foreign_scans(tree)}
        skipped = [v for _, b in plan_nodes(tree, "AmqJoinFilterBuild")
                   for k, v in b.items() if k.endswith("Partitions Skipped by Join Filter")]
        r.check("a join on the partition key: shard2's partition skipped, its scan never started, "
                "shard1's fetched its 100 matches",
                skipped == [1] and scans.get("orders_s2", {}).get("Actual Loops") == 0
                and fetched(scans.get("orders_s1", {})) == 100,
                f"skipped {skipped}, loops {[s.get('Actual Loops') for s in scans.values()]}, "
                f"fetched {[fetched(s) for s in scans.values()]}")
        same_answer(r, "a join on the partition key", query, 100)
    finally:
        set_async(True)
    tree = plan("coord", query, True, HASHED)
    scans = {s["Relation Name"]: s for s in foreign_scans(tree)}
    skipped = [v for _, b in plan_nodes(tree, "AmqJoinFilterBuild")
               for k, v in b.items() if k.endswith("Partitions Skipped by Join Filter")]
    skip_sql = re.compile(r" AND \(\$\d+::pg_catalog\.bool IS NOT TRUE\)$")
    r.check("asynchronous partitions: each gets a skip parameter; shard2's is skipped and fetches "
            "nothing, shard1's fetches its 100 matches",
            skipped == [1] and all(skip_sql.search(s["Remote SQL"]) for s in scans.values())
            and fetched(scans.get("orders_s2", {})) == 0 and fetched(scans.get("orders_s1", {})) == 100,
            f"skipped {skipped}, fetched {[fetched(s) for s in scans.values()]}, "
            + " | ".join(s["Remote SQL"][-60:] for s in scans.values()))
    log = shard_plans(query, HASHED, "shard2")
    r.check("asynchronous partitions: shard2's plan scans nothing (One-Time Filter: false)",
            "One-Time Filter: false" in log and "Seq Scan on orders" not in log, log[-600:])
    same_answer(r, "a join on the partition key, asynchronous partitions", query, 100)
    psql("coord", "CREATE TABLE rids_wide AS SELECT i::int8 AS id FROM generate_series(7, 170000, 1700) i;"
                  "ANALYZE rids_wide;")
    wide = "SELECT o.id, o.amount FROM orders o JOIN rids_wide i ON o.id = i.id"
    tree = plan("coord", wide, True, HASHED)
    skipped = [v for _, b in plan_nodes(tree, "AmqJoinFilterBuild")
               for k, v in b.items() if k.endswith("Partitions Skipped by Join Filter")]
    r.check("asynchronous partitions, keys in both: none skipped", skipped == [0], str(skipped))
    same_answer(r, "a join on the partition key, keys in both partitions", wide, 100)


def judged(r):
    """The shipped probe judges itself on the shard: a shard table whose
    first 12,000 rows (in scan order) all have a partner in rvip and whose
    18,000 after them have none, within rvip's range. The first window of
    10,000 rows passes every row, so the probe switches itself off and
    passes the rest unprobed (30,000 fetched); bloom_contains, shipped to a
    shard declared older (amq.join_filter_remote_shard_version 0.4.0),
    probes every row (12,000 and its false positives). Stored the other
    way round, the filter pays in every window and the probe fetches exactly
    what bloom_contains does. The answer is the same every way."""
    rows = """SELECT i, CASE WHEN i <= 12000 THEN (i % 2000) * 50 ELSE (i % 1999) * 50 + 1 END
              FROM generate_series(1, 30000) i"""
    psql("shard1", f"""
        CREATE TABLE judged (id int, customer_id bigint);
        INSERT INTO judged {rows} ORDER BY i;
        CREATE TABLE judged_rev (id int, customer_id bigint);
        INSERT INTO judged_rev {rows} ORDER BY i DESC;""")
    psql("coord", """
        CREATE FOREIGN TABLE judged (id int, customer_id bigint) SERVER shard1;
        CREATE FOREIGN TABLE judged_rev (id int, customer_id bigint) SERVER shard1;""")
    forced = ON + " SET amq.join_filter_max_pass_rate = 1;"
    older = forced + " SET amq.join_filter_remote_shard_version = '0.4.0';"
    for table, judge_fetches in (("judged", "== 30000"), ("judged_rev", "same")):
        query = f"SELECT j.id FROM {table} j JOIN rvip v USING (customer_id)"
        new, old = (foreign_scans(plan("coord", query, True, s)) for s in (forced, older))
        got = [fetched(s[0]) if len(s) == 1 else None for s in (new, old)]
        shipped_ok = (len(new) == 1 and PROBE + "(" in new[0]["Remote SQL"]
                      and len(old) == 1 and "public.bloom_contains($" in old[0]["Remote SQL"])
        if judge_fetches == "same":
            r.check(f"{table}: the filter pays in every window, the probe fetches what bloom_contains "
                    "does", shipped_ok and got[0] == got[1] and 12000 <= got[0] < 12500,
                    f"fetched {got}")
        else:
            r.check(f"{table}: every row of the first window passes, the probe switches itself off "
                    "(30,000 fetched), bloom_contains probes every row",
                    shipped_ok and got[0] == 30000 and got[1] is not None and 12000 <= got[1] < 12500,
                    f"fetched {got}")
        answers = {answer(query, s) for s in (forced, older, OFF)}
        r.check(f"{table}: the same answer with the judged probe, bloom_contains and no filter",
                len(answers) == 1 and min(answers).startswith("12000|"), str(answers))


def rescans(r):
    """A nested loop whose inner side changes on each row: every rescan
    rebuilds the filter and the scans reopen with the new one (a filter of
    an earlier, smaller key set would lose rows). Under a memory cap that
    only the first filter (500 keys) fits, the next ones are not sent (the
    scans reopen without a filter), and the other way round."""
    query = ("SELECT m.n, (SELECT count(*) FROM orders o JOIN rvip v ON o.customer_id = v.customer_id "
             "WHERE v.customer_id < m.n * 25000) FROM unnest(ARRAY[{}]) m(n)")
    scans = foreign_scans(plan("coord", query.format("1, 2, 3, 4"), False, ON))
    r.check("nested loop over the join: the filter ships", len(scans) == 2
            and all(filters_on("customer_id")(s["Remote SQL"]) for s in scans),
            " | ".join(s["Remote SQL"][:140] for s in scans))
    capped = ON + " SET amq.join_filter_remote_max_memory = '1kB';"
    for loops, setup, name in (("1, 2, 3, 4", ON, "each rescan"),
                               ("1, 2, 3, 4", capped, "under a cap only the first filter fits"),
                               ("4, 3, 2, 1", capped, "under a cap only the last filter fits")):
        got = psql("coord", f"{setup} {query.format(loops)}")
        want = [f"{n}|{n * 1000}" for n in map(int, loops.split(", "))]
        r.check(f"nested loop over the join, {name}: each loop counts its own keys' orders",
                got == want, " ".join(got))
    same_answer(r, "nested loop over the join", query.format("1, 2, 3, 4"))


def non_superusers(r):
    """A role that is not a superuser: with a user mapping that may connect
    without a password (password_required 'false', set by a superuser) the
    filter ships and the answer is a superuser's; with one that may not, the
    filter is planned as for anyone (planning asks no server anything) and
    the query fails with postgres_fdw's own error when it connects."""
    psql("coord", """
        CREATE ROLE rremote_ok;
        CREATE ROLE rremote_nopw;
        GRANT SELECT ON orders, rvip TO rremote_ok, rremote_nopw;
        CREATE USER MAPPING FOR rremote_ok SERVER shard1 OPTIONS (user 'postgres', password_required 'false');
        CREATE USER MAPPING FOR rremote_ok SERVER shard2 OPTIONS (user 'postgres', password_required 'false');""")
    query = VIP.format(t="orders")
    scans = foreign_scans(plan("coord", query, False, ON + " SET ROLE rremote_ok;"))
    r.check("a role whose user mapping needs no password: the filter ships", len(scans) == 2
            and all(filters_on("customer_id")(s["Remote SQL"]) for s in scans),
            " | ".join(s["Remote SQL"][:140] for s in scans))
    r.check("a role whose user mapping needs no password: the answer of a superuser",
            answer(query, ON + " SET ROLE rremote_ok;") == answer(query, OFF))
    out = run_psql("coord", f"{ON}\nSET ROLE rremote_nopw;\nEXPLAIN (VERBOSE, COSTS OFF) {query};\n"
                            f"{query};")
    r.check("a role that needs a password: the filter planned, postgres_fdw's error on running",
            out.returncode != 0 and out.stdout.count(PROBE + "(") == 2
            # 16 and later: "password or GSSAPI delegated credentials required"
            and re.search(r"ERROR:  password (is|or .*) required", out.stderr) is not None,
            out.stderr.strip().split("\n")[0])


def stop_shard2():
    """A psql meta-command that stops shard2 (fast: its sessions end)."""
    return f"\\! cd {REPO} && bash -c '. tests/pg/cluster.sh && amq_node_stop shard2'"


def down(r, name, statements, before):
    """Runs a cursor's statements on the coordinator, stopping shard2 after
    the first `before` of them; the next must fail with postgres_fdw's error
    (its context the filtered remote command) and print no rows. shard2 is
    started again. Returns the rows printed before the stop."""
    sql = "\n".join([ON, *statements[:before], "\\echo stopping shard2", stop_shard2(),
                     *statements[before:]])
    try:
        out = run_psql("coord", sql)
    finally:
        node_ctl("start", "shard2")
    after = out.stdout.split("stopping shard2\n", 1)
    err = out.stderr.strip()
    r.check(f"shard2 down {name}: postgres_fdw's error on the filtered scan, no rows after it",
            out.returncode != 0 and len(after) == 2 and after[1] == ""
            and re.search(r"ERROR: .*(server closed the connection|connection to server|"
                          r"no connection to the server|could not (send|receive) data|"
                          r"terminating connection).*\nCONTEXT:  remote SQL command: [^\n]*\n?"
                          r"[^\n]*" + PROBE, err, re.S) is not None,
            " / ".join(err.split("\n")[:6]))
    return after[0].splitlines()


def shard_down(r):
    """shard2 stops before the query (planned without it), then while a
    cursor over the join is open: before its first row (after the executor
    connected to both shards) and after the first rows, with synchronous and
    asynchronous partitions."""
    declare = ["BEGIN;", f"DECLARE c CURSOR FOR {VIP.format(t='orders')};"]
    scans = foreign_scans(plan("coord", declare[1].rstrip(";"), False, ON))
    r.check("the cursor's join ships its filter", scans and all(
        filters_on("customer_id")(s["Remote SQL"]) for s in scans))
    node_ctl("stop", "shard2")
    try:
        out = run_psql("coord", f"{ON} {VIP.format(t='orders')}")
    finally:
        node_ctl("start", "shard2")
    r.check("shard2 down before the query: postgres_fdw's error, no rows",
            out.returncode != 0 and out.stdout == ""
            and 'could not connect to server "shard2"' in out.stderr,
            out.stderr.strip().split("\n")[0])
    down(r, "before the first row", declare + ["FETCH ALL FROM c;", "COMMIT;"], 2)
    for asynchronous in (True, False):
        how = "asynchronous" if asynchronous else "synchronous"
        set_async(asynchronous)
        try:
            rows = down(r, f"after 5 rows ({how} partitions)",
                        declare + ["FETCH 5 FROM c;", "FETCH ALL FROM c;", "COMMIT;"], 3)
            r.check(f"shard2 down after 5 rows ({how} partitions): the 5 rows came first",
                    len(rows) == 5, str(rows))
        finally:
            set_async(True)
    same_answer(r, "shard2 started again", VIP.format(t="orders"), 4000)


def run_all(r):
    setup()
    r.run("remote filter: ships", ships)
    r.run("remote filter: shipped format", shipped_format)
    r.run("remote filter: binary fuse filters", fuse_filters)
    r.run("remote filter: never", never)
    r.run("remote filter: too large", too_large)
    r.run("remote filter: without amq", without_amq)
    r.run("remote filter: remote types", remote_types)
    r.run("remote filter: exact sets and ranges", key_values)
    r.run("remote filter: partitions skipped", partitions)
    r.run("remote filter: the probe judges itself", judged)
    r.run("remote filter: rescans", rescans)
    r.run("remote filter: non-superusers", non_superusers)
    r.run("remote filter: shard down", shard_down)
