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

#include "amq.h"
#include "joinfilter/nodes.h"

bool amq_jf_enabled = true;
int amq_jf_max_kb = 32 * 1024;
double amq_jf_max_pass_rate = 0.5;
bool amq_jf_remote_enabled = true;
int amq_jf_remote_max_kb = 4 * 1024;
int amq_jf_remote_max_set_keys = 1000;
char *amq_jf_remote_shard_version = NULL;
/* amq_jf_remote_shard_version, parsed (version_number). */
static int32 shard_version;

/* "X.Y.Z" (digits only, each part below 1000) as X * 10^6 + Y * 10^3 + Z, so
 * that versions compare as numbers; -1 for any other text. */
static int32 version_number(const char *version)
{
	int32 number = 0;

	for (int part = 0; part < 3; part++) {
		int32 value = 0;
		int digits = 0;

		for (; *version >= '0' && *version <= '9' && digits < 3; version++, digits++)
			value = value * 10 + (*version - '0');
		if (digits == 0 || *version != (part < 2 ? '.' : '\0'))
			return -1;
		number = number * 1000 + value;
		if (part < 2)
			version++;
	}
	return number;
}

/* amq.join_filter_remote_shard_version takes an amq release: from 0.1.0 to
 * this library's version. */
static bool check_shard_version(char **newval, void **extra, GucSource source)
{
	int32 number = version_number(*newval);

	if (number < 0) {
		GUC_check_errdetail("A version is three numbers, such as \"%s\".", AMQ_VERSION);
		return false;
	}
	if (number < version_number("0.1.0") || number > version_number(AMQ_VERSION)) {
		GUC_check_errdetail("amq versions run from 0.1.0 to this library's %s.",
				    AMQ_VERSION);
		return false;
	}
	return true;
}

/* Keeps the version that amq.join_filter_remote_shard_version was set to as
 * a number, for amq_jf_shards_judge. */
static void assign_shard_version(const char *newval, void *extra)
{
	shard_version = version_number(newval);
}

/* See joinfilter/settings.h. */
bool amq_jf_shards_judge(void)
{
	return shard_version >= version_number(AMQ_JF_SHARD_PROBE_SINCE);
}

int amq_jf_remote_filter = AMQ_JF_REMOTE_BLOOM;

/* amq.join_filter_remote_filter's values. */
static const struct config_enum_entry remote_filter_kinds[] = {
    {"bloom", AMQ_JF_REMOTE_BLOOM, false},
    {"fuse", AMQ_JF_REMOTE_FUSE, false},
    {NULL, 0, false},
};

/* See joinfilter/settings.h. */
bool amq_jf_ship_fuse(void)
{
	return amq_jf_remote_filter == AMQ_JF_REMOTE_FUSE &&
	       shard_version >= version_number(AMQ_JF_FUSE_SINCE);
}

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
	    "A filter goes at the lowest rate of 0.0001, 0.001 and 0.01 whose filter fits, and "
	    "a larger one is not sent; it crosses the network as hex, twice its size, once per "
	    "remote query, so it stays under half of the 1GB a value may take. Its keys are "
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
	DefineCustomStringVariable(
	    "amq.join_filter_remote_shard_version", "The oldest amq version on the remote servers.",
	    "Join filters ship only what it has: amq_join_filter_probe, which switches itself off "
	    "where it does not pay, from 0.5.0; bloom_contains before. Update amq on the remote "
	    "servers first, or set this to their version.",
	    &amq_jf_remote_shard_version, AMQ_VERSION, PGC_USERSET, 0, check_shard_version,
	    assign_shard_version, NULL);
	DefineCustomEnumVariable(
	    "amq.join_filter_remote_filter",
	    "The filter shipped to postgres_fdw scans: bloom or fuse.",
	    "bloom: a blocked Bloom filter. fuse: a binary fuse filter, about a fifth smaller at "
	    "a rate six times lower, but two to three times slower to build; remote servers "
	    "read it from amq 0.6.0 on, and older ones (amq.join_filter_remote_shard_version) "
	    "get bloom.",
	    &amq_jf_remote_filter, AMQ_JF_REMOTE_BLOOM, remote_filter_kinds, PGC_USERSET, 0, NULL,
	    NULL, NULL);
	MarkGUCPrefixReserved("amq");
	RegisterCustomScanMethods(&amq_jf_build_methods);
	RegisterCustomScanMethods(&amq_jf_probe_methods);
	amq_jf_install_load_hook();
	amq_jf_install_planner_hook();
	amq_jf_install_executor_hook();
	amq_jf_install_run_hook();
}
