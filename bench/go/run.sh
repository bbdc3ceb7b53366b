#!/usr/bin/env bash
# make bench-cuckoo-go: amq's b4 cuckoo filter against seiflotfy/cuckoofilter,
# the Go library the seeds cite, side by side in one run (issue #34). Each
# round runs, for each n, the Go program (bench/go/cuckoo) and then
# `cuckoo_bench --against-go n`: amq at its own 95% load and at the load of
# the Go filter (the same number of buckets), each on 4 KiB pages and on
# transparent huge pages (the Go runtime puts its heap on them), and with 8-bit
# fingerprints at Go's load, in as many bytes as Go's; each filled with the
# int64 values 0..n-1 and probed with min(n, 10M) present and 10M
# absent values in the same scattered order. Prints medians over the rounds,
# and amq's per-round ratios to Go (their median). Not a test.
# Usage: bench/go/run.sh CUCKOO_BENCH CUCKOO_GO [--runs R] [n ...] (default 5
# runs, n = 1e6 1e7).
set -eu
amq=$1 go=$2
shift 2
runs=5
if [ "${1:-}" = --runs ]; then
	runs=$2
	shift 2
fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1e6 1e7)
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for ((r = 1; r <= runs; r++)); do
	for n in "${sizes[@]}"; do
		"$go" "$n" | sed "s/^row /row round=$r /" >>"$rows"
		"$amq" --against-go "$n" | sed "s/^row /row round=$r /" >>"$rows"
	done
done
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(sed -n 's/^model name\t: //p' /proc/cpuinfo | head -n 1)), $(go version 2>/dev/null | cut -d' ' -f3), $runs rounds"
echo
python3 - "$rows" <<'PY'
import statistics, sys

NAMES = {"seiflotfy": "seiflotfy/cuckoofilter: 8-bit fp, its load",
         "amq-b4": "amq b4: 10-bit fp, 95% load (sized for n)",
         "amq-b4-thp": "amq b4: 95% load, huge pages",
         "amq-b4-go-load": "amq b4: Go's load (its bucket count)",
         "amq-b4-go-load-thp": "amq b4: Go's load, huge pages",
         "amq-b4-go-bytes": "amq b4: 8-bit fp, Go's load: its bytes"}
rows = []
for line in open(sys.argv[1]):
    fields = dict(kv.split("=", 1) for kv in line.split()[1:])
    rows.append(fields)
med = lambda xs: statistics.median(xs)
sizes = sorted({int(r["n"]) for r in rows})
print("| n | filter | load | bits/item | measured fpr | ns/add | ns/lookup present | "
      "ns/lookup absent | add vs Go | present vs Go | absent vs Go |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
bad = 0
for n in sizes:
    go = {int(r["round"]): r for r in rows if int(r["n"]) == n and r["name"] == "seiflotfy"}
    for name in NAMES:
        mine = [r for r in rows if int(r["n"]) == n and r["name"] == name]
        if not mine:
            continue
        bad += sum(int(r["false_negatives"]) + (name != "seiflotfy") * int(r["failed_adds"])
                   for r in mine)
        col = lambda k: med([float(r[k]) for r in mine])
        ratio = lambda k: med([float(r[k]) / float(go[int(r["round"])][k]) for r in mine])
        ratios = ("|  |  |  |" if name == "seiflotfy" else
                  "| %.2fx | %.2fx | %.2fx |" % (ratio("add_ns"), ratio("present_ns"),
                                                 ratio("absent_ns")))
        print("| %.0e | %s | %.4f | %.2f | %.5f | %.1f | %.1f | %.1f %s" % (
            n, NAMES[name], col("load"), 8 * col("bytes") / n, col("fpr"), col("add_ns"),
            col("present_ns"), col("absent_ns"), ratios))
# Go's failed adds are its own result (500 kicks); amq's, or a false
# negative of either, fail the run.
for r in rows:
    if int(r["failed_adds"]) or int(r["false_negatives"]):
        print("round %s, n = %s, %s: %s failed adds, %s false negatives" % (
            r["round"], r["n"], r["name"], r["failed_adds"], r["false_negatives"]))
sys.exit(1 if bad else 0)
PY
