/*
** overlay.c — a transaction's uncommitted writes, and the view iterator
** that merges them over a store snapshot (read-your-writes).
**
** The overlay holds storage-level operations, already translated from
** mutations: a skiplist of point entries keyed by storage key (PUT value,
** point DEL, MERGE operand of an aggregate family, or NONE) and a sorted
** set of disjoint range deletes [start, end). Its state is always the net
** effect of the operations so far:
**   - a range delete wipes the point entries it covers (they become NONE,
**     keeping their nodes so iterators walking the list stay valid) and
**     hides every store key in it;
**   - a MERGE on a key whose base is known (PUT, DEL, NONE or a covering
**     range) folds at once into a PUT; only a MERGE over the unknown store
**     value stays a MERGE, to be folded into the latest committed value at
**     commit. So a MERGE entry never lies under one of the overlay's own
**     ranges.
** Nodes are never freed before ov_clear(). Every change bumps the
** generation number, which tells a view positioned earlier to settle again
** at its key before it is read (view_sync), so a cursor may stay open
** while its transaction writes.
**
** The view iterator walks one direction only (forward or reverse, chosen
** at creation), which is all row cursors need, and keeps the merge
** simple: at each step the nearer of the store key and the overlay key
** wins; ties go to the overlay; store keys under an overlay range are
** skipped.
*/
#include "engine/engine.h"
#include "storage/iterrun.h"

#include <stdlib.h>
#include <string.h>

#define OV_MAX_LEVEL 20

struct OvNode {
  int eKind;     /* OV_* */
  int eAgg;      /* OV_MERGE: WCS_AGG_* */
  uint8_t *pVal; /* malloc'd value / operand, or NULL */
  size_t nVal;
  size_t nKey;
  uint8_t *pKey;     /* points just past apNext[nLevel-1] */
  OvNode *pPrev;     /* level-0 predecessor (NULL: first) */
  int nLevel;        /* 1..OV_MAX_LEVEL */
  OvNode *apNext[1]; /* [nLevel] successors */
};

/* A range delete [pStart, pEnd), both bytes after apNext[nLevel-1]. */
struct OvRange {
  uint8_t *pStart;
  size_t nStart;
  uint8_t *pEnd;
  size_t nEnd;
  int nLevel;         /* 1..OV_MAX_LEVEL */
  OvRange *apNext[1]; /* [nLevel] successors */
};

struct Overlay {
  OvNode *pHead;  /* sentinel with OV_MAX_LEVEL links */
  int nLevel;     /* levels in use */
  uint64_t iRand; /* xorshift state for node heights */
  int nEntry;     /* nodes, NONE included */
  size_t nBytes;  /* approximate bytes held */
  uint64_t iGen;  /* bumped by ov_clear */
  uint64_t iMod;  /* bumped by every change */
  int nRange;
  OvRange *pRangeHead; /* sentinel of the ranges' skiplist with
                       ** OV_MAX_LEVEL links; the ranges are sorted,
                       ** disjoint and not adjacent */
  OvRange *apRangeTail[OV_MAX_LEVEL]; /* the last range of each level
                                      ** (pRangeHead: none), where a range
                                      ** after every one is linked */
};

static int keycmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
  size_t n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, n) : 0;
  if (c) return c;
  return na < nb ? -1 : (na > nb);
}

int ov_new(Overlay **pp) {
  Overlay *p = calloc(1, sizeof(*p));
  int i;
  if (p == NULL) return WCS_NOMEM;
  p->pHead = calloc(1, sizeof(OvNode) + OV_MAX_LEVEL * sizeof(OvNode *));
  if (p->pHead == NULL) {
    free(p);
    return WCS_NOMEM;
  }
  p->pRangeHead = calloc(1, sizeof(OvRange) + OV_MAX_LEVEL * sizeof(OvRange *));
  if (p->pRangeHead == NULL) {
    free(p->pHead);
    free(p);
    return WCS_NOMEM;
  }
  p->pHead->nLevel = OV_MAX_LEVEL;
  p->pRangeHead->nLevel = OV_MAX_LEVEL;
  for (i = 0; i < OV_MAX_LEVEL; i++)
    p->apRangeTail[i] = p->pRangeHead;
  p->nLevel = 1;
  p->iRand = 0x9E3779B97F4A7C15ull;
  *pp = p;
  return WCS_OK;
}

void ov_clear(Overlay *p) {
  OvNode *n, *pNext;
  OvRange *r, *rNext;
  int i;
  for (n = p->pHead->apNext[0]; n; n = pNext) {
    pNext = n->apNext[0];
    free(n->pVal);
    free(n);
  }
  for (r = p->pRangeHead->apNext[0]; r; r = rNext) {
    rNext = r->apNext[0];
    free(r);
  }
  for (i = 0; i < OV_MAX_LEVEL; i++) {
    p->pHead->apNext[i] = NULL;
    p->pRangeHead->apNext[i] = NULL;
    p->apRangeTail[i] = p->pRangeHead;
  }
  p->nRange = 0;
  p->nLevel = 1;
  p->nEntry = 0;
  p->nBytes = 0;
  p->iGen++;
  p->iMod++;
}

void ov_free(Overlay *p) {
  if (p == NULL) return;
  ov_clear(p);
  free(p->pRangeHead);
  free(p->pHead);
  free(p);
}

uint64_t ov_generation(const Overlay *p) {
  return p->iGen + p->iMod;
}
int ov_count(const Overlay *p) {
  return p->nEntry + p->nRange;
}
size_t ov_bytes(const Overlay *p) {
  return p->nBytes;
}

/* Fill apPrev[] with, per level, the last node whose key is < k. */
static void find_prev(const Overlay *p, const uint8_t *k, size_t nk,
                      OvNode **apPrev) {
  OvNode *x = p->pHead;
  int i;
  for (i = OV_MAX_LEVEL - 1; i >= 0; i--) {
    while (x->apNext[i] &&
           keycmp(x->apNext[i]->pKey, x->apNext[i]->nKey, k, nk) < 0) {
      x = x->apNext[i];
    }
    apPrev[i] = x;
  }
}

/* The first node with key >= k (NULL: none). */
static OvNode *seek_ge(const Overlay *p, const uint8_t *k, size_t nk) {
  OvNode *apPrev[OV_MAX_LEVEL];
  find_prev(p, k, nk, apPrev);
  return apPrev[0]->apNext[0];
}

/* The last node with key < k (k NULL: the last node), or NULL. */
static OvNode *seek_lt(const Overlay *p, const uint8_t *k, size_t nk) {
  OvNode *x = p->pHead;
  int i;
  for (i = OV_MAX_LEVEL - 1; i >= 0; i--) {
    while (x->apNext[i] &&
           (k == NULL ||
            keycmp(x->apNext[i]->pKey, x->apNext[i]->nKey, k, nk) < 0)) {
      x = x->apNext[i];
    }
  }
  return x == p->pHead ? NULL : x;
}

/* The height of a new node of either skiplist: h with chance 4^-(h-1). */
static int random_level(Overlay *p) {
  int nLevel = 1;
  while (nLevel < OV_MAX_LEVEL) {
    p->iRand ^= p->iRand >> 12;
    p->iRand ^= p->iRand << 25;
    p->iRand ^= p->iRand >> 27;
    if (((p->iRand * 0x2545F4914F6CDD1Dull) >> 62) != 0) break; /* 1/4 */
    nLevel++;
  }
  return nLevel;
}

/* Find or insert the node for key k. */
static int node_get(Overlay *p, const uint8_t *k, size_t nk, OvNode **ppNode) {
  OvNode *apPrev[OV_MAX_LEVEL];
  OvNode *n;
  int nLevel, i;
  find_prev(p, k, nk, apPrev);
  n = apPrev[0]->apNext[0];
  if (n && keycmp(n->pKey, n->nKey, k, nk) == 0) {
    *ppNode = n;
    return WCS_OK;
  }
  nLevel = random_level(p);
  n = calloc(1, sizeof(OvNode) + (size_t)nLevel * sizeof(OvNode *) + nk);
  if (n == NULL) return WCS_NOMEM;
  n->nLevel = nLevel;
  n->pKey = (uint8_t *)&n->apNext[nLevel];
  memcpy(n->pKey, k, nk);
  n->nKey = nk;
  n->eKind = OV_NONE;
  if (nLevel > p->nLevel) p->nLevel = nLevel;
  for (i = 0; i < nLevel; i++) {
    n->apNext[i] = apPrev[i]->apNext[i];
    apPrev[i]->apNext[i] = n;
  }
  n->pPrev = apPrev[0] == p->pHead ? NULL : apPrev[0];
  if (n->apNext[0]) n->apNext[0]->pPrev = n;
  p->nEntry++;
  p->nBytes += nk + sizeof(OvNode);
  *ppNode = n;
  return WCS_OK;
}

static int node_set(Overlay *p, OvNode *n, int eKind, int eAgg,
                    const void *pVal, size_t nVal) {
  uint8_t *a = NULL;
  p->iMod++;
  if (nVal) {
    a = malloc(nVal);
    if (a == NULL) return WCS_NOMEM;
    memcpy(a, pVal, nVal);
  }
  p->nBytes -= n->nVal;
  free(n->pVal);
  n->pVal = a;
  n->nVal = nVal;
  n->eKind = eKind;
  n->eAgg = eAgg;
  p->nBytes += nVal;
  return WCS_OK;
}

int ov_put(Overlay *p, const void *pKey, size_t nKey, const void *pVal,
           size_t nVal) {
  OvNode *n;
  int rc = node_get(p, pKey, nKey, &n);
  if (rc == WCS_OK) rc = node_set(p, n, OV_PUT, 0, pVal, nVal);
  return rc;
}

int ov_delete(Overlay *p, const void *pKey, size_t nKey) {
  OvNode *n;
  int rc = node_get(p, pKey, nKey, &n);
  if (rc == WCS_OK) rc = node_set(p, n, OV_DEL, 0, NULL, 0);
  return rc;
}

int ov_merge(Overlay *p, const void *pKey, size_t nKey, int eAgg,
             const void *pOp, size_t nOp) {
  OvNode *n;
  wcs_buf b = {0};
  int rc = node_get(p, pKey, nKey, &n);
  if (rc != WCS_OK) return rc;
  if (n->eKind == OV_PUT) {
    rc = eng_agg_fold(eAgg, n->pVal, n->nVal, pOp, nOp, &b);
    if (rc == WCS_OK) rc = node_set(p, n, OV_PUT, 0, b.a, b.n);
  } else if (n->eKind == OV_DEL || n->eKind == OV_NONE) {
    /* The base is known to be absent if the node was deleted or wiped by
    ** a range (a NONE node always lies under one); a fresh node (also
    ** NONE) is absent only if a range covers it. */
    if (n->eKind == OV_DEL || ov_range_covers(p, pKey, nKey)) {
      rc = eng_agg_fold(eAgg, NULL, 0, pOp, nOp, &b);
      if (rc == WCS_OK) rc = node_set(p, n, OV_PUT, 0, b.a, b.n);
    } else {
      rc = node_set(p, n, OV_MERGE, eAgg, pOp, nOp);
    }
  } else {
    rc = eng_agg_fold(eAgg, n->pVal, n->nVal, pOp, nOp, &b);
    if (rc == WCS_OK) rc = node_set(p, n, OV_MERGE, eAgg, b.a, b.n);
  }
  wcs_buf_free(&b);
  return rc;
}

/* Fill apPrev[] with, per level, the last range whose end is < k (the
** sentinel if none); apPrev[0]->apNext[0] is then the first range that
** ends at or after k. */
static void range_prev(const Overlay *p, const uint8_t *k, size_t nk,
                       OvRange **apPrev) {
  OvRange *x = p->pRangeHead;
  int i;
  for (i = OV_MAX_LEVEL - 1; i >= 0; i--) {
    while (x->apNext[i] &&
           keycmp(x->apNext[i]->pEnd, x->apNext[i]->nEnd, k, nk) < 0) {
      x = x->apNext[i];
    }
    apPrev[i] = x;
  }
}

int ov_range_covers(const Overlay *p, const void *pKey, size_t nKey) {
  OvRange *apPrev[OV_MAX_LEVEL], *r;
  if (p->nRange == 0) return 0;
  range_prev(p, pKey, nKey, apPrev);
  /* r ends at or after the key; covered iff start <= key < end (one
  ** range at most ends at the key: they are disjoint) */
  r = apPrev[0]->apNext[0];
  if (r && keycmp(r->pEnd, r->nEnd, pKey, nKey) == 0) r = r->apNext[0];
  return r && keycmp(r->pStart, r->nStart, pKey, nKey) <= 0;
}

/* Link a new range [s, e) after apPrev[] (per level, the last range
** before it). */
static int range_link(Overlay *p, OvRange **apPrev, const uint8_t *s, size_t ns,
                      const uint8_t *e, size_t ne) {
  int nLevel = random_level(p), i;
  OvRange *r =
      malloc(sizeof(OvRange) + (size_t)nLevel * sizeof(OvRange *) + ns + ne);
  if (r == NULL) return WCS_NOMEM;
  r->nLevel = nLevel;
  r->pStart = (uint8_t *)&r->apNext[nLevel];
  r->nStart = ns;
  r->pEnd = r->pStart + ns;
  r->nEnd = ne;
  if (ns) memcpy(r->pStart, s, ns);
  if (ne) memcpy(r->pEnd, e, ne);
  for (i = 0; i < nLevel; i++) {
    r->apNext[i] = apPrev[i]->apNext[i];
    apPrev[i]->apNext[i] = r;
    if (r->apNext[i] == NULL) p->apRangeTail[i] = r;
  }
  p->nRange++;
  p->nBytes += ns + ne + sizeof(OvRange);
  return WCS_OK;
}

int ov_clone(const Overlay *p, Overlay **pp) {
  Overlay *q;
  const OvNode *n;
  int rc, i;
  *pp = NULL;
  rc = ov_new(&q);
  if (rc != WCS_OK) return rc;
  {
    /* the ranges in key order, each linked after the one before */
    OvRange *apLast[OV_MAX_LEVEL], *r;
    for (i = 0; i < OV_MAX_LEVEL; i++)
      apLast[i] = q->pRangeHead;
    for (r = p->pRangeHead->apNext[0]; rc == WCS_OK && r; r = r->apNext[0]) {
      rc = range_link(q, apLast, r->pStart, r->nStart, r->pEnd, r->nEnd);
      if (rc == WCS_OK) {
        OvRange *x = apLast[0]->apNext[0];
        for (i = 0; i < x->nLevel; i++)
          apLast[i] = x;
      }
    }
  }
  /* the nodes in key order (each found and linked as ov_put would): a
  ** NONE node only stands under one of the ranges, which hide the store's
  ** keys alone */
  for (n = p->pHead->apNext[0]; rc == WCS_OK && n; n = n->apNext[0]) {
    OvNode *m;
    if (n->eKind == OV_NONE) continue;
    rc = node_get(q, n->pKey, n->nKey, &m);
    if (rc == WCS_OK) rc = node_set(q, m, n->eKind, n->eAgg, n->pVal, n->nVal);
  }
  if (rc != WCS_OK) {
    ov_free(q);
    return rc;
  }
  *pp = q;
  return WCS_OK;
}

int ov_delete_range(Overlay *p, const void *pStart, size_t nStart,
                    const void *pEnd, size_t nEnd) {
  OvRange *apPrev[OV_MAX_LEVEL], *r, *rNext, *pFirst;
  OvNode *n;
  const uint8_t *s = pStart, *e = pEnd;
  size_t ns = nStart, ne = nEnd;
  uint8_t *zMerged = NULL;
  int i, rc;
  if (keycmp(s, ns, e, ne) >= 0) return WCS_OK;
  p->iMod++;
  /* Wipe the point entries in [s, e). */
  for (n = seek_ge(p, s, ns); n && keycmp(n->pKey, n->nKey, e, ne) < 0;
       n = n->apNext[0]) {
    p->nBytes -= n->nVal;
    free(n->pVal);
    n->pVal = NULL;
    n->nVal = 0;
    n->eKind = OV_NONE;
  }
  /* The ranges that overlap or touch [s, e): from the first that ends at
  ** or after s, while they start at or before e. They are merged into
  ** one, whose bounds are copied before the ranges are freed. */
  if (p->nRange > 0 &&
      keycmp(p->apRangeTail[0]->pEnd, p->apRangeTail[0]->nEnd, s, ns) < 0) {
    /* after every range (rows deleted in key order): no search */
    memcpy(apPrev, p->apRangeTail, sizeof(apPrev));
  } else {
    range_prev(p, s, ns, apPrev);
  }
  pFirst = apPrev[0]->apNext[0];
  r = pFirst;
  while (r && keycmp(r->pStart, r->nStart, e, ne) <= 0) {
    if (r == pFirst && keycmp(r->pStart, r->nStart, s, ns) < 0) {
      s = r->pStart;
      ns = r->nStart;
    }
    if (keycmp(r->pEnd, r->nEnd, e, ne) > 0) {
      e = r->pEnd;
      ne = r->nEnd;
    }
    r = r->apNext[0];
  }
  if (r != pFirst) {
    zMerged = malloc(ns + ne + 1);
    if (zMerged == NULL) return WCS_NOMEM;
    if (ns) memcpy(zMerged, s, ns);
    if (ne) memcpy(zMerged + ns, e, ne);
    s = zMerged;
    e = zMerged + ns;
    /* unlink them: each is the next of apPrev[i] at each of its levels */
    for (r = pFirst; r && keycmp(r->pStart, r->nStart, e, ne) <= 0; r = rNext) {
      rNext = r->apNext[0];
      for (i = 0; i < r->nLevel; i++) {
        apPrev[i]->apNext[i] = r->apNext[i];
        if (r->apNext[i] == NULL) p->apRangeTail[i] = apPrev[i];
      }
      p->nRange--;
      p->nBytes -= r->nStart + r->nEnd + sizeof(OvRange);
      free(r);
    }
  }
  rc = range_link(p, apPrev, s, ns, e, ne);
  free(zMerged);
  return rc;
}

int ov_range_count(const Overlay *p) {
  return p->nRange;
}
OvRange *ov_range_first(const Overlay *p) {
  return p->pRangeHead->apNext[0];
}
OvRange *ov_range_next(const OvRange *r) {
  return r->apNext[0];
}
void ov_range_bounds(const OvRange *r, const uint8_t **ppS, size_t *pnS,
                     const uint8_t **ppE, size_t *pnE) {
  *ppS = r->pStart;
  *pnS = r->nStart;
  *ppE = r->pEnd;
  *pnE = r->nEnd;
}
OvNode *ov_first(const Overlay *p) {
  return p->pHead->apNext[0];
}
OvNode *ov_next(const OvNode *n) {
  return n->apNext[0];
}
int ov_node_kind(const OvNode *n) {
  return n->eKind;
}
int ov_node_agg(const OvNode *n) {
  return n->eAgg;
}
const uint8_t *ov_node_key(const OvNode *n, size_t *pn) {
  *pn = n->nKey;
  return n->pKey;
}
const uint8_t *ov_node_val(const OvNode *n, size_t *pn) {
  *pn = n->nVal;
  return n->pVal;
}

/* ==================================================================
** The view iterator
** ================================================================== */

struct EngView {
  EngViewPos pos;  /* current entry (first: see engine.h) */
  wcs_iter *pIter; /* the store, within the bounds */
  Overlay *pOv;    /* may be NULL */
  uint64_t iGen;   /* overlay change count when last settled */
  OvNode *pNode;   /* overlay candidate (in bounds) or NULL */
  int bReverse;
  wcs_buf lower, upper, prefix; /* bounds (n == 0: none) */
  int bUpper;                   /* an upper bound is set */
  wcs_buf merged;               /* folded MERGE value */
  wcs_buf keyCopy;              /* current key when it is an overlay node's
                                ** (pOv set, eCur & 2): a rollback may free the
                                ** node, and view_sync must settle at the key */
  int bKeyCopy;                 /* keyCopy holds the current key; else pKey is
                                ** the store iterator's, valid until it moves */
  wcs_buf seekTmp;              /* scratch for view_sync */
  int rc;                       /* sticky error */
  wcs_db *db;                   /* the store (its error messages) */
};

/* A move of the view failed with rc: make the store's message (the file
** and offset of a damaged block, say) the engine's, for the caller to
** report. */
static int view_fail(EngView *v, int rc) {
  if (rc == WCS_NOMEM) return eng_err(rc, "out of memory");
  return eng_err_db(v->db, rc, "reading the store");
}

static int in_bounds(const EngView *v, const uint8_t *k, size_t nk) {
  if (v->lower.n && keycmp(k, nk, v->lower.a, v->lower.n) < 0) return 0;
  if (v->bUpper && keycmp(k, nk, v->upper.a, v->upper.n) >= 0) return 0;
  if (v->prefix.n &&
      (nk < v->prefix.n || memcmp(k, v->prefix.a, v->prefix.n) != 0)) {
    return 0;
  }
  return 1;
}

/* Drop an overlay candidate that is out of bounds. */
static void node_check(EngView *v) {
  if (v->pNode && !in_bounds(v, v->pNode->pKey, v->pNode->nKey)) {
    /* Out of bounds in the walking direction ends the overlay walk, but a
    ** node below the lower bound (forward) may precede in-bound ones. */
    if (!v->bReverse) {
      if (v->lower.n &&
          keycmp(v->pNode->pKey, v->pNode->nKey, v->lower.a, v->lower.n) < 0) {
        v->pNode = seek_ge(v->pOv, v->lower.a, v->lower.n);
        if (v->pNode && in_bounds(v, v->pNode->pKey, v->pNode->nKey)) return;
      }
      v->pNode = NULL;
    } else {
      if (v->bUpper &&
          keycmp(v->pNode->pKey, v->pNode->nKey, v->upper.a, v->upper.n) >= 0) {
        v->pNode = seek_lt(v->pOv, v->upper.a, v->upper.n);
        if (v->pNode && in_bounds(v, v->pNode->pKey, v->pNode->nKey)) return;
      }
      v->pNode = NULL;
    }
  }
}

static void node_step(EngView *v) {
  v->pNode = v->bReverse ? v->pNode->pPrev : v->pNode->apNext[0];
  node_check(v);
}

static int store_step(EngView *v) {
  int rc = v->bReverse ? wcs_iter_prev(v->pIter) : wcs_iter_next(v->pIter);
  return rc;
}

/* With an overlay, remember the current key (see view_sync). A store key
** stays valid while the store iterator does not move, which the overlay
** cannot make it do, so only an overlay node's key is copied. */
static int keep_key(EngView *v) {
  if (v->pOv == NULL) return WCS_OK;
  v->iGen = ov_generation(v->pOv);
  v->bKeyCopy = (v->pos.eCur & 2) != 0;
  if (!v->bKeyCopy) return WCS_OK;
  v->keyCopy.n = 0;
  return wcs_buf_append(&v->keyCopy, v->pos.pKey, v->pos.nKey);
}

/* Position on the nearest visible entry from the current sources. */
static int settle(EngView *v) {
  v->pos.nShared = 0;
  for (;;) {
    const uint8_t *sk = NULL;
    size_t nsk = 0;
    int c;
    if (wcs_iter_valid(v->pIter))
      sk = wcs_iter_key(v->pIter, &nsk);
    else if (wcs_iter_status(v->pIter))
      return wcs_iter_status(v->pIter);
    if (sk == NULL && v->pNode == NULL) {
      v->pos.eCur = 0;
      return WCS_OK;
    }
    if (sk == NULL) {
      c = 1;
    } else if (v->pNode == NULL) {
      c = -1;
    } else {
      c = keycmp(sk, nsk, v->pNode->pKey, v->pNode->nKey);
      if (v->bReverse) c = -c;
    }
    if (c < 0) {
      /* the store key comes first */
      if (v->pOv && ov_range_covers(v->pOv, sk, nsk)) {
        int rc = store_step(v);
        if (rc) return rc;
        continue;
      }
      v->pos.eCur = 1;
      v->pos.pKey = sk;
      v->pos.nKey = nsk;
      v->pos.pVal = wcs_iter_value(v->pIter, &v->pos.nVal);
      return keep_key(v);
    } else {
      OvNode *n = v->pNode;
      int bBoth = (c == 0);
      const uint8_t *pBase = NULL;
      size_t nBase = 0;
      if (n->eKind == OV_DEL || n->eKind == OV_NONE) {
        if (bBoth) {
          int rc = store_step(v);
          if (rc) return rc;
        }
        node_step(v);
        continue;
      }
      v->pos.eCur = bBoth ? 3 : 2;
      v->pos.pKey = n->pKey;
      v->pos.nKey = n->nKey;
      if (n->eKind == OV_PUT) {
        v->pos.pVal = n->pVal;
        v->pos.nVal = n->nVal;
      } else {
        int rc;
        if (bBoth) pBase = wcs_iter_value(v->pIter, &nBase);
        rc = eng_agg_fold(n->eAgg, pBase, nBase, n->pVal, n->nVal, &v->merged);
        if (rc) return rc;
        v->pos.pVal = v->merged.a;
        v->pos.nVal = v->merged.n;
      }
      return keep_key(v);
    }
  }
}

/* (Re)aim v's store iterator at [lower, upper) and prefix, at pSnap: an
** existing iterator is retargeted (it keeps the files and blocks it still
** needs), else one is made; v's buffers are kept. On failure v has no
** iterator. */
static int view_make(EngView *v, wcs_db *db, const wcs_snapshot *pSnap,
                     Overlay *pOv, const void *pLower, size_t nLower,
                     const void *pUpper, size_t nUpper, const void *pPrefix,
                     size_t nPrefix, int bReverse) {
  wcs_iter_options o;
  int rc = WCS_OK;
  v->db = db;
  v->lower.n = v->upper.n = v->prefix.n = 0;
  v->bUpper = 0;
  view_retarget(v, pOv, bReverse);
  if (pLower) rc = wcs_buf_append(&v->lower, pLower, nLower);
  if (rc == WCS_OK && pUpper) {
    rc = wcs_buf_append(&v->upper, pUpper, nUpper);
    v->bUpper = 1;
  }
  if (rc == WCS_OK && pPrefix)
    rc = wcs_buf_append(&v->prefix, pPrefix, nPrefix);
  memset(&o, 0, sizeof(o));
  o.pSnap = pSnap;
  o.pLower = v->lower.n ? v->lower.a : NULL;
  o.nLower = v->lower.n;
  o.pUpper = v->bUpper ? v->upper.a : NULL;
  o.nUpper = v->upper.n;
  o.pPrefix = v->prefix.n ? v->prefix.a : NULL;
  o.nPrefix = v->prefix.n;
  if (rc == WCS_OK && v->pIter) {
    rc = wcs_iter_retarget(v->pIter, &o);
  } else if (rc == WCS_OK) {
    rc = wcs_iter_new(db, &o, &v->pIter);
  }
  if (rc != WCS_OK) {
    wcs_iter_free(v->pIter);
    v->pIter = NULL;
  }
  return rc;
}

int view_new(EngView **pp, wcs_db *db, const wcs_snapshot *pSnap, Overlay *pOv,
             const void *pLower, size_t nLower, const void *pUpper,
             size_t nUpper, const void *pPrefix, size_t nPrefix, int bReverse) {
  EngView *v = calloc(1, sizeof(*v));
  int rc;
  *pp = NULL;
  if (v == NULL) return WCS_NOMEM;
  rc = view_make(v, db, pSnap, pOv, pLower, nLower, pUpper, nUpper, pPrefix,
                 nPrefix, bReverse);
  if (rc != WCS_OK) {
    view_free(v);
    return rc;
  }
  *pp = v;
  return WCS_OK;
}

int view_reopen(EngView *v, wcs_db *db, const wcs_snapshot *pSnap, Overlay *pOv,
                const void *pLower, size_t nLower, const void *pUpper,
                size_t nUpper, const void *pPrefix, size_t nPrefix,
                int bReverse) {
  int rc = view_make(v, db, pSnap, pOv, pLower, nLower, pUpper, nUpper, pPrefix,
                     nPrefix, bReverse);
  if (rc != WCS_OK) view_release(v);
  return rc;
}

void view_retarget(EngView *v, Overlay *pOv, int bReverse) {
  v->pOv = pOv;
  v->bReverse = bReverse;
  v->iGen = pOv ? ov_generation(pOv) : 0;
  v->pNode = NULL;
  v->pos.eCur = 0;
  v->pos.nShared = 0;
  v->pos.pRun = NULL;
  v->bKeyCopy = 0;
  v->rc = WCS_OK;
}

void view_detach(EngView *v, Overlay *pOv) {
  v->pOv = pOv;
  v->pNode = NULL;
  /* (a generation the copy never has: the next view_sync settles at the
  ** current key in it; the copy holds what the view read) */
  v->iGen = ov_generation(pOv) - 1;
}

Overlay *view_overlay(const EngView *v) {
  return v->pOv;
}

int view_refresh(EngView *v) {
  return v->pIter ? wcs_iter_refresh(v->pIter) : WCS_MISUSE;
}

void view_release(EngView *v) {
  wcs_iter_free(v->pIter);
  v->pIter = NULL;
  v->pos.eCur = 0;
  v->pos.pRun = NULL;
  v->pNode = NULL;
  v->pOv = NULL;
}

int view_current(const EngView *v) {
  return v->pIter != NULL && wcs_iter_current(v->pIter);
}

int view_live(const EngView *v) {
  return v->pIter != NULL;
}

int view_sources(const EngView *v) {
  return v->pIter ? wcs_iter_sources(v->pIter) : 0;
}

int view_prefix_absent(const EngView *v, const void *pPre, size_t nPre) {
  if (v->pOv || v->pIter == NULL) return 0;
  return wcs_iter_prefix_absent(v->pIter, pPre, nPre);
}

int view_within(const EngView *v, const void *pLower, size_t nLower,
                const void *pUpper, size_t nUpper, const void *pPrefix,
                size_t nPrefix) {
  if (v->pIter == NULL) return 0;
  if (v->prefix.n != nPrefix ||
      (nPrefix && memcmp(v->prefix.a, pPrefix, nPrefix) != 0)) {
    return 0;
  }
  if (v->lower.n &&
      (pLower == NULL || keycmp(v->lower.a, v->lower.n, pLower, nLower) > 0)) {
    return 0;
  }
  if (v->bUpper &&
      (pUpper == NULL || keycmp(pUpper, nUpper, v->upper.a, v->upper.n) > 0)) {
    return 0;
  }
  return 1;
}

void view_free(EngView *v) {
  if (v == NULL) return;
  wcs_iter_free(v->pIter);
  wcs_buf_free(&v->lower);
  wcs_buf_free(&v->upper);
  wcs_buf_free(&v->prefix);
  wcs_buf_free(&v->merged);
  wcs_buf_free(&v->keyCopy);
  wcs_buf_free(&v->seekTmp);
  free(v);
}

/* Position the overlay candidate for a seek to k (see view_seek). */
static void node_seek(EngView *v, const uint8_t *k, size_t nk) {
  if (v->pOv == NULL) {
    v->pNode = NULL;
    return;
  }
  v->iGen = ov_generation(v->pOv);
  if (!v->bReverse) {
    if (k == NULL) k = v->lower.a, nk = v->lower.n;
    v->pNode = k ? seek_ge(v->pOv, k, nk) : ov_first(v->pOv);
  } else {
    v->pNode = seek_lt(v->pOv, k, nk);
  }
  node_check(v);
}

int view_seek(EngView *v, const void *pKey, size_t nKey) {
  int rc;
  v->pos.nShared = 0;
  v->pos.pRun = v->pOv == NULL && !v->bReverse ? v->pIter : NULL;
  if (!v->bReverse) {
    if (pKey)
      rc = wcs_iter_seek(v->pIter, pKey, nKey);
    else
      rc = wcs_iter_first(v->pIter);
  } else if (pKey == NULL) {
    rc = wcs_iter_last(v->pIter);
  } else {
    rc = wcs_iter_seek_for_prev(v->pIter, pKey, nKey);
    if (rc == WCS_OK && wcs_iter_valid(v->pIter)) {
      size_t n;
      const uint8_t *k = wcs_iter_key(v->pIter, &n);
      if (keycmp(k, n, pKey, nKey) >= 0) rc = wcs_iter_prev(v->pIter);
    }
  }
  if (rc == WCS_OK) {
    node_seek(v, pKey, nKey);
    rc = settle(v);
  }
  if (rc) {
    v->pos.eCur = 0;
    return view_fail(v, rc);
  }
  return WCS_OK;
}

int view_sync(EngView *v) {
  int rc;
  if (v->pOv == NULL || v->pos.eCur == 0 || v->iGen == ov_generation(v->pOv)) {
    return WCS_OK;
  }
  /* The overlay changed since we settled: the node we stand on may be
  ** gone or changed. Settle again at the same key, inclusive. */
  v->seekTmp.n = 0;
  rc = v->bKeyCopy ? wcs_buf_append(&v->seekTmp, v->keyCopy.a, v->keyCopy.n)
                   : wcs_buf_append(&v->seekTmp, v->pos.pKey, v->pos.nKey);
  if (rc == WCS_OK && v->bReverse) rc = wcs_buf_append(&v->seekTmp, "", 1);
  if (rc == WCS_OK) rc = view_seek(v, v->seekTmp.a, v->seekTmp.n);
  return rc;
}

int view_run_end(EngView *v) {
  v->pos.nShared = 0;
  v->pos.eCur = 0;
  return view_fail(v, wcs_iter_status(v->pIter));
}

int view_step(EngView *v) {
  int rc, eCur = v->pos.eCur;
  v->pos.nShared = 0;
  if (v->pOv == NULL) {
    /* no overlay: the store iterator's entry is the view's, as is */
    const void *pK, *pV;
    if (eCur == 0) return WCS_OK;
    if (v->bReverse) {
      /* a step within the run of a scan of settled data (iterrun.h);
      ** forward, view_next() took it already, and wcs_iter_next() would
      ** take it first anyway */
      int r = wcs_iter_run_prev(v->pIter, &pK, &v->pos.nKey, &pV, &v->pos.nVal);
      if (r > 0) {
        v->pos.pKey = pK;
        v->pos.pVal = pV;
        return WCS_OK;
      }
      if (r < 0) return view_run_end(v);
    }
    rc = store_step(v);
    if (rc == WCS_OK &&
        wcs_iter_entry(v->pIter, &pK, &v->pos.nKey, &pV, &v->pos.nVal)) {
      v->pos.pKey = pK;
      v->pos.pVal = pV;
      return WCS_OK;
    }
    if (rc == WCS_OK) rc = wcs_iter_status(v->pIter);
    v->pos.eCur = 0;
    return rc ? view_fail(v, rc) : WCS_OK;
  }
  rc = view_sync(v);
  eCur = v->pos.eCur;
  if (rc || eCur == 0) return rc;
  if (eCur & 1) rc = store_step(v);
  if (rc == WCS_OK && (eCur & 2)) node_step(v);
  if (rc == WCS_OK) rc = settle(v);
  if (rc) {
    v->pos.eCur = 0;
    return view_fail(v, rc);
  }
  return WCS_OK;
}
