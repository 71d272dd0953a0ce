/* floe_regex in a build without PCRE2 (FLOE_WITH_PCRE2=OFF): every pattern is refused, so that
 * `floe check` names the reason at the key that holds the pattern. */
#include "regex.h"

#include "formats/base/error.h"

bool floe_regex_available(void)
{
	return false;
}

int floe_regex_new(struct floe_alloc *a, const char *pattern, size_t plen, size_t max_line_bytes,
		   unsigned flags, struct floe_regex **out, struct floe_err *err)
{
	return floe_err_set(
	    err, FLOE_EUNSUPPORTED,
	    "this floe was built without PCRE2 (FLOE_WITH_PCRE2=OFF): regular expressions "
	    "are not available; use a built-in parser (json, logfmt, apache_common, "
	    "apache_combined, nginx_combined, syslog_file) or a floe built "
	    "with PCRE2");
}

void floe_regex_free(struct floe_regex *r) {}

bool floe_regex_jit(const struct floe_regex *r)
{
	return false;
}

bool floe_regex_jit_built(void)
{
	return false;
}

size_t floe_regex_name_count(const struct floe_regex *r)
{
	return 0;
}

const char *floe_regex_name(const struct floe_regex *r, size_t k, size_t *len)
{
	*len = 0;
	return "";
}

int floe_regex_test(struct floe_regex *r, const char *line, size_t len, bool *matched)
{
	*matched = false;
	return FLOE_EUNSUPPORTED;
}

int floe_regex_capture(struct floe_regex *r, const char *line, size_t len, struct floe_fields *f,
		       bool *matched)
{
	*matched = false;
	return FLOE_EUNSUPPORTED;
}
