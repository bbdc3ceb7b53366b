/*
 * pg_join_filter_page.c - a probe's verdicts for a whole heap page at once.
 *
 * A probe right above a sequential scan sees the rows of each heap page one
 * after another. Probing them one per call puts the scan's own work for a
 * row between two filter lookups, more than the CPU can look ahead across, so
 * with a filter larger than the caches every probe waits for memory alone.
 * For such filters (amq.join_filter_page_min_memory) this file, when the
 * first row of a page arrives, reads the key of every tuple on the page and
 * probes them all at once with amq_bloom_contains_many, which loads each
 * block a few probes ahead, and keeps the verdicts; the page's rows then
 * cost the probe an array lookup each.
 *
 * Why a verdict stays right: the probe keeps its own pin on the page while
 * it holds its verdicts. While any backend holds a pin, no tuple on the page
 * can be pruned, moved or overwritten (that takes a cleanup lock), and a
 * heap tuple's columns never change in place, except for catalogs'
 * (heap_inplace_update), which are therefore probed row by row. A line
 * pointer unused when the page was read may get a new tuple later; it has
 * no verdict, and its row is probed by itself. A verdict is used only for the
 * very tuple it was computed from: same buffer, same offset, same address.
 * The line pointers are read under a share lock, as heapgetpage reads them.
 *
 * Only keys taken as their integer values are read this way. Other keys go
 * through their type's hash function, which may detoast, and a tuple on the
 * page that no snapshot sees any more may have lost its TOAST data to VACUUM.
 * A verdict on a tuple the scan does not return is never used, so reading
 * an integer from one does no harm.
 *
 * Pages whose rows mostly do not reach the probe (a scan qual drops them, or
 * they are dead) would make the page-wide loop cost more than it saves: after
 * such a page the probe goes row by row for the next AMQ_JF_PAGE_SKIP pages.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/catalog.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "pg_join_filter.h"

/* After a page where fewer than 1 in this many tuples reached the probe ... */
#define AMQ_JF_PAGE_MIN_SHARE 4
/* ... the probe goes row by row for this many pages. */
#define AMQ_JF_PAGE_SKIP 32

bool amq_jf_page_possible(PlanState *input, bool keys_allocate)
{
	Relation rel;

	if (keys_allocate || !IsA(input, SeqScanState))
		return false;
	rel = ((ScanState *)input)->ss_currentRelation;
	return rel != NULL && !IsCatalogRelation(rel);
}

amq_jf_page *amq_jf_page_create(MemoryContext cxt)
{
	amq_jf_page *page = MemoryContextAllocZero(cxt, sizeof(amq_jf_page));

	page->buffer = InvalidBuffer;
	page->last = InvalidBuffer;
	return page;
}

/* Drops the verdicts and the pin that keeps them right. */
void amq_jf_page_release(amq_jf_page *page)
{
	if (BufferIsValid(page->buffer))
		ReleaseBuffer(page->buffer);
	page->buffer = InvalidBuffer;
	page->last = InvalidBuffer;
	page->nitems = 0;
}

/* Whether the page just left paid for its page-wide loop; if not, the next
 * pages go row by row. */
static void judge_page(amq_jf_page *page)
{
	if (page->rows * AMQ_JF_PAGE_MIN_SHARE < page->normal)
		page->skip = AMQ_JF_PAGE_SKIP;
}

/* Pins buffer, the page of the slot's tuple (page holds no other pin), and
 * computes the verdict on every normal tuple on it. */
static void read_page(amq_jf_probe_state *state, amq_jf_page *page, Buffer buffer, TupleDesc desc)
{
	struct {
		OffsetNumber off;
		HeapTupleHeader data;
		uint32 len;
	} items[MaxHeapTuplesPerPage];
	uint64 hashes[MaxHeapTuplesPerPage];
	bool null[MaxHeapTuplesPerPage], may[MaxHeapTuplesPerPage];
	int n = 0;
	Page bytes = BufferGetPage(buffer);
	BlockNumber block = BufferGetBlockNumber(buffer);
	OffsetNumber maxoff;

	IncrBufferRefCount(buffer);
	page->buffer = buffer;
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	maxoff = Min(PageGetMaxOffsetNumber(bytes), MaxHeapTuplesPerPage);
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++) {
		ItemId lp = PageGetItemId(bytes, off);

		page->tuple[off] = NULL;
		if (!ItemIdIsNormal(lp))
			continue;
		items[n].off = off;
		items[n].data = (HeapTupleHeader)PageGetItem(bytes, lp);
		items[n].len = ItemIdGetLength(lp);
		n++;
	}
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	page->nitems = maxoff;
	page->normal = n;
	page->rows = 0;
	for (int i = 0; i < n; i++) {
		HeapTupleData tuple;
		Datum values[INDEX_MAX_KEYS];
		bool isnull = false;

		tuple.t_data = items[i].data;
		tuple.t_len = items[i].len;
		tuple.t_tableOid = InvalidOid;
		ItemPointerSet(&tuple.t_self, block, items[i].off);
		for (int k = 0; k < state->nkeys && !isnull; k++)
			values[k] = heap_getattr(&tuple, state->attnos[k], desc, &isnull);
		hashes[i] = isnull ? 0 : amq_jf_hash_keys(state->keys, state->nkeys, values);
		null[i] = isnull;
	}
	amq_bloom_contains_many(&state->filter->bloom, hashes, n, may);
	for (int i = 0; i < n; i++) {
		page->pass[items[i].off] = may[i] && !null[i];
		page->tuple[items[i].off] = items[i].data;
	}
}

amq_jf_verdict amq_jf_page_verdict(amq_jf_probe_state *state, TupleTableSlot *slot)
{
	amq_jf_page *page = state->page;
	HeapTuple tuple;
	Buffer buffer;
	OffsetNumber off;

	if (!TTS_IS_BUFFERTUPLE(slot))
		return AMQ_JF_VERDICT_UNKNOWN;
	buffer = ((BufferHeapTupleTableSlot *)slot)->buffer;
	tuple = ((HeapTupleTableSlot *)slot)->tuple;
	if (!BufferIsValid(buffer) || tuple == NULL)
		return AMQ_JF_VERDICT_UNKNOWN;
	if (buffer != page->last) { /* the first row of another page */
		if (BufferIsValid(page->buffer)) {
			judge_page(page);
			amq_jf_page_release(page);
		}
		page->last = buffer;
		if (page->skip > 0)
			page->skip--;
		else
			read_page(state, page, buffer, slot->tts_tupleDescriptor);
	}
	if (!BufferIsValid(page->buffer))
		return AMQ_JF_VERDICT_UNKNOWN;
	page->rows++;
	off = ItemPointerGetOffsetNumber(&tuple->t_self);
	if (off < FirstOffsetNumber || off > page->nitems || page->tuple[off] != tuple->t_data)
		return AMQ_JF_VERDICT_UNKNOWN;
	return page->pass[off] ? AMQ_JF_VERDICT_PASS : AMQ_JF_VERDICT_DROP;
}
