/*
 * rice.c - sorted hashes as Golomb-Rice coded gaps (build/rice.h). The
 * parameter k is the bit length of the mean gap less one, so the unary
 * quotients add up to at most about 2n bits whatever the hashes are. Bits go
 * through a 64-bit accumulator both ways; the decoder checks every bit it
 * takes against the buffer's end, so a damaged state is an error, never a
 * read out of bounds.
 */
#include "build/rice.h"

/* The writer's state: bits go out through a 64-bit accumulator. */
typedef struct rice_writer {
	uint8_t *out;
	uint64_t acc, previous;
	unsigned fill;
} rice_writer;

uint64_t amq_rice_size(const uint64_t *sorted, size_t n, unsigned *k)
{
	uint64_t mean = n == 0 ? 0 : sorted[n - 1] / n;
	*k = mean < 2 ? 0 : 63u - (unsigned)__builtin_clzll(mean);
	uint64_t bits = (uint64_t)n * (*k + 1), previous = 0;
	for (size_t i = 0; i < n; i++) {
		bits += (sorted[i] - previous) >> *k;
		previous = sorted[i];
	}
	return 1 + (bits + 7) / 8;
}

/* Appends the low count bits of value (count at most 56). */
static inline void put_bits(rice_writer *w, uint64_t value, unsigned count)
{
	w->acc |= value << w->fill;
	w->fill += count;
	while (w->fill >= 8) {
		*w->out++ = (uint8_t)w->acc;
		w->acc >>= 8;
		w->fill -= 8;
	}
}

void amq_rice_encode(const uint64_t *sorted, size_t n, unsigned k, uint8_t *out)
{
	rice_writer w = {.out = out + 1};
	uint64_t low_mask = ((uint64_t)1 << k) - 1;
	out[0] = (uint8_t)k;
	for (size_t i = 0; i < n; i++) {
		uint64_t gap = sorted[i] - w.previous, q = gap >> k;
		for (; q >= 32; q -= 32)
			put_bits(&w, 0xffffffffu, 32);
		put_bits(&w, ((uint64_t)1 << q) - 1, (unsigned)q + 1); /* q ones, a zero */
		/* k may exceed what one call takes: the low bits in two halves. */
		uint64_t low = gap & low_mask;
		put_bits(&w, low & 0xffffffffu, k < 32 ? k : 32);
		if (k > 32)
			put_bits(&w, low >> 32, k - 32);
		w.previous = sorted[i];
	}
	if (w.fill > 0)
		*w.out = (uint8_t)w.acc;
}

/* The bits from r->bit on (at least 57 of them, zeros past the end). */
static inline uint64_t peek(const amq_rice_reader *r, uint64_t bit)
{
	size_t byte = (size_t)(bit / 8);
	uint64_t v = 0;
	if (byte + 8 <= r->len) {
		v = amq_load64le(r->in + byte);
	} else {
		for (size_t i = 0; byte + i < r->len; i++)
			v |= (uint64_t)r->in[byte + i] << (8 * i);
	}
	return v >> (bit % 8);
}

const char *amq_rice_start(amq_rice_reader *r, const uint8_t *in, size_t len, bool distinct)
{
	if (len < 1 || in[0] > 63)
		return "bad hash coding parameter";
	*r = (amq_rice_reader){.in = in + 1,
			       .len = len - 1,
			       .end = (uint64_t)(len - 1) * 8,
			       .k = in[0],
			       .distinct = distinct};
	return NULL;
}

const char *amq_rice_get(amq_rice_reader *r, size_t n, uint64_t *out)
{
	unsigned k = r->k;
	for (size_t i = 0; i < n; i++) {
		/* The quotient: the ones before the next zero, 56 at a time. */
		uint64_t q = 0;
		for (;;) {
			uint64_t zeros = ~peek(r, r->bit);
			uint64_t ones = zeros == 0 ? 56 : (uint64_t)__builtin_ctzll(zeros);
			if (ones > 56)
				ones = 56;
			if (r->bit + ones >= r->end)
				return "hash list ends early";
			r->bit += ones;
			q += ones;
			if (ones < 56)
				break;
		}
		r->bit++; /* the zero */
		if (k > 0 && q >> (64 - k) != 0)
			return "hash gap too large";
		if (r->end - r->bit < k)
			return "hash list ends early";
		uint64_t low =
		    peek(r, r->bit) & ((k < 32 ? (uint64_t)1 << k : (uint64_t)1 << 32) - 1);
		if (k > 32)
			low |= (peek(r, r->bit + 32) & (((uint64_t)1 << (k - 32)) - 1)) << 32;
		r->bit += k;
		uint64_t gap = q << k | low;
		if (r->read > 0 && r->distinct && gap == 0)
			return "hashes are not sorted and distinct";
		if (gap > UINT64_MAX - r->previous)
			return "hashes pass 2^64";
		r->previous += gap;
		r->read++;
		out[i] = r->previous;
	}
	return NULL;
}

const char *amq_rice_finish(const amq_rice_reader *r)
{
	if ((r->bit + 7) / 8 != r->len || (r->bit % 8 != 0 && peek(r, r->bit) != 0))
		return "bytes after the hash list";
	return NULL;
}

const char *amq_rice_decode(const uint8_t *in, size_t len, size_t n, bool distinct, uint64_t *out)
{
	amq_rice_reader r;
	const char *wrong = amq_rice_start(&r, in, len, distinct);
	if (wrong == NULL)
		wrong = amq_rice_get(&r, n, out);
	return wrong != NULL ? wrong : amq_rice_finish(&r);
}
