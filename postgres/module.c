/*
 * module.c - the library's magic block and _PG_init, in one file. _PG_init
 * runs whenever the library is loaded: LOAD 'amq', session_preload_libraries,
 * shared_preload_libraries, or the first call of an amq function (a
 * parallel query's leader loads it as it starts the plan, before any worker
 * runs). The automatic join filter sets up its settings, custom scans and
 * hooks (joinfilter/settings.c); the aggregates the removal of the files
 * their workers hand over (filter/handed_files.c).
 */
#include "postgres.h"

#include "fmgr.h"

#include "filter/filter.h"
#include "joinfilter/settings.h"

PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);

/* Sets up the automatic join filter and the removal of handed files. */
void _PG_init(void)
{
	amq_jf_init();
	amq_pg_handed_files_register();
}
