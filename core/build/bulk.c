/*
 * bulk.c - changing a stored filter by many values at once: the state of the
 * aggregates that add every row's value to (or delete it from) one existing
 * filter, and add-if-absent. A fold of bloom_add over n rows copies, changes
 * and seals the whole filter n times, O(size x n); a bulk aggregate copies
 * it once, changes it in place and seals it once, O(size + n), and gives the
 * very bytes of that fold (the same calls on the same filter, in row order).
 */
#include "base/internal.h"

#include <stdio.h>

amq_status amq_filter_add_absent(amq_filter *f, uint64_t hash, amq_family family, bool *added,
				 const amq_allocator *a, amq_error *err)
{
	*added = false;
	if (amq_filter_contains(f, hash))
		return AMQ_OK;
	amq_status st = amq_filter_add_to(f, hash, a, err);
	if (st != AMQ_OK)
		return st;
	amq_filter_note_family(f, family);
	*added = true;
	return AMQ_OK;
}

amq_status amq_filter_add_unique(const amq_filter *src, uint64_t hash, amq_family family,
				 amq_filter *out, bool *added, const amq_allocator *a,
				 amq_error *err)
{
	*added = false;
	if (amq_filter_contains(src, hash))
		return AMQ_OK;
	amq_status st = amq_filter_clone(out, src, a, err);
	if (st != AMQ_OK)
		return st;
	st = amq_filter_add_absent(out, hash, family, added, a, err);
	if (st != AMQ_OK) {
		amq_filter_free(out, a);
		return st;
	}
	amq_filter_seal(out);
	return AMQ_OK;
}

amq_status amq_bulk_start(amq_bulk *b, amq_bulk_op op, const char *function, const amq_filter *src,
			  const amq_allocator *a, amq_error *err)
{
	b->op = op;
	b->function = function;
	b->alloc = *a;
	b->values = 0;
	b->rows = 1;
	b->source_size = src->size;
	memcpy(b->source_header, src->bytes, AMQ_HEADER_BYTES);
	b->filter.bytes = NULL;
	return amq_filter_clone(&b->filter, src, &b->alloc, err);
}

amq_status amq_bulk_check_same(amq_bulk *b, const void *head, size_t head_len, size_t size,
			       amq_error *err)
{
	b->rows++;
	if (size == b->source_size && head_len >= AMQ_HEADER_BYTES &&
	    memcmp(head, b->source_header, AMQ_HEADER_BYTES) == 0)
		return AMQ_OK;
	return amq_fail(err, AMQ_INCOMPATIBLE,
			"to change several filters in one statement, aggregate per filter "
			"(GROUP BY the filter's key)",
			"%s: every row must pass the same filter, but row %llu's filter "
			"differs from row 1's",
			b->function, (unsigned long long)b->rows);
}

amq_status amq_bulk_null_filter(const char *function, amq_kind kind, amq_error *err)
{
	char hint[160];
	snprintf(hint, sizeof(hint),
		 "pass the stored filter; where there is none yet, start from "
		 "COALESCE(filter, %s_new(...))",
		 amq_kind_name(kind));
	return amq_fail(err, AMQ_INVALID_ARGUMENT, hint, "%s: filter is null", function);
}

/* The error of a failed add or delete with the function's name in front; a
 * full filter also says how many values went in before it (a full cuckoo
 * filter advises cuckoo_new, another kind's its own add's advice), and a
 * value already stored as often as a filter can (rows repeat it) keeps the
 * advice of cuckoo_add, since no larger filter would take it. */
static amq_status bulk_fail(const amq_bulk *b, const amq_error *cause, amq_error *err)
{
	if (cause->status == AMQ_FILTER_FULL && strcmp(cause->hint, AMQ_CUCKOO_COPIES_HINT) == 0)
		return amq_fail(err, cause->status,
				"the statement changes nothing; " AMQ_CUCKOO_COPIES_HINT,
				"%s: %s, after adding %llu values", b->function, cause->message,
				(unsigned long long)b->values);
	if (cause->status == AMQ_FILTER_FULL && b->filter.kind == AMQ_KIND_CUCKOO)
		return amq_fail(err, cause->status,
				"the statement changes nothing; rebuild it larger, with "
				"cuckoo_new(capacity) or cuckoo_agg over every value",
				"%s: %s after adding %llu values", b->function, cause->message,
				(unsigned long long)b->values);
	if (cause->status == AMQ_FILTER_FULL) {
		char hint[sizeof(err->hint)];
		snprintf(hint, sizeof(hint), "the statement changes nothing; %.120s", cause->hint);
		return amq_fail(err, cause->status, hint, "%s: %s after adding %llu values",
				b->function, cause->message, (unsigned long long)b->values);
	}
	if (cause->status == AMQ_NO_MEMORY)
		return amq_fail(err, cause->status, cause->hint, "%s", cause->message);
	return amq_fail(err, cause->status, cause->hint, "%s: %s", b->function, cause->message);
}

amq_status amq_bulk_admit(amq_bulk *b, const amq_value *v, amq_dialect dialect, amq_error *err)
{
	amq_status st = amq_check_family(&b->filter, v, b->function, "value", dialect, err);
	if (st == AMQ_OK && b->op == AMQ_BULK_ADD)
		amq_filter_note_family(&b->filter, v->family);
	return st;
}

amq_status amq_bulk_apply(amq_bulk *b, uint64_t hash, amq_error *err)
{
	amq_error cause;
	amq_status st = AMQ_OK;
	bool removed;
	switch (b->op) {
	case AMQ_BULK_ADD:
		st = amq_filter_add_to(&b->filter, hash, &b->alloc, &cause);
		break;
	case AMQ_BULK_DELETE:
		st = amq_filter_remove(&b->filter, hash, &removed, &cause);
		break;
	}
	if (st != AMQ_OK)
		return bulk_fail(b, &cause, err);
	b->values++;
	return AMQ_OK;
}

void amq_bulk_finish(amq_bulk *b, amq_filter *out)
{
	amq_filter_seal(&b->filter);
	*out = b->filter;
	b->filter.bytes = NULL;
	b->filter.payload = NULL;
}

void amq_bulk_free(amq_bulk *b)
{
	amq_filter_free(&b->filter, &b->alloc);
}
