/*
 * common_functions.c - the functions that are about neither filter kind:
 * amq_hash, the value hash every filter is built from, amq_version, and the
 * connection's setting amq_work_mem.
 */
#include "connection.h"
#include "functions.h"

/* amq_hash(value): the 64-bit hash of value with seed 0 as a signed
 * INTEGER, the number filters use; NULL for NULL. */
void amq_hash_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	amq_value value;
	if (decode_value(ctx, argv[0], &value))
		sqlite3_result_int64(ctx, (sqlite3_int64)amq_value_hash(&value, AMQ_DEFAULT_SEED));
}

/* amq_version(): the version of amq this extension was built from. */
void amq_version_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	sqlite3_result_text(ctx, AMQ_VERSION, -1, SQLITE_STATIC);
}

/* amq_work_mem([bytes]): the working memory of the connection's collecting
 * aggregates in bytes (AMQ_SPILL_DEFAULT_MEMORY until set), set to bytes
 * first when given: a whole number from AMQ_SPILL_MIN_MEMORY to
 * AMQ_SQLITE_MAX_WORK_MEM. */
void work_mem_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct amq_connection *conn = fn_connection(ctx);
	if (argc > 0) {
		int64_t bytes;
		if (!integral_value(argv[0], &bytes) || bytes < (int64_t)AMQ_SPILL_MIN_MEMORY ||
		    bytes > AMQ_SQLITE_MAX_WORK_MEM) {
			char *got = value_shown(argv[0]);
			if (got != NULL)
				report_usage_error(
				    ctx,
				    "bytes must be an integer between %lld and %lld, "
				    "got %s: pass the working memory in bytes, such "
				    "as 67108864 for 64 MiB",
				    (long long)AMQ_SPILL_MIN_MEMORY,
				    (long long)AMQ_SQLITE_MAX_WORK_MEM, got);
			else
				sqlite3_result_error_nomem(ctx);
			sqlite3_free(got);
			return;
		}
		connection_set_work_mem(conn, (size_t)bytes);
	}
	sqlite3_result_int64(ctx, (sqlite3_int64)connection_work_mem(conn));
}
