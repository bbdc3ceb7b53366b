#!/usr/bin/env bash
# pg_regress suite of the PostgreSQL extension: installs it (make install),
# starts a throwaway cluster (tests/pg/cluster.sh), runs every sql/*.sql
# against expected/*.out and every isolation spec specs/*.spec against its
# expected/*.out, prints pg_regress's summary and then the line
# "N passed, N failed" (one per test). Stops the server and removes its
# directory on every exit path.
set -u
cd "$(dirname "$0")/../.."
. tests/pg/cluster.sh

amq_suite_setup install

# pg_regress runs as the cluster's owner, who may not be able to read the
# checkout (say, under /root): give it a copy of the tests.
outdir="$AMQ_PG_DIR/regress"
indir="$AMQ_PG_DIR/input"
mkdir -p "$outdir" "$indir"
cp -r sql specs expected "$indir"/
# sql/families.sql reads filters older releases wrote.
mkdir -p "$indir/tests" && cp -r tests/fixtures "$indir/tests/"
[ -n "$AMQ_AS" ] && chown -R postgres: "$outdir" "$indir"

tests=$(cd sql && ls *.sql | sed 's/\.sql$//')
pg_regress="$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress"
# shellcheck disable=SC2086
$AMQ_AS "$pg_regress" --inputdir="$indir" --outputdir="$outdir" --bindir="$AMQ_PG_BINDIR" \
	--host="$AMQ_PG_DIR" --port="$AMQ_PG_PORT" --user=postgres \
	--dbname=contrib_regression $tests >"$outdir/pg_regress.log" 2>&1
status=$?
# The isolation specs (specs/*.spec: concurrent sessions, such as EvalPlanQual
# rechecks through a join filter) on the same server, in the same log.
specs=$(cd specs && ls *.spec | sed 's/\.spec$//')
isolation="$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/isolation/pg_isolation_regress"
# shellcheck disable=SC2086
$AMQ_AS "$isolation" --inputdir="$indir" --outputdir="$outdir/isolation" \
	--bindir="$AMQ_PG_BINDIR" --host="$AMQ_PG_DIR" --port="$AMQ_PG_PORT" --user=postgres \
	--dbname=isolation_regression $specs >>"$outdir/pg_regress.log" 2>&1 || status=$?
# Per-test lines and the summary; PostgreSQL 15 prints "test x ... ok",
# 16 and later print TAP ("ok 1 - x").
grep -E '^(test |     |ok |not ok |#|=+$| [0-9]+ of| ?All [0-9]+ tests)' "$outdir/pg_regress.log" |
	grep -v '^# (using|diff|The|A copy)' || cat "$outdir/pg_regress.log"
passed=$(grep -cE '\.\.\. ok|^ok ' "$outdir/pg_regress.log")
failed=$(grep -cE '\.\.\. FAILED|\.\.\. failed|^not ok ' "$outdir/pg_regress.log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
	cat "$outdir/pg_regress.log"
	failed=1
fi
# Keep the results where the next look can find them (build/ is not tracked).
rm -rf build/pg_regress && mkdir -p build && cp -r "$outdir" build/pg_regress
for diffs in "$outdir/regression.diffs" "$outdir/isolation/regression.diffs"; do
	if [ -s "$diffs" ]; then
		echo "---- $diffs"
		cat "$diffs"
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
