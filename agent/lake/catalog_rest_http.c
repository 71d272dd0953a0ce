/* The REST catalog client's one exchange (catalog_rest_impl.h): each request with its
 * credentials (a bearer token, an OAuth2 token asked for when needed, a SigV4 signature),
 * and the catalog's answers mapped to floe's codes. */
#include "agent/lake/catalog_rest_impl.h"

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/lake/catalog_rest.h"
#include "agent/lake/catalog_rest_sign.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"
#include "formats/base/wipe.h"
#include "formats/iceberg/rest.h"
#include "platform/http.h"
#include "platform/log.h"
#include "platform/secret.h"
#include "platform/signal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static bool stopped(const void *ctx)
{
	(void)ctx;
	return floe_signal_stop_requested() && floe_signal_stop_age_ms() >= STOP_GRACE_MS;
}

void floe_catalog_rest_drop_token(struct floe_catalog_rest *c)
{
	if (c->token)
		floe_wipe_free(c->a, c->token);
	c->token = NULL;
	c->token_exp_us = 0;
}

/* The code of a transport failure: not sent (the catalog cannot be reached) or sent and
 * then cut or timed out (the outcome is unknown). */
static int transport_rc(int net, const struct floe_http_resp *r)
{
	if (net == FLOE_HTTP_UNREACHABLE)
		return FLOE_S3_ETRANSPORT;
	return r->timed_out ? FLOE_S3_ETIMEOUT : FLOE_S3_ETRANSPORT;
}

/* The code of an answer that is not a success: its message (the catalog's own, when the
 * body is an IcebergErrorResponse) into err. */
int floe_catalog_rest_status(struct floe_catalog_rest *c, const char *what, const struct floe_http_resp *r,
			     struct floe_err *err)
{
	struct floe_rest_error e;
	int s = r->status, rc;
	if (floe_rest_error_parse(r->data ? r->data : "", r->len, &e) != 0)
		snprintf(e.message, sizeof(e.message), "no error document");
	if (s == 409)
		rc = FLOE_ECONFLICT;
	else if (s == 404)
		rc = FLOE_ENOTFOUND;
	else if (s == 401 || s == 403 || s == 419)
		rc = FLOE_S3_EAUTH;
	else if (s >= 500 || s == 429)
		rc = FLOE_S3_EUNAVAILABLE;
	else
		rc = FLOE_S3_EHTTP;
	if (s == 429 || s == 503) {
		/* When to come back, if it said: a date against its own Date, else our clock
		 * with the offset learnt from it. */
		int64_t server_now = r->has_date ? r->date
						 : c->clock->wall_us(c->clock->ctx) / 1000000 +
						       c->clock_offset_s;
		int64_t wait_s = floe_http_retry_wait_s(r->retry_after_s, r->retry_at, server_now);
		if (wait_s > 0)
			c->not_before_us = c->clock->mono_us(c->clock->ctx) + wait_s * 1000000;
	}
	return floe_err_set(err, rc, "%s: %s answered %d %s: %s", c->cfg->lake.rest.uri, what, s,
			    e.type[0] ? e.type : "", e.message);
}

int64_t floe_catalog_rest_retry_after_us(const struct floe_catalog_rest *c)
{
	int64_t left =
	    c && c->not_before_us ? c->not_before_us - c->clock->mono_us(c->clock->ctx) : 0;
	return left > 0 ? left : 0;
}

/* An OAuth2 token for the configured client credentials (RFC 6749 4.4), form-encoded. */
static int fetch_token(struct floe_catalog_rest *c, struct floe_err *err)
{
	const struct floe_config *cfg = c->cfg;
	char *cred = NULL;
	int rc = floe_secret_resolve(c->a, cfg->lake.rest.credential, &cred);
	if (rc)
		return floe_err_set(err, FLOE_EINVAL, "lake.catalog.credential (%s) does not resolve: %s",
				    cfg->lake.rest.credential, floe_strerror(rc));
	char *colon = strchr(cred, ':');
	struct floe_buf b;
	floe_buf_init(&b, c->a, TOKEN_MAX);
	rc = floe_buf_puts(&b, "grant_type=client_credentials&client_id=");
	if (rc == 0)
		rc = floe_uri_put(&b, cred, colon ? (size_t)(colon - cred) : strlen(cred), false);
	if (rc == 0 && colon && (rc = floe_buf_puts(&b, "&client_secret=")) == 0)
		rc = floe_uri_put(&b, colon + 1, strlen(colon + 1), false);
	if (rc == 0 && (rc = floe_buf_puts(&b, "&scope=")) == 0)
		rc = floe_uri_put(&b, cfg->lake.rest.scope, strlen(cfg->lake.rest.scope), false);
	floe_secret_free(c->a, cred);
	if (rc) {
		floe_wipe(b.data, b.len);
		floe_buf_fini(&b);
		return floe_err_set(err, rc, "%s", floe_strerror(rc));
	}
	const char *hdrs[] = {"Content-Type: application/x-www-form-urlencoded", "Accept: application/json",
			      NULL};
	struct floe_http_req rq = {.method = "POST",
				   .url = cfg->lake.rest.oauth2_server_uri,
				   .headers = hdrs,
				   .body = (const char *)b.data,
				   .body_len = b.len,
				   .max = TOKEN_MAX,
				   .stopped = stopped};
	struct floe_http_resp r = {0};
	char why[300] = "";
	int net = floe_http_run(c->http, &rq, &r, why, sizeof(why));
	floe_wipe(b.data, b.len);
	floe_buf_fini(&b);
	if (net == -ECANCELED)
		rc = floe_err_set(err, FLOE_S3_ESTOPPED, "%s: cut by the stop", cfg->lake.rest.oauth2_server_uri);
	else if (net < 0)
		rc = floe_err_set(err, net, "%s", floe_strerror(net));
	else if (net != FLOE_HTTP_ANSWERED)
		rc = floe_err_set(err, transport_rc(net, &r), "%s: %s", cfg->lake.rest.oauth2_server_uri, why);
	else if (r.status != 200)
		rc = floe_catalog_rest_status(c, "the token request", &r, err);
	else {
		struct floe_rest_token tok = {0};
		struct floe_err pe;
		if ((rc = floe_rest_token_parse(c->a, r.data ? r.data : "", r.len, &tok, &pe)))
			rc = floe_err_set(err, FLOE_S3_EPROTO, "%s: the token answer: %s",
					  cfg->lake.rest.oauth2_server_uri, floe_err_text(&pe, rc));
		else {
			floe_catalog_rest_drop_token(c);
			c->token = tok.access_token;
			int64_t now = c->clock->mono_us(c->clock->ctx);
			int64_t life = tok.expires_in_s >= 0 && tok.expires_in_s < INT64_MAX / 2000000
					   ? tok.expires_in_s * 1000000
					   : -1;
			c->token_exp_us = life >= 0 ? now + life : 0;
			c->token_margin_us = life / 10 < TOKEN_MARGIN_US ? life / 10 : TOKEN_MARGIN_US;
		}
	}
	floe_http_resp_fini(&r);
	return rc;
}

/* The Authorization header into hdr[cap] ("" when the catalog is open). */
static int authorization(struct floe_catalog_rest *c, char *hdr, size_t cap, struct floe_err *err)
{
	const struct floe_config *cfg = c->cfg;
	hdr[0] = '\0';
	if (cfg->lake.rest.token) {
		char *tok = NULL;
		int rc = floe_secret_resolve(c->a, cfg->lake.rest.token, &tok);
		if (rc)
			return floe_err_set(err, FLOE_EINVAL, "lake.catalog.token (%s) does not resolve: %s",
					    cfg->lake.rest.token, floe_strerror(rc));
		rc = floe_fmt(hdr, cap, "Authorization: Bearer %s", tok);
		floe_secret_free(c->a, tok);
		return rc ? floe_err_set(err, FLOE_ELIMIT, "lake.catalog.token is too long") : 0;
	}
	if (!cfg->lake.rest.credential)
		return 0;
	int64_t now = c->clock->mono_us(c->clock->ctx);
	if (c->token && c->token_exp_us && now + c->token_margin_us >= c->token_exp_us)
		floe_catalog_rest_drop_token(c); /* refreshed before it expires */
	int rc;
	if (!c->token && (rc = fetch_token(c, err)))
		return rc;
	if (floe_fmt(hdr, cap, "Authorization: Bearer %s", c->token))
		return floe_err_set(err, FLOE_ELIMIT, "the catalog's token is too long");
	return 0;
}


/* k's URL into url[cap]: the catalog's, k's path, and its query parameter encoded; the
 * length without the query into *base_len (what SigV4 signs as the path). */
static int request_url(struct floe_catalog_rest *c, const struct rest_call *k, char *url, size_t cap,
		       size_t *base_len, struct floe_err *err)
{
	bool whole = strstr(k->path, "://") != NULL;
	if (floe_fmt(url, cap, "%s%s", whole ? "" : c->cfg->lake.rest.uri, k->path))
		return floe_err_set(err, FLOE_ELIMIT, "the request URL is too long");
	*base_len = strlen(url);
	if (!k->qname)
		return 0;
	struct floe_buf q;
	floe_buf_init(&q, c->a, cap);
	int rc = floe_uri_put(&q, k->qvalue, strlen(k->qvalue), false);
	if (rc == 0)
		rc = floe_buf_terminate(&q);
	if (rc == 0 && floe_fmt(url + *base_len, cap - *base_len, "?%s=%s", k->qname, (char *)q.data))
		rc = FLOE_ELIMIT;
	floe_buf_fini(&q);
	return rc ? floe_err_set(err, rc, "the request URL: %s", floe_strerror(rc)) : 0;
}

/* Learns the catalog's clock from an answer's Date. A device whose clock is off by more
 * than SigV4's 15 minutes (one that started at its last saved time, an RTC running ahead)
 * would have every signed request refused: it signs on the catalog's clock instead.
 * Offsets under a minute are the Date's 1 s resolution and the latency. Returns whether
 * the offset moved by a minute or more. */
static bool learn_clock(struct floe_catalog_rest *c, const struct floe_http_resp *r)
{
	if (!r->has_date)
		return false;
	int64_t diff = r->date - c->clock->wall_us(c->clock->ctx) / 1000000;
	int64_t next = (diff >= 60 || diff <= -60) ? diff : 0;
	int64_t moved = next - c->clock_offset_s;
	if (moved > -60 && moved < 60)
		return false;
	c->clock_offset_s = next;
	floe_warn("catalog: %s: this device's clock is %" PRId64 " s %s the catalog's (its Date): "
		  "requests are signed on the catalog's clock",
		  c->cfg->lake.rest.uri, next < 0 ? -next : next, next < 0 ? "ahead of" : "behind");
	return true;
}

int floe_catalog_rest_call(struct floe_catalog_rest *c, const struct rest_call *k, struct floe_http_resp *r,
			   bool *sent, struct floe_err *err)
{
	/* auth: "Original-" (a signed request's bearer token goes under that name, its
	 * Authorization being the signature's), then the header. */
	char url[4096], auth[8192], inm[300], key[64];
	size_t base_len = 0;
	struct floe_rest_signed sg;
	*sent = false;
	int rc0 = request_url(c, k, url, sizeof(url), &base_len, err);
	if (rc0)
		return rc0;
	for (int tries = 0;; tries++) {
		const char *hdrs[13 + SIGN_EXTRA_MAX];
		size_t n = 0;
		int rc = authorization(c, auth + 9, sizeof(auth) - 9, err);
		if (rc)
			return rc;
		if (auth[9] && c->signer)
			hdrs[n++] = (char *)memcpy(auth, "Original-", 9);
		else if (auth[9])
			hdrs[n++] = auth + 9;
		if (c->signer) {
			char base[sizeof(url)];
			memcpy(base, url, base_len);
			base[base_len] = '\0';
			int64_t now_s = c->clock->wall_us(c->clock->ctx) / 1000000 + c->clock_offset_s;
			if ((rc = floe_rest_signer_sign(c->signer, now_s,
							k->method, base, k->qname, k->qvalue, k->body, k->body_len,
							&sg, err))) {
				floe_wipe(auth, sizeof(auth));
				return rc;
			}
			hdrs[n++] = sg.host;
			hdrs[n++] = sg.date;
			hdrs[n++] = sg.sha;
			hdrs[n++] = sg.authorization;
			if (sg.token[0])
				hdrs[n++] = sg.token;
		}
		hdrs[n++] = "Accept: application/json";
		/* Storage credentials for the table's location, if the catalog vends them. */
		hdrs[n++] = "X-Iceberg-Access-Delegation: vended-credentials";
		if (k->body)
			hdrs[n++] = "Content-Type: application/json";
		if (k->etag && k->etag[0] && floe_fmt(inm, sizeof(inm), "If-None-Match: %s", k->etag) == 0)
			hdrs[n++] = inm;
		for (size_t i = 0; i < k->nextra && i < SIGN_EXTRA_MAX; i++)
			hdrs[n++] = k->extra[i];
		char uuid[37];
		if (k->mutation && c->conf && floe_rest_config_idempotency_ms(c->conf) > 0 &&
		    floe_env_uuid4(c->rand, uuid) == 0) {
			snprintf(key, sizeof(key), "Idempotency-Key: %s", uuid);
			hdrs[n++] = key;
		}
		hdrs[n] = NULL;
		struct floe_http_req rq = {.method = k->method,
					   .url = url,
					   .headers = hdrs,
					   .body = k->body,
					   .body_len = k->body_len,
					   .once = k->mutation,
					   .max = k->max,
					   .stopped = stopped};
		char why[300] = "";
		floe_http_resp_fini(r);
		int net = floe_http_run(c->http, &rq, r, why, sizeof(why));
		floe_wipe(auth, sizeof(auth));
		if (c->signer)
			floe_rest_signed_wipe(&sg);
		if (net == -ECANCELED) { /* the stop's grace ran out: the request may have arrived */
			*sent = true;
			return floe_err_set(err, FLOE_S3_ESTOPPED, "%s %s: cut by the stop", k->method, url);
		}
		if (net < 0)
			return floe_err_set(err, net, "%s %s: %s", k->method, url, floe_strerror(net));
		if (net != FLOE_HTTP_ANSWERED) {
			*sent = net == FLOE_HTTP_FAILED;
			/* An answer past the cap is no catalog document (a proxy's page, a broken
			 * catalog): the protocol broken, not a connection to wait for. */
			if (r->too_big)
				return floe_err_set(err, FLOE_S3_EPROTO, "%s %s: %s: not a catalog's answer", k->method,
						    url, why);
			return floe_err_set(err, transport_rc(net, r), "%s %s: %s", k->method, url, why);
		}
		*sent = true;
		/* Signed on a clock the catalog's Date says is off: refused (403), signed again
		 * on the catalog's clock, once. */
		if (c->signer && learn_clock(c, r) && tries == 0 && (r->status == 403 || r->status == 401))
			continue;
		bool refused = r->status == 401 || r->status == 419;
		if (!refused || tries > 0 || !c->cfg->lake.rest.credential)
			return 0;
		floe_info("catalog: %s refused the token (%d): asking for a new one", c->cfg->lake.rest.uri,
			  r->status);
		floe_catalog_rest_drop_token(c);
	}
}
