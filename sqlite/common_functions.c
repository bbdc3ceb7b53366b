/*
 * common_functions.c - the functions that are about neither filter kind:
 * amq_hash, the value hash every filter is built from, and amq_version.
 */
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
