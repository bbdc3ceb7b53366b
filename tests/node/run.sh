#!/usr/bin/env bash
# Node.js suite: packs the package (make node-pack), installs the tarball
# offline into a fresh project (npm install --offline ./amq-<version>.tgz,
# which compiles it with cc and -Werror), then runs tests/node/*.test.* there
# under Node's own runner (node --test): the package in process
# (api.test.cjs), its ESM entry point (esm.test.mjs), and parity with SQLite
# through better-sqlite3 12.x (sqlite.test.cjs), which is installed from the
# npm registry once into build/node/deps (compiled from source against
# /usr/include/node when its prebuilt binary cannot be fetched). node:sqlite
# (nodesqlite.test.cjs) needs Node 22.13 or later: on an older Node it runs
# in the sid root's nodejs, and where that root is not here it is NOT TESTED,
# with the reason, and never a pass. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
. tests/lib/results.sh
RESULTS_LINE='^[0-9]+ passed, [0-9]+ failed'

version=$(sed -n 's/^#define AMQ_VERSION "\(.*\)"$/\1/p' core/amq.h)
tarball=$root/build/node/amq-$version.tgz
deps=$root/build/node/deps
work=$(mktemp -d)
trap 'rm -rf "$work"; [ -z "${in_root:-}" ] || rm -rf "$in_root"' EXIT

# One check that a script makes itself: NAME, then the command.
step() {
	local name=$1
	shift
	if "$@" >"$work/step.log" 2>&1; then
		echo "ok - $name"
		results_tally 1 0
		return 0
	fi
	cat "$work/step.log"
	echo "FAIL - $name"
	results_tally 0 1
	return 1
}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "node and npm are not installed; run: make deps"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "node $(node --version), npm $(npm --version)"

step "make node-pack ($(basename "$tarball"))" make --no-print-directory -s node-pack || {
	results_print
	exit 1
}

# A fresh project, and the tarball installed into it with no registry.
mkdir -p "$work/project"
echo '{"name": "amq-node-tests", "version": "1.0.0", "private": true}' >"$work/project/package.json"
install_offline() (
	cd "$work/project" && AMQ_WERROR=1 npm install --offline --no-audit --no-fund --foreground-scripts "$tarball"
)
step "npm install --offline $(basename "$tarball") into a fresh project" install_offline || {
	results_print
	exit 1
}

# better-sqlite3 12.x from the registry, once: its own install step fetches a
# prebuilt binary or compiles with node-gyp against this Node's headers.
install_better_sqlite3() (
	mkdir -p "$deps" &&
		{ [ -f "$deps/package.json" ] || echo '{"name": "amq-node-deps", "version": "1.0.0", "private": true}' >"$deps/package.json"; } &&
		cd "$deps" && npm_config_nodedir=/usr npm install --no-audit --no-fund 'better-sqlite3@12' &&
		node -e 'new (require("better-sqlite3"))(":memory:").close()'
)
tests=(api.test.cjs esm.test.mjs)
if (cd "$deps" 2>/dev/null && node -e 'new (require("better-sqlite3"))(":memory:").close()') >/dev/null 2>&1 ||
	step "npm install better-sqlite3@12 (build/node/deps)" install_better_sqlite3; then
	tests+=(sqlite.test.cjs)
	echo "better-sqlite3 $(node -p "require('$deps/node_modules/better-sqlite3/package.json').version")"
fi

# Parity with PostgreSQL and Python: each kind's aggregate over the same
# integers and texts (parity.test.cjs's), its bytes in hex, one file each.
parity=$work/project/parity
mkdir -p "$parity"
# PostgreSQL on a temporary cluster: the parity files, then the README's
# cache-penetration example through node-postgres (pg, from the registry
# into build/node/deps), whose output must be the README's.
pg_parity() (
	. tests/pg/cluster.sh
	amq_suite_setup install >/dev/null
	for kind in bloom cuckoo fuse; do
		amq_psql -At -c "CREATE EXTENSION IF NOT EXISTS amq" \
			-c "SELECT encode(${kind}_agg(g::bigint)::bytea, 'hex') FROM generate_series(0, 2999, 3) g" \
			>"$parity/pg-$kind-ints.hex" &&
			amq_psql -At -c "SELECT encode(${kind}_agg('k' || g)::bytea, 'hex') FROM generate_series(0, 299) g" \
				>"$parity/pg-$kind-texts.hex" || return 1
	done
	[ -d "$deps/node_modules/pg" ] || (cd "$deps" && npm install --no-audit --no-fund 'pg@8') || return 1
	amq_psql -f tests/readme/setup/shop.sql >/dev/null || return 1
	cp tests/node/pg_cache.cjs "$work/project/"
	(cd "$work/project" && NODE_PATH="$deps/node_modules" node pg_cache.cjs) >"$work/pg_cache.out" || return 1
	# The README's output block after the example.
	awk '/^const \{ Client \} = require/{code=1} code && /^```$/{n++; next} n==2{print} n==3{exit}' \
		README.md >"$work/pg_cache.want"
	diff "$work/pg_cache.want" "$work/pg_cache.out"
)
python_parity() {
	build/python/venv/bin/python -c '
import sys, amq
for kind in ("bloom", "cuckoo", "fuse"):
    for name, values in (("ints", range(0, 3000, 3)), ("texts", [f"k{g}" for g in range(300)])):
        with open(f"{sys.argv[1]}/python-{kind}-{name}.hex", "w") as f:
            f.write(bytes(getattr(amq, kind)(values)).hex() + "\n")' "$parity"
}
if [ -n "${PG_CONFIG:-}" ] || command -v pg_config >/dev/null; then
	step "PostgreSQL's aggregates over the parity values; the README's node-postgres example" pg_parity
else
	echo "NOT TESTED - parity with PostgreSQL: no pg_config (make deps installs PostgreSQL)"
fi
if [ -x build/python/venv/bin/python ]; then
	step "Python's amq.bloom, amq.cuckoo and amq.fuse over the parity values" python_parity
else
	echo "NOT TESTED - parity with Python: build/python/venv is not built (make python)"
fi
[ -n "$(ls "$parity")" ] && tests+=(parity.test.cjs)

# node:sqlite: this Node's where it has it; else the nodejs of the sid root
# (tests/versions/roots.sh; apt-get installs it there once), which runs the
# project installed above: the N-API addon is ABI-stable across Node
# releases, and the SQLite extension needs no Node at all.
in_root=""
if node -e 'require("node:sqlite")' >/dev/null 2>&1; then
	tests+=(nodesqlite.test.cjs)
else
	. tests/versions/roots.sh
	sid=$(amq_root_dir sid)
	why="Node $(node --version) has no node:sqlite (it needs Node 22.13 or later)"
	if [ "$(id -u)" != 0 ] || [ ! -x "$sid/bin/bash" ]; then
		echo "NOT TESTED - node:sqlite: load(db) into a DatabaseSync, and its error without allowExtension: $why, and the sid root with a newer nodejs is not here (make test makes it, as root)"
	elif step "nodejs with node:sqlite in the sid root" amq_root_run sid \
		'command -v node >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs; } && node -e "require(\"node:sqlite\")" && node --version'; then
		in_root=$(mktemp -d "$sid/tmp/amq-node.XXXXXX")
		cp -r "$work/project/." "$in_root/" && cp tests/node/nodesqlite.test.cjs "$in_root/"
	fi
fi

cp "${tests[@]/#/tests/node/}" "$work/project/"
out=$(cd "$work/project" && AMQ_BETTER_SQLITE3="$deps/node_modules/better-sqlite3" \
	node --test --test-reporter=spec "${tests[@]}" 2>&1)
status=$?
echo "$out"
# node --test's summary: "ℹ pass N" and "ℹ fail N".
pass=$(sed -nE 's/^. pass ([0-9]+)$/\1/p' <<<"$out" | tail -n 1)
fail=$(sed -nE 's/^. fail ([0-9]+)$/\1/p' <<<"$out" | tail -n 1)
results_add "node --test" "$status" <<<"${pass:-0} passed, ${fail:-1} failed"
if [ -n "$in_root" ]; then
	amq_root_mount sid
	out=$(amq_root_run sid "cd /tmp/$(basename "$in_root") && node --version && node --test --test-reporter=spec nodesqlite.test.cjs" 2>&1)
	status=$?
	amq_root_unmount sid
	rm -rf "$in_root"
	echo "$out"
	pass=$(sed -nE 's/^. pass ([0-9]+)$/\1/p' <<<"$out" | tail -n 1)
	fail=$(sed -nE 's/^. fail ([0-9]+)$/\1/p' <<<"$out" | tail -n 1)
	results_add "node --test in the sid root (node:sqlite)" "$status" <<<"${pass:-0} passed, ${fail:-1} failed"
fi
results_print
