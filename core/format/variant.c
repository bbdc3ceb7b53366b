/*
 * variant.c - the variant registry, the only list of variants: one array of
 * row pointers, each row defined with its code (bloom.c, cuckoo_layouts.c,
 * ...). Finding a row, kind names and the generic filter operations of
 * amq.h are loops over it or calls through a row; a new variant is one core
 * file plus one row pointer in the array below.
 */
#include "format/variant.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The rows, each defined with its layout's code. */
extern const amq_variant amq_variant_bloom_classic;	/* bloom/bloom.c */
extern const amq_variant amq_variant_bloom_blocked;	/* bloom/bloom.c */
extern const amq_variant amq_variant_bloom_counting;	/* bloom/bloom_counting.c */
extern const amq_variant amq_variant_bloom_scalable;	/* bloom/bloom_scalable.c */
extern const amq_variant amq_variant_bloom_dleft;	/* bloom/bloom_dleft.c */
extern const amq_variant amq_variant_cuckoo_b4;		/* cuckoo/cuckoo_layouts.c */
extern const amq_variant amq_variant_cuckoo_b2;		/* cuckoo/cuckoo_layouts.c */
extern const amq_variant amq_variant_cuckoo_b8;		/* cuckoo/cuckoo_layouts.c */
extern const amq_variant amq_variant_cuckoo_semisorted; /* cuckoo/cuckoo_layouts.c */
extern const amq_variant amq_variant_fuse_binary;	/* fuse/fuse.c */

/* The registry. Order matters in two places: amq_kind_name and the hint of
 * an unknown layout come from a kind's first row, and a tie between default
 * layouts goes to the earlier row. */
static const amq_variant *const rows[] = {
    &amq_variant_bloom_classic,	 &amq_variant_bloom_blocked,	 &amq_variant_bloom_counting,
    &amq_variant_bloom_scalable, &amq_variant_cuckoo_b4,	 &amq_variant_cuckoo_b2,
    &amq_variant_cuckoo_b8,	 &amq_variant_cuckoo_semisorted, &amq_variant_bloom_dleft,
    &amq_variant_fuse_binary,
};

amq_status amq_not_a_filter(amq_error *err, const char *fmt, ...)
{
	if (err == NULL)
		return AMQ_INVALID_FILTER;
	err->status = AMQ_INVALID_FILTER;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	/* The functions that make filters: "<kind>_agg" for every kind, and
	 * "<kind>_new" where some layout of it takes adds, the last after "or". */
	const char *names[2 * sizeof(rows) / sizeof(rows[0])];
	char suffix[2 * sizeof(rows) / sizeof(rows[0])];
	size_t n = 0;
	for (size_t i = 0; i < amq_variant_count(); i++) {
		const amq_variant *v = rows[i];
		bool first = amq_variant_first_of(v->kind) == v;
		if (first) {
			names[n] = v->kind_name;
			suffix[n++] = 'a';
		}
		bool adds = v->add != NULL || v->add_grow != NULL;
		bool named_new = false;
		for (size_t j = 0; j < i; j++)
			named_new |=
			    rows[j]->kind == v->kind && (rows[j]->add || rows[j]->add_grow);
		if (adds && !named_new) {
			names[n] = v->kind_name;
			suffix[n++] = 'n';
		}
	}
	size_t at = (size_t)snprintf(err->hint, sizeof(err->hint), "pass a value built by");
	for (size_t i = 0; i < n && at < sizeof(err->hint); i++)
		at += (size_t)snprintf(err->hint + at, sizeof(err->hint) - at, "%s %s_%s",
				       i == 0	    ? ""
				       : i + 1 == n ? " or"
						    : ",",
				       names[i], suffix[i] == 'a' ? "agg" : "new");
	return AMQ_INVALID_FILTER;
}

bool amq_verify_reads_cells(const void *buf, size_t size)
{
	const uint8_t *b = buf;
	if (b == NULL || size < AMQ_HEADER_BYTES)
		return false;
	const amq_variant *v = amq_variant_find((amq_kind)b[5], (amq_layout)b[6]);
	return v != NULL && v->verify_reads_cells;
}

size_t amq_variant_count(void)
{
	return sizeof(rows) / sizeof(rows[0]);
}

const amq_variant *amq_variant_at(size_t i)
{
	return i < amq_variant_count() ? rows[i] : NULL;
}

const amq_variant *amq_variant_find(amq_kind kind, amq_layout layout)
{
	for (size_t i = 0; i < amq_variant_count(); i++)
		if (rows[i]->kind == kind && rows[i]->layout == layout)
			return rows[i];
	return NULL;
}

const amq_variant *amq_variant_first_of(amq_kind kind)
{
	for (size_t i = 0; i < amq_variant_count(); i++)
		if (rows[i]->kind == kind)
			return rows[i];
	return NULL;
}

/* The loop, even on the per-value paths (amq_bloom_add, amq_filter_contains):
 * its branches are predicted and the row it returns does not wait on a load
 * that depends on f, so a table by kind and layout measured slower there for
 * the Bloom rows (1 to 3 ns a probe on a filter in L1), faster only for the
 * last rows (about 1.5 ns), and alike at 1e6 values. */
const amq_variant *amq_variant_of(const amq_filter *f)
{
	return amq_variant_find(f->kind, f->layout);
}

const char *amq_kind_name(amq_kind kind)
{
	const amq_variant *v = amq_variant_first_of(kind);
	return v != NULL ? v->kind_name : "unknown";
}

amq_kind amq_kind_named(const char *name)
{
	for (size_t i = 0; i < amq_variant_count(); i++)
		if (strcmp(rows[i]->kind_name, name) == 0)
			return rows[i]->kind;
	return (amq_kind)0;
}

const char *amq_kind_layout_at(amq_kind kind, size_t i)
{
	for (size_t r = 0; r < amq_variant_count(); r++)
		if (rows[r]->kind == kind && i-- == 0)
			return rows[r]->layout_name;
	return NULL;
}

unsigned amq_format_version(void)
{
	unsigned newest = AMQ_FAMILIES_FORMAT_VERSION;
	for (size_t i = 0; i < amq_variant_count(); i++)
		if (rows[i]->format_version > newest)
			newest = rows[i]->format_version;
	return newest;
}

const char *amq_filter_layout_name(const amq_filter *f)
{
	return amq_variant_of(f)->layout_name;
}

/* The error of an operation f's variant does not have. */
static amq_status unsupported(const amq_filter *f, const char *what, const char *hint,
			      amq_error *err)
{
	const amq_variant *v = amq_variant_of(f);
	return amq_fail(err, AMQ_WRONG_KIND, hint, "a %s %s filter cannot %s", v->layout_name,
			v->kind_name, what);
}

amq_status amq_filter_create_expanding(amq_filter *f, amq_kind kind, amq_layout layout,
				       uint64_t capacity, double fpr, uint32_t expansion,
				       uint64_t seed, const amq_allocator *a, amq_error *err)
{
	uint32_t hashes;
	uint64_t cells;
	amq_status st = amq_filter_size(kind, layout, capacity, fpr, &hashes, &cells, err);
	if (st != AMQ_OK)
		return st;
	const amq_variant *v = amq_variant_find(kind, layout);
	if (v->create != NULL)
		return v->create(f, capacity, fpr, expansion, seed, a, err);
	if (expansion != 0)
		return amq_fail(err, AMQ_INVALID_ARGUMENT,
				"pass an expansion only with layout 'scalable'",
				"a %s %s filter does not grow, so it takes no expansion",
				v->layout_name, v->kind_name);
	return amq_filter_allocate(f, kind, layout, hashes, seed, cells, a, err);
}

amq_status amq_filter_create(amq_filter *f, amq_kind kind, amq_layout layout, uint64_t capacity,
			     double fpr, uint64_t seed, const amq_allocator *a, amq_error *err)
{
	return amq_filter_create_expanding(f, kind, layout, capacity, fpr, 0, seed, a, err);
}

amq_status amq_filter_size(amq_kind kind, amq_layout layout, uint64_t capacity, double fpr,
			   uint32_t *hashes, uint64_t *cells, amq_error *err)
{
	const amq_variant *v = amq_variant_find(kind, layout);
	if (v == NULL)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "", "a %s filter has no layout %d",
				amq_kind_name(kind), (int)layout);
	amq_status st = amq_check_fpr(fpr, err);
	if (st == AMQ_OK)
		st = amq_check_capacity(capacity > INT64_MAX ? -1 : (int64_t)capacity, err);
	if (st != AMQ_OK)
		return st;
	uint64_t payload;
	st = v->size(capacity, fpr, hashes, cells, err);
	if (st == AMQ_OK)
		st = amq_check_size(kind, layout, *hashes, *cells, &payload, err);
	return st;
}

amq_status amq_filter_bytes(amq_kind kind, amq_layout layout, uint64_t capacity, double fpr,
			    size_t *bytes, amq_error *err)
{
	uint32_t hashes;
	uint64_t cells, payload;
	const amq_variant *v = amq_variant_find(kind, layout);
	if (v != NULL && v->add_grow != NULL)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "",
				"a %s %s filter grows, so it has no fixed size", v->layout_name,
				v->kind_name);
	amq_status st = amq_filter_size(kind, layout, capacity, fpr, &hashes, &cells, err);
	if (st == AMQ_OK)
		st = amq_check_size(kind, layout, hashes, cells, &payload, err);
	if (st == AMQ_OK)
		*bytes = AMQ_HEADER_BYTES + (size_t)payload;
	return st;
}

amq_status amq_filter_add_to(amq_filter *f, uint64_t hash, const amq_allocator *a, amq_error *err)
{
	const amq_variant *v = amq_variant_of(f);
	if (v->add_grow != NULL)
		return v->add_grow(f, hash, a, err);
	if (v->add == NULL)
		return unsupported(f, "add values one at a time",
				   "build a new filter from all the values with its aggregate",
				   err);
	return v->add(f, hash, err);
}

amq_status amq_filter_add_collected(amq_filter *f, const uint64_t *keys, size_t n,
				    const amq_allocator *a, amq_error *err)
{
	const amq_variant *v = amq_variant_of(f);
	if (v->add_collected != NULL)
		return v->add_collected(f, keys, n, a, err);
	for (size_t i = 0; i < n; i++) {
		amq_status st = amq_filter_add_to(f, keys[i], a, err);
		if (st == AMQ_OK && (i + 1) % AMQ_INTERRUPT_EVERY == 0)
			st = amq_poll(a, err);
		if (st != AMQ_OK)
			return st;
	}
	return AMQ_OK;
}

amq_status amq_filter_add(amq_filter *f, uint64_t hash, amq_error *err)
{
	return amq_filter_add_to(f, hash, NULL, err);
}

bool amq_filter_contains(const amq_filter *f, uint64_t hash)
{
	return amq_variant_of(f)->contains(f, hash);
}

amq_probe amq_filter_probe_for(const amq_filter *f)
{
	const amq_variant *v = amq_variant_of(f);
	return v->probe_for != NULL ? v->probe_for(f) : v->contains;
}

/* Through the row's contains_many where it has one (a layout whose probes
 * can be loaded ahead: blocked Bloom, binary fuse); else one probe each. */
void amq_filter_contains_many(const amq_filter *f, const uint64_t *hashes, size_t n, bool *out)
{
	const amq_variant *v = amq_variant_of(f);
	if (v->contains_many != NULL) {
		v->contains_many(f, hashes, n, out);
		return;
	}
	amq_probe contains = amq_filter_probe_for(f);
	for (size_t i = 0; i < n; i++)
		out[i] = contains(f, hashes[i]);
}

/* The hint for an operation f's row lacks: the first layout of f's kind that
 * has it (counting, for the Bloom layouts that cannot delete), else the
 * first row of another kind that has it, or none. */
static const char *layout_hint(const amq_filter *f, bool want_frequency, char *hint, size_t cap)
{
	hint[0] = '\0';
	const amq_variant *other = NULL;
	for (size_t i = 0; i < amq_variant_count(); i++) {
		const amq_variant *v = rows[i];
		if (want_frequency ? v->frequency == NULL : v->remove == NULL)
			continue;
		if (v->kind == f->kind) {
			snprintf(hint, cap, "build the filter with layout '%s' for that",
				 v->layout_name);
			return hint;
		}
		if (other == NULL)
			other = v;
	}
	if (other != NULL)
		snprintf(hint, cap, "build a %s filter with layout '%s' for that", other->kind_name,
			 other->layout_name);
	return hint;
}

amq_status amq_filter_remove(amq_filter *f, uint64_t hash, bool *removed, amq_error *err)
{
	const amq_variant *v = amq_variant_of(f);
	char hint[96];
	if (v->remove == NULL)
		return unsupported(f, "delete values", layout_hint(f, false, hint, sizeof(hint)),
				   err);
	*removed = v->remove(f, hash);
	return AMQ_OK;
}

amq_status amq_filter_frequency(const amq_filter *f, uint64_t hash, uint64_t *count, amq_error *err)
{
	const amq_variant *v = amq_variant_of(f);
	char hint[96];
	if (v->frequency == NULL)
		return unsupported(f, "count how often a value was added",
				   layout_hint(f, true, hint, sizeof(hint)), err);
	*count = v->frequency(f, hash);
	return AMQ_OK;
}

/* The union (intersect false) or intersection of dst and src through dst's
 * row. Same kind here; each variant's own check says why other parameters
 * (layout included) do not match. */
static amq_status merge_into(amq_filter *dst, const amq_filter *src, bool intersect, amq_error *err)
{
	amq_status st = amq_filter_expect(src, dst->kind, err);
	if (st != AMQ_OK)
		return st;
	const amq_variant *v = amq_variant_of(dst);
	amq_status (*merge)(amq_filter *, const amq_filter *, amq_error *) =
	    intersect ? v->intersect_into : v->union_into;
	if (merge == NULL)
		return unsupported(dst, intersect ? "be intersected" : "be combined", "", err);
	st = merge(dst, src, err);
	/* The result holds the families of both (of the values in both), and
	 * is unknown, sealed in its older format, when either is. */
	if (st == AMQ_OK &&
	    (dst->families == AMQ_FAMILIES_UNKNOWN || src->families == AMQ_FAMILIES_UNKNOWN))
		dst->families = AMQ_FAMILIES_UNKNOWN;
	else if (st == AMQ_OK)
		dst->families =
		    intersect ? dst->families & src->families : dst->families | src->families;
	return st;
}

amq_status amq_filter_union_into(amq_filter *dst, const amq_filter *src, amq_error *err)
{
	return merge_into(dst, src, false, err);
}

amq_status amq_filter_intersect_into(amq_filter *dst, const amq_filter *src, amq_error *err)
{
	return merge_into(dst, src, true, err);
}

double amq_filter_expected_fpr(const amq_filter *f)
{
	return amq_variant_of(f)->expected_fpr(f);
}

double amq_filter_estimate_items(const amq_filter *f)
{
	return amq_variant_of(f)->estimate_items(f);
}

size_t amq_filter_info_json(const amq_filter *f, char *out, size_t cap)
{
	/* Each row's info is one JSON object; the families, which every
	 * variant has, go before its closing brace. */
	char json[AMQ_INFO_MAX], families[48];
	int n = amq_variant_of(f)->info(f, json, sizeof(json) - sizeof(families) - 16);
	if (n <= 0 || (size_t)n >= sizeof(json) - sizeof(families) - 16 || json[n - 1] != '}')
		n = snprintf(json, sizeof(json), "{}");
	amq_families_json(f, families, sizeof(families));
	n = snprintf(json + n - 1, sizeof(json) - (size_t)n + 1, ",\"families\":%s}", families) +
	    n - 1;
	if (cap > 0)
		snprintf(out, cap, "%s", json);
	return cap == 0 ? (size_t)n : ((size_t)n < cap ? (size_t)n : cap - 1);
}
