/*
 * error.c - filling an amq_error, its SQLSTATE, and the malloc-based
 * allocator: what every other core file and both adapters lean on.
 */
#include "amq.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

amq_status amq_fail(amq_error *err, amq_status status, const char *hint, const char *fmt, ...)
{
	if (err == NULL)
		return status;
	err->status = status;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	snprintf(err->hint, sizeof(err->hint), "%s", hint ? hint : "");
	return status;
}

const char *amq_status_sqlstate(amq_status status)
{
	switch (status) {
	case AMQ_INVALID_FILTER:
		return "22P02"; /* invalid_text_representation */
	case AMQ_INVALID_ARGUMENT:
	case AMQ_WRONG_KIND:
	case AMQ_INCOMPATIBLE:
		return "22023"; /* invalid_parameter_value */
	case AMQ_FILTER_FULL:
	case AMQ_TOO_LARGE:
		return "54000"; /* program_limit_exceeded */
	case AMQ_NO_MEMORY:
		return "53200"; /* out_of_memory */
	case AMQ_INTERRUPTED:
		return "57014"; /* query_canceled */
	case AMQ_SPILL_FAILED:
		return "58030"; /* io_error */
	case AMQ_OK:
		break;
	}
	return "XX000"; /* internal_error */
}

/* aligned_alloc/free behind the amq_allocator hook; ctx is unused. Cache-line
 * alignment puts each block of a blocked Bloom filter (the header is 64
 * bytes) in exactly one line. */
static void *malloc_alloc(void *ctx, size_t size)
{
	(void)ctx;
	if (size > SIZE_MAX - 63)
		return NULL;
	return aligned_alloc(64, (size + 63) & ~(size_t)63);
}

static void malloc_free(void *ctx, void *ptr)
{
	(void)ctx;
	free(ptr);
}

const amq_allocator amq_malloc_allocator = {.alloc = malloc_alloc, .free = malloc_free};
