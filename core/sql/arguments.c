/*
 * sql/arguments.c - defaults and checks of the sizing arguments that
 * bloom_new, cuckoo_new, bloom_agg and cuckoo_agg take (sql/arguments.h).
 * fpr and capacity are checked by core's amq_check_fpr and
 * amq_check_capacity, layout names parsed by amq_parse_layout.
 */
#include "sql/arguments.h"

#include <string.h>

void amq_sql_sizing_init(amq_sql_sizing *s, amq_kind kind)
{
	*s = (amq_sql_sizing){.kind = kind, .fpr = AMQ_SQL_DEFAULT_FPR};
}

amq_status amq_sql_set_fpr(amq_sql_sizing *s, double fpr, amq_error *err)
{
	amq_status st = amq_check_fpr(fpr, err);
	if (st == AMQ_OK)
		s->fpr = fpr;
	return st;
}

amq_status amq_sql_set_capacity(amq_sql_sizing *s, int64_t capacity, amq_error *err)
{
	amq_status st = amq_check_capacity(capacity, err);
	if (st == AMQ_OK)
		s->capacity = (uint64_t)capacity;
	return st;
}

amq_status amq_sql_set_layout(amq_sql_sizing *s, const char *name, size_t len, amq_error *err)
{
	amq_status st = amq_parse_layout(s->kind, name, len, &s->layout, err);
	s->layout_given = st == AMQ_OK;
	return st;
}

amq_status amq_sql_set_expansion(amq_sql_sizing *s, int64_t expansion, amq_error *err)
{
	if (expansion < 1 || expansion > AMQ_SCALABLE_MAX_EXPANSION)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "",
				"expansion must be between 1 and %d, got %lld",
				AMQ_SCALABLE_MAX_EXPANSION, (long long)expansion);
	s->expansion = (uint32_t)expansion;
	return AMQ_OK;
}

amq_status amq_sql_argument_type(const amq_sql_sizing *s, const char *argument, const char *got,
				 amq_error *err)
{
	static const struct {
		const char *argument, *type, *hint;
	} arguments[] = {
	    {"fpr", "a number", "pass a false-positive rate such as 0.01 for 1%"},
	    {"capacity", "an integer", "pass the number of distinct values the filter must hold"},
	    {"layout", "text", NULL}, /* the kind's layouts */
	    {"expansion", "an integer", "pass a growth factor such as 2"},
	};
	for (size_t i = 0; i < sizeof(arguments) / sizeof(arguments[0]); i++)
		if (strcmp(arguments[i].argument, argument) == 0)
			return amq_fail(err, AMQ_INVALID_ARGUMENT,
					arguments[i].hint ? arguments[i].hint
							  : amq_layouts_hint(s->kind),
					"%s must be %s, got %s", argument, arguments[i].type, got);
	return amq_fail(err, AMQ_INVALID_ARGUMENT, "", "%s: no such sizing argument", argument);
}

amq_layout amq_sql_layout(const amq_sql_sizing *s)
{
	return s->layout_given ? s->layout : amq_default_layout(s->kind, s->fpr);
}

amq_status amq_sql_create(amq_filter *f, const amq_sql_sizing *s, const amq_allocator *a,
			  amq_error *err)
{
	return amq_filter_create_expanding(f, s->kind, amq_sql_layout(s), s->capacity, s->fpr,
					   s->expansion, AMQ_DEFAULT_SEED, a, err);
}

amq_status amq_sql_builder_init(amq_builder *b, const amq_sql_sizing *s, const amq_allocator *a,
				amq_error *err)
{
	return amq_builder_init(b, s->kind, amq_sql_layout(s), s->fpr, s->capacity,
				AMQ_DEFAULT_SEED, a, err);
}
