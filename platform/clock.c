/* Clocks (clock_gettime), randomness (getrandom) and the host name. */
#include "clock.h"

#include "formats/base/hex.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* The build asks for a 64-bit time_t everywhere (CMakeLists.txt): wall-clock times past
 * 2038 must not wrap on 32-bit devices. */
_Static_assert(sizeof(time_t) == 8, "time_t must be 64 bits (_TIME_BITS=64)");

int64_t floe_clock_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + (int64_t)ts.tv_nsec / 1000;
}

int64_t floe_clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}

int floe_random_bytes(void *p, size_t n)
{
	unsigned char *c = p;
	while (n > 0) {
		ssize_t r = getrandom(c, n, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int floe_hostname(char *out, size_t cap)
{
	if (cap == 0)
		return -ENAMETOOLONG;
	char name[256 + 1];
	if (gethostname(name, sizeof(name) - 1) != 0)
		return -errno;
	name[sizeof(name) - 1] = 0;
	size_t n = strlen(name);
	if (n >= cap)
		return -ENAMETOOLONG;
	memcpy(out, name, n + 1);
	return 0;
}

void floe_uuid4(char out[37])
{
	unsigned char b[16];
	if (floe_random_bytes(b, sizeof(b)) != 0) {
		/* getrandom cannot fail on a kernel with it (>= 3.17) once seeded; should it, a
		 * clock- and pid-seeded mix still gives distinct ids in practice. */
		uint64_t x = (uint64_t)floe_clock_mono_ns() ^ ((uint64_t)getpid() << 32) ^
			     (uint64_t)floe_clock_now_us();
		for (size_t i = 0; i < sizeof(b); i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			b[i] = (unsigned char)(x >> 24);
		}
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	size_t o = 0;
	for (size_t i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = floe_hex_char(b[i] >> 4);
		out[o++] = floe_hex_char(b[i]);
	}
	out[o] = 0;
}
