/*
 * variant.c - finding a variant's row, and the generic filter operations of
 * amq.h that dispatch through it. The rows themselves live with their code
 * (bloom.c, cuckoo_layouts.c, ...); this switch is the one place that lists them.
 */
#include "format/variant.h"

const amq_variant *amq_variant_find(amq_kind kind, amq_layout layout)
{
	switch (kind) {
	case AMQ_KIND_BLOOM:
		switch (layout) {
		case AMQ_LAYOUT_CLASSIC:
			return &amq_variant_bloom_classic;
		case AMQ_LAYOUT_BLOCKED:
			return &amq_variant_bloom_blocked;
		case AMQ_LAYOUT_COUNTING:
			return &amq_variant_bloom_counting;
		case AMQ_LAYOUT_SCALABLE:
			return &amq_variant_bloom_scalable;
		case AMQ_LAYOUT_CUCKOO_B2:
		case AMQ_LAYOUT_CUCKOO_B8:
		case AMQ_LAYOUT_SEMISORTED:
			return NULL;
		}
		return NULL;
	case AMQ_KIND_CUCKOO:
		switch (layout) {
		case AMQ_LAYOUT_CLASSIC:
			return &amq_variant_cuckoo_b4;
		case AMQ_LAYOUT_CUCKOO_B2:
			return &amq_variant_cuckoo_b2;
		case AMQ_LAYOUT_CUCKOO_B8:
			return &amq_variant_cuckoo_b8;
		case AMQ_LAYOUT_SEMISORTED:
			return &amq_variant_cuckoo_semisorted;
		case AMQ_LAYOUT_BLOCKED:
		case AMQ_LAYOUT_COUNTING:
		case AMQ_LAYOUT_SCALABLE:
			return NULL;
		}
		return NULL;
	}
	return NULL;
}

const amq_variant *amq_variant_of(const amq_filter *f)
{
	return amq_variant_find(f->kind, f->layout);
}

const char *amq_kind_name(amq_kind kind)
{
	switch (kind) {
	case AMQ_KIND_BLOOM:
		return "bloom";
	case AMQ_KIND_CUCKOO:
		return "cuckoo";
	}
	return "unknown";
}

const char *amq_filter_layout_name(const amq_filter *f)
{
	return amq_variant_of(f)->layout_name;
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
		return v->create(f, capacity, fpr,
				 expansion ? expansion : AMQ_SCALABLE_DEFAULT_EXPANSION, seed, a,
				 err);
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

amq_status amq_filter_add_to(amq_filter *f, uint64_t hash, const amq_allocator *a, amq_error *err)
{
	const amq_variant *v = amq_variant_of(f);
	if (v->add_grow != NULL)
		return v->add_grow(f, hash, a, err);
	return v->add(f, hash, err);
}

amq_status amq_filter_add_collected(amq_filter *f, const uint64_t *sorted, size_t n,
				    const amq_allocator *a, amq_error *err)
{
	const amq_variant *v = amq_variant_of(f);
	if (v->add_collected != NULL)
		return v->add_collected(f, sorted, n, a, err);
	for (size_t i = 0; i < n; i++) {
		amq_status st = amq_filter_add_to(f, sorted[i], a, err);
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
	return amq_variant_of(f)->probe_for(f);
}

/* The error of an operation f's variant does not have. */
static amq_status unsupported(const amq_filter *f, const char *what, const char *hint,
			      amq_error *err)
{
	const amq_variant *v = amq_variant_of(f);
	return amq_fail(err, AMQ_WRONG_KIND, hint, "a %s %s filter cannot %s", v->layout_name,
			v->kind_name, what);
}

static const char *const COUNTING_HINT = "build the filter with layout 'counting' for that";

amq_status amq_filter_remove(amq_filter *f, uint64_t hash, bool *removed, amq_error *err)
{
	const amq_variant *v = amq_variant_of(f);
	if (v->remove == NULL)
		return unsupported(f, "delete values", COUNTING_HINT, err);
	*removed = v->remove(f, hash);
	return AMQ_OK;
}

amq_status amq_filter_frequency(const amq_filter *f, uint64_t hash, uint64_t *count, amq_error *err)
{
	const amq_variant *v = amq_variant_of(f);
	if (v->frequency == NULL)
		return unsupported(f, "count how often a value was added", COUNTING_HINT, err);
	*count = v->frequency(f, hash);
	return AMQ_OK;
}

amq_status amq_filter_union_into(amq_filter *dst, const amq_filter *src, amq_error *err)
{
	/* Same kind here; each variant's own check says why other
	 * parameters (layout included) do not match. */
	amq_status st = amq_filter_expect(src, dst->kind, err);
	if (st != AMQ_OK)
		return st;
	const amq_variant *v = amq_variant_of(dst);
	if (v->union_into == NULL)
		return unsupported(dst, "be combined", "", err);
	return v->union_into(dst, src, err);
}

amq_status amq_filter_intersect_into(amq_filter *dst, const amq_filter *src, amq_error *err)
{
	amq_status st = amq_filter_expect(src, dst->kind, err);
	if (st != AMQ_OK)
		return st;
	const amq_variant *v = amq_variant_of(dst);
	if (v->intersect_into == NULL)
		return unsupported(dst, "be intersected", "", err);
	return v->intersect_into(dst, src, err);
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
	int n = amq_variant_of(f)->info(f, out, cap);
	if (n < 0)
		n = 0;
	return cap == 0 ? (size_t)n : ((size_t)n < cap ? (size_t)n : cap - 1);
}
