/*
 * families.c - the value families a filter records (header byte 44, format
 * version 4; docs/FORMAT.md) and the check that keeps a probe of another
 * family from answering "no" for a member: the text '42' hashes apart from
 * the integer 42, so against a filter of integers it is a mistake, and the
 * error says how to cast. Filters of versions 1 to 3 have unknown families
 * and are never checked.
 */
#include "format/variant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The families in the order messages and JSON name them. */
static const struct {
	amq_family family;
	const char *name; /* the family */
	const char *one;  /* one value of it */
	const char *got;  /* a value of it, in "got number 42" */
} FAMILIES[] = {
    {AMQ_FAMILY_NUMBER, "numbers", "a number", "number"},
    {AMQ_FAMILY_TEXT, "text", "text", "text"},
    {AMQ_FAMILY_BLOB, "blobs", "a blob", "blob"},
};
#define FAMILY_COUNT (sizeof(FAMILIES) / sizeof(FAMILIES[0]))

/* A value's text is shown up to this many bytes, a blob's up to this many. */
#define SHOWN_TEXT 40
#define SHOWN_BLOB 16

unsigned amq_filter_format_version(const amq_filter *f)
{
	const amq_variant *v = amq_variant_of(f);
	unsigned layout_version = v != NULL ? v->format_version : 1;
	if (f->families == AMQ_FAMILIES_UNKNOWN || layout_version > AMQ_FAMILIES_FORMAT_VERSION)
		return layout_version;
	return AMQ_FAMILIES_FORMAT_VERSION;
}

void amq_families_json(const amq_filter *f, char *out, size_t cap)
{
	if (f->families == AMQ_FAMILIES_UNKNOWN) {
		snprintf(out, cap, "null");
		return;
	}
	size_t n = (size_t)snprintf(out, cap, "[");
	for (size_t i = 0; i < FAMILY_COUNT && n < cap; i++)
		if (f->families & FAMILIES[i].family)
			n += (size_t)snprintf(out + n, cap - n, "%s\"%s\"", n > 1 ? "," : "",
					      FAMILIES[i].name);
	if (n < cap)
		snprintf(out + n, cap - n, "]");
}

/* "numbers", "numbers and text", "numbers, text and blobs" (last " and "),
 * or with last " or " one value of them: "a number or text". */
static void families_words(uint8_t set, const char *last, char *out, size_t cap)
{
	const char *names[FAMILY_COUNT];
	bool one = strcmp(last, " or ") == 0;
	size_t count = 0;
	for (size_t i = 0; i < FAMILY_COUNT; i++)
		if (set & FAMILIES[i].family)
			names[count++] = one ? FAMILIES[i].one : FAMILIES[i].name;
	size_t n = 0;
	out[0] = '\0';
	for (size_t i = 0; i < count && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "%s%s",
				      i == 0 ? "" : (i + 1 == count ? last : ", "), names[i]);
}

/* The shortest %g form of d that reads back as d; NaN and the infinities as
 * the dialect writes them. False when that is no literal of the dialect (SQL
 * has none for NaN or the infinities; SQLite and PostgreSQL spell them
 * apart). */
static bool real_literal(double d, amq_dialect dialect, char *out, size_t cap)
{
	bool python = dialect == AMQ_DIALECT_PYTHON;
	if (isnan(d)) {
		snprintf(out, cap, "%s", python ? "float('nan')" : "NaN");
		return python;
	}
	if (isinf(d)) {
		snprintf(out, cap, python ? "float('%sinf')" : "%sInfinity", d < 0 ? "-" : "");
		return python;
	}
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(out, cap, "%.*g", digits, d);
		if (strtod(out, NULL) == d)
			break;
	}
	return true;
}

/* v as a literal of the dialect: 42, 1.5, 'it''s' (Python: 'it\'s'; cut
 * after SHOWN_TEXT bytes, or fewer to fit cap, at a character boundary, then
 * ...), X'616263' (cut after SHOWN_BLOB bytes). True when out is the whole
 * value as a literal a hint may put in a cast: not cut, not a control byte
 * replaced, not a real SQL cannot write. */
static bool value_literal(const amq_value *v, amq_dialect dialect, char *out, size_t cap)
{
	bool whole = true;
	const uint8_t *b = v->bytes;
	size_t n = 0;
	switch (v->family) {
	case AMQ_FAMILY_NUMBER:
		if (v->integral)
			snprintf(out, cap, "%lld", (long long)v->integer);
		else
			whole = real_literal(v->real, dialect, out, cap);
		return whole;
	case AMQ_FAMILY_TEXT: {
		/* Each byte takes at most two (a doubled quote), plus the quotes
		 * and the dots. */
		size_t shown = v->len, most = cap < 8 ? 0 : (cap - 8) / 2;
		if (most > SHOWN_TEXT)
			most = SHOWN_TEXT;
		if (shown > most) {
			shown = most;
			while (shown > 0 && (b[shown] & 0xC0) == 0x80)
				shown--;
		}
		n = (size_t)snprintf(out, cap, "'");
		for (size_t i = 0; i < shown; i++) {
			if (b[i] == '\'' || (b[i] == '\\' && dialect == AMQ_DIALECT_PYTHON))
				out[n++] = dialect == AMQ_DIALECT_PYTHON ? '\\' : '\'';
			/* Control bytes would break the message's line. */
			whole &= b[i] >= 0x20;
			out[n++] = b[i] < 0x20 ? '?' : (char)b[i];
		}
		snprintf(out + n, cap - n, "'%s", shown < v->len ? "..." : "");
		return whole && shown == v->len;
	}
	case AMQ_FAMILY_BLOB:
		break;
	}
	n = (size_t)snprintf(out, cap, "X'");
	for (size_t i = 0; i < v->len && i < SHOWN_BLOB && n + 3 < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "%02X", b[i]);
	snprintf(out + n, cap - n, "'%s", v->len > SHOWN_BLOB ? "..." : "");
	return v->len <= SHOWN_BLOB;
}

/* The number of ASCII digits at b[i..len). */
static size_t digits_at(const uint8_t *b, size_t i, size_t len)
{
	size_t n = 0;
	while (i + n < len && b[i + n] >= '0' && b[i + n] <= '9')
		n++;
	return n;
}

/* True when text v is a number as SQL writes one, so that a cast keeps its
 * meaning: [+-] digits [. digits] or [+-] . digits, then optionally e or E,
 * [+-], digits. *integral: no point and no exponent. */
static bool numeric_text(const amq_value *v, bool *integral)
{
	const uint8_t *b = v->bytes;
	size_t i = 0, len = v->len;
	if (i < len && (b[i] == '-' || b[i] == '+'))
		i++;
	size_t whole = digits_at(b, i, len), fraction = 0;
	i += whole;
	*integral = true;
	if (i < len && b[i] == '.') {
		fraction = digits_at(b, i + 1, len);
		i += 1 + fraction;
		*integral = false;
	}
	if (whole + fraction == 0)
		return false;
	if (i < len && (b[i] == 'e' || b[i] == 'E')) {
		i++;
		if (i < len && (b[i] == '-' || b[i] == '+'))
			i++;
		size_t exponent = digits_at(b, i, len);
		if (exponent == 0)
			return false;
		i += exponent;
		*integral = false;
	}
	return i == len;
}

/* What to do about a value of v's family for a filter that holds want: the
 * cast (SQL: SQLite's and PostgreSQL's forms) or conversion (Python) that
 * makes it one of want, when there is one that keeps its meaning; else the
 * families the filter holds, held ("a number or text"). */
static void cast_hint(amq_family want, const char *held, const amq_value *v, const char *literal,
		      bool whole, amq_dialect dialect, char *out, size_t cap)
{
	bool python = dialect == AMQ_DIALECT_PYTHON, integral;
	/* A cast shows the value's literal only when it is whole (not cut,
	 * and one the dialect can write); otherwise the last branch. */
	if (whole && want == AMQ_FAMILY_NUMBER && v->family == AMQ_FAMILY_TEXT &&
	    numeric_text(v, &integral)) {
		if (python)
			snprintf(out, cap, "convert the value (%s(%s))", integral ? "int" : "float",
				 literal);
		else
			snprintf(out, cap, "cast the value (CAST(%s AS %s), %s::%s)", literal,
				 integral ? "INTEGER" : "REAL", literal,
				 integral ? "int8" : "float8");
	} else if (whole && want == AMQ_FAMILY_TEXT && v->family == AMQ_FAMILY_NUMBER) {
		if (python)
			snprintf(out, cap, "convert the value (str(%s))", literal);
		else
			snprintf(out, cap, "cast the value (CAST(%s AS TEXT), %s::text)", literal,
				 literal);
	} else if (want == AMQ_FAMILY_TEXT && v->family == AMQ_FAMILY_BLOB) {
		snprintf(out, cap, "%s",
			 python ? "convert the value (value.decode())"
				: "cast the value (CAST(value AS TEXT); in PostgreSQL "
				  "convert_from(value, 'UTF8'))");
	} else if (whole && want == AMQ_FAMILY_BLOB && v->family == AMQ_FAMILY_TEXT) {
		if (python)
			snprintf(out, cap, "convert the value (%s.encode())", literal);
		else
			snprintf(out, cap, "cast the value (CAST(%s AS BLOB), %s::bytea)", literal,
				 literal);
	} else {
		snprintf(out, cap, "use %s, the famil%s the filter holds", held,
			 strstr(held, " or ") != NULL ? "ies" : "y");
	}
}

amq_status amq_check_family(const amq_filter *f, const amq_value *v, const char *function,
			    const char *argument, amq_dialect dialect, amq_error *err)
{
	if (amq_filter_takes(f, v->family))
		return AMQ_OK;
	/* The hint may show the value twice, shorter. */
	char holds[40], literal[2 * SHOWN_TEXT + 8], short_literal[56], hint[sizeof(err->hint)];
	families_words(f->families, " and ", holds, sizeof(holds));
	value_literal(v, AMQ_DIALECT_SQL, literal, sizeof(literal));
	bool whole = value_literal(v, dialect, short_literal, sizeof(short_literal));
	/* A mixed filter's first family (numbers, then text) is the cast
	 * offered: the hint shows one way, the message every family held. */
	amq_family want = AMQ_FAMILY_BLOB;
	for (size_t i = FAMILY_COUNT; i-- > 0;)
		if (f->families & FAMILIES[i].family)
			want = FAMILIES[i].family;
	char held[40];
	families_words(f->families, " or ", held, sizeof(held));
	cast_hint(want, held, v, short_literal, whole, dialect, hint, sizeof(hint));
	const char *got = "blob";
	for (size_t i = 0; i < FAMILY_COUNT; i++)
		if (v->family == FAMILIES[i].family)
			got = FAMILIES[i].got;
	return amq_fail(err, AMQ_INVALID_ARGUMENT, hint, "%s: %s: the filter holds %s, got %s %s",
			function, argument, holds, got, literal);
}
