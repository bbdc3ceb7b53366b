#!/usr/bin/env bash
# The join-filter benchmark on several PostgreSQL major versions in one run:
# first on the host's PostgreSQL (PG_CONFIG), then inside each Debian root
# named in AMQ_BENCH_ROOTS (default "sid", PostgreSQL 18; tests/versions/
# roots.sh makes it when missing), each on its own kept copy of the star
# schema (the host's in AMQ_JOIN_BENCH_DIR, a root's in its /var/tmp). Each
# version's off/on ratios are timed interleaved on that version; the table
# printed last puts the versions side by side. Arguments: REPS and MATCH, as
# for bench/join/bench.py. `make bench-join-versions` runs it (as root).
set -u
cd "$(dirname "$0")/../.."
. tests/versions/roots.sh
out=$(mktemp -d)
trap 'for r in $AMQ_BENCH_ROOTS; do amq_root_unmount "$r"; done; rm -rf "$out"' EXIT
AMQ_BENCH_ROOTS=${AMQ_BENCH_ROOTS:-sid}
reps=${1:-3}
match=${2:-}
host_pg=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
labels=("$host_pg")
echo "== PostgreSQL $host_pg (host)"
bash bench/join/run.sh "$reps" "$match" | tee "$out/$host_pg.md" || exit 1
for root in $AMQ_BENCH_ROOTS; do
	pg=$(amq_root_pg "$root") || { echo "no such root: $root"; exit 1; }
	amq_root_make "$root" || exit 1
	amq_root_mount "$root" || exit 1
	dir=$(amq_root_dir "$root")
	rm -rf --one-file-system "$dir/amq-bench"
	mkdir -p "$dir/amq-bench"
	git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$dir/amq-bench"
	echo "== PostgreSQL $pg ($root root)"
	amq_root_run "$root" "cd /amq-bench && export PG_CONFIG=/usr/lib/postgresql/$pg/bin/pg_config &&
		make --no-print-directory install >/dev/null &&
		AMQ_JOIN_BENCH_DIR=/var/tmp/amq-join-bench bash bench/join/run.sh $reps '$match'" |
		tee "$out/$pg.md" || exit 1
	amq_root_unmount "$root"
	labels+=("$pg")
done
echo
echo "== side by side (median ms with amq.join_filter off and on, and off/on)"
/usr/bin/python3 - "$out" "${labels[@]}" <<'PY'
import re, sys
out, versions = sys.argv[1], sys.argv[2:]
rows, order = {}, []
for v in versions:
    for line in open(f"{out}/{v}.md"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 5 or not re.match(r"^\d", cells[2]):
            continue
        key = (cells[0], cells[1])
        if key not in rows:
            rows[key] = {}
            order.append(key)
        rows[key][v] = cells[2:5]
head = "| query | work_mem | " + " | ".join(f"{v} off | {v} on | {v} off/on" for v in versions) + " |"
print(head)
print("|---|---|" + "---:|---:|---:|" * len(versions))
for key in order:
    cells = [" | ".join(rows[key].get(v, ["", "", ""])) for v in versions]
    print(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
PY
