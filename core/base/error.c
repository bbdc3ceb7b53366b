/*
 * error.c - filling an amq_error, and the malloc-based allocator. These are
 * the only two things every other core file leans on.
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
