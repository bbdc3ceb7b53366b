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
 * Hashes one Python value exactly as SQL hashes the equal SQL value
 * (docs/HASHING.md): int and bool as integers, float as a double, str as
 * UTF-8 text, bytes-like as a blob, Decimal as numeric, UUID as its text,
 * date, datetime and time as PostgreSQL's ISO text. Anything else is a
 * TypeError: a value never silently misses. None is SQL's NULL, which has
 * no hash: callers answer it first (as the SQL function answers NULL), and
 * here it is a TypeError too. 0 on success, -1 with an exception set.
 */
int amq_py_hash(PyObject *value, uint64_t seed, uint64_t *out);

/* Called with each chunk of consecutive hashes; nulls, when not NULL, says
 * which of them stand for a None (their hash is 0 and means nothing). 0 to
 * go on, -1 (with an exception set) to stop. */
typedef int (*amq_py_chunk_fn)(void *ctx, const uint64_t *hashes, const bool *nulls, size_t n);

/*
 * Hashes every value of an iterable in order and hands the hashes on in
 * chunks, without building a list of them: lists and tuples are read in
 * place and a range of machine integers is hashed without making its ints.
 * None is SQL's NULL: skipped when skip_none (as SQL aggregates skip NULL),
 * otherwise handed on in its place, flagged in nulls (contains_many answers
 * it with None, as bloom_contains answers NULL). 0 on success, -1 with an
 * exception set.
 */
int amq_py_hash_each(PyObject *values, uint64_t seed, bool skip_none, amq_py_chunk_fn fn,
		     void *ctx);

/* ---- amq.Filter (filter.c) ---- */

extern PyTypeObject amq_py_filter_type;

/* Readies the type; 0, or -1 with an exception set. */
int amq_py_filter_init(void);

/* A new amq.Filter that takes over f, a sealed filter whose buffer came from
 * amq_malloc_allocator (freed here on failure). */
PyObject *amq_py_filter_take(amq_filter *f);

#endif
