#!/usr/bin/env bash
# amq's one version: AMQ_VERSION in core/amq.h, which every package reads.
# Checks that what each package says agrees with it: postgres/amq.control's
# default_version and META.json's versions (both rewritten by make from
# amq.h), the Python package's (python/setup.py reads amq.h) and the Node
# package's (node/build.mk writes it into the packed package.json). Ends
# with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib/results.sh

version=$(sed -n 's/^#define AMQ_VERSION "\(.*\)"$/\1/p' core/amq.h)
# One check: NAME says GOT.
check() {
	if [ "$2" = "$version" ]; then
		echo "ok - $1: $2"
		results_tally 1 0
	else
		echo "FAIL - $1 says '$2', core/amq.h $version"
		results_tally 0 1
	fi
}

echo "core/amq.h: AMQ_VERSION $version"
make --no-print-directory -s META.json >/dev/null 2>&1
make --no-print-directory -s -C postgres amq.control >/dev/null 2>&1
check "postgres/amq.control default_version" "$(sed -n "s/^default_version = '\(.*\)'$/\1/p" postgres/amq.control)"
for v in $(sed -n '/"meta-spec"/q; s/.*"version": "\([^"]*\)".*/\1/p' META.json); do
	check "META.json version" "$v"
done
check "python/setup.py --version" "$(cd python && /usr/bin/python3 setup.py --version 2>/dev/null | tail -n 1)"
check "python/pyproject.toml (no version of its own)" \
	"$(grep -q '^version *=' python/pyproject.toml && echo "a version of its own" || echo "$version")"
if make --no-print-directory -s node-pack >/dev/null 2>&1; then
	check "node package.json" "$(tar -xzOf "build/node/amq-$version.tgz" package/package.json |
		node -e 'let s = ""; process.stdin.on("data", (d) => { s += d; }).on("end", () => console.log(JSON.parse(s).version))')"
else
	echo "FAIL - make node-pack"
	results_tally 0 1
fi
results_print
