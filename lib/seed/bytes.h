/* seed/bytes.h: little-endian integers, the bits of a double and FNV-1a,
 * for the library's own binary formats (the sum tree's and the replay's
 * snapshots, safetensors' header length, TensorBoard's records), whatever
 * the host's byte order.  Shared by core, io and replay, so it is a public
 * header (installed with the others, seed_bytes(3)): static inline, no
 * state, nothing exported from the library. */
#ifndef SEED_BYTES_H
#define SEED_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void seed_le_put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void seed_le_put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t seed_le_get32(const unsigned char *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static inline uint64_t seed_le_get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* A double's bits as a u64, and back (exact: NaN payloads included). */
static inline uint64_t seed_f64_bits(double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof v);
	return v;
}

static inline double seed_bits_f64(uint64_t v)
{
	double d;
	memcpy(&d, &v, sizeof d);
	return d;
}

/* FNV-1a 64 of n bytes, continuing from h (SEED_FNV1A_INIT to start), so
 * that a checksum can run over pieces. */
#define SEED_FNV1A_INIT 0xcbf29ce484222325ull

static inline uint64_t seed_fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

#endif
