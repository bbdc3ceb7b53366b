/*
 * joinfilter/settings.h - the automatic join filter's settings, constants and
 * hooks: what the user sets and what _PG_init installs (joinfilter/settings.c,
 * load.c, plan.c's planner hook, link.c's ExecutorStart hook, shard_hint.c's
 * ExecutorRun hook).
 *
 * Include after postgres.h.
 */
#ifndef AMQ_JF_SETTINGS_H
#define AMQ_JF_SETTINGS_H

#include "utils/memutils.h"

#define AMQ_JF_BUILD_NAME "AmqJoinFilterBuild"
#define AMQ_JF_PROBE_NAME "AmqJoinFilterProbe"

/* False-positive rate every join filter is sized for. */
#define AMQ_JF_FPR 0.01
/* A probe decides whether its filter pays over windows of this many probes
 * ... */
#define AMQ_JF_CHECK_ROWS 10000
/* ... and switches itself off when more than this share of a window passed. */
#define AMQ_JF_MAX_RUNTIME_PASS 0.9
/* A switched-off probe passes this many rows on unprobed, then probes one
 * more window (the filter may pay on later rows: a table stored in key order);
 * each further switch-off doubles the stretch, so a filter that never pays
 * probes O(log rows) windows in all. */
#define AMQ_JF_OFF_ROWS (25 * AMQ_JF_CHECK_ROWS)
/* A filter whose measured false-positive rate exceeds this when its build
 * ends (the inner side held far more keys than estimated) is not used. */
#define AMQ_JF_MAX_BUILT_FPR 0.2

/* ---- settings (joinfilter/settings.c) ---- */

extern bool amq_jf_enabled;
extern int amq_jf_max_kb;	    /* per-filter memory cap, in kB */
extern double amq_jf_max_pass_rate; /* build when expected pass rate <= this */
extern bool amq_jf_remote_enabled;
extern int amq_jf_remote_max_kb;       /* largest remote filter sent, in kB */
extern int amq_jf_remote_max_set_keys; /* most keys sent as an exact set */
/* Its bound: the set crosses as array text on every cursor open, and the
 * shard plans one index probe per key. */
#define AMQ_JF_REMOTE_MAX_SET_KEYS 100000
/* Its bound: the filter crosses as hex text (2 bytes a byte, plus "\x"),
 * which must stay under MaxAllocSize (1GB). */
#define AMQ_JF_REMOTE_MAX_KB ((int)((MaxAllocSize / 2 - 2) / 1024))

/* The oldest amq the remote servers run (amq.join_filter_remote_shard_version,
 * this release's by default): a remote scan gets only what that version has.
 * Shards probe shipped filters with AMQ_JF_SHARD_PROBE from
 * AMQ_JF_SHARD_PROBE_SINCE on (joinfilter/shard_probe.c), with
 * bloom_contains(bloom, anycompatible) before. */
extern char *amq_jf_remote_shard_version;
#define AMQ_JF_SHARD_PROBE "amq_join_filter_probe"
#define AMQ_JF_SHARD_PROBE_SINCE "0.5.0"
/* Whether the shards have AMQ_JF_SHARD_PROBE. */
bool amq_jf_shards_judge(void);

/* The filter a remote scan gets (amq.join_filter_remote_filter): a blocked
 * Bloom filter, or a binary fuse filter, smaller at a lower rate but slower
 * to build, which shards read from AMQ_JF_FUSE_SINCE on (the fuse type and
 * AMQ_JF_SHARD_PROBE's overload for it). */
typedef enum amq_jf_remote_kind { AMQ_JF_REMOTE_BLOOM, AMQ_JF_REMOTE_FUSE } amq_jf_remote_kind;
extern int amq_jf_remote_filter;
#define AMQ_JF_FUSE_SINCE "0.6.0"
/* Whether remote scans planned now get binary fuse filters: the setting
 * asks for them and the shards are AMQ_JF_FUSE_SINCE or later. */
bool amq_jf_ship_fuse(void);

/* Defines the settings, registers the custom scans, installs the hooks
 * (called once, by _PG_init). */
void amq_jf_init(void);

/* ---- whether the session chose the join filter (joinfilter/load.c) ---- */

/* Whether the library was loaded by a preload setting or LOAD, not only by
 * a call of one of its functions: the planner adds join filters only then. */
extern bool amq_jf_chosen;

/* Sets amq_jf_chosen by how the library is being loaded, and installs the
 * ProcessUtility hook that sets it on a later LOAD of amq. */
void amq_jf_install_load_hook(void);

/* ---- the planner hook (joinfilter/plan.c) ---- */

/* Installs the planner hook, chaining any hook already set. */
void amq_jf_install_planner_hook(void);

/* Whether this backend has planned a join filter: until it has, and outside
 * parallel workers (whose plans come from their leader), no executor tree
 * holds one and the ExecutorStart hook has nothing to link. */
extern bool amq_jf_planned_any;

/* ---- linking at executor start (joinfilter/link.c) ---- */

/* Installs the ExecutorStart hook, chaining any hook already set. */
void amq_jf_install_executor_hook(void);

/* ---- the hint for a shard behind (joinfilter/shard_hint.c) ---- */

/* Installs the ExecutorRun hook, chaining any hook already set. */
void amq_jf_install_run_hook(void);

#endif
