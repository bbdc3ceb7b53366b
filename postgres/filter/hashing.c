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
}

bool amq_pg_hasher_for_type(amq_pg_hasher *h, Oid type)
{
	h->convert_to_utf8 = GetDatabaseEncoding() != PG_UTF8;
	return encoding_of(getBaseType(type), InvalidOid, &h->encoding);
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

/* Text in the server encoding, hashed as its UTF-8 bytes. */
static uint64 hash_server_text(const amq_pg_hasher *h, const char *s, size_t len, uint64 seed)
{
	char *utf8;
	uint64 hash;

	if (!h->convert_to_utf8)
		return amq_hash_text(s, len, seed);
	utf8 = pg_server_to_any(s, (int)len, PG_UTF8);
	if (utf8 == s)
		return amq_hash_text(s, len, seed);
	hash = amq_hash_text(utf8, strlen(utf8), seed);
	pfree(utf8);
	return hash;
}

/*
 * A numeric equals the integer or double it converts to: integral values in
 * int64 hash as integers, everything else (NaN and infinities included) as
 * the nearest double, the value float8 comparisons see.
 */
static uint64 hash_numeric_value(Numeric num, uint64 seed)
{
	/* Digits without trailing fractional zeros: "3.500" is "3.5", "3.0" is "3". */
	char *digits = numeric_normalize(num);
	uint64 hash;

	if (strcmp(digits, "NaN") == 0) {
		hash = amq_hash_double(NAN, seed);
	} else if (strcmp(digits, "Infinity") == 0) {
		hash = amq_hash_double(INFINITY, seed);
	} else if (strcmp(digits, "-Infinity") == 0) {
		hash = amq_hash_double(-INFINITY, seed);
	} else {
		char *end;
		long long integer;

		errno = 0;
		integer = strtoll(digits, &end, 10);
		if (*end == '\0' && errno == 0)
			hash = amq_hash_int(integer, seed);
		else
			hash = amq_hash_double(strtod(digits, NULL), seed);
	}
	pfree(digits);
	return hash;
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

/* Hashes the ASCII text in buf (the same bytes in every server encoding). */
static uint64 hash_ascii(const char *buf, uint64 seed)
{
	return amq_hash_text(buf, strlen(buf), seed);
}

uint64 amq_pg_hash_value(const amq_pg_hasher *h, Datum value, uint64 seed)
{
	char buf[MAXDATELEN + 1];
	struct varlena *v;
	uint64 hash;

	switch (h->encoding) {
	case AMQ_PG_INT2:
		return amq_hash_int(DatumGetInt16(value), seed);
	case AMQ_PG_INT4:
		return amq_hash_int(DatumGetInt32(value), seed);
	case AMQ_PG_INT8:
		return amq_hash_int(DatumGetInt64(value), seed);
	case AMQ_PG_FLOAT4:
		return amq_hash_double((double)DatumGetFloat4(value), seed);
	case AMQ_PG_FLOAT8:
		return amq_hash_double(DatumGetFloat8(value), seed);
	case AMQ_PG_BOOL:
		return amq_hash_int(DatumGetBool(value) ? 1 : 0, seed);
	case AMQ_PG_NUMERIC: {
		Numeric num = DatumGetNumeric(value);

		hash = hash_numeric_value(num, seed);
		if ((Pointer)num != DatumGetPointer(value))
			pfree(num);
		return hash;
	}
	case AMQ_PG_TEXT:
	case AMQ_PG_BPCHAR:
	case AMQ_PG_BYTEA:
		v = PG_DETOAST_DATUM_PACKED(value);
		if (h->encoding == AMQ_PG_BYTEA)
			hash = amq_hash_blob(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), seed);
		else if (h->encoding == AMQ_PG_BPCHAR)
			hash = hash_server_text(h, VARDATA_ANY(v),
						bpchar_length(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v)),
						seed);
		else
			hash = hash_server_text(h, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), seed);
		if ((Pointer)v != DatumGetPointer(value))
			pfree(v);
		return hash;
	case AMQ_PG_NAME: {
		const char *name = NameStr(*DatumGetName(value));

		return hash_server_text(h, name, strlen(name), seed);
	}
	case AMQ_PG_CITEXT: {
		char *lower;

		v = PG_DETOAST_DATUM_PACKED(value);
		lower = str_tolower(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), DEFAULT_COLLATION_OID);
		hash = hash_server_text(h, lower, strlen(lower), seed);
		pfree(lower);
		if ((Pointer)v != DatumGetPointer(value))
			pfree(v);
		return hash;
	}
	case AMQ_PG_DATE:
		encode_date(DatumGetDateADT(value), buf);
		return hash_ascii(buf, seed);
	case AMQ_PG_TIME:
		encode_time(DatumGetTimeADT(value), buf);
		return hash_ascii(buf, seed);
	case AMQ_PG_TIMESTAMP:
		encode_timestamp(DatumGetTimestamp(value), buf);
		return hash_ascii(buf, seed);
	case AMQ_PG_TIMESTAMPTZ:
		encode_timestamp(DatumGetTimestampTz(value), buf);
		return hash_ascii(buf, seed);
	case AMQ_PG_UUID:
		encode_uuid(DatumGetUUIDP(value), buf);
		return hash_ascii(buf, seed);
	}
	elog(ERROR, "unknown amq value encoding %d", (int)h->encoding);
}
