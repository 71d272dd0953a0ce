/* The bottom of agent/config: what every other file of it needs about the YAML node tree
 * (null scalars) and about reporting a failure at a node ("file:line:column: message").
 * It calls no other file of agent/config. */
#include "agent/config/keys.h"

#include "agent/config/config.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int floe_config_fail(struct floe_config_ctx *ctx, const struct floe_cnode *at, int code,
		     const char *fmt, ...)
{
	char msg[FLOE_ERR_MSG_MAX];
	int n;
	if (code == FLOE_ENOMEM && !at)
		n = snprintf(msg, sizeof(msg), "%s: ", ctx->name);
	else
		n = snprintf(msg, sizeof(msg), "%s:%zu:%zu: ", ctx->name, at ? at->line : 1,
			     at ? at->col : 1);
	if (n >= 0 && (size_t)n < sizeof(msg)) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	struct floe_err *e = ctx->err;
	if (e && ctx->nerrors == 0) {
		memcpy(e->msg, msg, sizeof(e->msg));
		e->code = code;
		e->offset = FLOE_ERR_NO_OFFSET; /* the position is line:column, in the message */
	}
	ctx->nerrors++;
	struct floe_config_errors *all = ctx->all;
	if (all) {
		size_t len = strlen(msg);
		all->n++;
		if (all->len + len + 2 <= sizeof(all->text)) {
			memcpy(all->text + all->len, msg, len);
			all->len += len;
			all->text[all->len++] = '\n';
			all->text[all->len] = '\0';
			all->shown++;
		}
	}
	return code;
}

int floe_config_warn(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *fmt,
		     ...)
{
	char msg[FLOE_ERR_MSG_MAX];
	int n = snprintf(msg, sizeof(msg), "%s:%zu:%zu: ", ctx->name, at ? at->line : 1,
			 at ? at->col : 1);
	if (n >= 0 && (size_t)n < sizeof(msg)) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	if (!ctx->warn && !(ctx->warn = floe_calloc(ctx->a, 1, sizeof(*ctx->warn))))
		return floe_config_fail(ctx, at, FLOE_ENOMEM, "out of memory");
	struct floe_config_errors *w = ctx->warn;
	size_t len = strlen(msg);
	w->n++;
	if (w->len + len + 2 <= sizeof(w->text)) {
		memcpy(w->text + w->len, msg, len);
		w->len += len;
		w->text[w->len++] = '\n';
		w->text[w->len] = '\0';
		w->shown++;
	}
	return 0;
}

bool floe_cnode_is_null(const struct floe_cnode *n)
{
	if (n->kind != FLOE_CNODE_SCALAR || !n->plain)
		return false;
	return n->len == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
	       strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0;
}
