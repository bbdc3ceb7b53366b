/*
 * joinfilter/judge.h - whether a join filter pays, judged as it probes
 * (joinfilter/judge.c). Two audiences: the executor's probes (probe.c,
 * sift.c), which share one judge per filter in a participant, and the probe
 * a hash join ships to a remote server (shard_probe.c), which keeps one per
 * call site there.
 *
 * Include after postgres.h.
 */
#ifndef AMQ_JF_JUDGE_H
#define AMQ_JF_JUDGE_H

/*
 * Whether a filter pays, judged over the rows that all its probes in this
 * participant test (a probe per partition of a partitioned table shares one
 * judge, so that small partitions add up to the windows that decide). The
 * probes switch off together; each of them notices at its next row.
 */
typedef struct amq_jf_judge {
	uint32 window_left;    /* probes left in the current window */
	uint32 window_passed;  /* rows passed in it */
	uint64 off_left;       /* switched off: rows left to pass unprobed */
	uint64 off_next;       /* the next switch-off's stretch */
	bool off_until_rescan; /* switched off: this build's filter is overfull */
} amq_jf_judge;

/* The judge's API (joinfilter/judge.c). A judge that has seen nothing yet:
 * on, at the start of its first window. */
void amq_jf_judge_init(amq_jf_judge *judge);
/* Whether the judge's probes probe now. */
static inline bool amq_jf_judge_on(const amq_jf_judge *judge)
{
	return judge->off_left == 0;
}
/* Probes left in the current window (a sift tests a page in stretches that
 * end where windows end). */
static inline uint32 amq_jf_judge_window_left(const amq_jf_judge *judge)
{
	return judge->window_left;
}
/* Counts probed rows, of which passed passed; true when the window that
 * ended with them switched the judge off. */
bool amq_jf_judge_count(amq_jf_judge *judge, uint32 probed, uint32 passed);
/* Counts a row passed unprobed while off; the last of the stretch switches
 * the judge on again. */
void amq_jf_judge_pass_unprobed(amq_jf_judge *judge);
/* Switches the judge off until the next rescan (an overfull filter). */
void amq_jf_judge_off_until_rescan(amq_jf_judge *judge);
/* A rescan: a judge off until it is on again. */
void amq_jf_judge_rescan(amq_jf_judge *judge);

#endif
