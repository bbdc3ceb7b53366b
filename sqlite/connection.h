/*
 * connection.h - state that amq's functions share within one database
 * connection, reached through each function's user data: the function's SQL
 * name (for messages) and the memory of the filter verified last.
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

/* A new connection state holding one reference, or NULL when out of memory. */
struct amq_connection *connection_new(void);

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

#endif
