#!/usr/bin/env bash
# Join-filter benchmark (not a test). Loads the star schema of gen.sql once
# into a kept cluster directory (AMQ_JOIN_BENCH_DIR, default
# /tmp/amq-join-bench; generating 10M rows takes minutes on 2 cores), starts
# it on a private socket, runs bench.py and stops it again (the data stays).
# `make bench-join` runs it after `make install`. AMQ_BENCH_SMOKE=1 (make
# test's bench suite, which only checks that it runs) generates a thousandth of
# the data into a throwaway directory instead, removed on exit.
set -u
cd "$(dirname "$0")/../.."
. tests/pg/cluster.sh
dir=${AMQ_JOIN_BENCH_DIR:-/tmp/amq-join-bench}
scale=1
if [ "${AMQ_BENCH_SMOKE:-}" = 1 ]; then
	dir=$(mktemp -d /tmp/amq-join-smoke.XXXXXX) || exit 1
	scale=0.001
fi
opts="-c shared_buffers=2GB -c max_parallel_workers_per_gather=0 -c jit=off \
-c max_wal_size=8GB -c checkpoint_timeout=30min"
port=$(amq_free_port)
fresh=0
if [ ! -f "$dir/data/PG_VERSION" ]; then
	mkdir -p "$dir" && chmod 755 "$dir"
	[ -n "$AMQ_AS" ] && chown postgres: "$dir"
	$AMQ_AS "$AMQ_PG_BINDIR/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale \
		>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; exit 1; }
	fresh=1
fi
stop() {
	$AMQ_AS "$AMQ_PG_BINDIR/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1
	[ "$scale" = 1 ] || rm -rf "$dir"
}
trap stop EXIT
$AMQ_AS "$AMQ_PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
	-o "-c listen_addresses='' -k $dir -p $port $opts" start >/dev/null ||
	{ cat "$dir/server.log"; exit 1; }
export PGHOST=$dir PGPORT=$port PGUSER=postgres PGDATABASE=postgres
if [ "$fresh" = 1 ]; then
	echo "generating the star schema (once) ..."
	amq_psql -v scale="$scale" -f bench/join/gen.sql >/dev/null || exit 1
fi
amq_psql -v scale="$scale" -f bench/join/gen_partitioned.sql >/dev/null || exit 1
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
lscpu | grep -E 'Model name|^CPU\(s\)'
AMQ_PSQL="$AMQ_PG_BINDIR/psql" /usr/bin/python3 bench/join/bench.py "$@"
