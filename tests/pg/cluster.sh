# Sourced by tests/pg/run.sh, tests/interop/run.sh and bench/pg/run.sh: a
# throwaway PostgreSQL cluster in a fresh temporary directory, reachable only
# through a unix socket in that directory, on a port of its own.
#
#   amq_cluster_start   initdb + start; sets AMQ_PG_DIR, AMQ_PG_PORT, PGHOST,
#                       PGPORT, PGUSER, PGDATABASE and AMQ_AS (the command
#                       prefix that runs a program as the cluster's owner)
#   amq_cluster_stop    stop the server and remove the directory (safe to call
#                       twice, and from a trap)
#   amq_psql ARGS...    psql -X -v ON_ERROR_STOP=1 against the cluster
#   amq_suite_setup T.. make targets T, then amq_cluster_start, or fail the suite
#
# As root the cluster belongs to the `postgres` user, since initdb and the
# server refuse to run as root. Extra server settings: AMQ_PG_OPTS.

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
AMQ_PG_BINDIR=$("$PG_CONFIG" --bindir)

if [ "$(id -u)" = 0 ]; then
	AMQ_AS="runuser -u postgres --"
else
	AMQ_AS=""
fi

# A TCP port nothing listens on (the socket lives in our own directory, so
# this only keeps the port unique for tools that look at it).
amq_free_port() {
	local port
	for _ in $(seq 1 100); do
		port=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	return 1
}

amq_cluster_start() {
	AMQ_PG_DIR=$(mktemp -d /tmp/amq-pg.XXXXXX) || return 1
	chmod 755 "$AMQ_PG_DIR"
	[ -n "$AMQ_AS" ] && chown postgres: "$AMQ_PG_DIR"
	AMQ_PG_PORT=$(amq_free_port) || { echo "no free port" >&2; return 1; }
	if ! $AMQ_AS "$AMQ_PG_BINDIR/initdb" -D "$AMQ_PG_DIR/data" -U postgres -A trust -E UTF8 \
		--no-locale >"$AMQ_PG_DIR/initdb.log" 2>&1; then
		cat "$AMQ_PG_DIR/initdb.log" >&2
		return 1
	fi
	if ! $AMQ_AS "$AMQ_PG_BINDIR/pg_ctl" -D "$AMQ_PG_DIR/data" -l "$AMQ_PG_DIR/server.log" -w \
		-o "-c listen_addresses='' -k $AMQ_PG_DIR -p $AMQ_PG_PORT ${AMQ_PG_OPTS:-}" \
		start >/dev/null; then
		cat "$AMQ_PG_DIR/server.log" >&2
		return 1
	fi
	export PGHOST=$AMQ_PG_DIR PGPORT=$AMQ_PG_PORT PGUSER=postgres PGDATABASE=postgres
}

amq_cluster_stop() {
	[ -n "${AMQ_PG_DIR:-}" ] || return 0
	if [ -f "$AMQ_PG_DIR/data/postmaster.pid" ]; then
		$AMQ_AS "$AMQ_PG_BINDIR/pg_ctl" -D "$AMQ_PG_DIR/data" -m fast -w stop >/dev/null 2>&1
	fi
	rm -rf "$AMQ_PG_DIR"
	AMQ_PG_DIR=""
}

amq_psql() {
	"$AMQ_PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 "$@"
}

# For test suites: builds the make targets given (output shown only on
# failure), then starts the cluster with a trap that stops it. On failure it
# prints the suite's result line, one failed test, and exits.
amq_suite_setup() {
	local log
	log=$(mktemp)
	if ! make --no-print-directory "$@" PG_CONFIG="$PG_CONFIG" >"$log" 2>&1; then
		cat "$log"
		rm -f "$log"
		echo "make $* failed"
		echo "0 passed, 1 failed"
		exit 1
	fi
	rm -f "$log"
	trap amq_cluster_stop EXIT
	if ! amq_cluster_start; then
		echo "could not start a temporary PostgreSQL cluster"
		echo "0 passed, 1 failed"
		exit 1
	fi
}
