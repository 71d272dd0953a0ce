/* Configuration loading: libyaml events -> a small node tree with positions (our own
 * allocator, bounded depth and size) -> the key table (keys.c, run by keymap.c) ->
 * struct floe_config.
 * Only this file talks to libyaml; every libyaml object is released on every path. The
 * files of agent/config call one another one way: config.c -> keys.c (the root table) ->
 * keys_<section>.c -> keymap.c (the engine) -> cnode.c and units.c. */
#include "agent/config/config.h"

#include "agent/config/keys.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <stdio.h>
#include <string.h>
#include <yaml.h>

/* A configuration is a handful of keys; these limits only stop hostile input early. */
#define MAX_DEPTH 32
#define MAX_NODES 100000

static void cnode_free(struct floe_alloc *a, struct floe_cnode *n)
{
	if (!n)
		return;
	/* Recursion is bounded by MAX_DEPTH. */
	for (size_t i = 0; i < n->nkids; i++)
		cnode_free(a, n->kids[i]);
	floe_free(a, n->kids);
	floe_free(a, n->str);
	floe_free(a, n);
}

static int cnode_add(struct floe_alloc *a, struct floe_cnode *parent, struct floe_cnode *kid)
{
	if (parent->nkids == parent->capkids) {
		size_t cap = parent->capkids ? parent->capkids * 2 : 4;
		size_t bytes;
		if (__builtin_mul_overflow(cap, sizeof(*parent->kids), &bytes))
			return FLOE_ENOMEM;
		struct floe_cnode **k = floe_realloc(a, parent->kids, bytes);
		if (!k)
			return FLOE_ENOMEM;
		parent->kids = k;
		parent->capkids = cap;
	}
	parent->kids[parent->nkids++] = kid;
	return 0;
}

/* Line and column (1-based) of byte offset off in text, for reader errors, which libyaml
 * reports as an offset rather than a mark. Columns count bytes here. */
static void offset_pos(const char *text, size_t len, size_t off, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int syntax_error(struct floe_config_ctx *ctx, const yaml_parser_t *p, const char *text,
			size_t len)
{
	struct floe_cnode at = {0};
	const char *problem = p->problem ? p->problem : "malformed YAML";
	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return floe_config_fail(ctx, NULL, FLOE_ENOMEM, "out of memory");
	case YAML_READER_ERROR:
		offset_pos(text, len, p->problem_offset, &at.line, &at.col);
		return floe_config_fail(ctx, &at, FLOE_EPARSE, "YAML syntax error: %s", problem);
	default:
		at.line = p->problem_mark.line + 1;
		at.col = p->problem_mark.column + 1;
		if (p->context)
			return floe_config_fail(
			    ctx, &at, FLOE_EPARSE,
			    "YAML syntax error: %s (%s at line %zu, column %zu)", problem,
			    p->context, p->context_mark.line + 1, p->context_mark.column + 1);
		return floe_config_fail(ctx, &at, FLOE_EPARSE, "YAML syntax error: %s", problem);
	}
}

/* Turns one node event into a tree node attached to the innermost open container (or
 * becoming the root). Containers are pushed onto stack. */
static int add_node(struct floe_config_ctx *ctx, const yaml_event_t *ev, struct floe_cnode **root,
		    struct floe_cnode **stack, size_t *depth, size_t *nnodes)
{
	struct floe_cnode pos = {.line = ev->start_mark.line + 1, .col = ev->start_mark.column + 1};
	if (++*nnodes > MAX_NODES)
		return floe_config_fail(ctx, &pos, FLOE_EPARSE, "document has more than %d nodes",
					MAX_NODES);
	if (ev->type != YAML_SCALAR_EVENT && *depth == MAX_DEPTH)
		return floe_config_fail(ctx, &pos, FLOE_EPARSE,
					"document is nested deeper than %d levels", MAX_DEPTH);
	struct floe_cnode *n = floe_calloc(ctx->a, 1, sizeof(*n));
	if (!n)
		return floe_config_fail(ctx, NULL, FLOE_ENOMEM, "out of memory");
	n->line = pos.line;
	n->col = pos.col;
	if (ev->type == YAML_SCALAR_EVENT) {
		n->kind = FLOE_CNODE_SCALAR;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		n->len = ev->data.scalar.length;
		n->str = floe_strndup(ctx->a, (const char *)ev->data.scalar.value, n->len);
		if (!n->str) {
			floe_free(ctx->a, n);
			return floe_config_fail(ctx, NULL, FLOE_ENOMEM, "out of memory");
		}
	} else {
		n->kind = ev->type == YAML_MAPPING_START_EVENT ? FLOE_CNODE_MAP : FLOE_CNODE_SEQ;
	}
	if (*depth == 0) {
		/* libyaml emits exactly one root node per document, and we stop at the
		 * second document, so the root is free here. */
		*root = n;
	} else if (cnode_add(ctx->a, stack[*depth - 1], n) < 0) {
		cnode_free(ctx->a, n);
		return floe_config_fail(ctx, NULL, FLOE_ENOMEM, "out of memory");
	}
	if (n->kind != FLOE_CNODE_SCALAR)
		stack[(*depth)++] = n;
	return 0;
}

/* Parses text into a tree; *root stays NULL for a stream without a document. */
static int load_tree(struct floe_config_ctx *ctx, const char *text, size_t len,
		     struct floe_cnode **root)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct floe_cnode *stack[MAX_DEPTH];
	size_t depth = 0, nnodes = 0;
	int ndocs = 0, rc = 0;
	bool done = false;

	*root = NULL;
	if (!yaml_parser_initialize(&p))
		return floe_config_fail(ctx, NULL, FLOE_ENOMEM, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done && rc == 0) {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = syntax_error(ctx, &p, text, len);
			break;
		}
		struct floe_cnode pos = {.line = ev.start_mark.line + 1,
					 .col = ev.start_mark.column + 1};
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++ndocs > 1)
				rc = floe_config_fail(ctx, &pos, FLOE_EPARSE,
						      "multiple YAML documents are not supported");
			break;
		case YAML_ALIAS_EVENT:
			/* Aliases would let a small file expand into a huge tree. */
			rc = floe_config_fail(ctx, &pos, FLOE_EPARSE,
					      "YAML aliases (*name) are not supported");
			break;
		case YAML_SCALAR_EVENT:
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			rc = add_node(ctx, &ev, root, stack, &depth, &nnodes);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth > 0)
				depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	if (rc < 0) {
		cnode_free(ctx->a, *root);
		*root = NULL;
	}
	return rc;
}

int floe_config_parse(struct floe_alloc *a, const char *name, const char *text, size_t len,
		      const char *default_id, struct floe_config **out, struct floe_err *err)
{
	return floe_config_parse_all(a, name, text, len, default_id, out, err, NULL);
}

int floe_config_parse_all(struct floe_alloc *a, const char *name, const char *text, size_t len,
			  const char *default_id, struct floe_config **out, struct floe_err *err,
			  struct floe_config_errors *all)
{
	struct floe_config_ctx ctx = {
	    .a = a,
	    .name = name ? name : "<config>",
	    .default_id = default_id ? default_id : "floe",
	    .err = err,
	    .all = all,
	};
	if (all)
		memset(all, 0, sizeof(*all));
	struct floe_cnode *root = NULL;
	struct floe_config *c = NULL;
	int rc;

	if (!text && len)
		return floe_config_fail(&ctx, NULL, FLOE_EINVAL, "no text");
	rc = load_tree(&ctx, text ? text : "", len, &root);
	if (rc < 0)
		goto out;
	c = floe_calloc(a, 1, sizeof(*c));
	if (c)
		c->alloc = a;
	if (!c || !(c->path = floe_strdup(a, ctx.name))) {
		rc = floe_config_fail(&ctx, NULL, FLOE_ENOMEM, "out of memory");
		goto out;
	}
	c->empty = !root;
	rc = floe_keymap_apply(&ctx, &floe_config_keys, root, (char *)c);
	/* How the caller is to print the errors: as the file asked, where it could say. */
	if (rc < 0 && all)
		all->log_json = c->agent.log_format == FLOE_CONFIG_LOG_JSON;
	if (rc >= 0 && ctx.warn && !(c->warnings = floe_strdup(a, ctx.warn->text)))
		rc = floe_config_fail(&ctx, NULL, FLOE_ENOMEM, "out of memory");
out:
	floe_free(a, ctx.warn);
	cnode_free(a, root);
	if (rc < 0) {
		floe_config_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void floe_config_free(struct floe_config *c)
{
	if (!c)
		return;
	floe_keymap_free(c->alloc, &floe_config_keys, (char *)c);
	floe_free(c->alloc, c->path);
	floe_free(c->alloc, c->source);
	floe_free(c->alloc, c->warnings);
	floe_free(c->alloc, c);
}

int floe_config_dump(const struct floe_config *c, struct floe_buf *out)
{
	size_t old = out->len;
	int rc = floe_buf_puts(out, "# effective configuration of ");
	for (const char *p = c->path; rc == 0 && *p; p++)
		rc = floe_buf_putc(out, ((unsigned char)*p < 0x20 || *p == 0x7f) ? '?' : *p);
	if (rc == 0)
		rc = floe_buf_putc(out, '\n');
	if (rc == 0)
		rc = floe_keymap_dump(out, &floe_config_keys, (const char *)c);
	if (rc < 0)
		out->len = old; /* a failing call leaves its arguments as they were */
	return rc;
}

/* The events up to the first error are good as far as they go: a file cut short or
 * broken further down still names its agent.state_dir when that comes first, as it does
 * in the shipped file. A stack of the open collections says whether the next node is a
 * mapping's key, and under which key each was opened. */
enum peek_key { PK_OTHER, PK_AGENT, PK_STATE_DIR };

struct peek_level {
	bool map, expect_key, was_key, agent;
	enum peek_key key; /* the key whose value comes next (a mapping) */
};

int floe_config_peek_state_dir(const char *text, size_t len, char *out, size_t cap)
{
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return FLOE_ENOMEM;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	struct peek_level st[MAX_DEPTH];
	int d = 0, rc = FLOE_ENOTFOUND;
	for (int n = 0; n < MAX_NODES && rc == FLOE_ENOTFOUND; n++) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev))
			break;
		yaml_event_type_t t = ev.type;
		struct peek_level *up = d ? &st[d - 1] : NULL;
		bool node = t == YAML_SCALAR_EVENT || t == YAML_ALIAS_EVENT ||
			    t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT;
		bool is_key = node && up && up->map && up->expect_key;
		if (t == YAML_STREAM_END_EVENT || t == YAML_DOCUMENT_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (t == YAML_SCALAR_EVENT) {
			const char *s = (const char *)ev.data.scalar.value;
			size_t sl = ev.data.scalar.length;
			if (is_key) {
				up->key = d == 1 && sl == 5 && memcmp(s, "agent", 5) == 0 ? PK_AGENT
					  : d == 2 && up->agent && sl == 9 && memcmp(s, "state_dir", 9) == 0
					      ? PK_STATE_DIR
					      : PK_OTHER;
			} else if (up && up->map && up->agent && up->key == PK_STATE_DIR) {
				if (sl == 0 || sl >= cap || memchr(s, '\0', sl)) {
					rc = FLOE_EINVAL;
				} else {
					memcpy(out, s, sl);
					out[sl] = '\0';
					rc = 0;
				}
			}
		}
		if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) {
			if (d == MAX_DEPTH) {
				yaml_event_delete(&ev);
				break;
			}
			st[d] = (struct peek_level){
			    .map = t == YAML_MAPPING_START_EVENT,
			    .expect_key = t == YAML_MAPPING_START_EVENT,
			    .was_key = is_key,
			    .agent = !is_key && t == YAML_MAPPING_START_EVENT && d == 1 && up->map &&
				     up->key == PK_AGENT,
			};
			d++;
		} else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) {
			if (d == 0) {
				yaml_event_delete(&ev);
				break;
			}
			bool was_key = st[--d].was_key;
			/* A collection that was a key (rare: a complex key) is followed by its
			 * value; one that was a value, by the next key. */
			if (d && st[d - 1].map)
				st[d - 1].expect_key = !was_key;
		} else if (node && up && up->map) {
			up->expect_key = !is_key;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}
