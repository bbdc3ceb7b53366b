/*
 * filter.c - amq.Filter: one serialized filter (docs/FORMAT.md) of either
 * kind and any layout, in a buffer of its own that the methods change in
 * place, as the core changes a filter. The header and checksum are written
 * back (amq_filter_seal) only when the bytes are read out, so a run of adds
 * costs no checksum each. While its bytes are exported (a memoryview, or
 * bytes(f) being made) the filter cannot change, as a bytearray cannot be
 * resized then.
 */
#include "pyamq.h"
#include "sql/functions.h"

typedef struct {
	PyObject ob_base;   /* what PyObject_HEAD declares */
	amq_filter filter;  /* owns filter.bytes (amq_malloc_allocator) */
	amq_probe probe;    /* amq_filter_probe_for(&filter): by layout, fixed */
	bool unsealed;	    /* changed since the header was last written */
	Py_ssize_t exports; /* buffer views alive */
} FilterObject;

static const amq_allocator *const A = &amq_malloc_allocator;

/* json.loads, for info(). */
static PyObject *json_loads;

PyObject *amq_py_filter_take(amq_filter *f)
{
	FilterObject *self = PyObject_New(FilterObject, &amq_py_filter_type);
	if (self == NULL) {
		amq_filter_free(f, A);
		return NULL;
	}
	self->filter = *f;
	self->probe = amq_filter_probe_for(f);
	self->unsealed = false;
	self->exports = 0;
	return (PyObject *)self;
}

/* Writes the header and checksum when the payload changed since. */
static void seal(FilterObject *self)
{
	if (self->unsealed) {
		amq_filter_seal(&self->filter);
		self->unsealed = false;
	}
}

/* -1 with BufferError when the bytes are exported and must not change. */
static int check_mutable(FilterObject *self)
{
	if (self->exports == 0)
		return 0;
	PyErr_SetString(PyExc_BufferError,
			"the filter's bytes are exported (a memoryview is alive): release it "
			"before changing the filter");
	return -1;
}

/*
 * Filter(data): a copy of data (bytes, bytearray, memoryview or anything
 * with the buffer protocol) once it opens and verifies as a filter of
 * either kind, as SQL checks a filter argument. The message of a bad one is
 * SQL's for the same bytes, after the "<function>: <argument>: " SQL starts
 * it with (amq_filter_check).
 */
static PyObject *filter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
	static char *keywords[] = {"data", NULL};
	Py_buffer data;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*:Filter", keywords, &data))
		return NULL;
	amq_filter f;
	amq_error err;
	uint8_t *copy = A->alloc(A->ctx, data.len > 0 ? (size_t)data.len : 1);
	if (copy == NULL) {
		PyBuffer_Release(&data);
		return PyErr_NoMemory();
	}
	memcpy(copy, data.buf, (size_t)data.len);
	size_t size = (size_t)data.len;
	PyBuffer_Release(&data);
	if (amq_filter_check(&f, copy, size, &err) != AMQ_OK) {
		A->free(A->ctx, copy);
		return amq_py_raise(&err);
	}
	FilterObject *self = (FilterObject *)type->tp_alloc(type, 0);
	if (self == NULL) {
		A->free(A->ctx, copy);
		return NULL;
	}
	self->filter = f;
	self->probe = amq_filter_probe_for(&f);
	return (PyObject *)self;
}

static void filter_dealloc(FilterObject *self)
{
	amq_filter_free(&self->filter, A);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/*
 * The hash of value under this filter's seed, and its family, once the
 * filter takes that family (amq_filter_takes: it holds it, holds none yet,
 * or is of a format before families). A value of another family is amq.Error
 * in core's words (amq_check_family), naming the SQL function of the
 * filter's kind that does op (amq_sql_function_doing): e.g. "bloom_contains: value:
 * the filter holds numbers, got text '42'", SQL's message for the same
 * value. -1 with an exception set.
 */
static inline int admit(FilterObject *self, PyObject *value, amq_sql_op op, uint64_t *hash,
			amq_family *family)
{
	if (amq_py_hash(value, self->filter.seed, hash, family) < 0)
		return -1;
	if (amq_filter_takes(&self->filter, *family))
		return 0;
	return amq_py_refuse_family(&self->filter, value,
				    amq_sql_function_doing(self->filter.kind, op, op));
}

/* admit for add_unique, which a kind without it (bloom) words as its add. */
static inline int admit_unique(FilterObject *self, PyObject *value, uint64_t *hash,
			       amq_family *family)
{
	if (amq_py_hash(value, self->filter.seed, hash, family) < 0)
		return -1;
	if (amq_filter_takes(&self->filter, *family))
		return 0;
	return amq_py_refuse_family(
	    &self->filter, value,
	    amq_sql_function_doing(self->filter.kind, AMQ_SQL_ADD_UNIQUE, AMQ_SQL_ADD));
}

/*
 * None is SQL's NULL, and each method answers it as its SQL function
 * answers a NULL value: contains and count give None (bloom_contains,
 * cuckoo_count and bloom_frequency are NULL), add, delete and add_unique
 * leave the filter as it is (bloom_add, cuckoo_delete, bloom_delete and
 * cuckoo_add_unique return it unchanged, whatever its layout), and `in`
 * says False: NULL is never a member.
 */

/* `value in f`: may value be in the filter (bloom_contains/cuckoo_contains);
 * False for None, since Python makes a bool of NULL's answer anyway. */
static int filter_sq_contains(FilterObject *self, PyObject *value)
{
	uint64_t hash;
	amq_family family;
	if (value == Py_None)
		return 0;
	if (admit(self, value, AMQ_SQL_CONTAINS, &hash, &family) < 0)
		return -1;
	return self->probe(&self->filter, hash);
}

static PyObject *filter_contains(FilterObject *self, PyObject *value)
{
	uint64_t hash;
	amq_family family;
	if (value == Py_None)
		Py_RETURN_NONE;
	if (admit(self, value, AMQ_SQL_CONTAINS, &hash, &family) < 0)
		return NULL;
	return PyBool_FromLong(self->probe(&self->filter, hash));
}

static PyObject *filter_add(FilterObject *self, PyObject *value)
{
	uint64_t hash;
	amq_family family;
	amq_error err;
	if (value == Py_None)
		Py_RETURN_NONE;
	if (check_mutable(self) < 0 || admit(self, value, AMQ_SQL_ADD, &hash, &family) < 0)
		return NULL;
	/* A full cuckoo filter fails with every byte as it was; a scalable
	 * chain may move to a larger buffer. */
	if (amq_filter_add_to(&self->filter, hash, A, &err) != AMQ_OK)
		return amq_py_raise(&err);
	amq_filter_note_family(&self->filter, family);
	self->unsealed = true;
	Py_RETURN_NONE;
}

static PyObject *filter_delete(FilterObject *self, PyObject *value)
{
	uint64_t hash;
	amq_family family;
	amq_error err;
	bool removed;
	if (value == Py_None)
		Py_RETURN_FALSE;
	if (check_mutable(self) < 0 || admit(self, value, AMQ_SQL_DELETE, &hash, &family) < 0)
		return NULL;
	if (amq_filter_remove(&self->filter, hash, &removed, &err) != AMQ_OK)
		return amq_py_raise(&err);
	self->unsealed |= removed;
	return PyBool_FromLong(removed);
}

/* cuckoo_add_unique in place (amq_filter_add_absent): the filter unchanged
 * when it may hold value already; the family is checked first, recorded with
 * the add. On a bloom filter, which SQL has no add_unique for, a wrong
 * family names bloom_add. */
static PyObject *filter_add_unique(FilterObject *self, PyObject *value)
{
	uint64_t hash;
	amq_family family;
	amq_error err;
	if (value == Py_None)
		Py_RETURN_FALSE;
	bool added;
	if (check_mutable(self) < 0 || admit_unique(self, value, &hash, &family) < 0)
		return NULL;
	if (amq_filter_add_absent(&self->filter, hash, family, &added, A, &err) != AMQ_OK)
		return amq_py_raise(&err);
	self->unsealed |= added;
	return PyBool_FromLong(added);
}

static PyObject *filter_count(FilterObject *self, PyObject *value)
{
	uint64_t hash, count;
	amq_family family;
	amq_error err;
	if (value == Py_None)
		Py_RETURN_NONE;
	if (admit(self, value, AMQ_SQL_FREQUENCY, &hash, &family) < 0)
		return NULL;
	if (amq_filter_frequency(&self->filter, hash, &count, &err) != AMQ_OK)
		return amq_py_raise(&err);
	return PyLong_FromUnsignedLongLong(count);
}

static PyObject *filter_info(FilterObject *self, PyObject *unused)
{
	(void)unused;
	char json[AMQ_INFO_MAX];
	size_t len = amq_filter_info_json(&self->filter, json, sizeof(json));
	return PyObject_CallFunction(json_loads, "s#", json, (Py_ssize_t)len);
}

/* A sealed copy of self combined with other by merge (SQL's bloom_union and
 * bloom_intersect); other must be a Filter. */
static PyObject *combine(FilterObject *self, PyObject *other,
			 amq_status (*merge)(amq_filter *, const amq_filter *, amq_error *))
{
	if (!PyObject_TypeCheck(other, &amq_py_filter_type)) {
		PyErr_Format(PyExc_TypeError, "expected an amq.Filter, got %.100s",
			     Py_TYPE(other)->tp_name);
		return NULL;
	}
	amq_filter out;
	amq_error err;
	if (amq_filter_clone(&out, &self->filter, A, &err) != AMQ_OK)
		return amq_py_raise(&err);
	if (merge(&out, &((FilterObject *)other)->filter, &err) != AMQ_OK) {
		amq_filter_free(&out, A);
		return amq_py_raise(&err);
	}
	amq_filter_seal(&out);
	return amq_py_filter_take(&out);
}

/* self combined with other in place (|=, &=). */
static PyObject *combine_in_place(FilterObject *self, PyObject *other,
				  amq_status (*merge)(amq_filter *, const amq_filter *,
						      amq_error *))
{
	if (!PyObject_TypeCheck(other, &amq_py_filter_type))
		Py_RETURN_NOTIMPLEMENTED;
	amq_error err;
	if (check_mutable(self) < 0)
		return NULL;
	/* Core checks every parameter before it changes a byte. */
	if (merge(&self->filter, &((FilterObject *)other)->filter, &err) != AMQ_OK)
		return amq_py_raise(&err);
	self->unsealed = true;
	Py_INCREF(self);
	return (PyObject *)self;
}

static PyObject *filter_union(FilterObject *self, PyObject *other)
{
	return combine(self, other, amq_filter_union_into);
}

static PyObject *filter_intersection(FilterObject *self, PyObject *other)
{
	return combine(self, other, amq_filter_intersect_into);
}

/* f | g and f & g: the same as union and intersection, for two Filters. */
static PyObject *filter_or(PyObject *a, PyObject *b)
{
	if (!PyObject_TypeCheck(a, &amq_py_filter_type) ||
	    !PyObject_TypeCheck(b, &amq_py_filter_type))
		Py_RETURN_NOTIMPLEMENTED;
	return filter_union((FilterObject *)a, b);
}

static PyObject *filter_and(PyObject *a, PyObject *b)
{
	if (!PyObject_TypeCheck(a, &amq_py_filter_type) ||
	    !PyObject_TypeCheck(b, &amq_py_filter_type))
		Py_RETURN_NOTIMPLEMENTED;
	return filter_intersection((FilterObject *)a, b);
}

static PyObject *filter_ior(PyObject *a, PyObject *b)
{
	return combine_in_place((FilterObject *)a, b, amq_filter_union_into);
}

static PyObject *filter_iand(PyObject *a, PyObject *b)
{
	return combine_in_place((FilterObject *)a, b, amq_filter_intersect_into);
}

/* What contains_many fills in: the result list and where the next goes. */
struct many_answers {
	FilterObject *self;
	PyObject *list;
	Py_ssize_t next;
};

/* One chunk of probes: the batch probe loads lines ahead where the layout
 * can (a None's slot is probed too, for nothing, and answered None). */
static int answer_chunk(void *ctx, const uint64_t *hashes, const bool *nulls, size_t n)
{
	struct many_answers *m = ctx;
	bool answers[512];
	const amq_filter *f = &m->self->filter;
	amq_filter_contains_many(f, hashes, n, answers);
	for (size_t i = 0; i < n; i++) {
		PyObject *b = nulls != NULL && nulls[i] ? Py_None : answers[i] ? Py_True : Py_False;
		Py_INCREF(b);
		if (m->next < PyList_GET_SIZE(m->list)) {
			/* Replaces the placeholder False. */
			PyObject *old = PyList_GET_ITEM(m->list, m->next);
			PyList_SET_ITEM(m->list, m->next, b);
			Py_DECREF(old);
		} else if (PyList_Append(m->list, b) < 0) {
			Py_DECREF(b);
			return -1;
		} else {
			Py_DECREF(b);
		}
		m->next++;
	}
	return 0;
}

static PyObject *filter_contains_many(FilterObject *self, PyObject *values)
{
	/* A list of the right length when the length is known up front,
	 * holding False until each answer replaces it. */
	Py_ssize_t hint = PyList_CheckExact(values) || PyTuple_CheckExact(values)
			      ? PySequence_Fast_GET_SIZE(values)
			      : 0;
	struct many_answers m = {self, PyList_New(hint), 0};
	if (m.list == NULL)
		return NULL;
	for (Py_ssize_t i = 0; i < hint; i++) {
		Py_INCREF(Py_False);
		PyList_SET_ITEM(m.list, i, Py_False);
	}
	/* A value of a family the filter does not take is an error, as in
	 * bloom_contains; the answers before it are dropped. */
	amq_py_families families = amq_py_families_of(
	    &self->filter,
	    amq_sql_function_doing(self->filter.kind, AMQ_SQL_CONTAINS, AMQ_SQL_CONTAINS), false);
	if (amq_py_hash_each(values, self->filter.seed, false, &families, answer_chunk, &m) < 0) {
		Py_DECREF(m.list);
		return NULL;
	}
	/* A list changed while its values were hashed: drop the rest. */
	if (m.next < PyList_GET_SIZE(m.list) &&
	    PyList_SetSlice(m.list, m.next, PyList_GET_SIZE(m.list), NULL) < 0) {
		Py_DECREF(m.list);
		return NULL;
	}
	return m.list;
}

/* Every hash of add_many, gathered before any is applied. */
struct hash_list {
	uint64_t *hashes;
	size_t n, cap;
};

static int gather_chunk(void *ctx, const uint64_t *hashes, const bool *nulls, size_t n)
{
	struct hash_list *h = ctx;
	(void)nulls; /* None is skipped before it gets here */
	if (h->n + n > h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 4096;
		while (cap < h->n + n)
			cap *= 2;
		uint64_t *grown = PyMem_Realloc(h->hashes, cap * sizeof(uint64_t));
		if (grown == NULL) {
			PyErr_NoMemory();
			return -1;
		}
		h->hashes = grown;
		h->cap = cap;
	}
	memcpy(h->hashes + h->n, hashes, n * sizeof(uint64_t));
	h->n += n;
	return 0;
}

/* Records every family of set on f (amq_filter_note_family, bit by bit). */
static void note_families(amq_filter *f, uint8_t set)
{
	static const amq_family each[] = {AMQ_FAMILY_NUMBER, AMQ_FAMILY_TEXT, AMQ_FAMILY_BLOB};
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++)
		if (set & (uint8_t)each[i])
			amq_filter_note_family(f, each[i]);
}

/*
 * add_many(values): every value added in order, the bytes of SQL's
 * bloom_add_agg / cuckoo_add_agg over the same values (None skipped, as
 * NULL). Every value is hashed and its family checked before any is added,
 * as amq_bulk_admit checks each row's (a value's family joins the filter's
 * as it comes, so [1, 'a'] on an empty filter stops at 'a'), so a value that
 * cannot be hashed or is of another family changes nothing; a cuckoo filter
 * is changed through core's bulk state, a copy swapped in at the end, so one
 * that fills up raises cuckoo_add_agg's error and keeps its bytes.
 */
static PyObject *filter_add_many(FilterObject *self, PyObject *values)
{
	struct hash_list h = {NULL, 0, 0};
	amq_error err;
	amq_status st = AMQ_OK;
	const char *function =
	    amq_sql_function_doing(self->filter.kind, AMQ_SQL_ADD_AGG, AMQ_SQL_ADD_AGG);
	amq_py_families families = amq_py_families_of(&self->filter, function, true);
	if (check_mutable(self) < 0 ||
	    amq_py_hash_each(values, self->filter.seed, true, &families, gather_chunk, &h) < 0) {
		PyMem_Free(h.hashes);
		return NULL;
	}
	if (self->filter.kind == AMQ_KIND_CUCKOO) {
		amq_bulk bulk;
		seal(self);
		st = amq_bulk_start(&bulk, AMQ_BULK_ADD, function, &self->filter, A, &err);
		/* The families were admitted above, value by value. */
		if (st == AMQ_OK)
			note_families(&bulk.filter, families.filter.families);
		for (size_t i = 0; st == AMQ_OK && i < h.n; i++)
			st = amq_bulk_apply(&bulk, h.hashes[i], &err);
		if (st == AMQ_OK) {
			amq_filter done;
			amq_bulk_finish(&bulk, &done);
			amq_filter_free(&self->filter, A);
			self->filter = done;
		}
		amq_bulk_free(&bulk);
	} else {
		/* A classic, blocked or counting add cannot fail; a scalable
		 * chain's growth can (out of memory, or past the links' or the
		 * size limit), and then the values before stay added. */
		size_t added = 0;
		for (; st == AMQ_OK && added < h.n; added++)
			st = amq_filter_add_to(&self->filter, h.hashes[added], A, &err);
		/* A kind that cannot add (fuse) fails at the first: unchanged. */
		if (st == AMQ_OK || added > 1) {
			note_families(&self->filter, families.filter.families);
			self->unsealed = true;
		}
	}
	PyMem_Free(h.hashes);
	if (st != AMQ_OK)
		return amq_py_raise(&err);
	Py_RETURN_NONE;
}

/* A Filter of the same bytes (copy.copy, copy.deepcopy and copy()). */
static PyObject *filter_copy(FilterObject *self, PyObject *unused)
{
	(void)unused;
	amq_filter out;
	amq_error err;
	seal(self);
	if (amq_filter_clone(&out, &self->filter, A, &err) != AMQ_OK)
		return amq_py_raise(&err);
	return amq_py_filter_take(&out);
}

static PyObject *filter_deepcopy(FilterObject *self, PyObject *memo)
{
	(void)memo;
	return filter_copy(self, NULL);
}

/* bytes(f): the serialized filter, sealed. */
static PyObject *filter_bytes(FilterObject *self, PyObject *unused)
{
	(void)unused;
	seal(self);
	return PyBytes_FromStringAndSize((const char *)self->filter.bytes,
					 (Py_ssize_t)self->filter.size);
}

/* Pickles as Filter(bytes(f)). */
static PyObject *filter_reduce(FilterObject *self, PyObject *unused)
{
	PyObject *bytes = filter_bytes(self, unused);
	if (bytes == NULL)
		return NULL;
	return Py_BuildValue("O(N)", (PyObject *)Py_TYPE(self), bytes);
}

static PyObject *filter_repr(FilterObject *self)
{
	return PyUnicode_FromFormat("<amq.Filter %s %s, %llu items, %zu bytes>",
				    amq_kind_name(self->filter.kind),
				    amq_filter_layout_name(&self->filter),
				    (unsigned long long)self->filter.items, self->filter.size);
}

/* Two filters are equal when their serialized bytes are. */
static PyObject *filter_richcompare(PyObject *a, PyObject *b, int op)
{
	if (!PyObject_TypeCheck(b, &amq_py_filter_type) || (op != Py_EQ && op != Py_NE))
		Py_RETURN_NOTIMPLEMENTED;
	FilterObject *x = (FilterObject *)a, *y = (FilterObject *)b;
	seal(x);
	seal(y);
	bool equal = x->filter.size == y->filter.size &&
		     memcmp(x->filter.bytes, y->filter.bytes, x->filter.size) == 0;
	return PyBool_FromLong(equal == (op == Py_EQ));
}

/* The buffer protocol: the sealed bytes, read-only, so that a Filter binds
 * as a blob in sqlite3 and writes to files as it is. */
static int filter_getbuffer(FilterObject *self, Py_buffer *view, int flags)
{
	seal(self);
	if (PyBuffer_FillInfo(view, (PyObject *)self, self->filter.bytes,
			      (Py_ssize_t)self->filter.size, 1, flags) < 0)
		return -1;
	self->exports++;
	return 0;
}

static void filter_releasebuffer(FilterObject *self, Py_buffer *view)
{
	(void)view;
	self->exports--;
}

static PyObject *filter_get_kind(FilterObject *self, void *closure)
{
	(void)closure;
	return PyUnicode_FromString(amq_kind_name(self->filter.kind));
}

static PyObject *filter_get_layout(FilterObject *self, void *closure)
{
	(void)closure;
	return PyUnicode_FromString(amq_filter_layout_name(&self->filter));
}

/* The families held as a tuple of core's names for them, in info()'s order
 * (amq_families_json): () for none yet, None for a filter of a format before
 * families. */
static PyObject *filter_get_families(FilterObject *self, void *closure)
{
	(void)closure;
	char json[64];
	amq_families_json(&self->filter, json, sizeof(json));
	PyObject *names = PyObject_CallFunction(json_loads, "s", json);
	if (names == NULL || names == Py_None)
		return names;
	PyObject *tuple = PySequence_Tuple(names);
	Py_DECREF(names);
	return tuple;
}

/* The methods' docstrings, then the table that names each with its function. */
PyDoc_STRVAR(
    contains_doc,
    "contains(value) -> bool | None\n\nFalse when value was certainly never added; True when "
    "it may have been\n(at the filter's false-positive rate). The answer of SQL's "
    "bloom_contains\nor cuckoo_contains for the same value: None for None, as SQL gives NULL "
    "for\nNULL. `value in f` is the same test, False for None (NULL is never a\nmember).");
PyDoc_STRVAR(
    add_doc,
    "add(value) -> None\n\nAdds value in place (bloom_add / cuckoo_add). A full cuckoo filter "
    "raises\namq.Error and keeps every byte as it was; a scalable Bloom filter grows.\nNone "
    "(SQL's NULL) changes nothing, as bloom_add(f, NULL) returns f.");
PyDoc_STRVAR(delete_doc,
	     "delete(value) -> bool\n\nRemoves one copy of value in place (cuckoo_delete, "
	     "bloom_delete on a\ncounting filter); False, and no change, when it is certainly not "
	     "stored.\nDelete only what you added. Other layouts raise amq.Error. None "
	     "(SQL's\nNULL) gives False and changes nothing on any layout, as bloom_delete(f,\n"
	     "NULL) returns f.");
PyDoc_STRVAR(add_unique_doc,
	     "add_unique(value) -> bool\n\nAdds value unless the filter may hold it already "
	     "(cuckoo_add_unique):\nTrue when it was added. A false positive skips a new value. "
	     "None (SQL's\nNULL) is never added: False, as cuckoo_add_unique(f, NULL) returns f.");
PyDoc_STRVAR(count_doc,
	     "count(value) -> int\n\nHow many times value was added, never less than the truth: "
	     "cuckoo_count,\nor bloom_frequency on a counting filter (other layouts raise "
	     "amq.Error).\nNone for None on any layout, as SQL's NULL gives NULL.");
PyDoc_STRVAR(info_doc,
	     "info() -> dict\n\nThe description bloom_info / cuckoo_info return as JSON.");
PyDoc_STRVAR(
    union_doc,
    "union(other) -> Filter\n\nA new filter holding everything either holds (bloom_union); "
    "both must\nhave the same kind, layout and parameters. Also `f | g`; `f |= g` in place.");
PyDoc_STRVAR(
    intersection_doc,
    "intersection(other) -> Filter\n\nA new filter of what both hold (bloom_intersect); same "
    "rule as union.\nAlso `f & g`; `f &= g` in place.");
PyDoc_STRVAR(
    contains_many_doc,
    "contains_many(values) -> list[bool | None]\n\n[f.contains(v) for v in values], faster: "
    "values are hashed and probed\nin batches (a Bloom filter loads blocks ahead). A "
    "None gives None in its\nplace, as bloom_contains gives NULL for NULL.");
PyDoc_STRVAR(add_many_doc,
	     "add_many(values) -> None\n\nAdds every value in order, the bytes of bloom_add_agg / "
	     "cuckoo_add_agg\nover them; None is skipped, as NULL. Nothing changes when a value "
	     "cannot\nbe hashed, is of a family the filter does not take (amq.Error, as\n"
	     "bloom_add_agg's), or a cuckoo filter fills up (amq.Error).");
PyDoc_STRVAR(copy_doc, "copy() -> Filter\n\nAn independent filter with the same bytes.");
PyDoc_STRVAR(dunder_copy_doc, "copy.copy(f): f.copy().");
PyDoc_STRVAR(dunder_deepcopy_doc, "copy.deepcopy(f): f.copy().");
PyDoc_STRVAR(dunder_bytes_doc,
	     "bytes(f): the serialized filter, ready to bind into SQL in either engine.");
PyDoc_STRVAR(dunder_reduce_doc, "Pickles as Filter(bytes(f)).");

static PyMethodDef filter_methods[] = {
    {"contains", (PyCFunction)filter_contains, METH_O, contains_doc},
    {"add", (PyCFunction)filter_add, METH_O, add_doc},
    {"delete", (PyCFunction)filter_delete, METH_O, delete_doc},
    {"add_unique", (PyCFunction)filter_add_unique, METH_O, add_unique_doc},
    {"count", (PyCFunction)filter_count, METH_O, count_doc},
    {"info", (PyCFunction)filter_info, METH_NOARGS, info_doc},
    {"union", (PyCFunction)filter_union, METH_O, union_doc},
    {"intersection", (PyCFunction)filter_intersection, METH_O, intersection_doc},
    {"contains_many", (PyCFunction)filter_contains_many, METH_O, contains_many_doc},
    {"add_many", (PyCFunction)filter_add_many, METH_O, add_many_doc},
    {"copy", (PyCFunction)filter_copy, METH_NOARGS, copy_doc},
    {"__copy__", (PyCFunction)filter_copy, METH_NOARGS, dunder_copy_doc},
    {"__deepcopy__", (PyCFunction)filter_deepcopy, METH_O, dunder_deepcopy_doc},
    {"__bytes__", (PyCFunction)filter_bytes, METH_NOARGS, dunder_bytes_doc},
    {"__reduce__", (PyCFunction)filter_reduce, METH_NOARGS, dunder_reduce_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef filter_getset[] = {
    {"kind", (getter)filter_get_kind, NULL, "'bloom' or 'cuckoo'.", NULL},
    {"layout", (getter)filter_get_layout, NULL,
     "The SQL name of the layout: 'blocked', 'classic', 'counting', 'dleft',\n'scalable', "
     "'b2', 'b4', 'b8' or 'semisorted'.",
     NULL},
    {"families", (getter)filter_get_families, NULL,
     "The families of values the filter holds, in this order: 'numbers' (int,\nfloat, bool, "
     "Decimal), 'text' (str, UUID, date, datetime, time), 'blobs'\n(bytes-likes). () for a "
     "filter that holds none yet (its first add decides),\nNone for one written before "
     "filters recorded them (format 1 to 3),\nwhich takes every value unchecked. A value of "
     "another family raises\namq.Error instead of answering.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods filter_as_sequence = {
    .sq_contains = (objobjproc)filter_sq_contains,
};

static PyNumberMethods filter_as_number = {
    .nb_or = filter_or,
    .nb_and = filter_and,
    .nb_inplace_or = filter_ior,
    .nb_inplace_and = filter_iand,
};

static PyBufferProcs filter_as_buffer = {
    .bf_getbuffer = (getbufferproc)filter_getbuffer,
    .bf_releasebuffer = (releasebufferproc)filter_releasebuffer,
};

PyTypeObject amq_py_filter_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "amq.Filter",
    .tp_basicsize = sizeof(FilterObject),
    .tp_dealloc = (destructor)filter_dealloc,
    .tp_repr = (reprfunc)filter_repr,
    .tp_as_number = &filter_as_number,
    .tp_as_sequence = &filter_as_sequence,
    .tp_as_buffer = &filter_as_buffer,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Filter(data)\n\nA Bloom or cuckoo filter in process, on the bytes either engine "
	      "writes\n(bloom_agg, cuckoo_agg, bloom_new, ...): data is bytes, bytearray or "
	      "a\nmemoryview, copied, checked as SQL checks a filter argument (header,\nkind, "
	      "checksum). Bytes that are not a filter raise amq.Error with\nSQL's message for "
	      "them. Methods answer as the SQL functions do for\nthe same values; bytes(f) is "
	      "the filter to bind into SQL again. A value of\na family the filter does not hold "
	      "(families) raises amq.Error with SQL's\nmessage: \"42\" against a filter of ints "
	      "is a mistake, not a miss.",
    .tp_richcompare = filter_richcompare,
    .tp_methods = filter_methods,
    .tp_getset = filter_getset,
    .tp_new = filter_new,
};

/* Readies the type and imports json.loads; 0, or -1 with an exception set. */
int amq_py_filter_init(void)
{
	PyObject *json = PyImport_ImportModule("json");
	if (json == NULL)
		return -1;
	json_loads = PyObject_GetAttrString(json, "loads");
	Py_DECREF(json);
	if (json_loads == NULL)
		return -1;
	return PyType_Ready(&amq_py_filter_type);
}
