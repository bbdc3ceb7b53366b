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
 * table (sql/function_list.h): the forms that pass a filter derive from each
 * row's arguments, and whether a valid filter must give a row from its
 * operation and the capabilities of its kind's variants (core's registry),
 * so a new function or kind is probed with no edit here; a short hand list
 * adds the forms that do not derive. ?2, the valid filter of a function's
 * kind, is the kind's first seed; a kind without a seed gets one from its
 * aggregate.
 */
#include "../core/check.h"
#include "amq.h"
#include "format/variant.h"
#include "sql/functions.h"

#include <sqlite3.h>
#include <stdint.h>
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
    /* Every seed holds numbers (the forms probe with 7 and 2.5: a value of
     * another family is refused, test_sqlite.py's test_families); this one
     * text too. */
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) "
    "SELECT bloom_agg(CASE i % 3 WHEN 0 THEN i ELSE 'k' || i END, 0.2, 500) FROM n",
    /* Numbers and text: a filter holds one family per add, so the union of two. */
    "SELECT bloom_union(bloom_add(bloom_new(600, 0.01, 'classic'), 1), "
    "bloom_add(bloom_new(600, 0.01, 'classic'), 'x'))",
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
 * ?1 is the damaged blob and ?2 a valid filter of the function's kind. The
 * ordinary forms come from each row of core's table (derive_forms); the
 * forms it cannot derive are listed below (EXTRA_FORMS). */
struct form {
	char sql[160];
	const amq_sql_function *fn; /* the function that reads ?1 */
	/* ?1's name in its messages; NULL: ?1 is a later row's filter of a
	 * bulk aggregate whose first row passes ?2 (later_row_error). */
	const char *arg;
	bool reads_only; /* a valid blob must give a row */
	sqlite3_stmt *stmt;
};

/* Rows of two or more values: later rows see a changed state. */
#define TWO_VALUES(a, b) " FROM (SELECT " a " AS v UNION ALL SELECT " b ")"
/* ?1 after the valid ?2: a later row's filter. */
#define AFTER_VALID " FROM (SELECT ?2 AS f UNION ALL SELECT ?1)"
/* The non-constant path: the filter is a column, parsed on every row. */
#define FROM_COLUMN " FROM blobs, (SELECT 7 AS v UNION ALL SELECT 2.5)"

/* An extra form: a NULL value leaves the filter as it is, so a valid one
 * gives a row whatever the function does. */
#define NULL_VALUE 1u
/* The function's derived form is not run; this one is. */
#define INSTEAD 2u

struct extra_form {
	const char *fn;	  /* a row of core's table */
	const char *call; /* its arguments and the rest of the statement */
	const char *arg;  /* as struct form's */
	unsigned flags;
};

/* clang-format off */
static const struct extra_form EXTRA_FORMS[] = {
    {"bloom_add", "(?1, NULL)", "filter", NULL_VALUE},
    {"bloom_delete", "(?1, NULL)", "filter", NULL_VALUE},
    {"cuckoo_delete", "(?1, NULL)", "filter", NULL_VALUE},
    /* In place of the derived two rows of values: one row, and a NULL
     * second value. */
    {"bloom_delete_agg", "(?1, 7)", "filter", INSTEAD},
    {"cuckoo_add_agg", "(?1, v)" TWO_VALUES("7", "NULL"), "filter", INSTEAD},
    /* The bulk aggregates read the first row's filter; later rows pass
     * the damaged blob after a valid one (the same-filter rule). */
    {"bloom_add_agg", "(f, 7)" AFTER_VALID, NULL, 0},
    {"cuckoo_delete_agg", "(f, 7)" AFTER_VALID, NULL, 0},
    {"bloom_contains", "(f, v)" FROM_COLUMN, "filter", 0},
    {"cuckoo_count", "(f, v)" FROM_COLUMN, "filter", 0},
};
/* clang-format on */
#define NEXTRA (sizeof(EXTRA_FORMS) / sizeof(EXTRA_FORMS[0]))

/* Kinds whose adds may fail on a valid filter: a cuckoo table fills up. */
static const amq_kind ADDS_MAY_FAIL[] = {AMQ_KIND_CUCKOO};

/* True when every variant of kind (core's registry) has what op needs for
 * any value: add, remove or frequency. */
static bool every_variant_can(amq_kind kind, amq_sql_op op)
{
	bool some = false;
	for (size_t i = 0; i < amq_variant_count(); i++) {
		const amq_variant *v = amq_variant_at(i);
		if (v->kind != kind)
			continue;
		some = true;
		switch (op) {
		case AMQ_SQL_ADD:
		case AMQ_SQL_ADD_UNIQUE:
		case AMQ_SQL_ADD_AGG:
			if (v->add == NULL && v->add_grow == NULL)
				return false;
			break;
		case AMQ_SQL_DELETE:
		case AMQ_SQL_DELETE_AGG:
			if (v->remove == NULL)
				return false;
			break;
		case AMQ_SQL_FREQUENCY:
			if (v->frequency == NULL)
				return false;
			break;
		default:
			return false;
		}
	}
	return some;
}

/* Whether fn must give a row for every valid filter of its kind as ?1 (and
 * a valid ?2 of that kind): the reading operations always; an add, delete
 * or frequency when every variant of the kind has it (and, for adds, the
 * kind's adds cannot fail); the operations of two filters never, since ?1
 * and ?2 need not match. */
static bool reads_only(const amq_sql_function *fn)
{
	switch (fn->op) {
	case AMQ_SQL_CONTAINS:
	case AMQ_SQL_ESTIMATE:
	case AMQ_SQL_FPR:
	case AMQ_SQL_INFO:
		return true;
	case AMQ_SQL_ADD:
	case AMQ_SQL_ADD_UNIQUE:
	case AMQ_SQL_ADD_AGG:
		for (size_t i = 0; i < sizeof(ADDS_MAY_FAIL) / sizeof(ADDS_MAY_FAIL[0]); i++)
			if (ADDS_MAY_FAIL[i] == amq_sql_function_kind(fn))
				return false;
		return every_variant_can(amq_sql_function_kind(fn), fn->op);
	case AMQ_SQL_DELETE:
	case AMQ_SQL_DELETE_AGG:
	case AMQ_SQL_FREQUENCY:
		return every_variant_can(amq_sql_function_kind(fn), fn->op);
	default:
		return false;
	}
}

#define MAX_ARGS 8
enum arg_type { ARG_FILTER, ARG_VALUE, ARG_OTHER };

/* The types of fn's required arguments (its arguments string up to
 * min_args); how many, or -1 when more than MAX_ARGS. */
static int argument_types(const amq_sql_function *fn, enum arg_type *types)
{
	if (fn->min_args > MAX_ARGS)
		return -1;
	const char *s = fn->arguments;
	for (int i = 0; i < fn->min_args; i++) {
		while (*s == ' ' || *s == ',' || *s == '[')
			s++;
		size_t n = strcspn(s, ", []");
		types[i] = n == 6 && strncmp(s, "filter", 6) == 0  ? ARG_FILTER
			   : n == 5 && strncmp(s, "value", 5) == 0 ? ARG_VALUE
								   : ARG_OTHER;
		s += n;
	}
	return fn->min_args;
}

/* Appends a form of fn to forms[*n]. */
static void add_form(struct form *forms, size_t *n, const amq_sql_function *fn, const char *call,
		     const char *arg, bool reads)
{
	struct form *form = &forms[(*n)++];
	snprintf(form->sql, sizeof(form->sql), "SELECT %s%s", fn->name, call);
	form->fn = fn;
	form->arg = arg;
	form->reads_only = reads;
	form->stmt = NULL;
}

/*
 * The ordinary forms of fn from its required arguments: a scalar function
 * once per filter argument, that one ?1, any other filter ?2 and each value
 * 7 ("filter, filter": (?1, ?2) as "first filter", (?2, ?1) as "second
 * filter"); an aggregate of a filter and values over two rows of values
 * (?1, v) TWO_VALUES('7', '2.5'); an aggregate of a filter alone over a valid
 * row then ?1, (f) AFTER_VALID. Adds nothing for a function that takes no
 * filter; false (having said why) for a shape it does not know.
 */
static bool derive_forms(const amq_sql_function *fn, struct form *forms, size_t *n)
{
	static const char *const ORDINAL[] = {"first filter", "second filter", "third filter"};
	enum arg_type types[MAX_ARGS];
	int nargs = argument_types(fn, types), filters = 0, values = 0;
	for (int i = 0; i < nargs; i++) {
		filters += types[i] == ARG_FILTER;
		values += types[i] == ARG_VALUE;
	}
	if (nargs >= 0 && filters == 0)
		return true;
	if (nargs < 0 || filters + values != nargs || filters > 3 ||
	    (fn->aggregate && filters > 1)) {
		fprintf(stderr,
			"%s(%s): no forms derive from these arguments; list its forms in "
			"EXTRA_FORMS with INSTEAD\n",
			fn->name, fn->arguments);
		return false;
	}
	bool reads = reads_only(fn);
	int seen = 0;
	for (int p = 0; p < nargs; p++) {
		if (types[p] != ARG_FILTER)
			continue;
		char call[120] = "(";
		for (int j = 0; j < nargs; j++) {
			const char *a = "?2"; /* another filter */
			if (types[j] == ARG_VALUE)
				a = fn->aggregate ? "v" : "7";
			else if (j == p)
				a = fn->aggregate && values == 0 ? "f" : "?1";
			strcat(call, j ? ", " : "");
			strcat(call, a);
		}
		strcat(call, ")");
		if (fn->aggregate)
			strcat(call, values ? TWO_VALUES("7", "2.5") : AFTER_VALID);
		add_form(forms, n, fn, call, filters == 1 ? "filter" : ORDINAL[seen], reads);
		seen++;
	}
	return true;
}

/* Makes every form and prepares it; false (having said why) when an extra
 * form names a function core's table lacks, or a function's forms do not
 * derive. */
static bool prepare_forms(struct form *forms, size_t *nforms)
{
	size_t n = 0;
	for (size_t i = 0; i < NEXTRA; i++)
		if (amq_sql_function_named(EXTRA_FORMS[i].fn) == NULL) {
			fprintf(stderr, "%s: no such function in sql/function_list.h\n",
				EXTRA_FORMS[i].fn);
			return false;
		}
	for (size_t i = 0; i < amq_sql_function_count; i++) {
		const amq_sql_function *fn = &amq_sql_functions[i];
		bool instead = false;
		for (size_t j = 0; j < NEXTRA; j++)
			instead |= (EXTRA_FORMS[j].flags & INSTEAD) &&
				   strcmp(EXTRA_FORMS[j].fn, fn->name) == 0;
		if (!instead && !derive_forms(fn, forms, &n))
			return false;
	}
	for (size_t i = 0; i < NEXTRA; i++) {
		const struct extra_form *e = &EXTRA_FORMS[i];
		const amq_sql_function *fn = amq_sql_function_named(e->fn);
		add_form(forms, &n, fn, e->call, e->arg, (e->flags & NULL_VALUE) || reads_only(fn));
	}
	for (size_t i = 0; i < n; i++)
		if (sqlite3_prepare_v2(db, forms[i].sql, -1, &forms[i].stmt, NULL) != SQLITE_OK) {
			fprintf(stderr, "cannot prepare %s: %s\n", forms[i].sql,
				sqlite3_errmsg(db));
			return false;
		}
	*nforms = n;
	return true;
}

/* Runs every form over b and checks the outcome against core's verdict;
 * ok[kind] is the valid filter of each kind passed as ?2. */
static void probe_all(const struct form *forms, size_t nforms, const struct blob *b,
		      const struct blob *const *ok, sqlite3_stmt *store)
{
	sqlite3_reset(store);
	sqlite3_bind_blob(store, 1, b->size ? (const void *)b->bytes : "", (int)b->size,
			  SQLITE_STATIC);
	CHECK(sqlite3_step(store) == SQLITE_DONE, "storing the blob: %s", sqlite3_errmsg(db));

	for (size_t i = 0; i < nforms; i++) {
		const struct form *form = &forms[i];
		const struct blob *partner = ok[amq_sql_function_kind(form->fn)];
		char want[512];
		if (form->arg == NULL)
			later_row_error(b, partner, form->fn->name, want, sizeof(want));
		else
			expected_error(b, amq_sql_function_kind(form->fn), form->fn->name,
				       form->arg, want, sizeof(want));

		sqlite3_stmt *st = form->stmt;
		sqlite3_reset(st);
		sqlite3_bind_blob(st, 1, b->size ? (const void *)b->bytes : "", (int)b->size,
				  SQLITE_STATIC);
		if (sqlite3_bind_parameter_count(st) >= 2)
			sqlite3_bind_blob(st, 2, partner->bytes, (int)partner->size, SQLITE_STATIC);
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
		} else if (form->reads_only) {
			accepted++;
			CHECK(rc == SQLITE_DONE, "%s on a valid filter: %s", form->sql,
			      sqlite3_errmsg(db));
		}
	}
}

/* The kind of a valid filter. */
static amq_kind kind_of(const struct blob *b)
{
	amq_filter f;
	return amq_filter_open(&f, b->bytes, b->size, NULL) == AMQ_OK ? f.kind : (amq_kind)0;
}

/*
 * Appends to seeds, after SEEDS, one filter of every kind of core's table
 * that SEEDS has none of, built by the kind's aggregate (AGG) over 300
 * values, and sets first[kind] to the first seed of each kind; false
 * (having said why) for a kind with neither.
 */
static bool seed_every_kind(struct blob *seeds, size_t *nseeds, size_t *first)
{
	for (size_t i = 0; i < 256; i++)
		first[i] = SIZE_MAX;
	for (size_t i = 0; i < *nseeds; i++) {
		amq_kind kind = kind_of(&seeds[i]);
		if (first[kind] == SIZE_MAX)
			first[kind] = i;
	}
	for (size_t i = 0; i < amq_sql_function_count; i++) {
		const amq_sql_function *fn = &amq_sql_functions[i];
		amq_kind kind = amq_sql_function_kind(fn);
		if (kind == 0 || first[kind] != SIZE_MAX)
			continue;
		const amq_sql_function *agg = NULL;
		for (size_t j = 0; j < amq_sql_function_count && agg == NULL; j++)
			if (amq_sql_function_kind(&amq_sql_functions[j]) == kind &&
			    amq_sql_functions[j].op == AMQ_SQL_AGG)
				agg = &amq_sql_functions[j];
		if (agg == NULL) {
			fprintf(stderr, "%s: its kind has no seed and no aggregate to build one\n",
				fn->name);
			return false;
		}
		char sql[200];
		snprintf(sql, sizeof(sql),
			 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
			 "WHERE i < 300) SELECT %s(i) FROM n",
			 agg->name);
		first[kind] = *nseeds;
		seeds[(*nseeds)++] = seed_filter(sql);
	}
	return true;
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
	/* At most one form per argument of every function, and the extras. */
	struct form *forms = calloc(MAX_ARGS * amq_sql_function_count + NEXTRA, sizeof(*forms));
	size_t nforms;
	if (!prepare_forms(forms, &nforms)) {
		free(forms);
		return 1;
	}
	sqlite3_stmt *store;
	sqlite3_prepare_v2(db, "REPLACE INTO blobs(rowid, f) VALUES (1, ?1)", -1, &store, NULL);
	struct blob *seeds = calloc(NSEEDS + amq_sql_function_count, sizeof(*seeds));
	size_t nseeds = NSEEDS, first[256];
	for (size_t i = 0; i < NSEEDS; i++)
		seeds[i] = seed_filter(SEEDS[i]);
	if (!seed_every_kind(seeds, &nseeds, first)) {
		for (size_t i = 0; i < nseeds; i++)
			free(seeds[i].bytes);
		free(seeds);
		free(forms);
		return 1;
	}
	/* The valid ?2 of each kind: its first seed. */
	const struct blob *ok[256];
	for (size_t k = 0; k < 256; k++)
		ok[k] = first[k] == SIZE_MAX ? &seeds[0] : &seeds[first[k]];

	/* Every seed as it is must pass. */
	for (size_t i = 0; i < nseeds; i++)
		probe_all(forms, nforms, &seeds[i], ok, store);

	for (int round = 0; round < ROUNDS; round++) {
		size_t pick = rng() % nseeds;
		struct blob b = damage(&seeds[pick]);
		/* The partner of a union is the undamaged seed where it has the
		 * right kind, so the merge code runs on damaged input too. */
		const struct blob *partner[256];
		memcpy(partner, ok, sizeof(partner));
		partner[kind_of(&seeds[pick])] = &seeds[pick];
		probe_all(forms, nforms, &b, partner, store);
		free(b.bytes);
	}

	for (size_t i = 0; i < nforms; i++)
		sqlite3_finalize(forms[i].stmt);
	free(forms);
	sqlite3_finalize(store);
	for (size_t i = 0; i < nseeds; i++)
		free(seeds[i].bytes);
	free(seeds);
	sqlite3_close(db);
	printf("sqlite fuzz: %d blobs through %zu function forms: %d calls rejected the blob, "
	       "%d read it\n",
	       ROUNDS + (int)nseeds, nforms, rejected, accepted);
	return check_summary();
}
