/*
 * test_variants.c - the variant registry and the calls that dispatch through
 * it: the registry holds the eight variants, each once and findable; every
 * variant built, filled, probed, described and combined through the generic
 * calls gives what its own functions give; operations a variant lacks fail
 * with a message naming its layout; amq_filter_read checks the kind before
 * the checksum and names the function and argument in every message. A row
 * added to the registry is tested here with no edit: rows without single
 * adds are built by a builder, as their aggregate builds them, and what a
 * row of a new kind may do is read from the operations it has.
 */
#include "amq.h"
#include "check.h"
#include "spec.h"
#include "format/variant.h"

#include <stdlib.h>
#include <string.h>

static const amq_allocator *A = &amq_malloc_allocator;

/* A registry row as the tests below name it: "<kind> <layout>". */
struct variant {
	char name[64];
	amq_kind kind;
	amq_layout layout;
	const amq_variant *row;
};

static struct variant variant_at(size_t i)
{
	const amq_variant *row = amq_variant_at(i);
	struct variant v = {.kind = row->kind, .layout = row->layout, .row = row};
	snprintf(v.name, sizeof(v.name), "%s %s", row->kind_name, row->layout_name);
	return v;
}

/* The registry itself: the eight variants of amq 0.3.0 first, in their
 * fixed order (later rows may follow), each row found by its kind and layout
 * codes and by its name, and nothing past the end. */
static void test_registry(void)
{
	CHECK(amq_variant_count() >= 8, "%zu variants, want at least 8", amq_variant_count());
	char names[256] = "";
	for (size_t i = 0; i < amq_variant_count(); i++) {
		const amq_variant *row = amq_variant_at(i);
		struct variant v = variant_at(i);
		if (i < 8)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? "," : "", v.name);
		amq_layout parsed = (amq_layout)99;
		amq_error err;
		CHECK(amq_variant_find(row->kind, row->layout) == row &&
			  amq_parse_layout(row->kind, row->layout_name, strlen(row->layout_name),
					   &parsed, &err) == AMQ_OK &&
			  parsed == row->layout,
		      "%s: found by its codes and its name", v.name);
	}
	CHECK(strcmp(names, "bloom classic,bloom blocked,bloom counting,bloom scalable,cuckoo "
			    "b4,cuckoo b2,cuckoo b8,cuckoo semisorted") == 0,
	      "registry order: %s", names);
	CHECK(amq_variant_at(amq_variant_count()) == NULL, "nothing past the last row");
}

/* Kinds are numbered by the registry and named by it, one code per name:
 * the SQL layer finds a kind by its name (amq_kind_named) and a new kind
 * adds no other list; the format version read is the registry's newest. */
static void test_kinds(void)
{
	unsigned newest = 0;
	for (size_t i = 0; i < amq_variant_count(); i++) {
		const amq_variant *row = amq_variant_at(i);
		CHECK(amq_kind_named(row->kind_name) == row->kind &&
			  strcmp(amq_kind_name(row->kind), row->kind_name) == 0,
		      "%s %s: its kind code and name map to each other", row->kind_name,
		      row->layout_name);
		if (row->format_version > newest)
			newest = row->format_version;
	}
	CHECK(amq_kind_named("bloom") == AMQ_KIND_BLOOM &&
		  amq_kind_named("cuckoo") == AMQ_KIND_CUCKOO,
	      "bloom and cuckoo keep codes 1 and 2");
	CHECK(amq_kind_named("none") == 0 && amq_kind_named("") == 0, "no kind is named none");
	if (newest < AMQ_FAMILIES_FORMAT_VERSION)
		newest = AMQ_FAMILIES_FORMAT_VERSION;
	CHECK(amq_format_version() == newest && newest >= 4, "format version %u, want at least 4",
	      amq_format_version());
}

/* A sealed filter of variant v holding the integers [0, n): made by the
 * generic create and adds, or, for a build-only row, by a builder. */
static void build(const struct variant *v, uint64_t n, amq_filter *f)
{
	amq_error err;
	if (v->row->add == NULL && v->row->add_grow == NULL) {
		amq_builder b;
		CHECK(amq_builder_init(&b, v->kind, v->layout, 0.01, 0, 0, A, &err) == AMQ_OK,
		      "%s: builder: %s", v->name, err.message);
		for (uint64_t i = 0; i < n; i++)
			CHECK(amq_builder_add(&b, amq_hash_int((int64_t)i, 0), &err) == AMQ_OK,
			      "%s: builder add", v->name);
		CHECK(amq_builder_finish(&b, f, &err) == AMQ_OK, "%s: build: %s", v->name,
		      err.message);
		amq_builder_free(&b);
		return;
	}
	CHECK(amq_filter_create(f, v->kind, v->layout, 5000, 0.01, 0, A, &err) == AMQ_OK,
	      "%s: create: %s", v->name, err.message);
	for (uint64_t i = 0; i < n; i++)
		CHECK(amq_filter_add(f, amq_hash_int((int64_t)i, 0), &err) == AMQ_OK, "%s: add",
		      v->name);
	amq_filter_seal(f);
}

/* Generic calls agree with the kind's own functions, and find every value. */
static void test_dispatch(const struct variant *v)
{
	amq_filter f;
	build(v, 3000, &f);
	CHECK(f.kind == v->kind && f.layout == v->layout && f.items == 3000, "%s: header", v->name);
	amq_probe probe = amq_filter_probe_for(&f);
	uint64_t missing = 0, disagree = 0, positives = 0;
	for (int64_t i = 0; i < 3000; i++)
		missing += !amq_filter_contains(&f, amq_hash_int(i, 0));
	/* The answers of docs/FORMAT.md read independently (spec.h), where it
	 * reads the layout; the batch probe always. */
	enum { PROBES = 100000 };
	uint64_t *hashes = malloc(PROBES * sizeof(uint64_t));
	bool *many = malloc(PROBES);
	for (int64_t i = 0; i < PROBES; i++)
		hashes[i] = amq_hash_int(3000 + i, 0);
	amq_filter_contains_many(&f, hashes, PROBES, many);
	bool spec_reads = spec_filter_contains(f.bytes, hashes[0]) >= 0;
	for (size_t i = 0; i < PROBES; i++) {
		uint64_t h = hashes[i];
		bool own = amq_filter_contains(&f, h);
		disagree += own != probe(&f, h) || own != many[i] ||
			    (spec_reads && (int)own != spec_filter_contains(f.bytes, h));
		positives += own;
	}
	free(hashes);
	free(many);
	CHECK(spec_reads || v->layout == AMQ_LAYOUT_SCALABLE || v->layout == AMQ_LAYOUT_SEMISORTED,
	      "%s: spec.h does not read this layout", v->name);
	CHECK(amq_verify_reads_cells(f.bytes, f.size) == v->row->verify_reads_cells &&
		  !amq_verify_reads_cells(f.bytes, 63),
	      "%s: amq_verify_reads_cells", v->name);
	CHECK(missing == 0, "%s: %llu of 3000 added values missing", v->name,
	      (unsigned long long)missing);
	CHECK(disagree == 0, "%s: generic, batch and spec probes disagree on %llu values", v->name,
	      (unsigned long long)disagree);
	CHECK(positives < 2000, "%s: %llu false positives in 100000 at p = 0.01", v->name,
	      (unsigned long long)positives);
	double fpr = amq_filter_expected_fpr(&f), estimate = amq_filter_estimate_items(&f);
	CHECK(fpr > 0.0 && fpr < 0.02, "%s: expected fpr %g", v->name, fpr);
	CHECK(estimate > 2800 && estimate < 3200, "%s: estimate %g of 3000", v->name, estimate);
	char json[512];
	amq_filter_info_json(&f, json, sizeof(json));
	CHECK(f.bytes[4] == amq_filter_format_version(&f) &&
		  f.bytes[4] == (v->row->format_version > 4 ? v->row->format_version : 4) &&
		  strstr(json, "\"families\":[]}") != NULL,
	      "%s: a filter with families is written as version 4: %s", v->name, json);
	/* Without families (a filter an older amq wrote, or one shipped to a
	 * shard), layouts amq 0.1.0 knew are still written as version 1;
	 * 0.2.0's as version 2, 0.3.0's as version 3; a later kind's as its row
	 * says. */
	f.families = AMQ_FAMILIES_UNKNOWN;
	amq_filter_seal(&f);
	amq_filter_info_json(&f, json, sizeof(json));
	bool known = (v->kind == AMQ_KIND_BLOOM || v->kind == AMQ_KIND_CUCKOO) &&
		     v->row->format_version <= AMQ_FAMILIES_FORMAT_VERSION;
	int version = !known				  ? v->row->format_version
		      : v->layout >= AMQ_LAYOUT_CUCKOO_B2 ? 3
		      : v->layout >= AMQ_LAYOUT_COUNTING  ? 2
							  : 1;
	char want[32];
	snprintf(want, sizeof(want), "\"format_version\":%d", version);
	const char *at = strstr(json, want);
	CHECK(at != NULL && (at[strlen(want)] == ',' || at[strlen(want)] == '}') &&
		  f.bytes[4] == version && strstr(json, "\"families\":null}") != NULL,
	      "%s: info %s", v->name, json);
	CHECK(strcmp(amq_kind_name(v->kind), v->kind == AMQ_KIND_BLOOM	  ? "bloom"
					     : v->kind == AMQ_KIND_CUCKOO ? "cuckoo"
									  : v->row->kind_name) == 0,
	      "%s: kind name", v->name);
	amq_filter_free(&f, A);
}

/* Union and intersection: Bloom layouts have them, cuckoo does not, a later
 * kind as its row says. */
static void test_combine(const struct variant *v)
{
	amq_filter a, b;
	amq_error err;
	build(v, 100, &a);
	build(v, 200, &b);
	amq_status st = amq_filter_union_into(&a, &b, &err);
	bool combines = v->row->union_into != NULL;
	if (combines) {
		CHECK(st == AMQ_OK && a.items == 300, "%s: union", v->name);
		CHECK(amq_filter_intersect_into(&a, &b, &err) == AMQ_OK && a.items == 200,
		      "%s: intersect", v->name);
	} else {
		char want[96];
		snprintf(want, sizeof(want), "a %s %s filter cannot be combined",
			 v->row->layout_name, v->row->kind_name);
		CHECK(st == AMQ_WRONG_KIND && strcmp(err.message, want) == 0,
		      "%s: union refused: %s", v->name, err.message);
	}
	amq_filter_free(&a, A);
	amq_filter_free(&b, A);
}

/* Deletes and frequencies exist only where the variant keeps counts (a
 * later kind: where its row has them). */
static void test_remove_and_frequency(const struct variant *v)
{
	amq_filter f;
	amq_error err;
	bool removed = false;
	uint64_t count = 0;
	build(v, 10, &f);
	uint64_t h = amq_hash_int(3, 0);
	amq_status del = amq_filter_remove(&f, h, &removed, &err);
	char want[128], want_hint[128] = "";
	/* The hint names the first row with deletes: of the same kind, else
	 * of any. */
	for (size_t i = 0; i < amq_variant_count(); i++) {
		const amq_variant *r = amq_variant_at(i);
		if (r->remove == NULL || (want_hint[0] != '\0' && r->kind != v->kind))
			continue;
		if (r->kind == v->kind) {
			snprintf(want_hint, sizeof(want_hint),
				 "build the filter with layout '%s' for that", r->layout_name);
			break;
		}
		snprintf(want_hint, sizeof(want_hint),
			 "build a %s filter with layout '%s' for that", r->kind_name,
			 r->layout_name);
	}
	if (v->row->remove != NULL) {
		CHECK(amq_filter_frequency(&f, h, &count, &err) == AMQ_OK && count == 0,
		      "%s: frequency after the delete: %llu", v->name, (unsigned long long)count);
		CHECK(del == AMQ_OK && removed && f.items == 9, "%s: delete", v->name);
	} else {
		snprintf(want, sizeof(want), "a %s %s filter cannot delete values",
			 v->row->layout_name, v->row->kind_name);
		CHECK(del == AMQ_WRONG_KIND && strcmp(err.message, want) == 0 &&
			  strcmp(err.hint, want_hint) == 0,
		      "%s: delete refused: %s: %s", v->name, err.message, err.hint);
		CHECK(amq_filter_frequency(&f, h, &count, &err) == AMQ_WRONG_KIND,
		      "%s: frequency refused", v->name);
	}
	amq_filter_free(&f, A);
}

/* open, kind, verify: in that order, each message naming function and argument. */
static void test_read(void)
{
	amq_filter bloom, cuckoo, f;
	amq_error err;
	struct variant blocked = variant_at(1), b4 = variant_at(4);
	build(&blocked, 50, &bloom);
	build(&b4, 50, &cuckoo);
	bloom.payload[0] ^= 1; /* checksum no longer matches */
	cuckoo.payload[0] ^= 1;

	CHECK(amq_filter_read(&f, bloom.bytes, bloom.size, AMQ_KIND_BLOOM, false, "bloom_union",
			      "second filter", &err) == AMQ_INVALID_FILTER &&
		  strcmp(err.message, "bloom_union: second filter: checksum mismatch") == 0,
	      "damaged: %s", err.message);
	CHECK(amq_filter_read(&f, bloom.bytes, bloom.size, AMQ_KIND_BLOOM, true, "bloom_union",
			      "second filter", &err) == AMQ_OK,
	      "trusted bytes are not verified again");
	CHECK(amq_filter_read(&f, cuckoo.bytes, cuckoo.size, AMQ_KIND_BLOOM, false,
			      "bloom_contains", "filter", &err) == AMQ_WRONG_KIND &&
		  strcmp(err.message,
			 "bloom_contains: filter: expected a bloom filter, got a cuckoo filter") ==
		      0 &&
		  strcmp(err.hint, "use the cuckoo_* functions for cuckoo filters") == 0,
	      "the kind comes before the checksum: %s", err.message);
	CHECK(
	    amq_filter_read(&f, bloom.bytes, 10, AMQ_KIND_BLOOM, false, "bloom_info", "filter",
			    &err) == AMQ_INVALID_FILTER &&
		strcmp(err.message,
		       "bloom_info: filter: a 10-byte value is shorter than the 64-byte header") ==
		    0,
	    "short: %s", err.message);
	bloom.bytes[4] = 9;
	CHECK(amq_filter_read(&f, bloom.bytes, bloom.size, AMQ_KIND_BLOOM, false, "bloom_fpr",
			      "filter", &err) == AMQ_INVALID_FILTER &&
		  strncmp(err.message,
			  "bloom_fpr: filter: amq filter format version 9 was written by a newer "
			  "amq",
			  71) == 0,
	      "newer: %s", err.message);
	CHECK(amq_filter_open(&f, bloom.bytes, bloom.size, &err) == AMQ_INVALID_FILTER &&
		  strncmp(err.message, "amq filter format version 9 was written", 39) == 0,
	      "open without a name: %s", err.message);
	amq_filter_free(&bloom, A);
	amq_filter_free(&cuckoo, A);
}

int main(void)
{
	test_registry();
	test_kinds();
	for (size_t i = 0; i < amq_variant_count(); i++) {
		struct variant v = variant_at(i);
		test_dispatch(&v);
		test_combine(&v);
		test_remove_and_frequency(&v);
	}
	test_read();
	amq_error err;
	amq_filter f;
	CHECK(amq_filter_create(&f, AMQ_KIND_CUCKOO, AMQ_LAYOUT_BLOCKED, 10, 0.01, 0, A, &err) ==
		  AMQ_INVALID_ARGUMENT,
	      "no blocked cuckoo filter: %s", err.message);
	return check_summary();
}
