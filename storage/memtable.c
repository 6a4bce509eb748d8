/*
** memtable.c — the write buffer: two skiplists (point entries and range
** tombstones) over one arena. See memtable.h for the contract.
**
** How it works. A skiplist node is one arena allocation:
**
**     MtNode header | next pointers [height] | internal key | value
**
** Nodes are ordered by internal key (ikey.h): user key ascending, then
** trailer (seq << 8 | type) descending, so a lookup for user key K at
** snapshot S seeks to (K, S << 8 | 0xff) and lands on the newest visible
** version. Heights are drawn with p = 1/4 up to MT_MAX_HEIGHT (12), which
** keeps searches O(log n) for tens of millions of entries. Each list
** remembers where its last insert went (the node and its predecessors at
** every level), and a key greater than that one is searched for from
** there (fingerFind): a batch in key order costs a comparison or two per
** entry when it appends, and O(log gap) when it lands among older keys.
**
** Single writer, lock-free readers: the writer fills a node's own next
** pointers first and only then links it into each level with a release
** store; readers follow pointers with acquire loads, so a reader either
** misses a node entirely or sees it complete. Nothing is freed until the
** last reference goes.
**
** A range tombstone [start, end) at seq is a node keyed by the internal
** key (start, seq) whose value is one flag byte (1 = end unbounded)
** followed by the end key. Tombstones live in one of two lists. "dels"
** holds tombstones that are pairwise identical (same start and end) or
** disjoint, which is what row deletes produce; for those, the tombstones
** covering a key are the group with the largest start <= key, found in
** O(log n). A tombstone that would break that rule (it overlaps another
** without being identical to it, e.g. a prefix delete over deleted rows)
** goes to "over", which lookups scan in full; it stays short in practice.
** A new tombstone is checked against its neighbour groups only: in a set
** of disjoint ranges sorted by start, the ranges are sorted by end too, so
** the group just before and the group just after decide.
**
** The arena hands out 8-byte aligned pieces of blocks of nBudget/16 bytes
** (clamped to 4 KiB..1 MiB); a piece larger than a quarter block gets a
** block of its own, so waste stays under 25%.
*/
#include "storage/memtable.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "storage/ikey.h"

#define MT_MAX_HEIGHT             12
#define WCS_IKEY_SENTINEL_TRAILER (~(uint64_t)0)

typedef struct MtNode MtNode;
struct MtNode {
  uint8_t *pKey;             /* internal key, then the value */
  uint32_t nKey;             /* internal key bytes, >= 8 */
  uint32_t nVal;             /* value bytes */
  _Atomic(MtNode *) aNext[]; /* height entries */
};

typedef struct ArenaBlock ArenaBlock;
struct ArenaBlock {
  ArenaBlock *pNext; /* older block */
};

typedef struct SkipList {
  MtNode *pHead;       /* sentinel, MT_MAX_HEIGHT tall, no key */
  _Atomic int nHeight; /* levels in use, 1..MT_MAX_HEIGHT */
  /* writer only: the last node inserted and its splice, where
  ** aSplice[i] is the node it follows at level i (itself below its own
  ** height); pHead throughout while the list is empty */
  MtNode *pLast;
  MtNode *aSplice[MT_MAX_HEIGHT];
} SkipList;

struct wcs_memtable {
  _Atomic int nRef; /* references; the last frees everything */
  uint64_t iLog;    /* WAL file number with these records */
  /* arena (writer only, except nBytes) */
  uint8_t *pCur;             /* next free byte in the current block */
  size_t nLeft;              /* bytes left in the current block */
  size_t nBlock;             /* standard block size */
  ArenaBlock *pBlocks;       /* every block, newest first */
  _Atomic size_t nBytes;     /* bytes allocated for blocks */
  uint64_t rnd;              /* height PRNG state (writer only) */
  SkipList points;           /* puts and deletes */
  SkipList dels;             /* range tombstones, pairwise identical or
                             ** disjoint */
  SkipList over;             /* range tombstones overlapping others */
  _Atomic uint64_t nEntries; /* nodes in points */
  _Atomic uint64_t nDels;    /* nodes in dels + over */
  _Atomic uint64_t nOver;    /* nodes in over */
  _Atomic uint64_t minSeq;   /* smallest seq added, 0 while empty */
  _Atomic uint64_t maxSeq;   /* largest seq added */
};

/* ---- arena */

static void *arenaBlock(wcs_memtable *m, size_t n) {
  ArenaBlock *b = malloc(sizeof(ArenaBlock) + n);
  if (b == NULL) return NULL;
  b->pNext = m->pBlocks;
  m->pBlocks = b;
  atomic_fetch_add_explicit(&m->nBytes, sizeof(ArenaBlock) + n,
                            memory_order_relaxed);
  return (uint8_t *)(b + 1);
}

static void *arenaAlloc(wcs_memtable *m, size_t n) {
  void *p;
  n = (n + 7) & ~(size_t)7;
  if (n > m->nLeft) {
    if (n > m->nBlock / 4) return arenaBlock(m, n);
    p = arenaBlock(m, m->nBlock);
    if (p == NULL) return NULL;
    m->pCur = p;
    m->nLeft = m->nBlock;
  }
  p = m->pCur;
  m->pCur += n;
  m->nLeft -= n;
  return p;
}

/* ---- skiplist */

/* A search target: user key + trailer, compared as an internal key. */
typedef struct Target {
  const uint8_t *pUKey;
  size_t nUKey;
  uint64_t trailer;
} Target;

static int nodeCmp(const MtNode *p, const Target *t) {
  size_t nU = p->nKey - WCS_IKEY_TRAILER;
  int c = wcs_ukey_cmp(p->pKey, nU, t->pUKey, t->nUKey);
  if (c == 0) {
    uint64_t tr = wcs_get64(p->pKey + nU);
    c = tr > t->trailer ? -1 : (tr < t->trailer ? 1 : 0);
  }
  return c;
}

static MtNode *nextAt(const MtNode *p, int i) {
  return atomic_load_explicit(&((MtNode *)p)->aNext[i], memory_order_acquire);
}

/* First node >= t; fills aPrev[i] with the last node < t at each level. */
static MtNode *findGE(const SkipList *s, const Target *t, MtNode **aPrev) {
  MtNode *x = s->pHead;
  int i =
      atomic_load_explicit(&((SkipList *)s)->nHeight, memory_order_relaxed) - 1;
  for (;;) {
    MtNode *n = nextAt(x, i);
    if (n && nodeCmp(n, t) < 0) {
      x = n;
    } else {
      if (aPrev) aPrev[i] = x;
      if (i == 0) return n;
      i--;
    }
  }
}

/* Last node < t, or the head. */
static MtNode *findLT(const SkipList *s, const Target *t) {
  MtNode *x = s->pHead;
  int i =
      atomic_load_explicit(&((SkipList *)s)->nHeight, memory_order_relaxed) - 1;
  for (;;) {
    MtNode *n = nextAt(x, i);
    if (n && nodeCmp(n, t) < 0) {
      x = n;
    } else {
      if (i == 0) return x;
      i--;
    }
  }
}

static MtNode *findLast(const SkipList *s) {
  MtNode *x = s->pHead;
  int i =
      atomic_load_explicit(&((SkipList *)s)->nHeight, memory_order_relaxed) - 1;
  for (;;) {
    MtNode *n = nextAt(x, i);
    if (n) {
      x = n;
    } else {
      if (i == 0) return x;
      i--;
    }
  }
}

static int randomHeight(wcs_memtable *m) {
  int h = 1;
  uint64_t r;
  m->rnd ^= m->rnd << 13;
  m->rnd ^= m->rnd >> 7;
  m->rnd ^= m->rnd << 17;
  r = m->rnd;
  while (h < MT_MAX_HEIGHT && (r & 3) == 0) {
    h++;
    r >>= 2;
  }
  return h;
}

static int listInit(wcs_memtable *m, SkipList *s) {
  size_t n = sizeof(MtNode) + MT_MAX_HEIGHT * sizeof(MtNode *);
  int i;
  s->pHead = arenaAlloc(m, n);
  if (s->pHead == NULL) return WCS_NOMEM;
  memset(s->pHead, 0, n);
  for (i = 0; i < MT_MAX_HEIGHT; i++) {
    atomic_init(&s->pHead->aNext[i], NULL);
    s->aSplice[i] = s->pHead;
  }
  s->pLast = NULL;
  atomic_init(&s->nHeight, 1);
  return WCS_OK;
}

/* From node x at level iTop down to level 0: aPrev[i] = the last node < t
** at level i. x must precede t and be linked at level iTop. */
static void descend(MtNode *x, int iTop, const Target *t, MtNode **aPrev) {
  int i;
  for (i = iTop; i >= 0; i--) {
    MtNode *n;
    while ((n = nextAt(x, i)) != NULL && nodeCmp(n, t) < 0)
      x = n;
    aPrev[i] = x;
  }
}

/*
** Finger search for a key t after the last node inserted (pLast < t):
** keys that arrive in order, or nearly, are found near the previous one
** instead of from the top of the list. Nothing was inserted since pLast,
** so its splice is exact: at each level, aSplice[i] < t, and the next node
** after it is the first node of that level after pLast. Climb while that
** next node is still < t; at the first level i where it is not, no node
** of level >= i lies between pLast and t, so aSplice[j] is t's predecessor
** for every j >= i; below i, search down from aSplice[i-1]. A key just
** after pLast costs one comparison per level climbed plus a short walk.
*/
static void fingerFind(const SkipList *s, int nHeight, const Target *t,
                       MtNode **aPrev) {
  int i, j;
  for (i = 0; i < nHeight; i++) {
    MtNode *n = nextAt(s->aSplice[i], i);
    if (n == NULL || nodeCmp(n, t) >= 0) break;
  }
  if (i == nHeight) {
    descend(s->aSplice[nHeight - 1], nHeight - 1, t, aPrev);
    return;
  }
  for (j = i; j < nHeight; j++)
    aPrev[j] = s->aSplice[j];
  if (i > 0) descend(s->aSplice[i - 1], i - 1, t, aPrev);
}

/* Insert a node for (ukey, trailer) whose value is the concatenation of
** pV1 and pV2. */
static int listInsert(wcs_memtable *m, SkipList *s, const void *pUKey,
                      size_t nUKey, uint64_t trailer, const void *pV1,
                      size_t nV1, const void *pV2, size_t nV2) {
  MtNode *aPrev[MT_MAX_HEIGHT];
  MtNode *x;
  Target t;
  int h, i, nHeight;
  size_t nKey = nUKey + WCS_IKEY_TRAILER, nVal = nV1 + nV2;
  if (nKey > UINT32_MAX || nVal > UINT32_MAX) return WCS_TOOBIG;
  t.pUKey = pUKey;
  t.nUKey = nUKey;
  t.trailer = trailer;
  nHeight = atomic_load_explicit(&s->nHeight, memory_order_relaxed);
  if (s->pLast && nodeCmp(s->pLast, &t) < 0) {
    fingerFind(s, nHeight, &t, aPrev);
  } else {
    findGE(s, &t, aPrev);
  }
  h = randomHeight(m);
  if (h > nHeight) {
    for (i = nHeight; i < h; i++)
      aPrev[i] = s->pHead;
    atomic_store_explicit(&s->nHeight, h, memory_order_relaxed);
  }
  x = arenaAlloc(m,
                 sizeof(MtNode) + (size_t)h * sizeof(MtNode *) + nKey + nVal);
  if (x == NULL) return WCS_NOMEM;
  x->pKey = (uint8_t *)&x->aNext[h];
  x->nKey = (uint32_t)nKey;
  x->nVal = (uint32_t)nVal;
  if (nUKey) memcpy(x->pKey, pUKey, nUKey);
  wcs_put64(x->pKey + nUKey, trailer);
  if (nV1) memcpy(x->pKey + nKey, pV1, nV1);
  if (nV2) memcpy(x->pKey + nKey + nV1, pV2, nV2);
  for (i = 0; i < h; i++) {
    atomic_store_explicit(
        &x->aNext[i],
        atomic_load_explicit(&aPrev[i]->aNext[i], memory_order_relaxed),
        memory_order_relaxed);
    atomic_store_explicit(&aPrev[i]->aNext[i], x, memory_order_release);
    s->aSplice[i] = x;
  }
  if (h > nHeight) nHeight = h;
  for (; i < nHeight; i++)
    s->aSplice[i] = aPrev[i];
  s->pLast = x;
  return WCS_OK;
}

/* ---- memtable */

int memtable_new(size_t nBudget, uint64_t iLog, wcs_memtable **ppMem) {
  wcs_memtable *m = calloc(1, sizeof *m);
  *ppMem = NULL;
  if (m == NULL) return WCS_NOMEM;
  m->nBlock = nBudget / 16;
  if (m->nBlock < 4096) m->nBlock = 4096;
  if (m->nBlock > (1u << 20)) m->nBlock = 1u << 20;
  m->iLog = iLog;
  m->rnd = 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)m;
  if (m->rnd == 0) m->rnd = 1;
  atomic_init(&m->nRef, 1);
  atomic_init(&m->nBytes, 0);
  atomic_init(&m->nEntries, 0);
  atomic_init(&m->nDels, 0);
  atomic_init(&m->minSeq, 0);
  atomic_init(&m->maxSeq, 0);
  atomic_init(&m->nOver, 0);
  if (listInit(m, &m->points) || listInit(m, &m->dels) ||
      listInit(m, &m->over)) {
    memtable_unref(m);
    return WCS_NOMEM;
  }
  *ppMem = m;
  return WCS_OK;
}

void memtable_ref(wcs_memtable *m) {
  atomic_fetch_add_explicit(&m->nRef, 1, memory_order_relaxed);
}

void memtable_unref(wcs_memtable *m) {
  if (m == NULL) return;
  if (atomic_fetch_sub_explicit(&m->nRef, 1, memory_order_acq_rel) == 1) {
    ArenaBlock *b = m->pBlocks;
    while (b) {
      ArenaBlock *pNext = b->pNext;
      free(b);
      b = pNext;
    }
    free(m);
  }
}

uint64_t memtable_log(const wcs_memtable *m) {
  return m->iLog;
}

void memtable_set_log(wcs_memtable *m, uint64_t iLog) {
  m->iLog = iLog;
}

static void noteSeq(wcs_memtable *m, uint64_t seq) {
  if (atomic_load_explicit(&m->minSeq, memory_order_relaxed) == 0) {
    atomic_store_explicit(&m->minSeq, seq, memory_order_relaxed);
  }
  if (seq > atomic_load_explicit(&m->maxSeq, memory_order_relaxed)) {
    atomic_store_explicit(&m->maxSeq, seq, memory_order_relaxed);
  }
}

int memtable_add(wcs_memtable *m, uint64_t seq, int type, const void *pKey,
                 size_t nKey, const void *pVal, size_t nVal) {
  int rc = listInsert(m, &m->points, pKey, nKey, wcs_ikey_pack(seq, type), pVal,
                      nVal, NULL, 0);
  if (rc == WCS_OK) {
    atomic_fetch_add_explicit(&m->nEntries, 1, memory_order_relaxed);
    noteSeq(m, seq);
  }
  return rc;
}

/* Decode a tombstone node into an sst_rangedel (pointers into the node). */
static void delOf(const MtNode *n, sst_rangedel *d) {
  const uint8_t *pV = n->pKey + n->nKey;
  d->pStart = n->pKey;
  d->nStart = n->nKey - WCS_IKEY_TRAILER;
  d->seq = wcs_ikey_seq(n->pKey, n->nKey);
  if (pV[0] == 1) {
    d->pEnd = NULL;
    d->nEnd = 0;
  } else {
    d->pEnd = pV + 1;
    d->nEnd = n->nVal - 1;
  }
}

/* end(a) <= start(b)? (a unbounded: never) */
static int endsBefore(const sst_rangedel *a, const uint8_t *pStart,
                      size_t nStart) {
  return a->pEnd && wcs_ukey_cmp(a->pEnd, a->nEnd, pStart, nStart) <= 0;
}

/* The node of "dels" opening the group with the largest start <= key
** (the newest of that group), or NULL. */
static MtNode *groupAtOrBefore(const SkipList *s, const uint8_t *pKey,
                               size_t nKey) {
  Target t;
  MtNode *n;
  sst_rangedel d;
  t.pUKey = pKey;
  t.nUKey = nKey;
  t.trailer = 0; /* after every entry of key */
  n = findLT(s, &t);
  if (n == s->pHead) return NULL;
  delOf(n, &d);
  t.pUKey = d.pStart;
  t.nUKey = d.nStart;
  t.trailer = WCS_IKEY_SENTINEL_TRAILER;
  return findGE(s, &t, NULL);
}

/* May [start, end) join "dels" (identical to or disjoint from all)? */
static int fitsDisjoint(const wcs_memtable *m, const uint8_t *pStart,
                        size_t nStart, const uint8_t *pEnd, size_t nEnd) {
  MtNode *n = m->dels.pLast;
  sst_rangedel d;
  Target t;
  if (n && n != m->dels.pHead && nextAt(n, 0) == NULL) {
    /* the last one inserted is the last of the list (rows deleted in key
    ** order, as a commit writes them): a tombstone starting after it and
    ** after its end is disjoint from every one, with nothing to search */
    delOf(n, &d);
    if (wcs_ukey_cmp(d.pStart, d.nStart, pStart, nStart) < 0 &&
        endsBefore(&d, pStart, nStart)) {
      return 1;
    }
  }
  n = groupAtOrBefore(&m->dels, pStart, nStart);
  if (n) {
    delOf(n, &d);
    if (wcs_ukey_cmp(d.pStart, d.nStart, pStart, nStart) == 0) {
      /* same start: must be the same range */
      if ((d.pEnd == NULL) != (pEnd == NULL)) return 0;
      return d.pEnd == NULL || wcs_ukey_cmp(d.pEnd, d.nEnd, pEnd, nEnd) == 0;
    }
    if (!endsBefore(&d, pStart, nStart)) return 0;
  }
  /* the next group must start at or after our end */
  t.pUKey = pStart;
  t.nUKey = nStart;
  t.trailer = 0;
  n = findGE(&m->dels, &t, NULL);
  if (n) {
    delOf(n, &d);
    if (pEnd == NULL || wcs_ukey_cmp(pEnd, nEnd, d.pStart, d.nStart) > 0) {
      return 0;
    }
  }
  return 1;
}

int memtable_add_rangedel(wcs_memtable *m, uint64_t seq, const void *pStart,
                          size_t nStart, const void *pEnd, size_t nEnd) {
  uint8_t flag = pEnd == NULL ? 1 : 0;
  int bDisjoint = fitsDisjoint(m, pStart, nStart, pEnd, nEnd);
  int rc = listInsert(m, bDisjoint ? &m->dels : &m->over, pStart, nStart,
                      wcs_ikey_pack(seq, WCS_KT_DELETE), &flag, 1, pEnd,
                      pEnd ? nEnd : 0);
  if (rc == WCS_OK) {
    if (!bDisjoint)
      atomic_fetch_add_explicit(&m->nOver, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->nDels, 1, memory_order_release);
    noteSeq(m, seq);
  }
  return rc;
}

size_t memtable_bytes(const wcs_memtable *m) {
  return atomic_load_explicit(&((wcs_memtable *)m)->nBytes,
                              memory_order_relaxed);
}
uint64_t memtable_count(const wcs_memtable *m) {
  return atomic_load_explicit(&((wcs_memtable *)m)->nEntries,
                              memory_order_relaxed);
}
int memtable_any_within(const wcs_memtable *m, const uint8_t *pLo,
                        size_t nLo, const uint8_t *pHi, size_t nHi) {
  MtNode *n;
  if (atomic_load_explicit(&((wcs_memtable *)m)->nDels,
                           memory_order_acquire)) {
    return 1; /* a tombstone may reach into the bounds */
  }
  if (pLo) {
    Target t;
    t.pUKey = pLo;
    t.nUKey = nLo;
    t.trailer = UINT64_MAX; /* before every entry of the key pLo */
    n = findGE(&m->points, &t, NULL);
  } else {
    n = nextAt(m->points.pHead, 0);
  }
  if (n == NULL) return 0;
  return pHi == NULL ||
         wcs_ukey_cmp(n->pKey, n->nKey - WCS_IKEY_TRAILER, pHi, nHi) < 0;
}

uint64_t memtable_rangedel_count(const wcs_memtable *m) {
  return atomic_load_explicit(&((wcs_memtable *)m)->nDels,
                              memory_order_relaxed);
}
uint64_t memtable_min_seq(const wcs_memtable *m) {
  return atomic_load_explicit(&((wcs_memtable *)m)->minSeq,
                              memory_order_relaxed);
}
uint64_t memtable_max_seq(const wcs_memtable *m) {
  return atomic_load_explicit(&((wcs_memtable *)m)->maxSeq,
                              memory_order_relaxed);
}

int memtable_get(const wcs_memtable *m, const void *pKey, size_t nKey,
                 uint64_t snap, uint64_t *pSeq, int *pType,
                 const uint8_t **ppVal, size_t *pnVal) {
  Target t;
  MtNode *n;
  uint64_t tr;
  t.pUKey = pKey;
  t.nUKey = nKey;
  t.trailer = wcs_ikey_pack(snap, 0xff);
  n = findGE(&m->points, &t, NULL);
  if (n == NULL) return 0;
  if (wcs_ukey_cmp(n->pKey, n->nKey - WCS_IKEY_TRAILER, pKey, nKey) != 0) {
    return 0;
  }
  tr = wcs_ikey_trailer(n->pKey, n->nKey);
  *pSeq = tr >> 8;
  *pType = (int)(tr & 0xff);
  *ppVal = n->pKey + n->nKey;
  *pnVal = n->nVal;
  return 1;
}

uint64_t memtable_rangedel_cover(const wcs_memtable *m, const void *pKey,
                                 size_t nKey, uint64_t snap) {
  uint64_t best = 0;
  MtNode *n;
  if (atomic_load_explicit(&((wcs_memtable *)m)->nDels, memory_order_acquire) ==
      0) {
    return 0;
  }
  /* dels: the group with the largest start <= key, newest first */
  for (n = groupAtOrBefore(&m->dels, pKey, nKey); n; n = nextAt(n, 0)) {
    sst_rangedel d;
    delOf(n, &d);
    if (d.pEnd && wcs_ukey_cmp(pKey, nKey, d.pEnd, d.nEnd) >= 0) break;
    if (best == 0 && d.seq <= snap) best = d.seq;
    if (best) break;
    /* older members of the group follow; stop at the next group */
    {
      MtNode *pNext = nextAt(n, 0);
      sst_rangedel e;
      if (pNext == NULL) break;
      delOf(pNext, &e);
      if (wcs_ukey_cmp(e.pStart, e.nStart, d.pStart, d.nStart) != 0) break;
    }
  }
  /* over: everything */
  if (atomic_load_explicit(&((wcs_memtable *)m)->nOver, memory_order_acquire)) {
    for (n = nextAt(m->over.pHead, 0); n; n = nextAt(n, 0)) {
      sst_rangedel d;
      delOf(n, &d);
      if (wcs_ukey_cmp(d.pStart, d.nStart, pKey, nKey) > 0) break;
      if (d.seq > snap || d.seq <= best) continue;
      if (d.pEnd == NULL || wcs_ukey_cmp(pKey, nKey, d.pEnd, d.nEnd) < 0) {
        best = d.seq;
      }
    }
  }
  return best;
}

int memtable_rangedels(const wcs_memtable *m, uint64_t snap, const uint8_t *pLo,
                       size_t nLo, const uint8_t *pHi, size_t nHi, void *pCtx,
                       int (*x)(void *pCtx, const sst_rangedel *)) {
  int k;
  for (k = 0; k < 2; k++) {
    const SkipList *s = k == 0 ? &m->dels : &m->over;
    MtNode *n = NULL;
    if (k == 0 && pLo) {
      /* disjoint groups: start from the one that may cover lo */
      n = groupAtOrBefore(s, pLo, nLo);
      if (n == NULL) n = nextAt(s->pHead, 0);
    } else {
      n = nextAt(s->pHead, 0);
    }
    for (; n; n = nextAt(n, 0)) {
      sst_rangedel d;
      int rc;
      delOf(n, &d);
      if (pHi && wcs_ukey_cmp(d.pStart, d.nStart, pHi, nHi) >= 0) break;
      if (d.seq > snap) continue;
      if (pLo && d.pEnd && wcs_ukey_cmp(d.pEnd, d.nEnd, pLo, nLo) <= 0) {
        continue;
      }
      rc = x(pCtx, &d);
      if (rc) return rc;
    }
  }
  return WCS_OK;
}

/* ---- iterator */

typedef struct MtIter {
  wcs_iiter base;     /* must be first */
  wcs_memtable *pMem; /* referenced */
  MtNode *pNode;      /* current node, NULL when unpositioned */
} MtIter;

static void targetOf(Target *t, const uint8_t *pIKey, size_t nIKey) {
  t->pUKey = pIKey;
  t->nUKey = nIKey - WCS_IKEY_TRAILER;
  t->trailer = wcs_get64(pIKey + nIKey - WCS_IKEY_TRAILER);
}

static int mtFirst(wcs_iiter *p) {
  MtIter *it = (MtIter *)p;
  it->pNode = nextAt(it->pMem->points.pHead, 0);
  return WCS_OK;
}

static int mtLast(wcs_iiter *p) {
  MtIter *it = (MtIter *)p;
  MtNode *n = findLast(&it->pMem->points);
  it->pNode = n == it->pMem->points.pHead ? NULL : n;
  return WCS_OK;
}

static int mtSeek(wcs_iiter *p, const uint8_t *pIKey, size_t nIKey) {
  MtIter *it = (MtIter *)p;
  Target t;
  targetOf(&t, pIKey, nIKey);
  it->pNode = findGE(&it->pMem->points, &t, NULL);
  return WCS_OK;
}

static int mtSeekForPrev(wcs_iiter *p, const uint8_t *pIKey, size_t nIKey) {
  MtIter *it = (MtIter *)p;
  Target t;
  MtNode *n;
  targetOf(&t, pIKey, nIKey);
  n = findGE(&it->pMem->points, &t, NULL);
  if (n && nodeCmp(n, &t) == 0) {
    it->pNode = n;
    return WCS_OK;
  }
  n = findLT(&it->pMem->points, &t);
  it->pNode = n == it->pMem->points.pHead ? NULL : n;
  return WCS_OK;
}

static int mtNext(wcs_iiter *p) {
  MtIter *it = (MtIter *)p;
  if (it->pNode) it->pNode = nextAt(it->pNode, 0);
  return WCS_OK;
}

static int mtPrev(wcs_iiter *p) {
  MtIter *it = (MtIter *)p;
  Target t;
  MtNode *n;
  if (it->pNode == NULL) return WCS_OK;
  targetOf(&t, it->pNode->pKey, it->pNode->nKey);
  n = findLT(&it->pMem->points, &t);
  it->pNode = n == it->pMem->points.pHead ? NULL : n;
  return WCS_OK;
}

static int mtValid(const wcs_iiter *p) {
  return ((const MtIter *)p)->pNode != NULL;
}

static const uint8_t *mtKey(const wcs_iiter *p, size_t *pn) {
  const MtNode *n = ((const MtIter *)p)->pNode;
  *pn = n->nKey;
  return n->pKey;
}

static const uint8_t *mtValue(const wcs_iiter *p, size_t *pn) {
  const MtNode *n = ((const MtIter *)p)->pNode;
  *pn = n->nVal;
  return n->pKey + n->nKey;
}

static int mtStatus(const wcs_iiter *p, char **pzErr) {
  (void)p;
  (void)pzErr;
  return WCS_OK;
}

static void mtClose(wcs_iiter *p) {
  MtIter *it = (MtIter *)p;
  if (it == NULL) return;
  memtable_unref(it->pMem);
  free(it);
}

static const wcs_iiter_methods mtMethods = {
    mtFirst, mtLast, mtSeek,  mtSeekForPrev, mtNext, mtPrev,
    mtValid, mtKey,  mtValue, mtStatus,      mtClose, NULL};

int memtable_iter(wcs_memtable *m, wcs_iiter **ppIter) {
  MtIter *it = calloc(1, sizeof *it);
  *ppIter = NULL;
  if (it == NULL) return WCS_NOMEM;
  it->base.pMethods = &mtMethods;
  it->pMem = m;
  memtable_ref(m);
  *ppIter = &it->base;
  return WCS_OK;
}
