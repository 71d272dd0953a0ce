/* The power-cut tests' crash-state generator: reads a recording of floe's durable file
 * operations (platform/fs_record.h) and the directory image the recorded run started
 * from, and writes one disk state that a power cut after the first POINT operations may
 * leave under the rules of tests/crash/README.md (ext4 data=ordered, taken
 * pessimistically). Variant 0 is the worst case (every unsynced byte and directory entry
 * dropped); variant v > 0 draws each choice from a generator seeded by (seed, point, v),
 * so any state can be made again from the three numbers the test prints. Variant dK
 * loses the unsynced entries of the K'th directory that has any and keeps every other
 * directory's: the states where one directory's names lag behind the others'.
 *
 *   crashgen count LOG                            the number of operations
 *   crashgen ends LOG                             each operation's end in LOG (a byte
 *                                                 offset), one a line: a server that
 *                                                 noted the log's size at a request
 *                                                 tells which operations came before it
 *   crashgen make LOG ROOT INIT POINT VARIANT SEED  writes the state into ROOT (absent or
 *                                                 empty) and prints its content hash;
 *                                                 VARIANT a number, or dK (below)
 *
 * Only paths under ROOT are modelled: floe's state directory and local warehouse live
 * there, the input files elsewhere (they are not floe's to make durable). INIT is the
 * image of ROOT before the recorded run ("-" for none). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK 4096

enum kind { CREATE, WRITE, FSYNC, CLOSE, RENAME, LINK, UNLINK, MKDIR, FSYNCDIR };
static const char *const kind_names[] = {"create", "write",  "fsync", "close",	 "rename",
					 "link",   "unlink", "mkdir", "fsyncdir"};

struct op {
	enum kind kind;
	char *path, *path2;
	const unsigned char *data; /* a write's bytes, inside the mapped log */
	uint64_t off, len;
	uint64_t end;  /* where its record ends in the log */
	int ino;       /* the file the operation acted on (create, rename, link) */
	char *dir;     /* the directory whose entry it changes (entry operations), or NULL */
	bool is_entry; /* it adds, moves or removes a name */
};

struct buf {
	unsigned char *p;
	uint64_t n, cap;
};

struct inode {
	struct buf cur, synced;
	bool truncated; /* emptied by a create since its last fsync: the old bytes may be back */
};

struct name {
	char *path;
	int ino;   /* -1 for a directory */
	bool made; /* written into the state */
};

struct names {
	struct name *v;
	size_t n, cap;
};

static struct op *ops;
static size_t nops, capops;
static struct inode *inodes;
static size_t ninodes, capinodes;

static void die(const char *what)
{
	fprintf(stderr, "crashgen: %s\n", what);
	exit(2);
}

/* A system call on path failed: what, the path and errno's reason. */
static void die_path(const char *what, const char *path)
{
	fprintf(stderr, "crashgen: %s: %s: %s\n", what, path, strerror(errno));
	exit(2);
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 64;
	p = realloc(p, *cap * size);
	if (!p)
		die("out of memory");
	return p;
}

static void buf_set(struct buf *b, const unsigned char *p, uint64_t n)
{
	if (n > b->cap) {
		b->p = realloc(b->p, n);
		if (!b->p)
			die("out of memory");
		b->cap = n;
	}
	if (n)
		memcpy(b->p, p, n);
	b->n = n;
}

static void buf_put(struct buf *b, uint64_t off, const unsigned char *p, uint64_t n)
{
	uint64_t end = off + n;
	if (end > b->cap) {
		uint64_t cap = b->cap ? b->cap : 4096;
		while (cap < end)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			die("out of memory");
		b->cap = cap;
	}
	if (off > b->n)
		memset(b->p + b->n, 0, off - b->n); /* a hole reads as zeros */
	memcpy(b->p + off, p, n);
	if (end > b->n)
		b->n = end;
}

static int new_inode(void)
{
	inodes = grow(inodes, &capinodes, ninodes, sizeof(*inodes));
	memset(&inodes[ninodes], 0, sizeof(inodes[ninodes]));
	return (int)ninodes++;
}

/* --- names: a flat list, small enough for linear search ------------------------------ */

static struct name *find(struct names *ns, const char *path)
{
	for (size_t i = 0; i < ns->n; i++)
		if (strcmp(ns->v[i].path, path) == 0)
			return &ns->v[i];
	return NULL;
}

static void put_name(struct names *ns, const char *path, int ino)
{
	struct name *e = find(ns, path);
	if (e) {
		e->ino = ino;
		return;
	}
	ns->v = grow(ns->v, &ns->cap, ns->n, sizeof(*ns->v));
	ns->v[ns->n].path = strdup(path);
	ns->v[ns->n].made = false;
	ns->v[ns->n++].ino = ino;
}

static void free_names(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i].path);
	free(ns->v);
}

static void drop_name(struct names *ns, const char *path)
{
	struct name *e = find(ns, path);
	if (e) {
		free(e->path);
		*e = ns->v[--ns->n];
	}
}

/* The directory part of path, owned by the caller. */
static char *dir_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s == path ? strdup("/") : strndup(path, s ? (size_t)(s - path) : 0);
}

static bool has_dir(struct names *ns, const char *path)
{
	char *d = dir_of(path);
	struct name *e = find(ns, d);
	free(d);
	return e && e->ino < 0;
}

/* --- the recording ------------------------------------------------------------------- */

static char *unescape(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;
	if (!out)
		die("out of memory");
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n) {
			char h[3] = {s[i + 1], s[i + 2], 0};
			*o++ = (char)strtol(h, NULL, 16);
			i += 2;
		} else {
			*o++ = s[i];
		}
	}
	*o = 0;
	return out;
}

/* The next space- or newline-ended word at *p (below end), unescaped. */
static char *word(const char **p, const char *end)
{
	const char *s = *p;
	while (*p < end && **p != ' ' && **p != '\n')
		(*p)++;
	if (*p >= end)
		die("the recording ends inside an operation");
	char *w = unescape(s, (size_t)(*p - s));
	return w;
}

static void parse(const char *log, size_t size)
{
	const char *p = log, *end = log + size;
	while (p < end) {
		char *name = word(&p, end);
		int k = -1;
		for (int i = 0; i <= FSYNCDIR; i++)
			if (strcmp(name, kind_names[i]) == 0)
				k = i;
		if (k < 0 || *p != ' ')
			die("an unknown operation in the recording");
		free(name);
		p++;
		ops = grow(ops, &capops, nops, sizeof(*ops));
		struct op *o = &ops[nops++];
		memset(o, 0, sizeof(*o));
		o->kind = (enum kind)k;
		o->ino = -1;
		o->path = word(&p, end);
		if (o->path[0] != '/')
			die("a relative path in the recording: floe must be given absolute ones");
		if (k == WRITE) {
			char *off = (p++, word(&p, end));
			char *len = (p++, word(&p, end));
			o->off = strtoull(off, NULL, 10);
			o->len = strtoull(len, NULL, 10);
			free(off);
			free(len);
			if (*p != '\n' || (uint64_t)(end - p) < o->len + 2 || p[1 + o->len] != '\n')
				die("a write's bytes are cut short");
			o->data = (const unsigned char *)p + 1;
			p += o->len + 1;
		} else if (*p == ' ') {
			p++;
			o->path2 = word(&p, end);
		}
		if (*p != '\n')
			die("an operation has trailing words");
		p++;
		o->end = (uint64_t)(p - log);
	}
}

/* --- the initial image --------------------------------------------------------------- */

static void load_tree(struct names *vns, const char *img, const char *root, const char *rel)
{
	char *ipath = NULL, *rpath = NULL;
	if (asprintf(&ipath, "%s%s", img, rel) < 0 || asprintf(&rpath, "%s%s", root, rel) < 0)
		die("out of memory");
	DIR *d = opendir(ipath);
	if (!d)
		die_path("cannot read the initial image", ipath);
	put_name(vns, rpath, -1);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char *sub = NULL, *full = NULL, *rfull = NULL;
		if (asprintf(&sub, "%s/%s", rel, e->d_name) < 0 ||
		    asprintf(&full, "%s%s", img, sub) < 0 ||
		    asprintf(&rfull, "%s%s", root, sub) < 0)
			die("out of memory");
		struct stat st;
		if (lstat(full, &st) != 0)
			die_path("cannot stat the initial image", full);
		if (S_ISDIR(st.st_mode)) {
			load_tree(vns, img, root, sub);
		} else if (S_ISREG(st.st_mode)) {
			int ino = new_inode();
			errno = 0; /* a short read leaves it 0: "Success" then means cut short */
			int fd = open(full, O_RDONLY);
			unsigned char *c = st.st_size ? malloc((size_t)st.st_size) : NULL;
			if (fd < 0 ||
			    (st.st_size && (!c || read(fd, c, (size_t)st.st_size) != st.st_size)))
				die_path("cannot read the initial image", full);
			close(fd);
			buf_set(&inodes[ino].cur, c, (uint64_t)st.st_size);
			buf_set(&inodes[ino].synced, c, (uint64_t)st.st_size);
			free(c);
			put_name(vns, rfull, ino);
		}
		free(sub);
		free(full);
		free(rfull);
	}
	closedir(d);
	free(ipath);
	free(rpath);
}

/* --- replay -------------------------------------------------------------------------- */

static bool under(const char *path, const char *root)
{
	size_t n = strlen(root);
	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == 0);
}

/* Runs ops[0..point) on the volatile model (what the running system saw): file contents,
 * the last synced contents, and which file each entry operation acted on. open holds the
 * files open for writing by the path they were created under. */
static void replay(struct names *vns, size_t point, const char *root)
{
	struct names open = {0};
	for (size_t i = 0; i < point; i++) {
		struct op *o = &ops[i];
		if (!under(o->path, root))
			continue;
		struct name *e = find(vns, o->path);
		struct name *h = find(&open, o->path);
		switch (o->kind) {
		case CREATE:
			if (e && e->ino >= 0) {
				o->ino = e->ino;
				inodes[o->ino].cur.n = 0;
				inodes[o->ino].truncated = true;
			} else {
				o->ino = new_inode();
				put_name(vns, o->path, o->ino);
				o->is_entry = true;
			}
			put_name(&open, o->path, o->ino);
			break;
		case WRITE:
			if (!h)
				die("a write to a file not open");
			buf_put(&inodes[h->ino].cur, o->off, o->data, o->len);
			break;
		case FSYNC: {
			int ino = h ? h->ino : e ? e->ino : -1;
			if (ino < 0)
				die("an fsync of a file not open");
			struct inode *f = &inodes[ino];
			buf_set(&f->synced, f->cur.p, f->cur.n);
			f->truncated = false;
			break;
		}
		case CLOSE:
			drop_name(&open, o->path);
			break;
		case RENAME:
		case LINK:
			if (!e || e->ino < 0)
				die("a rename or link of an unknown file");
			o->ino = e->ino;
			if (o->kind == RENAME)
				drop_name(vns, o->path);
			put_name(vns, o->path2, o->ino);
			o->is_entry = true;
			break;
		case UNLINK:
			drop_name(vns, o->path);
			o->is_entry = true;
			break;
		case MKDIR:
			put_name(vns, o->path, -1);
			o->is_entry = true;
			break;
		case FSYNCDIR:
			break;
		}
		/* A rename or link belongs to the directory it puts its name in. */
		if (o->is_entry)
			o->dir = dir_of(o->kind == RENAME || o->kind == LINK ? o->path2 : o->path);
	}
	free_names(&open);
}

/* splitmix64: small, seedable and the same everywhere. */
static uint64_t rng;
static uint64_t draw(uint64_t n)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return n ? (z ^ (z >> 31)) % n : 0;
}

/* Which entry operations survive: those followed by an fsync of their directory before
 * the cut, then, of the rest, an in-order prefix per directory: none in the worst case, a
 * drawn length otherwise, or with lose_dir >= 0, none in the lose_dir'th directory (in
 * the order of their first unsynced entry) and all in every other. */
static void choose_entries(size_t point, bool worst, long lose_dir, bool *kept)
{
	bool *seen = calloc(point + 1, sizeof(*seen));
	if (!seen)
		die("out of memory");
	for (size_t i = 0; i < point; i++) {
		kept[i] = false;
		if (!ops[i].is_entry)
			continue;
		for (size_t j = i + 1; j < point && !kept[i]; j++)
			kept[i] = ops[j].kind == FSYNCDIR && strcmp(ops[j].path, ops[i].dir) == 0;
		seen[i] = kept[i];
	}
	long group = 0;
	for (size_t i = 0; i < point; i++) {
		if (!ops[i].is_entry || seen[i])
			continue;
		/* The first pending entry of its directory: draw how many of them stay. */
		size_t pending = 0;
		for (size_t j = i; j < point; j++)
			pending +=
			    ops[j].is_entry && !seen[j] && strcmp(ops[j].dir, ops[i].dir) == 0;
		size_t keep = lose_dir >= 0 ? (group++ == lose_dir ? 0 : pending)
			      : worst	    ? 0
					    : (size_t)draw(pending + 1);
		for (size_t j = i; j < point; j++) {
			if (!ops[j].is_entry || seen[j] || strcmp(ops[j].dir, ops[i].dir) != 0)
				continue;
			seen[j] = true;
			kept[j] = keep > 0;
			keep -= keep > 0;
		}
	}
	free(seen);
}

/* The bytes a file holds after the cut: its synced bytes, or its current bytes up to a
 * block boundary past them, or all of them. *n gets the length; the pointer is borrowed. */
static const unsigned char *choose_bytes(struct inode *f, bool worst, uint64_t *n)
{
	uint64_t from = f->truncated ? 0 : f->synced.n;
	if (worst || f->cur.n <= from) {
		*n = f->synced.n;
		return f->synced.p;
	}
	/* Options: the synced bytes, each block boundary in (from, cur), and cur itself. */
	uint64_t first = from / BLOCK + 1, last = (f->cur.n - 1) / BLOCK;
	uint64_t blocks = last >= first ? last - first + 1 : 0;
	uint64_t pick = draw(blocks + 2);
	if (pick == 0) {
		*n = f->synced.n;
		return f->synced.p;
	}
	*n = pick <= blocks ? (first + pick - 1) * BLOCK : f->cur.n;
	return f->cur.p;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct name *)a)->path, ((const struct name *)b)->path);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ULL;
	return h;
}

static void mkdirs(const char *path)
{
	char *p = strdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		mkdir(p, 0755);
		*s = '/';
	}
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		die("cannot make a directory of the state");
	free(p);
}

static void make(const char *root, const char *init, size_t point, const char *variant_arg,
		 uint64_t seed)
{
	/* "dK": the K'th directory's unsynced entries lost, the others' kept, unsynced
	 * bytes lost: the states where one directory's names lag the others'. */
	long lose_dir = variant_arg[0] == 'd' ? strtol(variant_arg + 1, NULL, 10) : -1;
	uint64_t variant = lose_dir >= 0 ? 0 : strtoull(variant_arg, NULL, 10);
	struct names vns = {0}, cns = {0};
	if (strcmp(init, "-") != 0)
		load_tree(&vns, init, root, "");
	/* The crash's names start as the image's. */
	for (size_t i = 0; i < vns.n; i++)
		put_name(&cns, vns.v[i].path, vns.v[i].ino);
	if (!find(&cns, root))
		put_name(&cns, root, -1); /* ROOT itself: made by the test, durable */
	replay(&vns, point, root);
	rng = seed ^ (point * 0x9e3779b97f4a7c15ULL) ^ (variant * 0xc2b2ae3d27d4eb4fULL);
	bool worst = variant == 0;
	bool *kept = calloc(point + 1, sizeof(*kept));
	choose_entries(point, worst, lose_dir, kept);
	size_t lost = 0;
	for (size_t i = 0; i < point; i++) {
		struct op *o = &ops[i];
		if (!o->dir)
			continue;
		if (!kept[i]) {
			lost++;
			continue;
		}
		const char *to = o->kind == RENAME || o->kind == LINK ? o->path2 : o->path;
		if (!has_dir(&cns, to))
			continue; /* its directory's own entry was lost */
		if (o->kind == UNLINK)
			drop_name(&cns, o->path);
		else if (o->kind == MKDIR)
			put_name(&cns, o->path, -1);
		else
			put_name(&cns, to, o->ino);
		if (o->kind == RENAME)
			drop_name(&cns, o->path);
	}
	/* Sorted, a directory comes before what it holds: one whose entry was lost (not
	 * made) takes everything under it along. */
	qsort(cns.v, cns.n, sizeof(*cns.v), cmp_name);
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t files = 0, cut = 0;
	for (size_t i = 0; i < cns.n; i++) {
		struct name *e = &cns.v[i];
		if (strcmp(e->path, root) != 0) {
			char *d = dir_of(e->path);
			struct name *p = find(&cns, d);
			free(d);
			if (!p || p->ino >= 0 || !p->made)
				continue;
		}
		e->made = true;
		const char *rel = e->path + strlen(root);
		h = fnv(h, rel, strlen(rel) + 1);
		if (e->ino < 0) {
			mkdirs(e->path);
			continue;
		}
		uint64_t n;
		struct inode *f = &inodes[e->ino];
		const unsigned char *c = choose_bytes(f, worst, &n);
		cut += n != f->cur.n;
		files++;
		h = fnv(h, &n, sizeof(n));
		h = fnv(h, c, (size_t)n);
		int fd = open(e->path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0 || (n && write(fd, c, (size_t)n) != (ssize_t)n) || close(fd) != 0)
			die("cannot write a file of the state");
	}
	printf("%016llx\n", (unsigned long long)h);
	fprintf(stderr,
		"crashgen: point %zu (after %s %s) variant %s seed %llu: %zu files, "
		"%zu cut short, %zu entries lost\n",
		point, point ? kind_names[ops[point - 1].kind] : "nothing",
		point ? ops[point - 1].path : "", variant_arg, (unsigned long long)seed, files, cut,
		lost);
	free(kept);
	free_names(&vns);
	free_names(&cns);
}

/* Everything the recording and the replay hold (a sanitizer build checks for leaks). */
static void free_all(void)
{
	for (size_t i = 0; i < nops; i++) {
		free(ops[i].path);
		free(ops[i].path2);
		free(ops[i].dir);
	}
	free(ops);
	for (size_t i = 0; i < ninodes; i++) {
		free(inodes[i].cur.p);
		free(inodes[i].synced.p);
	}
	free(inodes);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		die("usage: crashgen count|ends LOG | crashgen make LOG ROOT INIT POINT VARIANT "
		    "SEED");
	int fd = open(argv[2], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		die("cannot open the recording");
	const char *log =
	    st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : "";
	if (log == MAP_FAILED)
		die("cannot map the recording");
	parse(log, (size_t)st.st_size);
	if (strcmp(argv[1], "count") == 0) {
		printf("%zu\n", nops);
		free_all();
		return 0;
	}
	if (strcmp(argv[1], "ends") == 0) {
		for (size_t i = 0; i < nops; i++)
			printf("%llu\n", (unsigned long long)ops[i].end);
		free_all();
		return 0;
	}
	if (strcmp(argv[1], "make") != 0 || argc != 8)
		die("usage: crashgen make LOG ROOT INIT POINT VARIANT SEED");
	size_t point = (size_t)strtoull(argv[5], NULL, 10);
	if (point > nops)
		die("the point is past the recording's end");
	make(argv[3], argv[4], point, argv[6], strtoull(argv[7], NULL, 10));
	free_all();
	return 0;
}
