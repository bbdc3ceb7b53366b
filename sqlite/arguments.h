/*
 * arguments.h - what every SQLite function of amq shares: the SQLite include
 * (as a loadable extension, or compiled into a program with SQLITE_CORE), the
 * allocator core uses here, and the translation of sqlite3_value arguments
 * into core inputs and of core results and errors back into SQLite results.
 *
 * Each decoding function returns true on success; on failure it has already
 * set the error on ctx and the caller only returns. Adapter-detected errors
 * read "<function>: <argument> must be <what>, got <type>"; core errors read
 * "<message>: <hint>" (just "<message>" when the hint is empty).
 */
#ifndef AMQ_SQLITE_ARGUMENTS_H
#define AMQ_SQLITE_ARGUMENTS_H

#ifdef SQLITE_CORE
#include <sqlite3.h>
#else
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#endif

#include "amq.h"
#include "sql/arguments.h"
#include "sql/functions.h"

/* sqlite3_malloc64/sqlite3_free behind core's allocation hook, so a filter
 * core builds can be handed to SQLite as a result without a copy. */
extern const amq_allocator amq_sqlite_allocator;

/* The same allocator with the connection's interrupt check (sqlite3_interrupt,
 * seen from SQLite 3.41 on) and temporary files (connection_spill, so a
 * collecting aggregate spills past amq_work_mem): for the calls whose work
 * grows with a filter's size or the rows collected (bloom_new, cuckoo_new,
 * the aggregates). */
amq_allocator connection_allocator(sqlite3_context *ctx);

/* The SQL name of the function being called (its registration user data). */
const char *fn_name(sqlite3_context *ctx);

/* The kind of filter the function being called works on (user data too). */
amq_kind fn_kind(sqlite3_context *ctx);

/* The operation of the function being called (user data too). */
amq_sql_op fn_op(sqlite3_context *ctx);

/* The connection state the function being called shares (connection.h). */
struct amq_connection *fn_connection(sqlite3_context *ctx);

/* SQLite's name of v's type, as typeof() prints it. */
const char *value_type_name(sqlite3_value *v);

/* Sets "<function>: " followed by the printf-style text as the error. */
void report_usage_error(sqlite3_context *ctx, const char *fmt, ...);

/* Sets core's error: out-of-memory as SQLITE_NOMEM, an interrupt as
 * SQLITE_INTERRUPT, anything else as "<message>: <hint>" (a temporary file's
 * failure with the code SQLITE_IOERR, as SQLite's own I/O errors). */
void report_core_error(sqlite3_context *ctx, const amq_error *err);

/* True when st is AMQ_OK; else reports err (report_core_error). */
bool core_ok(sqlite3_context *ctx, amq_status st, const amq_error *err);

/*
 * Decodes a non-NULL value as core hashes it (docs/HASHING.md): INTEGER as an
 * integer, REAL as a real (so 3 and 3.0 agree), TEXT as its UTF-8 bytes, BLOB
 * as its bytes (so 'abc' and X'616263' differ). *out views SQLite's copy of
 * the value, valid while the value is.
 */
bool decode_value(sqlite3_context *ctx, sqlite3_value *v, amq_value *out);

/* The hash of a non-NULL value with seed (docs/HASHING.md, as decode_value
 * reads it) and its family, straight from SQLite's accessors: for the
 * aggregates' steps, once per row. */
bool hash_value(sqlite3_context *ctx, sqlite3_value *v, uint64_t seed, uint64_t *hash,
		amq_family *family);

/* Reports the family check's error for a value filter f does not take
 * (amq_check_family, with the function's name and "value"). */
void report_family_error(sqlite3_context *ctx, const amq_filter *f, const amq_value *v);

/* decode_value, then the family check against f (amq_check_family), then the
 * hash with f's seed: for every function that probes, adds or deletes a
 * user's value. False when the error is set. */
bool admit_value(sqlite3_context *ctx, const amq_filter *f, sqlite3_value *v, amq_value *out,
		 uint64_t *hash);

/*
 * Reads a non-NULL filter argument of the function's kind with core's
 * amq_filter_read: open, kind, verify (the last skipped when this connection
 * verified these very bytes before, connection.h). *f views SQLite's copy of
 * the bytes and is valid only during this call; name is the argument's name
 * in error messages ("filter", "second filter").
 */
bool filter_argument(sqlite3_context *ctx, sqlite3_value *v, const char *name, amq_filter *f);

/* The one filter argument of a function whose result is NULL for a NULL
 * filter: false, leaving the result NULL, when v is NULL; otherwise as
 * filter_argument. */
bool filter_unless_null(sqlite3_context *ctx, sqlite3_value *v, amq_filter *f);

/* A filter argument parsed once per statement, with its variant's test on
 * this CPU (amq_filter_probe_for). */
struct probe_filter {
	amq_filter filter;
	amq_probe contains;
};

/*
 * The (filter, value) arguments of the contains and count functions: the
 * filter parsed, and value checked against its families and hashed with its
 * seed. The parse is kept
 * in the statement's auxiliary data: when the filter is a bound parameter or
 * a literal, it is opened and verified once per statement and never copied.
 * *pf stays valid until the function returns. Returns false when the result
 * is already set: an error, or NULL when either is NULL.
 */
bool probe_arguments(sqlite3_context *ctx, sqlite3_value **argv, const struct probe_filter **pf,
		     uint64_t *hash);

/* v as a whole number: an INTEGER, or a REAL that is one (1e6 is a REAL
 * literal); false for anything else. */
bool integral_value(sqlite3_value *v, int64_t *n);

/* v in an error's "got ...": the number of an INTEGER, "real " and the
 * number of a REAL, else its type name; from sqlite3_mprintf (NULL when out
 * of memory). */
char *value_shown(sqlite3_value *v);

/* The sizing arguments (sql/arguments.h): each decodes its SQLite value and
 * sets it in *s, whose checks core makes. */

/* A false-positive rate: an INTEGER or REAL. */
bool fpr_argument(sqlite3_context *ctx, sqlite3_value *v, amq_sql_sizing *s);

/* A capacity: an INTEGER (or an integral REAL). */
bool capacity_argument(sqlite3_context *ctx, sqlite3_value *v, amq_sql_sizing *s);

/* A layout name of the function's kind: TEXT. */
bool layout_argument(sqlite3_context *ctx, sqlite3_value *v, amq_sql_sizing *s);

/* A scalable filter's expansion: an INTEGER. */
bool expansion_argument(sqlite3_context *ctx, sqlite3_value *v, amq_sql_sizing *s);

/* Makes f's buffer (from amq_sqlite_allocator) the result and takes it over:
 * f no longer owns a buffer afterwards, whatever happens. */
void result_filter(sqlite3_context *ctx, amq_filter *f);

/* Sets core's JSON description of f as the TEXT result. */
void result_info(sqlite3_context *ctx, const amq_filter *f);

#endif
