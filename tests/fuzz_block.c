/*
** Fuzz target for the block decoder (storage/block.c). The first input
** byte picks what the rest is:
**   bit 0 — keys are internal keys (data block) or plain (index block);
**   bit 1 — the rest is a framed block (stored bytes + trailer): check the
**           trailer, and feed the stored bytes to the zstd path with the
**           trailer's raw length whatever the CRC says, so that decoder is
**           fuzzed too;
**   else  — the rest is block contents: iterate forward and backward,
**           seek to keys cut from the input, and mix moves; internal
**           keys are also sought through a seek aid built from the block.
** Nothing may crash or read outside the input (run under ASan).
** Seeds: tests/corpus/block/ (made by the golden-block tests' builders:
** the doc/format.md example blocks, without and with suffixes and with
** seek points, a 30-entry data block, and an 80-entry data block of cell
** keys with seek points).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/block.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const uint8_t *a, size_t n, int bIKey, const uint8_t *pSeek,
                 size_t nSeek) {
  block_iter it;
  int k;
  memset(&it, 0, sizeof it);
  if (block_iter_init(&it, a, n, bIKey) == WCS_OK) {
    for (block_iter_first(&it), k = 0; block_iter_valid(&it) && k < 5000; k++)
      block_iter_next(&it);
    for (block_iter_last(&it), k = 0; block_iter_valid(&it) && k < 5000; k++)
      block_iter_prev(&it);
    if (!bIKey || nSeek >= 8) {
      block_iter_seek(&it, pSeek, nSeek);
      for (k = 0; block_iter_valid(&it) && k < 50; k++) {
        if (k & 1)
          block_iter_prev(&it);
        else
          block_iter_next(&it);
        block_iter_next(&it);
      }
    }
  }
  block_iter_clear(&it);
  if (bIKey && nSeek >= 8) {
    block_aid *pAid = NULL;
    size_t nAid = 0;
    if (block_aid_build(a, n, &pAid, &nAid) == WCS_OK && pAid != NULL) {
      memset(&it, 0, sizeof it);
      block_iter_init_aid(&it, a, n, pAid);
      block_iter_seek(&it, pSeek, nSeek);
      for (k = 0; block_iter_valid(&it) && k < 50; k++) {
        if (k % 3 == 2)
          block_iter_prev(&it);
        else
          block_iter_next(&it);
      }
      block_iter_clear(&it);
    }
    free(pAid);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t iMode;
  const uint8_t *a;
  size_t n;
  uint8_t *pCopy;
  if (size < 1) return 0;
  iMode = data[0];
  n = size - 1;
  /* A private copy of exactly n bytes so ASan sees any overrun. */
  pCopy = malloc(n ? n : 1);
  if (pCopy == NULL) return 0;
  memcpy(pCopy, data + 1, n);
  a = pCopy;
  if (iMode & 2) {
    int iType;
    uint32_t nRaw;
    const char *zWhy;
    (void)block_check(a, n, &iType, &nRaw, &zWhy);
    if (n >= WCS_BLOCK_TRAILER) {
      size_t nStored = n - WCS_BLOCK_TRAILER;
      uint32_t nOut = wcs_get32(a + nStored + WCS_BLOCK_OFF_RAW) % (1u << 20);
      uint8_t *pOut = malloc(nOut ? nOut : 1);
      if (pOut && block_inflate(a, nStored, pOut, nOut, &zWhy) == WCS_OK) {
        walk(pOut, nOut, iMode & 1, a, nStored < 16 ? nStored : 16);
      }
      free(pOut);
    }
  } else {
    /* Seek key: the first bytes of the input, at most 24. */
    walk(a, n, iMode & 1, a, n < 24 ? n : 24);
  }
  free(pCopy);
  return 0;
}
