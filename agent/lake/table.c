/* Filesystem-catalog Iceberg table: open, load, create, and whose commits are whose (the
 * installation attribution and the check that no two installations share an agent id).
 * The version discovery is in table_version.c, the append in table_commit.c and
 * table_attempt.c; they call one way: table_commit.c -> table_attempt.c -> table.c ->
 * table_version.c. */
#include "agent/lake/table_impl.h"

#include "agent/lake/catalog_rest.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "agent/env/env.h"
#include "platform/log.h"
#include "platform/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What a table floe creates is given, so that its metadata stays bounded with no
 * maintenance job beside the writer, whichever engine commits to it next: Iceberg's
 * defaults keep every metadata.json ever written (delete-after-commit off) and five
 * days of snapshots, each metadata.json holding all of them, which at one commit a
 * minute is gigabytes a day on a device's storage. An hour of snapshots still lets a
 * reader travel an hour back (at most 100 snapshots back: floe's own
 * floe.history.max-snapshots-to-keep, so that a table committed to every second holds
 * 100, not 3,600). A key the configuration sets is written with its value
 * instead. Once the table exists, its properties win over the configuration's (as
 * they do for every engine), and floe never writes them again; but the keys that got
 * floe's value (listed in floe.defaulted-properties) yield to a value a configuration
 * sets later, so that a device or a maintain job can still tune them. */
static const struct {
	const char *key;
	uint32_t bit;
	const char *unattended; /* floe's value when not configured */
} create_props[] = {
    {"write.metadata.delete-after-commit.enabled", FLOE_PROP_DELETE_AFTER_COMMIT, "true"},
    {"write.metadata.previous-versions-max", FLOE_PROP_PREVIOUS_VERSIONS_MAX, "10"},
    {"history.expire.max-snapshot-age-ms", FLOE_PROP_MAX_SNAPSHOT_AGE, "3600000"},
    {"history.expire.min-snapshots-to-keep", FLOE_PROP_MIN_SNAPSHOTS, "10"},
};
#define CREATE_PROPS (sizeof(create_props) / sizeof(create_props[0]))

/* The configured value of create_props[i] as the table writes it. */
static void configured_prop(const struct floe_table_props *p, size_t i, char *out, size_t cap)
{
	uint64_t v = 0;
	switch (create_props[i].bit) {
	case FLOE_PROP_DELETE_AFTER_COMMIT:
		v = p->delete_after_commit;
		break;
	case FLOE_PROP_PREVIOUS_VERSIONS_MAX:
		v = p->previous_versions_max;
		break;
	case FLOE_PROP_MAX_SNAPSHOT_AGE:
		v = p->max_snapshot_age_ms;
		break;
	case FLOE_PROP_MIN_SNAPSHOTS:
		v = p->min_snapshots;
		break;
	}
	if (create_props[i].bit == FLOE_PROP_DELETE_AFTER_COMMIT)
		snprintf(out, cap, "%s", v ? "true" : "false");
	else
		snprintf(out, cap, "%" PRIu64, v);
}

/* The property naming the keys a new table got floe's unattended value for, not a
 * configured one: those yield to a value the configuration sets later (a device's
 * floe.yaml, a maintain job's), as a key the table's owner set does not. */
#define DEFAULTED_KEY "floe.defaulted-properties"

/* Fills kv with the properties of a new table (values in num when configured, the
 * defaulted keys' list in dflt); returns how many. */
static size_t new_table_props(const struct floe_table_props *p, struct floe_ice_kv *kv,
			      char (*num)[24], char *dflt, size_t dcap)
{
	size_t n = 0, dl = 0;
	kv[n++] = (struct floe_ice_kv){"write.format.default", "parquet"};
	kv[n++] = (struct floe_ice_kv){"write.parquet.compression-codec", "zstd"};
	kv[n++] = (struct floe_ice_kv){FLOE_TABLE_MAX_SNAPSHOTS_KEY, FLOE_TABLE_MAX_SNAPSHOTS};
	dflt[0] = 0;
	for (size_t i = 0; i < CREATE_PROPS; i++) {
		if (p && !(p->unset & create_props[i].bit)) {
			configured_prop(p, i, num[i], sizeof(num[i]));
			kv[n++] = (struct floe_ice_kv){create_props[i].key, num[i]};
		} else {
			kv[n++] = (struct floe_ice_kv){create_props[i].key, create_props[i].unattended};
			int w = snprintf(dflt + dl, dcap - dl, "%s%s", dl ? "," : "", create_props[i].key);
			if (w > 0 && (size_t)w < dcap - dl)
				dl += (size_t)w;
		}
	}
	if (dl)
		kv[n++] = (struct floe_ice_kv){DEFAULTED_KEY, dflt};
	return n;
}

bool floe_table_prop_yields(const struct floe_table *t, const char *key)
{
	const struct floe_table_props *p = t->opt.props;
	const char *list = floe_ice_meta_property(t->meta, DEFAULTED_KEY);
	size_t kl = strlen(key);
	if (!p || !list)
		return false;
	for (size_t i = 0; i < CREATE_PROPS; i++) {
		if (strcmp(create_props[i].key, key) != 0 || (p->unset & create_props[i].bit))
			continue;
		for (const char *s = list; (s = strstr(s, key)) != NULL; s += kl)
			if ((s == list || s[-1] == ',') && (s[kl] == ',' || s[kl] == 0))
				return true;
	}
	return false;
}

static int set_names(struct floe_table *t, struct floe_store *store, const char *prefix);

/* What a table floe creates is made of, in whichever catalog: the schema, the partition
 * spec and the properties, with their storage. */
struct new_table {
	const struct floe_ice_field *fields;
	size_t nfields, nprops;
	struct floe_ice_partition_field pf[FLOE_PART_MAX];
	char tnames[FLOE_PART_MAX][24];
	struct floe_ice_kv props[4 + CREATE_PROPS];
	char num[CREATE_PROPS][24], dflt[256];
};

static void new_table_init(const struct floe_table *t, struct new_table *d)
{
	d->nfields = t->opt.nfields;
	d->fields = t->opt.fields ? t->opt.fields : floe_log_fields(&d->nfields);
	floe_part_spec_fields(t->opt.spec, d->pf, d->tnames);
	d->nprops = new_table_props(t->opt.props, d->props, d->num, d->dflt, sizeof(d->dflt));
}

/* Binds to the table in the REST catalog, which creates it when absent (unless
 * read_only), and to the store at the location the catalog gave it (the handle owns that
 * store). */
static int bind_catalog(struct floe_table *t, bool read_only)
{
	struct new_table d;
	struct floe_catalog_rest_create cr = {0};
	if (!read_only) {
		new_table_init(t, &d);
		cr = (struct floe_catalog_rest_create){d.fields, d.nfields, d.pf, t->opt.spec->n, d.props, d.nprops};
	}
	struct floe_store *st = NULL;
	int rc = floe_table_catalog_bind(t, read_only ? NULL : &cr, &st);
	if (rc)
		return rc;
	t->own_store = st;
	return set_names(t, st, "") ? floe_table_fail(t, FLOE_ELIMIT, "the table's location is too long") : 0;
}

static int create_table(struct floe_table *t)
{
	struct new_table d;
	new_table_init(t, &d);
	char uuid[37];
	int rc = floe_env_uuid4(t->rand, uuid);
	if (rc)
		return floe_table_fail(t, rc, "no random table uuid: %s", floe_strerror(rc));
	struct floe_ice_meta *m = NULL;
	struct floe_buf b;
	floe_buf_init(&b, t->alloc, FLOE_TABLE_METADATA_MAX);
	rc = floe_ice_meta_create(t->alloc, uuid, t->location, d.fields, d.nfields, d.pf, t->opt.spec->n,
				  d.props, d.nprops, t->clock->wall_us(t->clock->ctx) / 1000, &m);
	if (rc == 0)
		rc = floe_ice_meta_write(m, &b);
	if (rc == 0) {
		char path[FLOE_TABLE_PATH_CAP + 64];
		floe_table_meta_path(t, 1, path, sizeof(path));
		rc = floe_store_put_if_absent(t->store, path, b.data, b.len);
		if (rc == 0) {
			floe_info("table: created %s (uuid %s)", t->location, uuid);
			floe_table_write_hint(t, 1);
		} else if (rc == -EEXIST) {
			rc = 0; /* another writer created it first: bind to theirs */
		}
	}
	floe_buf_fini(&b);
	floe_ice_meta_free(m);
	return rc;
}

/* Sets the table's key prefixes and location from its prefix in the store. */
static int set_names(struct floe_table *t, struct floe_store *store, const char *prefix)
{
	t->store = store;
	if (floe_fmt(t->dir, sizeof(t->dir) - 64, "%s", prefix) ||
	    floe_fmt(t->metadir, sizeof(t->metadir), "%s%smetadata/", prefix, prefix[0] ? "/" : "") ||
	    floe_fmt(t->location, sizeof(t->location), "%s%s%s", store->uri, prefix[0] ? "/" : "", prefix))
		return FLOE_ELIMIT;
	return 0;
}

/* The installation id as 32 hex digits, for data file names. */
static int set_installation(struct floe_table *t)
{
	const char *id = t->opt.installation_id;
	size_t n = 0;
	for (const char *p = id ? id : ""; *p; p++) {
		if (*p == '-')
			continue;
		bool hex = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f');
		if (!hex || n == sizeof(t->inst_hex) - 1)
			return FLOE_EINVAL;
		t->inst_hex[n++] = *p;
	}
	t->inst_hex[n] = '\0';
	return n == sizeof(t->inst_hex) - 1 ? 0 : FLOE_EINVAL;
}

/* A commit reads the current snapshot's manifest list and lists its manifests again: they
 * must be inside the warehouse, or floe cannot read them (a table written at another
 * location and copied or moved here still names the old one). */
static int check_inside(struct floe_table *t)
{
	const struct floe_ice_meta *m = t->meta;
	long i = floe_ice_meta_find_snapshot(m, floe_ice_meta_current_snapshot_id(m));
	int64_t id, parent, seq, ts;
	const char *list = NULL;
	char key[FLOE_TABLE_PATH_CAP], path[2 * FLOE_TABLE_PATH_CAP + 64];
	if (i < 0 || floe_ice_meta_snapshot_at(m, (size_t)i, &id, &parent, &seq, &ts, &list) || !list ||
	    floe_store_key(t->store, list, key, sizeof(key)) == 0)
		return 0;
	floe_table_meta_uri(t, t->version, path, sizeof(path));
	return floe_table_fail(
	    t, FLOE_EUNSUPPORTED,
	    "%s: the current snapshot %" PRId64 " lists its manifests in %s, which is not inside the "
	    "warehouse %s (the table was written at another location and copied or moved here): floe "
	    "can only append to a table whose files are in its warehouse; set lake.warehouse to the "
	    "table's own location",
	    path, id, list, t->store->uri);
}

/* A handle with nothing loaded yet; NULL without memory. */
static struct floe_table *table_new(struct floe_alloc *a, const struct floe_clock *clock,
				    const struct floe_rand *rand)
{
	struct floe_table *t = floe_calloc(a, 1, sizeof(*t));
	if (t) {
		t->alloc = a;
		t->clock = clock ? clock : floe_env_clock();
		t->rand = rand ? rand : floe_env_rand();
	}
	return t;
}

int floe_table_open(struct floe_alloc *a, const struct floe_table_options *opt,
		    struct floe_table **out, struct floe_err *err)
{
	struct floe_table *t = table_new(a, opt->clock, opt->rand);
	if (!t)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	t->opt = *opt;
	if (!t->opt.max_attempts)
		t->opt.max_attempts = 100;
	if (!t->opt.max_log)
		t->opt.max_log = 100;
	char prefix[FLOE_TABLE_PATH_CAP];
	int rc = FLOE_EINVAL;
	if (set_installation(t)) {
		rc = floe_table_fail(t, FLOE_EINVAL, "installation id '%s' is not a UUID",
				     opt->installation_id ? opt->installation_id : "");
		goto out;
	}
	rc = FLOE_ELIMIT;
	if (opt->catalog) {
		if ((rc = bind_catalog(t, false)))
			goto out;
	} else if (floe_fmt(prefix, sizeof(prefix), "%s/%s", opt->namespace, opt->name) ||
		   (rc = set_names(t, opt->store, prefix)) || (rc = floe_table_find_current(t, true))) {
		goto out;
	}
	if (t->version == 0 && opt->existed_at &&
	    (!opt->existed_at[0] || strcmp(opt->existed_at, t->location) == 0)) {
		rc = floe_table_fail(t, FLOE_EGONE,
				     "table %s is missing, though this agent committed to it: not "
				     "created again (a warehouse mount that did not come up looks the "
				     "same as a table moved away). The spool keeps the data and the "
				     "commit is retried until the table is back; to start a new table "
				     "there, set lake.recreate_tables: true",
				     t->location);
		goto out;
	}
	if (t->version == 0) {
		if ((rc = create_table(t)) || (rc = floe_table_find_current(t, false)))
			goto out;
		if (t->version == 0) {
			rc = FLOE_ENOTFOUND;
			goto out;
		}
	}
	if (floe_ice_meta_format_version(t->meta) > 2) {
		rc = floe_table_fail(t, FLOE_EUNSUPPORTED,
				     "the table is format version %d; floe writes version 2",
				     floe_ice_meta_format_version(t->meta));
		goto out;
	}
	if ((rc = opt->schema_check ? opt->schema_check(opt->schema_ctx, t->meta, &t->err)
				    : floe_log_schema_check(t->meta, &t->err)) ||
	    (rc = floe_table_evolve_spec(t, t->meta, &t->spec)) ||
	    (rc = floe_table_evolve_sort(t, t->meta, &t->sort_order_id)) ||
	    (rc = check_inside(t)) || (rc = floe_table_identity(t)))
		goto out;
out:
	if (rc) {
		floe_table_report(t, rc, err);
		floe_table_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int floe_table_load(struct floe_alloc *a, struct floe_store *store, const char *prefix,
		    struct floe_table **out, struct floe_err *err)
{
	struct floe_table *t = table_new(a, NULL, NULL);
	if (!t)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	int rc = set_names(t, store, prefix);
	if (rc == 0)
		rc = floe_table_find_current(t, true);
	if (rc == 0 && t->version == 0)
		rc = floe_table_fail(t, FLOE_ENOTFOUND,
				     "no Iceberg table here (no metadata/v*.metadata.json)");
	if (rc) {
		floe_table_report(t, rc, err);
		floe_table_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int floe_table_load_catalog(struct floe_alloc *a, struct floe_catalog_rest *catalog, const char *name,
			    struct floe_table **out, struct floe_err *err)
{
	struct floe_table *t = table_new(a, NULL, NULL);
	if (!t)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	t->opt.catalog = catalog;
	t->opt.name = name;
	int rc = bind_catalog(t, true);
	if (rc) {
		floe_table_report(t, rc, err);
		floe_table_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

struct floe_store *floe_table_store(const struct floe_table *t)
{
	return t->store;
}

void floe_table_free(struct floe_table *t)
{
	if (!t)
		return;
	floe_ice_meta_free(t->meta);
	floe_store_free(t->own_store);
	if (t->lost)
		floe_table_expiry_fini(t, t->lost);
	floe_free(t->alloc, t->lost);
	floe_free(t->alloc, t);
}

int floe_table_reload(struct floe_table *t)
{
	if (t->opt.catalog)
		return floe_table_catalog_reload(t);
	int rc = floe_table_find_current(t, false);
	if (rc == 0 && t->version == 0)
		rc = floe_table_fail(t, FLOE_ENOTFOUND, "%s has no metadata any more (metadata/ is empty)",
				     t->location);
	return rc;
}

/* A version 1 table (an older engine's) is opened, for floe inspect and for the start,
 * but each commit stops here, before it uploads anything, naming what to do: before,
 * commits failed with "unsupported feature or version" alone at the metadata, after
 * their uploads, retried for ever. Its readers would not take floe's version 2
 * manifests; Iceberg's upgrade (one property) keeps every file as it is. */
static int writable(struct floe_table *t)
{
	if (floe_ice_meta_format_version(t->meta) != 1)
		return 0;
	return floe_table_fail(t, FLOE_EUNSUPPORTED,
			       "%s is Iceberg format version 1, and floe writes version 2: upgrade the table "
			       "(Spark: ALTER TABLE ... SET TBLPROPERTIES ('format-version'='2'); a REST "
			       "catalog: upgrade-format-version); the spool keeps the data until then",
			       t->location);
}

int floe_table_refresh(struct floe_table *t, struct floe_err *err)
{
	int rc = floe_table_reload(t);
	return floe_table_report(t, rc ? rc : writable(t), err);
}

const struct floe_ice_meta *floe_table_meta(const struct floe_table *t)
{
	return t->meta;
}

const struct floe_part_spec *floe_table_spec(const struct floe_table *t)
{
	return t->spec_added ? &t->spec_unsure : &t->spec;
}

int floe_table_evolve_sort(struct floe_table *t, struct floe_ice_meta *m, int32_t *order_id)
{
	struct floe_ice_sort_field sf[FLOE_SORT_NKEYS];
	size_t n = t->opt.nsort_keys < FLOE_SORT_NKEYS ? t->opt.nsort_keys : FLOE_SORT_NKEYS;
	*order_id = -1;
	if (!t->opt.sort_order)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const char *name = floe_log_sort_key_name(t->opt.sort_keys[i]);
		sf[i] = (struct floe_ice_sort_field){
		    .source_id = name ? floe_log_column_id(name, strlen(name)) : 0,
		    .transform = "identity",
		    .nulls_first = true,
		};
		if (sf[i].source_id <= 0)
			return floe_table_fail(t, FLOE_EINVAL, "sort key %d has no column", (int)t->opt.sort_keys[i]);
	}
	bool changed = false;
	int64_t now_ms = t->clock->wall_us(t->clock->ctx) / 1000;
	int rc = floe_ice_meta_evolve_sort_order(m, sf, n, now_ms, order_id, &changed);
	if (rc)
		return floe_table_fail(t, rc, "table %s: sort_by cannot be recorded as its sort order: %s",
				       t->location, floe_strerror(rc));
	return 0;
}

/* A configuration whose partition_by differs from the table's default spec adds a spec
 * (or takes an equal one back, by its id) rather than being ignored: the files written
 * from now on are partitioned as configured, and old files keep their spec. The change
 * rides on the next snapshot's metadata version (every attempt evolves the freshly
 * loaded table again), so a table never lists a spec no file uses, and a spec another
 * writer added meanwhile is merged by the same rule. */
int floe_table_evolve_spec(struct floe_table *t, struct floe_ice_meta *m, struct floe_part_spec *out)
{
	const struct floe_part_spec *want = t->opt.spec;
	struct floe_err e = {0};
	int rc;
	if (!want) {
		if ((rc = floe_part_spec_from_table(out, m, &e)))
			return floe_table_fail(t, rc, "%s", e.msg);
		return 0;
	}
	struct floe_ice_partition_field pf[FLOE_PART_MAX];
	char tnames[FLOE_PART_MAX][24];
	floe_part_spec_fields(want, pf, tnames);
	int32_t id = -1;
	bool changed = false, added = false;
	int64_t now_ms = t->clock->wall_us(t->clock->ctx) / 1000;
	if ((rc = floe_ice_meta_evolve_spec(m, pf, want->n, true, now_ms, &id, &changed, &added)))
		return floe_table_fail(t, rc, "table %s: the partition spec of the configuration cannot be "
				       "added: %s", t->location, floe_strerror(rc));
	if ((rc = floe_part_spec_from_table_id(out, m, id, &e)))
		return floe_table_fail(t, rc, "table %s: %s", t->location, e.msg);
	if (out == &t->spec) {
		/* Not in the table yet: files spooled under it name no id, as another writer
		 * may take this one first (the commit gives them the spec's id then). */
		t->spec_added = added;
		t->spec_unsure = t->spec;
		t->spec_unsure.spec_id = -1;
		/* Agents with different specs on one table take theirs back at each commit:
		 * only a new spec is worth an info line. */
		if (added)
			floe_info("table: %s: partition spec %d is added as the default with the "
				  "next commit", t->location, (int)id);
		else if (changed)
			floe_debug("table: %s: partition spec %d is the default again from the next "
				   "commit on", t->location, (int)id);
	}
	return 0;
}

const char *floe_table_location(const struct floe_table *t)
{
	return t->location;
}

int64_t floe_table_version(const struct floe_table *t)
{
	return t->version;
}

/* Is snapshot i a commit of installation inst? Commits without an installation id (made
 * by a floe without them) belong to the installation that continues their agent id. */
static bool made_by(const struct floe_table *t, size_t i, const char *inst)
{
	const char *by = floe_ice_meta_snapshot_summary(t->meta, i, "floe.installation-id");
	if (by)
		return strcmp(by, inst) == 0;
	const char *agent = floe_ice_meta_snapshot_summary(t->meta, i, "floe.agent-id");
	const char *own = t->opt.installation_id;
	return agent && t->opt.legacy_agent_id && own && strcmp(inst, own) == 0 &&
	       strcmp(agent, t->opt.legacy_agent_id) == 0;
}

/* Calls fn for every snapshot of the current snapshot's ancestry, newest first (index in
 * the metadata, position in the walk); a non-zero return stops the walk. */
static void walk_ancestry(const struct floe_table *t, bool (*fn)(void *ctx, size_t i, size_t pos), void *ctx)
{
	const struct floe_ice_meta *m = t->meta;
	int64_t id = floe_ice_meta_current_snapshot_id(m);
	size_t n = floe_ice_meta_snapshot_count(m);
	long i = (long)n - 1;
	for (size_t pos = 0; id >= 0 && pos < n; pos++) {
		i = floe_ice_meta_find_snapshot_near(m, id, i);
		int64_t parent = -1;
		if (i < 0 || fn(ctx, (size_t)i, pos) ||
		    floe_ice_meta_snapshot_at(m, (size_t)i, NULL, &parent, NULL, NULL, NULL))
			break;
		id = parent;
		i--;
	}
}

struct seq_ctx {
	const struct floe_table *t;
	const char *inst;
	int64_t best;
};

static bool seq_one(void *ctx, size_t i, size_t pos)
{
	struct seq_ctx *c = ctx;
	(void)pos;
	const char *seq = floe_ice_meta_snapshot_summary(c->t->meta, i, "floe.commit-seq");
	if (seq && made_by(c->t, i, c->inst)) {
		long long s = strtoll(seq, NULL, 10);
		if (s > c->best)
			c->best = s;
	}
	return false;
}

int64_t floe_table_committed_seq(const struct floe_table *t, const char *installation_id)
{
	struct seq_ctx c = {t, installation_id ? installation_id : "", -1};
	walk_ancestry(t, seq_one, &c);
	/* Snapshot expiry (table_expire.c) keeps the commit-seqs of the snapshots it removes
	 * here, so that exactly-once outlives the history. */
	char key[128];
	const char *v = NULL;
	if (installation_id &&
	    snprintf(key, sizeof(key), "floe.committed-seq.%s", installation_id) < (int)sizeof(key))
		v = floe_ice_meta_property(t->meta, key);
	long long w = v ? strtoll(v, NULL, 10) : -1;
	return w > c.best ? w : c.best;
}

struct identity_ctx {
	const struct floe_table *t;
	long oldest_own;      /* walk position of this installation's oldest commit, or -1 */
	long newest_foreign;  /* walk position of the newest other installation's, or -1 */
	long blocking;        /* the newest one opt.replaces does not cover, or -1 */
	size_t foreign_idx, blocking_idx;
	long homed;	      /* the newest one made from this installation's home, or -1 */
	size_t homed_idx;
};

/* Whether the commit at snapshot index i was made from this installation's home (the
 * same hardware and state_dir path: this installation before its state_dir was wiped). */
static bool same_home(const struct floe_table *t, size_t i)
{
	const char *home = floe_ice_meta_snapshot_summary(t->meta, i, "floe.installation-home");
	return t->opt.home && home && strcmp(home, t->opt.home) == 0;
}

static bool identity_one(void *ctx, size_t i, size_t pos)
{
	struct identity_ctx *c = ctx;
	const struct floe_table *t = c->t;
	const char *agent = floe_ice_meta_snapshot_summary(t->meta, i, "floe.agent-id");
	if (!agent || strcmp(agent, t->opt.agent_id) != 0)
		return false;
	if (made_by(t, i, t->opt.installation_id)) {
		c->oldest_own = (long)pos;
		return false;
	}
	const char *by = floe_ice_meta_snapshot_summary(t->meta, i, "floe.installation-id");
	if (c->newest_foreign < 0) {
		c->newest_foreign = (long)pos;
		c->foreign_idx = i;
	}
	bool replaced = t->opt.replaces && strcmp(t->opt.replaces, by ? by : "legacy") == 0;
	if (!replaced && same_home(t, i)) {
		replaced = true;
		if (c->homed < 0) {
			c->homed = (long)pos;
			c->homed_idx = i;
		}
	}
	if (!replaced && c->blocking < 0) {
		c->blocking = (long)pos;
		c->blocking_idx = i;
	}
	return false;
}

/* Describes the commit at snapshot index i for a message: installation, seq and time. */
static void describe(const struct floe_table *t, size_t i, char *out, size_t cap)
{
	const struct floe_ice_meta *m = t->meta;
	const char *by = floe_ice_meta_snapshot_summary(m, i, "floe.installation-id");
	const char *seq = floe_ice_meta_snapshot_summary(m, i, "floe.commit-seq");
	int64_t id = 0, parent, sseq, ts = 0;
	const char *ml;
	floe_ice_meta_snapshot_at(m, i, &id, &parent, &sseq, &ts, &ml);
	time_t s = (time_t)(ts / 1000);
	struct tm tm;
	char when[32] = "?";
	if (gmtime_r(&s, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (by)
		snprintf(out, cap, "installation %s (snapshot %" PRId64 ", commit-seq %s, %s)", by, id,
			 seq ? seq : "?", when);
	else
		snprintf(out, cap, "a floe without installation ids (snapshot %" PRId64 ", commit-seq %s, %s)",
			 id, seq ? seq : "?", when);
}

int floe_table_check_identity(struct floe_table *t, struct floe_err *err)
{
	return floe_table_report(t, floe_table_identity(t), err);
}

int floe_table_identity(struct floe_table *t)
{
	struct identity_ctx c = {t, -1, -1, -1, 0, 0, -1, 0};
	char who[256];
	walk_ancestry(t, identity_one, &c);
	const char *homed = c.homed >= 0 ? floe_ice_meta_snapshot_summary(t->meta, c.homed_idx, "floe.installation-id") : NULL;
	snprintf(t->homed_by, sizeof(t->homed_by), "%s", homed ? homed : "");
	if (c.oldest_own < 0 && c.blocking < 0 && c.homed >= 0 && !t->home_said) {
		describe(t, c.homed_idx, who, sizeof(who));
		floe_warn("table: %s: agent.id '%s' last committed from %s, on this machine from this "
			  "state_dir, whose files are gone (wiped, or a volatile state_dir): this "
			  "installation, %s, takes the agent.id over, as agent.replaces would. What that "
			  "state_dir held but had not committed is lost, and its inputs start again at "
			  "start_at",
			  t->location, t->opt.agent_id, who, t->opt.installation_id);
		t->home_said = true;
	}
	if (c.oldest_own >= 0 && c.newest_foreign >= 0 && c.newest_foreign < c.oldest_own) {
		describe(t, c.foreign_idx, who, sizeof(who));
		return floe_table_fail(
		    t, FLOE_EIDENTITY,
		    "%s: %s committed under agent.id '%s' after this installation (%s) did: two live "
		    "agents share the id. Stop one of them, or give each agent its own agent.id",
		    t->location, who, t->opt.agent_id, t->opt.installation_id);
	}
	if (c.oldest_own < 0 && c.blocking >= 0) {
		describe(t, c.blocking_idx, who, sizeof(who));
		const char *by = floe_ice_meta_snapshot_summary(t->meta, c.blocking_idx, "floe.installation-id");
		if (t->opt.renewed)
			return floe_table_fail(
			    t, FLOE_ENEWID,
			    "%s: agent.id '%s' already commits from %s; this is installation %s, made "
			    "new because the installation file, its copy and the checkpoint were all "
			    "damaged, so that one is most likely this agent's lost id. Nothing is "
			    "committed (the spool keeps the rows) until agent.replaces names it: set "
			    "agent.replaces: %s (or give this agent its own agent.id)",
			    t->location, t->opt.agent_id, who, t->opt.installation_id, by ? by : "legacy");
		return floe_table_fail(
		    t, FLOE_EIDENTITY,
		    "%s: agent.id '%s' already commits from %s; this is installation %s. Two agents "
		    "are configured with one agent.id (cloned devices share a host name and maybe "
		    "/etc/machine-id), or this agent's state_dir was wiped or replaced. Give this agent "
		    "its own agent.id; if it replaces that installation for good, set agent.replaces: %s",
		    t->location, t->opt.agent_id, who, t->opt.installation_id, by ? by : "legacy");
	}
	return 0;
}

const char *floe_table_replaced(const struct floe_table *t)
{
	if (t->opt.replaces)
		return t->opt.replaces;
	return t->homed_by[0] ? t->homed_by : NULL;
}

void floe_table_commit_counts(const struct floe_table *t, uint64_t *attempts, uint64_t *conflicts)
{
	*attempts = t->attempts;
	*conflicts = t->conflicts;
}
