# Sourced by the PostgreSQL suites and benchmarks: throwaway PostgreSQL
# clusters ("nodes") under one fresh temporary directory, AMQ_PG_ROOT, each
# with its own data directory, log, unix socket and port. A node listens on
# its socket only, or on TCP too (tests/multi, bench/multi).
#
# One cluster (tests/pg/run.sh, tests/interop/run.sh, bench/pg/run.sh):
#   amq_cluster_start   start node "main" on its socket; sets AMQ_PG_DIR,
#                       AMQ_PG_PORT, PGHOST, PGPORT, PGUSER, PGDATABASE
#   amq_cluster_stop    stop every node and remove AMQ_PG_ROOT (safe to call
#                       twice, and from a trap)
#   amq_psql ARGS...    psql -X -v ON_ERROR_STOP=1 (against PGHOST/PGPORT)
#   amq_suite_setup T.. make targets T, then amq_cluster_start, or fail the suite
#
# Several clusters (node state lives in files, so a child process that has
# AMQ_PG_ROOT in its environment can source this file and drive them too):
#   amq_node_start NAME [LISTEN]  initdb on first use, then start; LISTEN is
#                       listen_addresses ('' = socket only, the default; kept
#                       for restarts, as is the port)
#   amq_node_stop NAME [MODE]     pg_ctl stop -m MODE (default fast)
#   amq_node_dir NAME, amq_node_port NAME, amq_node_pid NAME (postmaster)
#   amq_node_psql NAME ARGS...    amq_psql against that node as postgres
#   amq_nodes_stop      = amq_cluster_stop
#
# As root the clusters belong to the `postgres` user, since initdb and the
# server refuse to run as root (AMQ_AS is the command prefix that runs a
# program as the clusters' owner). Extra server settings: AMQ_PG_OPTS.

# The server the Makefile builds for (it exports PG_CONFIG); run alone, the
# pg_config on PATH, else the newest Debian server installed.
PG_CONFIG=${PG_CONFIG:-$(command -v pg_config || ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -n 1)}
AMQ_PG_BINDIR=$("$PG_CONFIG" --bindir)

if [ "$(id -u)" = 0 ]; then
	AMQ_AS="runuser -u postgres --"
else
	AMQ_AS=""
fi

# A TCP port nothing listens on 127.0.0.1 now.
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

amq_node_dir() {
	echo "$AMQ_PG_ROOT/$1"
}

amq_node_port() {
	cat "$AMQ_PG_ROOT/$1/port"
}

# The postmaster's process id (first line of postmaster.pid).
amq_node_pid() {
	head -n 1 "$AMQ_PG_ROOT/$1/data/postmaster.pid"
}

# Creates the node (directory, port, initdb) on first use, then starts it and
# waits until it accepts connections. A port taken between the check and
# the start is retried with another one, on first use only.
amq_node_start() {
	local name=$1 dir tries
	if [ -z "${AMQ_PG_ROOT:-}" ]; then
		AMQ_PG_ROOT=$(mktemp -d /tmp/amq-pg.XXXXXX) || return 1
		chmod 755 "$AMQ_PG_ROOT"
		export AMQ_PG_ROOT
	fi
	dir=$AMQ_PG_ROOT/$name
	if [ ! -d "$dir/data" ]; then
		mkdir -p "$dir" && chmod 755 "$dir"
		[ -n "$AMQ_AS" ] && chown postgres: "$dir"
		echo "${2:-}" >"$dir/listen"
		if ! $AMQ_AS "$AMQ_PG_BINDIR/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 \
			--no-locale >"$dir/initdb.log" 2>&1; then
			cat "$dir/initdb.log" >&2
			return 1
		fi
		tries=3
	else
		tries=1
	fi
	for _ in $(seq 1 "$tries"); do
		[ "$tries" = 1 ] || amq_free_port >"$dir/port" || { echo "no free port" >&2; return 1; }
		if $AMQ_AS "$AMQ_PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
			-o "-c listen_addresses='$(cat "$dir/listen")' -k $dir -p $(cat "$dir/port") ${AMQ_PG_OPTS:-}" \
			start >/dev/null; then
			return 0
		fi
	done
	tail -n 20 "$dir/server.log" >&2
	return 1
}

amq_node_stop() {
	local dir=$AMQ_PG_ROOT/$1
	[ -f "$dir/data/postmaster.pid" ] || return 0
	$AMQ_AS "$AMQ_PG_BINDIR/pg_ctl" -D "$dir/data" -m "${2:-fast}" -w stop >/dev/null 2>&1
}

amq_node_psql() {
	local name=$1
	shift
	amq_psql -h "$AMQ_PG_ROOT/$name" -p "$(amq_node_port "$name")" -U postgres "$@"
}

amq_nodes_stop() {
	[ -n "${AMQ_PG_ROOT:-}" ] || return 0
	local dir
	for dir in "$AMQ_PG_ROOT"/*/; do
		[ -d "$dir/data" ] && amq_node_stop "$(basename "$dir")"
	done
	rm -rf "$AMQ_PG_ROOT"
	AMQ_PG_ROOT=""
	AMQ_PG_DIR=""
}

amq_cluster_start() {
	amq_node_start main || return 1
	AMQ_PG_DIR=$(amq_node_dir main)
	AMQ_PG_PORT=$(amq_node_port main)
	export PGHOST=$AMQ_PG_DIR PGPORT=$AMQ_PG_PORT PGUSER=postgres PGDATABASE=postgres
}

amq_cluster_stop() {
	amq_nodes_stop
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
