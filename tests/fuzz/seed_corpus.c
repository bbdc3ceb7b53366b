/*
 * seed_corpus.c - writes one valid filter of each layout and two aggregate
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
	amq_filter f[3];
	amq_bloom_create(&f[0], 40, 0.05, AMQ_LAYOUT_CLASSIC, 0, A, &err);
	amq_bloom_create(&f[1], 40, 0.05, AMQ_LAYOUT_BLOCKED, 0, A, &err);
	amq_cuckoo_create(&f[2], 40, 0.05, 0, A, &err);
	for (int64_t i = 0; i < 30; i++) {
		amq_bloom_add(&f[0], amq_hash_int(i, 0));
		amq_bloom_add(&f[1], amq_hash_int(i, 0));
		amq_cuckoo_add(&f[2], amq_hash_int(i, 0), &err);
	}
	const char *names[3] = {"bloom_classic", "bloom_blocked", "cuckoo"};
	for (int i = 0; i < 3; i++) {
		amq_filter_seal(&f[i]);
		write_file(argv[1], names[i], f[i].bytes, f[i].size);
		amq_filter_free(&f[i], A);
	}
	for (uint64_t capacity = 0; capacity <= 50; capacity += 50) {
		amq_builder b;
		amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_CLASSIC, 0.05, capacity, 0, A,
				 &err);
		for (int64_t i = 0; i < 10; i++)
			amq_builder_add(&b, amq_hash_int(i, 0), &err);
		uint8_t *state;
		size_t len;
		amq_builder_serialize(&b, &state, &len, &err);
		write_file(argv[1], capacity ? "state_streaming" : "state_collecting", state, len);
		free(state);
		amq_builder_free(&b);
	}
	return 0;
}
