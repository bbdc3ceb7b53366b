/*
 * cuckoo_semisorted.c - semi-sorted buckets (Fan et al., CoNEXT 2014, §5.2):
 * the four f-bit fingerprints of a b = 4 bucket are kept in ascending order,
 * so their top 4 bits form a nondecreasing sequence. There are only C(19, 4)
 * = 3876 such sequences, so a 12-bit code stores what would take 16 bits, and
 * a bucket takes 4f - 4 bits instead of 4f: one bit per fingerprint saved.
 *
 * Bucket i is bits [i (4f - 4), (i + 1)(4f - 4)) of the payload: the code,
 * then the low f - 4 bits of the four fingerprints in ascending order. The
 * order makes the bytes a function of the bucket's multiset of fingerprints,
 * which is what lets an undone walk restore them exactly.
 */
#include "cuckoo/cuckoo_table.h"

/* C(n, k) for the small n and k of a code (0 when n < k: a factor is 0). */
static inline uint32_t choose(uint32_t n, uint32_t k)
{
	uint32_t r = 1;
	for (uint32_t j = 0; j < k; j++)
		r = r * (n - j) / (j + 1);
	return r;
}

uint32_t amq_semisort_code(const uint32_t prefixes[4])
{
	/* n0 <= n1 <= n2 <= n3 become the strictly increasing n_j + j, whose
	 * combinatorial-number-system rank is a bijection onto 0..3875. */
	uint32_t code = 0;
	for (uint32_t j = 0; j < 4; j++)
		code += choose(prefixes[j] + j, j + 1);
	return code;
}

/* Bit where bucket i starts. */
static inline uint64_t bucket_start(const cuckoo_table *t, uint64_t i)
{
	return i * amq_semisorted_bucket_bits(t->bits);
}

uint32_t amq_semisorted_code_at(const cuckoo_table *t, uint64_t i)
{
	return (uint32_t)amq_field_get(t->payload, bucket_start(t, i), AMQ_SEMISORT_CODE_BITS);
}

void amq_semisorted_load(const cuckoo_table *t, uint64_t i, uint32_t fps[4])
{
	uint64_t bit = bucket_start(t, i);
	uint32_t rest = t->bits - 4;
	uint32_t prefixes =
	    amq_semisort_prefixes[amq_field_get(t->payload, bit, AMQ_SEMISORT_CODE_BITS)];
	bit += AMQ_SEMISORT_CODE_BITS;
	for (uint32_t j = 0; j < 4; j++, bit += rest)
		fps[j] = ((prefixes >> (4 * j)) & 15) << rest |
			 (uint32_t)amq_field_get(t->payload, bit, rest);
}

/* Sorts four values in place: a five-compare network. */
static void sort4(uint32_t v[4])
{
	static const int pairs[5][2] = {{0, 1}, {2, 3}, {0, 2}, {1, 3}, {1, 2}};
	for (int k = 0; k < 5; k++) {
		uint32_t a = v[pairs[k][0]], b = v[pairs[k][1]];
		v[pairs[k][0]] = a < b ? a : b;
		v[pairs[k][1]] = a < b ? b : a;
	}
}

void amq_semisorted_store(const cuckoo_table *t, uint64_t i, uint32_t fps[4])
{
	uint32_t rest = t->bits - 4, prefixes[4];
	sort4(fps);
	for (uint32_t j = 0; j < 4; j++)
		prefixes[j] = fps[j] >> rest;
	uint64_t bit = bucket_start(t, i);
	amq_field_set(t->payload, bit, AMQ_SEMISORT_CODE_BITS, amq_semisort_code(prefixes));
	bit += AMQ_SEMISORT_CODE_BITS;
	uint32_t mask = (uint32_t)(((uint64_t)1 << rest) - 1);
	for (uint32_t j = 0; j < 4; j++, bit += rest)
		amq_field_set(t->payload, bit, rest, fps[j] & mask);
}

bool amq_semisorted_has(const cuckoo_table *t, uint64_t i, uint32_t fp)
{
	uint64_t bit = bucket_start(t, i);
	uint32_t rest = t->bits - 4;
	uint32_t prefixes =
	    amq_semisort_prefixes[amq_field_get(t->payload, bit, AMQ_SEMISORT_CODE_BITS)];
	uint32_t want = fp >> rest, low = fp & (uint32_t)(((uint64_t)1 << rest) - 1);
	bit += AMQ_SEMISORT_CODE_BITS;
	bool found = false;
	for (uint32_t j = 0; j < 4; j++, bit += rest)
		found |= ((prefixes >> (4 * j)) & 15) == want &&
			 amq_field_get(t->payload, bit, rest) == low;
	return found;
}
