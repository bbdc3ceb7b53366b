/*
 * test_params.c - the argument checks both adapters share: the layout names
 * each kind accepts, each kind's default layout, the exact words of every
 * refusal (the adapters show them unchanged), the SQLSTATE of each status
 * (PostgreSQL raises it, Python's amq.Error carries it), and each kind's
 * layouts in the registry's order (Python's amq.LAYOUTS).
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
	static const struct {
		amq_kind kind;
		const char *name;
		amq_layout layout;
		const char *what;
	} accepted[] = {
	    {AMQ_KIND_BLOOM, "blocked", AMQ_LAYOUT_BLOCKED, "bloom 'blocked'"},
	    {AMQ_KIND_BLOOM, "classic", AMQ_LAYOUT_CLASSIC, "bloom 'classic'"},
	    {AMQ_KIND_BLOOM, "counting", AMQ_LAYOUT_COUNTING, "bloom 'counting'"},
	    {AMQ_KIND_BLOOM, "scalable", AMQ_LAYOUT_SCALABLE, "bloom 'scalable'"},
	    {AMQ_KIND_CUCKOO, "b4", AMQ_LAYOUT_CLASSIC, "cuckoo 'b4' is the b = 4 table"},
	    {AMQ_KIND_CUCKOO, "b2", AMQ_LAYOUT_CUCKOO_B2, "cuckoo 'b2'"},
	    {AMQ_KIND_CUCKOO, "b8", AMQ_LAYOUT_CUCKOO_B8, "cuckoo 'b8'"},
	    {AMQ_KIND_CUCKOO, "semisorted", AMQ_LAYOUT_SEMISORTED, "cuckoo 'semisorted'"},
	};
	amq_layout layout;
	amq_error err;
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
		layout = (amq_layout)99;
		CHECK(parse(accepted[i].kind, accepted[i].name, &layout, &err) == AMQ_OK &&
			  layout == accepted[i].layout,
		      "%s", accepted[i].what);
	}
	CHECK(parse(AMQ_KIND_BLOOM, "b2", &layout, &err) == AMQ_INVALID_ARGUMENT &&
		  parse(AMQ_KIND_BLOOM, "semisorted", &layout, &err) == AMQ_INVALID_ARGUMENT,
	      "cuckoo layouts are no bloom layouts");
	/* The length is the caller's: a longer buffer is cut where it says. */
	CHECK(amq_parse_layout(AMQ_KIND_BLOOM, "classicXYZ", 7, &layout, &err) == AMQ_OK &&
		  layout == AMQ_LAYOUT_CLASSIC,
	      "only len bytes are read");
}

/* The cuckoo default is the bucket size with the fewest bits per item,
 * f / load with f = ceil(log2(2b / p)) and loads 0.84, 0.95, 0.98: b2 for
 * p >= 1/32 (there f2 = f4 - 1, and 6/0.84 < 7/0.95), b4 below (b8's f is
 * always f4 + 1, which 0.98 against 0.95 never pays for at f <= 32), b4 where
 * b2's fingerprint would be under 4 bits, and b4 (whose sizing then refuses
 * the fpr) where none fits. This is the table of docs/CUCKOO.md. */
static void defaults(void)
{
	CHECK(amq_default_layout(AMQ_KIND_BLOOM, 0.01) == AMQ_LAYOUT_BLOCKED,
	      "bloom default: blocked");
	static const struct {
		double fpr;
		amq_layout layout;
	} cases[] = {
	    {0.9, AMQ_LAYOUT_CLASSIC},	     {0.5, AMQ_LAYOUT_CLASSIC},
	    {0.49, AMQ_LAYOUT_CUCKOO_B2},    {0.25, AMQ_LAYOUT_CUCKOO_B2},
	    {0.1, AMQ_LAYOUT_CUCKOO_B2},     {0.05, AMQ_LAYOUT_CUCKOO_B2},
	    {0.03125, AMQ_LAYOUT_CUCKOO_B2}, {0.031, AMQ_LAYOUT_CLASSIC},
	    {0.02, AMQ_LAYOUT_CLASSIC},	     {0.01, AMQ_LAYOUT_CLASSIC},
	    {0.001, AMQ_LAYOUT_CLASSIC},     {1e-6, AMQ_LAYOUT_CLASSIC},
	    {2e-9, AMQ_LAYOUT_CLASSIC},	     {1e-9, AMQ_LAYOUT_CUCKOO_B2},
	    {1e-12, AMQ_LAYOUT_CLASSIC},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		CHECK(amq_default_layout(AMQ_KIND_CUCKOO, cases[c].fpr) == cases[c].layout,
		      "cuckoo default at fpr %g: layout %d, want %d", cases[c].fpr,
		      (int)amq_default_layout(AMQ_KIND_CUCKOO, cases[c].fpr), (int)cases[c].layout);
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
	const char *bloom_hint =
	    "use 'blocked' (the default), 'classic', 'counting', 'dleft' or 'scalable'";
	const char *cuckoo_hint = "use 'b2', 'b4' or 'b8' (fingerprints per bucket), or "
				  "'semisorted' (b4 with one bit less per item)";
	static const char *const bloom_bad[] = {"Blocked", "CLASSIC",  "",	  "blocked ",
						"b4",	   "Counting", "Scalable"};
	char message[128];
	for (size_t i = 0; i < sizeof(bloom_bad) / sizeof(bloom_bad[0]); i++) {
		snprintf(message, sizeof(message), "unknown bloom layout '%s'", bloom_bad[i]);
		refused(AMQ_KIND_BLOOM, bloom_bad[i], strlen(bloom_bad[i]), message, bloom_hint);
	}
	static const char *const cuckoo_bad[] = {"classic",    "blocked", "counting", "scalable",
						 "B4",	       "b16",	  "b1",	      "semi",
						 "Semisorted", ""};
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

/* Each status's SQLSTATE, as README's error table lists them. */
static void sqlstates(void)
{
	static const struct {
		amq_status status;
		const char *code;
	} WANT[] = {
	    {AMQ_INVALID_ARGUMENT, "22023"}, {AMQ_INVALID_FILTER, "22P02"},
	    {AMQ_WRONG_KIND, "22023"},	     {AMQ_INCOMPATIBLE, "22023"},
	    {AMQ_FILTER_FULL, "54000"},	     {AMQ_TOO_LARGE, "54000"},
	    {AMQ_NO_MEMORY, "53200"},	     {AMQ_INTERRUPTED, "57014"},
	    {AMQ_SPILL_FAILED, "58030"},     {AMQ_OK, "XX000"},
	};
	for (size_t i = 0; i < sizeof(WANT) / sizeof(WANT[0]); i++)
		CHECK(strcmp(amq_status_sqlstate(WANT[i].status), WANT[i].code) == 0,
		      "status %d: SQLSTATE %s, want %s", (int)WANT[i].status,
		      amq_status_sqlstate(WANT[i].status), WANT[i].code);
}

/* Each kind's layouts in the registry's order, NULL past the last and for a
 * kind the registry lacks. */
static void kind_layouts(void)
{
	static const char *const bloom[] = {"classic", "blocked", "counting", "scalable", "dleft"};
	static const char *const cuckoo[] = {"b4", "b2", "b8", "semisorted"};
	for (size_t i = 0; i < 5; i++) {
		const char *b = amq_kind_layout_at(AMQ_KIND_BLOOM, i);
		CHECK(b != NULL && strcmp(b, bloom[i]) == 0, "bloom layout %zu: %s", i, b);
	}
	for (size_t i = 0; i < 4; i++) {
		const char *c = amq_kind_layout_at(AMQ_KIND_CUCKOO, i);
		CHECK(c != NULL && strcmp(c, cuckoo[i]) == 0, "cuckoo layout %zu: %s", i, c);
	}
	CHECK(amq_kind_layout_at(AMQ_KIND_BLOOM, 5) == NULL &&
		  amq_kind_layout_at(AMQ_KIND_CUCKOO, 4) == NULL &&
		  amq_kind_layout_at((amq_kind)0, 0) == NULL,
	      "no layout past a kind's last, none of an unknown kind");
}

int main(void)
{
	sqlstates();
	kind_layouts();
	accepted_layouts();
	defaults();
	refused_layouts();
	return check_summary();
}
