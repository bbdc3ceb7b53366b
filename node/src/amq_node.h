/*
 * amq_node.h - what the files of the amq N-API addon (amq_node.node) share:
 * raising core's errors as AmqError, the hashing of JavaScript values by
 * docs/HASHING.md, and the Filter class. The addon binds core/amq.h through
 * plain node_api.h and nothing else: every decision about filters, hashes
 * and errors is core's, as in the SQLite, PostgreSQL and Python adapters.
 */
#ifndef AMQ_NODE_H
#define AMQ_NODE_H

#define NAPI_VERSION 8
#include <node_api.h>

#include "amq.h"

/* Hashes handed to core at a time: small enough to stay in L1. */
#define AMQ_NODE_CHUNK 512

/* Goes to fail (a local label) when a napi_* call does not return napi_ok;
 * the JavaScript exception it left pending is what the caller sees. */
#define NAPI_TRY(call)                                                                             \
	do {                                                                                       \
		if ((call) != napi_ok)                                                             \
			goto fail;                                                                 \
	} while (0)

/* ---- errors (addon.c) ---- */

/* Throws core's error as an AmqError (the class index.cjs hands the addon at
 * setup): message "<message>: <hint>" as SQLite writes it, with message,
 * hint and SQLSTATE (amq_status_sqlstate) as its fields; out of memory is a
 * RangeError. Returns NULL, so callers can return its result. */
napi_value amq_node_throw(napi_env env, const amq_error *err);

/* Throws a TypeError with text; returns NULL. */
napi_value amq_node_type_error(napi_env env, const char *text);

/* ---- values (values.c) ---- */

/*
 * One JavaScript value as core sees it (docs/HASHING.md): number (an
 * integral one as that integer), bigint (outside int64 the nearest double,
 * as PostgreSQL's numeric), boolean (0, 1): numbers; string (its UTF-8):
 * text; Date: the text of its UTC instant as PostgreSQL prints a
 * timestamptz ('YYYY-MM-DD HH:MM:SS[.fff]', ' BC' before year 1); Buffer or
 * Uint8Array: a blob. null and undefined are SQL's NULL (*is_null set, no
 * hash); any other type is a TypeError.
 */
typedef struct amq_node_value {
	amq_value value; /* its bytes in text, heap, or the Uint8Array */
	char text[256];	 /* a short string's UTF-8, or a Date's text */
	char *heap;	 /* a long string's UTF-8 (malloc), freed by release */
	bool is_null;
} amq_node_value;

/* Decodes value into *out, valid until amq_node_value_release and while the
 * Uint8Array lives. false with an exception pending (nothing to release). */
bool amq_node_decode(napi_env env, napi_value value, amq_node_value *out);
void amq_node_value_release(amq_node_value *v);

/* A family check of many values against a filter's families, as core's
 * amq_bulk_admit makes it for each row: check false for a builder, which
 * takes every family and gathers them. */
typedef struct amq_node_families {
	amq_filter filter;    /* the filter's fields; families grow with adds */
	bool check;	      /* false: every family is taken */
	const char *function; /* the SQL function an error names */
} amq_node_families;

/* Called with each chunk of consecutive hashes; nulls, when not NULL, says
 * which of them stand for null or undefined (their hash is 0 and means
 * nothing). false to stop, with an exception pending. */
typedef bool (*amq_node_chunk_fn)(napi_env env, void *ctx, const uint64_t *hashes,
				  const bool *nulls, size_t n);

/*
 * Hashes every value of values, an Array or a typed array of numbers
 * (Float64Array, Int32Array, BigInt64Array, ...; a Uint8Array or Buffer is
 * one blob, not a collection, and a TypeError here), in order, and hands the
 * hashes on in chunks. Each value's family is checked and gathered in
 * families. null and undefined are skipped when skip_null (as aggregates skip
 * NULL), else handed on flagged in nulls. *count is the number of values.
 * false with an exception pending.
 */
bool amq_node_hash_each(napi_env env, napi_value values, uint64_t seed, bool skip_null,
			amq_node_families *families, amq_node_chunk_fn fn, void *ctx,
			size_t *count);

/* Throws the family check's AmqError for value, which f does not take
 * (amq_check_family in SQL's words, naming function and "value"). Returns
 * NULL. */
napi_value amq_node_refuse_family(napi_env env, const amq_filter *f, napi_value value,
				  const char *function);

/* ---- Filter (filter.c) ---- */

/* Defines the Filter class on exports and keeps a reference to it. */
bool amq_node_filter_init(napi_env env, napi_value exports);

/* A new Filter that takes over f, a sealed filter whose buffer came from
 * amq_malloc_allocator (freed here on failure). NULL with an exception
 * pending. */
napi_value amq_node_filter_take(napi_env env, amq_filter *f);

#endif
