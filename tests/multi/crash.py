"""Stored filters under load, through a crash.

pgbench runs 8 clients against the coordinator, mixing probes (local and
through both shards) with bloom_add, batches of 20 values through
bloom_add_agg, cuckoo_add and cuckoo_delete on 8 + 8 stored filters. Every
change is logged in oplog in the same transaction, so after a crash the rows
of oplog are exactly the committed changes. At 40 s of a 60 s run the
coordinator's postmaster is killed with SIGKILL; it is restarted (crash
recovery from the WAL) and checked, then pgbench runs the remaining 20 s and
everything is checked again.
"""

import os
import re
import subprocess
import time

from nodes import PSQL, ROOT, node_ctl, port, psql, value

CLIENTS = 8
CAPACITY = 20000
SCRIPTS = {"probe": 10, "probe_shards": 1, "bloom_add": 4, "bloom_add_agg": 1, "cuckoo_add": 4,
           "cuckoo_delete": 4}
CHECKS = {
    "every stored filter verifies (bloom_info, cuckoo_info)":
        "SELECT (SELECT count(bloom_info(f)) FROM bfilters) + (SELECT count(cuckoo_info(f)) FROM cfilters)"
        " = 16",
    "every committed bloom_add is in its filter":
        "SELECT count(*) = 0 FROM oplog l JOIN bfilters b ON b.id = l.filter_id"
        " WHERE l.kind = 'bloom' AND NOT bloom_contains(b.f, l.value)",
    "each Bloom filter is byte for byte its committed adds, replayed":
        "SELECT count(*) = 0 FROM bfilters WHERE f::bytea <> rebuild_bloom(id)::bytea",
    "no value was deleted more often than added":
        "SELECT count(*) = 0 FROM net WHERE n < 0",
    "cuckoo_live agrees with the log":
        "SELECT count(*) = 0 FROM (SELECT filter_id, value, count(*) AS n FROM cuckoo_live GROUP BY 1, 2) l"
        " FULL JOIN (SELECT * FROM net WHERE n > 0) e USING (filter_id, value)"
        " WHERE l.n IS DISTINCT FROM e.n",
    "no false negative: every value still stored is found":
        "SELECT count(*) = 0 FROM net JOIN cfilters c ON c.id = net.filter_id"
        " WHERE n > 0 AND NOT cuckoo_contains(c.f, value)",
    "each cuckoo filter's item count is its committed adds minus deletes":
        "SELECT count(*) = 0 FROM cfilters c WHERE (cuckoo_info(f)->>'items')::bigint"
        " <> coalesce((SELECT sum(n) FROM net WHERE filter_id = c.id), 0)",
    "every committed delete is reflected: cuckoo_count of each value as in a rebuild":
        "SELECT count(*) = 0 FROM net JOIN cfilters c ON c.id = net.filter_id"
        " JOIN rebuilt r ON r.id = net.filter_id WHERE cuckoo_count(c.f, value) <> cuckoo_count(r.f, value)",
}


def setup():
    psql("coord", f"""
        CREATE TABLE bfilters (id int PRIMARY KEY, f bloom NOT NULL);
        CREATE TABLE cfilters (id int PRIMARY KEY, f cuckoo NOT NULL);
        CREATE TABLE oplog (kind text NOT NULL, filter_id int NOT NULL, op int NOT NULL, value bigint NOT NULL);
        CREATE TABLE cuckoo_live (filter_id int NOT NULL, value bigint NOT NULL);
        INSERT INTO bfilters SELECT i, bloom_new({CAPACITY}, 0.01, 'blocked') FROM generate_series(1, 8) i;
        INSERT INTO cfilters SELECT i, cuckoo_new({CAPACITY}, 0.01) FROM generate_series(1, 8) i;
        -- The filters the log describes, rebuilt from scratch.
        CREATE FUNCTION rebuild_bloom(fid int) RETURNS bloom LANGUAGE plpgsql AS $$
        DECLARE f bloom := bloom_new({CAPACITY}, 0.01, 'blocked'); v bigint;
        BEGIN
          FOR v IN SELECT value FROM oplog WHERE kind = 'bloom' AND filter_id = fid LOOP
            f := bloom_add(f, v);
          END LOOP;
          RETURN f;
        END $$;
        CREATE FUNCTION rebuild_cuckoo(fid int) RETURNS cuckoo LANGUAGE plpgsql AS $$
        DECLARE f cuckoo := cuckoo_new({CAPACITY}, 0.01); r record;
        BEGIN
          FOR r IN SELECT value, n FROM net WHERE filter_id = fid AND n > 0 ORDER BY value LOOP
            FOR i IN 1..r.n LOOP f := cuckoo_add(f, r.value); END LOOP;
          END LOOP;
          RETURN f;
        END $$;""")


def pgbench(seconds):
    """Starts pgbench on the coordinator for seconds; returns the process."""
    here = os.path.dirname(os.path.abspath(__file__))
    scripts = []
    for name, weight in SCRIPTS.items():
        scripts += ["-f", f"{here}/pgbench/{name}.sql@{weight}"]
    return subprocess.Popen(
        [os.path.join(os.path.dirname(PSQL), "pgbench"), "-n", "-c", str(CLIENTS), "-j", "2",
         "-T", str(seconds), *scripts, "-h", os.path.join(ROOT, "coord"), "-p", port("coord"),
         "-U", "postgres", "postgres"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def summary(output):
    """pgbench's transaction count and tps."""
    done = re.search(r"number of transactions actually processed: (\d+)", output)
    tps = re.search(r"tps = ([0-9.]+)", output)
    return (int(done.group(1)) if done else 0, float(tps.group(1)) if tps else 0.0)


def verify(r, when):
    """The checks of CHECKS against the log, plus the committed operation counts."""
    psql("coord", """
        DROP TABLE IF EXISTS net, rebuilt;
        CREATE TABLE net AS SELECT filter_id, value, sum(op)::int AS n FROM oplog
         WHERE kind = 'cuckoo' GROUP BY 1, 2;
        CREATE TABLE rebuilt AS SELECT id, rebuild_cuckoo(id) AS f FROM cfilters;""")
    for name, sql in CHECKS.items():
        r.check(f"{when}: {name}", value("coord", sql) == "t")
    return value("coord", """
        SELECT count(*) FILTER (WHERE kind = 'bloom') || ' Bloom adds, '
            || count(*) FILTER (WHERE kind = 'cuckoo' AND op = 1) || ' cuckoo_add, '
            || count(*) FILTER (WHERE kind = 'cuckoo' AND op = -1) || ' cuckoo_delete committed'
          FROM oplog""")


def children(pid):
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True,
                         check=False)
    return [int(p) for p in out.stdout.split()]


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def crash_and_recover(r):
    setup()
    log = os.path.join(ROOT, "coord", "server.log")
    bench = pgbench(60)
    started = time.time()
    time.sleep(40)
    postmaster = int(node_ctl("pid", "coord"))
    backends = children(postmaster)
    os.kill(postmaster, 9)
    out, _ = bench.communicate(timeout=60)
    ran = time.time() - started
    done, tps = summary(out)
    aborted = len(re.findall(r"client \d+ aborted", out))
    r.check("SIGKILL of the postmaster at 40 s of load: pgbench stops early, its clients aborted",
            bench.returncode != 0 and aborted > 0 and done > 0 and ran < 55,
            f"{done} transactions in {ran:.0f} s, {tps:.0f} tps, {aborted} of {CLIENTS} clients "
            f"reported aborted")
    deadline = time.time() + 60
    while any(alive(p) for p in backends) and time.time() < deadline:
        time.sleep(0.2)
    node_ctl("start", "coord")
    with open(log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    r.check("restart runs crash recovery",
            "database system was not properly shut down; automatic recovery in progress" in text
            and "redo done at" in text)
    print(f"     committed before the crash: {verify(r, 'after recovery')}")
    bench = pgbench(20)
    out, _ = bench.communicate(timeout=120)
    done2, tps2 = summary(out)
    r.check("pgbench after recovery: 20 s with no failed client",
            bench.returncode == 0 and "aborted" not in out and done2 > 0,
            f"{done2} transactions, {tps2:.0f} tps")
    print(f"     committed in all: {verify(r, 'after 60 s')}")
    print(f"     throughput held: {tps:.0f} tps for 40 s up to the crash, {tps2:.0f} tps for 20 s after "
          f"recovery ({CLIENTS} clients)")


def run_all(r):
    r.run("crash under load", crash_and_recover)
