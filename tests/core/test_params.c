/*
 * test_params.c - the argument checks both adapters share: the layout names
 * each kind accepts, each kind's default layout, and the exact words of
 * every refusal (the adapters show them unchanged).
 */
#include "amq.h"
#include "check.h"

#include <string.h>

/* Parses name as a layout of kind; returns the status and fills *out. */
static amq_status parse(amq_kind kind, const char *name, amq_layout *out, amq_error *err)
{
	return amq_parse_layout(kind, name, strlen(name), out, err);
}

static void accepted_layouts(void)
{
	amq_layout layout = (amq_layout)99;
	amq_error err;
	CHECK(parse(AMQ_KIND_BLOOM, "blocked", &layout, &err) == AMQ_OK &&
		  layout == AMQ_LAYOUT_BLOCKED,
	      "bloom 'blocked'");
	CHECK(parse(AMQ_KIND_BLOOM, "classic", &layout, &err) == AMQ_OK &&
		  layout == AMQ_LAYOUT_CLASSIC,
	      "bloom 'classic'");
	CHECK(parse(AMQ_KIND_BLOOM, "counting", &layout, &err) == AMQ_OK &&
		  layout == AMQ_LAYOUT_COUNTING,
	      "bloom 'counting'");
	CHECK(parse(AMQ_KIND_BLOOM, "scalable", &layout, &err) == AMQ_OK &&
		  layout == AMQ_LAYOUT_SCALABLE,
	      "bloom 'scalable'");
	layout = (amq_layout)99;
	CHECK(parse(AMQ_KIND_CUCKOO, "b4", &layout, &err) == AMQ_OK && layout == AMQ_LAYOUT_CLASSIC,
	      "cuckoo 'b4' is the b = 4 table");
	/* The length is the caller's: a longer buffer is cut where it says. */
	CHECK(amq_parse_layout(AMQ_KIND_BLOOM, "classicXYZ", 7, &layout, &err) == AMQ_OK &&
		  layout == AMQ_LAYOUT_CLASSIC,
	      "only len bytes are read");
}

static void defaults(void)
{
	CHECK(amq_default_layout(AMQ_KIND_BLOOM) == AMQ_LAYOUT_BLOCKED, "bloom default: blocked");
	CHECK(amq_default_layout(AMQ_KIND_CUCKOO) == AMQ_LAYOUT_CLASSIC, "cuckoo default: b4");
}

/* name refused as a layout of kind with exactly this message and hint. */
static void refused(amq_kind kind, const char *name, size_t len, const char *message,
		    const char *hint)
{
	amq_layout layout = (amq_layout)99;
	amq_error err;
	amq_status st = amq_parse_layout(kind, name, len, &layout, &err);
	CHECK(st == AMQ_INVALID_ARGUMENT && err.status == AMQ_INVALID_ARGUMENT &&
		  layout == (amq_layout)99,
	      "'%.*s' refused without touching the output", (int)len, name);
	CHECK(strcmp(err.message, message) == 0, "message '%s', want '%s'", err.message, message);
	CHECK(strcmp(err.hint, hint) == 0, "hint '%s', want '%s'", err.hint, hint);
}

static void refused_layouts(void)
{
	const char *bloom_hint = "use 'blocked' (the default), 'classic', 'counting' or 'scalable'";
	const char *cuckoo_hint = "use 'b4' (buckets of 4 fingerprints, the default)";
	static const char *const bloom_bad[] = {"Blocked", "CLASSIC",  "",	  "blocked ",
						"b4",	   "Counting", "Scalable"};
	char message[128];
	for (size_t i = 0; i < sizeof(bloom_bad) / sizeof(bloom_bad[0]); i++) {
		snprintf(message, sizeof(message), "unknown bloom layout '%s'", bloom_bad[i]);
		refused(AMQ_KIND_BLOOM, bloom_bad[i], strlen(bloom_bad[i]), message, bloom_hint);
	}
	static const char *const cuckoo_bad[] = {"classic", "blocked", "counting", "scalable",
						 "B4",	    "b2",      "b8",	   ""};
	for (size_t i = 0; i < sizeof(cuckoo_bad) / sizeof(cuckoo_bad[0]); i++) {
		snprintf(message, sizeof(message), "unknown cuckoo layout '%s'", cuckoo_bad[i]);
		refused(AMQ_KIND_CUCKOO, cuckoo_bad[i], strlen(cuckoo_bad[i]), message,
			cuckoo_hint);
	}
	/* A NUL inside the name is part of it, and a long name is cut to 64 bytes. */
	refused(AMQ_KIND_BLOOM, "blocked\0x", 9, "unknown bloom layout 'blocked'", bloom_hint);
	char long_name[200];
	memset(long_name, 'z', sizeof(long_name));
	snprintf(message, sizeof(message), "unknown bloom layout '%.64s'", long_name);
	refused(AMQ_KIND_BLOOM, long_name, sizeof(long_name), message, bloom_hint);
}

int main(void)
{
	accepted_layouts();
	defaults();
	refused_layouts();
	return check_summary();
}
