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

amq_status amq_parse_layout(const char *name, size_t len, amq_layout *out, amq_error *err)
{
	if (len == 7 && memcmp(name, "classic", 7) == 0) {
		*out = AMQ_LAYOUT_CLASSIC;
		return AMQ_OK;
	}
	if (len == 7 && memcmp(name, "blocked", 7) == 0) {
		*out = AMQ_LAYOUT_BLOCKED;
		return AMQ_OK;
	}
	return amq_fail(err, AMQ_INVALID_ARGUMENT, "use 'classic' or 'blocked'",
			"unknown bloom layout '%.*s'", (int)(len > 64 ? 64 : len), name);
}
