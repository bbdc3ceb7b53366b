/*
 * filter/filter.h - what the PostgreSQL adapter's files share: turning a core
 * amq_error into ereport, the palloc-backed allocator, reading filter
 * arguments, hashing SQL values of any supported type, and the per-call-site
 * cache that lets a membership probe parse its filter once per query.
 *
 * Include after postgres.h; the core header (amq.h) comes with it.
 */
#ifndef AMQ_PG_H
#define AMQ_PG_H

#include "fmgr.h"
#include "storage/fileset.h"
#include "utils/datetime.h"

#include "amq.h"
#include "pg_compat.h"
#include "sql/arguments.h"
#include "sql/functions.h"

/*
 * Declares a SQL-callable V1 function as one of the few symbols the module
 * exports: it is built with -fvisibility=hidden, so nothing else of it (the
 * core included) can clash with another library loaded into the server.
 * PostgreSQL 16 and later mark the function itself PGDLLEXPORT inside
 * PG_FUNCTION_INFO_V1; 15 marks only its info record, hence this declaration.
 */
#define AMQ_PG_FUNCTION(name)                                                                      \
	extern PGDLLEXPORT Datum name(PG_FUNCTION_ARGS);                                           \
	PG_FUNCTION_INFO_V1(name)

/*
 * What a generic SQL function needs to know about the one SQL name it is
 * serving: the kind of filter it takes, the name its messages start with and
 * its operation (core's function table; 0 for a type's own functions).
 */
typedef struct amq_pg_call {
	amq_kind kind; /* kind_name's, resolved at the entry point's first call */
	const char *name;
	amq_sql_op op;
	const char *kind_name; /* core's function table's kind column */
} amq_pg_call;

/*
 * The generic implementations: each serves every kind and SQL name of its
 * operation, given the amq_pg_call of the entry point that calls it
 * (filter/entries.c makes one per row of core/sql/function_list.h).
 */
typedef Datum amq_pg_generic(FunctionCallInfo fcinfo, const amq_pg_call *call);

/* filter/functions.c: the scalar functions; add serves ADD and ADD_UNIQUE,
 * combine UNION and INTERSECT, frequency_<returns> FREQUENCY by the SQL
 * type it returns, contained_in the <@ operator of CONTAINS. */
amq_pg_generic amq_pg_op_new, amq_pg_op_add, amq_pg_op_delete, amq_pg_op_contains,
    amq_pg_op_contained_in, amq_pg_op_frequency_integer, amq_pg_op_frequency_bigint,
    amq_pg_op_combine, amq_pg_op_estimate, amq_pg_op_fpr, amq_pg_op_info, amq_pg_op_hash,
    amq_pg_op_version;

/* filter/aggregates.c: transition and final functions of AGG; transition,
 * combine, serial, deserial and final functions of UNION_AGG. */
amq_pg_generic amq_pg_op_agg_trans, amq_pg_op_agg_final, amq_pg_op_union_agg_trans,
    amq_pg_op_union_agg_combine, amq_pg_op_union_agg_serialize, amq_pg_op_union_agg_deserialize,
    amq_pg_op_union_agg_final;

/* filter/bulk.c: the transition of ADD_AGG and DELETE_AGG, and their final. */
amq_pg_generic amq_pg_op_bulk_trans, amq_pg_op_bulk_final;

/* filter/types.c: each filter type's input, output, binary input and output,
 * and cast from bytea. */
amq_pg_generic amq_pg_op_in, amq_pg_op_out, amq_pg_op_recv, amq_pg_op_send, amq_pg_op_from_bytea;

/* ---- errors and memory (filter/errors.c) ---- */

/*
 * Raises err as ereport(ERROR) with the SQLSTATE its status maps to, the
 * core's message unchanged and its hint capitalised with a trailing period.
 */
_Noreturn void amq_pg_raise(const amq_error *err);
/* amq_pg_raise with the SQLSTATE given instead of the status's (a NULL
 * argument's 22004). */
_Noreturn void amq_pg_raise_as(const amq_error *err, int sqlstate);

/* Raises unless st is AMQ_OK. */
static inline void amq_pg_check(amq_status st, const amq_error *err)
{
	if (st != AMQ_OK)
		amq_pg_raise(err);
}

/*
 * An allocator that pallocs in ctx (huge allocations allowed) and returns
 * NULL instead of raising when memory runs out, so the core reports
 * AMQ_NO_MEMORY and the adapter raises SQLSTATE 53200.
 */
amq_allocator amq_pg_allocator(MemoryContext ctx);

/* The temporary files of the builders in aggregate context aggctx, with
 * work_mem as their working memory (filter/temp_files.c): BufFiles, closed
 * when core is done with them or when aggctx is reset; in the leader's
 * directory when handing_over (a serializing aggregate's), so that a state
 * hands them over. The first call for a context decides. */
const amq_spill *amq_pg_temp_files(MemoryContext aggctx, bool handing_over);

/* ---- a leader's directory of files handed over (filter/handed_files.c) ---- */

/* The directory of this process's leader (itself when it leads). */
void amq_pg_handed_files_init(FileSet *set);
/* The name of file number of process maker in a directory. */
void amq_pg_handed_file_name(char *name, size_t size, pid_t maker, uint32 number);
/* A file's token (AMQ_SPILL_TOKEN bytes): its directory, maker and number. */
void amq_pg_handed_token(const FileSet *set, pid_t maker, uint32 number, uint8_t *token);
/* Reads a token back; false unless it names this process's own directory. */
bool amq_pg_handed_token_read(const uint8_t *token, FileSet *set, pid_t *maker, uint32 *number);
/* Removes the leader's directories at the end of its transactions (once, by
 * _PG_init). */
void amq_pg_handed_files_register(void);

/* ---- filter arguments and results (filter/arguments.c) ---- */

/*
 * Reads the filter in bytes[0..size) with core's amq_filter_read (open, kind,
 * verify); raises 22P02 / 22023 with a message that starts "<call name>:
 * <arg>: ", the same as SQLite's for the same bytes. The view points into
 * bytes.
 */
void amq_pg_open_bytes(amq_filter *f, const void *bytes, size_t size, const amq_pg_call *call,
		       const char *arg);

/* Detoasts the filter argument d and opens it read-only as above. */
void amq_pg_read_filter(Datum d, const amq_pg_call *call, const char *arg, amq_filter *f);

/*
 * A fresh varlena holding a copy of the filter argument d, opened writable in
 * *f: the starting point of every function that returns a changed filter.
 * Seal *f before returning the varlena.
 */
struct varlena *amq_pg_copy_filter(Datum d, const amq_pg_call *call, const char *arg,
				   amq_filter *f);

/* A new varlena (in CurrentMemoryContext) holding f's bytes. */
struct varlena *amq_pg_filter_to_varlena(const amq_filter *f);
/* The varlena of bytes[0..size), made of their own buffer, which must come
 * from amq_pg_allocator (whose VARHDRSZ spare bytes it uses): they move up in
 * place (in pieces, with the interrupt check between them), so a filter or
 * state near 1 GiB is never held twice. The buffer is the varlena's now. */
struct varlena *amq_pg_into_varlena(void *bytes, size_t size);

/* The result of an aggregate's final function whose state holds the filter
 * f: f sealed (idempotent, so a state may be finished more than once) and
 * copied into a new varlena. */
struct varlena *amq_pg_sealed_copy(amq_filter *f);

/* ---- hashing SQL values (filter/hashing.c) ---- */

/* How a value of one SQL type becomes core hash input. */
typedef enum amq_pg_encoding {
	AMQ_PG_INT2,
	AMQ_PG_INT4,
	AMQ_PG_INT8,
	AMQ_PG_FLOAT4,
	AMQ_PG_FLOAT8,
	AMQ_PG_NUMERIC,
	AMQ_PG_BOOL,
	AMQ_PG_TEXT,   /* text, varchar */
	AMQ_PG_BPCHAR, /* trailing spaces do not count */
	AMQ_PG_NAME,
	AMQ_PG_CITEXT, /* lower-cased as citext compares */
	AMQ_PG_BYTEA,
	AMQ_PG_DATE,
	AMQ_PG_TIME,
	AMQ_PG_TIMESTAMP,
	AMQ_PG_TIMESTAMPTZ,
	AMQ_PG_UUID
} amq_pg_encoding;

/* The resolved encoding of one polymorphic argument at one call site. */
typedef struct amq_pg_hasher {
	amq_pg_encoding encoding;
	amq_family family;    /* what every value of the type hashes as */
	bool convert_to_utf8; /* server encoding is not UTF-8 */
} amq_pg_hasher;

/*
 * Resolves the type of argument argno of the current call (domains to their
 * base type) and checks it can be hashed so that equal values hash equally:
 * raises 0A000 for an unsupported type or a nondeterministic collation.
 */
void amq_pg_hasher_init(amq_pg_hasher *h, FunctionCallInfo fcinfo, int argno);

/*
 * Sets h up for values of type (a domain: its base type) with no collation
 * check, for a caller that has checked the collation itself (the remote join
 * filter); false when amq cannot hash the type.
 */
bool amq_pg_hasher_for_type(amq_pg_hasher *h, Oid type);

/* One non-NULL value of the hasher's type as core hashes it, with what
 * decoding allocated (freed at the end of the call's memory context, or by
 * amq_pg_hash_value itself). */
typedef struct amq_pg_decoded {
	amq_value value;
	char buf[MAXDATELEN + 1]; /* dates, times, uuids as ISO text */
	void *owned[2];
	int nowned;
} amq_pg_decoded;

void amq_pg_decode_value(const amq_pg_hasher *h, Datum value, amq_pg_decoded *d);

/* The core hash of one non-NULL value of the hasher's type. */
uint64 amq_pg_hash_value(const amq_pg_hasher *h, Datum value, uint64 seed);

/* Raises the family check's error (amq_check_family: SQLSTATE 22023, the
 * value shown, the cast in the hint) for a value f does not take. */
_Noreturn void amq_pg_family_error(const amq_filter *f, const amq_pg_hasher *h, Datum value,
				   const amq_pg_call *call);

/*
 * Raises the family check's error unless f takes values of h's type: for
 * every function that probes, adds or deletes a user's value (one compare
 * inline). The join filters never call it.
 */
static inline void amq_pg_check_family(const amq_filter *f, const amq_pg_hasher *h, Datum value,
				       const amq_pg_call *call)
{
	if (!amq_filter_takes(f, h->family))
		amq_pg_family_error(f, h, value, call);
}

/* The hasher for argument argno kept in fn_extra, set up on first use. */
const amq_pg_hasher *amq_pg_cached_hasher(FunctionCallInfo fcinfo, int argno);

/* ---- membership probes with a cached filter (filter/call_cache.c) ---- */

/*
 * For a probe function (contains, count): the filter argument filter_arg,
 * read at most once per distinct filter value at this call site (the parse
 * and its variant's probe are kept in fn_extra), and in *hash the hash of
 * argument value_arg with that filter's seed. Both arguments must be
 * non-NULL. The filter stays valid until the next call.
 */
const amq_filter *amq_pg_probe(FunctionCallInfo fcinfo, int filter_arg, int value_arg,
			       const amq_pg_call *call, amq_probe *probe, uint64 *hash);

/* size zeroed bytes that live with this call site's cache (as long as the
 * call site), the same block on every call: the state a probe function keeps
 * beside the cached filter (amq_join_filter_probe's judge). */
void *amq_pg_probe_caller_state(FunctionCallInfo fcinfo, Size size);

#endif
