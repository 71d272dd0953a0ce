/* Internal to agent/config: the YAML node tree that config.c builds from libyaml events,
 * and the key-table engine in keys.c that validates it into a struct floe_config. */
#ifndef FLOE_CONFIG_KEYS_H
#define FLOE_CONFIG_KEYS_H

#include <stdbool.h>
#include <stddef.h>

struct floe_alloc;
struct floe_buf;
struct floe_config;

enum floe_cnode_kind { FLOE_CNODE_SCALAR, FLOE_CNODE_SEQ, FLOE_CNODE_MAP };

/* One YAML node. Mappings keep their pairs flat: kids = key, value, key, value, ... */
struct floe_cnode {
	enum floe_cnode_kind kind;
	size_t line, col;             /* 1-based position of the node's first character */
	bool plain;                   /* a scalar written without quotes (null detection) */
	char *str;                    /* scalar text, NUL-terminated, may hold inner NULs */
	size_t len;
	struct floe_cnode **kids;
	size_t nkids, capkids;
};

/* What the parse of one file needs to report errors. */
struct floe_config_ctx {
	struct floe_alloc *a;
	const char *name;             /* file name for messages */
	const char *default_id;       /* agent.id when absent */
	char *err;
	size_t errcap;
};

/* Writes "name:line:col: <message>" into ctx->err (at may be NULL: then 1:1, or no
 * position at all for FLOE_ENOMEM) and returns code. */
int floe_config_fail(struct floe_config_ctx *ctx, const struct floe_cnode *at, int code,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A scalar that YAML reads as null: empty, ~, null, Null or NULL, written plain. */
bool floe_cnode_is_null(const struct floe_cnode *n);

/* Fills c (zeroed, with alloc and path set) from root (NULL = empty document). On failure
 * c may be partly filled; floe_keys_free releases it. */
int floe_keys_apply(struct floe_config_ctx *ctx, const struct floe_cnode *root,
		    struct floe_config *c);
/* Releases everything the key table says c owns (not c itself, not c->path). */
void floe_keys_free(struct floe_config *c);
/* Writes every key of c as YAML (see floe_config_dump). */
int floe_keys_dump(const struct floe_config *c, struct floe_buf *out);

#endif
