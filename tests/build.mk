# Core unit tests (plain and ASan+UBSan) and the libFuzzer reader target.
# Each tests/core/test_*.c is one binary; tests/core/run.sh runs them all.

CORE_TEST_SRC := $(wildcard tests/core/test_*.c)
CORE_TESTS := $(CORE_TEST_SRC:tests/core/%.c=$(BUILD)/tests/%)
CORE_ASAN_TESTS := $(CORE_TEST_SRC:tests/core/%.c=$(BUILD)/asan/tests/%)
FUZZ_READER := $(BUILD)/fuzz/fuzz_reader

TEST_BINARIES += $(CORE_TESTS) $(CORE_ASAN_TESTS) $(FUZZ_READER)

$(BUILD)/tests/%: tests/core/%.c $(wildcard tests/core/*.h) $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_AMQ) -Icore $< $(CORE_OBJ) -lm -o $@

$(BUILD)/asan/tests/%: tests/core/%.c $(wildcard tests/core/*.h) $(CORE_ASAN_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_AMQ) $(SAN) -DAMQ_SANITIZED -Icore $< $(CORE_ASAN_OBJ) -lm -o $@

$(FUZZ_READER): tests/fuzz/fuzz_reader.c $(CORE_SRC) $(CORE_HDR) | deps
	@mkdir -p $(dir $@)
	clang -std=c11 -O1 -g $(WARN) -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=all -Icore $< $(CORE_SRC) -lm -o $@

SEED_CORPUS := $(BUILD)/fuzz/seed_corpus
TEST_BINARIES += $(SEED_CORPUS)

$(SEED_CORPUS): tests/fuzz/seed_corpus.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_AMQ) -Icore $< $(CORE_OBJ) -lm -o $@
