/*
 * joinfilter/settings.c - what the automatic join filter sets up when the
 * library loads (module.c's _PG_init): its settings (those of the filters
 * shipped to postgres_fdw scans included), its two custom scan kinds
 * (registered by name, so that parallel workers can read plans holding them)
 * and its hooks.
 */
#include "postgres.h"

#include <float.h>

#include "utils/guc.h"
#include "utils/memutils.h"

#include "joinfilter/nodes.h"

bool amq_jf_enabled = true;
int amq_jf_max_kb = 32 * 1024;
double amq_jf_max_pass_rate = 0.5;
bool amq_jf_remote_enabled = true;
int amq_jf_remote_max_kb = 4 * 1024;
int amq_jf_remote_max_set_keys = 1000;

/* Defines the settings, registers the custom scans, installs the hooks. */
void amq_jf_init(void)
{
	DefineCustomBoolVariable(
	    "amq.join_filter", "Gives hash joins Bloom filters that drop outer rows at the scan.",
	    "Applies to inner, semi, right, right anti and right semi hash joins, Parallel Hash "
	    "ones included; amq.join_filter_remote also ships them to postgres_fdw scans.",
	    &amq_jf_enabled, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable(
	    "amq.join_filter_max_memory", "Largest Bloom filter one hash clause may get.",
	    "Hash joins whose inner side needs more, or more than work_mem times "
	    "hash_mem_multiplier, get no filter.",
	    &amq_jf_max_kb, 32 * 1024, 64, MAX_KILOBYTES, PGC_USERSET, GUC_UNIT_KB, NULL, NULL,
	    NULL);
	DefineCustomRealVariable(
	    "amq.join_filter_max_pass_rate",
	    "Builds a join filter when the planner expects at most this share of outer rows to "
	    "find a match.",
	    "Joins expected to run in batches get one up to 0.9; 1 filters every eligible join.",
	    &amq_jf_max_pass_rate, 0.5, 0.0, 1.0, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable(
	    "amq.join_filter_remote",
	    "Ships join filters into the Remote SQL of postgres_fdw scans on the probe side.",
	    "Needs amq.join_filter on, amq listed in the server's extensions option and amq "
	    "installed on the remote server.",
	    &amq_jf_remote_enabled, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable(
	    "amq.join_filter_remote_max_memory", "Largest join filter sent to a remote server.",
	    "A larger filter is not sent; it crosses the network as hex, twice its size, once "
	    "per remote query, so it stays under half of the 1GB a value may take. Its keys are "
	    "collected within work_mem times hash_mem_multiplier too.",
	    &amq_jf_remote_max_kb, 4 * 1024, 1, AMQ_JF_REMOTE_MAX_KB, PGC_USERSET, GUC_UNIT_KB,
	    NULL, NULL, NULL);
	DefineCustomIntVariable(
	    "amq.join_filter_remote_max_set_keys",
	    "Most distinct inner keys sent to a remote server as an exact set.",
	    "Up to this many, a remote scan gets col = ANY(the keys), which an index can use, "
	    "instead of the Bloom filter; 0 sends no keys, only Bloom filters and ranges. The "
	    "keys' text is bounded by amq.join_filter_remote_max_memory too.",
	    &amq_jf_remote_max_set_keys, 1000, 0, AMQ_JF_REMOTE_MAX_SET_KEYS, PGC_USERSET, 0, NULL,
	    NULL, NULL);
	MarkGUCPrefixReserved("amq");
	RegisterCustomScanMethods(&amq_jf_build_methods);
	RegisterCustomScanMethods(&amq_jf_probe_methods);
	amq_jf_install_load_hook();
	amq_jf_install_planner_hook();
	amq_jf_install_executor_hook();
}
