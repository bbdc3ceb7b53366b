/*
 * functions.h - the C implementations behind every SQL function of the
 * extension, for extension.c's registration table. Each follows SQLite's
 * xFunc / xStep / xFinal signatures.
 */
#ifndef AMQ_SQLITE_FUNCTIONS_H
#define AMQ_SQLITE_FUNCTIONS_H

#include "arguments.h"

/* bloom_functions.c */
void bloom_new_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void bloom_add_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void bloom_contains_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void bloom_union_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void bloom_intersect_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void bloom_count_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void bloom_fpr_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void bloom_info_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* cuckoo_functions.c */
void cuckoo_new_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void cuckoo_add_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void cuckoo_delete_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void cuckoo_contains_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void cuckoo_count_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void cuckoo_info_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* aggregates.c */
void bloom_agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void bloom_agg_final(sqlite3_context *ctx);
void cuckoo_agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void cuckoo_agg_final(sqlite3_context *ctx);
void bloom_union_agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void bloom_union_agg_final(sqlite3_context *ctx);

/* common_functions.c */
void amq_hash_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void amq_version_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);

#endif
