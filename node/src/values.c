/*
 * values.c - JavaScript values as SQL values: each is hashed with core's
 * amq_hash_* exactly as the equal SQL value is hashed in SQLite, PostgreSQL
 * and Python (docs/HASHING.md). number is an integer when integral (3 and
 * 3.0 are one value in JavaScript, as in SQL), else a real; bigint an
 * integer (outside int64 the nearest double, as PostgreSQL's numeric);
 * boolean 0 or 1; string its UTF-8 text; Buffer and Uint8Array blobs; Date
 * the text PostgreSQL hashes for a timestamptz, its UTC instant, as Python
 * hashes an aware datetime. Every other type is a TypeError, as PostgreSQL
 * refuses types it cannot hash: a value never silently misses. null and
 * undefined are SQL's NULL, which the callers answer as SQL answers NULL.
 */
#include "amq_node.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TYPE_HINT                                                                                  \
	"pass a number, bigint, boolean, string, Buffer or Uint8Array, or Date (convert others "   \
	"to a string or a Buffer)"

/* The number value d: an integer when integral within int64 (-0 is 0), as
 * amq_hash_double hashes it, so that messages show it as SQL does. */
static amq_value number_value(double d)
{
	if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(int64_t)d)
		return amq_value_integer((int64_t)d);
	return amq_value_real(d);
}

/* A bigint outside int64: Number(value), the correctly rounded double
 * (infinite past the largest), as PostgreSQL hashes such a numeric. */
static bool big_value(napi_env env, napi_value value, amq_value *out)
{
	napi_value global, number, result;
	double d;
	NAPI_TRY(napi_get_global(env, &global));
	NAPI_TRY(napi_get_named_property(env, global, "Number", &number));
	NAPI_TRY(napi_call_function(env, global, number, 1, &value, &result));
	NAPI_TRY(napi_get_value_double(env, result, &d));
	*out = amq_value_real(d);
	return true;
fail:
	return false;
}

/* The civil date of a day count from 1970-01-01 (proleptic Gregorian, year
 * 0 being 1 BC), by Howard Hinnant's days-to-civil algorithm. */
static void civil_from_days(int64_t z, int64_t *year, int *month, int *day)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*day = (int)(doy - (153 * mp + 2) / 5 + 1);
	*month = (int)(mp < 10 ? mp + 3 : mp - 9);
	*year = yoe + era * 400 + (*month <= 2);
}

/*
 * A Date as the text of its UTC instant that PostgreSQL hashes for a
 * timestamptz: 'YYYY-MM-DD HH:MM:SS', then '.' and the milliseconds without
 * trailing zeros when not zero, then ' BC' for years before 1 (year 0 is
 * 0001 BC). An invalid Date is a TypeError.
 */
static bool date_value(napi_env env, napi_value value, amq_node_value *out)
{
	double ms;
	if (napi_get_date_value(env, value, &ms) != napi_ok)
		return false;
	if (!isfinite(ms)) {
		amq_node_type_error(env, "cannot hash an invalid Date");
		return false;
	}
	int64_t t = (int64_t)ms;
	int64_t days = t / 86400000, rest = t % 86400000;
	if (rest < 0) {
		rest += 86400000;
		days--;
	}
	int64_t year;
	int month, day;
	civil_from_days(days, &year, &month, &day);
	bool bc = year <= 0;
	int msec = (int)(rest % 1000);
	int len = snprintf(out->text, sizeof(out->text), "%04lld-%02d-%02d %02d:%02d:%02d",
			   (long long)(bc ? 1 - year : year), month, day, (int)(rest / 3600000),
			   (int)(rest / 60000 % 60), (int)(rest / 1000 % 60));
	if (msec != 0) {
		int digits = 3;
		while (msec % 10 == 0) {
			msec /= 10;
			digits--;
		}
		len += snprintf(out->text + len, sizeof(out->text) - (size_t)len, ".%0*d", digits,
				msec);
	}
	if (bc)
		len += snprintf(out->text + len, sizeof(out->text) - (size_t)len, " BC");
	out->value = amq_value_text(out->text, (size_t)len);
	return true;
}

/* A string's UTF-8: into out->text when it fits, else into a buffer of its
 * own. V8 never writes part of a character, so a copy that ends within 4
 * bytes of the buffer's end may be short, and the length is asked for. */
static bool string_value(napi_env env, napi_value value, amq_node_value *out)
{
	size_t len;
	if (napi_get_value_string_utf8(env, value, out->text, sizeof(out->text), &len) != napi_ok)
		return false;
	if (len + 4 < sizeof(out->text)) {
		out->value = amq_value_text(len ? out->text : NULL, len);
		return true;
	}
	if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok)
		return false;
	out->heap = malloc(len + 1);
	if (out->heap == NULL) {
		napi_throw_range_error(env, NULL, "out of memory");
		return false;
	}
	if (napi_get_value_string_utf8(env, value, out->heap, len + 1, &len) != napi_ok) {
		free(out->heap);
		out->heap = NULL;
		return false;
	}
	out->value = amq_value_text(out->heap, len);
	return true;
}

/* The TypeError of a value of no hashable type. */
static bool refuse(napi_env env, const char *type)
{
	char text[320];
	snprintf(text, sizeof(text), "cannot hash values of type %s: %s", type, TYPE_HINT);
	amq_node_type_error(env, text);
	return false;
}

/* An object that is a value: a Buffer or Uint8Array (a blob) or a Date. */
static bool object_value(napi_env env, napi_value value, amq_node_value *out)
{
	bool is;
	if (napi_is_typedarray(env, value, &is) != napi_ok)
		return false;
	if (is) {
		napi_typedarray_type type;
		size_t length;
		void *data;
		if (napi_get_typedarray_info(env, value, &type, &length, &data, NULL, NULL) !=
		    napi_ok)
			return false;
		if (type != napi_uint8_array)
			return refuse(env, "typed array other than Uint8Array");
		out->value = amq_value_blob(length ? data : NULL, length);
		return true;
	}
	if (napi_is_date(env, value, &is) != napi_ok)
		return false;
	if (is)
		return date_value(env, value, out);
	if (napi_is_array(env, value, &is) != napi_ok)
		return false;
	return refuse(env, is ? "Array (an array is no single value)" : "object");
}

bool amq_node_decode(napi_env env, napi_value value, amq_node_value *out)
{
	napi_valuetype type;
	out->heap = NULL;
	out->is_null = false;
	if (napi_typeof(env, value, &type) != napi_ok)
		return false;
	switch (type) {
	case napi_undefined:
	case napi_null:
		out->is_null = true;
		return true;
	case napi_number: {
		double d;
		if (napi_get_value_double(env, value, &d) != napi_ok)
			return false;
		out->value = number_value(d);
		return true;
	}
	case napi_bigint: {
		int64_t i;
		bool lossless;
		if (napi_get_value_bigint_int64(env, value, &i, &lossless) != napi_ok)
			return false;
		if (!lossless)
			return big_value(env, value, &out->value);
		out->value = amq_value_integer(i);
		return true;
	}
	case napi_boolean: {
		bool b;
		if (napi_get_value_bool(env, value, &b) != napi_ok)
			return false;
		out->value = amq_value_integer(b);
		return true;
	}
	case napi_string:
		return string_value(env, value, out);
	case napi_object:
		return object_value(env, value, out);
	case napi_symbol:
		return refuse(env, "symbol");
	case napi_function:
		return refuse(env, "function");
	case napi_external:
		return refuse(env, "external");
	}
	return refuse(env, "unknown");
}

void amq_node_value_release(amq_node_value *v)
{
	free(v->heap);
	v->heap = NULL;
}

napi_value amq_node_refuse_family(napi_env env, const amq_filter *f, napi_value value,
				  const char *function)
{
	amq_node_value v;
	amq_error err;
	if (!amq_node_decode(env, value, &v))
		return NULL;
	/* AMQ_OK only when f takes the value after all: the caller's mistake. */
	if (amq_check_family(f, &v.value, function, "value", AMQ_DIALECT_SQL, &err) == AMQ_OK)
		napi_throw_error(env, NULL, "amq: a value refused that its filter takes");
	else
		amq_node_throw(env, &err);
	amq_node_value_release(&v);
	return NULL;
}

/* Where a chunk of hashes is gathered before it is handed on. */
struct chunker {
	uint64_t hashes[AMQ_NODE_CHUNK];
	bool nulls[AMQ_NODE_CHUNK]; /* which slots are a null, when any_null */
	bool any_null;
	size_t n;
	amq_node_chunk_fn fn;
	void *ctx;
};

/* Hands the chunk gathered so far on and starts the next. */
static inline bool chunk_flush(napi_env env, struct chunker *c)
{
	size_t n = c->n;
	bool any_null = c->any_null;
	c->n = 0;
	c->any_null = false;
	return n == 0 || c->fn(env, c->ctx, c->hashes, any_null ? c->nulls : NULL, n);
}

/* Adds one hash (or a null slot) to the chunk, handing it on when full. */
static inline bool chunk_put(napi_env env, struct chunker *c, uint64_t hash, bool is_null)
{
	if (is_null && !c->any_null) {
		memset(c->nulls, 0, c->n * sizeof(bool));
		c->any_null = true;
	}
	if (c->any_null)
		c->nulls[c->n] = is_null;
	c->hashes[c->n] = hash;
	return ++c->n < AMQ_NODE_CHUNK || chunk_flush(env, c);
}

/* True when the filter takes a value of family (a builder takes all and
 * gathers them); false when the value is refused. */
static inline bool admits(amq_node_families *fam, amq_family family)
{
	if (fam->check)
		return amq_filter_takes(&fam->filter, family);
	amq_filter_note_family(&fam->filter, family);
	return true;
}

/* The refusal of a typed array's numbers, shown by its first. */
static bool refuse_number(napi_env env, const amq_node_families *fam, double first)
{
	amq_value v = number_value(first);
	amq_error err;
	amq_check_family(&fam->filter, &v, fam->function, "value", AMQ_DIALECT_SQL, &err);
	amq_node_throw(env, &err);
	return false;
}

/* The first of a typed array's numbers, for the message that refuses them. */
static double typed_first(napi_typedarray_type type, const void *data)
{
	switch (type) {
	case napi_int8_array:
		return *(const int8_t *)data;
	case napi_uint8_array:
	case napi_uint8_clamped_array:
		return *(const uint8_t *)data;
	case napi_int16_array:
		return *(const int16_t *)data;
	case napi_uint16_array:
		return *(const uint16_t *)data;
	case napi_int32_array:
		return *(const int32_t *)data;
	case napi_uint32_array:
		return *(const uint32_t *)data;
	case napi_float32_array:
		return *(const float *)data;
	case napi_float64_array:
		return *(const double *)data;
	case napi_bigint64_array:
		return (double)*(const int64_t *)data;
	case napi_biguint64_array:
		return (double)*(const uint64_t *)data;
	}
	return 0;
}

/* The hashes of a typed array's n numbers at data, of the given type. */
static bool hash_typed(napi_env env, napi_typedarray_type type, const void *data, size_t n,
		       uint64_t seed, amq_node_families *fam, struct chunker *c)
{
	if (n == 0)
		return true;
	/* Every item a number: one check for them all. */
	if (!admits(fam, AMQ_FAMILY_NUMBER))
		return refuse_number(env, fam, typed_first(type, data));
#define HASH_EACH(ctype, hash_fn)                                                                  \
	do {                                                                                       \
		const ctype *p = data;                                                             \
		for (size_t i = 0; i < n; i++)                                                     \
			if (!chunk_put(env, c, hash_fn(p[i], seed), false))                        \
				return false;                                                      \
	} while (0)
	switch (type) {
	case napi_int8_array:
		HASH_EACH(int8_t, amq_hash_int);
		break;
	case napi_uint8_clamped_array:
		HASH_EACH(uint8_t, amq_hash_int);
		break;
	case napi_int16_array:
		HASH_EACH(int16_t, amq_hash_int);
		break;
	case napi_uint16_array:
		HASH_EACH(uint16_t, amq_hash_int);
		break;
	case napi_int32_array:
		HASH_EACH(int32_t, amq_hash_int);
		break;
	case napi_uint32_array:
		HASH_EACH(uint32_t, amq_hash_int);
		break;
	case napi_bigint64_array:
		HASH_EACH(int64_t, amq_hash_int);
		break;
	case napi_float32_array:
		/* Widened exactly to double, as SQL widens a float4. */
		HASH_EACH(float, amq_hash_double);
		break;
	case napi_float64_array:
		HASH_EACH(double, amq_hash_double);
		break;
	case napi_biguint64_array: {
		const uint64_t *p = data;
		for (size_t i = 0; i < n; i++) {
			/* Past int64, the nearest double, as a bigint that large. */
			uint64_t h = p[i] <= INT64_MAX ? amq_hash_int((int64_t)p[i], seed)
						       : amq_hash_double((double)p[i], seed);
			if (!chunk_put(env, c, h, false))
				return false;
		}
		break;
	}
	case napi_uint8_array:
		break;
	}
#undef HASH_EACH
	return true;
}

/* The hashes of an Array's values, each decoded and checked. */
static bool hash_array(napi_env env, napi_value array, uint64_t seed, bool skip_null,
		       amq_node_families *fam, struct chunker *c, size_t *count)
{
	uint32_t n;
	if (napi_get_array_length(env, array, &n) != napi_ok)
		return false;
	*count = n;
	for (uint32_t i = 0; i < n; i++) {
		napi_value item;
		napi_valuetype type;
		uint64_t hash;
		if (napi_get_element(env, array, i, &item) != napi_ok ||
		    napi_typeof(env, item, &type) != napi_ok)
			return false;
		/* Numbers, the common case, without amq_node_decode's frame. */
		if (type == napi_number) {
			double d;
			if (napi_get_value_double(env, item, &d) != napi_ok)
				return false;
			if (!admits(fam, AMQ_FAMILY_NUMBER)) {
				amq_node_refuse_family(env, &fam->filter, item, fam->function);
				return false;
			}
			if (!chunk_put(env, c, amq_hash_double(d, seed), false))
				return false;
			continue;
		}
		amq_node_value v;
		if (!amq_node_decode(env, item, &v))
			return false;
		if (v.is_null) {
			if (!skip_null && !chunk_put(env, c, 0, true))
				return false;
			continue;
		}
		hash = amq_value_hash(&v.value, seed);
		bool taken = admits(fam, v.value.family);
		amq_node_value_release(&v);
		if (!taken) {
			amq_node_refuse_family(env, &fam->filter, item, fam->function);
			return false;
		}
		if (!chunk_put(env, c, hash, false))
			return false;
	}
	return true;
}

bool amq_node_hash_each(napi_env env, napi_value values, uint64_t seed, bool skip_null,
			amq_node_families *families, amq_node_chunk_fn fn, void *ctx, size_t *count)
{
	struct chunker c = {.any_null = false, .n = 0, .fn = fn, .ctx = ctx};
	bool is;
	*count = 0;
	if (napi_is_typedarray(env, values, &is) != napi_ok)
		return false;
	if (is) {
		napi_typedarray_type type;
		size_t n;
		void *data;
		if (napi_get_typedarray_info(env, values, &type, &n, &data, NULL, NULL) != napi_ok)
			return false;
		if (type == napi_uint8_array) {
			amq_node_type_error(env,
					    "a Buffer or Uint8Array is one value (a blob), not "
					    "a collection: pass [buffer], or the numbers in "
					    "another typed array");
			return false;
		}
		*count = n;
		if (!hash_typed(env, type, data, n, seed, families, &c))
			return false;
		return chunk_flush(env, &c);
	}
	if (napi_is_array(env, values, &is) != napi_ok)
		return false;
	if (!is) {
		amq_node_type_error(env, "values must be an Array, a typed array or an iterable");
		return false;
	}
	return hash_array(env, values, seed, skip_null, families, &c, count) &&
	       chunk_flush(env, &c);
}
