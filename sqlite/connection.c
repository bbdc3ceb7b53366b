/*
 * connection.c - the per-connection state of connection.h: reference counted
 * (one reference per function registration, released by SQLite's xDestroy
 * when the connection closes or a function is replaced), holding the last
 * verified filter, and the temporary files the collecting aggregates spill
 * to past the connection's working memory: temporary files of SQLite's own
 * VFS, opened as SQLite opens a temporary journal, so they go where SQLite's
 * own temporary files go and go away when closed.
 */
#include "connection.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Largest filter kept to recognise; bigger ones are verified every time. */
#define MAX_KEPT_BYTES ((size_t)64 << 20)

struct amq_connection {
	int refs;
	sqlite3 *db;
	/* The collecting aggregates' temporary files, ctx this state; memory
	 * is amq_work_mem. */
	amq_spill spill;
	/* The filter verified last, by length and header. */
	bool seen;
	size_t seen_size;
	uint8_t seen_header[AMQ_HEADER_BYTES];
	/* A copy of a filter verified at least twice in a row. */
	uint8_t *kept;
	size_t kept_size;
};

static void *temp_create(void *ctx, amq_error *err);
static amq_status temp_write(void *ctx, void *file, const void *buf, size_t len, amq_error *err);
static amq_status temp_read(void *ctx, void *file, uint64_t offset, void *buf, size_t len,
			    amq_error *err);
static void temp_close(void *ctx, void *file);

struct amq_connection *connection_new(sqlite3 *db)
{
	struct amq_connection *conn = sqlite3_malloc64(sizeof(*conn));
	if (conn == NULL)
		return NULL;
	memset(conn, 0, sizeof(*conn));
	conn->refs = 1;
	conn->db = db;
	conn->spill = (amq_spill){.memory = AMQ_SPILL_DEFAULT_MEMORY,
				  .ctx = conn,
				  .create = temp_create,
				  .write = temp_write,
				  .read = temp_read,
				  .close = temp_close};
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

const amq_spill *connection_spill(struct amq_connection *conn)
{
	return &conn->spill;
}

size_t connection_work_mem(struct amq_connection *conn)
{
	return conn->spill.memory;
}

void connection_set_work_mem(struct amq_connection *conn, size_t bytes)
{
	conn->spill.memory = bytes;
}

/* One temporary file: the VFS's file object (szOsFile bytes, of which
 * sqlite3_file is the start) after the bytes written so far, where the next
 * append goes. */
struct temp_file {
	sqlite3_int64 size;
	sqlite3_file file;
};

/* Bytes per xRead or xWrite call: at most SQLite's largest page, as SQLite
 * itself calls them (the unix VFS keeps the low 17 bits of a write's length
 * and asserts a read's fits them). */
#define TEMP_PIECE ((size_t)65536)

/* Fills err with a failure of a temporary file: "could not <verb> a
 * temporary file: <reason>" and what to do about it; AMQ_NO_MEMORY when rc
 * says out of memory (whatever the reason), else AMQ_SPILL_FAILED. */
static void temp_error(amq_error *err, int rc, const char *verb, const char *reason,
		       const char *hint)
{
	bool no_memory = (rc & 0xff) == SQLITE_NOMEM;
	err->status = no_memory ? AMQ_NO_MEMORY : AMQ_SPILL_FAILED;
	snprintf(err->message, sizeof(err->message), "could not %s a temporary file: %s", verb,
		 no_memory ? "out of memory" : reason);
	snprintf(err->hint, sizeof(err->hint), "%s", no_memory ? "" : hint);
}

#define HINT_SPACE                                                                                 \
	"free space in SQLite's temporary directory, or raise amq_work_mem so less spills"
#define HINT_DEVICE                                                                                \
	"check the device of SQLite's temporary directory, or raise amq_work_mem so less spills"

/* Why a read or write of t returned rc: the system's words for the errno
 * the VFS kept (the unix VFS does, but for a full disk, SQLITE_FULL), else
 * SQLite's. */
static const char *temp_reason(struct temp_file *t, int rc)
{
	int code = 0;
	if (t->file.pMethods->xFileControl(&t->file, SQLITE_FCNTL_LAST_ERRNO, &code) == SQLITE_OK &&
	    code != 0)
		return strerror(code);
	return (rc & 0xff) == SQLITE_FULL ? strerror(ENOSPC) : sqlite3_errstr(rc);
}

/*
 * A new temporary file of the connection's VFS (that of its main database,
 * whose temporary files SQLite makes the same way), opened as SQLite opens a
 * temporary journal: no name, so the VFS picks one in SQLite's temporary
 * directory, and deleted on close (the unix VFS unlinks it at once).
 */
static void *temp_create(void *ctx, amq_error *err)
{
	struct amq_connection *conn = ctx;
	sqlite3_vfs *vfs = NULL;
	if (sqlite3_file_control(conn->db, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) != SQLITE_OK ||
	    vfs == NULL)
		vfs = sqlite3_vfs_find(NULL);
	if (vfs == NULL) {
		temp_error(err, SQLITE_ERROR, "create", "SQLite has no VFS", "");
		return NULL;
	}
	struct temp_file *t =
	    sqlite3_malloc64(offsetof(struct temp_file, file) + (size_t)vfs->szOsFile);
	if (t == NULL) {
		temp_error(err, SQLITE_NOMEM, "create", "", "");
		return NULL;
	}
	memset(t, 0, offsetof(struct temp_file, file) + (size_t)vfs->szOsFile);
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXCLUSIVE |
		    SQLITE_OPEN_DELETEONCLOSE | SQLITE_OPEN_TEMP_JOURNAL;
	int out = 0;
	int rc = vfs->xOpen(vfs, NULL, &t->file, flags, &out);
	if (rc != SQLITE_OK) {
		/* A failed xOpen leaves nothing to close. Its errno is no help:
		 * the unix VFS tries again read-only, which fails with ENOENT. */
		sqlite3_free(t);
		temp_error(err, rc, "create",
			   rc == SQLITE_IOERR_GETTEMPPATH   ? "no temporary directory is writable"
			   : (rc & 0xff) == SQLITE_CANTOPEN ? "the file could not be opened"
							    : sqlite3_errstr(rc),
			   "check SQLite's temporary directory (SQLITE_TMPDIR, TMPDIR, /var/tmp, "
			   "/tmp) and the limit of open files, or raise amq_work_mem so nothing "
			   "spills");
		return NULL;
	}
	return t;
}

/* Appends len bytes of buf to the file. */
static amq_status temp_write(void *ctx, void *file, const void *buf, size_t len, amq_error *err)
{
	(void)ctx;
	struct temp_file *t = file;
	const unsigned char *p = buf;
	while (len > 0) {
		size_t piece = len < TEMP_PIECE ? len : TEMP_PIECE;
		int rc = t->file.pMethods->xWrite(&t->file, p, (int)piece, t->size);
		if (rc != SQLITE_OK) {
			temp_error(err, rc, "write", temp_reason(t, rc), HINT_SPACE);
			return AMQ_SPILL_FAILED;
		}
		t->size += (sqlite3_int64)piece;
		p += piece;
		len -= piece;
	}
	return AMQ_OK;
}

/* Reads len bytes at offset into buf, all of them: a short read (the VFS
 * fills the rest with zeros) is an error. */
static amq_status temp_read(void *ctx, void *file, uint64_t offset, void *buf, size_t len,
			    amq_error *err)
{
	(void)ctx;
	struct temp_file *t = file;
	if (offset > (uint64_t)t->size || len > (uint64_t)t->size - offset) {
		temp_error(err, SQLITE_IOERR, "read", "past the end of what was written",
			   HINT_DEVICE);
		return AMQ_SPILL_FAILED;
	}
	unsigned char *p = buf;
	while (len > 0) {
		size_t piece = len < TEMP_PIECE ? len : TEMP_PIECE;
		int rc = t->file.pMethods->xRead(&t->file, p, (int)piece, (sqlite3_int64)offset);
		if (rc != SQLITE_OK) {
			temp_error(err, rc, "read",
				   rc == SQLITE_IOERR_SHORT_READ ? "the file ended early"
								 : temp_reason(t, rc),
				   HINT_DEVICE);
			return AMQ_SPILL_FAILED;
		}
		offset += piece;
		p += piece;
		len -= piece;
	}
	return AMQ_OK;
}

/* Closes the file, which the VFS then deletes. */
static void temp_close(void *ctx, void *file)
{
	(void)ctx;
	struct temp_file *t = file;
	if (t == NULL)
		return;
	t->file.pMethods->xClose(&t->file);
	sqlite3_free(t);
}
