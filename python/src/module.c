/*
 * module.c - the amq._amq extension module: amq.Error, the builders
 * amq.bloom, amq.cuckoo, amq.fuse, one per aggregate of the function table
 * (core's amq_builder, as the aggregates use it, so the bytes are theirs),
 * amq.hash (SQL's amq_hash) and the Filter type (filter.c). The amq package
 * re-exports these.
 */
#include "pyamq.h"
#include "sql/arguments.h"
#include "sql/functions.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

PyObject *amq_py_error;

/*
 * The hints core gives in SQL's terms (SQL functions to call, a statement
 * that changes nothing), each with the advice Python gives instead: the
 * method or builder to use. The message stays core's, in the same words as
 * SQLite's and PostgreSQL's; only the hint is Python's. A core hint is
 * matched whole, here and nowhere else; one that is not in the table is
 * Python's advice as it is.
 */
static const struct {
	const char *sql, *python;
} python_hints[] = {
    /* Combining kinds (format.c, amq_filter_expect): in Python only union,
     * intersection, |, &, |= and &= meet a filter of the other kind. */
    {"use the bloom_* functions for bloom filters",
     "union and intersection take two bloom filters built alike (amq.bloom with the same fpr, "
     "capacity and layout); cuckoo filters do not combine"},
    {"use the cuckoo_* functions for cuckoo filters",
     "union and intersection take two bloom filters built alike (amq.bloom with the same fpr, "
     "capacity and layout); cuckoo filters do not combine"},
    /* delete and count on a Bloom layout without counters (variant.c). */
    {"build the filter with layout 'counting' for that",
     "build the filter with amq.bloom(values, layout='counting') for that"},
    /* A full cuckoo filter: add, amq.cuckoo with too small a capacity
     * (cuckoo.c), add_many (bulk.c). */
    {"rebuild with cuckoo_agg or a larger capacity",
     "build it with amq.cuckoo over every value and no capacity (sized for them), or with a "
     "larger capacity"},
    {"the statement changes nothing; rebuild it larger, with cuckoo_new(capacity) or "
     "cuckoo_agg over every value",
     "add_many changed nothing; rebuild it larger, with amq.cuckoo over every value and a "
     "larger capacity"},
    /* A value stored as often as a cuckoo filter can (cuckoo.c; bulk.c for
     * add_many): the package has add_unique and builds counting filters. */
    {AMQ_CUCKOO_COPIES_HINT, "use Filter.add_unique(value) to add a value once, or a counting "
			     "bloom filter (amq.bloom(values, layout='counting')) to count it"},
    {"the statement changes nothing; " AMQ_CUCKOO_COPIES_HINT,
     "add_many changed nothing; use Filter.add_unique(value) to add a value once, or a counting "
     "bloom filter (amq.bloom(values, layout='counting')) to count it"},
};

/* Python's advice for core's hint (python_hints), or the hint itself. */
static const char *python_hint(const char *hint)
{
	for (size_t i = 0; i < sizeof(python_hints) / sizeof(python_hints[0]); i++)
		if (strcmp(hint, python_hints[i].sql) == 0)
			return python_hints[i].python;
	return hint;
}

/*
 * A build's progress= callable and the exception it raised, if any (the
 * allocator's ctx, and the builder's progress_arg). Core tells
 * python_progress_report each merge's phase and keys read, from
 * amq_builder_add (GIL held) or amq_builder_finish (GIL released): it takes
 * the GIL to call the callable. An exception from it is kept aside, not left
 * set, since core goes on to the next poll of python_interrupted, which then
 * says stop; the build re-raises it (progress_reraise) whatever core says, as
 * it would a KeyboardInterrupt.
 */
typedef struct python_progress {
	PyObject *callable; /* borrowed from the call's arguments; NULL: none */
#if PY_VERSION_HEX >= 0x030C0000
	PyObject *raised; /* NULL: nothing raised */
#else
	PyObject *raised, *raised_value, *raised_traceback; /* PyErr_Fetch's */
#endif
} python_progress;

static void python_progress_report(void *arg, const char *phase, uint64_t done, uint64_t total)
{
	python_progress *p = arg;
	/* Once it raised, never again: the build is stopping. */
	if (p->callable == NULL || p->raised != NULL)
		return;
	PyGILState_STATE gil = PyGILState_Ensure();
	PyObject *result = PyObject_CallFunction(
	    p->callable, "sKK", phase, (unsigned long long)done, (unsigned long long)total);
	if (result == NULL) {
#if PY_VERSION_HEX >= 0x030C0000
		p->raised = PyErr_GetRaisedException();
#else
		PyErr_Fetch(&p->raised, &p->raised_value, &p->raised_traceback);
		PyErr_NormalizeException(&p->raised, &p->raised_value, &p->raised_traceback);
#endif
	}
	Py_XDECREF(result);
	PyGILState_Release(gil);
}

/* Sets the exception p's callable raised in place of any other (the
 * amq.Error "interrupted" core's stop would give, a KeyboardInterrupt).
 * Returns NULL, so callers can return its result. */
static PyObject *progress_reraise(python_progress *p)
{
	PyErr_Clear();
#if PY_VERSION_HEX >= 0x030C0000
	PyErr_SetRaisedException(p->raised);
#else
	PyErr_Restore(p->raised, p->raised_value, p->raised_traceback);
#endif
	p->raised = NULL;
	return NULL;
}

/* Ctrl-C while a build sorts and inserts without the GIL: core polls this
 * (amq_allocator's interrupted hook), which takes the GIL to run Python's
 * signal handlers; KeyboardInterrupt (or a handler's exception) is then set,
 * and core stops with AMQ_INTERRUPTED. It stops the same way once the
 * build's progress callable has raised (ctx, a python_progress). */
static bool python_interrupted(void *ctx)
{
	const python_progress *p = ctx;
	if (p->raised != NULL)
		return true;
	PyGILState_STATE gil = PyGILState_Ensure();
	int raised = PyErr_CheckSignals();
	PyGILState_Release(gil);
	return raised < 0;
}

PyObject *amq_py_raise(const amq_error *err)
{
	if (err->status == AMQ_NO_MEMORY)
		return PyErr_NoMemory();
	/* The exception a signal handler raised (python_interrupted). */
	if (err->status == AMQ_INTERRUPTED && PyErr_Occurred())
		return NULL;
	const char *advice = python_hint(err->hint);
	PyObject *text = advice[0] == '\0' ? PyUnicode_FromString(err->message)
					   : PyUnicode_FromFormat("%s: %s", err->message, advice);
	if (text == NULL)
		return NULL;
	PyObject *exc = PyObject_CallOneArg(amq_py_error, text);
	Py_DECREF(text);
	if (exc == NULL)
		return NULL;
	PyObject *message = PyUnicode_FromString(err->message);
	PyObject *hint = PyUnicode_FromString(advice);
	PyObject *state = PyUnicode_FromString(amq_status_sqlstate(err->status));
	if (message != NULL && hint != NULL && state != NULL &&
	    PyObject_SetAttrString(exc, "message", message) == 0 &&
	    PyObject_SetAttrString(exc, "hint", hint) == 0 &&
	    PyObject_SetAttrString(exc, "sqlstate", state) == 0)
		PyErr_SetObject(amq_py_error, exc);
	Py_XDECREF(message);
	Py_XDECREF(hint);
	Py_XDECREF(state);
	Py_DECREF(exc);
	return NULL;
}

/* hash(value): SQL's amq_hash, the value's 64-bit hash (seed 0) as a
 * signed integer; None for None, as amq_hash(NULL) is NULL. */
static PyObject *module_hash(PyObject *module, PyObject *value)
{
	(void)module;
	uint64_t hash;
	amq_family family;
	if (value == Py_None)
		Py_RETURN_NONE;
	if (amq_py_hash(value, AMQ_DEFAULT_SEED, &hash, &family) < 0)
		return NULL;
	return PyLong_FromLongLong((long long)hash);
}

/*
 * The temporary files of a collecting build past its work_mem (core's
 * amq_spill): in Python's tempfile directory, read once per build with the
 * GIL (build_spill). mkostemp makes each file, which is unlinked at once, as
 * tempfile.TemporaryFile does on POSIX: nothing is left behind whatever ends
 * the process, and closing the descriptor frees the space. Core calls these
 * from amq_builder_add (GIL held) and amq_builder_finish (GIL released), so
 * they touch no Python object. A file is its descriptor plus one (never
 * NULL).
 */
typedef struct python_spill {
	amq_spill spill;
	char *path; /* "<dir>/amq-XXXXXX", mkostemp's template; NULL: no dir */
	int dir_len;
} python_spill;

#define SPILL_NAME "/amq-XXXXXX"
/* The hint when no file can be made in the directory. */
#define SPILL_DIR_HINT                                                                             \
	"set TMPDIR (or tempfile.tempdir) to a writable directory, or pass a work_mem large "      \
	"enough that nothing spills"

static int spill_fd(void *file)
{
	return (int)((intptr_t)file - 1);
}

/* Fills err with what failed, in Python's words: the directory, the
 * system's reason and what to do. Returns AMQ_SPILL_FAILED. */
static amq_status spill_fail(const python_spill *s, amq_error *err, const char *what, int errnum)
{
	err->status = AMQ_SPILL_FAILED;
	const char *dir = s->path != NULL ? s->path : "";
	snprintf(err->message, sizeof(err->message), "could not %s a temporary file in %.*s: %s",
		 what, s->dir_len, dir, errnum != 0 ? strerror(errnum) : "unexpected end of file");
	if (errnum == ENOSPC || errnum == EDQUOT || errnum == EFBIG)
		snprintf(err->hint, sizeof(err->hint),
			 "free space in %.*s, or pass a larger work_mem so less spills", s->dir_len,
			 dir);
	else if (strcmp(what, "create") == 0)
		snprintf(err->hint, sizeof(err->hint), "%s", SPILL_DIR_HINT);
	else
		err->hint[0] = '\0';
	return AMQ_SPILL_FAILED;
}

static void *spill_create(void *ctx, amq_error *err)
{
	python_spill *s = ctx;
	if (s->path == NULL) {
		err->status = AMQ_SPILL_FAILED;
		snprintf(err->message, sizeof(err->message),
			 "could not create a temporary file: no usable temporary directory");
		snprintf(err->hint, sizeof(err->hint), "%s", SPILL_DIR_HINT);
		return NULL;
	}
	/* One builder creates its files one at a time: the template is reused. */
	memcpy(s->path + s->dir_len, SPILL_NAME, sizeof(SPILL_NAME));
	int fd = mkostemp(s->path, O_CLOEXEC);
	if (fd < 0) {
		spill_fail(s, err, "create", errno);
		return NULL;
	}
	if (unlink(s->path) != 0) {
		int errnum = errno;
		close(fd);
		spill_fail(s, err, "create", errnum);
		return NULL;
	}
	return (void *)((intptr_t)fd + 1);
}

static amq_status spill_write(void *ctx, void *file, const void *buf, size_t len, amq_error *err)
{
	const char *p = buf;
	while (len > 0) {
		/* Linux writes at most 0x7ffff000 bytes at once. */
		ssize_t n =
		    write(spill_fd(file), p, len < ((size_t)1 << 30) ? len : (size_t)1 << 30);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return spill_fail(ctx, err, "write", n < 0 ? errno : ENOSPC);
		p += n;
		len -= (size_t)n;
	}
	return AMQ_OK;
}

static amq_status spill_read(void *ctx, void *file, uint64_t offset, void *buf, size_t len,
			     amq_error *err)
{
	char *p = buf;
	while (len > 0) {
		ssize_t n = pread(spill_fd(file), p,
				  len < ((size_t)1 << 30) ? len : (size_t)1 << 30, (off_t)offset);
		if (n < 0 && errno == EINTR)
			continue;
		/* A short file is damage: core reads back only what it wrote. */
		if (n <= 0)
			return spill_fail(ctx, err, "read", n < 0 ? errno : 0);
		p += n;
		len -= (size_t)n;
		offset += (uint64_t)n;
	}
	return AMQ_OK;
}

static void spill_close(void *ctx, void *file)
{
	(void)ctx;
	/* Not retried on EINTR: Linux has closed the descriptor either way. */
	(void)close(spill_fd(file));
}

/*
 * Readies s for a build with memory bytes of working memory: its files go
 * into tempfile.gettempdir(), read now (with the GIL). A Python with no
 * usable temporary directory (gettempdir's OSError) still builds whatever
 * fits in memory; the first file it would need is the error. 0, or -1 with an
 * exception set.
 */
static int build_spill(python_spill *s, size_t memory)
{
	*s = (python_spill){.spill = {.memory = memory,
				      .ctx = s,
				      .create = spill_create,
				      .write = spill_write,
				      .read = spill_read,
				      .close = spill_close}};
	PyObject *tempfile = PyImport_ImportModule("tempfile");
	if (tempfile == NULL)
		return -1;
	PyObject *dir = PyObject_CallMethod(tempfile, "gettempdir", NULL);
	Py_DECREF(tempfile);
	if (dir == NULL) {
		if (!PyErr_ExceptionMatches(PyExc_OSError))
			return -1;
		PyErr_Clear();
		return 0;
	}
	PyObject *bytes = NULL;
	int ok = PyUnicode_FSConverter(dir, &bytes);
	Py_DECREF(dir);
	if (!ok)
		return -1;
	Py_ssize_t len = PyBytes_GET_SIZE(bytes);
	if (len > INT_MAX - (Py_ssize_t)sizeof(SPILL_NAME)) {
		Py_DECREF(bytes);
		PyErr_SetString(PyExc_OverflowError, "tempfile.gettempdir() is too long");
		return -1;
	}
	s->path = malloc((size_t)len + sizeof(SPILL_NAME));
	if (s->path == NULL) {
		Py_DECREF(bytes);
		PyErr_NoMemory();
		return -1;
	}
	memcpy(s->path, PyBytes_AS_STRING(bytes), (size_t)len);
	memcpy(s->path + len, SPILL_NAME, sizeof(SPILL_NAME));
	s->dir_len = (int)len;
	Py_DECREF(bytes);
	return 0;
}

/*
 * The work_mem argument: None for AMQ_SPILL_DEFAULT_MEMORY, or an int of
 * bytes from AMQ_SPILL_MIN_MEMORY (PostgreSQL's least work_mem) to
 * MAX_WORK_MEM. 0, or -1 with TypeError or amq.Error (22023) set.
 */
#define MAX_WORK_MEM ((long long)1 << 40)

static int work_mem_of(PyObject *arg, size_t *memory)
{
	if (arg == Py_None) {
		*memory = AMQ_SPILL_DEFAULT_MEMORY;
		return 0;
	}
	if (!PyLong_Check(arg) || PyBool_Check(arg)) {
		PyErr_Format(PyExc_TypeError, "work_mem must be an int or None, got %.100s",
			     Py_TYPE(arg)->tp_name);
		return -1;
	}
	int overflow;
	long long n = PyLong_AsLongLongAndOverflow(arg, &overflow);
	if (n == -1 && PyErr_Occurred())
		return -1;
	if (overflow == 0 && n >= (long long)AMQ_SPILL_MIN_MEMORY && n <= MAX_WORK_MEM) {
		*memory = (size_t)n;
		return 0;
	}
	PyObject *text = PyObject_Str(arg);
	if (text == NULL)
		return -1;
	const char *got = PyUnicode_AsUTF8(text);
	if (got == NULL) {
		Py_DECREF(text);
		return -1;
	}
	amq_error err = {.status = AMQ_INVALID_ARGUMENT};
	snprintf(err.message, sizeof(err.message),
		 "work_mem must be between %zu (64 KiB) and %lld (1 TiB) bytes, got %.100s",
		 AMQ_SPILL_MIN_MEMORY, MAX_WORK_MEM, got);
	snprintf(err.hint, sizeof(err.hint),
		 "pass the working memory in bytes, such as %zu for 64 MiB",
		 AMQ_SPILL_DEFAULT_MEMORY);
	Py_DECREF(text);
	amq_py_raise(&err);
	return -1;
}

/* Feeds one chunk of hashes to a builder; stops as soon as its progress
 * callable (b->alloc.ctx) has raised, which a merge of runs in
 * amq_builder_add may call, even when no poll of core's stopped it. */
static int build_chunk(void *ctx, const uint64_t *hashes, const bool *nulls, size_t n)
{
	amq_builder *b = ctx;
	python_progress *p = b->alloc.ctx;
	(void)nulls; /* None is skipped before it gets here */
	amq_error err;
	for (size_t i = 0; i < n; i++) {
		amq_status st = amq_builder_add(b, hashes[i], &err);
		if (p->raised != NULL) {
			progress_reraise(p);
			return -1;
		}
		if (st != AMQ_OK) {
			amq_py_raise(&err);
			return -1;
		}
	}
	return 0;
}

/* The progress argument: None, or a callable. 0, or -1 with TypeError set. */
static int progress_of(PyObject *arg, python_progress *p)
{
	*p = (python_progress){.callable = NULL};
	if (arg == Py_None)
		return 0;
	if (!PyCallable_Check(arg)) {
		PyErr_Format(PyExc_TypeError, "progress must be callable or None, got %.100s",
			     Py_TYPE(arg)->tp_name);
		return -1;
	}
	p->callable = arg;
	return 0;
}

/* The builders, amq.bloom, amq.cuckoo, ...: one per row of the function
 * table (amq_sql_functions) that builds a filter from values (AMQ_SQL_AGG:
 * bloom_agg, ...), named for its kind and taking the aggregate's arguments. */
typedef amq_sql_function builder_row;

/*
 * amq.<kind>(values, ...): the aggregate of row over values, read in the
 * order SQL reads its arguments (fpr, then capacity and layout where the
 * aggregate takes them), each checked by core as SQL checks it. None values
 * are skipped as NULL rows are. With no values at all the arguments still
 * apply, as in an aggregate over rows whose values are all NULL (one over no
 * rows never sees them). The filter holds every family of value it was
 * built from, as the aggregate's does: a mixed list gives a mixed filter.
 * work_mem (keyword only) bounds the memory of the hashes collected without
 * a capacity: past it they go, as sorted runs, to temporary files
 * (build_spill), and the bytes are the same (a kind built from every hash at
 * once, fuse, is refused instead). progress (keyword only) hears each merge
 * of those runs (python_progress_report); a build that fits in memory never
 * calls it.
 */
static PyObject *build(const builder_row *row, PyObject *args, PyObject *kwargs)
{
	/* The positional arguments the aggregate takes after the values,
	 * then the keyword-only ones. */
	static const char *const sized[] = {"fpr", "capacity", "layout"};
	char *keywords[8] = {"values"};
	int taken = row->max_args - 1, k = 1;
	for (int i = 0; i < taken; i++)
		keywords[k++] = (char *)sized[i];
	keywords[k++] = "work_mem";
	keywords[k++] = "progress";
	keywords[k] = NULL;
	char format[16];
	snprintf(format, sizeof(format), "O|%.*s$OO", taken, "dOO");
	PyObject *values, *capacity_arg = Py_None, *layout_arg = Py_None, *work_mem_arg = Py_None,
			  *progress_arg = Py_None;
	double fpr = AMQ_SQL_DEFAULT_FPR;
	PyObject **slots[] = {&capacity_arg, &layout_arg};
	int parsed;
	if (taken == 1)
		parsed = PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, &values, &fpr,
						     &work_mem_arg, &progress_arg);
	else if (taken == 2)
		parsed = PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, &values, &fpr,
						     slots[0], &work_mem_arg, &progress_arg);
	else
		parsed =
		    PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, &values, &fpr,
						slots[0], slots[1], &work_mem_arg, &progress_arg);
	if (!parsed)
		return NULL;
	amq_error err;
	/* The arguments' defaults and checks are SQL's (sql/arguments.h). */
	amq_sql_sizing sizing;
	amq_sql_sizing_init(&sizing, amq_kind_named(row->kind));
	if (amq_sql_set_fpr(&sizing, fpr, &err) != AMQ_OK)
		return amq_py_raise(&err);
	if (capacity_arg != Py_None) {
		if (!PyLong_Check(capacity_arg) || PyBool_Check(capacity_arg)) {
			PyErr_Format(PyExc_TypeError, "capacity must be an int or None, got %.100s",
				     Py_TYPE(capacity_arg)->tp_name);
			return NULL;
		}
		int overflow;
		long long n = PyLong_AsLongLongAndOverflow(capacity_arg, &overflow);
		if (overflow) {
			/* Too large for any filter: core says so in its words. */
			n = overflow > 0 ? INT64_MAX : INT64_MIN;
		}
		if (amq_sql_set_capacity(&sizing, n, &err) != AMQ_OK)
			return amq_py_raise(&err);
	}
	if (layout_arg != Py_None) {
		Py_ssize_t len;
		const char *name;
		if (!PyUnicode_Check(layout_arg)) {
			PyErr_Format(PyExc_TypeError, "layout must be a str or None, got %.100s",
				     Py_TYPE(layout_arg)->tp_name);
			return NULL;
		}
		name = PyUnicode_AsUTF8AndSize(layout_arg, &len);
		if (name == NULL)
			return NULL;
		if (amq_sql_set_layout(&sizing, name, (size_t)len, &err) != AMQ_OK)
			return amq_py_raise(&err);
	}
	size_t memory;
	if (work_mem_of(work_mem_arg, &memory) < 0)
		return NULL;
	python_progress progress;
	if (progress_of(progress_arg, &progress) < 0)
		return NULL;
	/* Lives as long as the builder, which holds a pointer to it. */
	python_spill spill;
	if (build_spill(&spill, memory) < 0)
		return NULL;
	PyObject *result = NULL;
	amq_builder b;
	amq_allocator a = amq_malloc_allocator;
	a.ctx = &progress; /* amq_malloc_allocator's alloc and free take none */
	a.interrupted = python_interrupted;
	a.spill = &spill.spill;
	if (amq_sql_builder_init(&b, &sizing, &a, &err) != AMQ_OK) {
		amq_py_raise(&err);
		goto done;
	}
	/* Core calls it only while it merges spilled runs. */
	if (progress.callable != NULL) {
		b.progress = python_progress_report;
		b.progress_arg = &progress;
	}
	/* Room for a sized input's hashes at once; only a hint, so a length
	 * that cannot be had or reserved changes nothing. */
	Py_ssize_t expected = PyObject_LengthHint(values, 0);
	if (expected < 0)
		PyErr_Clear();
	else if (expected > 0)
		(void)amq_builder_expect(&b, (uint64_t)expected, &err);
	/* No filter to check against: every family is taken, and gathered. */
	amq_py_families families = {.filter = {.families = 0}, .check = false, .adds = true};
	if (amq_py_hash_each(values, AMQ_DEFAULT_SEED, true, &families, build_chunk, &b) < 0) {
		/* Closes the builder's temporary files, if any. */
		amq_builder_free(&b);
		goto done;
	}
	static const amq_family each[] = {AMQ_FAMILY_NUMBER, AMQ_FAMILY_TEXT, AMQ_FAMILY_BLOB};
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++)
		if (families.filter.families & (uint8_t)each[i])
			amq_builder_note_family(&b, each[i]);
	amq_filter f;
	amq_status st;
	/* Sorting, merging the spilled runs and inserting the hashes touch no
	 * Python object (the spill callbacks neither; the progress callable
	 * takes the GIL). */
	Py_BEGIN_ALLOW_THREADS;
	st = amq_builder_finish(&b, &f, &err);
	amq_builder_free(&b);
	Py_END_ALLOW_THREADS;
	/* The callable may raise where no poll follows (a phase's end): the
	 * filter is then dropped all the same. */
	if (progress.raised != NULL) {
		if (st == AMQ_OK)
			amq_filter_free(&f, &a);
		progress_reraise(&progress);
	} else if (st != AMQ_OK) {
		amq_py_raise(&err);
	} else {
		result = amq_py_filter_take(&f);
	}
done:
	free(spill.path);
	return result;
}

/* A builder's C function: self is its row's index in amq_sql_functions. */
static PyObject *module_build(PyObject *self, PyObject *args, PyObject *kwargs)
{
	return build(&amq_sql_functions[PyLong_AsSize_t(self)], args, kwargs);
}

/* The method definitions and docstrings of the builders, one slot per row
 * of the function table: made when the module loads and kept for the life
 * of the process, as the functions that point at them are. */
static PyMethodDef *builder_defs;
static char (*builder_docs)[1400];

/* Adds amq.<kind> to m for each AMQ_SQL_AGG row of the function table. */
static int add_builders(PyObject *m)
{
	if (builder_defs == NULL) {
		builder_defs = PyMem_Calloc(amq_sql_function_count, sizeof(*builder_defs));
		builder_docs = PyMem_Calloc(amq_sql_function_count, sizeof(*builder_docs));
		if (builder_defs == NULL || builder_docs == NULL) {
			PyErr_NoMemory();
			return -1;
		}
	}
	for (size_t i = 0; i < amq_sql_function_count; i++) {
		const builder_row *row = &amq_sql_functions[i];
		if (row->op != AMQ_SQL_AGG)
			continue;
		static const char *const signature[] = {"fpr=0.01", "fpr=0.01, capacity=None",
							"fpr=0.01, capacity=None, layout=None"};
		snprintf(
		    builder_docs[i], sizeof(builder_docs[i]),
		    "%s(values, %s, *, work_mem=None, progress=None) -> Filter\n\n"
		    "A %s filter of values, byte for byte what %s(%s)\ngives over the same values "
		    "in either engine, each argument checked as\nSQL checks it (layout: one of "
		    "amq.LAYOUTS['%s']).\nNone values are skipped, as "
		    "the aggregate skips NULL. work_mem is the\nmemory in bytes the hashes "
		    "collected without a capacity may take\n(default 64 MiB, at least 65536); past "
		    "it they are sorted into\nunlinked temporary files in tempfile.gettempdir(), "
		    "with the same bytes\nin the end (a kind built from every hash at once, fuse, "
		    "must fit in it\nwhole, and is refused past it). progress, a callable\n"
		    "progress(phase, done, total), hears how the merge of those files goes:\n"
		    "phase is 'merging runs' (while the values are read, and before the\nend), "
		    "then 'counting' and 'inserting', done of total keys read in\nthat phase; "
		    "called as a phase starts (done 0), every 262144 keys and\nas it ends (done == "
		    "total). Only a build that spilled calls it. An\nexception it raises stops the "
		    "build and is raised here.",
		    row->kind, signature[row->max_args - 2], row->kind, row->name, row->arguments,
		    row->kind);
		builder_defs[i] =
		    (PyMethodDef){row->kind, (PyCFunction)(void (*)(void))module_build,
				  METH_VARARGS | METH_KEYWORDS, builder_docs[i]};
		PyObject *index = PyLong_FromSize_t(i);
		PyObject *name = PyModule_GetNameObject(m);
		PyObject *f = index != NULL && name != NULL
				  ? PyCFunction_NewEx(&builder_defs[i], index, name)
				  : NULL;
		Py_XDECREF(index);
		Py_XDECREF(name);
		if (f == NULL || PyModule_AddObject(m, row->kind, f) < 0) {
			Py_XDECREF(f);
			return -1;
		}
	}
	return 0;
}

/* The filter kinds SQL has, in the function table's order (its AMQ_SQL_TYPE
 * rows): amq.KINDS, which the package's lists of kinds follow. */
#define AMQ_SQL_TYPE(kind) #kind,
static const char *const sql_kinds[] = {
#include "sql/function_list.h"
};

/* amq.LAYOUTS: for each kind of sql_kinds, the tuple of its layouts' names,
 * in the registry's order, in a read-only mapping. */
static PyObject *layouts_dict(void)
{
	PyObject *layouts = PyDict_New();
	for (size_t k = 0; layouts != NULL && k < sizeof(sql_kinds) / sizeof(sql_kinds[0]); k++) {
		amq_kind kind = amq_kind_named(sql_kinds[k]);
		PyObject *names = PyList_New(0);
		const char *name;
		for (size_t i = 0; names != NULL && (name = amq_kind_layout_at(kind, i)) != NULL;
		     i++) {
			PyObject *s = PyUnicode_FromString(name);
			if (s == NULL || PyList_Append(names, s) < 0)
				Py_CLEAR(names);
			Py_XDECREF(s);
		}
		PyObject *tuple = names != NULL ? PyList_AsTuple(names) : NULL;
		Py_XDECREF(names);
		if (tuple == NULL || PyDict_SetItemString(layouts, sql_kinds[k], tuple) < 0)
			Py_CLEAR(layouts);
		Py_XDECREF(tuple);
	}
	PyObject *proxy = layouts != NULL ? PyDictProxy_New(layouts) : NULL;
	Py_XDECREF(layouts);
	return proxy;
}

/* amq.KINDS, a tuple of sql_kinds. */
static PyObject *kinds_tuple(void)
{
	size_t n = sizeof(sql_kinds) / sizeof(sql_kinds[0]);
	PyObject *kinds = PyTuple_New((Py_ssize_t)n);
	for (size_t i = 0; kinds != NULL && i < n; i++) {
		PyObject *name = PyUnicode_FromString(sql_kinds[i]);
		if (name == NULL) {
			Py_CLEAR(kinds);
			break;
		}
		PyTuple_SET_ITEM(kinds, (Py_ssize_t)i, name);
	}
	return kinds;
}

/* __all__: the public names, the builders of add_builders included, which
 * the amq package re-exports without naming them again. */
static int add_all(PyObject *m)
{
	PyObject *all = Py_BuildValue("[sssss]", "KINDS", "LAYOUTS", "Error", "Filter", "hash");
	for (size_t i = 0; all != NULL && i < amq_sql_function_count; i++) {
		const builder_row *row = &amq_sql_functions[i];
		PyObject *name = row->op == AMQ_SQL_AGG ? PyUnicode_FromString(row->kind) : NULL;
		if (row->op == AMQ_SQL_AGG && (name == NULL || PyList_Append(all, name) < 0))
			Py_CLEAR(all);
		Py_XDECREF(name);
	}
	if (all == NULL || PyModule_AddObject(m, "__all__", all) < 0) {
		Py_XDECREF(all);
		return -1;
	}
	return 0;
}

static PyMethodDef module_methods[] = {
    {"hash", (PyCFunction)module_hash, METH_O,
     "hash(value) -> int | None\n\nThe 64-bit hash SQL's amq_hash gives the equal SQL value "
     "(seed 0), as a\nsigned integer: amq.hash(3) == amq.hash(3.0) == -2243884999906406229.\n"
     "None (SQL's NULL) gives None, as amq_hash(NULL) is NULL."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "amq._amq",
    .m_doc = "The C core of amq, bound for Python; use it through the amq package.",
    .m_size = -1,
    .m_methods = module_methods,
};

/* No header declares it: Python finds it by name. */
PyMODINIT_FUNC PyInit__amq(void);

PyMODINIT_FUNC PyInit__amq(void)
{
	if (amq_py_values_init() < 0 || amq_py_filter_init() < 0)
		return NULL;
	PyObject *m = PyModule_Create(&module_def);
	if (m == NULL)
		return NULL;
	PyObject *defaults =
	    Py_BuildValue("{s:s,s:s,s:O}", "hint", "", "message", "", "sqlstate", Py_None);
	if (defaults == NULL)
		goto fail;
	amq_py_error = PyErr_NewExceptionWithDoc(
	    "amq.Error",
	    "A filter, argument or operation SQL would refuse, with SQL's words.\n\nstr(e) is "
	    "the message SQLite gives for it (\"<message>: <hint>\");\nmessage and sqlstate are "
	    "PostgreSQL's, which shows hint as a sentence.\nA subclass of ValueError.",
	    PyExc_ValueError, defaults);
	Py_DECREF(defaults);
	if (amq_py_error == NULL)
		goto fail;
	Py_INCREF(amq_py_error);
	Py_INCREF(&amq_py_filter_type);
	if (PyModule_AddObject(m, "Error", amq_py_error) < 0 ||
	    PyModule_AddObject(m, "Filter", (PyObject *)&amq_py_filter_type) < 0 ||
	    PyModule_AddStringConstant(m, "core_version", AMQ_VERSION) < 0)
		goto fail;
	PyObject *kinds = kinds_tuple();
	if (kinds == NULL || PyModule_AddObject(m, "KINDS", kinds) < 0) {
		Py_XDECREF(kinds);
		goto fail;
	}
	PyObject *layouts = layouts_dict();
	if (layouts == NULL || PyModule_AddObject(m, "LAYOUTS", layouts) < 0) {
		Py_XDECREF(layouts);
		goto fail;
	}
	if (add_builders(m) < 0 || add_all(m) < 0)
		goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
