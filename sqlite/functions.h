/*
 * functions.h - the C implementations behind every SQL function of the
 * extension, for extension.c's registration table. Each follows SQLite's
 * xFunc / xStep / xFinal signatures.
 */
#ifndef AMQ_SQLITE_FUNCTIONS_H
#define AMQ_SQLITE_FUNCTIONS_H

#include "arguments.h"

/* filter_functions.c: one function per operation, for every kind */
void new_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void add_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void add_unique_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void delete_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void contains_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void frequency_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void union_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void intersect_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void estimate_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void fpr_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void info_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* aggregates.c */
void agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void agg_final(sqlite3_context *ctx);
void union_agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void union_agg_final(sqlite3_context *ctx);

/* bulk_aggregates.c */
void bulk_add_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void bulk_delete_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void bulk_final(sqlite3_context *ctx);

/* common_functions.c */
void amq_hash_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void amq_version_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);

#endif
