/*
 * joinfilter/remote.c - a join filter shipped into a postgres_fdw scan: at
 * plan time, whether a finished ForeignScan can take one for its key column,
 * and the edit that gives it one: a new executor parameter of type bloom in
 * the scan's parameter list, and the condition
 *     ((($n::pg_catalog.bytea IS NULL) OR CASE WHEN (SELECT a.atttypid
 *       OPERATOR(pg_catalog.=) ANY ('{T...}'::pg_catalog.oid[])
 *       FROM pg_catalog.pg_attribute a
 *       WHERE a.attrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass('rel')
 *       AND a.attname OPERATOR(pg_catalog.=) 'col')
 *       THEN S.P($n::pg_catalog.bytea::S.bloom, col) ELSE true END))
 * (a text key as col::pg_catalog.text COLLATE pg_catalog."C": bytewise, as
 * the deterministic collation of the join compares, whatever the remote
 * column's collation; and a cast that exists for a remote column of any
 * type, so that the condition parses even where the check fails; the
 * filter goes as bytea text, which bloom_out's hex is, and is cast where it
 * is probed, so that a shard whose filter parameter is NULL, sent only a set
 * or a range, folds the condition away without loading amq's library)
 * and, for the exact set of the inner keys and (for a type without a
 * collation) their range,
 *     AND (($s::T1[] IS NULL) OR (col OPERATOR(pg_catalog.=) ANY ($s::T1[])
 *       AND G))
 *     AND (($lo::T1 IS NULL) OR (col OPERATOR(pg_catalog.>=) $lo::T1 AND
 *       col OPERATOR(pg_catalog.<=) $hi::T1 AND G))
 * and, for an asynchronous scan of a partition by the key (no probe may
 * skip it; amq_jf_remote_attach_skip)
 *     AND ($k::pg_catalog.bool IS NOT TRUE)
 * (T1 the inner key's type; G the same type check as an InitPlan that
 * raises, through an int4 cast of its message, where the remote column's
 * type is not one that compares as the local one: a bare column, which an
 * index can use, relies on postgres_fdw's assumption that the types match,
 * so where they do not the query fails instead of missing rows; a number's
 * set and range have no G, since every remote column that compares with a
 * number compares by value)
 * added to its Remote SQL, where S is amq's schema here (postgres_fdw names
 * every shippable extension function with its local schema, so every server
 * needs amq in the same one), P the probe (amq_join_filter_probe, which
 * switches itself off on the shard where it does not pay, or bloom_contains
 * for shards older than amq 0.5.0: amq.join_filter_remote_shard_version)
 * and T the OIDs of the remote types that hash as the local column's type
 * does (built-in types have the same OIDs on every server). The
 * builder of the hash join sets the parameter when its build completes
 * (joinfilter/build.c); until then, or when the filter grew too large, it is
 * NULL and the shard's planner folds the condition away. A build sends
 * either the set (at most amq.join_filter_remote_max_set_keys keys; an empty
 * one fetches nothing) or the range and the Bloom filter, the other
 * parameters NULL; the shard's custom plan (postgres_fdw's statements are
 * unnamed) sees the values.
 *
 * Nothing asks the shard anything: amq opens no connection of its own. The
 * user's `extensions 'amq'` on the server says that amq is installed there
 * (postgres_fdw's own contract; a shard without it fails the query with its
 * own error). The remote column's type is checked on the shard, once per
 * scan (the subquery is an InitPlan there): postgres_fdw assumes that a
 * foreign column has its remote column's type, and where that does not hold
 * (a remote char(n) or timestamptz behind a local text, a domain) the
 * Bloom condition passes every row instead of probing values that hash
 * otherwise, so it never drops a row the coordinator's join would match;
 * the set and the range raise G's error instead (the keys' values would
 * compare otherwise), and a remote column that no operator compares with
 * the key's type (text behind a local bigint) fails the statement's parse on
 * the shard, as postgres_fdw's own conditions on it do.
 * A plan made under amq.join_filter_remote_max_set_keys = 0 has neither
 * condition (and a set or range planned sends NULL while it is 0).
 * Every name in it is schema-qualified, so no search_path on the shard can
 * redirect it. It calls only pg_catalog and what the shards' amq has: the
 * probe above and format version 1, which every release reads.
 *
 * The scan's plan is postgres_fdw's, edited after the fact: what this relies
 * on is checked here, and the scan is left alone when anything differs.
 * postgres_fdw (15 to 19) keeps in fdw_private the Remote SQL (a String),
 * the retrieved attributes (an integer List) and the fetch size (an
 * Integer), and a fourth item only for scans of joins and aggregates
 * (scanrelid 0), which are not edited. It reads the SQL and evaluates
 * fdw_exprs, in $n order, at every cursor open (BeginForeignScan,
 * create_cursor), and sends each value as text. A base table's Remote SQL is
 * "SELECT ... FROM rel[ WHERE (c1) AND (c2)...][ ORDER BY ...]" (no LIMIT,
 * and no FOR UPDATE without row marks), with string literals whose quotes
 * are doubled, so a scanner that tracks quotes and parentheses finds its top
 * level WHERE and ORDER BY.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

#include "joinfilter/remote.h"
#include "joinfilter/settings.h"

/* Key types whose portable hashing (docs/HASHING.md) treats the values that
 * their hash equality calls equal as equal, grouped so that types of one
 * group hash equal values alike: integers and numeric; text and varchar. */
typedef enum portable_group {
	PORTABLE_NONE,
	PORTABLE_NUMBER,
	PORTABLE_TEXT,
	PORTABLE_BYTEA,
	PORTABLE_UUID,
	PORTABLE_DATE,
	PORTABLE_TIMESTAMP,
} portable_group;

/* Each type a remote filter may key on: its OID here, its qualified name
 * (which resolves to the same built-in type on every server, whatever its
 * search_path), and its group. */
static const struct portable_type {
	Oid type;
	const char *name;
	portable_group group;
} portable_types[] = {
    {INT2OID, "pg_catalog.int2", PORTABLE_NUMBER},
    {INT4OID, "pg_catalog.int4", PORTABLE_NUMBER},
    {INT8OID, "pg_catalog.int8", PORTABLE_NUMBER},
    {NUMERICOID, "pg_catalog.numeric", PORTABLE_NUMBER},
    {TEXTOID, "pg_catalog.text", PORTABLE_TEXT},
    {VARCHAROID, "pg_catalog.varchar", PORTABLE_TEXT},
    {BYTEAOID, "pg_catalog.bytea", PORTABLE_BYTEA},
    {UUIDOID, "pg_catalog.uuid", PORTABLE_UUID},
    {DATEOID, "pg_catalog.date", PORTABLE_DATE},
    {TIMESTAMPOID, "pg_catalog.timestamp", PORTABLE_TIMESTAMP},
};

/* The group of a local type (a domain: its base type's). */
static portable_group group_of_type(Oid type)
{
	Oid base = getBaseType(type);

	for (size_t i = 0; i < lengthof(portable_types); i++)
		if (portable_types[i].type == base)
			return portable_types[i].group;
	return PORTABLE_NONE;
}

/* The SQL array of the OIDs of group's types: '{21,23,20,1700}'::pg_catalog.oid[].
 * Built-in types keep their OIDs on every server and release; an OID is read
 * without the parser that a type's name would need (once per type, on every
 * statement the shard parses). */
static char *group_types_sql(portable_group group)
{
	StringInfoData buf;
	const char *sep = "";

	initStringInfo(&buf);
	appendStringInfoString(&buf, "'{");
	for (size_t i = 0; i < lengthof(portable_types); i++)
		if (portable_types[i].group == group) {
			appendStringInfo(&buf, "%s%u", sep, portable_types[i].type);
			sep = ",";
		}
	appendStringInfoString(&buf, "}'::pg_catalog.oid[]");
	return buf.data;
}

/* See joinfilter/remote.h. */
bool amq_jf_remote_key_types(Oid outer_type, Oid inner_type, Oid collation)
{
	portable_group group = group_of_type(outer_type);

	if (group == PORTABLE_NONE || group != group_of_type(inner_type))
		return false;
	/* Text under a deterministic collation is equal only when bytewise equal. */
	return group != PORTABLE_TEXT ||
	       (OidIsValid(collation) && get_collation_isdeterministic(collation));
}

/* See joinfilter/remote.h. */
bool amq_jf_remote_key_ordered(Oid type)
{
	portable_group group = group_of_type(type);

	return group != PORTABLE_NONE && group != PORTABLE_TEXT;
}

/* The qualified name of a portable type (a domain's base type). */
static const char *type_name(Oid type)
{
	Oid base = getBaseType(type);

	for (size_t i = 0; i < lengthof(portable_types); i++)
		if (portable_types[i].type == base)
			return portable_types[i].name;
	elog(ERROR, "remote join filter on a key of type %s", format_type_be(type));
}

/* The value of option name among a foreign server's, table's or column's
 * options, or NULL. */
static char *option_value(List *options, const char *name)
{
	ListCell *lc;

	foreach (lc, options)
		if (strcmp(lfirst_node(DefElem, lc)->defname, name) == 0)
			return defGetString(lfirst(lc));
	return NULL;
}

/* Whether server is a postgres_fdw server whose extensions option lists amq:
 * the user's permission to ship amq's functions there. */
static bool server_ships_amq(ForeignServer *server)
{
	ForeignDataWrapper *fdw = GetForeignDataWrapper(server->fdwid);
	char *handler = OidIsValid(fdw->fdwhandler) ? get_func_name(fdw->fdwhandler) : NULL;
	char *extensions = option_value(server->options, "extensions");
	List *names = NIL;
	ListCell *lc;

	if (handler == NULL || strcmp(handler, "postgres_fdw_handler") != 0 || extensions == NULL)
		return false;
	if (!SplitIdentifierString(pstrdup(extensions), ',', &names))
		return false;
	foreach (lc, names)
		if (strcmp(lfirst(lc), "amq") == 0)
			return true;
	return false;
}

/* Whether scan's fdw_private has the shape postgres_fdw gives a base table's
 * scan (see the header). */
static bool base_scan_shape(ForeignScan *scan)
{
	List *private = scan->fdw_private;

	return scan->scan.scanrelid > 0 && list_length(private) == 3 &&
	       IsA(linitial(private), String) &&
	       strncmp(strVal(linitial(private)), "SELECT ", 7) == 0 &&
	       (lsecond(private) == NIL || IsA(lsecond(private), IntList)) &&
	       IsA(lthird(private), Integer);
}

/* The column of the scanned table that output column attno of scan is, or
 * 0 when it is not a plain user column. */
static AttrNumber scan_column(ForeignScan *scan, AttrNumber attno)
{
	TargetEntry *tle;
	Var *var;

	if (attno < 1 || attno > list_length(scan->scan.plan.targetlist))
		return 0;
	tle = list_nth_node(TargetEntry, scan->scan.plan.targetlist, attno - 1);
	var = (Var *)tle->expr;
	if (var != NULL && IsA(var, Var) && var->varno == INDEX_VAR && var->varattno >= 1 &&
	    var->varattno <= list_length(scan->fdw_scan_tlist))
		var = (Var *)list_nth_node(TargetEntry, scan->fdw_scan_tlist, var->varattno - 1)
			  ->expr;
	if (var == NULL || !IsA(var, Var) || var->varno != (int)scan->scan.scanrelid ||
	    var->varattno < 1 || var->varlevelsup != 0)
		return 0;
	return var->varattno;
}

/*
 * The exact set and the range compare the bare column, as postgres_fdw's own
 * conditions do, so that an index can serve them: the check that a remote
 * column of group's types compares as the local one, true or an error (a
 * char(n) behind a text raises instead of missing rows). NULL for a number,
 * which needs none: a remote column that pg_catalog's operators compare with
 * a number at all (an integer, numeric, float or oid) compares by value, and
 * a value the coordinator reads back as a key compares equal to it there too.
 */
static char *guard_sql(portable_group group, const char *schema, const char *table,
		       const char *column)
{
	const char *relation = quote_qualified_identifier(schema, table);

	if (group == PORTABLE_NUMBER)
		return NULL;
	return psprintf(
	    "(SELECT CASE WHEN pg_catalog.bool_and(a.atttypid OPERATOR(pg_catalog.=) ANY (%s))"
	    " THEN true ELSE pg_catalog.concat(%s)::pg_catalog.int4 IS NULL END"
	    " FROM pg_catalog.pg_attribute a"
	    " WHERE a.attrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s)"
	    " AND a.attname OPERATOR(pg_catalog.=) %s)",
	    group_types_sql(group),
	    quote_literal_cstr(psprintf(
		"amq join filter: the remote column %s of %s does not have the type of its "
		"foreign table's column; declare the foreign column with its remote type, or "
		"SET amq.join_filter_remote_max_set_keys = 0",
		quote_identifier(column), relation)),
	    quote_literal_cstr(relation), quote_literal_cstr(column));
}

/* See joinfilter/remote.h. */
bool amq_jf_remote_target(PlannedStmt *stmt, ForeignScan *scan, AttrNumber attno, bool selective,
			  amq_jf_remote_scan *target)
{
	AttrNumber column = scan_column(scan, attno);
	RangeTblEntry *rte;
	ForeignTable *table;
	char *remote_schema, *remote_table, *remote_column;
	portable_group group;

	if (column == 0 || scan->operation != CMD_SELECT || stmt->commandType != CMD_SELECT ||
	    stmt->rowMarks != NIL || !base_scan_shape(scan))
		return false;
	rte = rt_fetch(scan->scan.scanrelid, stmt->rtable);
	if (rte->rtekind != RTE_RELATION || !server_ships_amq(GetForeignServer(scan->fs_server)))
		return false;
	/* Without statistics of the key column (autovacuum never analyzes a
	 * foreign table) the planner's pass rate is a guess: ship, since a
	 * filter that drops nothing costs one probe per remote row, and one
	 * that drops rows saves sending them. */
	if (!selective && SearchSysCacheExists3(STATRELATTINH, ObjectIdGetDatum(rte->relid),
						Int16GetDatum(column), BoolGetDatum(false)))
		return false;
	group = group_of_type(get_atttype(rte->relid, column));
	if (group == PORTABLE_NONE)
		return false;
	/* The remote names, as postgres_fdw deparses them. */
	table = GetForeignTable(rte->relid);
	remote_schema = option_value(table->options, "schema_name");
	remote_table = option_value(table->options, "table_name");
	remote_column = option_value(GetForeignColumnOptions(rte->relid, column), "column_name");
	if (remote_schema == NULL)
		remote_schema = get_namespace_name(get_rel_namespace(rte->relid));
	if (remote_table == NULL)
		remote_table = get_rel_name(rte->relid);
	if (remote_column == NULL)
		remote_column = get_attname(rte->relid, column, false);
	target->scan = scan;
	target->relid = rte->relid;
	target->column = column;
	target->column_sql = pstrdup(quote_identifier(remote_column));
	target->type_check_sql = psprintf(
	    "(SELECT a.atttypid OPERATOR(pg_catalog.=) ANY (%s) FROM pg_catalog.pg_attribute a"
	    " WHERE a.attrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%s)"
	    " AND a.attname OPERATOR(pg_catalog.=) %s)",
	    group_types_sql(group),
	    quote_literal_cstr(quote_qualified_identifier(remote_schema, remote_table)),
	    quote_literal_cstr(remote_column));
	target->guard_sql = guard_sql(group, remote_schema, remote_table, remote_column);
	target->text = group == PORTABLE_TEXT;
	target->label = quote_qualified_identifier(
	    get_namespace_name(get_rel_namespace(rte->relid)), get_rel_name(rte->relid));
	return true;
}

#if PG_VERSION_NUM < 160000
/* The schema of extension extension_oid (16 exports this function; 15 keeps
 * it static in extension.c). */
static Oid get_extension_schema(Oid extension_oid)
{
	Relation rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple tuple;
	Oid schema = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
		    ObjectIdGetDatum(extension_oid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		schema = ((Form_pg_extension)GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return schema;
}
#endif

/* See joinfilter/remote.h. */
Oid amq_jf_filter_type(const char *kind, char **schema)
{
	Oid extension = get_extension_oid("amq", true);
	Oid namespace;

	if (!OidIsValid(extension))
		return InvalidOid;
	namespace = get_extension_schema(extension);
	*schema = pstrdup(quote_identifier(get_namespace_name(namespace)));
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum(kind),
			       ObjectIdGetDatum(namespace));
}

/*
 * Where a base table's Remote SQL has its top-level " WHERE " (*where, or
 * -1) and its top-level " ORDER BY " (*order_by, or its length): outside
 * quotes (doubled inside, so each quote toggles) and parentheses.
 */
static void find_clauses(const char *sql, int *where, int *order_by)
{
	int depth = 0;
	char quote = 0;
	int len = (int)strlen(sql);

	*where = -1;
	*order_by = len;
	for (int i = 0; i < len; i++) {
		char c = sql[i];

		if (quote != 0) {
			if (c == quote)
				quote = 0;
		} else if (c == '\'' || c == '"')
			quote = c;
		else if (c == '(')
			depth++;
		else if (c == ')')
			depth--;
		else if (depth == 0 && *where < 0 && strncmp(sql + i, " WHERE ", 7) == 0)
			*where = i;
		else if (depth == 0 && strncmp(sql + i, " ORDER BY ", 10) == 0) {
			*order_by = i;
			return;
		}
	}
}

/* Appends executor parameter paramid of type to scan's fdw_exprs; returns
 * its number there ($n). */
static int add_param(ForeignScan *scan, int paramid, Oid type)
{
	Param *param = makeNode(Param);

	param->paramkind = PARAM_EXEC;
	param->paramid = paramid;
	param->paramtype = type;
	param->paramtypmod = -1;
	param->paramcollid = InvalidOid;
	param->location = -1;
	scan->fdw_exprs = lappend(scan->fdw_exprs, param);
	scan->scan.plan.extParam = bms_add_member(scan->scan.plan.extParam, paramid);
	scan->scan.plan.allParam = bms_add_member(scan->scan.plan.allParam, paramid);
	return list_length(scan->fdw_exprs);
}

/* See joinfilter/remote.h. */
int amq_jf_remote_attach(PlannedStmt *stmt, const amq_jf_remote_scan *target,
			 const amq_jf_remote_params *params, Oid filter_type,
			 const char *amq_schema)
{
	ForeignScan *scan = target->scan;
	const char *sql = strVal(linitial(scan->fdw_private));
	const char *type = type_name(params->key_type);
	const char *guard = target->guard_sql ? psprintf(" AND %s", target->guard_sql) : "";
	int n, where, order_by;
	StringInfoData buf;

	n = add_param(scan, params->bloom, filter_type);
	find_clauses(sql, &where, &order_by);
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, sql, order_by);
	appendStringInfo(&buf,
			 "%s((($%d::pg_catalog.bytea IS NULL) OR CASE WHEN %s THEN "
			 "%s.%s($%d::pg_catalog.bytea::%s.%s, %s%s) ELSE true END))",
			 where >= 0 ? " AND " : " WHERE ", n, target->type_check_sql, amq_schema,
			 params->fuse || amq_jf_shards_judge() ? AMQ_JF_SHARD_PROBE
							       : "bloom_contains",
			 n, amq_schema, params->fuse ? "fuse" : "bloom", target->column_sql,
			 target->text ? "::pg_catalog.text COLLATE pg_catalog.\"C\"" : "");
	if (params->set >= 0) {
		char *set =
		    psprintf("$%d::%s[]",
			     add_param(scan, params->set, get_array_type(params->key_type)), type);

		appendStringInfo(&buf,
				 " AND ((%s IS NULL) OR (%s OPERATOR(pg_catalog.=) ANY (%s)%s))",
				 set, target->column_sql, set, guard);
	}
	if (params->lo >= 0) {
		char *lo = psprintf("$%d::%s", add_param(scan, params->lo, params->key_type), type);
		char *hi = psprintf("$%d::%s", add_param(scan, params->hi, params->key_type), type);

		appendStringInfo(&buf,
				 " AND ((%s IS NULL) OR (%s OPERATOR(pg_catalog.>=) %s AND %s "
				 "OPERATOR(pg_catalog.<=) %s%s))",
				 lo, target->column_sql, lo, target->column_sql, hi, guard);
	}
	appendStringInfoString(&buf, sql + order_by);
	linitial(scan->fdw_private) = makeString(buf.data);
	return n;
}

/* See joinfilter/remote.h. The scan has the WHERE clause attach gave it. */
void amq_jf_remote_attach_skip(ForeignScan *scan, int paramid)
{
	const char *sql = strVal(linitial(scan->fdw_private));
	int n = add_param(scan, paramid, BOOLOID);
	int where, order_by;
	StringInfoData buf;

	find_clauses(sql, &where, &order_by);
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, sql, order_by);
	appendStringInfo(&buf, " AND ($%d::pg_catalog.bool IS NOT TRUE)", n);
	appendStringInfoString(&buf, sql + order_by);
	linitial(scan->fdw_private) = makeString(buf.data);
}
