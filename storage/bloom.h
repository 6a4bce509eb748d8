/*
** bloom.h — the bloom filter of a sorted file: one filter per file over its
** user keys, or over the key prefixes chosen by sst_options.xBloomPrefix
** (so that one probe answers for a whole row).
**
** Format (the contents of the file's bloom block; doc/format.md "Bloom
** block" has the bytes):
**
**     line[nLines] (64 bytes each) | nLines (u32) | k (u8) | kind (u8)
**     | hash (u8) | reserved (u8, 0)
**
** A key is hashed once with XXH3-64 (seed 0) into h. The high 32 bits of h
** choose one 64-byte line (cache line): line = (h >> 32) * nLines >> 32.
** Inside that line's 512 bits, k probes by double hashing in 32-bit
** arithmetic: bit_i = ((a + i*d) mod 2^32) >> 23, with a = h mod 2^32 and
** d = ((h * 0x9E3779B97F4A7C15 mod 2^64) >> 32) | 1. Bit b of a line is
** bit (b & 7) of byte (b >> 3). One probe costs one cache miss.
** k = round(bits per key * ln 2), 1..30; nLines = ceil(keys * bits / 512).
** k == 0 means "no filter" (every probe says maybe).
*/
#ifndef WCS_BLOOM_H
#define WCS_BLOOM_H

#include <stddef.h>
#include <stdint.h>

#include "storage/util.h"

#define WCS_BLOOM_LINE        64 /* bytes per line */
#define WCS_BLOOM_TAIL        8  /* bytes after the lines */
#define WCS_BLOOM_KIND_KEYS   0  /* filter holds whole user keys */
#define WCS_BLOOM_KIND_PREFIX 1  /* filter holds xBloomPrefix prefixes */
#define WCS_BLOOM_HASH_XXH3   1  /* hash id: XXH3-64, seed 0, scheme above */
#define WCS_BLOOM_MAX_K       30

/* The hash every probe and insertion uses. */
uint64_t bloom_hash(const void *p, size_t n);

/* Collects hashes while a file is written; builds the filter at the end. */
typedef struct bloom_builder {
  uint64_t *aHash; /* hashes added so far */
  size_t nHash;    /* hashes in aHash */
  size_t nAlloc;   /* slots allocated at aHash */
  int nBits;       /* bits per key; 0 = build an empty "no filter" block */
} bloom_builder;

void bloom_builder_init(bloom_builder *, int nBitsPerKey);
int bloom_builder_grow(bloom_builder *, uint64_t h); /* add's slow way */
/* Add a hash: WCS_OK or WCS_NOMEM. Inline while there is room (a bulk
** load adds one per row and family). */
static inline int bloom_builder_add(bloom_builder *p, uint64_t h) {
  if (p->nHash >= p->nAlloc) return bloom_builder_grow(p, h);
  p->aHash[p->nHash++] = h;
  return WCS_OK;
}
/* Append the block contents to pOut (kind: WCS_BLOOM_KIND_*). */
int bloom_builder_finish(bloom_builder *, int iKind, wcs_buf *pOut);
void bloom_builder_free(bloom_builder *);

/* A filter being read; points into block contents the caller keeps. */
typedef struct wcs_bloom {
  const uint8_t *aLine; /* nLines * 64 bytes */
  uint32_t nLines;      /* lines; 0 with k > 0: the file has no keys */
  uint8_t k;            /* probes per key; 0 = no filter */
  uint8_t iKind;        /* WCS_BLOOM_KIND_* */
} wcs_bloom;

/* Parse block contents. WCS_OK or WCS_CORRUPT (sizes do not agree). A hash
** id this build does not know yields k = 0 (no filter), not an error. */
int bloom_open(wcs_bloom *, const uint8_t *a, size_t n);
/* 0: no key with this hash was added; 1: maybe. */
int bloom_may_contain(const wcs_bloom *, uint64_t h);

#endif /* WCS_BLOOM_H */
