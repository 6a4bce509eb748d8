/*
** ingest.c — bulk ingest (see ingest.h): a write batch becomes sorted files
** of the same format as flush and compaction output (sst.c, written by
** compact_run), so a large load skips the WAL, the memtable and the flush
** that would rewrite it.
**
** How it works. The plan walks the batch once. When the point operations'
** user keys strictly increase (a load in key order), the entries are read
** straight from the batch bytes: operation i of the batch is internal key
** (key, seq0 + i). The same holds run by run for a batch with a run
** prefix (ingest.h): the operations whose keys share their first nPrefix
** bytes form a run (at most INGEST_RUNS_MAX of them), each must strictly
** increase, and runs with distinct prefixes of one length cover disjoint
** ranges; that is how the engine commits a load of several column
** families row by row (its log, adopted as the batch, interleaves one run
** per family). Else an array of the entries is sorted in internal-key
** order (user key, then sequence number descending), so two writes of
** one key keep their order and the writer drops the older one as a flush
** would. Range tombstones are gathered into an array and handed to the
** writer, which clips them to each output file's share of the key space.
**
** The writer is compact_run with a snapshot list that ends below the
** batch's first sequence number: every entry lies above every reader, so
** nothing is dropped except versions the same batch overwrites, nothing is
** rewritten at sequence number 0, and deletes are kept (they hide older
** data below); it reads the runs one after another in key order. A
** sorted batch that holds no range tombstone has nothing for it to
** decide: its entries go straight to the sorted-file builder
** (writeDirect), which reads the batch bytes once, in batch order, and
** builds one file at a time per run, cut into files the same way.
**
** Two threads: without range tombstones, a batch of at least
** INGEST_SPLIT_MIN bytes is cut in two halves, and a second thread writes
** the upper half while the caller writes the lower one. A sorted batch is
** cut at the operation nearest the middle of its bytes: within each run
** the lower half's keys are below the upper half's, so the outputs of the
** two are disjoint, and sorted by smallest key they are in key order. An
** unsorted one is cut in its sorted array at a user-key boundary. Blocks
** are compressed with zstd at the store's level, which is most of a
** file's cost, so this nearly halves the time of a large ingest on two
** cores.
*/
#include "storage/ingest.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/ikey.h"
#include "storage/wal.h"
#include "wcs.h"

/* Point entries of at least this many batch bytes are written by two
** threads (below it a thread's start is not worth it). */
#define INGEST_SPLIT_MIN (8u << 20)

/* Runs a batch with a run prefix may interleave; more is sorted. */
#define INGEST_RUNS_MAX 8

/* One run: the point operations sharing their first nPrefix key bytes
** (all of them when the plan has no prefix), strictly increasing. */
typedef struct IRun {
  const uint8_t *pStart, *pStop; /* its first operation, just past its last */
  uint64_t seqStart;             /* sequence number of its first operation */
  const uint8_t *pFirst, *pLast; /* its first and last user keys */
  size_t nFirst, nLast;
} IRun;

/* A stretch of one run's operations: what the iterator walks, run by
** run in key order (operations of other runs and range deletes in it are
** skipped). */
typedef struct ISeg {
  const uint8_t *p, *pStop;
  uint64_t seq; /* sequence number of the operation at p */
  int iRun;
} ISeg;

/* Passes over a batch read its operations once, in order, from memory
** written long before (hundreds of megabytes, out of the caches): asking
** for the bytes INGEST_AHEAD ahead of the one being parsed keeps the
** memory busy while the operation is decoded. It halves pass 1 of a
** plan, which otherwise waits on memory most of the time (the writers
** are slower than the memory and gain nothing from it). */
#define INGEST_AHEAD 2048
#if defined(__GNUC__) || defined(__clang__)
#define INGEST_READ_AHEAD(q, pEnd)                                            \
  do {                                                                        \
    if ((size_t)((pEnd) - (q)) > INGEST_AHEAD)                                \
      __builtin_prefetch((q) + INGEST_AHEAD);                                 \
  } while (0)
#else
#define INGEST_READ_AHEAD(q, pEnd) ((void)0)
#endif

/* One point entry of an unsorted batch. */
typedef struct IEnt {
  const uint8_t *pKey; /* user key, in the batch */
  const uint8_t *pVal; /* value, in the batch (deletes: "") */
  uint32_t nKey, nVal;
  uint64_t trailer; /* seq << 8 | type */
} IEnt;

struct ingest_plan {
  const uint8_t *pOps, *pEnd; /* the batch's operations (borrowed) */
  uint64_t seq0;              /* sequence number of the first operation */
  uint64_t nEnt;              /* point operations */
  size_t nPrefix;             /* run prefix bytes (0: one run) */
  int bSorted;                /* the point operations are runs, each
                              ** strictly increasing, in disjoint ranges */
  int nRun;                   /* bSorted: the runs, */
  IRun aRun[INGEST_RUNS_MAX];
  ISeg aSeg[INGEST_RUNS_MAX]; /* and their segments in key order */
  IEnt *aEnt;         /* !bSorted: entries in internal-key order */
  sst_rangedel *aDel; /* range tombstones (keys in the batch) */
  int nDel;
  /* where the point entries split in two halves */
  const uint8_t *pSplit; /* bSorted: first operation of the upper half */
  uint64_t seqSplit;     /* its sequence number */
  uint64_t iSplit;       /* !bSorted: first entry of the upper half */
  int bSplit;            /* a split exists */
  /* user-key range of everything in the batch (inclusive; bHiInf: an
  ** open range tombstone reaches the end of the key space) */
  const uint8_t *pLo, *pHi;
  size_t nLo, nHi;
  int bHiInf;
};

/* One decoded operation; returns the bytes it takes, 0 if it does not
** parse. */
typedef struct Op {
  int op;
  const uint8_t *pKey, *pVal;
  uint64_t nKey, nVal;
} Op;

static inline size_t opDecode(const uint8_t *p, const uint8_t *pEnd, Op *o) {
  const uint8_t *q = p;
  int k;
  o->op = -1;
  if (q >= pEnd) return 0;
  o->op = *q++;
  if (o->op > WAL_OP_RANGEDEL_OPEN) return 0;
  k = wcs_get_varint_fast(q, pEnd, &o->nKey);
  if (k == 0 || o->nKey > (uint64_t)(pEnd - q - k)) return 0;
  q += k;
  o->pKey = q;
  q += o->nKey;
  o->pVal = NULL;
  o->nVal = 0;
  if (o->op == WAL_OP_PUT || o->op == WAL_OP_RANGEDEL) {
    k = wcs_get_varint_fast(q, pEnd, &o->nVal);
    if (k == 0 || o->nVal > (uint64_t)(pEnd - q - k)) return 0;
    q += k;
    o->pVal = q;
    q += o->nVal;
  }
  return (size_t)(q - p);
}

/* A length pass 1 checked: one byte read inline when under 128 (most
** are), else the varint. Advances *pq past it. */
static inline uint64_t lenNext(const uint8_t **pq, const uint8_t *pEnd) {
  const uint8_t *q = *pq;
  uint64_t n;
  if (*q < 0x80) {
    n = *q++;
  } else {
    q += wcs_get_varint(q, pEnd, &n);
  }
  *pq = q;
  return n;
}

/* opDecode for an operation pass 1 decoded already (writeDirect's second
** read of a batch): nothing to check. Returns the next operation. */
static inline const uint8_t *opNext(const uint8_t *q, const uint8_t *pEnd,
                                    Op *o) {
  o->op = *q++;
  o->nKey = lenNext(&q, pEnd);
  o->pKey = q;
  q += o->nKey;
  o->pVal = NULL;
  o->nVal = 0;
  if (o->op == WAL_OP_PUT || o->op == WAL_OP_RANGEDEL) {
    o->nVal = lenNext(&q, pEnd);
    o->pVal = q;
    q += o->nVal;
  }
  return q;
}

static int cmpEnt(const void *a, const void *b) {
  const IEnt *x = a, *y = b;
  int c = wcs_ukey_cmp(x->pKey, x->nKey, y->pKey, y->nKey);
  if (c) return c;
  return x->trailer > y->trailer ? -1 : (x->trailer < y->trailer);
}

/* Widen the plan's range to user keys [pLo, pHi] (pHi NULL: unbounded). */
static void widen(ingest_plan *p, const uint8_t *pLo, size_t nLo,
                  const uint8_t *pHi, size_t nHi, int bHiInf) {
  if (p->pLo == NULL || wcs_ukey_cmp(pLo, nLo, p->pLo, p->nLo) < 0) {
    p->pLo = pLo;
    p->nLo = nLo;
  }
  if (bHiInf) {
    p->bHiInf = 1;
  } else if (p->pHi == NULL || wcs_ukey_cmp(pHi, nHi, p->pHi, p->nHi) > 0) {
    p->pHi = pHi;
    p->nHi = nHi;
  }
}

/* The run point operation o (at q, n bytes, sequence number seq) joins;
** clears bSorted when o fits no run. */
static int runAdd(ingest_plan *p, int iRun, const Op *o, const uint8_t *q,
                  size_t n, uint64_t seq) {
  IRun *r;
  if (p->nPrefix) {
    if (o->nKey < p->nPrefix) {
      p->bSorted = 0;
      return iRun;
    }
    if (p->nRun == 0 || !wcs_same_bytes(p->aRun[iRun].pFirst, o->pKey, p->nPrefix)) {
      for (iRun = 0; iRun < p->nRun; iRun++) {
        if (wcs_same_bytes(p->aRun[iRun].pFirst, o->pKey, p->nPrefix)) break;
      }
    }
  } else {
    iRun = 0;
  }
  if (iRun == p->nRun) {
    if (p->nRun == INGEST_RUNS_MAX) {
      p->bSorted = 0;
      return iRun;
    }
    r = &p->aRun[p->nRun++];
    memset(r, 0, sizeof *r);
    r->pStart = q;
    r->seqStart = seq;
    r->pFirst = o->pKey;
    r->nFirst = (size_t)o->nKey;
  } else {
    r = &p->aRun[iRun];
    if (wcs_ukey_cmp(r->pLast, r->nLast, o->pKey, o->nKey) >= 0) {
      p->bSorted = 0;
      return iRun;
    }
  }
  r->pLast = o->pKey;
  r->nLast = (size_t)o->nKey;
  r->pStop = q + n;
  return iRun;
}

/* After pass 1 of a sorted plan: put the runs in key order, checking
** that their ranges are disjoint, and set the plan's range. */
static void runsFinish(ingest_plan *p) {
  int aOrd[INGEST_RUNS_MAX] = {0};
  int i, k;
  for (i = 0; i < p->nRun; i++) {
    /* insertion sort by first key: a few runs */
    for (k = i; k > 0; k--) {
      const IRun *a = &p->aRun[aOrd[k - 1]];
      if (wcs_ukey_cmp(a->pFirst, a->nFirst, p->aRun[i].pFirst,
                       p->aRun[i].nFirst) < 0) {
        break;
      }
      aOrd[k] = aOrd[k - 1];
    }
    aOrd[k] = i;
  }
  for (i = 1; i < p->nRun; i++) {
    const IRun *a = &p->aRun[aOrd[i - 1]], *b = &p->aRun[aOrd[i]];
    if (wcs_ukey_cmp(a->pLast, a->nLast, b->pFirst, b->nFirst) >= 0) {
      p->bSorted = 0; /* overlapping runs: not the hint's shape */
      return;
    }
  }
  if (p->nRun == 0) return;
  widen(p, p->aRun[aOrd[0]].pFirst, p->aRun[aOrd[0]].nFirst,
        p->aRun[aOrd[0]].pFirst, p->aRun[aOrd[0]].nFirst, 0);
  widen(p, p->aRun[aOrd[p->nRun - 1]].pLast, p->aRun[aOrd[p->nRun - 1]].nLast,
        p->aRun[aOrd[p->nRun - 1]].pLast, p->aRun[aOrd[p->nRun - 1]].nLast,
        0);
  for (i = 0; i < p->nRun; i++) {
    const IRun *r = &p->aRun[aOrd[i]];
    p->aSeg[i].p = r->pStart;
    p->aSeg[i].pStop = r->pStop;
    p->aSeg[i].seq = r->seqStart;
    p->aSeg[i].iRun = aOrd[i];
  }
}

int ingest_plan_new(const uint8_t *pBatch, size_t nBatch, size_t nPrefix,
                    ingest_plan **pp, char **pzErr) {
  ingest_plan *p;
  const uint8_t *q, *pEnd = pBatch + nBatch;
  size_t nHalf = nBatch / 2;
  uint64_t nOp, i;
  int iRun = 0, nDelAlloc = 0;
  *pp = NULL;
  if (nBatch < WAL_BATCH_HEADER) goto corrupt;
  p = calloc(1, sizeof *p);
  if (p == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  p->seq0 = wcs_get64(pBatch + WAL_BATCH_OFF_SEQ);
  nOp = wcs_get32(pBatch + WAL_BATCH_OFF_COUNT);
  p->pOps = pBatch + WAL_BATCH_HEADER;
  p->pEnd = pEnd;
  p->bSorted = 1;
  p->nPrefix = nPrefix;

  /* pass 1: validate, count, check the order (the runs), find the
  ** middle, collect the range tombstones */
  for (q = p->pOps, i = 0; i < nOp; i++) {
    Op o;
    size_t n = opDecode(q, pEnd, &o);
    if (n == 0) break;
    INGEST_READ_AHEAD(q, pEnd);
    if (o.op == WAL_OP_RANGEDEL || o.op == WAL_OP_RANGEDEL_OPEN) {
      widen(p, o.pKey, o.nKey, o.pVal, o.nVal, o.op == WAL_OP_RANGEDEL_OPEN);
      if (o.pVal == NULL || wcs_ukey_cmp(o.pKey, o.nKey, o.pVal, o.nVal) < 0) {
        sst_rangedel *d;
        if (p->nDel == nDelAlloc) {
          /* a tombstone takes 3 bytes or more of at most WAL_MAX_RECORD:
          ** fewer than 2^30, so the doubling stays within an int */
          int nNew = nDelAlloc ? 2 * nDelAlloc : 16;
          d = realloc(p->aDel, sizeof(sst_rangedel) * (size_t)nNew);
          if (d == NULL) goto nomem;
          p->aDel = d;
          nDelAlloc = nNew;
        }
        d = &p->aDel[p->nDel++];
        memset(d, 0, sizeof *d);
        d->pStart = o.pKey;
        d->nStart = (size_t)o.nKey;
        d->pEnd = o.pVal;
        d->nEnd = (size_t)o.nVal;
        d->seq = p->seq0 + i;
      } /* else empty */
    } else {
      if (p->bSorted) iRun = runAdd(p, iRun, &o, q, n, p->seq0 + i);
      if (p->bSorted && !p->bSplit && (size_t)(q - pBatch) >= nHalf &&
          p->nEnt > 0) {
        p->pSplit = q;
        p->seqSplit = p->seq0 + i;
        p->bSplit = 1;
      }
      p->nEnt++;
    }
    q += n;
  }
  if (i < nOp || q != pEnd) {
    ingest_plan_free(p);
    goto corrupt;
  }
  /* the range: the runs' ends, or when unsorted, the first and last
  ** entries after sorting (below) */
  if (p->bSorted) runsFinish(p);

  /* pass 2: the entries of an unsorted batch */
  if (!p->bSorted) {
    uint64_t iEnt = 0;
    p->bSplit = 0;
    p->aEnt = malloc(sizeof(IEnt) * (size_t)(p->nEnt ? p->nEnt : 1));
    if (p->aEnt == NULL) goto nomem;
    for (q = p->pOps, i = 0; i < nOp; i++) {
      Op o = {0}; /* pass 1 checked every operation: this only quiets the
                  ** compiler, which cannot see it */
      INGEST_READ_AHEAD(q, pEnd);
      q += opDecode(q, pEnd, &o);
      if (o.op != WAL_OP_RANGEDEL && o.op != WAL_OP_RANGEDEL_OPEN) {
        IEnt *e = &p->aEnt[iEnt++];
        e->pKey = o.pKey;
        e->nKey = (uint32_t)o.nKey;
        e->pVal = o.pVal ? o.pVal : (const uint8_t *)"";
        e->nVal = (uint32_t)o.nVal;
        e->trailer = wcs_ikey_pack(p->seq0 + i, o.op == WAL_OP_PUT
                                                    ? WCS_KT_PUT
                                                    : WCS_KT_DELETE);
      }
    }
  }
  if (!p->bSorted && p->nEnt > 0) {
    /* the key range, also of a single entry (a batch with a wrong run
    ** hint can be unsorted with one point operation) */
    qsort(p->aEnt, (size_t)p->nEnt, sizeof(IEnt), cmpEnt);
    widen(p, p->aEnt[0].pKey, p->aEnt[0].nKey, p->aEnt[0].pKey,
          p->aEnt[0].nKey, 0);
    widen(p, p->aEnt[p->nEnt - 1].pKey, p->aEnt[p->nEnt - 1].nKey,
          p->aEnt[p->nEnt - 1].pKey, p->aEnt[p->nEnt - 1].nKey, 0);
  }
  if (!p->bSorted && p->nEnt > 1) {
    uint64_t k = p->nEnt / 2;
    /* the upper half starts at a new user key */
    while (k < p->nEnt &&
           wcs_ukey_cmp(p->aEnt[k - 1].pKey, p->aEnt[k - 1].nKey,
                        p->aEnt[k].pKey, p->aEnt[k].nKey) == 0) {
      k++;
    }
    if (k < p->nEnt) {
      p->iSplit = k;
      p->bSplit = 1;
    }
  }
  *pp = p;
  return WCS_OK;

nomem:
  ingest_plan_free(p);
  return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
corrupt:
  return wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                    "corrupt write batch: its operations do not parse");
}

void ingest_plan_free(ingest_plan *p) {
  if (p == NULL) return;
  free(p->aEnt);
  free(p->aDel);
  free(p);
}

int ingest_plan_runs(const ingest_plan *p) {
  return p->bSorted ? p->nRun : 0;
}
int ingest_plan_split(const ingest_plan *p) {
  return p->bSplit;
}

/* ====================================================================
** The iterator over a part of the plan's point entries (forward only:
** compact_run needs nothing else).
** ==================================================================== */

typedef struct IngestIter {
  wcs_iiter base;
  const ingest_plan *pPlan;
  const ISeg *aSeg; /* sorted: the part's segments, */
  int nSeg, iSeg;   /* how many, the one being walked */
  const uint8_t *p, *pStop; /* sorted: next operation, end of the segment */
  uint64_t seq;             /* sorted: sequence number of the one at p */
  const uint8_t *pRunKey;   /* sorted, with a prefix: a key of its run */
  uint64_t i, iStop;        /* unsorted: next entry, end of the part */
  int bValid;
  wcs_buf key; /* the current internal key */
  const uint8_t *pVal;
  size_t nVal;
  int rc; /* WCS_NOMEM when a key did not fit */
} IngestIter;

static int iiNext(wcs_iiter *pIt) {
  IngestIter *it = (IngestIter *)pIt;
  const uint8_t *pKey = NULL;
  size_t nKey = 0;
  uint64_t trailer = 0;
  it->bValid = 0;
  if (it->rc) return it->rc;
  if (it->pPlan->bSorted) {
    size_t nPrefix = it->pPlan->nPrefix;
    for (;;) {
      Op o;
      size_t n;
      uint64_t seq;
      if (it->p >= it->pStop) {
        const ISeg *s;
        if (it->iSeg >= it->nSeg) break;
        s = &it->aSeg[it->iSeg++];
        it->p = s->p;
        it->pStop = s->pStop;
        it->seq = s->seq;
        it->pRunKey = it->pPlan->aRun[s->iRun].pFirst;
        continue;
      }
      n = opDecode(it->p, it->pPlan->pEnd, &o); /* checked by pass 1 */
      seq = it->seq++;
      it->p += n;
      if (o.op == WAL_OP_RANGEDEL || o.op == WAL_OP_RANGEDEL_OPEN) continue;
      if (nPrefix && memcmp(o.pKey, it->pRunKey, nPrefix) != 0) {
        continue; /* another run's */
      }
      pKey = o.pKey;
      nKey = (size_t)o.nKey;
      it->pVal = o.pVal ? o.pVal : (const uint8_t *)"";
      it->nVal = (size_t)o.nVal;
      trailer = wcs_ikey_pack(seq, o.op == WAL_OP_PUT ? WCS_KT_PUT
                                                      : WCS_KT_DELETE);
      it->bValid = 1;
      break;
    }
  } else if (it->i < it->iStop) {
    const IEnt *e = &it->pPlan->aEnt[it->i++];
    pKey = e->pKey;
    nKey = e->nKey;
    it->pVal = e->pVal;
    it->nVal = e->nVal;
    trailer = e->trailer;
    it->bValid = 1;
  }
  if (it->bValid) {
    it->key.n = 0;
    if (wcs_buf_reserve(&it->key, nKey + WCS_IKEY_TRAILER)) {
      it->bValid = 0;
      return it->rc = WCS_NOMEM;
    }
    memcpy(it->key.a, pKey, nKey);
    wcs_put64(it->key.a + nKey, trailer);
    it->key.n = nKey + WCS_IKEY_TRAILER;
  }
  return WCS_OK;
}

static int iiFirst(wcs_iiter *pIt) {
  return iiNext(pIt); /* a part is read once, from its start */
}
static int iiUnsupported(wcs_iiter *pIt) {
  ((IngestIter *)pIt)->bValid = 0;
  return WCS_INTERNAL;
}
static int iiSeek(wcs_iiter *pIt, const uint8_t *k, size_t n) {
  (void)k;
  (void)n;
  return iiUnsupported(pIt);
}
static int iiValid(const wcs_iiter *pIt) {
  return ((const IngestIter *)pIt)->bValid;
}
static const uint8_t *iiKey(const wcs_iiter *pIt, size_t *pn) {
  const IngestIter *it = (const IngestIter *)pIt;
  *pn = it->key.n;
  return it->key.a;
}
static const uint8_t *iiValue(const wcs_iiter *pIt, size_t *pn) {
  const IngestIter *it = (const IngestIter *)pIt;
  *pn = it->nVal;
  return it->pVal;
}
static int iiStatus(const wcs_iiter *pIt, char **pzErr) {
  const IngestIter *it = (const IngestIter *)pIt;
  if (it->rc) return wcs_seterr(pzErr, it->rc, "out of memory");
  return WCS_OK;
}
static void iiClose(wcs_iiter *pIt) {
  IngestIter *it = (IngestIter *)pIt;
  wcs_buf_free(&it->key);
}

static const wcs_iiter_methods iiMethods = {
    iiFirst, iiUnsupported, iiSeek,   iiSeek,  iiNext,
    iiUnsupported, iiValid, iiKey, iiValue, iiStatus, iiClose, NULL};

/* Part 0 is the lower half (or everything), part 1 the upper half. */
static void iiInit(IngestIter *it, const ingest_plan *p, int iPart,
                   int nPart) {
  memset(it, 0, sizeof *it);
  it->base.pMethods = &iiMethods;
  it->pPlan = p;
  if (p->bSorted) {
    it->aSeg = p->aSeg; /* one part: the compaction writer's (ingest_write) */
    it->nSeg = p->nRun;
  } else {
    it->i = 0;
    it->iStop = p->nEnt;
    if (nPart == 2 && iPart == 0) it->iStop = p->iSplit;
    if (nPart == 2 && iPart == 1) it->i = p->iSplit;
  }
}

/* ====================================================================
** Writing
** ==================================================================== */

typedef struct Part {
  const ingest_plan *pPlan;
  compact_job j;
  int iPart, nPart;
  int rc;
  char *zErr;
} Part;

/* One run's output in writeDirect: the file being built and its cut. */
typedef struct RunOut {
  compact_output out; /* out.pB NULL: none open */
  compact_cut cut;
} RunOut;

/* Add point operation o as internal key (o's key, seq) to run r's output:
** cut the file being built first if compact_cut_before says so, open one
** if none is. key is scratch for the internal key. */
static int runOutAdd(compact_job *j, const sst_options *pSo, RunOut *r,
                     wcs_buf *key, const Op *o, uint64_t seq, char **pzErr) {
  size_t nK = (size_t)o->nKey + WCS_IKEY_TRAILER;
  int rc;
  key->n = 0;
  if (nK > key->nAlloc && wcs_buf_reserve(key, nK)) {
    return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  wcs_copy_short(key->a, o->pKey, (size_t)o->nKey);
  wcs_put64(key->a + o->nKey,
            wcs_ikey_pack(seq, o->op == WAL_OP_PUT ? WCS_KT_PUT
                                                   : WCS_KT_DELETE));
  if (compact_cut_before(j, &r->cut, r->out.pB, o->pKey, (size_t)o->nKey)) {
    rc = compact_output_finish(j, &r->out, NULL, pzErr);
    r->cut.nGpBytes = 0;
    if (rc) return rc;
  }
  if (r->out.pB == NULL) {
    rc = compact_output_open(j, pSo, &r->out, pzErr);
    if (rc) return rc;
  }
  j->nBytesIn += nK + o->nVal;
  return sst_builder_add(r->out.pB, key->a, nK,
                         o->pVal ? o->pVal : (const uint8_t *)"",
                         (size_t)o->nVal, pzErr);
}

/*
** The writer of a part of a sorted batch (its runs strictly increasing,
** in disjoint ranges) that holds no range tombstone: every entry is the
** only version of its key and survives, so entries go straight to the
** sorted-file builder, without the per-key work of compact_run (versions,
** snapshot stripes, tombstone coverage), about a sixth of the CPU of
** writing a load. The part is a stretch of the batch's bytes, read once:
** each operation goes to the file being built for its run, so runs that
** interleave are written side by side, each into its own files, cut as
** compact_run cuts them (compact_cut_before). A run's keys increase along
** the batch, so its files from the two parts do not overlap either.
*/
static int writeDirect(Part *pt) {
  const ingest_plan *p = pt->pPlan;
  compact_job *j = &pt->j;
  RunOut aOut[INGEST_RUNS_MAX];
  const uint8_t *q = p->pOps, *pStop = p->pEnd;
  uint64_t seq = p->seq0;
  wcs_buf key = {0};
  int rc = WCS_OK, i, iRun = 0;
  sst_options so;
  memset(aOut, 0, sizeof aOut);
  compact_sst_options(vset_options(j->pVs), &so);
  if (pt->nPart == 2 && pt->iPart == 0) pStop = p->pSplit;
  if (pt->nPart == 2 && pt->iPart == 1) {
    q = p->pSplit;
    seq = p->seqSplit;
  }
  while (rc == WCS_OK && q < pStop) {
    Op o;
    q = opNext(q, p->pEnd, &o); /* checked by pass 1 */
    seq++;
    if (o.op == WAL_OP_RANGEDEL || o.op == WAL_OP_RANGEDEL_OPEN) {
      continue; /* empty ones: the others keep a batch from here */
    }
    if (p->nPrefix && !wcs_same_bytes(o.pKey, p->aRun[iRun].pFirst, p->nPrefix)) {
      for (iRun = 0; iRun < p->nRun - 1; iRun++) {
        if (wcs_same_bytes(o.pKey, p->aRun[iRun].pFirst, p->nPrefix)) break;
      }
    }
    rc = runOutAdd(j, &so, &aOut[iRun], &key, &o, seq - 1, &pt->zErr);
  }
  for (i = 0; i < INGEST_RUNS_MAX; i++) {
    if (rc == WCS_OK && aOut[i].out.pB) {
      rc = compact_output_finish(j, &aOut[i].out, NULL, &pt->zErr);
    }
    compact_output_clear(&aOut[i].out);
  }
  if (rc) compact_job_discard(j);
  wcs_buf_free(&key);
  return rc;
}

static void *partMain(void *pArg) {
  Part *pt = pArg;
  IngestIter it;
  if (pt->pPlan->bSorted && pt->pPlan->nDel == 0) {
    pt->rc = writeDirect(pt);
    return NULL;
  }
  /* tombstones go with a single part only (no split when there are any) */
  iiInit(&it, pt->pPlan, pt->iPart, pt->nPart);
  pt->rc = compact_run(&pt->j, &it.base, pt->pPlan->aDel, pt->pPlan->nDel,
                       &pt->zErr);
  iiClose(&it.base);
  return NULL;
}

/* Files by smallest key (runs written side by side finish out of order). */
static int cmpFile(const void *a, const void *b) {
  const wcs_fmeta *x = *(wcs_fmeta *const *)a, *y = *(wcs_fmeta *const *)b;
  return wcs_ikey_cmp(x->pSmallest, x->nSmallest, y->pSmallest, y->nSmallest);
}

int ingest_write(ingest_plan *p, const compact_job *j, wcs_fmeta ***paOut,
                 int *pnOut, uint64_t *pnBytes, char **pzErr) {
  Part a[2];
  int nPart = 1, k, i, n = 0, rc = WCS_OK;
  pthread_t th;
  wcs_fmeta **aOut = NULL;
  *paOut = NULL;
  *pnOut = 0;
  *pnBytes = 0;
  if (p->bSplit && p->nDel == 0 &&
      (size_t)(p->pEnd - p->pOps) >= INGEST_SPLIT_MIN &&
      sysconf(_SC_NPROCESSORS_ONLN) > 1) {
    nPart = 2;
  }
  for (k = 0; k < nPart; k++) {
    memset(&a[k], 0, sizeof a[k]);
    a[k].pPlan = p;
    a[k].j = *j;
    a[k].j.aOut = NULL;
    a[k].j.nOut = 0;
    a[k].iPart = k;
    a[k].nPart = nPart;
  }
  if (nPart == 2 && pthread_create(&th, NULL, partMain, &a[1]) != 0) {
    nPart = 1;
    a[0].nPart = 1;
  }
  partMain(&a[0]);
  if (nPart == 2) pthread_join(th, NULL);
  for (k = 0; k < nPart; k++) {
    if (a[k].rc && rc == WCS_OK) {
      rc = a[k].rc;
      *pzErr = a[k].zErr;
      a[k].zErr = NULL;
    }
    n += a[k].j.nOut;
  }
  if (rc == WCS_OK) {
    aOut = malloc(sizeof(wcs_fmeta *) * (size_t)(n ? n : 1));
    if (aOut == NULL) rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  if (rc == WCS_OK) {
    n = 0;
    for (k = 0; k < nPart; k++) {
      for (i = 0; i < a[k].j.nOut; i++) {
        fmeta_ref(a[k].j.aOut[i]);
        aOut[n++] = a[k].j.aOut[i];
        *pnBytes += a[k].j.aOut[i]->nBytes;
      }
    }
    qsort(aOut, (size_t)n, sizeof(wcs_fmeta *), cmpFile);
    *paOut = aOut;
    *pnOut = n;
  }
  for (k = 0; k < nPart; k++) {
    if (rc) {
      compact_job_discard(&a[k].j); /* a part that succeeded too */
    } else {
      compact_job_clear(&a[k].j);
    }
    free(a[k].zErr);
  }
  return rc;
}

/* ====================================================================
** Streaming: files written while the batch is still being filled
** ==================================================================== */

/* Longest run prefix a stream takes. */
#define INGEST_PREFIX_MAX 16

struct ingest_stream {
  compact_job j;
  sst_options so;
  uint64_t seq;   /* every entry's sequence number */
  size_t nPrefix; /* run prefix bytes (0: one run) */
  int nRun;
  uint8_t aPrefix[INGEST_RUNS_MAX][INGEST_PREFIX_MAX];
  RunOut aOut[INGEST_RUNS_MAX];
  wcs_buf aLast[INGEST_RUNS_MAX]; /* each run's last user key: the order
                                  ** is checked here, across file cuts and
                                  ** between a put and a delete of one key
                                  ** (one seq: the builder's check of
                                  ** internal keys would pass those) */
  int iRun; /* run of the last operation */
  wcs_buf key;
};

int ingest_stream_new(const compact_job *j, size_t nPrefix, uint64_t seq,
                      ingest_stream **pp) {
  ingest_stream *s;
  *pp = NULL;
  if (nPrefix > INGEST_PREFIX_MAX) return WCS_NOTFOUND;
  s = calloc(1, sizeof *s);
  if (s == NULL) return WCS_NOMEM;
  s->j = *j;
  s->j.aOut = NULL;
  s->j.nOut = 0;
  compact_sst_options(vset_options(j->pVs), &s->so);
  s->seq = seq;
  s->nPrefix = nPrefix;
  *pp = s;
  return WCS_OK;
}

/* The run of key k: a new one for a prefix not seen yet; -1 when there
** is no room for it or k is shorter than the prefix. */
static int streamRun(ingest_stream *s, const uint8_t *k, size_t n) {
  int i;
  if (s->nPrefix == 0) {
    s->nRun = 1;
    return 0;
  }
  if (n < s->nPrefix) return -1;
  if (s->nRun && wcs_same_bytes(k, s->aPrefix[s->iRun], s->nPrefix)) {
    return s->iRun;
  }
  for (i = 0; i < s->nRun; i++) {
    if (wcs_same_bytes(k, s->aPrefix[i], s->nPrefix)) return i;
  }
  if (s->nRun == INGEST_RUNS_MAX) return -1;
  memcpy(s->aPrefix[s->nRun], k, s->nPrefix);
  return s->nRun++;
}

int ingest_stream_add(ingest_stream *s, const uint8_t *p, size_t n,
                      size_t *pnUsed, char **pzErr) {
  const uint8_t *q = p, *pEnd = p + n;
  int rc = WCS_OK;
  while (rc == WCS_OK && q < pEnd) {
    Op o;
    size_t nOp = opDecode(q, pEnd, &o);
    int iRun;
    if (nOp == 0) {
      if (o.op > WAL_OP_RANGEDEL_OPEN) rc = WCS_NOTFOUND; /* not a batch op */
      break; /* else the operation is cut off: the rest comes later */
    }
    if (o.op != WAL_OP_PUT && o.op != WAL_OP_DELETE) {
      rc = WCS_NOTFOUND; /* range deletes are for ingest_write */
      break;
    }
    iRun = streamRun(s, o.pKey, (size_t)o.nKey);
    if (iRun < 0) {
      rc = WCS_NOTFOUND;
      break;
    }
    s->iRun = iRun;
    {
      wcs_buf *pLast = &s->aLast[iRun];
      if (pLast->n && wcs_ukey_cmp(o.pKey, (size_t)o.nKey, pLast->a,
                                   pLast->n - 1) <= 0) {
        rc = WCS_NOTFOUND; /* not strictly increasing */
        break;
      }
      /* n is the key's length + 1, so that an empty first key counts */
      if (o.nKey + 1 > pLast->nAlloc &&
          wcs_buf_reserve(pLast, (size_t)o.nKey + 1)) {
        rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
        break;
      }
      wcs_copy_short(pLast->a, o.pKey, (size_t)o.nKey);
      pLast->n = (size_t)o.nKey + 1;
    }
    INGEST_READ_AHEAD(q, pEnd);
    rc = runOutAdd(&s->j, &s->so, &s->aOut[iRun], &s->key, &o, s->seq, pzErr);
    if (rc == WCS_OK) q += nOp;
  }
  *pnUsed = (size_t)(q - p);
  return rc;
}

int ingest_stream_finish(ingest_stream *s, wcs_fmeta ***paOut, int *pnOut,
                         uint64_t *pnBytes, char **pzErr) {
  int rc = WCS_OK, i;
  wcs_fmeta **aOut = NULL;
  *paOut = NULL;
  *pnOut = 0;
  *pnBytes = 0;
  for (i = 0; i < s->nRun; i++) {
    if (rc == WCS_OK && s->aOut[i].out.pB) {
      rc = compact_output_finish(&s->j, &s->aOut[i].out, NULL, pzErr);
    }
    compact_output_clear(&s->aOut[i].out);
  }
  if (rc == WCS_OK) {
    aOut = malloc(sizeof(wcs_fmeta *) * (size_t)(s->j.nOut ? s->j.nOut : 1));
    if (aOut == NULL) rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  if (rc) {
    compact_job_discard(&s->j);
    return rc;
  }
  for (i = 0; i < s->j.nOut; i++) {
    fmeta_ref(s->j.aOut[i]);
    aOut[i] = s->j.aOut[i];
    *pnBytes += s->j.aOut[i]->nBytes;
  }
  qsort(aOut, (size_t)s->j.nOut, sizeof(wcs_fmeta *), cmpFile);
  *paOut = aOut;
  *pnOut = s->j.nOut;
  compact_job_clear(&s->j);
  return WCS_OK;
}

void ingest_stream_free(ingest_stream *s) {
  int i;
  if (s == NULL) return;
  for (i = 0; i < INGEST_RUNS_MAX; i++) {
    compact_output_clear(&s->aOut[i].out);
    wcs_buf_free(&s->aLast[i]);
  }
  compact_job_discard(&s->j);
  wcs_buf_free(&s->key);
  free(s);
}

/* ====================================================================
** Level choice
** ==================================================================== */

/*
** Does the key range from a's smallest key to b's largest (bInf: to the
** end of the key space) overlap the plan's [lo, hi]? For one file, a and
** b are that file. The low end is the version's test, fmeta_ends_before:
** a file ending at (lo, sentinel), a tombstone clipped at lo, holds
** nothing of lo, and the next file of its level may start there. The
** high end stays inclusive, unlike fmeta_overlaps's exclusive hi: the
** plan's hi is its largest point key, which a file starting at hi (even
** at (hi, sentinel), a tombstone from hi) overlaps, or a range
** tombstone's exclusive end, taken as inclusive too since the plan keeps
** one bound for both.
*/
static int overlaps(const wcs_fmeta *a, const wcs_fmeta *b, int bInf,
                    const ingest_range *r) {
  if (!r->bHiInf && wcs_ukey_cmp(a->pSmallest, a->nSmallest - WCS_IKEY_TRAILER,
                                 r->pHi, r->nHi) > 0) {
    return 0;
  }
  return bInf || !fmeta_ends_before(b, r->pLo, r->nLo);
}

int ingest_level(const wcs_version *v, const ingest_plan *p) {
  ingest_range r;
  r.pLo = p->pLo;
  r.nLo = p->nLo;
  r.pHi = p->pHi;
  r.nHi = p->nHi;
  r.bHiInf = p->bHiInf;
  return ingest_level_range(v, &r);
}

int ingest_level_range(const wcs_version *v, const ingest_range *r) {
  int i, j, iBest = 0;
  int abCompacting[WCS_NLEVEL];
  /* the range of a running compaction's inputs, which its outputs (in
  ** the level below its input level, or in it) may span: its ends by
  ** internal key, so of files ending at one user key pCHi is one that
  ** holds it if any does */
  const wcs_fmeta *pCLo = NULL, *pCHi = NULL;
  int bCInf = 0, bCOverlap;
  if (r->pLo == NULL) return 0; /* nothing (cannot happen: nOp > 0) */
  for (i = 0; i < WCS_NLEVEL; i++) {
    abCompacting[i] = 0;
    for (j = 0; j < v->anFile[i]; j++) {
      const wcs_fmeta *f = v->aaFile[i][j];
      if (!f->bCompacting) continue;
      abCompacting[i] = 1;
      if (pCLo == NULL ||
          wcs_ikey_cmp(f->pSmallest, f->nSmallest, pCLo->pSmallest,
                       pCLo->nSmallest) < 0) {
        pCLo = f;
      }
      if (f->bUnbounded) bCInf = 1;
      if (pCHi == NULL || wcs_ikey_cmp(f->pLargest, f->nLargest, pCHi->pLargest,
                                       pCHi->nLargest) > 0) {
        pCHi = f;
      }
    }
  }
  bCOverlap = pCLo && overlaps(pCLo, pCHi, bCInf, r);
  for (i = 0; i < WCS_NLEVEL; i++) {
    for (j = 0; j < v->anFile[i]; j++) {
      const wcs_fmeta *f = v->aaFile[i][j];
      if (overlaps(f, f, 0, r)) return iBest;
    }
    if (i > 0 && bCOverlap && (abCompacting[i] || abCompacting[i - 1])) {
      return iBest;
    }
    iBest = i;
  }
  return iBest;
}
