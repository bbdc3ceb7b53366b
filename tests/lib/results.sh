# The one reader of test results, sourced by tests/run.sh and by every suite
# that adds up the results of the programs it runs. A suite, and each test
# program a suite runs, ends its output with "N passed, N failed"; these
# functions find that line, add its counts to the totals, count a run that
# printed none, or that exited non-zero with no failure counted, as one
# failure, and print the total, the same way everywhere:
#   results_line < OUTPUT             "PASS FAIL" of OUTPUT's last result line
#   results_add NAME STATUS < OUTPUT  adds the result of NAME (which exited
#                                     with STATUS) to the totals
#   results_tally PASS FAIL           adds counts no output holds
#   results_print                     prints the total; fails on a failure
# What a result line looks like is the caller's to say, in RESULTS_LINE (an
# extended regular expression for grep -E; the default takes the line on its
# own or after one "name: "). It lives in tests/ because tests/versions/run.sh
# runs tests/run.sh again inside each Debian root on a copy of the tree.
# Source it from the repository root: . tests/lib/results.sh. Give the
# output as a file or a here-string (< FILE, <<<"$out"), not through a pipe:
# a pipe runs the function in a subshell and the totals are lost.

results_total_pass=0
results_total_fail=0
RESULTS_LINE='^([A-Za-z_-]+: )?[0-9]+ passed, [0-9]+ failed'
# The words after "NAME: exit status N" when a run exits non-zero with no
# failure counted.
RESULTS_EXIT_NOTE='with no failure counted'

# Prints "PASS FAIL" of the last match of RESULTS_LINE in the text on stdin;
# none prints nothing and returns 1. The counts are read from the matched
# text only (grep -o), so a pattern can find them inside a longer line.
results_line() {
	local match
	match=$(grep -oE "$RESULTS_LINE" | tail -n 1)
	[ -n "$match" ] || return 1
	sed -E 's/^(.*[^0-9])?([0-9]+) passed, ([0-9]+) failed.*$/\2 \3/' <<<"$match"
}

# Adds the result line of the output on stdin, that of NAME, which exited
# with status STATUS, to the totals, and leaves its counts in results_pass
# and results_fail for the caller's own summary. No result line is one
# failure and returns 1 (the caller has no counts to show); a non-zero
# status with no failure counted is one failure, so that a crash after the
# last line (a sanitizer's leak report, say) cannot pass.
results_add() {
	local name=$1 status=$2 counts
	if ! counts=$(results_line); then
		echo "$name: no result line (exit status $status)"
		results_tally 0 1
		return 1
	fi
	read -r results_pass results_fail <<<"$counts"
	if [ "$status" -ne 0 ] && [ "$results_fail" -eq 0 ]; then
		echo "$name: exit status $status $RESULTS_EXIT_NOTE"
		results_fail=1
	fi
	results_tally "$results_pass" "$results_fail"
}

# Adds PASS passes and FAIL failures to the totals: what a script checks
# itself (a missing file, an install) counts with the rest.
results_tally() {
	results_total_pass=$((results_total_pass + $1))
	results_total_fail=$((results_total_fail + $2))
}

# Prints the totals, "N passed, N failed" (a suite's last line), and returns
# non-zero when anything failed, so that it can end the script.
results_print() {
	echo "$results_total_pass passed, $results_total_fail failed"
	[ "$results_total_fail" -eq 0 ]
}
