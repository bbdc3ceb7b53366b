/*
 * joinfilter/judge.c - whether a join filter pays (joinfilter/nodes.h:
 * amq_jf_judge), judged over windows of AMQ_JF_CHECK_ROWS probes by all the
 * probes of one filter in a participant. A window that passed more than
 * AMQ_JF_MAX_RUNTIME_PASS of its rows switches the judge off for a stretch of
 * rows passed unprobed, twice as long as the last one (so a filter that
 * never pays probes O(log rows) windows in all); a window that paid resets
 * the stretch. An overfull filter switches it off until the next rescan.
 * The probes (probe.c, sift.c) only count through it and ask whether it is
 * on.
 */
#include "postgres.h"

#include "joinfilter/judge.h"
#include "joinfilter/settings.h"

void amq_jf_judge_init(amq_jf_judge *judge)
{
	judge->window_left = AMQ_JF_CHECK_ROWS;
	judge->window_passed = 0;
	judge->off_left = 0;
	judge->off_next = AMQ_JF_OFF_ROWS;
	judge->off_until_rescan = false;
}

/* On again, at the start of a new window. */
static void switch_on(amq_jf_judge *judge)
{
	judge->off_left = 0;
	judge->off_until_rescan = false;
	judge->window_left = AMQ_JF_CHECK_ROWS;
	judge->window_passed = 0;
}

bool amq_jf_judge_count(amq_jf_judge *judge, uint32 probed, uint32 passed)
{
	judge->window_passed += passed;
	judge->window_left -= probed;
	if (judge->window_left > 0)
		return false;
	if (judge->window_passed > AMQ_JF_MAX_RUNTIME_PASS * AMQ_JF_CHECK_ROWS) {
		judge->off_left = judge->off_next;
		judge->off_next *= 2;
		return true;
	}
	judge->off_next = AMQ_JF_OFF_ROWS;
	judge->window_left = AMQ_JF_CHECK_ROWS;
	judge->window_passed = 0;
	return false;
}

void amq_jf_judge_pass_unprobed(amq_jf_judge *judge)
{
	if (judge->off_left > 0 && --judge->off_left == 0)
		switch_on(judge);
}

void amq_jf_judge_off_until_rescan(amq_jf_judge *judge)
{
	judge->off_left = PG_UINT64_MAX;
	judge->off_until_rescan = true;
}

void amq_jf_judge_rescan(amq_jf_judge *judge)
{
	if (judge->off_until_rescan)
		switch_on(judge);
}
