/* Partition specs, keys and paths for the logs table. */
#include "partition.h"

#include "agent/schema/record.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char *column_name(int32_t id)
{
	switch (id) {
	case FLOE_COL_TS:
		return "ts";
	case FLOE_COL_HOST:
		return "host";
	case FLOE_COL_APP:
		return "app";
	default:
		return NULL;
	}
}

/* Checks that transform t may apply to column source and sets the result type and the
 * field's conventional name (Java's naming: ts_day, host_bucket, host). */
static int finish_field(struct floe_part_field *f, struct floe_err *err)
{
	const char *col = column_name(f->source_id);
	bool time_transform = true;
	const char *suffix = NULL;
	switch (f->transform.kind) {
	case FLOE_ICE_DAY:
		f->result_type = "date";
		suffix = "day";
		break;
	case FLOE_ICE_HOUR:
		f->result_type = "int";
		suffix = "hour";
		break;
	case FLOE_ICE_MONTH:
		f->result_type = "int";
		suffix = "month";
		break;
	case FLOE_ICE_YEAR:
		f->result_type = "int";
		suffix = "year";
		break;
	case FLOE_ICE_BUCKET:
		f->result_type = "int";
		suffix = "bucket";
		time_transform = false;
		break;
	case FLOE_ICE_IDENTITY:
		f->result_type = "string";
		time_transform = false;
		break;
	default:
		return floe_err_set(err, FLOE_EINVAL,
				    "partition transform of field %s is not supported by floe",
				    f->name);
	}
	/* Time transforms read ts; identity and bucket read the string columns. */
	if (!col || (f->source_id == FLOE_COL_TS) != time_transform)
		return floe_err_set(
		    err, FLOE_EINVAL,
		    "partition field %s: floe supports day/hour/month/year on ts and "
		    "identity/bucket on host or app",
		    f->name[0] ? f->name : "?");
	if (!f->name[0]) {
		if (suffix)
			snprintf(f->name, sizeof(f->name), "%s_%s", col, suffix);
		else
			snprintf(f->name, sizeof(f->name), "%s", col);
	}
	return 0;
}

/* ---- the configuration's text: the one parser of partition_by ---------------------- */

static void skip_ws(const char **p, const char *e)
{
	while (*p < e && (**p == ' ' || **p == '\t'))
		(*p)++;
}

/* A word of letters, digits and '_' at *p (after blanks): its length, *w its start. */
static size_t word(const char **p, const char *e, const char **w)
{
	skip_ws(p, e);
	*w = *p;
	while (*p < e && ((**p >= 'a' && **p <= 'z') || (**p >= 'A' && **p <= 'Z') ||
			  (**p >= '0' && **p <= '9') || **p == '_'))
		(*p)++;
	return (size_t)(*p - *w);
}

#define IS(w, l, lit) ((l) == sizeof(lit) - 1 && memcmp((w), (lit), (l)) == 0)

/* Splits "fn", "fn(a1)" or "fn(a1, a2)" (any blanks around the words); -1 if s is not one
 * of those shapes. */
static int split_call(const char *s, const char **fn, size_t *fnl, const char **a1, size_t *a1l,
		      const char **a2, size_t *a2l)
{
	const char *p = s, *e = s + strlen(s);
	int nargs = 0;
	*a1 = *a2 = "";
	*a1l = *a2l = 0;
	*fnl = word(&p, e, fn);
	skip_ws(&p, e);
	if (p < e && *p == '(') {
		p++;
		*a1l = word(&p, e, a1);
		nargs = 1;
		skip_ws(&p, e);
		if (p < e && *p == ',') {
			p++;
			*a2l = word(&p, e, a2);
			nargs = 2;
			skip_ws(&p, e);
		}
		if (p >= e || *p != ')')
			return -1;
		p++;
		skip_ws(&p, e);
	}
	return p != e || *fnl == 0 ? -1 : nargs;
}

/* The transform of a time function name on ts, or -1. */
static int time_kind(const char *fn, size_t fnl)
{
	if (IS(fn, fnl, "year"))
		return FLOE_ICE_YEAR;
	if (IS(fn, fnl, "month"))
		return FLOE_ICE_MONTH;
	if (IS(fn, fnl, "day"))
		return FLOE_ICE_DAY;
	if (IS(fn, fnl, "hour"))
		return FLOE_ICE_HOUR;
	return -1;
}

int floe_part_field_parse(const char *s, struct floe_part_field *f, struct floe_err *err)
{
	const char *fn, *a1, *a2;
	size_t fnl, a1l, a2l;
	int nargs = split_call(s, &fn, &fnl, &a1, &a1l, &a2, &a2l);
	struct floe_part_field g;
	memset(&g, 0, sizeof(g));
	if (nargs == 0 && (IS(fn, fnl, "host") || IS(fn, fnl, "app"))) {
		g.transform.kind = FLOE_ICE_IDENTITY;
		g.source_id = IS(fn, fnl, "host") ? FLOE_COL_HOST : FLOE_COL_APP;
	} else if (nargs == 1 && IS(fn, fnl, "identity") &&
		   (IS(a1, a1l, "host") || IS(a1, a1l, "app"))) {
		g.transform.kind = FLOE_ICE_IDENTITY;
		g.source_id = IS(a1, a1l, "host") ? FLOE_COL_HOST : FLOE_COL_APP;
	} else if (nargs == 1 && IS(a1, a1l, "ts") && time_kind(fn, fnl) >= 0) {
		g.transform.kind = (enum floe_ice_transform_kind)time_kind(fn, fnl);
		g.source_id = FLOE_COL_TS;
	} else if (nargs == 2 && IS(fn, fnl, "bucket") && IS(a2, a2l, "host") && a1l >= 1 &&
		   a1l <= 4) {
		int nb = 0;
		for (size_t i = 0; i < a1l && nb >= 0; i++)
			nb = a1[i] < '0' || a1[i] > '9' ? -1 : nb * 10 + (a1[i] - '0');
		if (nb < 1 || nb > 1024)
			return floe_err_set(err, FLOE_EINVAL,
					    "partition field '%s': bucket count out of 1..1024", s);
		g.transform = (struct floe_ice_transform){FLOE_ICE_BUCKET, nb};
		g.source_id = FLOE_COL_HOST;
	} else {
		return floe_err_set(
		    err, FLOE_EINVAL,
		    "partition field '%s': expected one of year(ts), month(ts), day(ts), "
		    "hour(ts), identity(host), host, app, bucket(N, host)",
		    s);
	}
	int rc = finish_field(&g, err);
	if (rc == 0)
		*f = g;
	return rc;
}

int floe_part_field_text(const struct floe_part_field *f, char *out, size_t cap)
{
	const char *col = column_name(f->source_id);
	char t[24];
	int rc = floe_ice_transform_name(&f->transform, t, sizeof(t));
	if (rc || !col)
		return rc ? rc : FLOE_EINVAL;
	if (f->transform.kind == FLOE_ICE_BUCKET)
		return floe_fmt(out, cap, "bucket(%d, %s)", (int)f->transform.param, col);
	return floe_fmt(out, cap, "%s(%s)", t, col);
}

int floe_part_spec_from_config(struct floe_part_spec *spec, char *const *entries, size_t n,
			       struct floe_err *err)
{
	memset(spec, 0, sizeof(*spec));
	if (n > FLOE_PART_MAX)
		return floe_err_set(err, FLOE_EINVAL, "at most %d partition fields", FLOE_PART_MAX);
	for (size_t i = 0; i < n; i++) {
		int rc = floe_part_field_parse(entries[i], &spec->f[i], err);
		if (rc)
			return rc;
		spec->f[i].field_id = 1000 + (int32_t)i;
	}
	/* The table gives the id (floe_ice_meta_evolve_spec) when it is first reached. */
	spec->spec_id = -1;
	spec->n = n;
	return 0;
}

int floe_part_spec_from_table(struct floe_part_spec *spec, const struct floe_ice_meta *m,
			      struct floe_err *err)
{
	return floe_part_spec_from_table_id(spec, m, floe_ice_meta_default_spec_id(m), err);
}

int floe_part_spec_from_table_id(struct floe_part_spec *spec, const struct floe_ice_meta *m,
				 int32_t spec_id, struct floe_err *err)
{
	memset(spec, 0, sizeof(*spec));
	spec->spec_id = spec_id;
	const struct floe_json *fields = floe_ice_meta_spec_fields(m, spec_id);
	if (!fields)
		return floe_err_set(err, FLOE_ESCHEMA, "the table has no partition spec %d",
				    (int)spec_id);
	size_t n = floe_json_len(fields);
	if (n > FLOE_PART_MAX)
		return floe_err_set(err, FLOE_ESCHEMA,
				    "the table has %zu partition fields, floe supports %d", n,
				    FLOE_PART_MAX);
	for (size_t i = 0; i < n; i++) {
		const struct floe_json *pf = floe_json_at(fields, i);
		struct floe_part_field *f = &spec->f[i];
		int64_t source = 0, id = 0;
		const char *name = NULL, *transform = NULL;
		if (floe_json_get_int(pf, "source-id", &source) ||
		    floe_json_get_int(pf, "field-id", &id) ||
		    floe_json_get_str(pf, "name", &name) ||
		    floe_json_get_str(pf, "transform", &transform))
			return floe_err_set(err, FLOE_ESCHEMA,
					    "partition field %zu of the table is incomplete", i);
		f->source_id = (int32_t)source;
		f->field_id = (int32_t)id;
		snprintf(f->name, sizeof(f->name), "%s", name);
		if (floe_ice_transform_parse(transform, strlen(transform), &f->transform) != 0)
			return floe_err_set(err, FLOE_ESCHEMA,
					    "partition field %s: unknown transform %s", name,
					    transform);
		if (finish_field(f, err) != 0) {
			if (err)
				err->code = FLOE_ESCHEMA; /* the message stays */
			return FLOE_ESCHEMA;
		}
	}
	spec->n = n;
	return 0;
}

void floe_part_spec_fields(const struct floe_part_spec *spec, struct floe_ice_partition_field *out,
			   char tnames[][24])
{
	for (size_t i = 0; i < spec->n; i++) {
		floe_ice_transform_name(&spec->f[i].transform, tnames[i], 24);
		out[i].source_id = spec->f[i].source_id;
		out[i].field_id = spec->f[i].field_id;
		out[i].name = spec->f[i].name;
		out[i].transform = tnames[i];
	}
}

void floe_part_spec_manifest_parts(const struct floe_part_spec *spec, struct floe_ice_manifest_part *out)
{
	for (size_t i = 0; i < spec->n; i++) {
		out[i].field_id = spec->f[i].field_id;
		out[i].name = spec->f[i].name;
		out[i].result_type = spec->f[i].result_type;
	}
}

bool floe_part_spec_equal(const struct floe_part_spec *a, const struct floe_part_spec *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		if (a->f[i].source_id != b->f[i].source_id ||
		    a->f[i].transform.kind != b->f[i].transform.kind ||
		    a->f[i].transform.param != b->f[i].transform.param)
			return false;
	}
	return true;
}

int floe_part_key_of(const struct floe_part_spec *spec, const struct floe_record *rec,
		     struct floe_part_key *key)
{
	for (size_t i = 0; i < spec->n; i++) {
		const struct floe_part_field *f = &spec->f[i];
		struct floe_ice_part_value *v = &key->v[i];
		memset(v, 0, sizeof(*v));
		struct floe_str s = {NULL, 0};
		if (f->source_id == FLOE_COL_HOST)
			s = rec->host;
		else if (f->source_id == FLOE_COL_APP)
			s = rec->app;
		switch (f->transform.kind) {
		case FLOE_ICE_DAY:
			v->i = floe_ice_day_from_us(rec->ts);
			break;
		case FLOE_ICE_HOUR:
			v->i = floe_ice_hour_from_us(rec->ts);
			break;
		case FLOE_ICE_MONTH:
			v->i = floe_ice_month_from_us(rec->ts);
			break;
		case FLOE_ICE_YEAR:
			v->i = floe_ice_year_from_us(rec->ts);
			break;
		case FLOE_ICE_BUCKET:
			if (!s.p)
				v->is_null = true;
			else
				v->i = floe_ice_bucket_bytes(s.p, s.len, f->transform.param);
			break;
		case FLOE_ICE_IDENTITY:
			if (!s.p) {
				v->is_null = true;
				break;
			}
			if (s.len >= FLOE_PART_STR_MAX)
				return FLOE_ELIMIT;
			memcpy(key->str[i], s.p, s.len);
			key->str[i][s.len] = '\0';
			v->s = key->str[i];
			v->len = s.len;
			break;
		default:
			return FLOE_EINVAL;
		}
	}
	return 0;
}

bool floe_part_key_equal(const struct floe_part_spec *spec, const struct floe_part_key *a,
			 const struct floe_part_key *b)
{
	for (size_t i = 0; i < spec->n; i++) {
		const struct floe_ice_part_value *x = &a->v[i], *y = &b->v[i];
		if (x->is_null != y->is_null)
			return false;
		if (x->is_null)
			continue;
		if (spec->f[i].transform.kind == FLOE_ICE_IDENTITY) {
			if (x->len != y->len || memcmp(x->s, y->s, x->len) != 0)
				return false;
		} else if (x->i != y->i) {
			return false;
		}
	}
	return true;
}

void floe_part_key_copy(const struct floe_part_spec *spec, struct floe_part_key *dst,
			const struct floe_part_key *src)
{
	for (size_t i = 0; i < spec->n; i++) {
		dst->v[i] = src->v[i];
		if (src->v[i].s) {
			memcpy(dst->str[i], src->v[i].s, src->v[i].len + 1);
			dst->v[i].s = dst->str[i];
		}
	}
}

static int put(char *out, size_t cap, size_t *o, const char *s, size_t len, bool escape)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		bool plain = !escape || isalnum(c) || c == '.' || c == '_' || c == '-';
		size_t need = plain ? 1 : 3;
		if (*o + need + 1 > cap)
			return FLOE_ELIMIT;
		if (plain)
			out[(*o)++] = (char)c;
		else
			*o += (size_t)snprintf(out + *o, 4, "%%%02X", c);
	}
	out[*o] = '\0';
	return 0;
}

int floe_part_key_path(const struct floe_part_spec *spec, const struct floe_part_key *key, char *out,
		       size_t cap)
{
	size_t o = 0;
	if (cap == 0)
		return FLOE_ELIMIT;
	out[0] = '\0';
	for (size_t i = 0; i < spec->n; i++) {
		const struct floe_part_field *f = &spec->f[i];
		const struct floe_ice_part_value *v = &key->v[i];
		char val[64];
		const char *s = val;
		size_t len;
		int rc = 0;
		if (v->is_null) {
			s = "null";
			len = 4;
		} else if (f->transform.kind == FLOE_ICE_DAY) {
			rc = floe_ice_human_day((int32_t)v->i, val, sizeof(val));
			len = strlen(val);
		} else if (f->transform.kind == FLOE_ICE_HOUR) {
			rc = floe_ice_human_hour((int32_t)v->i, val, sizeof(val));
			len = strlen(val);
		} else if (f->transform.kind == FLOE_ICE_MONTH) {
			rc = floe_ice_human_month((int32_t)v->i, val, sizeof(val));
			len = strlen(val);
		} else if (f->transform.kind == FLOE_ICE_YEAR) {
			rc = floe_ice_human_year((int32_t)v->i, val, sizeof(val));
			len = strlen(val);
		} else if (f->transform.kind == FLOE_ICE_IDENTITY) {
			s = v->s;
			len = v->len;
		} else {
			len = (size_t)snprintf(val, sizeof(val), "%lld", (long long)v->i);
		}
		if (rc)
			return FLOE_ELIMIT;
		if ((i > 0 && (rc = put(out, cap, &o, "/", 1, false))) ||
		    (rc = put(out, cap, &o, f->name, strlen(f->name), true)) ||
		    (rc = put(out, cap, &o, "=", 1, false)) || (rc = put(out, cap, &o, s, len, true)))
			return rc;
	}
	return 0;
}
