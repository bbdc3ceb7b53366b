/*
 * fuzz.c - the SQLite extension compiled into this program (SQLITE_CORE)
 * under AddressSanitizer + UndefinedBehaviorSanitizer, fed damaged filters.
 *
 * Valid filters of every kind and layout are built through SQL, then damaged
 * in many ways: truncated, extended, bits flipped, header bytes overwritten,
 * header fields changed and the header resealed (so the checksum matches and
 * the deeper checks are reached), random bytes. Each blob goes through every
 * function that takes a filter, both as a bound parameter (the per-statement
 * cache) and as a table column. Any memory error aborts the run; besides,
 * every call must end in a row or an error, and a blob that core rejects must
 * give exactly core's message for that blob. The functions come from core's
 * table (sql/function_list.h): a form names its function, which gives the
 * kind, and every function that takes a filter must have a form.
 */
#include "../core/check.h"
#include "amq.h"
#include "sql/functions.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

int sqlite3_amq_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

#define ROUNDS 1200

/* splitmix64: a fixed stream, so a failure is reproducible. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct blob {
	uint8_t *bytes;
	size_t size;
};

static sqlite3 *db;
static int rejected, accepted; /* probes of blobs core rejects / accepts */

/* Runs one SQL statement that returns one blob; exits on failure, since
 * without seeds nothing else can be tested. */
static struct blob seed_filter(const char *sql)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 0) != SQLITE_BLOB) {
		fprintf(stderr, "cannot build seed %s: %s\n", sql, sqlite3_errmsg(db));
		exit(1);
	}
	struct blob b = {NULL, (size_t)sqlite3_column_bytes(st, 0)};
	b.bytes = malloc(b.size);
	memcpy(b.bytes, sqlite3_column_blob(st, 0), b.size);
	sqlite3_finalize(st);
	return b;
}

static const char *const SEEDS[] = {
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400) "
    "SELECT bloom_agg(i) FROM n",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) "
    "SELECT bloom_agg('k' || i, 0.2, 500) FROM n",
    "SELECT bloom_add(bloom_add(bloom_new(600, 0.01, 'classic'), 1), 'x')",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) "
    "SELECT bloom_agg(i, 0.05, NULL, 'classic') FROM n",
    "SELECT bloom_agg(NULL)",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) "
    "SELECT bloom_agg(i % 40, 0.05, NULL, 'counting') FROM n",
    "SELECT bloom_delete(bloom_add(bloom_add(bloom_new(200, 0.1, 'counting'), 1), 2), 1)",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) "
    "SELECT bloom_agg(i, 0.05, 40, 'scalable') FROM n",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) "
    "SELECT cuckoo_agg(i) FROM n",
    "SELECT cuckoo_add(cuckoo_add(cuckoo_new(40, 0.1), 1), 1)",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) "
    "SELECT cuckoo_agg(i * 1.5, 0.000001) FROM n",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) "
    "SELECT cuckoo_agg(i, 0.1, NULL, 'b2') FROM n",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) "
    "SELECT cuckoo_agg(i, 0.01, NULL, 'b8') FROM n",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) "
    "SELECT cuckoo_agg(i, 0.001, NULL, 'semisorted') FROM n",
    "SELECT cuckoo_add(cuckoo_add(cuckoo_new(30, 0.3, 'semisorted'), 1), 1)",
};
#define NSEEDS (sizeof(SEEDS) / sizeof(SEEDS[0]))
#define FIRST_CUCKOO_SEED 8 /* SEEDS before it build bloom filters */

/* Changes one parsed header field of a valid filter and reseals it, so only
 * the checks after the checksum can catch the damage. */
static void reseal_with_damage(struct blob *b)
{
	amq_filter f;
	if (amq_filter_open(&f, b->bytes, b->size, NULL) != AMQ_OK)
		return;
	switch (rng() % 6) {
	case 0:
		f.cells = rng() % 4 == 0 ? rng() : f.cells + (rng() % 5) - 2;
		break;
	case 1:
		f.hashes = (uint32_t)(rng() % 40);
		break;
	case 2:
		f.items = rng() % 2 ? rng() : f.items + 1;
		break;
	case 3:
		f.kind = (amq_kind)(rng() % 4);
		break;
	case 4:
		f.layout = (amq_layout)(rng() % 5);
		break;
	default:
		/* Random payload bits under a valid header. */
		for (uint64_t i = 0; i < f.payload_size; i++)
			f.payload[i] = (uint8_t)rng();
		break;
	}
	amq_filter_seal(&f);
}

/* A damaged copy of seed. */
static struct blob damage(const struct blob *seed)
{
	struct blob b;
	size_t extra = rng() % 2 ? 0 : rng() % 64;
	b.size = seed->size;
	b.bytes = malloc(seed->size + extra + 1);
	memcpy(b.bytes, seed->bytes, seed->size);
	switch (rng() % 6) {
	case 0:
		b.size = rng() % seed->size;
		break;
	case 1:
		for (size_t i = 0; i < extra; i++)
			b.bytes[b.size++] = (uint8_t)rng();
		if (extra == 0)
			b.bytes[b.size++] = 0;
		break;
	case 2:
		for (int n = 1 + (int)(rng() % 8); n > 0; n--)
			b.bytes[rng() % b.size] ^= (uint8_t)(1u << (rng() % 8));
		break;
	case 3:
		b.bytes[rng() % AMQ_HEADER_BYTES] = (uint8_t)rng();
		break;
	case 4:
		reseal_with_damage(&b);
		break;
	default:
		b.size = rng() % (seed->size + 1);
		for (size_t i = 0; i < b.size; i++)
			b.bytes[i] = (uint8_t)rng();
		if (b.size >= 4 && rng() % 2)
			memcpy(b.bytes, "AMQF", 4);
		break;
	}
	return b;
}

/* What the extension must say about b as argument arg of function fn, where
 * a filter of kind is expected: "" when core accepts it, else core's
 * "<message>: <hint>". */
static void expected_error(const struct blob *b, amq_kind kind, const char *fn, const char *arg,
			   char *out, size_t cap)
{
	amq_filter f;
	amq_error err;
	if (amq_filter_read(&f, b->bytes, b->size, kind, false, fn, arg, &err) == AMQ_OK) {
		out[0] = '\0';
		return;
	}
	if (err.hint[0])
		snprintf(out, cap, "%s: %s", err.message, err.hint);
	else
		snprintf(out, cap, "%s", err.message);
}

/* What a bulk aggregate must say about b passed after first: "" when b has
 * first's length and 64-byte header (its identity: the header's checksum
 * covers every byte of a valid filter, and only first's bytes are read),
 * else the same-filter message. */
static void later_row_error(const struct blob *b, const struct blob *first, const char *fn,
			    char *out, size_t cap)
{
	if (b->size == first->size && b->size >= AMQ_HEADER_BYTES &&
	    memcmp(b->bytes, first->bytes, AMQ_HEADER_BYTES) == 0)
		out[0] = '\0';
	else
		snprintf(out, cap,
			 "%s: every row must pass the same filter, but row 2's filter differs "
			 "from row 1's: to change several filters in one statement, aggregate per "
			 "filter (GROUP BY the filter's key)",
			 fn);
}

/* The SQL forms that pass a filter to a function: "SELECT <fn><call>", where
 * ?1 is the damaged blob and ?2 a valid filter of the function's kind.
 * reads_only: a valid blob must give a row. */
struct probe {
	const char *fn;	  /* the function that reads ?1, a row of core's table */
	const char *call; /* its arguments and the rest of the statement */
	bool reads_only;
	/* ?1's name in its messages; NULL: ?1 is a later row's filter of a
	 * bulk aggregate whose first row passes ?2 (later_row_error). */
	const char *arg;
};

/* Rows of two or more values: later rows see a changed state. */
#define TWO_VALUES(a, b) " FROM (SELECT " a " AS v UNION ALL SELECT " b ")"
/* ?1 after the valid ?2: a later row's filter. */
#define AFTER_VALID " FROM (SELECT ?2 AS f UNION ALL SELECT ?1)"
/* The non-constant path: the filter is a column, parsed on every row. */
#define FROM_COLUMN " FROM blobs, (SELECT 7 AS v UNION ALL SELECT 'x')"

/* clang-format off */
static const struct probe PROBES[] = {
    {"bloom_contains", "(?1, 7)", true, "filter"},
    {"bloom_add", "(?1, 7)", true, "filter"},
    {"bloom_add", "(?1, NULL)", true, "filter"},
    {"bloom_union", "(?1, ?2)", false, "first filter"},
    {"bloom_union", "(?2, ?1)", false, "second filter"},
    {"bloom_intersect", "(?1, ?2)", false, "first filter"},
    {"bloom_intersect", "(?2, ?1)", false, "second filter"},
    {"bloom_union_agg", "(f)" AFTER_VALID, false, "filter"},
    {"bloom_count", "(?1)", true, "filter"},
    {"bloom_fpr", "(?1)", true, "filter"},
    {"bloom_info", "(?1)", true, "filter"},
    /* Valid for counting filters only, so not read-only in general. */
    {"bloom_delete", "(?1, 7)", false, "filter"},
    {"bloom_delete", "(?1, NULL)", true, "filter"},
    {"bloom_frequency", "(?1, 7)", false, "filter"},
    {"cuckoo_contains", "(?1, 7)", true, "filter"},
    {"cuckoo_count", "(?1, 7)", true, "filter"},
    {"cuckoo_add", "(?1, 7)", false, "filter"},
    {"cuckoo_delete", "(?1, 7)", true, "filter"},
    {"cuckoo_delete", "(?1, NULL)", true, "filter"},
    {"cuckoo_info", "(?1)", true, "filter"},
    {"cuckoo_add_unique", "(?1, 7)", false, "filter"},
    /* The bulk aggregates read the first row's filter; later rows pass
     * the damaged blob after a valid one (the same-filter rule). */
    {"bloom_add_agg", "(?1, v)" TWO_VALUES("7", "'x'"), true, "filter"},
    {"bloom_delete_agg", "(?1, 7)", false, "filter"},
    {"cuckoo_add_agg", "(?1, v)" TWO_VALUES("7", "NULL"), false, "filter"},
    {"cuckoo_delete_agg", "(?1, v)" TWO_VALUES("7", "'x'"), true, "filter"},
    {"bloom_add_agg", "(f, 7)" AFTER_VALID, true, NULL},
    {"cuckoo_delete_agg", "(f, 7)" AFTER_VALID, true, NULL},
    {"bloom_contains", "(f, v)" FROM_COLUMN, true, "filter"},
    {"cuckoo_count", "(f, v)" FROM_COLUMN, true, "filter"},
};
/* clang-format on */
#define NPROBES (sizeof(PROBES) / sizeof(PROBES[0]))

/* A probe ready to run: its statement and its function's row. */
struct form {
	char sql[160];
	const amq_sql_function *fn;
	sqlite3_stmt *stmt;
};

/* Prepares every probe; false (having said why) when a probe names a
 * function core's table lacks, or a function of the table that takes a
 * filter has no probe. */
static bool prepare_forms(struct form *forms)
{
	for (size_t i = 0; i < NPROBES; i++) {
		forms[i].fn = amq_sql_function_named(PROBES[i].fn);
		snprintf(forms[i].sql, sizeof(forms[i].sql), "SELECT %s%s", PROBES[i].fn,
			 PROBES[i].call);
		if (forms[i].fn == NULL) {
			fprintf(stderr, "%s: no such function in sql/function_list.h\n",
				PROBES[i].fn);
			return false;
		}
		if (sqlite3_prepare_v2(db, forms[i].sql, -1, &forms[i].stmt, NULL) != SQLITE_OK) {
			fprintf(stderr, "cannot prepare %s: %s\n", forms[i].sql,
				sqlite3_errmsg(db));
			return false;
		}
	}
	for (size_t i = 0; i < amq_sql_function_count; i++) {
		const amq_sql_function *fn = &amq_sql_functions[i];
		size_t n = 0;
		for (size_t j = 0; j < NPROBES; j++)
			n += forms[j].fn == fn;
		if (strncmp(fn->arguments, "filter", 6) == 0 && n == 0) {
			fprintf(stderr, "%s takes a filter but no probe passes it one\n", fn->name);
			return false;
		}
	}
	return true;
}

/* Runs every probe over b and checks the outcome against core's verdict. */
static void probe_all(const struct form *forms, const struct blob *b, const struct blob *bloom_ok,
		      const struct blob *cuckoo_ok, sqlite3_stmt *store)
{
	sqlite3_reset(store);
	sqlite3_bind_blob(store, 1, b->size ? (const void *)b->bytes : "", (int)b->size,
			  SQLITE_STATIC);
	CHECK(sqlite3_step(store) == SQLITE_DONE, "storing the blob: %s", sqlite3_errmsg(db));

	for (size_t i = 0; i < NPROBES; i++) {
		const struct probe *p = &PROBES[i];
		const struct form *form = &forms[i];
		const struct blob *ok =
		    amq_sql_function_kind(form->fn) == AMQ_KIND_BLOOM ? bloom_ok : cuckoo_ok;
		char want[512];
		if (p->arg == NULL)
			later_row_error(b, ok, p->fn, want, sizeof(want));
		else
			expected_error(b, amq_sql_function_kind(form->fn), p->fn, p->arg, want,
				       sizeof(want));

		sqlite3_stmt *st = form->stmt;
		sqlite3_reset(st);
		sqlite3_bind_blob(st, 1, b->size ? (const void *)b->bytes : "", (int)b->size,
				  SQLITE_STATIC);
		if (sqlite3_bind_parameter_count(st) >= 2)
			sqlite3_bind_blob(st, 2, ok->bytes, (int)ok->size, SQLITE_STATIC);
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
		CHECK(rc == SQLITE_DONE || rc == SQLITE_ERROR, "%s: step returned %d", form->sql,
		      rc);
		if (want[0]) {
			rejected++;
			CHECK(rc == SQLITE_ERROR && strcmp(sqlite3_errmsg(db), want) == 0,
			      "%s on a %zu-byte blob: got \"%s\", want \"%s\"", form->sql, b->size,
			      rc == SQLITE_ERROR ? sqlite3_errmsg(db) : "no error", want);
		} else if (p->reads_only) {
			accepted++;
			CHECK(rc == SQLITE_DONE, "%s on a valid filter: %s", form->sql,
			      sqlite3_errmsg(db));
		}
	}
}

int main(void)
{
	char *errmsg = NULL;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_amq_init(db, &errmsg, NULL) != SQLITE_OK) {
		fprintf(stderr, "cannot open the database with amq: %s\n", errmsg);
		return 1;
	}
	sqlite3_exec(db, "CREATE TABLE blobs(f BLOB)", NULL, NULL, NULL);
	struct form forms[NPROBES];
	if (!prepare_forms(forms))
		return 1;
	sqlite3_stmt *store;
	sqlite3_prepare_v2(db, "REPLACE INTO blobs(rowid, f) VALUES (1, ?1)", -1, &store, NULL);
	struct blob seeds[NSEEDS];
	for (size_t i = 0; i < NSEEDS; i++)
		seeds[i] = seed_filter(SEEDS[i]);

	/* Every seed as it is must pass. */
	for (size_t i = 0; i < NSEEDS; i++)
		probe_all(forms, &seeds[i], &seeds[0], &seeds[FIRST_CUCKOO_SEED], store);

	for (int round = 0; round < ROUNDS; round++) {
		size_t pick = rng() % NSEEDS;
		struct blob b = damage(&seeds[pick]);
		/* The partner of a union is the undamaged seed where it has the
		 * right kind, so the merge code runs on damaged input too. */
		bool bloom_seed = pick < FIRST_CUCKOO_SEED;
		probe_all(forms, &b, &seeds[bloom_seed ? pick : 0],
			  &seeds[bloom_seed ? FIRST_CUCKOO_SEED : pick], store);
		free(b.bytes);
	}

	for (size_t i = 0; i < NPROBES; i++)
		sqlite3_finalize(forms[i].stmt);
	sqlite3_finalize(store);
	for (size_t i = 0; i < NSEEDS; i++)
		free(seeds[i].bytes);
	sqlite3_close(db);
	printf("sqlite fuzz: %d blobs through %zu function forms: %d calls rejected the blob, "
	       "%d read it\n",
	       ROUNDS + (int)NSEEDS, NPROBES, rejected, accepted);
	return check_summary();
}
