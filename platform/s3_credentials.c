/* AWS credentials from the environment and the shared credentials file (see
 * s3_credentials.h). */
#include "platform/s3_credentials.h"

#include "formats/base/wipe.h"
#include "platform/fs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE (64 * 1024)
#define MAX_FILE (1024 * 1024)

static void wipe_free(char *s)
{
	if (!s)
		return;
	floe_wipe(s, strlen(s));
	free(s);
}

void floe_s3_credentials_fini(struct floe_s3_credentials *c)
{
	if (!c)
		return;
	wipe_free(c->access_key_id);
	wipe_free(c->secret_access_key);
	wipe_free(c->session_token);
	memset(c, 0, sizeof(*c));
}

static char *dup_n(const char *p, size_t n)
{
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

int floe_s3_credentials_from_env(struct floe_s3_credentials *out)
{
	const char *ak = getenv("AWS_ACCESS_KEY_ID");
	const char *sk = getenv("AWS_SECRET_ACCESS_KEY");
	const char *tok = getenv("AWS_SESSION_TOKEN");
	if (!ak || !*ak || !sk || !*sk)
		return -ENOENT;
	struct floe_s3_credentials c = {0};
	c.access_key_id = strdup(ak);
	c.secret_access_key = strdup(sk);
	if (tok && *tok)
		c.session_token = strdup(tok);
	if (!c.access_key_id || !c.secret_access_key || (tok && *tok && !c.session_token)) {
		floe_s3_credentials_fini(&c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

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

/* Takes a copy of [b, e) into *slot (replacing an earlier value). */
static int set_value(char **slot, const char *b, const char *e)
{
	char *s = dup_n(b, (size_t)(e - b));
	if (!s)
		return -ENOMEM;
	wipe_free(*slot);
	*slot = s;
	return 0;
}

int floe_s3_credentials_parse_ini(const char *p, size_t n, const char *profile,
				  struct floe_s3_credentials *out, size_t *err_line)
{
	if (!profile || !*profile)
		profile = "default";
	struct floe_s3_credentials c = {0};
	bool in_profile = false, seen_profile = false;
	size_t line_no = 0;
	int rc = 0;
	const char *end = p + n;
	for (const char *line = p; line < end;) {
		line_no++;
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *le = nl ? nl : end;
		const char *next = nl ? nl + 1 : end;
		if (le - line > MAX_LINE) {
			rc = -E2BIG;
			goto fail;
		}
		if (memchr(line, '\0', (size_t)(le - line))) {
			rc = -EINVAL;
			goto fail;
		}
		/* Indented lines are sub-properties (nested "s3 =" blocks in shared files):
		 * they belong to the key above and carry no credentials, so skip them. */
		bool indented = le > line && (*line == ' ' || *line == '\t');
		const char *b = line, *e = le;
		trim(&b, &e);
		line = next;
		if (b == e || *b == '#' || *b == ';')
			continue;
		if (*b == '[') {
			if (e[-1] != ']' || e - b < 3) {
				rc = -EINVAL;
				goto fail;
			}
			const char *nb = b + 1, *ne = e - 1;
			trim(&nb, &ne);
			/* ~/.aws/config spells sections "[profile name]"; accept it here too. */
			if (ne - nb > 8 && memcmp(nb, "profile", 7) == 0 && is_space(nb[7])) {
				nb += 8;
				trim(&nb, &ne);
			}
			in_profile = span_eq(nb, ne, profile);
			seen_profile |= in_profile;
			continue;
		}
		if (indented)
			continue;
		const char *eq = memchr(b, '=', (size_t)(e - b));
		if (!eq || eq == b) {
			rc = -EINVAL;
			goto fail;
		}
		if (!in_profile)
			continue;
		const char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
		trim(&kb, &ke);
		trim(&vb, &ve);
		if (span_eq(kb, ke, "aws_access_key_id"))
			rc = set_value(&c.access_key_id, vb, ve);
		else if (span_eq(kb, ke, "aws_secret_access_key"))
			rc = set_value(&c.secret_access_key, vb, ve);
		else if (span_eq(kb, ke, "aws_session_token"))
			rc = set_value(&c.session_token, vb, ve);
		if (rc)
			goto fail;
	}
	if (!seen_profile || !c.access_key_id || !*c.access_key_id || !c.secret_access_key ||
	    !*c.secret_access_key) {
		floe_s3_credentials_fini(&c);
		return -ENOENT;
	}
	if (c.session_token && !*c.session_token) {
		wipe_free(c.session_token);
		c.session_token = NULL;
	}
	*out = c;
	return 0;
fail:
	if (err_line)
		*err_line = line_no;
	floe_s3_credentials_fini(&c);
	return rc;
}

int floe_s3_credentials_from_shared_file(const char *path, const char *profile,
					 struct floe_s3_credentials *out)
{
	char *owned_path = NULL;
	if (!path || !*path) {
		path = getenv("AWS_SHARED_CREDENTIALS_FILE");
		if (!path || !*path) {
			const char *home = getenv("HOME");
			if (!home || !*home)
				return -ENOENT;
			size_t hn = strlen(home);
			owned_path = malloc(hn + sizeof("/.aws/credentials"));
			if (!owned_path)
				return -ENOMEM;
			memcpy(owned_path, home, hn);
			memcpy(owned_path + hn, "/.aws/credentials", sizeof("/.aws/credentials"));
			path = owned_path;
		}
	}
	if (!profile || !*profile) {
		profile = getenv("AWS_PROFILE");
		if (!profile || !*profile)
			profile = "default";
	}
	void *data = NULL;
	size_t len = 0;
	int rc = floe_fs_read_file(path, MAX_FILE, &data, &len);
	free(owned_path);
	if (rc)
		return rc;
	rc = floe_s3_credentials_parse_ini(data, len, profile, out, NULL);
	/* The file holds secrets: wipe our copy before giving the memory back. */
	floe_wipe(data, len);
	floe_fs_free(data);
	return rc;
}
