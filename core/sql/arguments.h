/*
 * sql/arguments.h - the sizing arguments of the SQL functions that make a
 * filter (bloom_new, cuckoo_new) or start a builder (bloom_agg, cuckoo_agg):
 * their defaults and their checks, once for both adapters, so a missing or a
 * bad fpr, capacity, layout or expansion reads the same in SQLite and
 * PostgreSQL. An adapter decodes each argument from its engine's value
 * (amq_sql_argument_type words what it cannot decode), hands it to the
 * setter here in the order the SQL function takes its arguments, and raises
 * the error a setter fills. The messages name the argument, never the
 * function: "fpr must be between 0 and 1 (exclusive), got 0".
 */
#ifndef AMQ_SQL_ARGUMENTS_H
#define AMQ_SQL_ARGUMENTS_H

#include "amq.h"

/* The false-positive rate of a filter whose function is given none. */
#define AMQ_SQL_DEFAULT_FPR 0.01

/* What a new filter or builder is sized by; set what the call passes. */
typedef struct amq_sql_sizing {
	amq_kind kind;
	double fpr;	    /* AMQ_SQL_DEFAULT_FPR unless set */
	uint64_t capacity;  /* 0 unless set: an aggregate then sizes at the end */
	bool layout_given;  /* else the kind's default for the fpr */
	amq_layout layout;  /* when layout_given */
	uint32_t expansion; /* 0 unless set: the scalable layout's default */
} amq_sql_sizing;

/* Nothing set: the defaults for a filter of kind. */
void amq_sql_sizing_init(amq_sql_sizing *s, amq_kind kind);

/* fpr must be strictly between 0 and 1 (amq_check_fpr). */
amq_status amq_sql_set_fpr(amq_sql_sizing *s, double fpr, amq_error *err);

/* capacity must be at least 1 (amq_check_capacity). */
amq_status amq_sql_set_capacity(amq_sql_sizing *s, int64_t capacity, amq_error *err);

/* name[0..len) must be a layout of the kind (amq_parse_layout). */
amq_status amq_sql_set_layout(amq_sql_sizing *s, const char *name, size_t len, amq_error *err);

/* expansion must be 1 to AMQ_SCALABLE_MAX_EXPANSION. */
amq_status amq_sql_set_expansion(amq_sql_sizing *s, int64_t expansion, amq_error *err);

/* The error of a sizing argument the adapter cannot take as its type (a
 * SQLite value of another type, PostgreSQL's NULL fpr): "<argument> must be
 * a number | an integer | text, got <got>" with what to pass, where got is
 * what came in the engine's words ("null", "text", "real 1.5"). argument:
 * "fpr", "capacity", "layout" or "expansion". Like every message of a
 * sizing argument it names no function, in any engine. */
amq_status amq_sql_argument_type(const amq_sql_sizing *s, const char *argument, const char *got,
				 amq_error *err);

/* The layout given, else the kind's default for the fpr (amq_default_layout). */
amq_layout amq_sql_layout(const amq_sql_sizing *s);

/* An empty filter as s says, with the seed of every filter SQL builds. */
amq_status amq_sql_create(amq_filter *f, const amq_sql_sizing *s, const amq_allocator *a,
			  amq_error *err);

/* A builder as s says (amq_builder_init), with the same seed. */
amq_status amq_sql_builder_init(amq_builder *b, const amq_sql_sizing *s, const amq_allocator *a,
				amq_error *err);

#endif
