#!/usr/bin/env bash
# Moving a database between PostgreSQL major versions never loses a filter:
# stored filters go from a PostgreSQL 15 server on the host into the newer
# PostgreSQL of a Debian root (tests/versions/roots.sh), the way users move
# them. Usage: major.sh NAME (trixie: 17, sid: 18, experimental: 19).
#
# tests/versions/run.sh calls it after it has installed amq inside the root;
# run alone, it installs amq there first when the root has none (a copy of
# this tree in ROOT/amq, built with the root's compilers). It builds and
# installs amq for the host's PostgreSQL 15 (make install), starts a 15
# server (wal_level=logical) and the root's server (as the root's postgres
# user, inside the chroot), both on TCP 127.0.0.1 (the chroot shares the
# host's network), and runs tests/versions/major.py, which checks:
#   - pg_dump -Fc of the newer version (run inside the root, against the 15
#     server) and pg_restore into the newer server: every bloom layout
#     (blocked, classic, counting, scalable) and cuckoo layout (b2, b4, b8,
#     semisorted), over nine value types, comes back with the same bytes and
#     the same answers (contains, counts, info) over 4,000 probes; the indexes
#     (a key column, an expression over bloom_count) and the views are there
#     and answer as on 15;
#   - binary and text COPY from 15 into the newer version (and back) keep
#     every layout's bytes (send/recv, in/out), and a corrupted value is
#     refused by the receive function;
#   - logical replication of a table with bloom, cuckoo and bloom[] columns
#     from 15 into the newer version with binary = true: the initial sync and a
#     later INSERT, UPDATE and DELETE arrive with the same bytes, and 15's
#     pgoutput sends the bloom column in binary.
# One "ok - ..." or "not ok - ..." line per check, then "N passed, N failed".
# Stops both servers, removes their directories and unmounts what it mounted
# on every exit path. Needs root (chroot).
set -u
cd "$(dirname "$0")/../.."
. tests/versions/roots.sh

name=${1:-}
if [ -z "$name" ] || ! pg=$(amq_root_pg "$name"); then
	echo "usage: $0 trixie|sid|experimental"
	echo "0 passed, 1 failed"
	exit 1
fi
fail_setup() {
	echo "not ok - $*"
	echo "0 passed, 1 failed"
	exit 1
}
[ "$(id -u)" = 0 ] || fail_setup "PostgreSQL $pg ($name root): needs root (chroot)"
root=$(amq_root_dir "$name")
[ -f "$root/.amq-ready" ] ||
	fail_setup "PostgreSQL $pg ($name root): no root in $root (tests/versions/run.sh makes it)"
pg_config=/usr/lib/postgresql/$pg/bin/pg_config
# The host's nodes (PostgreSQL 15): tests/pg/cluster.sh, in a directory of
# their own (never one a caller's AMQ_PG_ROOT names).
unset AMQ_PG_ROOT
PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
. tests/pg/cluster.sh

# Cleanup on every exit path: the root's server, the host's server, the work
# directory inside the root (never a plain rm -rf under a root: /dev/shm may
# be bound inside it), then what this script mounted.
dst_pgroot=""
work_in=""
work=""
unmount=""
cleanup() {
	if [ -n "$dst_pgroot" ] && [ -f "$root$dst_pgroot/dst/data/postmaster.pid" ]; then
		amq_root_run "$name" "export PG_CONFIG=$pg_config AMQ_PG_ROOT=$dst_pgroot;
			. $work_in/cluster.sh; amq_node_stop dst || amq_node_stop dst immediate" >/dev/null 2>&1
	fi
	[ -n "$dst_pgroot" ] && rm -rf --one-file-system "${root:?}$dst_pgroot"
	amq_nodes_stop
	[ -n "$work" ] && rm -rf --one-file-system "$work"
	if [ -n "$unmount" ]; then
		if root_in_use; then
			echo "# left proc and /dev/shm mounted in $root: other processes run there"
		else
			amq_root_unmount "$name"
		fi
	fi
}
# True when a process (another run of the matrix, say) runs inside the root:
# what this script mounted may have become theirs too.
root_in_use() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$(realpath "$root")" ] && return 0
	done
	return 1
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# proc and /dev/shm inside the root (parallel query needs the shared memory).
if ! mountpoint -q "$root/proc" || ! mountpoint -q "$root/dev/shm"; then
	unmount=1
	amq_root_mount "$name" || fail_setup "cannot mount proc and /dev/shm in $root"
fi

# amq in the root's PostgreSQL: run.sh has installed it; run alone, this
# installs it when it is missing, or always with AMQ_MAJOR_INSTALL=1.
if [ "${AMQ_MAJOR_INSTALL:-}" = 1 ] || [ ! -f "$root/usr/share/postgresql/$pg/extension/amq.control" ] ||
	[ ! -f "$root/usr/lib/postgresql/$pg/lib/amq.so" ]; then
	echo "# make install of this tree in the $name root"
	rm -rf --one-file-system "$root/amq"
	mkdir -p "$root/amq"
	git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$root/amq"
	log=$(mktemp)
	if ! amq_root_run "$name" "cd /amq && make --no-print-directory -j2 install PG_CONFIG=$pg_config" \
		>"$log" 2>&1; then
		tail -n 30 "$log"
		rm -f "$log"
		fail_setup "make install in the $name root"
	fi
	rm -f "$log"
fi

# amq in the host's PostgreSQL 15, and its server (logical WAL for the
# publication).
log=$(mktemp)
if ! make --no-print-directory install PG_CONFIG="$PG_CONFIG" >"$log" 2>&1; then
	tail -n 30 "$log"
	rm -f "$log"
	fail_setup "make install for the host's PostgreSQL 15"
fi
rm -f "$log"
AMQ_PG_OPTS="-c wal_level=logical -c max_wal_senders=10 -c max_replication_slots=10" \
	amq_node_start src 127.0.0.1 || fail_setup "start a PostgreSQL 15 server on the host"
src_port=$(amq_node_port src)

# The root's server: tests/pg/cluster.sh run inside the chroot, its nodes
# under the root's /tmp (a directory made here, so cleanup knows it).
work=$(mktemp -d "$root/tmp/amq-major.XXXXXX") || fail_setup "mktemp in $root/tmp"
chmod 755 "$work"
work_in=${work#"$root"}
cp tests/pg/cluster.sh "$work/cluster.sh"
dst_pgroot_host=$(mktemp -d "$root/tmp/amq-pg.XXXXXX") || fail_setup "mktemp in $root/tmp"
chmod 755 "$dst_pgroot_host"
dst_pgroot=${dst_pgroot_host#"$root"}
# wal_level=logical there too: the restored publication warns otherwise.
if ! amq_root_run "$name" "export PG_CONFIG=$pg_config AMQ_PG_ROOT=$dst_pgroot \
	AMQ_PG_OPTS='-c wal_level=logical';
	. $work_in/cluster.sh && amq_node_start dst 127.0.0.1" 2>&1; then
	fail_setup "start PostgreSQL $pg in the $name root"
fi
dst_port=$(cat "$dst_pgroot_host/dst/port")

echo "# PostgreSQL 15 on port $src_port, $pg in the $name root on port $dst_port: up after ${SECONDS} s"
AMQ_MAJOR_ROOT=$root AMQ_MAJOR_PG=$pg AMQ_MAJOR_WORK=$work_in \
	AMQ_MAJOR_SRC_BINDIR=$AMQ_PG_BINDIR AMQ_MAJOR_SRC_PORT=$src_port \
	AMQ_MAJOR_DST_BINDIR=/usr/lib/postgresql/$pg/bin AMQ_MAJOR_DST_PORT=$dst_port \
	/usr/bin/python3 tests/versions/major.py
