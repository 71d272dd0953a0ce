/* The Parquet reader's shared pieces, below the footer (reader_footer.c), the pages
 * (reader_page.c) and the rows (reader.c): the sticky first error, the page buffers and
 * range-checked reads through the caller's source. A file of its own so that the three
 * call it and it calls none of them back. */
#include "formats/parquet/reader_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdarg.h>
#include <stdio.h>

/* Page buffers grow in steps of this much, so that pages of about one size share one. */
#define BLOCK_STEP ((size_t)16 << 10)

int pq_fail(struct floe_pq_reader *r, int err, uint64_t off, const char *fmt, ...)
{
	if (r->err)
		return err;
	r->err = err;
	r->detail.code = err;
	r->detail.offset = (size_t)off;
	va_list ap;
	va_start(ap, fmt);
	if (vsnprintf(r->detail.msg, sizeof(r->detail.msg), fmt, ap) < 0)
		r->detail.msg[0] = '\0';
	va_end(ap);
	return err;
}

int pq_block_fit(struct floe_alloc *a, struct pq_block *b, size_t n)
{
	if (n <= b->cap && b->p)
		return 0;
	size_t cap;
	if (__builtin_add_overflow(n, BLOCK_STEP - 1, &cap))
		return FLOE_ELIMIT;
	cap -= cap % BLOCK_STEP;
	/* The old content is not needed: no copy, and never both blocks at once. */
	floe_free(a, b->p);
	b->cap = 0;
	if (!(b->p = floe_malloc(a, cap)))
		return FLOE_ENOMEM;
	b->cap = cap;
	return 0;
}

void pq_block_free(struct floe_alloc *a, struct pq_block *b)
{
	floe_free(a, b->p);
	b->p = NULL;
	b->cap = 0;
}

int pq_read(struct floe_pq_reader *r, uint64_t off, void *buf, size_t len)
{
	uint64_t end;
	if (len == 0)
		return 0;
	if (__builtin_add_overflow(off, (uint64_t)len, &end) || end > r->src.size)
		return pq_fail(r, FLOE_ECORRUPT, off,
			       "a range of %zu bytes at offset %llu lies "
			       "past the end of the file",
			       len, (unsigned long long)off);
	int rc = r->src.read_at(r->src.ctx, off, buf, len);
	if (rc > 0)
		rc = FLOE_EINVAL;
	if (rc)
		return pq_fail(r, rc, off, "reading %zu bytes at offset %llu failed: %s", len,
			       (unsigned long long)off, floe_strerror(rc));
	return 0;
}
