/* Secret references from the configuration: "env:NAME" (an environment variable) or
 * "file:/path" (a file's content, one trailing newline removed). The value never goes to
 * a log; free it with floe_secret_free, which wipes it. */
#ifndef FLOE_SECRET_H
#define FLOE_SECRET_H

/* -EINVAL for a reference of another form, -ENOENT for an unset variable or a missing
 * file, -EFBIG for a file over 64 KiB, -ENODATA for an empty value. */
int floe_secret_resolve(const char *ref, char **out);
void floe_secret_free(char *secret);

#endif
