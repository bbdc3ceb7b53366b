/*
 * sql/functions.c - amq_sql_functions[], the rows of sql/function_list.h as a
 * table the adapters and tests iterate at run time, the SQL name of what a
 * kind does (for in-process APIs' messages), and the two choices both
 * adapters make from an operation (which bulk operation, which merge).
 */
#include "sql/functions.h"

#include <string.h>

const amq_sql_function amq_sql_functions[] = {
#define AMQ_SQL_ROW(name, kind, op, aggregate, min_args, max_args, arguments, returns, volatility) \
	{#name,	   #kind,    AMQ_SQL_##op, aggregate, AMQ_SQL_IS_##volatility,                     \
	 min_args, max_args, arguments,	   #returns},
#define AMQ_SQL_FUNCTION(name, kind, op, min_args, max_args, arguments, returns, volatility)       \
	AMQ_SQL_ROW(name, kind, op, false, min_args, max_args, arguments, returns, volatility)
#define AMQ_SQL_AGGREGATE(name, kind, op, min_args, max_args, arguments, returns, volatility)      \
	AMQ_SQL_ROW(name, kind, op, true, min_args, max_args, arguments, returns, volatility)
/* A setting is of no kind and not pure (AMQ_SQL_IS_SETTING is false). */
#define AMQ_SQL_SETTING(name, min_args, max_args, arguments, returns)                              \
	AMQ_SQL_ROW(name, none, SETTING, false, min_args, max_args, arguments, returns, SETTING)
#include "sql/function_list.h"
#undef AMQ_SQL_ROW
};

const size_t amq_sql_function_count = sizeof(amq_sql_functions) / sizeof(amq_sql_functions[0]);

const amq_sql_function *amq_sql_function_named(const char *name)
{
	for (size_t i = 0; i < amq_sql_function_count; i++)
		if (strcmp(amq_sql_functions[i].name, name) == 0)
			return &amq_sql_functions[i];
	return NULL;
}

const char *amq_sql_function_doing(amq_kind kind, amq_sql_op op, amq_sql_op fallback)
{
	const char *name = amq_kind_name(kind);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < amq_sql_function_count; i++)
			if (amq_sql_functions[i].op == (pass ? fallback : op) &&
			    strcmp(amq_sql_functions[i].kind, name) == 0)
				return amq_sql_functions[i].name;
	return name;
}

amq_kind amq_sql_function_kind(const amq_sql_function *fn)
{
	return amq_kind_named(fn->kind);
}

amq_bulk_op amq_sql_bulk_op(amq_sql_op op)
{
	return op == AMQ_SQL_DELETE_AGG ? AMQ_BULK_DELETE : AMQ_BULK_ADD;
}

amq_status amq_sql_merge(amq_sql_op op, amq_filter *dst, const amq_filter *src, amq_error *err)
{
	if (op == AMQ_SQL_INTERSECT)
		return amq_filter_intersect_into(dst, src, err);
	return amq_filter_union_into(dst, src, err);
}
