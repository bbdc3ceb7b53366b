/*
 * spill.c - a collecting builder's sorted runs in temporary files
 * (build/spill.h), and the k-way merge that reads them back.
 *
 * A run is one file of the engine's (amq_spill): its keys in increasing
 * order, 8 bytes each in native order, only ever read back by the process
 * that wrote them. Runs are tiered by size (tier 0 up to a full buffer, each
 * next tier 8 times larger): whenever AMQ_SPILL_FAN_IN runs share a tier
 * they merge into one of the next, so each key is rewritten once a tier,
 * about log8(keys / memory) times, and the disk holds at most about twice
 * the keys. A builder never holds AMQ_SPILL_RUNS (7 runs in each of 5 tiers
 * and some); at that many its smallest merge whatever their tiers. A merge reads each file through
 * a buffer; the buffers share half the builder's memory, between 4 and 64 KiB each.
 */
#include "build/spill.h"

#include <math.h>

#define MIN_CHUNK 512
#define MAX_CHUNK 8192
/* Bytes per call of spill->write, for engines whose calls take an int. */
#define MAX_WRITE ((size_t)8 << 20)

/* Refills input from its file, or empties it when its file is read out. */
static amq_status refill(amq_merge_input *in, size_t chunk, amq_error *err)
{
	in->left = 0;
	if (in->unread == 0)
		return AMQ_OK;
	size_t n = in->unread < chunk ? (size_t)in->unread : chunk;
	const amq_spill *s = in->source.spill;
	amq_status st =
	    s->read(s->ctx, in->source.file, in->offset, in->buffer, n * sizeof(uint64_t), err);
	if (st != AMQ_OK)
		return st;
	in->offset += n * sizeof(uint64_t);
	in->unread -= n;
	in->head = in->buffer;
	in->left = n;
	return AMQ_OK;
}

/* Drops the inputs that have nothing left, and notes each one's next key. */
static void drop_empty(amq_merge *m)
{
	for (int i = 0; i < m->k;) {
		if (m->in[i].left == 0) {
			m->in[i] = m->in[--m->k];
		} else {
			m->top[i] = *m->in[i].head;
			i++;
		}
	}
}

amq_status amq_merge_open(amq_merge *m, const amq_merge_source *sources, int n, bool distinct,
			  const amq_allocator *a, amq_error *err)
{
	int files = 0;
	memset(m, 0, sizeof(*m));
	m->alloc = a;
	m->distinct = distinct;
	for (int i = 0; i < n; i++)
		files += sources[i].keys == NULL && sources[i].count > 0;
	size_t memory = a->spill != NULL ? a->spill->memory : AMQ_SPILL_MIN_MEMORY;
	m->chunk = memory / 2 / sizeof(uint64_t) / (size_t)(files + 1);
	m->chunk = m->chunk < MIN_CHUNK ? MIN_CHUNK : m->chunk > MAX_CHUNK ? MAX_CHUNK : m->chunk;
	m->out = a->alloc(a->ctx, m->chunk * sizeof(uint64_t) * (size_t)(files + 1));
	if (m->out == NULL)
		return amq_fail(err, AMQ_NO_MEMORY, "", "out of memory merging collected hashes");
	uint64_t *buffer = m->out + m->chunk;
	for (int i = 0; i < n; i++) {
		if (sources[i].count == 0)
			continue;
		amq_merge_input *in = &m->in[m->k++];
		in->source = sources[i];
		m->total += sources[i].count;
		if (sources[i].keys != NULL) {
			in->head = sources[i].keys;
			in->left = (size_t)sources[i].count;
			continue;
		}
		in->buffer = buffer;
		buffer += m->chunk;
		in->unread = sources[i].count;
		amq_status st = refill(in, m->chunk, err);
		if (st != AMQ_OK) {
			amq_merge_close(m);
			return st;
		}
	}
	drop_empty(m);
	return AMQ_OK;
}

void amq_merge_report(amq_merge *m, const amq_builder *b, const char *phase)
{
	m->progress = b->progress;
	m->progress_arg = b->progress_arg;
	m->phase = phase;
	if (m->progress != NULL)
		m->progress(m->progress_arg, phase, 0, m->total);
}

amq_status amq_merge_next(amq_merge *m, const uint64_t **keys, size_t *n, amq_error *err)
{
	size_t got = 0;
	uint64_t taken = m->taken;
	while (got < m->chunk && m->k > 0) {
		/* The least next key, from a small array the loop keeps in
		 * registers (a conditional move each, no branch). */
		int least = 0;
		uint64_t key = m->top[0];
		for (int i = 1; i < m->k; i++) {
			bool less = m->top[i] < key;
			key = less ? m->top[i] : key;
			least = less ? i : least;
		}
		amq_merge_input *in = &m->in[least];
		in->head++;
		taken++;
		if (--in->left == 0) {
			amq_status st = refill(in, m->chunk, err);
			if (st != AMQ_OK)
				return st;
			if (in->left == 0) {
				*in = m->in[--m->k];
				m->top[least] = m->top[m->k];
			}
		}
		if (in->left > 0)
			m->top[least] = *in->head;
		if (!m->distinct || !m->started || key != m->last)
			m->out[got++] = key;
		m->last = key;
		m->started = true;
	}
	bool step = m->taken / AMQ_INTERRUPT_EVERY != taken / AMQ_INTERRUPT_EVERY;
	bool ended = m->k == 0 && m->taken != taken;
	m->taken = taken;
	if (step) {
		amq_status st = amq_poll(m->alloc, err);
		if (st != AMQ_OK)
			return st;
	}
	if ((step || ended) && m->progress != NULL)
		m->progress(m->progress_arg, m->phase, taken, m->total);
	*keys = m->out;
	*n = got;
	return AMQ_OK;
}

void amq_merge_close(amq_merge *m)
{
	if (m->out != NULL)
		m->alloc->free(m->alloc->ctx, m->out);
	m->out = NULL;
	m->k = 0;
}

size_t amq_spill_room(const amq_builder *b)
{
	if (b->alloc.spill == NULL)
		return SIZE_MAX;
	size_t memory = b->alloc.spill->memory;
	memory = memory < AMQ_SPILL_MIN_MEMORY ? AMQ_SPILL_MIN_MEMORY : memory;
	return memory / sizeof(uint64_t) / 2;
}

amq_status amq_spill_run_write(const amq_builder *b, void *file, const uint64_t *keys, size_t n,
			       amq_error *err)
{
	const amq_spill *s = b->alloc.spill;
	size_t per_write = MAX_WRITE / sizeof(uint64_t);
	for (size_t i = 0; i < n; i += per_write) {
		size_t piece = n - i < per_write ? n - i : per_write;
		amq_status st = s->write(s->ctx, file, keys + i, piece * sizeof(uint64_t), err);
		if (st == AMQ_OK && n > per_write)
			st = amq_poll(&b->alloc, err);
		if (st != AMQ_OK)
			return st;
	}
	return AMQ_OK;
}

void amq_spill_run_end(amq_builder *b, void *file, uint64_t count)
{
	b->spilled[b->nspilled].file = file;
	b->spilled[b->nspilled++].count = count;
	b->spilled_bytes += count * sizeof(uint64_t);
	b->spilled_runs++;
}

/* The tier of a run of count keys: 0 up to a full buffer of b's, each next
 * tier AMQ_SPILL_FAN_IN times larger (what merging a tier's runs gives). */
static int tier(const amq_builder *b, uint64_t count)
{
	uint64_t unit = amq_spill_room(b);
	int t = 0;
	for (; count > unit && unit <= UINT64_MAX / AMQ_SPILL_FAN_IN; t++)
		unit *= AMQ_SPILL_FAN_IN;
	return t;
}

/* Merges `take` of b's runs into one new run: the smallest, of tier `only`
 * when it is not negative (there must be that many). */
static amq_status merge_smallest(amq_builder *b, int take, int only, amq_error *err)
{
	amq_merge_source sources[AMQ_SPILL_RUNS];
	/* Move the chosen runs to the end of b->spilled, one at a time. */
	for (int i = 0; i < take; i++) {
		int last = b->nspilled - 1 - i, least = -1;
		for (int j = 0; j <= last; j++) {
			if (only >= 0 && tier(b, b->spilled[j].count) != only)
				continue;
			if (least < 0 || b->spilled[j].count < b->spilled[least].count)
				least = j;
		}
		amq_spill_run swap = b->spilled[least];
		b->spilled[least] = b->spilled[last];
		b->spilled[last] = swap;
		sources[i] = (amq_merge_source){NULL, swap.count, swap.file, b->alloc.spill};
	}
	const amq_spill *s = b->alloc.spill;
	void *file = s->create(s->ctx, err);
	if (file == NULL)
		return AMQ_SPILL_FAILED;
	amq_merge m;
	amq_status st = amq_merge_open(&m, sources, take, !b->counts_rows, &b->alloc, err);
	if (st == AMQ_OK)
		amq_merge_report(&m, b, "merging runs");
	uint64_t count = 0;
	for (size_t n = 1; st == AMQ_OK && n > 0;) {
		const uint64_t *keys;
		st = amq_merge_next(&m, &keys, &n, err);
		if (st == AMQ_OK)
			st = amq_spill_run_write(b, file, keys, n, err);
		count += n;
	}
	amq_merge_close(&m);
	if (st != AMQ_OK) {
		s->close(s->ctx, file);
		return st;
	}
	for (int i = 0; i < take; i++)
		s->close(s->ctx, b->spilled[--b->nspilled].file);
	amq_spill_run_end(b, file, count);
	return AMQ_OK;
}

amq_status amq_spill_reduce(amq_builder *b, int most, amq_error *err)
{
	while (b->nspilled > most) {
		int take = b->nspilled - most + 1;
		amq_status st =
		    merge_smallest(b, take < AMQ_SPILL_FAN_IN ? take : AMQ_SPILL_FAN_IN, -1, err);
		if (st != AMQ_OK)
			return st;
	}
	return AMQ_OK;
}

/* The lowest tier that holds AMQ_SPILL_FAN_IN of b's runs, or -1. */
static int full_tier(const amq_builder *b)
{
	int runs[64] = {0};
	for (int r = 0; r < b->nspilled; r++)
		runs[tier(b, b->spilled[r].count)]++;
	for (int t = 0; t < 64; t++)
		if (runs[t] >= AMQ_SPILL_FAN_IN)
			return t;
	return -1;
}

/* Makes room for one more run: merges AMQ_SPILL_FAN_IN runs of a tier
 * while a tier has that many (so runs only ever merge with runs about their
 * size, and each key is rewritten once a tier), and the smallest if b still
 * holds AMQ_SPILL_RUNS. */
static amq_status make_room(amq_builder *b, amq_error *err)
{
	amq_status st = AMQ_OK;
	for (int t = full_tier(b); st == AMQ_OK && t >= 0; t = full_tier(b))
		st = merge_smallest(b, AMQ_SPILL_FAN_IN, t, err);
	if (st == AMQ_OK && b->nspilled == AMQ_SPILL_RUNS)
		st = merge_smallest(b, AMQ_SPILL_FAN_IN, -1, err);
	return st;
}

amq_status amq_spill_run_begin(amq_builder *b, void **file, amq_error *err)
{
	*file = NULL;
	amq_status st = make_room(b, err);
	if (st != AMQ_OK)
		return st;
	const amq_spill *s = b->alloc.spill;
	*file = s->create(s->ctx, err);
	return *file != NULL ? AMQ_OK : AMQ_SPILL_FAILED;
}

void amq_spill_run_drop(const amq_builder *b, void *file)
{
	b->alloc.spill->close(b->alloc.spill->ctx, file);
}

amq_status amq_spill_run_add(amq_builder *b, const uint64_t *keys, size_t n, amq_error *err)
{
	void *file = NULL;
	if (n == 0)
		return AMQ_OK;
	amq_status st = amq_spill_run_begin(b, &file, err);
	if (st == AMQ_OK)
		st = amq_spill_run_write(b, file, keys, n, err);
	if (st == AMQ_OK)
		amq_spill_run_end(b, file, n);
	else if (file != NULL)
		amq_spill_run_drop(b, file);
	return st;
}

/* Whether two spills write the same kind of files, so a run can change
 * hands. */
static bool same_spill(const amq_spill *a, const amq_spill *b)
{
	return a != NULL && b != NULL && a->ctx == b->ctx && a->create == b->create &&
	       a->read == b->read && a->close == b->close;
}

amq_status amq_spill_run_take(amq_builder *b, amq_spill_run *run, const amq_spill *from,
			      amq_error *err)
{
	amq_status st = make_room(b, err);
	if (st == AMQ_OK && same_spill(b->alloc.spill, from)) {
		b->spilled[b->nspilled++] = *run;
		run->file = NULL;
		return AMQ_OK;
	}
	/* Copied through a merge of one source. */
	const amq_spill *s = b->alloc.spill;
	void *file = st == AMQ_OK ? s->create(s->ctx, err) : NULL;
	if (file == NULL) {
		from->close(from->ctx, run->file);
		run->file = NULL;
		return st == AMQ_OK ? AMQ_SPILL_FAILED : st;
	}
	amq_merge_source source = {NULL, run->count, run->file, from};
	amq_merge m;
	st = amq_merge_open(&m, &source, 1, false, &b->alloc, err);
	for (size_t n = 1; st == AMQ_OK && n > 0;) {
		const uint64_t *keys;
		st = amq_merge_next(&m, &keys, &n, err);
		if (st == AMQ_OK)
			st = amq_spill_run_write(b, file, keys, n, err);
	}
	amq_merge_close(&m);
	from->close(from->ctx, run->file);
	run->file = NULL;
	if (st != AMQ_OK) {
		s->close(s->ctx, file);
		return st;
	}
	amq_spill_run_end(b, file, run->count);
	return AMQ_OK;
}

/* Keys of the union read by amq_spill_least. */
#define ESTIMATE_KEYS 4096

amq_status amq_spill_least(amq_builder *b, uint64_t *least, amq_error *err)
{
	amq_merge_source sources[AMQ_SPILL_RUNS];
	for (int r = 0; r < b->nspilled; r++)
		sources[r] = (amq_merge_source){NULL, b->spilled[r].count, b->spilled[r].file,
						b->alloc.spill};
	amq_merge m;
	amq_status st = amq_merge_open(&m, sources, b->nspilled, true, &b->alloc, err);
	uint64_t seen = 0, kth = 0;
	for (size_t got = 1; st == AMQ_OK && got > 0 && seen < ESTIMATE_KEYS;) {
		const uint64_t *keys;
		st = amq_merge_next(&m, &keys, &got, err);
		if (st == AMQ_OK && seen + got >= ESTIMATE_KEYS)
			kth = keys[ESTIMATE_KEYS - 1 - seen];
		seen += got;
	}
	amq_merge_close(&m);
	*least = seen;
	if (st == AMQ_OK && seen >= ESTIMATE_KEYS) {
		/* k - 1 over the k-th smallest's share of 2^64, less 6 standard
		 * deviations (1 / sqrt(k - 2) each). */
		double estimate = (ESTIMATE_KEYS - 1) / ((double)kth / 18446744073709551616.0 +
							 1.0 / 18446744073709551616.0);
		double low = estimate * (1.0 - 6.0 / sqrt(ESTIMATE_KEYS - 2.0));
		*least = low > (double)seen ? (uint64_t)low : seen;
	}
	return st;
}

int amq_spill_sources(const amq_builder *b, amq_merge_source *sources)
{
	int n = 0;
	if (b->counts_rows)
		sources[n++] = (amq_merge_source){b->bag.hashes, b->bag.count, NULL, NULL};
	else
		sources[n++] = (amq_merge_source){b->set.hashes, b->set.count, NULL, NULL};
	for (int r = 0; r < b->nruns; r++)
		sources[n++] = (amq_merge_source){b->runs[r].hashes, b->runs[r].count, NULL, NULL};
	for (int r = 0; r < b->nspilled; r++)
		sources[n++] = (amq_merge_source){NULL, b->spilled[r].count, b->spilled[r].file,
						  b->alloc.spill};
	return n;
}

void amq_spill_free(amq_builder *b)
{
	const amq_spill *s = b->alloc.spill;
	for (int r = 0; r < b->nspilled; r++)
		s->close(s->ctx, b->spilled[r].file);
	b->nspilled = 0;
}
