#!/usr/bin/env bash
# Node.js suite: packs the package (make node-pack), installs the tarball
# offline into a fresh project (npm install --offline ./amq-<version>.tgz,
# which compiles it with cc and -Werror), then runs tests/node/*.test.* there
# under Node's own runner (node --test): the package in process
# (api.test.cjs), its ESM entry point (esm.test.mjs), and parity with SQLite
# through better-sqlite3 12.x (sqlite.test.cjs), which is installed from the
# npm registry once into build/node/deps (compiled from source against
# /usr/include/node when its prebuilt binary cannot be fetched). node:sqlite
# (nodesqlite.test.cjs) needs Node 22.13 or later: on an older Node it is
# NOT TESTED, with the reason, and never a pass. Ends with "N passed, N
# failed".
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
. tests/lib/results.sh
RESULTS_LINE='^[0-9]+ passed, [0-9]+ failed'

version=$(sed -n 's/^#define AMQ_VERSION "\(.*\)"$/\1/p' core/amq.h)
tarball=$root/build/node/amq-$version.tgz
deps=$root/build/node/deps
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

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

if node -e 'require("node:sqlite")' >/dev/null 2>&1; then
	tests+=(nodesqlite.test.cjs)
else
	echo "NOT TESTED - node:sqlite: load(db) into a DatabaseSync, and its error without allowExtension: Node $(node --version) has no node:sqlite (it needs Node 22.13 or later; the nodejs package here is 20)"
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
results_print
