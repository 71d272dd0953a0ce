/* libcurl, loaded when the S3 client first needs it. Linking libcurl puts it and its
 * closure (OpenSSL, GnuTLS, Kerberos, LDAP, SASL, libssh2, nghttp2: about 5.7 MiB of
 * resident memory measured in an idle agent) into every floe, also one with a local
 * warehouse that never sends a request. So the client calls the functions below, which
 * have libcurl's names and prototypes (the rest of platform/s3 stays written against
 * <curl/curl.h>), and curl_global_init, which every user of the client calls before any
 * other (s3.c, s3_credprov.c), dlopens libcurl.so.4 and resolves them all once. The
 * executable does not export these names, so libcurl's own calls still bind inside it.
 *
 * A missing library or function fails curl_global_init with CURLE_FAILED_INIT, logged
 * once with the loader's reason; the other functions then answer as libcurl does when
 * out of memory (NULL, or CURLE_FAILED_INIT), though no caller reaches them. */
#define CURL_DISABLE_TYPECHECK /* the type-checking macros would rename our definitions */
#include <curl/curl.h>

#include "platform/dl.h"
#include "platform/log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define LIBCURL "libcurl.so.4" /* the soname of libcurl 7.16 and later, every flavour */

static struct {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_reset) *easy_reset;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_easy_escape) *easy_escape;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_free) *free_;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
	__typeof__(curl_multi_init) *multi_init;
	__typeof__(curl_multi_add_handle) *multi_add_handle;
	__typeof__(curl_multi_remove_handle) *multi_remove_handle;
	__typeof__(curl_multi_perform) *multi_perform;
	__typeof__(curl_multi_poll) *multi_poll;
	__typeof__(curl_multi_info_read) *multi_info_read;
	__typeof__(curl_multi_cleanup) *multi_cleanup;
} fn;
/* Loaded by curl_global_init; asked before every other call (floe_dl_ready: a thread
 * that sees it loaded also sees fn). */
static struct floe_dl_once lib = FLOE_DL_ONCE_INIT;
static bool loaded(void)
{
	return floe_dl_ready(&lib);
}

/* Resolves every function or none (fn stays zero), logging why once. */
static int load(char *err, size_t cap)
{
	const struct floe_dl_sym syms[] = {
	    {"curl_global_init", &fn.global_init},
	    {"curl_easy_init", &fn.easy_init},
	    {"curl_easy_setopt", &fn.easy_setopt},
	    {"curl_easy_getinfo", &fn.easy_getinfo},
	    {"curl_easy_perform", &fn.easy_perform},
	    {"curl_easy_reset", &fn.easy_reset},
	    {"curl_easy_cleanup", &fn.easy_cleanup},
	    {"curl_easy_escape", &fn.easy_escape},
	    {"curl_easy_strerror", &fn.easy_strerror},
	    {"curl_free", &fn.free_},
	    {"curl_slist_append", &fn.slist_append},
	    {"curl_slist_free_all", &fn.slist_free_all},
	    {"curl_multi_init", &fn.multi_init},
	    {"curl_multi_add_handle", &fn.multi_add_handle},
	    {"curl_multi_remove_handle", &fn.multi_remove_handle},
	    {"curl_multi_perform", &fn.multi_perform},
	    {"curl_multi_poll", &fn.multi_poll},
	    {"curl_multi_info_read", &fn.multi_info_read},
	    {"curl_multi_cleanup", &fn.multi_cleanup},
	};
	int rc = floe_dl_load(LIBCURL, syms, sizeof(syms) / sizeof(syms[0]), err, cap);
	if (rc)
		floe_error("s3: %s: the S3 client needs libcurl 7.66 or later (Debian: the "
			   "libcurl4 package)",
			   err);
	/* A loaded library stays until the process ends. */
	return rc;
}

CURLcode curl_global_init(long flags)
{
	return floe_dl_once(&lib, load, NULL, 0) == 0 ? fn.global_init(flags) : CURLE_FAILED_INIT;
}

CURL *curl_easy_init(void)
{
	return loaded() ? fn.easy_init() : NULL;
}

/* The option's number says the type of its argument (CURLOPTTYPE_*), as libcurl reads
 * it: the argument is taken with that type and passed on. */
CURLcode curl_easy_setopt(CURL *c, CURLoption o, ...)
{
	if (!loaded())
		return CURLE_FAILED_INIT;
	va_list ap;
	va_start(ap, o);
	CURLcode rc;
	if (o < CURLOPTTYPE_OBJECTPOINT)
		rc = fn.easy_setopt(c, o, va_arg(ap, long));
	else if (o < CURLOPTTYPE_FUNCTIONPOINT)
		rc = fn.easy_setopt(c, o, va_arg(ap, void *));
	else if (o < CURLOPTTYPE_OFF_T)
		rc = fn.easy_setopt(c, o, va_arg(ap, void (*)(void)));
	else if (o < CURLOPTTYPE_BLOB)
		rc = fn.easy_setopt(c, o, va_arg(ap, curl_off_t));
	else
		rc = fn.easy_setopt(c, o, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

/* Every CURLINFO takes a pointer to where the answer goes. */
CURLcode curl_easy_getinfo(CURL *c, CURLINFO i, ...)
{
	if (!loaded())
		return CURLE_FAILED_INIT;
	va_list ap;
	va_start(ap, i);
	CURLcode rc = fn.easy_getinfo(c, i, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode curl_easy_perform(CURL *c)
{
	return loaded() ? fn.easy_perform(c) : CURLE_FAILED_INIT;
}

void curl_easy_reset(CURL *c)
{
	if (loaded())
		fn.easy_reset(c);
}

void curl_easy_cleanup(CURL *c)
{
	if (loaded())
		fn.easy_cleanup(c);
}

char *curl_easy_escape(CURL *c, const char *s, int len)
{
	return loaded() ? fn.easy_escape(c, s, len) : NULL;
}

const char *curl_easy_strerror(CURLcode rc)
{
	return loaded() ? fn.easy_strerror(rc) : "libcurl is not loaded";
}

void curl_free(void *p)
{
	if (loaded())
		fn.free_(p);
}

struct curl_slist *curl_slist_append(struct curl_slist *l, const char *s)
{
	return loaded() ? fn.slist_append(l, s) : NULL;
}

void curl_slist_free_all(struct curl_slist *l)
{
	if (loaded())
		fn.slist_free_all(l);
}

CURLM *curl_multi_init(void)
{
	return loaded() ? fn.multi_init() : NULL;
}

CURLMcode curl_multi_add_handle(CURLM *m, CURL *c)
{
	return loaded() ? fn.multi_add_handle(m, c) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_remove_handle(CURLM *m, CURL *c)
{
	return loaded() ? fn.multi_remove_handle(m, c) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_perform(CURLM *m, int *running)
{
	return loaded() ? fn.multi_perform(m, running) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_poll(CURLM *m, struct curl_waitfd *extra, unsigned int n, int timeout_ms,
			  int *ret)
{
	return loaded() ? fn.multi_poll(m, extra, n, timeout_ms, ret) : CURLM_INTERNAL_ERROR;
}

CURLMsg *curl_multi_info_read(CURLM *m, int *left)
{
	return loaded() ? fn.multi_info_read(m, left) : NULL;
}

CURLMcode curl_multi_cleanup(CURLM *m)
{
	return loaded() ? fn.multi_cleanup(m) : CURLM_INTERNAL_ERROR;
}
