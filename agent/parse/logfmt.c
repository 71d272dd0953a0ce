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

int floe_logfmt_parse(const char *p, size_t len, struct floe_fields *f, size_t *err_off)
{
	size_t i = 0;
	int rc = 0;
	while (i < len) {
		while (i < len && is_sep((unsigned char)p[i]))
			i++;
		if (i >= len)
			break;
		size_t ks = i;
		while (i < len && !is_sep((unsigned char)p[i]) && p[i] != '=' && p[i] != '"')
			i++;
		if (i < len && p[i] == '"') {
			rc = FLOE_EPARSE;
			goto err;
		}
		size_t klen = i - ks;
		if (klen == 0) {
			/* A '=' with no key before it. */
			rc = FLOE_EPARSE;
			goto err;
		}
		if (i >= len || p[i] != '=') {
			/* Bare key: an empty (not null) value; see the header. */
			floe_fields_add(f, p + ks, klen, p + ks + klen, 0);
			continue;
		}
		i++; /* '=' */
		if (i < len && p[i] == '"') {
			size_t vs = ++i;
			bool esc = false;
			while (i < len && p[i] != '"') {
				if (p[i] == '\\') {
					esc = true;
					if (i + 1 >= len) {
						i = len;
						rc = FLOE_EPARSE;
						goto err;
					}
					char e = p[i + 1];
					if (e == 'u') {
						for (size_t k = 2; k < 6; k++) {
							if (i + k >= len || floe_hex_digit(p[i + k]) < 0) {
								i = i + k < len ? i + k : len;
								rc = FLOE_EPARSE;
								goto err;
							}
						}
						i += 6;
						continue;
					}
					if (e == 0 || !strchr("\"\\/bfnrt", e)) {
						i++;
						rc = FLOE_EPARSE;
						goto err;
					}
					i += 2;
					continue;
				}
				i++;
			}
			if (i >= len) {
				rc = FLOE_EPARSE;
				goto err;
			}
			size_t vlen = i - vs;
			i++; /* closing quote */
			if (i < len && !is_sep((unsigned char)p[i])) {
				rc = FLOE_EPARSE;
				goto err;
			}
			if (!esc) {
				floe_fields_add(f, p + ks, klen, p + vs, vlen);
				continue;
			}
			size_t avail;
			char *d = floe_fields_scratch(f, &avail);
			size_t n;
			if (floe_json_unescape(p + vs, vlen, d, avail, &n)) {
				/* Escapes were validated above: only space can run out. */
				floe_fields_drop(f);
				continue;
			}
			floe_fields_commit(f, n);
			floe_fields_add(f, p + ks, klen, d, n);
			continue;
		}
		size_t vs = i;
		while (i < len && !is_sep((unsigned char)p[i]))
			i++;
		floe_fields_add(f, p + ks, klen, p + vs, i - vs);
	}
	return 0;
err:
	floe_fields_reset(f);
	if (err_off)
		*err_off = i;
	return rc;
}
