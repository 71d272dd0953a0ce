/* Routing of records to raw tables (route.h): each rule's field reference parsed and its
 * pattern compiled once; a record is tested against the rules in order. */
#include "agent/pipeline/route.h"

#include "agent/config/config.h"
#include "agent/parse/regex.h"
#include "agent/schema/aggtable.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A pattern is tested on at most this much of a field (a message may be long). */
#define ROUTE_MATCH_MAX (64u << 10)

struct route_rule {
	struct floe_field_ref ref;
	const char *equals; /* borrowed from the configuration; NULL: matches or present */
	size_t equals_len;
	struct floe_regex *re; /* NULL: equals or present */
	size_t table;
};

struct floe_route {
	struct floe_alloc *a;
	size_t n, table;
	struct route_rule rules[];
};

int floe_route_new(struct floe_alloc *a, const struct floe_config_input *in,
		   struct floe_route **out, struct floe_err *err)
{
	struct floe_route *rt = floe_calloc(a, 1, sizeof(*rt) + in->nroutes * sizeof(rt->rules[0]));
	if (!rt)
		return FLOE_ENOMEM;
	rt->a = a;
	rt->table = in->table_idx;
	int rc = 0;
	for (; rt->n < in->nroutes && rc == 0; rt->n++) {
		const struct floe_config_route *c = &in->routes[rt->n];
		struct route_rule *u = &rt->rules[rt->n];
		u->table = c->table_idx;
		u->equals = c->equals;
		u->equals_len = c->equals ? strlen(c->equals) : 0;
		rc = floe_field_ref_parse(c->field, strlen(c->field), &u->ref, err);
		if (rc == 0 && c->matches)
			rc = floe_regex_new(a, c->matches, strlen(c->matches), ROUTE_MATCH_MAX,
					    FLOE_REGEX_NOSUB, &u->re, err);
	}
	if (rc) {
		floe_route_free(rt);
		return rc;
	}
	*out = rt;
	return 0;
}

void floe_route_free(struct floe_route *rt)
{
	if (!rt)
		return;
	for (size_t i = 0; i < rt->n; i++)
		floe_regex_free(rt->rules[i].re);
	floe_free(rt->a, rt);
}

/* The text of field ref in rec: a string column, an integer column written in decimal
 * into num (24 bytes), or an attribute. false: the record lacks it (null). */
static bool field_text(const struct floe_record *rec, const struct floe_field_ref *ref, char *num,
		       const char **s, size_t *len)
{
	const struct floe_str *str = NULL;
	int64_t v = 0;
	bool has = false, isnum = false;
	switch (ref->src) {
	case FLOE_FIELD_HOST:
		str = &rec->host;
		break;
	case FLOE_FIELD_SOURCE:
		str = &rec->source;
		break;
	case FLOE_FIELD_APP:
		str = &rec->app;
		break;
	case FLOE_FIELD_PROC_ID:
		str = &rec->proc_id;
		break;
	case FLOE_FIELD_MSG_ID:
		str = &rec->msg_id;
		break;
	case FLOE_FIELD_MESSAGE:
		str = &rec->message;
		break;
	case FLOE_FIELD_SEVERITY:
		isnum = true, has = rec->has_severity, v = rec->severity;
		break;
	case FLOE_FIELD_FACILITY:
		isnum = true, has = rec->has_facility, v = rec->facility;
		break;
	case FLOE_FIELD_OFFSET:
		isnum = true, has = rec->has_offset, v = rec->offset;
		break;
	case FLOE_FIELD_ATTR:
		for (size_t i = 0; i < rec->nattrs; i++)
			if (rec->attr_key_lens[i] == ref->attr_len &&
			    memcmp(rec->attr_keys[i], ref->attr, ref->attr_len) == 0) {
				*s = rec->attr_vals[i];
				*len = rec->attr_val_lens[i];
				return *s != NULL;
			}
		return false;
	}
	if (!isnum) {
		*s = str ? str->p : NULL;
		*len = str ? str->len : 0;
		return *s != NULL;
	}
	int w = snprintf(num, 24, "%" PRId64, v);
	*s = num;
	*len = w > 0 ? (size_t)w : 0;
	return has;
}

size_t floe_route_pick(const struct floe_route *rt, const struct floe_record *rec)
{
	if (!rt)
		return 0;
	for (size_t i = 0; i < rt->n; i++) {
		const struct route_rule *u = &rt->rules[i];
		char num[24];
		const char *s = NULL;
		size_t len = 0;
		bool matched = false;
		if (!field_text(rec, &u->ref, num, &s, &len))
			continue;
		if (u->equals)
			matched = len == u->equals_len && memcmp(s, u->equals, len) == 0;
		else if (u->re)
			matched =
			    floe_regex_test(u->re, s, len < ROUTE_MATCH_MAX ? len : ROUTE_MATCH_MAX,
					    &matched) == 0 &&
			    matched;
		else
			matched = true;
		if (matched)
			return u->table;
	}
	return rt->table;
}
