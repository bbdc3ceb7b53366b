/*
 * seed_corpus.c - writes one valid filter of each variant and three aggregate
 * states into the directory named on the command line, so the fuzzer starts
 * from deep inside the format instead of guessing the magic bytes.
 */
#include "amq.h"

#include <stdio.h>
#include <stdlib.h>

static const amq_allocator *A = &amq_malloc_allocator;

static void write_file(const char *dir, const char *name, const uint8_t *bytes, size_t size)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *out = fopen(path, "wb");
	if (out == NULL || fwrite(bytes, 1, size, out) != size) {
		perror(path);
		exit(1);
	}
	fclose(out);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: seed_corpus DIR\n");
		return 2;
	}
	amq_error err;
	/* One filter of every variant, through the generic calls. */
	static const struct {
		const char *name;
		amq_kind kind;
		amq_layout layout;
	} variants[] = {
	    {"bloom_classic", AMQ_KIND_BLOOM, AMQ_LAYOUT_CLASSIC},
	    {"bloom_blocked", AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED},
	    {"bloom_counting", AMQ_KIND_BLOOM, AMQ_LAYOUT_COUNTING},
	    {"bloom_scalable", AMQ_KIND_BLOOM, AMQ_LAYOUT_SCALABLE},
	    {"cuckoo", AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC},
	    {"cuckoo_b2", AMQ_KIND_CUCKOO, AMQ_LAYOUT_CUCKOO_B2},
	    {"cuckoo_b8", AMQ_KIND_CUCKOO, AMQ_LAYOUT_CUCKOO_B8},
	    {"cuckoo_semisorted", AMQ_KIND_CUCKOO, AMQ_LAYOUT_SEMISORTED},
	};
	enum { NVARIANTS = sizeof(variants) / sizeof(variants[0]) };
	amq_filter f[NVARIANTS];
	for (int i = 0; i < NVARIANTS; i++) {
		if (amq_filter_create(&f[i], variants[i].kind, variants[i].layout, 25, 0.05, 0, A,
				      &err) != AMQ_OK) {
			fprintf(stderr, "%s: %s\n", variants[i].name, err.message);
			return 1;
		}
		/* 60 adds of 40 values: a scalable chain grows a second link. */
		for (int64_t v = 0; v < 60; v++)
			amq_filter_add_to(&f[i], amq_hash_int(v % 40, 0), A, &err);
	}
	for (int i = 0; i < NVARIANTS; i++) {
		amq_filter_seal(&f[i]);
		write_file(argv[1], variants[i].name, f[i].bytes, f[i].size);
		amq_filter_free(&f[i], A);
	}
	/* Collecting, streaming, and a counting bag that keeps duplicates. */
	static const char *const names[] = {"state_collecting", "state_streaming",
					    "state_counting"};
	for (int kind = 0; kind < 3; kind++) {
		uint64_t capacity = kind == 1 ? 50 : 0;
		amq_builder b;
		amq_builder_init(&b, AMQ_KIND_BLOOM,
				 kind == 2 ? AMQ_LAYOUT_COUNTING : AMQ_LAYOUT_CLASSIC, 0.05,
				 capacity, 0, A, &err);
		for (int64_t i = 0; i < 10; i++)
			amq_builder_add(&b, amq_hash_int(i, 0), &err);
		uint8_t *state;
		size_t len;
		amq_builder_serialize(&b, &state, &len, &err);
		write_file(argv[1], names[kind], state, len);
		free(state);
		amq_builder_free(&b);
	}
	return 0;
}
