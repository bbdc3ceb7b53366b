"""Join prefiltering benchmark (driven by bench/multi/run.sh, which starts a
coordinator and two shards and loads orders, ROWS rows over the shards).

1. Across servers: 10,000 local vip customers joined with the shards'
   orders over TCP, side by side in one run: plain (amq.join_filter_remote
   off), hand-prefiltered (the query's own bloom_contains of a filter built
   in the query, or of a stored one: fpr 0.01, and the same keys in filters
   padded to 1 MiB and 64 MiB), and automatic (the plain join's text with
   amq.join_filter_remote on, so the hash join ships a filter of its inner
   keys in the foreign scans' Remote SQL): server time, rows fetched from
   the shards, what the plan ships (EXPLAIN VERBOSE), and bytes each way on
   the wire (counted by a relay, bench/multi/proxy.py, in a separate run
   per case); and the filter's shipping alone: the same filter against a
   one-row table on each shard (sent as text, parsed at Bind, one probe).
   Then a join where every order matches (all customers), remote filters off
   and on, with the planner's choice and forced (max_pass_rate 1); with
   fewer orders than the 1M customers (the smoke run) orders is the hash
   join's inner side and nothing can ship.
   Then every order matching without coordinator statistics (orders_fresh,
   work_mem 64MB): the filter ships by design, and the shards probe it with
   amq_join_filter_probe, which switches itself off, or with bloom_contains
   (a coordinator told its shards run 0.4.0), against the filter off;
   --only matches runs only this table.
   Then the per-row cost on a shard of each case's Remote SQL, run on
   shard1 itself.
   Then binary fuse against Bloom filters as the filter shipped
   (amq.join_filter_remote_filter): --only fuse runs only this table.
2. Exact key sets against Bloom filters (--set-sizes): orders JOIN n
   customers with an index on the shards' customer_id: plain, the remote
   filter sent as a Bloom filter only (amq.join_filter_remote_max_set_keys
   0), as an exact set, automatic (the defaults), and the hand-written
   literal IN list, side by side: what amq.join_filter_remote_max_set_keys's
   default rests on. --only sets runs only this table.
3. One node: a 5M-row fact table joined with a 500k-row dimension whose hash
   table is larger than work_mem, plain (amq.join_filter off) and
   prefiltered, at work_mem 4MB (the default) and 1GB.

Timings are medians of RUNS runs, every case interleaved within each run
(in reverse order every other run), with ratios of medians and the range
of the per-run ratios; EXPLAIN ANALYZE's execution time with TIMING OFF. A case's answers must agree with
its comparison's (else RESULTS DIFFER). Usage: bench.py [--runs N]
[--customers N] [--fact N] (the one-node fact table's rows, 5M by default).
AMQ_BENCH_SMOKE=1 (make test's bench suite, which only checks that it runs)
leaves the 64 MiB filter out of the across-servers table: shipping it takes
seconds a case.
"""

import argparse
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "multi"))
from nodes import fetched, foreign_scans, port, psql, value  # noqa: E402
from proxy import Relay  # noqa: E402

JOIN = ("SELECT count(*), sum(o.amount) FROM orders o JOIN vip v USING (customer_id)")
PREFILTERED = JOIN + " WHERE bloom_contains((SELECT f FROM filters WHERE name = '{name}'), o.customer_id)"
# The hand-written prefilter with its filter built in the query (an InitPlan
# whose result postgres_fdw sends as a parameter).
BUILT = JOIN + " WHERE bloom_contains((SELECT bloom_agg(customer_id) FROM vip), o.customer_id)"
# The filter's shipping alone: a one-row table on each shard.
ONE_ROW = ("SELECT count(*), NULL FROM (SELECT customer_id FROM one_s1 UNION ALL SELECT customer_id "
           "FROM one_s2) o WHERE bloom_contains((SELECT f FROM filters WHERE name = '{name}'), o.customer_id)")
# Every order has its customer in customers.
ALL_MATCH = "SELECT count(*), sum(o.amount) FROM orders o JOIN customers c USING (customer_id)"
# The same over orders_fresh, the same shard tables never analyzed on the
# coordinator (the common case: autovacuum never analyzes foreign tables).
FRESH_MATCH = ALL_MATCH.replace("FROM orders o", "FROM orders_fresh o")
# Enough memory for the build to send the filter of all the customers.
WIDE = "SET work_mem = '64MB';"
# What a coordinator ships to shards it is told run amq 0.4.0: bloom_contains.
OLD_PROBE = "SET amq.join_filter_remote_shard_version = '0.4.0';"
# Binary fuse filters instead of Bloom filters to the shards.
FUSE = "SET amq.join_filter_remote_filter = 'fuse';"
# The selective join with 100,000 keys (every 10th customer).
JOIN_100K = JOIN.replace("JOIN vip v", "JOIN vip100k v")
SERIAL = "SET max_parallel_workers_per_gather = 0;"
# The planner hooks of the automatic join filters act once the library is
# loaded: each case's session loads it before planning (as README says a
# user does, or session_preload_libraries).
SESSION = "LOAD 'amq'; " + SERIAL
# The one-node table compares the hand-written prefilter with no filter at
# all, as it did before the automatic join filters (bench/join times those).
NO_JOIN_FILTER = "LOAD 'amq'; SET amq.join_filter = off;"
OFF = "SET amq.join_filter_remote = off;"
ON = "SET amq.join_filter_remote = on;"
FORCED = "SET amq.join_filter_max_pass_rate = 1;"
JOIN_NODES = ("Hash Join", "Merge Join", "Nested Loop")
FILTERS = ("vip", "1MiB") if os.environ.get("AMQ_BENCH_SMOKE") == "1" else ("vip", "1MiB", "64MiB")


class Case:
    """One query of the across-servers tables: its label, the settings it
    runs under, the SQL, and the stored filter it names (if any)."""

    def __init__(self, label, setup, query, stored=None):
        self.label, self.setup, self.query, self.stored = label, setup, query, stored
        self.times = []
        self.plan_times = []
        self.cpu = []
        self.explain = None
        self.answer = None
        self.wire = (0, 0)


def setup_coordinator(customers):
    """vip (10,000 customers) and its filters: fpr 0.01 sized for the keys,
    and the same keys in filters of about 1 MiB and 64 MiB; customers, every
    customer id the shards' orders use (0 to their largest). ANALYZE orders
    gives the coordinator statistics of the foreign partitions (postgres_fdw
    fetches their rows): without them the planner takes every order to have
    a vip partner and plans no join filter. orders_fresh: the shards' same
    orders, never analyzed."""
    top = max(int(value(shard, "SELECT max(customer_id) FROM orders")) for shard in ("shard1", "shard2"))
    half = int(value("shard1", "SELECT max(id) FROM orders"))
    psql("coord", f"""
        CREATE TABLE vip AS SELECT c AS customer_id FROM generate_series(0, {customers - 1},
          {customers // 10000}) c;
        CREATE TABLE customers AS SELECT c AS customer_id FROM generate_series(0, {top}) c;
        ANALYZE vip, customers, orders;
        CREATE TABLE filters (name text PRIMARY KEY, f bloom NOT NULL);
        INSERT INTO filters SELECT 'vip', bloom_agg(customer_id, 0.01) FROM vip;
        INSERT INTO filters SELECT '1MiB', bloom_agg(customer_id, 0.01, 875000) FROM vip;
        INSERT INTO filters SELECT '64MiB', bloom_agg(customer_id, 0.01, 56000000) FROM vip;
        CREATE FOREIGN TABLE one_s1 (customer_id bigint) SERVER shard1 OPTIONS (table_name 'one');
        CREATE FOREIGN TABLE one_s2 (customer_id bigint) SERVER shard2 OPTIONS (table_name 'one');
        CREATE TABLE orders_fresh (id bigint NOT NULL, customer_id bigint NOT NULL, amount numeric(10, 2))
          PARTITION BY RANGE (id);
        CREATE FOREIGN TABLE orders_fresh_s1 PARTITION OF orders_fresh FOR VALUES FROM (MINVALUE)
          TO ({half + 1}) SERVER shard1 OPTIONS (table_name 'orders');
        CREATE FOREIGN TABLE orders_fresh_s2 PARTITION OF orders_fresh FOR VALUES FROM ({half + 1})
          TO (MAXVALUE) SERVER shard2 OPTIONS (table_name 'orders');""")
    for shard in ("shard1", "shard2"):
        psql(shard, "CREATE TABLE one AS SELECT 1::bigint AS customer_id;")


def explain(case):
    """EXPLAIN (ANALYZE, VERBOSE) of a case, as JSON: the top object, with
    "Plan" and "Execution Time" (TIMING OFF: the server's time, per-node
    clocks not read)."""
    lines = psql("coord", f"{SESSION} {case.setup} "
                 f"EXPLAIN (ANALYZE, VERBOSE, TIMING OFF, FORMAT JSON) {case.query};")
    return json.loads("\n".join(lines))[0]


def plan_nodes(node):
    """Every node of a plan, InitPlans and subplans included."""
    yield node
    for child in node.get("Plans", []):
        yield from plan_nodes(child)


def shipped(top):
    """What a plan (EXPLAIN ANALYZE VERBOSE) sends the shards: (bytes of the
    automatic remote filters sent, a description: its joins, each automatic
    filter with its key, size and destinations, or why it was not sent; how many
    foreign scans' Remote SQL probe a filter; whether a local probe sits on
    the coordinator)."""
    size, parts = 0, []
    nodes = list(plan_nodes(top["Plan"]))
    for node in nodes:
        for key in node:
            if not key.startswith(("Ships Bloom Filter ", "Ships Binary Fuse Filter ")):
                continue
            n = key.split()[-1]
            state = node.get(f"Filter {n} State")
            bytes_ = node.get(f"Filter {n} Size")
            sent = node.get(f"Filter {n} Sent")
            if state:
                parts.append(f"automatic filter {n} on {node[key]}: {state}")
            else:
                size += int(bytes_ or 0)
                what = f"{sent} ({int(bytes_ or 0):,} B)" if sent else f"{int(bytes_ or 0):,} B"
                parts.append(f"automatic filter {n} on {node[key]}: {what} to "
                             f"{node.get(f'Filter {n} Sent To')}")
    parts.insert(0, ", ".join(n["Node Type"] for n in nodes if n["Node Type"] in JOIN_NODES) or "no join")
    scans = [s for s in nodes if s["Node Type"] == "Foreign Scan"]
    probing = sum("amq_join_filter_probe(" in s.get("Remote SQL", "") or "bloom_contains(" in s.get("Remote SQL", "")
                  for s in scans)
    parts.append(f"Remote SQL probes a filter in {probing} of {len(scans)} scans")
    local = [node[k] for node in nodes for k in node if k.startswith("Applies Bloom Filter")]
    if local:
        parts.append(f"local probe ({len(local)})")
    return size, "; ".join(parts)


def wire_bytes(relays, case):
    """Bytes coordinator->shards and shards->coordinator for one run of the
    case in a fresh session through the counting relays, and its answer."""
    for relay in relays:
        relay.reset()
    answer = psql("coord", f"{SESSION} {case.setup} {case.query};")[0].replace("|", ", ")
    return (sum(r.sent for r in relays), sum(r.received for r in relays)), answer


def busy_cpu_seconds():
    """The CPU time this machine has spent busy (user, nice, system, irq and
    softirq in /proc/stat; not idle, I/O wait or time stolen by the host)."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(v) for v in f.readline().split()[1:8]]
    return (sum(fields[0:3]) + fields[5] + fields[6]) / os.sysconf("SC_CLK_TCK")


def measure(cases, runs):
    """Times every case RUNS times, the cases interleaved within each round
    (every other round in reverse order, so no case always follows the same
    one), with the CPU time the machine (coordinator, shards, psql) spent busy
    meanwhile, which other guests on the host do not stretch as they stretch
    the wall clock; keeps the last plan; then runs each once more through the
    counting relays for its bytes and answer."""
    for round_ in range(runs):
        for case in cases if round_ % 2 == 0 else cases[::-1]:
            before = busy_cpu_seconds()
            case.explain = explain(case)
            case.cpu.append(busy_cpu_seconds() - before)
            case.times.append(case.explain["Execution Time"])
            case.plan_times.append(case.explain["Planning Time"])
    relays = [Relay(port(shard)) for shard in ("shard1", "shard2")]
    for shard, relay in zip(("shard1", "shard2"), relays):
        psql("coord", f"ALTER SERVER {shard} OPTIONS (SET port '{relay.port}');")
    try:
        for case in cases:
            case.wire, case.answer = wire_bytes(relays, case)
    finally:
        for shard in ("shard1", "shard2"):
            psql("coord", f"ALTER SERVER {shard} OPTIONS (SET port '{port(shard)}');")


def ms(case):
    return statistics.median(case.times)


def plan_ms(case):
    """The median planning time: a fresh session's first plan."""
    return statistics.median(case.plan_times)


def busy(case):
    """A case's busy CPU seconds, per round (measure)."""
    return case.cpu


def ratio(a, b, times=lambda case: case.times):
    """The ratio of a's median to b's, and the range of the per-round ratios
    (rounds interleave the cases, so each pair ran side by side); of their
    busy CPU seconds with times=busy."""
    rounds = [x / y for x, y in zip(times(a), times(b))]
    return (f"{statistics.median(times(a)) / statistics.median(times(b)):.2f}x "
            f"(rounds {min(rounds):.2f}-{max(rounds):.2f}x; fastest rounds "
            f"{min(times(a)) / min(times(b)):.2f}x)")


def check_same(cases):
    """Prints RESULTS DIFFER (which tests/bench looks for) if the cases'
    answers differ."""
    answers = {case.answer for case in cases}
    if len(answers) != 1:
        print("RESULTS DIFFER: " + "; ".join(f"{c.label}: {c.answer}" for c in cases))


def across_servers(runs):
    plain = Case("plain join", OFF, JOIN)
    hand = Case("hand-prefiltered, filter built in the query", OFF, BUILT)
    auto = Case("automatic (plain join text)", ON, JOIN)
    stored = [Case(f"prefiltered, {name} stored filter", OFF, PREFILTERED.format(name=name), name)
              for name in FILTERS]
    one_row = [Case(f"{name} filter shipped, 1 row per shard probed", OFF, ONE_ROW.format(name=name), name)
               for name in FILTERS]
    match_off = Case("every row matches", OFF, ALL_MATCH)
    match_on = Case("every row matches", ON, ALL_MATCH)
    forced_off = Case("every row matches, filter forced (max_pass_rate 1)", OFF + FORCED, ALL_MATCH)
    forced_on = Case("every row matches, filter forced (max_pass_rate 1)", ON + FORCED, ALL_MATCH)
    joins = [plain, hand, auto] + stored
    matches = [match_off, match_on, forced_off, forced_on]
    measure(joins + one_row + matches, runs)
    built_size = int(value("coord", "SELECT length(bloom_agg(customer_id)::bytea) FROM vip"))

    print("| query | amq.join_filter_remote | ms (median) | planning ms | vs plain | rows fetched "
          "| bytes shards→coord | bytes coord→shards | filter bytes | what ships (EXPLAIN VERBOSE) | answer |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for case in joins + one_row:
        rows = sum(fetched(s) for s in foreign_scans(case.explain["Plan"]))
        auto_size, ships = shipped(case.explain)
        if case.stored:
            size = int(value("coord", f"SELECT length(f::bytea) FROM filters WHERE name = '{case.stored}'"))
        else:
            size = built_size if case is hand else auto_size
        setting = "on" if case.setup.startswith(ON) else "off"
        vs = f"{ms(case) / ms(plain):.2f}x" if case in joins else ""
        sent, received = case.wire
        print(f"| {case.label} | {setting} | {ms(case):.0f} | {plan_ms(case):.1f} | {vs} | {rows:,} | "
              f"{received:,} | {sent:,} | {size:,} | {ships} | {case.answer} |")
    print()
    print(f"automatic / hand-prefiltered: {ratio(auto, hand)} (target <= 1.2x); "
          f"plain / automatic: {ratio(plain, auto)} (target >= 8x)")
    with_planning = [statistics.median(t + p for t, p in zip(c.times, c.plan_times)) for c in (auto, hand)]
    print(f"automatic / hand-prefiltered, planning included: {with_planning[0] / with_planning[1]:.2f}x")
    check_same(joins)
    print()

    customers = int(value("coord", "SELECT count(*) FROM customers"))
    print(f"## across servers, every order matches: the same orders JOIN customers ({customers:,} rows)")
    print("| query | amq.join_filter_remote | ms (median) | planning ms | on/off | rows fetched "
          "| bytes shards→coord | bytes coord→shards | what ships (EXPLAIN VERBOSE) | answer |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---|")
    for off, on in ((match_off, match_on), (forced_off, forced_on)):
        for case in (off, on):
            rows = sum(fetched(s) for s in foreign_scans(case.explain["Plan"]))
            _, ships = shipped(case.explain)
            sent, received = case.wire
            vs = ratio(on, off) if case is on else ""
            print(f"| {case.label} | {'on' if case is on else 'off'} | {ms(case):.0f} | {plan_ms(case):.1f} | "
                  f"{vs} | {rows:,} | {received:,} | {sent:,} | {ships} | {case.answer} |")
    print()
    print(f"every row matches, on / off: {ratio(match_on, match_off)} (target <= 1.05x); "
          f"forced: {ratio(forced_on, forced_off)}")
    check_same(matches)
    print()
    every_row_fresh(runs)
    shard_cost(runs, plain, hand, auto)


def every_row_fresh(runs):
    """Every order matches, without coordinator statistics (orders_fresh) and
    with work_mem enough for the build to send the filter of all customers:
    the filter ships by design, and each shard probes it with
    amq_join_filter_probe, which switches itself off (on), or, for a
    coordinator told its shards run 0.4.0, with bloom_contains, which probes
    every row; and the judged probe of a filter at bloom_agg's 1% instead
    of the 0.01% that amq.join_filter_remote_max_memory's 4MB allows for a
    million keys (2.95 MB against 1.24); against amq.join_filter_remote
    off."""
    off = Case("every row matches, no statistics", OFF + WIDE, FRESH_MATCH)
    on = Case("every row matches, no statistics", ON + WIDE, FRESH_MATCH)
    old = Case("every row matches, no statistics, shards told 0.4.0 (bloom_contains)", ON + WIDE + OLD_PROBE,
               FRESH_MATCH)
    coarse = Case("every row matches, no statistics, the filter at 1% (max_memory 1300kB)",
                  ON + WIDE + " SET amq.join_filter_remote_max_memory = '1300kB';", FRESH_MATCH)
    cases = [off, on, old, coarse]
    measure(cases, runs)
    print("## across servers, every order matches, no statistics on the coordinator (work_mem 64MB)")
    print("| query | amq.join_filter_remote | ms (median) | on/off | busy CPU s (median) | on/off "
          "| rows fetched | bytes coord→shards | what ships (EXPLAIN VERBOSE) | answer |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---|")
    for case in cases:
        rows = sum(fetched(s) for s in foreign_scans(case.explain["Plan"]))
        _, ships = shipped(case.explain)
        vs = ratio(case, off) if case is not off else ""
        vs_cpu = ratio(case, off, busy) if case is not off else ""
        setting = "off" if case is off else "on"
        print(f"| {case.label} | {setting} | {ms(case):.0f} | {vs} | {statistics.median(case.cpu):.2f} "
              f"| {vs_cpu} | {rows:,} | {case.wire[0]:,} | {ships} | {case.answer} |")
    print()
    print(f"every row matches without statistics, judged probe on / off: {ratio(on, off)}, busy CPU "
          f"{ratio(on, off, busy)} (target <= 1.05x); bloom_contains on / off: {ratio(old, off)}, busy CPU "
          f"{ratio(old, off, busy)}; the filter at 1% on / off: {ratio(coarse, off)}, busy CPU "
          f"{ratio(coarse, off, busy)}")
    check_same(cases)
    print()
    fresh_shard_cost(runs, off, on, old)


def fresh_shard_cost(runs, off, on, old):
    """What the shipped condition costs a shard when every row matches:
    shard1 prepares the Remote SQL of each case's scan of its orders and
    executes it as postgres_fdw's unnamed statement does, a custom plan with
    the values sent (the filter of all customers, no set, their range), under
    EXPLAIN ANALYZE; ns per row over the plain scan, medians of RUNS
    interleaved runs."""
    hex_ = value("coord", "SELECT bloom_agg(customer_id)::text FROM customers")
    top = value("coord", "SELECT max(customer_id) FROM customers")
    rows = int(value("shard1", "SELECT count(*) FROM orders"))
    # psql reads backslashes in a quoted argument as escapes: double them.
    setup = [f"\\set filt '{hex_.replace(chr(92), chr(92) * 2)}'", "SET plan_cache_mode = force_custom_plan;",
             SERIAL]
    executes = []
    for i, case in enumerate((off, on, old)):
        sql = next(s["Remote SQL"] for s in foreign_scans(case.explain["Plan"])
                   if s.get("Relation Name") == "orders_fresh_s1")
        setup.append(f"PREPARE q{i} AS {sql};")
        # $1 the filter, $2 the set (not sent: NULL), $3 and $4 the range;
        # a plan that ships nothing (the smoke run) has none.
        count = max((int(n) for n in re.findall(r"\$(\d+)::", sql)), default=0)
        values = [":'filt'", "NULL", "0", top][:count]
        args = f"({', '.join(values)})" if values else ""
        executes.append((case.label + (" (the filter off)" if case is off else ""),
                         f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) EXECUTE q{i}{args};"))
    shard_costs(f"## on one shard, every row matching: the shipped condition over its {rows:,} orders "
                "(a custom plan, as postgres_fdw's)", runs,
                [(label, "\n".join(setup + [execute])) for label, execute in executes], rows)


def shard_costs(title, runs, statements, rows):
    """Runs each (label, psql input ending in an EXPLAIN ANALYZE in JSON) of
    statements on shard1 RUNS times, interleaved (every other round in
    reverse order), and prints under title each one's median execution time
    and its ns per row of rows over the first one's, the plain scan's."""
    times = {label: [] for label, _ in statements}
    for round_ in range(runs):
        for label, sql in statements if round_ % 2 == 0 else statements[::-1]:
            lines = psql("shard1", sql)
            times[label].append(json.loads("\n".join(lines[lines.index("["):]))[0]["Execution Time"])
    base = statistics.median(times[statements[0][0]])
    print(title)
    print("| shard query (Remote SQL of) | ms (median) | ns per row over the plain scan |")
    print("|---|---:|---:|")
    for label, _ in statements:
        t = statistics.median(times[label])
        print(f"| {label} | {t:.0f} | {(t - base) * 1e6 / rows:.1f} |")
    print()


def shard_cost(runs, plain, hand, auto):
    """The per-row cost on a shard of what each case ships: shard1 runs the
    Remote SQL of the plain, hand-prefiltered and automatic cases' scans of
    its orders (from their EXPLAIN VERBOSE), with the filter parameter as a
    scalar subquery over a stored copy of the vip filter (the value
    postgres_fdw would bind), under count(*); ns per row over the plain
    scan's, medians of RUNS interleaved runs."""
    psql("shard1", "CREATE TABLE probe_filter AS SELECT NULL::bloom AS f;")
    hex_ = value("coord", "SELECT bloom_agg(customer_id)::text FROM vip")
    psql("shard1", f"UPDATE probe_filter SET f = '{hex_}'::bloom;")
    rows = int(value("shard1", "SELECT count(*) FROM orders"))
    queries = []
    for case in (plain, hand, auto):
        sql = next(s["Remote SQL"] for s in foreign_scans(case.explain["Plan"])
                   if s.get("Relation Name") == "orders_s1")
        # The filter's parameter from the stored copy; the exact set's and
        # range's (which 10,000 keys do not send as a set) NULL, as sent.
        sql = re.sub(r"\$(?!1::)\d+::", "NULL::", sql)
        queries.append((case.label, "SELECT count(*) FROM (" +
                        sql.replace("$1::pg_catalog.bytea::public.bloom", "(SELECT f FROM public.probe_filter)")
                        .replace("$1::pg_catalog.bytea IS NULL", "(SELECT f FROM public.probe_filter) IS NULL")
                        .replace("$1::public.bloom", "(SELECT f FROM public.probe_filter)") + ") s"))
    shard_costs(f"## on one shard: the shipped condition over its {rows:,} orders", runs,
                [(label, f"{SERIAL} EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {query};")
                 for label, query in queries], rows)


def fuse_vs_bloom(runs):
    """Binary fuse filters against blocked Bloom filters as the filter
    shipped to the shards (amq.join_filter_remote_filter, issue #34 item 4),
    side by side: the selective join with 10,000 and 100,000 vip keys, and
    every order matching without coordinator statistics (1M keys, work_mem
    64MB, the filter ships by design); server time, busy CPU, rows fetched,
    the filter's bytes and the bytes sent to the shards. Then what the
    shipped condition costs a shard per row where every row matches, with
    each kind's filter of every customer at the rate the build ships
    (0.01%: 16-bit fingerprints for fuse)."""
    psql("coord", "CREATE TABLE vip100k AS SELECT customer_id FROM customers "
                  "WHERE customer_id % 10 = 0; ANALYZE vip100k;")
    pairs = [(Case(f"{label}, Bloom", setup, query), Case(f"{label}, binary fuse", setup + FUSE, query))
             for label, setup, query in (("10,000 vip keys", ON, JOIN), ("100,000 keys", ON, JOIN_100K),
                                         ("every row matches, no statistics", ON + WIDE, FRESH_MATCH))]
    cases = [c for pair in pairs for c in pair]
    measure(cases, runs)
    print("## across servers: binary fuse against Bloom filters shipped to the shards")
    print("| query | filter | ms (median) | fuse/Bloom | busy CPU s (median) | fuse/Bloom | rows fetched "
          "| filter bytes | bytes coord→shards | what ships (EXPLAIN VERBOSE) | answer |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for bloom, fuse in pairs:
        for case in (bloom, fuse):
            rows = sum(fetched(s) for s in foreign_scans(case.explain["Plan"]))
            size, ships = shipped(case.explain)
            vs = ratio(fuse, bloom) if case is fuse else ""
            vs_cpu = ratio(fuse, bloom, busy) if case is fuse else ""
            print(f"| {case.label} | {'fuse' if case is fuse else 'bloom'} | {ms(case):.0f} | {vs} | "
                  f"{statistics.median(case.cpu):.2f} | {vs_cpu} | {rows:,} | {size:,} | {case.wire[0]:,} "
                  f"| {ships} | {case.answer} |")
        check_same([bloom, fuse])
    print()
    # A fuse build of every customer holds them all at once (about 24 MB).
    hexes = {kind: value("coord", f"{WIDE} SELECT {kind}_agg(customer_id, 0.0001)::text FROM customers")
             for kind in ("bloom", "fuse")}
    top = value("coord", "SELECT max(customer_id) FROM customers")
    rows = int(value("shard1", "SELECT count(*) FROM orders"))
    fresh = [c for pair in pairs[2:] for c in pair]
    statements = [("the plain scan (the filter NULL)", fresh[0], "bloom", "NULL")] + [
        (case.label, case, kind, ":'filt'") for case, kind in zip(fresh, ("bloom", "fuse"))]
    runs_sql = []
    for label, case, kind, filt in statements:
        sql = next(s["Remote SQL"] for s in foreign_scans(case.explain["Plan"])
                   if s.get("Relation Name") == "orders_fresh_s1")
        count = max((int(n) for n in re.findall(r"\$(\d+)::", sql)), default=0)
        values = [filt, "NULL", "0", top][:count]
        args = f"({', '.join(values)})" if values else ""
        # psql reads backslashes in a quoted argument as escapes: double them.
        runs_sql.append((label, "\n".join([
            f"\\set filt '{hexes[kind].replace(chr(92), chr(92) * 2)}'",
            "SET plan_cache_mode = force_custom_plan;", SERIAL, f"PREPARE q AS {sql};",
            f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) EXECUTE q{args};"])))
    shard_costs(f"## on one shard, every row matching: the shipped condition over its {rows:,} orders, "
                f"Bloom ({len(hexes['bloom']) // 2 - 1:,} B) against binary fuse "
                f"({len(hexes['fuse']) // 2 - 1:,} B) at 0.01%", runs, runs_sql, rows)


def key_sets(runs, sizes):
    """Exact key sets against Bloom filters, to choose
    amq.join_filter_remote_max_set_keys and to compare the automatic filter
    with the best hand-written query: orders JOIN a table of n customers
    (spread over all of them) with an index on the shards' customer_id,
    plain (remote filters off), with the Bloom filter only (max_set_keys 0),
    with the exact set (max_set_keys n), automatic (the defaults), and
    hand-written as a literal IN list that postgres_fdw ships, side by
    side, each in a fresh session (its connections to the shards opened, and
    amq loaded there, during the query); then automatic and the IN list in
    a warm session (the same query run once before, as a pooled connection
    runs it)."""
    for shard in ("shard1", "shard2"):
        psql(shard, "CREATE INDEX IF NOT EXISTS orders_customer ON orders (customer_id); ANALYZE orders;")
    customers = int(value("coord", "SELECT count(*) FROM customers"))
    rows = []
    # Sizes past the customers (the smoke run's 10,000) would repeat keys.
    for n in [n for n in sizes if n <= customers]:
        psql("coord", f"""CREATE TABLE keys_{n} AS SELECT (c * {customers // n})::bigint AS customer_id
                           FROM generate_series(0, {n - 1}) c; ANALYZE keys_{n};""")
        query = f"SELECT count(*), sum(o.amount) FROM orders o JOIN keys_{n} k USING (customer_id)"
        keys = value("coord", f"SELECT array_agg(customer_id ORDER BY customer_id) FROM keys_{n}")
        listed = f"SELECT count(*), sum(o.amount) FROM orders o WHERE o.customer_id = ANY('{keys}'::bigint[])"
        max_keys = " SET amq.join_filter_remote_max_set_keys = {};"
        rows.append((n, [Case("plain", OFF, query),
                         Case("Bloom filter only", ON + max_keys.format(0), query),
                         Case("exact set", ON + max_keys.format(n), query),
                         Case("automatic (defaults)", ON, query),
                         Case("hand-written IN list", OFF, listed),
                         Case("automatic, warm session", ON + f" {query} \\g /dev/null\n", query),
                         Case("hand-written IN list, warm session", OFF + f" {listed} \\g /dev/null\n",
                              listed)]))
    measure([case for _, cases in rows for case in cases], runs)
    print("## across servers: exact key sets against Bloom filters (an index on the shards' customer_id)")
    print("| inner keys | query | ms (median) | vs plain | vs IN list | rows fetched | bytes coord→shards "
          "| what ships (EXPLAIN VERBOSE) | answer |")
    print("|---:|---|---:|---:|---:|---:|---:|---|---|")
    for n, cases in rows:
        plain, listed, warm_list = cases[0], cases[4], cases[6]
        for case in cases:
            fetched_rows = sum(fetched(s) for s in foreign_scans(case.explain["Plan"]))
            _, ships = shipped(case.explain)
            vs_plain = ratio(case, plain) if case is not plain else ""
            against = warm_list if "warm" in case.label else listed
            vs_list = ratio(case, against) if case is not against else ""
            print(f"| {n:,} | {case.label} | {ms(case):.1f} | {vs_plain} | {vs_list} | {fetched_rows:,} | "
                  f"{case.wire[0]:,} | {ships} | {case.answer} |")
        check_same(cases)
    print()


def one_node(runs, fact):
    """A join whose build side (fact / 10 dimension rows; 500k by default)
    outgrows work_mem."""
    psql("coord", f"""
        CREATE TABLE fact AS SELECT i AS id, (i * 7919) % {fact} AS customer_id,
          (i % 1000) / 10.0 AS amount FROM generate_series(1::bigint, {fact}) i;
        CREATE TABLE dim AS SELECT c AS customer_id, md5(c::text) AS name
          FROM generate_series(0, {fact - 1}, 10) c;
        ANALYZE fact, dim;
        INSERT INTO filters SELECT 'dim', bloom_agg(customer_id, 0.01) FROM dim;""")
    join = "SELECT count(*), round(sum(f.amount), 2), max(d.name) FROM fact f JOIN dim d USING (customer_id)"
    cases = [("plain", join),
             ("prefiltered, stored filter",
              join + " WHERE bloom_contains((SELECT f FROM filters WHERE name = 'dim'), f.customer_id)"),
             ("prefiltered, filter built in the query",
              join + " WHERE bloom_contains((SELECT bloom_agg(customer_id) FROM dim), f.customer_id)")]
    print("| work_mem | query | ms (median) | vs plain | hash batches | answer |")
    print("|---|---|---:|---:|---:|---|")
    for work_mem in ("4MB", "1GB"):
        setup = f"{NO_JOIN_FILTER} SET work_mem = '{work_mem}';"
        times = {}
        for _ in range(runs):
            for label, query in cases:
                lines = psql("coord", f"{setup}{SERIAL} EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) {query};")
                times.setdefault(label, []).append(
                    float([ln for ln in lines if "Execution Time" in ln][0].split()[2]))
        plain_ms = statistics.median(times["plain"])
        for label, query in cases:
            lines = psql("coord", f"{setup}{SERIAL} EXPLAIN (ANALYZE, TIMING OFF) {query};")
            batches = [ln.split("Batches: ")[1].split()[0] for ln in lines if "Batches:" in ln]
            ms = statistics.median(times[label])
            answer = psql("coord", f"{setup}{SERIAL} {query};")[0]
            print(f"| {work_mem} | {label} | {ms:.0f} | {ms / plain_ms:.2f}x | {batches[0]} | {answer} |")
    print()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--customers", type=int, default=1000000)
    parser.add_argument("--fact", type=int, default=5000000, help="rows of the one-node join's fact table")
    parser.add_argument("--set-sizes", default="100,1000,10000,100000",
                        help="inner keys of the exact-set table")
    parser.add_argument("--only", choices=("sets", "matches", "fuse"),
                        help="only the exact-set table, only every row matching without statistics, "
                             "or only binary fuse against Bloom filters")
    args = parser.parse_args()
    setup_coordinator(args.customers)
    rows = sum(int(value(shard, "SELECT count(*) FROM orders")) for shard in ("shard1", "shard2"))
    keys = int(value("coord", "SELECT count(*) FROM vip"))
    if args.only == "matches":
        every_row_fresh(args.runs)
        return
    if args.only == "fuse":
        fuse_vs_bloom(args.runs)
        return
    if args.only != "sets":
        print(f"## across servers: {rows:,} orders on 2 shards, {keys:,} vip keys")
        across_servers(args.runs)
    key_sets(args.runs, [int(n) for n in args.set_sizes.split(",")])
    if args.only != "sets":
        print(f"## one node: fact {args.fact:,} rows JOIN dim {args.fact // 10:,} rows")
        one_node(args.runs, args.fact)


if __name__ == "__main__":
    main()
