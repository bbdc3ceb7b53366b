# SQLite extension: build/amq.so (`.load ./build/amq`), the ASan harnesses
# (damaged filters through every function; every error and out-of-memory
# path), `make demo` and `make bench-sqlite`. Included by the top Makefile,
# whose variables it uses.

SQLITE_SRC := $(wildcard sqlite/*.c)
SQLITE_HDR := $(wildcard sqlite/*.h)
SQLITE_OBJ := $(SQLITE_SRC:sqlite/%.c=$(BUILD)/sqlite/%.o)
SQLITE_HARNESSES := $(BUILD)/asan/sqlite_fuzz $(BUILD)/asan/sqlite_faults

TEST_BINARIES += $(SQLITE_HARNESSES)

.PHONY: bench-sqlite

$(BUILD)/sqlite/%.o: sqlite/%.c $(SQLITE_HDR) $(CORE_HDR) | check-build
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_AMQ) -Icore -c $< -o $@

$(BUILD)/amq.so: $(CORE_OBJ) $(SQLITE_OBJ)
	$(CC) -shared $(CORE_OBJ) $(SQLITE_OBJ) -lm -o $@

# The extension compiled into a test program (SQLITE_CORE) under ASan+UBSan.
$(BUILD)/asan/sqlite_%: tests/sqlite/%.c tests/core/check.h $(SQLITE_SRC) $(SQLITE_HDR) \
		$(CORE_ASAN_OBJ) | check-build
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_AMQ) $(SAN) -DSQLITE_CORE -Icore -Isqlite $< $(SQLITE_SRC) $(CORE_ASAN_OBJ) \
	  -lsqlite3 -lm -o $@

# The join-prefilter session of the README, on data it generates itself;
# first the packages it builds with (the README's first command, on a fresh
# machine).
demo: build-deps
	@$(MAKE) --no-print-directory $(BUILD)/amq.so
	@sqlite3 -batch -cmd '.load ./$(BUILD)/amq' :memory: < sqlite/demo.sql

bench-sqlite: $(BUILD)/amq.so
	@bash bench/sqlite/run.sh $(BUILD)/amq
