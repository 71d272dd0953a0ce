/* A raw table's column plan at start-up: wanted, learnt, saved, or loaded. */
#include "agent/run/colplan.h"

#include "agent/config/config.h"
#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "agent/schema/columns.h"
#include "agent/state/blobfile.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/schema.h"
#include "formats/parquet/footer_ids.h"
#include "platform/crash.h"
#include "platform/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PLAN_FILE_MAX ((size_t)64 << 10)

/* The access-log parsers' fields that every well-formed line has (ident is nearly
 * always "-", and "request" stands in for an unparsable request line: both stay in
 * attrs), after the two numbers, which came first and keep their ids in older tables. */
static const struct {
	const char *name;
	enum floe_col_type type;
	bool combined; /* only the combined formats have it */
} access_columns[] = {
    {"status", FLOE_COL_INT, false},    {"bytes", FLOE_COL_LONG, false},
    {"client", FLOE_COL_STRING, false}, {"user", FLOE_COL_STRING, false},
    {"method", FLOE_COL_STRING, false}, {"path", FLOE_COL_STRING, false},
    {"protocol", FLOE_COL_STRING, false}, {"referer", FLOE_COL_STRING, true},
    {"user_agent", FLOE_COL_STRING, true},
};

/* The natural columns of a built-in parser's fields: each field it always writes, as its
 * own column of its type (a number as a number), not a value of the attrs map. */
static int natural_columns(enum floe_parser parser, struct floe_colplan *p)
{
	int rc = 0;
	switch (parser) {
	case FLOE_PARSER_APACHE_COMMON:
	case FLOE_PARSER_APACHE_COMBINED:
	case FLOE_PARSER_NGINX_COMBINED:
		for (size_t i = 0; rc == 0 && i < sizeof(access_columns) / sizeof(access_columns[0]); i++)
			if (!access_columns[i].combined || parser != FLOE_PARSER_APACHE_COMMON)
				rc = floe_colplan_add(p, access_columns[i].name, access_columns[i].type,
						      NULL, NULL);
		return rc;
	case FLOE_PARSER_SYSLOG_FILE:
		return floe_colplan_add(p, "pid", FLOE_COL_INT, NULL, NULL);
	default:
		return 0;
	}
}

/* Whether input in writes records that can go to raw table k: its table, or a route
 * rule's. */
static bool feeds(const struct floe_config_input *in, size_t k)
{
	if (!in->raw)
		return false;
	bool to = in->table_idx == k;
	for (size_t i = 0; !to && i < in->nroutes; i++)
		to = in->routes[i].table_idx == k;
	return to;
}

int floe_run_columns_wanted(const struct floe_config *cfg, size_t k, struct floe_colplan *out,
			    struct floe_err *err)
{
	const struct floe_config_table *t = floe_config_table_at(cfg, k);
	int rc = 0;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; rc == 0 && i < t->ncolumns; i++) {
		const struct floe_config_column *col = &t->columns[i];
		rc = floe_colplan_add(out, col->name, (enum floe_col_type)col->type, col->from,
				      col->renamed_from);
	}
	/* Without a list (not even []), the built-in parsers of the inputs whose records
	 * can go to the table bring their own. */
	for (size_t i = 0; rc == 0 && !t->columns_given && i < cfg->ninputs; i++)
		if (feeds(&cfg->inputs[i], k))
			rc = natural_columns(cfg->inputs[i].parser, out);
	if (rc)
		return floe_err_set(err, rc, "tables.%s.columns: more than %d typed columns",
				    t->name, FLOE_COLS_MAX);
	out->message_unparsed = t->message == FLOE_MESSAGE_UNPARSED;
	return 0;
}

/* The columns of table k (its wanted ones) added to out. */
static int add_table(const struct floe_config *cfg, size_t k, struct floe_colplan *out)
{
	struct floe_colplan t;
	int rc = floe_run_columns_wanted(cfg, k, &t, NULL);
	for (size_t c = 0; rc == 0 && c < t.n; c++)
		rc = floe_colplan_add(out, t.col[c].name, t.col[c].type, t.col[c].from,
				      t.col[c].renamed_from);
	return rc;
}

int floe_run_columns_agg(const struct floe_config *cfg, size_t agg, struct floe_colplan *out,
			 struct floe_err *err)
{
	int rc = floe_run_columns_wanted(cfg, 0, out, err);
	const struct floe_config_agg *g = &cfg->aggs[agg];
	/* An input written to tables has its records typed under theirs; one written to no
	 * table has no list to say otherwise: its parser's types. */
	for (size_t i = 0; rc == 0 && i < cfg->ninputs; i++) {
		bool reads = g->nfrom == 0;
		for (size_t k = 0; !reads && k < g->nfrom; k++)
			reads = g->from_idx[k] == i;
		for (size_t k = 1; reads && rc == 0 && k < floe_config_ntables(cfg); k++)
			if (feeds(&cfg->inputs[i], k))
				rc = add_table(cfg, k, out);
		if (rc == 0 && reads && !cfg->inputs[i].raw)
			rc = natural_columns(cfg->inputs[i].parser, out);
	}
	if (rc)
		return floe_err_set(err, rc, "aggregations[%zu] '%s': more than %d typed columns "
				    "with its inputs' tables' and parsers' own",
				    agg, g->name, FLOE_COLS_MAX);
	return 0;
}

/* The logs table's plan is state_dir/columns, as ever; a further table's is beside its
 * spool, state_dir/tables/<name>/columns. */
static void plan_path(const char *state_dir, const char *table, char *path, size_t cap)
{
	if (table)
		snprintf(path, cap, "%s/tables/%s/columns", state_dir, table);
	else
		snprintf(path, cap, "%s/columns", state_dir);
}

static void save(const char *state_dir, const char *tname, const struct floe_colplan *p)
{
	char path[4096];
	struct floe_buf b;
	floe_buf_init(&b, NULL, PLAN_FILE_MAX);
	plan_path(state_dir, tname, path, sizeof(path));
	int rc = floe_colplan_encode(p, &b);
	if (rc == 0)
		rc = floe_blobfile_save(path, b.data, b.len);
	if (rc)
		floe_warn("columns: cannot save the column plan in %s: %s (a start while the "
			  "store is away will keep the typed fields in attrs)",
			  path, floe_strerror(rc));
	floe_buf_fini(&b);
}

/* The saved plan, when there is one that holds: 0 and *out, or an error. */
static int load(const char *state_dir, const char *tname, struct floe_colplan *out)
{
	char path[4096];
	uint8_t *blob = NULL;
	size_t len = 0;
	plan_path(state_dir, tname, path, sizeof(path));
	int rc = floe_blobfile_load(NULL, path, &blob, &len);
	if (rc == 0)
		rc = floe_colplan_decode(blob, len, out);
	if (rc && rc != -ENOENT)
		floe_warn("columns: the saved column plan %s cannot be read: %s", path,
			  floe_strerror(rc));
	floe_free(NULL, blob);
	return rc;
}

/* The spool's files carry the saved plan's ids: a column of it that the new plan gives
 * another id (found by its name, or by the name it was renamed from) would be committed
 * under a field of another meaning. */
static int same_ids(const struct floe_colplan *saved, const struct floe_colplan *now,
		    const char *table, struct floe_err *err)
{
	for (size_t i = 0; i < saved->n; i++) {
		const struct floe_col *s = &saved->col[i];
		for (size_t k = 0; k < now->n; k++) {
			const struct floe_col *c = &now->col[k];
			if (strcmp(c->name, s->name) != 0 && strcmp(c->renamed_from, s->name) != 0)
				continue;
			if (c->id != s->id)
				return floe_err_set(err, FLOE_ESCHEMA,
						    "table %s: the spool holds files with column '%s' "
						    "as field id %d, but the table now gives it id %d "
						    "(another writer added a field first): the spool is "
						    "kept, as its rows would read as another column",
						    table, s->name, (int)s->id, (int)c->id);
		}
	}
	return 0;
}

/* A column of p by name, or NULL. */
static const struct floe_col *find(const struct floe_colplan *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->col[i].name, name) == 0)
			return &p->col[i];
	return NULL;
}

/* Whether a column of p is renamed from name. */
static bool renames(const struct floe_colplan *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->col[i].renamed_from, name) == 0)
			return true;
	return false;
}

/* The columns a commit evolves the table with: those the spooled files were written with
 * (the saved plan, in its order, so that a column the table still lacks gets the id it
 * was planned with), then the configuration's. A column removed from the configuration
 * while its files wait is still given to the table, which keeps it optional; a saved one
 * the configuration renames or retypes is the configuration's. */
static int commit_columns(const struct floe_colplan *saved, const struct floe_colplan *want,
			  struct floe_colplan *out)
{
	int rc = 0;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; rc == 0 && i < saved->n; i++) {
		const struct floe_col *s = &saved->col[i], *w = find(want, s->name);
		const struct floe_col *col = w ? w : s;
		if (!renames(want, s->name))
			rc = floe_colplan_add(out, col->name, col->type, col->from, col->renamed_from);
	}
	for (size_t i = 0; rc == 0 && i < want->n; i++) {
		const struct floe_col *col = &want->col[i];
		rc = floe_colplan_add(out, col->name, col->type, col->from, col->renamed_from);
	}
	return rc;
}

/* want's columns with the ids and types of plan, which has every one of them under the
 * same source and a type want's values read as: true, else want is left unplanned. */
static bool take_ids(const struct floe_colplan *plan, struct floe_colplan *want)
{
	if (!plan->planned)
		return false;
	for (size_t i = 0; i < want->n; i++) {
		const struct floe_col *col = find(plan, want->col[i].name);
		if (!col || strcmp(col->from, want->col[i].from) != 0 ||
		    !floe_ice_type_promotes(floe_col_type_name(want->col[i].type),
					    floe_col_type_name(col->type)))
			return false;
	}
	for (size_t i = 0; i < want->n; i++) {
		const struct floe_col *col = find(plan, want->col[i].name);
		want->col[i].id = col->id;
		want->col[i].type = col->type;
	}
	floe_colplan_sign(want); /* the types may have widened */
	want->planned = true;
	return true;
}

/* want's columns with ids while the table is away: a column of the saved plan (when
 * there is one) under its id there, when its source and type still hold; every other one
 * under a provisional id, above every id this agent knows (the built-in columns' and the
 * saved plan's), in want's order, so that the same configuration gives the same ids at
 * every start. The ids are the files' alone: the commit gives each file the table's ids
 * before it goes in (floe_run_columns_reid_map), and they are never saved. */
static void provisional(const struct floe_colplan *saved, struct floe_colplan *want)
{
	int32_t top = FLOE_LOG_LAST_COLUMN_ID;
	for (size_t i = 0; saved && i < saved->n; i++)
		top = saved->col[i].id > top ? saved->col[i].id : top;
	want->provisional = false;
	for (size_t i = 0; i < want->n; i++) {
		struct floe_col *col = &want->col[i];
		const struct floe_col *s = saved ? find(saved, col->name) : NULL;
		if (s && strcmp(s->from, col->from) == 0 &&
		    floe_ice_type_promotes(floe_col_type_name(col->type), floe_col_type_name(s->type))) {
			col->id = s->id;
			col->type = s->type;
			continue;
		}
		col->id = ++top;
		col->provisional = true;
		want->provisional = true;
	}
	floe_colplan_sign(want); /* the saved plan's types may be wider */
	want->planned = true;
}

int floe_run_columns_start(const struct floe_config *cfg, size_t k, const char *state_dir,
			   const struct floe_ice_meta *m, struct floe_table *t, const char *table,
			   bool spooled, struct floe_colplan *out, struct floe_colplan *commit,
			   struct floe_err *err)
{
	struct floe_colplan want, saved, all;
	const struct floe_config_table *ct = floe_config_table_at(cfg, k);
	const char *tname = k ? ct->name : NULL;
	int rc = floe_run_columns_wanted(cfg, k, &want, err);
	if (rc)
		return rc;
	bool has_saved = load(state_dir, tname, &saved) == 0;
	if (m) {
		struct floe_err e = {0};
		/* Files written under the saved plan may wait: their columns stay planned. */
		bool keep = spooled && has_saved;
		if (keep && commit_columns(&saved, &want, &all))
			return floe_err_set(err, FLOE_ELIMIT,
					    "tables.%s.columns: with the columns of the spooled files, "
					    "more than %d typed columns",
					    ct->name, FLOE_COLS_MAX);
		if (!keep)
			all = want;
		if (all.n && (rc = floe_colplan_learn(&all, m, &e)))
			return floe_err_set(err, rc, "table %s: %s (tables.%s.columns)", table,
					    floe_err_text(&e, rc), ct->name);
		if (keep && (rc = same_ids(&saved, &all, table, err)))
			return rc;
		/* The ids become the table's before a file carries them: agents that add
		 * columns at the same time then never plan one id for two columns (the
		 * loser of the schema commit learns again, having written nothing yet). */
		if (t && all.n && (rc = floe_table_reserve_columns(t, &all, &e)))
			return floe_err_set(err, rc, "table %s: %s (tables.%s.columns)", table,
					    floe_err_text(&e, rc), ct->name);
		if (t && keep && (rc = same_ids(&saved, &all, table, err)))
			return rc;
		if (all.n) {
			save(state_dir, tname, &all);
			/* The plan is saved, the table not changed yet (its commit will). */
			floe_crashpoint("columns-after-save");
		}
		(void)take_ids(&all, &want);
		*out = want;
		*commit = all;
		commit->message_unparsed = want.message_unparsed;
		return 0;
	}
	if (has_saved && take_ids(&saved, &want)) {
		*out = want;
		*commit = saved;
		commit->message_unparsed = want.message_unparsed;
		return 0;
	}
	/* The commits' plan waits for the table; the writers' takes provisional ids. */
	*commit = want;
	if (want.n) {
		provisional(has_saved ? &saved : NULL, &want);
		floe_warn("columns: table %s is away and this state_dir has no plan of these "
			  "columns: their files carry provisional field ids, which the table's "
			  "replace before they are committed",
			  table);
	}
	*out = want;
	return 0;
}

int floe_run_columns_mark(const struct floe_colplan *p, struct floe_spool *sp)
{
	struct floe_spool_prov pv[FLOE_SPOOL_PROV_MAX];
	size_t n = 0;
	for (size_t i = 0; p->provisional && i < p->n && n < FLOE_SPOOL_PROV_MAX; i++) {
		const struct floe_col *col = &p->col[i];
		if (!col->provisional)
			continue;
		memset(&pv[n], 0, sizeof(pv[n]));
		snprintf(pv[n].name, sizeof(pv[n].name), "%s", col->name);
		snprintf(pv[n].type, sizeof(pv[n].type), "%s", floe_col_type_name(col->type));
		pv[n++].id = col->id;
	}
	return floe_spool_set_provisional(sp, pv, n);
}

/* The table's type of column pv, from the commits' plan or else (a column it cannot
 * plan) the table's schema itself, for the message. */
static int conflict(const struct floe_colplan *learnt, const struct floe_ice_meta *m,
		    const char *table, uint64_t seq, const struct floe_spool_prov *pv,
		    struct floe_err *err)
{
	struct floe_colplan one = {0};
	struct floe_err e = {0};
	int t = floe_col_type_parse(pv->type, strlen(pv->type));
	int rc = t < 0 ? FLOE_ECORRUPT : floe_colplan_add(&one, pv->name, (enum floe_col_type)t, NULL, NULL);
	if (rc == 0 && m && (rc = floe_colplan_learn(&one, m, &e)) != 0)
		return floe_err_set(err, FLOE_ESCHEMA,
				    "table %s: spool entry %" PRIu64 " holds column '%s' as %s under "
				    "a provisional id, and the table cannot take it: %s; the entry "
				    "stays in the spool",
				    table, seq, pv->name, pv->type, floe_err_text(&e, rc));
	(void)learnt;
	return floe_err_set(err, FLOE_ESCHEMA,
			    "table %s: spool entry %" PRIu64 " holds column '%s' (%s) under a "
			    "provisional id, and the table's columns as planned do not have it; "
			    "the entry stays in the spool",
			    table, seq, pv->name, pv->type);
}

int floe_run_columns_extend(const char *state_dir, const char *tname, struct floe_table *t,
			    const char *table, const struct floe_spool_entry *e,
			    struct floe_colplan *learnt, struct floe_err *err)
{
	struct floe_colplan all = *learnt;
	struct floe_err why = {0};
	bool more = false;
	int rc = 0;
	for (size_t i = 0; learnt->planned && i < e->nprov && rc == 0; i++) {
		const struct floe_spool_prov *pv = &e->prov[i];
		int type = floe_col_type_parse(pv->type, strlen(pv->type));
		if (find(learnt, pv->name) || renames(learnt, pv->name) || type < 0)
			continue; /* mapped, or refused, by floe_run_columns_reid_map */
		rc = floe_colplan_add(&all, pv->name, (enum floe_col_type)type, NULL, NULL);
		more = true;
	}
	if (!more || rc)
		return rc ? floe_err_set(err, rc, "table %s: with the columns of spool entry %" PRIu64
					 ", more than %d typed columns",
					 table, e->seq, FLOE_COLS_MAX)
			  : 0;
	/* The columns the table has keep their ids (reserved there already): the new ones
	 * get theirs, and the table reserves them before a file carries them. */
	if ((rc = floe_colplan_learn(&all, floe_table_meta(t), &why)) ||
	    (rc = same_ids(learnt, &all, table, err)) ||
	    (rc = floe_table_reserve_columns(t, &all, &why)) ||
	    (rc = same_ids(learnt, &all, table, err)))
		return why.msg[0] ? floe_err_set(err, rc, "table %s: %s", table, floe_err_text(&why, rc))
				  : rc;
	all.message_unparsed = learnt->message_unparsed;
	save(state_dir, tname, &all);
	*learnt = all;
	return 0;
}

int floe_run_columns_reid_map(const struct floe_colplan *learnt, const struct floe_ice_meta *m,
			      const char *table, const struct floe_spool_entry *e,
			      struct floe_pq_reid *map, size_t *n, struct floe_err *err)
{
	*n = 0;
	for (size_t i = 0; i < e->nprov; i++) {
		const struct floe_spool_prov *pv = &e->prov[i];
		const struct floe_col *col =
		    learnt->planned && !learnt->provisional ? find(learnt, pv->name) : NULL;
		/* A column renamed since keeps its field: the files read under the new name. */
		for (size_t k = 0; !col && learnt->planned && k < learnt->n; k++)
			if (strcmp(learnt->col[k].renamed_from, pv->name) == 0)
				col = &learnt->col[k];
		if (!col || !floe_ice_type_promotes(pv->type, floe_col_type_name(col->type)))
			return conflict(learnt, m, table, e->seq, pv, err);
		map[(*n)++] = (struct floe_pq_reid){pv->id, col->id, 0};
	}
	return 0;
}
