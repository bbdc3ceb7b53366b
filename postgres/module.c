/*
 * module.c - the library's magic block and _PG_init, in one file. _PG_init
 * runs whenever the library is loaded: LOAD 'amq', session_preload_libraries,
 * shared_preload_libraries, or the first call of an amq function. Only the
 * automatic join filter has anything to set up (joinfilter/settings.c); the
 * filter types and functions need nothing before their first call.
 */
#include "postgres.h"

#include "fmgr.h"

#include "joinfilter/joinfilter.h"

PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);

/* Sets up the automatic join filter: settings, custom scans, hooks. */
void _PG_init(void)
{
	amq_jf_init();
}
