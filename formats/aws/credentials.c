/* AWS credentials and the credential documents (see credentials.h), on formats/json and
 * the XML scanner. The documents hold secrets: the JSON document is wiped as it is freed,
 * and the fields copied out of the XML are wiped too. */
#include "credentials.h"

#include "formats/aws/xml.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/rfc3339.h"
#include "formats/base/wipe.h"
#include "formats/json/json.h"

#include <string.h>

int floe_aws_credentials_set(struct floe_alloc *a, const char *ak, const char *sk,
			     const char *tok, struct floe_aws_credentials *out)
{
	struct floe_aws_credentials c = {floe_strdup(a, ak), floe_strdup(a, sk), NULL, a};
	bool has_tok = tok && *tok;
	if (has_tok)
		c.session_token = floe_strdup(a, tok);
	if (!c.access_key_id || !c.secret_access_key || (has_tok && !c.session_token)) {
		floe_aws_credentials_fini(&c);
		return FLOE_ENOMEM;
	}
	*out = c;
	return 0;
}

void floe_aws_credentials_fini(struct floe_aws_credentials *c)
{
	if (!c)
		return;
	floe_wipe_free(c->alloc, c->access_key_id);
	floe_wipe_free(c->alloc, c->secret_access_key);
	floe_wipe_free(c->alloc, c->session_token);
	memset(c, 0, sizeof(*c));
}

/* ---- JSON (container, IMDS) ---------------------------------------------------------- */

/* Member name of root as a string of at most max bytes without a NUL: 0, FLOE_ENOTFOUND
 * when absent, FLOE_EFORMAT when unusable. */
static int member(const struct floe_json *root, const char *name, size_t max, const char **out)
{
	const struct floe_json *v = floe_json_get(root, name);
	if (!v)
		return FLOE_ENOTFOUND;
	size_t len;
	if (floe_json_str(v, out, &len) || len > max || strlen(*out) != len)
		return FLOE_EFORMAT;
	return 0;
}

/* The credentials of a parsed document. */
static int json_fields(struct floe_alloc *a, const struct floe_json *root,
		       struct floe_aws_credentials *out, int64_t *expiration, struct floe_err *e)
{
	const char *ak, *sk, *tok = NULL, *exp, *code;
	/* IMDS says whether the document holds credentials; the container agent does not. */
	if (member(root, "Code", 63, &code) == 0 && strcmp(code, "Success") != 0)
		return floe_err_set(e, FLOE_EFORMAT, "answer has Code %s", code);
	if (member(root, "AccessKeyId", FLOE_AWS_KEY_MAX, &ak) || !*ak ||
	    member(root, "SecretAccessKey", FLOE_AWS_KEY_MAX, &sk) || !*sk)
		return floe_err_set(e, FLOE_EFORMAT,
				    "answer lacks a usable AccessKeyId/SecretAccessKey");
	int rc = member(root, "Token", FLOE_AWS_TOKEN_MAX, &tok);
	if (rc && rc != FLOE_ENOTFOUND)
		return floe_err_set(e, FLOE_EFORMAT, "answer has an unusable Token");
	*expiration = 0;
	rc = member(root, "Expiration", 63, &exp);
	if (rc == 0 && floe_rfc3339_unix_s(exp, strlen(exp), expiration) != 0)
		return floe_err_set(e, FLOE_EFORMAT, "answer has a bad Expiration");
	if (rc && rc != FLOE_ENOTFOUND)
		return floe_err_set(e, FLOE_EFORMAT, "answer has an unusable Expiration");
	rc = floe_aws_credentials_set(a, ak, sk, tok, out);
	return rc ? floe_err_set(e, rc, "no memory for the credentials") : 0;
}

int floe_aws_cred_json(struct floe_alloc *a, const char *p, size_t n,
		       struct floe_aws_credentials *out, int64_t *expiration, struct floe_err *e)
{
	struct floe_json_doc *doc = NULL;
	struct floe_err je;
	floe_err_clear(&je);
	int rc = floe_json_parse(a, p, n, 0, &doc, &je);
	if (rc == FLOE_ENOMEM)
		return floe_err_set(e, rc, "no memory for the answer");
	if (rc)
		return floe_err_at(e, FLOE_EPARSE, je.offset, "malformed JSON answer: %s", je.msg);
	const struct floe_json *root = floe_json_root(doc);
	if (floe_json_is(root, FLOE_JSON_OBJECT))
		rc = json_fields(a, root, out, expiration, e);
	else
		rc = floe_err_at(e, FLOE_EPARSE, 0, "malformed JSON answer at byte 0");
	floe_json_doc_free_wiped(doc);
	return rc;
}

/* ---- XML (STS) ----------------------------------------------------------------------- */

struct sts_fields {
	char ak[FLOE_AWS_KEY_MAX + 1], sk[FLOE_AWS_KEY_MAX + 1], tok[FLOE_AWS_TOKEN_MAX + 1];
	char exp[64];
};

static int sts_fields(struct floe_alloc *a, const char *p, size_t n, struct sts_fields *f,
		      struct floe_aws_credentials *out, int64_t *expiration)
{
	static const char *const names[] = {"AccessKeyId", "SecretAccessKey", "SessionToken",
					    "Expiration"};
	char *dst[] = {f->ak, f->sk, f->tok, f->exp};
	size_t cap[] = {sizeof(f->ak), sizeof(f->sk), sizeof(f->tok), sizeof(f->exp)};
	for (size_t i = 0; i < 4; i++) {
		int rc = floe_aws_xml_find(a, p, n, names[i], dst[i], cap[i], NULL);
		if (rc == FLOE_ENOMEM)
			return rc;
		if (rc || !dst[i][0])
			return FLOE_EFORMAT;
	}
	if (floe_rfc3339_unix_s(f->exp, strlen(f->exp), expiration) != 0)
		return FLOE_EFORMAT;
	return floe_aws_credentials_set(a, f->ak, f->sk, f->tok, out);
}

int floe_aws_cred_sts(struct floe_alloc *a, const char *p, size_t n,
		      struct floe_aws_credentials *out, int64_t *expiration, struct floe_err *e)
{
	struct sts_fields *f = floe_calloc(a, 1, sizeof(*f));
	if (!f)
		return floe_err_set(e, FLOE_ENOMEM, "no memory for the answer");
	int rc = sts_fields(a, p, n, f, out, expiration);
	floe_wipe_free(a, f);
	if (rc == FLOE_ENOMEM)
		return floe_err_set(e, rc, "no memory for the credentials");
	if (rc)
		return floe_err_set(e, rc,
				    "answer lacks usable Credentials (AccessKeyId, SecretAccessKey, "
				    "SessionToken, Expiration)");
	return 0;
}
