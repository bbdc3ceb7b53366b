/*
 * module.c - the amq._amq extension module: amq.Error, the builders
 * amq.bloom and amq.cuckoo (core's amq_builder, as bloom_agg and cuckoo_agg
 * use it, so the bytes are the aggregates'), amq.hash (SQL's amq_hash) and
 * the Filter type (filter.c). The amq package re-exports these.
 */
#include "pyamq.h"

PyObject *amq_py_error;

/* The SQLSTATE PostgreSQL reports for a core status (postgres/filter/errors.c). */
static const char *status_sqlstate(amq_status status)
{
	switch (status) {
	case AMQ_INVALID_FILTER:
		return "22P02";
	case AMQ_INVALID_ARGUMENT:
	case AMQ_WRONG_KIND:
	case AMQ_INCOMPATIBLE:
		return "22023";
	case AMQ_FILTER_FULL:
	case AMQ_TOO_LARGE:
		return "54000";
	case AMQ_NO_MEMORY:
		return "53200";
	case AMQ_INTERRUPTED:
		return "57014";
	case AMQ_OK:
		break;
	}
	return "XX000";
}

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

/* Ctrl-C while a build sorts and inserts without the GIL: core polls this
 * (amq_allocator's interrupted hook), which takes the GIL to run Python's
 * signal handlers; KeyboardInterrupt (or a handler's exception) is then set,
 * and core stops with AMQ_INTERRUPTED. */
static bool python_interrupted(void *ctx)
{
	(void)ctx;
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
	PyObject *state = PyUnicode_FromString(status_sqlstate(err->status));
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

/* Feeds one chunk of hashes to a builder. */
static int build_chunk(void *ctx, const uint64_t *hashes, const bool *nulls, size_t n)
{
	amq_builder *b = ctx;
	(void)nulls; /* None is skipped before it gets here */
	amq_error err;
	for (size_t i = 0; i < n; i++) {
		if (amq_builder_add(b, hashes[i], &err) != AMQ_OK) {
			amq_py_raise(&err);
			return -1;
		}
	}
	return 0;
}

/*
 * bloom(...) and cuckoo(...): the aggregate of that kind over values, read
 * in the order SQL reads its arguments (fpr, capacity, layout), each checked
 * by core as SQL checks it. None values are skipped as NULL rows are. With
 * no values at all the arguments still apply, as in an aggregate over rows
 * whose values are all NULL (one over no rows never sees them). The filter
 * holds every family of value it was built from, as the aggregate's does: a
 * mixed list gives a mixed filter.
 */
static PyObject *build(amq_kind kind, PyObject *args, PyObject *kwargs)
{
	static char *keywords[] = {"values", "fpr", "capacity", "layout", NULL};
	PyObject *values, *capacity_arg = Py_None, *layout_arg = Py_None;
	double fpr = 0.01;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|dOO", keywords, &values, &fpr,
					 &capacity_arg, &layout_arg))
		return NULL;
	amq_error err;
	if (amq_check_fpr(fpr, &err) != AMQ_OK)
		return amq_py_raise(&err);
	uint64_t capacity = 0;
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
		if (amq_check_capacity(n, &err) != AMQ_OK)
			return amq_py_raise(&err);
		capacity = (uint64_t)n;
	}
	amq_layout layout = amq_default_layout(kind, fpr);
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
		if (amq_parse_layout(kind, name, (size_t)len, &layout, &err) != AMQ_OK)
			return amq_py_raise(&err);
	}
	amq_builder b;
	amq_allocator a = amq_malloc_allocator;
	a.interrupted = python_interrupted;
	if (amq_builder_init(&b, kind, layout, fpr, capacity, AMQ_DEFAULT_SEED, &a, &err) != AMQ_OK)
		return amq_py_raise(&err);
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
		amq_builder_free(&b);
		return NULL;
	}
	static const amq_family each[] = {AMQ_FAMILY_NUMBER, AMQ_FAMILY_TEXT, AMQ_FAMILY_BLOB};
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++)
		if (families.filter.families & (uint8_t)each[i])
			amq_builder_note_family(&b, each[i]);
	amq_filter f;
	amq_status st;
	/* Sorting and inserting the hashes touches no Python object. */
	Py_BEGIN_ALLOW_THREADS;
	st = amq_builder_finish(&b, &f, &err);
	amq_builder_free(&b);
	Py_END_ALLOW_THREADS;
	if (st != AMQ_OK)
		return amq_py_raise(&err);
	return amq_py_filter_take(&f);
}

static PyObject *module_bloom(PyObject *module, PyObject *args, PyObject *kwargs)
{
	(void)module;
	return build(AMQ_KIND_BLOOM, args, kwargs);
}

static PyObject *module_cuckoo(PyObject *module, PyObject *args, PyObject *kwargs)
{
	(void)module;
	return build(AMQ_KIND_CUCKOO, args, kwargs);
}

static PyMethodDef module_methods[] = {
    {"hash", (PyCFunction)module_hash, METH_O,
     "hash(value) -> int | None\n\nThe 64-bit hash SQL's amq_hash gives the equal SQL value "
     "(seed 0), as a\nsigned integer: amq.hash(3) == amq.hash(3.0) == -2243884999906406229.\n"
     "None (SQL's NULL) gives None, as amq_hash(NULL) is NULL."},
    {"bloom", (PyCFunction)(void (*)(void))module_bloom, METH_VARARGS | METH_KEYWORDS,
     "bloom(values, fpr=0.01, capacity=None, layout=None) -> Filter\n\nA Bloom filter of "
     "values, byte for byte what bloom_agg(value, fpr,\ncapacity, layout) gives over the same "
     "values in either engine. Without\na capacity it is sized for the distinct values; "
     "layout is 'blocked'\n(the default), 'classic', 'counting' or 'scalable'. None values "
     "are\nskipped, as the aggregate skips NULL."},
    {"cuckoo", (PyCFunction)(void (*)(void))module_cuckoo, METH_VARARGS | METH_KEYWORDS,
     "cuckoo(values, fpr=0.01, capacity=None, layout=None) -> Filter\n\nA cuckoo filter of "
     "values, byte for byte what cuckoo_agg(value, fpr,\ncapacity, layout) gives: each "
     "distinct value once; layout 'b2', 'b4',\n'b8' or 'semisorted' (default: the fewest "
     "bits per item for fpr). None\nvalues are skipped. A capacity too small raises "
     "amq.Error."},
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
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
