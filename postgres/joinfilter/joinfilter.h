/*
 * joinfilter/joinfilter.h - the automatic join filter, all of it, for the
 * files that touch every part (plan.c, build.c, link.c).
 *
 * A planner hook (joinfilter/plan.c) gives an eligible hash join two
 * custom scan nodes: a builder under its Hash node, which adds each inner
 * tuple's join key to a blocked Bloom filter (joinfilter/build.c), and a
 * probe above the outer side's scan (above each partition's, for a
 * partitioned table), which drops the rows whose key the filter rules out
 * (joinfilter/probe.c); right above a sequential scan, the probes drop
 * rows inside the scan, a page at a time (joinfilter/sift.c). An
 * ExecutorStart hook (joinfilter/link.c) ties each probe to its builder,
 * and each builder to its hash join, in every executor tree. Where the
 * outer key reaches a postgres_fdw scan, the builder also builds a filter
 * with amq's portable hashing and sends it to the remote server inside the
 * scan's Remote SQL (joinfilter/remote.c, ship.c), where the remote server
 * probes it with amq_join_filter_probe (joinfilter/shard_probe.c), which
 * switches itself off where it does not pay, as the local probes do.
 *
 * By audience: settings.h (settings, constants, hooks), keys.h (key
 * hashing), nodes.h (the executor nodes and their plan), judge.h (whether a
 * filter pays), remote.h (the remote API).
 *
 * Include after postgres.h.
 */
#ifndef PG_JOIN_FILTER_H
#define PG_JOIN_FILTER_H

#include "joinfilter/keys.h"
#include "joinfilter/nodes.h"
#include "joinfilter/remote.h"
#include "joinfilter/settings.h"

#endif
