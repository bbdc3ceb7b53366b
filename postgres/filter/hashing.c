/*
 * filter/hashing.c - one 64-bit hash per SQL value, for values of any supported
 * PostgreSQL type, following docs/HASHING.md: every integer type, bool and
 * integral numerics hash as core integers, so a filter over int8 answers int4
 * and numeric probes; floats and other numerics as core reals; character
 * types as UTF-8 text (bpchar without its trailing spaces, citext lower-cased
 * as citext compares); bytea as a blob. Dates, times, timestamps and uuids
 * hash as the ISO text PostgreSQL prints with DateStyle ISO (timestamptz as
 * its UTC instant), built here without reading any session setting.
 *
 * The rule throughout: values PostgreSQL calls equal must hash equally, or the
 * filter would give false negatives. Types whose equality is not bytewise and
 * cannot be canonicalised here are refused with an error instead.
 */
#include "postgres.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "access/htup_details.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/formatting.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "filter/filter.h"

/* True for the citext extension's type, whatever schema it lives in. */
static bool is_citext(Oid type)
{
	HeapTuple tuple = SearchSysCache1(TYPEOID, ObjectIdGetDatum(type));
	Form_pg_type form;
	bool citext;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for type %u", type);
	form = (Form_pg_type)GETSTRUCT(tuple);
	citext = strcmp(NameStr(form->typname), "citext") == 0 && form->typlen == -1;
	if (citext) {
		char *input = get_func_name(form->typinput);

		citext = input != NULL && strcmp(input, "citextin") == 0;
	}
	ReleaseSysCache(tuple);
	return citext;
}

/*
 * Text compared under a nondeterministic collation (case- or accent-
 * insensitive) has equal values with different bytes: refuse it.
 */
static void require_deterministic(Oid collation)
{
	if (OidIsValid(collation) && !get_collation_isdeterministic(collation))
		ereport(ERROR, errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			errmsg("cannot hash text under nondeterministic collation \"%s\"",
			       get_collation_name(collation)),
			errhint("Apply a deterministic collation to the value, for example "
				"COLLATE \"C\"."));
}

/* The encoding of values of base type base, checking the collation of text
 * types (InvalidOid: none to check); false for a type amq cannot hash. */
static bool encoding_of(Oid base, Oid collation, amq_pg_encoding *out)
{
	switch (base) {
	case INT2OID:
		*out = AMQ_PG_INT2;
		return true;
	case INT4OID:
		*out = AMQ_PG_INT4;
		return true;
	case INT8OID:
		*out = AMQ_PG_INT8;
		return true;
	case FLOAT4OID:
		*out = AMQ_PG_FLOAT4;
		return true;
	case FLOAT8OID:
		*out = AMQ_PG_FLOAT8;
		return true;
	case NUMERICOID:
		*out = AMQ_PG_NUMERIC;
		return true;
	case BOOLOID:
		*out = AMQ_PG_BOOL;
		return true;
	case TEXTOID:
	case VARCHAROID:
		*out = AMQ_PG_TEXT;
		break;
	case BPCHAROID:
		*out = AMQ_PG_BPCHAR;
		break;
	case NAMEOID:
		*out = AMQ_PG_NAME;
		break;
	case BYTEAOID:
		*out = AMQ_PG_BYTEA;
		return true;
	case DATEOID:
		*out = AMQ_PG_DATE;
		return true;
	case TIMEOID:
		*out = AMQ_PG_TIME;
		return true;
	case TIMESTAMPOID:
		*out = AMQ_PG_TIMESTAMP;
		return true;
	case TIMESTAMPTZOID:
		*out = AMQ_PG_TIMESTAMPTZ;
		return true;
	case UUIDOID:
		*out = AMQ_PG_UUID;
		return true;
	default:
		/* citext compares lower-cased text whatever its collation says. */
		if (!is_citext(base))
			return false;
		*out = AMQ_PG_CITEXT;
		return true;
	}
	require_deterministic(collation);
	return true;
}

/* The family of values of an encoding (docs/HASHING.md). */
static amq_family family_of(amq_pg_encoding encoding)
{
	switch (encoding) {
	case AMQ_PG_INT2:
	case AMQ_PG_INT4:
	case AMQ_PG_INT8:
	case AMQ_PG_FLOAT4:
	case AMQ_PG_FLOAT8:
	case AMQ_PG_NUMERIC:
	case AMQ_PG_BOOL:
		return AMQ_FAMILY_NUMBER;
	case AMQ_PG_BYTEA:
		return AMQ_FAMILY_BLOB;
	default:
		return AMQ_FAMILY_TEXT;
	}
}

void amq_pg_hasher_init(amq_pg_hasher *h, FunctionCallInfo fcinfo, int argno)
{
	Oid type = get_fn_expr_argtype(fcinfo->flinfo, argno);

	if (!OidIsValid(type))
		elog(ERROR, "could not determine the type of argument %d", argno + 1);
	h->convert_to_utf8 = GetDatabaseEncoding() != PG_UTF8;
	if (!encoding_of(getBaseType(type), PG_GET_COLLATION(), &h->encoding))
		ereport(ERROR, errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			errmsg("cannot hash values of type %s", format_type_be(type)),
			errhint("Cast the value to text or bytea."));
	h->family = family_of(h->encoding);
}

bool amq_pg_hasher_for_type(amq_pg_hasher *h, Oid type)
{
	h->convert_to_utf8 = GetDatabaseEncoding() != PG_UTF8;
	if (!encoding_of(getBaseType(type), InvalidOid, &h->encoding))
		return false;
	h->family = family_of(h->encoding);
	return true;
}

const amq_pg_hasher *amq_pg_cached_hasher(FunctionCallInfo fcinfo, int argno)
{
	amq_pg_hasher *h = fcinfo->flinfo->fn_extra;

	if (h == NULL) {
		h = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(*h));
		amq_pg_hasher_init(h, fcinfo, argno);
		fcinfo->flinfo->fn_extra = h;
	}
	return h;
}

/* What amq_pg_decode_value allocated, freed by release_decoded. */
static void own(amq_pg_decoded *d, void *p)
{
	d->owned[d->nowned++] = p;
}

/* Frees what decoding d allocated. */
static void release_decoded(amq_pg_decoded *d)
{
	for (int i = 0; i < d->nowned; i++)
		pfree(d->owned[i]);
	d->nowned = 0;
}

/* Text in the server encoding as its UTF-8 bytes. */
static void decode_server_text(const amq_pg_hasher *h, const char *s, size_t len, amq_pg_decoded *d)
{
	char *utf8;

	if (h->convert_to_utf8) {
		utf8 = pg_server_to_any(s, (int)len, PG_UTF8);
		if (utf8 != s) {
			own(d, utf8);
			d->value = amq_value_text(utf8, strlen(utf8));
			return;
		}
	}
	d->value = amq_value_text(s, len);
}

/*
 * A numeric equals the integer or double it converts to: integral values in
 * int64 are integers, everything else (NaN and infinities included) the
 * nearest double, the value float8 comparisons see.
 */
static amq_value numeric_value(Numeric num)
{
	/* Digits without trailing fractional zeros: "3.500" is "3.5", "3.0" is "3". */
	char *digits = numeric_normalize(num);
	amq_value v;

	if (strcmp(digits, "NaN") == 0) {
		v = amq_value_real(NAN);
	} else if (strcmp(digits, "Infinity") == 0) {
		v = amq_value_real(INFINITY);
	} else if (strcmp(digits, "-Infinity") == 0) {
		v = amq_value_real(-INFINITY);
	} else {
		char *end;
		long long integer;

		errno = 0;
		integer = strtoll(digits, &end, 10);
		if (*end == '\0' && errno == 0)
			v = amq_value_integer(integer);
		else
			v = amq_value_real(strtod(digits, NULL));
	}
	pfree(digits);
	return v;
}

/* Length of a bpchar without the trailing spaces its equality ignores. */
static size_t bpchar_length(const char *s, size_t len)
{
	while (len > 0 && s[len - 1] == ' ')
		len--;
	return len;
}

/* 'YYYY-MM-DD' (' BC' after years before 1), or 'infinity' / '-infinity'. */
static void encode_date(DateADT date, char *out)
{
	struct pg_tm tm = {0};

	if (DATE_NOT_FINITE(date)) {
		EncodeSpecialDate(date, out);
		return;
	}
	j2date(date + POSTGRES_EPOCH_JDATE, &tm.tm_year, &tm.tm_mon, &tm.tm_mday);
	EncodeDateOnly(&tm, USE_ISO_DATES, out);
}

/*
 * 'YYYY-MM-DD HH:MM:SS' plus '.ffffff' without trailing zeros when there is a
 * fraction. A timestamptz is its UTC instant (timestamp2tm without a zone).
 */
static void encode_timestamp(Timestamp ts, char *out)
{
	struct pg_tm tm = {0};
	fsec_t fsec;

	if (TIMESTAMP_NOT_FINITE(ts)) {
		EncodeSpecialTimestamp(ts, out);
		return;
	}
	if (timestamp2tm(ts, NULL, &tm, &fsec, NULL, NULL) != 0)
		ereport(ERROR, errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			errmsg("timestamp out of range"));
	EncodeDateTime(&tm, fsec, false, 0, NULL, USE_ISO_DATES, out);
}

/* 'HH:MM:SS' plus '.ffffff' without trailing zeros when there is a fraction. */
static void encode_time(TimeADT time, char *out)
{
	struct pg_tm tm = {0};
	fsec_t fsec;

	time2tm(time, &tm, &fsec);
	EncodeTimeOnly(&tm, fsec, false, 0, USE_ISO_DATES, out);
}

/* Lower-case 8-4-4-4-12 hex, as uuid_out prints it. */
static void encode_uuid(const pg_uuid_t *uuid, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < UUID_LEN; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*out++ = '-';
		*out++ = digits[uuid->data[i] >> 4];
		*out++ = digits[uuid->data[i] & 0xf];
	}
	*out = '\0';
}

void amq_pg_decode_value(const amq_pg_hasher *h, Datum value, amq_pg_decoded *d)
{
	struct varlena *v;

	d->nowned = 0;
	switch (h->encoding) {
	case AMQ_PG_INT2:
		d->value = amq_value_integer(DatumGetInt16(value));
		return;
	case AMQ_PG_INT4:
		d->value = amq_value_integer(DatumGetInt32(value));
		return;
	case AMQ_PG_INT8:
		d->value = amq_value_integer(DatumGetInt64(value));
		return;
	case AMQ_PG_FLOAT4:
		d->value = amq_value_real((double)DatumGetFloat4(value));
		return;
	case AMQ_PG_FLOAT8:
		d->value = amq_value_real(DatumGetFloat8(value));
		return;
	case AMQ_PG_BOOL:
		d->value = amq_value_integer(DatumGetBool(value) ? 1 : 0);
		return;
	case AMQ_PG_NUMERIC: {
		Numeric num = DatumGetNumeric(value);

		d->value = numeric_value(num);
		if ((Pointer)num != DatumGetPointer(value))
			pfree(num);
		return;
	}
	case AMQ_PG_TEXT:
	case AMQ_PG_BPCHAR:
	case AMQ_PG_BYTEA:
		v = PG_DETOAST_DATUM_PACKED(value);
		if ((Pointer)v != DatumGetPointer(value))
			own(d, v);
		if (h->encoding == AMQ_PG_BYTEA)
			d->value = amq_value_blob(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
		else if (h->encoding == AMQ_PG_BPCHAR)
			decode_server_text(h, VARDATA_ANY(v),
					   bpchar_length(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v)), d);
		else
			decode_server_text(h, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), d);
		return;
	case AMQ_PG_NAME: {
		const char *name = NameStr(*DatumGetName(value));

		decode_server_text(h, name, strlen(name), d);
		return;
	}
	case AMQ_PG_CITEXT: {
		char *lower;

		v = PG_DETOAST_DATUM_PACKED(value);
		lower = str_tolower(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), DEFAULT_COLLATION_OID);
		if ((Pointer)v != DatumGetPointer(value))
			pfree(v);
		own(d, lower);
		decode_server_text(h, lower, strlen(lower), d);
		return;
	}
	case AMQ_PG_DATE:
		encode_date(DatumGetDateADT(value), d->buf);
		break;
	case AMQ_PG_TIME:
		encode_time(DatumGetTimeADT(value), d->buf);
		break;
	case AMQ_PG_TIMESTAMP:
		encode_timestamp(DatumGetTimestamp(value), d->buf);
		break;
	case AMQ_PG_TIMESTAMPTZ:
		encode_timestamp(DatumGetTimestampTz(value), d->buf);
		break;
	case AMQ_PG_UUID:
		encode_uuid(DatumGetUUIDP(value), d->buf);
		break;
	default:
		elog(ERROR, "unknown amq value encoding %d", (int)h->encoding);
	}
	/* ASCII: the same bytes in every server encoding. */
	d->value = amq_value_text(d->buf, strlen(d->buf));
}

uint64 amq_pg_hash_value(const amq_pg_hasher *h, Datum value, uint64 seed)
{
	amq_pg_decoded d;
	uint64 hash;

	/* The common key types straight from the datum: decoding into an
	 * amq_value builds it on the stack, and reading it back stalls store
	 * forwarding (8 ns a text probe, bench/release). */
	switch (h->encoding) {
	case AMQ_PG_INT4:
		return amq_hash_int(DatumGetInt32(value), seed);
	case AMQ_PG_INT8:
		return amq_hash_int(DatumGetInt64(value), seed);
	case AMQ_PG_TEXT:
	case AMQ_PG_BYTEA: {
		struct varlena *v;

		if (h->convert_to_utf8 && h->encoding == AMQ_PG_TEXT)
			break;
		v = PG_DETOAST_DATUM_PACKED(value);
		hash = h->encoding == AMQ_PG_TEXT
			   ? amq_hash_text(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), seed)
			   : amq_hash_blob(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), seed);
		if ((Pointer)v != DatumGetPointer(value))
			pfree(v);
		return hash;
	}
	default:
		break;
	}
	amq_pg_decode_value(h, value, &d);
	hash = amq_value_hash(&d.value, seed);
	release_decoded(&d);
	return hash;
}

void amq_pg_family_error(const amq_filter *f, const amq_pg_hasher *h, Datum value,
			 const amq_pg_call *call)
{
	amq_pg_decoded d;
	amq_error err;

	amq_pg_decode_value(h, value, &d);
	amq_check_family(f, &d.value, call->name, "value", AMQ_DIALECT_SQL, &err);
	amq_pg_raise(&err);
}
