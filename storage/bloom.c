/*
** bloom.c — the cache-line-blocked bloom filter of sorted files; the format
** and the probe scheme are in bloom.h and doc/format.md ("Bloom block").
**
** Why blocked: a point read probes the filter of every file that may hold
** the key; confining a key's k bits to one 64-byte line makes each probe
** one cache miss instead of k. The price is a slightly higher false-positive
** rate than an unblocked filter of the same size (measured in
** tests/check_storage_bloom.c: 1.03% at 10 bits per key, against 0.82% for
** an unblocked filter).
*/
#include "storage/bloom.h"

#include <stdlib.h>
#include <string.h>

/* Inline XXH3 (same function as the library's, about twice as fast for
** short keys since the call and dispatch go away). */
#define XXH_INLINE_ALL
#include <xxhash.h>

uint64_t bloom_hash(const void *p, size_t n) {
  return XXH3_64bits(p, n);
}

void bloom_builder_init(bloom_builder *p, int nBitsPerKey) {
  memset(p, 0, sizeof *p);
  p->nBits = nBitsPerKey < 0 ? 0 : nBitsPerKey;
}

/* bloom_builder_add's way when aHash is full, and with no filter to build
** (nBits 0, where nAlloc stays 0): keeps nothing. */
int bloom_builder_grow(bloom_builder *p, uint64_t h) {
  if (p->nBits == 0) return WCS_OK;
  if (p->nHash >= p->nAlloc) {
    size_t nNew = p->nAlloc ? p->nAlloc * 2 : 1024;
    uint64_t *aNew = realloc(p->aHash, nNew * sizeof *aNew);
    if (aNew == NULL) return WCS_NOMEM;
    p->aHash = aNew;
    p->nAlloc = nNew;
  }
  p->aHash[p->nHash++] = h;
  return WCS_OK;
}

static int probesFor(int nBits) {
  int k = (int)(((int64_t)nBits * 693147 + 500000) / 1000000); /* ln 2 */
  if (k < 1) k = 1;
  if (k > WCS_BLOOM_MAX_K) k = WCS_BLOOM_MAX_K;
  return k;
}

/* The line of hash h (high 32 bits, scaled to nLines without a division),
** and the probe step: all 64 bits re-mixed by a multiply, odd. Probe i
** tests bit (a + i*d) >> 23 of the line — the top 9 bits of a 32-bit
** sum, so keys whose steps differ slightly still get unrelated bit sets
** (taking the low 9 bits instead doubled the false positives at 20 bits
** per key). */
static inline uint32_t lineOf(uint64_t h, uint32_t nLines) {
  return (uint32_t)(((h >> 32) * (uint64_t)nLines) >> 32);
}
static inline uint32_t deltaOf(uint64_t h) {
  return (uint32_t)((h * 0x9E3779B97F4A7C15ull) >> 32) | 1;
}

int bloom_builder_finish(bloom_builder *p, int iKind, wcs_buf *pOut) {
  uint64_t nLines64 = 0;
  uint32_t nLines;
  int k = 0;
  uint8_t *aLine;
  size_t i;
  uint8_t aTail[WCS_BLOOM_TAIL];
  if (p->nBits > 0) {
    k = probesFor(p->nBits);
    nLines64 = ((uint64_t)p->nHash * (uint64_t)p->nBits + 511) / 512;
    if (nLines64 > 0x3ffffff) nLines64 = 0x3ffffff; /* 4 GiB of filter */
  }
  nLines = (uint32_t)nLines64;
  if (wcs_buf_reserve(pOut, (size_t)nLines * WCS_BLOOM_LINE + WCS_BLOOM_TAIL)) {
    return WCS_NOMEM;
  }
  aLine = pOut->a + pOut->n;
  memset(aLine, 0, (size_t)nLines * WCS_BLOOM_LINE);
  for (i = 0; nLines > 0 && i < p->nHash; i++) {
    uint64_t h = p->aHash[i];
    uint8_t *z = aLine + (size_t)lineOf(h, nLines) * WCS_BLOOM_LINE;
    uint32_t a = (uint32_t)h, d = deltaOf(h);
    int j;
    for (j = 0; j < k; j++) {
      uint32_t b = a >> 23;
      z[b >> 3] |= (uint8_t)(1u << (b & 7));
      a += d;
    }
  }
  pOut->n += (size_t)nLines * WCS_BLOOM_LINE;
  wcs_put32(aTail, nLines);
  aTail[4] = (uint8_t)k;
  aTail[5] = (uint8_t)iKind;
  aTail[6] = WCS_BLOOM_HASH_XXH3;
  aTail[7] = 0;
  return wcs_buf_append(pOut, aTail, sizeof aTail);
}

void bloom_builder_free(bloom_builder *p) {
  free(p->aHash);
  bloom_builder_init(p, p->nBits);
}

int bloom_open(wcs_bloom *p, const uint8_t *a, size_t n) {
  const uint8_t *t;
  uint32_t nLines;
  memset(p, 0, sizeof *p);
  if (n < WCS_BLOOM_TAIL) return WCS_CORRUPT_BKPT;
  t = a + n - WCS_BLOOM_TAIL;
  nLines = wcs_get32(t);
  if ((uint64_t)nLines * WCS_BLOOM_LINE != n - WCS_BLOOM_TAIL) {
    return WCS_CORRUPT_BKPT;
  }
  if (t[4] > WCS_BLOOM_MAX_K || t[5] > WCS_BLOOM_KIND_PREFIX || t[7] != 0) {
    return WCS_CORRUPT_BKPT;
  }
  if (t[4] == 0 && nLines != 0) return WCS_CORRUPT_BKPT;
  p->aLine = a;
  p->nLines = nLines;
  p->k = t[6] == WCS_BLOOM_HASH_XXH3 ? t[4] : 0;
  p->iKind = t[5];
  return WCS_OK;
}

int bloom_may_contain(const wcs_bloom *p, uint64_t h) {
  const uint8_t *z;
  uint32_t a, d;
  int j;
  if (p->k == 0) return 1;
  if (p->nLines == 0) return 0;
  z = p->aLine + (size_t)lineOf(h, p->nLines) * WCS_BLOOM_LINE;
  a = (uint32_t)h;
  d = deltaOf(h);
  for (j = 0; j < p->k; j++) {
    uint32_t b = a >> 23;
    if ((z[b >> 3] & (1u << (b & 7))) == 0) return 0;
    a += d;
  }
  return 1;
}
