/*
 * rice.c - sorted hashes as Golomb-Rice coded gaps (build/rice.h). The
 * parameter k is the bit length of the mean gap less one, so the unary
 * quotients add up to at most about 2n bits whatever the hashes are. Bits go
 * through a 64-bit accumulator both ways; the decoder checks every bit it
 * takes against the buffer's end, so a damaged state is an error, never a
 * read out of bounds.
 */
#include "build/rice.h"

/* The parameter for n hashes up to last: floor(log2(last / n)), 0 when the
 * mean gap is below 2. */
static unsigned parameter(uint64_t last, size_t n)
{
	uint64_t mean = n == 0 ? 0 : last / n;
	return mean < 2 ? 0 : 63u - (unsigned)__builtin_clzll(mean);
}

uint64_t amq_rice_size(const uint64_t *sorted, size_t n, unsigned *k)
{
	*k = parameter(n == 0 ? 0 : sorted[n - 1], n);
	uint64_t bits = (uint64_t)n * (*k + 1), previous = 0;
	for (size_t i = 0; i < n; i++) {
		bits += (sorted[i] - previous) >> *k;
		previous = sorted[i];
	}
	return 1 + (bits + 7) / 8;
}

/* Bits gathered least significant first in acc (fill of them), written out
 * a byte at a time. */
struct writer {
	uint8_t *out;
	uint64_t acc;
	unsigned fill;
};

/* Appends the low count bits of value (count at most 56). */
static inline void put_bits(struct writer *w, uint64_t value, unsigned count)
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
	out[0] = (uint8_t)k;
	struct writer w = {out + 1, 0, 0};
	uint64_t previous = 0, low_mask = ((uint64_t)1 << k) - 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t gap = sorted[i] - previous, q = gap >> k;
		for (; q >= 32; q -= 32)
			put_bits(&w, 0xffffffffu, 32);
		put_bits(&w, ((uint64_t)1 << q) - 1, (unsigned)q + 1); /* q ones, a zero */
		/* k may exceed what one call takes: the low bits in two halves. */
		uint64_t low = gap & low_mask;
		put_bits(&w, low & 0xffffffffu, k < 32 ? k : 32);
		if (k > 32)
			put_bits(&w, low >> 32, k - 32);
		previous = sorted[i];
	}
	if (w.fill > 0)
		*w.out = (uint8_t)w.acc;
}

/* Bits read least significant first from in[0..len), never past it. */
struct reader {
	const uint8_t *in;
	size_t len;
	uint64_t bit; /* the next bit to read */
};

/* The bits from r->bit on (at least 57 of them, zeros past the end). */
static inline uint64_t peek(const struct reader *r)
{
	size_t byte = (size_t)(r->bit / 8);
	uint64_t v = 0;
	if (byte + 8 <= r->len) {
		v = amq_load64le(r->in + byte);
	} else {
		for (size_t i = 0; byte + i < r->len; i++)
			v |= (uint64_t)r->in[byte + i] << (8 * i);
	}
	return v >> (r->bit % 8);
}

const char *amq_rice_decode(const uint8_t *in, size_t len, size_t n, bool distinct, uint64_t *out)
{
	if (len < 1 || in[0] > 63)
		return "bad hash coding parameter";
	unsigned k = in[0];
	struct reader r = {in + 1, len - 1, 0};
	uint64_t end = (uint64_t)(len - 1) * 8, previous = 0;
	for (size_t i = 0; i < n; i++) {
		/* The quotient: the ones before the next zero, 56 at a time. */
		uint64_t q = 0;
		for (;;) {
			uint64_t zeros = ~peek(&r);
			uint64_t ones = zeros == 0 ? 56 : (uint64_t)__builtin_ctzll(zeros);
			if (ones > 56)
				ones = 56;
			if (r.bit + ones >= end)
				return "hash list ends early";
			r.bit += ones;
			q += ones;
			if (ones < 56)
				break;
		}
		r.bit++; /* the zero */
		if (k > 0 && q >> (64 - k) != 0)
			return "hash gap too large";
		if (end - r.bit < k)
			return "hash list ends early";
		uint64_t low = peek(&r) & ((k < 32 ? (uint64_t)1 << k : (uint64_t)1 << 32) - 1);
		if (k > 32) {
			struct reader high = r;
			high.bit += 32;
			low |= (peek(&high) & (((uint64_t)1 << (k - 32)) - 1)) << 32;
		}
		r.bit += k;
		uint64_t gap = q << k | low;
		if (i > 0 && distinct && gap == 0)
			return "hashes are not sorted and distinct";
		if (gap > UINT64_MAX - previous)
			return "hashes pass 2^64";
		previous += gap;
		out[i] = previous;
	}
	/* Only the zero padding of the last byte may follow. */
	if ((r.bit + 7) / 8 != r.len || (r.bit % 8 != 0 && peek(&r) != 0))
		return "bytes after the hash list";
	return NULL;
}
