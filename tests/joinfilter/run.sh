#!/usr/bin/env bash
# Differential test of the automatic join filter: installs the extension,
# starts a throwaway cluster and runs tests/joinfilter/difftest.py, which
# compares 1,050 random join queries (at least 1,000 of them
# within statement_timeout) with amq.join_filter off and on. The
# seed is JF_SEED (default: a fresh one, printed); replay one query with
# JF_SEED=... JF_ONLY=N. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/pg/cluster.sh

amq_suite_setup install

seed=${JF_SEED:-$(( $(date +%s) % 1000000 ))}
queries=${JF_QUERIES:-1050}
echo "join filter differential test: seed $seed, $queries queries"
PGBINDIR=$AMQ_PG_BINDIR /usr/bin/python3 tests/joinfilter/difftest.py "$seed" "$queries"
