/*
 * joinfilter/remote.h - filters shipped to postgres_fdw scans: at plan time
 * which scans may take one and the edit of their Remote SQL (remote.c); at
 * run time the builder's part that builds and sends them (ship.c).
 *
 * Include after postgres.h.
 */
#ifndef AMQ_JF_REMOTE_H
#define AMQ_JF_REMOTE_H

#include "joinfilter/nodes.h"

/* ---- filters shipped to postgres_fdw scans (remote.c, ship.c) ---- */

/* Whether a hash clause (outer = inner) with these key types and collation
 * may get a remote filter: both types hash under amq's portable hashing as
 * the operator compares (integers and numeric, text and varchar under a
 * deterministic collation, bytea, uuid, date, timestamp). */
bool amq_jf_remote_key_types(Oid outer_type, Oid inner_type, Oid collation);

/* Whether keys of type (a portable one) may be sent as a range: they have no
 * collation, so every server orders them alike (not text). */
bool amq_jf_remote_key_ordered(Oid type);

/* A postgres_fdw scan that can take a remote filter, and what its Remote
 * SQL needs for it. */
typedef struct amq_jf_remote_scan {
	ForeignScan *scan;
	Oid relid;	      /* the foreign table */
	AttrNumber column;    /* the key's column there */
	char *column_sql;     /* the key's remote column, quoted */
	char *type_check_sql; /* whether the remote column hashes alike, SQL */
	char *guard_sql;      /* true, or an error where it does not compare alike,
			       * SQL; NULL for numbers, which always do */
	bool text;	      /* probe col::text under COLLATE "C" */
	char *label;	      /* the local table, for EXPLAIN */
} amq_jf_remote_scan;

/*
 * Whether scan, a finished ForeignScan of stmt, can take a remote filter on
 * its output column attno: a postgres_fdw scan of a base table in a plain
 * SELECT, on a server whose extensions option lists amq, of a key column of
 * a portable type; and either the planner expects the join to be selective,
 * or the key column has no statistics here, so that its estimate is a guess.
 * Fills target. Asks no server anything.
 */
bool amq_jf_remote_target(PlannedStmt *stmt, ForeignScan *scan, AttrNumber attno, bool selective,
			  amq_jf_remote_scan *target);

/* amq's type named kind ("bloom", "fuse") in this database, with amq's
 * schema (quoted) in *schema; or InvalidOid (amq is loaded but not created
 * here, or its version has no such type). */
Oid amq_jf_filter_type(const char *kind, char **schema);

/* Gives target's scan the remote filter of executor parameters params (the
 * filter's of type filter_type, bloom or fuse as params says, in
 * amq_schema): appends the parameters to its fdw_exprs and the conditions
 * to its Remote SQL. Returns the filter's parameter's number there ($n). */
int amq_jf_remote_attach(PlannedStmt *stmt, const amq_jf_remote_scan *target,
			 const amq_jf_remote_params *params, Oid filter_type,
			 const char *amq_schema);

/* Gives a scan amq_jf_remote_attach edited the condition ($n::bool IS NOT
 * TRUE) on executor parameter paramid, a new one of its list: set true, the
 * shard's custom plan folds the statement to a scan of nothing (an
 * asynchronous partition that no key of the build can reach); NULL until
 * the build completes, and false, change nothing. */
void amq_jf_remote_attach_skip(ForeignScan *scan, int paramid);

/* The builder's remote filters (joinfilter/ship.c): made from the plan's
 * amq_jf_remote_plan *s, started, fed each inner row, reset for a rebuild,
 * published at the end of the input, ended, and shown by EXPLAIN. */
void amq_jf_ship_create(amq_jf_build_state *state, List *remote);
void amq_jf_ship_begin(amq_jf_build_state *state, ListCell *exprs, List *list);
void amq_jf_ship_add(amq_jf_build_state *state, ExprContext *econtext);
void amq_jf_ship_reset(amq_jf_build_state *state);
void amq_jf_ship_publish(amq_jf_build_state *state);
void amq_jf_ship_explain(amq_jf_build_state *state, ListCell *exprs, List *list, List *context,
			 ExplainState *es);

/* The ExecutorStart hook's part: each remote filter finds its scans' states
 * among scans (PlanState *). */
void amq_jf_ship_link(amq_jf_build_state *state, List *scans);

#endif
