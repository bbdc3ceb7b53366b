"""The automatic join filter across servers opens no connection of its own:
postgres_fdw alone connects to the shards, when a query runs (or plans with
use_remote_estimate), under its own rules. Each check below is one way a
plan-time connection of amq's own was found to go wrong; each asserts the
outcome a user sees, and that no connection with amq's application name
(application_name=amq) reached the shard.

Connections are counted in the shards' logs (log_connections is on while
these checks run: "connection authorized: user=U database=D
application_name=A", psql's own connections left out) and, for a server
that is not PostgreSQL, by a listener on 127.0.0.1 that counts what it
accepts.

Checks, on the coordinator's rsec_vip (20 customers) joined with a foreign
table over a shard's orders, planned as a hash join (nested loops and merge
joins off), with amq loaded:
- a planted operator: a non-superuser who owns the shard's database plants
  public.=(oid, regclass) running ALTER ROLE ... SUPERUSER; a superuser's
  EXPLAIN and run of the join on the coordinator leave her no superuser, and
  the operator never ran;
- an empty password: a non-superuser's user mapping with user 'postgres',
  password '' plans, then fails with postgres_fdw's password error; no
  connection at all reached the shard;
- a reset: a non-superuser's user mapping whose password the shard asked for,
  then (after the shard closed the session and stopped asking) no longer:
  postgres_fdw's password error, and no amq connection before or after;
- a server that accepts connections and never answers (connect_timeout
  unset, and '0'): EXPLAIN of the join returns within 3 s and the server
  got no connection;
- a role with no USAGE on the server and no SELECT on the tables, under a
  PUBLIC user mapping: the permission error, and the server got no
  connection;
- the shard log: a plain EXPLAIN of the sharded orders joined with rsec_vip
  ships its filter and opens no connection to either shard; with
  use_remote_estimate 'true' postgres_fdw does connect (so the count sees
  connections) and amq still does not;
- a dropped user mapping: the same session then gets postgres_fdw's "user
  mapping not found"; no amq connection was made, none is left open.
Every role, database, server and table made here is dropped again, also when
a check fails.
"""

import os
import re
import shutil
import socket
import subprocess
import tempfile
import sys
import threading
import time

from nodes import PSQL, ROOT, Results, port, psql, run_psql, value

SETUP = "LOAD 'amq'; SET enable_nestloop = off; SET enable_mergejoin = off;"
JOIN = "SELECT o.id, v.customer_id FROM {t} o JOIN rsec_vip v ON o.customer_id = v.customer_id"
COUNT = "SELECT count(*) FROM {t} o JOIN rsec_vip v ON o.customer_id = v.customer_id"
AUTHORIZED = re.compile(r"connection authorized: user=(\S*) database=(\S*)(?: application_name=(.*))?$")
PASSWORD_ERROR = re.compile(r"ERROR:  password (is|or .*) required")


def brief(text, most=300):
    """text on one line (its lines joined by " / "), cut at most characters:
    a check's detail."""
    return " / ".join(line.strip() for line in text.strip().splitlines())[:most]


def explain(t):
    """EXPLAIN (VERBOSE, COSTS OFF) of the join over foreign table t."""
    return f"EXPLAIN (VERBOSE, COSTS OFF) {JOIN.format(t=t)};"


def connections(node):
    """(user, database, application_name) of every connection node's log
    says was authorized, in order, psql's own left out."""
    with open(os.path.join(ROOT, node, "server.log"), encoding="utf-8", errors="replace") as f:
        found = [AUTHORIZED.search(line.rstrip("\n")) for line in f]
    return [m.groups() for m in found if m and m.group(3) != "psql"]


def since(node, before):
    """The connections of node's log after the list before (connections())."""
    return connections(node)[len(before):]


def amq_ones(conns):
    """The connections among conns that amq made (application_name=amq)."""
    return [c for c in conns if c[2] == "amq"]


def log_connections(node, on):
    """Turns log_connections on or off on node, for sessions that start
    after it returns. Off is "off" up to 17; 18 made it a list of aspects,
    empty when off (and "on" the same as all of them)."""
    psql(node, f"ALTER SYSTEM {'SET log_connections = on' if on else 'RESET log_connections'};"
               "SELECT pg_reload_conf();")
    want = "on" if on else "off"
    for _ in range(50):
        if value(node, "SELECT coalesce(nullif(current_setting('log_connections'), ''), 'off')") == want:
            return
        time.sleep(0.1)
    raise RuntimeError(f"{node}: log_connections did not become {want}")


def cleanup(node, sql, db="postgres"):
    """Runs each statement of sql on node, going on after an error (they
    drop what a check made, which a failure may have left out)."""
    run_psql(node, sql, db, stop=False)


def drop_role(role):
    """The SQL that drops a role of the coordinator with its privileges."""
    return f"DROP OWNED BY {role}; DROP ROLE IF EXISTS {role};"


class Listener:
    """A TCP server on 127.0.0.1 (a free port) that accepts connections and
    then never writes (hang) or closes each one at once; counts them."""

    def __init__(self, hang):
        self.hang = hang
        self.count = 0
        self.held = []
        self.stopped = False
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.count += 1
            if self.hang:
                self.held.append(conn)
            else:
                conn.close()

    def stop(self):
        """Stops listening, then closes the connections it holds (a client
        blocked reading one gets end of file, and no new one is accepted)."""
        self.stopped = True
        self.thread.join()
        self.sock.close()
        for conn in self.held:
            conn.close()


def timed_psql(sql, timeout, name):
    """Runs sql through psql on the coordinator under application_name name:
    (the finished process or None when it ran out of timeout, seconds taken).
    psql is killed on timeout; its backend is for the caller to end
    (end_backend)."""
    command = [PSQL, "-h", os.path.join(ROOT, "coord"), "-p", port("coord"), "-U", "postgres",
               "-d", "postgres", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
    start = time.monotonic()
    try:
        out = subprocess.run(command, input=sql, capture_output=True, text=True, timeout=timeout,
                             check=False, env=dict(os.environ, PGAPPNAME=name))
    except subprocess.TimeoutExpired:
        out = None
    return out, time.monotonic() - start


def end_backend(name):
    """Terminates the coordinator's backends with application_name name and
    waits (15 s at most) until they are gone."""
    gone = f"SELECT count(*) FROM pg_stat_activity WHERE application_name = '{name}'"
    for _ in range(150):
        psql("coord", f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      f"WHERE application_name = '{name}'")
        if value("coord", gone) == "0":
            return
        time.sleep(0.1)
    raise RuntimeError(f"a backend of {name} is still there")


def foreign_server(name, host_port, dbname, more="", table="orders"):
    """Server name on the coordinator at 127.0.0.1:host_port, database
    dbname, extensions 'amq' and the options more, with foreign table
    name_orders over its table."""
    psql("coord", f"""
        CREATE SERVER {name} FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1',
          port '{host_port}', dbname '{dbname}', extensions 'amq'{more});
        CREATE FOREIGN TABLE {name}_orders (id bigint, customer_id bigint, amount numeric(10, 2))
          SERVER {name} OPTIONS (table_name '{table}');""")


def server_role(name, mapping):
    """On the coordinator, role name (no superuser) with USAGE on server
    name, SELECT on its foreign table and rsec_vip, and a user mapping there
    with the options mapping."""
    psql("coord", f"""
        CREATE ROLE {name};
        GRANT USAGE ON FOREIGN SERVER {name} TO {name};
        GRANT SELECT ON {name}_orders, rsec_vip TO {name};
        CREATE USER MAPPING FOR {name} SERVER {name} OPTIONS ({mapping});""")


def planted_operator(r):
    """Finding: amq's plan-time catalog query ran on the shard under the
    remote user's search_path with an unqualified =, so the owner of the
    shard's database could run code as the coordinator's user mapping
    (postgres): ralice plants public.=(oid, regclass) over a function that
    logs its call and makes her a superuser. A superuser's EXPLAIN of the join
    on the coordinator, then the join itself, must leave her rolsuper false
    and the function never called; the join gives its 100 rows."""
    psql("shard1", "CREATE ROLE ralice LOGIN; CREATE DATABASE rshard_alice OWNER ralice;")
    try:
        psql("shard1", """
            SET ROLE ralice;
            CREATE EXTENSION amq;
            CREATE TABLE orders (id bigint, customer_id bigint, amount numeric(10, 2));
            INSERT INTO orders SELECT i, i % 1000, 1 FROM generate_series(1, 5000) i;
            CREATE TABLE planted_log (ran_as name, at timestamptz DEFAULT now());
            CREATE FUNCTION public.planted_eq(oid, regclass) RETURNS boolean LANGUAGE plpgsql AS $$
            BEGIN
              IF NOT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = 'ralice') THEN
                BEGIN
                  EXECUTE 'ALTER ROLE ralice SUPERUSER';
                  INSERT INTO public.planted_log (ran_as) VALUES (current_user);
                  RAISE LOG 'planted operator ran as %', current_user;
                EXCEPTION WHEN insufficient_privilege THEN NULL;
                END;
              END IF;
              RETURN $1 OPERATOR(pg_catalog.=) $2::oid;
            END $$;
            CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = regclass, FUNCTION = public.planted_eq);""",
             db="rshard_alice")
        foreign_server("rsec_alice", port("shard1"), "rshard_alice")
        psql("coord", "CREATE USER MAPPING FOR postgres SERVER rsec_alice OPTIONS (user 'postgres');")
        rolsuper = "SELECT rolsuper FROM pg_roles WHERE rolname = 'ralice'"
        ran = "SELECT count(*) FROM planted_log"
        out = run_psql("coord", f"{SETUP} {explain('rsec_alice_orders')}")
        sup, calls = value("shard1", rolsuper), value("shard1", ran, db="rshard_alice")
        r.check("planted operator: a superuser's EXPLAIN of the join leaves the shard's database "
                "owner no superuser, the operator not called",
                out.returncode == 0 and "Hash Join" in out.stdout and sup == "f" and calls == "0",
                f"rolsuper {sup}, planted operator called {calls} times; {brief(out.stderr)}")
        psql("shard1", "ALTER ROLE ralice NOSUPERUSER;")
        out = run_psql("coord", f"{SETUP} {COUNT.format(t='rsec_alice_orders')};")
        sup, calls = value("shard1", rolsuper), value("shard1", ran, db="rshard_alice")
        r.check("planted operator: the superuser's join gives its rows and leaves the owner no "
                "superuser, the operator not called",
                out.returncode == 0 and out.stdout.strip() == "100" and sup == "f" and calls == "0",
                f"rows {out.stdout.strip()}, rolsuper {sup}, planted operator called {calls} times; "
                f"{brief(out.stderr)}")
    finally:
        cleanup("coord", "DROP SERVER IF EXISTS rsec_alice CASCADE;")
        cleanup("shard1", "DROP DATABASE IF EXISTS rshard_alice WITH (FORCE); DROP ROLE IF EXISTS ralice;")


def empty_password(r):
    """Finding: amq took a user mapping with password '' as one that gives a
    password, and connected as its user (postgres) for a non-superuser;
    postgres_fdw refuses such a mapping before it connects. rsec_empty's
    EXPLAIN of the join plans, the join fails with postgres_fdw's password
    error, and no connection at all reached shard1."""
    foreign_server("rsec_empty", port("shard1"), "postgres")
    try:
        server_role("rsec_empty", "user 'postgres', password ''")
        before = connections("shard1")
        out = run_psql("coord", f"{SETUP} SET ROLE rsec_empty; {explain('rsec_empty_orders')}"
                                f"\\echo the join\n{COUNT.format(t='rsec_empty_orders')};")
        seen = since("shard1", before)
        r.check("empty password: the plan, then postgres_fdw's password error",
                out.returncode != 0 and "Hash Join" in out.stdout and "the join" in out.stdout
                and PASSWORD_ERROR.search(out.stderr) is not None, brief(out.stderr))
        r.check("empty password: no connection reached shard1 (none as postgres for amq)",
                not seen, f"connections: {seen}")
    finally:
        cleanup("coord", f"DROP SERVER IF EXISTS rsec_empty CASCADE; {drop_role('rsec_empty')}")


def reset_after_failure(r):
    """Finding: after a failed query amq reconnected (PQreset) without the
    password check. rsec_reset's user mapping gives a password that shard1
    asks for (a scram-sha-256 line of pg_hba.conf): the join runs. Then, in
    the same session, shard1 stops asking (the line goes) and ends
    rsec_reset's sessions: the next EXPLAIN plans, the join fails with
    postgres_fdw's password error, and no amq connection reached shard1,
    before or after."""
    hba = os.path.join(ROOT, "shard1", "data", "pg_hba.conf")
    with open(hba, encoding="utf-8") as f:
        original = f.read()
    work = tempfile.mkdtemp(prefix="rsec")
    shard = (f"{PSQL} -X -q -h {os.path.join(ROOT, 'shard1')} -p {port('shard1')} -U postgres "
             "-d postgres")
    # Whether rsec_reset connects to shard1 over TCP with no password.
    trusted = (f"PGPASSFILE=/dev/null PGPASSWORD= {PSQL} -X -q -w -h 127.0.0.1 -p {port('shard1')} "
               "-U rsec_reset -d postgres -c 'SELECT 1' >/dev/null 2>&1")
    switch = os.path.join(work, "switch.sh")
    with open(os.path.join(work, "pg_hba.conf"), "w", encoding="utf-8") as f:
        f.write(original)
    with open(switch, "w", encoding="utf-8") as f:
        f.write(f"""cp {work}/pg_hba.conf {hba} && {shard} -c 'SELECT pg_reload_conf()' >/dev/null
for i in $(seq 100); do {trusted} && break; sleep 0.1; done
{shard} -c "DO \\$\\$BEGIN RAISE LOG 'rsec switch'; END\\$\\$" \\
  -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'rsec_reset'" >/dev/null
sleep 0.5
""")
    try:
        psql("shard1", "CREATE ROLE rsec_reset LOGIN PASSWORD 'rsec-secret'; "
                       "GRANT SELECT ON orders TO rsec_reset;")
        with open(hba, "w", encoding="utf-8") as f:
            f.write("host postgres rsec_reset 127.0.0.1/32 scram-sha-256\n" + original)
        psql("shard1", "SELECT pg_reload_conf();")
        for _ in range(100):
            if subprocess.run(["sh", "-c", trusted], check=False).returncode != 0:
                break
            time.sleep(0.1)
        foreign_server("rsec_reset", port("shard1"), "postgres")
        server_role("rsec_reset", "user 'rsec_reset', password 'rsec-secret'")
        before = connections("shard1")
        out = run_psql("coord", "\n".join([
            SETUP, "SET ROLE rsec_reset;", explain("rsec_reset_orders"),
            COUNT.format(t="rsec_reset_orders") + ";", "\\echo switched", f"\\! sh {switch}",
            explain("rsec_reset_orders"), COUNT.format(t="rsec_reset_orders") + ";"]))
        with open(os.path.join(ROOT, "shard1", "server.log"), encoding="utf-8",
                  errors="replace") as f:
            log = f.read()
        seen = since("shard1", before)
        # The connections after the switch (its RAISE LOG marks the log).
        after = [m.groups() for m in map(AUTHORIZED.search, log.split("rsec switch")[-1].splitlines())
                 if m and m.group(3) != "psql"] if "rsec switch" in log else []
        first, _, second = out.stdout.partition("switched\n")
        r.check("reset: with the password the shard asked for, the join runs (20 rows)",
                "Hash Join" in first and first.rstrip().endswith("\n20"),
                brief(first.rstrip()[-100:]))
        r.check("reset: once the shard no longer asks for it, a plan, then postgres_fdw's "
                "password error", out.returncode != 0 and "Hash Join" in second
                and PASSWORD_ERROR.search(out.stderr) is not None, brief(out.stderr))
        r.check("reset: no amq connection to shard1, before the switch or after",
                not amq_ones(seen), f"amq connections: {len(amq_ones(seen))}, "
                                    f"{len(amq_ones(after))} of them after the switch")
    finally:
        with open(hba, "w", encoding="utf-8") as f:
            f.write(original)
        shutil.rmtree(work, ignore_errors=True)
        cleanup("shard1", "SELECT pg_reload_conf();")
        cleanup("coord", f"DROP SERVER IF EXISTS rsec_reset CASCADE; {drop_role('rsec_reset')}")
        cleanup("shard1", """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'rsec_reset';
            REVOKE SELECT ON orders FROM rsec_reset; DROP ROLE IF EXISTS rsec_reset;""")


def never_answers(r):
    """Finding: planning blocked in amq's connect to a server that accepts
    connections and never answers (10 s, or forever with connect_timeout
    '0'), and could not be cancelled. For both, EXPLAIN of the join returns
    within 3 s and the server got no connection. (psql is killed after 8 s;
    its backend is then ended.)"""
    for name, more in (("rsec_hang", ""), ("rsec_hang0", ", connect_timeout '0'")):
        listener = Listener(hang=True)
        try:
            foreign_server(name, listener.port, "postgres", more)
            psql("coord", f"CREATE USER MAPPING FOR PUBLIC SERVER {name} OPTIONS (user 'postgres');")
            out, took = timed_psql(f"{SETUP} {explain(name + '_orders')}", 8, name)
            accepted = listener.count
            if out is None:
                listener.stop()
                end_backend(name)
            what = "connect_timeout '0'" if more else "connect_timeout unset"
            r.check(f"a server that never answers ({what}): EXPLAIN of the join within 3 s",
                    out is not None and out.returncode == 0 and "Hash Join" in out.stdout
                    and took < 3, f"{took:.1f} s, " + ("killed" if out is None else brief(out.stderr)))
            r.check(f"a server that never answers ({what}): no connection to it while planning",
                    accepted == 0, f"{accepted} connections")
        finally:
            listener.stop()
            cleanup("coord", f"DROP SERVER IF EXISTS {name} CASCADE;")


def no_rights(r):
    """Finding: amq connected, under the server's PUBLIC user mapping,
    for a role that may not use the server nor read the tables, before the
    permission check failed. rsec_norights's EXPLAIN of the join and the
    join itself fail with the permission error, and the server (a listener
    that closes what it accepts) got no connection."""
    listener = Listener(hang=False)
    try:
        foreign_server("rsec_rights", listener.port, "postgres", ", connect_timeout '2'")
        psql("coord", """
            CREATE USER MAPPING FOR PUBLIC SERVER rsec_rights OPTIONS (user 'postgres', password 'x');
            CREATE ROLE rsec_norights;""")
        out = run_psql("coord", f"{SETUP} SET ROLE rsec_norights; {explain('rsec_rights_orders')}"
                                f"{COUNT.format(t='rsec_rights_orders')};", stop=False)
        denied = re.findall(r"ERROR:  permission denied for (?:foreign )?table", out.stderr)
        r.check("no rights, a PUBLIC user mapping: EXPLAIN and the join fail with the permission "
                "error", len(denied) == 2 and "Hash Join" not in out.stdout, brief(out.stderr))
        r.check("no rights, a PUBLIC user mapping: no connection to the server",
                listener.count == 0, f"{listener.count} connections")
    finally:
        listener.stop()
        cleanup("coord", f"DROP SERVER IF EXISTS rsec_rights CASCADE; {drop_role('rsec_norights')}")


def shard_log(r):
    """A plain EXPLAIN of the sharded orders joined with rsec_vip ships the
    filter to both shards and opens no connection to either. With
    use_remote_estimate 'true' on shard1, postgres_fdw connects to plan (the
    log shows it, so the count does see connections); amq still does not."""
    before = {s: connections(s) for s in ("shard1", "shard2")}
    out = run_psql("coord", f"{SETUP} {explain('orders')}")
    seen = {s: since(s, before[s]) for s in before}
    ships = out.stdout.count("public.amq_join_filter_probe(")
    r.check("shard log: EXPLAIN of the sharded join ships the filter to both shards",
            out.returncode == 0 and ships == 2, f"{ships} scans ship; {brief(out.stderr)}")
    r.check("shard log: EXPLAIN opens no connection to either shard",
            not seen["shard1"] and not seen["shard2"], str(seen))
    psql("coord", "ALTER SERVER shard1 OPTIONS (ADD use_remote_estimate 'true');")
    try:
        before = connections("shard1")
        out = run_psql("coord", f"{SETUP} {explain('orders')}")
        seen = since("shard1", before)
    finally:
        psql("coord", "ALTER SERVER shard1 OPTIONS (DROP use_remote_estimate);")
    fdw = [c for c in seen if c[2] == "postgres_fdw"]
    r.check("shard log: with use_remote_estimate postgres_fdw connects to plan, amq does not",
            out.returncode == 0 and fdw and not amq_ones(seen), str(seen))


def dropped_mapping(r):
    """Finding: amq kept its connection after the user mapping it was made
    from was dropped, and went on using it. rsec_um's join runs; after DROP
    USER MAPPING the same session plans the join and then gets postgres_fdw's
    "user mapping not found"; no amq connection reached shard1 and, right
    after the drop, none is open there."""
    work = tempfile.mkdtemp(prefix="rsec")
    open_after = os.path.join(work, "open")
    shard = (f"{PSQL} -X -q -A -t -h {os.path.join(ROOT, 'shard1')} -p {port('shard1')} "
             "-U postgres -d postgres")
    try:
        psql("shard1", "CREATE ROLE rsec_um LOGIN; GRANT SELECT ON orders TO rsec_um;")
        foreign_server("rsec_um", port("shard1"), "postgres")
        server_role("rsec_um", "user 'rsec_um', password_required 'false'")
        before = connections("shard1")
        out = run_psql("coord", "\n".join([
            SETUP, "SET ROLE rsec_um;", explain("rsec_um_orders"),
            COUNT.format(t="rsec_um_orders") + ";", "RESET ROLE;",
            "DROP USER MAPPING FOR rsec_um SERVER rsec_um;", "SET ROLE rsec_um;",
            explain("rsec_um_orders"), "\\echo dropped",
            f"\\! {shard} -c \"SELECT count(*) FROM pg_stat_activity WHERE usename = 'rsec_um' "
            f"AND application_name = 'amq'\" > {open_after}",
            COUNT.format(t="rsec_um_orders") + ";"]))
        seen = since("shard1", before)
        with open(open_after, encoding="utf-8") as f:
            still = f.read().strip()
        first, _, second = out.stdout.partition("Hash Join")[2].partition("Hash Join")
        r.check("dropped user mapping: the join runs before the drop (20 rows), plans after it",
                first.rstrip().endswith("\n20") and "dropped" in second,
                brief(out.stdout[-100:]))
        r.check("dropped user mapping: then postgres_fdw's \"user mapping not found\"",
                out.returncode != 0 and "ERROR:  user mapping not found for" in out.stderr,
                brief(out.stderr))
        r.check("dropped user mapping: no amq connection to shard1, none open after the drop",
                not amq_ones(seen) and still == "0",
                f"amq connections: {len(amq_ones(seen))}, open after the drop: {still}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        cleanup("coord", f"DROP SERVER IF EXISTS rsec_um CASCADE; {drop_role('rsec_um')}")
        cleanup("shard1", """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'rsec_um';
            REVOKE SELECT ON orders FROM rsec_um; DROP ROLE IF EXISTS rsec_um;""")


def run_all(r):
    psql("coord", "CREATE TABLE rsec_vip AS SELECT c::bigint AS customer_id "
                  "FROM generate_series(0, 19) c; ANALYZE rsec_vip;")
    try:
        for shard in ("shard1", "shard2"):
            log_connections(shard, True)
        r.run("security: planted operator", planted_operator)
        r.run("security: empty password", empty_password)
        r.run("security: reset", reset_after_failure)
        r.run("security: a server that never answers", never_answers)
        r.run("security: no rights", no_rights)
        r.run("security: shard log", shard_log)
        r.run("security: dropped user mapping", dropped_mapping)
    finally:
        for shard in ("shard1", "shard2"):
            log_connections(shard, False)
        cleanup("coord", "DROP TABLE IF EXISTS rsec_vip;")


def main():
    """Runs these checks alone (multi.py runs them with the others)."""
    r = Results()
    run_all(r)
    print(f"{r.passed} passed, {r.failed} failed")
    return 0 if r.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
