/*
 * filter/bulk.c - bloom_add_agg, bloom_delete_agg, cuckoo_add_agg and
 * cuckoo_delete_agg(filter, value).
 *
 * The aggregates keep core's amq_bulk in the aggregate memory context: the
 * first row's filter is read (detoasted and verified) and copied once, each
 * row's value is added or deleted in place, and the final function seals the
 * copy (idempotent, so PostgreSQL may call it more than once) and returns it.
 * Every row must pass the same filter; checking that stays O(1) per row even
 * for a large toasted filter: a row whose filter is the very TOAST pointer
 * seen before is that filter, any other is compared by its length and the
 * first 64 bytes of a slice detoast (the header, whose checksum covers every
 * byte), never by detoasting it whole.
 *
 * There is no combine function: a cuckoo filter's bytes depend on the order
 * of its adds, and the four aggregates stay alike. They are PARALLEL SAFE: a
 * parallel plan runs them above the Gather, on every row.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "utils/memutils.h"

#include "filter/filter.h"

typedef struct bulk_state {
	amq_bulk bulk;
	bool known_toast; /* toast holds the TOAST pointer of a row that passed */
	struct varatt_external toast;
} bulk_state;

/* The aggregate memory context; raises when not called as an aggregate. */
static MemoryContext bulk_context(FunctionCallInfo fcinfo)
{
	MemoryContext aggctx;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		elog(ERROR, "amq bulk aggregate function called in non-aggregate context");
	return aggctx;
}

/* Remembers d's TOAST pointer when it has one, as a filter that passed. */
static void remember_toast(bulk_state *s, Datum d)
{
	struct varlena *raw = (struct varlena *)DatumGetPointer(d);

	if (VARATT_IS_EXTERNAL_ONDISK(raw)) {
		VARATT_EXTERNAL_GET_POINTER(s->toast, raw);
		s->known_toast = true;
	}
}

/* True when d is the very stored value that passed before. */
static bool same_toast(const bulk_state *s, Datum d)
{
	struct varlena *raw = (struct varlena *)DatumGetPointer(d);
	struct varatt_external ptr;

	if (!s->known_toast || !VARATT_IS_EXTERNAL_ONDISK(raw))
		return false;
	VARATT_EXTERNAL_GET_POINTER(ptr, raw);
	return memcmp(&ptr, &s->toast, sizeof(ptr)) == 0;
}

/* Raises unless the filter d of a later row is the first row's: reads its
 * header in place, or through a slice detoast when it is stored apart or
 * compressed. */
static void check_same_filter(bulk_state *s, Datum d)
{
	struct varlena *raw = (struct varlena *)DatumGetPointer(d);
	struct varlena *head;
	amq_error err;

	if (same_toast(s, d)) {
		/* Counted as a row that passed: its header is the source's. */
		amq_pg_check(amq_bulk_check_same(&s->bulk, s->bulk.source_header, AMQ_HEADER_BYTES,
						 s->bulk.source_size, &err),
			     &err);
		return;
	}
	if (!VARATT_IS_EXTERNAL(raw) && !VARATT_IS_COMPRESSED(raw)) {
		amq_pg_check(amq_bulk_check_same(&s->bulk, VARDATA_ANY(raw), VARSIZE_ANY_EXHDR(raw),
						 VARSIZE_ANY_EXHDR(raw), &err),
			     &err);
		return;
	}
	head = PG_DETOAST_DATUM_SLICE(d, 0, AMQ_HEADER_BYTES);
	amq_pg_check(amq_bulk_check_same(&s->bulk, VARDATA_ANY(head), VARSIZE_ANY_EXHDR(head),
					 toast_raw_datum_size(d) - VARHDRSZ, &err),
		     &err);
	pfree(head);
	remember_toast(s, d);
}

/* A new state in the aggregate context from the first row's filter d, for
 * the bulk operation of the call's. */
static bulk_state *start_bulk(FunctionCallInfo fcinfo, const amq_pg_call *call, Datum d)
{
	MemoryContext aggctx = bulk_context(fcinfo);
	amq_allocator a = amq_pg_allocator(aggctx);
	bulk_state *s = MemoryContextAllocZero(aggctx, sizeof(*s));
	amq_filter src;
	amq_error err;

	amq_pg_read_filter(d, call, "filter", &src);
	amq_pg_check(
	    amq_bulk_start(&s->bulk, amq_sql_bulk_op(call->op), call->name, &src, &a, &err), &err);
	remember_toast(s, d);
	return s;
}

/* Transition (state, filter, value) of all four: check the filter, then add
 * or delete the value (as the operation says) unless it is NULL. A NULL
 * filter is an error. */
Datum amq_pg_op_bulk_trans(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	bulk_state *s;
	amq_error err;

	bulk_context(fcinfo);
	if (PG_ARGISNULL(1)) {
		amq_bulk_null_filter(call->name, call->kind, &err);
		amq_pg_raise(&err);
	}
	if (PG_ARGISNULL(0)) {
		s = start_bulk(fcinfo, call, PG_GETARG_DATUM(1));
	} else {
		s = (bulk_state *)PG_GETARG_POINTER(0);
		check_same_filter(s, PG_GETARG_DATUM(1));
	}
	if (!PG_ARGISNULL(2)) {
		const amq_pg_hasher *h = amq_pg_cached_hasher(fcinfo, 2);
		uint64 hash;

		/* The family check runs on the first row of each family only:
		 * the type, and so the family, is the same on every row. */
		if (!amq_filter_takes(&s->bulk.filter, h->family) || s->bulk.filter.families == 0) {
			amq_pg_decoded d;

			amq_pg_decode_value(h, PG_GETARG_DATUM(2), &d);
			amq_pg_check(amq_bulk_admit(&s->bulk, &d.value, AMQ_DIALECT_SQL, &err),
				     &err);
		}
		hash = amq_pg_hash_value(h, PG_GETARG_DATUM(2), s->bulk.filter.seed);
		amq_pg_check(amq_bulk_apply(&s->bulk, hash, &err), &err);
	}
	PG_RETURN_POINTER(s);
}

/* Final of all four: the changed filter, or NULL when there were no rows. */
Datum amq_pg_op_bulk_final(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	bulk_context(fcinfo);
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(amq_pg_sealed_copy(&((bulk_state *)PG_GETARG_POINTER(0))->bulk.filter));
}
