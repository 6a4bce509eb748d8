/*
** iterrun.h — the step of a forward scan over settled data, inline.
**
** A store iterator (wcs_iter, db.c) that reads one sorted file, or one
** level of them, and has nothing to merge (no memtable child, no range
** tombstone in its bounds), moves forward by moving the block cursor of
** that file: every entry a compaction settled (a put at sequence number
** 0) is visible to every reader, so the next entry of the block is the
** iterator's next entry unless it is past the upper bound or not such a
** put. wcs_iter_run_next() takes that step without a call, where
** wcs_iter_next() goes through the merging, level and file iterators; it
** is what a table scan does per cell.
**
** The iterator keeps the cursor in its run (below) after each forward move
** that can continue this way, and forgets it on every other move, so the
** cursor is never used after the file iterator owning it moved or closed.
** Only the engine's scan step (engine/overlay.c) uses this; other callers
** use the wcs.h API, which sees the same positions.
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
  const uint8_t *pKey; /* current user key (when the iterator is valid) */
  size_t nKey;
  const uint8_t *pVal; /* current value */
  size_t nVal;
  int bUpperCmp;       /* keys may reach the upper bound: compare them */
  uint64_t upperHi;    /* bytes [0, 8) and [8, 16) of the upper bound as */
  uint64_t upperLo;    /* wcs_key_slice numbers */
} wcs_iter_run;

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
** error that wcs_iter_status() reports).
*/
static inline int wcs_iter_run_next(wcs_iter *it, const void **ppKey,
                                    size_t *pnKey, const void **ppVal,
                                    size_t *pnVal) {
  wcs_iter_run *r = (wcs_iter_run *)it;
  block_iter *bi = r->pBi;
  const uint8_t *k;
  size_t nU;
  if (bi == NULL || !block_iter_step(bi)) return 0;
  k = bi->pKey;
  nU = bi->nKey - WCS_IKEY_TRAILER;
  if (wcs_ikey_trailer(k, bi->nKey) != WCS_KT_PUT) goto resume;
  if (r->bUpperCmp) {
    uint64_t s = wcs_key_slice(k, nU, 0);
    if (s > r->upperHi) goto resume;
    if (s == r->upperHi && wcs_key_slice(k, nU, 8) >= r->upperLo) goto resume;
  }
  r->pKey = k;
  r->nKey = nU;
  r->pVal = bi->pVal;
  r->nVal = bi->nVal;
  *ppKey = k;
  *pnKey = nU;
  *ppVal = bi->pVal;
  *pnVal = bi->nVal;
  return 1;
resume:
  wcs_iter_run_resume(it);
  return wcs_iter_entry(it, ppKey, pnKey, ppVal, pnVal) ? 1 : -1;
}

#endif /* WCS_ITERRUN_H */
