/*
 * joinfilter/shard.c - asks a postgres_fdw server, at plan time, what a remote
 * join filter needs to know before it may go into a scan's Remote SQL: the
 * schema amq is installed in there, when the remote user may use it (a
 * shard without amq, or where that user may not call bloom_contains, would
 * fail on the shipped condition, and the query must never fail because of
 * amq) and
 * the remote type of the key column (a filter built from local int8 keys
 * finds nothing in a remote text column).
 *
 * postgres_fdw's own connections cannot be borrowed (PostgreSQL 16 and later
 * build it with hidden symbols), so this keeps one libpq connection per
 * server and user mapping for the life of the backend, made from the same
 * options postgres_fdw connects with and held to its rule for non-superusers:
 * the user mapping must give a password, and the server must have asked for
 * it, unless a superuser set password_required 'false'. Anything that goes
 * wrong (the server is down, refuses us, or the query fails) only means no
 * remote filter; postgres_fdw reports its own errors when the query runs.
 * Nothing is cached but the connection: every plan asks again, one round
 * trip per foreign scan, so a shard that installs or drops amq is seen at
 * once. A server with keep_connections 'off' gets its connection closed
 * after each question, as postgres_fdw closes its own at transaction end.
 */
#include "postgres.h"

#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "libpq-fe.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "joinfilter/joinfilter.h"

/* One open connection, to server serverid as user userid. */
typedef struct shard_connection {
	Oid serverid;
	Oid userid;
	PGconn *conn;
	struct shard_connection *next;
} shard_connection;

static shard_connection *connections;

/* Whether keyword is a libpq connection option that postgres_fdw passes on
 * (it leaves out debug options and replication). */
static bool is_libpq_option(const char *keyword)
{
	PQconninfoOption *options = PQconndefaults();
	bool found = false;

	if (options == NULL)
		return false;
	for (PQconninfoOption *o = options; o->keyword != NULL && !found; o++)
		found = strcmp(o->keyword, keyword) == 0 && strchr(o->dispchar, 'D') == NULL &&
			strcmp(keyword, "replication") != 0;
	PQconninfoFree(options);
	return found;
}

/* Whether options hold keyword with a true boolean value (absent: dflt). */
static bool option_bool(List *options, const char *keyword, bool dflt)
{
	DefElem *option = amq_jf_option(options, keyword);

	return option != NULL ? defGetBoolean(option) : dflt;
}

/* Appends the libpq options among options to keywords and values at *n. */
static void add_options(List *options, const char **keywords, const char **values, int *n)
{
	ListCell *lc;

	foreach (lc, options) {
		DefElem *d = lfirst_node(DefElem, lc);

		if (is_libpq_option(d->defname)) {
			keywords[*n] = d->defname;
			values[*n] = defGetString(d);
			(*n)++;
		}
	}
}

/*
 * A new connection to server as user mapping um, or NULL when it cannot be
 * made or postgres_fdw's rule forbids it: a non-superuser's mapping must
 * hold a password that the server then asked for, unless the mapping says
 * password_required 'false' (which only a superuser may set).
 */
static PGconn *connect_shard(ForeignServer *server, UserMapping *um)
{
	bool password_rule =
	    !superuser_arg(um->userid) && option_bool(um->options, "password_required", true);
	int max = list_length(server->options) + list_length(um->options) + 4;
	const char **keywords = palloc(sizeof(char *) * max);
	const char **values = palloc(sizeof(char *) * max);
	int n = 0;
	PGconn *conn;

	if (password_rule && !amq_jf_option(um->options, "password"))
		return NULL;
	add_options(server->options, keywords, values, &n);
	add_options(um->options, keywords, values, &n);
	keywords[n] = "fallback_application_name";
	values[n++] = "amq";
	keywords[n] = "client_encoding";
	values[n++] = GetDatabaseEncodingName();
	if (!amq_jf_option(server->options, "connect_timeout")) {
		keywords[n] = "connect_timeout";
		values[n++] = "10";
	}
	keywords[n] = NULL;
	values[n] = NULL;
	conn = PQconnectdbParams(keywords, values, false);
	pfree(keywords);
	pfree(values);
	if (conn != NULL && (PQstatus(conn) != CONNECTION_OK ||
			     (password_rule && !PQconnectionUsedPassword(conn)))) {
		PQfinish(conn);
		conn = NULL;
	}
	return conn;
}

/* The user mapping postgres_fdw would use for userid on serverid, or NULL
 * when there is none (GetUserMapping would raise). */
static UserMapping *find_user_mapping(Oid userid, Oid serverid)
{
	if (!SearchSysCacheExists2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(userid),
				   ObjectIdGetDatum(serverid)) &&
	    !SearchSysCacheExists2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(InvalidOid),
				   ObjectIdGetDatum(serverid)))
		return NULL;
	return GetUserMapping(userid, serverid);
}

/* The open connection to serverid as userid, made on first use; NULL when
 * none can be made. */
static shard_connection *get_connection(Oid serverid, Oid userid)
{
	shard_connection *c;
	UserMapping *um;
	PGconn *conn;

	for (c = connections; c != NULL; c = c->next)
		if (c->serverid == serverid && c->userid == userid) {
			if (PQstatus(c->conn) == CONNECTION_OK)
				return c;
			PQreset(c->conn);
			return PQstatus(c->conn) == CONNECTION_OK ? c : NULL;
		}
	um = find_user_mapping(userid, serverid);
	if (um == NULL)
		return NULL;
	conn = connect_shard(GetForeignServer(serverid), um);
	if (conn == NULL)
		return NULL;
	c = MemoryContextAlloc(TopMemoryContext, sizeof(shard_connection));
	c->serverid = serverid;
	c->userid = userid;
	c->conn = conn;
	c->next = connections;
	connections = c;
	return c;
}

/* Closes connection c and drops it from the list. */
static void forget_connection(shard_connection *c)
{
	shard_connection **at = &connections;

	while (*at != c)
		at = &(*at)->next;
	*at = c->next;
	PQfinish(c->conn);
	pfree(c);
}

/* See joinfilter/joinfilter.h. */
bool amq_jf_shard_column(Oid serverid, Oid userid, const char *remote_table,
			 const char *remote_column, char **amq_schema, char **column_type)
{
	shard_connection *c = get_connection(serverid, userid);
	PGresult *res;
	char *query;
	bool found;

	if (c == NULL)
		return false;
	/* OFFSET 0 keeps the privilege checks from running on other schemas. */
	query = psprintf("SELECT a.nspname, (SELECT t.atttypid::pg_catalog.regtype::pg_catalog.text"
			 " FROM pg_catalog.pg_attribute t WHERE t.attrelid ="
			 " pg_catalog.to_regclass(%s) AND t.attname = %s AND NOT t.attisdropped)"
			 " FROM (SELECT n.oid, n.nspname FROM pg_catalog.pg_extension e"
			 " JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace"
			 " WHERE e.extname = 'amq' OFFSET 0) a"
			 " WHERE pg_catalog.has_schema_privilege(a.oid, 'USAGE')"
			 " AND pg_catalog.has_function_privilege(pg_catalog.format("
			 "'%%I.bloom_contains(%%I.bloom, anycompatible)', a.nspname, a.nspname),"
			 " 'EXECUTE')",
			 quote_literal_cstr(remote_table), quote_literal_cstr(remote_column));
	res = PQexec(c->conn, query);
	if (PQstatus(c->conn) != CONNECTION_OK) {
		/* The server closed a connection kept from before (a restart):
		 * one new try. */
		PQclear(res);
		PQreset(c->conn);
		res = PQstatus(c->conn) == CONNECTION_OK ? PQexec(c->conn, query) : NULL;
	}
	pfree(query);
	found = res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
		!PQgetisnull(res, 0, 0) && !PQgetisnull(res, 0, 1);
	if (found) {
		*amq_schema = pstrdup(PQgetvalue(res, 0, 0));
		*column_type = pstrdup(PQgetvalue(res, 0, 1));
	}
	PQclear(res);
	if (!option_bool(GetForeignServer(serverid)->options, "keep_connections", true))
		forget_connection(c);
	return found;
}
