/* Secret references from the configuration: "env:NAME" (an environment variable) or
 * "file:/path" (a file's content, one trailing newline removed). The value never goes to
 * a log; free it with floe_secret_free, which wipes it. */
#ifndef FLOE_SECRET_H
#define FLOE_SECRET_H

struct floe_alloc;

/* The value of ref in a new string from a (owned: floe_secret_free). -EINVAL for a
 * reference of another form, -ENOENT for an unset variable or a missing file, -EFBIG for
 * a file over 64 KiB, -ENODATA for an empty value, -EILSEQ for a file that holds a NUL
 * byte, FLOE_ENOMEM. */
int floe_secret_resolve(struct floe_alloc *a, const char *ref, char **out);
/* The value of a "file:" reference's file at path, as floe_secret_resolve gives it (for
 * the callers that read the file again when it changes). */
int floe_secret_read_file(struct floe_alloc *a, const char *path, char **out);
/* Wipes and frees a value of floe_secret_resolve from a; NULL is fine. */
void floe_secret_free(struct floe_alloc *a, char *secret);

#endif
