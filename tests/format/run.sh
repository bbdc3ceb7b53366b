#!/usr/bin/env bash
# clang-format check: every tracked *.c and *.h file formats to itself under
# .clang-format (clang-format --dry-run --Werror), one pass or failure per
# file; `make format` rewrites them. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."

if ! command -v clang-format >/dev/null; then
	echo "clang-format is not installed; run: make deps"
	echo "0 passed, 1 failed"
	exit 1
fi
if ! files=$(git ls-files '*.c' '*.h') || [ -z "$files" ]; then
	echo "no tracked C files (git ls-files '*.c' '*.h' found none)"
	echo "0 passed, 1 failed"
	exit 1
fi

pass=0
fail=0
for f in $files; do
	if out=$(clang-format --dry-run --Werror "$f" 2>&1); then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL - $f is not clang-formatted (make format):"
		head -n 20 <<<"$out"
	fi
done
echo "$(clang-format --version | head -n 1): $pass of $((pass + fail)) files formatted"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
