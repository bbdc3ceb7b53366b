/*
 * joinfilter/load.c - whether this session chose the automatic join filter.
 * The library loads in three ways: a preload setting
 * (shared_preload_libraries, session_preload_libraries or
 * local_preload_libraries), LOAD, or as a side effect of the first call of
 * any amq function (CREATE EXTENSION's checks of its C functions included).
 * Only the first two are a choice: a session that merely called
 * bloom_contains plans its later joins as PostgreSQL does, as auto_explain
 * and pg_stat_statements change nothing unless loaded on purpose. LOAD 'amq'
 * (a superuser's) or LOAD '$libdir/plugins/amq' (anyone's) later in the
 * session turns the join filter on from then.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/pquery.h"
#include "tcop/tcopprot.h"
#include "tcop/utility.h"
#include "utils/portal.h"

#include "joinfilter/settings.h"

bool amq_jf_chosen = false;

static ProcessUtility_hook_type prev_utility;

/* Whether the library is being loaded by choice: by shared_preload_libraries;
 * by session_ or local_preload_libraries, which run at backend start before
 * any statement (debug_query_string is still NULL); or by a LOAD statement
 * the client sent (the active portal's). A LOAD run inside a function is
 * seen only when it runs again (utility_hook). */
static bool loading_by_choice(void)
{
	return process_shared_preload_libraries_in_progress || debug_query_string == NULL ||
	       (ActivePortal != NULL && ActivePortal->commandTag == CMDTAG_LOAD);
}

/* Whether LOAD's file name is this library: its last path element, less
 * DLSUFFIX, is "amq". */
static bool names_amq(const char *filename)
{
	const char *base = strrchr(filename, '/');
	size_t len;

	base = base != NULL ? base + 1 : filename;
	len = strlen(base);
	if (len > strlen(DLSUFFIX) && strcmp(base + len - strlen(DLSUFFIX), DLSUFFIX) == 0)
		len -= strlen(DLSUFFIX);
	return len == 3 && strncmp(base, "amq", 3) == 0;
}

/* The ProcessUtility hook: runs the statement, then a LOAD of amq that
 * succeeded (the library was loaded before, by a function call) chooses the
 * join filter. */
static void utility_hook(PlannedStmt *pstmt, const char *query_string, bool read_only_tree,
			 ProcessUtilityContext context, ParamListInfo params,
			 QueryEnvironment *query_env, DestReceiver *dest, QueryCompletion *qc)
{
	Node *stmt = pstmt->utilityStmt;

	if (prev_utility)
		prev_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest,
			     qc);
	else
		standard_ProcessUtility(pstmt, query_string, read_only_tree, context, params,
					query_env, dest, qc);
	if (IsA(stmt, LoadStmt) && names_amq(((LoadStmt *)stmt)->filename))
		amq_jf_chosen = true;
}

/* See joinfilter/settings.h. */
void amq_jf_install_load_hook(void)
{
	amq_jf_chosen = loading_by_choice();
	prev_utility = ProcessUtility_hook;
	ProcessUtility_hook = utility_hook;
}
