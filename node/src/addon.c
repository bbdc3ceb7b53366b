/*
 * addon.c - the amq_node.node addon's entry point: AmqError (the class
 * index.cjs hands over at setup), the builders, one per aggregate of the
 * function table (core's amq_builder, as the aggregates use it, so the bytes
 * are theirs), hash (SQL's amq_hash), the lists of kinds and layouts, and
 * the Filter class (filter.c). index.cjs wraps these into the package's API.
 *
 * Errors keep SQL's words: the message and hint core gives, as SQLite shows
 * them, with SQL function names in the hints (Python swaps some hints for
 * its own method names; Node does not, so an error reads the same here as in
 * SQLite and PostgreSQL).
 */
#include "amq_node.h"
#include "sql/arguments.h"
#include "sql/functions.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* AmqError, from setup(). */
static napi_ref error_class;

napi_value amq_node_type_error(napi_env env, const char *text)
{
	napi_throw_type_error(env, NULL, text);
	return NULL;
}

napi_value amq_node_throw(napi_env env, const amq_error *err)
{
	napi_value cls, argv[3], error;
	if (err->status == AMQ_NO_MEMORY) {
		napi_throw_range_error(env, NULL, err->message);
		return NULL;
	}
	if (error_class == NULL || napi_get_reference_value(env, error_class, &cls) != napi_ok ||
	    cls == NULL) {
		napi_throw_error(env, amq_status_sqlstate(err->status), err->message);
		return NULL;
	}
	if (napi_create_string_utf8(env, err->message, NAPI_AUTO_LENGTH, &argv[0]) == napi_ok &&
	    napi_create_string_utf8(env, err->hint, NAPI_AUTO_LENGTH, &argv[1]) == napi_ok &&
	    napi_create_string_utf8(env, amq_status_sqlstate(err->status), NAPI_AUTO_LENGTH,
				    &argv[2]) == napi_ok &&
	    napi_new_instance(env, cls, 3, argv, &error) == napi_ok)
		napi_throw(env, error);
	return NULL;
}

/* setup(AmqError): the class every error of core is thrown as. */
static napi_value setup(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value cls;
	if (napi_get_cb_info(env, info, &argc, &cls, NULL, NULL) != napi_ok)
		return NULL;
	if (argc < 1)
		return amq_node_type_error(env, "setup(AmqError)");
	if (error_class != NULL)
		napi_delete_reference(env, error_class);
	napi_create_reference(env, cls, 1, &error_class);
	return NULL;
}

/* The builders: one per row of the function table (amq_sql_functions) that
 * builds a filter from values (AMQ_SQL_AGG: bloom_agg, cuckoo_agg,
 * fuse_agg), named for its kind and taking the aggregate's arguments. */
typedef amq_sql_function builder_row;

/* The options a builder's aggregate takes after the value, in its order. */
static const char *const sized[] = {"fpr", "capacity", "layout"};

/* The option name of options, or undefined (*given false). */
static bool option(napi_env env, napi_value options, const char *name, napi_value *out, bool *given)
{
	napi_valuetype type;
	*given = false;
	if (options == NULL)
		return true;
	if (napi_get_named_property(env, options, name, out) != napi_ok ||
	    napi_typeof(env, *out, &type) != napi_ok)
		return false;
	*given = type != napi_undefined && type != napi_null;
	return true;
}

/* Reads row's options into sizing, each checked by core as SQL checks the
 * aggregate's argument; an option the aggregate does not take is a
 * TypeError. false with an exception pending. */
static bool read_sizing(napi_env env, const builder_row *row, napi_value options,
			amq_sql_sizing *sizing)
{
	amq_error err;
	char text[160];
	napi_value v, names;
	bool given;
	uint32_t n = 0;
	amq_sql_sizing_init(sizing, amq_kind_named(row->kind));
	if (options == NULL)
		return true;
	/* Every key must be one of the aggregate's arguments. */
	if (napi_get_property_names(env, options, &names) != napi_ok ||
	    napi_get_array_length(env, names, &n) != napi_ok)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		napi_value key;
		char name[32];
		size_t len;
		int known = 0;
		if (napi_get_element(env, names, i, &key) != napi_ok ||
		    napi_get_value_string_utf8(env, key, name, sizeof(name), &len) != napi_ok)
			return false;
		for (int k = 0; k < row->max_args - 1; k++)
			known |= strcmp(name, sized[k]) == 0;
		if (!known) {
			snprintf(text, sizeof(text), "%s() takes no option '%s' (%s(%s))",
				 row->kind, name, row->name, row->arguments);
			amq_node_type_error(env, text);
			return false;
		}
	}
	if (!option(env, options, "fpr", &v, &given))
		return false;
	if (given) {
		double fpr;
		if (napi_get_value_double(env, v, &fpr) != napi_ok)
			return amq_node_type_error(env, "fpr must be a number"), false;
		if (amq_sql_set_fpr(sizing, fpr, &err) != AMQ_OK)
			return amq_node_throw(env, &err), false;
	}
	if (row->max_args > 2) {
		if (!option(env, options, "capacity", &v, &given))
			return false;
		if (given) {
			double capacity;
			if (napi_get_value_double(env, v, &capacity) != napi_ok ||
			    capacity != floor(capacity))
				return amq_node_type_error(env, "capacity must be an integer"),
				       false;
			/* Past int64, too large for any filter: core says so. */
			int64_t c = capacity >= 9.2e18	  ? INT64_MAX
				    : capacity <= -9.2e18 ? INT64_MIN
							  : (int64_t)capacity;
			if (amq_sql_set_capacity(sizing, c, &err) != AMQ_OK)
				return amq_node_throw(env, &err), false;
		}
	}
	if (row->max_args > 3) {
		if (!option(env, options, "layout", &v, &given))
			return false;
		if (given) {
			char name[64];
			size_t len;
			if (napi_get_value_string_utf8(env, v, name, sizeof(name), &len) != napi_ok)
				return amq_node_type_error(env, "layout must be a string"), false;
			if (amq_sql_set_layout(sizing, name, len, &err) != AMQ_OK)
				return amq_node_throw(env, &err), false;
		}
	}
	return true;
}

/* Feeds one chunk of hashes to a builder (null values were skipped). */
static bool build_chunk(napi_env env, void *ctx, const uint64_t *hashes, const bool *nulls,
			size_t n)
{
	amq_builder *b = ctx;
	amq_error err;
	(void)nulls;
	for (size_t i = 0; i < n; i++)
		if (amq_builder_add(b, hashes[i], &err) != AMQ_OK) {
			amq_node_throw(env, &err);
			return false;
		}
	return true;
}

/*
 * build(index, values, options): the aggregate of amq_sql_functions[index] over
 * values (an Array or typed array; index.cjs turns other iterables into an
 * Array), with options {fpr, capacity, layout} as far as the aggregate takes
 * them. null and undefined values are skipped, as NULL rows are; the filter
 * holds every family it was built from. The hashes are collected in memory
 * (no temporary files), so the build of N distinct values takes about 16N
 * bytes at its peak besides the filter.
 */
static napi_value build(napi_env env, napi_callback_info info)
{
	size_t argc = 3;
	napi_value argv[3];
	uint32_t index;
	napi_valuetype type;
	amq_sql_sizing sizing;
	amq_builder b;
	amq_error err;
	amq_filter f;
	size_t count;
	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok)
		return NULL;
	if (argc < 2 || napi_get_value_uint32(env, argv[0], &index) != napi_ok ||
	    index >= amq_sql_function_count || amq_sql_functions[index].op != AMQ_SQL_AGG)
		return amq_node_type_error(env, "build(index, values, options)");
	const builder_row *row = &amq_sql_functions[index];
	napi_value options = NULL;
	if (argc > 2) {
		if (napi_typeof(env, argv[2], &type) != napi_ok)
			return NULL;
		if (type == napi_object)
			options = argv[2];
		else if (type != napi_undefined && type != napi_null)
			return amq_node_type_error(env, "options must be an object");
	}
	if (!read_sizing(env, row, options, &sizing))
		return NULL;
	if (amq_sql_builder_init(&b, &sizing, &amq_malloc_allocator, &err) != AMQ_OK)
		return amq_node_throw(env, &err);
	/* Room for the values' hashes at once; only a hint. */
	uint32_t expected = 0;
	bool is_array;
	if (napi_is_array(env, argv[1], &is_array) == napi_ok && is_array &&
	    napi_get_array_length(env, argv[1], &expected) == napi_ok && expected > 0)
		(void)amq_builder_expect(&b, expected, &err);
	/* No filter to check against: every family is taken, and gathered. */
	amq_node_families families = {.filter = {.families = 0}, .check = false};
	if (!amq_node_hash_each(env, argv[1], AMQ_DEFAULT_SEED, true, &families, build_chunk, &b,
				&count)) {
		amq_builder_free(&b);
		return NULL;
	}
	static const amq_family each[] = {AMQ_FAMILY_NUMBER, AMQ_FAMILY_TEXT, AMQ_FAMILY_BLOB};
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++)
		if (families.filter.families & (uint8_t)each[i])
			amq_builder_note_family(&b, each[i]);
	amq_status st = amq_builder_finish(&b, &f, &err);
	amq_builder_free(&b);
	if (st != AMQ_OK)
		return amq_node_throw(env, &err);
	return amq_node_filter_take(env, &f);
}

/* hash(value): SQL's amq_hash, the value's 64-bit hash (seed 0) as a signed
 * bigint; null for null or undefined, as amq_hash(NULL) is NULL. */
static napi_value hash(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value value, result;
	amq_node_value v;
	if (napi_get_cb_info(env, info, &argc, &value, NULL, NULL) != napi_ok)
		return NULL;
	if (argc < 1 && napi_get_undefined(env, &value) != napi_ok)
		return NULL;
	if (!amq_node_decode(env, value, &v))
		return NULL;
	if (v.is_null)
		return napi_get_null(env, &result) == napi_ok ? result : NULL;
	int64_t h = (int64_t)amq_value_hash(&v.value, AMQ_DEFAULT_SEED);
	amq_node_value_release(&v);
	return napi_create_bigint_int64(env, h, &result) == napi_ok ? result : NULL;
}

/* A string value; NULL with an exception pending. */
static napi_value string(napi_env env, const char *s)
{
	napi_value v;
	return napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v) == napi_ok ? v : NULL;
}

/* builders: [{index, kind, aggregate, arguments, options}], one per AGG row,
 * options the names of the aggregate's arguments after the value. */
static napi_value builders_list(napi_env env)
{
	napi_value list, entry, options, number;
	uint32_t at = 0;
	NAPI_TRY(napi_create_array(env, &list));
	for (size_t i = 0; i < amq_sql_function_count; i++) {
		const builder_row *row = &amq_sql_functions[i];
		if (row->op != AMQ_SQL_AGG)
			continue;
		NAPI_TRY(napi_create_object(env, &entry));
		NAPI_TRY(napi_create_uint32(env, (uint32_t)i, &number));
		NAPI_TRY(napi_set_named_property(env, entry, "index", number));
		NAPI_TRY(napi_set_named_property(env, entry, "kind", string(env, row->kind)));
		NAPI_TRY(napi_set_named_property(env, entry, "aggregate", string(env, row->name)));
		NAPI_TRY(
		    napi_set_named_property(env, entry, "arguments", string(env, row->arguments)));
		NAPI_TRY(napi_create_array(env, &options));
		for (int k = 0; k < row->max_args - 1; k++)
			NAPI_TRY(
			    napi_set_element(env, options, (uint32_t)k, string(env, sized[k])));
		NAPI_TRY(napi_set_named_property(env, entry, "options", options));
		NAPI_TRY(napi_set_element(env, list, at++, entry));
	}
	return list;
fail:
	return NULL;
}

/* The filter kinds SQL has, in the function table's order (its AMQ_SQL_TYPE
 * rows). */
#define AMQ_SQL_TYPE(kind) #kind,
static const char *const sql_kinds[] = {
#include "sql/function_list.h"
};

/* layouts: {kind: [layout names in the registry's order]}. */
static napi_value layouts_object(napi_env env)
{
	napi_value layouts, names;
	NAPI_TRY(napi_create_object(env, &layouts));
	for (size_t k = 0; k < sizeof(sql_kinds) / sizeof(sql_kinds[0]); k++) {
		amq_kind kind = amq_kind_named(sql_kinds[k]);
		const char *name;
		NAPI_TRY(napi_create_array(env, &names));
		for (uint32_t i = 0; (name = amq_kind_layout_at(kind, i)) != NULL; i++)
			NAPI_TRY(napi_set_element(env, names, i, string(env, name)));
		NAPI_TRY(napi_set_named_property(env, layouts, sql_kinds[k], names));
	}
	return layouts;
fail:
	return NULL;
}

/* The module's exports: setup, build, hash, builders, layouts, version,
 * Filter. */
static napi_value init(napi_env env, napi_value exports)
{
	napi_value fn, value;
	NAPI_TRY(napi_create_function(env, "setup", NAPI_AUTO_LENGTH, setup, NULL, &fn));
	NAPI_TRY(napi_set_named_property(env, exports, "setup", fn));
	NAPI_TRY(napi_create_function(env, "build", NAPI_AUTO_LENGTH, build, NULL, &fn));
	NAPI_TRY(napi_set_named_property(env, exports, "build", fn));
	NAPI_TRY(napi_create_function(env, "hash", NAPI_AUTO_LENGTH, hash, NULL, &fn));
	NAPI_TRY(napi_set_named_property(env, exports, "hash", fn));
	NAPI_TRY((value = builders_list(env)) != NULL ? napi_ok : napi_generic_failure);
	NAPI_TRY(napi_set_named_property(env, exports, "builders", value));
	NAPI_TRY((value = layouts_object(env)) != NULL ? napi_ok : napi_generic_failure);
	NAPI_TRY(napi_set_named_property(env, exports, "layouts", value));
	NAPI_TRY(napi_set_named_property(env, exports, "version", string(env, AMQ_VERSION)));
	if (!amq_node_filter_init(env, exports))
		goto fail;
	return exports;
fail:
	return NULL;
}

/* The version getter NAPI_MODULE defines, declared first for
 * -Wmissing-prototypes (node_api.h declares only the initializer). */
NAPI_MODULE_EXPORT int32_t NODE_API_MODULE_GET_API_VERSION(void);
NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
