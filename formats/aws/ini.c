/* The shared credentials file's INI reader (see ini.h). */
#include "ini.h"

#include "formats/aws/credentials.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"

#include <stdbool.h>
#include <string.h>

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Trims [*b, *e) of spaces, tabs and CR on both sides. */
static void trim(const char **b, const char **e)
{
	while (*b < *e && is_space(**b))
		(*b)++;
	while (*e > *b && is_space((*e)[-1]))
		(*e)--;
}

static bool span_eq(const char *b, const char *e, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(e - b) == n && memcmp(b, s, n) == 0;
}

/* What the reader holds between lines: the profile's values seen so far. */
struct reader {
	struct floe_alloc *a;
	const char *profile;
	bool in_profile, seen_profile;
	char *ak, *sk, *tok;
};

/* Takes a copy of [b, e) into *slot (replacing an earlier value). */
static int set_value(struct reader *r, char **slot, const char *b, const char *e)
{
	char *s = floe_strndup(r->a, b, (size_t)(e - b));
	if (!s)
		return FLOE_ENOMEM;
	floe_wipe_free(r->a, *slot);
	*slot = s;
	return 0;
}

/* A "[name]" or "[profile name]" header [b, e). */
static int section(struct reader *r, const char *b, const char *e)
{
	if (e[-1] != ']' || e - b < 3)
		return FLOE_EPARSE;
	const char *nb = b + 1, *ne = e - 1;
	trim(&nb, &ne);
	/* ~/.aws/config spells sections "[profile name]"; accept it here too. */
	if (ne - nb > 8 && memcmp(nb, "profile", 7) == 0 && is_space(nb[7])) {
		nb += 8;
		trim(&nb, &ne);
	}
	r->in_profile = span_eq(nb, ne, r->profile);
	r->seen_profile |= r->in_profile;
	return 0;
}

/* A "key = value" line [b, e) of any section. */
static int key_value(struct reader *r, const char *b, const char *e)
{
	const char *eq = memchr(b, '=', (size_t)(e - b));
	if (!eq || eq == b)
		return FLOE_EPARSE;
	if (!r->in_profile)
		return 0;
	const char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
	trim(&kb, &ke);
	trim(&vb, &ve);
	if (span_eq(kb, ke, "aws_access_key_id"))
		return set_value(r, &r->ak, vb, ve);
	if (span_eq(kb, ke, "aws_secret_access_key"))
		return set_value(r, &r->sk, vb, ve);
	if (span_eq(kb, ke, "aws_session_token"))
		return set_value(r, &r->tok, vb, ve);
	return 0;
}

/* One line [line, le). */
static int one_line(struct reader *r, const char *line, const char *le)
{
	if (le - line > FLOE_AWS_INI_LINE_MAX)
		return FLOE_ELIMIT;
	if (memchr(line, '\0', (size_t)(le - line)))
		return FLOE_EPARSE;
	/* Indented lines are sub-properties (nested "s3 =" blocks in shared files): they
	 * belong to the key above and carry no credentials, so skip them. */
	bool indented = le > line && (*line == ' ' || *line == '\t');
	const char *b = line, *e = le;
	trim(&b, &e);
	if (b == e || *b == '#' || *b == ';')
		return 0;
	if (*b == '[')
		return section(r, b, e);
	return indented ? 0 : key_value(r, b, e);
}

int floe_aws_ini_credentials(struct floe_alloc *a, const char *p, size_t n, const char *profile,
			     struct floe_aws_credentials *out, struct floe_err *e)
{
	struct reader r = {a, profile && *profile ? profile : "default", false, false, NULL, NULL,
			   NULL};
	size_t line_no = 0;
	int rc = 0;
	const char *end = p + n, *line = p;
	while (line < end && rc == 0) {
		line_no++;
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *le = nl ? nl : end;
		rc = one_line(&r, line, le);
		if (rc == 0)
			line = nl ? nl + 1 : end;
	}
	if (rc == FLOE_ENOMEM)
		floe_err_set(e, rc, "credentials file: no memory");
	else if (rc)
		floe_err_at(e, rc, (size_t)(line - p), "credentials file: line %zu: %s", line_no,
			    rc == FLOE_ELIMIT ? "longer than 64 KiB"
					      : "neither a [section], a key = value nor a comment");
	else if (!r.seen_profile || !r.ak || !*r.ak || !r.sk || !*r.sk)
		rc = floe_err_set(e, FLOE_ENOTFOUND, "no profile [%s] with both keys", r.profile);
	else
		rc = floe_aws_credentials_set(a, r.ak, r.sk, r.tok, out);
	floe_wipe_free(a, r.ak);
	floe_wipe_free(a, r.sk);
	floe_wipe_free(a, r.tok);
	return rc;
}
