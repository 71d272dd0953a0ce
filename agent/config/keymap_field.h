/* Private to agent/config/keymap.c: reading and writing a key's field in its struct,
 * whatever its alignment there (memcpy), by the size the key table gives. */
#ifndef FLOE_CONFIG_KEYMAP_FIELD_H
#define FLOE_CONFIG_KEYMAP_FIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void put_ptr(char *field, const void *p)
{
	memcpy(field, &p, sizeof(p));
}

static inline void *get_ptr(const char *field)
{
	void *p;
	memcpy(&p, field, sizeof(p));
	return p;
}

static inline void put_size(char *field, size_t n)
{
	memcpy(field, &n, sizeof(n));
}

static inline size_t get_size(const char *field)
{
	size_t n;
	memcpy(&n, field, sizeof(n));
	return n;
}

static inline void put_u64(char *field, uint64_t v)
{
	memcpy(field, &v, sizeof(v));
}

static inline uint64_t get_u64(const char *field)
{
	uint64_t v;
	memcpy(&v, field, sizeof(v));
	return v;
}

/* Stores v in a bool (size 1) or an int-sized enum, int or uint32_t (the key's range keeps
 * a uint32_t's value within int, where both have the same representation). */
static inline void put_small(char *field, size_t size, int64_t v)
{
	if (size == 1) {
		bool b = v != 0;
		memcpy(field, &b, 1);
	} else {
		int i = (int)v;
		memcpy(field, &i, sizeof(i));
	}
}

static inline int64_t get_small(const char *field, size_t size)
{
	if (size == 1) {
		uint8_t b;
		memcpy(&b, field, 1);
		return b;
	}
	int i;
	memcpy(&i, field, sizeof(i));
	return i;
}

#endif
