/*
 * arguments.c - decoding sqlite3_value arguments into core inputs (value
 * hashes, filters, fpr, capacity, layout), the per-statement filter cache,
 * and mapping core results and errors onto SQLite results. No filter logic
 * lives here: every decision about filters is core's.
 */
#include "connection.h"

#include <stdarg.h>
#include <string.h>

/* Filters up to this size are recognised by a compare with a kept copy
 * (filter_argument); larger ones are verified again, unless verifying
 * decodes every cell. */
#define CACHED_BYTES ((size_t)1 << 20)

/* Core allocations go through SQLite's allocator so that a finished filter
 * can become a result with sqlite3_free as its destructor. */
static void *sqlite_alloc(void *ctx, size_t size)
{
	(void)ctx;
	return sqlite3_malloc64(size);
}

static void sqlite_free(void *ctx, void *ptr)
{
	(void)ctx;
	sqlite3_free(ptr);
}

const amq_allocator amq_sqlite_allocator = {.alloc = sqlite_alloc, .free = sqlite_free};

/* sqlite3_interrupt's flag on the connection ctx, which a running function
 * sees only through sqlite3_is_interrupted: SQLite 3.41 and later, in the
 * headers built against and in the library loaded into (an older one has no
 * such entry in its routine table). Older SQLite: false, so a long call ends
 * first and the statement stops at its next row. */
static bool sqlite_interrupted(void *ctx)
{
#if SQLITE_VERSION_NUMBER >= 3041000
	return sqlite3_libversion_number() >= 3041000 && sqlite3_is_interrupted(ctx);
#else
	(void)ctx;
	return false;
#endif
}

/* What extension.c registered the running function with. */
static const struct function_data *function_data(sqlite3_context *ctx)
{
	return sqlite3_user_data(ctx);
}

amq_allocator connection_allocator(sqlite3_context *ctx)
{
	return (amq_allocator){.alloc = sqlite_alloc,
			       .free = sqlite_free,
			       .ctx = sqlite3_context_db_handle(ctx),
			       .interrupted = sqlite_interrupted,
			       .spill = connection_spill(function_data(ctx)->conn)};
}

const char *fn_name(sqlite3_context *ctx)
{
	return function_data(ctx)->fn->name;
}

amq_kind fn_kind(sqlite3_context *ctx)
{
	return function_data(ctx)->kind;
}

amq_sql_op fn_op(sqlite3_context *ctx)
{
	return function_data(ctx)->fn->op;
}

struct amq_connection *fn_connection(sqlite3_context *ctx)
{
	return function_data(ctx)->conn;
}

const char *value_type_name(sqlite3_value *v)
{
	switch (sqlite3_value_type(v)) {
	case SQLITE_INTEGER:
		return "integer";
	case SQLITE_FLOAT:
		return "real";
	case SQLITE_TEXT:
		return "text";
	case SQLITE_BLOB:
		return "blob";
	default:
		return "null";
	}
}

void report_usage_error(sqlite3_context *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *detail = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	char *message = detail ? sqlite3_mprintf("%s: %s", fn_name(ctx), detail) : NULL;
	if (message)
		sqlite3_result_error(ctx, message, -1);
	else
		sqlite3_result_error_nomem(ctx);
	sqlite3_free(message);
	sqlite3_free(detail);
}

void report_core_error(sqlite3_context *ctx, const amq_error *err)
{
	if (err->status == AMQ_NO_MEMORY) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (err->status == AMQ_INTERRUPTED) {
		sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
		return;
	}
	if (err->hint[0] == '\0') {
		sqlite3_result_error(ctx, err->message, -1);
	} else {
		char *message = sqlite3_mprintf("%s: %s", err->message, err->hint);
		if (message == NULL) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
		sqlite3_result_error(ctx, message, -1);
		sqlite3_free(message);
	}
	/* A temporary file that failed is an I/O error, as SQLite's own are. */
	if (err->status == AMQ_SPILL_FAILED)
		sqlite3_result_error_code(ctx, SQLITE_IOERR);
}

/* decode_value for a value whose SQLite type is already known. */
static bool decode_typed(sqlite3_context *ctx, sqlite3_value *v, int type, amq_value *out)
{
	switch (type) {
	case SQLITE_INTEGER:
		*out = amq_value_integer(sqlite3_value_int64(v));
		return true;
	case SQLITE_FLOAT:
		*out = amq_value_real(sqlite3_value_double(v));
		return true;
	case SQLITE_TEXT: {
		/* Functions are registered SQLITE_UTF8, so this is UTF-8. */
		const unsigned char *text = sqlite3_value_text(v);
		if (text == NULL) {
			sqlite3_result_error_nomem(ctx);
			return false;
		}
		*out = amq_value_text(text, (size_t)sqlite3_value_bytes(v));
		return true;
	}
	default:
		/* A zero-length blob has a NULL pointer and hashes as empty. */
		*out = amq_value_blob(sqlite3_value_blob(v), (size_t)sqlite3_value_bytes(v));
		return true;
	}
}

bool decode_value(sqlite3_context *ctx, sqlite3_value *v, amq_value *out)
{
	return decode_typed(ctx, v, sqlite3_value_type(v), out);
}

void report_family_error(sqlite3_context *ctx, const amq_filter *f, const amq_value *v)
{
	amq_error err;
	amq_check_family(f, v, fn_name(ctx), "value", AMQ_DIALECT_SQL, &err);
	report_core_error(ctx, &err);
}

/* The family of values of a SQLite type (not NULL). */
static inline amq_family family_of_type(int type)
{
	return type == SQLITE_TEXT   ? AMQ_FAMILY_TEXT
	       : type == SQLITE_BLOB ? AMQ_FAMILY_BLOB
				     : AMQ_FAMILY_NUMBER;
}

/*
 * The hash of a value whose SQLite type is already known, straight from
 * SQLite's accessors: what a probe runs once per row. Decoding into an
 * amq_value first and hashing that (amq_value_hash) gives the same hash, but
 * GCC builds the struct on the stack, and reading it back stalls store
 * forwarding: 8 ns more per TEXT probe (bench/release).
 */
static bool hash_typed(sqlite3_context *ctx, sqlite3_value *v, int type, uint64_t seed,
		       uint64_t *out)
{
	switch (type) {
	case SQLITE_INTEGER:
		*out = amq_hash_int(sqlite3_value_int64(v), seed);
		return true;
	case SQLITE_FLOAT:
		*out = amq_hash_double(sqlite3_value_double(v), seed);
		return true;
	case SQLITE_TEXT: {
		const unsigned char *text = sqlite3_value_text(v);
		if (text == NULL) {
			sqlite3_result_error_nomem(ctx);
			return false;
		}
		*out = amq_hash_text(text, (size_t)sqlite3_value_bytes(v), seed);
		return true;
	}
	default: {
		const void *blob = sqlite3_value_blob(v);
		*out = amq_hash_blob(blob ? blob : "", (size_t)sqlite3_value_bytes(v), seed);
		return true;
	}
	}
}

bool hash_value(sqlite3_context *ctx, sqlite3_value *v, uint64_t seed, uint64_t *hash,
		amq_family *family)
{
	int type = sqlite3_value_type(v);
	*family = family_of_type(type);
	return hash_typed(ctx, v, type, seed, hash);
}

/* admit_value for a value whose SQLite type is already known; out may be
 * NULL (a probe, which needs only the hash). */
static bool admit_typed(sqlite3_context *ctx, const amq_filter *f, sqlite3_value *v, int type,
			amq_value *out, uint64_t *hash)
{
	if (!amq_filter_takes(f, family_of_type(type))) {
		amq_value value;
		if (decode_typed(ctx, v, type, &value))
			report_family_error(ctx, f, &value);
		return false;
	}
	if (out != NULL && !decode_typed(ctx, v, type, out))
		return false;
	return hash_typed(ctx, v, type, f->seed, hash);
}

bool admit_value(sqlite3_context *ctx, const amq_filter *f, sqlite3_value *v, amq_value *out,
		 uint64_t *hash)
{
	return admit_typed(ctx, f, v, sqlite3_value_type(v), out, hash);
}

bool filter_argument(sqlite3_context *ctx, sqlite3_value *v, const char *name, amq_filter *f)
{
	if (sqlite3_value_type(v) != SQLITE_BLOB) {
		report_usage_error(ctx, "%s must be a blob, got %s", name, value_type_name(v));
		return false;
	}
	const void *bytes = sqlite3_value_blob(v);
	size_t size = (size_t)sqlite3_value_bytes(v);
	/* Bytes identical to a filter that passed need no second look
	 * (verification is a function of the bytes alone), and comparing them
	 * with the connection's kept copy is cheaper than a check that decodes
	 * every cell (a cuckoo filter's counts every slot) and than a small
	 * filter's checksum. A filter past the caches whose check is only the
	 * checksum verifies in one pass at the speed of reading it, where the
	 * compare reads it and the copy. */
	bool recognise = size <= CACHED_BYTES || amq_verify_reads_cells(bytes, size);
	struct amq_connection *conn = function_data(ctx)->conn;
	bool trusted = recognise && connection_knows_verified(conn, bytes, size);
	amq_error err;
	if (amq_filter_read(f, bytes, size, fn_kind(ctx), trusted, fn_name(ctx), name, &err) !=
	    AMQ_OK) {
		report_core_error(ctx, &err);
		return false;
	}
	if (recognise && !trusted)
		connection_remember_verified(conn, bytes, size);
	return true;
}

bool filter_unless_null(sqlite3_context *ctx, sqlite3_value *v, amq_filter *f)
{
	return sqlite3_value_type(v) != SQLITE_NULL && filter_argument(ctx, v, "filter", f);
}

/*
 * A parsed filter kept as auxiliary data. SQLite keeps auxiliary data across
 * rows only for a constant argument (a literal or a bound parameter) and
 * drops it when the statement is reset, so the bytes it was made from stay
 * put while it lives. The parse views those bytes, so it is used only while
 * the argument still has the very address and length it was made from.
 */
struct filter_cache {
	const void *bytes;
	size_t size;
	struct probe_filter probe;
};

/* True when v is the very value cache was made from. */
static inline bool cache_holds(const struct filter_cache *cache, sqlite3_value *v)
{
	return sqlite3_value_blob(v) == cache->bytes &&
	       (size_t)sqlite3_value_bytes(v) == cache->size;
}

/* Parses the non-NULL filter argument v and keeps the parse as the
 * statement's auxiliary data; NULL (the error set) when that fails. Kept
 * out of line: it runs once per statement, and inlined its stack frame
 * would cost every row. */
static __attribute__((noinline)) const struct filter_cache *cache_filter(sqlite3_context *ctx,
									 sqlite3_value *v)
{
	amq_filter parsed;
	if (!filter_argument(ctx, v, "filter", &parsed))
		return NULL;
	struct filter_cache *cache = sqlite3_malloc64(sizeof(*cache));
	if (cache == NULL) {
		sqlite3_result_error_nomem(ctx);
		return NULL;
	}
	cache->bytes = parsed.bytes;
	cache->size = parsed.size;
	cache->probe.filter = parsed;
	cache->probe.contains = amq_filter_probe_for(&parsed);
	/* SQLite may free the cache at once (out of memory) or after this
	 * call (argument not constant), so read it back before trusting it. */
	sqlite3_set_auxdata(ctx, 0, cache, sqlite3_free);
	cache = sqlite3_get_auxdata(ctx, 0);
	if (cache == NULL)
		sqlite3_result_error_nomem(ctx);
	return cache;
}

bool probe_arguments(sqlite3_context *ctx, sqlite3_value **argv, const struct probe_filter **pf,
		     uint64_t *hash)
{
	/* This runs once per row: after the first row of a statement it asks
	 * SQLite only for the value's type, the auxiliary data, the filter's
	 * address and length, and the value itself. */
	int value_type = sqlite3_value_type(argv[1]);
	if (value_type == SQLITE_NULL)
		return false;
	const struct filter_cache *cache = sqlite3_get_auxdata(ctx, 0);
	if (cache == NULL || !cache_holds(cache, argv[0])) {
		if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
			return false;
		cache = cache_filter(ctx, argv[0]);
		if (cache == NULL)
			return false;
	}
	*pf = &cache->probe;
	if (value_type == SQLITE_INTEGER &&
	    amq_filter_takes(&cache->probe.filter, AMQ_FAMILY_NUMBER)) {
		/* The common key type, without admit_typed's frame. */
		*hash = amq_hash_int(sqlite3_value_int64(argv[1]), cache->probe.filter.seed);
		return true;
	}
	return admit_typed(ctx, &cache->probe.filter, argv[1], value_type, NULL, hash);
}

bool core_ok(sqlite3_context *ctx, amq_status st, const amq_error *err)
{
	if (st != AMQ_OK)
		report_core_error(ctx, err);
	return st == AMQ_OK;
}

bool fpr_argument(sqlite3_context *ctx, sqlite3_value *v, amq_sql_sizing *s)
{
	int type = sqlite3_value_type(v);
	amq_error err;
	if (type != SQLITE_INTEGER && type != SQLITE_FLOAT)
		return core_ok(ctx, amq_sql_argument_type(s, "fpr", value_type_name(v), &err),
			       &err);
	return core_ok(ctx, amq_sql_set_fpr(s, sqlite3_value_double(v), &err), &err);
}

bool integral_value(sqlite3_value *v, int64_t *n)
{
	int type = sqlite3_value_type(v);
	if (type == SQLITE_INTEGER) {
		*n = sqlite3_value_int64(v);
		return true;
	}
	if (type != SQLITE_FLOAT)
		return false;
	/* 1e6 is a REAL literal; accept it when it is a whole number. */
	double d = sqlite3_value_double(v);
	if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || (double)(int64_t)d != d)
		return false;
	*n = (int64_t)d;
	return true;
}

char *value_shown(sqlite3_value *v)
{
	switch (sqlite3_value_type(v)) {
	case SQLITE_INTEGER:
		return sqlite3_mprintf("%lld", sqlite3_value_int64(v));
	case SQLITE_FLOAT:
		return sqlite3_mprintf("real %.15g", sqlite3_value_double(v));
	default:
		return sqlite3_mprintf("%s", value_type_name(v));
	}
}

bool capacity_argument(sqlite3_context *ctx, sqlite3_value *v, amq_sql_sizing *s)
{
	int64_t n;
	amq_error err;
	if (!integral_value(v, &n)) {
		char *got = value_shown(v);
		if (got != NULL)
			core_ok(ctx, amq_sql_argument_type(s, "capacity", got, &err), &err);
		else
			sqlite3_result_error_nomem(ctx);
		sqlite3_free(got);
		return false;
	}
	return core_ok(ctx, amq_sql_set_capacity(s, n, &err), &err);
}

bool layout_argument(sqlite3_context *ctx, sqlite3_value *v, amq_sql_sizing *s)
{
	amq_error err;
	if (sqlite3_value_type(v) != SQLITE_TEXT)
		return core_ok(ctx, amq_sql_argument_type(s, "layout", value_type_name(v), &err),
			       &err);
	const unsigned char *name = sqlite3_value_text(v);
	if (name == NULL) {
		sqlite3_result_error_nomem(ctx);
		return false;
	}
	return core_ok(
	    ctx, amq_sql_set_layout(s, (const char *)name, (size_t)sqlite3_value_bytes(v), &err),
	    &err);
}

bool expansion_argument(sqlite3_context *ctx, sqlite3_value *v, amq_sql_sizing *s)
{
	amq_error err;
	if (sqlite3_value_type(v) != SQLITE_INTEGER)
		return core_ok(ctx, amq_sql_argument_type(s, "expansion", value_type_name(v), &err),
			       &err);
	return core_ok(ctx, amq_sql_set_expansion(s, sqlite3_value_int64(v), &err), &err);
}

void result_filter(sqlite3_context *ctx, amq_filter *f)
{
	uint8_t *bytes = f->bytes;
	size_t size = f->size;
	f->bytes = NULL;
	f->payload = NULL;
	/* Say why in our words rather than SQLite's "string or blob too big". */
	int limit = sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LENGTH, -1);
	if (size > (size_t)limit) {
		sqlite3_free(bytes);
		report_usage_error(ctx,
				   "the filter needs %llu bytes, more than SQLite's blob limit of "
				   "%d bytes: lower the capacity or raise the fpr",
				   (unsigned long long)size, limit);
		return;
	}
	sqlite3_result_blob64(ctx, bytes, size, sqlite3_free);
}

void result_info(sqlite3_context *ctx, const amq_filter *f)
{
	char json[AMQ_INFO_MAX]; /* core's guaranteed maximum */
	size_t len = amq_filter_info_json(f, json, sizeof(json));
	sqlite3_result_text(ctx, json, (int)len, SQLITE_TRANSIENT);
}
