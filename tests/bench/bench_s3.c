/* Upload throughput of floe's S3 client: PUTs files (floe_s3_put_file, one connection,
 * one request at a time, multipart above the threshold) and prints bytes, seconds and
 * MB/s. Run by tests/bench/s3.sh; credentials come from AWS_ACCESS_KEY_ID/SECRET.
 * usage: bench_s3 ENDPOINT BUCKET PREFIX [--unsigned] [--multipart BYTES] FILE... */
#include "platform/clock.h"
#include "platform/s3/s3.h"
#include "platform/s3/s3_credentials.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: bench_s3 ENDPOINT BUCKET PREFIX [--unsigned] [--multipart BYTES] FILE...\n");
		return 2;
	}
	struct floe_s3_options o;
	memset(&o, 0, sizeof(o));
	o.endpoint = argv[1];
	o.bucket = argv[2];
	o.region = getenv("S3_REGION") ? getenv("S3_REGION") : "us-east-1";
	o.path_style = true;
	const char *prefix = argv[3];
	int i = 4;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--unsigned") == 0) {
			o.unsigned_payload = true;
		} else if (strcmp(argv[i], "--multipart") == 0 && i + 1 < argc) {
			o.multipart_threshold = strtoll(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "bench_s3: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	int rc = floe_s3_credentials_from_env(NULL, &o.credentials);
	if (rc) {
		fprintf(stderr, "bench_s3: no credentials in the environment\n");
		return 1;
	}
	struct floe_s3 *s3 = NULL;
	if ((rc = floe_s3_new(&o, &s3))) {
		fprintf(stderr, "bench_s3: %s\n", floe_strerror(rc));
		floe_aws_credentials_fini(&o.credentials);
		return 1;
	}
	int64_t bytes = 0;
	int files = 0;
	int64_t t0 = floe_clock_mono_ns();
	for (; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			rc = 1;
			break;
		}
		const char *base = strrchr(argv[i], '/');
		char key[1024];
		snprintf(key, sizeof(key), "%s/%s", prefix, base ? base + 1 : argv[i]);
		if ((rc = floe_s3_put_file(s3, key, argv[i], NULL, NULL))) {
			fprintf(stderr, "bench_s3: put %s: %s (HTTP %d)\n", key, floe_strerror(rc),
				floe_s3_last_status(s3));
			break;
		}
		bytes += st.st_size;
		files++;
	}
	double secs = (double)(floe_clock_mono_ns() - t0) / 1e9;
	if (rc == 0)
		printf("files=%d bytes=%" PRId64 " seconds=%.3f mbps=%.1f\n", files, bytes, secs,
		       (double)bytes / 1048576.0 / secs);
	floe_s3_free(s3);
	floe_aws_credentials_fini(&o.credentials);
	return rc ? 1 : 0;
}
