# Benchmarks; not tests. `make bench` runs all of them; each prints its own
# table, which goes into docs/BENCHMARKS.md with the date and machine.

CORE_BENCH := $(BUILD)/bench/core_bench

$(CORE_BENCH): bench/core_bench.c $(CORE_SRC) $(CORE_HDR) | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O3 -g -D_GNU_SOURCE $(WARN) -Icore $< $(CORE_SRC) -lbloom -lm -o $@

.PHONY: bench-core
bench-core: $(CORE_BENCH)
	$(CORE_BENCH)

# Bulk maintenance of a stored filter in both engines (bench/bulk/).
.PHONY: bench-bulk
bench-bulk: $(BUILD)/amq.so install
	@PG_CONFIG=$(PG_CONFIG) bash bench/bulk/run.sh $(BUILD)/amq

bench: bench-core bench-sqlite bench-pg bench-multi bench-join bench-bulk
