/*
 * filter/arguments.c - filter arguments and results of the SQL functions. A bloom or
 * cuckoo datum is a varlena whose data bytes are exactly the core's serialized
 * filter, so reading one is detoast + core's amq_filter_read, and
 * returning one is a copy of the filter's bytes behind a varlena header.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "filter/filter.h"

void amq_pg_open_bytes(amq_filter *f, const void *bytes, size_t size, const amq_pg_call *call,
		       const char *arg)
{
	amq_error err;

	amq_pg_check(amq_filter_read(f, bytes, size, call->kind, false, call->name, arg, &err),
		     &err);
}

void amq_pg_read_filter(Datum d, const amq_pg_call *call, const char *arg, amq_filter *f)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(d);

	amq_pg_open_bytes(f, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), call, arg);
}

struct varlena *amq_pg_copy_filter(Datum d, const amq_pg_call *call, const char *arg, amq_filter *f)
{
	amq_filter src;
	struct varlena *copy;
	amq_error err;

	amq_pg_read_filter(d, call, arg, &src);
	copy = amq_pg_filter_to_varlena(&src);
	/* Cannot fail: the same bytes just opened. */
	amq_pg_check(amq_filter_open(f, VARDATA(copy), src.size, &err), &err);
	return copy;
}

struct varlena *amq_pg_filter_to_varlena(const amq_filter *f)
{
	struct varlena *v = palloc_extended(VARHDRSZ + f->size, MCXT_ALLOC_HUGE);
	/* A filter near 1 GiB takes a third of a second to copy: in pieces,
	 * with the interrupt check between them, as core clears one. */
	const size_t piece = AMQ_INTERRUPT_EVERY * 64;

	SET_VARSIZE(v, VARHDRSZ + f->size);
	for (size_t at = 0; at < f->size; at += piece) {
		memcpy(VARDATA(v) + at, f->bytes + at, Min(piece, f->size - at));
		CHECK_FOR_INTERRUPTS();
	}
	return v;
}

struct varlena *amq_pg_into_varlena(void *bytes, size_t size)
{
	struct varlena *v = bytes;
	const size_t piece = AMQ_INTERRUPT_EVERY * 64;

	/* Back to front, so that no piece lands on bytes not yet moved. */
	for (size_t end = size; end > 0;) {
		size_t start = end > piece ? end - piece : 0;

		memmove((char *)v + VARHDRSZ + start, (char *)bytes + start, end - start);
		end = start;
		CHECK_FOR_INTERRUPTS();
	}
	SET_VARSIZE(v, VARHDRSZ + size);
	return v;
}

struct varlena *amq_pg_sealed_copy(amq_filter *f)
{
	amq_filter_seal(f);
	return amq_pg_filter_to_varlena(f);
}
