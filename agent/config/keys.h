/* Internal to agent/config: the YAML node tree that config.c builds from libyaml events,
 * the shape of a key table (keys.c holds floe's), and the engine (keymap.c) that runs a
 * table over a tree: conversion, defaults, validation, dump and free. */
#ifndef FLOE_CONFIG_KEYS_H
#define FLOE_CONFIG_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;
struct floe_config;
struct floe_err;

enum floe_cnode_kind { FLOE_CNODE_SCALAR, FLOE_CNODE_SEQ, FLOE_CNODE_MAP };

/* One YAML node. Mappings keep their pairs flat: kids = key, value, key, value, ... */
struct floe_cnode {
	enum floe_cnode_kind kind;
	size_t line, col; /* 1-based position of the node's first character */
	bool plain;	  /* a scalar written without quotes (null detection) */
	char *str;	  /* scalar text, NUL-terminated, may hold inner NULs */
	size_t len;
	struct floe_cnode **kids;
	size_t nkids, capkids;
};

/* What the parse of one file needs to report errors. */
struct floe_config_ctx {
	struct floe_alloc *a;
	const char *name;	/* file name for messages */
	const char *default_id; /* agent.id when absent */
	struct floe_err *err;	/* may be NULL: the first error */
	struct floe_config_errors *all; /* may be NULL: every error */
	unsigned nerrors;	/* errors so far; the engine goes on past each */
	/* Findings floe check refuses and floe run logs and runs with (floe_config_warn);
	 * allocated at the first, moved into the configuration at the end. */
	struct floe_config_errors *warn;
};

/* cnode.c, below every other file of agent/config. */
/* Records code and "name:line:col: <message>" in ctx->err if it is the first error, and
 * in ctx->all in any case (at may be NULL: then 1:1, or no position at all for
 * FLOE_ENOMEM); counts it and returns code. */
int floe_config_fail(struct floe_config_ctx *ctx, const struct floe_cnode *at, int code,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A finding at at that floe check refuses (exit 2) but that a running agent logs and
 * runs with: a rule that can never match, which an earlier release took without a word.
 * Refusing it at run would stop every device whose file had one, and whose last good
 * copy has it too, at a package upgrade; the rule then takes nothing, as it did. Recorded
 * as "name:line:col: message" in the configuration's warnings; returns 0, or FLOE_ENOMEM
 * through floe_config_fail. */
int floe_config_warn(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *fmt,
		     ...) __attribute__((format(printf, 3, 4)));

/* A scalar that YAML reads as null: empty, ~, null, Null or NULL, written plain. */
bool floe_cnode_is_null(const struct floe_cnode *n);

/* How a key's value is read and where it is stored (at base + off unless said otherwise). */
enum floe_key_type {
	FLOE_KT_SECTION,      /* a mapping of more keys (sub); their base is base + off */
	FLOE_KT_SECTION_LIST, /* array of size-byte elements, count at off_n
			       */
	FLOE_KT_STRING,	      /* char * */
	FLOE_KT_STRLIST,      /* char **, count at off_n; a lone string is a list of one */
	FLOE_KT_SIZE,	      /* uint64_t bytes */
	FLOE_KT_DURATION,     /* uint64_t milliseconds */
	FLOE_KT_INT,	      /* int or uint32_t (size 4; the range keeps it non-negative) */
	FLOE_KT_ENUM,	      /* index into choices, in size bytes (a bool or an enum) */
	FLOE_KT_CUSTOM,	      /* a scalar read by parse and written back by format */
};

enum {
	/* No default: the key must be given when its section is written; in a section
	 * absent from the file it stays unset (NULL), which a section can use as "off". */
	FLOE_KF_REQUIRED = 1,
	FLOE_KF_NONEMPTY = 2, /* a list that must hold at least one entry */
	FLOE_KF_UNIQUE = 4,   /* a list whose entries must all differ */
	FLOE_KF_COMPUTED = 8, /* default derived from other keys by the section's post hook */
	FLOE_KF_QUIET = 16,   /* not in use (shown is false): left out of the dump, not "~" */
};

/* Extra validation of a string after its type conversion; may replace *value (owned) with
 * a normalised form. */
typedef int (*floe_key_check_fn)(struct floe_config_ctx *ctx, const struct floe_cnode *at,
				 const char *path, char **value);
/* Runs after every key of a section is set: computed defaults and cross-key rules. map is
 * NULL when the section was absent from the file. */
typedef int (*floe_key_post_fn)(struct floe_config_ctx *ctx, const struct floe_cnode *map,
				const char *path, char *base);

/* Releases what a post hook allocated outside the keys (base is the section's struct). */
typedef void (*floe_key_fini_fn)(struct floe_alloc *a, char *base);

/* FLOE_KT_CUSTOM: converts s[0..len) (a scalar, NUL-terminated, no inner NUL) into field,
 * or fails through floe_config_fail at at; and appends field's value as a YAML scalar
 * that parse reads back to the same value. */
typedef int (*floe_key_parse_fn)(struct floe_config_ctx *ctx, const struct floe_cnode *at,
				 const char *path, const char *s, size_t len, char *field);
typedef int (*floe_key_format_fn)(struct floe_buf *out, const char *field);

/* Whether a key is in use, given the base of the section that holds it; a key that is not
 * is dumped as "name: ~" (absent, so the dump still parses back to the same values). */
typedef bool (*floe_key_shown_fn)(const char *base);

struct floe_key_section;

/* One key: where its value lives (off from the section's base), how to read it, its
 * default and range, and a line of help for the dump. */
struct floe_key {
	const char *name;
	enum floe_key_type type;
	size_t off;
	size_t off_n;
	size_t size;
	unsigned flags;
	const char *def;	     /* scalar default, written as in the file */
	const char *const *def_list; /* FLOE_KT_STRLIST default, NULL-terminated */
	/* Range of FLOE_KT_SIZE, FLOE_KT_DURATION (ms), FLOE_KT_INT; most entries of a
	 * FLOE_KT_STRLIST (0 = no limit). */
	int64_t min, max;
	const char *const *choices; /* FLOE_KT_ENUM, NULL-terminated; the value is the index */
	const struct floe_key_section *sub; /* FLOE_KT_SECTION, FLOE_KT_SECTION_LIST */
	floe_key_check_fn check;
	floe_key_parse_fn parse;   /* FLOE_KT_CUSTOM */
	floe_key_format_fn format; /* FLOE_KT_CUSTOM */
	floe_key_shown_fn shown;   /* NULL: always shown */
	const char *help;
	/* A section's rest key (floe_key_section.rest): where each element keeps its name
	 * (a char *, owned by the element; its section's fini frees it). */
	size_t name_off;
};

struct floe_key_section {
	const struct floe_key *keys;
	size_t nkeys;
	floe_key_post_fn post;
	floe_key_fini_fn fini;
	/* In a list of these sections, a plain scalar item X stands for the mapping
	 * { shorthand: X } (metrics: "- count" is { metric: count }). NULL: items must be
	 * mappings. */
	const char *shorthand;
	/* Keys named by the user (tables.<name>): every key of the mapping that is not one of
	 * keys becomes an element of rest's array (FLOE_KT_SECTION_LIST's fields: off, off_n,
	 * size, sub), named by the key, which rest->check accepts or refuses first, in
	 * document order. NULL: such a key is unknown. */
	const struct floe_key *rest;
};

#define FLOE_KEY_SECTION(keys_, post_, fini_)                                                      \
	{                                                                                          \
		.keys = keys_, .nkeys = sizeof(keys_) / sizeof(keys_[0]), .post = post_,           \
		.fini = fini_                                                                      \
	}

/* The key table of struct floe_config (keys.c). */
extern const struct floe_key_section floe_config_keys;

/* Longest piece of user text quoted in a message, NUL included. */
#define FLOE_KEYMAP_SHOW_CAP 80

/* Fills base (zeroed) from root (NULL = empty document) by the table sec. On failure
 * base may be partly filled; floe_keymap_free releases it. */
int floe_keymap_apply(struct floe_config_ctx *ctx, const struct floe_key_section *sec,
		      const struct floe_cnode *root, char *base);
/* Releases everything the table says base owns (not base itself). */
void floe_keymap_free(struct floe_alloc *a, const struct floe_key_section *sec, char *base);
/* Appends every key of base as YAML, with help as comments. */
int floe_keymap_dump(struct floe_buf *out, const struct floe_key_section *sec, const char *base);

/* Helpers for check and post hooks. */
int floe_keymap_nomem(struct floe_config_ctx *ctx);
/* Copies user text into buf (FLOE_KEYMAP_SHOW_CAP bytes) fit for a one-line message. */
const char *floe_keymap_show(const char *s, size_t len, char *buf);
/* The value of key name in map (NULL if absent or map is NULL). */
const struct floe_cnode *floe_keymap_find_value(const struct floe_cnode *map, const char *name);
/* Whether s (borrowed, NUL-terminated) is min to max characters, each a letter, a digit
 * or one of extra. */
bool floe_keymap_all_of(const char *s, size_t min, size_t max, const char *extra);
/* Whether s (borrowed, NUL-terminated) starts with "scheme://". */
bool floe_keymap_has_scheme(const char *s);

#endif
