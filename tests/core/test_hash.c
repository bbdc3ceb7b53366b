/*
 * test_hash.c - value hashing (docs/HASHING.md): known-answer vectors pin the
 * hash so a change can never pass silently, and each encoding rule is checked
 * against XXH3 over the bytes the spec describes.
 */
#include "amq.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* XXH3 over tag || 8 little-endian bytes of v, written out by hand. */
static uint64_t spec_hash8(uint8_t tag, uint64_t v, uint64_t seed)
{
	uint8_t buf[9] = {tag};
	for (int i = 0; i < 8; i++)
		buf[1 + i] = (uint8_t)(v >> (8 * i));
	return XXH3_64bits_withSeed(buf, sizeof(buf), seed);
}

static uint64_t spec_hash_bytes(uint8_t tag, const char *s, size_t n, uint64_t seed)
{
	uint8_t buf[2048];
	buf[0] = tag;
	memcpy(buf + 1, s, n);
	return XXH3_64bits_withSeed(buf, n + 1, seed);
}

static void known_answers(void)
{
	static const struct {
		const char *name;
		uint64_t got, want;
	} kat[] = {
	    {"int 0", 0, 0x313c2dd2ec996e80ULL},	   {"int 3", 0, 0xe0dc1e7b2fc050abULL},
	    {"int -1", 0, 0x53a5f4bc2fc0168cULL},	   {"int min", 0, 0x6f16315aee313307ULL},
	    {"int 3 seed 42", 0, 0xbfef0ecacc95e226ULL},   {"real 1.5", 0, 0x360276011e12cf43ULL},
	    {"real NaN", 0, 0x78e9b9b2fa2fac40ULL},	   {"real inf", 0, 0x7bbac6f0db7f77d1ULL},
	    {"real 1e20", 0, 0x00c0b44ec06a94e5ULL},	   {"text abc", 0, 0x8e8fd78217d7b3ddULL},
	    {"text empty", 0, 0x13e608bc156defedULL},	   {"blob abc", 0, 0x1a8cafcdf467a415ULL},
	    {"text 1000 bytes", 0, 0xf25cff1cac837974ULL},
	};
	char big[1000];
	for (int i = 0; i < 1000; i++)
		big[i] = (char)('a' + i % 26);
	uint64_t got[] = {
	    amq_hash_int(0, 0),		 amq_hash_int(3, 0),	       amq_hash_int(-1, 0),
	    amq_hash_int(INT64_MIN, 0),	 amq_hash_int(3, 42),	       amq_hash_double(1.5, 0),
	    amq_hash_double(NAN, 0),	 amq_hash_double(INFINITY, 0), amq_hash_double(1e20, 0),
	    amq_hash_text("abc", 3, 0),	 amq_hash_text("", 0, 0),      amq_hash_blob("abc", 3, 0),
	    amq_hash_text(big, 1000, 0),
	};
	for (size_t i = 0; i < sizeof(kat) / sizeof(kat[0]); i++)
		CHECK(got[i] == kat[i].want, "%s: got %016llx want %016llx", kat[i].name,
		      (unsigned long long)got[i], (unsigned long long)kat[i].want);
}

static void encoding_rules(void)
{
	CHECK(amq_hash_int(3, 0) == spec_hash8(0x01, 3, 0), "int is tag 1 + int64 LE");
	CHECK(amq_hash_int(-2, 7) == spec_hash8(0x01, (uint64_t)-2, 7), "negative int, seed 7");
	CHECK(amq_hash_double(3.0, 0) == amq_hash_int(3, 0), "3.0 hashes as 3");
	CHECK(amq_hash_double(-0.0, 0) == amq_hash_int(0, 0), "-0.0 hashes as 0");
	CHECK(amq_hash_double(-9223372036854775808.0, 0) == amq_hash_int(INT64_MIN, 0),
	      "-2^63 is integral and in range");
	double two63 = 9223372036854775808.0, bits_src = 1.5;
	uint64_t bits;
	memcpy(&bits, &two63, 8);
	CHECK(amq_hash_double(two63, 0) == spec_hash8(0x02, bits, 0), "2^63 is out of int64: REAL");
	memcpy(&bits, &bits_src, 8);
	CHECK(amq_hash_double(1.5, 0) == spec_hash8(0x02, bits, 0), "1.5 is tag 2 + IEEE bits");
	CHECK(amq_hash_double(1.5, 0) != amq_hash_double(2.5, 0), "distinct reals differ");
	CHECK(amq_hash_double(-NAN, 0) == amq_hash_double(NAN, 0), "every NaN hashes alike");
	uint64_t payload_nan = 0x7ff0000000000123ULL;
	double odd_nan;
	memcpy(&odd_nan, &payload_nan, 8);
	CHECK(amq_hash_double(odd_nan, 0) == spec_hash8(0x02, 0x7ff8000000000000ULL, 0),
	      "NaN payloads are canonicalized to 0x7ff8000000000000");
	CHECK(amq_hash_double(-INFINITY, 0) != amq_hash_double(INFINITY, 0), "-inf != inf");
	CHECK(amq_hash_text("abc", 3, 0) == spec_hash_bytes(0x03, "abc", 3, 0), "text is tag 3");
	CHECK(amq_hash_blob("abc", 3, 0) == spec_hash_bytes(0x04, "abc", 3, 0), "blob is tag 4");
	CHECK(amq_hash_text("abc", 3, 0) != amq_hash_blob("abc", 3, 0), "'abc' != X'616263'");
	CHECK(amq_hash_text("3", 1, 0) != amq_hash_int(3, 0), "'3' != 3");
	CHECK(amq_hash_int(1, 0) != amq_hash_int(1, 1), "the seed changes the hash");

	/* Long values go through the streaming API: same answer as one call. */
	char big[1500];
	for (int i = 0; i < 1500; i++)
		big[i] = (char)(i * 7);
	for (size_t n = 250; n < 260; n++)
		CHECK(amq_hash_blob(big, n, 9) == spec_hash_bytes(0x04, big, n, 9),
		      "blob of %zu bytes", n);
	CHECK(amq_hash_text(big, 1500, 0) == spec_hash_bytes(0x03, big, 1500, 0), "1500 bytes");
}

int main(void)
{
	known_answers();
	encoding_rules();
	return check_summary();
}
