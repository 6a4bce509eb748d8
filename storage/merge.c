/*
** merge.c — the merging iterator (see merge.h).
**
** How it works. The valid children sit in a binary heap ordered by their
** current internal key: a min-heap while moving forward, a max-heap while
** moving backward; the top is the merged iterator's position. A step moves
** the top child and sifts it down: O(log n). Each child's current key is
** cached beside the heap so a comparison does not go through the vtable.
**
** Changing direction (Next after Prev or the reverse) repositions every
** child relative to the current key K: for Next, each child seeks to the
** first entry >= K and steps past K itself; for Prev, each child seeks to
** the last entry <= K and steps before K. Keys are unique across children,
** so exactly the child that was on top steps.
*/
#include "storage/merge.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "storage/ikey.h"
#include "storage/util.h"

typedef struct MergeIter {
  wcs_iiter base;        /* must be first */
  int nChild;            /* children, >= 0 */
  wcs_iiter **apChild;   /* owned children */
  const uint8_t **apKey; /* cached current key of each child */
  size_t *anKey;         /* its length */
  int *aHeap;            /* indices of valid children, heap-ordered */
  int nHeap;             /* entries in aHeap, <= nChild */
  int bRev;              /* 1: max-heap (moving backward) */
  int rc;                /* first child error, sticky until repositioned */
  int iErr;              /* child that failed, when rc != WCS_OK */
  wcs_buf key;           /* copy of the current key across a turn */
  int bBorrowed;         /* children belong to the caller (merge_iter_set) */
  int nAlloc;            /* borrowed: children the arrays below fit */
  void *pArrays;         /* borrowed: the four arrays, one allocation */
} MergeIter;

static int before(const MergeIter *m, int a, int b) {
  int c = wcs_ikey_cmp(m->apKey[a], m->anKey[a], m->apKey[b], m->anKey[b]);
  return m->bRev ? c > 0 : c < 0;
}

static void siftDown(MergeIter *m, int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, best = i, t;
    if (l < m->nHeap && before(m, m->aHeap[l], m->aHeap[best])) best = l;
    if (r < m->nHeap && before(m, m->aHeap[r], m->aHeap[best])) best = r;
    if (best == i) return;
    t = m->aHeap[i];
    m->aHeap[i] = m->aHeap[best];
    m->aHeap[best] = t;
    i = best;
  }
}

/* Refresh child i's cached key after it moved; returns 1 if valid. */
static int refresh(MergeIter *m, int i) {
  wcs_iiter *c = m->apChild[i];
  if (c->pMethods->xValid(c)) {
    m->apKey[i] = c->pMethods->xKey(c, &m->anKey[i]);
    return 1;
  }
  if (m->rc == WCS_OK) {
    int rc = c->pMethods->xStatus(c, NULL);
    if (rc) {
      m->rc = rc;
      m->iErr = i;
    }
  }
  return 0;
}

/* Rebuild the heap from every child's position. */
static int rebuild(MergeIter *m, int bRev) {
  int i;
  m->bRev = bRev;
  m->nHeap = 0;
  for (i = 0; i < m->nChild; i++) {
    if (refresh(m, i)) m->aHeap[m->nHeap++] = i;
  }
  for (i = m->nHeap / 2 - 1; i >= 0; i--)
    siftDown(m, i);
  return m->rc;
}

static int mFirst(wcs_iiter *p) {
  MergeIter *m = (MergeIter *)p;
  int i;
  m->rc = WCS_OK;
  for (i = 0; i < m->nChild; i++) {
    m->apChild[i]->pMethods->xFirst(m->apChild[i]);
  }
  return rebuild(m, 0);
}

static int mLast(wcs_iiter *p) {
  MergeIter *m = (MergeIter *)p;
  int i;
  m->rc = WCS_OK;
  for (i = 0; i < m->nChild; i++) {
    m->apChild[i]->pMethods->xLast(m->apChild[i]);
  }
  return rebuild(m, 1);
}

static int mSeek(wcs_iiter *p, const uint8_t *pKey, size_t nKey) {
  MergeIter *m = (MergeIter *)p;
  int i;
  m->rc = WCS_OK;
  for (i = 0; i < m->nChild; i++) {
    m->apChild[i]->pMethods->xSeek(m->apChild[i], pKey, nKey);
  }
  return rebuild(m, 0);
}

static int mSeekForPrev(wcs_iiter *p, const uint8_t *pKey, size_t nKey) {
  MergeIter *m = (MergeIter *)p;
  int i;
  m->rc = WCS_OK;
  for (i = 0; i < m->nChild; i++) {
    m->apChild[i]->pMethods->xSeekForPrev(m->apChild[i], pKey, nKey);
  }
  return rebuild(m, 1);
}

static int mValid(const wcs_iiter *p) {
  const MergeIter *m = (const MergeIter *)p;
  return m->rc == WCS_OK && m->nHeap > 0;
}

/* Step the top child (forward or backward) and restore the heap. */
static int stepTop(MergeIter *m, int bPrev) {
  int i = m->aHeap[0];
  wcs_iiter *c = m->apChild[i];
  if (bPrev)
    c->pMethods->xPrev(c);
  else
    c->pMethods->xNext(c);
  if (refresh(m, i)) {
    siftDown(m, 0);
  } else {
    m->aHeap[0] = m->aHeap[--m->nHeap];
    if (m->nHeap > 0) siftDown(m, 0);
  }
  return m->rc;
}

/* Turn around: reposition every child around the current key. */
static int turn(MergeIter *m, int bRev) {
  int i, rc;
  int top = m->aHeap[0];
  m->key.n = 0;
  rc = wcs_buf_append(&m->key, m->apKey[top], m->anKey[top]);
  if (rc) {
    m->rc = rc;
    m->iErr = -1;
    return rc;
  }
  for (i = 0; i < m->nChild; i++) {
    wcs_iiter *c = m->apChild[i];
    if (bRev)
      c->pMethods->xSeekForPrev(c, m->key.a, m->key.n);
    else
      c->pMethods->xSeek(c, m->key.a, m->key.n);
    if (c->pMethods->xValid(c)) {
      size_t n;
      const uint8_t *k = c->pMethods->xKey(c, &n);
      if (wcs_ikey_cmp(k, n, m->key.a, m->key.n) == 0) {
        if (bRev)
          c->pMethods->xPrev(c);
        else
          c->pMethods->xNext(c);
      }
    }
  }
  return rebuild(m, bRev);
}

static int mNext(wcs_iiter *p) {
  MergeIter *m = (MergeIter *)p;
  if (!mValid(p)) return m->rc;
  if (m->bRev) return turn(m, 0);
  return stepTop(m, 0);
}

static int mPrev(wcs_iiter *p) {
  MergeIter *m = (MergeIter *)p;
  if (!mValid(p)) return m->rc;
  if (!m->bRev) return turn(m, 1);
  return stepTop(m, 1);
}

static const uint8_t *mKey(const wcs_iiter *p, size_t *pn) {
  const MergeIter *m = (const MergeIter *)p;
  int i = m->aHeap[0];
  *pn = m->anKey[i];
  return m->apKey[i];
}

static const uint8_t *mValue(const wcs_iiter *p, size_t *pn) {
  const MergeIter *m = (const MergeIter *)p;
  wcs_iiter *c = m->apChild[m->aHeap[0]];
  return c->pMethods->xValue(c, pn);
}

static int mStatus(const wcs_iiter *p, char **pzErr) {
  const MergeIter *m = (const MergeIter *)p;
  if (m->rc == WCS_OK) return WCS_OK;
  if (m->iErr >= 0) {
    wcs_iiter *c = m->apChild[m->iErr];
    c->pMethods->xStatus(c, pzErr);
  } else {
    wcs_seterr(pzErr, m->rc, "out of memory in a merging iterator");
  }
  return m->rc;
}

static void mClose(wcs_iiter *p) {
  MergeIter *m = (MergeIter *)p;
  int i;
  if (m == NULL) return;
  for (i = 0; !m->bBorrowed && i < m->nChild; i++) {
    if (m->apChild[i]) m->apChild[i]->pMethods->xClose(m->apChild[i]);
  }
  wcs_buf_free(&m->key);
  free(m->pArrays);
  free(m);
}

static const wcs_iiter_methods mergeMethods = {
    mFirst, mLast, mSeek,  mSeekForPrev, mNext, mPrev,
    mValid, mKey,  mValue, mStatus,      mClose, NULL};

int merge_iter_new(wcs_iiter **apChild, int nChild, wcs_iiter **ppIter) {
  MergeIter *m;
  size_t n = sizeof(MergeIter) +
             (size_t)nChild * (sizeof(wcs_iiter *) + sizeof(uint8_t *) +
                               sizeof(size_t) + sizeof(int));
  int i;
  *ppIter = NULL;
  if (nChild == 1) {
    *ppIter = apChild[0];
    return WCS_OK;
  }
  m = calloc(1, n);
  if (m == NULL) {
    for (i = 0; i < nChild; i++) {
      if (apChild[i]) apChild[i]->pMethods->xClose(apChild[i]);
    }
    return WCS_NOMEM;
  }
  m->base.pMethods = &mergeMethods;
  m->nChild = nChild;
  m->apChild = (wcs_iiter **)&m[1];
  m->apKey = (const uint8_t **)&m->apChild[nChild];
  m->anKey = (size_t *)&m->apKey[nChild];
  m->aHeap = (int *)&m->anKey[nChild];
  if (nChild) memcpy(m->apChild, apChild, sizeof(wcs_iiter *) * (size_t)nChild);
  *ppIter = &m->base;
  return WCS_OK;
}

/* ====================================================================
** Range tombstone fragments.
**
** How it works: every start and every bounded end is a boundary; sorting
** the distinct boundaries cuts the key space into elementary intervals,
** and a sweep in key order keeps the set of tombstones covering the
** current interval (added at their start, removed at their end). Each
** interval covered by at least one tombstone becomes a fragment with the
** covering seqs. Cost O(n log n + total coverage).
** ==================================================================== */

typedef struct Bound {
  const uint8_t *p;
  size_t n;
} Bound;

static int cmpBound(const void *a, const void *b) {
  const Bound *x = a, *y = b;
  return wcs_ukey_cmp(x->p, x->n, y->p, y->n);
}

static int cmpDelStart(const void *a, const void *b) {
  const sst_rangedel *x = *(const sst_rangedel *const *)a;
  const sst_rangedel *y = *(const sst_rangedel *const *)b;
  return wcs_ukey_cmp(x->pStart, x->nStart, y->pStart, y->nStart);
}

static int cmpSeqDesc(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x > y ? -1 : (x < y ? 1 : 0);
}

int frags_build(wcs_frags *f, const sst_rangedel *aDel, int nDel) {
  Bound *aB = NULL;
  const sst_rangedel **aSorted = NULL, **aAct = NULL;
  int nB = 0, i, iNext = 0, nAct = 0, bOpen = 0;
  size_t nPool = 0, nPoolAlloc = 0;
  memset(f, 0, sizeof *f);
  if (nDel == 0) return WCS_OK;
  aB = malloc(sizeof(Bound) * (size_t)nDel * 2);
  aSorted = malloc(sizeof(sst_rangedel *) * (size_t)nDel);
  aAct = malloc(sizeof(sst_rangedel *) * (size_t)nDel);
  f->a = malloc(sizeof(wcs_frag) * (size_t)nDel * 2);
  if (!aB || !aSorted || !aAct || !f->a) goto nomem;
  for (i = 0; i < nDel; i++) {
    aSorted[i] = &aDel[i];
    aB[nB].p = aDel[i].pStart;
    aB[nB++].n = aDel[i].nStart;
    if (aDel[i].pEnd) {
      aB[nB].p = aDel[i].pEnd;
      aB[nB++].n = aDel[i].nEnd;
    } else {
      bOpen = 1;
    }
  }
  /* Tombstones in key order that do not overlap (a file's, mostly: a
  ** statement's deletes are merged before they are written) need no
  ** sort: their bounds are in order as they come. */
  for (i = 1; i < nB && cmpBound(&aB[i - 1], &aB[i]) <= 0; i++) {
  }
  if (i < nB) {
    qsort(aB, (size_t)nB, sizeof(Bound), cmpBound);
    qsort(aSorted, (size_t)nDel, sizeof(sst_rangedel *), cmpDelStart);
  }
  {
    int j = 0;
    for (i = 0; i < nB; i++) {
      if (j == 0 || cmpBound(&aB[j - 1], &aB[i]) != 0) aB[j++] = aB[i];
    }
    nB = j;
  }
  for (i = 0; i < nB; i++) {
    const Bound *lo = &aB[i];
    const Bound *hi = i + 1 < nB ? &aB[i + 1] : NULL;
    int k, j;
    if (hi == NULL && !bOpen) break;
    /* tombstones starting here join; those ending here leave */
    while (iNext < nDel &&
           wcs_ukey_cmp(aSorted[iNext]->pStart, aSorted[iNext]->nStart, lo->p,
                        lo->n) <= 0) {
      aAct[nAct++] = aSorted[iNext++];
    }
    for (k = j = 0; k < nAct; k++) {
      const sst_rangedel *d = aAct[k];
      if (d->pEnd && wcs_ukey_cmp(d->pEnd, d->nEnd, lo->p, lo->n) <= 0)
        continue;
      aAct[j++] = d;
    }
    nAct = j;
    if (nAct == 0) continue;
    if (nPool + (size_t)nAct > nPoolAlloc) {
      size_t nNew = nPoolAlloc ? nPoolAlloc * 2 : 64;
      uint64_t *a;
      while (nNew < nPool + (size_t)nAct)
        nNew *= 2;
      a = realloc(f->aPool, sizeof(uint64_t) * nNew);
      if (a == NULL) goto nomem;
      f->aPool = a;
      nPoolAlloc = nNew;
    }
    {
      wcs_frag *fr = &f->a[f->n++];
      fr->pStart = lo->p;
      fr->nStart = lo->n;
      fr->pEnd = hi ? hi->p : NULL;
      fr->nEnd = hi ? hi->n : 0;
      fr->aSeq = NULL; /* pointer fixed below: the pool may move */
      fr->nSeq = nAct;
      for (k = 0; k < nAct; k++)
        f->aPool[nPool + (size_t)k] = aAct[k]->seq;
      if (nAct > 1) {
        qsort(&f->aPool[nPool], (size_t)nAct, sizeof(uint64_t), cmpSeqDesc);
      }
      /* remember the pool offset in nStart's neighbour: use aSeq as index */
      fr->aSeq = (const uint64_t *)(uintptr_t)nPool;
      nPool += (size_t)nAct;
    }
  }
  for (i = 0; i < f->n; i++) {
    f->a[i].aSeq = f->aPool + (size_t)(uintptr_t)f->a[i].aSeq;
  }
  free(aB);
  free(aSorted);
  free(aAct);
  return WCS_OK;

nomem:
  free(aB);
  free(aSorted);
  free(aAct);
  frags_free(f);
  return WCS_NOMEM;
}

/* Index of the last fragment whose start is <= the key, -1 if none. */
static int fragAt(const wcs_frags *f, const uint8_t *pKey, size_t nKey) {
  int lo = 0, hi = f->n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (wcs_ukey_cmp(f->a[mid].pStart, f->a[mid].nStart, pKey, nKey) <= 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo - 1;
}

/* Whether fragment i (-1: before the first) is the last to start at or
** before the key. */
static int fragIsAt(const wcs_frags *f, int i, const uint8_t *pKey,
                    size_t nKey) {
  return (i < 0 ||
          wcs_ukey_cmp(f->a[i].pStart, f->a[i].nStart, pKey, nKey) <= 0) &&
         (i + 1 >= f->n ||
          wcs_ukey_cmp(f->a[i + 1].pStart, f->a[i + 1].nStart, pKey, nKey) > 0);
}

/* Fragment i if it holds the key (it starts at or before it). */
static const wcs_frag *fragHolding(const wcs_frags *f, int i,
                                   const uint8_t *pKey, size_t nKey) {
  const wcs_frag *fr;
  if (i < 0) return NULL;
  fr = &f->a[i];
  if (fr->pEnd && wcs_ukey_cmp(pKey, nKey, fr->pEnd, fr->nEnd) >= 0) {
    return NULL;
  }
  return fr;
}

const wcs_frag *frags_find(const wcs_frags *f, const uint8_t *pKey,
                           size_t nKey) {
  return fragHolding(f, fragAt(f, pKey, nKey), pKey, nKey);
}

const wcs_frag *frags_find_near(const wcs_frags *f, const uint8_t *pKey,
                                size_t nKey, int *piHint) {
  int i = *piHint;
  if (i < -1 || i >= f->n) i = -1;
  if (!fragIsAt(f, i, pKey, nKey)) {
    if (i + 1 < f->n && fragIsAt(f, i + 1, pKey, nKey)) {
      i++;
    } else if (i >= 0 && fragIsAt(f, i - 1, pKey, nKey)) {
      i--;
    } else {
      i = fragAt(f, pKey, nKey);
    }
  }
  *piHint = i;
  return fragHolding(f, i, pKey, nKey);
}

int frags_first_after(const wcs_frags *f, const uint8_t *pLo, size_t nLo) {
  int lo = 0, hi = f->n;
  while (pLo && lo < hi) {
    int mid = (lo + hi) / 2;
    const wcs_frag *m = &f->a[mid];
    if (m->pEnd && wcs_ukey_cmp(m->pEnd, m->nEnd, pLo, nLo) <= 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

void frags_free(wcs_frags *f) {
  free(f->a);
  free(f->aPool);
  memset(f, 0, sizeof *f);
}

int merge_iter_new_borrowed(wcs_iiter **ppIter) {
  MergeIter *m = calloc(1, sizeof *m);
  *ppIter = NULL;
  if (m == NULL) return WCS_NOMEM;
  m->base.pMethods = &mergeMethods;
  m->bBorrowed = 1;
  *ppIter = &m->base;
  return WCS_OK;
}

int merge_iter_set(wcs_iiter *p, wcs_iiter **apChild, int nChild) {
  MergeIter *m = (MergeIter *)p;
  assert(m->base.pMethods == &mergeMethods && m->bBorrowed);
  m->nChild = 0;
  m->nHeap = 0;
  m->rc = WCS_OK;
  m->iErr = -1;
  if (nChild > m->nAlloc) {
    int nNew = nChild < 8 ? 8 : nChild * 2;
    void *pNew = malloc((size_t)nNew * (sizeof(wcs_iiter *) +
                                        sizeof(uint8_t *) + sizeof(size_t) +
                                        sizeof(int)));
    if (pNew == NULL) return WCS_NOMEM;
    free(m->pArrays);
    m->pArrays = pNew;
    m->nAlloc = nNew;
    m->apChild = (wcs_iiter **)pNew;
    m->apKey = (const uint8_t **)&m->apChild[nNew];
    m->anKey = (size_t *)&m->apKey[nNew];
    m->aHeap = (int *)&m->anKey[nNew];
  }
  if (nChild) memcpy(m->apChild, apChild, sizeof(wcs_iiter *) * (size_t)nChild);
  m->nChild = nChild;
  return WCS_OK;
}
