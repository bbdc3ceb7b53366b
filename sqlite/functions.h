/*
 * functions.h - the C implementations behind every SQL function of the
 * extension, for extension.c, which registers each row of core's function
 * table (sql/function_list.h) with the ones of its operation. Each follows
 * SQLite's xFunc / xStep / xFinal signatures; one serves every kind, and
 * operations alike but for one step (union and intersect, bulk add and
 * delete) share one that reads fn_op.
 */
#ifndef AMQ_SQLITE_FUNCTIONS_H
#define AMQ_SQLITE_FUNCTIONS_H

#include "arguments.h"

/* xFunc of a scalar function. */
typedef void amq_sqlite_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* xFinal of an aggregate. */
typedef void amq_sqlite_final(sqlite3_context *ctx);

/* filter_functions.c: one function per operation, for every kind */
amq_sqlite_func new_func, add_func, add_unique_func, delete_func, contains_func, frequency_func,
    combine_func, estimate_func, fpr_func, info_func;

/* aggregates.c: bloom_agg and cuckoo_agg (agg), bloom_union_agg (union_agg) */
amq_sqlite_func agg_step, union_agg_step;
amq_sqlite_final agg_final, union_agg_final;

/* How far an aggregate that gives up at its first error has come: the first
 * member of its state (aggregates.c has what its steps share). */
struct step_progress {
	bool started; /* the first row set the state up */
	bool failed;  /* a step reported an error; the statement is aborting */
};

/* For an xStep: the aggregate's state of size bytes (zeroed on the first row)
 * that starts with a struct step_progress, or NULL when the step has nothing
 * to do: out of memory (the error set) or an earlier row failed. */
void *step_state(sqlite3_context *ctx, size_t size);

/* The hash of a step's value v with seed, and its family (hash_value);
 * false when there is none to feed: v is NULL, or hashing failed (p marked
 * failed, the error set). */
bool step_value(sqlite3_context *ctx, struct step_progress *p, sqlite3_value *v, uint64_t seed,
		uint64_t *hash, amq_family *family);

/* Ends a step whose core call returned st: on failure marks p failed and
 * reports err. */
void step_status(sqlite3_context *ctx, struct step_progress *p, amq_status st,
		 const amq_error *err);

/* bulk_aggregates.c: the add and delete aggregates */
amq_sqlite_func bulk_step;
amq_sqlite_final bulk_final;

/* common_functions.c: amq_hash, amq_version and the setting amq_work_mem */
amq_sqlite_func amq_hash_func, amq_version_func, work_mem_func;

#endif
