/* Partition specs and sort orders of a table: look one up by id, and evolve the table to
 * one (reuse an equal one by its id, or add it), as the spec's add-spec/add-sort-order
 * and set-default-spec/set-default-sort-order updates do. */
#include "formats/iceberg/metadata_impl.h"

#include "formats/base/error.h"
#include "formats/json/json.h"

#include <string.h>

static const struct floe_json *find_by_id(const struct floe_json *arr, const char *key, int64_t id)
{
	for (size_t i = 0; i < floe_json_len(arr); i++) {
		const struct floe_json *o = floe_json_at(arr, i);
		int64_t v;
		if (floe_json_get_int(o, key, &v) == 0 && v == id)
			return o;
	}
	return NULL;
}

const struct floe_json *floe_ice_meta_spec_fields(const struct floe_ice_meta *m, int32_t spec_id)
{
	const struct floe_json *specs = floe_json_get(m->v.root, "partition-specs");
	if (!specs)
		return spec_id == m->v.default_spec_id ? m->v.spec_fields : NULL;
	const struct floe_json *f = floe_json_get(find_by_id(specs, "spec-id", spec_id), "fields");
	return floe_json_is(f, FLOE_JSON_ARRAY) ? f : NULL;
}

const struct floe_json *floe_ice_meta_spec(const struct floe_ice_meta *m, int32_t spec_id)
{
	return find_by_id(floe_json_get(m->v.root, "partition-specs"), "spec-id", spec_id);
}

const struct floe_json *floe_ice_meta_sort_order(const struct floe_ice_meta *m, int32_t order_id)
{
	return find_by_id(floe_json_get(m->v.root, "sort-orders"), "order-id", order_id);
}

static int64_t max_id(const struct floe_json *arr, const char *key, int64_t floor);

int32_t floe_ice_meta_last_spec_id(const struct floe_ice_meta *m)
{
	return (int32_t)max_id(floe_json_get(m->v.root, "partition-specs"), "spec-id", -1);
}

int32_t floe_ice_meta_last_sort_order_id(const struct floe_ice_meta *m)
{
	return (int32_t)max_id(floe_json_get(m->v.root, "sort-orders"), "order-id", -1);
}

int32_t floe_ice_meta_default_sort_order_id(const struct floe_ice_meta *m)
{
	int64_t v = 0;
	if (floe_json_get_int(m->v.root, "default-sort-order-id", &v))
		return 0;
	return (int32_t)v;
}

static bool str_is(const struct floe_json *o, const char *k, const char *want)
{
	const char *s;
	return floe_json_get_str(o, k, &s) == 0 && strcmp(s, want) == 0;
}

static bool int_is(const struct floe_json *o, const char *k, int64_t want)
{
	int64_t v;
	return floe_json_get_int(o, k, &v) == 0 && v == want;
}

/* An existing spec's id whose fields are pf's (source, transform, field id, in order):
 * -1 when none. */
static int64_t equal_spec(const struct floe_json *specs, const struct floe_ice_partition_field *pf,
			  size_t n)
{
	for (size_t i = 0; i < floe_json_len(specs); i++) {
		const struct floe_json *s = floe_json_at(specs, i), *f = floe_json_get(s, "fields");
		int64_t id;
		bool same = floe_json_get_int(s, "spec-id", &id) == 0 && floe_json_len(f) == n;
		for (size_t k = 0; k < n && same; k++) {
			const struct floe_json *x = floe_json_at(f, k);
			same = int_is(x, "source-id", pf[k].source_id) &&
			       int_is(x, "field-id", pf[k].field_id) &&
			       str_is(x, "transform", pf[k].transform);
		}
		if (same)
			return id;
	}
	return -1;
}

/* A partition field keeps the id (and name) it had in any earlier spec with the same
 * source and transform, so that readers see one field across specs; a new one takes the
 * next id above last-partition-id, never one used before. */
static void assign_field_ids(const struct floe_json *specs, struct floe_ice_partition_field *pf,
			     size_t n, int64_t *last)
{
	for (size_t k = 0; k < n; k++) {
		pf[k].field_id = -1;
		for (size_t i = 0; i < floe_json_len(specs) && pf[k].field_id < 0; i++) {
			const struct floe_json *f = floe_json_get(floe_json_at(specs, i), "fields");
			for (size_t j = 0; j < floe_json_len(f); j++) {
				const struct floe_json *x = floe_json_at(f, j);
				int64_t id;
				const char *name;
				if (int_is(x, "source-id", pf[k].source_id) &&
				    str_is(x, "transform", pf[k].transform) &&
				    floe_json_get_int(x, "field-id", &id) == 0 &&
				    floe_json_get_str(x, "name", &name) == 0) {
					pf[k].field_id = (int32_t)id;
					pf[k].name = name;
					break;
				}
			}
		}
		if (pf[k].field_id < 0)
			pf[k].field_id = (int32_t)++*last;
	}
}

static int set_int(struct floe_json_doc *d, struct floe_json *o, const char *k, int64_t v)
{
	return floe_json_set(d, o, k, floe_json_new_int(d, v));
}

static int set_str(struct floe_json_doc *d, struct floe_json *o, const char *k, const char *v)
{
	return floe_json_set(d, o, k, floe_json_new_str(d, v, strlen(v)));
}

static int64_t max_id(const struct floe_json *arr, const char *key, int64_t floor)
{
	int64_t max = floor;
	for (size_t i = 0; i < floe_json_len(arr); i++) {
		int64_t v;
		if (floe_json_get_int(floe_json_at(arr, i), key, &v) == 0 && v > max)
			max = v;
	}
	return max;
}

/* The new root: a copy of m's with list (a copy of the old array, the new object pushed
 * when add is not NULL) under list_key and default_key set to id. */
static int set_root(struct floe_ice_meta *m, const char *list_key, struct floe_json *add,
		    const char *default_key, int64_t id, const char *last_key, int64_t last,
		    int64_t now_ms)
{
	struct floe_json_doc *d = m->doc;
	struct floe_json *root = floe_ice_json_copy_object(d, m->v.root);
	struct floe_json *list =
	    floe_ice_json_copy_array(d, floe_json_get(m->v.root, list_key), 0);
	int rc;
	if (!root || !list || (add && floe_json_push(d, list, add)))
		return FLOE_ENOMEM;
	if ((rc = floe_json_set(d, root, list_key, list)) || (rc = set_int(d, root, default_key, id)) ||
	    (last_key && (rc = set_int(d, root, last_key, last))))
		return rc;
	if (now_ms < m->v.last_updated_ms)
		now_ms = m->v.last_updated_ms;
	return floe_ice_meta_set_new_root(m, root, NULL, now_ms, 1);
}

int floe_ice_meta_evolve_spec(struct floe_ice_meta *m, struct floe_ice_partition_field *pf, size_t n,
			      bool make_default, int64_t now_ms, int32_t *spec_id, bool *changed,
			      bool *added)
{
	const struct floe_json *specs = floe_json_get(m->v.root, "partition-specs");
	int64_t last = 999;
	*changed = false;
	if (!floe_json_is(specs, FLOE_JSON_ARRAY))
		return FLOE_EUNSUPPORTED; /* a v1 table without partition-specs */
	for (size_t k = 0; k < n; k++)
		if (!pf[k].name || !pf[k].transform)
			return FLOE_EINVAL;
	if (floe_json_get_int(m->v.root, "last-partition-id", &last) || last < 999)
		last = 999;
	for (size_t i = 0; i < floe_json_len(specs); i++) {
		const struct floe_json *f = floe_json_get(floe_json_at(specs, i), "fields");
		int64_t v = max_id(f, "field-id", 999);
		if (v > last)
			last = v;
	}
	assign_field_ids(specs, pf, n, &last);
	int64_t id = equal_spec(specs, pf, n);
	struct floe_json *add = NULL;
	if (id < 0) {
		struct floe_json_doc *d = m->doc;
		struct floe_json *fields = floe_json_new_array(d);
		add = floe_json_new_object(d);
		id = max_id(specs, "spec-id", -1) + 1;
		if (!fields || !add || set_int(d, add, "spec-id", id) ||
		    floe_json_set(d, add, "fields", fields))
			return FLOE_ENOMEM;
		for (size_t k = 0; k < n; k++) {
			struct floe_json *o = floe_json_new_object(d);
			if (!o || floe_json_push(d, fields, o) || set_str(d, o, "name", pf[k].name) ||
			    set_str(d, o, "transform", pf[k].transform) ||
			    set_int(d, o, "source-id", pf[k].source_id) ||
			    set_int(d, o, "field-id", pf[k].field_id))
				return FLOE_ENOMEM;
		}
	}
	*spec_id = (int32_t)id;
	if (added)
		*added = add != NULL;
	if (!add && (!make_default || id == m->v.default_spec_id))
		return 0;
	int rc = set_root(m, "partition-specs", add, "default-spec-id",
			  (make_default || add) ? id : m->v.default_spec_id, "last-partition-id",
			  last, now_ms);
	*changed = rc == 0;
	return rc;
}

static bool equal_order(const struct floe_json *o, const struct floe_ice_sort_field *sf, size_t n)
{
	const struct floe_json *f = floe_json_get(o, "fields");
	bool same = floe_json_len(f) == n;
	for (size_t k = 0; k < n && same; k++) {
		const struct floe_json *x = floe_json_at(f, k);
		same = int_is(x, "source-id", sf[k].source_id) &&
		       str_is(x, "transform", sf[k].transform) &&
		       str_is(x, "direction", sf[k].descending ? "desc" : "asc") &&
		       str_is(x, "null-order", sf[k].nulls_first ? "nulls-first" : "nulls-last");
	}
	return same;
}

int floe_ice_meta_evolve_sort_order(struct floe_ice_meta *m, const struct floe_ice_sort_field *sf,
				    size_t n, int64_t now_ms, int32_t *order_id, bool *changed)
{
	const struct floe_json *orders = floe_json_get(m->v.root, "sort-orders");
	*changed = false;
	if (!floe_json_is(orders, FLOE_JSON_ARRAY))
		return FLOE_EUNSUPPORTED;
	int64_t id = -1;
	for (size_t i = 0; i < floe_json_len(orders) && id < 0; i++) {
		const struct floe_json *o = floe_json_at(orders, i);
		int64_t oid;
		if (floe_json_get_int(o, "order-id", &oid) == 0 && equal_order(o, sf, n))
			id = oid;
	}
	struct floe_json *add = NULL;
	if (id < 0) {
		struct floe_json_doc *d = m->doc;
		struct floe_json *fields = floe_json_new_array(d);
		add = floe_json_new_object(d);
		/* Order 0 is the unsorted order, whatever the table lists. */
		id = n == 0 ? 0 : max_id(orders, "order-id", 0) + 1;
		if (!fields || !add || set_int(d, add, "order-id", id) ||
		    floe_json_set(d, add, "fields", fields))
			return FLOE_ENOMEM;
		for (size_t k = 0; k < n; k++) {
			struct floe_json *o = floe_json_new_object(d);
			if (!sf[k].transform)
				return FLOE_EINVAL;
			if (!o || floe_json_push(d, fields, o) ||
			    set_str(d, o, "transform", sf[k].transform) ||
			    set_int(d, o, "source-id", sf[k].source_id) ||
			    set_str(d, o, "direction", sf[k].descending ? "desc" : "asc") ||
			    set_str(d, o, "null-order", sf[k].nulls_first ? "nulls-first" : "nulls-last"))
				return FLOE_ENOMEM;
		}
	}
	*order_id = (int32_t)id;
	if (!add && id == floe_ice_meta_default_sort_order_id(m))
		return 0;
	int rc = set_root(m, "sort-orders", add, "default-sort-order-id", id, NULL, 0, now_ms);
	*changed = rc == 0;
	return rc;
}
