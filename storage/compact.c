/*
** compact.c — compaction picking and the flush/compaction writer (see
** compact.h). Owns no format: it writes sorted files through sst.h.
**
** How the writer decides what survives. The live snapshots S1 < S2 < ...
** and the latest seq L split sequence numbers into stripes (0, S1],
** (S1, S2], ..., (Sk, L]. A reader at any snapshot sees, for each key, the
** newest version in or below its stripe, so within one stripe only the
** newest version of a key can ever be read: older ones in the same stripe
** are dropped. A version at seq s in stripe i is also dropped when a range
** tombstone with s < t <= upper(i) covers it (every reader that could see
** it also sees the tombstone). A delete (or a range tombstone) in stripe 0
** is seen by every reader; it is dropped once no file below the output
** level can hold data it hides ("bottom" for that key or range).
**
** In a compaction (not a flush), a version that every reader sees (stripe
** 0), with nothing older below the output level and no tombstone of the
** compaction over it, is written at seq 0, as RocksDB does at its bottom
** level: the 8-byte trailers of settled data then compress to almost
** nothing (about 7% smaller files on 116-byte entries).
**
** Output files are cut only between user keys (so all versions of a key
** stay in one file, which keeps levels >= 1 disjoint), at nFileBytes. The
** range tombstones that survive are clipped to each output file's share of
** the key space [previous cut, next cut), and a file's recorded key range
** covers its clipped tombstones (ends as sentinel keys, see version.h).
*/
#include "storage/compact.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/ikey.h"
#include "storage/merge.h"
#include "storage/upper.h"

/* ====================================================================
** Picking
** ==================================================================== */

/* User-key range of a set of files: lo = smallest start, hi = largest end
** (inclusive user key; *pbHiInf when a file is unbounded). */
typedef struct KeyRange {
  const uint8_t *pLo;
  size_t nLo;
  const uint8_t *pHi;
  size_t nHi;
  int bHiInf;
} KeyRange;

static void rangeOf(wcs_fmeta **a, int n, KeyRange *r) {
  int i;
  memset(r, 0, sizeof *r);
  for (i = 0; i < n; i++) {
    const uint8_t *pS = a[i]->pSmallest, *pL = a[i]->pLargest;
    size_t nS = a[i]->nSmallest - WCS_IKEY_TRAILER;
    size_t nL = a[i]->nLargest - WCS_IKEY_TRAILER;
    if (r->pLo == NULL || wcs_ukey_cmp(pS, nS, r->pLo, r->nLo) < 0) {
      r->pLo = pS;
      r->nLo = nS;
    }
    if (a[i]->bUnbounded) r->bHiInf = 1;
    if (r->pHi == NULL || wcs_ukey_cmp(pL, nL, r->pHi, r->nHi) > 0) {
      r->pHi = pL;
      r->nHi = nL;
    }
  }
}

/* Does f overlap the inclusive user-key range r? */
static int overlapsRange(const wcs_fmeta *f, const KeyRange *r) {
  size_t nS = f->nSmallest - WCS_IKEY_TRAILER;
  size_t nL = f->nLargest - WCS_IKEY_TRAILER;
  if (!r->bHiInf && wcs_ukey_cmp(f->pSmallest, nS, r->pHi, r->nHi) > 0) {
    return 0;
  }
  if (!f->bUnbounded && wcs_ukey_cmp(f->pLargest, nL, r->pLo, r->nLo) < 0) {
    return 0;
  }
  return 1;
}

/* Range tombstones that make a level compact as if it were full: the
** tombstones of as many row deletes as a memtable holds (db.c,
** MEM_MAX_RANGEDELS). Until a compaction meets the data they hide, every
** reader of the store cuts them into fragments and every scan steps over
** what they hide; rows deleted one by one by a DELETE statement leave that
** many in a few seconds, and on a store that takes no more writes nothing
** else would move them (RocksDB marks such files for compaction too). */
#define COMPACT_TOMB_TRIGGER 4096

/* The most files of the next level a compaction for tombstones may
** rewrite: tombstones of rows deleted here and there over a large table
** overlap most of it, and rewriting all of it for them would cost more
** than they do (LevelDB's limit for a file's overlap with the level below
** its output, ten files). */
#define COMPACT_TOMB_MAX_OVERLAP 10

/* Files of level iLevel (not being compacted) that f overlaps, counted
** up to nMax + 1. */
static int overlapCount(const wcs_version *v, int iLevel, wcs_fmeta **a,
                        int n, int nMax) {
  KeyRange r;
  int j, nHit = 0;
  rangeOf(a, n, &r);
  for (j = 0; j < v->anFile[iLevel] && nHit <= nMax; j++) {
    if (overlapsRange(v->aaFile[iLevel][j], &r)) nHit++;
  }
  return nHit;
}

/* The range tombstones of level i's files that a compaction may take down
** (those of files whose compaction would rewrite few files of level
** i + 1), and the file of those with the most (NULL at level 0, which
** compacts whole). */
static uint64_t tombsToMove(const wcs_version *v, int i, wcs_fmeta **ppBest) {
  uint64_t n = 0, nBest = 0;
  int j;
  *ppBest = NULL;
  if (i == 0) {
    for (j = 0; j < v->anFile[0]; j++) {
      if (v->aaFile[0][j]->bCompacting) return 0;
      n += v->aaFile[0][j]->nRangeDel;
    }
    if (n < COMPACT_TOMB_TRIGGER ||
        overlapCount(v, 1, v->aaFile[0], v->anFile[0],
                     COMPACT_TOMB_MAX_OVERLAP) > COMPACT_TOMB_MAX_OVERLAP) {
      return 0;
    }
    return n;
  }
  for (j = 0; j < v->anFile[i]; j++) {
    wcs_fmeta *f = v->aaFile[i][j];
    if (f->bCompacting || f->nRangeDel == 0) continue;
    if (overlapCount(v, i + 1, &f, 1, COMPACT_TOMB_MAX_OVERLAP) >
        COMPACT_TOMB_MAX_OVERLAP) {
      continue;
    }
    n += f->nRangeDel;
    if (f->nRangeDel > nBest) {
      nBest = f->nRangeDel;
      *ppBest = f;
    }
  }
  return n;
}

/* compact_score, and the file a compaction for tombstones takes from a
** level >= 1 (NULL: the level's score is its size's) */
static double scoreOf(const wcs_version *v, const wcs_options *pOpt,
                      int *piLevel, wcs_fmeta **ppTomb) {
  double best = 0;
  int i, j, iBest = 0;
  int nL0 = 0;
  wcs_fmeta *pTomb = NULL;
  for (j = 0; j < v->anFile[0]; j++)
    nL0 += !v->aaFile[0][j]->bCompacting;
  if (pOpt->nL0Trigger > 0) best = (double)nL0 / pOpt->nL0Trigger;
  for (i = 0; i < WCS_NLEVEL - 1; i++) {
    wcs_fmeta *f;
    double s = (double)tombsToMove(v, i, &f) / COMPACT_TOMB_TRIGGER;
    if (i > 0) {
      uint64_t n = 0;
      double sBytes;
      for (j = 0; j < v->anFile[i]; j++) {
        if (!v->aaFile[i][j]->bCompacting) n += v->aaFile[i][j]->nBytes;
      }
      sBytes = (double)n / (double)version_level_target(pOpt, i);
      if (sBytes >= s) {
        s = sBytes;
        f = NULL;
      }
    }
    if (s > best) {
      best = s;
      iBest = i;
      pTomb = f;
    }
  }
  *piLevel = iBest;
  if (ppTomb) *ppTomb = pTomb;
  return best;
}

double compact_score(const wcs_version *v, const wcs_options *pOpt,
                     int *piLevel) {
  return scoreOf(v, pOpt, piLevel, NULL);
}

static wcs_compaction *compAlloc(wcs_version *v, int iLevel, int iOut) {
  wcs_compaction *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->iLevel = iLevel;
  c->iOutLevel = iOut;
  c->pVersion = v;
  version_ref(v);
  return c;
}

void compact_free(wcs_compaction *c) {
  if (c == NULL) return;
  free(c->aaIn[0]);
  free(c->aaIn[1]);
  version_unref(c->pVersion);
  free(c);
}

static int pushFile(wcs_compaction *c, int k, wcs_fmeta *f) {
  wcs_fmeta **a =
      realloc(c->aaIn[k], sizeof(wcs_fmeta *) * (size_t)(c->anIn[k] + 1));
  if (a == NULL) return WCS_NOMEM;
  a[c->anIn[k]++] = f;
  c->aaIn[k] = a;
  return WCS_OK;
}

/* Add the files of level iOut overlapping the inputs of level iLevel. */
static int addOverlaps(wcs_compaction *c) {
  KeyRange r;
  int j, rc = WCS_OK;
  wcs_version *v = c->pVersion;
  rangeOf(c->aaIn[0], c->anIn[0], &r);
  for (j = 0; rc == WCS_OK && j < v->anFile[c->iOutLevel]; j++) {
    wcs_fmeta *f = v->aaFile[c->iOutLevel][j];
    if (overlapsRange(f, &r)) rc = pushFile(c, 1, f);
  }
  return rc;
}

/* Are the files pairwise disjoint (by user key)? */
static int disjoint(wcs_fmeta **a, int n) {
  int i, j;
  for (i = 0; i < n; i++) {
    KeyRange r;
    rangeOf(&a[i], 1, &r);
    for (j = i + 1; j < n; j++) {
      if (overlapsRange(a[j], &r)) return 0;
    }
  }
  return 1;
}

int compact_pick(wcs_vset *vs, wcs_version *v, wcs_compaction **pp) {
  const wcs_options *pOpt = vset_options(vs);
  wcs_compaction *c;
  wcs_fmeta *pTomb;
  int iLevel, j, rc = WCS_OK;
  *pp = NULL;
  if (scoreOf(v, pOpt, &iLevel, &pTomb) < 1.0) return WCS_OK;
  c = compAlloc(v, iLevel, iLevel + 1);
  if (c == NULL) return WCS_NOMEM;
  if (pTomb) {
    /* for its tombstones: the round-robin cursor stays */
    rc = pushFile(c, 0, pTomb);
  } else if (iLevel == 0) {
    for (j = 0; rc == WCS_OK && j < v->anFile[0]; j++) {
      if (!v->aaFile[0][j]->bCompacting) rc = pushFile(c, 0, v->aaFile[0][j]);
    }
  } else {
    /* the first file after the level's cursor, wrapping around */
    wcs_buf *pPtr = vset_compact_ptr(vs, iLevel);
    wcs_fmeta *pPick = NULL;
    for (j = 0; j < v->anFile[iLevel]; j++) {
      wcs_fmeta *f = v->aaFile[iLevel][j];
      if (f->bCompacting) continue;
      if (pPtr->n == 0 ||
          wcs_ukey_cmp(f->pSmallest, f->nSmallest - WCS_IKEY_TRAILER, pPtr->a,
                       pPtr->n) > 0) {
        pPick = f;
        break;
      }
    }
    for (j = 0; pPick == NULL && j < v->anFile[iLevel]; j++) {
      if (!v->aaFile[iLevel][j]->bCompacting) pPick = v->aaFile[iLevel][j];
    }
    if (pPick) {
      rc = pushFile(c, 0, pPick);
      pPtr->n = 0;
      if (rc == WCS_OK) {
        rc = wcs_buf_append(pPtr, pPick->pSmallest,
                            pPick->nSmallest - WCS_IKEY_TRAILER);
      }
    }
  }
  if (rc == WCS_OK && c->anIn[0] == 0) {
    compact_free(c);
    return WCS_OK;
  }
  if (rc == WCS_OK) rc = addOverlaps(c);
  if (rc == WCS_OK) {
    /* any input being compacted elsewhere: try later */
    for (j = 0; j < c->anIn[1]; j++) {
      if (c->aaIn[1][j]->bCompacting) {
        compact_free(c);
        return WCS_OK;
      }
    }
    /* nothing below to merge with: move instead of rewriting */
    if (c->anIn[1] == 0 &&
        (c->anIn[0] == 1 || disjoint(c->aaIn[0], c->anIn[0]))) {
      c->bTrivial = 1;
    }
  }
  if (rc) {
    compact_free(c);
    return rc;
  }
  *pp = c;
  return WCS_OK;
}

int compact_pick_range(wcs_version *v, int iLevel, int iOutLevel,
                       const uint8_t *pLo, size_t nLo, const uint8_t *pHi,
                       size_t nHi, wcs_compaction **pp) {
  wcs_compaction *c;
  int j, rc = WCS_OK;
  *pp = NULL;
  c = compAlloc(v, iLevel, iOutLevel);
  if (c == NULL) return WCS_NOMEM;
  for (j = 0; rc == WCS_OK && j < v->anFile[iLevel]; j++) {
    wcs_fmeta *f = v->aaFile[iLevel][j];
    if (fmeta_overlaps(f, pLo, nLo, pHi, nHi)) rc = pushFile(c, 0, f);
  }
  if (rc == WCS_OK && iLevel == 0 && c->anIn[0] > 0) {
    /* level-0 files overlap each other: take all of them so that what
    ** stays in level 0 is newer than everything below */
    c->anIn[0] = 0;
    for (j = 0; rc == WCS_OK && j < v->anFile[0]; j++) {
      rc = pushFile(c, 0, v->aaFile[0][j]);
    }
  }
  if (rc == WCS_OK && c->anIn[0] == 0) {
    compact_free(c);
    return WCS_OK;
  }
  if (rc == WCS_OK && iOutLevel != iLevel) {
    /* the files of iOutLevel overlapping the inputs, and also every one in
    ** [lo, hi), so that what this call writes holds all of the range's
    ** data at both levels (a compaction filter following a key's versions
    ** sees them in one stream). Both sets are runs of the level that
    ** meet, so together they are one run, taken in key order. */
    KeyRange r;
    rangeOf(c->aaIn[0], c->anIn[0], &r);
    for (j = 0; rc == WCS_OK && j < v->anFile[iOutLevel]; j++) {
      wcs_fmeta *f = v->aaFile[iOutLevel][j];
      if (overlapsRange(f, &r) || fmeta_overlaps(f, pLo, nLo, pHi, nHi)) {
        rc = pushFile(c, 1, f);
      }
    }
  }
  if (rc) {
    compact_free(c);
    return rc;
  }
  *pp = c;
  return WCS_OK;
}

int compact_input(wcs_compaction *c, wcs_iiter **ppIter, char **pzErr) {
  wcs_iiter **a = NULL;
  int n = 0, k, j, rc = WCS_OK;
  *ppIter = NULL;
  a = malloc(sizeof(wcs_iiter *) * (size_t)(c->anIn[0] + 1));
  if (a == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  for (k = 0; rc == WCS_OK && k < 2; k++) {
    if (c->anIn[k] == 0) continue;
    if (k == 0 && c->iLevel == 0) {
      for (j = 0; rc == WCS_OK && j < c->anIn[0]; j++) {
        rc = sst_reader_iter(c->aaIn[0][j]->pReader, 0, &a[n], pzErr);
        if (rc == WCS_OK) n++;
      }
    } else if (c->anIn[k] == 1) {
      rc = sst_reader_iter(c->aaIn[k][0]->pReader, 0, &a[n], pzErr);
      if (rc == WCS_OK) n++;
    } else {
      rc = level_iter_new(c->aaIn[k], c->anIn[k], 0, &a[n]);
      if (rc == WCS_OK)
        n++;
      else
        wcs_seterr(pzErr, rc, "out of memory");
    }
  }
  if (rc) {
    for (j = 0; j < n; j++)
      a[j]->pMethods->xClose(a[j]);
    free(a);
    return rc;
  }
  rc = merge_iter_new(a, n, ppIter);
  free(a);
  if (rc) wcs_seterr(pzErr, rc, "out of memory");
  return rc;
}

int compact_input_dels(wcs_compaction *c, sst_rangedel **paDel, int *pnDel) {
  sst_rangedel *a = NULL;
  int n = 0, k, j, i;
  *paDel = NULL;
  *pnDel = 0;
  for (k = 0; k < 2; k++) {
    for (j = 0; j < c->anIn[k]; j++) {
      const sst_rangedel *aD;
      int nD;
      sst_reader_rangedels(c->aaIn[k][j]->pReader, &aD, &nD);
      if (nD == 0) continue;
      {
        sst_rangedel *aNew =
            realloc(a, sizeof(sst_rangedel) * (size_t)(n + nD));
        if (aNew == NULL) {
          free(a);
          return WCS_NOMEM;
        }
        a = aNew;
      }
      for (i = 0; i < nD; i++)
        a[n++] = aD[i];
    }
  }
  *paDel = a;
  *pnDel = n;
  return WCS_OK;
}

/* ====================================================================
** The writer
** ==================================================================== */

/* State of one compact_run. */
typedef struct Run {
  compact_job *j;
  char **pzErr;
  const wcs_options *pOpt;
  sst_options so;
  /* tombstones */
  const sst_rangedel *aDel; /* input tombstones */
  int nDel;
  unsigned char *aKeep; /* per tombstone: survives the run */
  wcs_frags frags;      /* for coverage of entries */
  /* current output */
  compact_output out;        /* open builder (out.pB) or none */
  wcs_buf smallest, largest; /* first and last entry ikeys written */
  uint64_t nEntries, minSeq, maxSeq, nRaw;
  wcs_buf lo;       /* this file's share starts here ... */
  int bLoInf;       /* ... or at the start of the key space */
  wcs_buf zeroKey;  /* scratch: an entry rewritten at seq 0 */
  /* files one level below the output ("grandparents") */
  compact_cut cut;   /* where the output is cut */
} Run;

/* Stripe of seq s: index of the first snapshot >= s (nSnap-1 is the
** latest; seqs beyond it get their own stripe nSnap). */
static int stripeOf(const compact_job *j, uint64_t s) {
  int lo = 0, hi = j->nSnap;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (j->aSnap[mid] < s)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static uint64_t stripeTop(const compact_job *j, int st) {
  return st < j->nSnap ? j->aSnap[st] : WCS_SEQ_MAX;
}

/* Is there no file below the output level holding user key k? */
static int bottomForKey(const compact_job *j, const uint8_t *k, size_t n) {
  int i, f;
  if (j->pBase == NULL) return 0;
  for (i = j->iOutLevel + 1; i < WCS_NLEVEL; i++) {
    const wcs_version *v = j->pBase;
    if (i < 0) continue;
    if (i == 0) {
      for (f = 0; f < v->anFile[0]; f++) {
        if (fmeta_may_hold(v->aaFile[0][f], k, n)) return 0;
      }
    } else {
      int lo = 0, hi = v->anFile[i];
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        /* a file whose range ends at (k, sentinel) — a tombstone clipped
        ** at k — does not hold k; the next file, starting at k, may */
        if (fmeta_ends_before(v->aaFile[i][mid], k, n)) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      if (lo < v->anFile[i] && fmeta_may_hold(v->aaFile[i][lo], k, n)) {
        return 0;
      }
    }
  }
  return 1;
}

/* Is there no file below the output level overlapping [start, end)? */
static int bottomForRange(const compact_job *j, const sst_rangedel *d) {
  int i, f;
  if (j->pBase == NULL) return 0;
  for (i = j->iOutLevel + 1; i < WCS_NLEVEL; i++) {
    if (i < 0) continue;
    for (f = 0; f < j->pBase->anFile[i]; f++) {
      if (fmeta_overlaps(j->pBase->aaFile[i][f], d->pStart, d->nStart, d->pEnd,
                         d->nEnd)) {
        return 0;
      }
    }
  }
  return 1;
}

static int openOutput(Run *r) {
  int rc = compact_output_open(r->j, &r->so, &r->out, r->pzErr);
  r->smallest.n = r->largest.n = 0;
  r->nEntries = r->nRaw = 0;
  r->minSeq = WCS_SEQ_MAX;
  r->maxSeq = 0;
  return rc;
}

/* Set *pb to the internal key (k, sentinel). */
static int sentinelKey(wcs_buf *b, const uint8_t *k, size_t n) {
  int rc;
  b->n = 0;
  rc = wcs_buf_append(b, k, n);
  if (rc == WCS_OK) rc = wcs_buf_append64(b, WCS_IKEY_SENTINEL);
  return rc;
}

/* Finish the current output; its share of the key space ends at hi
** (exclusive user key; NULL: the end of the key space). Writes the
** surviving tombstones clipped to the share. */
static int finishOutput(Run *r, const uint8_t *pHi, size_t nHi, int bHiInf) {
  compact_job *j = r->j;
  wcs_buf tmp = {0};
  sst_meta bounds;
  int i, rc = WCS_OK, bUnbounded = 0;
  uint64_t nDels = 0;
  /* tombstones of this share */
  for (i = 0; rc == WCS_OK && i < r->nDel; i++) {
    const sst_rangedel *d = &r->aDel[i];
    sst_rangedel c = *d;
    if (!r->aKeep[i]) continue;
    if (!r->bLoInf && wcs_ukey_cmp(c.pStart, c.nStart, r->lo.a, r->lo.n) < 0) {
      c.pStart = r->lo.a;
      c.nStart = r->lo.n;
    }
    if (!bHiInf &&
        (c.pEnd == NULL || wcs_ukey_cmp(c.pEnd, c.nEnd, pHi, nHi) > 0)) {
      c.pEnd = pHi;
      c.nEnd = nHi;
    }
    if (c.pEnd && wcs_ukey_cmp(c.pStart, c.nStart, c.pEnd, c.nEnd) >= 0) {
      continue; /* nothing of it in this share */
    }
    if (r->out.pB == NULL) rc = openOutput(r);
    if (rc) break;
    rc = sst_builder_add_rangedel(r->out.pB, &c, r->pzErr);
    if (rc) break;
    nDels++;
    if (c.seq < r->minSeq) r->minSeq = c.seq;
    if (c.seq > r->maxSeq) r->maxSeq = c.seq;
    /* widen the file's range to the tombstone */
    rc = sentinelKey(&tmp, c.pStart, c.nStart);
    if (rc == WCS_OK &&
        (r->smallest.n == 0 ||
         wcs_ikey_cmp(tmp.a, tmp.n, r->smallest.a, r->smallest.n) < 0)) {
      r->smallest.n = 0;
      rc = wcs_buf_append(&r->smallest, tmp.a, tmp.n);
    }
    if (rc == WCS_OK) {
      if (c.pEnd == NULL) {
        bUnbounded = 1;
      } else {
        rc = sentinelKey(&tmp, c.pEnd, c.nEnd);
        if (rc == WCS_OK &&
            (r->largest.n == 0 ||
             wcs_ikey_cmp(tmp.a, tmp.n, r->largest.a, r->largest.n) > 0)) {
          r->largest.n = 0;
          rc = wcs_buf_append(&r->largest, tmp.a, tmp.n);
        }
      }
    }
    if (rc == WCS_NOMEM) wcs_seterr(r->pzErr, rc, "out of memory");
  }
  wcs_buf_free(&tmp);
  if (rc) return rc;
  if (r->out.pB == NULL) return WCS_OK; /* nothing in this share */
  if (r->largest.n == 0) {
    /* only unbounded tombstones: the largest key is the smallest */
    rc = wcs_buf_append(&r->largest, r->smallest.a, r->smallest.n);
    if (rc) return wcs_seterr(r->pzErr, rc, "out of memory");
  }
  /* the range recorded in the manifest is ours (tombstones clipped) */
  memset(&bounds, 0, sizeof bounds);
  bounds.pSmallest = r->smallest.a;
  bounds.nSmallest = r->smallest.n;
  bounds.pLargest = r->largest.a;
  bounds.nLargest = r->largest.n;
  bounds.bUnbounded = bUnbounded;
  bounds.nRangeDel = nDels;
  bounds.minSeq = r->minSeq;
  bounds.maxSeq = r->maxSeq;
  return compact_output_finish(j, &r->out, &bounds, r->pzErr);
}

int compact_output_open(compact_job *j, const sst_options *pSo,
                        compact_output *o, char **pzErr) {
  sst_options so = *pSo;
  o->iFile = j->xNewFile(j->pArg);
  free(o->zPath);
  o->zPath = vset_file_path(j->pVs, o->iFile, "sst");
  if (o->zPath == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  if (j->xManifestPos) {
    j->xManifestPos(j->pArg, &so.iManifest, &so.nManifestBytes);
  }
  so.pWarm = vset_cache(j->pVs);
  return sst_builder_new(vset_env(j->pVs), o->zPath, o->iFile, &so, &o->pB,
                         pzErr);
}

int compact_output_finish(compact_job *j, compact_output *o,
                          const sst_meta *pBounds, char **pzErr) {
  wcs_fmeta *f = NULL;
  sst_meta m;
  int rc;
  memset(&m, 0, sizeof m);
  rc = sst_builder_finish(o->pB, &m, pzErr);
  o->pB = NULL;
  if (rc == WCS_OK) {
    sst_meta mine = m;
    mine.iFile = o->iFile;
    if (pBounds) {
      mine.pSmallest = pBounds->pSmallest;
      mine.nSmallest = pBounds->nSmallest;
      mine.pLargest = pBounds->pLargest;
      mine.nLargest = pBounds->nLargest;
      mine.bUnbounded = pBounds->bUnbounded;
      mine.nRangeDel = pBounds->nRangeDel;
      mine.minSeq = pBounds->minSeq;
      mine.maxSeq = pBounds->maxSeq;
    }
    rc = fmeta_new(j->pVs, &mine, &f);
    if (rc) wcs_seterr(pzErr, rc, "out of memory");
  }
  sst_meta_clear(&m);
  if (rc == WCS_OK) rc = fmeta_open(f, pzErr);
  if (rc == WCS_OK) {
    wcs_fmeta **a =
        realloc(j->aOut, sizeof(wcs_fmeta *) * (size_t)(j->nOut + 1));
    if (a == NULL) {
      rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    } else {
      j->aOut = a;
      a[j->nOut++] = f;
      j->nBytesOut += f->nBytes;
      f = NULL;
    }
  }
  if (f) {
    f->bObsolete = 1; /* delete the file with the reference */
    fmeta_unref(f);
  } else if (rc && o->zPath) {
    vset_env(j->pVs)->xDelete(vset_env(j->pVs), o->zPath, NULL);
    /* the blocks it put in the cache, if it was finished */
    if (vset_cache(j->pVs)) wcs_cache_evict_file(vset_cache(j->pVs), o->iFile);
  }
  return rc;
}

void compact_output_clear(compact_output *o) {
  if (o->pB) sst_builder_abandon(o->pB);
  free(o->zPath);
  memset(o, 0, sizeof *o);
}

void compact_sst_options(const wcs_options *pOpt, sst_options *pSo) {
  memset(pSo, 0, sizeof *pSo);
  pSo->nBlockSize = pOpt->nBlockSize;
  /* Restart points every 64 entries, or 2 KiB of them (doc/format.md,
  ** "Blocks"): a restart key is stored whole, and in blocks of short cells
  ** (the engine's: about 25 bytes an entry) one every 16 entries cost
  ** bytes and scan time, while long entries keep about the old spacing. */
  pSo->nRestart = 64;
  pSo->nRestartBytes = 2048;
  pSo->iZstdLevel = pOpt->iZstdLevel;
  pSo->nBloomBits = pOpt->nBloomBits;
  pSo->xBloomPrefix = pOpt->xBloomPrefix;
  pSo->bSuffix = 1;
  /* a seek point in about every 16 entries (doc/format.md, "Seek
  ** points"): a seek or a step back decodes about 16 entries of an
  ** interval, not up to 64 */
  pSo->nSeekEvery = 16;
  if (pOpt->xNoteBegin && pOpt->xNoteAdd && pOpt->xNoteEnd) {
    pSo->xNoteBegin = pOpt->xNoteBegin;
    pSo->xNoteAdd = pOpt->xNoteAdd;
    pSo->xNoteEnd = pOpt->xNoteEnd;
    pSo->pNoteCtx = pOpt->pNoteCtx;
  }
}

int compact_cut_before(const compact_job *j, compact_cut *pCut,
                       const sst_builder *pB, const uint8_t *pU, size_t nU) {
  int bCut = 0;
  if (j->nFileBytes == 0) return 0;
  if (j->pBase && j->iOutLevel >= 0 && j->iOutLevel + 1 < WCS_NLEVEL) {
    const wcs_version *pV = j->pBase;
    int g = j->iOutLevel + 1;
    while (pCut->iGp < pV->anFile[g]) {
      const wcs_fmeta *f = pV->aaFile[g][pCut->iGp];
      if (f->bUnbounded ||
          wcs_ukey_cmp(f->pLargest, f->nLargest - WCS_IKEY_TRAILER, pU, nU) >=
              0) {
        break;
      }
      if (pB) pCut->nGpBytes += f->nBytes;
      pCut->iGp++;
    }
    bCut = pCut->nGpBytes > 10 * j->nFileBytes;
  }
  return pB && (bCut || sst_builder_full(pB, j->nFileBytes));
}

/* Set b to the key k[0..n): every entry written becomes the output's
** largest key, copied inline (wcs_copy_short), not by a call. */
static inline int keepKey(wcs_buf *b, const uint8_t *k, size_t n) {
  b->n = 0;
  if (n > b->nAlloc && wcs_buf_reserve(b, n)) return WCS_NOMEM;
  wcs_copy_short(b->a, k, n);
  b->n = n;
  return WCS_OK;
}

static int addEntry(Run *r, const uint8_t *k, size_t nK, const uint8_t *v,
                    size_t nV) {
  compact_job *j = r->j;
  const uint8_t *pU = k;
  size_t nU = nK - WCS_IKEY_TRAILER;
  uint64_t seq = wcs_ikey_seq(k, nK);
  int rc = WCS_OK;
  /* Versions of one user key stay in one file. The output can be cut
  ** only while open, and then its largest key is the last entry written
  ** (tombstones widen it only as the output is finished). */
  if (compact_cut_before(j, &r->cut, r->out.pB, pU, nU) &&
      (r->largest.n < WCS_IKEY_TRAILER ||
       wcs_ukey_cmp(pU, nU, r->largest.a, r->largest.n - WCS_IKEY_TRAILER))) {
    r->cut.nGpBytes = 0;
    rc = finishOutput(r, pU, nU, 0);
    if (rc) return rc;
    r->lo.n = 0;
    rc = wcs_buf_append(&r->lo, pU, nU);
    r->bLoInf = 0;
    if (rc) return wcs_seterr(r->pzErr, rc, "out of memory");
  }
  if (r->out.pB == NULL) rc = openOutput(r);
  if (rc == WCS_OK) rc = sst_builder_add(r->out.pB, k, nK, v, nV, r->pzErr);
  if (rc) return rc;
  if (r->smallest.n == 0) rc = wcs_buf_append(&r->smallest, k, nK);
  if (rc == WCS_OK) rc = keepKey(&r->largest, k, nK);
  if (rc) return wcs_seterr(r->pzErr, rc, "out of memory");
  r->nEntries++;
  r->nRaw += nK + nV;
  if (seq < r->minSeq) r->minSeq = seq;
  if (seq > r->maxSeq) r->maxSeq = seq;
  return WCS_OK;
}

/* Add a delete for user key pU with the given trailer (a filtered put
** that must keep hiding older versions). */
static int addDelete(Run *r, const uint8_t *pU, size_t nU,
                     const uint8_t *aTrailer) {
  wcs_buf k = {0};
  int rc;
  if (wcs_buf_append(&k, pU, nU) ||
      wcs_buf_append(&k, aTrailer, WCS_IKEY_TRAILER)) {
    wcs_buf_free(&k);
    return wcs_seterr(r->pzErr, WCS_NOMEM, "out of memory");
  }
  rc = addEntry(r, k.a, k.n, (const uint8_t *)"", 0);
  wcs_buf_free(&k);
  return rc;
}

int compact_run(compact_job *j, wcs_iiter *pIn, const sst_rangedel *aDel,
                int nDel, char **pzErr) {
  Run r;
  wcs_buf prevU = {0};
  int bPrev = 0, lastStripe = -1, rc = WCS_OK, i;
  uint64_t nStep = 0;
  memset(&r, 0, sizeof r);
  r.j = j;
  r.pzErr = pzErr;
  r.pOpt = vset_options(j->pVs);
  compact_sst_options(r.pOpt, &r.so);
  r.aDel = aDel;
  r.nDel = nDel;
  r.bLoInf = 1;
  if (nDel) {
    r.aKeep = malloc((size_t)nDel);
    if (r.aKeep == NULL || frags_build(&r.frags, aDel, nDel)) {
      free(r.aKeep);
      return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    }
    for (i = 0; i < nDel; i++) {
      r.aKeep[i] =
          !(stripeOf(j, aDel[i].seq) == 0 && bottomForRange(j, &aDel[i]));
    }
  }

  /* the filter's wcs_compaction_covered() calls reach j->pUpper */
  upper_enter(j->bFilter ? j->pUpper : NULL);
  pIn->pMethods->xFirst(pIn);
  while (rc == WCS_OK && pIn->pMethods->xValid(pIn)) {
    size_t nK, nV;
    const uint8_t *k = pIn->pMethods->xKey(pIn, &nK);
    const uint8_t *v = pIn->pMethods->xValue(pIn, &nV);
    const uint8_t *pU = k;
    size_t nU;
    uint64_t seq;
    int type, st, bDrop = 0, bNewest;
    if (nK < WCS_IKEY_TRAILER) {
      rc = wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                      "corrupt entry in a compaction input: key shorter "
                      "than its trailer");
      break;
    }
    if ((++nStep & 1023) == 0 && j->pbStop &&
        atomic_load_explicit(j->pbStop, memory_order_relaxed)) {
      rc =
          wcs_seterr(pzErr, WCS_INTERRUPT, "compaction stopped: store closing");
      break;
    }
    nU = nK - WCS_IKEY_TRAILER;
    seq = wcs_ikey_seq(k, nK);
    type = wcs_ikey_type(k, nK);
    j->nBytesIn += nK + nV;
    if (!bPrev || wcs_ukey_cmp(pU, nU, prevU.a, prevU.n) != 0) {
      prevU.n = 0;
      if (wcs_buf_append(&prevU, pU, nU)) {
        rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
        break;
      }
      bPrev = 1;
      lastStripe = -1;
      bNewest = 1;
    } else {
      bNewest = 0;
    }
    st = stripeOf(j, seq);
    if (st == lastStripe) {
      bDrop = 1; /* a newer version in the same stripe hides it */
    } else {
      lastStripe = st;
      if (r.frags.n) {
        const wcs_frag *fr = frags_find(&r.frags, pU, nU);
        uint64_t top = stripeTop(j, st);
        int q;
        for (q = 0; fr && q < fr->nSeq && !bDrop; q++) {
          if (fr->aSeq[q] > seq && fr->aSeq[q] <= top) bDrop = 1;
        }
      }
      if (!bDrop && type == WCS_KT_DELETE && st == 0 &&
          bottomForKey(j, pU, nU)) {
        bDrop = 1;
      }
    }
    if (!bDrop && bNewest && type == WCS_KT_PUT && j->bFilter &&
        r.pOpt->xCompactionFilter) {
      int bFilterDrop = 0;
      assert(j->nSnap == 1 && st == 0);
      /* no memory for the first key: every probe answers "covered" */
      (void)upper_offered(j->pUpper, pU, nU);
      rc = r.pOpt->xCompactionFilter(r.pOpt->pFilterCtx, pU, nU, v, nV,
                                     &bFilterDrop);
      if (rc != WCS_OK) {
        wcs_seterr(pzErr, rc, "compaction filter failed (%s)", wcs_errstr(rc));
        break;
      }
      if (bFilterDrop) {
        j->nFiltered++;
        if (bottomForKey(j, pU, nU)) {
          bDrop = 1;
        } else {
          /* older versions below must stay hidden: a delete at its seq */
          uint8_t aTr[WCS_IKEY_TRAILER];
          wcs_put64(aTr, wcs_ikey_pack(seq, WCS_KT_DELETE));
          rc = addDelete(&r, pU, nU, aTr);
          if (rc) break;
          bDrop = 2; /* written as a delete */
        }
      }
    }
    if (bDrop == 0 && j->bZeroSeq && st == 0 && seq != 0 &&
        type == WCS_KT_PUT &&
        (r.frags.n == 0 || frags_find(&r.frags, pU, nU) == NULL) &&
        bottomForKey(j, pU, nU)) {
      /* The only version any reader can see, nothing older below, no
      ** tombstone here to compare it with: seq 0 compresses to nothing.
      ** (Older tombstones elsewhere cannot cover it: levels above hold
      ** only newer data for the key.) */
      r.zeroKey.n = 0;
      if (wcs_buf_append(&r.zeroKey, pU, nU) ||
          wcs_buf_append64(&r.zeroKey, wcs_ikey_pack(0, WCS_KT_PUT))) {
        rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
        break;
      }
      rc = addEntry(&r, r.zeroKey.a, r.zeroKey.n, v, nV);
      bDrop = 2;
    }
    if (bDrop == 1) {
      j->nDropped++;
    } else if (bDrop == 0) {
      rc = addEntry(&r, k, nK, v, nV);
    }
    if (rc == WCS_OK) pIn->pMethods->xNext(pIn);
  }
  upper_enter(NULL);
  if (rc == WCS_OK) rc = pIn->pMethods->xStatus(pIn, pzErr);
  if (rc == WCS_OK) rc = finishOutput(&r, NULL, 0, 1);
  compact_output_clear(&r.out);
  if (rc) compact_job_discard(j);
  free(r.aKeep);
  frags_free(&r.frags);
  wcs_buf_free(&r.smallest);
  wcs_buf_free(&r.largest);
  wcs_buf_free(&r.lo);
  wcs_buf_free(&r.zeroKey);
  wcs_buf_free(&prevU);
  return rc;
}

void compact_job_clear(compact_job *j) {
  int i;
  for (i = 0; i < j->nOut; i++)
    fmeta_unref(j->aOut[i]);
  free(j->aOut);
  j->aOut = NULL;
  j->nOut = 0;
}

void compact_job_discard(compact_job *j) {
  int i;
  for (i = 0; i < j->nOut; i++)
    j->aOut[i]->bObsolete = 1; /* deleted with the last reference */
  compact_job_clear(j);
}
