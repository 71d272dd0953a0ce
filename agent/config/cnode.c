/* The bottom of agent/config: what every other file of it needs about the YAML node tree
 * (null scalars) and about reporting a failure at a node ("file:line:column: message").
 * It calls no other file of agent/config. */
#include "agent/config/keys.h"

#include "agent/config/config.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* "name:line:col: " (or "name: " with bare) and the message, into msg. */
static void format_at(const struct floe_config_ctx *ctx, const struct floe_cnode *at, bool bare,
		      char msg[FLOE_ERR_MSG_MAX], const char *fmt, va_list ap)
{
	int n;
	if (bare)
		n = snprintf(msg, FLOE_ERR_MSG_MAX, "%s: ", ctx->name);
	else
		n = snprintf(msg, FLOE_ERR_MSG_MAX, "%s:%zu:%zu: ", ctx->name, at ? at->line : 1,
			     at ? at->col : 1);
	if (n >= 0 && n < FLOE_ERR_MSG_MAX)
		vsnprintf(msg + n, FLOE_ERR_MSG_MAX - (size_t)n, fmt, ap);
}

/* msg as the next line of list, counted; shown while it fits. */
static void append(struct floe_config_errors *list, const char *msg)
{
	size_t len = strlen(msg);
	list->n++;
	if (list->len + len + 2 <= sizeof(list->text)) {
		memcpy(list->text + list->len, msg, len);
		list->len += len;
		list->text[list->len++] = '\n';
		list->text[list->len] = '\0';
		list->shown++;
	}
}

int floe_config_fail(struct floe_config_ctx *ctx, const struct floe_cnode *at, int code,
		     const char *fmt, ...)
{
	char msg[FLOE_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	format_at(ctx, at, code == FLOE_ENOMEM && !at, msg, fmt, ap);
	va_end(ap);
	struct floe_err *e = ctx->err;
	if (e && ctx->nerrors == 0) {
		memcpy(e->msg, msg, sizeof(e->msg));
		e->code = code;
		e->offset = FLOE_ERR_NO_OFFSET; /* the position is line:column, in the message */
	}
	ctx->nerrors++;
	if (ctx->all)
		append(ctx->all, msg);
	return code;
}

int floe_config_warn(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *fmt,
		     ...)
{
	char msg[FLOE_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	format_at(ctx, at, false, msg, fmt, ap);
	va_end(ap);
	if (!ctx->warn && !(ctx->warn = floe_calloc(ctx->a, 1, sizeof(*ctx->warn))))
		return floe_config_fail(ctx, at, FLOE_ENOMEM, "out of memory");
	append(ctx->warn, msg);
	return 0;
}

bool floe_cnode_is_null(const struct floe_cnode *n)
{
	if (n->kind != FLOE_CNODE_SCALAR || !n->plain)
		return false;
	return n->len == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
	       strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0;
}
