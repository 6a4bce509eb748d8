/*
** Fuzz target for sorted files (storage/sst.c): the input is a whole file,
** put in a memory env, opened and scanned forward, backward and by seeks.
** Point reads (sst_reader_get) run too. Nothing may crash; bad bytes
** must come back as errors.
**
** Mutated inputs almost never get past the CRCs, so the first byte picks a
** mode: with bit 0 set, the harness first repairs every CRC it can find
** (footer, meta blocks, then the data blocks the index names), so that the
** index, properties, tombstone, bloom and entry parsers see the mutated
** bytes themselves. The rest of the input is the file.
** Seeds: tests/corpus/sst/ (the golden test's file, a small file with
** zstd blocks, tombstones and a prefix bloom, and a format-version-2 file
** whose data blocks share suffixes).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/block.h"
#include "storage/env.h"
#include "storage/ikey.h"
#include "storage/sst.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static wcs_env *pEnv = NULL;

static void fixBlock(uint8_t *a, size_t nFile, uint64_t iOff, uint64_t nSize) {
  uint8_t *t;
  if (iOff > nFile || nSize > nFile - iOff ||
      WCS_BLOCK_TRAILER > nFile - iOff - nSize) {
    return;
  }
  t = a + iOff + nSize;
  wcs_put32(t + WCS_BLOCK_OFF_CRC,
            wcs_crc_mask(wcs_crc32c(0, a + iOff, nSize + WCS_BLOCK_OFF_CRC)));
}

typedef struct Offs {
  uint64_t a[4096];
  int n;
} Offs;
static int collect(void *pCtx, const uint8_t *pU, size_t nU, uint64_t iOff) {
  Offs *p = pCtx;
  (void)pU;
  (void)nU;
  if (p->n >= 4096) return 1;
  p->a[p->n++] = iOff;
  return 0;
}

static void putFile(const uint8_t *a, size_t n) {
  wcs_file *f;
  if (pEnv->xOpen(pEnv, "f.sst", WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &f,
                  NULL) == WCS_OK) {
    pEnv->xAppend(f, a, n, NULL);
    pEnv->xClose(f);
  }
}

/* Repair the footer and meta-block CRCs, then (if the file opens) the
** data-block CRCs the index points at. */
static void fixCrcs(uint8_t *a, size_t n) {
  uint8_t *f;
  uint64_t iDataEnd;
  int i;
  sst_reader *r;
  Offs *o;
  if (n < WCS_SST_FOOTER) return;
  f = a + n - WCS_SST_FOOTER;
  for (i = 0; i < 4; i++) {
    fixBlock(a, n, wcs_get64(f + 16 * i), wcs_get64(f + 16 * i + 8));
  }
  wcs_put32(f + WCS_SST_FOOT_CRC,
            wcs_crc_mask(wcs_crc32c(0, f, WCS_SST_FOOT_CRC)));
  putFile(a, n);
  if (sst_reader_open(pEnv, "f.sst", 1, n, NULL, &r, NULL) != WCS_OK) return;
  o = malloc(sizeof *o);
  if (o) {
    o->n = 0;
    sst_reader_index_keys(r, o, collect);
    iDataEnd = wcs_get64(f + WCS_SST_FOOT_BLOOM);
    for (i = 0; i < o->n; i++) {
      uint64_t iEnd = i + 1 < o->n ? o->a[i + 1] : iDataEnd;
      if (iEnd >= o->a[i] + WCS_BLOCK_TRAILER) {
        fixBlock(a, n, o->a[i], iEnd - o->a[i] - WCS_BLOCK_TRAILER);
      }
    }
    free(o);
  }
  sst_reader_close(r);
}

static int onGet(void *pCtx, const uint8_t *pKey, size_t nKey,
                 const uint8_t *pVal, size_t nVal) {
  size_t *pSum = pCtx;
  *pSum += nKey + nVal + (nKey ? pKey[0] : 0) + (nVal ? pVal[nVal - 1] : 0);
  return 0;
}

static void scan(size_t n) {
  sst_reader *r;
  wcs_iiter *it;
  char *zErr = NULL;
  wcs_cache *c = NULL;
  int k;
  wcs_cache_new(64 * 1024, &c);
  if (sst_reader_open(pEnv, "f.sst", 1, n, c, &r, &zErr) == WCS_OK) {
    const sst_rangedel *aDel;
    int nDel;
    sst_meta m;
    sst_reader_rangedels(r, &aDel, &nDel);
    (void)sst_reader_may_contain(r, "row", 3);
    (void)sst_reader_approx_offset(r, (const uint8_t *)"m", 1);
    if (sst_reader_meta(r, &m) == WCS_OK) sst_meta_clear(&m);
    {
      static const char *azU[] = {"a", "b", "row005#c1", "row1", "zzz"};
      uint8_t t[24];
      size_t nSum = 0;
      int bFound;
      for (k = 0; k < 5; k++) {
        size_t nU = strlen(azU[k]);
        memcpy(t, azU[k], nU);
        wcs_put64(t + nU, wcs_ikey_pack(WCS_SEQ_MAX, 0xff));
        if (sst_reader_get(r, t, nU + 8, &bFound, &nSum, onGet, &zErr)) break;
      }
    }
    if (sst_reader_iter(r, 1, &it, NULL) == WCS_OK) {
      const wcs_iiter_methods *x = it->pMethods;
      uint8_t t[12] = {'r', 'o', 'w', '1', 0, 0, 0, 0, 0, 0, 0, 0};
      for (x->xFirst(it), k = 0; x->xValid(it) && k < 100000; k++)
        x->xNext(it);
      for (x->xLast(it), k = 0; x->xValid(it) && k < 100000; k++)
        x->xPrev(it);
      x->xSeek(it, t, sizeof t);
      if (x->xValid(it)) x->xPrev(it);
      x->xSeekForPrev(it, t, sizeof t);
      if (x->xValid(it)) x->xNext(it);
      x->xStatus(it, &zErr);
      x->xClose(it);
    }
    sst_reader_close(r);
  }
  free(zErr);
  wcs_cache_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *a;
  size_t n;
  if (size < 1) return 0;
  if (pEnv == NULL) pEnv = wcs_env_mem_new();
  n = size - 1;
  a = malloc(n ? n : 1);
  if (a == NULL) return 0;
  memcpy(a, data + 1, n);
  if (data[0] & 1) fixCrcs(a, n);
  putFile(a, n);
  scan(n);
  free(a);
  return 0;
}
