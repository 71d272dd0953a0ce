/* platform/http.h in a build without libcurl (FLOE_WITH_S3=OFF, FLOE_STATIC): no client.
 * The configuration refuses what would need one (a REST catalog) before it gets here. */
#include "platform/http.h"

#include <errno.h>
#include <string.h>

int floe_http_new(struct floe_alloc *a, struct floe_http **out)
{
	(void)a;
	*out = NULL;
	return -ENOTSUP;
}

void floe_http_free(struct floe_http *h)
{
	(void)h;
}

int floe_http_run(struct floe_http *h, const struct floe_http_req *rq, struct floe_http_resp *r,
		  char *why, size_t cap)
{
	(void)h;
	(void)rq;
	(void)r;
	if (cap)
		why[0] = '\0';
	return -ENOTSUP;
}

void floe_http_resp_fini(struct floe_http_resp *r)
{
	memset(r, 0, sizeof(*r));
}
