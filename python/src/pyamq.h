/*
 * pyamq.h - what the files of the amq._amq Python extension share: the
 * amq.Error exception, the Filter type, and the hashing of Python values by
 * docs/HASHING.md. The module binds core/amq.h and nothing else: every
 * decision about filters, hashes and errors is the core's, as in the SQLite
 * and PostgreSQL adapters.
 */
#ifndef AMQ_PYAMQ_H
#define AMQ_PYAMQ_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "amq.h"

/* amq.Error, a ValueError subclass (module.c). */
extern PyObject *amq_py_error;

/* Raises core's error as Python sees it: out-of-memory as MemoryError,
 * anything else as amq.Error whose text is "<message>: <hint>" as SQLite
 * writes it and whose message and sqlstate attributes are PostgreSQL's; the
 * hint is core's, or Python's advice where core's names SQL functions
 * (module.c's python_hints). Returns NULL, so callers can return its
 * result. */
PyObject *amq_py_raise(const amq_error *err);

/* ---- values (values.c) ---- */

/* Imports the types values.c recognises (Decimal, UUID, datetime's);
 * 0 on success, -1 with an exception set. */
int amq_py_values_init(void);

/*
 * One Python value as core sees it (docs/HASHING.md): its family and what it
 * hashes as. int and bool are integers (an int outside int64 the nearest
 * double, as PostgreSQL's numeric), float a real, Decimal numeric's integer or
 * real: numbers. str is its UTF-8 text; UUID, date, datetime and time
 * PostgreSQL's text forms: text. bytes, bytearray and memoryview: blobs.
 */
typedef struct amq_py_value {
	amq_value value; /* its bytes in the value's object, text, or view */
	char text[64];	 /* a UUID's, date's, datetime's or time's text */
	Py_buffer view;	 /* a bytearray's or memoryview's bytes, while viewed */
	bool viewed;
} amq_py_value;

/*
 * Decodes value into *out, valid while value is alive and until
 * amq_py_value_release. Anything else is a TypeError: a value never silently
 * misses. None is SQL's NULL, which has no hash: callers answer it first (as
 * the SQL function answers NULL), and here it is a TypeError too. 0 on
 * success, -1 with an exception set (nothing to release then).
 */
int amq_py_decode(PyObject *value, amq_py_value *out);
void amq_py_value_release(amq_py_value *v);

/* Hashes one Python value exactly as SQL hashes the equal SQL value
 * (amq_py_decode, then amq_value_hash) and says its family. 0 on success, -1
 * with an exception set. */
int amq_py_hash(PyObject *value, uint64_t seed, uint64_t *out, amq_family *family);

/* Raises the family check's amq.Error for a value f does not take
 * (amq_check_family in Python's words, naming function and "value"): the
 * slow path of a check that amq_filter_takes failed. Returns -1. */
int amq_py_refuse_family(const amq_filter *f, PyObject *value, const char *function);

/* Called with each chunk of consecutive hashes; nulls, when not NULL, says
 * which of them stand for a None (their hash is 0 and means nothing). 0 to
 * go on, -1 (with an exception set) to stop. */
typedef int (*amq_py_chunk_fn)(void *ctx, const uint64_t *hashes, const bool *nulls, size_t n);

/*
 * The family check of amq_py_hash_each's values, as core's amq_bulk_admit
 * makes it for each row: against a copy of the filter's fields (its bytes
 * are not read), whose families an add's values join as they come, so that
 * on an empty filter a value of another family than the ones before it is
 * refused too. A builder checks nothing and gathers every family it sees.
 */
typedef struct amq_py_families {
	amq_filter filter;    /* the filter's fields; families grow with adds */
	bool check;	      /* false for a builder: every family is taken */
	bool adds;	      /* each value's family joins filter.families */
	const char *function; /* the SQL function the error names */
} amq_py_families;

/* The check of values against f, named function in errors; adds: they are
 * added, so their families join f's. */
static inline amq_py_families amq_py_families_of(const amq_filter *f, const char *function,
						 bool adds)
{
	return (amq_py_families){.filter = *f, .check = true, .adds = adds, .function = function};
}

/*
 * Hashes every value of an iterable in order and hands the hashes on in
 * chunks, without building a list of them: lists and tuples are read in
 * place and a range of machine integers is hashed without making its ints.
 * Each value's family is checked and gathered in families (a wrong one is
 * amq.Error before its hash is handed on). None is SQL's NULL: skipped when
 * skip_none (as SQL aggregates skip NULL), otherwise handed on in its place,
 * flagged in nulls (contains_many answers it with None, as bloom_contains
 * answers NULL). 0 on success, -1 with an exception set.
 */
int amq_py_hash_each(PyObject *values, uint64_t seed, bool skip_none, amq_py_families *families,
		     amq_py_chunk_fn fn, void *ctx);

/* ---- amq.Filter (filter.c) ---- */

extern PyTypeObject amq_py_filter_type;

/* Readies the type; 0, or -1 with an exception set. */
int amq_py_filter_init(void);

/* A new amq.Filter that takes over f, a sealed filter whose buffer came from
 * amq_malloc_allocator (freed here on failure). */
PyObject *amq_py_filter_take(amq_filter *f);

#endif
