/*
 * values.c - Python values as SQL values: each is hashed with the core's
 * amq_hash_* exactly as the equal SQL value is hashed in SQLite and
 * PostgreSQL (docs/HASHING.md). int and bool are integers (an int outside
 * int64 is what PostgreSQL's numeric makes of it: the nearest double);
 * float is a double; str is its UTF-8 text and bytes, bytearray and
 * memoryview are blobs; decimal.Decimal is numeric; uuid.UUID, datetime.date,
 * datetime.datetime (an aware one as its UTC instant) and datetime.time are
 * the text PostgreSQL hashes for uuid, date, timestamp/timestamptz and time.
 * Every other type is a TypeError, as PostgreSQL refuses types it cannot
 * hash: a value never silently misses. None is SQL's NULL: it has no hash,
 * and the callers answer it as the SQL functions answer NULL.
 */
#include "pyamq.h"

#include <datetime.h>
#include <math.h>

/* decimal.Decimal and uuid.UUID, imported once. */
static PyObject *decimal_type, *uuid_type;

/* Consecutive hashes handed on at a time: small enough to stay in L1. */
#define CHUNK 512

int amq_py_values_init(void)
{
	PyDateTime_IMPORT;
	if (PyDateTimeAPI == NULL)
		return -1;
	PyObject *decimal = PyImport_ImportModule("decimal");
	if (decimal == NULL)
		return -1;
	decimal_type = PyObject_GetAttrString(decimal, "Decimal");
	Py_DECREF(decimal);
	PyObject *uuid = PyImport_ImportModule("uuid");
	if (uuid == NULL)
		return -1;
	uuid_type = PyObject_GetAttrString(uuid, "UUID");
	Py_DECREF(uuid);
	return decimal_type != NULL && uuid_type != NULL ? 0 : -1;
}

/* An int outside int64 is a numeric to PostgreSQL, which hashes it as the
 * nearest double (infinite past the largest). */
static int decode_big_int(PyObject *value, amq_value *out)
{
	double d = PyLong_AsDouble(value);
	if (d == -1.0 && PyErr_Occurred()) {
		if (!PyErr_ExceptionMatches(PyExc_OverflowError))
			return -1;
		PyErr_Clear();
		PyObject *zero = PyLong_FromLong(0);
		int negative = zero ? PyObject_RichCompareBool(value, zero, Py_LT) : -1;
		Py_XDECREF(zero);
		if (negative < 0)
			return -1;
		d = negative ? -INFINITY : INFINITY;
	}
	*out = amq_value_real(d);
	return 0;
}

/* The truth of value.method(), or -1 with an exception set. */
static int call_predicate(PyObject *value, const char *method)
{
	PyObject *r = PyObject_CallMethod(value, method, NULL);
	if (r == NULL)
		return -1;
	int truth = PyObject_IsTrue(r);
	Py_DECREF(r);
	return truth;
}

/*
 * A Decimal as PostgreSQL hashes the equal numeric: an integral value within
 * int64 as that integer, anything else (NaN and infinities included) as the
 * correctly rounded double. PostgreSQL has no signalling NaN, so no numeric
 * equals one: it is refused rather than hashed.
 */
static int decode_decimal(PyObject *value, amq_value *out)
{
	int snan = call_predicate(value, "is_snan");
	if (snan != 0) {
		if (snan > 0)
			PyErr_SetString(PyExc_ValueError,
					"cannot hash a signalling NaN: no SQL numeric equals it");
		return -1;
	}
	int finite = call_predicate(value, "is_finite");
	if (finite < 0)
		return -1;
	if (finite) {
		/* adjusted() is the exponent of the leading digit: below 19 the
		 * value may be an int64, and int() of it stays small. */
		PyObject *adjusted = PyObject_CallMethod(value, "adjusted", NULL);
		if (adjusted == NULL)
			return -1;
		long exponent = PyLong_AsLong(adjusted);
		Py_DECREF(adjusted);
		if (exponent == -1 && PyErr_Occurred())
			return -1;
		if (exponent < 19) {
			PyObject *integer = PyNumber_Long(value);
			if (integer == NULL)
				return -1;
			int integral = PyObject_RichCompareBool(integer, value, Py_EQ);
			int overflow = 0;
			long long n = PyLong_AsLongLongAndOverflow(integer, &overflow);
			Py_DECREF(integer);
			if (integral < 0 || (n == -1 && PyErr_Occurred()))
				return -1;
			if (integral && !overflow) {
				*out = amq_value_integer(n);
				return 0;
			}
		}
	}
	/* Decimal's __float__ reads its own text, correctly rounded, infinite
	 * past the largest double, as PostgreSQL's strtod. */
	double d = PyFloat_AsDouble(value);
	if (d == -1.0 && PyErr_Occurred())
		return -1;
	*out = amq_value_real(d);
	return 0;
}

/* The text value of the first len bytes of out->text. */
static void text_value(amq_py_value *out, size_t len)
{
	out->value = amq_value_text(out->text, len);
}

/* Lower-case 8-4-4-4-12 hex of a UUID's 16 bytes, as uuid_out prints it. */
static int decode_uuid(PyObject *value, amq_py_value *out)
{
	static const char digits[] = "0123456789abcdef";
	PyObject *bytes = PyObject_GetAttrString(value, "bytes");
	if (bytes == NULL)
		return -1;
	if (!PyBytes_Check(bytes) || PyBytes_GET_SIZE(bytes) != 16) {
		Py_DECREF(bytes);
		PyErr_SetString(PyExc_TypeError, "UUID.bytes is not 16 bytes");
		return -1;
	}
	const unsigned char *b = (const unsigned char *)PyBytes_AS_STRING(bytes);
	char *p = out->text;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = digits[b[i] >> 4];
		*p++ = digits[b[i] & 0xf];
	}
	Py_DECREF(bytes);
	text_value(out, 36);
	return 0;
}

/* Appends ".ffffff" without trailing zeros when usec is not zero, as
 * PostgreSQL's ISO output does; returns the new end. */
static char *append_fraction(char *p, int usec)
{
	if (usec == 0)
		return p;
	int digits = 6;
	while (usec % 10 == 0) {
		usec /= 10;
		digits--;
	}
	return p + sprintf(p, ".%0*d", digits, usec);
}

/* 'YYYY-MM-DD HH:MM:SS[.fraction]' of an aware datetime's UTC instant or a
 * naive one's fields. */
static int decode_datetime(PyObject *value, amq_py_value *out)
{
	PyObject *dt = value;
	Py_INCREF(dt);
	if (PyDateTime_DATE_GET_TZINFO(value) != Py_None) {
		PyObject *offset = PyObject_CallMethod(value, "utcoffset", NULL);
		if (offset == NULL) {
			Py_DECREF(dt);
			return -1;
		}
		if (offset != Py_None) {
			Py_SETREF(dt, PyNumber_Subtract(value, offset));
			if (dt == NULL) {
				Py_DECREF(offset);
				return -1;
			}
		}
		Py_DECREF(offset);
	}
	char *text = out->text;
	char *p = text + sprintf(text, "%04d-%02d-%02d %02d:%02d:%02d", PyDateTime_GET_YEAR(dt),
				 PyDateTime_GET_MONTH(dt), PyDateTime_GET_DAY(dt),
				 PyDateTime_DATE_GET_HOUR(dt), PyDateTime_DATE_GET_MINUTE(dt),
				 PyDateTime_DATE_GET_SECOND(dt));
	p = append_fraction(p, PyDateTime_DATE_GET_MICROSECOND(dt));
	Py_DECREF(dt);
	text_value(out, (size_t)(p - text));
	return 0;
}

/* 'HH:MM:SS[.fraction]'; a time with a zone is PostgreSQL's timetz, which
 * amq refuses (its equality is not its text's). */
static int decode_time(PyObject *value, amq_py_value *out)
{
	if (PyDateTime_TIME_GET_TZINFO(value) != Py_None) {
		PyErr_SetString(PyExc_TypeError,
				"cannot hash a time with a time zone (PostgreSQL's timetz): pass "
				"a naive time, or a datetime");
		return -1;
	}
	char *text = out->text;
	char *p =
	    text + sprintf(text, "%02d:%02d:%02d", PyDateTime_TIME_GET_HOUR(value),
			   PyDateTime_TIME_GET_MINUTE(value), PyDateTime_TIME_GET_SECOND(value));
	p = append_fraction(p, PyDateTime_TIME_GET_MICROSECOND(value));
	text_value(out, (size_t)(p - text));
	return 0;
}

/* The types amq_py_decode does not know as single values. */
static int refuse(PyObject *value)
{
	if (value == Py_None)
		PyErr_SetString(PyExc_TypeError,
				"cannot hash None: it is SQL's NULL, which has no hash");
	else
		PyErr_Format(PyExc_TypeError,
			     "cannot hash values of type %.100s: pass int, float, str, bytes, "
			     "Decimal, UUID, date, datetime or time (convert others to str or "
			     "bytes)",
			     Py_TYPE(value)->tp_name);
	return -1;
}

int amq_py_decode(PyObject *value, amq_py_value *out)
{
	out->viewed = false;
	if (PyLong_Check(value)) {
		int overflow;
		long long n = PyLong_AsLongLongAndOverflow(value, &overflow);
		if (overflow)
			return decode_big_int(value, &out->value);
		if (n == -1 && PyErr_Occurred())
			return -1;
		out->value = amq_value_integer(n);
		return 0;
	}
	if (PyFloat_Check(value)) {
		out->value = amq_value_real(PyFloat_AS_DOUBLE(value));
		return 0;
	}
	if (PyUnicode_Check(value)) {
		/* The UTF-8 form is cached in the str, alive while it is. */
		Py_ssize_t len;
		const char *text = PyUnicode_AsUTF8AndSize(value, &len);
		if (text == NULL)
			return -1;
		out->value = amq_value_text(text, (size_t)len);
		return 0;
	}
	if (PyBytes_Check(value)) {
		out->value =
		    amq_value_blob(PyBytes_AS_STRING(value), (size_t)PyBytes_GET_SIZE(value));
		return 0;
	}
	if (PyByteArray_Check(value) || PyMemoryView_Check(value)) {
		if (PyObject_GetBuffer(value, &out->view, PyBUF_C_CONTIGUOUS) < 0)
			return -1;
		out->viewed = true;
		out->value =
		    amq_value_blob(out->view.len ? out->view.buf : NULL, (size_t)out->view.len);
		return 0;
	}
	/* datetime is a date: test it first. */
	if (PyDateTime_Check(value))
		return decode_datetime(value, out);
	if (PyDate_Check(value)) {
		int len = sprintf(out->text, "%04d-%02d-%02d", PyDateTime_GET_YEAR(value),
				  PyDateTime_GET_MONTH(value), PyDateTime_GET_DAY(value));
		text_value(out, (size_t)len);
		return 0;
	}
	if (PyTime_Check(value))
		return decode_time(value, out);
	int is = PyObject_IsInstance(value, decimal_type);
	if (is != 0)
		return is < 0 ? -1 : decode_decimal(value, &out->value);
	is = PyObject_IsInstance(value, uuid_type);
	if (is != 0)
		return is < 0 ? -1 : decode_uuid(value, out);
	return refuse(value);
}

void amq_py_value_release(amq_py_value *v)
{
	if (v->viewed) {
		PyBuffer_Release(&v->view);
		v->viewed = false;
	}
}

/* amq_py_hash of the types that are not Python's own, by amq_py_decode. */
static int hash_decoded(PyObject *value, uint64_t seed, uint64_t *out, amq_family *family)
{
	amq_py_value v;
	if (amq_py_decode(value, &v) < 0)
		return -1;
	*out = amq_value_hash(&v.value, seed);
	*family = v.value.family;
	amq_py_value_release(&v);
	return 0;
}

/* amq_py_decode's first rules, for the common types, without its frame: the
 * same hash as amq_value_hash of the decoded value. */
int amq_py_hash(PyObject *value, uint64_t seed, uint64_t *out, amq_family *family)
{
	if (PyLong_CheckExact(value)) {
		int overflow;
		long long n = PyLong_AsLongLongAndOverflow(value, &overflow);
		if (n == -1 && PyErr_Occurred())
			return -1;
		if (!overflow) {
			*out = amq_hash_int(n, seed);
			*family = AMQ_FAMILY_NUMBER;
			return 0;
		}
	} else if (PyFloat_CheckExact(value)) {
		*out = amq_hash_double(PyFloat_AS_DOUBLE(value), seed);
		*family = AMQ_FAMILY_NUMBER;
		return 0;
	} else if (PyUnicode_CheckExact(value)) {
		Py_ssize_t len;
		const char *text = PyUnicode_AsUTF8AndSize(value, &len);
		if (text == NULL)
			return -1;
		*out = amq_hash_text(text, (size_t)len, seed);
		*family = AMQ_FAMILY_TEXT;
		return 0;
	}
	return hash_decoded(value, seed, out, family);
}

int amq_py_refuse_family(const amq_filter *f, PyObject *value, const char *function)
{
	amq_py_value v;
	amq_error err;
	if (amq_py_decode(value, &v) < 0)
		return -1;
	/* AMQ_OK only when f takes the value after all: the caller's mistake. */
	if (amq_check_family(f, &v.value, function, "value", AMQ_DIALECT_PYTHON, &err) == AMQ_OK)
		PyErr_SetString(PyExc_SystemError, "amq: a value refused that its filter takes");
	else
		amq_py_raise(&err);
	amq_py_value_release(&v);
	return -1;
}

/* Where a chunk of hashes is gathered before it is handed on. */
struct chunker {
	uint64_t hashes[CHUNK];
	bool nulls[CHUNK]; /* which slots are a None, when any_null */
	bool any_null;
	size_t n;
	uint64_t seed;
	bool skip_none;
	amq_py_families *families;
	amq_py_chunk_fn fn;
	void *ctx;
};

/* Hands the chunk gathered so far on and starts the next. */
static inline int chunk_flush(struct chunker *c)
{
	size_t n = c->n;
	bool any_null = c->any_null;
	c->n = 0;
	c->any_null = false;
	/* A loop over a range or a list of ints runs no Python code, so it
	 * looks for Ctrl-C itself (KeyboardInterrupt): once a chunk. */
	if (PyErr_CheckSignals() < 0)
		return -1;
	return n > 0 ? c->fn(c->ctx, c->hashes, any_null ? c->nulls : NULL, n) : 0;
}

/* True when the filter takes a value of family (amq_filter_takes, one
 * compare), then noted when it is added; false when the value is refused. */
static inline bool admits(amq_py_families *fam, amq_family family)
{
	if (fam->check && !amq_filter_takes(&fam->filter, family))
		return false;
	if (fam->adds)
		amq_filter_note_family(&fam->filter, family);
	return true;
}

/* The error of a refused range, which its first integer shows. */
static int refuse_integer(const amq_py_families *fam, int64_t first)
{
	amq_value v = amq_value_integer(first);
	amq_error err;
	amq_check_family(&fam->filter, &v, fam->function, "value", AMQ_DIALECT_PYTHON, &err);
	amq_py_raise(&err);
	return -1;
}

/* Hashes value into the chunk (a None as a null slot unless skipped) once
 * its family is admitted, handing the chunk on when it is full. */
static inline int chunk_value(struct chunker *c, PyObject *value)
{
	if (value == Py_None) {
		if (c->skip_none)
			return 0;
		if (!c->any_null) {
			memset(c->nulls, 0, c->n * sizeof(bool));
			c->any_null = true;
		}
		c->nulls[c->n] = true;
		c->hashes[c->n] = 0;
	} else {
		amq_family family;
		if (amq_py_hash(value, c->seed, &c->hashes[c->n], &family) < 0)
			return -1;
		if (!admits(c->families, family))
			return amq_py_refuse_family(&c->families->filter, value,
						    c->families->function);
		if (c->any_null)
			c->nulls[c->n] = false;
	}
	return ++c->n == CHUNK ? chunk_flush(c) : 0;
}

/* The start, step and length of a range whose every item is an int64, so
 * that it can be hashed without making its ints; false (no exception) for
 * any other range. */
static bool int64_range(PyObject *range, long long *start, long long *step, long long *len)
{
	PyObject *s = PyObject_GetAttrString(range, "start");
	PyObject *st = PyObject_GetAttrString(range, "step");
	Py_ssize_t n = PyObject_Length(range);
	int overflow_start = 0, overflow_step = 0;
	bool ok = s != NULL && st != NULL && n >= 0;
	if (ok) {
		*start = PyLong_AsLongLongAndOverflow(s, &overflow_start);
		*step = PyLong_AsLongLongAndOverflow(st, &overflow_step);
		*len = n;
	}
	Py_XDECREF(s);
	Py_XDECREF(st);
	PyErr_Clear(); /* a range longer than Py_ssize_t: iterate it instead */
	if (!ok || overflow_start || overflow_step)
		return false;
	/* The last item, start + step * (len - 1), must be an int64 too. */
	long long span;
	return *len == 0 || (!__builtin_mul_overflow(*step, *len - 1, &span) &&
			     !__builtin_add_overflow(*start, span, &span));
}

int amq_py_hash_each(PyObject *values, uint64_t seed, bool skip_none, amq_py_families *families,
		     amq_py_chunk_fn fn, void *ctx)
{
	struct chunker c = {.n = 0,
			    .any_null = false,
			    .seed = seed,
			    .skip_none = skip_none,
			    .families = families,
			    .fn = fn,
			    .ctx = ctx};
	long long start = 0, step = 0, len = 0;
	if (PyRange_Check(values) && int64_range(values, &start, &step, &len)) {
		/* Every item an integer: one check for them all. */
		if (len > 0 && !admits(families, AMQ_FAMILY_NUMBER))
			return refuse_integer(families, start);
		for (long long i = 0; i < len; i++) {
			/* Unsigned arithmetic: the last step may pass INT64_MAX. */
			c.hashes[c.n] = amq_hash_int(
			    (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)step), seed);
			if (++c.n == CHUNK && chunk_flush(&c) < 0)
				return -1;
		}
	} else if (PyList_CheckExact(values) || PyTuple_CheckExact(values)) {
		/* Size and item read again on every step, and the item held: a
		 * hash of a Decimal runs Python code, which may change the list. */
		for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(values); i++) {
			PyObject *value = PySequence_Fast_GET_ITEM(values, i);
			Py_INCREF(value);
			int rc = chunk_value(&c, value);
			Py_DECREF(value);
			if (rc < 0)
				return -1;
		}
	} else {
		PyObject *it = PyObject_GetIter(values);
		if (it == NULL)
			return -1;
		PyObject *value;
		while ((value = PyIter_Next(it)) != NULL) {
			int rc = chunk_value(&c, value);
			Py_DECREF(value);
			if (rc < 0) {
				Py_DECREF(it);
				return -1;
			}
		}
		Py_DECREF(it);
		if (PyErr_Occurred())
			return -1;
	}
	return chunk_flush(&c);
}
