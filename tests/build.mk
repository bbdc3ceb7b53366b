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

# clang also checks -Wmissing-variable-declarations here, which PostgreSQL 18
# builds extensions with and gcc 12 does not know.
FUZZ_CFLAGS := -std=c11 -O1 -g $(WARN) -Wmissing-variable-declarations -D_GNU_SOURCE \
	-fno-sanitize-recover=all -Icore
FUZZ_AVX2_OBJ := $(CORE_AVX2_SRC:core/%.c=$(BUILD)/fuzz/core/%.o)

$(FUZZ_READER): tests/fuzz/fuzz_reader.c $(CORE_PLAIN_SRC) $(FUZZ_AVX2_OBJ) $(CORE_HDR)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined $< $(CORE_PLAIN_SRC) \
	  $(FUZZ_AVX2_OBJ) -lm -o $@

$(BUILD)/fuzz/core/%.o: core/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined $(ARCH_FLAGS) -c $< -o $@

SEED_CORPUS := $(BUILD)/fuzz/seed_corpus
TEST_BINARIES += $(SEED_CORPUS)

$(SEED_CORPUS): tests/fuzz/seed_corpus.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_AMQ) -Icore $< $(CORE_OBJ) -lm -o $@

# The core unit tests again, cross-compiled for a big-endian (s390x) and a
# 64-bit ARM (aarch64) target and run under qemu-user by tests/cross/run.sh:
# portability is tested, not assumed. Static binaries need no target
# libraries at run time. xxhash.h is header-only; the cross compilers do not
# search /usr/include, so a directory holding only a link to it is added.
CROSS_ARCHES := s390x aarch64
CROSS_INCLUDE := $(BUILD)/cross/include
CROSS_CFLAGS := -std=c11 -O2 -D_GNU_SOURCE $(WARN) -Icore -I$(CROSS_INCLUDE)
CROSS_TESTS := $(foreach a,$(CROSS_ARCHES),$(CORE_TEST_SRC:tests/core/%.c=$(BUILD)/cross/$(a)/%))

TEST_BINARIES += $(CROSS_TESTS)

$(CROSS_INCLUDE)/xxhash.h: | check-build
	@mkdir -p $(dir $@)
	ln -sf /usr/include/xxhash.h $@

define cross_rule
$(BUILD)/cross/$(1)/core/%.o: core/%.c $(CORE_HDR) $(CROSS_INCLUDE)/xxhash.h
	@mkdir -p $$(dir $$@)
	$(1)-linux-gnu-gcc $(CROSS_CFLAGS) -c $$< -o $$@

$(BUILD)/cross/$(1)/%: tests/core/%.c $(wildcard tests/core/*.h) $(CORE_SRC:core/%.c=$(BUILD)/cross/$(1)/core/%.o)
	$(1)-linux-gnu-gcc $(CROSS_CFLAGS) $$< $(CORE_SRC:core/%.c=$(BUILD)/cross/$(1)/core/%.o) -lm -static -o $$@
endef
$(foreach a,$(CROSS_ARCHES),$(eval $(call cross_rule,$(a))))
# Keep the cross-compiled core objects between runs.
.SECONDARY: $(foreach a,$(CROSS_ARCHES),$(CORE_SRC:core/%.c=$(BUILD)/cross/$(a)/core/%.o))

# The test binaries that need no cross compiler, libFuzzer or qemu: what the
# Debian roots of tests/versions build to run the core and SQLite suites.
.PHONY: native-tests
native-tests: $(BUILD)/amq.so $(CORE_TESTS) $(CORE_ASAN_TESTS) $(SQLITE_HARNESSES)
