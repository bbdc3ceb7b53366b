/*
 * filter/temp_files.c - the temporary files bloom_agg and cuckoo_agg spill
 * their sorted runs to past work_mem (core's amq_spill): PostgreSQL's
 * BufFile, so temp_tablespaces, temp_file_limit and log_temp_files apply
 * and the files go when the query ends, as a sort's do.
 *
 * One set of files per aggregate memory context, shared by every builder in
 * it (transition states and the states a leader deserializes), so a run
 * changes hands between them without a copy. A file is closed when core is
 * done with it; the rest when the context is reset or deleted (the end of a
 * group, of the query, or of a rescan), by a reset callback. During an
 * abort the callback only forgets them: the resource owner closes them
 * (a BufFileClose would flush, and could fail again, as temp_file_limit's
 * error does), as it does a sort's.
 *
 * A partial aggregate that serializes its states (a parallel worker's, or
 * the leader's own part) writes its runs to the files of its leader's
 * directory instead (filter/handed_files.c), so its state can hand them
 * over by name; the process that reads the state takes them over, and
 * removes each when core closes it. Those that an abort leaves are the
 * leader's to remove at its end of transaction.
 */
#include "postgres.h"

#include "access/xact.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "storage/fileset.h"
#include "utils/memutils.h"

#include "filter/filter.h"

/* The size of one segment of a BufFile (buffile.c's MAX_PHYSICAL_FILESIZE,
 * 1 GiB in every release): BufFileSeek takes a segment and an offset in it. */
#define BUFFILE_SEGMENT ((uint64)0x40000000)

/* The files of one aggregate context; those of a serializing aggregate in
 * its leader's directory (handing_over). */
typedef struct temp_files {
	amq_spill spill;
	MemoryContext context;
	dlist_head files;
	dlist_node node; /* in live_sets */
	MemoryContextCallback on_reset;
	bool handing_over;
	FileSet directory;
} temp_files;

/* One run's file, and where its next read or write starts; a file of a
 * leader's directory (in_directory) by its name there. */
typedef struct temp_file {
	dlist_node node;
	BufFile *file;
	uint64 position;
	bool in_directory;
	FileSet directory;
	pid_t maker;
	uint32 number;
	char name[64];
} temp_file;

/* The number of this process's next file in its leader's directory. */
static uint32 next_handed_file;

static dlist_head live_sets = DLIST_STATIC_INIT(live_sets);

/* amq_spill's create: a new BufFile in the set's context. */
static void *create_file(void *ctx, amq_error *err)
{
	temp_files *set = ctx;
	MemoryContext old = MemoryContextSwitchTo(set->context);
	temp_file *f = palloc0(sizeof(*f));

	if (set->handing_over) {
		f->in_directory = true;
		f->directory = set->directory;
		f->maker = MyProcPid;
		f->number = next_handed_file++;
		amq_pg_handed_file_name(f->name, sizeof(f->name), f->maker, f->number);
		f->file = BufFileCreateFileSet(&f->directory, f->name);
	} else
		f->file = BufFileCreateTemp(false);
	dlist_push_tail(&set->files, &f->node);
	MemoryContextSwitchTo(old);
	return f;
}

/* amq_spill's write: an append (BufFile raises its own errors, such as
 * temp_file_limit's). */
static amq_status write_file(void *ctx, void *file, const void *buf, size_t len, amq_error *err)
{
	temp_file *f = file;

	BufFileWrite(f->file, (void *)buf, len);
	f->position += len;
	return AMQ_OK;
}

/* amq_spill's read: len bytes at offset, seeking only when the reads of
 * this file are not consecutive. */
static amq_status read_file(void *ctx, void *file, uint64_t offset, void *buf, size_t len,
			    amq_error *err)
{
	temp_file *f = file;

	if (offset != f->position && BufFileSeek(f->file, (int)(offset / BUFFILE_SEGMENT),
						 (off_t)(offset % BUFFILE_SEGMENT), SEEK_SET) != 0)
		ereport(ERROR, errcode_for_file_access(),
			errmsg("could not seek in a temporary file of a filter aggregate to %llu",
			       (unsigned long long)offset));
	if (BufFileRead(f->file, buf, len) != len)
		ereport(ERROR, errcode_for_file_access(),
			errmsg("could not read %zu bytes of a temporary file of a filter "
			       "aggregate",
			       len));
	f->position = offset + len;
	return AMQ_OK;
}

/* Closes f's BufFile; a file of a leader's directory goes by name. */
static void close_buffile(temp_file *f)
{
	BufFileClose(f->file);
	if (f->in_directory)
		BufFileDeleteFileSet(&f->directory, f->name, true);
}

/* amq_spill's close: the file goes. */
static void close_file(void *ctx, void *file)
{
	temp_file *f = file;

	close_buffile(f);
	dlist_delete(&f->node);
	pfree(f);
}

/* amq_spill's hand_over: the file, written out and closed, stays in the
 * leader's directory under its name, which the token holds with the
 * directory's tablespaces. */
static amq_status hand_over_file(void *ctx, void *file, uint8_t token[AMQ_SPILL_TOKEN],
				 amq_error *err)
{
	temp_file *f = file;

	BufFileExportFileSet(f->file);
	BufFileClose(f->file);
	amq_pg_handed_token(&f->directory, f->maker, f->number, token);
	dlist_delete(&f->node);
	pfree(f);
	return AMQ_OK;
}

/* amq_spill's take_over: opens the file a state names, in this process's
 * own directory only; it goes when core closes it. */
static void *take_over_file(void *ctx, const uint8_t token[AMQ_SPILL_TOKEN], amq_error *err)
{
	temp_files *set = ctx;
	MemoryContext old = MemoryContextSwitchTo(set->context);
	temp_file *f = palloc0(sizeof(*f));

	if (!amq_pg_handed_token_read(token, &f->directory, &f->maker, &f->number))
		ereport(ERROR, errcode(ERRCODE_DATA_CORRUPTED),
			errmsg("invalid filter aggregate state: a run in another process's "
			       "temporary files"));
	amq_pg_handed_file_name(f->name, sizeof(f->name), f->maker, f->number);
	f->in_directory = true;
	f->file = BufFileOpenFileSet(&f->directory, f->name, O_RDONLY, false);
	dlist_push_tail(&set->files, &f->node);
	MemoryContextSwitchTo(old);
	return f;
}

/* The set's context is reset or deleted: close what is left (unless the
 * transaction is aborting), forget it. */
static void reset_set(void *arg)
{
	temp_files *set = arg;
	bool aborting = !IsTransactionState();
	dlist_mutable_iter it;

	dlist_foreach_modify(it, &set->files)
	{
		temp_file *f = dlist_container(temp_file, node, it.cur);

		if (!aborting)
			close_buffile(f);
		dlist_delete(&f->node);
	}
	dlist_delete(&set->node);
}

const amq_spill *amq_pg_temp_files(MemoryContext aggctx, bool handing_over)
{
	dlist_iter it;
	temp_files *set;

	dlist_foreach(it, &live_sets)
	{
		set = dlist_container(temp_files, node, it.cur);
		if (set->context == aggctx)
			return &set->spill;
	}
	set = MemoryContextAllocZero(aggctx, sizeof(*set));
	set->spill = (amq_spill){.memory = (size_t)work_mem * 1024,
				 .ctx = set,
				 .create = create_file,
				 .write = write_file,
				 .read = read_file,
				 .close = close_file,
				 .hand_over = handing_over ? hand_over_file : NULL,
				 .take_over = take_over_file};
	set->context = aggctx;
	set->handing_over = handing_over;
	if (handing_over)
		amq_pg_handed_files_init(&set->directory);
	dlist_init(&set->files);
	set->on_reset.func = reset_set;
	set->on_reset.arg = set;
	MemoryContextRegisterResetCallback(aggctx, &set->on_reset);
	dlist_push_tail(&live_sets, &set->node);
	return &set->spill;
}
