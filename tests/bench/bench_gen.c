/* Log file generator for the tail benchmark: lines from the loghub samples with every
 * digit randomised and a unique sequence number appended, so no line repeats and a
 * dictionary cannot cheat. Writes one file or N files of about BYTES/N each (whole lines).
 *
 * usage: bench_gen OUT BYTES [--files N] [--samples DIR]
 *   --files 1 (default): OUT is the file; N > 1: OUT is a directory, files f000.log...
 * Prints lines=L bytes=B seconds=S.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "samples.h"

/* Line i (with its LF) into out, which has room for any template plus 64 bytes. */
static size_t make_line(uint64_t i, char *out)
{
	const char *t = templates[i % ntemplates];
	size_t o = 0;
	uint64_t r = 0;
	int left = 0;
	for (; *t; t++) {
		if (*t >= '0' && *t <= '9') {
			/* One rnd() gives 19 decimal digits: cheap enough for a GiB. */
			if (left == 0) {
				r = rnd();
				left = 19;
			}
			out[o++] = (char)('0' + r % 10);
			r /= 10;
			left--;
		} else {
			out[o++] = *t;
		}
	}
	memcpy(out + o, " seq=", 5);
	o += 5;
	char dig[24];
	int n = 0;
	do {
		dig[n++] = (char)('0' + i % 10);
		i /= 10;
	} while (i);
	while (n)
		out[o++] = dig[--n];
	out[o++] = '\n';
	return o;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s OUT BYTES [--files N] [--samples DIR]\n", argv[0]);
		return 2;
	}
	const char *out = argv[1], *samples = "tests/data/loghub";
	uint64_t bytes = strtoull(argv[2], NULL, 10);
	unsigned files = 1;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--files") && i + 1 < argc)
			files = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			samples = argv[++i];
		else {
			fprintf(stderr, "unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (files == 0 || files > 100000) {
		fprintf(stderr, "--files must be 1..100000\n");
		return 2;
	}
	load_samples(samples);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);

	static char buf[1 << 20];
	char line[65536 + 64];
	uint64_t seq = 0, total = 0, per = bytes / files;
	for (unsigned k = 0; k < files; k++) {
		char path[4096];
		if (files == 1)
			snprintf(path, sizeof(path), "%s", out);
		else
			snprintf(path, sizeof(path), "%s/f%03u.log", out, k);
		FILE *f = fopen(path, "w");
		if (!f) {
			perror(path);
			return 1;
		}
		uint64_t written = 0;
		size_t used = 0;
		while (written < per) {
			size_t n = make_line(seq++, line);
			if (used + n > sizeof(buf)) {
				if (fwrite(buf, 1, used, f) != used) {
					perror(path);
					return 1;
				}
				used = 0;
			}
			memcpy(buf + used, line, n);
			used += n;
			written += n;
		}
		if ((used && fwrite(buf, 1, used, f) != used) || fclose(f) != 0) {
			perror(path);
			return 1;
		}
		total += written;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("lines=%" PRIu64 " bytes=%" PRIu64 " seconds=%.3f\n", seq, total,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
