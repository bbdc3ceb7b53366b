/*
 * cuckoo_layouts.c - the four cuckoo layouts as rows of the variant registry:
 * buckets of 2, 4 or 8 fingerprints ('b2', 'b4', 'b8') and semi-sorted b = 4
 * buckets ('semisorted'); how each is sized for a capacity and an fpr, and
 * which one a filter gets when SQL names none (docs/CUCKOO.md).
 */
#include "cuckoo/cuckoo_table.h"

#include <math.h>
#include <stdio.h>

/* The buckets of each layout: its row's shape. */
static const cuckoo_shape b2_shape = {.slots = 2, .log2_slots = 1, .fill_num = 42, .fill_den = 25};
static const cuckoo_shape b4_shape = {.slots = 4, .log2_slots = 2, .fill_num = 19, .fill_den = 5};
static const cuckoo_shape b8_shape = {.slots = 8, .log2_slots = 3, .fill_num = 196, .fill_den = 25};
static const cuckoo_shape semisorted_shape = {
    .slots = 4, .log2_slots = 2, .semisorted = true, .fill_num = 19, .fill_den = 5};

const cuckoo_shape *amq_cuckoo_shape(amq_layout layout)
{
	const amq_variant *v = amq_variant_find(AMQ_KIND_CUCKOO, layout);
	return v != NULL ? v->shape : &b4_shape;
}

/* Slots per bucket of a cuckoo layout. */
static uint32_t layout_slots(amq_layout layout)
{
	return amq_cuckoo_shape(layout)->slots;
}

double amq_cuckoo_target_load(amq_layout layout)
{
	const cuckoo_shape *shape = amq_cuckoo_shape(layout);
	return (double)shape->fill_num / (double)shape->fill_den / shape->slots;
}

uint32_t amq_cuckoo_fingerprint_bits(amq_layout layout, double fpr)
{
	/* The smallest bits with 2b / 2^bits <= fpr, i.e. ceil(log2(2b / fpr)),
	 * computed with exact powers of two so no rounding can shift it. Any
	 * positive double is reached within 1100 bits. */
	double pair = 2.0 * layout_slots(layout);
	uint32_t bits = 1;
	while (bits < 1100 && ldexp(pair, -(int)bits) > fpr)
		bits++;
	return bits;
}

/* ceil(sqrt(n)) in integers, so sizing never depends on a libm. */
static uint64_t ceil_sqrt(uint64_t n)
{
	uint64_t r = 0;
	for (uint64_t bit = (uint64_t)1 << 31; bit != 0; bit >>= 1)
		if ((r + bit) * (r + bit) <= n)
			r += bit;
	return r * r < n ? r + 1 : r;
}

/* The layout's name as SQL spells it. */
static const char *layout_name(amq_layout layout)
{
	return amq_variant_find(AMQ_KIND_CUCKOO, layout)->layout_name;
}

/* The lowest fpr of a layout, 2b / 2^32: amq_cuckoo_fingerprint_bits gives
 * it exactly 32 bits, and any fpr below it more. As a hint prints it: rounded
 * up to 4 significant digits ("1.863e-09" for b4, where 2^-29 is
 * 1.8626451...e-09), so the value quoted is itself accepted and one less in
 * its last digit is not. Computed in integers: the digits are the ceiling of
 * 2b 10^k / 2^32 for the k that gives four of them. */
static void print_lowest_fpr(char *out, size_t cap, uint32_t slots)
{
	uint64_t scaled = 2 * (uint64_t)slots; /* the bound times 10^k, times 2^32 */
	int k = 0;
	while (scaled < (uint64_t)1000 << 32) {
		scaled *= 10;
		k++;
	}
	uint64_t digits = (scaled + ((uint64_t)1 << 32) - 1) >> 32; /* 1000..10000 */
	if (digits == 10000) {
		digits = 1000;
		k--;
	}
	/* digits / 10^k as the double nearest it (10^k is exact in a double up
	 * to k = 22), which %.4g prints as exactly those digits, with %g's
	 * trailing zeros dropped. */
	double unit = 1.0;
	for (int i = 0; i < k; i++)
		unit *= 10.0;
	snprintf(out, cap, "%.4g", (double)digits / unit);
}

/* The fingerprint bits of layout at fpr, or the error saying which fpr the
 * layout can reach instead. */
static amq_status fingerprint_for(amq_layout layout, double fpr, uint32_t *bits, amq_error *err)
{
	*bits = amq_cuckoo_fingerprint_bits(layout, fpr);
	if (*bits >= AMQ_CUCKOO_MIN_FINGERPRINT && *bits <= AMQ_CUCKOO_MAX_FINGERPRINT)
		return AMQ_OK;
	const char *name = layout_name(layout);
	char hint[160];
	if (*bits > AMQ_CUCKOO_MAX_FINGERPRINT) {
		char lowest[32];
		print_lowest_fpr(lowest, sizeof(lowest), layout_slots(layout));
		snprintf(hint, sizeof(hint),
			 "use an fpr of at least %s with layout '%s', or a bloom filter", lowest,
			 name);
	} else
		snprintf(hint, sizeof(hint), "use an fpr below %g with layout '%s', or layout 'b4'",
			 ldexp(2.0 * layout_slots(layout), -(AMQ_CUCKOO_MIN_FINGERPRINT - 1)),
			 name);
	return amq_fail(err, AMQ_INVALID_ARGUMENT, hint,
			"fpr %g does not fit a %s cuckoo filter: it needs %u-bit fingerprints, and "
			"fingerprints have %d to %d bits",
			fpr, name, *bits, AMQ_CUCKOO_MIN_FINGERPRINT, AMQ_CUCKOO_MAX_FINGERPRINT);
}

/* AMQ_INVALID_ARGUMENT unless layout is a cuckoo layout. */
static amq_status check_layout(amq_layout layout, amq_error *err)
{
	if (amq_variant_find(AMQ_KIND_CUCKOO, layout) == NULL)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "", "a cuckoo filter has no layout %d",
				(int)layout);
	return AMQ_OK;
}

amq_status amq_cuckoo_size(amq_layout layout, uint64_t capacity, double fpr, uint64_t *buckets,
			   uint32_t *fingerprint_bits, amq_error *err)
{
	amq_status status = check_layout(layout, err);
	if (status != AMQ_OK)
		return status;
	status = amq_check_fpr(fpr, err);
	if (status != AMQ_OK)
		return status;
	if (capacity == 0)
		return amq_check_capacity(0, err);
	status = fingerprint_for(layout, fpr, fingerprint_bits, err);
	if (status != AMQ_OK)
		return status;
	/* ceil(capacity * den / num) without overflow: capacity = num q + r. */
	const cuckoo_shape *fill = amq_cuckoo_shape(layout);
	uint64_t q = capacity / fill->fill_num, r = capacity % fill->fill_num;
	uint64_t b =
	    q * fill->fill_den + (r * fill->fill_den + fill->fill_num - 1) / fill->fill_num;
	/* Small tables fill unevenly: at 95% a b = 4 filter for 10 items refused
	 * one of its 10 adds in 2% of trials, one for 100 in 0.7%. ceil(sqrt(b))
	 * spare buckets made that rare (docs/CUCKOO.md) at a cost of 0.2% at a
	 * million items. Buckets of 2 need more: 2 ceil(sqrt(b)) + 8, 0.26% at a
	 * million items. */
	uint64_t spare = ceil_sqrt(b);
	if (layout_slots(layout) == 2)
		spare = 2 * spare + 8;
	*buckets = b + spare;
	uint64_t payload;
	return amq_check_size(AMQ_KIND_CUCKOO, layout, *fingerprint_bits, *buckets, &payload, err);
}

/* The bits per item of layout at fpr, f / load, when its fingerprint fits:
 * the default layout is the cheapest (amq_default_layout, over the rows that
 * have this as default_cost: b4, b2 and b8, b4 first on a tie). */
static double default_cost(amq_layout layout, double fpr)
{
	if (!(fpr > 0.0 && fpr < 1.0))
		return INFINITY;
	uint32_t bits = amq_cuckoo_fingerprint_bits(layout, fpr);
	if (bits < AMQ_CUCKOO_MIN_FINGERPRINT || bits > AMQ_CUCKOO_MAX_FINGERPRINT)
		return INFINITY;
	return bits / amq_cuckoo_target_load(layout);
}

amq_status amq_cuckoo_create(amq_filter *f, amq_layout layout, uint64_t capacity, double fpr,
			     uint64_t seed, const amq_allocator *a, amq_error *err)
{
	uint64_t buckets = 0;
	uint32_t bits = 0;
	amq_status status = amq_cuckoo_size(layout, capacity, fpr, &buckets, &bits, err);
	if (status != AMQ_OK)
		return status;
	return amq_cuckoo_create_exact(f, layout, buckets, bits, seed, a, err);
}

amq_status amq_cuckoo_create_exact(amq_filter *f, amq_layout layout, uint64_t buckets,
				   uint32_t fingerprint_bits, uint64_t seed, const amq_allocator *a,
				   amq_error *err)
{
	amq_status status = check_layout(layout, err);
	if (status != AMQ_OK)
		return status;
	if (buckets == 0)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "",
				"a cuckoo filter needs at least 1 bucket");
	if (fingerprint_bits < AMQ_CUCKOO_MIN_FINGERPRINT ||
	    fingerprint_bits > AMQ_CUCKOO_MAX_FINGERPRINT)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "",
				"cuckoo fingerprint bits must be between %d and %d, got %u",
				AMQ_CUCKOO_MIN_FINGERPRINT, AMQ_CUCKOO_MAX_FINGERPRINT,
				fingerprint_bits);
	return amq_filter_allocate(f, AMQ_KIND_CUCKOO, layout, fingerprint_bits, seed, buckets, a,
				   err);
}

/* ---- what the rows share ---- */

/* Payload bits of a bucket of f-bit fingerprints in a table of this shape. */
static uint64_t bucket_bits(uint32_t slots, bool semisorted, uint32_t hashes)
{
	return semisorted ? amq_semisorted_bucket_bits(hashes) : (uint64_t)slots * hashes;
}

/* Payload bytes: the buckets, rounded up to whole words, and one spare word
 * so every field can be read with one 64-bit load. */
static uint64_t payload_size(const cuckoo_shape *shape, uint32_t hashes, uint64_t cells)
{
	return 8 * ((cells * bucket_bits(shape->slots, shape->semisorted, hashes) + 63) / 64 + 1);
}

static amq_status check_header(const amq_filter *f, const char *prefix, amq_error *err)
{
	if (f->hashes < AMQ_CUCKOO_MIN_FINGERPRINT || f->hashes > AMQ_CUCKOO_MAX_FINGERPRINT)
		return amq_not_a_filter(err, "%s%u-bit fingerprints", prefix, f->hashes);
	uint32_t slots = amq_cuckoo_bucket_size(f);
	if (f->cells <= ((uint64_t)1 << 36) && f->items > f->cells * slots)
		return amq_not_a_filter(err, "%s%llu items in %llu slots", prefix,
					(unsigned long long)f->items,
					(unsigned long long)(f->cells * slots));
	return AMQ_OK;
}

/* Occupied slots of a semi-sorted table, or the error of a bucket amq never
 * writes: a code past 3875, or fingerprints out of ascending order. */
static amq_status count_semisorted(const cuckoo_table *t, uint64_t *occupied, const char *prefix,
				   amq_error *err)
{
	for (uint64_t i = 0; i < t->buckets; i++) {
		if (amq_semisorted_code_at(t, i) >= AMQ_SEMISORT_CODES)
			return amq_not_a_filter(
			    err, "%ssemi-sorted bucket %llu has code %u, past the last, %d", prefix,
			    (unsigned long long)i, amq_semisorted_code_at(t, i),
			    AMQ_SEMISORT_CODES - 1);
		uint32_t fps[4];
		amq_semisorted_load(t, i, fps);
		for (int j = 0; j < 4; j++) {
			if (j > 0 && fps[j] < fps[j - 1])
				return amq_not_a_filter(err,
							"%ssemi-sorted bucket %llu is out of order",
							prefix, (unsigned long long)i);
			*occupied += fps[j] != 0;
		}
	}
	return AMQ_OK;
}

/* Zero bits past the last bucket, valid buckets, and as many occupied slots
 * as items. */
static amq_status verify(const amq_filter *f, const char *prefix, amq_error *err)
{
	cuckoo_table t = amq_cuckoo_table(f);
	uint64_t occupied = 0;
	if (!amq_tail_is_zero(f, t.buckets * bucket_bits(t.slots, t.semisorted, t.bits)))
		return amq_not_a_filter(err, "%sbits set past the last cuckoo slot", prefix);
	if (t.semisorted) {
		amq_status st = count_semisorted(&t, &occupied, prefix, err);
		if (st != AMQ_OK)
			return st;
	} else {
		for (uint64_t bit = 0, end = t.buckets * t.slots * t.bits; bit < end; bit += t.bits)
			occupied += amq_field_get(t.payload, bit, t.bits) != 0;
	}
	if (occupied != f->items)
		return amq_not_a_filter(err, "%sheader counts %llu items, slots hold %llu", prefix,
					(unsigned long long)f->items, (unsigned long long)occupied);
	return AMQ_OK;
}

static double estimate_items(const amq_filter *f)
{
	return (double)f->items;
}

static int info(const amq_filter *f, char *out, size_t cap)
{
	const amq_variant *v = amq_variant_of(f);
	cuckoo_table t = amq_cuckoo_table(f);
	return snprintf(
	    out, cap,
	    "{\"kind\":\"cuckoo\",\"buckets\":%llu,\"slots\":%u,\"fingerprint_bits\":%u,"
	    "\"total_slots\":%llu,\"items\":%llu,\"load_factor\":%.6g,\"bytes\":%zu,"
	    "\"expected_fpr\":%.6g,\"seed\":%llu,\"format_version\":%u,\"layout\":\"%s\","
	    "\"bucket_size\":%u,\"semisorted\":%s,\"bits_per_slot\":%.6g}",
	    (unsigned long long)f->cells, t.slots, f->hashes,
	    (unsigned long long)(f->cells * t.slots), (unsigned long long)f->items,
	    amq_cuckoo_load(f), f->size, amq_cuckoo_expected_fpr(f), (unsigned long long)f->seed,
	    amq_filter_format_version(f), v->layout_name, t.slots, t.semisorted ? "true" : "false",
	    (double)bucket_bits(t.slots, t.semisorted, f->hashes) / t.slots);
}

/* ---- one row per layout; the functions above read the shape from f's row,
 * those below know it ---- */

#define CUCKOO_LAYOUT_FUNCTIONS(name, LAYOUT)                                                      \
	static double name##_cell_bits(uint32_t hashes)                                            \
	{                                                                                          \
		return (double)bucket_bits(name##_shape.slots, name##_shape.semisorted, hashes);   \
	}                                                                                          \
	static uint64_t name##_payload_size(uint32_t hashes, uint64_t cells)                       \
	{                                                                                          \
		return payload_size(&name##_shape, hashes, cells);                                 \
	}                                                                                          \
	static amq_status name##_size(uint64_t capacity, double fpr, uint32_t *hashes,             \
				      uint64_t *cells, amq_error *err)                             \
	{                                                                                          \
		return amq_cuckoo_size(LAYOUT, capacity, fpr, cells, hashes, err);                 \
	}                                                                                          \
	static amq_status name##_add(amq_filter *f, uint64_t hash, amq_error *err)                 \
	{                                                                                          \
		cuckoo_table t = amq_cuckoo_table_of(f, &name##_shape);                            \
		return amq_cuckoo_table_add(f, &t, hash, err);                                     \
	}                                                                                          \
	static bool name##_remove(amq_filter *f, uint64_t hash)                                    \
	{                                                                                          \
		cuckoo_table t = amq_cuckoo_table_of(f, &name##_shape);                            \
		return amq_cuckoo_table_delete(f, &t, hash);                                       \
	}                                                                                          \
	static uint64_t name##_frequency(const amq_filter *f, uint64_t hash)                       \
	{                                                                                          \
		cuckoo_table t = amq_cuckoo_table_of(f, &name##_shape);                            \
		return amq_cuckoo_table_count(&t, hash);                                           \
	}                                                                                          \
	static amq_probe name##_probe_for(const amq_filter *f)                                     \
	{                                                                                          \
		(void)f;                                                                           \
		return amq_cuckoo_##name##_contains;                                               \
	}

CUCKOO_LAYOUT_FUNCTIONS(b2, AMQ_LAYOUT_CUCKOO_B2)
CUCKOO_LAYOUT_FUNCTIONS(b4, AMQ_LAYOUT_CLASSIC)
CUCKOO_LAYOUT_FUNCTIONS(b8, AMQ_LAYOUT_CUCKOO_B8)
CUCKOO_LAYOUT_FUNCTIONS(semisorted, AMQ_LAYOUT_SEMISORTED)

/* The bucket sizes may be the default layout; semi-sorted is asked for by name. */
#define CUCKOO_DEFAULT_COST(name, LAYOUT)                                                          \
	static double name##_default_cost(double fpr)                                              \
	{                                                                                          \
		return default_cost(LAYOUT, fpr);                                                  \
	}

CUCKOO_DEFAULT_COST(b2, AMQ_LAYOUT_CUCKOO_B2)
CUCKOO_DEFAULT_COST(b4, AMQ_LAYOUT_CLASSIC)
CUCKOO_DEFAULT_COST(b8, AMQ_LAYOUT_CUCKOO_B8)

/* The hint of an unknown cuckoo layout name: every cuckoo row's. */
#define CUCKOO_LAYOUTS_HINT                                                                        \
	"use 'b2', 'b4' or 'b8' (fingerprints per bucket), or 'semisorted' (b4 with one bit less " \
	"per item)"

/* A row: b4 is written with format version 1, byte for byte as amq 0.1.0
 * wrote it; the layouts 0.3.0 adds with version 3, so 0.1.0 and 0.2.0
 * readers refuse them as "written by a newer amq". DEFAULT_COST: the row's
 * default_cost, NULL for a layout only asked for by name. */
#define CUCKOO_ROW(name, LAYOUT, VERSION, SLOTS, DEFAULT_COST)                                     \
	{                                                                                          \
		.kind = AMQ_KIND_CUCKOO, .layout = LAYOUT, .kind_name = "cuckoo",                  \
		.layout_name = #name, .layouts_hint = CUCKOO_LAYOUTS_HINT,                         \
		.format_version = VERSION, .slots = SLOTS, .cell_name = "buckets",                 \
		.order_free = false, .default_cost = DEFAULT_COST, .shape = &name##_shape,         \
		.cell_bits = name##_cell_bits, .payload_size = name##_payload_size,                \
		.check_header = check_header, .verify = verify, .verify_reads_cells = true,        \
		.size = name##_size, .add = name##_add, .contains = amq_cuckoo_##name##_contains,  \
		.probe_for = name##_probe_for, .remove = name##_remove,                            \
		.frequency = name##_frequency, .expected_fpr = amq_cuckoo_expected_fpr,            \
		.estimate_items = estimate_items, .info = info,                                    \
	}

AMQ_VARIANT_ROW(amq_variant_cuckoo_b2) = CUCKOO_ROW(b2, AMQ_LAYOUT_CUCKOO_B2, 3, 2,
						    b2_default_cost);
AMQ_VARIANT_ROW(amq_variant_cuckoo_b4) = CUCKOO_ROW(b4, AMQ_LAYOUT_CLASSIC, 1, 4, b4_default_cost);
AMQ_VARIANT_ROW(amq_variant_cuckoo_b8) = CUCKOO_ROW(b8, AMQ_LAYOUT_CUCKOO_B8, 3, 8,
						    b8_default_cost);
AMQ_VARIANT_ROW(amq_variant_cuckoo_semisorted) = CUCKOO_ROW(semisorted, AMQ_LAYOUT_SEMISORTED, 3, 4,
							    NULL);
