/* Parquet reader on large files, apart from test_pq_reader so that each stays well within
 * the test time limit under emulation: a 1,000,000-row file read back row by row, and the
 * reader's memory, which follows the largest page and not the file. */
/* FLOE_TEST_SLOW: 1,000,000 rows take minutes under qemu-user. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pq_check.h"

/* 1,000,000 rows with the agent's settings (1 MiB budget, bloom filters), in the compact
 * profile, whose pages use every encoding (the matrix above has both profiles). The rows
 * are checked; writing them again (as the smaller files are) would double the time. */
static void test_million_rows(void **state)
{
	(void)state;
	/* LZ4_RAW: ZSTD at the profile's level 6 would take most of the time, and the
	 * matrix has ZSTD. */
	struct cfg c = {.codec = FLOE_PQ_LZ4_RAW,
			.profile = FLOE_PQ_PROFILE_COMPACT,
			.bloom = true,
			.budget = 1 << 20};
	struct mem m;
	write_file(&c, 9, 1000000, &m);
	check_file_(&c, 9, 1000000, &m, false);
	unsigned enc = footer_encodings(&m);
	assert_true(enc & (1u << 5)); /* DELTA_BINARY_PACKED */
	assert_true(enc & (1u << 8)); /* RLE_DICTIONARY */
	free(m.p);
}

/* The reader's memory follows the largest page, not the file. */
static void test_memory_fixed(void **state)
{
	(void)state;
	size_t peak[2];
	for (int k = 0; k < 2; k++) {
		struct cfg c = {.codec = FLOE_PQ_ZSTD, .page_size = 8192, .budget = 256 << 10};
		struct mem m;
		write_file(&c, 3, k ? 100000 : 10000, &m);
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		struct pq_memsrc ms;
		struct floe_pq_reader *r = open_mem(&a, &ms, &m);
		const struct floe_pq_value *got;
		while (floe_pq_reader_next(r, &got) == 1)
			;
		peak[k] = a.peak;
		floe_pq_reader_free(r);
		free(m.p);
	}
	/* Ten times the rows: more row groups in the footer, nothing else. */
	assert_true(peak[1] < peak[0] + peak[0] / 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_million_rows),
	    cmocka_unit_test(test_memory_fixed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
