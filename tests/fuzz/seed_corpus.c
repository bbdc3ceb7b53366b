/*
 * seed_corpus.c - writes one valid filter of each variant of the registry and
 * three aggregate states into the directory named on the command line, so the
 * fuzzer starts from deep inside the format instead of guessing the magic
 * bytes.
 */
#include "amq.h"
#include "format/variant.h"

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
	/* One filter of every variant of the registry, through the generic
	 * calls, named "<kind>_<layout>". */
	for (size_t i = 0; i < amq_variant_count(); i++) {
		const amq_variant *v = amq_variant_at(i);
		char name[64];
		snprintf(name, sizeof(name), "%s_%s", v->kind_name, v->layout_name);
		amq_filter f;
		amq_status st;
		if (v->add == NULL && v->add_grow == NULL) {
			/* A build-only row: its aggregate's way, from 40 values. */
			amq_builder b;
			st = amq_builder_init(&b, v->kind, v->layout, 0.05, 0, 0, A, &err);
			for (int64_t x = 0; st == AMQ_OK && x < 40; x++)
				st = amq_builder_add(&b, amq_hash_int(x, 0), &err);
			if (st == AMQ_OK)
				st = amq_builder_finish(&b, &f, &err);
			amq_builder_free(&b);
		} else {
			st = amq_filter_create(&f, v->kind, v->layout, 25, 0.05, 0, A, &err);
			/* 60 adds of 40 values: a scalable chain grows a second link. */
			for (int64_t x = 0; st == AMQ_OK && x < 60; x++)
				amq_filter_add_to(&f, amq_hash_int(x % 40, 0), A, &err);
			if (st == AMQ_OK)
				amq_filter_seal(&f);
		}
		if (st != AMQ_OK) {
			fprintf(stderr, "%s: %s\n", name, err.message);
			return 1;
		}
		write_file(argv[1], name, f.bytes, f.size);
		amq_filter_free(&f, A);
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
