# Benchmarks; not tests. `make bench` runs all of them; each prints its own
# table, which goes into docs/BENCHMARKS.md with the date and machine. make
# test builds them and smoke-runs each at tiny sizes (tests/bench/run.sh).

CORE_BENCH := $(BUILD)/bench/core_bench

$(CORE_BENCH): bench/core_bench.c $(CORE_PLAIN_SRC) $(CORE_AVX2_SRC:core/%.c=$(BUILD)/core/%.o) \
		bench/bench_clock.h $(CORE_HDR) | check-build
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O3 -g -D_GNU_SOURCE $(WARN) -Icore $< $(CORE_PLAIN_SRC) \
	  $(CORE_AVX2_SRC:core/%.c=$(BUILD)/core/%.o) -lbloom -lm -o $@

.PHONY: bench-core
bench-core: $(CORE_BENCH)
	$(CORE_BENCH)

# Bulk maintenance of a stored filter in both engines (bench/bulk/).
.PHONY: bench-bulk
bench-bulk: $(BUILD)/amq.so install
	@PG_CONFIG=$(PG_CONFIG) bash bench/bulk/run.sh $(BUILD)/amq

# The cuckoo layouts, linked from the -O2 objects the extensions are built
# from, so it times the code SQL runs. CUCKOO_BENCH_ARGS: e.g. "--runs 1 1e6".
CUCKOO_BENCH := $(BUILD)/bench/cuckoo_bench

$(CUCKOO_BENCH): bench/cuckoo_bench.c bench/bench_clock.h $(CORE_OBJ) $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -D_GNU_SOURCE $(WARN) -Icore $< $(CORE_OBJ) -lm -o $@

.PHONY: bench-cuckoo
bench-cuckoo: $(CUCKOO_BENCH)
	$(CUCKOO_BENCH) $(CUCKOO_BENCH_ARGS)

# The layouts that delete (counting, dleft, cuckoo b4): bytes, fpr, ns per
# add, probe and delete, from the -O2 objects SQL runs. DELETE_BENCH_ARGS:
# e.g. "--runs 1 1e6".
DELETE_BENCH := $(BUILD)/bench/delete_bench

$(DELETE_BENCH): bench/delete_bench.c bench/bench_clock.h $(CORE_OBJ) $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -D_GNU_SOURCE $(WARN) -Icore $< $(CORE_OBJ) -lm -o $@

.PHONY: bench-delete
bench-delete: $(DELETE_BENCH)
	$(DELETE_BENCH) $(DELETE_BENCH_ARGS)

# amq's b4 against seiflotfy/cuckoofilter, the Go library the seeds cite, side
# by side in one run (bench/go/run.sh): Debian's golang-go and
# golang-github-seiflotfy-cuckoofilter-dev (make deps), built offline from
# /usr/share/gocode in GOPATH mode, with no module download.
# CUCKOO_GO_ARGS: e.g. "--runs 1 1e6".
CUCKOO_GO := $(BUILD)/bench/cuckoo_go
GO_OFFLINE := GO111MODULE=off GOPATH=/usr/share/gocode GOPROXY=off GOFLAGS= \
	GOCACHE=$(abspath $(BUILD))/go-cache

$(CUCKOO_GO): bench/go/cuckoo/main.go
	@command -v go >/dev/null && [ -d /usr/share/gocode/src/github.com/seiflotfy/cuckoofilter ] || \
	  { echo "no Go or no seiflotfy/cuckoofilter; run: make deps" >&2; exit 1; }
	@mkdir -p $(dir $@)
	cd bench/go/cuckoo && $(GO_OFFLINE) go build -o $(abspath $@) .

.PHONY: bench-cuckoo-go
bench-cuckoo-go: $(CUCKOO_BENCH) $(CUCKOO_GO)
	bash bench/go/run.sh $(CUCKOO_BENCH) $(CUCKOO_GO) $(CUCKOO_GO_ARGS)

# A local join-filter probe's membership test for tiny build sides: the
# Bloom filter against exact sets and a range check (issue #33).
EXACT_BENCH := $(BUILD)/bench/exact_bench

$(EXACT_BENCH): bench/exact_bench.c bench/bench_clock.h $(CORE_OBJ) $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -D_GNU_SOURCE $(WARN) -Icore $< $(CORE_OBJ) -lm -o $@

.PHONY: bench-exact
bench-exact: $(EXACT_BENCH)
	$(EXACT_BENCH)

# The binary fuse filter against the blocked Bloom filter at fuse's rates:
# bits, rate, build and probe (issue #34). FUSE_BENCH_ARGS: e.g. "1e6".
FUSE_BENCH := $(BUILD)/bench/fuse_bench

$(FUSE_BENCH): bench/fuse_bench.c bench/bench_clock.h $(CORE_OBJ) $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -D_GNU_SOURCE $(WARN) -Icore $< $(CORE_OBJ) -lm -o $@

.PHONY: bench-fuse
bench-fuse: $(FUSE_BENCH)
	$(FUSE_BENCH) $(FUSE_BENCH_ARGS)

TEST_BINARIES += $(CORE_BENCH) $(CUCKOO_BENCH) $(DELETE_BENCH) $(EXACT_BENCH) $(FUSE_BENCH)

# This build against the previous release (bench/release/): the per-probe cost
# in SQLite and PostgreSQL, side by side in one run.
.PHONY: bench-release
bench-release: $(BUILD)/amq.so install
	@PG_CONFIG=$(PG_CONFIG) bash bench/release/run.sh

# bloom_agg without a capacity past its working memory (it spills sorted runs
# to temporary files) beside the build with a capacity, 10M to 300M distinct
# values, in PostgreSQL, SQLite and Python (bench/scale/): time, peak memory
# per process, bytes spilled (Python: the venv of python/build.mk). About 30
# minutes on 2 cores; not part of make bench. BENCH_SCALE_ARGS: e.g.
# "--sizes 1e7 --runs 1", or "--sizes 1e9 --engines pg,python" (1B values).
.PHONY: bench-scale
bench-scale: $(BUILD)/amq.so $(BUILD)/python/venv/.installed install
	@PG_CONFIG=$(PG_CONFIG) bash bench/scale/run.sh $(BUILD)/amq.so $(BUILD)/python/venv/bin/python \
	  $(BENCH_SCALE_ARGS)

# The packages first, in a make of their own (as for make test).
bench: deps
	@$(MAKE) --no-print-directory bench-core bench-cuckoo bench-delete bench-sqlite bench-pg bench-multi \

	@$(MAKE) --no-print-directory bench-core bench-cuckoo bench-cuckoo-go bench-sqlite bench-pg bench-multi \
	  bench-join bench-bulk bench-python bench-release
