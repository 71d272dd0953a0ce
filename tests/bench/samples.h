/* Log-line templates for the benchmark programs: the loghub samples, loaded once, and a
 * deterministic random generator, so that every run of a benchmark produces the same rows.
 * Included by bench_gen.c and bench_parquet.c (each is one program). */
#ifndef FLOE_BENCH_SAMPLES_H
#define FLOE_BENCH_SAMPLES_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEMPLATES 20000

static char *templates[MAX_TEMPLATES];
static size_t ntemplates;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so every run produces the same rows. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static void load_samples(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		perror(dir);
		exit(2);
	}
	struct dirent *e;
	char path[4096], line[65536];
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 5 || strcmp(e->d_name + n - 4, ".log") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f) && ntemplates < MAX_TEMPLATES) {
			size_t len = strcspn(line, "\r\n");
			line[len] = '\0';
			if (len)
				templates[ntemplates++] = strdup(line);
		}
		if (f)
			fclose(f);
	}
	closedir(d);
	if (ntemplates == 0) {
		fprintf(stderr, "no samples in %s\n", dir);
		exit(2);
	}
}

#endif
