/*
 * extension.c - the amq SQLite extension: approximate-membership filters
 * (Bloom and cuckoo) as SQL functions over BLOB values in the portable format
 * of docs/FORMAT.md, so a filter built here is read by PostgreSQL and back.
 *
 *   sqlite> .load ./build/amq
 *   Python: conn.enable_load_extension(True); conn.load_extension("./build/amq")
 *
 * The functions below are the rows of core's function table,
 * core/sql/function_list.h (name, kind, operation, argument counts), from
 * which sqlite3_amq_init registers them and PostgreSQL defines its entry
 * points: a function is declared there, once, for both engines.
 *
 * Values hash by docs/HASHING.md: 3 and 3.0 are the same value; 'abc' and
 * X'616263' are not. NULL values are skipped by aggregates and leave the
 * filter unchanged in bloom_add/cuckoo_add/cuckoo_delete; otherwise a NULL
 * argument gives NULL. Every filter argument is checked (header, kind,
 * checksum).
 *
 * Bloom filters
 *   bloom_agg(value [, fpr [, capacity [, layout]]])  aggregate -> BLOB
 *       SELECT bloom_agg(customer_id) FROM vip;          -- fpr 0.01, sized at the end
 *       SELECT bloom_agg(id, 0.001, 1000000) FROM t;     -- fixed size, constant memory
 *       SELECT bloom_agg(id, 0.01, NULL, 'classic') FROM t; -- NULL capacity: sized at the end
 *   bloom_new(capacity, fpr [, layout [, expansion]]) -> BLOB, layout 'blocked' (default),
 *                                             'classic', 'counting' (4-bit counters: deletes,
 *                                             frequencies) or 'scalable' (a chain of blocked
 *                                             links that grows by expansion, default 2, and
 *                                             keeps the compound rate below fpr)
 *       SELECT bloom_new(100000, 0.01, 'classic');
 *   bloom_add(filter, value)               -> BLOB, a copy with value added
 *       UPDATE filters SET f = bloom_add(f, 42) WHERE name = 'vip';
 *   bloom_contains(filter, value)          -> 1 or 0 (1 may be a false positive)
 *       SELECT * FROM orders WHERE bloom_contains(:f, customer_id);
 *   bloom_union(a, b), bloom_intersect(a, b) -> BLOB (same size and hashes)
 *       SELECT bloom_union(a.f, b.f) FROM filters a, filters b WHERE ...;
 *   bloom_union_agg(filter)                aggregate -> BLOB, NULL when no filter
 *       SELECT bloom_union_agg(f) FROM daily_filters;
 *   bloom_count(filter)                    -> INTEGER, estimated distinct items
 *   bloom_fpr(filter)                      -> REAL, the rate an absent value sees now
 *   bloom_info(filter)                     -> TEXT, JSON
 *       SELECT bloom_count(f), bloom_fpr(f), bloom_info(f) FROM filters;
 *   bloom_delete(filter, value)            -> BLOB, counting only: a copy with value removed
 *                                             (unchanged if certainly absent); delete only
 *                                             what you added
 *   bloom_frequency(filter, value)         -> INTEGER, counting only: times value was added,
 *                                             never less than the truth (0: absent)
 *       UPDATE filters SET f = bloom_delete(f, 42) WHERE name = 'live';
 *
 * Cuckoo filters
 *   cuckoo_agg(value [, fpr [, capacity [, layout]]]) aggregate -> BLOB, each distinct value once;
 *                                          layout 'b2', 'b4', 'b8' or 'semisorted'
 *                                          (default: the fewest bits per item for the fpr)
 *       SELECT cuckoo_agg(session_id) FROM sessions;
 *   cuckoo_new(capacity [, fpr [, layout]]) -> BLOB that holds at least capacity items
 *       SELECT cuckoo_new(100000), cuckoo_new(100000, 0.001, 'semisorted');
 *   cuckoo_add(filter, value)              -> BLOB; an error when the filter is full
 *   cuckoo_delete(filter, value)           -> BLOB with one copy removed (if stored)
 *       UPDATE filters SET f = cuckoo_delete(f, 'expired') WHERE name = 'live';
 *   cuckoo_contains(filter, value)         -> 1 or 0
 *   cuckoo_count(filter, value)            -> INTEGER, copies stored
 *   cuckoo_info(filter)                    -> TEXT, JSON
 *       SELECT cuckoo_contains(f, 7), cuckoo_count(f, 7), cuckoo_info(f) FROM filters;
 *   cuckoo_add_unique(filter, value)       -> BLOB, the filter unchanged when it may hold
 *                                             value already (a false positive skips a new
 *                                             value), else cuckoo_add: one copy per value
 *
 * Bulk maintenance: aggregates that start from an existing filter
 *   bloom_add_agg(filter, value), cuckoo_add_agg(filter, value) aggregate -> BLOB
 *   bloom_delete_agg(filter, value) (counting), cuckoo_delete_agg(filter, value)
 *       UPDATE filters SET f = coalesce((SELECT bloom_add_agg(f, x) FROM staging), f)
 *       WHERE name = 'vip';
 *     The filter with every row's value added (deleted), the same bytes as a
 *     fold of bloom_add in row order, in O(size + rows). Every row must pass
 *     the same filter (an error otherwise); a NULL filter is an error, NULL
 *     values are skipped, no rows give NULL; a cuckoo filter that fills up is
 *     an error, so the statement changes nothing.
 *
 * Common
 *   amq_hash(value)                        -> INTEGER, the 64-bit value hash (seed 0)
 *       SELECT amq_hash(3) = amq_hash(3.0);              -- 1
 *   amq_version()                          -> TEXT
 *
 * bloom_contains, cuckoo_contains and cuckoo_count parse a filter given as a
 * bound parameter or a literal once per statement and never copy it. A filter
 * coming from a scalar subquery or a join column is copied by SQLite on every
 * row before any function runs; amq then only checks the copy, against the
 * filter it verified last or by its checksum (connection.h), but the copy
 * stays O(size) per row. Bind the filter instead (in the CLI:
 * .param set @f "(SELECT f FROM filters WHERE name = 'vip')").
 */
#include "connection.h"
#include "functions.h"

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
};

/* A pure function of its arguments with no side effects (the IMMUTABLE of
 * core's function table) may run in views and index expressions. */
static int flags_of(const amq_sql_function *fn)
{
	return SQLITE_UTF8 | (fn->immutable ? SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS : 0);
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
	struct amq_connection *conn = connection_new();
	if (conn == NULL)
		return SQLITE_NOMEM;
	int rc = SQLITE_OK;
	for (size_t i = 0; rc == SQLITE_OK && i < amq_sql_function_count; i++) {
		const amq_sql_function *fn = &amq_sql_functions[i];
		const struct callbacks *c = &CALLBACKS[fn->op];
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
