/*
 * joinfilter/plan_data.c - what the planner tells the join filter's nodes,
 * as typed structures (joinfilter/nodes.h: amq_jf_probe_plan, amq_jf_build_plan),
 * and their one encoding as a CustomScan's custom_private: a flat list of
 * Integer, Float and String nodes, which copyObject, nodeToString and
 * stringToNode carry to parallel workers and cached plans. plan.c writes it;
 * probe.c, build.c and ship.c read it, only through this file.
 *
 * A probe: its filter's id, the pass rate it was planned with, the number of
 * keys, then per key its column, extended hash function, amq_jf_key_form and
 * collation, then its partition's constraint (an expression, or NULL). A
 * builder: the number of local filters, then per filter its id, its capacity
 * (a String: it may pass an int), the number of keys and per key its
 * extended hash function, form and collation, and whether it keeps its keys
 * (1 or 0); then the number of remote
 * filters, and per filter its id, its executor parameters (the Bloom filter's,
 * the set's, the range's two or -1) and its key type, the number of its
 * scans and per scan its plan_node_id, EXPLAIN label, skip parameter (or -1)
 * and partition constraint (or NULL).
 */
#include "postgres.h"

#include "nodes/nodes.h"
#include "nodes/value.h"
#include "utils/builtins.h"

#include "joinfilter/nodes.h"

/* A reader of a custom_private list. */
typedef struct plan_reader {
	List *list;
	ListCell *at;
} plan_reader;

static int read_int(plan_reader *r)
{
	int value = intVal(lfirst(r->at));

	r->at = lnext(r->list, r->at);
	return value;
}

static Node *read_node(plan_reader *r)
{
	Node *value = lfirst(r->at);

	r->at = lnext(r->list, r->at);
	return value;
}

/* One key; the column only where with_attno (a probe's). */
static List *write_key(List *out, const amq_jf_key_plan *key, bool with_attno)
{
	if (with_attno)
		out = lappend(out, makeInteger(key->attno));
	out = lappend(out, makeInteger((int)key->hash_proc));
	out = lappend(out, makeInteger((int)key->form));
	return lappend(out, makeInteger((int)key->collation));
}

static void read_key(plan_reader *r, amq_jf_key_plan *key, bool with_attno)
{
	key->attno = with_attno ? (AttrNumber)read_int(r) : InvalidAttrNumber;
	key->hash_proc = (Oid)read_int(r);
	key->form = (amq_jf_key_form)read_int(r);
	key->collation = (Oid)read_int(r);
}

List *amq_jf_probe_plan_write(const amq_jf_probe_plan *plan)
{
	List *out = list_make3(makeInteger(plan->filter_id),
			       makeFloat(psprintf("%.6f", plan->pass)), makeInteger(plan->nkeys));

	for (int k = 0; k < plan->nkeys; k++)
		out = write_key(out, &plan->keys[k], true);
	return lappend(out, copyObject(plan->partition_qual));
}

void amq_jf_probe_plan_read(List *private, amq_jf_probe_plan *plan)
{
	plan_reader r = {private, list_head(private)};

	plan->filter_id = read_int(&r);
	plan->pass = floatVal(read_node(&r));
	plan->nkeys = read_int(&r);
	plan->keys = palloc0(sizeof(amq_jf_key_plan) * plan->nkeys);
	for (int k = 0; k < plan->nkeys; k++)
		read_key(&r, &plan->keys[k], true);
	plan->partition_qual = read_node(&r);
}

List *amq_jf_build_plan_write(const amq_jf_build_plan *plan)
{
	List *out = list_make1(makeInteger(list_length(plan->filters)));
	ListCell *lc;

	foreach (lc, plan->filters) {
		const amq_jf_filter_plan *f = lfirst(lc);

		out = lappend(out, makeInteger(f->id));
		out = lappend(out, makeString(psprintf(UINT64_FORMAT, f->capacity)));
		out = lappend(out, makeInteger(f->nkeys));
		for (int k = 0; k < f->nkeys; k++)
			out = write_key(out, &f->keys[k], false);
		out = lappend(out, makeInteger(f->collect_keys));
	}
	out = lappend(out, makeInteger(list_length(plan->remote)));
	foreach (lc, plan->remote) {
		const amq_jf_remote_plan *rf = lfirst(lc);

		out = lappend(out, makeInteger(rf->id));
		out = lappend(out, makeInteger(rf->params.bloom));
		out = lappend(out, makeInteger(rf->params.set));
		out = lappend(out, makeInteger(rf->params.lo));
		out = lappend(out, makeInteger(rf->params.hi));
		out = lappend(out, makeInteger((int)rf->params.key_type));
		out = lappend(out, makeInteger(rf->params.fuse));
		out = lappend(out, makeInteger(rf->nscans));
		for (int s = 0; s < rf->nscans; s++) {
			out = lappend(out, makeInteger(rf->scan_ids[s]));
			out = lappend(out, makeString(pstrdup(rf->labels[s])));
			out = lappend(out, makeInteger((int)rf->relids[s]));
			out = lappend(out, makeInteger(rf->columns[s]));
			out = lappend(out, makeInteger(rf->skip_params[s]));
			out = lappend(out, copyObject(rf->partition_quals[s]));
		}
	}
	return out;
}

void amq_jf_build_plan_read(List *private, amq_jf_build_plan *plan)
{
	plan_reader r = {private, list_head(private)};
	int n;

	plan->filters = plan->remote = NIL;
	n = read_int(&r);
	for (int i = 0; i < n; i++) {
		amq_jf_filter_plan *f = palloc0(sizeof(*f));

		f->id = read_int(&r);
		f->capacity = strtou64(strVal(read_node(&r)), NULL, 10);
		f->nkeys = read_int(&r);
		f->keys = palloc0(sizeof(amq_jf_key_plan) * f->nkeys);
		for (int k = 0; k < f->nkeys; k++)
			read_key(&r, &f->keys[k], false);
		f->collect_keys = read_int(&r) != 0;
		plan->filters = lappend(plan->filters, f);
	}
	n = read_int(&r);
	for (int i = 0; i < n; i++) {
		amq_jf_remote_plan *rf = palloc0(sizeof(*rf));

		rf->id = read_int(&r);
		rf->params.bloom = read_int(&r);
		rf->params.set = read_int(&r);
		rf->params.lo = read_int(&r);
		rf->params.hi = read_int(&r);
		rf->params.key_type = (Oid)read_int(&r);
		rf->params.fuse = read_int(&r) != 0;
		rf->nscans = read_int(&r);
		rf->scan_ids = palloc(sizeof(int) * rf->nscans);
		rf->labels = palloc(sizeof(char *) * rf->nscans);
		rf->relids = palloc(sizeof(Oid) * rf->nscans);
		rf->columns = palloc(sizeof(AttrNumber) * rf->nscans);
		rf->skip_params = palloc(sizeof(int) * rf->nscans);
		rf->partition_quals = palloc(sizeof(Node *) * rf->nscans);
		for (int s = 0; s < rf->nscans; s++) {
			rf->scan_ids[s] = read_int(&r);
			rf->labels[s] = strVal(read_node(&r));
			rf->relids[s] = (Oid)read_int(&r);
			rf->columns[s] = (AttrNumber)read_int(&r);
			rf->skip_params[s] = read_int(&r);
			rf->partition_quals[s] = read_node(&r);
		}
		plan->remote = lappend(plan->remote, rf);
	}
}
