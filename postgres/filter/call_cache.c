/*
 * filter/call_cache.c - the per-call-site filter cache behind bloom_contains,
 * cuckoo_contains, cuckoo_count and the membership operators.
 *
 * In a join prefilter such as
 *     WHERE bloom_contains((SELECT f FROM filters WHERE name = 'vip'), t.id)
 * every row passes the same filter. Detoasting, copying and verifying it per
 * row would make each probe cost O(filter size), so the parsed filter is kept
 * in fn_extra (memory in fn_mcxt, which lives as long as the call site) and
 * reused while the argument is provably the same value:
 *   - an on-disk TOAST pointer is identified by (toast relation, value id,
 *     sizes): TOAST values are never updated in place, so the same pointer
 *     always names the same bytes;
 *   - any other value is identified by its length and its 64-byte header,
 *     which ends with the XXH3-64 checksum of the header and the payload; the
 *     header is read straight from the datum (or, for a compressed or
 *     indirect datum, from a detoasted slice of 64 bytes).
 * A hit costs a few comparisons. A miss detoasts the value once, copies it
 * into a 64-byte-aligned buffer (one cache line per blocked-Bloom probe),
 * reads it (kind, checksum) and only then marks the cache valid.
 */
#include "postgres.h"

#include "access/detoast.h"

#include "filter/filter.h"

typedef struct probe_cache {
	amq_pg_hasher hasher;
	bool hasher_ready;
	bool valid; /* filter below is parsed, verified and of the right kind */
	bool by_toast_pointer;
	Oid toastrelid;
	Oid valueid;
	int32 rawsize;
	uint32 extinfo;
	Size size; /* filter bytes, without varlena header */
	uint8 header[AMQ_HEADER_BYTES];
	void *buffer; /* allocation holding the aligned copy, in fn_mcxt */
	amq_filter filter;
	amq_probe probe;    /* the variant's probe for filter */
	void *caller_state; /* the calling function's own, in fn_mcxt (see filter.h) */
} probe_cache;

/* The key of a datum that is not an on-disk TOAST pointer: length + header. */
static bool header_key(Datum d, Size *size, uint8 *header)
{
	struct varlena *v = (struct varlena *)DatumGetPointer(d);

	if (VARATT_IS_COMPRESSED(v) || VARATT_IS_EXTERNAL(v)) {
		struct varlena *slice;

		*size = toast_raw_datum_size(d) - VARHDRSZ;
		if (*size < AMQ_HEADER_BYTES)
			return false;
		slice = PG_DETOAST_DATUM_SLICE(d, 0, AMQ_HEADER_BYTES);
		memcpy(header, VARDATA_ANY(slice), AMQ_HEADER_BYTES);
		pfree(slice);
		return true;
	}
	*size = VARSIZE_ANY_EXHDR(v);
	if (*size < AMQ_HEADER_BYTES)
		return false;
	memcpy(header, VARDATA_ANY(v), AMQ_HEADER_BYTES);
	return true;
}

/* Replaces the cached filter by the value d: detoast, copy, verify. */
static void fill(probe_cache *c, MemoryContext mcxt, Datum d, const amq_pg_call *call)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(d);
	Size size = VARSIZE_ANY_EXHDR(v);
	uint8 *aligned;

	c->valid = false;
	if (c->buffer != NULL) {
		pfree(c->buffer);
		c->buffer = NULL;
	}
	c->buffer = MemoryContextAllocExtended(mcxt, size + PG_CACHE_LINE_SIZE, MCXT_ALLOC_HUGE);
	aligned = (uint8 *)TYPEALIGN(PG_CACHE_LINE_SIZE, c->buffer);
	memcpy(aligned, VARDATA_ANY(v), size);
	if ((Pointer)v != DatumGetPointer(d))
		pfree(v);
	amq_pg_open_bytes(&c->filter, aligned, size, call, "filter");
	c->probe = amq_filter_probe_for(&c->filter);
	c->size = size;
	memcpy(c->header, aligned, AMQ_HEADER_BYTES);
	c->valid = true;
}

/* Lookup of an on-disk TOAST pointer: TOAST values are never changed in
 * place, so the same pointer always names the same bytes. */
static const amq_filter *by_toast_pointer(probe_cache *c, MemoryContext mcxt, Datum d,
					  const amq_pg_call *call)
{
	struct varatt_external ptr;

	VARATT_EXTERNAL_GET_POINTER(ptr, DatumGetPointer(d));
	if (c->valid && c->by_toast_pointer && ptr.va_toastrelid == c->toastrelid &&
	    ptr.va_valueid == c->valueid && ptr.va_rawsize == c->rawsize &&
	    ptr.va_extinfo == c->extinfo)
		return &c->filter;
	fill(c, mcxt, d, call);
	c->by_toast_pointer = true;
	c->toastrelid = ptr.va_toastrelid;
	c->valueid = ptr.va_valueid;
	c->rawsize = ptr.va_rawsize;
	c->extinfo = ptr.va_extinfo;
	return &c->filter;
}

/* Lookup of any other datum: the same length and header (whose checksum
 * covers the payload) mean the same filter. */
static const amq_filter *by_header(probe_cache *c, MemoryContext mcxt, Datum d,
				   const amq_pg_call *call)
{
	Size size;
	uint8 header[AMQ_HEADER_BYTES];

	if (c->valid && !c->by_toast_pointer && header_key(d, &size, header) && size == c->size &&
	    memcmp(header, c->header, AMQ_HEADER_BYTES) == 0)
		return &c->filter;
	fill(c, mcxt, d, call);
	c->by_toast_pointer = false;
	return &c->filter;
}

/* This call site's cache, made on first use. */
static probe_cache *cache_of(FmgrInfo *flinfo)
{
	if (flinfo->fn_extra == NULL)
		flinfo->fn_extra = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(probe_cache));
	return flinfo->fn_extra;
}

/* See filter/filter.h. */
void *amq_pg_probe_caller_state(FunctionCallInfo fcinfo, Size size)
{
	probe_cache *c = cache_of(fcinfo->flinfo);

	if (c->caller_state == NULL)
		c->caller_state = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, size);
	return c->caller_state;
}

const amq_filter *amq_pg_probe(FunctionCallInfo fcinfo, int filter_arg, int value_arg,
			       const amq_pg_call *call, amq_probe *probe, uint64 *hash)
{
	FmgrInfo *flinfo = fcinfo->flinfo;
	probe_cache *c = cache_of(flinfo);
	Datum filter = PG_GETARG_DATUM(filter_arg);
	const amq_filter *f;

	if (!c->hasher_ready) {
		amq_pg_hasher_init(&c->hasher, fcinfo, value_arg);
		c->hasher_ready = true;
	}
	if (VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(filter)))
		f = by_toast_pointer(c, flinfo->fn_mcxt, filter, call);
	else
		f = by_header(c, flinfo->fn_mcxt, filter, call);
	*probe = c->probe;
	amq_pg_check_family(f, &c->hasher, PG_GETARG_DATUM(value_arg), call);
	*hash = amq_pg_hash_value(&c->hasher, PG_GETARG_DATUM(value_arg), f->seed);
	return f;
}
