/*
 * filter.c - the Filter class: one serialized filter (docs/FORMAT.md) of any
 * kind and layout, in a buffer of its own that the methods change in place,
 * as core changes a filter. The header and checksum are written back
 * (amq_filter_seal) only when the bytes are read out (toBuffer), so a run of
 * adds costs no checksum each. Each method answers as the SQL function of
 * its kind does for the same value (bloom_contains, cuckoo_delete, ...),
 * with the same error for a value of a family the filter does not hold.
 */
#include "amq_node.h"
#include "sql/functions.h"

#include <stdlib.h>
#include <string.h>

typedef struct filter_obj {
	amq_filter filter; /* owns filter.bytes (amq_malloc_allocator) */
	amq_probe probe;   /* amq_filter_probe_for(&filter): by layout, fixed */
	bool unsealed;	   /* changed since the header was last written */
} filter_obj;

static const amq_allocator *const A = &amq_malloc_allocator;

/* The class, for amq_node_filter_take and the checks of union's argument. */
static napi_ref filter_class;

/* Frees a Filter's bytes when JavaScript collects it. */
static void filter_finalize(napi_env env, void *data, void *hint)
{
	(void)env;
	(void)hint;
	filter_obj *self = data;
	amq_filter_free(&self->filter, A);
	free(self);
}

/* Writes the header and checksum when the payload changed since. */
static void seal(filter_obj *self)
{
	if (self->unsealed) {
		amq_filter_seal(&self->filter);
		self->unsealed = false;
	}
}

/*
 * new Filter(bytes): a copy of bytes (a Buffer, Uint8Array or ArrayBuffer)
 * once it opens and verifies as a filter of any kind, as SQL checks a
 * filter argument; a bad one is AmqError with SQL's message for the same
 * bytes, after the "<function>: <argument>: " SQL starts it with
 * (amq_filter_check). Internally, amq_node_filter_take passes an external
 * holding a sealed filter to take over instead.
 */
static napi_value filter_construct(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value argv[1], this;
	napi_valuetype type = napi_undefined;
	filter_obj *self = NULL;
	amq_error err;
	NAPI_TRY(napi_get_cb_info(env, info, &argc, argv, &this, NULL));
	if (argc >= 1)
		NAPI_TRY(napi_typeof(env, argv[0], &type));
	self = calloc(1, sizeof(*self));
	if (self == NULL) {
		napi_throw_range_error(env, NULL, "out of memory");
		return NULL;
	}
	if (type == napi_external) {
		void *taken;
		NAPI_TRY(napi_get_value_external(env, argv[0], &taken));
		self->filter = *(amq_filter *)taken;
	} else {
		bool is_buffer = false, is_array_buffer = false;
		void *data = NULL;
		size_t size = 0;
		if (type == napi_object) {
			NAPI_TRY(napi_is_typedarray(env, argv[0], &is_buffer));
			NAPI_TRY(napi_is_arraybuffer(env, argv[0], &is_array_buffer));
		}
		if (is_buffer) {
			napi_typedarray_type ta;
			NAPI_TRY(
			    napi_get_typedarray_info(env, argv[0], &ta, &size, &data, NULL, NULL));
			is_buffer = ta == napi_uint8_array;
		} else if (is_array_buffer) {
			NAPI_TRY(napi_get_arraybuffer_info(env, argv[0], &data, &size));
		}
		if (!is_buffer && !is_array_buffer) {
			free(self);
			return amq_node_type_error(
			    env, "new Filter(bytes): bytes must be a Buffer, Uint8Array or "
				 "ArrayBuffer holding a filter");
		}
		uint8_t *copy = A->alloc(A->ctx, size > 0 ? size : 1);
		if (copy == NULL) {
			free(self);
			napi_throw_range_error(env, NULL, "out of memory");
			return NULL;
		}
		if (size > 0)
			memcpy(copy, data, size);
		if (amq_filter_check(&self->filter, copy, size, &err) != AMQ_OK) {
			A->free(A->ctx, copy);
			free(self);
			return amq_node_throw(env, &err);
		}
	}
	self->probe = amq_filter_probe_for(&self->filter);
	if (napi_wrap(env, this, self, filter_finalize, NULL, NULL) != napi_ok) {
		amq_filter_free(&self->filter, A);
		free(self);
		return NULL;
	}
	return this;
fail:
	free(self);
	return NULL;
}

napi_value amq_node_filter_take(napi_env env, amq_filter *f)
{
	napi_value cls, external, object;
	if (napi_get_reference_value(env, filter_class, &cls) != napi_ok ||
	    napi_create_external(env, f, NULL, NULL, &external) != napi_ok ||
	    napi_new_instance(env, cls, 1, &external, &object) != napi_ok) {
		amq_filter_free(f, A);
		return NULL;
	}
	return object;
}

/* this of a method call and its first argument (undefined when missing). */
static filter_obj *unwrap(napi_env env, napi_callback_info info, napi_value *arg)
{
	size_t argc = 1;
	napi_value this;
	void *self;
	if (napi_get_cb_info(env, info, &argc, arg, &this, NULL) != napi_ok)
		return NULL;
	if (argc < 1 && napi_get_undefined(env, arg) != napi_ok)
		return NULL;
	if (napi_unwrap(env, this, &self) != napi_ok) {
		bool pending;
		if (napi_is_exception_pending(env, &pending) == napi_ok && pending) {
			napi_value ignored;
			napi_get_and_clear_last_exception(env, &ignored);
		}
		amq_node_type_error(env, "not a Filter: call the method on a Filter");
		return NULL;
	}
	return self;
}

/*
 * The hash of value under this filter's seed, and its family, once the
 * filter takes that family (it holds it, holds none yet, or is of a format
 * before families); otherwise AmqError in core's words, naming the SQL
 * function of the filter's kind that does op: "bloom_contains: value: the
 * filter holds numbers, got text '42'". *is_null for null and undefined,
 * SQL's NULL. false with an exception pending.
 */
static inline bool admit(napi_env env, filter_obj *self, napi_value value, amq_sql_op op,
			 uint64_t *hash, amq_family *family, bool *is_null)
{
	napi_valuetype type;
	if (napi_typeof(env, value, &type) != napi_ok)
		return false;
	/* Numbers without amq_node_decode's frame: the probe of a hot loop. */
	if (type == napi_number) {
		double d;
		if (napi_get_value_double(env, value, &d) != napi_ok)
			return false;
		*hash = amq_hash_double(d, self->filter.seed);
		*family = AMQ_FAMILY_NUMBER;
		*is_null = false;
	} else {
		amq_node_value v;
		if (!amq_node_decode(env, value, &v))
			return false;
		*is_null = v.is_null;
		if (v.is_null)
			return true;
		*hash = amq_value_hash(&v.value, self->filter.seed);
		*family = v.value.family;
		amq_node_value_release(&v);
	}
	if (amq_filter_takes(&self->filter, *family))
		return true;
	amq_node_refuse_family(env, &self->filter, value,
			       amq_sql_function_doing(self->filter.kind, op, op));
	return false;
}

/* A JavaScript boolean. */
static napi_value boolean(napi_env env, bool b)
{
	napi_value v;
	return napi_get_boolean(env, b, &v) == napi_ok ? v : NULL;
}

/* JavaScript's null. */
static napi_value null_value(napi_env env)
{
	napi_value v;
	return napi_get_null(env, &v) == napi_ok ? v : NULL;
}

/* contains(value): false when value was certainly never added, true when it
 * may have been (bloom_contains, cuckoo_contains, fuse_contains); null for
 * null or undefined, as SQL answers NULL. */
static napi_value filter_contains(napi_env env, napi_callback_info info)
{
	napi_value value;
	uint64_t hash;
	amq_family family;
	bool is_null;
	filter_obj *self = unwrap(env, info, &value);
	if (self == NULL || !admit(env, self, value, AMQ_SQL_CONTAINS, &hash, &family, &is_null))
		return NULL;
	if (is_null)
		return null_value(env);
	return boolean(env, self->probe(&self->filter, hash));
}

/* add(value): adds value in place (bloom_add, cuckoo_add); a full cuckoo
 * filter throws and keeps its bytes, a scalable chain grows, null changes
 * nothing. Returns this, so that adds chain. */
static napi_value filter_add(napi_env env, napi_callback_info info)
{
	napi_value value, this;
	uint64_t hash;
	amq_family family;
	amq_error err;
	bool is_null;
	size_t argc = 0;
	filter_obj *self = unwrap(env, info, &value);
	if (self == NULL || !admit(env, self, value, AMQ_SQL_ADD, &hash, &family, &is_null) ||
	    napi_get_cb_info(env, info, &argc, NULL, &this, NULL) != napi_ok)
		return NULL;
	if (is_null)
		return this;
	if (amq_filter_add_to(&self->filter, hash, A, &err) != AMQ_OK)
		return amq_node_throw(env, &err);
	amq_filter_note_family(&self->filter, family);
	self->unsealed = true;
	return this;
}

/* delete(value): removes one copy of value in place (cuckoo_delete,
 * bloom_delete on a counting layout): false, and no change, when it is
 * certainly not stored, or for null. */
static napi_value filter_delete(napi_env env, napi_callback_info info)
{
	napi_value value;
	uint64_t hash;
	amq_family family;
	amq_error err;
	bool is_null, removed;
	filter_obj *self = unwrap(env, info, &value);
	if (self == NULL || !admit(env, self, value, AMQ_SQL_DELETE, &hash, &family, &is_null))
		return NULL;
	if (is_null)
		return boolean(env, false);
	if (amq_filter_remove(&self->filter, hash, &removed, &err) != AMQ_OK)
		return amq_node_throw(env, &err);
	self->unsealed |= removed;
	return boolean(env, removed);
}

/* count(value): how many times value was added, never fewer (cuckoo_count,
 * bloom_frequency on a counting layout); null for null. */
static napi_value filter_count(napi_env env, napi_callback_info info)
{
	napi_value value, result;
	uint64_t hash, count;
	amq_family family;
	amq_error err;
	bool is_null;
	filter_obj *self = unwrap(env, info, &value);
	if (self == NULL || !admit(env, self, value, AMQ_SQL_FREQUENCY, &hash, &family, &is_null))
		return NULL;
	if (is_null)
		return null_value(env);
	if (amq_filter_frequency(&self->filter, hash, &count, &err) != AMQ_OK)
		return amq_node_throw(env, &err);
	return napi_create_double(env, (double)count, &result) == napi_ok ? result : NULL;
}

/* infoJson(): bloom_info's JSON text, which index.cjs parses for info(). */
static napi_value filter_info_json(napi_env env, napi_callback_info info)
{
	napi_value unused, result;
	char json[AMQ_INFO_MAX];
	filter_obj *self = unwrap(env, info, &unused);
	if (self == NULL)
		return NULL;
	size_t len = amq_filter_info_json(&self->filter, json, sizeof(json));
	return napi_create_string_utf8(env, json, len, &result) == napi_ok ? result : NULL;
}

/* A sealed copy of self combined with other by merge (bloom_union,
 * bloom_intersect); other must be a Filter. */
static napi_value combine(napi_env env, napi_callback_info info,
			  amq_status (*merge)(amq_filter *, const amq_filter *, amq_error *))
{
	napi_value other_value, cls;
	bool is_filter = false;
	void *other;
	amq_filter out;
	amq_error err;
	filter_obj *self = unwrap(env, info, &other_value);
	if (self == NULL || napi_get_reference_value(env, filter_class, &cls) != napi_ok ||
	    napi_instanceof(env, other_value, cls, &is_filter) != napi_ok)
		return NULL;
	if (!is_filter || napi_unwrap(env, other_value, &other) != napi_ok)
		return amq_node_type_error(env, "expected a Filter");
	seal(self);
	if (amq_filter_clone(&out, &self->filter, A, &err) != AMQ_OK)
		return amq_node_throw(env, &err);
	if (merge(&out, &((filter_obj *)other)->filter, &err) != AMQ_OK) {
		amq_filter_free(&out, A);
		return amq_node_throw(env, &err);
	}
	amq_filter_seal(&out);
	return amq_node_filter_take(env, &out);
}

/* union(other): a new Filter of everything either holds (bloom_union). */
static napi_value filter_union(napi_env env, napi_callback_info info)
{
	return combine(env, info, amq_filter_union_into);
}

/* intersection(other): a new Filter of what both hold (bloom_intersect). */
static napi_value filter_intersection(napi_env env, napi_callback_info info)
{
	return combine(env, info, amq_filter_intersect_into);
}

/* Where containsMany's answers go: one byte each, 0 (no), 1 (maybe) or 2
 * (null, for a null value). */
struct many_answers {
	filter_obj *self;
	uint8_t *out;
	size_t next, cap;
};

/* One chunk of probes: the batch probe loads lines ahead where the layout
 * can (a null's slot is probed too, for nothing, and answered 2). */
static bool answer_chunk(napi_env env, void *ctx, const uint64_t *hashes, const bool *nulls,
			 size_t n)
{
	(void)env;
	struct many_answers *m = ctx;
	bool answers[AMQ_NODE_CHUNK];
	amq_filter_contains_many(&m->self->filter, hashes, n, answers);
	/* An Array cannot grow while it is read (no JavaScript runs), so the
	 * answers never pass its length; the check keeps that a fact. */
	if (m->next + n > m->cap)
		n = m->cap - m->next;
	for (size_t i = 0; i < n; i++)
		m->out[m->next + i] = nulls != NULL && nulls[i] ? 2 : answers[i];
	m->next += n;
	return true;
}

/*
 * containsManyCodes(values): the answer of contains for each value of an
 * Array or typed array, as a Uint8Array of 0 (no), 1 (maybe) and 2 (null):
 * hashed and probed in chunks, a blocked Bloom or fuse filter loading lines
 * ahead. index.cjs makes its containsMany of it. A value of a family the
 * filter does not take throws, as in bloom_contains.
 */
static napi_value filter_contains_many(napi_env env, napi_callback_info info)
{
	napi_value values, arraybuffer, result;
	uint32_t length = 0;
	size_t count;
	bool is_array;
	filter_obj *self = unwrap(env, info, &values);
	if (self == NULL || napi_is_array(env, values, &is_array) != napi_ok)
		return NULL;
	if (is_array) {
		if (napi_get_array_length(env, values, &length) != napi_ok)
			return NULL;
	} else {
		bool is_typed;
		napi_typedarray_type type;
		size_t n = 0;
		if (napi_is_typedarray(env, values, &is_typed) != napi_ok)
			return NULL;
		if (is_typed &&
		    napi_get_typedarray_info(env, values, &type, &n, NULL, NULL, NULL) != napi_ok)
			return NULL;
		length = (uint32_t)n;
	}
	struct many_answers m = {self, NULL, 0, length};
	void *data;
	if (napi_create_arraybuffer(env, length, &data, &arraybuffer) != napi_ok)
		return NULL;
	m.out = data;
	amq_node_families families = {.filter = self->filter,
				      .check = true,
				      .function = amq_sql_function_doing(
					  self->filter.kind, AMQ_SQL_CONTAINS, AMQ_SQL_CONTAINS)};
	if (!amq_node_hash_each(env, values, self->filter.seed, false, &families, answer_chunk, &m,
				&count))
		return NULL;
	if (napi_create_typedarray(env, napi_uint8_array, m.next, arraybuffer, 0, &result) !=
	    napi_ok)
		return NULL;
	return result;
}

/* toBuffer(): the serialized filter, sealed, in a new Buffer: the bytes to
 * bind into SQL in either engine. */
static napi_value filter_to_buffer(napi_env env, napi_callback_info info)
{
	napi_value unused, result;
	filter_obj *self = unwrap(env, info, &unused);
	if (self == NULL)
		return NULL;
	seal(self);
	if (napi_create_buffer_copy(env, self->filter.size, self->filter.bytes, NULL, &result) !=
	    napi_ok)
		return NULL;
	return result;
}

/* The kind getter: 'bloom', 'cuckoo' or 'fuse'. */
static napi_value filter_kind(napi_env env, napi_callback_info info)
{
	napi_value unused, result;
	filter_obj *self = unwrap(env, info, &unused);
	if (self == NULL)
		return NULL;
	const char *name = amq_kind_name(self->filter.kind);
	return napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &result) == napi_ok ? result
											: NULL;
}

/* The layout getter: the layout's SQL name ('blocked', 'b4', ...). */
static napi_value filter_layout(napi_env env, napi_callback_info info)
{
	napi_value unused, result;
	filter_obj *self = unwrap(env, info, &unused);
	if (self == NULL)
		return NULL;
	const char *name = amq_filter_layout_name(&self->filter);
	return napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &result) == napi_ok ? result
											: NULL;
}

/* The byteLength getter: the size of the serialized filter. */
static napi_value filter_byte_length(napi_env env, napi_callback_info info)
{
	napi_value unused, result;
	filter_obj *self = unwrap(env, info, &unused);
	if (self == NULL)
		return NULL;
	return napi_create_double(env, (double)self->filter.size, &result) == napi_ok ? result
										      : NULL;
}

bool amq_node_filter_init(napi_env env, napi_value exports)
{
#define METHOD(name, fn)                                                                           \
	{                                                                                          \
		name, NULL, fn, NULL, NULL, NULL, napi_default_method, NULL                        \
	}
#define GETTER(name, fn)                                                                           \
	{                                                                                          \
		name, NULL, NULL, fn, NULL, NULL, napi_enumerable, NULL                            \
	}
	static const napi_property_descriptor properties[] = {
	    METHOD("contains", filter_contains),
	    METHOD("add", filter_add),
	    METHOD("delete", filter_delete),
	    METHOD("count", filter_count),
	    METHOD("infoJson", filter_info_json),
	    METHOD("union", filter_union),
	    METHOD("intersection", filter_intersection),
	    METHOD("containsManyCodes", filter_contains_many),
	    METHOD("toBuffer", filter_to_buffer),
	    GETTER("kind", filter_kind),
	    GETTER("layout", filter_layout),
	    GETTER("byteLength", filter_byte_length),
	};
#undef METHOD
#undef GETTER
	napi_value cls;
	return napi_define_class(env, "Filter", NAPI_AUTO_LENGTH, filter_construct, NULL,
				 sizeof(properties) / sizeof(properties[0]), properties,
				 &cls) == napi_ok &&
	       napi_create_reference(env, cls, 1, &filter_class) == napi_ok &&
	       napi_set_named_property(env, exports, "Filter", cls) == napi_ok;
}
