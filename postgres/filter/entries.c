/*
 * filter/entries.c - the V1 entry points that amq--*.sql names, made from core's
 * function table (core/sql/function_list.h): for each row, the entries of its
 * operation below, each a thin function that hands the generic
 * implementation (filter.h) the row's kind, SQL name and operation; for each
 * filter type, its input, output, binary and cast functions. The symbols are
 * those of the install scripts, which never change: amq_pg_<name> for a
 * scalar function, amq_pg_<name>_<role> for an aggregate's support
 * functions, amq_pg_<type>_<role> for a type's and an operator's.
 */
#include "postgres.h"

#include "filter/filter.h"

/*
 * Defines the V1 entry point `symbol` as `generic(fcinfo, &call)` with the
 * amq_pg_call initialised by the remaining arguments, as hstore generates
 * its many thin wrappers with one macro. The kind is named in the function
 * table and numbered by the variant registry: the first call looks it up
 * (a backend runs one call at a time, so the static needs no lock).
 */
#define AMQ_PG_ENTRY(symbol, generic, ...)                                                         \
	AMQ_PG_FUNCTION(symbol);                                                                   \
	Datum symbol(PG_FUNCTION_ARGS)                                                             \
	{                                                                                          \
		static amq_pg_call call = {__VA_ARGS__};                                           \
		static bool resolved = false;                                                      \
		if (!resolved) {                                                                   \
			call.kind = amq_kind_named(call.kind_name);                                \
			resolved = true;                                                           \
		}                                                                                  \
		return generic(fcinfo, &call);                                                     \
	}

/* One entry of the row (name, kind, op) whose messages start with name. */
#define ROW_ENTRY(symbol, generic, name, kind, op)                                                 \
	AMQ_PG_ENTRY(symbol, generic, 0, #name, op, #kind)

/* The entries of each operation, given (name, kind, op, returns); op is the
 * amq_sql_op already. */
#define ENTRIES_NEW(name, kind, op, returns) ROW_ENTRY(amq_pg_##name, amq_pg_op_new, name, kind, op)
#define ENTRIES_ADD(name, kind, op, returns) ROW_ENTRY(amq_pg_##name, amq_pg_op_add, name, kind, op)
#define ENTRIES_ADD_UNIQUE ENTRIES_ADD
#define ENTRIES_DELETE(name, kind, op, returns)                                                    \
	ROW_ENTRY(amq_pg_##name, amq_pg_op_delete, name, kind, op)
/* The function and the <@ operator's, which speaks as the function. */
#define ENTRIES_CONTAINS(name, kind, op, returns)                                                  \
	ROW_ENTRY(amq_pg_##name, amq_pg_op_contains, name, kind, op)                               \
	ROW_ENTRY(amq_pg_##kind##_contained_in, amq_pg_op_contained_in, name, kind, op)
/* cuckoo_count returns integer, bloom_frequency bigint. */
#define ENTRIES_FREQUENCY(name, kind, op, returns)                                                 \
	ROW_ENTRY(amq_pg_##name, amq_pg_op_frequency_##returns, name, kind, op)
#define ENTRIES_UNION(name, kind, op, returns)                                                     \
	ROW_ENTRY(amq_pg_##name, amq_pg_op_combine, name, kind, op)
#define ENTRIES_INTERSECT ENTRIES_UNION
#define ENTRIES_ESTIMATE(name, kind, op, returns)                                                  \
	ROW_ENTRY(amq_pg_##name, amq_pg_op_estimate, name, kind, op)
#define ENTRIES_FPR(name, kind, op, returns) ROW_ENTRY(amq_pg_##name, amq_pg_op_fpr, name, kind, op)
#define ENTRIES_INFO(name, kind, op, returns)                                                      \
	ROW_ENTRY(amq_pg_##name, amq_pg_op_info, name, kind, op)
/* The combine, serial and deserial functions are amq_pg_agg_*, one set for
 * every kind (filter/aggregates.c). */
#define ENTRIES_AGG(name, kind, op, returns)                                                       \
	ROW_ENTRY(amq_pg_##name##_trans, amq_pg_op_agg_trans, name, kind, op)                      \
	ROW_ENTRY(amq_pg_##name##_final, amq_pg_op_agg_final, name, kind, op)
#define ENTRIES_UNION_AGG(name, kind, op, returns)                                                 \
	ROW_ENTRY(amq_pg_##name##_trans, amq_pg_op_union_agg_trans, name, kind, op)                \
	ROW_ENTRY(amq_pg_##name##_combine, amq_pg_op_union_agg_combine, name, kind, op)            \
	ROW_ENTRY(amq_pg_##name##_serialize, amq_pg_op_union_agg_serialize, name, kind, op)        \
	ROW_ENTRY(amq_pg_##name##_deserialize, amq_pg_op_union_agg_deserialize, name, kind, op)    \
	ROW_ENTRY(amq_pg_##name##_final, amq_pg_op_union_agg_final, name, kind, op)
/* A kind's add and delete aggregates share one final function, made with the
 * add aggregate's row. */
#define ENTRIES_ADD_AGG(name, kind, op, returns)                                                   \
	ROW_ENTRY(amq_pg_##name##_trans, amq_pg_op_bulk_trans, name, kind, op)                     \
	ROW_ENTRY(amq_pg_##kind##_bulk_agg_final, amq_pg_op_bulk_final, name, kind, op)
#define ENTRIES_DELETE_AGG(name, kind, op, returns)                                                \
	ROW_ENTRY(amq_pg_##name##_trans, amq_pg_op_bulk_trans, name, kind, op)
/* amq_hash and amq_version: their symbols drop the name's amq_. */
#define ENTRIES_HASH(name, kind, op, returns) ROW_ENTRY(amq_pg_hash, amq_pg_op_hash, name, kind, op)
#define ENTRIES_VERSION(name, kind, op, returns)                                                   \
	ROW_ENTRY(amq_pg_version, amq_pg_op_version, name, kind, op)

/* A filter type's own functions, whose messages start with its name. */
#define TYPE_ENTRY(symbol, generic, type) AMQ_PG_ENTRY(symbol, generic, 0, #type, 0, #type)

#define AMQ_SQL_TYPE(type)                                                                         \
	TYPE_ENTRY(amq_pg_##type##_in, amq_pg_op_in, type)                                         \
	TYPE_ENTRY(amq_pg_##type##_out, amq_pg_op_out, type)                                       \
	TYPE_ENTRY(amq_pg_##type##_recv, amq_pg_op_recv, type)                                     \
	TYPE_ENTRY(amq_pg_##type##_send, amq_pg_op_send, type)                                     \
	TYPE_ENTRY(amq_pg_##type##_from_bytea, amq_pg_op_from_bytea, type)
/* (op is pasted here, before an argument could expand: INFO is also
 * elog.h's macro.) */
#define AMQ_SQL_FUNCTION(name, kind, op, min_args, max_args, arguments, returns, volatility)       \
	ENTRIES_##op(name, kind, AMQ_SQL_##op, returns)
#define AMQ_SQL_AGGREGATE(name, kind, op, min_args, max_args, arguments, returns, volatility)      \
	ENTRIES_##op(name, kind, AMQ_SQL_##op, returns)
#include "sql/function_list.h"
