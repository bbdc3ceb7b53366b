/*
 * test_bulk.c - bulk maintenance (amq_bulk) and add-if-absent: for every
 * variant a bulk add gives the very bytes of a fold of single adds (clone,
 * add, seal per value) in the same order, a scalable chain grows through it,
 * bulk deletes equal folded deletes on the layouts that delete and fail with
 * the layout's message on the others; the identity check, the NULL-filter and
 * full-filter messages word for word; a full cuckoo filter loses no value
 * added before; add-if-absent skips what the filter may hold.
 */
#include "amq.h"
#include "cuckoo/cuckoo_table.h"
#include "check.h"
#include "format/variant.h"

#include <stdio.h>
#include <string.h>

static const amq_allocator *A = &amq_malloc_allocator;

/* A row of the variant registry as the tests below use it. */
struct variant {
	char name[64];
	amq_kind kind;
	amq_layout layout;
	bool deletes; /* what the tests expect: the rows with a remove delete */
};

static struct variant variant_at(size_t i)
{
	const amq_variant *row = amq_variant_at(i);
	struct variant v = {.kind = row->kind, .layout = row->layout};
	snprintf(v.name, sizeof(v.name), "%s %s", row->kind_name, row->layout_name);
	v.deletes = row->remove != NULL;
	return v;
}

static uint64_t h(int64_t i)
{
	return amq_hash_int(i, 0);
}

/* A sealed filter of variant v for capacity values holding [0, n). */
static void build(const struct variant *v, uint64_t capacity, int64_t n, amq_filter *f)
{
	amq_error err;
	CHECK(amq_filter_create(f, v->kind, v->layout, capacity, 0.01, 0, A, &err) == AMQ_OK,
	      "%s: create: %s", v->name, err.message);
	for (int64_t i = 0; i < n; i++)
		CHECK(amq_filter_add_to(f, h(i), A, &err) == AMQ_OK, "%s: add %lld: %s", v->name,
		      (long long)i, err.message);
	amq_filter_seal(f);
}

/* What a fold of the scalar function gives: per value a sealed copy of the
 * previous result with the value added (or deleted). */
static void fold(const amq_filter *src, amq_bulk_op op, int64_t from, int64_t to, amq_filter *out)
{
	amq_error err;
	amq_filter cur;
	CHECK(amq_filter_clone(&cur, src, A, &err) == AMQ_OK, "clone");
	for (int64_t i = from; i < to; i++) {
		amq_filter next;
		bool removed;
		CHECK(amq_filter_clone(&next, &cur, A, &err) == AMQ_OK, "clone");
		amq_filter_free(&cur, A);
		switch (op) {
		case AMQ_BULK_ADD:
			CHECK(amq_filter_add_to(&next, h(i), A, &err) == AMQ_OK, "fold add: %s",
			      err.message);
			break;
		case AMQ_BULK_DELETE:
			CHECK(amq_filter_remove(&next, h(i), &removed, &err) == AMQ_OK,
			      "fold delete: %s", err.message);
			break;
		}
		amq_filter_seal(&next);
		cur = next;
	}
	*out = cur;
}

/* A bulk pass of op over [from, to) on src; every row passes src again. */
static amq_status bulk(const amq_filter *src, amq_bulk_op op, int64_t from, int64_t to,
		       amq_filter *out, amq_error *err)
{
	amq_bulk b;
	amq_status st = amq_bulk_start(&b, op, "test_agg", src, A, err);
	for (int64_t i = from; st == AMQ_OK && i < to; i++) {
		if (i > from)
			st = amq_bulk_check_same(&b, src->bytes, src->size, src->size, err);
		if (st == AMQ_OK)
			st = amq_bulk_apply(&b, h(i), err);
	}
	if (st == AMQ_OK)
		amq_bulk_finish(&b, out);
	amq_bulk_free(&b);
	return st;
}

static bool same_bytes(const amq_filter *a, const amq_filter *b)
{
	return a->size == b->size && memcmp(a->bytes, b->bytes, a->size) == 0;
}

static void test_add(const struct variant *v)
{
	/* A scalable chain of 300 values grows several links under 2,000. */
	amq_filter src, want, got;
	amq_error err;
	build(v, v->layout == AMQ_LAYOUT_SCALABLE ? 300 : 5000, 100, &src);
	fold(&src, AMQ_BULK_ADD, 1000, 3000, &want);
	CHECK(bulk(&src, AMQ_BULK_ADD, 1000, 3000, &got, &err) == AMQ_OK, "%s: bulk add: %s",
	      v->name, err.message);
	CHECK(same_bytes(&got, &want), "%s: bulk add = fold of adds (%zu vs %zu bytes)", v->name,
	      got.size, want.size);
	CHECK(amq_filter_verify(&got, &err) == AMQ_OK, "%s: the result verifies: %s", v->name,
	      err.message);
	int64_t lost = 0;
	for (int64_t i = 0; i < 3000; i++)
		lost += (i < 100 || i >= 1000) && !amq_filter_contains(&got, h(i));
	CHECK(lost == 0, "%s: %lld values lost", v->name, (long long)lost);
	if (v->layout == AMQ_LAYOUT_SCALABLE)
		CHECK(got.size > src.size, "scalable: the chain grew (%zu -> %zu bytes)", src.size,
		      got.size);
	amq_filter_free(&got, A);
	amq_filter_free(&want, A);
	amq_filter_free(&src, A);
}

static void test_delete(const struct variant *v)
{
	amq_filter src, want, got;
	amq_error err;
	build(v, 5000, 2000, &src);
	if (!v->deletes) {
		char msg[256];
		snprintf(msg, sizeof(msg), "test_agg: a %s filter cannot delete values",
			 v->layout == AMQ_LAYOUT_CLASSIC   ? "classic bloom"
			 : v->layout == AMQ_LAYOUT_BLOCKED ? "blocked bloom"
							   : "scalable bloom");
		CHECK(bulk(&src, AMQ_BULK_DELETE, 0, 10, &got, &err) == AMQ_WRONG_KIND &&
			  strcmp(err.message, msg) == 0 &&
			  strcmp(err.hint, "build the filter with layout 'counting' for that") == 0,
		      "%s: bulk delete refused: %s (%s)", v->name, err.message, err.hint);
		amq_filter_free(&src, A);
		return;
	}
	/* [1000, 3000): half were added, half are absent (which may remove
	 * a colliding value, as a fold of single deletes would). */
	fold(&src, AMQ_BULK_DELETE, 1000, 3000, &want);
	CHECK(bulk(&src, AMQ_BULK_DELETE, 1000, 3000, &got, &err) == AMQ_OK, "%s: bulk delete: %s",
	      v->name, err.message);
	CHECK(same_bytes(&got, &want), "%s: bulk delete = fold of deletes", v->name);
	amq_filter_free(&got, A);
	amq_filter_free(&want, A);
	/* [1000, 2000), all added: the others all stay. */
	CHECK(bulk(&src, AMQ_BULK_DELETE, 1000, 2000, &got, &err) == AMQ_OK, "%s: bulk delete: %s",
	      v->name, err.message);
	int64_t lost = 0;
	for (int64_t i = 0; i < 1000; i++)
		lost += !amq_filter_contains(&got, h(i));
	CHECK(lost == 0, "%s: %lld kept values lost by deletes", v->name, (long long)lost);
	CHECK(got.items == src.items - 1000, "%s: items %llu after deleting 1000 of %llu", v->name,
	      (unsigned long long)got.items, (unsigned long long)src.items);
	amq_filter_free(&got, A);
	amq_filter_free(&src, A);
}

/* A build-only row (no single adds) has no bulk add or delete: both are
 * refused with its layout's message, as amq_filter_add_to and
 * amq_filter_remove refuse them. */
static void test_build_only(const amq_variant *row)
{
	amq_builder bld;
	amq_filter src, got;
	amq_error err;
	CHECK(amq_builder_init(&bld, row->kind, row->layout, 0.01, 0, 0, A, &err) == AMQ_OK,
	      "%s: builder: %s", row->kind_name, err.message);
	for (int64_t i = 0; i < 100; i++)
		CHECK(amq_builder_add(&bld, h(i), &err) == AMQ_OK, "%s: builder add",
		      row->kind_name);
	CHECK(amq_builder_finish(&bld, &src, &err) == AMQ_OK, "%s: build: %s", row->kind_name,
	      err.message);
	amq_builder_free(&bld);
	char want[160];
	snprintf(want, sizeof(want), "test_agg: a %s %s filter cannot add values one at a time",
		 row->layout_name, row->kind_name);
	CHECK(bulk(&src, AMQ_BULK_ADD, 0, 10, &got, &err) == AMQ_WRONG_KIND &&
		  strcmp(err.message, want) == 0,
	      "%s: bulk add refused: %s", row->kind_name, err.message);
	snprintf(want, sizeof(want), "test_agg: a %s %s filter cannot delete values",
		 row->layout_name, row->kind_name);
	CHECK(bulk(&src, AMQ_BULK_DELETE, 0, 10, &got, &err) == AMQ_WRONG_KIND &&
		  strcmp(err.message, want) == 0,
	      "%s: bulk delete refused: %s", row->kind_name, err.message);
	amq_filter_free(&src, A);
}

static void test_identity(void)
{
	amq_filter f, g;
	amq_error err;
	amq_bulk b;
	struct variant blocked = variant_at(1);
	build(&blocked, 1000, 10, &f);
	build(&blocked, 1000, 11, &g);
	CHECK(amq_bulk_start(&b, AMQ_BULK_ADD, "bloom_add_agg", &f, A, &err) == AMQ_OK, "start");
	CHECK(amq_bulk_check_same(&b, f.bytes, f.size, f.size, &err) == AMQ_OK, "row 2: the same");
	CHECK(amq_bulk_check_same(&b, f.bytes, AMQ_HEADER_BYTES, f.size, &err) == AMQ_OK,
	      "row 3: the header alone suffices");
	const char *want = "bloom_add_agg: every row must pass the same filter, but row 4's filter "
			   "differs from row 1's";
	CHECK(amq_bulk_check_same(&b, g.bytes, g.size, g.size, &err) == AMQ_INCOMPATIBLE &&
		  strcmp(err.message, want) == 0 &&
		  strcmp(err.hint, "to change several filters in one statement, aggregate per "
				   "filter (GROUP BY the filter's key)") == 0,
	      "same size, another header: %s (%s)", err.message, err.hint);
	CHECK(amq_bulk_check_same(&b, f.bytes, f.size, f.size + 1, &err) == AMQ_INCOMPATIBLE,
	      "another size");
	CHECK(amq_bulk_check_same(&b, f.bytes, AMQ_HEADER_BYTES - 1, f.size, &err) ==
		  AMQ_INCOMPATIBLE,
	      "fewer than 64 header bytes");
	CHECK(amq_bulk_check_same(&b, NULL, 0, 0, &err) == AMQ_INCOMPATIBLE, "an empty value");
	uint8_t flipped[AMQ_HEADER_BYTES];
	memcpy(flipped, f.bytes, sizeof(flipped));
	flipped[AMQ_HEADER_BYTES - 1] ^= 1;
	CHECK(amq_bulk_check_same(&b, flipped, sizeof(flipped), f.size, &err) == AMQ_INCOMPATIBLE,
	      "one checksum bit differs");
	amq_bulk_free(&b);
	CHECK(amq_bulk_null_filter("cuckoo_delete_agg", AMQ_KIND_CUCKOO, &err) ==
		      AMQ_INVALID_ARGUMENT &&
		  strcmp(err.message, "cuckoo_delete_agg: filter is null") == 0 &&
		  strcmp(err.hint, "pass the stored filter; where there is none yet, start from "
				   "COALESCE(filter, cuckoo_new(...))") == 0,
	      "NULL filter: %s (%s)", err.message, err.hint);
	amq_filter_free(&f, A);
	amq_filter_free(&g, A);
}

/* A cuckoo filter too small for the rows: the error says how many values
 * went in, and none of those is lost by the add that failed. */
static void test_full(void)
{
	amq_filter src;
	amq_error err;
	amq_bulk b;
	struct variant b4 = variant_at(4);
	build(&b4, 200, 50, &src);
	CHECK(amq_bulk_start(&b, AMQ_BULK_ADD, "cuckoo_add_agg", &src, A, &err) == AMQ_OK, "start");
	int64_t i = 1000;
	amq_status st = AMQ_OK;
	for (; i < 100000 && st == AMQ_OK; i++)
		st = amq_bulk_apply(&b, h(i), &err);
	int64_t added = i - 1 - 1000;
	CHECK(st == AMQ_FILTER_FULL, "full: status %d", (int)st);
	char want[256];
	snprintf(want, sizeof(want),
		 "cuckoo_add_agg: cuckoo filter is full (%llu items, load %.1f%%) after adding "
		 "%lld values",
		 (unsigned long long)b.filter.items, 100.0 * amq_cuckoo_load(&b.filter),
		 (long long)added);
	CHECK(strcmp(err.message, want) == 0, "full message: %s, want %s", err.message, want);
	CHECK(strcmp(err.hint, "the statement changes nothing; rebuild it larger, with "
			       "cuckoo_new(capacity) or cuckoo_agg over every value") == 0,
	      "full hint: %s", err.hint);
	CHECK(b.values == (uint64_t)added && b.filter.items == 50 + (uint64_t)added,
	      "values %llu, items %llu", (unsigned long long)b.values,
	      (unsigned long long)b.filter.items);
	int64_t lost = 0;
	for (int64_t j = 0; j < 50; j++)
		lost += !amq_filter_contains(&b.filter, h(j));
	for (int64_t j = 1000; j < 1000 + added; j++)
		lost += !amq_filter_contains(&b.filter, h(j));
	CHECK(lost == 0, "%lld values lost when the filter filled up", (long long)lost);
	amq_bulk_free(&b);
	amq_filter_free(&src, A);
}

/* Rows that repeat one value more often than a cuckoo filter can hold it:
 * the error says so, with cuckoo_add's advice, not "full". */
static void test_copies(void)
{
	amq_filter src;
	amq_error err;
	amq_bulk b;
	struct variant b4 = variant_at(4);
	build(&b4, 200, 50, &src);
	CHECK(amq_bulk_start(&b, AMQ_BULK_ADD, "cuckoo_add_agg", &src, A, &err) == AMQ_OK, "start");
	amq_status st = AMQ_OK;
	int n = 0;
	while (n < 20 && st == AMQ_OK) {
		st = amq_bulk_apply(&b, h(5000), &err);
		n++;
	}
	CHECK(st == AMQ_FILTER_FULL && n == 9, "status %d at row %d", (int)st, n);
	CHECK(strcmp(err.message, "cuckoo_add_agg: cuckoo filter already holds this value 8 times, "
				  "the most a b4 filter can, after adding 8 values") == 0,
	      "copies message: %s", err.message);
	CHECK(strcmp(err.hint,
		     "the statement changes nothing; use cuckoo_add_unique to add a value "
		     "once, or a counting bloom filter (bloom_new(n, p, 'counting')) to "
		     "count it") == 0,
	      "copies hint: %s", err.hint);
	amq_bulk_free(&b);
	amq_filter_free(&src, A);
}

/* An allocator that has no memory. */
static void *fail_alloc(void *ctx, size_t size)
{
	(void)ctx;
	(void)size;
	return NULL;
}

static void test_add_unique(void)
{
	amq_filter src, out, want;
	amq_error err;
	bool added;
	struct variant b4 = variant_at(4);
	build(&b4, 1000, 100, &src);
	out.bytes = NULL;
	CHECK(amq_filter_add_unique(&src, h(7), AMQ_FAMILY_NUMBER, &out, &added, A, &err) ==
		      AMQ_OK &&
		  !added && out.bytes == NULL,
	      "a value held already is skipped and nothing is allocated");
	CHECK(amq_filter_add_unique(&src, h(500), AMQ_FAMILY_NUMBER, &out, &added, A, &err) ==
		      AMQ_OK &&
		  added,
	      "a new value is added");
	fold(&src, AMQ_BULK_ADD, 500, 501, &want);
	amq_filter_note_family(&want, AMQ_FAMILY_NUMBER);
	amq_filter_seal(&want);
	CHECK(same_bytes(&out, &want), "add_unique of a new value = cuckoo_add, family recorded");
	/* In place: the same bytes, and a value held already changes none. */
	amq_filter in_place;
	amq_filter_clone(&in_place, &src, A, &err);
	CHECK(amq_filter_add_absent(&in_place, h(500), AMQ_FAMILY_NUMBER, &added, A, &err) ==
		      AMQ_OK &&
		  added,
	      "add_absent adds a new value");
	amq_filter_seal(&in_place);
	CHECK(same_bytes(&in_place, &want), "add_absent in place = add_unique's copy");
	CHECK(amq_filter_add_absent(&in_place, h(7), AMQ_FAMILY_TEXT, &added, A, &err) == AMQ_OK &&
		  !added && in_place.families == want.families,
	      "add_absent of a value held: unchanged, no family recorded");
	amq_filter_seal(&in_place);
	CHECK(same_bytes(&in_place, &want), "... every byte");
	amq_filter_free(&in_place, A);
	/* A copy that cannot be allocated: the error, and out left alone (no
	 * free of what it held before). */
	amq_allocator none = {.alloc = fail_alloc, .free = amq_malloc_allocator.free};
	amq_filter untouched;
	memset(&untouched, 0xab, sizeof(untouched));
	CHECK(amq_filter_add_unique(&src, h(501), AMQ_FAMILY_NUMBER, &untouched, &added, &none,
				    &err) == AMQ_NO_MEMORY &&
		  !added,
	      "add_unique out of memory: %s", err.message);
	amq_filter_free(&want, A);
	amq_filter_free(&out, A);
	/* A filter of 1,000 distinct values added unique 3 times over holds
	 * each at most once: items never exceed the distinct count. */
	amq_filter cur;
	amq_filter_clone(&cur, &src, A, &err);
	for (int round = 0; round < 3; round++)
		for (int64_t i = 0; i < 1000; i++)
			if (amq_filter_add_unique(&cur, h(i), AMQ_FAMILY_NUMBER, &out, &added, A,
						  &err) == AMQ_OK &&
			    added) {
				amq_filter_free(&cur, A);
				cur = out;
			}
	uint64_t copies = 0;
	for (int64_t i = 0; i < 1000; i++)
		copies += amq_cuckoo_count(&cur, h(i));
	CHECK(cur.items <= 1000 && copies >= 1000 - 20,
	      "one copy per value: %llu items, %llu copies counted", (unsigned long long)cur.items,
	      (unsigned long long)copies);
	amq_filter_free(&cur, A);
	/* A full filter: the error of cuckoo_add, and nothing left allocated. */
	amq_filter tiny;
	build(&b4, 8, 0, &tiny);
	amq_status st = AMQ_OK;
	for (int64_t i = 0; st == AMQ_OK && i < 1000; i++) {
		st = amq_filter_add_unique(&tiny, h(i), AMQ_FAMILY_NUMBER, &out, &added, A, &err);
		if (st == AMQ_OK && added) {
			amq_filter_free(&tiny, A);
			tiny = out;
		}
	}
	CHECK(st == AMQ_FILTER_FULL && strncmp(err.message, "cuckoo filter is full (", 23) == 0,
	      "full: %s", err.message);
	amq_filter_free(&tiny, A);
	amq_filter_free(&src, A);
}

int main(void)
{
	for (size_t i = 0; i < amq_variant_count(); i++) {
		const amq_variant *row = amq_variant_at(i);
		if (row->add == NULL && row->add_grow == NULL) {
			test_build_only(row);
			continue;
		}
		struct variant v = variant_at(i);
		test_add(&v);
		test_delete(&v);
	}
	test_identity();
	test_full();
	test_copies();
	test_add_unique();
	return check_summary();
}
