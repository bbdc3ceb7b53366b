#!/usr/bin/env bash
# make bench-python: the Python package's benchmark (bench/python/bench.py)
# with the date and the machine, as Markdown for docs/BENCHMARKS.md. Not a
# test. Usage: bench/python/run.sh PYTHON EXTENSION (the venv's python, in
# which the package is installed, and build/amq.so); env RUNS.
set -eu
cd "$(dirname "$0")/../.."
python=$(realpath -s "$1")
extension=$(readlink -f "$2")

echo "## Python (the amq package)"
echo
echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM."
echo
cd /tmp && "$python" "$OLDPWD/bench/python/bench.py" "$extension"
