/*
 * extension.c - the amq SQLite extension: approximate-membership filters
 * (Bloom and cuckoo) as SQL functions over BLOB values in the portable format
 * of docs/FORMAT.md, so a filter built here is read by PostgreSQL and back.
 * Load it as any extension:
 *
 *   sqlite> .load ./build/amq
 *   Python: conn.enable_load_extension(True); conn.load_extension("./build/amq")
 *
 *   SELECT bloom_agg(customer_id) FROM vip;                  -- a filter, fpr 0.01
 *   SELECT * FROM orders WHERE bloom_contains(:f, customer_id);
 *
 * The functions are declared once, for both engines, as the rows of core's
 * function table, core/sql/function_list.h (name, kind, operation, argument
 * counts), from which sqlite3_amq_init registers them; README.md's "SQL
 * reference" documents each one (arguments, results, NULLs, errors). Values
 * hash by docs/HASHING.md, and every filter argument is checked (header,
 * kind, checksum).
 *
 * The membership reads (the CONTAINS and FREQUENCY rows) parse a filter
 * given as a bound parameter or a literal once per statement and never copy
 * it (probe_arguments, arguments.h). A filter coming from a scalar subquery
 * or a join column is copied by SQLite on every row before any function
 * runs; amq then only checks the copy, against the filter it verified last
 * or by its checksum (connection.h), but the copy stays O(size) per row.
 * Bind the filter instead (in the CLI:
 * .param set @f "(SELECT f FROM filters WHERE name = 'vip')").
 */
#include "connection.h"
#include "functions.h"

#include <string.h>

#ifndef SQLITE_CORE
SQLITE_EXTENSION_INIT1
#endif

/* The C functions of each operation: xFunc for a scalar function, xStep and
 * xFinal for an aggregate (functions.h). An operation missing here would
 * have none, which sqlite3_create_function_v2 refuses: nothing registers. */
static const struct callbacks {
	amq_sqlite_func *func, *step;
	amq_sqlite_final *final;
} CALLBACKS[] = {
    [AMQ_SQL_NEW] = {new_func, NULL, NULL},
    [AMQ_SQL_ADD] = {add_func, NULL, NULL},
    [AMQ_SQL_ADD_UNIQUE] = {add_unique_func, NULL, NULL},
    [AMQ_SQL_DELETE] = {delete_func, NULL, NULL},
    [AMQ_SQL_CONTAINS] = {contains_func, NULL, NULL},
    [AMQ_SQL_FREQUENCY] = {frequency_func, NULL, NULL},
    [AMQ_SQL_UNION] = {combine_func, NULL, NULL},
    [AMQ_SQL_INTERSECT] = {combine_func, NULL, NULL},
    [AMQ_SQL_ESTIMATE] = {estimate_func, NULL, NULL},
    [AMQ_SQL_FPR] = {fpr_func, NULL, NULL},
    [AMQ_SQL_INFO] = {info_func, NULL, NULL},
    [AMQ_SQL_AGG] = {NULL, agg_step, agg_final},
    [AMQ_SQL_UNION_AGG] = {NULL, union_agg_step, union_agg_final},
    [AMQ_SQL_ADD_AGG] = {NULL, bulk_step, bulk_final},
    [AMQ_SQL_DELETE_AGG] = {NULL, bulk_step, bulk_final},
    [AMQ_SQL_HASH] = {amq_hash_func, NULL, NULL},
    [AMQ_SQL_VERSION] = {amq_version_func, NULL, NULL},
    [AMQ_SQL_SETTING] = {NULL, NULL, NULL}, /* by name: SETTINGS */
};

/* The C function of each setting (AMQ_SQL_SETTING rows), by SQL name. */
static const struct setting {
	const char *name;
	struct callbacks c;
} SETTINGS[] = {
    {"amq_work_mem", {work_mem_func, NULL, NULL}},
};

/* fn's C functions: its operation's, or a setting's by name (none for a
 * setting missing from SETTINGS: registering it then fails). */
static const struct callbacks *callbacks_of(const amq_sql_function *fn)
{
	if (fn->op == AMQ_SQL_SETTING)
		for (size_t i = 0; i < sizeof(SETTINGS) / sizeof(SETTINGS[0]); i++)
			if (strcmp(SETTINGS[i].name, fn->name) == 0)
				return &SETTINGS[i].c;
	return &CALLBACKS[fn->op];
}

/* A pure function of its arguments with no side effects (the IMMUTABLE of
 * core's function table) may run in views and index expressions; anything
 * else (a setting) only in top-level SQL, never from a view or trigger an
 * untrusted schema brings. */
static int flags_of(const amq_sql_function *fn)
{
	return SQLITE_UTF8 |
	       (fn->immutable ? SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS : SQLITE_DIRECTONLY);
}

/* No header declares it: SQLite finds it by name (the tests declare it too). */
int sqlite3_amq_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

/*
 * The entry point SQLite derives from the file name build/amq.so. Registers
 * every function of core's table (sql/function_list.h) once per argument
 * count it takes, with the C functions of its operation and user data that
 * holds its row and shares the connection's state; on failure names the
 * function that could not be registered. The only symbol the library
 * exports (everything else is built hidden).
 */
__attribute__((visibility("default"))) int sqlite3_amq_init(sqlite3 *db, char **pzErrMsg,
							    const sqlite3_api_routines *pApi)
{
#ifndef SQLITE_CORE
	SQLITE_EXTENSION_INIT2(pApi);
#else
	(void)pApi;
#endif
	struct amq_connection *conn = connection_new(db);
	if (conn == NULL)
		return SQLITE_NOMEM;
	int rc = SQLITE_OK;
	for (size_t i = 0; rc == SQLITE_OK && i < amq_sql_function_count; i++) {
		const amq_sql_function *fn = &amq_sql_functions[i];
		const struct callbacks *c = callbacks_of(fn);
		for (int nargs = fn->min_args; rc == SQLITE_OK && nargs <= fn->max_args; nargs++) {
			struct function_data *fd = function_data_new(conn, fn);
			if (fd == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			/* On failure SQLite itself calls function_data_free(fd). */
			rc = sqlite3_create_function_v2(db, fn->name, nargs, flags_of(fn), fd,
							c->func, c->step, c->final,
							function_data_free);
			if (rc != SQLITE_OK && pzErrMsg != NULL)
				*pzErrMsg = sqlite3_mprintf("amq: cannot register %s/%d: %s",
							    fn->name, nargs, sqlite3_errmsg(db));
		}
	}
	connection_release(conn);
	return rc;
}
