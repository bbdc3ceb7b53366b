/*
 * params.c - checks of the user-supplied sizing arguments. Both adapters call
 * these so that a bad fpr or capacity reads the same in SQLite and PostgreSQL.
 * Layout names and defaults come from the variant registry, one row at a time.
 */
#include "format/variant.h"

#include <math.h>
#include <string.h>

amq_status amq_check_fpr(double fpr, amq_error *err)
{
	/* Written so that NaN fails too. */
	if (!(fpr > 0.0 && fpr < 1.0))
		return amq_fail(err, AMQ_INVALID_ARGUMENT,
				"pass a false-positive rate such as 0.01 for 1%",
				"fpr must be between 0 and 1 (exclusive), got %g", fpr);
	return AMQ_OK;
}

amq_status amq_check_capacity(int64_t capacity, amq_error *err)
{
	if (capacity < 1)
		return amq_fail(err, AMQ_INVALID_ARGUMENT,
				"pass the number of distinct values the filter must hold",
				"capacity must be at least 1, got %lld", (long long)capacity);
	return AMQ_OK;
}

amq_layout amq_default_layout(amq_kind kind, double fpr)
{
	/* The kind's cheapest candidate at fpr; the first candidate on a tie
	 * and when none can reach fpr (its sizing then reports the error); the
	 * kind's first row when none is a candidate. */
	const amq_variant *best = NULL;
	double best_cost = INFINITY;
	for (size_t i = 0; i < amq_variant_count(); i++) {
		const amq_variant *v = amq_variant_at(i);
		if (v->kind != kind || v->default_cost == NULL)
			continue;
		double cost = v->default_cost(fpr);
		if (best == NULL || cost < best_cost) {
			best = v;
			best_cost = cost;
		}
	}
	if (best == NULL)
		best = amq_variant_first_of(kind);
	return best != NULL ? best->layout : AMQ_LAYOUT_CLASSIC; /* kind unknown */
}

/* True when name[0..len) is the NUL-terminated word. */
static bool is_word(const char *name, size_t len, const char *word)
{
	return len == strlen(word) && memcmp(name, word, len) == 0;
}

amq_status amq_parse_layout(amq_kind kind, const char *name, size_t len, amq_layout *out,
			    amq_error *err)
{
	for (size_t i = 0; i < amq_variant_count(); i++) {
		const amq_variant *v = amq_variant_at(i);
		if (v->kind == kind && is_word(name, len, v->layout_name)) {
			*out = v->layout;
			return AMQ_OK;
		}
	}
	const amq_variant *first = amq_variant_first_of(kind);
	if (first == NULL)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "", "unknown filter kind %d", (int)kind);
	int shown = (int)(len > 64 ? 64 : len);
	return amq_fail(err, AMQ_INVALID_ARGUMENT, first->layouts_hint, "unknown %s layout '%.*s'",
			first->kind_name, shown, name);
}

const char *amq_layouts_hint(amq_kind kind)
{
	const amq_variant *first = amq_variant_first_of(kind);
	return first != NULL ? first->layouts_hint : "";
}
