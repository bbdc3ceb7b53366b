"""Shards that fail: one that is down, one without amq, one with an older
amq, one whose amq lacks a function the coordinator ships.

Uses the vip and filters tables of pushdown.py.
"""

from nodes import fetched, foreign_scans, node_ctl, plan, psql, run_psql

QUERY = ("SELECT count(*) || ' ' || sum(o.id) FROM orders o JOIN vip v USING (customer_id) "
         "WHERE bloom_contains((SELECT b FROM filters WHERE name = 'vip'), o.customer_id)")


def shard2_server(name, more=""):
    """A foreign server name on the coordinator for shard2's database name
    (extensions 'amq'), with foreign table name_orders over its orders, then
    the SQL more: each faulty shard below is one of these."""
    psql("coord", f"""
        CREATE SERVER {name} FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1',
          port '{psql('shard2', 'SHOW port')[0]}', dbname '{name}', extensions 'amq');
        CREATE USER MAPPING FOR PUBLIC SERVER {name} OPTIONS (user 'postgres');
        CREATE FOREIGN TABLE {name}_orders (id bigint, customer_id bigint, amount numeric(10, 2))
          SERVER {name} OPTIONS (table_name 'orders');{more}""")


def vip_probe(probe):
    """(rows kept, vip customers missed) by probe, a count(*) of a shard's
    orders through the vip filter, for within_fpr_bound."""
    kept = int(psql("coord", probe)[0])
    missed = int(psql("coord", f"SELECT count(*) FROM vip WHERE customer_id NOT IN "
                               f"({probe.replace('count(*)', 'customer_id')})")[0])
    return kept, missed


def within_fpr_bound(kept, missed):
    """A probe over the shard's 100,000 orders kept every one of the 2,000
    vip customers and at most 1.5 times the filter's fpr (0.01) of the rest."""
    return missed == 0 and 2000 <= kept <= 2000 + 1.5 * 0.01 * 98000


def shard_down(r):
    """With shard2 stopped the prefiltered join fails with postgres_fdw's
    error and prints no rows; restarted, it gives the first answer again."""
    before = psql("coord", QUERY)
    node_ctl("stop", "shard2")
    try:
        out = run_psql("coord", QUERY)
        r.check("shard2 down: the query fails with postgres_fdw's error and no rows",
                out.returncode != 0 and out.stdout == ""
                and 'could not connect to server "shard2"' in out.stderr,
                out.stderr.strip().split("\n")[0])
        out = run_psql("coord", "SELECT count(*) FROM orders_s1 WHERE bloom_contains("
                                "(SELECT b FROM filters WHERE name = 'vip'), customer_id)")
        r.check("shard2 down: shard1 alone still answers", out.returncode == 0, out.stdout.strip())
    finally:
        node_ctl("start", "shard2")
    r.check("shard2 restarted: the same query gives the same answer",
            psql("coord", QUERY) == before, before[0])


def shard_without_amq(r):
    """A database with orders but no amq, behind a server with extensions
    'amq': the remote query fails with the remote error naming the missing
    function; the same server without extensions 'amq' answers, filtering
    on the coordinator."""
    psql("shard2", "CREATE DATABASE noamq;")
    psql("shard2", "CREATE TABLE orders (id bigint, customer_id bigint, amount numeric(10, 2));"
                   "INSERT INTO orders SELECT i, i, 1 FROM generate_series(0, 99999) i;", db="noamq")
    shard2_server("noamq")
    probe = ("SELECT count(*) FROM noamq_orders WHERE bloom_contains("
             "(SELECT b FROM filters WHERE name = 'vip'), customer_id)")
    out = run_psql("coord", probe)
    r.check("a shard without amq: the remote error, no rows",
            out.returncode != 0 and out.stdout == ""
            and 'ERROR:  type "public.bloom" does not exist' in out.stderr
            and "remote SQL command: SELECT count(*) FROM public.orders WHERE "
                "(public.bloom_contains($1::public.bloom, customer_id))" in out.stderr,
            " / ".join(out.stderr.strip().split("\n")))
    psql("coord", "ALTER SERVER noamq OPTIONS (DROP extensions);")
    scans = foreign_scans(plan("coord", probe, True))
    r.check("the same shard without extensions 'amq': filtered on the coordinator, all rows fetched",
            len(scans) == 1 and "bloom" not in scans[0]["Remote SQL"] and fetched(scans[0]) == 100000,
            scans[0]["Remote SQL"])
    kept, missed = vip_probe(probe)
    r.check("the same shard without extensions 'amq': every vip customer, at most the fpr bound more",
            within_fpr_bound(kept, missed), f"{kept} kept, {missed} missed")


def shard_old_version(r):
    """Version skew: shard2 has a database whose amq is still at 0.1.0
    (same library, the older SQL objects) behind a server with extensions
    'amq'. postgres_fdw compares no versions: probes and the 3-argument
    bloom_agg ship and answer (byte for byte as on the coordinator); the only
    function 0.1.0 lacks, the 4-argument bloom_agg, is never shipped."""
    psql("shard2", "CREATE DATABASE oldamq;")
    psql("shard2", """
        CREATE EXTENSION amq VERSION '0.1.0';
        CREATE TABLE orders (id bigint, customer_id bigint, amount numeric(10, 2));
        INSERT INTO orders SELECT i, i, 1 FROM generate_series(0, 99999) i;""", db="oldamq")
    shard2_server("oldamq", """
        CREATE FOREIGN TABLE oldamq_extension (extname name, extversion text) SERVER oldamq
          OPTIONS (schema_name 'pg_catalog', table_name 'pg_extension');""")
    versions = psql("coord", "SELECT extversion FROM pg_extension WHERE extname = 'amq' UNION ALL "
                             "SELECT extversion FROM oldamq_extension WHERE extname = 'amq'")
    r.check("the coordinator and the old shard report different amq versions",
            len(versions) == 2 and versions[1] == "0.1.0" and versions[0] != versions[1],
            " vs ".join(versions))
    layout = "SELECT bloom_agg(customer_id, 0.01, 100000, 'blocked') FROM oldamq_orders"
    scans = foreign_scans(plan("coord", layout))
    same = psql("coord", f"""
        SELECT ({layout})::bytea = (SELECT bloom_agg(i::bigint, 0.01, 100000, 'blocked')
                                     FROM generate_series(0, 99999) i)::bytea""")
    r.check("0.2.0's bloom_agg with a layout is not shipped: it runs on the coordinator, against the "
            "old shard too",
            len(scans) == 1 and "bloom_agg" not in scans[0]["Remote SQL"] and same == ["t"],
            scans[0]["Remote SQL"] if scans else "no foreign scan")
    three = "SELECT bloom_agg(customer_id, 0.01, 100000) FROM oldamq_orders"
    scans = foreign_scans(plan("coord", three))
    same = psql("coord", f"""
        SELECT ({three})::bytea = (SELECT bloom_agg(i::bigint, 0.01, 100000)
                                    FROM generate_series(0, 99999) i)::bytea""")
    r.check("a function the old shard has: the 3-argument bloom_agg runs there, same bytes",
            len(scans) == 1 and "SELECT public.bloom_agg(" in scans[0]["Remote SQL"] and same == ["t"],
            scans[0]["Remote SQL"] if scans else "no foreign scan")
    probe = ("SELECT count(*) FROM oldamq_orders WHERE bloom_contains("
             "(SELECT b FROM filters WHERE name = 'vip'), customer_id)")
    scans = foreign_scans(plan("coord", probe))
    kept, missed = vip_probe(probe)
    r.check("the old shard runs the probe: every vip customer, at most the fpr bound more",
            len(scans) == 1 and "public.bloom_contains(" in scans[0]["Remote SQL"]
            and within_fpr_bound(kept, missed), f"{kept} kept, {missed} missed")
    # The automatic join filter ships amq_join_filter_probe, which 0.1.0
    # lacks: the shard's error, with the hint that names the version needed;
    # told the shards' version, the coordinator ships bloom_contains.
    setup = "LOAD 'amq'; SET amq.join_filter_max_pass_rate = 1;"
    join = "SELECT count(*) FROM oldamq_orders o JOIN vip v USING (customer_id)"
    out = run_psql("coord", f"{setup} {join};")
    r.check("an automatic join filter against the old shard: its error, and a hint that names amq 0.5.0",
            out.returncode != 0
            and "ERROR:  function public.amq_join_filter_probe(public.bloom, bigint) does not exist"
            in out.stderr
            and "HINT:  amq join filters ship amq_join_filter_probe, which remote servers have from amq "
            "0.5.0: run ALTER EXTENSION amq UPDATE on each remote server, or SET "
            "amq.join_filter_remote_shard_version to their amq version." in out.stderr,
            out.stderr.strip()[:400])
    # A fuse filter needs the fuse type, which 0.1.0 lacks: its error, with
    # the hint that names amq 0.6.0 and the setting that ships Bloom filters.
    out = run_psql("coord", f"{setup} SET amq.join_filter_remote_filter = 'fuse'; {join};")
    r.check("a fuse join filter against the old shard: its error, and a hint that names amq 0.6.0",
            out.returncode != 0
            and 'ERROR:  type "public.fuse" does not exist' in out.stderr
            and "HINT:  amq join filters ship binary fuse filters (amq.join_filter_remote_filter), "
            "which remote servers read from amq 0.6.0: run ALTER EXTENSION amq UPDATE on each "
            "remote server, or SET amq.join_filter_remote_filter = 'bloom'." in out.stderr,
            out.stderr.strip()[:400])
    setup += " SET amq.join_filter_remote_shard_version = '0.1.0';"
    scans = foreign_scans(plan("coord", join, False, setup))
    counted = psql("coord", f"{setup} {join};")
    r.check("told the shards run 0.1.0: bloom_contains ships, the old shard answers every vip order",
            len(scans) == 1 and "public.bloom_contains($" in scans[0]["Remote SQL"]
            and counted == ["2000"], f"{counted}; " + (scans[0]["Remote SQL"][:200] if scans else ""))


def shard_missing_a_function(r):
    """A shard whose amq lacks a function the coordinator ships (here
    cuckoo_contains and its @>, dropped from the extension) fails that query
    with its own "does not exist" error; the functions it has still ship."""
    psql("shard2", "CREATE DATABASE lackamq;")
    psql("shard2", """
        CREATE EXTENSION amq;
        ALTER EXTENSION amq DROP OPERATOR @> (cuckoo, anycompatible);
        DROP OPERATOR @> (cuckoo, anycompatible);
        ALTER EXTENSION amq DROP FUNCTION cuckoo_contains(cuckoo, anycompatible);
        DROP FUNCTION cuckoo_contains(cuckoo, anycompatible);
        CREATE TABLE orders (id bigint, customer_id bigint, amount numeric(10, 2));
        INSERT INTO orders SELECT i, i, 1 FROM generate_series(0, 99999) i;""", db="lackamq")
    shard2_server("lackamq")
    out = run_psql("coord", "SELECT count(*) FROM lackamq_orders WHERE cuckoo_contains("
                            "(SELECT c FROM filters WHERE name = 'vip'), customer_id)")
    r.check("a shard lacking cuckoo_contains: its error, no rows",
            out.returncode != 0 and out.stdout == ""
            and "ERROR:  function public.cuckoo_contains(public.cuckoo, bigint) does not exist"
            in out.stderr, " / ".join(out.stderr.strip().split("\n")[:2]))
    probe = ("SELECT count(*) FROM lackamq_orders WHERE bloom_contains("
             "(SELECT b FROM filters WHERE name = 'vip'), customer_id)")
    kept, missed = vip_probe(probe)
    r.check("the same shard still runs bloom_contains: every vip customer, at most the fpr bound more",
            within_fpr_bound(kept, missed), f"{kept} kept, {missed} missed")


def run_all(r):
    r.run("shard down", shard_down)
    r.run("shard without amq", shard_without_amq)
    r.run("shard with an older amq", shard_old_version)
    r.run("shard missing a function", shard_missing_a_function)
