"""Join prefiltering benchmark (driven by bench/multi/run.sh, which starts a
coordinator and two shards and loads orders, ROWS rows over the shards).

1. Across servers: 10,000 local vip customers joined with the shards'
   orders over TCP, plain and with a stored Bloom filter shipped in Remote
   SQL (fpr 0.01, and the same keys in filters padded to 1 MiB and 64 MiB):
   server time, rows fetched from the shards, and bytes each way on the wire
   (counted by a relay, bench/multi/proxy.py, in a separate run per case);
   and the filter's shipping alone: the same filter against a one-row
   table on each shard (sent as text, parsed at Bind, one probe).
2. One node: a 5M-row fact table joined with a 500k-row dimension whose hash
   table is larger than work_mem, plain and prefiltered, at work_mem 4MB
   (the default) and 1GB.

Timings are medians of RUNS runs, interleaved; EXPLAIN ANALYZE's execution
time with TIMING OFF. Usage: bench.py [--runs N] [--customers N] [--fact N]
(the one-node fact table's rows, 5M by default). AMQ_BENCH_SMOKE=1 (make
test's bench suite, which only checks that it runs) leaves the 64 MiB filter
out of the across-servers table: shipping it takes seconds a case.
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "multi"))
from nodes import fetched, foreign_scans, plan, port, psql, value  # noqa: E402
from proxy import Relay  # noqa: E402

JOIN = ("SELECT count(*), sum(o.amount) FROM orders o JOIN vip v USING (customer_id)")
PREFILTERED = JOIN + " WHERE bloom_contains((SELECT f FROM filters WHERE name = '{name}'), o.customer_id)"
# The filter's shipping alone: a one-row table on each shard.
ONE_ROW = ("SELECT count(*), NULL FROM (SELECT customer_id FROM one_s1 UNION ALL SELECT customer_id "
           "FROM one_s2) o WHERE bloom_contains((SELECT f FROM filters WHERE name = '{name}'), o.customer_id)")
SERIAL = "SET max_parallel_workers_per_gather = 0;"
FILTERS = ("vip", "1MiB") if os.environ.get("AMQ_BENCH_SMOKE") == "1" else ("vip", "1MiB", "64MiB")


def setup_coordinator(customers):
    """vip (10,000 customers) and its filters: fpr 0.01 sized for the keys,
    and the same keys in filters of about 1 MiB and 64 MiB."""
    psql("coord", f"""
        CREATE TABLE vip AS SELECT c AS customer_id FROM generate_series(0, {customers - 1},
          {customers // 10000}) c;
        ANALYZE vip;
        CREATE TABLE filters (name text PRIMARY KEY, f bloom NOT NULL);
        INSERT INTO filters SELECT 'vip', bloom_agg(customer_id, 0.01) FROM vip;
        INSERT INTO filters SELECT '1MiB', bloom_agg(customer_id, 0.01, 875000) FROM vip;
        INSERT INTO filters SELECT '64MiB', bloom_agg(customer_id, 0.01, 56000000) FROM vip;
        CREATE FOREIGN TABLE one_s1 (customer_id bigint) SERVER shard1 OPTIONS (table_name 'one');
        CREATE FOREIGN TABLE one_s2 (customer_id bigint) SERVER shard2 OPTIONS (table_name 'one');""")
    for shard in ("shard1", "shard2"):
        psql(shard, "CREATE TABLE one AS SELECT 1::bigint AS customer_id;")


def wire_bytes(relays, query):
    """Bytes coordinator->shards and shards->coordinator for one run of query
    in a fresh session through the counting relays."""
    for relay in relays:
        relay.reset()
    psql("coord", f"{SERIAL} {query};")
    return sum(r.sent for r in relays), sum(r.received for r in relays)


def across_servers(runs):
    cases = [("plain join", JOIN, None)] + [
        (f"prefiltered, {name} filter", PREFILTERED.format(name=name), name)
        for name in FILTERS] + [
        (f"{name} filter shipped, 1 row per shard probed", ONE_ROW.format(name=name), name)
        for name in FILTERS]
    results = {}
    for _ in range(runs):
        for label, query, _ in cases:
            lines = psql("coord", f"{SERIAL} EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) {query};")
            results.setdefault(label, []).append(
                float([ln for ln in lines if "Execution Time" in ln][0].split()[2]))
    answers = {label: psql("coord", f"{SERIAL} {query};")[0] for label, query, _ in cases}
    relays = [Relay(port(shard)) for shard in ("shard1", "shard2")]
    for shard, relay in zip(("shard1", "shard2"), relays):
        psql("coord", f"ALTER SERVER {shard} OPTIONS (SET port '{relay.port}');")
    try:
        wire = {label: wire_bytes(relays, query) for label, query, _ in cases}
    finally:
        for shard in ("shard1", "shard2"):
            psql("coord", f"ALTER SERVER {shard} OPTIONS (SET port '{port(shard)}');")
    plain_ms = statistics.median(results["plain join"])
    print("| query | ms (median) | vs plain | rows fetched | bytes shards→coord | bytes coord→shards "
          "| filter bytes | answer |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for label, query, name in cases:
        ms = statistics.median(results[label])
        scans = foreign_scans(plan("coord", query, True, SERIAL))
        rows = sum(fetched(s) for s in scans)
        size = int(value("coord", f"SELECT length(f::bytea) FROM filters WHERE name = '{name}'")) if name else 0
        sent, received = wire[label]
        print(f"| {label} | {ms:.0f} | {ms / plain_ms:.2f}x | {rows:,} | {received:,} | {sent:,} | "
              f"{size:,} | {answers[label]} |")
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
        setup = f"SET work_mem = '{work_mem}';"
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
    args = parser.parse_args()
    setup_coordinator(args.customers)
    rows = sum(int(value(shard, "SELECT count(*) FROM orders")) for shard in ("shard1", "shard2"))
    keys = int(value("coord", "SELECT count(*) FROM vip"))
    print(f"## across servers: {rows:,} orders on 2 shards, {keys:,} vip keys")
    across_servers(args.runs)
    print(f"## one node: fact {args.fact:,} rows JOIN dim {args.fact // 10:,} rows")
    one_node(args.runs, args.fact)


if __name__ == "__main__":
    main()
