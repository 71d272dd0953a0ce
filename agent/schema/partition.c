/* Partition specs, keys and paths for the logs table. */
#include "partition.h"

#include "agent/schema/record.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int source_column(const char *name, size_t len)
{
	if (len == 2 && memcmp(name, "ts", 2) == 0)
		return FLOE_COL_TS;
	if (len == 4 && memcmp(name, "host", 4) == 0)
		return FLOE_COL_HOST;
	if (len == 3 && memcmp(name, "app", 3) == 0)
		return FLOE_COL_APP;
	return 0;
}

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
static int finish_field(struct floe_part_field *f, char *why, size_t cap)
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
		snprintf(why, cap, "partition transform of field %s is not supported by floe", f->name);
		return FLOE_EINVAL;
	}
	/* Time transforms read ts; identity and bucket read the string columns. */
	if (!col || (f->source_id == FLOE_COL_TS) != time_transform) {
		snprintf(why, cap, "partition field %s: floe supports day/hour/month/year on ts and "
				   "identity/bucket on host or app", f->name[0] ? f->name : "?");
		return FLOE_EINVAL;
	}
	if (!f->name[0]) {
		if (suffix)
			snprintf(f->name, sizeof(f->name), "%s_%s", col, suffix);
		else
			snprintf(f->name, sizeof(f->name), "%s", col);
	}
	return 0;
}

int floe_part_spec_from_config(struct floe_part_spec *spec, char *const *entries, size_t n,
			       char *why, size_t cap)
{
	memset(spec, 0, sizeof(*spec));
	if (n > FLOE_PART_MAX) {
		snprintf(why, cap, "at most %d partition fields", FLOE_PART_MAX);
		return FLOE_EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		struct floe_part_field *f = &spec->f[i];
		const char *e = entries[i];
		const char *open = strchr(e, '(');
		f->field_id = 1000 + (int32_t)i;
		if (!open) {
			f->transform.kind = FLOE_ICE_IDENTITY;
			f->source_id = source_column(e, strlen(e));
		} else {
			const char *close = strrchr(e, ')');
			if (!close || close[1] != '\0') {
				snprintf(why, cap, "partition_by '%s': expected transform(column)", e);
				return FLOE_EINVAL;
			}
			const char *arg = open + 1;
			const char *comma = memchr(arg, ',', (size_t)(close - arg));
			char tname[32];
			size_t tlen = (size_t)(open - e);
			if (comma) {
				/* bucket(N, col) in the config becomes bucket[N]. */
				int len = snprintf(tname, sizeof(tname), "%.*s[%.*s]", (int)tlen, e,
						   (int)(comma - arg), arg);
				if (len < 0 || (size_t)len >= sizeof(tname))
					return FLOE_EINVAL;
				arg = comma + 1;
			} else {
				if (tlen >= sizeof(tname))
					return FLOE_EINVAL;
				memcpy(tname, e, tlen);
				tname[tlen] = '\0';
			}
			while (*arg == ' ')
				arg++;
			if (floe_ice_transform_parse(tname, strlen(tname), &f->transform) != 0) {
				snprintf(why, cap, "partition_by '%s': unknown transform", e);
				return FLOE_EINVAL;
			}
			f->source_id = source_column(arg, (size_t)(close - arg));
		}
		if (!f->source_id) {
			snprintf(why, cap, "partition_by '%s': floe partitions by ts, host or app", e);
			return FLOE_EINVAL;
		}
		int rc = finish_field(f, why, cap);
		if (rc)
			return rc;
	}
	spec->n = n;
	return 0;
}

int floe_part_spec_from_table(struct floe_part_spec *spec, const struct floe_ice_meta *m, char *why,
			      size_t cap)
{
	memset(spec, 0, sizeof(*spec));
	spec->spec_id = floe_ice_meta_default_spec_id(m);
	const struct floe_json *fields = floe_ice_meta_default_spec_fields(m);
	size_t n = floe_json_len(fields);
	if (n > FLOE_PART_MAX) {
		snprintf(why, cap, "the table has %zu partition fields, floe supports %d", n,
			 FLOE_PART_MAX);
		return FLOE_ESCHEMA;
	}
	for (size_t i = 0; i < n; i++) {
		const struct floe_json *pf = floe_json_at(fields, i);
		struct floe_part_field *f = &spec->f[i];
		int64_t source = 0, id = 0;
		const char *name = NULL, *transform = NULL;
		if (floe_json_get_int(pf, "source-id", &source) || floe_json_get_int(pf, "field-id", &id) ||
		    floe_json_get_str(pf, "name", &name) || floe_json_get_str(pf, "transform", &transform)) {
			snprintf(why, cap, "partition field %zu of the table is incomplete", i);
			return FLOE_ESCHEMA;
		}
		f->source_id = (int32_t)source;
		f->field_id = (int32_t)id;
		snprintf(f->name, sizeof(f->name), "%s", name);
		if (floe_ice_transform_parse(transform, strlen(transform), &f->transform) != 0) {
			snprintf(why, cap, "partition field %s: unknown transform %s", name, transform);
			return FLOE_ESCHEMA;
		}
		if (finish_field(f, why, cap) != 0)
			return FLOE_ESCHEMA;
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
