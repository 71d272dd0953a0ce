/* Fuzz target: arbitrary bytes read as an Avro object container file; every record is
 * decoded and its value tree walked through the public accessors. Leaks abort. */
#include <stdint.h>
#include <stdlib.h>

#include "formats/avro/avro.h"
#include "formats/base/alloc.h"

static void walk(const struct floe_avro_value *v, int depth)
{
	int64_t i;
	double d;
	bool b;
	const uint8_t *p;
	size_t n;
	const char *sym;
	if (depth > 200)
		abort(); /* the decoder's depth limit must have stopped this */
	(void)floe_avro_value_long(v, &i);
	(void)floe_avro_value_double(v, &d);
	(void)floe_avro_value_bool(v, &b);
	(void)floe_avro_value_bytes(v, &p, &n);
	(void)floe_avro_value_enum(v, &i, &sym);
	for (size_t k = 0; k < floe_avro_value_len(v); k++) {
		(void)floe_avro_value_key_at(v, k, &n);
		walk(floe_avro_value_at(v, k), depth + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	floe_alloc_init(&a, (size_t)256 << 20);
	struct floe_avro_reader *r;
	struct floe_avro_reader_opts o = {.max_record_bytes = (size_t)1 << 20, .max_block_bytes = (size_t)4 << 20};
	if (floe_avro_reader_new(&a, data, size, &o, &r, NULL) == 0) {
		const struct floe_avro_schema *s = floe_avro_reader_schema(r);
		for (size_t k = 0; k < floe_avro_schema_count(s); k++) {
			int32_t id;
			(void)floe_avro_schema_field_name(s, k);
			(void)floe_avro_schema_field_id(s, k, &id);
			(void)floe_avro_schema_at(s, k);
		}
		const struct floe_avro_value *v;
		for (int n = 0; n < 100000 && floe_avro_reader_next(r, &v, NULL) == 1; n++)
			walk(v, 0);
		floe_avro_reader_free(r);
	}
	if (a.used != 0)
		abort();
	return 0;
}
