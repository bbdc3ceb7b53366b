/*
 * params.c - checks of the user-supplied sizing arguments. Both adapters call
 * these so that a bad fpr or capacity reads the same in SQLite and PostgreSQL.
 */
#include "amq.h"

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
	switch (kind) {
	case AMQ_KIND_BLOOM:
		return AMQ_LAYOUT_BLOCKED;
	case AMQ_KIND_CUCKOO:
		return amq_cuckoo_default_layout(fpr);
	}
	return AMQ_LAYOUT_CLASSIC; /* not reached: kind is one of the above */
}

/* True when name[0..len) is the NUL-terminated word. */
static bool is_word(const char *name, size_t len, const char *word)
{
	return len == strlen(word) && memcmp(name, word, len) == 0;
}

amq_status amq_parse_layout(amq_kind kind, const char *name, size_t len, amq_layout *out,
			    amq_error *err)
{
	int shown = (int)(len > 64 ? 64 : len);
	switch (kind) {
	case AMQ_KIND_BLOOM:
		if (is_word(name, len, "blocked")) {
			*out = AMQ_LAYOUT_BLOCKED;
			return AMQ_OK;
		}
		if (is_word(name, len, "classic")) {
			*out = AMQ_LAYOUT_CLASSIC;
			return AMQ_OK;
		}
		if (is_word(name, len, "counting")) {
			*out = AMQ_LAYOUT_COUNTING;
			return AMQ_OK;
		}
		if (is_word(name, len, "scalable")) {
			*out = AMQ_LAYOUT_SCALABLE;
			return AMQ_OK;
		}
		return amq_fail(err, AMQ_INVALID_ARGUMENT,
				"use 'blocked' (the default), 'classic', 'counting' or 'scalable'",
				"unknown bloom layout '%.*s'", shown, name);
	case AMQ_KIND_CUCKOO:
		if (is_word(name, len, "b2")) {
			*out = AMQ_LAYOUT_CUCKOO_B2;
			return AMQ_OK;
		}
		if (is_word(name, len, "b4")) {
			*out = AMQ_LAYOUT_CLASSIC;
			return AMQ_OK;
		}
		if (is_word(name, len, "b8")) {
			*out = AMQ_LAYOUT_CUCKOO_B8;
			return AMQ_OK;
		}
		if (is_word(name, len, "semisorted")) {
			*out = AMQ_LAYOUT_SEMISORTED;
			return AMQ_OK;
		}
		return amq_fail(
		    err, AMQ_INVALID_ARGUMENT,
		    "use 'b2', 'b4' or 'b8' (fingerprints per bucket), or 'semisorted' (b4 "
		    "with one bit less per item)",
		    "unknown cuckoo layout '%.*s'", shown, name);
	}
	return amq_fail(err, AMQ_INVALID_ARGUMENT, "", "unknown filter kind %d", (int)kind);
}
