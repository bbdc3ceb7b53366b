# Sourced by the version matrix (tests/versions/run.sh) and by `make
# bench-join-versions`: minimal Debian roots that hold a newer PostgreSQL
# than the host's, made with debootstrap and cached outside the clone so that
# only the first run on a machine pays for them.
#
#   amq_root_make NAME    make the root NAME (trixie, sid or experimental)
#                         under AMQ_ROOT_CACHE unless it is there; prints why
#                         not and returns 1 when it cannot be made
#   amq_root_dir NAME     its directory
#   amq_root_pg NAME      the PostgreSQL major version it holds
#   amq_root_mount NAME   mount proc and bind the host's /dev/shm inside it
#                         (postgresql-common's scripts and parallel query
#                         need them); amq_root_unmount NAME undoes it
#   amq_root_run NAME CMD run CMD (a bash command line) inside the root
#
# The host's apt sources stay as they are: each root gets its own
# sources.list naming the ordinary Debian archive (and, for trixie, its
# security suite) at the mirror the host uses. The archive snapshot this
# workplace serves has Release files past their Valid-Until date, hence
# Acquire::Check-Valid-Until "false" inside the roots.

AMQ_ROOT_CACHE=${AMQ_ROOT_CACHE:-/var/cache/amq/roots}

# One line per root: name, debootstrap suite, PostgreSQL major version, the
# apt suites of its sources.list, and what to install from experimental.
AMQ_ROOTS=(
	"trixie trixie 17 trixie,trixie-updates,trixie-security"
	"sid sid 18 sid"
	"experimental sid 19 sid,experimental"
)

# What every root installs besides PostgreSQL: what `make` builds with (the
# Makefile's BUILD_PACKAGES) and what the suites run there use.
AMQ_ROOT_TOOLS="make gcc libc6-dev clang libclang-rt-dev libxxhash-dev libsqlite3-dev sqlite3 python3 locales"

amq_root_dir() { echo "$AMQ_ROOT_CACHE/$1"; }

# The PostgreSQL major version root $1 holds.
amq_root_pg() {
	local name=$1 entry
	for entry in "${AMQ_ROOTS[@]}"; do
		set -- $entry
		[ "$1" = "$name" ] && { echo "$3"; return 0; }
	done
	return 1
}

# The mirror the host's apt already uses (deb.debian.org when none is found).
amq_root_mirror() {
	local uri
	uri=$(grep -hE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
		grep -v security | head -n 1 | sed -E 's/^URIs: *//; s/^deb +(\[[^]]*\] +)?//; s/ .*//')
	echo "${uri:-http://deb.debian.org/debian}"
}

amq_root_mount() {
	local root
	root=$(amq_root_dir "$1")
	mountpoint -q "$root/proc" || mount -t proc proc "$root/proc" || return 1
	mkdir -p "$root/dev/shm"
	mountpoint -q "$root/dev/shm" || mount --bind /dev/shm "$root/dev/shm" || return 1
}

# Whether a process runs inside root $1 (its /proc/PID/root is the root).
amq_root_in_use() {
	local root p
	root=$(realpath "$(amq_root_dir "$1")")
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && return 0
	done
	return 1
}

# Stops the PostgreSQL servers left running inside root $1, and only those:
# the root's postgres user has the host's uid, so a pkill by user would reach
# the host's servers too.
amq_root_kill_servers() {
	local root p
	root=$(realpath "$(amq_root_dir "$1")")
	for p in $(pgrep -x postgres); do
		[ "$(readlink "/proc/$p/root" 2>/dev/null)" = "$root" ] && kill -INT "$p" 2>/dev/null
	done
	return 0
}

# Unmounts what amq_root_mount mounted, unless a process still runs inside
# the root (another run of the matrix): it is theirs then too.
amq_root_unmount() {
	local root
	amq_root_in_use "$1" && return 0
	root=$(amq_root_dir "$1")
	mountpoint -q "$root/dev/shm" && { umount "$root/dev/shm" || umount -l "$root/dev/shm"; }
	mountpoint -q "$root/proc" && { umount "$root/proc" || umount -l "$root/proc"; }
	return 0
}

amq_root_run() {
	local name=$1
	shift
	chroot "$(amq_root_dir "$name")" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 CI="${CI:-}" /bin/bash -c "$*"
}

# Removes a half-made root; never while anything is mounted inside it (a bound
# /dev/shm would be emptied).
amq_root_discard() {
	amq_root_unmount "$1"
	mountpoint -q "$(amq_root_dir "$1")/dev/shm" && return 1
	rm -rf --one-file-system "$(amq_root_dir "$1")"
}

amq_root_make() {
	local name=$1 suite pg apt_suites root mirror log s
	local entry found=""
	for entry in "${AMQ_ROOTS[@]}"; do
		set -- $entry
		[ "$1" = "$name" ] && { suite=$2 pg=$3 apt_suites=$4 found=1; }
	done
	[ -n "$found" ] || { echo "no such root: $name"; return 1; }
	root=$(amq_root_dir "$name")
	[ -f "$root/.amq-ready" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "making the $name root needs root (debootstrap, chroot)"
		return 1
	fi
	if ! command -v debootstrap >/dev/null; then
		echo "debootstrap is not installed (apt-get install debootstrap)"
		return 1
	fi
	mkdir -p "$AMQ_ROOT_CACHE"
	log=$AMQ_ROOT_CACHE/$name.log
	amq_root_discard "$name"
	mirror=$(amq_root_mirror)
	echo "making the $name root (debootstrap $suite, PostgreSQL $pg) in $root; log: $log"
	if ! debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$log" 2>&1; then
		tail -n 5 "$log"
		echo "debootstrap $suite failed"
		amq_root_discard "$name"
		return 1
	fi
	: >"$root/etc/apt/sources.list"
	for s in ${apt_suites//,/ }; do
		case $s in
		*-security) echo "deb ${mirror%/debian}/debian-security $s main" ;;
		*) echo "deb $mirror $s main" ;;
		esac >>"$root/etc/apt/sources.list"
	done
	echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99amq-snapshot"
	# Only PostgreSQL's own packages come from experimental: asking apt for
	# all of it (-t experimental) pulls a newer perl that conflicts with sid's.
	local pg_pkgs="postgresql-$pg postgresql-server-dev-$pg"
	[ "$name" = experimental ] &&
		pg_pkgs="postgresql-$pg/experimental postgresql-server-dev-$pg/experimental libpq5/experimental libpq-dev/experimental"
	amq_root_mount "$name" || { echo "cannot mount proc in $root"; return 1; }
	if ! amq_root_run "$name" "export DEBIAN_FRONTEND=noninteractive; apt-get update -qq &&
		apt-get install -y -qq --no-install-recommends $pg_pkgs $AMQ_ROOT_TOOLS" >>"$log" 2>&1; then
		amq_root_unmount "$name"
		tail -n 5 "$log"
		echo "apt-get install in the $name root failed"
		amq_root_discard "$name"
		return 1
	fi
	amq_root_unmount "$name"
	amq_root_run "$name" "dpkg-query -W -f='\${Version}' postgresql-$pg" >"$root/.amq-ready"
	echo "made the $name root: PostgreSQL $(cat "$root/.amq-ready")"
}
