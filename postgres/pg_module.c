/*
 * pg_module.c - the module's magic block and the two functions that belong
 * to no filter kind: amq_hash(value), the hash every filter function uses
 * (seed 0), and amq_version().
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "amq_pg.h"

PG_MODULE_MAGIC;

AMQ_PG_FUNCTION(amq_pg_hash);
AMQ_PG_FUNCTION(amq_pg_version);

/* amq_hash(value): the 64-bit hash as a signed bigint. */
Datum amq_pg_hash(PG_FUNCTION_ARGS)
{
	const amq_pg_hasher *h = amq_pg_cached_hasher(fcinfo, 0);

	PG_RETURN_INT64((int64)amq_pg_hash_value(h, PG_GETARG_DATUM(0), AMQ_DEFAULT_SEED));
}

/* amq_version(): the library's version, AMQ_VERSION. */
Datum amq_pg_version(PG_FUNCTION_ARGS)
{
	(void)fcinfo;
	PG_RETURN_TEXT_P(cstring_to_text(AMQ_VERSION));
}
