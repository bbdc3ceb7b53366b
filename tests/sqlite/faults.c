/*
 * faults.c - the SQLite extension compiled into this program (SQLITE_CORE)
 * under AddressSanitizer + UndefinedBehaviorSanitizer (leak checking on),
 * driven down its failure paths: every kind of argument and core error, an
 * out-of-memory at every allocation of a set of statements, and a failed
 * open, write or read of every temporary file a spilling aggregate makes. A
 * leak or a memory error on any of those paths fails the run; besides, each
 * statement must end in the outcome listed for it, with every temporary file
 * closed.
 */
#include "../core/check.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <string.h>

int sqlite3_amq_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

#define SERIES(n)                                                                                  \
	"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " #n ") "

/* Statements that must fail, each on a different error path. */
static const char *const FAILING[] = {
    "SELECT bloom_agg(i, 0.01, 0) FROM (" SERIES(10) "SELECT i FROM n)",
    "SELECT bloom_agg(i, 'x') FROM (" SERIES(10) "SELECT i FROM n)",
    "SELECT cuckoo_agg(i, 0.01, 1.5) FROM (" SERIES(10) "SELECT i FROM n)",
    /* cuckoo_agg collects first and fails at the end, holding 300 hashes. */
    SERIES(300) "SELECT cuckoo_agg(i, 0.01, 1e12) FROM n",
    "SELECT bloom_agg(1, 0.01, 1e12)",
    "SELECT bloom_union_agg(f) FROM (SELECT bloom_new(10, 0.01) AS f UNION ALL "
    "SELECT bloom_new(1000, 0.01))",
    "SELECT bloom_union_agg(f) FROM (SELECT bloom_new(10, 0.01) AS f UNION ALL "
    "SELECT cuckoo_new(10))",
    "SELECT bloom_union_agg(f) FROM (SELECT bloom_new(10, 0.01) AS f UNION ALL SELECT 'x')",
    "SELECT bloom_union(bloom_new(10, 0.01, 'classic'), bloom_new(11, 0.01, 'blocked'))",
    "SELECT bloom_agg(i, 0.01, NULL, 'fancy') FROM (" SERIES(10) "SELECT i FROM n)",
    "SELECT cuckoo_agg(i, 0.01, 100, 'blocked') FROM (" SERIES(10) "SELECT i FROM n)",
    "SELECT bloom_agg(i, 0.01, 100, 3) FROM (" SERIES(10) "SELECT i FROM n)",
    "SELECT bloom_intersect(bloom_new(10, 0.01), X'00')",
    "SELECT bloom_delete(bloom_new(10, 0.01), 1)",
    "SELECT bloom_new(10, 0.01, 'scalable', 0)",
    "SELECT bloom_new(10, 0.01, 'classic', 2)",
    "SELECT bloom_union(bloom_new(10, 0.01, 'scalable'), bloom_new(20, 0.01, 'scalable'))",
    "SELECT bloom_frequency(bloom_new(10, 0.01, 'classic'), 1)",
    "SELECT bloom_union(bloom_new(10, 0.01, 'counting'), bloom_new(10, 0.01, 'classic'))",
    "WITH RECURSIVE r(i, f) AS (SELECT 0, cuckoo_new(10) UNION ALL "
    "SELECT i + 1, cuckoo_add(f, i) FROM r WHERE i < 1000) SELECT count(*) FROM r",
    "SELECT bloom_new(1e12, 0.01)",
    "SELECT cuckoo_new(1e12)",
    "SELECT bloom_new(10, 0.01, 'x')",
    "SELECT bloom_new(10, 0.01, 7)",
    "SELECT bloom_new('10', 0.01)",
    "SELECT bloom_add(cuckoo_new(10), 1)",
    "SELECT cuckoo_delete(bloom_new(10, 0.01), 1)",
    "SELECT bloom_contains(substr(bloom_new(10, 0.01), 2), 1)",
    "SELECT cuckoo_count(zeroblob(200), 1)",
    "SELECT bloom_count(x) FROM (SELECT bloom_new(10, 0.01) AS x UNION ALL SELECT 4)",
    "SELECT bloom_add_agg(NULL, 1)",
    "SELECT bloom_add_agg(f, x) FROM (SELECT bloom_new(10, 0.01) AS f, 1 AS x UNION ALL "
    "SELECT bloom_new(1000, 0.01), 2)",
    "SELECT bloom_add_agg(f, x) FROM (SELECT bloom_new(10, 0.01) AS f, 1 AS x UNION ALL "
    "SELECT NULL, 2)",
    SERIES(300) "SELECT cuckoo_add_agg(cuckoo_new(10), i) FROM n",
    "SELECT bloom_delete_agg(bloom_new(10, 0.01), 1)",
    "SELECT cuckoo_add_agg('x', 1)",
    "SELECT cuckoo_delete_agg(bloom_new(10, 0.01), 1)",
    "SELECT cuckoo_delete_agg(substr(cuckoo_new(10), 2), 1)",
    "SELECT cuckoo_add_unique(bloom_new(10, 0.01), 1)",
    "WITH RECURSIVE r(i, f) AS (SELECT 0, cuckoo_new(10) UNION ALL "
    "SELECT i + 1, cuckoo_add_unique(f, i) FROM r WHERE i < 1000) SELECT count(*) FROM r",
    /* A value of a family the filter does not hold: the message. */
    "SELECT bloom_add(bloom_agg(1), 'text')",
    "SELECT cuckoo_contains(cuckoo_agg('a'), X'00')",
    "SELECT bloom_add_agg(bloom_new(10, 0.01), x) FROM (SELECT 1 AS x UNION ALL SELECT 'a')",
    /* Too big for the blob limit this program sets. */
    "SELECT bloom_new(100000, 0.01)",
    SERIES(100000) "SELECT bloom_agg(i) FROM n",
};

/* Statements that succeed given enough memory; run with an allocation
 * failure injected at each allocation in turn. ?1 is a bloom filter. */
static const char *const ALLOCATING[] = {
    SERIES(200) "SELECT bloom_agg(i) FROM n",
    SERIES(200) "SELECT cuckoo_agg('v' || i) FROM n",
    SERIES(200) "SELECT bloom_agg(i, 0.01, 500) FROM n",
    "SELECT bloom_agg(x) FROM (SELECT NULL AS x WHERE 0)",
    "SELECT bloom_union_agg(f) FROM (SELECT ?1 AS f UNION ALL SELECT ?1)",
    /* ?1 holds numbers; text goes into a filter of none yet. */
    "SELECT bloom_add(?1, 1000), bloom_add(bloom_new(10, 0.01), 'text'), bloom_union(?1, ?1), "
    "bloom_intersect(?1, ?1)",
    "SELECT bloom_count(?1), bloom_fpr(?1), bloom_info(?1), amq_hash('text')",
    SERIES(50) "SELECT sum(bloom_contains(?1, i)) FROM n",
    SERIES(50) "SELECT sum(bloom_contains(f, i)) FROM n, (SELECT ?1 AS f)",
    "SELECT cuckoo_delete(cuckoo_add(cuckoo_new(100), 1), 1)",
    SERIES(50) "SELECT sum(cuckoo_count(f, i)) FROM n, (SELECT cuckoo_agg(1) AS f)",
    "SELECT bloom_new(1000, 0.01, 'blocked'), cuckoo_new(1000, 0.001)",
    SERIES(200) "SELECT bloom_agg(i % 50, 0.01, NULL, 'counting') FROM n",
    SERIES(200) "SELECT bloom_agg(i % 50, 0.01, 100, 'counting') FROM n",
    "SELECT bloom_frequency(bloom_delete(bloom_add(bloom_new(100, 0.01, 'counting'), 1), 2), 1)",
    SERIES(200) "SELECT bloom_agg(i, 0.01, 20, 'scalable') FROM n",
    "WITH RECURSIVE r(i, f) AS (SELECT 0, bloom_new(5, 0.01, 'scalable', 3) UNION ALL "
    "SELECT i + 1, bloom_add(f, i) FROM r WHERE i < 40) SELECT bloom_info(f) FROM r",
    SERIES(200) "SELECT bloom_add_agg(?1, i) FROM n",
    "SELECT bloom_add_agg(?1, x) FROM (SELECT NULL AS x WHERE 0)",
    SERIES(200) "SELECT bloom_add_agg(bloom_new(20, 0.01, 'scalable'), i) FROM n",
    SERIES(100) "SELECT bloom_delete_agg(f, i % 10) FROM n, "
		"(SELECT bloom_add_agg(bloom_new(200, 0.01, 'counting'), i) AS f FROM n)",
    SERIES(100) "SELECT cuckoo_delete_agg(f, i) FROM n, "
		"(SELECT cuckoo_add_agg(cuckoo_new(200), i) AS f FROM n)",
    "SELECT cuckoo_add_unique(cuckoo_add_unique(cuckoo_new(100), 1), 1)",
};

/* Aggregates that spill at amq_work_mem(65536) (a builder then holds 4096
 * hashes): distinct values, a counting filter's rows, and a cuckoo filter,
 * over a stored table (a recursive CTE would allocate on every row). */
#define SPILL_ROWS SERIES(20000) "INSERT INTO spill SELECT i FROM n"
static const char *const SPILLING[] = {
    "SELECT bloom_agg(i) FROM spill",
    "SELECT bloom_agg(i % 50, 0.01, NULL, 'counting') FROM spill",
    "SELECT cuckoo_agg(i % 9000, 0.01, NULL, 'semisorted') FROM spill",
};

/* SQLite's allocator with a countdown: when it reaches zero, allocations
 * fail until the countdown is set again. -1 never fails. */
static sqlite3_mem_methods system_mem;
static int countdown = -1;

static void *faulty_malloc(int n)
{
	if (countdown == 0)
		return NULL;
	if (countdown > 0)
		countdown--;
	return system_mem.xMalloc(n);
}

static void *faulty_realloc(void *p, int n)
{
	if (countdown == 0)
		return NULL;
	if (countdown > 0)
		countdown--;
	return system_mem.xRealloc(p, n);
}

/*
 * A VFS over the default one whose temporary journals (what amq's aggregates
 * spill to) fail on demand: the open, write or read its countdown names (0:
 * the next one) returns an I/O error, once. It counts the files open.
 */
enum io_call { IO_OPEN, IO_WRITE, IO_READ, IO_CALLS };
static const char *const IO_VERB[IO_CALLS] = {"create", "write", "read"};
static int io_countdown[IO_CALLS] = {-1, -1, -1};
static bool io_reached;
static int temp_open, temp_opened;
static sqlite3_vfs *real_vfs;

struct shim_file {
	sqlite3_file base;
	sqlite3_file *real; /* the default VFS's file, right after this struct */
};

static bool io_fails(enum io_call call)
{
	if (io_countdown[call] < 0 || io_countdown[call]-- > 0)
		return false;
	io_reached = true;
	return true;
}

static sqlite3_file *real_file(sqlite3_file *f)
{
	return ((struct shim_file *)f)->real;
}

static int shim_close(sqlite3_file *f)
{
	temp_open--;
	return real_file(f)->pMethods->xClose(real_file(f));
}

static int shim_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 offset)
{
	if (io_fails(IO_READ))
		return SQLITE_IOERR_READ;
	return real_file(f)->pMethods->xRead(real_file(f), buf, n, offset);
}

static int shim_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 offset)
{
	if (io_fails(IO_WRITE))
		return SQLITE_IOERR_WRITE;
	return real_file(f)->pMethods->xWrite(real_file(f), buf, n, offset);
}

static int shim_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return real_file(f)->pMethods->xTruncate(real_file(f), size);
}

static int shim_sync(sqlite3_file *f, int flags)
{
	return real_file(f)->pMethods->xSync(real_file(f), flags);
}

static int shim_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return real_file(f)->pMethods->xFileSize(real_file(f), size);
}

static int shim_lock(sqlite3_file *f, int level)
{
	return real_file(f)->pMethods->xLock(real_file(f), level);
}

static int shim_unlock(sqlite3_file *f, int level)
{
	return real_file(f)->pMethods->xUnlock(real_file(f), level);
}

static int shim_check_reserved_lock(sqlite3_file *f, int *out)
{
	return real_file(f)->pMethods->xCheckReservedLock(real_file(f), out);
}

static int shim_file_control(sqlite3_file *f, int op, void *arg)
{
	return real_file(f)->pMethods->xFileControl(real_file(f), op, arg);
}

static int shim_sector_size(sqlite3_file *f)
{
	return real_file(f)->pMethods->xSectorSize(real_file(f));
}

static int shim_device_characteristics(sqlite3_file *f)
{
	return real_file(f)->pMethods->xDeviceCharacteristics(real_file(f));
}

static const sqlite3_io_methods shim_methods = {
    .iVersion = 1,
    .xClose = shim_close,
    .xRead = shim_read,
    .xWrite = shim_write,
    .xTruncate = shim_truncate,
    .xSync = shim_sync,
    .xFileSize = shim_file_size,
    .xLock = shim_lock,
    .xUnlock = shim_unlock,
    .xCheckReservedLock = shim_check_reserved_lock,
    .xFileControl = shim_file_control,
    .xSectorSize = shim_sector_size,
    .xDeviceCharacteristics = shim_device_characteristics,
};

static int shim_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
	(void)vfs;
	if (!(flags & SQLITE_OPEN_TEMP_JOURNAL))
		return real_vfs->xOpen(real_vfs, name, f, flags, out);
	struct shim_file *shim = (struct shim_file *)f;
	shim->base.pMethods = NULL;
	if (io_fails(IO_OPEN))
		return SQLITE_CANTOPEN;
	shim->real = (sqlite3_file *)(shim + 1);
	int rc = real_vfs->xOpen(real_vfs, name, shim->real, flags, out);
	if (rc == SQLITE_OK) {
		shim->base.pMethods = &shim_methods;
		temp_open++;
		temp_opened++;
	}
	return rc;
}

/* Runs sql to the end with ?1 bound to filter; returns the final code. */
static int run(sqlite3 *db, const char *sql, const void *filter, int size)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if (filter != NULL)
		sqlite3_bind_blob(st, 1, filter, size, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	sqlite3_finalize(st);
	return rc;
}

int main(void)
{
	sqlite3_config(SQLITE_CONFIG_GETMALLOC, &system_mem);
	sqlite3_mem_methods faulty = system_mem;
	faulty.xMalloc = faulty_malloc;
	faulty.xRealloc = faulty_realloc;
	sqlite3_config(SQLITE_CONFIG_MALLOC, &faulty);

	sqlite3 *db;
	char *errmsg = NULL;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_amq_init(db, &errmsg, NULL) != SQLITE_OK) {
		fprintf(stderr, "cannot open the database with amq: %s\n", errmsg);
		return 1;
	}
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 100000);

	for (size_t i = 0; i < sizeof(FAILING) / sizeof(FAILING[0]); i++) {
		int rc = run(db, FAILING[i], NULL, 0);
		CHECK(rc == SQLITE_ERROR, "%s: returned %d (%s), want an error", FAILING[i], rc,
		      sqlite3_errmsg(db));
	}

	/* A bloom filter for ?1, built before any fault is injected. */
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db, SERIES(100) "SELECT bloom_agg(i) FROM n", -1, &st, NULL);
	CHECK(sqlite3_step(st) == SQLITE_ROW, "building the bound filter: %s", sqlite3_errmsg(db));
	int size = sqlite3_column_bytes(st, 0);
	unsigned char filter[4096];
	CHECK(size > 0 && (size_t)size <= sizeof(filter), "bound filter of %d bytes", size);
	memcpy(filter, sqlite3_column_blob(st, 0), (size_t)size);
	sqlite3_finalize(st);

	int injected = 0;
	for (size_t i = 0; i < sizeof(ALLOCATING) / sizeof(ALLOCATING[0]); i++) {
		CHECK(run(db, ALLOCATING[i], filter, size) == SQLITE_DONE, "%s without faults: %s",
		      ALLOCATING[i], sqlite3_errmsg(db));
		/* Fail the k-th allocation for every k until the statement gets
		 * through without reaching the fault. */
		for (int k = 0;; k++) {
			countdown = k;
			int rc = run(db, ALLOCATING[i], filter, size);
			bool reached = countdown == 0;
			countdown = -1;
			CHECK(rc == SQLITE_DONE || rc == SQLITE_NOMEM || rc == SQLITE_ERROR,
			      "%s failing allocation %d: returned %d", ALLOCATING[i], k, rc);
			if (!reached) {
				CHECK(rc == SQLITE_DONE, "%s with %d allocations: %d",
				      ALLOCATING[i], k, rc);
				break;
			}
			injected++;
		}
	}
	sqlite3_close(db);

	/* The spilling aggregates on a connection of the failing VFS: each
	 * open, write and read of a temporary file fails in turn, then each
	 * allocation. */
	static sqlite3_vfs shim_vfs;
	real_vfs = sqlite3_vfs_find(NULL);
	shim_vfs = *real_vfs;
	shim_vfs.zName = "amq_faults";
	shim_vfs.szOsFile = (int)sizeof(struct shim_file) + real_vfs->szOsFile;
	shim_vfs.xOpen = shim_open;
	shim_vfs.pNext = NULL;
	if (sqlite3_vfs_register(&shim_vfs, 0) != SQLITE_OK ||
	    sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			    "amq_faults") != SQLITE_OK ||
	    sqlite3_amq_init(db, &errmsg, NULL) != SQLITE_OK) {
		fprintf(stderr, "cannot open the database with amq on the failing VFS: %s\n",
			errmsg);
		return 1;
	}
	CHECK(run(db, "SELECT amq_work_mem(65536)", NULL, 0) == SQLITE_DONE &&
		  run(db, "CREATE TABLE spill(i INTEGER)", NULL, 0) == SQLITE_DONE &&
		  run(db, SPILL_ROWS, NULL, 0) == SQLITE_DONE,
	      "amq_work_mem and the rows: %s", sqlite3_errmsg(db));
	int io_injected = 0, spill_injected = 0;
	for (size_t i = 0; i < sizeof(SPILLING) / sizeof(SPILLING[0]); i++) {
		temp_opened = 0;
		CHECK(run(db, SPILLING[i], NULL, 0) == SQLITE_DONE && temp_opened > 0 &&
			  temp_open == 0,
		      "%s: %s, %d temporary files opened, %d open", SPILLING[i], sqlite3_errmsg(db),
		      temp_opened, temp_open);
		for (int call = 0; call < IO_CALLS; call++) {
			char want[64];
			snprintf(want, sizeof(want),
				 "could not %s a temporary file: ", IO_VERB[call]);
			for (int k = 0;; k++) {
				io_countdown[call] = k;
				io_reached = false;
				int rc = run(db, SPILLING[i], NULL, 0);
				io_countdown[call] = -1;
				CHECK(temp_open == 0, "%s failing %s %d: %d temporary files open",
				      SPILLING[i], IO_VERB[call], k, temp_open);
				if (!io_reached) {
					CHECK(rc == SQLITE_DONE, "%s with %d %ss: %d", SPILLING[i],
					      k, IO_VERB[call], rc);
					break;
				}
				CHECK(rc == SQLITE_IOERR &&
					  strncmp(sqlite3_errmsg(db), want, strlen(want)) == 0,
				      "%s failing %s %d: returned %d (%s)", SPILLING[i],
				      IO_VERB[call], k, rc, sqlite3_errmsg(db));
				io_injected++;
			}
		}
		for (int k = 0;; k++) {
			countdown = k;
			int rc = run(db, SPILLING[i], NULL, 0);
			bool reached = countdown == 0;
			countdown = -1;
			CHECK(temp_open == 0 && (rc == SQLITE_DONE || rc == SQLITE_NOMEM),
			      "%s failing allocation %d: returned %d (%s), %d temporary files open",
			      SPILLING[i], k, rc, sqlite3_errmsg(db), temp_open);
			if (!reached)
				break;
			spill_injected++;
		}
	}
	sqlite3_close(db);
	sqlite3_vfs_unregister(&shim_vfs);
	printf("sqlite faults: %zu failing statements, %d injected allocation failures; "
	       "%zu spilling statements, %d failed temporary-file calls, %d allocation "
	       "failures\n",
	       sizeof(FAILING) / sizeof(FAILING[0]), injected,
	       sizeof(SPILLING) / sizeof(SPILLING[0]), io_injected, spill_injected);
	return check_summary();
}
