/*
** iterrun.h — the step of a forward scan over settled data, inline.
**
** A store iterator (wcs_iter, db.c) that reads one sorted file, or one
** level of them, and has nothing to merge (no memtable child, no range
** tombstone in its bounds), moves forward by moving the block cursor of
** that file: every entry a compaction settled (a put at sequence number
** 0) is visible to every reader, so the next entry of the block is the
** iterator's next entry unless it is past the upper bound or not such a
** put. wcs_iter_run_next() takes that step without going through the
** merging, level and file iterators; it is what a table scan does per
** cell.
**
** The iterator keeps the cursor in its run (below) after each forward move
** that can continue this way, and forgets it on every other move, so the
** cursor is never used after the file iterator owning it moved or closed.
** wcs_iter_next() and wcs_iter_prev() take their steps this way first; the
** engine's scan step (engine/overlay.c) calls the inline functions itself,
** to save the call.
*/
#ifndef WCS_ITERRUN_H
#define WCS_ITERRUN_H

#include <stddef.h>
#include <stdint.h>

#include "storage/block.h"
#include "storage/ikey.h"
#include "storage/util.h"
#include "wcs.h"

/* The first member of struct wcs_iter: its current entry and what a step
** within the run needs. */
typedef struct wcs_iter_run {
  block_iter *pBi;     /* the run's block cursor, or NULL: no run */
  block_iter *pBiRev;  /* the same for a reverse run (below) */
  int bKeyOut;         /* pKey was returned by a reverse run step: it is
                       ** borrowed from the cursor, not a copy */
  const uint8_t *pKey; /* current user key (when the iterator is valid) */
  size_t nKey;
  const uint8_t *pVal; /* current value */
  size_t nVal;
  size_t nShared;   /* after a step of wcs_iter_run_next that moved in
                    ** the block: bytes pKey shares with the key before
                    ** it (the iterator's previous key); 0 otherwise */
  int bUpperCmp;    /* keys may reach the upper bound: compare them */
  uint64_t upperHi; /* bytes [0, 8) and [8, 16) of the upper bound as */
  uint64_t upperLo; /* wcs_key_slice numbers */
  const uint8_t *pUpper; /* the upper bound, whole (keys that tie with */
  size_t nUpper;         /* it in their first 16 bytes) */
  int bLower;       /* a lower bound: compare keys with it, reverse */
  uint64_t lowerHi; /* bytes [0, 8) and [8, 16) of the lower bound */
  uint64_t lowerLo;
  const uint8_t *pLower; /* the lower bound, whole */
  size_t nLower;
} wcs_iter_run;

/* Is user key k at or past the upper bound? Slices of the two keys (the
** first 16 bytes, zero-padded) that differ order the keys as the keys
** themselves: a load or two per key instead of a compare; keys that tie
** there (a scan of a prefix longer than 16 bytes ties at every key) are
** compared whole. */
static inline int wcs_iter_run_past_upper(const wcs_iter_run *r,
                                          const uint8_t *k, size_t n) {
  uint64_t s = wcs_key_slice(k, n, 0);
  if (s != r->upperHi) return s > r->upperHi;
  s = wcs_key_slice(k, n, 8);
  if (s != r->upperLo) return s > r->upperLo;
  return wcs_ukey_cmp(k, n, r->pUpper, r->nUpper) >= 0;
}

/* The same for the lower bound: is k below it? */
static inline int wcs_iter_run_below_lower(const wcs_iter_run *r,
                                           const uint8_t *k, size_t n) {
  uint64_t s = wcs_key_slice(k, n, 0);
  if (s != r->lowerHi) return s < r->lowerHi;
  s = wcs_key_slice(k, n, 8);
  if (s != r->lowerLo) return s < r->lowerLo;
  return wcs_ukey_cmp(k, n, r->pLower, r->nLower) < 0;
}

/* Finish a step the run began but cannot decide (an entry that is not a
** settled put, or whose first 16 bytes tie with the upper bound's): the
** iterator takes it from the entry the cursor is at, as wcs_iter_next
** would. Returns what wcs_iter_next would. */
int wcs_iter_run_resume(wcs_iter *it);

/*
** Step it forward within its run. Returns 1 with the next entry's key
** (user key) and value, borrowed as from wcs_iter_entry(); 0 when there is
** no run or the step leaves the run's block or needs the general code:
** nothing moved, take the step with wcs_iter_next(); -1 when the step was
** taken and the iterator is no longer valid (the end of its bounds, or an
** error that wcs_iter_status() reports). Always inline: GCC at -O2 made it
** a call from the engine's inline step, which costs what the step saves.
*/
__attribute__((always_inline)) static inline int
wcs_iter_run_next(wcs_iter *it, const void **ppKey, size_t *pnKey,
                  const void **ppVal, size_t *pnVal) {
  wcs_iter_run *r = (wcs_iter_run *)it;
  block_iter *bi = r->pBi;
  const uint8_t *k;
  size_t nU;
  if (bi == NULL || !block_iter_step(bi)) return 0;
  k = bi->pKey;
  nU = bi->nKey - WCS_IKEY_TRAILER;
  if (wcs_ikey_trailer(k, bi->nKey) != WCS_KT_PUT) goto resume;
  if (r->bUpperCmp && wcs_iter_run_past_upper(r, k, nU)) goto resume;
  r->pKey = k;
  r->nKey = nU;
  r->pVal = bi->pVal;
  r->nVal = bi->nVal;
  r->nShared = bi->nStepShared < nU ? bi->nStepShared : nU;
  *ppKey = k;
  *pnKey = nU;
  *ppVal = bi->pVal;
  *pnVal = bi->nVal;
  return 1;
resume:
  r->nShared = 0;
  wcs_iter_run_resume(it);
  return wcs_iter_entry(it, ppKey, pnKey, ppVal, pnVal) ? 1 : -1;
}

/*
** The reverse run. Backward, the iterator keeps the stream just before
** the entries of the key it returned (storage.md, "Iterators"), and a
** block cursor moving backward has the keys of its restart interval
** rebuilt whole (block_iter.aPrev and prevKeys). When the entry the
** stream is at (J) and the one before it in that interval (I) are both
** settled puts, J is the only version of its key (a key has at most one
** entry at sequence number 0, its oldest, and I is not a newer version of
** J's key, being at sequence number 0 itself): J is the next key back,
** if it is not below the lower bound, and the stream moves to I. J's key
** stays in prevKeys while the cursor stays in the interval; wcs_iter_next
** copies it before leaving (bKeyOut). Returns as wcs_iter_run_next.
*/
static inline int wcs_iter_run_prev(wcs_iter *it, const void **ppKey,
                                    size_t *pnKey, const void **ppVal,
                                    size_t *pnVal) {
  wcs_iter_run *r = (wcs_iter_run *)it;
  block_iter *bi = r->pBiRev;
  const block_prev *pJ, *pI;
  const uint8_t *k;
  size_t nU;
  int i;
  if (bi == NULL || bi->nPrev == 0 || bi->iCur >= bi->nEnt) return 0;
  i = bi->iPrev;
  if (i < 1) return 0;
  pJ = &bi->aPrev[i];
  pI = pJ - 1;
  k = bi->prevKeys.a + pJ->iKey;
  if (pJ->nKey < WCS_IKEY_TRAILER || pI->nKey < WCS_IKEY_TRAILER ||
      wcs_ikey_trailer(k, pJ->nKey) != WCS_KT_PUT ||
      wcs_ikey_trailer(bi->prevKeys.a + pI->iKey, pI->nKey) != WCS_KT_PUT) {
    return 0;
  }
  nU = pJ->nKey - WCS_IKEY_TRAILER;
  if (r->bLower && wcs_iter_run_below_lower(r, k, nU)) return 0;
  r->pKey = k;
  r->nKey = nU;
  r->pVal = bi->a + pJ->iNext - pJ->nVal;
  r->nVal = pJ->nVal;
  r->bKeyOut = 1;
  block_iter_use_prev(bi, i - 1);
  *ppKey = r->pKey;
  *pnKey = nU;
  *ppVal = r->pVal;
  *pnVal = r->nVal;
  return 1;
}

#endif /* WCS_ITERRUN_H */
