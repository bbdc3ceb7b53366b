/*
 * connection.h - state that amq's functions share within one database
 * connection, reached through each function's user data: the function's SQL
 * name (for messages), the memory of the filter verified last, and the
 * working memory of a collecting aggregate with the temporary files it
 * spills to past it (amq_work_mem).
 *
 * Why the memory: when a filter comes from a scalar subquery or a join
 * column, SQLite hands every row a fresh copy, so no pointer or auxiliary
 * data can say "this is the filter you already checked". Verifying it again
 * costs O(size) per row: for a cuckoo filter about 600 us per MB, as its
 * check counts every slot, for a Bloom filter one checksum pass at about the
 * speed of reading it. Comparing the copy byte for byte with a kept copy of
 * a filter that passed costs a thirtieth of the cuckoo check and beats the
 * Bloom checksum while the filter fits the caches (filter_argument uses it
 * for Bloom filters up to 1 MiB), and can never mistake a different filter
 * for it.
 */
#ifndef AMQ_SQLITE_CONNECTION_H
#define AMQ_SQLITE_CONNECTION_H

#include "arguments.h"

struct amq_connection;

/* What a registered function gets as sqlite3_user_data: its row of core's
 * function table (SQL name, the kind of filter it works on, its operation:
 * one C function serves bloom_* and cuckoo_* alike) and the connection's
 * shared state. */
struct function_data {
	const amq_sql_function *fn;
	amq_kind kind; /* fn's, resolved once at registration */
	struct amq_connection *conn;
};

/* The most working memory amq_work_mem takes: 1 TiB. */
#define AMQ_SQLITE_MAX_WORK_MEM ((sqlite3_int64)1 << 40)

/* A new state for db's connection holding one reference, or NULL when out
 * of memory. */
struct amq_connection *connection_new(sqlite3 *db);

/* Drops one reference; the state is freed with the last. */
void connection_release(struct amq_connection *conn);

/* User data for one registration of fn; it holds a reference to conn.
 * NULL when out of memory. */
struct function_data *function_data_new(struct amq_connection *conn, const amq_sql_function *fn);

/* The xDestroy of every registration: frees the user data, releases conn. */
void function_data_free(void *data);

/* True when bytes[0..size) are exactly a filter that passed verification
 * on this connection (kept copies are at most 64 MiB). */
bool connection_knows_verified(struct amq_connection *conn, const void *bytes, size_t size);

/* Records that bytes[0..size) passed verification. A copy is kept only when
 * the same filter (same length and header, checksum included) passes twice
 * in a row, so a stream of different filters costs no copying. */
void connection_remember_verified(struct amq_connection *conn, const void *bytes, size_t size);

/*
 * The temporary files of conn's collecting aggregates (amq_spill of
 * amq.h), which connection_allocator hands to every builder: temporary files
 * of the connection's VFS, so SQLite's rules for them apply (the directory
 * is sqlite3_temp_directory, else SQLITE_TMPDIR, TMPDIR, /var/tmp, /usr/tmp,
 * /tmp; the unix VFS removes the name as it opens the file, so nothing is
 * left behind even by a crash), and its memory is the connection's
 * amq_work_mem. It lives as long as conn.
 */
const amq_spill *connection_spill(struct amq_connection *conn);

/* The working memory of conn's collecting aggregates in bytes (amq_work_mem):
 * AMQ_SPILL_DEFAULT_MEMORY until set. */
size_t connection_work_mem(struct amq_connection *conn);

/* Sets it to bytes, from AMQ_SPILL_MIN_MEMORY to AMQ_SQLITE_MAX_WORK_MEM:
 * for the aggregates from then on (one running at the time may take it up
 * midway, since it holds connection_spill). */
void connection_set_work_mem(struct amq_connection *conn, size_t bytes);

#endif
