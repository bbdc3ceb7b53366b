/*
 * test_families.c - the value families a filter records (format version 4):
 * header byte 44 round trips, older versions read with unknown families and
 * are sealed again in their own version, the check's exact messages and
 * hints, what adds, unions, intersections and builders (merged and
 * serialized, as parallel aggregates do) make of families, and headers with
 * bad family bytes refused.
 */
#include "amq.h"
#include "check.h"
#include "helpers.h"
#include "base/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const amq_allocator *A = &amq_malloc_allocator;

/* An empty blocked Bloom filter for 100 values at 1%. */
static void empty_bloom(amq_filter *f)
{
	amq_error err;
	amq_bloom_create(f, 100, 0.01, AMQ_LAYOUT_BLOCKED, 0, A, &err);
}

/* Checks that amq_check_family refuses v for f with exactly message and
 * hint (dialect SQL) and python_hint (dialect Python). */
static void refused(const amq_filter *f, amq_value v, const char *message, const char *hint,
		    const char *python_hint)
{
	amq_error err;
	amq_status st = amq_check_family(f, &v, "bloom_contains", "value", AMQ_DIALECT_SQL, &err);
	CHECK(st == AMQ_INVALID_ARGUMENT && strcmp(err.message, message) == 0 &&
		  strcmp(err.hint, hint) == 0,
	      "refused: %s / %s", err.message, err.hint);
	st = amq_check_family(f, &v, "bloom_contains", "value", AMQ_DIALECT_PYTHON, &err);
	CHECK(st == AMQ_INVALID_ARGUMENT && strcmp(err.message, message) == 0 &&
		  strcmp(err.hint, python_hint) == 0,
	      "python: %s / %s", err.message, err.hint);
}

static void test_messages(void)
{
	amq_filter f;
	amq_error err;
	empty_bloom(&f);
	f.families = AMQ_FAMILY_NUMBER;
	refused(&f, amq_value_text("42", 2),
		"bloom_contains: value: the filter holds numbers, got text '42'",
		"cast the value (CAST('42' AS INTEGER), '42'::int8)",
		"convert the value (int('42'))");
	refused(&f, amq_value_text("-4.5e3", 6),
		"bloom_contains: value: the filter holds numbers, got text '-4.5e3'",
		"cast the value (CAST('-4.5e3' AS REAL), '-4.5e3'::float8)",
		"convert the value (float('-4.5e3'))");
	refused(&f, amq_value_text("it's", 4),
		"bloom_contains: value: the filter holds numbers, got text 'it''s'",
		"use a number, the family the filter holds",
		"use a number, the family the filter holds");
	refused(&f, amq_value_blob("\x01\xab", 2),
		"bloom_contains: value: the filter holds numbers, got blob X'01AB'",
		"use a number, the family the filter holds",
		"use a number, the family the filter holds");
	f.families = AMQ_FAMILY_TEXT;
	refused(&f, amq_value_integer(-7),
		"bloom_contains: value: the filter holds text, got number -7",
		"cast the value (CAST(-7 AS TEXT), -7::text)", "convert the value (str(-7))");
	refused(&f, amq_value_real(0.1),
		"bloom_contains: value: the filter holds text, got number 0.1",
		"cast the value (CAST(0.1 AS TEXT), 0.1::text)", "convert the value (str(0.1))");
	refused(&f, amq_value_blob("abc", 3),
		"bloom_contains: value: the filter holds text, got blob X'616263'",
		"cast the value (CAST(value AS TEXT); in PostgreSQL convert_from(value, 'UTF8'))",
		"convert the value (value.decode())");
	f.families = AMQ_FAMILY_BLOB;
	refused(&f, amq_value_text("abc", 3),
		"bloom_contains: value: the filter holds blobs, got text 'abc'",
		"cast the value (CAST('abc' AS BLOB), 'abc'::bytea)",
		"convert the value ('abc'.encode())");
	refused(&f, amq_value_text("it's\\", 5),
		"bloom_contains: value: the filter holds blobs, got text 'it''s\\'",
		"cast the value (CAST('it''s\\' AS BLOB), 'it''s\\'::bytea)",
		"convert the value ('it\\'s\\\\'.encode())");
	f.families = AMQ_FAMILY_TEXT;
	/* SQL has no literal for an infinity: no cast shown there. */
	refused(&f, amq_value_real(-1.0 / 0.0),
		"bloom_contains: value: the filter holds text, got number -Infinity",
		"use text, the family the filter holds", "convert the value (str(float('-inf')))");
	/* Text that is no number as SQL writes one gets no cast to a number;
	 * text too long to show whole gets none either. */
	f.families = AMQ_FAMILY_NUMBER;
	const char *not_numbers[] = {"e5",  "1..2", "1.2.3", "1e2e3",
				     "5e-", "+.e1", "-",     ".",
				     "1e",  " 1",   "0x10",  "123456789012345678901234567890"};
	for (size_t i = 0; i < sizeof(not_numbers) / sizeof(not_numbers[0]); i++) {
		amq_value v = amq_value_text(not_numbers[i], strlen(not_numbers[i]));
		amq_check_family(&f, &v, "f", "value", AMQ_DIALECT_SQL, &err);
		CHECK(strcmp(err.hint, "use a number, the family the filter holds") == 0,
		      "'%s': no cast: %s", not_numbers[i], err.hint);
	}
	const struct {
		const char *text, *hint;
	} numbers[] = {
	    {"+3", "cast the value (CAST('+3' AS INTEGER), '+3'::int8)"},
	    {".5", "cast the value (CAST('.5' AS REAL), '.5'::float8)"},
	    {"5.", "cast the value (CAST('5.' AS REAL), '5.'::float8)"},
	    {"1E+9", "cast the value (CAST('1E+9' AS REAL), '1E+9'::float8)"},
	};
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		amq_value v = amq_value_text(numbers[i].text, strlen(numbers[i].text));
		amq_check_family(&f, &v, "f", "value", AMQ_DIALECT_SQL, &err);
		CHECK(strcmp(err.hint, numbers[i].hint) == 0, "'%s': %s", numbers[i].text,
		      err.hint);
	}
	/* A control byte shows as ?, so the literal is no cast either. */
	f.families = AMQ_FAMILY_BLOB;
	refused(&f, amq_value_text("a\tb", 3),
		"bloom_contains: value: the filter holds blobs, got text 'a?b'",
		"use a blob, the family the filter holds",
		"use a blob, the family the filter holds");
	f.families = AMQ_FAMILY_NUMBER | AMQ_FAMILY_TEXT;
	refused(&f, amq_value_blob("", 0),
		"bloom_contains: value: the filter holds numbers and text, got blob X''",
		"use a number or text, the families the filter holds",
		"use a number or text, the families the filter holds");
	/* Long values are cut: text at a character boundary, blobs at 16 bytes. */
	char text[100];
	for (int i = 0; i < 50; i++)
		memcpy(text + 2 * i, "\xc3\xa9", 2); /* é */
	amq_value long_text = amq_value_text(text, 100);
	f.families = AMQ_FAMILY_BLOB;
	amq_check_family(&f, &long_text, "bloom_add", "value", AMQ_DIALECT_SQL, &err);
	const char *shown = strchr(err.message, '\'');
	CHECK(shown != NULL && strlen(shown) == 1 + 40 + 4 && strcmp(shown + 41, "'...") == 0,
	      "long text cut at 40 bytes: %s", err.message);
	CHECK(strlen(err.hint) < sizeof(err.hint) - 1, "hint fits: %s", err.hint);
	uint8_t blob[40] = {0};
	amq_value long_blob = amq_value_blob(blob, sizeof(blob));
	f.families = AMQ_FAMILY_TEXT;
	amq_check_family(&f, &long_blob, "bloom_add", "value", AMQ_DIALECT_SQL, &err);
	CHECK(strstr(err.message, "got blob X'00000000000000000000000000000000'...") != NULL,
	      "long blob cut at 16 bytes: %s", err.message);
	/* Special reals as SQL writes them. */
	amq_value nan = amq_value_real(0.0 / 0.0);
	amq_check_family(&f, &nan, "f", "value", AMQ_DIALECT_SQL, &err);
	CHECK(strcmp(err.message, "f: value: the filter holds text, got number NaN") == 0, "%s",
	      err.message);
	amq_filter_free(&f, A);
}

static void test_takes(void)
{
	amq_filter f;
	empty_bloom(&f);
	CHECK(f.families == 0, "a new filter holds no family");
	for (unsigned fam = 1; fam <= 4; fam <<= 1)
		CHECK(amq_filter_takes(&f, (amq_family)fam), "an empty filter takes family %u",
		      fam);
	amq_filter_note_family(&f, AMQ_FAMILY_TEXT);
	CHECK(amq_filter_takes(&f, AMQ_FAMILY_TEXT) && !amq_filter_takes(&f, AMQ_FAMILY_NUMBER) &&
		  !amq_filter_takes(&f, AMQ_FAMILY_BLOB),
	      "the first add decides");
	f.families = AMQ_FAMILIES_UNKNOWN;
	for (unsigned fam = 1; fam <= 4; fam <<= 1)
		CHECK(amq_filter_takes(&f, (amq_family)fam), "an older filter takes family %u",
		      fam);
	amq_filter_note_family(&f, AMQ_FAMILY_TEXT);
	CHECK(f.families == AMQ_FAMILIES_UNKNOWN, "unknown stays unknown after an add");
	amq_filter_free(&f, A);
	/* The hash of a value is the typed hash of its family. */
	amq_value i = amq_value_integer(3), d = amq_value_real(3.0), r = amq_value_real(1.5),
		  t = amq_value_text("abc", 3), b = amq_value_blob("abc", 3),
		  e = amq_value_blob(NULL, 0);
	CHECK(amq_value_hash(&i, 0) == amq_hash_int(3, 0) &&
		  amq_value_hash(&d, 0) == amq_hash_int(3, 0) &&
		  amq_value_hash(&r, 7) == amq_hash_double(1.5, 7) &&
		  amq_value_hash(&t, 0) == amq_hash_text("abc", 3, 0) &&
		  amq_value_hash(&b, 0) == amq_hash_blob("abc", 3, 0) &&
		  amq_value_hash(&e, 0) == amq_hash_blob("", 0, 0),
	      "amq_value_hash agrees with the typed hashes");
}

/* The header: byte 44 round trips in version 4; versions 1 to 3 read as
 * unknown and are sealed again as they were. */
static void test_header(void)
{
	amq_filter f, g;
	amq_error err;
	empty_bloom(&f);
	amq_bloom_add(&f, amq_hash_int(1, 0));
	amq_filter_note_family(&f, AMQ_FAMILY_NUMBER);
	amq_filter_note_family(&f, AMQ_FAMILY_BLOB);
	amq_filter_seal(&f);
	CHECK(f.bytes[4] == 4 && f.bytes[44] == 5, "version 4, families byte 5: %u %u", f.bytes[4],
	      f.bytes[44]);
	CHECK(amq_filter_check(&g, f.bytes, f.size, &err) == AMQ_OK && g.families == 5,
	      "reads back: %s", err.message);
	char json[AMQ_INFO_MAX];
	amq_filter_info_json(&g, json, sizeof(json));
	CHECK(strstr(json, "\"format_version\":4,") &&
		  strstr(json, "\"families\":[\"numbers\",\"blobs\"]}"),
	      "info: %s", json);
	/* The same filter as amq 0.3.0 wrote it. */
	f.families = AMQ_FAMILIES_UNKNOWN;
	amq_filter_seal(&f);
	CHECK(f.bytes[4] == 1 && f.bytes[44] == 0, "unknown: version 1, byte 44 zero");
	CHECK(amq_filter_check(&g, f.bytes, f.size, &err) == AMQ_OK &&
		  g.families == AMQ_FAMILIES_UNKNOWN,
	      "version 1 reads with unknown families: %s", err.message);
	amq_filter_info_json(&g, json, sizeof(json));
	CHECK(strstr(json, "\"format_version\":1,") && strstr(json, "\"families\":null}"),
	      "info: %s", json);
	/* A version 1 header with byte 44 set was not written by amq. */
	f.bytes[44] = 1;
	CHECK(amq_filter_open(&g, f.bytes, f.size, &err) == AMQ_INVALID_FILTER &&
		  strcmp(err.message, "invalid amq filter: reserved header bytes are not zero") ==
		      0,
	      "version 1 with byte 44: %s", err.message);
	/* A version 4 header with a family bit no version has. */
	f.families = 0;
	amq_filter_seal(&f);
	for (unsigned bad = 8; bad < 256; bad += 8) {
		f.bytes[44] = (uint8_t)bad;
		char want[96];
		snprintf(want, sizeof(want), "invalid amq filter: unknown value families 0x%02x",
			 bad);
		CHECK(amq_filter_open(&g, f.bytes, f.size, &err) == AMQ_INVALID_FILTER &&
			  strcmp(err.message, want) == 0,
		      "families 0x%02x: %s", bad, err.message);
	}
	amq_filter_free(&f, A);
}

/* Known answers of format version 4: the whole header, byte 44 and checksum
 * included, of bloom_agg and cuckoo_agg over the integers 1..100 (fpr 0.01,
 * no capacity) and of the same filter with a text family too. A change to
 * how families are written cannot pass silently. */
static void test_known_answers(void)
{
	static const struct {
		amq_kind kind;
		uint8_t families;
		uint64_t checksum;
	} answers[] = {
	    /* SQLite: hex(substr(bloom_agg(i), 57, 8)) is A0B5E083438A3816. */
	    {AMQ_KIND_BLOOM, AMQ_FAMILY_NUMBER, 0x16388a4383e0b5a0},
	    {AMQ_KIND_BLOOM, AMQ_FAMILY_NUMBER | AMQ_FAMILY_TEXT, 0x90c8b087666344b8},
	    {AMQ_KIND_CUCKOO, AMQ_FAMILY_NUMBER, 0xa762742d0482b33d},
	};
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		amq_builder b;
		amq_filter f;
		amq_error err;
		amq_builder_init(&b, answers[i].kind, amq_default_layout(answers[i].kind, 0.01),
				 0.01, 0, 0, A, &err);
		for (int64_t v = 1; v <= 100; v++)
			amq_builder_add(&b, amq_hash_int(v, 0), &err);
		b.families = answers[i].families;
		amq_builder_finish(&b, &f, &err);
		uint64_t checksum = amq_load64le(f.bytes + 56);
		CHECK(f.bytes[4] == 4 && f.bytes[44] == answers[i].families &&
			  checksum == answers[i].checksum,
		      "known answer %zu: version %u, families %u, checksum %016llx", i, f.bytes[4],
		      f.bytes[44], (unsigned long long)checksum);
		amq_filter_free(&f, A);
		amq_builder_free(&b);
	}
}

/* Union holds both filters' families, intersection those they share; either
 * unknown makes the result unknown (sealed in the older version). */
static void test_combine(void)
{
	amq_filter a, b;
	amq_error err;
	const struct {
		uint8_t a, b, unioned, intersected;
	} cases[] = {
	    {AMQ_FAMILY_NUMBER, AMQ_FAMILY_TEXT, 3, 0},
	    {AMQ_FAMILY_NUMBER, AMQ_FAMILY_NUMBER, 1, 1},
	    {0, AMQ_FAMILY_BLOB, 4, 0},
	    {3, 6, 7, 2},
	    {AMQ_FAMILIES_UNKNOWN, AMQ_FAMILY_TEXT, AMQ_FAMILIES_UNKNOWN, AMQ_FAMILIES_UNKNOWN},
	    {AMQ_FAMILY_TEXT, AMQ_FAMILIES_UNKNOWN, AMQ_FAMILIES_UNKNOWN, AMQ_FAMILIES_UNKNOWN},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int intersect = 0; intersect < 2; intersect++) {
			empty_bloom(&a);
			empty_bloom(&b);
			a.families = cases[i].a;
			b.families = cases[i].b;
			amq_status st = intersect ? amq_filter_intersect_into(&a, &b, &err)
						  : amq_filter_union_into(&a, &b, &err);
			uint8_t want = intersect ? cases[i].intersected : cases[i].unioned;
			amq_filter_seal(&a);
			CHECK(st == AMQ_OK && a.families == want &&
				  a.bytes[4] == (want == AMQ_FAMILIES_UNKNOWN ? 1 : 4),
			      "case %zu %s: families %u, want %u, version %u", i,
			      intersect ? "intersection" : "union", a.families, want, a.bytes[4]);
			free_filters(&a, &b);
		}
	}
}

/* Builders record every family they see, through merges and the
 * serialized state of parallel aggregates, for every layout. */
static void test_builder(void)
{
	amq_error err;
	for (amq_kind kind = AMQ_KIND_BLOOM; kind <= AMQ_KIND_CUCKOO; kind++) {
		for (int capacity = 0; capacity <= 1000; capacity += 1000) {
			amq_builder one, two, back;
			amq_builder_init(&one, kind, amq_default_layout(kind, 0.01), 0.01,
					 (uint64_t)capacity, 0, A, &err);
			amq_builder_init(&two, kind, amq_default_layout(kind, 0.01), 0.01,
					 (uint64_t)capacity, 0, A, &err);
			amq_builder_note_family(&one, AMQ_FAMILY_NUMBER);
			amq_builder_add(&one, amq_hash_int(1, 0), &err);
			amq_builder_note_family(&two, AMQ_FAMILY_TEXT);
			amq_builder_add(&two, amq_hash_text("a", 1, 0), &err);
			uint8_t *state;
			size_t len;
			CHECK(amq_builder_serialize(&two, &state, &len, &err) == AMQ_OK &&
				  amq_builder_deserialize(&back, state, len, A, &err) == AMQ_OK &&
				  back.families == AMQ_FAMILY_TEXT,
			      "kind %d capacity %d: families survive serialization: %s", kind,
			      capacity, err.message);
			CHECK(amq_builder_merge(&one, &back, &err) == AMQ_OK, "merge: %s",
			      err.message);
			amq_filter f;
			CHECK(amq_builder_finish(&one, &f, &err) == AMQ_OK && f.families == 3 &&
				  f.bytes[4] == 4 && f.bytes[44] == 3,
			      "kind %d capacity %d: a mixed filter, families %u", kind, capacity,
			      f.families);
			/* A damaged state's families byte is refused. */
			state[40] = 8;
			amq_builder bad;
			CHECK(amq_builder_deserialize(&bad, state, len, A, &err) ==
				      AMQ_INVALID_ARGUMENT &&
				  strcmp(err.message,
					 "invalid filter aggregate state: unknown value "
					 "families") == 0,
			      "bad state: %s", err.message);
			free(state);
			amq_filter_free(&f, A);
			amq_builder_free(&one);
			amq_builder_free(&two);
			amq_builder_free(&back);
		}
	}
	/* No rows: an empty filter that holds no family yet. */
	amq_builder b;
	amq_filter f;
	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 0.01, 0, 0, A, &err);
	CHECK(amq_builder_finish(&b, &f, &err) == AMQ_OK && f.families == 0 && f.bytes[4] == 4,
	      "no rows: no family");
	amq_filter_free(&f, A);
	amq_builder_free(&b);
}

/* Bulk aggregates check every row and record the family of adds. */
static void test_bulk(void)
{
	amq_filter src;
	amq_bulk b;
	amq_error err;
	empty_bloom(&src);
	amq_bulk_start(&b, AMQ_BULK_ADD, "bloom_add_agg", &src, A, &err);
	amq_value one = amq_value_integer(1), text = amq_value_text("1", 1);
	CHECK(amq_bulk_admit(&b, &one, AMQ_DIALECT_SQL, &err) == AMQ_OK &&
		  b.filter.families == AMQ_FAMILY_NUMBER,
	      "the first row's family is recorded");
	CHECK(amq_bulk_admit(&b, &text, AMQ_DIALECT_SQL, &err) == AMQ_INVALID_ARGUMENT &&
		  strcmp(err.message,
			 "bloom_add_agg: value: the filter holds numbers, got text '1'") == 0,
	      "a later row of another family: %s", err.message);
	amq_bulk_free(&b);
	amq_bulk_start(&b, AMQ_BULK_DELETE, "bloom_delete_agg", &src, A, &err);
	CHECK(amq_bulk_admit(&b, &one, AMQ_DIALECT_SQL, &err) == AMQ_OK && b.filter.families == 0,
	      "a delete records nothing");
	amq_bulk_free(&b);
	amq_filter_free(&src, A);
}

/* Filters amq 0.3.0 wrote (tests/fixtures/amq-0.3.0.tsv): each opens with
 * unknown families, holds every value it was built from, is sealed again
 * byte for byte as it was, and a union with a new filter stays in its
 * version. */
static void test_released(void)
{
	FILE *in = fopen("tests/fixtures/amq-0.3.0.tsv", "r");
	CHECK(in != NULL, "tests/fixtures/amq-0.3.0.tsv opens (run from the repository root)");
	if (in == NULL)
		return;
	static char line[65536];
	int filters = 0;
	while (fgets(line, sizeof(line), in) != NULL) {
		char *name = strtok(line, "\t"), *kind = strtok(NULL, "\t"),
		     *hex = strtok(NULL, "\t\n");
		if (name == NULL || kind == NULL || hex == NULL)
			continue;
		size_t size = strlen(hex) / 2;
		uint8_t *bytes = malloc(size), *copy = malloc(size);
		for (size_t i = 0; i < size; i++)
			sscanf(hex + 2 * i, "%2hhx", &bytes[i]);
		memcpy(copy, bytes, size);
		amq_filter f;
		amq_error err;
		CHECK(amq_filter_check(&f, copy, size, &err) == AMQ_OK &&
			  f.families == AMQ_FAMILIES_UNKNOWN && bytes[4] >= 1 && bytes[4] <= 3,
		      "%s: reads with unknown families: %s", name, err.message);
		uint64_t missing = 0;
		for (int64_t v = 1; v <= 200; v++)
			missing += !amq_filter_contains(&f, amq_hash_int(v, 0));
		for (int v = 1; v <= 50; v++) {
			char text[8];
			int n = snprintf(text, sizeof(text), "k%d", v);
			missing += !amq_filter_contains(&f, amq_hash_text(text, (size_t)n, 0));
		}
		CHECK(missing == 0, "%s: %llu of 250 members missing", name,
		      (unsigned long long)missing);
		amq_filter_seal(&f);
		CHECK(memcmp(copy, bytes, size) == 0, "%s: sealed again byte for byte", name);
		amq_value blob = amq_value_blob("x", 1);
		CHECK(amq_check_family(&f, &blob, "f", "value", AMQ_DIALECT_SQL, &err) == AMQ_OK,
		      "%s: never checked", name);
		/* Combined with a new filter of the same shape. */
		amq_filter fresh;
		if (amq_filter_clone(&fresh, &f, A, &err) == AMQ_OK) {
			fresh.families = AMQ_FAMILY_NUMBER;
			amq_filter_seal(&fresh);
			amq_status st = amq_filter_union_into(&fresh, &f, &err);
			if (st == AMQ_OK) {
				amq_filter_seal(&fresh);
				CHECK(fresh.families == AMQ_FAMILIES_UNKNOWN &&
					  fresh.bytes[4] == bytes[4],
				      "%s: new with old is unknown, version %u", name,
				      fresh.bytes[4]);
			} else {
				CHECK(strcmp(kind, "cuckoo") == 0, "%s: union: %s", name,
				      err.message);
			}
			amq_filter_free(&fresh, A);
		}
		free(bytes);
		free(copy);
		filters++;
	}
	fclose(in);
	CHECK(filters == 8, "8 released filters, read %d", filters);
}

int main(void)
{
	test_messages();
	test_takes();
	test_header();
	test_combine();
	test_builder();
	test_bulk();
	test_released();
	test_known_answers();
	return check_summary();
}
