#!/usr/bin/env bash
# Python suite: builds the amq package (python/) from a clean copy of the
# sources into a fresh venv of Debian's /usr/bin/python3 (made with
# --system-site-packages, so psycopg is there; pip runs offline with
# --no-build-isolation), then runs its tests with that Python: the package in
# process and on damaged bytes (tests/python/test_api.py, seeded by
# build/fuzz/seed_corpus), and against SQLite and a throwaway PostgreSQL
# cluster (tests/python/test_engines.py). Where the python3 first on PATH
# cannot load SQLite extensions (pyenv's), the package is installed under it
# too and amq.load must raise amq.Error. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
. tests/pg/cluster.sh
. tests/lib/results.sh
# The tests end with tests/lib/harness.py's line, "N passed, N failed", alone.
RESULTS_LINE='^[0-9]+ passed, [0-9]+ failed'

amq_suite_setup install build/amq.so build/fuzz/seed_corpus
work=$(mktemp -d)
trap 'amq_cluster_stop; rm -rf "$work"' EXIT

# Installs the clean copy into a new venv of Python $1 at $2; one check.
install_into() {
	local python=$1 venv=$2
	if "$python" -m venv --system-site-packages "$venv" >"$work/venv.log" 2>&1 &&
		AMQ_WERROR=1 "$venv/bin/python" -m pip install -q --no-build-isolation --no-index \
			"$work/src/python" >"$work/pip.log" 2>&1; then
		echo "ok - pip install --no-build-isolation ./python under $python"
		results_tally 1 0
		return 0
	fi
	cat "$work/venv.log" "$work/pip.log"
	echo "FAIL - pip install --no-build-isolation ./python under $python"
	results_tally 0 1
	return 1
}

# The sources a clean clone has: no build output (python/build; core/build/ is
# source), no egg-info.
mkdir -p "$work/src"
tar -cf - --exclude=python/build --exclude='*.egg-info' --exclude=__pycache__ core sqlite python |
	tar -xf - -C "$work/src"

if install_into /usr/bin/python3 "$work/venv"; then
	mkdir -p "$work/seeds"
	build/fuzz/seed_corpus "$work/seeds" >/dev/null
	# From the tests' folder: the package comes from the venv, never from python/.
	cd tests/python
	for test in test_api.py test_engines.py; do
		args=()
		[ "$test" = test_api.py ] && args=("$work/seeds")
		out=$("$work/venv/bin/python" "$test" "${args[@]}" 2>&1)
		status=$?
		grep -v '^ok - ' <<<"$out"
		results_add "$test" "$status" <<<"$out"
	done
	cd "$root"
fi

# The python3 first on PATH, when it is another Python that cannot load
# extensions: the install works there too, and amq.load says why it fails.
other=$(command -v python3)
if [ -n "$other" ] && [ "$(readlink -f "$other")" != "$(readlink -f /usr/bin/python3)" ] &&
	! "$other" -c 'import sqlite3; sqlite3.Connection.enable_load_extension' 2>/dev/null; then
	if install_into "$other" "$work/other"; then
		out=$(cd "$work" && "$work/other/bin/python" - <<'PY' 2>&1
import sqlite3, amq
try:
    amq.load(sqlite3.connect(":memory:"))
except amq.Error as e:
    ok = "cannot load extensions" in str(e) and 42 in amq.bloom([42])
    print(("ok - " if ok else "FAIL - ") + "amq.load without extension loading: " + str(e))
else:
    print("FAIL - amq.load without extension loading raised nothing")
PY
)
		echo "$out"
		if grep -q '^ok - ' <<<"$out"; then
			results_tally 1 0
		else
			results_tally 0 1
		fi
	fi
fi

results_print
