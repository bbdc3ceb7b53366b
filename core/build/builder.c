/*
 * builder.c - one filter from a stream of hashes, as an aggregate sees them.
 *
 * A Bloom builder with a capacity ORs into a fixed filter (constant memory).
 * Otherwise the builder collects hashes and, at the end, sizes the filter for
 * the distinct ones and inserts them in sorted order: a blocked filter's
 * block, reduce(hash, blocks), grows with the hash, so that insert is one
 * sequential pass over the filter. Either way the result depends only on the
 * multiset of hashes, never on row order or on how parallel workers split the
 * rows, so a plan gives the same bytes serial or parallel. Each worker sorts
 * its own hashes before it serializes them; the leader keeps the sorted runs
 * it receives as they are, counts their union in one reading pass and
 * inserts each run in one sequential pass. A variant whose bytes depend on
 * insertion order (cuckoo, scalable: not order_free in its row of the variant
 * table) always collects, and a counting filter without a capacity keeps every
 * row (amq_hashbag), since each row is an add. Past its allocator's spill
 * memory a collecting builder writes its sorted keys out as runs (spill.c)
 * and the finish, the serial function and merges read them back through one
 * k-way merge of runs and memory.
 */
#include "build/rice.h"
#include "build/spill.h"
#include "format/variant.h"

#include <math.h>

static const uint8_t STATE_MAGIC[4] = {'A', 'M', 'Q', 'B'};
#define STATE_VERSION 4
#define STATE_HEADER 48
#define STATE_FAMILIES 40

/* Checks and records the parameters; allocates nothing. */
static amq_status set_params(amq_builder *b, amq_kind kind, amq_layout layout, double fpr,
			     uint64_t capacity, uint64_t seed, const amq_allocator *a,
			     amq_error *err)
{
	memset(b, 0, sizeof(*b));
	b->alloc = b->result = *a;
	amq_hashset_init(&b->set, a);
	amq_hashbag_init(&b->bag, a);
	amq_status st = amq_check_fpr(fpr, err);
	if (st == AMQ_OK && capacity != 0)
		st = amq_check_capacity(capacity > INT64_MAX ? -1 : (int64_t)capacity, err);
	if (st != AMQ_OK)
		return st;
	const amq_variant *v = amq_variant_find(kind, layout);
	if (v == NULL)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "", "unknown filter kind %d / layout %d",
				(int)kind, (int)layout);
	b->kind = kind;
	b->layout = layout;
	b->fpr = fpr;
	b->capacity = capacity;
	b->seed = seed;
	b->streaming = v->order_free && capacity != 0;
	b->room_from = AMQ_BUILDER_ROOM_FROM;
	b->counts_rows = v->counts_duplicates && !b->streaming;
	b->collect_key = v->collect_key;
	return AMQ_OK;
}

amq_status amq_builder_init(amq_builder *b, amq_kind kind, amq_layout layout, double fpr,
			    uint64_t capacity, uint64_t seed, const amq_allocator *a,
			    amq_error *err)
{
	amq_status st = set_params(b, kind, layout, fpr, capacity, seed, a, err);
	if (st == AMQ_OK && b->streaming)
		st = amq_filter_create(&b->filter, kind, layout, capacity, fpr, seed, a, err);
	if (st == AMQ_OK && !b->streaming) {
		/* Say now, not after collecting every row, if the size or the
		 * rate is impossible (a binary fuse filter's lowest rate). */
		uint32_t hashes;
		uint64_t cells;
		st = amq_filter_size(kind, layout, capacity ? capacity : 1, fpr, &hashes, &cells,
				     err);
	}
	return st;
}

amq_status amq_builder_set_fpr(amq_builder *b, double fpr, amq_error *err)
{
	if (b->streaming || b->capacity != 0)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "set the rate when the builder is made",
				"only a builder that sizes its filter at its finish can change its "
				"fpr");
	amq_status st = amq_check_fpr(fpr, err);
	if (st == AMQ_OK)
		b->fpr = fpr;
	return st;
}

void amq_builder_limit_state(amq_builder *b, uint64_t max_bytes)
{
	b->state_max = max_bytes;
}

/* AMQ_TOO_LARGE when a filter of the distinct hashes b holds for sure (a
 * sorted part or run of them) would pass AMQ_MAX_FILTER_BYTES
 * (amq_builder_add): one sizing per sort of the buffer, which costs far
 * more. */
static amq_status check_room(amq_builder *b, uint64_t distinct, amq_error *err)
{
	uint32_t hashes;
	uint64_t cells;
	b->room = distinct;
	if (b->capacity != 0)
		return AMQ_OK;
	if (amq_filter_size(b->kind, b->layout, b->room, b->fpr, &hashes, &cells, NULL) !=
	    AMQ_TOO_LARGE)
		return AMQ_OK;
	const amq_variant *v = amq_variant_find(b->kind, b->layout);
	return amq_fail(err, AMQ_TOO_LARGE,
			"raise the fpr, or build one filter per part of the keys (GROUP BY a "
			"hash of the key)",
			"%llu distinct values and more: a %s %s filter of them at fpr %g would "
			"pass the 1 GiB limit",
			(unsigned long long)b->room, v->layout_name, v->kind_name, b->fpr);
}

/* After a spill: once b's runs hold more than room_from keys, and again
 * each time they grow by an eighth, checks the distinct keys they hold (a
 * lower bound from their smallest keys, amq_spill_least) against the size
 * limits, so a build that cannot fit fails while it reads, not after its
 * last merge. */
static amq_status check_spilled(amq_builder *b, amq_error *err)
{
	uint64_t keys = 0, least;
	for (int r = 0; r < b->nspilled; r++)
		keys += b->spilled[r].count;
	if (keys <= b->room_from || keys < b->estimate_at)
		return AMQ_OK;
	b->estimate_at = keys + keys / 8;
	amq_status st = amq_spill_least(b, &least, err);
	return st == AMQ_OK && least > b->room ? check_room(b, least, err) : st;
}

/* Sorts bag (b's, or a merged builder's) and writes it as one of b's runs,
 * leaving it empty. */
static amq_status spill_bag(amq_builder *b, amq_hashbag *bag, amq_error *err)
{
	uint64_t distinct;
	amq_status st = amq_hashbag_sort(bag, &distinct, err);
	if (st == AMQ_OK)
		st = amq_spill_run_add(b, bag->hashes, bag->count, err);
	if (st == AMQ_OK)
		bag->count = 0;
	return st;
}

/* The refusal of a build-only variant's build past b's working memory: of
 * distinct values, or of more than distinct while b still reads them (its
 * total is not known yet, and more only need more memory). */
static amq_status build_memory_error(const amq_builder *b, const amq_variant *v, uint64_t distinct,
				     bool more, amq_error *err)
{
	return amq_fail(err, AMQ_TOO_LARGE,
			"raise the working memory (PostgreSQL: work_mem; SQLite: amq_work_mem(); "
			"Python: work_mem=), or build a bloom filter (bloom_agg), which spills",
			"a %s %s filter of %s%llu distinct values needs %s%.2f MB of memory to "
			"build, more than the %.2f MB of working memory",
			v->layout_name, v->kind_name, more ? "more than " : "",
			(unsigned long long)distinct, more ? "more than " : "",
			(double)v->build_memory(distinct) / (1 << 20),
			(double)b->alloc.spill->memory / (1 << 20));
}

/* Called with b's set or bag full: spills it as a sorted run when it may not
 * grow (its buffer would pass half of amq_spill_room, or all of it for the
 * bag) and, for a set, sorting it left it more than half full. */
static amq_status spill_if_full(amq_builder *b, amq_error *err)
{
	size_t room = amq_spill_room(b);
	if (b->counts_rows) {
		amq_status st = b->bag.capacity <= room / 2 ? AMQ_OK : spill_bag(b, &b->bag, err);
		return st == AMQ_OK && b->bag.count == 0 ? check_spilled(b, err) : st;
	}
	if (b->set.capacity <= room / 2)
		return AMQ_OK;
	amq_status st = amq_hashset_compact(&b->set, err);
	if (st != AMQ_OK || b->set.count <= b->set.capacity / 2)
		return st;
	/* A build-only variant with build_memory builds from every hash in
	 * memory at once: it never spills. Its set grows while the build of
	 * what it holds fits the working memory, and is refused, before any run
	 * is written, once it cannot (more values only need more). */
	const amq_variant *v = amq_variant_find(b->kind, b->layout);
	if (v->build_memory != NULL)
		return v->build_memory(b->set.count) > b->alloc.spill->memory
			   ? build_memory_error(b, v, b->set.count, true, err)
			   : AMQ_OK;
	st = amq_spill_run_add(b, b->set.hashes, b->set.count, err);
	if (st != AMQ_OK)
		return st;
	b->set.count = b->set.sorted = 0;
	return check_spilled(b, err);
}

/* Collects one key (a hash, or its collect_key), spilling first when b is
 * full. */
static amq_status add_key(amq_builder *b, uint64_t key, amq_error *err)
{
	amq_status st = AMQ_OK;
	if (b->counts_rows) {
		if (b->bag.count == b->bag.capacity && b->alloc.spill != NULL)
			st = spill_if_full(b, err);
		return st == AMQ_OK ? amq_hashbag_add(&b->bag, key, err) : st;
	}
	if (b->set.count == b->set.capacity && b->alloc.spill != NULL)
		st = spill_if_full(b, err);
	if (st == AMQ_OK)
		st = amq_hashset_add(&b->set, key, err);
	/* The sorted part grows only when the buffer fills and is sorted (a
	 * spill checks its runs). */
	if (st == AMQ_OK && b->set.sorted > b->room_from && b->set.sorted > b->room)
		st = check_room(b, b->set.sorted, err);
	return st;
}

amq_status amq_builder_add(amq_builder *b, uint64_t hash, amq_error *err)
{
	b->rows++;
	if (b->streaming)
		return amq_filter_add(&b->filter, hash, err);
	return add_key(b, b->collect_key != NULL ? b->collect_key(hash) : hash, err);
}

amq_status amq_builder_expect(amq_builder *b, uint64_t rows, amq_error *err)
{
	if (b->streaming || rows == 0 || rows > SIZE_MAX / sizeof(uint64_t) / 4)
		return AMQ_OK;
	/* Never past what b may hold before it spills. */
	if (rows > amq_spill_room(b) / 4)
		rows = amq_spill_room(b) / 4;
	if (b->counts_rows)
		return amq_hashbag_reserve(&b->bag, (size_t)rows, err);
	return amq_hashset_reserve(&b->set, (size_t)rows, err);
}

/* Whether two allocators are the same one, so a buffer may change hands. */
static bool same_allocator(const amq_allocator *a, const amq_allocator *b)
{
	return a->alloc == b->alloc && a->free == b->free && a->ctx == b->ctx;
}

/* Merges the kept runs into set, leaving set the whole sorted distinct set. */
static amq_status join_runs(amq_builder *b, amq_error *err)
{
	amq_status st = amq_hashset_compact(&b->set, err);
	while (st == AMQ_OK && b->nruns > 0) {
		amq_hashset *run = &b->runs[b->nruns - 1];
		st = amq_hashset_union(&b->set, run->hashes, run->count, err);
		if (st == AMQ_OK) {
			amq_hashset_free(run);
			b->nruns--;
		}
	}
	return st;
}

amq_status amq_builder_exceeds(amq_builder *b, uint64_t limit, bool *exceeds, amq_error *err)
{
	size_t held = b->set.count;

	*exceeds = false;
	if (b->streaming || b->counts_rows)
		return AMQ_OK;
	for (int i = 0; i < b->nruns; i++)
		held += b->runs[i].count;
	if (held / 2 <= limit)
		return AMQ_OK;
	amq_status st = join_runs(b, err);
	*exceeds = st == AMQ_OK && b->set.count > limit;
	return st;
}

/* Takes the sorted, distinct set *run into b: kept as a run when there is
 * room and it can change hands, else merged; *run is left empty either way
 * on success. */
static amq_status take_run(amq_builder *b, amq_hashset *run, amq_error *err)
{
	/* One that would take much of b's memory is spilled instead. */
	if (run->count > amq_spill_room(b) / 8) {
		amq_status st = amq_spill_run_add(b, run->hashes, run->count, err);
		if (st == AMQ_OK)
			amq_hashset_free(run);
		return st;
	}
	if (b->nruns < AMQ_BUILDER_RUNS && same_allocator(&b->alloc, &run->alloc)) {
		b->runs[b->nruns++] = *run;
		amq_hashset_init(run, &run->alloc);
		return AMQ_OK;
	}
	amq_status st = amq_hashset_union(&b->set, run->hashes, run->count, err);
	if (st == AMQ_OK)
		amq_hashset_free(run);
	return st;
}

/* Adds the rows of a counting builder's bag to b's: spilled as a run when
 * it would take much of b's memory, else appended (b's bag spilled when
 * that fills it). */
static amq_status merge_bag(amq_builder *b, amq_hashbag *bag, amq_error *err)
{
	size_t room = amq_spill_room(b);
	if (bag->count > room / 8)
		return spill_bag(b, bag, err);
	amq_status st = amq_hashbag_append(&b->bag, bag->hashes, bag->count, err);
	return st != AMQ_OK || b->bag.count <= room / 2 ? st : spill_bag(b, &b->bag, err);
}

/* A builder whose runs were handed over (serialize_runs) is asked for more
 * than its freeing. */
static amq_status used_again(amq_error *err)
{
	return amq_fail(err, AMQ_INVALID_ARGUMENT, "",
			"a filter aggregate state whose runs were handed over is used again");
}

amq_status amq_builder_merge(amq_builder *b, amq_builder *other, amq_error *err)
{
	if (b->handed_over || other->handed_over)
		return used_again(err);
	if (b->kind != other->kind || b->layout != other->layout || b->fpr != other->fpr ||
	    b->capacity != other->capacity || b->seed != other->seed)
		return amq_fail(err, AMQ_INCOMPATIBLE,
				"pass the same fpr and capacity on every row",
				"cannot merge filter aggregates with different parameters "
				"(fpr %g, capacity %llu vs fpr %g, capacity %llu)",
				b->fpr, (unsigned long long)b->capacity, other->fpr,
				(unsigned long long)other->capacity);
	b->rows += other->rows;
	b->families |= other->families;
	if (b->streaming)
		return amq_filter_union_into(&b->filter, &other->filter, err);
	amq_status st = AMQ_OK;
	while (st == AMQ_OK && other->nspilled > 0) {
		st = amq_spill_run_take(b, &other->spilled[other->nspilled - 1], other->alloc.spill,
					err);
		other->nspilled--; /* b's now, or closed */
	}
	if (st != AMQ_OK)
		return st;
	if (b->counts_rows)
		return merge_bag(b, &other->bag, err);
	while (st == AMQ_OK && other->nruns > 0) {
		st = take_run(b, &other->runs[other->nruns - 1], err);
		if (st == AMQ_OK)
			other->nruns--;
	}
	/* A deserialized worker state is one sorted run. */
	amq_hashset *o = &other->set;
	if (st != AMQ_OK || o->count == 0)
		return st;
	if (o->sorted == o->count)
		return take_run(b, o, err);
	/* Otherwise its sorted prefix merges in linear time, and the hashes it
	 * has not sorted yet join b's. */
	st = amq_hashset_union(&b->set, o->hashes, o->sorted, err);
	for (size_t i = o->sorted; st == AMQ_OK && i < o->count; i++)
		st = add_key(b, o->hashes[i], err);
	return st;
}

/* The number of distinct hashes in set and the runs together (*distinct): a
 * k-way walk over sorted, distinct sets that only reads them, without a
 * branch on which set holds the least hash. Polls b's interrupt check. */
static amq_status count_union(const amq_builder *b, uint64_t *count, amq_error *err)
{
	*count = b->set.count;
	if (b->nruns == 0)
		return AMQ_OK;
	const uint64_t *head[AMQ_BUILDER_RUNS + 1];
	size_t left[AMQ_BUILDER_RUNS + 1];
	int k = 0;
	for (int r = -1; r < b->nruns; r++) {
		const amq_hashset *set = r < 0 ? &b->set : &b->runs[r];
		if (set->count > 0) {
			head[k] = set->hashes;
			left[k++] = set->count;
		}
	}
	uint64_t distinct = 0;
	while (k > 0) {
		if (distinct % AMQ_INTERRUPT_EVERY == AMQ_INTERRUPT_EVERY - 1) {
			amq_status st = amq_poll(&b->alloc, err);
			if (st != AMQ_OK)
				return st;
		}
		uint64_t least = *head[0];
		for (int i = 1; i < k; i++)
			least = *head[i] < least ? *head[i] : least;
		distinct++;
		bool emptied = false;
		for (int i = 0; i < k; i++) {
			size_t step = *head[i] == least;
			head[i] += step;
			left[i] -= step;
			emptied |= left[i] == 0;
		}
		for (int i = 0; emptied && i < k;) {
			if (left[i] == 0) {
				head[i] = head[--k];
				left[i] = left[k];
			} else {
				i++;
			}
		}
	}
	*count = distinct;
	return AMQ_OK;
}

/* Adds the keys of sources[0..n) to out in one sorted stream
 * (amq_filter_add_collected): a single source in memory as it is, anything
 * else through a merge (each distinct key once, unless b counts rows). */
static amq_status add_sources(amq_builder *b, amq_filter *out, const amq_merge_source *sources,
			      int n, amq_error *err)
{
	if (n == 1 && sources[0].keys != NULL)
		return amq_filter_add_collected(out, sources[0].keys, (size_t)sources[0].count,
						&b->result, err);
	amq_merge m;
	amq_status st = amq_merge_open(&m, sources, n, !b->counts_rows, &b->alloc, err);
	if (st == AMQ_OK)
		amq_merge_report(&m, b, "inserting");
	for (size_t got = 1; st == AMQ_OK && got > 0;) {
		const uint64_t *keys;
		st = amq_merge_next(&m, &keys, &got, err);
		if (st == AMQ_OK)
			st = amq_filter_add_collected(out, keys, got, &b->result, err);
	}
	amq_merge_close(&m);
	return st;
}

/* The number of distinct keys in sources[0..n) (*distinct), by a merge that
 * only counts. */
static amq_status count_sources(amq_builder *b, const amq_merge_source *sources, int n,
				uint64_t *distinct, amq_error *err)
{
	amq_merge m;
	amq_status st = amq_merge_open(&m, sources, n, true, &b->alloc, err);
	if (st == AMQ_OK)
		amq_merge_report(&m, b, "counting");
	*distinct = 0;
	for (size_t got = 1; st == AMQ_OK && got > 0;) {
		const uint64_t *keys;
		st = amq_merge_next(&m, &keys, &got, err);
		*distinct += got;
	}
	amq_merge_close(&m);
	return st;
}

/* The filter holding the keys of sources[0..n) (distinct_count of them
 * distinct), added in the variant's order (add_sources). Without
 * a fixed capacity a filter that refuses an add (a cuckoo filter, possible,
 * rarely, just under its target load; a build-only variant whose
 * construction can fail) is rebuilt 1/8 larger, so the result is still a
 * function of the hashes alone. A refusal at twice the room the values need
 * is not about load (for cuckoo: more than 2b of the hashes share their
 * buckets and fingerprint, and only a table far larger than the values would
 * tell them apart), so it stops there. */
static amq_status finish_collected(amq_builder *b, const amq_merge_source *sources, int n,
				   uint64_t distinct_count, amq_filter *out, amq_error *err)
{
	uint64_t distinct = distinct_count ? distinct_count : 1;
	uint64_t capacity = b->capacity ? b->capacity : distinct;
	for (;;) {
		amq_status st = amq_filter_create(out, b->kind, b->layout, capacity, b->fpr,
						  b->seed, &b->result, err);
		if (st != AMQ_OK)
			return st;
		st = add_sources(b, out, sources, n, err);
		if (st == AMQ_OK)
			break;
		amq_filter_free(out, &b->result);
		if (st != AMQ_FILTER_FULL)
			return st;
		const amq_variant *v = amq_variant_find(b->kind, b->layout);
		/* A cuckoo add that found its buckets full of its own fingerprint:
		 * the hashes are distinct, so it is the case below whatever the
		 * size, not a value added too often. */
		bool inseparable = v->kind == AMQ_KIND_CUCKOO && err != NULL &&
				   strcmp(err->hint, AMQ_CUCKOO_COPIES_HINT) == 0;
		if (b->capacity != 0 && !inseparable)
			return st;
		if ((capacity >= 2 * distinct || b->capacity != 0) && v->kind == AMQ_KIND_CUCKOO)
			return amq_fail(
			    err, AMQ_FILTER_FULL,
			    "build a bloom filter of these values, or pass a smaller fpr "
			    "for longer fingerprints",
			    "cannot place %llu distinct values in a cuckoo filter: more "
			    "than %u of them share both buckets and the fingerprint",
			    (unsigned long long)distinct_count, 2 * v->slots);
		if (capacity >= 2 * distinct)
			return amq_fail(err, AMQ_FILTER_FULL, "",
					"cannot build a %s %s filter of %llu distinct values in "
					"twice their room",
					v->layout_name, v->kind_name,
					(unsigned long long)distinct_count);
		capacity += capacity / 8 + 1;
	}
	out->families = b->families;
	amq_filter_seal(out);
	return AMQ_OK;
}

/* A build-only variant with build_memory builds from every hash in memory
 * at once, in one piece: refused when that would pass b's working memory,
 * and whenever b holds a run anyway. Its own set never spills (spill_if_full);
 * a run comes only from a parallel state decoded into one because it was
 * larger than the working memory, at 5 or more bytes a key, where the build
 * takes over 16. */
static amq_status check_build_memory(const amq_builder *b, uint64_t distinct, bool spilled,
				     amq_error *err)
{
	const amq_variant *v = amq_variant_find(b->kind, b->layout);
	const amq_spill *s = b->alloc.spill;
	if (v->build_memory == NULL || s == NULL ||
	    (!spilled && v->build_memory(distinct) <= s->memory))
		return AMQ_OK;
	return build_memory_error(b, v, distinct, spilled, err);
}

amq_status amq_builder_finish(amq_builder *b, amq_filter *out, amq_error *err)
{
	if (b->handed_over)
		return used_again(err);
	if (b->streaming) {
		amq_status st = amq_filter_clone(out, &b->filter, &b->result, err);
		if (st == AMQ_OK) {
			out->families = b->families;
			amq_filter_seal(out);
		}
		return st;
	}
	/* A variant that depends on order inserts the whole set in its order:
	 * one merge of everything b holds (the joined set, when nothing
	 * spilled). An order-free Bloom filter's bits depend neither on order
	 * nor on repeats: items is set to the distinct count, which a merge
	 * that only reads counts, and in memory each sorted set is inserted as
	 * it is. */
	bool spilled = b->nspilled > 0;
	bool order_free = amq_variant_find(b->kind, b->layout)->order_free && !b->counts_rows;
	uint64_t distinct = 0;
	amq_status st = AMQ_OK;
	if (b->counts_rows)
		st = amq_hashbag_sort(&b->bag, &distinct, err);
	else if (order_free || spilled)
		st = amq_hashset_compact(&b->set, err);
	else
		st = join_runs(b, err);
	if (st == AMQ_OK && spilled)
		st = amq_spill_reduce(b, AMQ_SPILL_FAN_IN, err);
	amq_merge_source sources[AMQ_MERGE_MAX_SOURCES];
	int n = amq_spill_sources(b, sources);
	if (st == AMQ_OK && spilled)
		st = count_sources(b, sources, n, &distinct, err);
	else if (st == AMQ_OK && order_free)
		st = count_union(b, &distinct, err);
	else if (!b->counts_rows)
		distinct = b->set.count;
	if (st == AMQ_OK)
		st = check_build_memory(b, distinct, spilled, err);
	if (st != AMQ_OK)
		return st;
	if (!order_free)
		return finish_collected(b, sources, n, distinct, out, err);
	st = amq_filter_create(out, b->kind, b->layout, distinct ? distinct : 1, b->fpr, b->seed,
			       &b->result, err);
	if (st != AMQ_OK)
		return st;
	/* Spilled runs in one sorted sweep over the filter; sets in memory
	 * one at a time, without a merge. */
	if (spilled)
		st = add_sources(b, out, sources, n, err);
	for (int i = 0; !spilled && st == AMQ_OK && i < n; i++)
		st = add_sources(b, out, &sources[i], 1, err);
	if (st != AMQ_OK) {
		amq_filter_free(out, &b->result);
		return st;
	}
	out->items = distinct;
	out->families = b->families;
	amq_filter_seal(out);
	return AMQ_OK;
}

/*
 * State layout (little-endian): "AMQB", version, kind, layout, streaming,
 * fpr as IEEE-754 bits, capacity, seed, rows, the families seen, the runs
 * handed over; then the sealed streaming filter, or n and the n hashes
 * (sorted, distinct; a counting bag's sorted with duplicates) as Golomb-Rice
 * coded gaps (build/rice.h), or for each run handed over its key count and
 * its token (amq_spill.hand_over). Only ever read back by the same build,
 * but checked as carefully as a filter.
 */
#define STATE_RUNS 41
#define RUN_ENTRY (8 + AMQ_SPILL_TOKEN)

/* The header of b's state in p[0..STATE_HEADER). */
static void write_header(const amq_builder *b, uint8_t *p, uint8_t runs)
{
	uint64_t fpr_bits;
	memcpy(&fpr_bits, &b->fpr, sizeof(fpr_bits));
	memset(p, 0, STATE_HEADER);
	memcpy(p, STATE_MAGIC, 4);
	p[4] = STATE_VERSION;
	p[5] = (uint8_t)b->kind;
	p[6] = (uint8_t)b->layout;
	p[7] = b->streaming;
	amq_store64le(p + 8, fpr_bits);
	amq_store64le(p + 16, b->capacity);
	amq_store64le(p + 24, b->seed);
	amq_store64le(p + 32, b->rows);
	p[STATE_FAMILIES] = b->families;
	p[STATE_RUNS] = runs;
}

/* The state of a builder whose keys stay in files: what it holds in memory
 * becomes runs too, and the state names each run's file by its token. */
static amq_status serialize_runs(amq_builder *b, uint8_t **out, size_t *len, amq_error *err)
{
	const amq_spill *s = b->alloc.spill;
	if (s == NULL || s->hand_over == NULL)
		return amq_fail(err, AMQ_SPILL_FAILED, "",
				"cannot pass a filter aggregate state of %llu values to another "
				"process: this engine's temporary files stay in theirs",
				(unsigned long long)b->rows);
	amq_status st =
	    b->counts_rows ? spill_bag(b, &b->bag, err) : amq_hashset_compact(&b->set, err);
	if (st == AMQ_OK && !b->counts_rows) {
		st = amq_spill_run_add(b, b->set.hashes, b->set.count, err);
		if (st == AMQ_OK)
			b->set.count = b->set.sorted = 0;
	}
	while (st == AMQ_OK && b->nruns > 0) {
		amq_hashset *run = &b->runs[b->nruns - 1];
		st = amq_spill_run_add(b, run->hashes, run->count, err);
		if (st == AMQ_OK) {
			amq_hashset_free(run);
			b->nruns--;
		}
	}
	if (st != AMQ_OK)
		return st;
	size_t size = STATE_HEADER + (size_t)b->nspilled * RUN_ENTRY;
	uint8_t *p = b->result.alloc(b->result.ctx, size);
	if (p == NULL)
		return amq_fail(err, AMQ_NO_MEMORY, "",
				"out of memory serializing a filter aggregate");
	write_header(b, p, (uint8_t)b->nspilled);
	/* Each file handed over is no longer b's, even if a later one fails;
	 * those after a failure are still b's, and closed. */
	b->handed_over = true;
	int r = 0;
	for (; st == AMQ_OK && r < b->nspilled; r++) {
		uint8_t *entry = p + STATE_HEADER + (size_t)r * RUN_ENTRY;
		amq_store64le(entry, b->spilled[r].count);
		st = s->hand_over(s->ctx, b->spilled[r].file, entry + 8, err);
		b->spilled[r].file = NULL;
	}
	for (; r < b->nspilled; r++)
		s->close(s->ctx, b->spilled[r].file);
	b->nspilled = 0;
	if (st != AMQ_OK) {
		b->result.free(b->result.ctx, p);
		return st;
	}
	*out = p;
	*len = size;
	return AMQ_OK;
}

amq_status amq_builder_serialize(amq_builder *b, uint8_t **out, size_t *len, amq_error *err)
{
	uint64_t body;
	unsigned k = 0;
	const uint64_t *hashes = NULL;
	uint64_t n = 0;
	if (b->handed_over)
		return used_again(err);
	if (b->streaming) {
		amq_filter_seal(&b->filter);
		body = b->filter.size;
	} else if (b->nspilled > 0) {
		return serialize_runs(b, out, len, err);
	} else {
		amq_status st =
		    b->counts_rows ? amq_hashbag_sort(&b->bag, &n, err) : join_runs(b, err);
		if (st != AMQ_OK)
			return st;
		hashes = b->counts_rows ? b->bag.hashes : b->set.hashes;
		n = b->counts_rows ? b->bag.count : b->set.count;
		body = 8 + amq_rice_size(hashes, n, &k);
		if (b->state_max != 0 && STATE_HEADER + body > b->state_max)
			return serialize_runs(b, out, len, err);
	}
	if (body > SIZE_MAX - STATE_HEADER)
		return amq_fail(err, AMQ_NO_MEMORY, "", "a filter aggregate state past memory");
	uint8_t *p = b->result.alloc(b->result.ctx, STATE_HEADER + (size_t)body);
	if (p == NULL)
		return amq_fail(err, AMQ_NO_MEMORY, "",
				"out of memory serializing a filter aggregate");
	write_header(b, p, 0);
	if (b->streaming) {
		memcpy(p + STATE_HEADER, b->filter.bytes, b->filter.size);
	} else {
		amq_store64le(p + STATE_HEADER, n);
		amq_rice_encode(hashes, n, k, p + STATE_HEADER + 8);
	}
	*out = p;
	*len = STATE_HEADER + (size_t)body;
	return AMQ_OK;
}

static amq_status bad_state(amq_builder *b, amq_error *err, const char *what)
{
	amq_builder_free(b);
	return amq_fail(err, AMQ_INVALID_ARGUMENT, "", "invalid filter aggregate state: %s", what);
}

/* Keys decoded and written out at a time by decode_to_run. */
#define DECODE_CHUNK 8192

/* A deserialized state too large for b's memory: its n hashes (Rice coded
 * in in[0..len)) decoded a chunk at a time into one spilled run. */
static amq_status decode_to_run(amq_builder *b, const uint8_t *in, size_t len, size_t n,
				amq_error *err)
{
	amq_rice_reader r;
	const char *wrong = amq_rice_start(&r, in, len, !b->counts_rows);
	if (wrong != NULL)
		return bad_state(b, err, wrong);
	uint64_t *chunk = b->alloc.alloc(b->alloc.ctx, DECODE_CHUNK * sizeof(uint64_t));
	if (chunk == NULL) {
		amq_builder_free(b);
		return amq_fail(err, AMQ_NO_MEMORY, "",
				"out of memory reading a filter aggregate state");
	}
	void *file;
	amq_status st = amq_spill_run_begin(b, &file, err);
	for (size_t done = 0; st == AMQ_OK && wrong == NULL && done < n;) {
		size_t piece = n - done < DECODE_CHUNK ? n - done : DECODE_CHUNK;
		wrong = amq_rice_get(&r, piece, chunk);
		if (wrong == NULL)
			st = amq_spill_run_write(b, file, chunk, piece, err);
		done += piece;
	}
	if (st == AMQ_OK && wrong == NULL)
		wrong = amq_rice_finish(&r);
	b->alloc.free(b->alloc.ctx, chunk);
	if (st == AMQ_OK && wrong == NULL) {
		amq_spill_run_end(b, file, n);
		return AMQ_OK;
	}
	if (file != NULL)
		amq_spill_run_drop(b, file);
	if (wrong != NULL)
		return bad_state(b, err, wrong);
	amq_builder_free(b);
	return st;
}

/* A state whose runs were handed over (serialize_runs): each file taken
 * over from its token becomes one of b's runs. */
static amq_status take_runs(amq_builder *b, int runs, const uint8_t *body, size_t len,
			    amq_error *err)
{
	const amq_spill *s = b->alloc.spill;
	if (b->streaming || runs > AMQ_SPILL_RUNS || len != (size_t)runs * RUN_ENTRY)
		return bad_state(b, err, "runs do not match their length");
	if (s == NULL || s->take_over == NULL)
		return bad_state(b, err, "runs handed over to an engine that cannot take them");
	for (int r = 0; r < runs; r++) {
		const uint8_t *entry = body + (size_t)r * RUN_ENTRY;
		void *file = s->take_over(s->ctx, entry + 8, err);
		if (file == NULL) {
			amq_builder_free(b);
			return AMQ_SPILL_FAILED;
		}
		b->spilled[b->nspilled].file = file;
		b->spilled[b->nspilled++].count = amq_load64le(entry);
	}
	return AMQ_OK;
}

amq_status amq_builder_deserialize(amq_builder *b, const void *buf, size_t len,
				   const amq_allocator *a, amq_error *err)
{
	const uint8_t *p = buf;
	memset(b, 0, sizeof(*b));
	b->alloc = *a;
	amq_hashset_init(&b->set, a);
	amq_hashbag_init(&b->bag, a);
	if (len < STATE_HEADER || memcmp(p, STATE_MAGIC, 4) != 0 || p[4] != STATE_VERSION)
		return bad_state(b, err, "bad header");
	double fpr;
	uint64_t fpr_bits = amq_load64le(p + 8);
	memcpy(&fpr, &fpr_bits, sizeof(fpr));
	amq_status st = set_params(b, (amq_kind)p[5], (amq_layout)p[6], fpr, amq_load64le(p + 16),
				   amq_load64le(p + 24), a, err);
	if (st != AMQ_OK) {
		amq_builder_free(b);
		return st;
	}
	b->rows = amq_load64le(p + 32);
	b->families = p[STATE_FAMILIES];
	if (b->families > AMQ_FAMILIES_ALL)
		return bad_state(b, err, "unknown value families");
	if (p[7] != b->streaming)
		return bad_state(b, err, "mode does not match parameters");
	const uint8_t *body = p + STATE_HEADER;
	size_t body_len = len - STATE_HEADER;
	if (p[STATE_RUNS] != 0)
		return take_runs(b, p[STATE_RUNS], body, body_len, err);
	if (b->streaming) {
		/* Allocate only what the bytes hold, never what a damaged capacity
		 * field claims: open the filter, check it is the one the
		 * parameters size, then copy it. */
		amq_filter view;
		uint64_t bits;
		uint32_t hashes;
		st = amq_filter_open(&view, body, body_len, err);
		if (st == AMQ_OK)
			st = amq_filter_verify(&view, err);
		if (st == AMQ_OK)
			st = amq_filter_size(b->kind, b->layout, b->capacity, b->fpr, &hashes,
					     &bits, err);
		if (st != AMQ_OK) {
			amq_builder_free(b);
			return st;
		}
		if (view.kind != b->kind || view.layout != b->layout || view.cells != bits ||
		    view.hashes != hashes || view.seed != b->seed)
			return bad_state(b, err, "filter does not match parameters");
		st = amq_filter_clone(&b->filter, &view, a, err);
		if (st != AMQ_OK)
			amq_builder_free(b);
		return st;
	}
	/* A count the bytes cannot hold (every hash takes at least one bit) is
	 * refused before anything is allocated for it. */
	if (body_len < 9 || amq_load64le(body) > (body_len - 9) * 8)
		return bad_state(b, err, "hash count does not match its length");
	size_t n = (size_t)amq_load64le(body);
	if (n > amq_spill_room(b) / 8)
		return decode_to_run(b, body + 8, body_len - 8, n, err);
	/* A counting builder keeps the duplicates that are its point; other
	 * workers send distinct hashes, and the leader counts and merges them
	 * in linear time trusting that, so check it. */
	st = b->counts_rows ? amq_hashbag_reserve(&b->bag, n, err)
			    : amq_hashset_reserve(&b->set, n, err);
	if (st != AMQ_OK) {
		amq_builder_free(b);
		return st;
	}
	const char *wrong = amq_rice_decode(body + 8, body_len - 8, n, !b->counts_rows,
					    b->counts_rows ? b->bag.hashes : b->set.hashes);
	if (wrong != NULL)
		return bad_state(b, err, wrong);
	if (b->counts_rows)
		b->bag.count = n;
	else
		b->set.count = b->set.sorted = n;
	return AMQ_OK;
}

void amq_builder_free(amq_builder *b)
{
	amq_filter_free(&b->filter, &b->alloc);
	amq_hashset_free(&b->set);
	amq_hashbag_free(&b->bag);
	for (int r = 0; r < b->nruns; r++)
		amq_hashset_free(&b->runs[r]);
	b->nruns = 0;
	amq_spill_free(b);
}
