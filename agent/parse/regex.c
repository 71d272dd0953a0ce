/* PCRE2 behind floe_regex: compile once (JIT where PCRE2 has it), match under a work
 * budget scaled to the line, and map named groups to fields. PCRE2's own allocations go
 * through the regex's struct floe_alloc by a general context. */
#include "regex.h"

#include "fields.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdint.h>
#include <string.h>

#define FLOE_REGEX_MAX_NEST 64

struct name {
	const char *p; /* into the compiled pattern's name table */
	size_t len;
	uint32_t group;
};

struct floe_regex {
	struct floe_alloc *alloc;
	pcre2_general_context *gctx;
	pcre2_compile_context *cctx;
	pcre2_match_context *mctx;
	pcre2_code *code;
	pcre2_match_data *md;
	pcre2_jit_stack *jstack;
	bool jit, nosub;
	/* The JIT made code for the pattern: lines go straight to it (pcre2_jit_match), not
	 * through pcre2_match's checks of its arguments, which cost about 120 instructions a
	 * line and check nothing a line can change (a pattern in UTF mode is compiled with
	 * PCRE2_MATCH_INVALID_UTF, so no subject is checked for UTF either way). Not with
	 * (*NO_JIT), which pcre2_jit_compile takes as success without making code. */
	bool jit_code;
	size_t max_line;
	size_t nnames;
	struct name names[FLOE_REGEX_MAX_NAMES];
	/* The names again as floe_fields_add_ids takes them, by index (a length fits its
	 * byte: PCRE2 caps a name at 32 or 128 bytes, and read_names refuses a longer one). */
	const char *name_p[FLOE_REGEX_MAX_NAMES];
	unsigned char name_len[FLOE_REGEX_MAX_NAMES];
};

static void *gmalloc(PCRE2_SIZE n, void *data)
{
	return floe_malloc(data, n);
}

static void gfree(void *p, void *data)
{
	floe_free(data, p);
}

bool floe_regex_available(void)
{
	return true;
}

/* Fills err with PCRE2's message for code at offset off of the pattern, and the bytes
 * before it so that the place can be found in a long pattern. */
static int compile_error(struct floe_err *err, int code, size_t off, const char *p, size_t n)
{
	if (code == PCRE2_ERROR_NOMEMORY || code == PCRE2_ERROR_HEAP_FAILED)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	PCRE2_UCHAR msg[256];
	if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
		strcpy((char *)msg, "unknown PCRE2 error");
	if (off > n)
		off = n;
	size_t from = off > 24 ? off - 24 : 0;
	char ctx[80];
	size_t k = 0;
	for (size_t i = from; i < off && k + 5 < sizeof(ctx); i++) {
		unsigned char c = (unsigned char)p[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			ctx[k++] = (char)c;
		} else {
			static const char hex[] = "0123456789abcdef";
			ctx[k++] = '\\';
			ctx[k++] = 'x';
			ctx[k++] = hex[c >> 4];
			ctx[k++] = hex[c & 15];
		}
	}
	ctx[k] = '\0';
	return floe_err_at(err, FLOE_EINVAL, off,
			   "%s at offset %zu of the pattern (after \"%s%s\")", (const char *)msg,
			   off, from ? "..." : "", ctx);
}

/* The start-of-pattern settings PCRE2 accepts only at the very start ("(*UTF)",
 * "(*LIMIT_MATCH=9)"): they must stay in front of the scan that wrap() adds. Backtracking
 * verbs such as (*COMMIT) are not among them. Returns the bytes they take. */
static size_t leading_settings(const char *p, size_t n)
{
	static const char *const names[] = {"UTF",
					    "UTF8",
					    "UCP",
					    "NOTEMPTY",
					    "NOTEMPTY_ATSTART",
					    "NO_AUTO_POSSESS",
					    "NO_DOTSTAR_ANCHOR",
					    "NO_JIT",
					    "NO_START_OPT",
					    "CR",
					    "LF",
					    "CRLF",
					    "ANYCRLF",
					    "ANY",
					    "NUL",
					    "BSR_ANYCRLF",
					    "BSR_UNICODE",
					    "LIMIT_MATCH",
					    "LIMIT_DEPTH",
					    "LIMIT_HEAP",
					    "LIMIT_RECURSION",
					    NULL};
	size_t at = 0;
	while (at + 3 < n && p[at] == '(' && p[at + 1] == '*') {
		size_t s = at + 2, e = s;
		while (e < n && ((p[e] >= 'A' && p[e] <= 'Z') || p[e] == '_' ||
				 (p[e] >= '0' && p[e] <= '9')))
			e++;
		bool known = false;
		for (size_t k = 0; names[k] && !known; k++)
			known = strlen(names[k]) == e - s && memcmp(names[k], p + s, e - s) == 0;
		if (!known)
			break;
		if (e < n && p[e] == '=')
			for (e++; e < n && p[e] >= '0' && p[e] <= '9'; e++)
				;
		if (e >= n || p[e] != ')')
			break;
		at = e + 1;
	}
	return at;
}

static bool contains(const char *p, size_t n, const char *lit)
{
	size_t m = strlen(lit);
	for (size_t i = 0; i + m <= n; i++)
		if (memcmp(p + i, lit, m) == 0)
			return true;
	return false;
}

/* PCRE2 restarts its match limit at each position it tries, so an unanchored pattern
 * could spend the budget once per byte of the line. The pattern is compiled again as
 * "settings (?:(?s:.))*?(?:pattern\E)", anchored: one match in which every position
 * skipped is one counted step of the same budget. The lazy group finds the leftmost
 * position, as PCRE2's own scan does, and captures keep their numbers (the groups added
 * capture nothing). "\E" ends a "\Q" left open; when the ")" falls into a "#" comment of
 * (?x), a newline ends the comment. Recursion into the whole pattern would recurse
 * into the scan, so such patterns must be anchored. */
static int wrap(struct floe_regex *r, const char *p, size_t n, uint32_t opts, struct floe_err *err)
{
	if (contains(p, n, "(?R") || contains(p, n, "(?0)") || contains(p, n, "\\g<0>") ||
	    contains(p, n, "\\g'0'"))
		return floe_err_set(
		    err, FLOE_EINVAL,
		    "a pattern that recurses into itself as a whole must be anchored "
		    "(start it with ^)");
	static const char pre[] = "(?:(?s:.))*?(?:", post1[] = "\\E)", post2[] = "\\E\n)";
	size_t lead = leading_settings(p, n), cap = n + sizeof(pre) + sizeof(post2);
	char *w = floe_malloc(r->alloc, cap);
	if (!w)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	int rc = FLOE_EINVAL;
	for (int attempt = 0; attempt < 2 && rc; attempt++) {
		const char *post = attempt ? post2 : post1;
		size_t k = 0;
		memcpy(w + k, p, lead);
		k += lead;
		memcpy(w + k, pre, sizeof(pre) - 1);
		k += sizeof(pre) - 1;
		memcpy(w + k, p + lead, n - lead);
		k += n - lead;
		memcpy(w + k, post, strlen(post));
		k += strlen(post);
		int ec = 0;
		PCRE2_SIZE eo;
		/* The scan's two groups nest around the pattern, which was already held to
		 * FLOE_REGEX_MAX_NEST on its own. */
		pcre2_set_parens_nest_limit(r->cctx, FLOE_REGEX_MAX_NEST + 2);
		pcre2_code *c =
		    pcre2_compile((PCRE2_SPTR)w, k, opts | PCRE2_ANCHORED, &ec, &eo, r->cctx);
		pcre2_set_parens_nest_limit(r->cctx, FLOE_REGEX_MAX_NEST);
		uint32_t a = 0, b = 1;
		if (c && pcre2_pattern_info(r->code, PCRE2_INFO_CAPTURECOUNT, &a) == 0 &&
		    pcre2_pattern_info(c, PCRE2_INFO_CAPTURECOUNT, &b) == 0 && a == b) {
			pcre2_code_free(r->code);
			r->code = c;
			rc = 0;
		} else {
			pcre2_code_free(c);
			if (ec == PCRE2_ERROR_NOMEMORY || ec == PCRE2_ERROR_HEAP_FAILED)
				rc = FLOE_ENOMEM;
		}
	}
	floe_free(r->alloc, w);
	if (rc == FLOE_ENOMEM)
		return floe_err_set(err, rc, "%s", floe_strerror(rc));
	if (rc)
		return floe_err_set(err, rc,
				    "the pattern cannot be tried at every position of a line; "
				    "anchor it (start it with ^)");
	return 0;
}

/* The named groups, in group order (PCRE2's table is sorted by name). */
static int read_names(struct floe_regex *r, struct floe_err *err)
{
	uint32_t count = 0, size = 0;
	PCRE2_SPTR table = NULL;
	pcre2_pattern_info(r->code, PCRE2_INFO_NAMECOUNT, &count);
	if (count == 0 || r->nosub)
		return 0;
	if (count > FLOE_REGEX_MAX_NAMES)
		return floe_err_set(err, FLOE_EINVAL, "more than %d named groups",
				    FLOE_REGEX_MAX_NAMES);
	pcre2_pattern_info(r->code, PCRE2_INFO_NAMEENTRYSIZE, &size);
	pcre2_pattern_info(r->code, PCRE2_INFO_NAMETABLE, &table);
	for (uint32_t i = 0; i < count; i++) {
		const unsigned char *e = table + (size_t)i * size;
		struct name nm = {(const char *)e + 2, strlen((const char *)e + 2),
				  (uint32_t)e[0] << 8 | e[1]};
		size_t at = r->nnames++;
		while (at > 0 && r->names[at - 1].group > nm.group) {
			r->names[at] = r->names[at - 1];
			at--;
		}
		r->names[at] = nm;
	}
	for (size_t k = 0; k < r->nnames; k++) {
		if (r->names[k].len > 255)
			return floe_err_set(err, FLOE_EINVAL, "a group name over 255 bytes");
		r->name_p[k] = r->names[k].p;
		r->name_len[k] = (unsigned char)r->names[k].len;
	}
	return 0;
}

/* Compiles, JIT-compiles where possible, and sets up the match: r->code on success. */
static int compile(struct floe_regex *r, const char *p, size_t n, unsigned flags,
		   struct floe_err *err)
{
	uint32_t opts = flags & FLOE_REGEX_ICASE ? PCRE2_CASELESS : 0;
	if (r->nosub)
		opts |= PCRE2_NO_AUTO_CAPTURE;
	int ec;
	PCRE2_SIZE eo;
	r->code = pcre2_compile((PCRE2_SPTR)p, n, opts, &ec, &eo, r->cctx);
	if (!r->code)
		return compile_error(err, ec, eo, p, n);
	uint32_t all = 0;
	pcre2_pattern_info(r->code, PCRE2_INFO_ALLOPTIONS, &all);
	/* Lines are bytes (the agent runs in the C locale): only a pattern that asks for
	 * (*UTF) itself is compiled in UTF mode, and then again so that invalid UTF-8 in a
	 * line is a non-match where it stands rather than an error for the whole line.
	 * (PCRE2_MATCH_INVALID_UTF implies UTF, so it cannot be set for every pattern.) */
	if (all & PCRE2_UTF) {
		opts |= PCRE2_MATCH_INVALID_UTF;
		pcre2_code_free(r->code);
		r->code = pcre2_compile((PCRE2_SPTR)p, n, opts, &ec, &eo, r->cctx);
		if (!r->code)
			return compile_error(err, ec, eo, p, n);
		pcre2_pattern_info(r->code, PCRE2_INFO_ALLOPTIONS, &all);
	}
	int rc = all & PCRE2_ANCHORED ? 0 : wrap(r, p, n, opts, err);
	if (rc == 0)
		rc = read_names(r, err);
	if (rc)
		return rc;
	uint32_t have_jit = 0;
	pcre2_config(PCRE2_CONFIG_JIT, &have_jit);
	/* A pattern PCRE2's JIT cannot take (or no memory for its code) still matches,
	 * interpreted. */
	r->jit = have_jit && pcre2_jit_compile(r->code, PCRE2_JIT_COMPLETE) == 0;
	size_t jit_size = 0;
	r->jit_code = r->jit && pcre2_pattern_info(r->code, PCRE2_INFO_JITSIZE, &jit_size) == 0 &&
		      jit_size > 0;
	r->md = r->nosub ? pcre2_match_data_create(1, r->gctx)
			 : pcre2_match_data_create_from_pattern(r->code, r->gctx);
	if (!r->md)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	if (r->jit) {
		r->jstack = pcre2_jit_stack_create(32 << 10, FLOE_REGEX_JIT_STACK, r->gctx);
		if (!r->jstack)
			return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
		pcre2_jit_stack_assign(r->mctx, NULL, r->jstack);
	}
	return 0;
}

int floe_regex_new(struct floe_alloc *a, const char *pattern, size_t plen, size_t max_line_bytes,
		   unsigned flags, struct floe_regex **out, struct floe_err *err)
{
	int rc = 0;
	if (plen > FLOE_REGEX_MAX_PATTERN)
		return floe_err_set(err, FLOE_EINVAL, "pattern longer than %d bytes",
				    FLOE_REGEX_MAX_PATTERN);
	const char *nul = plen ? memchr(pattern, 0, plen) : NULL;
	if (nul)
		return floe_err_at(err, FLOE_EINVAL, (size_t)(nul - pattern),
				   "NUL byte at offset %zu of the pattern",
				   (size_t)(nul - pattern));
	struct floe_regex *r = floe_calloc(a, 1, sizeof(*r));
	if (!r)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	r->alloc = a;
	r->nosub = flags & FLOE_REGEX_NOSUB;
	r->max_line = max_line_bytes;
	r->gctx = pcre2_general_context_create(gmalloc, gfree, a);
	r->cctx = r->gctx ? pcre2_compile_context_create(r->gctx) : NULL;
	r->mctx = r->gctx ? pcre2_match_context_create(r->gctx) : NULL;
	if (!r->cctx || !r->mctx) {
		rc = floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
		goto out;
	}
	/* Nesting beyond this is no real log format, and bounds the compiler's recursion. */
	pcre2_set_parens_nest_limit(r->cctx, FLOE_REGEX_MAX_NEST);
	pcre2_set_heap_limit(r->mctx, FLOE_REGEX_HEAP_KIB);
	pcre2_set_depth_limit(r->mctx, FLOE_REGEX_MAX_STEPS);
	rc = compile(r, pattern, plen, flags, err);
out:
	if (rc) {
		floe_regex_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void floe_regex_free(struct floe_regex *r)
{
	if (!r)
		return;
	pcre2_jit_stack_free(r->jstack);
	pcre2_match_data_free(r->md);
	pcre2_code_free(r->code);
	pcre2_match_context_free(r->mctx);
	pcre2_compile_context_free(r->cctx);
	pcre2_general_context_free(r->gctx);
	floe_free(r->alloc, r);
}

bool floe_regex_jit(const struct floe_regex *r)
{
	return r->jit;
}

bool floe_regex_jit_built(void)
{
	uint32_t have_jit = 0;
	pcre2_config(PCRE2_CONFIG_JIT, &have_jit);
	return have_jit != 0;
}

size_t floe_regex_name_count(const struct floe_regex *r)
{
	return r->nnames;
}

const char *floe_regex_name(const struct floe_regex *r, size_t k, size_t *len)
{
	*len = r->names[k].len;
	return r->names[k].p;
}

static int run(struct floe_regex *r, const char *line, size_t len, bool *matched)
{
	*matched = false;
	if (len > r->max_line)
		return FLOE_ELIMIT;
	size_t steps = FLOE_REGEX_WORK / (len + 1);
	if (steps < FLOE_REGEX_MIN_STEPS)
		steps = FLOE_REGEX_MIN_STEPS;
	if (steps > FLOE_REGEX_MAX_STEPS)
		steps = FLOE_REGEX_MAX_STEPS;
	pcre2_set_match_limit(r->mctx, (uint32_t)steps);
	/* PCRE2 refuses a NULL subject even when it is empty. */
	static const char empty[1] = {0};
	PCRE2_SPTR subject = (PCRE2_SPTR)(len ? line : empty);
	int rc = r->jit_code ? pcre2_jit_match(r->code, subject, len, 0, 0, r->md, r->mctx)
			     : pcre2_match(r->code, subject, len, 0, 0, r->md, r->mctx);
	if (rc >= 0) {
		*matched = true;
		return 0;
	}
	switch (rc) {
	case PCRE2_ERROR_NOMATCH:
		return 0;
	case PCRE2_ERROR_MATCHLIMIT:
	case PCRE2_ERROR_DEPTHLIMIT:
	case PCRE2_ERROR_HEAPLIMIT:
	case PCRE2_ERROR_JIT_STACKLIMIT:
		return FLOE_ELIMIT;
	case PCRE2_ERROR_NOMEMORY:
		return FLOE_ENOMEM;
	default:
		return FLOE_EPARSE;
	}
}

int floe_regex_test(struct floe_regex *r, const char *line, size_t len, bool *matched)
{
	return run(r, line, len, matched);
}

int floe_regex_capture(struct floe_regex *r, const char *line, size_t len, struct floe_fields *f,
		       bool *matched)
{
	int rc = run(r, line, len, matched);
	if (rc || !*matched || r->nosub)
		return rc;
	const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
	uint32_t pairs = pcre2_get_ovector_count(r->md);
	/* The groups that took part, given to the fields in one call. */
	uint8_t ids[FLOE_REGEX_MAX_NAMES];
	const char *vals[FLOE_REGEX_MAX_NAMES];
	size_t vlens[FLOE_REGEX_MAX_NAMES], n = 0;
	for (size_t k = 0; k < r->nnames; k++) {
		uint32_t g = r->names[k].group;
		if (g >= pairs || ov[2 * g] == PCRE2_UNSET || ov[2 * g + 1] < ov[2 * g] ||
		    ov[2 * g + 1] > len)
			continue;
		ids[n] = (uint8_t)k;
		vals[n] = line + ov[2 * g];
		vlens[n] = (size_t)(ov[2 * g + 1] - ov[2 * g]);
		n++;
	}
	floe_fields_add_ids(f, n, ids, r->name_p, r->name_len, vals, vlens);
	return 0;
}
