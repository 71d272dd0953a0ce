/* Lexical path normalisation, file:// URIs, and canonical paths. */
#include "path.h"

#include "formats/base/limits.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int floe_path_absolute(const char *path, char *out, size_t cap)
{
	char tmp[FLOE_PATH_MAX];
	size_t n = 0;
	if (path[0] != '/') {
		if (!getcwd(tmp, sizeof(tmp)))
			return -errno;
		n = strlen(tmp);
	}
	size_t plen = strlen(path);
	if (n + 1 + plen + 1 > sizeof(tmp))
		return -ENAMETOOLONG;
	tmp[n++] = '/';
	memcpy(tmp + n, path, plen + 1);

	/* Rebuild segment by segment into out. */
	size_t o = 0;
	const char *p = tmp;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 1 && p[0] == '.') {
			/* skip */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else {
			if (o + 1 + len + 1 > cap)
				return -ENAMETOOLONG;
			out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p += len;
	}
	if (o == 0) {
		if (cap < 2)
			return -ENAMETOOLONG;
		out[o++] = '/';
	}
	out[o] = '\0';
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int floe_path_from_uri(const char *s, char *out, size_t cap)
{
	if (strncmp(s, "file:", 5) != 0) {
		size_t len = strlen(s);
		if (len + 1 > cap)
			return -ENAMETOOLONG;
		memcpy(out, s, len + 1);
		return 0;
	}
	const char *p = s + 5;
	if (strncmp(p, "//", 2) == 0) {
		p += 2;
		if (strncmp(p, "localhost/", 10) == 0)
			p += 9;
		else if (*p != '/')
			return -EINVAL;
	}
	size_t o = 0;
	for (; *p; p++) {
		char c = *p;
		if (c == '%' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
			c = (char)(hexval(p[1]) * 16 + hexval(p[2]));
			p += 2;
		}
		if (o + 2 > cap)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int floe_path_real(const char *path, char *out, size_t cap)
{
	char *r = realpath(path, NULL);
	if (!r)
		return -errno;
	size_t n = strlen(r);
	int rc = 0;
	if (n + 1 > cap)
		rc = -ENAMETOOLONG;
	else
		memcpy(out, r, n + 1);
	free(r);
	return rc;
}

int floe_path_dir_state(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	closedir(d);
	return access(path, X_OK) == 0 ? 0 : -errno;
}
