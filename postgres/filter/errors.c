/*
 * filter/errors.c - the two places where the core meets PostgreSQL's runtime:
 * core errors become ereport(ERROR) with a SQLSTATE per status, and core
 * allocations go to palloc in a memory context chosen by the caller, so
 * everything is released with that context even when an error aborts a call.
 */
#include "postgres.h"

#include <ctype.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "filter/filter.h"

/* The SQLSTATE of a core status (core's one map, amq_status_sqlstate). */
static int status_sqlstate(amq_status status)
{
	const char *code = amq_status_sqlstate(status);

	return MAKE_SQLSTATE(code[0], code[1], code[2], code[3], code[4]);
}

void amq_pg_raise(const amq_error *err)
{
	amq_pg_raise_as(err, status_sqlstate(err->status));
}

void amq_pg_raise_as(const amq_error *err, int sqlstate)
{
	char hint[sizeof(err->hint) + 1];
	size_t len = strnlen(err->hint, sizeof(err->hint) - 1);

	/* The interrupt itself says why (statement timeout, cancel request). */
	if (err->status == AMQ_INTERRUPTED)
		CHECK_FOR_INTERRUPTS();

	/* PostgreSQL style: a hint is a sentence, the core's is a fragment. */
	memcpy(hint, err->hint, len);
	if (len > 0) {
		hint[0] = (char)toupper((unsigned char)hint[0]);
		hint[len++] = '.';
	}
	hint[len] = '\0';
	if (len > 0)
		ereport(ERROR, errcode(sqlstate), errmsg("%s", err->message), errhint("%s", hint));
	ereport(ERROR, errcode(sqlstate), errmsg("%s", err->message));
}

/* palloc in the context passed as ctx; NULL rather than an error on OOM. */
/* size bytes in ctx and VARHDRSZ spare ones after them, so that a filter
 * built in them becomes its varlena in place (amq_pg_filter_into_varlena). */
static void *context_alloc(void *ctx, size_t size)
{
	if (size > MaxAllocHugeSize - VARHDRSZ)
		return NULL;
	return MemoryContextAllocExtended((MemoryContext)ctx, size + VARHDRSZ,
					  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void context_free(void *ctx, void *ptr)
{
	(void)ctx;
	if (ptr != NULL)
		pfree(ptr);
}

/* The backend's interrupt check: a statement timeout or a cancel request
 * raises here, in the middle of core's long loops, whose memory is all
 * palloc'd in the caller's context and goes with it. */
static bool context_interrupted(void *ctx)
{
	(void)ctx;
	CHECK_FOR_INTERRUPTS();
	return false;
}

amq_allocator amq_pg_allocator(MemoryContext ctx)
{
	amq_allocator a = {.alloc = context_alloc,
			   .free = context_free,
			   .ctx = ctx,
			   .interrupted = context_interrupted};
	return a;
}
