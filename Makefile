# amq - approximate-membership filters for SQLite and PostgreSQL.
#
# Targets:
#   make            build/amq.so (SQLite extension) and the PostgreSQL module
#   make install    install the PostgreSQL extension (amq.control, $libdir/amq)
#   make test       every test: core unit tests (plain, ASan+UBSan, and under
#                   qemu-user for s390x and aarch64), a bounded libFuzzer run,
#                   SQLite tests, pg_regress on a temporary server, interop, a
#                   coordinator and two shards (tests/multi), the Python
#                   package (tests/python), the Node.js package
#                   (tests/node), the README's code blocks
#                   (tests/readme), PostgreSQL 17, 18 and 19 in Debian
#                   roots (tests/versions), the clang-format check
#                   (tests/format) and a smoke run of every benchmark
#                   (tests/bench); one summary line per PostgreSQL version,
#                   then the last, "N passed, N failed"
#   make demo       the join-prefilter session in the sqlite3 CLI
#   make demo-pg    the join prefilter across a PostgreSQL coordinator and two
#                   shards (postgres_fdw), on servers it starts and stops
#   make bench      benchmarks (results go to docs/BENCHMARKS.md by hand);
#                   make bench-join: the automatic join filter alone; make
#                   bench-join-versions: that on the host's PostgreSQL and 18;
#                   make bench-cuckoo-go: amq's cuckoo filter against the Go
#                   library seiflotfy/cuckoofilter (bench/go/)
#   make python     the Python package (python/) in a venv, build/python/venv;
#                   make bench-python: its benchmark
#   make node-pack  the Node.js package (node/) packed by npm,
#                   build/node/amq-<version>.tgz; make bench-node: its
#                   benchmark
#   make deps       install missing Debian packages (apt-get as root, else
#                   print the apt-get line and stop): make test and make bench
#                   run it first, make demo only for the packages it builds
#                   with (make build-deps). Nothing else runs the package
#                   manager: make and make install stop with "run: make deps"
#                   when the compiler, a header or pg_config is missing
#   make format     clang-format our C files
#   make clean
#
# Options: CC (default cc), FUZZ_SECONDS (default 45, at most 60), PG_CONFIG
# (the PostgreSQL to build and test for; see below).

CC ?= cc
BUILD := build
# amq's one version, AMQ_VERSION in core/amq.h: every package reads it
# (postgres/Makefile for amq.control, python/setup.py, node/build.mk for
# package.json), and META.json follows it (below); tests/version checks.
AMQ_VERSION := $(shell sed -n 's/^\#define AMQ_VERSION "\(.*\)"$$/\1/p' core/amq.h)
FUZZ_SECONDS ?= 45
PYTHON := /usr/bin/python3
export FUZZ_SECONDS

# Debian's own PostgreSQL by release, for a machine whose apt lists are empty
# (a fresh debootstrap root): 12 ships 15, 13 ships 17, unstable 18.
DEBIAN_DEFAULT_PG := $(shell sed -E 's@^12\..*@15@; s@^13\..*@17@; s@^[a-z]+/sid$$@18@' /etc/debian_version 2>/dev/null | grep -E '^[0-9]+$$' || echo 15)

# The PostgreSQL to build for, as every PGXS extension takes it: PG_CONFIG
# when given; else the pg_config on PATH; else the newest Debian server
# installed; else the one Debian's `postgresql` package stands for (make deps
# then installs it). Tests and benchmarks run against the same one.
ifndef PG_CONFIG
PG_CONFIG := $(or $(shell command -v pg_config 2>/dev/null),\
	$(shell ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -n 1))
endif
PG_MAJOR := $(or $(shell $(PG_CONFIG) --version 2>/dev/null | sed -E 's/^PostgreSQL ([0-9]+).*/\1/'),\
	$(shell echo '$(PG_CONFIG)' | sed -nE 's@^/usr/lib/postgresql/([0-9]+)/bin/pg_config$$@\1@p'),\
	$(shell apt-cache depends postgresql 2>/dev/null | sed -nE 's/.*Depends: postgresql-([0-9]+)$$/\1/p' | head -n 1),\
	$(DEBIAN_DEFAULT_PG))
PG_CONFIG := $(or $(PG_CONFIG),/usr/lib/postgresql/$(PG_MAJOR)/bin/pg_config)
export PG_CONFIG

# Debian packages: what `make` builds with, then what the tests and
# benchmarks add (cross compilers and qemu, libFuzzer's runtime, libbloom,
# Go and seiflotfy/cuckoofilter, the Debian roots of newer PostgreSQL
# versions, the Python package, clang-format).
BUILD_PACKAGES := gcc make clang libxxhash-dev libsqlite3-dev sqlite3 python3 \
	postgresql-$(PG_MAJOR) postgresql-server-dev-$(PG_MAJOR)
# Node.js for the npm package's tests (tests/node): npm and Node's headers
# (node_api.h) come with the nodejs package of some builds (nodesource's) and
# are Debian's npm and libnode-dev otherwise, which must not be asked for
# beside a nodejs that ships them.
NODE_EXTRA_PACKAGES := $(shell dpkg -L nodejs 2>/dev/null | grep -qx /usr/bin/npm || echo npm) \
	$(shell dpkg -L nodejs 2>/dev/null | grep -qx /usr/include/node/node_api.h || echo libnode-dev)
TEST_PACKAGES := libclang-rt-dev libbloom-dev golang-go golang-github-seiflotfy-cuckoofilter-dev \
	debootstrap \
	python3-setuptools python3-venv python3-dev python3-psycopg \
	qemu-user gcc-s390x-linux-gnu libc6-dev-s390x-cross gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
	clang-format nodejs $(NODE_EXTRA_PACKAGES)
PACKAGES := $(BUILD_PACKAGES) $(TEST_PACKAGES)

WARN := -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror
# -fvisibility=hidden: build/amq.so exports its entry point and nothing else.
CFLAGS_AMQ := -std=c11 -O2 -g -fPIC -fvisibility=hidden -D_GNU_SOURCE $(WARN)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# core/ by concern: base/, format/, bloom/, cuckoo/, build/ (docs/ARCHITECTURE.md).
CORE_SRC := $(wildcard core/*/*.c)
CORE_HDR := $(wildcard core/*.h core/*/*.h)
CORE_OBJ := $(CORE_SRC:core/%.c=$(BUILD)/core/%.o)
CORE_ASAN_OBJ := $(CORE_SRC:core/%.c=$(BUILD)/asan/core/%.o)
# core/*/*_avx2.c are compiled for AVX2 on x86-64 (core chooses them at run
# time); ARCH_FLAGS is that file's extra flag in every rule that compiles core.
CORE_AVX2_SRC := $(wildcard core/*/*_avx2.c)
CORE_PLAIN_SRC := $(filter-out $(CORE_AVX2_SRC),$(CORE_SRC))
# (Expanded when a recipe runs: on a fresh machine make deps installs the
# compiler first.)
AVX2_FLAGS = $(if $(filter x86_64%,$(shell $(CC) -dumpmachine 2>/dev/null || uname -m)),-mavx2)
$(BUILD)/core/%_avx2.o $(BUILD)/asan/core/%_avx2.o $(BUILD)/fuzz/core/%_avx2.o: ARCH_FLAGS = $(AVX2_FLAGS)

.PHONY: all deps build-deps check-build check-pg install test demo bench format clean
# Keep the sanitizer objects the test binaries are linked from between runs.
.SECONDARY: $(CORE_ASAN_OBJ)
.DEFAULT_GOAL := all

all: $(BUILD)/amq.so pg META.json

# PGXN's META.json (kept in git, whole) says the version of core/amq.h: its
# "version" fields before "meta-spec" are rewritten whenever amq.h changes.
META.json: core/amq.h
	sed -i '/"meta-spec"/,$$!s/"version": "[^"]*"/"version": "$(AMQ_VERSION)"/' $@
	test "$$(grep -c '"version": "$(AMQ_VERSION)"' $@)" = 2

# deps: every package above; build-deps: only those `make` builds with. Run
# by make test, make bench and make demo (build-deps) before they build, in a
# make of their own so that nothing is compiled before the packages are in.
deps build-deps:
	@missing=""; for p in $(if $(filter deps,$@),$(PACKAGES),$(BUILD_PACKAGES)); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "missing packages; run: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

# What the build needs, checked without the package manager before anything
# is compiled: a C compiler that finds xxhash.h and sqlite3ext.h, and for the
# PostgreSQL module the server headers of PG_CONFIG.
check-build:
	@printf '#include <xxhash.h>\n#include <sqlite3ext.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 || \
	  { echo "$(CC) does not compile with xxhash.h and sqlite3ext.h; run: make deps" >&2; exit 1; }

check-pg: check-build
	@[ -x '$(PG_CONFIG)' ] && [ -f "$$('$(PG_CONFIG)' --includedir-server)/postgres.h" ] || \
	  { echo "no PostgreSQL $(PG_MAJOR) server headers ($(PG_CONFIG)); run: make deps" >&2; exit 1; }

$(BUILD)/core/%.o: core/%.c $(CORE_HDR) | check-build
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_AMQ) -Icore $(ARCH_FLAGS) -c $< -o $@

$(BUILD)/asan/core/%.o: core/%.c $(CORE_HDR) | check-build
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_AMQ) $(SAN) -Icore $(ARCH_FLAGS) -c $< -o $@

include sqlite/build.mk
include postgres/build.mk
include tests/build.mk
include bench/build.mk
include python/build.mk
include node/build.mk

test: deps
	@$(MAKE) --no-print-directory all $(TEST_BINARIES)
	@bash tests/run.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)
	$(MAKE) -C postgres clean PG_CONFIG=$(PG_CONFIG) >/dev/null
