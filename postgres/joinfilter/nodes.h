/*
 * joinfilter/nodes.h - the join filter's executor nodes and what the planner
 * tells them: the typed plan (plan_data.c), the set and range of a build's
 * keys (key_set.c), the builder (build.c), the probe (probe.c) and its sift
 * of heap pages (sift.c); the probes' switch-off judge is in judge.h.
 *
 * Include after postgres.h.
 */
#ifndef AMQ_JF_NODES_H
#define AMQ_JF_NODES_H

#include "access/htup_details.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "port/atomics.h"
#include "storage/buf.h"
#include "utils/array.h"

#include "commands/explain.h"
#include "nodes/plannodes.h"

#include "amq.h"
#include "filter/filter.h"
#include "pg_compat.h"

#include "joinfilter/judge.h"
#include "joinfilter/keys.h"
#include "joinfilter/settings.h"

/* ---- what the planner tells the nodes (joinfilter/plan_data.c) ---- */

/* One key of a filter: its column in a probe's input (InvalidAttrNumber in
 * a builder's), its side's extended hash function, its form, and its hash
 * clause's collation. */
typedef struct amq_jf_key_plan {
	AttrNumber attno;
	Oid hash_proc;
	amq_jf_key_form form;
	Oid collation;
} amq_jf_key_plan;

/* A probe node: its filter, the pass rate the planner expected, its keys,
 * and above a scan of a partition the partition's constraint on its one key
 * (Var varno 1; NULL: none), by which it skips the scan when no key of the
 * build can meet it. */
typedef struct amq_jf_probe_plan {
	int filter_id;
	double pass;
	int nkeys;
	amq_jf_key_plan *keys;
	Node *partition_qual;
} amq_jf_probe_plan;

/* A local filter of a builder node (its inner keys are custom_exprs); one
 * whose probes may skip partitions also keeps its keys' set and range. */
typedef struct amq_jf_filter_plan {
	int id;
	uint64 capacity;
	int nkeys;
	amq_jf_key_plan *keys;
	bool collect_keys;
} amq_jf_filter_plan;

/* The executor parameters of one remote filter: its filter's (bloom, a
 * Bloom or, when fuse, a binary fuse filter), the exact set of its keys' (an
 * array of key_type) and their range's (lo and hi, of key_type; -1 for a
 * type whose order a shard may see otherwise). */
typedef struct amq_jf_remote_params {
	int bloom, set, lo, hi;
	Oid key_type; /* the inner key's type (a domain's base type) */
	bool fuse;    /* the filter is a binary fuse filter (amq_jf_ship_fuse) */
} amq_jf_remote_params;

/* A remote filter of a builder node: its executor parameters, the
 * plan_node_ids of the postgres_fdw scans it goes to, their EXPLAIN labels
 * ("table as $n"), their foreign tables and key columns (whose statistics
 * tell whether the range is worth sending), and, for an asynchronous scan
 * of a partition by the key, its skip parameter (a boolean: true scans
 * nothing) and the partition's constraint on the key (-1 and NULL for the
 * others). */
typedef struct amq_jf_remote_plan {
	int id;
	amq_jf_remote_params params;
	int nscans;
	int *scan_ids;
	char **labels;
	Oid *relids;
	AttrNumber *columns;
	int *skip_params;
	Node **partition_quals;
} amq_jf_remote_plan;

/* A builder node: amq_jf_filter_plan *s, then amq_jf_remote_plan *s. */
typedef struct amq_jf_build_plan {
	List *filters;
	List *remote;
} amq_jf_build_plan;

/* Each plan as a custom_private list, and back (palloc'd). */
List *amq_jf_probe_plan_write(const amq_jf_probe_plan *plan);
void amq_jf_probe_plan_read(List *private, amq_jf_probe_plan *plan);
List *amq_jf_build_plan_write(const amq_jf_build_plan *plan);
void amq_jf_build_plan_read(List *private, amq_jf_build_plan *plan);

/* ---- the builder node (joinfilter/build.c) ---- */

/*
 * The distinct keys of a build while there are few (joinfilter/key_set.c),
 * and their least and greatest: what a remote filter also sends, as an
 * array and a range that a shard's index can use. The values are copies
 * in their own memory, deduplicated by their amq hash and then by their
 * bytes (equal values of other bytes, numeric 1.0 and 1.00, may both stay:
 * harmless in a set).
 */
typedef struct amq_jf_key_set {
	Oid type;
	int16 typlen;
	bool typbyval;
	char typalign;
	FmgrInfo *cmp;	      /* the type's btree order, or NULL: no range */
	bool local;	      /* a local filter's (AMQ_JF_LOCAL_SET_KEYS) */
	int max_keys;	      /* amq.join_filter_remote_max_set_keys at the build */
	uint64 max_bytes;     /* amq.join_filter_remote_max_memory, half of hash_mem */
	MemoryContext values; /* the set's copies and arrays */
	Datum *keys;
	uint64 *hashes;
	int count, capacity;
	uint64 bytes;
	bool gave_up; /* more distinct keys or bytes than allowed */
	bool sealed;  /* compacted since the last add */
	bool ranged;  /* lo and hi hold the range (copies in the query's memory) */
	Datum lo, hi;
} amq_jf_key_set;

/* The most keys a local filter keeps to skip partitions by (each probe of
 * a partition tests its constraint on every key). */
#define AMQ_JF_LOCAL_SET_KEYS 1000

/* Sets set up for keys of type in a child context of parent, empty; a
 * local one (a local filter's, to skip partitions) keeps at most
 * AMQ_JF_LOCAL_SET_KEYS keys, a remote one
 * amq.join_filter_remote_max_set_keys. */
void amq_jf_key_set_init(amq_jf_key_set *set, Oid type, bool ordered, bool local,
			 MemoryContext parent);
/* Empties set for a new build, reading the settings again. */
void amq_jf_key_set_clear(amq_jf_key_set *set);
/* Adds one non-NULL key with its amq hash. */
void amq_jf_key_set_add(amq_jf_key_set *set, Datum value, uint64 hash);
/* Deduplicates the keys of a finished build; false when it gave the set up
 * (set->keys[0..count) are the distinct keys otherwise). */
bool amq_jf_key_set_seal(amq_jf_key_set *set);
/* The set as an array in its own memory (valid until it is cleared), or
 * NULL when the build gave it up. */
ArrayType *amq_jf_key_set_array(amq_jf_key_set *set);
/* The share of the rows of table relid whose column (of the keys' type) lies
 * in set's range, by the coordinator's statistics (most common values and
 * histogram); -1 when set has no range, the column has no statistics or
 * another type. */
double amq_jf_key_set_range_share(const amq_jf_key_set *set, Oid relid, AttrNumber column);

/*
 * Whether a partition can hold any key of a finished build
 * (joinfilter/partition_gate.c): its constraint on the key (plan.c's
 * partition_qual), compiled over key_slot, which holds one key in its
 * column, with an expression context of its own.
 */
typedef struct amq_jf_partition_gate {
	Node *qual;
	ExprState *check;
	TupleTableSlot *key_slot;
	ExprContext *econtext;
} amq_jf_partition_gate;

/* Compiles the constraint qual into gate, in the executor state estate. */
void amq_jf_partition_gate_init(amq_jf_partition_gate *gate, Node *qual, EState *estate);
/* Whether no key of a finished build's keys can lie in the partition: each
 * key tested when the set kept them all (an empty build refutes every
 * partition), else whether their range refutes the constraint. */
bool amq_jf_partition_gate_refutes(amq_jf_partition_gate *gate, amq_jf_key_set *keys);

/* One filter a builder fills: one hash clause of its hash join, or several
 * whose outer keys all reach the same places (one combined filter). */
typedef struct amq_jf_filter {
	int id;		       /* unique within its PlannedStmt */
	uint64 capacity;       /* keys the filter is sized for */
	int nkeys;	       /* hash clauses combined */
	amq_jf_key *keys;      /* inner types' extended hashes, collations */
	ExprState **key_exprs; /* the inner keys over the builder's input */
	amq_filter bloom;      /* bytes NULL until the first build starts */
	amq_probe contains;    /* bloom's probe on this CPU, set with its bytes */
	bool shared;	       /* bytes in the DSM of a Parallel Hash join, filled
				* by every participant (see amq_jf_filter_readiness) */
	bool published;	       /* private: complete for the current hash table;
				* shared: overfull computed for the current build */
	bool overfull;	       /* last build ended above AMQ_JF_MAX_BUILT_FPR */
	uint64 keys_added;     /* non-NULL keys, all builds; for a shared filter
				* after the leader's shutdown, all participants' */
	amq_jf_judge judge;    /* shared by the filter's probes */
	struct amq_jf_build_state *owner;
	/* A private filter whose probes may skip partitions: the set and range
	 * of its keys, and the partitions skipped (all loops). NULL: none. */
	amq_jf_key_set *keys_seen;
	uint64 partitions_skipped;
	uint64 builds; /* private builds published, so probes reuse decisions */
} amq_jf_filter;

/*
 * A filter shipped to postgres_fdw scans (joinfilter/remote.c): built from
 * the same inner rows with amq's portable hashing, as bloom_agg would build
 * it, sized for the distinct keys once the build ends, and handed to the
 * scans as the value of executor parameter paramid.
 */
typedef struct amq_jf_remote {
	int id;			     /* unique within its PlannedStmt, shared with local filters */
	amq_jf_remote_params params; /* the scans' parameters */
	ExprState *key_expr;	     /* the inner key over the builder's input */
	amq_pg_hasher hasher;
	int nscans;
	int *scan_ids;		       /* the scans' plan_node_ids */
	PlanState **scans;	       /* their states, set by the ExecutorStart hook */
	List *labels;		       /* String: "table as $n", per scan */
	Oid *relids;		       /* per scan: its foreign table */
	AttrNumber *columns;	       /* per scan: the key's column there */
	amq_builder builder;	       /* collects the current build's hashes */
	uint64 max_keys;	       /* distinct keys within the memory settings */
	const char *limit;	       /* the setting that sets max_keys, for EXPLAIN */
	bool building;		       /* builder holds a build in progress */
	bool too_large;		       /* this build's filter exceeds the size cap: sent NULL */
	uint64 keys_added;	       /* non-NULL keys, all builds */
	size_t size;		       /* bytes of the last filter sent; 0: none */
	struct varlena *value;	       /* the parameter's value, in the query's memory */
	amq_jf_key_set set;	       /* this build's exact set and range of keys */
	const char *sent;	       /* what the last build sent, for EXPLAIN */
	int *skip_params;	       /* per scan: its skip parameter, or -1 */
	amq_jf_partition_gate **gates; /* per scan: its partition's gate, or NULL */
	uint64 partitions_skipped;     /* scans sent true in a skip parameter */
} amq_jf_remote;

typedef struct amq_jf_build_state {
	CustomScanState css;
	int nfilters;
	amq_jf_filter *filters;
	int nremote;
	amq_jf_remote *remote;
	HashJoinState *join;		     /* set by the ExecutorStart hook; NULL: unlinked */
	pg_atomic_uint64 *shared_keys_added; /* per filter, in the DSM; or NULL */
	bool keys_reported;		     /* this participant's counts are in them */
	bool started;			     /* the current build has created its filters */
	bool finished;			     /* ... and has seen the end of its input */
} amq_jf_build_state;

extern const CustomScanMethods amq_jf_build_methods;
extern const CustomExecMethods amq_jf_build_exec_methods;

/* Whether a filter may drop rows now. */
typedef enum amq_jf_readiness {
	AMQ_JF_NOT_BUILT, /* not linked, or its build is not complete */
	AMQ_JF_USABLE,
	AMQ_JF_OVERFULL, /* built, but with far more keys than planned: useless */
} amq_jf_readiness;

/*
 * Whether f may drop rows now. It is usable when it is linked to its hash
 * join, that join has a hash table (one that decided to rebuild has none
 * until the rebuild starts), and the build of that table is complete and did
 * not end overfull. A private filter is complete when its own builder saw the
 * end of its input. A shared one (Parallel Hash) is complete when the join's
 * build barrier has moved past PHJ_BUILD_HASHING_INNER (16: PHJ_BUILD_HASH_INNER): every
 * participant that took part in the build has then added all the rows it read, and one that arrives
 * later finds the filter whole. A participant never probes with a partial filter.
 */
amq_jf_readiness amq_jf_filter_readiness(amq_jf_filter *f);

/* ---- the probe node (joinfilter/probe.c) ---- */

/*
 * The probes stacked right above one sequential scan of a heap table (the
 * first one's input is the scan, each next one's the probe below it) that
 * sift its pages (joinfilter/sift.c), and the page they sifted last.
 */
typedef struct amq_jf_sift {
	SeqScanState *scan;
	List *probes;	   /* amq_jf_probe_state *, lowest first */
	Buffer buffer;	   /* the page last sifted; InvalidBuffer: none */
	BlockNumber block; /* its block (a buffer may hold another page later) */
	int from;	   /* the scan's visible tuples from this index on were sifted */
} amq_jf_sift;

/*
 * EXPLAIN ANALYZE's counts live in the node's Instrumentation, which parallel
 * query sums over all participants: nfiltered1 counts rows removed, ntuples2
 * rows probed, nfiltered2 rows passed before the filter was usable. The rows
 * passed while switched off are the rest of the rows returned.
 */
typedef struct amq_jf_probe_state {
	CustomScanState css;
	int filter_id;
	int nkeys;
	AttrNumber *attnos;	     /* key columns in the input's rows */
	amq_jf_key *keys;	     /* outer types' extended hashes, collations */
	bool keys_allocate;	     /* hashing them may allocate: reset per row */
	amq_jf_filter *filter;	     /* set by the ExecutorStart hook; NULL: pass all */
	bool ready;		     /* filter found usable since the last rescan */
	amq_jf_judge *judge;	     /* the filter's; an unlinked probe's own */
	ExecProcNodeMtd probe_proc;  /* the node's own call, while it probes */
	bool ever_off;		     /* switched off at some point */
	amq_jf_sift *sift;	     /* the stack above a heap scan it is in, or NULL */
	AttrNumber *heap_attnos;     /* key columns in the scanned table, when it sifts */
	OffsetNumber sifted_through; /* it tested the last sifted page's tuples
				      * after its first row up to this offset;
				      * InvalidOffsetNumber: none */
	/* Above a scan of a partition: its constraint on the key (plan form),
	 * compiled into gate at the start, and whether this scan of it was
	 * skipped. */
	Node *partition_qual;
	amq_jf_partition_gate *gate;
	bool decided;	      /* whether to skip, since the start or rescan */
	bool skipped;	      /* ... and what it decided */
	uint64 decided_build; /* the filter's build it decided for; 0: none */
} amq_jf_probe_state;

/* amq_jf_probe_hash for keys whose hashing may allocate: in the probe's
 * per-row memory, reset after. */
uint64 amq_jf_probe_hash_allocating(amq_jf_probe_state *state, const Datum *values);

/* The Bloom input of a row's non-NULL key values. Inline: it runs for every
 * row of the scan. */
static inline uint64 amq_jf_probe_hash(amq_jf_probe_state *state, const Datum *values)
{
	if (state->keys_allocate)
		return amq_jf_probe_hash_allocating(state, values);
	return amq_jf_hash_keys(state->keys, state->nkeys, values);
}

/* Counts probed rows, of which passed passed, for EXPLAIN ANALYZE and in the
 * judge's window, which may end and switch the filter's probes off. */
void amq_jf_count_probes(amq_jf_probe_state *state, uint32 probed, uint32 passed);

/* Whether the probe drops rows now: its filter is usable and on. */
static inline bool amq_jf_probing(const amq_jf_probe_state *state)
{
	return state->ready && amq_jf_judge_on(state->judge);
}

/* ---- sifting a heap page inside its scan (joinfilter/sift.c) ---- */

/* Puts the probe state, whose input was just started, into the sift of the
 * stack it is in, starting one when input is a sequential scan of a heap
 * table: state->sift, and state->heap_attnos when its keys are columns of
 * that table (else it probes row by row, and still passes the sift on). */
void amq_jf_sift_join(amq_jf_probe_state *state, PlanState *input);

/* Where the row the scan below a probe of the stack just returned stands. */
typedef enum amq_jf_sift_place {
	AMQ_JF_ROW_SIFTED,	/* the probe sifted it: it passes, counted as probed */
	AMQ_JF_ROW_UNSIFTED,	/* the probe tests it by itself */
	AMQ_JF_ROW_STARTS_PAGE, /* ditto, and it is the first the stack sees of its
				 * page: amq_jf_sift_rest() once it is counted */
} amq_jf_sift_place;

/* Where the row the scan just returned stands for the probe state. */
amq_jf_sift_place amq_jf_sift_row(amq_jf_probe_state *state);

/* Sifts the rest of the scan's page, after the row it just returned, with
 * every probe of the stack that is probing now. */
void amq_jf_sift_rest(amq_jf_sift *sift);

/* Forgets the page last sifted: the scan is about to start again. */
void amq_jf_sift_restart(amq_jf_sift *sift);

extern const CustomScanMethods amq_jf_probe_methods;
extern const CustomExecMethods amq_jf_probe_exec_methods;

#endif
