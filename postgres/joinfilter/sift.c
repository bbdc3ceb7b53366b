/*
 * joinfilter/sift.c - probes that drop rows inside the sequential scan
 * below them, a heap page at a time.
 *
 * A probe that tests the rows a scan returns pays, for every row it drops,
 * the whole way of a row up the executor: the heap scan hands it to a slot,
 * the scan node checks its qual and projects it, the probe node is called.
 * For a selective filter that is most of the query's time. So the probes
 * stacked right above a sequential scan of a heap table sift its pages
 * instead: on the first row they see of a page, they test the page's other
 * visible tuples at once (amq_filter_contains_many loads each filter block a
 * few probes ahead) and take the ones no filter may hold out of the scan's
 * list of visible tuples, so that the scan never returns them.
 *
 * The heap scan in page-at-a-time mode (the mode of every MVCC scan) keeps
 * that list in its descriptor: rs_vistuples[0 .. rs_ntuples) are the offsets
 * of the tuples its snapshot sees on the current page, and rs_cindex the one
 * it returned last. heapgettup_pagemode reads rs_ntuples and the next entry
 * afresh on every call, so shortening the part after rs_cindex changes only
 * which of those rows the scan goes on to return. The tuples are read as the
 * scan reads them: the scan holds its pin on the page, and a visible tuple's
 * data neither moves nor changes while a pin is held (catalogs, whose tuples
 * may change in place, are not sifted). PostgreSQL 16 to 19 keep these
 * fields with the same meaning (18 made rs_cindex and rs_ntuples uint32);
 * the README's porting notes say where each version's code was read.
 *
 * Each probe of the stack tests the rows the ones below it kept, as row by
 * row, and counts them in its judge's windows, which may switch it off in the
 * middle of a page: the rest of the page then passes it untested.
 *
 * The scan's qual and projection then run only for the rows kept. A scan
 * where that could change what the query does (a volatile function, or a
 * column passed to a function that may raise an error) is not sifted.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/tableam.h"
#include "catalog/catalog.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/tlist.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "joinfilter/nodes.h"

/* Whether running exprs (a scan's qual or the expressions of its target
 * list) for only the rows the filters keep cannot change what the query
 * does: they call no volatile function, which must run for every row, and
 * pass no column to a function that is not leakproof, which might raise an
 * error for a row the filters would drop (as a division by zero would). */
static bool fewer_rows_safe(List *exprs)
{
	return !contain_volatile_functions((Node *)exprs) && !contain_leaked_vars((Node *)exprs);
}

/* Whether input is a sequential scan of a heap table other than a catalog,
 * whose qual and projection may run for fewer rows. */
static bool siftable_scan(PlanState *input)
{
	Relation rel;

	if (!IsA(input, SeqScanState) || !fewer_rows_safe(input->plan->qual) ||
	    !fewer_rows_safe(get_tlist_exprs(input->plan->targetlist, false)))
		return false;
	rel = ((ScanState *)input)->ss_currentRelation;
	return rel != NULL && rel->rd_tableam == GetHeapamTableAmRoutine() &&
	       !IsCatalogRelation(rel);
}

/* The key columns of state in the scanned table: its own when the scan
 * returns the table's rows as they are; NULL when one of them is not a column
 * of the table (the scan computes it in its projection). */
static AttrNumber *heap_columns(amq_jf_probe_state *state, SeqScanState *scan)
{
	Scan *plan = (Scan *)scan->ss.ps.plan;
	AttrNumber *columns;

	if (scan->ss.ps.ps_ProjInfo == NULL)
		return state->attnos;
	columns = palloc(sizeof(AttrNumber) * state->nkeys);
	for (int k = 0; k < state->nkeys; k++) {
		Var *var =
		    (Var *)list_nth_node(TargetEntry, plan->plan.targetlist, state->attnos[k] - 1)
			->expr;

		if (!IsA(var, Var) || var->varno != (int)plan->scanrelid || var->varlevelsup != 0 ||
		    var->varattno < 1)
			return NULL;
		columns[k] = var->varattno;
	}
	return columns;
}

void amq_jf_sift_join(amq_jf_probe_state *state, PlanState *input)
{
	if (IsA(input, CustomScanState) &&
	    ((CustomScanState *)input)->methods == &amq_jf_probe_exec_methods) {
		state->sift = ((amq_jf_probe_state *)input)->sift;
	} else if (siftable_scan(input)) {
		state->sift = palloc0(sizeof(amq_jf_sift));
		state->sift->scan = (SeqScanState *)input;
		amq_jf_sift_restart(state->sift);
	}
	if (state->sift == NULL)
		return;
	state->heap_attnos = heap_columns(state, state->sift->scan);
	if (state->heap_attnos != NULL)
		state->sift->probes = lappend(state->sift->probes, state);
}

void amq_jf_sift_restart(amq_jf_sift *sift)
{
	sift->buffer = InvalidBuffer;
	sift->block = InvalidBlockNumber;
	sift->from = 0;
}

/* The hash of the keys of the tuple at offset off of page, or false when one
 * of them is NULL (hash operators are strict: it matches nothing). */
static bool tuple_hash(amq_jf_probe_state *state, Page page, BlockNumber block, OffsetNumber off,
		       TupleDesc desc, uint64 *hash)
{
	ItemId lp = PageGetItemId(page, off);
	HeapTupleData tuple;
	Datum values[INDEX_MAX_KEYS];
	bool isnull = false;

	tuple.t_data = (HeapTupleHeader)PageGetItem(page, lp);
	tuple.t_len = ItemIdGetLength(lp);
	tuple.t_tableOid = InvalidOid;
	ItemPointerSet(&tuple.t_self, block, off);
	for (int k = 0; k < state->nkeys && !isnull; k++)
		values[k] = heap_getattr(&tuple, state->heap_attnos[k], desc, &isnull);
	if (isnull)
		return false;
	*hash = amq_jf_probe_hash(state, values);
	return true;
}

/* Tests the tuples at offsets[0 .. n) (in ascending order) with the filter
 * of state, in stretches that end where its judge's windows end, and keeps
 * the ones it may hold at the front of offsets, in order; returns how many it
 * kept. Once the judge is off, keeps the rest untested: state->sifted_through
 * is the offset of the last tuple it tested. */
static int sift_with(amq_jf_probe_state *state, Page page, BlockNumber block, TupleDesc desc,
		     OffsetNumber *offsets, int n)
{
	uint64 hashes[MaxHeapTuplesPerPage];
	bool hashed[MaxHeapTuplesPerPage], may[MaxHeapTuplesPerPage];
	int kept = 0, next = 0;

	while (next < n && amq_jf_judge_on(state->judge)) {
		int count = Min((uint32)(n - next), amq_jf_judge_window_left(state->judge));
		uint32 passed = 0;

		state->sifted_through = offsets[next + count - 1];
		for (int i = 0; i < count; i++)
			hashed[i] =
			    tuple_hash(state, page, block, offsets[next + i], desc, &hashes[i]);
		amq_filter_contains_many(&state->filter->bloom, hashes, count, may);
		for (int i = 0; i < count; i++)
			if (hashed[i] && may[i]) {
				offsets[kept++] = offsets[next + i];
				passed++;
			}
		next += count;
		amq_jf_count_probes(state, count, passed);
	}
	while (next < n)
		offsets[kept++] = offsets[next++];
	return kept;
}

/* The scan below the stack, when it is reading a page in page-at-a-time
 * mode; else NULL. */
static HeapScanDesc scan_on_page(amq_jf_sift *sift)
{
	HeapScanDesc scan = (HeapScanDesc)sift->scan->ss.ss_currentScanDesc;

	if (scan == NULL || !(scan->rs_base.rs_flags & SO_ALLOW_PAGEMODE) ||
	    !BufferIsValid(scan->rs_cbuf))
		return NULL;
	return scan;
}

amq_jf_sift_place amq_jf_sift_row(amq_jf_probe_state *state)
{
	amq_jf_sift *sift = state->sift;
	HeapScanDesc scan = scan_on_page(sift);

	if (scan == NULL)
		return AMQ_JF_ROW_UNSIFTED;
	if (scan->rs_cbuf != sift->buffer || scan->rs_cblock != sift->block)
		return AMQ_JF_ROW_STARTS_PAGE;
	/* rs_cindex and rs_ntuples are int up to 17 and uint32 from 18 on. */
	if ((int)scan->rs_cindex >= sift->from &&
	    scan->rs_vistuples[scan->rs_cindex] <= state->sifted_through)
		return AMQ_JF_ROW_SIFTED;
	return AMQ_JF_ROW_UNSIFTED;
}

void amq_jf_sift_rest(amq_jf_sift *sift)
{
	HeapScanDesc scan = scan_on_page(sift);
	Page page = BufferGetPage(scan->rs_cbuf);
	TupleDesc desc = RelationGetDescr(scan->rs_base.rs_rd);
	ListCell *lc;
	int n;

	sift->buffer = scan->rs_cbuf;
	sift->block = scan->rs_cblock;
	sift->from = (int)scan->rs_cindex + 1;
	n = (int)scan->rs_ntuples - sift->from;
	foreach (lc, sift->probes) {
		amq_jf_probe_state *p = lfirst(lc);

		p->sifted_through = InvalidOffsetNumber;
		if (amq_jf_probing(p) && n > 0)
			n = sift_with(p, page, scan->rs_cblock, desc,
				      &scan->rs_vistuples[sift->from], n);
	}
	scan->rs_ntuples = sift->from + n;
}
