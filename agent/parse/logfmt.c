/* logfmt scanner: one pass over the line, slices for keys and values, the fields arena
 * only for quoted values that hold escapes. */
#include "logfmt.h"

#include "fields.h"
#include "json_line.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"

#include <stdbool.h>
#include <string.h>

static bool is_sep(unsigned char c)
{
	return c <= ' ';
}

/* Scans a quoted value from p[*i] (just after its opening quote) to its closing quote:
 * 0 with *i on the closing quote and *esc set when it holds escapes, or FLOE_EPARSE with
 * *i at the offending byte (an unknown escape, a short \u, no closing quote). */
static int scan_quoted(const char *p, size_t len, size_t *i, bool *esc)
{
	*esc = false;
	while (*i < len && p[*i] != '"') {
		if (p[*i] != '\\') {
			(*i)++;
			continue;
		}
		*esc = true;
		if (*i + 1 >= len) {
			*i = len;
			return FLOE_EPARSE;
		}
		char e = p[*i + 1];
		if (e == 'u') {
			for (size_t k = 2; k < 6; k++) {
				if (*i + k >= len || floe_hex_digit(p[*i + k]) < 0) {
					*i = *i + k < len ? *i + k : len;
					return FLOE_EPARSE;
				}
			}
			*i += 6;
			continue;
		}
		if (e == 0 || !strchr("\"\\/bfnrt", e)) {
			(*i)++;
			return FLOE_EPARSE;
		}
		*i += 2;
	}
	return *i >= len ? FLOE_EPARSE : 0;
}

/* Adds key=value where the value p[vs..vs+vlen) holds escapes: unescaped into the
 * fields' arena, or dropped (counted by the fields) when the arena is full. */
static void add_unescaped(struct floe_fields *f, const char *key, size_t klen, const char *v,
			  size_t vlen)
{
	size_t avail, n;
	char *d = floe_fields_scratch(f, &avail);
	if (floe_json_unescape(v, vlen, d, avail, &n)) {
		/* Escapes were validated by scan_quoted: only space can run out. */
		floe_fields_drop(f);
		return;
	}
	floe_fields_commit(f, n);
	floe_fields_add(f, key, klen, d, n);
}

int floe_logfmt_parse(const char *p, size_t len, struct floe_fields *f, struct floe_err *err)
{
	size_t i = 0;
	int rc = 0;
	while (i < len && rc == 0) {
		while (i < len && is_sep((unsigned char)p[i]))
			i++;
		if (i >= len)
			break;
		size_t ks = i;
		while (i < len && !is_sep((unsigned char)p[i]) && p[i] != '=' && p[i] != '"')
			i++;
		size_t klen = i - ks;
		/* A quote in a key, or a '=' with no key before it. */
		if ((i < len && p[i] == '"') || klen == 0) {
			rc = FLOE_EPARSE;
			break;
		}
		if (i >= len || p[i] != '=') {
			/* Bare key: an empty (not null) value; see the header. */
			floe_fields_add(f, p + ks, klen, p + ks + klen, 0);
			continue;
		}
		i++; /* '=' */
		if (i < len && p[i] == '"') {
			size_t vs = ++i;
			bool esc;
			if ((rc = scan_quoted(p, len, &i, &esc)))
				break;
			size_t vlen = i - vs;
			i++; /* closing quote */
			if (i < len && !is_sep((unsigned char)p[i])) {
				rc = FLOE_EPARSE;
				break;
			}
			if (esc)
				add_unescaped(f, p + ks, klen, p + vs, vlen);
			else
				floe_fields_add(f, p + ks, klen, p + vs, vlen);
			continue;
		}
		size_t vs = i;
		while (i < len && !is_sep((unsigned char)p[i]))
			i++;
		floe_fields_add(f, p + ks, klen, p + vs, i - vs);
	}
	if (rc) {
		floe_fields_reset(f);
		floe_err_at(err, rc, i, "invalid logfmt at byte %zu", i);
	}
	return rc;
}
