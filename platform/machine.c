/* This machine's hardware fingerprint (platform/machine.h). */
#include "machine.h"

#include "formats/base/buf.h"
#include "platform/sha.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEVICES 64
#define VALUE_MAX 128

/* The first line of a small file (sysfs attribute), its trailing newline and NULs cut;
 * false when it cannot be read or is empty. */
static bool read_value(const char *path, char out[VALUE_MAX])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n;
	do
		n = read(fd, out, VALUE_MAX - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return false;
	out[n] = '\0';
	size_t len = strcspn(out, "\n"); /* a device tree string ends at its NUL */
	len = strnlen(out, len);
	while (len && (out[len - 1] == ' ' || out[len - 1] == '\r'))
		len--;
	out[len] = '\0';
	return len > 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dir/dev/attr into p; false when it does not fit. */
static bool attr_path(char *p, size_t cap, const char *dir, const char *dev, const char *attr)
{
	int n = snprintf(p, cap, "%s/%s/%s", dir, dev, attr);
	return n > 0 && (size_t)n < cap;
}

/* The permanent addresses of physical network devices (those with a device link and
 * addr_assign_type 0), sorted, as "mac=..." lines. */
static int add_macs(const char *root, struct floe_buf *b)
{
	char dir[512];
	int dn = snprintf(dir, sizeof(dir), "%s/sys/class/net", root);
	if (dn < 0 || (size_t)dn >= sizeof(dir))
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	char macs[MAX_DEVICES][VALUE_MAX];
	char *sorted[MAX_DEVICES];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < MAX_DEVICES) {
		if (e->d_name[0] == '.')
			continue;
		char p[768], v[VALUE_MAX];
		if (!attr_path(p, sizeof(p), dir, e->d_name, "device") || access(p, F_OK) != 0)
			continue; /* virtual: loopback, bridges, veth, tunnels */
		if (!attr_path(p, sizeof(p), dir, e->d_name, "addr_assign_type") ||
		    !read_value(p, v) || strcmp(v, "0") != 0)
			continue; /* random, stolen or set: not the hardware's */
		if (!attr_path(p, sizeof(p), dir, e->d_name, "address") || !read_value(p, v) ||
		    strspn(v, "0:") == strlen(v))
			continue;
		memcpy(macs[n], v, VALUE_MAX);
		sorted[n] = macs[n];
		n++;
	}
	closedir(d);
	qsort(sorted, n, sizeof(sorted[0]), cmp_str);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = floe_buf_printf(b, "mac=%s\n", sorted[i]);
	return rc;
}

int floe_machine_hardware(const char *root, char out[FLOE_MACHINE_HW_HEX + 1])
{
	if (!root)
		root = getenv("FLOE_TEST_MACHINE_ROOT"); /* tests: a machine of their own */
	if (!root)
		root = "";
	struct floe_buf b;
	floe_buf_init(&b, NULL, 16384);
	int rc = add_macs(root, &b);
	static const struct {
		const char *key, *path;
	} files[] = {
	    {"serial", "/sys/firmware/devicetree/base/serial-number"},
	};
	for (size_t i = 0; rc == 0 && i < sizeof(files) / sizeof(files[0]); i++) {
		char p[512], v[VALUE_MAX];
		int pn = snprintf(p, sizeof(p), "%s%s", root, files[i].path);
		if (pn > 0 && (size_t)pn < sizeof(p) && read_value(p, v))
			rc = floe_buf_printf(&b, "%s=%s\n", files[i].key, v);
	}
	if (rc == 0 && b.len == 0)
		rc = -ENOENT;
	if (rc == 0)
		rc = floe_sha256_hex(b.data, b.len, out);
	floe_buf_fini(&b);
	return rc;
}
