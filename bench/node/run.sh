#!/usr/bin/env bash
# The Node.js benchmark (make bench-node): installs the packed tarball ($1)
# offline into a scratch project and runs bench/node/bench.cjs there.
set -eu
tarball=$(readlink -f "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
echo '{"name": "amq-node-bench", "version": "1.0.0", "private": true}' >package.json
npm install --offline --no-audit --no-fund --silent "$tarball" >/dev/null 2>&1
cp "$here/bench.cjs" .
node bench.cjs
