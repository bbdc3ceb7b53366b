/*
 * connection.c - the per-connection state of connection.h: reference counted
 * (one reference per function registration, released by SQLite's xDestroy
 * when the connection closes or a function is replaced) and holding the
 * last verified filter.
 */
#include "connection.h"

#include <string.h>

/* Largest filter kept to recognise; bigger ones are verified every time. */
#define MAX_KEPT_BYTES ((size_t)64 << 20)

struct amq_connection {
	int refs;
	/* The filter verified last, by length and header. */
	bool seen;
	size_t seen_size;
	uint8_t seen_header[AMQ_HEADER_BYTES];
	/* A copy of a filter verified at least twice in a row. */
	uint8_t *kept;
	size_t kept_size;
};

struct amq_connection *connection_new(void)
{
	struct amq_connection *conn = sqlite3_malloc64(sizeof(*conn));
	if (conn == NULL)
		return NULL;
	memset(conn, 0, sizeof(*conn));
	conn->refs = 1;
	return conn;
}

void connection_release(struct amq_connection *conn)
{
	if (--conn->refs > 0)
		return;
	sqlite3_free(conn->kept);
	sqlite3_free(conn);
}

struct function_data *function_data_new(struct amq_connection *conn, const amq_sql_function *fn)
{
	struct function_data *fd = sqlite3_malloc64(sizeof(*fd));
	if (fd == NULL)
		return NULL;
	fd->fn = fn;
	fd->kind = amq_sql_function_kind(fn);
	fd->conn = conn;
	conn->refs++;
	return fd;
}

void function_data_free(void *data)
{
	struct function_data *fd = data;
	connection_release(fd->conn);
	sqlite3_free(fd);
}

bool connection_knows_verified(struct amq_connection *conn, const void *bytes, size_t size)
{
	return conn->kept != NULL && size == conn->kept_size &&
	       memcmp(bytes, conn->kept, size) == 0;
}

void connection_remember_verified(struct amq_connection *conn, const void *bytes, size_t size)
{
	if (size < AMQ_HEADER_BYTES || size > MAX_KEPT_BYTES)
		return;
	bool again = conn->seen && size == conn->seen_size &&
		     memcmp(bytes, conn->seen_header, AMQ_HEADER_BYTES) == 0;
	conn->seen = true;
	conn->seen_size = size;
	memcpy(conn->seen_header, bytes, AMQ_HEADER_BYTES);
	if (!again)
		return;
	/* Out of memory here only means the next row verifies again. */
	uint8_t *copy = sqlite3_malloc64(size);
	if (copy == NULL)
		return;
	memcpy(copy, bytes, size);
	sqlite3_free(conn->kept);
	conn->kept = copy;
	conn->kept_size = size;
}
