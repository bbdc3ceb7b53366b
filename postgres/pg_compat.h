/*
 * pg_compat.h - what differs between the PostgreSQL major versions amq
 * builds against (15 to 19), in one place, so that the rest of postgres/ is
 * written once against the newest names. Each block says which version
 * changed what; the README's porting notes list the executor and heap-scan
 * assumptions that no header can check.
 *
 * Include after postgres.h (filter/filter.h and joinfilter/nodes.h do).
 */
#ifndef AMQ_PG_COMPAT_H
#define AMQ_PG_COMPAT_H

/* 16 moved VARDATA, VARSIZE and the other varlena macros to varatt.h. */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* 18 moved ExplainProperty* and friends to explain_format.h. */
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#endif

/* 19 gave PlanState.instrument its own type, NodeInstrumentation, which
 * keeps the counters a plan node had in Instrumentation (ntuples, ntuples2,
 * nfiltered1, nfiltered2) under the same names. */
#include "executor/instrument.h"
#if PG_VERSION_NUM >= 190000
typedef NodeInstrumentation amq_node_instrumentation;
#else
typedef Instrumentation amq_node_instrumentation;
#endif

/* 16 renamed the Parallel Hash build phases (same values). */
#if PG_VERSION_NUM < 160000
#define PHJ_BUILD_HASH_OUTER PHJ_BUILD_HASHING_OUTER
#endif

/* The join types that fill their inner side added since 15, as case labels
 * (empty where the version lacks them): right anti (16), right semi (18). */
#if PG_VERSION_NUM >= 160000
#define AMQ_CASE_JOIN_RIGHT_ANTI case JOIN_RIGHT_ANTI:
#else
#define AMQ_CASE_JOIN_RIGHT_ANTI
#endif
#if PG_VERSION_NUM >= 180000
#define AMQ_CASE_JOIN_RIGHT_SEMI case JOIN_RIGHT_SEMI:
#else
#define AMQ_CASE_JOIN_RIGHT_SEMI
#endif

/* The planner hook's arguments after the first four: 19 added an
 * ExplainState (NULL outside EXPLAIN), passed on as it came. */
#if PG_VERSION_NUM >= 190000
#define AMQ_PLANNER_MORE_PARAMS , ExplainState *es
#define AMQ_PLANNER_MORE_ARGS , es
#else
#define AMQ_PLANNER_MORE_PARAMS
#define AMQ_PLANNER_MORE_ARGS
#endif

/* The ExecutorRun hook's arguments after the first three: 18 dropped
 * execute_once. */
#if PG_VERSION_NUM >= 180000
#define AMQ_EXECUTOR_RUN_MORE_PARAMS
#define AMQ_EXECUTOR_RUN_MORE_ARGS
#else
#define AMQ_EXECUTOR_RUN_MORE_PARAMS , bool execute_once
#define AMQ_EXECUTOR_RUN_MORE_ARGS , execute_once
#endif

/* What stays outside: joinfilter/remote.c defines get_extension_schema()
 * for 15, which 16 exports (a function body, with the catalog scans it
 * needs). */

/*
 * 19's copyObject() casts its result with typeof_unqual when the server's
 * compiler had that (HAVE_TYPEOF_UNQUAL: gcc 14 and later in C23 mode, gcc
 * 15's default). It is a keyword of C23 only, and postgres/Makefile compiles
 * with -std=gnu11, where gcc 14 and later (and clang 19 and later, as c.h
 * already says for clang) spell it __typeof_unqual__.
 */
#if defined(HAVE_TYPEOF_UNQUAL) && !defined(__cplusplus) &&                                        \
    (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 202311L)
#undef typeof_unqual
#define typeof_unqual __typeof_unqual__
#endif

#endif
