/*
 * sql/functions.h - the SQL functions of amq as both adapters see them: the
 * operations (amq_sql_op) one C function per engine implements, and
 * amq_sql_functions[], the list of sql/function_list.h as a table at run time
 * (name, kind, operation, argument counts). Engine-free: neither SQLite nor
 * PostgreSQL is included here.
 */
#ifndef AMQ_SQL_FUNCTIONS_H
#define AMQ_SQL_FUNCTIONS_H

#include "amq.h"

/* What a SQL function does; every row of sql/function_list.h names one. */
typedef enum amq_sql_op {
	AMQ_SQL_NEW,	    /* an empty filter: capacity, fpr, layout, expansion */
	AMQ_SQL_ADD,	    /* a copy with one value added */
	AMQ_SQL_ADD_UNIQUE, /* the same unless the filter may hold the value already */
	AMQ_SQL_DELETE,	    /* a copy with one copy of a value removed */
	AMQ_SQL_CONTAINS,   /* may the filter hold the value */
	AMQ_SQL_FREQUENCY,  /* how many times the value was added, never fewer */
	AMQ_SQL_UNION,	    /* a copy of one filter merged with another */
	AMQ_SQL_INTERSECT,  /* a copy of one filter intersected with another */
	AMQ_SQL_ESTIMATE,   /* distinct items the filter holds, estimated */
	AMQ_SQL_FPR,	    /* the false-positive rate an absent value sees now */
	AMQ_SQL_INFO,	    /* the filter's description as JSON */
	AMQ_SQL_AGG,	    /* aggregate: a filter of the rows' values (an amq_builder) */
	AMQ_SQL_UNION_AGG,  /* aggregate: the union of the rows' filters */
	AMQ_SQL_ADD_AGG,    /* aggregate: one filter with every row's value added */
	AMQ_SQL_DELETE_AGG, /* aggregate: one filter with every row's value deleted */
	AMQ_SQL_HASH,	    /* the value hash every filter is built from */
	AMQ_SQL_VERSION,    /* the version of amq */
	AMQ_SQL_SETTING	    /* a setting's value, set when given (each its own C function) */
} amq_sql_op;

/* The volatility column: true for a pure function of its arguments; a
 * setting (AMQ_SQL_SETTING rows) never is. */
#define AMQ_SQL_IS_IMMUTABLE true
#define AMQ_SQL_IS_SETTING false

/* One row of sql/function_list.h. */
typedef struct amq_sql_function {
	const char *name;
	/* The kind column: a kind_name of the variant registry, or "none" for
	 * amq_hash, amq_version and the settings, which read no filter. */
	const char *kind;
	amq_sql_op op;
	bool aggregate;
	bool immutable; /* a pure function of its arguments */
	int min_args, max_args;
	const char *arguments; /* by type, optional ones bracketed: "filter, value" */
	const char *returns;   /* filter, boolean, integer, bigint, real, json, text */
} amq_sql_function;

/* Every SQL function, in the order of sql/function_list.h. */
extern const amq_sql_function amq_sql_functions[];
extern const size_t amq_sql_function_count;

/* The kind fn works on, found by name in the variant registry (a loop: an
 * adapter resolves it once per registration or entry point); 0 for a
 * function of no kind. */
amq_kind amq_sql_function_kind(const amq_sql_function *fn);

/* The row named name, or NULL. */
const amq_sql_function *amq_sql_function_named(const char *name);

/* The name of the SQL function of kind that does op, else of the one that
 * does fallback (bloom has no add_unique: its words are bloom_add's), else
 * the kind's name: what an in-process API's messages name, as SQL's do. */
const char *amq_sql_function_doing(amq_kind kind, amq_sql_op op, amq_sql_op fallback);

/* The bulk operation of a bulk aggregate (ADD_AGG or DELETE_AGG). */
amq_bulk_op amq_sql_bulk_op(amq_sql_op op);

/* Merges src into dst as op says: an intersection for INTERSECT, else a
 * union (UNION, UNION_AGG). */
amq_status amq_sql_merge(amq_sql_op op, amq_filter *dst, const amq_filter *src, amq_error *err);

#endif
