/*
** txn.c — transactions and mutations: SetCell, the delete variants,
** AddToCell/MergeToCell, ReadModifyWrite, CheckAndMutate, range deletes;
** savepoints; the atomic commit.
**
** How it works. A mutation is translated at once into storage operations
** (put, point delete, range delete, aggregate merge) on cell keys
** (cellkey.c) and appended to an op log. The first read through the
** transaction builds the overlay (overlay.c) from the log, and from then
** on each operation is applied to both, so reads see the transaction's
** writes. A savepoint is an offset into the log; rolling back to it cuts
** the log and, if the overlay is live, rebuilds it (rollbacks are rare,
** writes are not). A transaction that never reads (a bulk load) never
** builds the overlay: its log, in order, becomes the store batch.
**
** Commit takes the engine's commit lock, checks that no table written was
** altered or dropped meanwhile, and writes the overlay's net effect as ONE
** store batch: range deletes first, then point puts and deletes in key
** order, so a put after a range delete in the transaction survives it.
** Aggregate merges that are still unresolved (their base is the committed
** value) are folded into the latest committed value under the lock, so
** concurrent AddToCell never lose updates.
**
** WCS_TS_NOW is the transaction's time, one clock read at its first use
** (txn_now). A write-only transaction's log reaches the batch in key order
** when that changes nothing (batch_in_key_order, batch_sorted), so the
** memtable inserts each entry next to the previous one.
**
** The op log is written in the store's batch format (storage/wal.h): a
** gap of WAL_BATCH_HEADER bytes, then one record per operation:
**
**     WAL_OP_PUT      varint nKey | key | varint nVal | val
**     WAL_OP_DELETE   varint nKey | key
**     WAL_OP_RANGEDEL varint nStart | start | varint nEnd | end
**     LOG_OP_MERGE + eAgg  varint nKey | key | varint nOp | operand
**
** (merges only in the log, never in a batch). So a log of puts whose
** families' keys each increase (bOrdered) is a batch as it stands: when it
** is in key order (one family) or large enough for a bulk ingest (which
** takes each family's keys as one sorted run: the batch's run prefix is
** the family prefix), commit hands its buffer to the store batch
** (wcs_batch_adopt) instead of copying hundreds of megabytes into a
** second one. In-memory only; never stored.
**
** Prebuilt commit. Such a log, once TXN_PRE_START bytes long, is also
** handed to a store prebuild (wcs_prebuild in storage/wal.h): a second
** thread writes it into sorted files while the transaction goes on, fed
** every TXN_PRE_STEP bytes at a record boundary (log_reserve, before a
** record is written) and told to let go while the log's buffer moves
** (log_grow). Commit then only installs the files. The prebuild is
** dropped as soon as the log stops being such a batch (a delete, a range
** delete, a merge or a key out of order), when a rollback cuts the log,
** and at rollback; the store may also decline at commit, and then the log
** is committed as above. A bulk load in one transaction thus costs its
** COMMIT little more than a manifest edit.
*/
#include "engine/engine.h"
#include "storage/wal.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* A transaction keeps its op log's buffer and its last store batch for
** the next one up to this size; a bulk load's are freed at its end. */
#define TXN_KEEP_BYTES (64u << 20)

/* An op log record's first byte for an aggregate merge: this plus the
** family's WCS_AGG_* (above every batch operation code). */
#define LOG_OP_MERGE 0x10

/* An ordered log of several families at least this large goes to the
** store as it stands (interleaved runs); smaller ones are copied in key
** order, which suits the memtable. The store's default bulk-ingest size
** (nIngestBytes, nMemtable / 4). */
#define TXN_ADOPT_BYTES (16u << 20)

/* ------------------------------------------------------------------ */
/* aggregates                                                          */

int eng_agg_fold(int eAgg, const uint8_t *pBase, size_t nBase,
                 const uint8_t *pOp, size_t nOp, wcs_buf *pOut) {
  pOut->n = 0;
  if (eAgg == WCS_AGG_HLL) {
    if (pBase == NULL || nBase == 0) return wcs_buf_append(pOut, pOp, nOp);
    return eng_hll_merge(pBase, nBase, pOp, nOp, pOut);
  }
  if (nOp != 8) {
    return eng_err(WCS_CORRUPT_BKPT,
                   "aggregate operand of %zu bytes, "
                   "expected 8 (big-endian int64)",
                   nOp);
  }
  if (pBase == NULL) return wcs_buf_append(pOut, pOp, nOp);
  if (nBase != 8) {
    return eng_err(WCS_CORRUPT_BKPT,
                   "aggregate cell value of %zu bytes, "
                   "expected 8 (big-endian int64)",
                   nBase);
  }
  {
    int64_t a = (int64_t)wcs_get64be(pBase);
    int64_t b = (int64_t)wcs_get64be(pOp);
    int64_t r;
    if (eAgg == WCS_AGG_SUM)
      r = (int64_t)((uint64_t)a + (uint64_t)b);
    else if (eAgg == WCS_AGG_MIN)
      r = a < b ? a : b;
    else
      r = a > b ? a : b;
    if (wcs_buf_reserve(pOut, 8)) return WCS_NOMEM;
    wcs_put64be(pOut->a, (uint64_t)r);
    pOut->n = 8;
  }
  return WCS_OK;
}

/* ------------------------------------------------------------------ */
/* the op log                                                          */

/* Log bytes before a prebuild starts, and between offers of the log to
** it (see "Prebuilt commit" above). */
#define TXN_PRE_START TXN_ADOPT_BYTES
#define TXN_PRE_STEP  (1u << 20)

static void pre_stop(wcs_txn *t) {
  wcs_prebuild_abandon(t->pPre);
  t->pPre = NULL;
}

/* The log reached nPreAt: start the prebuild or offer it the log so far
** (at a record boundary: no record is being written), or give up on it
** for this transaction once the log is no longer a batch in key order. */
static void pre_step(wcs_txn *t) {
  if (!t->bOrdered || t->bHasMerge || !t->bNoRange) {
    pre_stop(t);
    t->nPreAt = SIZE_MAX;
    return;
  }
  if (t->pPre == NULL &&
      wcs_prebuild_start(t->pEng->db, ENG_PREFIX_BYTES, &t->pPre) != WCS_OK) {
    t->pPre = NULL;
    t->nPreAt = SIZE_MAX;
    return;
  }
  wcs_prebuild_offer(t->pPre, t->log.a, t->log.n);
  t->nPreAt = t->log.n + TXN_PRE_STEP;
}

/*
** Faulting the log in ahead. A bulk load writes hundreds of megabytes of
** op log, and each fresh 4 KiB page of it costs the writing thread a page
** fault (the kernel clears the page and maps it): in bench_sql's sorted
** load that was about a quarter of the module's time per row. Once a
** transaction's log passes TXN_FAULT_START bytes, a worker thread of the
** transaction keeps the pages up to TXN_FAULT_AHEAD bytes past the log's
** end faulted in (madvise MADV_POPULATE_WRITE, which maps pages without
** writing to them, so it never races with the bytes being written), told
** every TXN_FAULT_STEP bytes; the writer then finds its pages mapped. The
** worker lets go of the buffer while it moves (log_grow) and stops for
** good where the kernel has no such request (Linux before 5.14, or not
** Linux: there is no worker). It ends with the transaction (commit or
** rollback), so an idle connection keeps no thread.
*/
#define TXN_FAULT_START (16u << 20)
#define TXN_FAULT_STEP  (4u << 20)
#define TXN_FAULT_AHEAD (16u << 20)

typedef struct TxnFault {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv; /* work for the worker, or it went idle */
  uint8_t *pBase;    /* the log's buffer; NULL while it moves or is gone */
  size_t nDone;      /* bytes from pBase known to be mapped */
  size_t nWant;      /* map up to here */
  int bBusy;         /* the worker is in madvise on pBase */
  int bStop;         /* the transaction ends: the worker exits */
  int bBroken;       /* the kernel refused: nothing more to do */
} TxnFault;

#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
#define TXN_CAN_FAULT 1

static void *fault_main(void *pArg) {
  TxnFault *f = (TxnFault *)pArg;
  const uintptr_t mPage = 4095;
  pthread_mutex_lock(&f->mu);
  for (;;) {
    uint8_t *a;
    size_t lo, hi;
    uintptr_t x, y;
    int bOk = 1;
    while (!f->bStop &&
           (f->bBroken || f->pBase == NULL || f->nDone >= f->nWant)) {
      pthread_cond_wait(&f->cv, &f->mu);
    }
    if (f->bStop) break;
    a = f->pBase;
    lo = f->nDone;
    hi = f->nWant;
    f->bBusy = 1;
    pthread_mutex_unlock(&f->mu);
    /* whole pages: from the page holding byte lo (mapped again if it is,
    ** which changes nothing) to the last page that ends inside [0, hi) */
    x = (uintptr_t)(a + lo) & ~mPage;
    y = (uintptr_t)(a + hi) & ~mPage;
    if (y > x && madvise((void *)x, y - x, MADV_POPULATE_WRITE) != 0) {
      bOk = errno != EINVAL && errno != ENOSYS;
    }
    pthread_mutex_lock(&f->mu);
    f->bBusy = 0;
    if (!bOk) f->bBroken = 1;
    if (f->pBase == a && f->nDone < hi) f->nDone = hi;
    pthread_cond_broadcast(&f->cv);
  }
  pthread_mutex_unlock(&f->mu);
  return NULL;
}
#else
#define TXN_CAN_FAULT 0
#endif

/* The log passed nFaultAt: start the worker, or move its target. */
static void fault_step(wcs_txn *t) {
  TxnFault *f = t->pFault;
  t->nFaultAt = t->log.n + TXN_FAULT_STEP;
  if (!TXN_CAN_FAULT) {
    t->nFaultAt = SIZE_MAX;
    return;
  }
  if (f == NULL) {
    f = calloc(1, sizeof(*f));
    if (f == NULL) return;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->pBase = t->log.a;
    f->nDone = t->log.n;
#if TXN_CAN_FAULT
    if (pthread_create(&f->thread, NULL, fault_main, f) != 0) {
      pthread_cond_destroy(&f->cv);
      pthread_mutex_destroy(&f->mu);
      free(f);
      t->nFaultAt = SIZE_MAX;
      return;
    }
#endif
    t->pFault = f;
  }
  pthread_mutex_lock(&f->mu);
  if (f->bBroken) {
    t->nFaultAt = SIZE_MAX;
  } else if (f->pBase == t->log.a) {
    size_t nWant = t->log.n + TXN_FAULT_AHEAD;
    f->nWant = nWant < t->log.nAlloc ? nWant : t->log.nAlloc;
    pthread_cond_broadcast(&f->cv);
  }
  pthread_mutex_unlock(&f->mu);
}

/* The log's buffer is about to move or go: wait until the worker is out
** of it. */
static void fault_pause(wcs_txn *t) {
  TxnFault *f = t->pFault;
  if (f == NULL) return;
  pthread_mutex_lock(&f->mu);
  f->pBase = NULL;
  while (f->bBusy)
    pthread_cond_wait(&f->cv, &f->mu);
  pthread_mutex_unlock(&f->mu);
}

/* The log's buffer (moved, or new) is t->log.a: its first log.n bytes are
** written, so mapped. */
static void fault_resume(wcs_txn *t) {
  TxnFault *f = t->pFault;
  if (f == NULL) return;
  pthread_mutex_lock(&f->mu);
  f->pBase = t->log.a;
  f->nDone = t->log.n;
  f->nWant = t->log.n;
  pthread_mutex_unlock(&f->mu);
  t->nFaultAt = t->log.n; /* the next record tells it where to go */
}

static void fault_free(wcs_txn *t) {
  TxnFault *f = t->pFault;
  if (f == NULL) return;
  pthread_mutex_lock(&f->mu);
  f->bStop = 1;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
#if TXN_CAN_FAULT
  pthread_join(f->thread, NULL);
#endif
  pthread_cond_destroy(&f->cv);
  pthread_mutex_destroy(&f->mu);
  free(f);
  t->pFault = NULL;
}

/* log_reserve's way when the log is empty or full. The prebuild reading
** the log, and the worker faulting it in, let go of it while it moves. */
static int log_grow(wcs_txn *t, size_t nMore) {
  size_t n = t->log.n;
  int rc;
  if (t->pPre) wcs_prebuild_offer(t->pPre, NULL, 0);
  fault_pause(t);
  rc = wcs_buf_reserve(&t->log, WAL_BATCH_HEADER + nMore);
  fault_resume(t);
  if (t->pPre) wcs_prebuild_offer(t->pPre, t->log.a, n);
  if (rc == WCS_OK && t->log.n == 0) {
    memset(t->log.a, 0, WAL_BATCH_HEADER);
    t->log.n = WAL_BATCH_HEADER;
  }
  return rc;
}

/* Room for nMore bytes at the log's end, after the header gap. Inline
** while they fit (every record but the few that grow the log): a started
** log is never empty, it holds the header gap. */
static inline int log_reserve(wcs_txn *t, size_t nMore) {
  if (t->log.n >= t->nPreAt) pre_step(t);
  if (t->log.n >= t->nFaultAt) fault_step(t);
  if (t->log.n > 0 && nMore <= t->log.nAlloc - t->log.n) return WCS_OK;
  return log_grow(t, nMore);
}

/* The log record's first byte for op ('P', 'D', 'R' or 'M'). */
static uint8_t log_code(int op, int eAgg) {
  switch (op) {
  case 'P':
    return WAL_OP_PUT;
  case 'D':
    return WAL_OP_DELETE;
  case 'R':
    return WAL_OP_RANGEDEL;
  default:
    return (uint8_t)(LOG_OP_MERGE + eAgg);
  }
}

static int log_append(wcs_txn *t, int op, const void *pKey, size_t nKey,
                      const void *pVal, size_t nVal, int eAgg) {
  wcs_buf *b = &t->log;
  uint8_t *z;
  int rc = log_reserve(t, 1 + 2 * WCS_VARINT_MAX + nKey + nVal);
  if (rc) return rc;
  z = b->a + b->n;
  *z++ = log_code(op, eAgg);
  z += wcs_put_varint_fast(z, nKey);
  if (nKey) memcpy(z, pKey, nKey);
  z += nKey;
  if (op != 'D') {
    z += wcs_put_varint_fast(z, nVal);
    if (nVal) memcpy(z, pVal, nVal);
    z += nVal;
  }
  b->n = (size_t)(z - b->a);
  t->nOp++;
  return WCS_OK;
}

/* Decode the log record at p (pEnd: the log's end): *pOp is 'P', 'D',
** 'R' or 'M' (*peAgg its aggregate); returns the next record. */
static const uint8_t *log_next(const uint8_t *p, const uint8_t *pEnd, int *pOp,
                               int *peAgg, const uint8_t **ppKey,
                               uint64_t *pnKey, const uint8_t **ppVal,
                               uint64_t *pnVal) {
  int c = *p++;
  *peAgg = 0;
  switch (c) {
  case WAL_OP_PUT:
    *pOp = 'P';
    break;
  case WAL_OP_DELETE:
    *pOp = 'D';
    break;
  case WAL_OP_RANGEDEL:
    *pOp = 'R';
    break;
  default:
    *pOp = 'M';
    *peAgg = c - LOG_OP_MERGE;
    break;
  }
  p += wcs_get_varint_fast(p, pEnd, pnKey);
  *ppKey = p;
  p += *pnKey;
  *pnVal = 0;
  *ppVal = p;
  if (c != WAL_OP_DELETE) {
    p += wcs_get_varint_fast(p, pEnd, pnVal);
    *ppVal = p;
    p += *pnVal;
  }
  return p;
}

static int apply(Overlay *pOv, int op, const uint8_t *k, size_t nk,
                 const uint8_t *v, size_t nv, int eAgg) {
  switch (op) {
  case 'P':
    return ov_put(pOv, k, nk, v, nv);
  case 'D':
    return ov_delete(pOv, k, nk);
  case 'R':
    return ov_delete_range(pOv, k, nk, v, nv);
  default:
    return ov_merge(pOv, k, nk, eAgg, v, nv);
  }
}

/* Log and apply one storage operation. If applying fails the log entry is
** taken back so the log and the overlay stay in step. */
static int txn_op(wcs_txn *t, int op, const void *pKey, size_t nKey,
                  const void *pVal, size_t nVal, int eAgg) {
  size_t nLog = t->log.n;
  int rc = log_append(t, op, pKey, nKey, pVal, nVal, eAgg);
  if (op == 'M') t->bHasMerge = 1;
  if (op == 'R') t->bNoRange = 0;
  t->bOrdered = 0;
  if (rc == WCS_OK && t->bOvLive) {
    rc = apply(t->pOv, op, pKey, nKey, pVal, nVal, eAgg);
    if (rc != WCS_OK) {
      t->log.n = nLog;
      t->nOp--;
    }
  }
  return rc;
}

/* Walk the first nLog bytes of the log: call xOp for each operation and
** count them into t->nOp. */
static int log_walk(wcs_txn *t, size_t nLog, void *pCtx,
                    int (*xOp)(void *, int, const uint8_t *, size_t,
                               const uint8_t *, size_t, int)) {
  const uint8_t *p, *pEnd;
  int rc = WCS_OK;
  t->nOp = 0;
  /* an empty log may have no buffer: no offsets from its NULL pointer */
  if (nLog == 0) return WCS_OK;
  p = t->log.a + WAL_BATCH_HEADER;
  pEnd = t->log.a + nLog;
  while (rc == WCS_OK && p < pEnd) {
    uint64_t nk, nv;
    int op, eAgg;
    const uint8_t *k, *v;
    p = log_next(p, pEnd, &op, &eAgg, &k, &nk, &v, &nv);
    rc = xOp(pCtx, op, k, nk, v, nv, eAgg);
    t->nOp++;
  }
  return rc;
}

static int apply_cb(void *pCtx, int op, const uint8_t *k, size_t nk,
                    const uint8_t *v, size_t nv, int eAgg) {
  return apply(pCtx, op, k, nk, v, nv, eAgg);
}

static int count_cb(void *pCtx, int op, const uint8_t *k, size_t nk,
                    const uint8_t *v, size_t nv, int eAgg) {
  (void)pCtx, (void)op, (void)k, (void)nk, (void)v, (void)nv, (void)eAgg;
  return WCS_OK;
}

/* An empty log is in key order. */
static void order_reset(wcs_txn *t) {
  t->nPreAt = TXN_PRE_START;
  t->bOrdered = 1;
  t->bNoRange = 1;
  t->nStream = 0;
}

/* Note a put of key k (nk bytes, at log offset iOff) for bOrdered. */
static void order_note(wcs_txn *t, const uint8_t *k, size_t nk, size_t iOff) {
  int i;
  if (!t->bOrdered) return;
  for (i = 0; i < t->nStream; i++) {
    if (memcmp(t->aStreamPrefix[i], k, ENG_PREFIX_BYTES) == 0) break;
  }
  if (i == t->nStream) {
    if (i == ENG_TXN_STREAMS) {
      t->bOrdered = 0;
      return;
    }
    memcpy(t->aStreamPrefix[i], k, ENG_PREFIX_BYTES);
    t->nStream++;
  } else {
    const uint8_t *pLast = t->log.a + t->aStreamLast[i];
    size_t nLast = t->anStreamLast[i], n = nLast < nk ? nLast : nk;
    int c = memcmp(pLast, k, n);
    if (c > 0 || (c == 0 && nLast >= nk)) {
      t->bOrdered = 0;
      return;
    }
  }
  t->aStreamLast[i] = iOff;
  t->anStreamLast[i] = nk;
}

/* Cut the log back to nLog bytes, rebuilding the overlay if it is live. */
static int replay(wcs_txn *t, size_t nLog) {
  int rc;
  if (nLog < t->log.n && t->pPre) pre_stop(t); /* it read what goes */
  if (nLog < t->log.n) {
    /* the streams' last keys may be gone: start over when the log is
    ** emptied, give up key order otherwise (rare: a failed statement) */
    if (nLog == 0)
      order_reset(t);
    else
      t->bOrdered = 0;
  }
  t->log.n = nLog;
  if (!t->bOvLive) return log_walk(t, nLog, NULL, count_cb);
  ov_clear(t->pOv);
  rc = log_walk(t, nLog, t->pOv, apply_cb);
  if (rc) eng_err(rc, "out of memory rebuilding a transaction");
  return rc;
}

size_t wcs_txn_mark(const wcs_txn *t) {
  return t ? t->log.n : 0;
}

int wcs_txn_moment(wcs_txn *t, size_t iMark, wcs_moment **pp) {
  wcs_moment *m;
  int rc, nOp;
  if (pp) *pp = NULL;
  if (t == NULL || pp == NULL) {
    return eng_err(WCS_MISUSE, "wcs_txn_moment: a NULL argument");
  }
  if (iMark > t->log.n) {
    return eng_err(WCS_MISUSE,
                   "wcs_txn_moment: mark %llu is past the transaction's "
                   "writes (%llu bytes): rolled back since?",
                   (unsigned long long)iMark, (unsigned long long)t->log.n);
  }
  m = calloc(1, sizeof(*m));
  if (m == NULL) return eng_err(WCS_NOMEM, "out of memory");
  m->nRef = 1;
  m->pTxn = t;
  rc = ov_new(&m->pOv);
  nOp = t->nOp; /* (log_walk counts the operations it walks) */
  if (rc == WCS_OK) rc = log_walk(t, iMark, m->pOv, apply_cb);
  t->nOp = nOp;
  if (rc != WCS_OK) {
    eng_moment_unref(m);
    return eng_err(rc, "out of memory copying a transaction's writes");
  }
  *pp = m;
  return WCS_OK;
}

void eng_moment_unref(wcs_moment *m) {
  if (m && --m->nRef == 0) {
    ov_free(m->pOv);
    free(m);
  }
}

void wcs_moment_free(wcs_moment *m) {
  eng_moment_unref(m);
}

/* Build the overlay from the log (before the transaction's first read). */
static int materialize(wcs_txn *t) {
  int rc;
  if (t->bOvLive) return WCS_OK;
  ov_clear(t->pOv);
  t->bOvLive = 1;
  rc = log_walk(t, t->log.n, t->pOv, apply_cb);
  if (rc) {
    t->bOvLive = 0;
    return eng_err(rc, "out of memory building a transaction's view");
  }
  return WCS_OK;
}

/* ------------------------------------------------------------------ */
/* the transaction's clock and heat counts                             */

/* The time WCS_TS_NOW stands for in this transaction: one clock read at
** its first use, kept until commit or rollback. Every cell a transaction
** writes "now" gets the same timestamp, as every cell of one Bigtable
** MutateRow does; that is also one clock read per transaction instead of
** one per cell, and equal timestamps cost almost nothing on disk. */
static int64_t txn_now(wcs_txn *t) {
  if (!t->bNow) {
    t->iNow = eng_now(t->pEng);
    t->bNow = 1;
  }
  return t->iNow;
}

/*
** Heat counts of writes (SetCell) are handed to the statistics in
** batches, as a cursor's reads are (cursor.c): the pending count covers
** up to ENG_TXN_HEAT_BATCH rows of one table, and goes to the statistics
** under the key of the last of them (lastRow) when the batch is full,
** when a row of another table or of another bucket comes, and when the
** transaction ends (commit or rollback: a rolled-back write was still a
** write). Each flush learns the bucket its row was counted in
** (heatSpan); a row joins the batch only if it lies in that bucket too,
** so every write lands in the bucket of its own key however the rows are
** ordered, and the totals are exact. This keeps the clock read and the
** statistics lock out of the per-row path of a load.
*/
/* Rows written counted in the heat map at once, at most. */
#define ENG_TXN_HEAT_BATCH 64

/* Hand the pending heat count (writes of nHeatRow rows, the last lastRow)
** to the statistics. */
static void heat_flush(wcs_txn *t) {
  if (t->pHeatDef && t->nHeat) {
    eng_stats_count_span(t->pEng, t->pHeatDef, 1, t->lastRow.a, t->lastRow.n,
                         t->nHeat, &t->heatSpan);
  }
  t->pHeatDef = NULL;
  t->nHeat = 0;
  t->nHeatRow = 0;
}

/* Row pRow of pDef is about to become lastRow: flush the pending count
** unless the row can join its batch. Inline: it runs for every row a
** load writes. */
static inline __attribute__((always_inline)) void
heat_row(wcs_txn *t, const EngDef *pDef, const void *pRow, size_t nRow) {
  int bIn = eng_heat_span_has(&t->heatSpan, pDef, pRow, nRow);
  if (t->nHeat && (!bIn || !t->bHeatIn || t->pHeatDef != pDef ||
                   t->nHeatRow >= ENG_TXN_HEAT_BATCH)) {
    heat_flush(t); /* heatSpan is now the bucket of the batch's last row */
    bIn = eng_heat_span_has(&t->heatSpan, pDef, pRow, nRow);
  }
  if (t->nHeat == 0) {
    t->nHeatRow = 0;
    t->bHeatIn = 1;
  }
  t->bHeatIn = t->bHeatIn && bIn;
  t->nHeatRow++;
}

/* ------------------------------------------------------------------ */
/* begin / commit / rollback                                           */

static int txn_lock(wcs_txn *t) {
  if ((t->flags & WCS_TXN_EXCLUSIVE) && !t->bLocked) {
    pthread_mutex_lock(&t->pEng->commitMu);
    t->pEng->exclOwner = pthread_self();
    t->pEng->bExclHeld = 1;
    t->bLocked = 1;
  }
  return WCS_OK;
}

static void txn_unlock(wcs_txn *t) {
  if (t->bLocked) {
    t->pEng->bExclHeld = 0;
    t->bLocked = 0;
    pthread_mutex_unlock(&t->pEng->commitMu);
  }
}

/*
** The commit gate. A caller whose commit comes in two phases (the SQL
** module: SQLite's xSync, then xCommit after SQLite has committed and let
** go of its database lock) makes its commit visible only in the second.
** Between the two, another connection may already hold that lock and read
** the store as it was: a read-modify-write (UPDATE ... SET v = v + 1)
** would then build on a state the first commit is about to change, and
** one of the two updates would be lost. So a transaction whose precheck
** succeeded is counted in nGate until it commits or rolls back, and
** wcs_engine_await_commits() lets a reader that holds such a lock wait for
** those commits: never long, since the transactions counted have passed
** SQLite's lock on that database.
*/
static void gate_enter(wcs_txn *t) {
  wcs_engine *pEng = t->pEng;
  if (t->bGate) return;
  pthread_mutex_lock(&pEng->gateMu);
  t->pNextGate = pEng->pGate;
  pEng->pGate = t;
  atomic_fetch_add(&pEng->nGate, 1);
  t->bGate = 1;
  pthread_mutex_unlock(&pEng->gateMu);
}

static void gate_leave(wcs_txn *t) {
  wcs_engine *pEng = t->pEng;
  wcs_txn **pp;
  if (!t->bGate) return;
  pthread_mutex_lock(&pEng->gateMu);
  for (pp = &pEng->pGate; *pp; pp = &(*pp)->pNextGate) {
    if (*pp == t) {
      *pp = t->pNextGate;
      break;
    }
  }
  atomic_fetch_sub(&pEng->nGate, 1);
  t->bGate = 0;
  pthread_cond_broadcast(&pEng->gateCv);
  pthread_mutex_unlock(&pEng->gateMu);
}

void wcs_txn_gate_key(wcs_txn *t, uint64_t iKey) {
  int i;
  if (t == NULL || iKey == 0) return;
  /* (under gateMu: waiters read the keys of the transactions in flight,
  ** and a commit SQLite refused stays in flight while tables join) */
  pthread_mutex_lock(&t->pEng->gateMu);
  for (i = 0; i < t->nGateKey && t->aGateKey[i] != iKey; i++) {
  }
  if (t->nGateKey < 0 || i < t->nGateKey) {
    /* every key already, or this one */
  } else if (t->nGateKey == (int)(sizeof t->aGateKey / sizeof t->aGateKey[0])) {
    t->nGateKey = -1; /* too many to tell apart: holds up every waiter */
  } else {
    t->aGateKey[t->nGateKey++] = iKey;
  }
  pthread_mutex_unlock(&t->pEng->gateMu);
}

/* Commits in flight other than pMine's that a waiter with key iKey waits
** for: all (iKey 0), else those of transactions with that key or with
** none (keyless: they may be anyone's). gateMu held when bLocked. */
static int gate_count(wcs_engine *pEng, const wcs_txn *pMine, uint64_t iKey,
                      int bLocked) {
  int n = atomic_load(&pEng->nGate) - (pMine && pMine->bGate ? 1 : 0);
  const wcs_txn *t;
  if (n <= 0 || iKey == 0) return n;
  if (!bLocked) pthread_mutex_lock(&pEng->gateMu);
  n = 0;
  for (t = pEng->pGate; t; t = t->pNextGate) {
    int i, bMatch = t->nGateKey <= 0;
    if (t == pMine) continue;
    for (i = 0; i < t->nGateKey && !bMatch; i++) {
      bMatch = t->aGateKey[i] == iKey;
    }
    n += bMatch;
  }
  if (!bLocked) pthread_mutex_unlock(&pEng->gateMu);
  return n;
}

int wcs_engine_commits_in_flight(wcs_engine *pEng, const wcs_txn *pMine,
                                 uint64_t iKey) {
  return gate_count(pEng, pMine, iKey, 0);
}

int wcs_engine_await_commits(wcs_engine *pEng, const wcs_txn *pMine,
                             uint64_t iKey, int nMillis) {
  int bDone;
  struct timespec tEnd;
  if (gate_count(pEng, pMine, iKey, 0) <= 0) return 1;
  clock_gettime(CLOCK_MONOTONIC, &tEnd);
  tEnd.tv_sec += nMillis / 1000;
  tEnd.tv_nsec += (long)(nMillis % 1000) * 1000000L;
  if (tEnd.tv_nsec >= 1000000000L) {
    tEnd.tv_sec++;
    tEnd.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&pEng->gateMu);
  while (gate_count(pEng, pMine, iKey, 1) > 0 &&
         pthread_cond_timedwait(&pEng->gateCv, &pEng->gateMu, &tEnd) == 0) {
  }
  bDone = gate_count(pEng, pMine, iKey, 1) <= 0;
  pthread_mutex_unlock(&pEng->gateMu);
  return bDone;
}

int eng_txn_snapshot(wcs_txn *t, const wcs_snapshot **ppSnap) {
  int rc = txn_lock(t);
  if (rc == WCS_OK) rc = materialize(t);
  if (rc == WCS_OK && t->pSnap == NULL) {
    rc = wcs_snapshot_new(t->pEng->db, &t->pSnap);
    if (rc) return eng_err_db(t->pEng->db, rc, "taking a read snapshot");
  }
  *ppSnap = t->pSnap;
  return rc;
}

int wcs_txn_begin(wcs_engine *pEng, int flags, wcs_txn **ppTxn) {
  wcs_txn *t = calloc(1, sizeof(*t));
  int rc;
  *ppTxn = NULL;
  if (t == NULL) return eng_err(WCS_NOMEM, "out of memory");
  t->pEng = pEng;
  t->flags = flags;
  t->nFaultAt = TXN_FAULT_START;
  order_reset(t);
  rc = ov_new(&t->pOv);
  if (rc) {
    free(t);
    return eng_err(rc, "out of memory");
  }
  txn_lock(t);
  *ppTxn = t;
  return WCS_OK;
}

/*
** A commit made while cursors are open on the transaction: they read its
** snapshot merged with its overlay, which is what the commit has just
** made durable, so they keep both and go on reading exactly what they
** showed (a SQL statement still stepping when COMMIT runs must not lose
** the rows its own transaction wrote). The transaction starts over with
** an empty overlay. Out of memory, the overlay is cleared as before.
*/
typedef struct TxnKept {
  Overlay *pOv;          /* owned: the committed writes as cursors see them */
  wcs_snapshot *pSnap;   /* owned, may be NULL */
  struct TxnKept *pNext;
} TxnKept;

static void keep_for_cursors(wcs_txn *t) {
  TxnKept *k = malloc(sizeof(*k));
  Overlay *pNew = NULL;
  if (k == NULL) return;
  if (ov_new(&pNew) != WCS_OK) {
    free(k);
    return;
  }
  k->pOv = t->pOv;
  k->pSnap = t->pSnap;
  k->pNext = t->pKept;
  t->pKept = k;
  t->pOv = pNew;
  t->pSnap = NULL;
}

static void kept_free(wcs_txn *t) {
  while (t->pKept) {
    TxnKept *k = t->pKept;
    t->pKept = k->pNext;
    ov_free(k->pOv);
    if (k->pSnap) wcs_snapshot_free(t->pEng->db, k->pSnap);
    free(k);
  }
}

void eng_txn_cursor_closed(wcs_txn *t) {
  t->nCursor--;
  if (t->nCursor == 0 && t->pKept) kept_free(t);
}

/* Forget everything buffered; release the snapshot and the lock. */
static void txn_reset(wcs_txn *t) {
  int i;
  heat_flush(t);
  pre_stop(t);
  t->heatSpan.pDef = NULL; /* the def may go once the transaction ends */
  t->bHeatIn = 0;
  t->bNow = 0;
  fault_free(t);
  t->nFaultAt = TXN_FAULT_START;
  if (t->log.nAlloc > TXN_KEEP_BYTES) wcs_buf_free(&t->log);
  ov_clear(t->pOv);
  t->bOvLive = 0;
  t->bHasMerge = 0;
  t->log.n = 0;
  t->nOp = 0;
  t->nSave = 0;
  order_reset(t);
  for (i = 0; i < t->nDef; i++)
    eng_def_unref(t->pEng, t->apDef[i]);
  t->nDef = 0;
  if (t->pSnap) {
    wcs_snapshot_free(t->pEng->db, t->pSnap);
    t->pSnap = NULL;
  }
  gate_leave(t);
  t->nGateKey = 0;
  txn_unlock(t);
}

int wcs_txn_rollback(wcs_txn *t) {
  txn_reset(t);
  return WCS_OK;
}

void wcs_txn_free(wcs_txn *t) {
  if (t == NULL) return;
  txn_reset(t);
  kept_free(t);
  ov_free(t->pOv);
  wcs_batch_free(t->pBatch);
  wcs_buf_free(&t->log);
  wcs_buf_free(&t->lastRow);
  wcs_buf_free(&t->lastRowEsc);
  free(t->aSaveId);
  free(t->aSaveOff);
  free(t->aSaveOp);
  free(t->apDef);
  free(t);
}

static int batch_cb(void *pCtx, int op, const uint8_t *k, size_t nk,
                    const uint8_t *v, size_t nv, int eAgg) {
  wcs_batch *b = pCtx;
  (void)eAgg;
  switch (op) {
  case 'P':
    return wcs_batch_put(b, k, nk, v, nv);
  case 'D':
    return wcs_batch_delete(b, k, nk);
  case 'R':
    return wcs_batch_delete_range(b, k, nk, v, nv);
  default:
    return WCS_INTERNAL; /* merges go through the overlay */
  }
}

/*
** Commit in key order. A load in key order writes a row's families one
** after another (stats, meta, stats, meta, ...), so the log, although
** each family's keys increase, is not in key order. When the log holds
** only puts and every family's keys strictly increase (bOrdered), no two
** operations touch the same key and their order in the batch does not
** matter: the batch takes the families one at a time in prefix order,
** which is key order, so the memtable appends every entry after its
** last one instead of searching for its place.
*/
static int prefix_cmp(const void *a, const void *b) {
  return memcmp(a, b, ENG_PREFIX_BYTES);
}

static int batch_in_key_order(wcs_txn *t, wcs_batch *pBatch) {
  uint8_t aPre[ENG_TXN_STREAMS][ENG_PREFIX_BYTES];
  int i, rc = WCS_OK;
  memcpy(aPre, t->aStreamPrefix, sizeof(aPre));
  qsort(aPre, (size_t)t->nStream, ENG_PREFIX_BYTES, prefix_cmp);
  for (i = 0; rc == WCS_OK && i < t->nStream; i++) {
    const uint8_t *p = t->log.a + WAL_BATCH_HEADER;
    const uint8_t *pEnd = t->log.a + t->log.n;
    while (rc == WCS_OK && p < pEnd) {
      uint64_t nk, nv;
      const uint8_t *k, *v;
      assert(*p == WAL_OP_PUT);
      p++;
      p += wcs_get_varint_fast(p, pEnd, &nk);
      k = p;
      p += nk;
      p += wcs_get_varint_fast(p, pEnd, &nv);
      v = p;
      p += nv;
      if (memcmp(k, aPre[i], ENG_PREFIX_BYTES) == 0) {
        rc = wcs_batch_put(pBatch, k, nk, v, nv);
      }
    }
  }
  return rc;
}

/*
** A log of point operations in any order (a load in random key order)
** goes to the batch sorted by key (by its first 32 bytes: nearly key
** order), ties in log order. Each operation
** still gets a sequence number after every earlier operation on its key,
** so the later write wins as before; what changes is that the memtable
** receives the keys in order and finds each one's place from the
** previous one's (memtable.c, fingerFind) instead of from the top of the
** list, with fewer cache misses. A log with range deletes keeps its
** order: a range delete affects keys other than its own.
*/
typedef struct SortOp {
  uint64_t w[4];    /* key bytes 0..31, BE words, zero-padded */
  const uint8_t *p; /* the op record in the log */
} SortOp;

/* The key of the op record at p. */
static const uint8_t *op_key(const uint8_t *p, uint64_t *pnKey) {
  p++;
  p += wcs_get_varint_fast(p, p + WCS_VARINT_MAX, pnKey);
  return p;
}

/* The order of the batch: by the first 32 key bytes, then by position in
** the log. Equal keys have equal words, so they stay in log order, which
** is all correctness needs; keys that differ only after byte 32 also stay
** in log order, which costs the memtable a longer search for them but
** keeps this comparison to integers (no key decoding, no memcmp). */
static int sortop_cmp(const SortOp *a, const SortOp *b) {
  int i;
  for (i = 0; i < 4; i++) {
    if (a->w[i] != b->w[i]) return a->w[i] < b->w[i] ? -1 : 1;
  }
  return a->p < b->p ? -1 : (a->p > b->p);
}

/* Quicksort (median of three, insertion sort below 16 elements, the
** smaller side recursed so the depth stays O(log n)). */
static void sortops(SortOp *a, size_t n) {
  while (n > 16) {
    size_t i = 0, j = n - 1, m = n / 2;
    SortOp piv, tmp;
    if (sortop_cmp(&a[m], &a[0]) < 0) tmp = a[m], a[m] = a[0], a[0] = tmp;
    if (sortop_cmp(&a[j], &a[0]) < 0) tmp = a[j], a[j] = a[0], a[0] = tmp;
    if (sortop_cmp(&a[j], &a[m]) < 0) tmp = a[j], a[j] = a[m], a[m] = tmp;
    piv = a[m];
    for (;;) {
      while (sortop_cmp(&a[i], &piv) < 0)
        i++;
      while (sortop_cmp(&piv, &a[j]) < 0)
        j--;
      if (i >= j) break;
      tmp = a[i], a[i] = a[j], a[j] = tmp;
      i++;
      j--;
    }
    /* [0, j] <= piv <= [j+1, n) */
    if (j + 1 < n - j - 1) {
      sortops(a, j + 1);
      a += j + 1;
      n -= j + 1;
    } else {
      sortops(a + j + 1, n - j - 1);
      n = j + 1;
    }
  }
  {
    size_t i, k;
    for (i = 1; i < n; i++) {
      SortOp x = a[i];
      for (k = i; k > 0 && sortop_cmp(&x, &a[k - 1]) < 0; k--)
        a[k] = a[k - 1];
      a[k] = x;
    }
  }
}

static int batch_sorted(wcs_txn *t, wcs_batch *pBatch) {
  const uint8_t *p = t->log.a + WAL_BATCH_HEADER;
  const uint8_t *pEnd = t->log.a + t->log.n;
  SortOp *a = malloc(sizeof(SortOp) * (size_t)t->nOp);
  int i, n = 0, rc = WCS_OK;
  if (a == NULL) return log_walk(t, t->log.n, pBatch, batch_cb);
  while (p < pEnd && n < t->nOp) {
    uint64_t nk, nv;
    const uint8_t *k = op_key(p, &nk), *q;
    uint8_t a32[32] = {0};
    memcpy(a32, k, nk < 32 ? (size_t)nk : 32);
    a[n].w[0] = wcs_get64be(a32);
    a[n].w[1] = wcs_get64be(a32 + 8);
    a[n].w[2] = wcs_get64be(a32 + 16);
    a[n].w[3] = wcs_get64be(a32 + 24);
    a[n].p = p;
    n++;
    q = k + nk;
    if (*p != WAL_OP_DELETE) {
      q += wcs_get_varint_fast(q, pEnd, &nv);
      q += nv;
    }
    p = q;
  }
  sortops(a, (size_t)n);
  for (i = 0; rc == WCS_OK && i < n; i++) {
    uint64_t nk, nv = 0;
    const uint8_t *k = op_key(a[i].p, &nk), *v = k + nk;
    if (a[i].p[0] == WAL_OP_PUT) {
      v += wcs_get_varint_fast(v, pEnd, &nv);
      rc = wcs_batch_put(pBatch, k, nk, v, nv);
    } else {
      rc = wcs_batch_delete(pBatch, k, nk);
    }
  }
  free(a);
  return rc;
}

/* The first table t wrote that was altered or dropped since, or NULL. */
static const EngDef *stale_def(const wcs_txn *t) {
  int i;
  for (i = 0; i < t->nDef; i++) {
    if (t->apDef[i]->bStale) return t->apDef[i];
  }
  return NULL;
}

static int stale_err(const EngDef *d) {
  return eng_err(WCS_SCHEMA,
                 "table %s was altered or dropped during the "
                 "transaction; nothing was written",
                 d->zName);
}

/* An upper bound of the bytes of t's commit batch, which the store writes
** as one log record (at most WAL_MAX_RECORD): the log's, or the
** overlay's net cells once it was read, with room for each operation's
** framing. 0 for a load whose files were built as it grew (they are
** installed, not written as a record). */
static uint64_t batch_bound(const wcs_txn *t) {
  if (t->pPre && t->bOrdered && !t->bHasMerge && t->bNoRange) return 0;
  if (t->bOvLive) {
    return (uint64_t)ov_bytes(t->pOv) + 32 * (uint64_t)ov_count(t->pOv) +
           64 * (uint64_t)ov_range_count(t->pOv);
  }
  return (uint64_t)t->log.n + 16 * (uint64_t)t->nOp;
}

int wcs_txn_precheck(wcs_txn *t) {
  const EngDef *d;
  uint64_t nBound;
  if (t == NULL) return WCS_MISUSE;
  if (t->log.n == 0) return WCS_OK; /* its commit writes nothing */
  d = stale_def(t);
  if (d) return stale_err(d);
  nBound = batch_bound(t);
  if (nBound > WAL_MAX_RECORD) {
    /* refused here, where the SQL layer can still fail the COMMIT */
    return eng_err(WCS_TOOBIG,
                   "the transaction holds about %llu MiB of changes, and the "
                   "store commits a transaction as one log record of at most "
                   "2 GiB: split it into smaller transactions (a load that "
                   "inserts in key order, into one family or several, is not "
                   "limited)",
                   (unsigned long long)(nBound >> 20));
  }
  gate_enter(t);
  return WCS_OK;
}

int wcs_txn_commit(wcs_txn *t) {
  wcs_engine *pEng = t->pEng;
  wcs_batch *pBatch = NULL;
  wcs_buf merged = {0};
  int rc = WCS_OK, bLocked, bDone = 0;
  const EngDef *pStale;
  OvNode *n;
  OvRange *r;

  if (t->log.n == 0) {
    txn_reset(t);
    return WCS_OK;
  }
  heat_flush(t); /* it may read the table: not under the commit lock */
  if (t->bHasMerge) {
    /* merges fold into committed values: that needs the net effect */
    rc = materialize(t);
    if (rc) {
      txn_reset(t);
      return rc;
    }
  }
  bLocked = eng_commit_lock(pEng);
  pStale = stale_def(t);
  if (pStale) rc = stale_err(pStale);
  if (rc == WCS_OK) {
    if (t->pBatch) {
      pBatch = t->pBatch;
      t->pBatch = NULL;
      wcs_batch_clear(pBatch);
    } else {
      rc = wcs_batch_new(&pBatch);
    }
  }
  if (rc == WCS_OK && t->pPre && t->bOrdered && !t->bHasMerge && t->bNoRange) {
    /* files built from the log while it grew: install them, unless the
    ** store declines (then the log is committed as below) */
    wcs_prebuild *pPre = t->pPre;
    t->pPre = NULL;
    rc = wcs_prebuild_commit(pPre, t->log.a, t->log.n, t->nOp);
    if (rc == WCS_OK)
      bDone = 1;
    else if (rc == WCS_NOTFOUND)
      rc = WCS_OK;
    else
      rc = eng_err_db(pEng->db, rc, "committing a transaction");
    if (rc || bDone) goto write;
  }
  if (rc == WCS_OK && !t->bOvLive) {
    /* never read: the log, in order, is the batch (a store batch applies
    ** its operations in order, later ones winning) */
    if (t->bOrdered && (t->nStream <= 1 || t->log.n >= TXN_ADOPT_BYTES)) {
      /* only puts, already in the batch format: no copy */
      rc = wcs_batch_adopt(pBatch, &t->log, t->nOp,
                           t->nStream > 1 ? ENG_PREFIX_BYTES : 0);
    } else if (t->bOrdered)
      rc = batch_in_key_order(t, pBatch);
    else if (!t->bOrdered && t->bNoRange && t->nOp > 1)
      rc = batch_sorted(t, pBatch);
    else
      rc = log_walk(t, t->log.n, pBatch, batch_cb);
    goto write;
  }
  for (r = ov_range_first(t->pOv); rc == WCS_OK && r; r = ov_range_next(r)) {
    const uint8_t *s, *e;
    size_t ns, ne;
    ov_range_bounds(r, &s, &ns, &e, &ne);
    rc = wcs_batch_delete_range(pBatch, s, ns, e, ne);
  }
  for (n = ov_first(t->pOv); rc == WCS_OK && n; n = ov_next(n)) {
    size_t nk, nv;
    const uint8_t *k = ov_node_key(n, &nk);
    const uint8_t *v = ov_node_val(n, &nv);
    switch (ov_node_kind(n)) {
    case OV_PUT:
      rc = wcs_batch_put(pBatch, k, nk, v, nv);
      break;
    case OV_DEL:
      rc = wcs_batch_delete(pBatch, k, nk);
      break;
    case OV_MERGE: {
      void *pBase = NULL;
      size_t nBase = 0;
      rc = wcs_db_get(pEng->db, NULL, k, nk, &pBase, &nBase);
      if (rc) {
        rc = eng_err_db(pEng->db, rc, "reading an aggregate cell");
        break;
      }
      rc = eng_agg_fold(ov_node_agg(n), pBase, nBase, v, nv, &merged);
      wcs_free(pBase);
      if (rc == WCS_OK) rc = wcs_batch_put(pBatch, k, nk, merged.a, merged.n);
      break;
    }
    default:
      break;
    }
  }
write:
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory building the batch");
  if (rc == WCS_OK && !bDone) {
    rc = wcs_db_write(pEng->db, pBatch);
    if (rc) rc = eng_err_db(pEng->db, rc, "committing a transaction");
  }
  eng_commit_unlock(pEng, bLocked);
  /* keep the batch's buffer for the next commit unless it is large */
  if (pBatch && wcs_batch_bytes(pBatch) <= TXN_KEEP_BYTES && !t->pBatch) {
    t->pBatch = pBatch;
  } else {
    wcs_batch_free(pBatch);
  }
  wcs_buf_free(&merged);
  if (rc == WCS_OK && t->nCursor > 0 && t->bOvLive) keep_for_cursors(t);
  txn_reset(t);
  return rc;
}

/* ------------------------------------------------------------------ */
/* savepoints                                                          */

int wcs_txn_savepoint(wcs_txn *t, int iSave) {
  int i;
  if (iSave < 0) return eng_err(WCS_MISUSE, "negative savepoint number");
  /* savepoint(N) discards any savepoint >= N, then records N */
  for (i = 0; i < t->nSave && t->aSaveId[i] < iSave; i++) {
  }
  t->nSave = i;
  {
    int *a = realloc(t->aSaveId, (size_t)(i + 1) * sizeof(int));
    size_t *b;
    int *c;
    if (a == NULL) return eng_err(WCS_NOMEM, "out of memory");
    t->aSaveId = a;
    b = realloc(t->aSaveOff, (size_t)(i + 1) * sizeof(size_t));
    if (b == NULL) return eng_err(WCS_NOMEM, "out of memory");
    t->aSaveOff = b;
    c = realloc(t->aSaveOp, (size_t)(i + 1) * sizeof(int));
    if (c == NULL) return eng_err(WCS_NOMEM, "out of memory");
    t->aSaveOp = c;
  }
  t->aSaveId[i] = iSave;
  t->aSaveOff[i] = t->log.n;
  t->aSaveOp[i] = t->nOp;
  t->nSave = i + 1;
  return WCS_OK;
}

int wcs_txn_rollback_to(wcs_txn *t, int iSave) {
  int i, rc;
  for (i = 0; i < t->nSave && t->aSaveId[i] < iSave; i++) {
  }
  if (i == 0 && (t->nSave == 0 || t->aSaveId[0] != iSave)) {
    /* SQLite may roll back to a savepoint opened before the vtab joined
    ** the transaction (below every one recorded, or none is): that means
    ** "everything", and no recorded savepoint is left */
    t->nSave = 0;
    return replay(t, 0);
  }
  if (i == t->nSave) return WCS_OK; /* above all: nothing was written since */
  rc = replay(t, t->aSaveOff[i]);
  t->nSave = i + 1;
  return rc;
}

int wcs_txn_release(wcs_txn *t, int iSave) {
  int i;
  for (i = 0; i < t->nSave && t->aSaveId[i] < iSave; i++) {
  }
  t->nSave = i;
  return WCS_OK;
}

int wcs_txn_count(const wcs_txn *t) {
  return t->nOp;
}
size_t wcs_txn_bytes(const wcs_txn *t) {
  return t->log.n + ov_bytes(t->pOv);
}

/* ------------------------------------------------------------------ */
/* mutations                                                           */

/* txn_table's search and first use of pDef in the transaction. */
static int txn_add_def(wcs_txn *t, EngDef *pDef) {
  int i;
  for (i = 0; i < t->nDef; i++) {
    if (t->apDef[i] == pDef) return WCS_OK;
  }
  {
    EngDef **a = realloc(t->apDef, (size_t)(t->nDef + 1) * sizeof(EngDef *));
    if (a == NULL) return eng_err(WCS_NOMEM, "out of memory");
    t->apDef = a;
  }
  eng_def_ref(t->pEng, pDef);
  t->apDef[t->nDef++] = pDef;
  return WCS_OK;
}

/* Check the handle is current and remember its def for commit. Inline for
** the write path, where the def is nearly always the one written last. */
static inline int txn_table(wcs_txn *t, wcs_table *pTab) {
  EngDef *pDef;
  if (t == NULL || pTab == NULL) {
    return eng_err(WCS_MISUSE, "a NULL %s",
                   t == NULL ? "transaction" : "table");
  }
  pDef = pTab->pDef;
  if (pTab->pEng != t->pEng) {
    return eng_err(WCS_MISUSE, "table %s belongs to another engine",
                   pDef->zName);
  }
  if (pDef->bStale) {
    return eng_err(WCS_SCHEMA, "table %s was altered or dropped; reopen it",
                   pDef->zName);
  }
  txn_lock(t);
  if (t->nDef > 0 && t->apDef[t->nDef - 1] == pDef) return WCS_OK;
  return txn_add_def(t, pDef);
}

/* Common checks of a cell mutation: table, row, family, qualifier, ts.
** Always inline: SetCell runs them for every cell it writes, and the call
** (nine arguments, three on the stack) cost as much as the checks. */
static inline __attribute__((always_inline)) int
cell_target(wcs_txn *t, wcs_table *pTab, const void *pRow, size_t nRow,
            const char *zFamily, const void *pQual, size_t nQual, int64_t *piTs,
            EngFamily **ppFam) {
  /* the limits are tested here; the eng_check_* calls name the problem */
  int rc = txn_table(t, pTab);
  if (rc == WCS_OK) rc = eng_check_bytes(pRow, nRow, "the row key");
  if (rc == WCS_OK) rc = eng_check_bytes(pQual, nQual, "the qualifier");
  if (rc == WCS_OK && (nRow == 0 || nRow > WCS_MAX_ROW_KEY)) {
    rc = eng_check_row(pRow, nRow);
  }
  if (rc == WCS_OK) {
    /* by address first (inline), then by name */
    *ppFam = eng_family_at(pTab->pDef, zFamily, NULL);
    if (*ppFam == NULL) *ppFam = eng_family(pTab->pDef, zFamily, NULL);
    if (*ppFam == NULL) rc = WCS_ERROR;
  }
  if (rc == WCS_OK && pQual != NULL && nQual > WCS_MAX_QUALIFIER) {
    rc = eng_check_qual(pRow, nRow, pQual, nQual);
  }
  if (rc == WCS_OK && piTs) {
    if (*piTs == WCS_TS_NOW) *piTs = txn_now(t);
    if ((uint64_t)*piTs > ENG_TS_MAX) rc = eng_check_ts(*piTs);
  }
  return rc;
}

static int mismatch(const EngDef *pDef, const EngFamily *f, const char *zOp) {
  return eng_err(WCS_MISMATCH,
                 "column family type mismatch: %s on %s "
                 "family %s of table %s",
                 zOp, f->eAgg ? "aggregate" : "non-aggregate", f->zName,
                 pDef->zName);
}

/* Strings up to this many bytes (qualifiers, mostly) are escaped byte by
** byte; longer ones by memchr between 00 bytes. */
#define ESC_SHORT 16

/* Bytes esc(p) takes. */
static size_t esc_len(const uint8_t *p, size_t n) {
  size_t nZero = 0;
  const uint8_t *q = p, *pEnd = p + n;
  if (n >= 1 && n <= ESC_SHORT && !wcs_has_zero(p, n)) return n;
  if (n <= ESC_SHORT) {
    for (; q < pEnd; q++)
      nZero += *q == 0;
    return n + nZero;
  }
  while (q < pEnd && (q = memchr(q, 0, (size_t)(pEnd - q))) != NULL) {
    nZero++;
    q++;
  }
  return n + nZero;
}

/* Copy the n bytes at p to z if none of them is 00 (nothing to escape,
** the usual row key); 0 if one is, with z's bytes undefined. One pass of
** whole words, each tested as it is copied ("has a zero byte", exact as a
** yes or no), the last one overlapping the bytes before it. */
static inline int copy_if_no_zero(uint8_t *z, const uint8_t *p, size_t n) {
  const uint64_t k1 = 0x0101010101010101ULL, kH = 0x8080808080808080ULL;
  uint64_t x, acc = 0;
  size_t i;
  if (n < 8) {
    if (wcs_has_zero(p, n)) return 0;
    wcs_copy_short(z, p, n);
    return 1;
  }
  for (i = 0; i + 8 < n; i += 8) {
    memcpy(&x, p + i, 8);
    acc |= (x - k1) & ~x & kH;
    memcpy(z + i, &x, 8);
  }
  memcpy(&x, p + n - 8, 8);
  acc |= (x - k1) & ~x & kH;
  memcpy(z + n - 8, &x, 8);
  return acc == 0;
}

/* Write esc(p) 00 01 at z; returns the end. */
static uint8_t *esc_term_at(uint8_t *z, const uint8_t *p, size_t n) {
  const uint8_t *pEnd = p + n;
  if (copy_if_no_zero(z, p, n)) {
    z += n;
    *z++ = 0x00;
    *z++ = 0x01;
    return z;
  }
  if (n <= ESC_SHORT) {
    for (; p < pEnd; p++) {
      *z++ = *p;
      if (*p == 0) *z++ = 0xFF;
    }
    p = pEnd;
  }
  while (p < pEnd) {
    const uint8_t *q = memchr(p, 0, (size_t)(pEnd - p));
    size_t nRun = q ? (size_t)(q - p) : (size_t)(pEnd - p);
    memcpy(z, p, nRun);
    z += nRun;
    p += nRun;
    if (q) {
      *z++ = 0x00;
      *z++ = 0xFF;
      p++;
    }
  }
  *z++ = 0x00;
  *z++ = 0x01;
  return z;
}

/* Make lastRowEsc hold esc(row) 00 01 for this row: a row's cells are
** usually written one after another, so its escaping is done once. */
static int row_escaped(wcs_txn *t, const EngDef *pDef, const void *pRow,
                       size_t nRow) {
  int rc = WCS_OK;
  if (t->lastRow.n == nRow && t->lastRowEsc.n &&
      wcs_same_bytes(t->lastRow.a, pRow, nRow)) {
    if (t->pHeatDef != pDef) {
      /* the same row key in another table (or nothing pending): a batch
      ** of its own */
      heat_flush(t);
      heat_row(t, pDef, pRow, nRow);
    }
    return WCS_OK;
  }
  heat_row(t, pDef, pRow, nRow);
  /* on failure lastRow and lastRowEsc stay as they were: the pending heat
  ** count goes under the row it counted */
  if (nRow > t->lastRow.nAlloc - t->lastRow.n) {
    rc = wcs_buf_reserve(&t->lastRow, nRow);
  }
  if (rc == WCS_OK && 2 * nRow + 2 > t->lastRowEsc.nAlloc - t->lastRowEsc.n) {
    rc = wcs_buf_reserve(&t->lastRowEsc, 2 * nRow + 2);
  }
  if (rc == WCS_OK) {
    wcs_copy_short(t->lastRow.a, pRow, nRow);
    t->lastRow.n = nRow;
    t->lastRowEsc.n =
        (size_t)(esc_term_at(t->lastRowEsc.a, pRow, nRow) - t->lastRowEsc.a);
  }
  return rc;
}

/*
** SetCell. The cell key is built straight into the op log (the record
** of log_append, without a key buffer of its own), with the row's
** escaping reused from the previous cell of the same row.
*/
int wcs_txn_set_cell(wcs_txn *t, wcs_table *pTab, const void *pRow, size_t nRow,
                     const char *zFamily, const void *pQual, size_t nQual,
                     int64_t iTs, const void *pVal, size_t nVal) {
  EngFamily *f;
  EngDef *pDef;
  const uint8_t *q = pQual ? pQual : (const uint8_t *)"";
  size_t nKey, nEsc, nLog;
  uint8_t *z, *pKey;
  int rc = cell_target(t, pTab, pRow, nRow, zFamily, pQual, nQual, &iTs, &f);
  if (rc) return rc; /* (t and pTab may be NULL) */
  pDef = pTab->pDef;
  nLog = t->log.n;
  rc = eng_check_bytes(pVal, nVal, "the value");
  if (rc == WCS_OK && nVal > WCS_MAX_VALUE) {
    rc = eng_check_value(pRow, nRow, f->zName, q, nQual, nVal);
  }
  if (rc == WCS_OK && f->eAgg) rc = mismatch(pDef, f, "SetCell");
  if (rc == WCS_OK) rc = row_escaped(t, pDef, pRow, nRow);
  if (rc == WCS_OK) {
    nEsc = esc_len(q, nQual);
    nKey = ENG_PREFIX_BYTES + t->lastRowEsc.n + nEsc + 2 + ENG_TS_BYTES;
    rc = log_reserve(t, 1 + 2 * WCS_VARINT_MAX + nKey + nVal);
  }
  if (rc == WCS_OK) {
    z = t->log.a + t->log.n;
    *z++ = WAL_OP_PUT;
    z += wcs_put_varint_fast(z, nKey);
    pKey = z;
    z[0] = (uint8_t)(pDef->iTid >> 24);
    z[1] = (uint8_t)(pDef->iTid >> 16);
    z[2] = (uint8_t)(pDef->iTid >> 8);
    z[3] = (uint8_t)pDef->iTid;
    z[4] = (uint8_t)(f->iFid >> 8);
    z[5] = (uint8_t)f->iFid;
    z += ENG_PREFIX_BYTES;
    wcs_copy_short(z, t->lastRowEsc.a, t->lastRowEsc.n);
    z += t->lastRowEsc.n;
    if (nEsc == nQual) {
      wcs_copy_short(z, q, nQual); /* nothing to escape */
      z += nQual;
      *z++ = 0x00;
      *z++ = 0x01;
    } else {
      z = esc_term_at(z, q, nQual);
    }
    wcs_put64be(z, eng_ts_invert(iTs));
    z += ENG_TS_BYTES;
    assert((size_t)(z - pKey) == nKey);
    z += wcs_put_varint_fast(z, nVal);
    wcs_copy_short(z, pVal, nVal);
    z += nVal;
    t->log.n = (size_t)(z - t->log.a);
    t->nOp++;
    if (t->bOvLive) {
      rc = ov_put(t->pOv, pKey, nKey, z - nVal, nVal);
      if (rc != WCS_OK) {
        t->log.n = nLog;
        t->nOp--;
      }
    }
    if (rc == WCS_OK) order_note(t, pKey, nKey, (size_t)(pKey - t->log.a));
  }
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
  if (rc == WCS_OK) {
    /* counted when the row changes or the transaction ends */
    t->pHeatDef = pDef;
    t->nHeat++;
  }
  return rc;
}

/* The key range [start, end) of a row in one family, or of one column of
** it (pQual not NULL). */
static int row_span(wcs_buf *pS, wcs_buf *pE, const EngDef *pDef,
                    const EngFamily *f, const void *pRow, size_t nRow,
                    const void *pQual, size_t nQual) {
  int rc;
  pS->n = 0;
  rc = eng_put_prefix(pS, pDef->iTid, f->iFid);
  if (rc == WCS_OK) rc = eng_escape_term(pS, pRow, nRow);
  if (rc == WCS_OK && pQual) rc = eng_escape_term(pS, pQual, nQual);
  if (rc == WCS_OK) {
    pE->n = 0;
    rc = wcs_buf_append(pE, pS->a, pS->n);
    if (rc == WCS_OK) pE->a[pE->n - 1] = 0x02; /* 00 01 -> 00 02 */
  }
  return rc;
}

int wcs_txn_delete_cells(wcs_txn *t, wcs_table *pTab, const void *pRow,
                         size_t nRow, const char *zFamily, const void *pQual,
                         size_t nQual, int64_t iStartTs, int64_t iEndTs) {
  EngFamily *f;
  wcs_buf s = {0}, e = {0};
  int rc = cell_target(t, pTab, pRow, nRow, zFamily, pQual, nQual, NULL, &f);
  if (rc == WCS_OK && (iStartTs < 0 || iEndTs < 0)) {
    rc = eng_err(WCS_RANGE, "negative timestamp in a delete time range");
  }
  if (rc == WCS_OK && iEndTs != 0 && iEndTs <= iStartTs) {
    rc = eng_err(WCS_RANGE,
                 "empty delete time range [%lld, %lld) in family '%s': the "
                 "end must be above the start, or 0 for no upper bound",
                 (long long)iStartTs, (long long)iEndTs, zFamily);
  }
  if (rc == WCS_OK) {
    rc = row_span(&s, &e, pTab->pDef, f, pRow, nRow, pQual ? pQual : "", nQual);
  }
  if (rc == WCS_OK && iEndTs != 0) {
    /* ts in [start, end) <=> ~ts in [~(end-1), ~start] */
    size_t n = s.n;
    rc = wcs_buf_reserve(&s, 8);
    if (rc == WCS_OK) {
      wcs_put64be(s.a + n, eng_ts_invert(iEndTs - 1));
      s.n = n + 8;
    }
  }
  if (rc == WCS_OK && iStartTs != 0) {
    /* end = column prefix | ~start | 00 (just past ~start) */
    e.a[e.n - 1] = 0x01;
    rc = wcs_buf_reserve(&e, 9);
    if (rc == WCS_OK) {
      wcs_put64be(e.a + e.n, eng_ts_invert(iStartTs));
      e.a[e.n + 8] = 0x00;
      e.n += 9;
    }
  }
  if (rc == WCS_OK) rc = txn_op(t, 'R', s.a, s.n, e.a, e.n, 0);
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
  wcs_buf_free(&s);
  wcs_buf_free(&e);
  return rc;
}

int wcs_txn_delete_family(wcs_txn *t, wcs_table *pTab, const void *pRow,
                          size_t nRow, const char *zFamily) {
  EngFamily *f;
  wcs_buf s = {0}, e = {0};
  int rc = cell_target(t, pTab, pRow, nRow, zFamily, NULL, 0, NULL, &f);
  if (rc == WCS_OK) rc = row_span(&s, &e, pTab->pDef, f, pRow, nRow, NULL, 0);
  if (rc == WCS_OK) rc = txn_op(t, 'R', s.a, s.n, e.a, e.n, 0);
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
  wcs_buf_free(&s);
  wcs_buf_free(&e);
  return rc;
}

int wcs_txn_delete_row(wcs_txn *t, wcs_table *pTab, const void *pRow,
                       size_t nRow) {
  wcs_buf s = {0}, e = {0};
  int rc = txn_table(t, pTab), i;
  if (rc == WCS_OK) rc = eng_check_bytes(pRow, nRow, "the row key");
  if (rc == WCS_OK) rc = eng_check_row(pRow, nRow);
  for (i = 0; rc == WCS_OK && i < pTab->pDef->nFam; i++) {
    rc =
        row_span(&s, &e, pTab->pDef, &pTab->pDef->aFam[i], pRow, nRow, NULL, 0);
    if (rc == WCS_OK) rc = txn_op(t, 'R', s.a, s.n, e.a, e.n, 0);
  }
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
  wcs_buf_free(&s);
  wcs_buf_free(&e);
  return rc;
}

/* Fold operand pOp (already in the family's state form) into a cell. */
static int agg_op(wcs_txn *t, wcs_table *pTab, const void *pRow, size_t nRow,
                  EngFamily *f, const void *pQual, size_t nQual, int64_t iTs,
                  const void *pOp, size_t nOp) {
  wcs_buf k = {0};
  int rc = eng_cell_key(&k, pTab->pDef->iTid, f->iFid, pRow, nRow, pQual, nQual,
                        iTs);
  if (rc == WCS_OK) rc = txn_op(t, 'M', k.a, k.n, pOp, nOp, f->eAgg);
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
  if (rc == WCS_OK) {
    eng_stats_count(t->pEng, pTab->pDef, 1, pRow, nRow, 1);
  }
  wcs_buf_free(&k);
  return rc;
}

int wcs_txn_add_to_cell(wcs_txn *t, wcs_table *pTab, const void *pRow,
                        size_t nRow, const char *zFamily, const void *pQual,
                        size_t nQual, int64_t iTs, int64_t iValue) {
  EngFamily *f;
  uint8_t a[8];
  int rc = cell_target(t, pTab, pRow, nRow, zFamily, pQual, nQual, &iTs, &f);
  if (rc) return rc;
  if (f->eAgg == WCS_AGG_NONE) return mismatch(pTab->pDef, f, "AddToCell");
  wcs_put64be(a, (uint64_t)iValue);
  if (f->eAgg == WCS_AGG_HLL) {
    wcs_buf op = {0};
    rc = eng_hll_single(a, 8, &op);
    if (rc == WCS_OK) {
      rc = agg_op(t, pTab, pRow, nRow, f, pQual, nQual, iTs, op.a, op.n);
    }
    wcs_buf_free(&op);
    return rc;
  }
  return agg_op(t, pTab, pRow, nRow, f, pQual, nQual, iTs, a, 8);
}

int wcs_txn_add_to_cell_bytes(wcs_txn *t, wcs_table *pTab, const void *pRow,
                              size_t nRow, const char *zFamily,
                              const void *pQual, size_t nQual, int64_t iTs,
                              const void *pElem, size_t nElem) {
  EngFamily *f;
  wcs_buf op = {0};
  int rc = cell_target(t, pTab, pRow, nRow, zFamily, pQual, nQual, &iTs, &f);
  if (rc == WCS_OK) rc = eng_check_bytes(pElem, nElem, "the element");
  if (rc) return rc;
  if (f->eAgg != WCS_AGG_HLL) {
    if (f->eAgg == WCS_AGG_NONE) return mismatch(pTab->pDef, f, "AddToCell");
    return eng_err(WCS_MISMATCH,
                   "AddToCell on family %s takes an INT64 "
                   "input, not bytes",
                   f->zName);
  }
  rc = eng_hll_single(pElem, nElem, &op);
  if (rc == WCS_OK) {
    rc = agg_op(t, pTab, pRow, nRow, f, pQual, nQual, iTs, op.a, op.n);
  }
  wcs_buf_free(&op);
  return rc;
}

int wcs_txn_merge_to_cell(wcs_txn *t, wcs_table *pTab, const void *pRow,
                          size_t nRow, const char *zFamily, const void *pQual,
                          size_t nQual, int64_t iTs, const void *pState,
                          size_t nState) {
  EngFamily *f;
  int rc = cell_target(t, pTab, pRow, nRow, zFamily, pQual, nQual, &iTs, &f);
  if (rc == WCS_OK) rc = eng_check_bytes(pState, nState, "the state");
  if (rc) return rc;
  if (f->eAgg == WCS_AGG_NONE) return mismatch(pTab->pDef, f, "MergeToCell");
  if (nState == 0) return WCS_OK;
  if (f->eAgg == WCS_AGG_HLL) {
    uint64_t nDummy;
    rc = wcs_hll_estimate(pState, nState, &nDummy);
    if (rc) {
      return eng_err(WCS_MISMATCH,
                     "MergeToCell on family %s: the input is "
                     "not a valid HLL state",
                     f->zName);
    }
  } else if (nState != 8) {
    return eng_err(WCS_MISMATCH,
                   "MergeToCell on family %s: the input has "
                   "%zu bytes, expected an 8-byte big-endian int64",
                   f->zName, nState);
  }
  return agg_op(t, pTab, pRow, nRow, f, pQual, nQual, iTs, pState, nState);
}

/* ReadModifyWrite: read the latest cell, compute, write at max(ts, now). */
static int rmw(wcs_txn *t, wcs_table *pTab, const void *pRow, size_t nRow,
               const char *zFamily, const void *pQual, size_t nQual,
               int bIncrement, int64_t iDelta, const void *pApp, size_t nApp,
               wcs_buf *pNew) {
  EngFamily *f;
  int iFam, bFound = 0, rc;
  int64_t iTs = 0, iNow;
  wcs_buf cur = {0};
  rc = cell_target(t, pTab, pRow, nRow, zFamily, pQual, nQual, NULL, &f);
  if (rc == WCS_OK) rc = eng_check_bytes(pApp, nApp, "the bytes to append");
  if (rc) return rc;
  if (f->eAgg) {
    return mismatch(pTab->pDef, f, bIncrement ? "increment" : "append");
  }
  eng_family(pTab->pDef, zFamily, &iFam);
  rc = eng_read_latest(pTab, t, pRow, nRow, iFam, pQual ? pQual : "", nQual,
                       &bFound, &iTs, &cur);
  if (rc == WCS_OK) {
    pNew->n = 0;
    if (bIncrement) {
      int64_t v = 0;
      if (bFound) {
        if (cur.n != 8) {
          char *zRow = wcs_escape(pRow, nRow, 64);
          char *zQual = wcs_escape(pQual ? pQual : "", nQual, 64);
          rc = eng_err(WCS_MISMATCH,
                       "cannot increment row '%s' column "
                       "%s:%s: the value has %zu bytes, not an 8-byte "
                       "big-endian int64",
                       zRow ? zRow : "?", f->zName, zQual ? zQual : "?",
                       cur.n);
          free(zRow);
          free(zQual);
        } else {
          v = (int64_t)wcs_get64be(cur.a);
        }
      }
      if (rc == WCS_OK) {
        v = (int64_t)((uint64_t)v + (uint64_t)iDelta);
        rc = wcs_buf_reserve(pNew, 8);
        if (rc == WCS_OK) {
          wcs_put64be(pNew->a, (uint64_t)v);
          pNew->n = 8;
        }
      }
    } else {
      if (bFound) rc = wcs_buf_append(pNew, cur.a, cur.n);
      if (rc == WCS_OK) rc = wcs_buf_append(pNew, pApp, nApp);
    }
  }
  if (rc == WCS_OK) {
    iNow = txn_now(t);
    if (!bFound || iTs < iNow) iTs = iNow;
    rc = wcs_txn_set_cell(t, pTab, pRow, nRow, zFamily, pQual, nQual, iTs,
                          pNew->a, pNew->n);
  }
  wcs_buf_free(&cur);
  return rc;
}

int wcs_txn_increment(wcs_txn *t, wcs_table *pTab, const void *pRow,
                      size_t nRow, const char *zFamily, const void *pQual,
                      size_t nQual, int64_t iDelta, int64_t *piNew) {
  wcs_buf b = {0};
  int rc =
      rmw(t, pTab, pRow, nRow, zFamily, pQual, nQual, 1, iDelta, NULL, 0, &b);
  if (rc == WCS_OK && piNew) *piNew = (int64_t)wcs_get64be(b.a);
  wcs_buf_free(&b);
  return rc;
}

int wcs_txn_append(wcs_txn *t, wcs_table *pTab, const void *pRow, size_t nRow,
                   const char *zFamily, const void *pQual, size_t nQual,
                   const void *pVal, size_t nVal, void **ppNew, size_t *pnNew) {
  wcs_buf b = {0};
  int rc =
      rmw(t, pTab, pRow, nRow, zFamily, pQual, nQual, 0, 0, pVal, nVal, &b);
  if (ppNew) *ppNew = NULL;
  if (rc == WCS_OK && ppNew) {
    *ppNew = malloc(b.n ? b.n : 1);
    if (*ppNew == NULL) {
      rc = eng_err(WCS_NOMEM, "out of memory");
    } else {
      if (b.n) memcpy(*ppNew, b.a, b.n);
      if (pnNew) *pnNew = b.n;
    }
  } else if (rc == WCS_OK && pnNew) {
    *pnNew = b.n;
  }
  wcs_buf_free(&b);
  return rc;
}

static int bytecmp(const void *a, size_t na, const void *b, size_t nb) {
  size_t n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, n) : 0;
  if (c) return c;
  return na < nb ? -1 : (na > nb);
}

int wcs_txn_check(wcs_txn *t, wcs_table *pTab, const void *pRow, size_t nRow,
                  const wcs_predicate *pPred, int *pbMatch) {
  int rc, bFound = 0, iFam = -1;
  int64_t iTs;
  wcs_buf cur = {0};
  *pbMatch = 0;
  if (pTab == NULL) return eng_err(WCS_MISUSE, "a NULL table");
  if (t && t->pEng != pTab->pEng) {
    return eng_err(WCS_MISUSE, "table %s belongs to another engine",
                   pTab->pDef->zName);
  }
  if (pTab->pDef->bStale) {
    return eng_err(WCS_SCHEMA, "table %s was altered or dropped; reopen it",
                   pTab->pDef->zName);
  }
  rc = eng_check_bytes(pRow, nRow, "the row key");
  if (rc == WCS_OK) rc = eng_check_row(pRow, nRow);
  if (rc == WCS_OK && pPred) {
    rc = eng_check_bytes(pPred->pQual, pPred->nQual, "the qualifier");
    if (rc == WCS_OK)
      rc = eng_check_bytes(pPred->pVal, pPred->nVal, "the value");
  }
  if (rc) return rc;
  if (pPred == NULL || pPred->eOp == WCS_PRED_ROW_EXISTS) {
    return eng_row_exists(pTab, t, pRow, nRow, pbMatch);
  }
  if (pPred->eOp < WCS_PRED_EXISTS || pPred->eOp > WCS_PRED_GE) {
    return eng_err(WCS_MISUSE, "unknown predicate operator %d", pPred->eOp);
  }
  if (eng_family(pTab->pDef, pPred->zFamily, &iFam) == NULL) return WCS_ERROR;
  rc = eng_read_latest(pTab, t, pRow, nRow, iFam,
                       pPred->pQual ? pPred->pQual : "", pPred->nQual, &bFound,
                       &iTs, &cur);
  if (rc == WCS_OK) {
    int c = bFound ? bytecmp(cur.a, cur.n, pPred->pVal, pPred->nVal) : 0;
    switch (pPred->eOp) {
    case WCS_PRED_EXISTS:
      *pbMatch = bFound;
      break;
    case WCS_PRED_NOT_EXISTS:
      *pbMatch = !bFound;
      break;
    case WCS_PRED_EQ:
      *pbMatch = bFound && c == 0;
      break;
    case WCS_PRED_NE:
      *pbMatch = bFound && c != 0;
      break;
    case WCS_PRED_LT:
      *pbMatch = bFound && c < 0;
      break;
    case WCS_PRED_LE:
      *pbMatch = bFound && c <= 0;
      break;
    case WCS_PRED_GT:
      *pbMatch = bFound && c > 0;
      break;
    default:
      *pbMatch = bFound && c >= 0;
      break;
    }
  }
  wcs_buf_free(&cur);
  return rc;
}

int eng_range_bounds(const wcs_key_range *r, wcs_buf *pLo, wcs_buf *pHi,
                     int *pbHiOpen) {
  int rc = WCS_OK;
  pLo->n = 0;
  pHi->n = 0;
  *pbHiOpen = 0;
  if (r->pStart && r->nStart) {
    rc = eng_escape(pLo, r->pStart, r->nStart);
    if (rc == WCS_OK && r->bStartExcl) rc = wcs_buf_append(pLo, "\x00\x02", 2);
  }
  if (rc == WCS_OK) {
    if (r->pEnd && r->nEnd) {
      rc = eng_escape(pHi, r->pEnd, r->nEnd);
      if (rc == WCS_OK && r->bEndIncl) rc = wcs_buf_append(pHi, "\x00\x02", 2);
    } else {
      *pbHiOpen = 1;
    }
  }
  return rc;
}

/* Range deletes: one range tombstone per family over [lo, hi). */
static int delete_span(wcs_txn *t, wcs_table *pTab, const uint8_t *pLo,
                       size_t nLo, const uint8_t *pHi, size_t nHi,
                       int bHiOpen) {
  EngDef *pDef = pTab->pDef;
  wcs_buf s = {0}, e = {0};
  int rc = WCS_OK, i;
  for (i = 0; rc == WCS_OK && i < pDef->nFam; i++) {
    uint16_t iFid = pDef->aFam[i].iFid;
    s.n = 0;
    e.n = 0;
    rc = eng_put_prefix(&s, pDef->iTid, iFid);
    if (rc == WCS_OK) rc = wcs_buf_append(&s, pLo, nLo);
    if (rc == WCS_OK) {
      if (bHiOpen) {
        rc = eng_put_family_end(&e, pDef->iTid, iFid);
      } else {
        rc = eng_put_prefix(&e, pDef->iTid, iFid);
        if (rc == WCS_OK) rc = wcs_buf_append(&e, pHi, nHi);
      }
    }
    if (rc == WCS_OK) rc = txn_op(t, 'R', s.a, s.n, e.a, e.n, 0);
  }
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
  wcs_buf_free(&s);
  wcs_buf_free(&e);
  return rc;
}

int wcs_txn_delete_range(wcs_txn *t, wcs_table *pTab,
                         const wcs_key_range *pRange) {
  static const wcs_key_range all; /* NULL: every row, as a NULL prefix */
  wcs_buf lo = {0}, hi = {0};
  int bHiOpen, rc = txn_table(t, pTab);
  if (rc == WCS_OK) {
    rc = eng_range_bounds(pRange ? pRange : &all, &lo, &hi, &bHiOpen);
  }
  if (rc == WCS_OK) rc = delete_span(t, pTab, lo.a, lo.n, hi.a, hi.n, bHiOpen);
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
  wcs_buf_free(&lo);
  wcs_buf_free(&hi);
  return rc;
}

int wcs_txn_delete_prefix(wcs_txn *t, wcs_table *pTab, const void *pPrefix,
                          size_t nPrefix) {
  wcs_buf lo = {0}, hi = {0};
  int rc = txn_table(t, pTab), bHiOpen = 0;
  if (rc == WCS_OK) rc = eng_check_bytes(pPrefix, nPrefix, "the prefix");
  if (rc) return rc;
  if (nPrefix > WCS_MAX_ROW_KEY) {
    return eng_err(WCS_TOOBIG,
                   "row key prefix of %zu bytes exceeds the "
                   "row key limit of %d bytes",
                   nPrefix, WCS_MAX_ROW_KEY);
  }
  if (rc == WCS_OK) rc = eng_escape(&lo, pPrefix, nPrefix);
  if (rc == WCS_OK) {
    int r = eng_prefix_successor(&hi, lo.a, lo.n);
    if (r < 0)
      rc = WCS_NOMEM;
    else if (r == 0)
      bHiOpen = 1;
  }
  if (rc == WCS_OK) rc = delete_span(t, pTab, lo.a, lo.n, hi.a, hi.n, bHiOpen);
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
  wcs_buf_free(&lo);
  wcs_buf_free(&hi);
  return rc;
}

/* ------------------------------------------------------------------ */
/* mutation lists                                                      */

int wcs_txn_mutate_row(wcs_txn *t, wcs_table *pTab, const void *pRow,
                       size_t nRow, const wcs_mutation *aMut, int nMut) {
  int rc = WCS_OK, i;
  size_t nLog0;
  if (t == NULL || pTab == NULL) {
    return eng_err(WCS_MISUSE, "a NULL %s",
                   t == NULL ? "transaction" : "table");
  }
  if (nMut < 0 || (aMut == NULL && nMut > 0)) {
    return eng_err(WCS_MISUSE, "%d mutations at %p", nMut, (const void *)aMut);
  }
  nLog0 = t->log.n;
  for (i = 0; rc == WCS_OK && i < nMut; i++) {
    const wcs_mutation *m = &aMut[i];
    switch (m->eType) {
    case WCS_MUT_SET_CELL:
      rc = wcs_txn_set_cell(t, pTab, pRow, nRow, m->zFamily, m->pQual, m->nQual,
                            m->iTs, m->pVal, m->nVal);
      break;
    case WCS_MUT_DELETE_CELLS:
      rc = wcs_txn_delete_cells(t, pTab, pRow, nRow, m->zFamily, m->pQual,
                                m->nQual, m->iTs, m->iEndTs);
      break;
    case WCS_MUT_DELETE_FAMILY:
      rc = wcs_txn_delete_family(t, pTab, pRow, nRow, m->zFamily);
      break;
    case WCS_MUT_DELETE_ROW:
      rc = wcs_txn_delete_row(t, pTab, pRow, nRow);
      break;
    case WCS_MUT_ADD_TO_CELL: {
      EngFamily *f = eng_family(pTab->pDef, m->zFamily, NULL);
      if (f == NULL) {
        rc = WCS_ERROR; /* (named by eng_family) */
      } else if (f->eAgg == WCS_AGG_HLL && m->pVal) {
        rc =
            wcs_txn_add_to_cell_bytes(t, pTab, pRow, nRow, m->zFamily, m->pQual,
                                      m->nQual, m->iTs, m->pVal, m->nVal);
      } else {
        rc = wcs_txn_add_to_cell(t, pTab, pRow, nRow, m->zFamily, m->pQual,
                                 m->nQual, m->iTs, m->iValue);
      }
      break;
    }
    case WCS_MUT_MERGE_TO_CELL:
      rc = wcs_txn_merge_to_cell(t, pTab, pRow, nRow, m->zFamily, m->pQual,
                                 m->nQual, m->iTs, m->pVal, m->nVal);
      break;
    default:
      rc = eng_err(WCS_MISUSE, "unknown mutation type %d", m->eType);
      break;
    }
  }
  if (rc != WCS_OK && t->log.n > nLog0) {
    /* the row's mutations are one: none of them stays (the failed one
    ** left nothing of its own; the message stays its own, as replay sets
    ** none but out of memory) */
    int rc2 = replay(t, nLog0);
    if (rc2 != WCS_OK) rc = rc2;
  }
  return rc;
}

int wcs_table_mutate_row(wcs_table *pTab, const void *pRow, size_t nRow,
                         const wcs_mutation *aMut, int nMut) {
  wcs_txn *t = NULL;
  int rc;
  if (pTab == NULL) return eng_err(WCS_MISUSE, "a NULL table");
  rc = wcs_txn_begin(pTab->pEng, 0, &t);
  if (rc == WCS_OK) rc = wcs_txn_mutate_row(t, pTab, pRow, nRow, aMut, nMut);
  if (rc == WCS_OK) rc = wcs_txn_commit(t);
  wcs_txn_free(t);
  return rc;
}

int wcs_table_check_and_mutate(wcs_table *pTab, const void *pRow, size_t nRow,
                               const wcs_predicate *pPred,
                               const wcs_mutation *aTrue, int nTrue,
                               const wcs_mutation *aFalse, int nFalse,
                               int *pbMatched) {
  wcs_txn *t = NULL;
  int bMatch = 0;
  int rc;
  if (pTab == NULL) return eng_err(WCS_MISUSE, "a NULL table");
  if (nTrue == 0 && nFalse == 0) {
    return eng_err(WCS_MISUSE, "CheckAndMutate needs true or false "
                               "mutations");
  }
  /* Both lists must be able to apply, as Bigtable checks the whole
  ** request before it evaluates the predicate: each is buffered into a
  ** transaction that is then dropped (the checks are those of applying). */
  rc = wcs_txn_begin(pTab->pEng, 0, &t);
  if (rc == WCS_OK) rc = wcs_txn_mutate_row(t, pTab, pRow, nRow, aTrue, nTrue);
  if (rc == WCS_OK)
    rc = wcs_txn_mutate_row(t, pTab, pRow, nRow, aFalse, nFalse);
  wcs_txn_free(t);
  t = NULL;
  if (rc == WCS_OK) rc = wcs_txn_begin(pTab->pEng, WCS_TXN_EXCLUSIVE, &t);
  if (rc == WCS_OK) rc = wcs_txn_check(t, pTab, pRow, nRow, pPred, &bMatch);
  if (rc == WCS_OK) {
    rc = bMatch ? wcs_txn_mutate_row(t, pTab, pRow, nRow, aTrue, nTrue)
                : wcs_txn_mutate_row(t, pTab, pRow, nRow, aFalse, nFalse);
  }
  if (rc == WCS_OK) rc = wcs_txn_commit(t);
  wcs_txn_free(t);
  if (pbMatched) *pbMatched = bMatch;
  return rc;
}
