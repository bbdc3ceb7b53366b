/*
 * sql/function_list.h - every SQL function of amq, once. An X-macro list with
 * no include guard (as PostgreSQL's kwlist.h and rmgrlist.h): a user defines
 * the macros it needs, includes this file, and gets one expansion per row.
 * It is a header so that every build's header dependencies (make, PGXS)
 * cover it. Users:
 *
 *   sql/functions.c           amq_sql_functions[], the table at run time:
 *                             sqlite/extension.c registers from it and
 *                             tests/sqlite/fuzz.c derives its damaged-filter
 *                             probes from it
 *   postgres/filter/entries.c the V1 entry points that amq--*.sql names (no
 *                             AMQ_SQL_SETTING: it leaves that one empty)
 *   tests/sqlite/test_sqlite.py, tests/interop/kinds.py
 *                             read this file: the registered functions, and
 *                             every kind built and probed in both engines
 *
 * AMQ_SQL_FUNCTION(name, kind, op, min_args, max_args, arguments, returns, volatility)
 * AMQ_SQL_AGGREGATE(name, kind, op, min_args, max_args, arguments, returns, volatility)
 *   name        the SQL name
 *   kind        the filter type it works on: bloom, cuckoo or fuse; none for the
 *               functions of no kind: a kind_name of the variant registry
 *               (amq_sql_function_kind), so a new kind needs no other list
 *   op          the operation, amq_sql_op without its AMQ_SQL_ prefix: one C
 *               function per engine serves every row with that op
 *   min_args, max_args
 *               how many arguments it takes; optional ones are trailing
 *   arguments   the arguments by type: filter (BLOB / bloom, cuckoo), value
 *               (any: hashed by docs/HASHING.md), fpr (REAL / float8),
 *               capacity (INTEGER / bigint), layout (TEXT / text), expansion
 *               (INTEGER / integer); those past min_args in brackets
 *   returns     filter, boolean, integer, bigint, real, json or text (SQLite
 *               gives INTEGER for boolean and bigint, TEXT for json)
 *   volatility  IMMUTABLE: a pure function of its arguments (SQLite:
 *               SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS)
 *
 * AMQ_SQL_TYPE(kind): a filter type. PostgreSQL declares it with input,
 * output, binary and bytea-cast functions; SQLite stores filters as BLOBs.
 *
 * AMQ_SQL_SETTING(name, min_args, max_args, arguments, returns): a setting
 * PostgreSQL already has (work_mem): SQLite registers it as a function,
 * PostgreSQL ignores the row. Called with no argument it returns the
 * connection's value, with one it sets and returns it (arguments and returns
 * as above; bytes is an INTEGER). Not a pure function: SQLite registers it
 * SQLITE_DIRECTONLY, so only top-level SQL may call it, never a view or a
 * trigger of the schema.
 *
 * Rows are in the order SQLite registers them.
 */
#ifndef AMQ_SQL_FUNCTION
#define AMQ_SQL_FUNCTION(name, kind, op, min_args, max_args, arguments, returns, volatility)
#endif
#ifndef AMQ_SQL_AGGREGATE
#define AMQ_SQL_AGGREGATE(name, kind, op, min_args, max_args, arguments, returns, volatility)
#endif
#ifndef AMQ_SQL_TYPE
#define AMQ_SQL_TYPE(kind)
#endif
#ifndef AMQ_SQL_SETTING
#define AMQ_SQL_SETTING(name, min_args, max_args, arguments, returns)
#endif

AMQ_SQL_TYPE(bloom)
AMQ_SQL_TYPE(cuckoo)
AMQ_SQL_TYPE(fuse)

/* clang-format off */
AMQ_SQL_AGGREGATE(bloom_agg, bloom, AGG, 1, 4, "value [, fpr [, capacity [, layout]]]", filter, IMMUTABLE)
AMQ_SQL_FUNCTION(bloom_new, bloom, NEW, 2, 4, "capacity, fpr [, layout [, expansion]]", filter, IMMUTABLE)
AMQ_SQL_FUNCTION(bloom_add, bloom, ADD, 2, 2, "filter, value", filter, IMMUTABLE)
AMQ_SQL_FUNCTION(bloom_contains, bloom, CONTAINS, 2, 2, "filter, value", boolean, IMMUTABLE)
AMQ_SQL_FUNCTION(bloom_union, bloom, UNION, 2, 2, "filter, filter", filter, IMMUTABLE)
AMQ_SQL_FUNCTION(bloom_intersect, bloom, INTERSECT, 2, 2, "filter, filter", filter, IMMUTABLE)
AMQ_SQL_AGGREGATE(bloom_union_agg, bloom, UNION_AGG, 1, 1, "filter", filter, IMMUTABLE)
AMQ_SQL_FUNCTION(bloom_count, bloom, ESTIMATE, 1, 1, "filter", bigint, IMMUTABLE)
AMQ_SQL_FUNCTION(bloom_fpr, bloom, FPR, 1, 1, "filter", real, IMMUTABLE)
AMQ_SQL_FUNCTION(bloom_info, bloom, INFO, 1, 1, "filter", json, IMMUTABLE)
AMQ_SQL_FUNCTION(bloom_delete, bloom, DELETE, 2, 2, "filter, value", filter, IMMUTABLE)
AMQ_SQL_FUNCTION(bloom_frequency, bloom, FREQUENCY, 2, 2, "filter, value", bigint, IMMUTABLE)
AMQ_SQL_AGGREGATE(cuckoo_agg, cuckoo, AGG, 1, 4, "value [, fpr [, capacity [, layout]]]", filter, IMMUTABLE)
AMQ_SQL_FUNCTION(cuckoo_new, cuckoo, NEW, 1, 3, "capacity [, fpr [, layout]]", filter, IMMUTABLE)
AMQ_SQL_FUNCTION(cuckoo_add, cuckoo, ADD, 2, 2, "filter, value", filter, IMMUTABLE)
AMQ_SQL_FUNCTION(cuckoo_delete, cuckoo, DELETE, 2, 2, "filter, value", filter, IMMUTABLE)
AMQ_SQL_FUNCTION(cuckoo_contains, cuckoo, CONTAINS, 2, 2, "filter, value", boolean, IMMUTABLE)
AMQ_SQL_FUNCTION(cuckoo_count, cuckoo, FREQUENCY, 2, 2, "filter, value", integer, IMMUTABLE)
AMQ_SQL_FUNCTION(cuckoo_info, cuckoo, INFO, 1, 1, "filter", json, IMMUTABLE)
AMQ_SQL_FUNCTION(cuckoo_add_unique, cuckoo, ADD_UNIQUE, 2, 2, "filter, value", filter, IMMUTABLE)
AMQ_SQL_AGGREGATE(bloom_add_agg, bloom, ADD_AGG, 2, 2, "filter, value", filter, IMMUTABLE)
AMQ_SQL_AGGREGATE(bloom_delete_agg, bloom, DELETE_AGG, 2, 2, "filter, value", filter, IMMUTABLE)
AMQ_SQL_AGGREGATE(cuckoo_add_agg, cuckoo, ADD_AGG, 2, 2, "filter, value", filter, IMMUTABLE)
AMQ_SQL_AGGREGATE(cuckoo_delete_agg, cuckoo, DELETE_AGG, 2, 2, "filter, value", filter, IMMUTABLE)
AMQ_SQL_AGGREGATE(fuse_agg, fuse, AGG, 1, 2, "value [, fpr]", filter, IMMUTABLE)
AMQ_SQL_FUNCTION(fuse_contains, fuse, CONTAINS, 2, 2, "filter, value", boolean, IMMUTABLE)
AMQ_SQL_FUNCTION(fuse_info, fuse, INFO, 1, 1, "filter", json, IMMUTABLE)
AMQ_SQL_FUNCTION(amq_hash, none, HASH, 1, 1, "value", bigint, IMMUTABLE)
AMQ_SQL_FUNCTION(amq_version, none, VERSION, 0, 0, "", text, IMMUTABLE)
AMQ_SQL_SETTING(amq_work_mem, 0, 1, "[bytes]", bigint)
/* clang-format on */

#undef AMQ_SQL_FUNCTION
#undef AMQ_SQL_AGGREGATE
#undef AMQ_SQL_TYPE
#undef AMQ_SQL_SETTING
