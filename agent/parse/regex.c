/* Named-group translation in front of regcomp/regexec. The translator walks the pattern
 * once, understanding just enough ERE (escapes, bracket expressions) to count capturing
 * parens the way regcomp will. */
#include "regex.h"

#include "fields.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <limits.h>
#include <regex.h>
#include <stdint.h>
#include <string.h>

/* Sanitizer runtimes intercept regexec and check strlen(string) + 1 readable bytes,
 * whatever REG_STARTEND says; under them (and without REG_STARTEND) the line is copied
 * into a terminated scratch buffer first. */
#if defined(__SANITIZE_ADDRESS__)
#define FLOE_REGEX_COPY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define FLOE_REGEX_COPY 1
#endif
#endif
#if !defined(REG_STARTEND) && !defined(FLOE_REGEX_COPY)
#define FLOE_REGEX_COPY 1
#endif

struct name {
	size_t off, len; /* into names */
	size_t group;	 /* sub-match index */
};

struct floe_regex {
	struct floe_alloc *alloc;
	regex_t re;
	bool nosub;
	size_t max_line;
	size_t nnames;
	struct name names[FLOE_REGEX_MAX_NAMES];
	char name_bytes[FLOE_REGEX_MAX_NAMES * 64];
	size_t nmatch;
	regmatch_t *pm; /* nmatch entries */
	char *copy;	/* max_line + 1 bytes, only without REG_STARTEND */
};

static bool name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

/* Index of the ']' closing the bracket expression opened at p[i], or n (or the index of
 * a NUL) if there is none. A ']' first (after an optional '^') is literal; "[:", "[." and
 * "[=" open classes that end at ":]", ".]" and "=]". */
static size_t bracket_end(const char *p, size_t n, size_t i)
{
	size_t j = i + 1;
	if (j < n && p[j] == '^')
		j++;
	if (j < n && p[j] == ']')
		j++;
	while (j < n && p[j] != ']') {
		if (p[j] == '[' && j + 1 < n &&
		    (p[j + 1] == ':' || p[j + 1] == '.' || p[j + 1] == '=')) {
			char d = p[j + 1];
			size_t k = j + 2;
			while (k + 1 < n && !(p[k] == d && p[k + 1] == ']'))
				k++;
			if (k + 1 >= n)
				return n;
			j = k + 2;
		} else {
			if (p[j] == 0)
				return j;
			j++;
		}
	}
	return j;
}

/* glibc's regcomp copies a repeated subexpression once per repetition, so stacked and
 * nested repetitions ("a+++++", "((a{99}){99}){99}") grow exponentially, in memory outside
 * our budget. This estimates the expanded size (an element's cost is multiplied by its
 * repetition bound, a group's cost is the sum of its elements) and refuses patterns
 * above FLOE_REGEX_MAX_COST. Runs before translation on the original pattern. */
#define FLOE_REGEX_MAX_COST 65536u
#define FLOE_REGEX_MAX_NEST 64

static int check_cost(const char *p, size_t n, struct floe_err *err)
{
	struct {
		uint64_t sum, last;
	} fr[FLOE_REGEX_MAX_NEST + 1];
	size_t d = 0;
	fr[0].sum = fr[0].last = 0;
	for (size_t i = 0; i < n;) {
		char c = p[i];
		uint64_t factor = 0; /* a repetition, when non-zero */
		if (c == '\\') {
			i += 2;
		} else if (c == '[') {
			i = bracket_end(p, n, i) + 1;
		} else if (c == '(') {
			if (d == FLOE_REGEX_MAX_NEST) {
				floe_err_set(err, FLOE_EINVAL, "groups nested deeper than %d",
					     FLOE_REGEX_MAX_NEST);
				return FLOE_EINVAL;
			}
			fr[d].sum += fr[d].last;
			fr[d].last = 0;
			d++;
			fr[d].sum = fr[d].last = 0;
			i++;
			continue; /* nothing grew */
		} else if (c == ')' && d > 0) {
			uint64_t g = fr[d].sum + fr[d].last;
			d--;
			fr[d].sum += fr[d].last;
			fr[d].last = g ? g : 1;
			i++;
			goto check;
		} else if (c == '|') {
			fr[d].sum += fr[d].last;
			fr[d].last = 0;
			i++;
			goto check;
		} else if (c == '*' || c == '+' || c == '?') {
			factor = 2;
			i++;
		} else if (c == '{' && i + 1 < n && p[i + 1] >= '0' && p[i + 1] <= '9') {
			uint64_t lo = 0, hi = 0;
			size_t j = i + 1;
			while (j < n && p[j] >= '0' && p[j] <= '9' && lo <= FLOE_REGEX_MAX_COST)
				lo = lo * 10 + (uint64_t)(p[j++] - '0');
			hi = lo;
			if (j < n && p[j] == ',') {
				j++;
				hi = 0;
				while (j < n && p[j] >= '0' && p[j] <= '9' &&
				       hi <= FLOE_REGEX_MAX_COST)
					hi = hi * 10 + (uint64_t)(p[j++] - '0');
				if (hi < lo)
					hi = lo;
			}
			factor = hi + 1;
			i = j < n && p[j] == '}' ? j + 1 : j;
		} else {
			i++;
		}
		if (factor) {
			fr[d].last *= factor;
		} else {
			fr[d].sum += fr[d].last;
			fr[d].last = 1;
		}
	check:
		/* Every step checks, so operands stay below about 2^20 and nothing wraps. */
		if (fr[d].last > FLOE_REGEX_MAX_COST || fr[d].sum > FLOE_REGEX_MAX_COST) {
			floe_err_set(err, FLOE_EINVAL,
				     "pattern too complex (repetitions expand beyond %u elements)",
				     FLOE_REGEX_MAX_COST);
			return FLOE_EINVAL;
		}
	}
	return 0;
}

/* The escapes of Perl-style patterns that people write in configurations, which POSIX
 * ERE lacks: glibc reads "\d" as a plain "d", so such a pattern would fail on every line
 * without a word. \d and \D become bracket expressions; \t, \n and \r the characters;
 * glibc's own \w \W \s \S \b \B \< \> \` \' and back-references \1..\9 stay; any other
 * letter is refused. A backslash before anything else quotes it, as in ERE. */
static int escape(char e, size_t at, struct floe_buf *out, struct floe_err *err)
{
	const char *rep = NULL;
	switch (e) {
	case 'd':
		rep = "[0-9]";
		break;
	case 'D':
		rep = "[^0-9]";
		break;
	case 't':
		rep = "\t";
		break;
	case 'n':
		rep = "\n";
		break;
	case 'r':
		rep = "\r";
		break;
	default:
		break;
	}
	if (rep)
		return floe_buf_append(out, rep, strlen(rep));
	bool letter = (e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z');
	if (letter && !strchr("wWsSbB", e)) {
		floe_err_set(
		    err, FLOE_EINVAL,
		    "unsupported escape \\%c at offset %zu (POSIX ERE with \\d \\D \\w \\W "
		    "\\s \\S \\b \\B \\t \\n \\r; use a bracket expression)",
		    e, at);
		return FLOE_EINVAL;
	}
	char two[2] = {'\\', e};
	return floe_buf_append(out, two, 2);
}

/* Copies the bracket expression p[i..j] (j its ']'), where a backslash is literal in ERE
 * but means a class in the Perl style: \d, \s and \w become the classes they name, and
 * \D, \S, \W (which a bracket cannot hold) are refused. */
static int bracket(const char *p, size_t i, size_t j, struct floe_buf *out, struct floe_err *err)
{
	int rc = 0;
	for (size_t k = i; k <= j && rc == 0; k++) {
		char e = k < j ? p[k + 1] : 0;
		const char *rep = NULL;
		if (p[k] == '\\' && k + 1 < j) {
			if (e == 'd')
				rep = "0-9";
			else if (e == 's')
				rep = "[:space:]";
			else if (e == 'w')
				rep = "[:alnum:]_";
			else if (e == 'D' || e == 'S' || e == 'W') {
				floe_err_set(
				    err, FLOE_EINVAL,
				    "\\%c inside a bracket expression at offset %zu cannot be "
				    "translated to POSIX ERE; write the class out",
				    e, k);
				return FLOE_EINVAL;
			}
		}
		if (rep) {
			rc = floe_buf_append(out, rep, strlen(rep));
			k++;
		} else {
			rc = floe_buf_putc(out, (uint8_t)p[k]);
		}
	}
	return rc;
}

/* Translates p into out (NUL-terminated), filling r's names. */
static int translate(struct floe_regex *r, const char *p, size_t n, struct floe_buf *out,
		     struct floe_err *err)
{
	size_t group = 0, nb = 0;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0;) {
		char c = p[i];
		if (c == 0) {
			floe_err_set(err, FLOE_EINVAL, "NUL byte in pattern at offset %zu", i);
			return FLOE_EINVAL;
		}
		if (c == '\\') {
			if (i + 1 >= n || p[i + 1] == 0) {
				floe_err_set(err, FLOE_EINVAL, "trailing backslash in pattern");
				return FLOE_EINVAL;
			}
			rc = escape(p[i + 1], i, out, err);
			i += 2;
			continue;
		}
		if (c == '[') {
			size_t j = bracket_end(p, n, i);
			if (j >= n || p[j] != ']') {
				floe_err_set(err, FLOE_EINVAL,
					     "unterminated bracket expression at offset %zu", i);
				return FLOE_EINVAL;
			}
			rc = bracket(p, i, j, out, err);
			i = j + 1;
			continue;
		}
		if (c == '(') {
			group++;
			if (i + 1 < n && p[i + 1] == '?') {
				size_t j = i + 2;
				if (j < n && p[j] == ':') {
					rc = floe_buf_putc(out, '(');
					i = j + 1;
					continue;
				}
				if (j < n && p[j] == 'P')
					j++;
				if (j >= n || p[j] != '<' || j + 1 >= n || !name_start(p[j + 1])) {
					floe_err_set(
					    err, FLOE_EINVAL,
					    "unsupported \"(?\" construct at offset %zu (only "
					    "(?<name>...), (?P<name>...) and (?:...), names being "
					    "[A-Za-z_][A-Za-z0-9_]*)",
					    i);
					return FLOE_EINVAL;
				}
				size_t ns = ++j;
				while (j < n && name_char(p[j]))
					j++;
				size_t nl = j - ns;
				if (j >= n || p[j] != '>' || nl > 64) {
					floe_err_set(
					    err, FLOE_EINVAL,
					    "bad group name at offset %zu (at most 64 bytes of "
					    "[A-Za-z0-9_], closed by '>')",
					    ns);
					return FLOE_EINVAL;
				}
				for (size_t k = 0; k < r->nnames; k++) {
					if (r->names[k].len == nl &&
					    memcmp(r->name_bytes + r->names[k].off, p + ns, nl) ==
						0) {
						floe_err_set(err, FLOE_EINVAL,
							     "duplicate group name \"%.*s\"",
							     (int)nl, p + ns);
						return FLOE_EINVAL;
					}
				}
				if (r->nnames == FLOE_REGEX_MAX_NAMES) {
					floe_err_set(err, FLOE_EINVAL, "more than %d named groups",
						     FLOE_REGEX_MAX_NAMES);
					return FLOE_EINVAL;
				}
				memcpy(r->name_bytes + nb, p + ns, nl);
				r->names[r->nnames].off = nb;
				r->names[r->nnames].len = nl;
				r->names[r->nnames].group = group;
				r->nnames++;
				nb += nl;
				rc = floe_buf_putc(out, '(');
				i = j + 1;
				continue;
			}
		}
		rc = floe_buf_putc(out, (uint8_t)c);
		i++;
	}
	if (rc == 0)
		rc = floe_buf_putc(out, 0);
	return rc;
}

int floe_regex_new(struct floe_alloc *a, const char *pattern, size_t plen, size_t max_line_bytes,
		   unsigned flags, struct floe_regex **out, struct floe_err *err)
{
	int rc = 0;
	bool compiled = false;
	struct floe_buf tb;
	size_t tmax;
	/* A translated escape takes at most 10 bytes for 2 ("\\w" in a bracket). */
	if (__builtin_mul_overflow(plen, 5, &tmax) || __builtin_add_overflow(tmax, 1, &tmax))
		return floe_err_set(err, FLOE_EINVAL, "pattern too long");
	floe_buf_init(&tb, a, tmax);
	struct floe_regex *r = floe_calloc(a, 1, sizeof(*r));
	if (!r) {
		rc = FLOE_ENOMEM;
		goto out;
	}
	r->alloc = a;
	r->nosub = flags & FLOE_REGEX_NOSUB;
	r->max_line = max_line_bytes;
	rc = check_cost(pattern, plen, err);
	if (rc == 0)
		rc = translate(r, pattern, plen, &tb, err);
	if (rc) {
		if (rc == FLOE_ELIMIT)
			rc = FLOE_EINVAL;
		goto out;
	}
	int cf =
	    REG_EXTENDED | (r->nosub ? REG_NOSUB : 0) | (flags & FLOE_REGEX_ICASE ? REG_ICASE : 0);
	int e = regcomp(&r->re, (const char *)tb.data, cf);
	if (e) {
		if (e == REG_ESPACE) {
			rc = FLOE_ENOMEM;
		} else {
			char msg[128];
			regerror(e, &r->re, msg, sizeof(msg));
			floe_err_set(err, FLOE_EINVAL, "bad regular expression: %s", msg);
			rc = FLOE_EINVAL;
		}
		goto out;
	}
	compiled = true;
	/* regcomp counted the groups itself; ours must agree or names would point at the
	 * wrong sub-matches. */
	for (size_t k = 0; k < r->nnames; k++) {
		if (r->names[k].group > r->re.re_nsub) {
			floe_err_set(err, FLOE_EINVAL, "group count mismatch");
			rc = FLOE_EINVAL;
			goto out;
		}
	}
	r->nmatch = r->nosub ? 1 : r->re.re_nsub + 1;
	r->pm = floe_calloc(a, r->nmatch, sizeof(regmatch_t));
	if (!r->pm) {
		rc = FLOE_ENOMEM;
		goto out;
	}
#ifdef FLOE_REGEX_COPY
	size_t cl;
	if (__builtin_add_overflow(max_line_bytes, 1, &cl) || !(r->copy = floe_malloc(a, cl))) {
		rc = FLOE_ENOMEM;
		goto out;
	}
#endif
out:
	floe_buf_fini(&tb);
	if (rc == 0) {
		*out = r;
		return 0;
	}
	if (r) {
		if (compiled)
			regfree(&r->re);
		floe_free(a, r->pm);
		floe_free(a, r->copy);
		floe_free(a, r);
	}
	if (!err || err->code != rc)
		floe_err_set(err, rc, "%s", floe_strerror(rc));
	return rc;
}

void floe_regex_free(struct floe_regex *r)
{
	if (!r)
		return;
	regfree(&r->re);
	floe_free(r->alloc, r->pm);
	floe_free(r->alloc, r->copy);
	floe_free(r->alloc, r);
}

size_t floe_regex_name_count(const struct floe_regex *r)
{
	return r->nnames;
}

const char *floe_regex_name(const struct floe_regex *r, size_t k, size_t *len)
{
	*len = r->names[k].len;
	return r->name_bytes + r->names[k].off;
}

static int run(struct floe_regex *r, const char *line, size_t len, bool *matched)
{
	*matched = false;
	if (len > r->max_line || len > (size_t)INT_MAX)
		return FLOE_ELIMIT;
	int e;
	const char *subject = line;
	static const char empty[1] = {0};
	if (!len)
		subject = empty;
#ifdef FLOE_REGEX_COPY
	if (len)
		memcpy(r->copy, line, len);
	r->copy[len] = 0;
	subject = r->copy;
#endif
#ifdef REG_STARTEND
	/* glibc and the BSDs read exactly [rm_so, rm_eo): no NUL needed, and NUL bytes in
	 * the line are subject bytes. */
	r->pm[0].rm_so = 0;
	r->pm[0].rm_eo = (regoff_t)len;
	e = regexec(&r->re, subject, r->nmatch, r->pm, REG_STARTEND);
#else
	/* A NUL in the copy ends the subject early. */
	e = regexec(&r->re, subject, r->nmatch, r->pm, 0);
#endif
	if (e == REG_NOMATCH)
		return 0;
	if (e == REG_ESPACE)
		return FLOE_ENOMEM;
	if (e)
		return FLOE_EINVAL;
	*matched = true;
	return 0;
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
	for (size_t k = 0; k < r->nnames; k++) {
		const regmatch_t *m = &r->pm[r->names[k].group];
		if (m->rm_so < 0 || m->rm_eo < m->rm_so || (size_t)m->rm_eo > len)
			continue;
		floe_fields_add(f, r->name_bytes + r->names[k].off, r->names[k].len,
				line + m->rm_so, (size_t)(m->rm_eo - m->rm_so));
	}
	return 0;
}
