#!/usr/bin/env bash
# make bench-sqlite: the SQLite benchmark (bench/sqlite/bench.py) with the date
# and the machine, as Markdown for docs/BENCHMARKS.md. Not a test.
# Usage: bench/sqlite/run.sh [extension, default ./build/amq]; env ROWS, RUNS.
set -eu
cd "$(dirname "$0")/../.."
extension=${1:-./build/amq}
case $extension in /* | ./*) ;; *) extension=./$extension ;; esac

echo "## SQLite ($(sqlite3 --version | cut -d' ' -f1), amq $(sqlite3 :memory: ".load $extension" 'SELECT amq_version()'))"
echo
echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM."
echo
/usr/bin/python3 bench/sqlite/bench.py "$extension"
