/*
 * build/spill.h - a collecting builder's sorted runs in temporary files, and
 * the k-way merge that reads them back (spill.c). A builder past its working
 * memory (alloc.spill->memory) writes its sorted, distinct keys (every key,
 * duplicates kept, when it counts rows) as one run, empties its buffer and
 * goes on; the finish, the parallel state and merged runs read every run
 * and the keys still in memory through one merge.
 */
#ifndef AMQ_BUILD_SPILL_H
#define AMQ_BUILD_SPILL_H

#include "base/internal.h"

/* What one merge reads: sorted keys in memory (keys non-NULL), or a run in
 * a temporary file of spill. */
typedef struct amq_merge_source {
	const uint64_t *keys;
	uint64_t count;
	void *file;
	const amq_spill *spill;
} amq_merge_source;

#define AMQ_MERGE_MAX_SOURCES (AMQ_SPILL_RUNS + AMQ_BUILDER_RUNS + 1)

/* A source being read: keys[0..left) ready, unread more in its file from
 * offset on. */
typedef struct amq_merge_input {
	const uint64_t *head;
	size_t left;
	amq_merge_source source;
	uint64_t offset, unread;
	uint64_t *buffer;
} amq_merge_input;

/* The sorted union of its sources, a chunk at a time: each key once when
 * distinct, else every key of every source (a counting builder's rows). */
typedef struct amq_merge {
	amq_merge_input in[AMQ_MERGE_MAX_SOURCES];
	uint64_t top[AMQ_MERGE_MAX_SOURCES]; /* each input's next key */
	int k;
	bool distinct, started;
	uint64_t last;
	uint64_t taken, total; /* keys read from the sources, of all */
	/* Told every AMQ_INTERRUPT_EVERY keys taken (amq_merge_report). */
	amq_progress progress;
	void *progress_arg;
	const char *phase;
	uint64_t *out;
	size_t chunk; /* keys per read buffer and per chunk out */
	const amq_allocator *alloc;
} amq_merge;

/* Opens a merge of sources[0..n) with buffers from a, sized from
 * a->spill's memory (or the smallest, without one). */
amq_status amq_merge_open(amq_merge *m, const amq_merge_source *sources, int n, bool distinct,
			  const amq_allocator *a, amq_error *err);
/* Makes m tell b's progress hook (if any) about phase: now, every
 * AMQ_INTERRUPT_EVERY keys taken, and when the last is taken. */
void amq_merge_report(amq_merge *m, const amq_builder *b, const char *phase);
/* The next chunk of merged keys in *keys[0..*n), valid until the next call;
 * *n is 0 at the end. Polls the interrupt check. */
amq_status amq_merge_next(amq_merge *m, const uint64_t **keys, size_t *n, amq_error *err);
void amq_merge_close(amq_merge *m);

/* The most keys a builder holds in memory before it spills: its set's or
 * bag's buffer and its sort's scratch take at most half its memory each.
 * SIZE_MAX without a spill. */
size_t amq_spill_room(const amq_builder *b);
/* Writes the sorted keys[0..n) as a new run of b's, first merging b's
 * smallest runs into one when it holds AMQ_SPILL_RUNS. */
amq_status amq_spill_run_add(amq_builder *b, const uint64_t *keys, size_t n, amq_error *err);
/* The same in pieces: begin makes room and opens *file (NULL on failure),
 * write appends sorted keys, end makes the file a run of count keys, drop
 * closes it instead. */
amq_status amq_spill_run_begin(amq_builder *b, void **file, amq_error *err);
amq_status amq_spill_run_write(const amq_builder *b, void *file, const uint64_t *keys, size_t n,
			       amq_error *err);
void amq_spill_run_end(amq_builder *b, void *file, uint64_t count);
void amq_spill_run_drop(const amq_builder *b, void *file);
/* Adds the run *run of other's spill to b's runs: moved when both spill to
 * the same files, else copied; *run is b's or closed afterwards. */
amq_status amq_spill_run_take(amq_builder *b, amq_spill_run *run, const amq_spill *from,
			      amq_error *err);
/* Merges b's smallest runs until it holds at most `most`. */
amq_status amq_spill_reduce(amq_builder *b, int most, amq_error *err);
/* A lower bound of the distinct keys in b's runs (*least), wrong with a
 * chance below 1e-9: the keys are uniform hashes (or a bijection of them),
 * so the 4096th smallest key of their union says how many there are (k
 * minimum values; about 1.6% error), and the bound is 6 errors below. Reads
 * 4096 keys of the merged runs, not all of them. */
amq_status amq_spill_least(amq_builder *b, uint64_t *least, amq_error *err);
/* The sources of everything b collected: its set or bag (which must be
 * sorted), its runs in memory and its spilled runs; returns how many. */
int amq_spill_sources(const amq_builder *b, amq_merge_source *sources);
/* Closes (and so removes) every run of b's. */
void amq_spill_free(amq_builder *b);

#endif
