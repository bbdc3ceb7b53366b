/*
 * filter/types.c - input and output of the bloom and cuckoo types. Text form is
 * \x followed by lower-case hex of the serialized filter (the form bytea
 * prints, so a value pastes between psql and sqlite3's X'...'); binary form is
 * the bytes themselves; casts to and from bytea reuse them unchanged. Every
 * way in opens the bytes, verifies the checksum and checks the kind, so a
 * stored value of either type is always a whole, valid filter of that kind.
 * Each function serves both types; its entry points (filter/entries.c, one
 * per AMQ_SQL_TYPE of core/sql/function_list.h) pass the type's name, which
 * starts the messages: "bloom: input: checksum mismatch".
 */
#include "postgres.h"

#include "libpq/pqformat.h"
#include "utils/memutils.h"

#include "filter/filter.h"

/* Value of one hex digit, or -1. */
static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses \x + hex (either case) into a checked filter varlena of the kind. */
Datum amq_pg_op_in(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	const char *str = PG_GETARG_CSTRING(0);
	size_t len = strlen(str), digits, size;
	struct varlena *v;
	uint8 *out;
	amq_filter f;

	if (len < 2 || str[0] != '\\' || str[1] != 'x')
		ereport(
		    ERROR, errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
		    errmsg("invalid input syntax for type %s: value does not start with \"\\x\"",
			   call->name),
		    errhint("Write a filter as \\x followed by the hexadecimal digits of its "
			    "bytes."));
	digits = len - 2;
	if (digits % 2 != 0)
		ereport(ERROR, errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			errmsg("invalid input syntax for type %s: odd number of hexadecimal digits",
			       call->name));
	size = digits / 2;
	v = palloc_extended(VARHDRSZ + size, MCXT_ALLOC_HUGE);
	SET_VARSIZE(v, VARHDRSZ + size);
	out = (uint8 *)VARDATA(v);
	for (size_t i = 0; i < size; i++) {
		int hi = hex_value(str[2 + 2 * i]), lo = hex_value(str[3 + 2 * i]);

		if (hi < 0 || lo < 0)
			ereport(ERROR, errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				errmsg("invalid input syntax for type %s: invalid hexadecimal "
				       "digit at position %zu",
				       call->name, 3 + 2 * i + (hi < 0 ? 0 : 1)));
		out[i] = (uint8)(hi << 4 | lo);
	}
	amq_pg_open_bytes(&f, out, size, call, "input");
	PG_RETURN_POINTER(v);
}

/* \x + lower-case hex of the filter's bytes. */
Datum amq_pg_op_out(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	Datum d = PG_GETARG_DATUM(0);
	static const char digits[] = "0123456789abcdef";
	struct varlena *v = PG_DETOAST_DATUM_PACKED(d);
	const uint8 *bytes = (const uint8 *)VARDATA_ANY(v);
	size_t size = VARSIZE_ANY_EXHDR(v);
	char *hex, *p;

	if (size > (MaxAllocSize - 3) / 2)
		ereport(ERROR, errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			errmsg("filter of %zu bytes is too large for text output", size),
			errhint("Fetch it in binary form or as bytea with binary output."));
	hex = palloc(2 * size + 3);
	p = hex;
	*p++ = '\\';
	*p++ = 'x';
	for (size_t i = 0; i < size; i++) {
		*p++ = digits[bytes[i] >> 4];
		*p++ = digits[bytes[i] & 0xf];
	}
	*p = '\0';
	PG_RETURN_CSTRING(hex);
}

/* The rest of the message buffer, checked, as a filter varlena of the kind. */
Datum amq_pg_op_recv(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	StringInfo buf = (StringInfo)PG_GETARG_POINTER(0);
	size_t size = (size_t)(buf->len - buf->cursor);
	struct varlena *v = palloc_extended(VARHDRSZ + size, MCXT_ALLOC_HUGE);
	amq_filter f;

	SET_VARSIZE(v, VARHDRSZ + size);
	pq_copymsgbytes(buf, VARDATA(v), (int)size);
	amq_pg_open_bytes(&f, VARDATA(v), size, call, "binary input");
	PG_RETURN_POINTER(v);
}

/* The filter's bytes as they are. */
Datum amq_pg_op_send(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0));
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA_ANY(v), (int)VARSIZE_ANY_EXHDR(v));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* bytea to filter: the same bytes once they check out as a filter of the kind. */
Datum amq_pg_op_from_bytea(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	struct varlena *v = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	amq_filter f;

	amq_pg_open_bytes(&f, VARDATA(v), VARSIZE(v) - VARHDRSZ, call, "bytea");
	PG_RETURN_POINTER(v);
}
