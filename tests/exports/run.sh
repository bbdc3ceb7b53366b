#!/usr/bin/env bash
# What the two libraries export. build/amq.so (SQLite) exports its entry
# point sqlite3_amq_init and nothing else; postgres/amq.so exports only
# Pg_magic_func, _PG_init (when it has one) and its V1 functions, each with
# its pg_finfo_ record, and every C symbol an install script names is among
# them. Everything else (the core included) is hidden, so it cannot clash
# with another library loaded into the same process. Ends with
# "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."

pass=0
fail=0
check() { # check NAME CONDITION-STATUS [DETAIL]
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
		echo "ok - $1"
	else
		fail=$((fail + 1))
		echo "FAIL - $1${3:+: $3}"
	fi
}

exported() { # the names of the defined dynamic symbols of library $1
	nm -D --defined-only "$1" | awk '{print $3}' | sort
}

sqlite_syms=$(exported build/amq.so)
[ "$sqlite_syms" = "sqlite3_amq_init" ]
check "build/amq.so exports only sqlite3_amq_init" $? "$(echo "$sqlite_syms" | paste -sd' ')"

pg_syms=$(exported postgres/amq.so)
stray=""
for sym in $pg_syms; do
	case $sym in
	Pg_magic_func | _PG_init) ;;
	pg_finfo_*) grep -qx "${sym#pg_finfo_}" <<<"$pg_syms" || stray="$stray $sym(no function)" ;;
	*) grep -qx "pg_finfo_$sym" <<<"$pg_syms" || stray="$stray $sym" ;;
	esac
done
[ -z "$stray" ]
check "postgres/amq.so exports only V1 functions, their records and the module's hooks" $? "$stray"
grep -qx Pg_magic_func <<<"$pg_syms"
check "postgres/amq.so exports Pg_magic_func" $?

missing=""
for script in postgres/amq--*.sql; do
	for sym in $(grep -oE "'MODULE_PATHNAME', '[a-z_0-9]+'" "$script" | sed -E "s/.*, '([a-z_0-9]+)'/\1/" | sort -u); do
		grep -qx "$sym" <<<"$pg_syms" && grep -qx "pg_finfo_$sym" <<<"$pg_syms" ||
			missing="$missing $script:$sym"
	done
done
[ -z "$missing" ]
check "every C function the install and upgrade scripts name is exported" $? "$missing"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
