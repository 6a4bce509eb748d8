/*
** db.c — the store: the public Store API of wcs.h on top of the WAL
** (wal.c), memtables (memtable.c), the version set (version.c) and
** compaction (compact.c). Design notes: doc/storage.md.
**
** Write path (group commit). Writers queue on the store mutex; the writer
** at the head of the queue is the leader. It makes room (switching to a
** new memtable and WAL when the memtable is full, stalling when flushes or
** level 0 fall too far behind), takes the batches of the writers queued
** behind it (up to WRITE_GROUP_MAX bytes), gives them consecutive
** sequence numbers, and, without the mutex, appends all their WAL records
** with one write (plus one fsync in SYNC FULL) and inserts them into the
** memtable. Then it publishes the new last sequence number and wakes the
** group. Only the leader touches the active memtable, so the memtable
** needs no write lock, and readers never wait for writers. A batch of
** nIngestBytes or more goes alone and skips the WAL and the memtable: the
** leader flushes the memtables, writes the batch as sorted files
** (ingest.c) and installs them with one manifest edit (ingestCommit).
**
** Reads pin a "super version" — the active memtable, the immutable ones
** and the current file version — together with the last sequence number,
** both taken under the mutex so they agree; everything after runs without
** locks. A point read searches the memtables, then level 0 newest first,
** then one file per deeper level, stopping at the first version of the
** key; range tombstones seen on the way hide older versions.
**
** Background work: one flush thread turns immutable memtables into level-0
** files; one compaction thread runs leveled compactions (compact.c). With
** bNoBackground both run in the writer's thread instead.
**
** Memory: the block cache may use the part of the memtable budget the
** memtables do not hold; its budget is adjusted (memCharge) where their
** bytes change: after a commit group, a memtable switch, a flush.
**
** Recovery (open): replay the manifest, then every WAL file not yet
** obsolete, in order, into memtables, flushing them to level 0; cut a torn
** WAL tail; refuse a corrupt WAL naming the file and offset. A fresh
** manifest and WAL are started before the store is used. A clean close
** records the length of the log being written (recordClose), and a log
** that reads short of a length the manifest recorded (its seal, or its
** last clean close) is refused, never cut as a torn tail.
*/
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "wcs.h"
#include "storage/compact.h"
#include "storage/db_int.h"
#include "storage/env.h"
#include "storage/ikey.h"
#include "storage/ingest.h"
#include "storage/iterrun.h"
#include "storage/memtable.h"
#include "storage/merge.h"
#include "storage/sst.h"
#include "storage/upper.h"
#include "storage/util.h"
#include "storage/version.h"
#include "storage/wal.h"

#define WRITE_GROUP_MAX (1u << 20)    /* bytes of batches one leader commits */
#define MEM_DIR         "/wcs-memory" /* the store's directory in memory mode */
#define WCS_MIN_MEMTABLE (16u << 10)  /* smallest nMemtable: 8 KiB each */

/* ====================================================================
** Options
** ==================================================================== */

void wcs_options_init(wcs_options *p) {
  memset(p, 0, sizeof *p);
  p->iSync = WCS_SYNC_NORMAL;
  p->bCreate = 1;
  p->nMemtable = 64u << 20;
  p->nCache = 64u << 20;
  p->nMaxOpenFiles = WCS_DEF_MAX_FILES;
  p->nBlockSize = 8192;
  p->iZstdLevel = 3;
  p->nBloomBits = 10;
  p->nL0Trigger = 4;
  p->nL0Stop = 20;
  p->nL1Bytes = 256u << 20;
  p->nFileBytes = 64u << 20;
}

/* Fill defaults for unset sizes and clamp to sane ranges. */
static void fixOptions(wcs_options *p) {
  wcs_options d;
  wcs_options_init(&d);
  if (p->nMemtable == 0) p->nMemtable = d.nMemtable;
  /* each memtable (half the budget) must hold more than the arena block
  ** an empty one starts with (memtable_new: at least 4 KiB) */
  if (p->nMemtable < WCS_MIN_MEMTABLE) p->nMemtable = WCS_MIN_MEMTABLE;
  if (p->nCache == 0) p->nCache = d.nCache;
  if (p->nMaxOpenFiles <= 0) p->nMaxOpenFiles = d.nMaxOpenFiles;
  if (p->nBlockSize == 0) p->nBlockSize = d.nBlockSize;
  if (p->nBlockSize < 1024) p->nBlockSize = 1024;
  if (p->nBlockSize > 65536) p->nBlockSize = 65536;
  if (p->iZstdLevel < 0) p->iZstdLevel = 0;
  if (p->iZstdLevel > 19) p->iZstdLevel = 19;
  if (p->nBloomBits < 0) p->nBloomBits = 0;
  if (p->nL0Trigger <= 0) p->nL0Trigger = d.nL0Trigger;
  if (p->nL0Stop <= 0) p->nL0Stop = d.nL0Stop;
  if (p->nL0Stop < p->nL0Trigger) p->nL0Stop = p->nL0Trigger;
  if (p->nL1Bytes == 0) p->nL1Bytes = d.nL1Bytes;
  if (p->nFileBytes == 0) p->nFileBytes = d.nFileBytes;
  if (p->nIngestBytes == 0) p->nIngestBytes = p->nMemtable / 4;
  if (p->iSync < WCS_SYNC_OFF || p->iSync > WCS_SYNC_FULL) {
    p->iSync = WCS_SYNC_NORMAL;
  }
}

/* ====================================================================
** Structures
** ==================================================================== */

/* Range tombstones at which a memtable is switched for a new one and
** flushed, whatever its size (makeRoom): a read whose bounds take them in
** (a scan of a table that deletes rows as it goes, a sliding window)
** sorts them into fragments each time it is made; in sorted files they
** are sorted once per file, and compactions drop them. */
#define MEM_MAX_RANGEDELS 4096

#define MAX_IMM 1 /* immutable memtables waiting for flush */

/* What a reader pins: memtables + files. */
typedef struct SuperVersion {
  _Atomic int nRef;                 /* readers holding it, + 1 while current */
  wcs_memtable *pMem;               /* referenced */
  int nImm;                         /* <= MAX_IMM */
  wcs_memtable *apImm[MAX_IMM + 1]; /* referenced, oldest first */
  wcs_version *pVersion;            /* referenced */
} SuperVersion;

/* A writer waiting in the commit queue. */
typedef struct Writer Writer;
struct Writer {
  wcs_batch *pBatch; /* NULL: a forced memtable switch (flush), unless */
  wcs_prebuild *pPre; /* not NULL: install this prebuild's files */
  int bDone;         /* committed (or failed) by a leader */
  int rc;            /* its result */
  char *zErr;        /* its message (owned) */
  pthread_cond_t cv; /* signalled when done or at the head */
  Writer *pNext;
};

#define SNAP_FREE_MAX 16 /* freed snapshots a store keeps for reuse */

struct wcs_snapshot {
  uint64_t seq;                /* reads see writes with seq <= this */
  wcs_snapshot *pPrev, *pNext; /* the store's list, ascending seq */
  int bLive;                   /* 0 once freed (kept for reuse) */
};

struct wcs_batch {
  wcs_buf rep;       /* WAL payload: header + operations */
  int nOp;           /* operations */
  size_t nRunPrefix; /* hint for a bulk ingest (wcs_batch_adopt) */
};

struct wcs_db {
  wcs_options opt;  /* with defaults applied */
  char *zDir;       /* store directory (MEM_DIR in memory mode) */
  wcs_env *pEnv;    /* every file goes through it */
  wcs_env *pOwnEnv; /* a private memory env, destroyed at close */
  int bReadOnly;
  int bInMemory;
  int bFollow;         /* opened beside a writer (wcs_options.bFollow) */
  uint64_t iFollowLog; /* follower: the newest log replayed (0: none) */
  uint64_t nFollowLog; /* and the bytes of whole records read from it */
  wcs_file *pFollowMan; /* follower: the manifest read, kept open, */
  uint64_t nFollowMan;  /* its size when read (whole edits, and a torn
                        ** tail if it had one) */
  wcs_file *pFollowLog; /* and log iFollowLog, kept open (or NULL) */
  void *pLock; /* the process lock */
  wcs_cache *pCache;
  wcs_vset *pVs;
  pthread_key_t errKey; /* per-thread last error message */

  pthread_mutex_t mu;    /* guards everything below */
  pthread_cond_t cvBg;   /* background progress (flush, compaction) */
  pthread_cond_t cvWork; /* work for the background threads */

  Writer *pHead, *pTail;    /* commit queue */
  wcs_buf walBuf;           /* the leader's framing buffer */
  _Atomic uint64_t lastSeq; /* last published sequence number */
  wcs_memtable *pMem;       /* active memtable */
  int nImm;
  wcs_memtable *apImm[MAX_IMM + 1]; /* oldest first; <= MAX_IMM used */
  wal_writer *pWal;                 /* active WAL (NULL in memory/read-only) */
  size_t nMemLimit;                 /* switch memtables at this many bytes */
  size_t nMemCharged;  /* memtable bytes the cache's budget was last
                       ** reduced by (memCharge), <= nMemtable */
  size_t nCacheBudget; /* the cache's budget now */
  _Atomic(SuperVersion *) pSv;      /* current super version; replaced
                                    ** under mu and svMu, pinned under
                                    ** svMu; compared without a lock by
                                    ** an iterator holding one */
  pthread_mutex_t svMu;             /* guards pSv only: readers pin the
                                    ** super version without taking mu,
                                    ** which writers and the background
                                    ** threads hold for longer */
  wcs_snapshot *pSnapFirst, *pSnapLast; /* live snapshots */
  wcs_snapshot *pSnapFree; /* freed snapshots kept for reuse (under mu),
                           ** a list through pNext: a read that takes one
                           ** per query allocates nothing */
  int nSnapFree;           /* entries of pSnapFree, <= SNAP_FREE_MAX */

  pthread_t flushThread, compactThread;
  int bThreads;          /* threads started */
  _Atomic int bShutdown; /* closing: background work stops */
  int bFlushRunning;     /* a flush is in progress */
  int bCompactRunning;   /* a compaction is in progress */
  int64_t iCompactRetry; /* a compaction failed before it reached the
                         ** manifest (a full disk, say): no automatic one
                         ** is tried before this time (wcs_now_micros) */
  int rcCompact;         /* and its error, while none has succeeded since */
  char *zCompactErr;     /* its message */
  int nManual;           /* compact_range calls waiting or running */
  int bgRc;              /* first background error (sticky) */
  char *zBgErr;          /* its message */

  uint64_t nFlushes, nCompactions, nTrivialMoves;
  uint64_t nFiltered; /* entries removed by xCompactionFilter */
  uint64_t nCompactReruns; /* compactions run again without counting */
  uint64_t nStallMicros;
  uint64_t nBytesFlushed, nBytesCompacted;
  uint64_t nIngests;       /* batches committed as sorted files */
  uint64_t nBytesIngested; /* file bytes they wrote */
  uint64_t nPrebuilds;     /* of those, prebuilt (wcs_prebuild) */
};

/* ====================================================================
** Errors
** ==================================================================== */

static void freeErr(void *p) {
  free(p);
}

/* Record the message of an error for wcs_errmsg (takes ownership of z). */
static int setErr(wcs_db *db, int rc, char *z) {
  char *zOld;
  if (rc == WCS_OK) {
    free(z);
    return rc;
  }
  if (z == NULL) {
    wcs_seterr(&z, rc, "%s", wcs_errstr(rc));
  }
  zOld = pthread_getspecific(db->errKey);
  free(zOld);
  pthread_setspecific(db->errKey, z);
  return rc;
}

static int setErrf(wcs_db *db, int rc, const char *zFmt, const char *zArg) {
  char *z = NULL;
  wcs_seterr(&z, rc, zFmt, zArg);
  return setErr(db, rc, z);
}

const char *wcs_errmsg(wcs_db *db) {
  const char *z;
  if (db == NULL) return "";
  z = pthread_getspecific(db->errKey);
  return z ? z : "";
}

static char *dupStr(const char *z) {
  char *p;
  if (z == NULL) return NULL;
  p = malloc(strlen(z) + 1);
  if (p) strcpy(p, z);
  return p;
}

/* ====================================================================
** Batches
** ==================================================================== */

int wcs_batch_new(wcs_batch **pp) {
  wcs_batch *b = calloc(1, sizeof *b);
  *pp = NULL;
  if (b == NULL) return WCS_NOMEM;
  if (wcs_buf_reserve(&b->rep, 256)) {
    free(b);
    return WCS_NOMEM;
  }
  memset(b->rep.a, 0, WAL_BATCH_HEADER);
  b->rep.n = WAL_BATCH_HEADER;
  *pp = b;
  return WCS_OK;
}

void wcs_batch_free(wcs_batch *b) {
  if (b == NULL) return;
  wcs_buf_free(&b->rep);
  free(b);
}

void wcs_batch_clear(wcs_batch *b) {
  if (b == NULL) return;
  b->rep.n = WAL_BATCH_HEADER;
  b->nOp = 0;
  b->nRunPrefix = 0;
}

int wcs_batch_adopt(wcs_batch *b, wcs_buf *pRep, int nOp, size_t nRunPrefix) {
  wcs_buf old;
  if (b == NULL || pRep == NULL || pRep->n < WAL_BATCH_HEADER || nOp < 0) {
    return WCS_MISUSE;
  }
  if (pRep->n > WAL_MAX_RECORD) return WCS_TOOBIG;
  old = b->rep;
  b->rep = *pRep;
  *pRep = old;
  pRep->n = 0;
  b->nOp = nOp;
  b->nRunPrefix = nRunPrefix;
  return WCS_OK;
}

/* The longest key and value an operation may carry (its lengths are
** stored as u32 and a key gets an 8-byte trailer inside the store); a
** batch as a whole is bounded by WAL_MAX_RECORD. */
#define OP_KEY_MAX ((size_t)UINT32_MAX - WCS_IKEY_TRAILER)
#define OP_VAL_MAX ((size_t)UINT32_MAX - 1)

static int batchOp(wcs_batch *b, int op, const void *pKey, size_t nKey,
                   const void *pVal, size_t nVal, int bVal) {
  size_t nNeed = 1 + WCS_VARINT_MAX * 2 + nKey + nVal;
  size_t n0;
  int rc;
  if (b == NULL || (pKey == NULL && nKey)) return WCS_MISUSE;
  if (nKey > OP_KEY_MAX || nVal > OP_VAL_MAX ||
      b->rep.n + nNeed > WAL_MAX_RECORD || b->nOp == INT32_MAX) {
    return WCS_TOOBIG;
  }
  n0 = b->rep.n;
  rc = wcs_buf_reserve(&b->rep, nNeed);
  if (rc == WCS_OK) {
    b->rep.a[b->rep.n++] = (uint8_t)op;
    rc = wcs_buf_append_varint(&b->rep, nKey);
  }
  if (rc == WCS_OK) rc = wcs_buf_append(&b->rep, pKey, nKey);
  if (rc == WCS_OK && bVal) {
    rc = wcs_buf_append_varint(&b->rep, nVal);
    if (rc == WCS_OK) rc = wcs_buf_append(&b->rep, pVal, nVal);
  }
  if (rc) {
    b->rep.n = n0;
    return rc;
  }
  b->nOp++;
  return WCS_OK;
}

int wcs_batch_put(wcs_batch *b, const void *pKey, size_t nKey, const void *pVal,
                  size_t nVal) {
  if (pVal == NULL && nVal) return WCS_MISUSE;
  return batchOp(b, WAL_OP_PUT, pKey, nKey, pVal, nVal, 1);
}

int wcs_batch_delete(wcs_batch *b, const void *pKey, size_t nKey) {
  return batchOp(b, WAL_OP_DELETE, pKey, nKey, NULL, 0, 0);
}

int wcs_batch_delete_range(wcs_batch *b, const void *pStart, size_t nStart,
                           const void *pEnd, size_t nEnd) {
  if (pEnd == NULL && nEnd == 0) {
    return batchOp(b, WAL_OP_RANGEDEL_OPEN, pStart, nStart, NULL, 0, 0);
  }
  if (pEnd == NULL || (pStart == NULL && nStart)) return WCS_MISUSE;
  if (wcs_ukey_cmp(pStart, nStart, pEnd, nEnd) >= 0) return WCS_OK; /* empty */
  return batchOp(b, WAL_OP_RANGEDEL, pStart, nStart, pEnd, nEnd, 1);
}

int wcs_batch_count(const wcs_batch *b) {
  return b ? b->nOp : 0;
}
size_t wcs_batch_bytes(const wcs_batch *b) {
  return b ? b->rep.n : 0;
}

/* Apply one decoded operation to a memtable. */
static int applyOp(void *pCtx, uint64_t seq, int op, const uint8_t *pKey,
                   size_t nKey, const uint8_t *pVal, size_t nVal) {
  wcs_memtable *m = pCtx;
  switch (op) {
  case WAL_OP_PUT:
    return memtable_add(m, seq, WCS_KT_PUT, pKey, nKey, pVal, nVal);
  case WAL_OP_DELETE:
    return memtable_add(m, seq, WCS_KT_DELETE, pKey, nKey, NULL, 0);
  case WAL_OP_RANGEDEL:
    if (wcs_ukey_cmp(pKey, nKey, pVal, nVal) >= 0) return WCS_OK;
    return memtable_add_rangedel(m, seq, pKey, nKey, pVal, nVal);
  default:
    return memtable_add_rangedel(m, seq, pKey, nKey, NULL, 0);
  }
}

/* ====================================================================
** Super versions
** ==================================================================== */

static void svUnref(SuperVersion *sv) {
  int i;
  if (sv == NULL) return;
  if (atomic_fetch_sub_explicit(&sv->nRef, 1, memory_order_acq_rel) != 1) {
    return;
  }
  memtable_unref(sv->pMem);
  for (i = 0; i < sv->nImm; i++)
    memtable_unref(sv->apImm[i]);
  version_unref(sv->pVersion);
  free(sv);
}

/* Make a new super version from the current state (mutex held). */
static int svInstall(wcs_db *db) {
  SuperVersion *sv = calloc(1, sizeof *sv), *pOld;
  int i;
  if (sv == NULL) return WCS_NOMEM;
  atomic_init(&sv->nRef, 1);
  sv->pMem = db->pMem;
  memtable_ref(sv->pMem);
  sv->nImm = db->nImm;
  for (i = 0; i < db->nImm; i++) {
    sv->apImm[i] = db->apImm[i];
    memtable_ref(sv->apImm[i]);
  }
  sv->pVersion = vset_current(db->pVs);
  version_ref(sv->pVersion);
  pthread_mutex_lock(&db->svMu);
  pOld = db->pSv;
  db->pSv = sv;
  pthread_mutex_unlock(&db->svMu);
  svUnref(pOld);
  return WCS_OK;
}

/* Pin the current super version and the sequence number to read at.
** The sequence number is read first: every entry up to it is then in the
** memtables or files of any super version installed since (a memtable
** switch installs the new super version before writes reach the new
** memtable, a flush removes a memtable only together with adding its
** file), so the pair agrees without holding the store mutex. */
static SuperVersion *svAcquire(wcs_db *db, const wcs_snapshot *pSnap,
                               uint64_t *pSeq) {
  SuperVersion *sv;
  *pSeq = pSnap ? pSnap->seq
                : atomic_load_explicit(&db->lastSeq, memory_order_acquire);
  pthread_mutex_lock(&db->svMu);
  sv = db->pSv;
  atomic_fetch_add_explicit(&sv->nRef, 1, memory_order_relaxed);
  pthread_mutex_unlock(&db->svMu);
  return sv;
}

/* ====================================================================
** Memory budget: memtables and block cache share nMemtable + nCache
** ==================================================================== */

/* Lend the block cache what the memtables do not hold (doc/storage.md,
** "Memory budget"): its budget is nCache + nMemtable - M, where M is the
** bytes of the active and immutable memtables (at most nMemtable), so the
** two together stay within nMemtable + nCache. Called with the mutex held
** (or during open, before other threads exist) wherever M may have
** changed: after each commit group, at a memtable switch, after a flush,
** during recovery. M changes only when an arena takes a block (nMemtable/32
** bytes, 4 KiB..1 MiB, or one large entry: memtable.c) or a memtable comes
** or goes, so most calls are one comparison; a change resizes the cache,
** which evicts idle blocks if it shrinks. With bFixedCache the cache keeps
** nCache. */
static void memCharge(wcs_db *db) {
  size_t nMem, nFree;
  int i;
  if (db->opt.bFixedCache || db->pMem == NULL) return;
  nMem = memtable_bytes(db->pMem);
  for (i = 0; i < db->nImm; i++)
    nMem += memtable_bytes(db->apImm[i]);
  if (nMem > db->opt.nMemtable) nMem = db->opt.nMemtable;
  if (nMem == db->nMemCharged) return;
  db->nMemCharged = nMem;
  nFree = db->opt.nMemtable - nMem;
  db->nCacheBudget =
      db->opt.nCache > SIZE_MAX - nFree ? SIZE_MAX : db->opt.nCache + nFree;
  wcs_cache_set_budget(db->pCache, db->nCacheBudget);
}

/* ====================================================================
** Background work: flush and compaction. Called with db->mu held; both
** release it while doing I/O.
** ==================================================================== */

static uint64_t newFileNumber(void *pArg) {
  wcs_db *db = pArg;
  uint64_t n;
  pthread_mutex_lock(&db->mu);
  n = vset_new_file_number(db->pVs);
  pthread_mutex_unlock(&db->mu);
  return n;
}

static void manifestPos(void *pArg, uint64_t *piManifest, uint64_t *pnBytes) {
  wcs_db *db = pArg;
  pthread_mutex_lock(&db->mu);
  vset_manifest_pos(db->pVs, piManifest, pnBytes);
  pthread_mutex_unlock(&db->mu);
}

/* Snapshot seqs ascending plus the latest seq (mutex held); malloc'd. */
static uint64_t *snapList(wcs_db *db, int *pn) {
  int n = 1;
  wcs_snapshot *s;
  uint64_t *a;
  for (s = db->pSnapFirst; s; s = s->pNext)
    n++;
  a = malloc(sizeof(uint64_t) * (size_t)n);
  if (a == NULL) return NULL;
  n = 0;
  for (s = db->pSnapFirst; s; s = s->pNext)
    a[n++] = s->seq;
  a[n++] = atomic_load(&db->lastSeq);
  *pn = n;
  return a;
}

static void setBgError(wcs_db *db, int rc, char *zErr) {
  if (rc == WCS_OK || rc == WCS_INTERRUPT) {
    free(zErr);
    return;
  }
  if (db->bgRc == WCS_OK) {
    db->bgRc = rc;
    db->zBgErr = zErr;
  } else {
    free(zErr);
  }
  pthread_cond_broadcast(&db->cvBg);
}

static char *logPath(wcs_db *db, uint64_t iLog) {
  return vset_file_path(db->pVs, iLog, "log");
}

static int deleteLog(wcs_db *db, uint64_t iLog) {
  char *z = logPath(db, iLog);
  if (z) {
    db->pEnv->xDelete(db->pEnv, z, NULL);
    free(z);
  }
  return WCS_OK;
}

/* Gathers a memtable's range tombstones into an array. */
typedef struct GatherDel {
  sst_rangedel *a; /* room for nMax */
  int n, nMax;
} GatherDel;

static int gatherDel(void *p, const sst_rangedel *d) {
  GatherDel *g = p;
  if (g->n >= g->nMax) return WCS_OK;
  g->a[g->n++] = *d;
  return WCS_OK;
}

/* A job writing sorted files for db at output level iOutLevel (-1: a
** level-0 flush, one file) over base version pBase and snapshots aSnap.
** Below level 0 files are cut at a quarter of the level's target, so a
** level holds at least four files and a compaction from it takes a part
** of the key space, not all of it (which would rewrite the whole next
** level each time); at least 64 KiB, at most nFileBytes. */
static void jobInit(wcs_db *db, compact_job *j, wcs_version *pBase,
                    const uint64_t *aSnap, int nSnap, int iOutLevel) {
  j->pVs = db->pVs;
  j->xNewFile = newFileNumber;
  j->xManifestPos = db->bInMemory ? NULL : manifestPos;
  j->pArg = db;
  j->aSnap = aSnap;
  j->nSnap = nSnap;
  j->pBase = pBase;
  j->iOutLevel = iOutLevel;
  j->nFileBytes = 0;
  if (iOutLevel >= 0) {
    j->nFileBytes = db->opt.nFileBytes;
    if (iOutLevel > 0) {
      j->nFileBytes = version_level_target(&db->opt, iOutLevel) / 4;
      if (j->nFileBytes < 64 * 1024) j->nFileBytes = 64 * 1024;
      if (j->nFileBytes > db->opt.nFileBytes) {
        j->nFileBytes = db->opt.nFileBytes;
      }
    }
  }
}

/* Write memtable m as a level-0 file into edit e (no mutex held). */
static int writeLevel0(wcs_db *db, wcs_memtable *m, wcs_version *pBase,
                       const uint64_t *aSnap, int nSnap, wcs_vedit *e,
                       uint64_t *pnBytes, char **pzErr) {
  compact_job j;
  wcs_iiter *pIt = NULL;
  GatherDel g;
  int rc, i;
  memset(&j, 0, sizeof j);
  memset(&g, 0, sizeof g);
  /* level -1: every file of pBase is older than the memtable */
  jobInit(db, &j, pBase, aSnap, nSnap, -1);
  rc = memtable_iter(m, &pIt);
  if (rc == WCS_OK && memtable_rangedel_count(m)) {
    g.nMax = (int)memtable_rangedel_count(m);
    g.a = malloc(sizeof(sst_rangedel) * (size_t)g.nMax);
    if (g.a == NULL)
      rc = WCS_NOMEM;
    else
      memtable_rangedels(m, WCS_SEQ_MAX, NULL, 0, NULL, 0, &g, gatherDel);
  }
  if (rc) {
    if (pIt) pIt->pMethods->xClose(pIt);
    free(g.a);
    return wcs_seterr(pzErr, rc, "out of memory");
  }
  rc = compact_run(&j, pIt, g.a, g.n, pzErr);
  pIt->pMethods->xClose(pIt);
  free(g.a);
  for (i = 0; rc == WCS_OK && i < j.nOut; i++) {
    fmeta_ref(j.aOut[i]);
    rc = vedit_add_file(e, 0, j.aOut[i]);
    if (rc) wcs_seterr(pzErr, rc, "out of memory");
  }
  if (rc == WCS_OK)
    *pnBytes = j.nBytesOut;
  else
    for (i = 0; i < j.nOut; i++)
      j.aOut[i]->bObsolete = 1;
  compact_job_clear(&j);
  return rc;
}

/* Flush the oldest immutable memtable (mutex held, released for I/O). */
static int doFlush(wcs_db *db) {
  wcs_memtable *m = db->apImm[0];
  wcs_version *pBase = vset_current(db->pVs);
  uint64_t iLogNext, nBytes = 0, maxSeq;
  uint64_t *aSnap;
  int nSnap = 0, rc, i;
  char *zErr = NULL;
  wcs_vedit e;
  memset(&e, 0, sizeof e);
  assert(db->nImm > 0 && !db->bFlushRunning);
  db->bFlushRunning = 1;
  iLogNext = db->nImm > 1 ? memtable_log(db->apImm[1]) : memtable_log(db->pMem);
  maxSeq = memtable_max_seq(m);
  version_ref(pBase);
  memtable_ref(m);
  aSnap = snapList(db, &nSnap);
  pthread_mutex_unlock(&db->mu);

  if (aSnap == NULL) {
    rc = wcs_seterr(&zErr, WCS_NOMEM, "out of memory");
  } else {
    rc = writeLevel0(db, m, pBase, aSnap, nSnap, &e, &nBytes, &zErr);
  }

  pthread_mutex_lock(&db->mu);
  if (rc == WCS_OK) {
    e.bLog = 1;
    e.iLog = db->bInMemory ? 0 : iLogNext;
    e.bLastSeq = 1;
    e.lastSeq =
        vset_last_seq(db->pVs) > maxSeq ? vset_last_seq(db->pVs) : maxSeq;
    rc = vset_apply(db->pVs, &e, &zErr);
  }
  vedit_clear(&e);
  if (rc == WCS_OK) {
    uint64_t iLogOld = memtable_log(m);
    for (i = 1; i < db->nImm; i++)
      db->apImm[i - 1] = db->apImm[i];
    db->nImm--;
    memtable_unref(m); /* the list's reference */
    svInstall(db);
    memCharge(db);
    db->nFlushes++;
    db->nBytesFlushed += nBytes;
    if (!db->bInMemory && iLogOld) deleteLog(db, iLogOld);
  } else {
    setBgError(db, rc, zErr);
    zErr = NULL;
  }
  free(zErr);
  free(aSnap);
  memtable_unref(m); /* ours */
  version_unref(pBase);
  db->bFlushRunning = 0;
  pthread_cond_broadcast(&db->cvBg);
  pthread_cond_broadcast(&db->cvWork);
  return rc;
}

static void markCompacting(wcs_compaction *c, int b) {
  int k, j;
  for (k = 0; k < 2; k++) {
    for (j = 0; j < c->anIn[k]; j++)
      c->aaIn[k][j]->bCompacting = b;
  }
}

/* How long the automatic compactions wait after one failed before its
** edit reached the manifest, in microseconds. */
#define COMPACT_RETRY_MICROS 5000000

/* Run one compaction (mutex held, released for I/O); frees c. A failure
** before the manifest edit (reading the inputs, writing the outputs: a
** full disk, say) leaves the store as it was, its outputs deleted: the
** error is returned with its message in *pzErr, and the store goes on. A
** failed manifest edit is the store's background error (sticky), as a
** failed flush is. */
static int doCompaction(wcs_db *db, wcs_compaction *c, char **pzErr) {
  wcs_vedit e;
  compact_job j;
  wcs_iiter *pIn = NULL;
  sst_rangedel *aDel = NULL;
  uint64_t *aSnap = NULL;
  wcs_upper *pUpper = NULL; /* what wcs_compaction_covered() asks */
  int nDel = 0, nSnap = 0, rc = WCS_OK, k, i, bApply = 0;
  char *zErr = NULL;
  *pzErr = NULL;
  memset(&e, 0, sizeof e);
  memset(&j, 0, sizeof j);
  markCompacting(c, 1);
  db->bCompactRunning = 1;
  if (c->bTrivial) {
    for (i = 0; rc == WCS_OK && i < c->anIn[0]; i++) {
      wcs_fmeta *f = c->aaIn[0][i];
      rc = vedit_del_file(&e, c->iLevel, f->iFile);
      if (rc == WCS_OK) {
        fmeta_ref(f);
        rc = vedit_add_file(&e, c->iOutLevel, f);
      }
    }
    if (rc) rc = wcs_seterr(&zErr, rc, "out of memory");
    if (rc == WCS_OK) {
      bApply = 1;
      rc = vset_apply(db->pVs, &e, &zErr);
    }
    if (rc == WCS_OK) db->nTrivialMoves++;
  } else {
    aSnap = snapList(db, &nSnap);
    if (aSnap && nSnap == 1 && db->opt.xCompactionFilter &&
        upper_new(db->pMem, db->apImm, db->nImm, c, aSnap[0], &pUpper)) {
      pUpper = NULL; /* no memory: every wcs_compaction_covered() is 1 */
    }
  rerun:
    pthread_mutex_unlock(&db->mu);
    if (aSnap == NULL) rc = wcs_seterr(&zErr, WCS_NOMEM, "out of memory");
    if (rc == WCS_OK) rc = compact_input(c, &pIn, &zErr);
    if (rc == WCS_OK && compact_input_dels(c, &aDel, &nDel)) {
      rc = wcs_seterr(&zErr, WCS_NOMEM, "out of memory");
    }
    if (rc == WCS_OK) {
      jobInit(db, &j, c->pVersion, aSnap, nSnap, c->iOutLevel);
      j.pbStop = &db->bShutdown;
      j.bFilter = db->opt.xCompactionFilter != NULL && nSnap == 1;
      j.pUpper = pUpper;
      j.bZeroSeq = 1;
      rc = compact_run(&j, pIn, aDel, nDel, &zErr);
    }
    if (pIn) pIn->pMethods->xClose(pIn);
    pIn = NULL;
    free(aDel);
    aDel = NULL;
    pthread_mutex_lock(&db->mu);
    if (rc == WCS_OK && upper_counted(pUpper) &&
        (db->pSnapFirst || upper_recheck(pUpper, db->pMem, db->apImm,
                                         db->nImm, vset_current(db->pVs)))) {
      /* a delete written since the pick reaches a range the filter was
      ** told nothing covers, so what it dropped may be visible again; or
      ** a snapshot taken since (none was live at the pick) may read it
      ** with deletes of its own. Run again, every range covered (writers
      ** publish under db->mu, so none slips in before the install). */
      for (i = 0; i < j.nOut; i++)
        j.aOut[i]->bObsolete = 1;
      compact_job_clear(&j);
      memset(&j, 0, sizeof j);
      upper_set_nocount(pUpper);
      db->nCompactReruns++;
      goto rerun;
    }
    for (k = 0; rc == WCS_OK && k < 2; k++) {
      int iLvl = k == 0 ? c->iLevel : c->iOutLevel;
      for (i = 0; rc == WCS_OK && i < c->anIn[k]; i++) {
        rc = vedit_del_file(&e, iLvl, c->aaIn[k][i]->iFile);
      }
    }
    for (i = 0; rc == WCS_OK && i < j.nOut; i++) {
      fmeta_ref(j.aOut[i]);
      rc = vedit_add_file(&e, c->iOutLevel, j.aOut[i]);
    }
    if (rc == WCS_NOMEM && zErr == NULL) {
      wcs_seterr(&zErr, rc, "out of memory");
    }
    if (rc) {
      /* never offered to the manifest: delete the outputs */
      for (i = 0; i < j.nOut; i++)
        j.aOut[i]->bObsolete = 1;
    } else {
      bApply = 1;
      rc = vset_apply(db->pVs, &e, &zErr); /* cleans up after itself */
    }
    if (rc == WCS_OK) {
      db->nBytesCompacted += j.nBytesOut;
      db->nFiltered += j.nFiltered;
    }
    compact_job_clear(&j);
  }
  vedit_clear(&e);
  markCompacting(c, 0);
  if (rc == WCS_OK) {
    db->nCompactions++;
    db->iCompactRetry = 0;
    db->rcCompact = WCS_OK;
    free(db->zCompactErr);
    db->zCompactErr = NULL;
    svInstall(db);
  } else if (bApply) {
    *pzErr = dupStr(zErr);
    setBgError(db, rc, zErr);
    zErr = NULL;
  } else if (rc != WCS_INTERRUPT) {
    db->iCompactRetry = wcs_now_micros() + COMPACT_RETRY_MICROS;
    db->rcCompact = rc;
    free(db->zCompactErr);
    db->zCompactErr = dupStr(zErr);
    *pzErr = zErr;
    zErr = NULL;
  }
  free(zErr);
  free(aSnap);
  upper_free(pUpper);
  compact_free(c);
  db->bCompactRunning = 0;
  pthread_cond_broadcast(&db->cvBg);
  pthread_cond_broadcast(&db->cvWork);
  return rc;
}

/* One automatic compaction if one is due (mutex held). Returns 1 if work
** was done. */
static int maybeCompact(wcs_db *db) {
  wcs_compaction *c = NULL;
  char *zErr = NULL;
  if (db->bgRc || db->bCompactRunning || db->nManual) return 0;
  if (db->iCompactRetry && wcs_now_micros() < db->iCompactRetry) return 0;
  if (compact_pick(db->pVs, vset_current(db->pVs), &c) != WCS_OK || c == NULL) {
    return 0;
  }
  doCompaction(db, c, &zErr);
  free(zErr);
  return 1;
}

static void *flushMain(void *p) {
  wcs_db *db = p;
  pthread_mutex_lock(&db->mu);
  while (!atomic_load(&db->bShutdown)) {
    if (db->nImm > 0 && db->bgRc == WCS_OK && !db->bFlushRunning) {
      doFlush(db);
      continue;
    }
    pthread_cond_wait(&db->cvWork, &db->mu);
  }
  pthread_mutex_unlock(&db->mu);
  return NULL;
}

static void *compactMain(void *p) {
  wcs_db *db = p;
  pthread_mutex_lock(&db->mu);
  while (!atomic_load(&db->bShutdown)) {
    if (maybeCompact(db)) continue;
    if (db->iCompactRetry && wcs_now_micros() < db->iCompactRetry) {
      /* a compaction failed: try again when its wait is over, whether or
      ** not work arrives meanwhile (writers may wait for it); once it is
      ** over with nothing to pick, wait for work as usual */
      struct timespec ts;
      ts.tv_sec = (time_t)(db->iCompactRetry / 1000000);
      ts.tv_nsec = (long)(db->iCompactRetry % 1000000) * 1000;
      pthread_cond_timedwait(&db->cvWork, &db->mu, &ts);
      continue;
    }
    pthread_cond_wait(&db->cvWork, &db->mu);
  }
  pthread_mutex_unlock(&db->mu);
  return NULL;
}

/* ====================================================================
** The write path
** ==================================================================== */

static void addStall(wcs_db *db, int64_t t0) {
  int64_t d = wcs_now_micros() - t0;
  if (d > 0) db->nStallMicros += (uint64_t)d;
}

/*
** Without background threads (mutex held): flush the oldest immutable
** memtable here, or, while another thread is flushing it (doFlush drops
** the mutex for its I/O), wait for that flush to end. Either way the
** caller checks nImm again afterwards.
*/
static void flushInline(wcs_db *db) {
  if (db->bFlushRunning) {
    int64_t t0 = wcs_now_micros();
    pthread_cond_wait(&db->cvBg, &db->mu);
    addStall(db, t0);
  } else {
    doFlush(db);
  }
}

/*
** Switch to a new memtable (and WAL) — mutex held, leader only.
**
** The manifest tracks the live logs: one edit seals the old log at its
** length and marks the new one live. Order, so that a crash anywhere
** leaves a store that opens: the new log is created and its directory
** entry made durable before the edit names it (a crash before the edit
** leaves an empty log no edit names, which recovery replays as nothing);
** the old log is synced before the edit records its length (a crash after
** the edit finds it at least that long). Nothing reaches the new log
** before the edit is durable. With SYNC OFF the old log is not synced,
** so its seal promises 0 bytes: only its existence is checked at open.
*/
static int switchMemtable(wcs_db *db, char **pzErr) {
  wal_writer *pNewWal = NULL;
  wcs_memtable *pNew = NULL;
  uint64_t iLog = 0;
  int rc = WCS_OK, bKeepNew = 0;
  if (!db->bInMemory) iLog = vset_new_file_number(db->pVs);
  /* allocate first: nothing may fail once the edit names the new log */
  if (memtable_new(db->nMemLimit, iLog, &pNew)) {
    return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  if (!db->bInMemory) {
    char *z = logPath(db, iLog);
    if (z == NULL) rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    if (rc == WCS_OK) rc = wal_writer_open(db->pEnv, z, &pNewWal, pzErr);
    free(z);
    /* the new log's directory entry must survive a power cut, in every
    ** mode: the manifest is about to name it */
    if (rc == WCS_OK) rc = db->pEnv->xSyncDir(db->pEnv, db->zDir, pzErr);
    /* the old log must be durable before the new one can be (no gaps) */
    if (rc == WCS_OK && db->opt.iSync != WCS_SYNC_OFF) {
      rc = wal_writer_sync(db->pWal, pzErr);
      if (rc) setBgError(db, rc, dupStr(pzErr ? *pzErr : NULL));
    }
    if (rc == WCS_OK) {
      wcs_vedit e;
      uint64_t iOld = memtable_log(db->pMem);
      memset(&e, 0, sizeof e);
      if (iOld && db->pWal) {
        uint64_t nSealed = 0;
        if (db->opt.iSync != WCS_SYNC_OFF) {
          nSealed = wal_writer_size(db->pWal) - wal_writer_unsynced(db->pWal);
        }
        rc = vedit_log_seal(&e, iOld, nSealed);
      }
      if (rc == WCS_OK) rc = vedit_log_live(&e, iLog);
      if (rc) {
        rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
      } else {
        rc = vset_apply(db->pVs, &e, pzErr);
        /* the edit may have reached the manifest: keep the (empty) log
        ** it may name; the next open replays it as nothing and deletes
        ** it. The manifest now refuses edits: the store stops. */
        bKeepNew = rc != WCS_OK;
        if (rc) setBgError(db, rc, dupStr(pzErr ? *pzErr : NULL));
      }
      vedit_clear(&e);
    }
  }
  if (rc) {
    memtable_unref(pNew);
    if (pNewWal && bKeepNew) {
      wal_writer_close(pNewWal);
    } else if (pNewWal) {
      const char *zP = wal_writer_path(pNewWal);
      char *zCopy = dupStr(zP);
      wal_writer_close(pNewWal);
      if (zCopy) db->pEnv->xDelete(db->pEnv, zCopy, NULL);
      free(zCopy);
    }
    return rc;
  }
  wal_writer_close(db->pWal);
  db->pWal = pNewWal;
  db->apImm[db->nImm++] = db->pMem;
  db->pMem = pNew;
  svInstall(db);
  memCharge(db);
  pthread_cond_broadcast(&db->cvWork);
  return WCS_OK;
}

/* What makeRoom makes room for: a logged batch (the active memtable
** below its limit), a forced switch (a non-empty active memtable becomes
** immutable; then as for a batch), an ingest (every memtable flushed). */
#define ROOM_WRITE  0
#define ROOM_SWITCH 1
#define ROOM_INGEST 2

/*
** Make room for eFor (mutex held, leader only): wait while the
** immutable memtables or level 0 are full (without background threads,
** flush or compact here instead), switch the memtable when it must.
** Before an ingest every memtable is flushed, and level 0 is waited for
** while it is at its stop. With the memtables empty, the ingested files
** hold the newest data of every key they touch, and every WAL record is
** older than the batch, so the manifest's last sequence number can move
** past the batch without recovery skipping any record.
*/
static int makeRoom(wcs_db *db, int eFor, char **pzErr) {
  int bDelayed = 0;
  int nSlow = db->opt.nL0Trigger + (db->opt.nL0Stop - db->opt.nL0Trigger) / 2;
  if (nSlow < db->opt.nL0Trigger + 1) nSlow = db->opt.nL0Trigger + 1;
  for (;;) {
    int nL0 = vset_current(db->pVs)->anFile[0];
    int bEmpty =
        memtable_count(db->pMem) == 0 && memtable_rangedel_count(db->pMem) == 0;
    if (db->bgRc) {
      return wcs_seterr(pzErr, db->bgRc, "%s",
                        db->zBgErr ? db->zBgErr : wcs_errstr(db->bgRc));
    }
    if (eFor == ROOM_WRITE && !bDelayed && nL0 >= nSlow &&
        nL0 < db->opt.nL0Stop && db->bThreads) {
      /* level 0 is filling up: give compaction some time, once */
      int64_t t0 = wcs_now_micros();
      pthread_mutex_unlock(&db->mu);
      usleep(1000);
      pthread_mutex_lock(&db->mu);
      addStall(db, t0);
      bDelayed = 1;
      continue;
    }
    /* an empty memtable is never switched: a new one would be as full;
    ** nor one under its budget, unless it holds MEM_MAX_RANGEDELS range
    ** tombstones (small, they would fill it only after hundreds of
    ** thousands, and every read over their keys gathers and sorts them) */
    if (eFor == ROOM_WRITE &&
        (bEmpty || (memtable_bytes(db->pMem) < db->nMemLimit &&
                    memtable_rangedel_count(db->pMem) < MEM_MAX_RANGEDELS))) {
      return WCS_OK;
    }
    if (eFor == ROOM_SWITCH && bEmpty) return WCS_OK;
    if (db->nImm >= MAX_IMM ||
        (eFor == ROOM_INGEST && bEmpty && db->nImm > 0)) {
      if (!db->bThreads) {
        flushInline(db);
        continue;
      }
      {
        int64_t t0 = wcs_now_micros();
        pthread_cond_wait(&db->cvBg, &db->mu);
        addStall(db, t0);
      }
      continue;
    }
    if (nL0 >= db->opt.nL0Stop) {
      if (!db->bThreads) {
        if (maybeCompact(db)) continue;
        /* nothing to compact here: go on over the stop (an ingest
        ** still flushes its memtables first) */
        if (eFor != ROOM_INGEST || bEmpty) return WCS_OK;
      } else if (db->iCompactRetry) {
        /* compactions fail (a full disk, say): waiting would not make
        ** room; the write fails, nothing of it done, and writes go on
        ** once a compaction succeeds (tried again every few seconds) */
        return wcs_seterr(
            pzErr, db->rcCompact ? db->rcCompact : WCS_IOERR,
            "store %s has %d level-0 files, its limit, and its compactions "
            "fail (%s): make room (free disk space) and write again",
            db->zDir, nL0,
            db->zCompactErr ? db->zCompactErr : wcs_errstr(db->rcCompact));
      } else {
        int64_t t0 = wcs_now_micros();
        pthread_cond_wait(&db->cvBg, &db->mu);
        addStall(db, t0);
        continue;
      }
    }
    if (bEmpty && eFor == ROOM_INGEST) return WCS_OK;
    {
      int rc = switchMemtable(db, pzErr);
      if (rc) return rc;
    }
    if (!db->bThreads) {
      while (db->nImm > 0 && db->bgRc == WCS_OK)
        flushInline(db);
      while (maybeCompact(db)) {
      }
      if (db->bgRc) continue;
    }
    if (eFor == ROOM_SWITCH) eFor = ROOM_WRITE;
  }
}

/*
** The end of a bulk ingest or a prebuild (mutex held, leader): one
** manifest edit adds the nOut files aOut (their references are taken,
** whatever happens) at iLevel and moves the last sequence number to
** seqLast; once it is durable the super version is installed and seqLast
** published. A failure before the edit marks the files obsolete (they
** are deleted); a failed edit is sticky (it may be in the manifest).
*/
static int installFiles(wcs_db *db, wcs_fmeta **aOut, int nOut, int iLevel,
                        uint64_t seqLast, uint64_t nBytes, char **pzErr) {
  wcs_vedit e;
  int rc = WCS_OK, i;
  memset(&e, 0, sizeof e);
  for (i = 0; i < nOut; i++) {
    if (rc == WCS_OK) {
      rc = vedit_add_file(&e, iLevel, aOut[i]); /* takes the reference */
      if (rc == WCS_OK) continue;
      wcs_seterr(pzErr, rc, "out of memory");
    }
    aOut[i]->bObsolete = 1; /* never offered to the manifest */
    fmeta_unref(aOut[i]);
  }
  if (rc) {
    for (i = 0; i < e.nAdd; i++)
      e.aAdd[i].pMeta->bObsolete = 1;
  }
  if (rc == WCS_OK) {
    e.bLastSeq = 1;
    e.lastSeq =
        vset_last_seq(db->pVs) > seqLast ? vset_last_seq(db->pVs) : seqLast;
    rc = vset_apply(db->pVs, &e, pzErr);
    if (rc) setBgError(db, rc, dupStr(*pzErr));
  }
  vedit_clear(&e);
  if (rc == WCS_OK) {
    svInstall(db);
    atomic_store_explicit(&db->lastSeq, seqLast, memory_order_release);
    db->nIngests++;
    db->nBytesIngested += nBytes;
    pthread_cond_broadcast(&db->cvWork); /* a compaction may be due */
  }
  return rc;
}

/*
** Commit batch b as sorted files (bulk ingest; mutex held, leader, the
** batch alone in its group; the mutex is released while files are
** written). The batch takes the sequence numbers it would take through
** the WAL; the files are written and fsynced (sst.c), and one manifest
** edit adds them at the level ingest_level picks and moves the last
** sequence number past the batch. Only after that edit is durable is the
** new super version installed and the batch's sequence numbers
** published, so readers see all of it or none of it, and after a crash
** it is there exactly when the edit is (files no edit names are deleted
** at open). A failure before the edit leaves nothing behind; a failed
** edit is sticky, as a failed flush is (the edit may be in the manifest).
*/
static int ingestCommit(wcs_db *db, wcs_batch *b, char **pzErr) {
  ingest_plan *pPlan = NULL;
  wcs_version *pBase = NULL;
  wcs_fmeta **aOut = NULL;
  uint64_t *aSnap = NULL, seq0, seqLast, nBytes = 0;
  int nSnap = 0, nOut = 0, iLevel = 0, rc;
  compact_job j;
  memset(&j, 0, sizeof j);

  rc = makeRoom(db, ROOM_INGEST, pzErr);
  if (rc) return rc;
  seq0 = atomic_load_explicit(&db->lastSeq, memory_order_relaxed) + 1;
  if (seq0 + (uint64_t)b->nOp > WCS_SEQ_MAX) {
    return wcs_seterr(pzErr, WCS_FULL,
                      "store %s has used every sequence number", db->zDir);
  }
  seqLast = seq0 + (uint64_t)b->nOp - 1;
  wcs_put64(b->rep.a + WAL_BATCH_OFF_SEQ, seq0);
  wcs_put32(b->rep.a + WAL_BATCH_OFF_COUNT, (uint32_t)b->nOp);
  /* the latest seq in the list is below the batch: no entry of it is
  ** visible to every reader, so none is rewritten at seq 0 */
  aSnap = snapList(db, &nSnap);
  if (aSnap == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  pBase = vset_current(db->pVs);
  version_ref(pBase);
  pthread_mutex_unlock(&db->mu);

  rc = ingest_plan_new(b->rep.a, b->rep.n, b->nRunPrefix, &pPlan, pzErr);
  if (rc == WCS_OK) {
    /* where the files will probably go: size them for that level */
    pthread_mutex_lock(&db->mu);
    iLevel = ingest_level(vset_current(db->pVs), pPlan);
    pthread_mutex_unlock(&db->mu);
    jobInit(db, &j, pBase, aSnap, nSnap, iLevel);
    rc = ingest_write(pPlan, &j, &aOut, &nOut, &nBytes, pzErr);
  }

  pthread_mutex_lock(&db->mu);
  if (rc == WCS_OK) {
    /* compactions ran meanwhile: choose again against the current files */
    iLevel = ingest_level(vset_current(db->pVs), pPlan);
    rc = installFiles(db, aOut, nOut, iLevel, seqLast, nBytes, pzErr);
  }
  free(aOut);
  free(aSnap);
  version_unref(pBase);
  ingest_plan_free(pPlan);
  return rc;
}

/* ====================================================================
** Prebuilt ingest (wal.h, wcs_prebuild; doc/storage.md)
** ==================================================================== */

static int commit(wcs_db *db, wcs_batch *pBatch, wcs_prebuild *pPre,
                  char **pzErr);

/* Bytes the worker reads of the owner's payload in one pass, at most
** (a withdrawal waits for the pass to end). */
#define PREBUILD_SLICE (256u << 10)

struct wcs_prebuild {
  wcs_db *db;
  pthread_t th;
  pthread_mutex_t mu;    /* guards the fields up to rc */
  pthread_cond_t cv;     /* bytes, a finish, a stop, a pass's end; the
                         ** worker's end */
  const uint8_t *p;      /* the owner's payload, NULL: withdrawn */
  size_t nOffered;       /* its bytes that may be read */
  size_t nRead;          /* its bytes the worker has taken (the header
                         ** gap first: none of it is read) */
  int bBusy;             /* the worker is reading p (without the mutex) */
  int bFinish;           /* nOffered is the payload's end */
  int bStop;             /* abandoned */
  int bDone;             /* the worker has ended */
  int rc;                /* its result (WCS_NOTFOUND: declined) */
  char *zErr;            /* its message */
  uint64_t seq;          /* every entry's sequence number */
  ingest_stream *pStream;
  wcs_fmeta **aOut;      /* the files, in key order, once finished */
  int nOut;
  uint64_t nBytes;       /* their bytes */
};

/*
** The worker: passes over the offered bytes, in place. A pass takes at
** most PREBUILD_SLICE bytes (more only when one operation is longer), and
** ends at the last whole operation in them; the next starts there.
*/
static void *prebuildMain(void *pArg) {
  wcs_prebuild *pb = pArg;
  int rc = WCS_OK;
  char *zErr = NULL;
  size_t nMax = PREBUILD_SLICE;
  pthread_mutex_lock(&pb->mu);
  for (;;) {
    const uint8_t *p;
    size_t n, nUsed = 0;
    if (pb->bStop) {
      rc = WCS_NOTFOUND;
      break;
    }
    if (pb->nOffered < pb->nRead) {
      rc = WCS_NOTFOUND; /* the payload shrank under what was read */
      break;
    }
    if (pb->p == NULL || pb->nRead == pb->nOffered) {
      if (pb->bFinish && pb->p && pb->nRead == pb->nOffered) break;
      pthread_cond_wait(&pb->cv, &pb->mu);
      continue;
    }
    p = pb->p + pb->nRead;
    n = pb->nOffered - pb->nRead;
    if (n > nMax) n = nMax;
    pb->bBusy = 1;
    pthread_mutex_unlock(&pb->mu);
    rc = ingest_stream_add(pb->pStream, p, n, &nUsed, &zErr);
    pthread_mutex_lock(&pb->mu);
    pb->bBusy = 0;
    pb->nRead += nUsed;
    pthread_cond_broadcast(&pb->cv); /* a withdrawal may be waiting */
    if (rc) break;
    if (nUsed == 0) {
      /* an operation longer than the pass, or torn at the end of what was
      ** offered, which an offer's bytes never are */
      if (n == pb->nOffered - pb->nRead) {
        rc = WCS_NOTFOUND;
        break;
      }
      nMax = n * 2;
    } else {
      nMax = PREBUILD_SLICE;
    }
  }
  pthread_mutex_unlock(&pb->mu);
  if (rc == WCS_OK) {
    rc = ingest_stream_finish(pb->pStream, &pb->aOut, &pb->nOut, &pb->nBytes,
                              &zErr);
  }
  ingest_stream_free(pb->pStream);
  pb->pStream = NULL;
  pthread_mutex_lock(&pb->mu);
  pb->rc = rc;
  pb->zErr = zErr;
  pb->bDone = 1;
  pthread_cond_broadcast(&pb->cv);
  pthread_mutex_unlock(&pb->mu);
  return NULL;
}

/* Stop the worker (bStop: abandon) or wait for its end, then join it. */
static void prebuildJoin(wcs_prebuild *pb, int bStop) {
  pthread_mutex_lock(&pb->mu);
  if (bStop) pb->bStop = 1;
  pthread_cond_broadcast(&pb->cv);
  while (!pb->bDone)
    pthread_cond_wait(&pb->cv, &pb->mu);
  pthread_mutex_unlock(&pb->mu);
  pthread_join(pb->th, NULL);
}

static void prebuildFree(wcs_prebuild *pb) {
  int i;
  for (i = 0; i < pb->nOut; i++) {
    if (pb->aOut[i] == NULL) continue; /* taken by the manifest edit */
    pb->aOut[i]->bObsolete = 1;         /* never offered to the manifest */
    fmeta_unref(pb->aOut[i]);
  }
  free(pb->aOut);
  free(pb->zErr);
  pthread_mutex_destroy(&pb->mu);
  pthread_cond_destroy(&pb->cv);
  free(pb);
}

int wcs_prebuild_start(wcs_db *db, size_t nRunPrefix, wcs_prebuild **ppPre) {
  wcs_prebuild *pb;
  compact_job j;
  uint64_t seq;
  int rc;
  *ppPre = NULL;
  if (db == NULL) return WCS_MISUSE;
  if (db->bReadOnly || sysconf(_SC_NPROCESSORS_ONLN) < 2) return WCS_NOTFOUND;
  seq = atomic_load(&db->lastSeq) + WCS_PREBUILD_SEQ_GAP;
  if (seq > WCS_SEQ_MAX) return WCS_NOTFOUND;
  pb = calloc(1, sizeof *pb);
  if (pb == NULL) return WCS_NOMEM;
  pb->db = db;
  pb->seq = seq;
  pb->nRead = pb->nOffered = WAL_BATCH_HEADER; /* the gap is not read */
  /* files sized for the last level, where a load into fresh keys goes */
  memset(&j, 0, sizeof j);
  jobInit(db, &j, NULL, NULL, 0, WCS_NLEVEL - 1);
  j.pbStop = &db->bShutdown;
  rc = ingest_stream_new(&j, nRunPrefix, seq, &pb->pStream);
  if (rc) {
    free(pb);
    return rc;
  }
  pthread_mutex_init(&pb->mu, NULL);
  pthread_cond_init(&pb->cv, NULL);
  if (pthread_create(&pb->th, NULL, prebuildMain, pb) != 0) {
    ingest_stream_free(pb->pStream);
    pthread_mutex_destroy(&pb->mu);
    pthread_cond_destroy(&pb->cv);
    free(pb);
    return WCS_NOTFOUND;
  }
  *ppPre = pb;
  return WCS_OK;
}

void wcs_prebuild_offer(wcs_prebuild *pb, const void *p, size_t n) {
  if (pb == NULL) return;
  pthread_mutex_lock(&pb->mu);
  pb->p = p;
  if (p) {
    if (n > pb->nOffered) pb->nOffered = n;
    pthread_cond_broadcast(&pb->cv);
  } else {
    while (pb->bBusy) /* the pass reading it ends first */
      pthread_cond_wait(&pb->cv, &pb->mu);
  }
  pthread_mutex_unlock(&pb->mu);
}

void wcs_prebuild_abandon(wcs_prebuild *pb) {
  if (pb == NULL) return;
  prebuildJoin(pb, 1);
  prebuildFree(pb);
}

/*
** Install the prebuild's files (mutex held, leader, alone in its group).
** As ingestCommit, but the files exist already and every entry has the
** one sequence number pb->seq, which must still be above every other
** commit's: then the entries are newer than everything in the store, and
** older snapshots skip the files (their minSeq is above them). Declines
** with WCS_NOTFOUND when it is not.
*/
static int prebuildInstall(wcs_db *db, wcs_prebuild *pb, char **pzErr) {
  ingest_range r;
  int rc, nOut = pb->nOut;
  if (nOut == 0 || atomic_load(&db->lastSeq) >= pb->seq ||
      vset_last_seq(db->pVs) >= pb->seq) {
    return WCS_NOTFOUND; /* before makeRoom: a decline flushes nothing */
  }
  rc = makeRoom(db, ROOM_INGEST, pzErr);
  if (rc) return rc;
  r.pLo = pb->aOut[0]->pSmallest;
  r.nLo = pb->aOut[0]->nSmallest - WCS_IKEY_TRAILER;
  r.pHi = pb->aOut[nOut - 1]->pLargest; /* runs are disjoint: it ends last */
  r.nHi = pb->aOut[nOut - 1]->nLargest - WCS_IKEY_TRAILER;
  r.bHiInf = 0;
  pb->nOut = 0; /* installFiles takes the references */
  rc = installFiles(db, pb->aOut, nOut,
                    ingest_level_range(vset_current(db->pVs), &r), pb->seq,
                    pb->nBytes, pzErr);
  if (rc == WCS_OK) db->nPrebuilds++;
  return rc;
}

int wcs_prebuild_commit(wcs_prebuild *pb, const void *p, size_t n, int nOp) {
  wcs_db *db;
  char *zErr = NULL;
  int rc;
  if (pb == NULL) return WCS_MISUSE;
  db = pb->db;
  pthread_mutex_lock(&pb->mu);
  pb->p = p;
  pb->nOffered = n;
  pb->bFinish = 1;
  pthread_mutex_unlock(&pb->mu);
  prebuildJoin(pb, 0);
  rc = pb->rc;
  if (rc == WCS_OK && nOp <= 0) rc = WCS_NOTFOUND;
  if (rc == WCS_OK) {
    rc = commit(db, NULL, pb, &zErr);
    if (rc == WCS_NOTFOUND) {
      free(zErr);
      zErr = NULL;
    }
  } else {
    rc = WCS_NOTFOUND; /* the owner's ordinary commit reports real errors */
  }
  prebuildFree(pb);
  if (rc == WCS_NOTFOUND) return rc;
  return setErr(db, rc, zErr);
}

/* Commit queue: wait for our turn or for a leader to do our work. Runs the
** batch (or a forced switch when pBatch is NULL). */
static int commit(wcs_db *db, wcs_batch *pBatch, wcs_prebuild *pPre,
                  char **pzErr) {
  Writer w;
  Writer *pLast, *p;
  int rc = WCS_OK;
  uint64_t seq0 = 0, seq;
  memset(&w, 0, sizeof w);
  w.pBatch = pBatch;
  w.pPre = pPre;
  pthread_cond_init(&w.cv, NULL);

  pthread_mutex_lock(&db->mu);
  if (db->pTail)
    db->pTail->pNext = &w;
  else
    db->pHead = &w;
  db->pTail = &w;
  while (!w.bDone && db->pHead != &w)
    pthread_cond_wait(&w.cv, &db->mu);
  if (w.bDone) {
    pthread_mutex_unlock(&db->mu);
    pthread_cond_destroy(&w.cv);
    if (w.rc)
      *pzErr = w.zErr;
    else
      free(w.zErr);
    return w.rc;
  }

  /* we lead */
  pLast = &w;
  if (w.pPre) {
    /* files written already (a forced switch's NULL batch: it goes alone) */
    rc = prebuildInstall(db, w.pPre, pzErr);
  } else if (pBatch && pBatch->rep.n >= db->opt.nIngestBytes) {
    /* a large batch goes alone, straight into sorted files */
    rc = ingestCommit(db, pBatch, pzErr);
    pBatch = NULL;
  } else {
    rc = makeRoom(db, pBatch ? ROOM_WRITE : ROOM_SWITCH, pzErr);
  }
  if (rc == WCS_OK && pBatch) {
    size_t nGroup = pBatch->rep.n;
    size_t nMax = WRITE_GROUP_MAX;
    if (nGroup <= 128 * 1024) nMax = nGroup + 128 * 1024;
    if (nMax > WRITE_GROUP_MAX) nMax = WRITE_GROUP_MAX;
    for (p = w.pNext; p; p = p->pNext) {
      if (p->pBatch == NULL) break; /* a forced switch goes alone */
      if (p->pBatch->rep.n >= db->opt.nIngestBytes) break; /* an ingest too */
      if (nGroup + p->pBatch->rep.n > nMax) break;
      nGroup += p->pBatch->rep.n;
      pLast = p;
    }
    seq0 = atomic_load_explicit(&db->lastSeq, memory_order_relaxed) + 1;
    seq = seq0;
    db->walBuf.n = 0;
    for (p = &w;; p = p->pNext) {
      wcs_batch *b = p->pBatch;
      if (seq + (uint64_t)b->nOp > WCS_SEQ_MAX) {
        rc = wcs_seterr(pzErr, WCS_FULL,
                        "store %s has used every sequence number", db->zDir);
        break;
      }
      wcs_put64(b->rep.a + WAL_BATCH_OFF_SEQ, seq);
      wcs_put32(b->rep.a + WAL_BATCH_OFF_COUNT, (uint32_t)b->nOp);
      seq += (uint64_t)b->nOp;
      if (db->pWal) {
        rc = wal_frame(&db->walBuf, b->rep.a, b->rep.n);
        if (rc) {
          wcs_seterr(pzErr, rc, "out of memory");
          break;
        }
      }
      if (p == pLast) break;
    }
    if (rc == WCS_OK) {
      wcs_memtable *m = db->pMem;
      pthread_mutex_unlock(&db->mu);
      if (db->pWal) {
        rc = wal_writer_append(db->pWal, db->walBuf.a, db->walBuf.n, pzErr);
        if (rc == WCS_OK && db->opt.iSync == WCS_SYNC_FULL) {
          rc = wal_writer_sync(db->pWal, pzErr);
        }
      }
      for (p = &w; rc == WCS_OK; p = p->pNext) {
        wcs_batch *b = p->pBatch;
        rc = wal_batch_walk(b->rep.a, b->rep.n, db->zDir, 0, m, applyOp, pzErr);
        if (rc == WCS_NOMEM || rc == WCS_TOOBIG) {
          /* the WAL has the batch but the memtable does not */
          wcs_seterr(pzErr, rc, "out of memory applying a batch to %s",
                     db->zDir);
        }
        if (rc) {
          pthread_mutex_lock(&db->mu);
          setBgError(db, rc, dupStr(*pzErr));
          pthread_mutex_unlock(&db->mu);
        }
        if (p == pLast) break;
      }
      pthread_mutex_lock(&db->mu);
      memCharge(db);
      if (rc == WCS_OK) {
        atomic_store_explicit(&db->lastSeq, seq - 1, memory_order_release);
      } else if (db->pWal && wal_writer_broken(db->pWal)) {
        /* the log may hold these records (a failed fsync) or garbage:
        ** nothing more may be written until a reopen sorts it out */
        setBgError(db, rc, dupStr(*pzErr));
      }
    }
  }

  /* finish the group */
  for (;;) {
    p = db->pHead;
    db->pHead = p->pNext;
    if (db->pHead == NULL) db->pTail = NULL;
    if (p != &w) {
      p->rc = rc;
      if (rc && *pzErr) p->zErr = dupStr(*pzErr);
      p->bDone = 1;
      pthread_cond_signal(&p->cv);
    }
    if (p == pLast) break;
  }
  if (db->pHead) pthread_cond_signal(&db->pHead->cv);
  pthread_mutex_unlock(&db->mu);
  pthread_cond_destroy(&w.cv);
  return rc;
}

/*
** The message of a single-key write (wcs_db_put, wcs_db_delete) whose
** operation was refused: a NULL pointer with a length, or a size over
** the limits above. The key's bytes are quoted only when its length is
** within the limit (a length that large may not be readable).
*/
static int opErr(wcs_db *db, int rc, const char *zCall, const void *pKey,
                 size_t nKey, size_t nVal) {
  char *z = NULL;
  if (rc == WCS_MISUSE) {
    wcs_seterr(&z, rc,
               "%s: a NULL key or value pointer with a length of %zu; "
               "pass the bytes' address (NULL only with a length of 0)",
               zCall, pKey == NULL ? nKey : nVal);
  } else if (rc == WCS_TOOBIG && nKey > OP_KEY_MAX) {
    wcs_seterr(&z, rc,
               "%s: a key of %zu bytes is longer than the store allows "
               "(%zu bytes at most)",
               zCall, nKey, OP_KEY_MAX);
  } else if (rc == WCS_TOOBIG) {
    char *zKey = wcs_escape(pKey, nKey, 64);
    if (nVal > OP_VAL_MAX) {
      wcs_seterr(&z, rc,
                 "%s: the value of key '%s' is %zu bytes, more than the "
                 "store allows (%zu bytes at most)",
                 zCall, zKey ? zKey : "?", nVal, OP_VAL_MAX);
    } else {
      wcs_seterr(&z, rc,
                 "%s: key '%s' and its value take %zu bytes, more than one "
                 "write batch can hold (%u bytes)",
                 zCall, zKey ? zKey : "?", nKey + nVal,
                 (unsigned)WAL_MAX_RECORD);
    }
    free(zKey);
  }
  return setErr(db, rc, z);
}

int wcs_db_write(wcs_db *db, wcs_batch *pBatch) {
  char *zErr = NULL;
  int rc;
  if (db == NULL) return WCS_MISUSE;
  if (pBatch == NULL) {
    return setErrf(db, WCS_MISUSE, "%s: no batch given (pBatch is NULL)",
                   "wcs_db_write");
  }
  if (pBatch->nOp == 0) return WCS_OK;
  if (db->bReadOnly) {
    return setErrf(db, WCS_READONLY, "store %s is open read-only", db->zDir);
  }
  rc = commit(db, pBatch, NULL, &zErr);
  return setErr(db, rc, zErr);
}

int wcs_db_put(wcs_db *db, const void *pKey, size_t nKey, const void *pVal,
               size_t nVal) {
  wcs_batch b;
  uint8_t aBuf[512];
  int rc;
  if (db == NULL) return WCS_MISUSE;
  /* a batch on the stack, in a stack buffer when it fits */
  memset(&b, 0, sizeof b);
  if (nKey + nVal + 32 <= sizeof aBuf) {
    b.rep.a = aBuf;
    b.rep.nAlloc = sizeof aBuf;
  }
  memset(aBuf, 0, WAL_BATCH_HEADER);
  if (b.rep.a == NULL && wcs_buf_reserve(&b.rep, WAL_BATCH_HEADER)) {
    return WCS_NOMEM;
  }
  b.rep.n = WAL_BATCH_HEADER;
  rc = wcs_batch_put(&b, pKey, nKey, pVal, nVal);
  if (rc == WCS_OK) {
    rc = wcs_db_write(db, &b);
  } else {
    opErr(db, rc, "wcs_db_put", pKey, nKey, nVal);
  }
  if (b.rep.a != aBuf) wcs_buf_free(&b.rep);
  return rc;
}

int wcs_db_delete(wcs_db *db, const void *pKey, size_t nKey) {
  wcs_batch b;
  uint8_t aBuf[512];
  int rc;
  if (db == NULL) return WCS_MISUSE;
  memset(&b, 0, sizeof b);
  if (nKey + 32 <= sizeof aBuf) {
    b.rep.a = aBuf;
    b.rep.nAlloc = sizeof aBuf;
  }
  memset(aBuf, 0, WAL_BATCH_HEADER);
  if (b.rep.a == NULL && wcs_buf_reserve(&b.rep, WAL_BATCH_HEADER)) {
    return WCS_NOMEM;
  }
  b.rep.n = WAL_BATCH_HEADER;
  rc = wcs_batch_delete(&b, pKey, nKey);
  if (rc == WCS_OK) {
    rc = wcs_db_write(db, &b);
  } else {
    opErr(db, rc, "wcs_db_delete", pKey, nKey, 0);
  }
  if (b.rep.a != aBuf) wcs_buf_free(&b.rep);
  return rc;
}

/* ====================================================================
** Point reads
** ==================================================================== */

int wcs_db_get(wcs_db *db, const wcs_snapshot *pSnap, const void *pKey,
               size_t nKey, void **ppVal, size_t *pnVal) {
  SuperVersion *sv;
  uint64_t snap, maxDel = 0, seq = 0;
  int type = 0, bFound = 0, rc = WCS_OK, i;
  const uint8_t *pV;
  size_t nV;
  char *zErr = NULL;
  if (ppVal) *ppVal = NULL;
  if (pnVal) *pnVal = 0;
  if (db == NULL) return WCS_MISUSE;
  if (ppVal == NULL || (pKey == NULL && nKey)) {
    return setErrf(db, WCS_MISUSE,
                   "%s: ppVal is NULL, or pKey is NULL with a nonzero "
                   "length; pass where to put the value and the key's bytes",
                   "wcs_db_get");
  }
  sv = svAcquire(db, pSnap, &snap);

  /* memtables, newest first */
  for (i = -1; !bFound && i < sv->nImm; i++) {
    wcs_memtable *m = i < 0 ? sv->pMem : sv->apImm[sv->nImm - 1 - i];
    uint64_t d = memtable_rangedel_cover(m, pKey, nKey, snap);
    if (d > maxDel) maxDel = d;
    if (memtable_get(m, pKey, nKey, snap, &seq, &type, &pV, &nV)) {
      bFound = 1;
      if (type == WCS_KT_PUT && seq > maxDel) {
        void *p = malloc(nV ? nV : 1);
        if (p == NULL) {
          rc = WCS_NOMEM;
        } else {
          if (nV) memcpy(p, pV, nV);
          *ppVal = p;
          if (pnVal) *pnVal = nV;
        }
      }
    }
  }
  if (!bFound) {
    void *p = NULL;
    size_t n = 0;
    rc = version_get(sv->pVersion, pKey, nKey, snap, &maxDel, &bFound, &type,
                     &p, &n, &zErr);
    if (rc == WCS_OK && bFound && type == WCS_KT_PUT) {
      *ppVal = p;
      if (pnVal) *pnVal = n;
    } else {
      free(p);
    }
  }
  svUnref(sv);
  return setErr(db, rc, zErr);
}

/* ====================================================================
** Snapshots
** ==================================================================== */

int wcs_snapshot_new(wcs_db *db, wcs_snapshot **ppSnap) {
  wcs_snapshot *s;
  if (ppSnap) *ppSnap = NULL;
  if (db == NULL) return WCS_MISUSE;
  if (ppSnap == NULL) {
    return setErrf(db, WCS_MISUSE, "%s: ppSnap is NULL",
                   "wcs_snapshot_new");
  }
  pthread_mutex_lock(&db->mu);
  s = db->pSnapFree;
  if (s) {
    db->pSnapFree = s->pNext;
    db->nSnapFree--;
  } else {
    pthread_mutex_unlock(&db->mu);
    s = malloc(sizeof *s);
    if (s == NULL) return setErr(db, WCS_NOMEM, NULL);
    pthread_mutex_lock(&db->mu);
  }
  s->seq = atomic_load(&db->lastSeq);
  s->bLive = 1;
  s->pNext = NULL;
  s->pPrev = db->pSnapLast;
  if (db->pSnapLast)
    db->pSnapLast->pNext = s;
  else
    db->pSnapFirst = s;
  db->pSnapLast = s;
  pthread_mutex_unlock(&db->mu);
  *ppSnap = s;
  return WCS_OK;
}

void wcs_snapshot_free(wcs_db *db, wcs_snapshot *s) {
  if (db == NULL || s == NULL) return;
  pthread_mutex_lock(&db->mu);
  if (!s->bLive) {
    /* freed before and kept for reuse: a second free would put it on
    ** the free list twice and tie the live list into a cycle */
    pthread_mutex_unlock(&db->mu);
    return;
  }
  s->bLive = 0;
  if (s->pPrev)
    s->pPrev->pNext = s->pNext;
  else
    db->pSnapFirst = s->pNext;
  if (s->pNext)
    s->pNext->pPrev = s->pPrev;
  else
    db->pSnapLast = s->pPrev;
  if (db->nSnapFree < SNAP_FREE_MAX) {
    s->pNext = db->pSnapFree;
    db->pSnapFree = s;
    db->nSnapFree++;
    s = NULL;
  }
  pthread_mutex_unlock(&db->mu);
  free(s);
}

uint64_t wcs_snapshot_seq(const wcs_snapshot *s) {
  return s ? s->seq : 0;
}

/* ====================================================================
** Iterators
**
** The user iterator walks the merged internal-key stream and shows, for
** each user key, the newest version with seq <= the snapshot, unless it is
** a delete or a range tombstone (newer, <= the snapshot) covers it. Moving
** forward the merged stream sits on the shown entry; moving backward it
** sits just before the shown key's entries and the key and value are
** copied (LevelDB's DBIter does the same). Bounds and a prefix become one
** half-open key range [lower, upper).
** ==================================================================== */

struct wcs_iter {
  wcs_iter_run r;       /* first: its current entry and run (iterrun.h) */
  wcs_db *db;
  SuperVersion *sv;     /* pinned */
  uint64_t snap;        /* read at this seq */
  wcs_iiter *pM;        /* the internal stream read: pMerge, or the one
                        ** child when there is one; NULL: not built (a
                        ** failed refresh or retarget) */
  wcs_iiter *pMerge;    /* merging iterator over apKid (borrowed) */
  wcs_iiter *apMem[MAX_IMM + 1]; /* memtable children (owned) */
  wcs_memtable *apMemOf[MAX_IMM + 1]; /* the memtable of each */
  int nMem;                      /* entries of apMem */
  wcs_viters vi;                 /* file children (owned), per target */
  wcs_iiter **apKid;             /* the merged stream's children */
  int nKidAlloc;                 /* entries apKid has room for */
  wcs_buf lower, upper; /* effective bounds (owned copies) */
  int bLower, bUpper;   /* bound present */
  /* r.bUpperCmp: bUpper, and a child may hold keys >= upper: findNext
  ** compares each key with it; r.upperHi, r.upperLo: bytes [0, 8) and
  ** [8, 16) of upper as wcs_key_slice numbers (wcs_iter_run_past_upper) */
  wcs_buf prefix;       /* the prefix option (for bloom skipping) */
  int bPrefix;
  const uint8_t *pBloomPre; /* a bloom prefix every key in bounds shares,
                            ** in prefix or lower; NULL: none (files its
                            ** filter rules out are skipped) */
  size_t nBloomPre;         /* bytes at pBloomPre */
  wcs_buf spare[3];    /* the next lower, upper and prefix, built apart
                       ** from the current ones (options may point into
                       ** them) and then swapped in */
  int bNoFill;         /* the bNoCacheFill option */
  uint64_t nMemDel;    /* range tombstones of sv->pMem when collected */
  int bDelNewer;       /* a memtable's in range, or the newest of the
                       ** files' anywhere, was newer than snap (not taken) */
  const wcs_frags *pVFrags; /* the files' tombstones (version_frags, of
                            ** sv->pVersion) when some are in bounds; the
                            ** memtables' in bounds are in frags */
  int bMemSkipped;     /* sv->pMem was empty then: it has no child */
  int nSources;        /* children of the stream for the current target */
  int nMemKid;         /* of which memtables */
  uint64_t iEpoch;     /* targets aimed so far (wcs_iter_epoch) */
  int bMemOff;         /* sv->pMem is not in the stream: it had no child
                       ** (bMemSkipped), or no key within the bounds when
                       ** iterTarget aimed them, so its child is left out
                       ** (a scan of one table then steps inside its
                       ** blocks while other tables take writes) */
  uint64_t nMemOffCount; /* its entries then: more, and a refresh must
                         ** look again */
  sst_rangedel *aDel;  /* tombstones visible at snap (borrowed keys) */
  wcs_frags frags;     /* their fragments; aSeq[0] is the newest */
  int iFragHint;       /* frags_find_near's, for frags */
  int iVFragHint;      /* and for pVFrags */
  int bRev;            /* direction of the last move */
  int bValid;          /* positioned on a key */
  wcs_buf key, val;    /* saved key/value (reverse) or skip key */
  /* r.pKey, r.nKey: current user key */
  int bSeqZero;        /* forward: the current entry has sequence number 0,
                       ** so no older version of its key exists and the
                       ** next step need not remember the key */
  /* r.pVal, r.nVal: current value */
  wcs_buf seekKey; /* scratch internal key */
  int rc;          /* sticky error */
  char *zErr;
};

/* No run either way (iterrun.h), and no borrowed key. */
static inline void runClear(wcs_iter *it) {
  it->r.pBi = it->r.pBiRev = NULL;
  it->r.bKeyOut = 0;
}

/* Not positioned: no entry, and no run (a run's cursor is only ever
** stepped while the iterator is valid). */
static inline void iterNoEntry(wcs_iter *it) {
  it->bValid = 0;
  runClear(it);
}

static int iterCovered(wcs_iter *it, const uint8_t *k, size_t n, uint64_t seq) {
  const wcs_frag *f;
  if (it->frags.n) {
    f = frags_find_near(&it->frags, k, n, &it->iFragHint);
    if (f && f->aSeq[0] > seq) return 1;
  }
  if (it->pVFrags) {
    /* the files': the newest tombstone visible at the snapshot */
    int q;
    f = frags_find_near(it->pVFrags, k, n, &it->iVFragHint);
    if (f == NULL) return 0;
    for (q = 0; q < f->nSeq && f->aSeq[q] > it->snap; q++) {
    }
    return q < f->nSeq && f->aSeq[q] > seq;
  }
  return 0;
}

static int iterFail(wcs_iter *it) {
  char *z = NULL;
  int rc = it->pM->pMethods->xStatus(it->pM, &z);
  iterNoEntry(it);
  if (rc) {
    it->rc = rc;
    free(it->zErr);
    it->zErr = z;
    setErr(it->db, rc, dupStr(z));
  } else {
    free(z);
  }
  return rc;
}

/* Build internal key (k, trailer) in seekKey. */
static int iterSeekKey(wcs_iter *it, const uint8_t *k, size_t n,
                       uint64_t trailer) {
  it->seekKey.n = 0;
  if (wcs_buf_append(&it->seekKey, k, n) ||
      wcs_buf_append64(&it->seekKey, trailer)) {
    it->rc = WCS_NOMEM;
    iterNoEntry(it);
    return WCS_NOMEM;
  }
  return WCS_OK;
}

/* The block cursor of the one file or level the iterator reads, as a run,
** or NULL: none, or a tombstone could cover a key. */
static struct block_iter *runCursor(wcs_iter *it) {
  wcs_iiter *m = it->pM;
  return it->frags.n == 0 && it->pVFrags == NULL && m->pMethods->xRun &&
                 m->pMethods->xValid(m)
             ? m->pMethods->xRun(m)
             : NULL;
}

/* Forward: from the merged position, find the next visible entry.
** bSkip: skip entries of user key it->key (already shown or deleted). */
static int findNext(wcs_iter *it, int bSkip) {
  wcs_iiter *m = it->pM;
  it->bRev = 0;
  runClear(it);
  while (m->pMethods->xValid(m)) {
    size_t nK;
    const uint8_t *k = m->pMethods->xKey(m, &nK);
    size_t nU = nK - WCS_IKEY_TRAILER;
    uint64_t tr = wcs_ikey_trailer(k, nK);
    uint64_t seq = tr >> 8;
    if (seq <= it->snap) {
      if (it->r.bUpperCmp && wcs_iter_run_past_upper(&it->r, k, nU)) {
        /* a positioned stream has not failed (iter.h): no status to ask */
        iterNoEntry(it);
        return WCS_OK;
      }
      if (bSkip && wcs_ukey_cmp(k, nU, it->key.a, it->key.n) <= 0) {
        /* an older version of a key already handled */
      } else if ((tr & 0xff) != WCS_KT_PUT || iterCovered(it, k, nU, seq)) {
        it->key.n = 0;
        if (wcs_buf_append(&it->key, k, nU)) {
          it->rc = WCS_NOMEM;
          iterNoEntry(it);
          return WCS_NOMEM;
        }
        bSkip = 1;
      } else {
        it->r.pKey = k;
        it->r.nKey = nU;
        it->bSeqZero = seq == 0;
        it->r.pVal = m->pMethods->xValue(m, &it->r.nVal);
        it->bValid = 1;
        if (it->bSeqZero) it->r.pBi = runCursor(it); /* a settled put */
        return WCS_OK;
      }
    }
    m->pMethods->xNext(m);
  }
  iterNoEntry(it);
  return iterFail(it);
}

/* Backward: from the merged position, find the previous visible key. */
static int findPrev(wcs_iter *it) {
  wcs_iiter *m = it->pM;
  int bHave = 0; /* key/val hold a visible version of key */
  it->bRev = 1;
  runClear(it);
  it->key.n = 0;
  while (m->pMethods->xValid(m)) {
    size_t nK;
    const uint8_t *k = m->pMethods->xKey(m, &nK);
    size_t nU = nK - WCS_IKEY_TRAILER;
    uint64_t tr = wcs_ikey_trailer(k, nK);
    uint64_t seq = tr >> 8;
    if (seq <= it->snap) {
      if (bHave && wcs_ukey_cmp(k, nU, it->key.a, it->key.n) < 0) break;
      if (it->bLower && wcs_ukey_cmp(k, nU, it->lower.a, it->lower.n) < 0) {
        break;
      }
      if ((tr & 0xff) != WCS_KT_PUT || iterCovered(it, k, nU, seq)) {
        bHave = 0;
        it->key.n = 0;
      } else {
        size_t nV;
        const uint8_t *v = m->pMethods->xValue(m, &nV);
        it->key.n = 0;
        it->val.n = 0;
        if (wcs_buf_append(&it->key, k, nU) ||
            wcs_buf_append(&it->val, v, nV)) {
          it->rc = WCS_NOMEM;
          iterNoEntry(it);
          return WCS_NOMEM;
        }
        bHave = 1;
      }
    }
    m->pMethods->xPrev(m);
  }
  if (!m->pMethods->xValid(m) && iterFail(it)) return it->rc;
  if (!bHave) {
    iterNoEntry(it);
    return WCS_OK;
  }
  it->r.pKey = it->key.a;
  it->r.nKey = it->key.n;
  it->r.pVal = it->val.a ? it->val.a : (const uint8_t *)"";
  it->r.nVal = it->val.n;
  it->bValid = 1;
  /* the reverse run: the stream is at the entry before the key returned */
  it->r.pBiRev = runCursor(it);
  return WCS_OK;
}

typedef struct DelList {
  sst_rangedel *a;
  int n, nAlloc;
  uint64_t snap;
  int bNewer; /* a tombstone in range was newer than snap (passed over) */
} DelList;

static int delListAdd(void *p, const sst_rangedel *d) {
  DelList *l = p;
  if (d->seq > l->snap) {
    l->bNewer = 1;
    return WCS_OK;
  }
  if (l->n == l->nAlloc) {
    int nNew = l->nAlloc ? l->nAlloc * 2 : 16;
    sst_rangedel *a = realloc(l->a, sizeof(sst_rangedel) * (size_t)nNew);
    if (a == NULL) return WCS_NOMEM;
    l->a = a;
    l->nAlloc = nNew;
  }
  l->a[l->n++] = *d;
  return WCS_OK;
}

/* Compare the successor of prefix p (nSucc = wcs_successor_len(p, ...) > 0
** bytes) with user key u, without building it. */
static int successorCmp(const uint8_t *p, size_t nSucc, const uint8_t *u,
                        size_t nU) {
  size_t m = nSucc - 1;
  uint8_t last = (uint8_t)(p[m] + 1);
  int c = wcs_ukey_cmp(p, m, u, nU < m ? nU : m);
  if (c != 0) return c;
  if (nU == m) return 1;
  if (last != u[m]) return last < u[m] ? -1 : 1;
  return nU == nSucc ? 0 : -1;
}

static int iterStart(wcs_iter *it) {
  runClear(it);
  it->rc = WCS_OK;
  free(it->zErr);
  it->zErr = NULL;
  return WCS_OK;
}

/* Does every key in [lower, upper) share one bloom prefix? Then point
** pBloomPre at it, so files whose filter rules it out are skipped even
** when the caller gave bounds rather than a prefix (a row's cells, say). */
static void iterBoundsPrefix(wcs_iter *it) {
  const wcs_options *pOpt = &it->db->opt;
  size_t nSucc;
  int n;
  it->pBloomPre = NULL;
  it->nBloomPre = 0;
  if (it->bPrefix) {
    it->pBloomPre = it->prefix.a;
    it->nBloomPre = it->prefix.n;
    return;
  }
  if (pOpt->xBloomPrefix == NULL || !it->bLower || !it->bUpper) return;
  n = pOpt->xBloomPrefix(it->lower.a, (int)it->lower.n);
  if (n <= 0 || (size_t)n > it->lower.n) return;
  if (pOpt->xBloomPrefix(it->lower.a, n) != n) return;
  nSucc = wcs_successor_len(it->lower.a, (size_t)n);
  /* every k with lower <= k < upper <= successor(p) starts with p */
  if (nSucc > 0 &&
      successorCmp(it->lower.a, nSucc, it->upper.a, it->upper.n) >= 0) {
    it->pBloomPre = it->lower.a;
    it->nBloomPre = (size_t)n;
  }
}

/* Take bounds, prefix and cache option from o: the range is
** [max(lower, prefix), min(upper, successor(prefix))). The bounds are
** chosen first and each copied once. o's keys may point into the
** iterator's buffers (its current key, say), so the new bounds are built
** in it->spare and swapped in. No allocation once the buffers have
** grown. */
static int iterSetBounds(wcs_iter *it, const wcs_iter_options *o) {
  wcs_buf *pLo = &it->spare[0], *pHi = &it->spare[1], *pPre = &it->spare[2];
  const uint8_t *pL = o->pLower, *pU = o->pUpper;
  size_t nL = o->nLower, nU = o->nUpper, nSucc = 0;
  int bPrefix = o->pPrefix && o->nPrefix;
  wcs_buf t;
  if (bPrefix) {
    if (pL == NULL || wcs_ukey_cmp(pL, nL, o->pPrefix, o->nPrefix) < 0) {
      pL = o->pPrefix;
      nL = o->nPrefix;
    }
    nSucc = wcs_successor_len(o->pPrefix, o->nPrefix);
    if (nSucc > 0 && pU && successorCmp(o->pPrefix, nSucc, pU, nU) >= 0) {
      nSucc = 0; /* upper is the smaller (or the same) */
    }
  }
  pLo->n = pHi->n = pPre->n = 0;
  if (pL && wcs_buf_append(pLo, pL, nL)) return WCS_NOMEM;
  if (nSucc > 0) {
    if (wcs_buf_append(pHi, o->pPrefix, nSucc)) return WCS_NOMEM;
    pHi->a[nSucc - 1]++;
  } else if (pU && wcs_buf_append(pHi, pU, nU)) {
    return WCS_NOMEM;
  }
  if (bPrefix && wcs_buf_append(pPre, o->pPrefix, o->nPrefix)) {
    return WCS_NOMEM;
  }
  t = it->lower, it->lower = *pLo, *pLo = t;
  t = it->upper, it->upper = *pHi, *pHi = t;
  t = it->prefix, it->prefix = *pPre, *pPre = t;
  it->bLower = pL != NULL;
  it->bUpper = nSucc > 0 || pU != NULL;
  it->r.bUpperCmp = it->bUpper; /* until iterTarget knows the children */
  it->r.upperHi = wcs_key_slice(it->upper.a, it->upper.n, 0);
  it->r.upperLo = wcs_key_slice(it->upper.a, it->upper.n, 8);
  it->r.pUpper = it->upper.a;
  it->r.nUpper = it->upper.n;
  it->r.bLower = it->bLower;
  it->r.lowerHi = wcs_key_slice(it->lower.a, it->lower.n, 0);
  it->r.lowerLo = wcs_key_slice(it->lower.a, it->lower.n, 8);
  it->r.pLower = it->lower.a;
  it->r.nLower = it->lower.n;
  it->bPrefix = bPrefix;
  it->bNoFill = o->bNoCacheFill != 0;
  iterBoundsPrefix(it);
  return WCS_OK;
}

/* Drop the merged stream, its children and the tombstones (the super
** version stays). */
static void iterUnbuild(wcs_iter *it) {
  int i;
  if (it->pMerge) it->pMerge->pMethods->xClose(it->pMerge);
  it->pMerge = NULL;
  it->pM = NULL;
  for (i = 0; i < it->nMem; i++)
    it->apMem[i]->pMethods->xClose(it->apMem[i]);
  it->nMem = 0;
  version_iters_clear(&it->vi);
  frags_free(&it->frags);
  memset(&it->frags, 0, sizeof it->frags);
  it->pVFrags = NULL;
  free(it->aDel);
  it->aDel = NULL;
  iterNoEntry(it);
}

/* Aim the built stream at the current bounds: the file children for them
** (version_iters_target keeps those it can), the memtable children, and
** the range tombstones visible at it->snap within them. */
static int iterTarget(wcs_iter *it, char **pzErr) {
  int nKid = 0, rc, i;
  DelList dl;
  it->iEpoch++;
  runClear(it); /* the children change */
  /* most targets have no tombstones: nothing to free */
  if (it->frags.a || it->frags.aPool) frags_free(&it->frags);
  if (it->aDel) {
    free(it->aDel);
    it->aDel = NULL;
  }
  rc = version_iters_target(it->sv->pVersion, &it->vi,
                            it->bLower ? it->lower.a : NULL, it->lower.n,
                            it->bUpper ? it->upper.a : NULL, it->upper.n,
                            it->pBloomPre, it->nBloomPre, !it->bNoFill,
                            pzErr);
  if (rc == WCS_OK && it->nMem + it->vi.nSlot > it->nKidAlloc) {
    int nNew = it->nMem + it->vi.nSlot;
    wcs_iiter **a = realloc(it->apKid, sizeof(wcs_iiter *) * (size_t)nNew);
    if (a == NULL) {
      rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    } else {
      it->apKid = a;
      it->nKidAlloc = nNew;
    }
  }
  if (rc == WCS_OK) {
    /* Does every file child end below the upper bound, with no memtable
    ** child? Then no key the stream shows reaches the bound, and findNext
    ** need not compare each key with it (a scan of a whole table in files
    ** of its own, whose bound is the next table's first key). A level
    ** iterator (several files) and a memtable are not asked: they count
    ** as reaching it. */
    int bBelow = it->bUpper;
    it->bMemOff = it->bMemSkipped;
    it->nMemOffCount = 0;
    for (i = 0; i < it->nMem; i++) {
      wcs_memtable *m = it->apMemOf[i];
      /* a memtable's entries with seq <= snap were all added before snap
      ** was read: one without a key in bounds now has none to show */
      if (!memtable_any_within(m, it->bLower ? it->lower.a : NULL,
                               it->lower.n, it->bUpper ? it->upper.a : NULL,
                               it->upper.n)) {
        if (m == it->sv->pMem) {
          it->bMemOff = 1;
          it->nMemOffCount = memtable_count(m);
        }
        continue;
      }
      it->apKid[nKid++] = it->apMem[i];
      bBelow = 0;
    }
    it->nMemKid = nKid;
    for (i = 0; i < it->vi.nSlot; i++) {
      const wcs_vslot *s = &it->vi.aSlot[i];
      if (!s->bOn) continue;
      it->apKid[nKid++] = s->p;
      if (bBelow && (s->pFile == NULL ||
                     !fmeta_ends_before(s->pFile, it->upper.a, it->upper.n))) {
        bBelow = 0;
      }
    }
    /* one child (a row in one file, say) is read without the merging
    ** layer, as merge_iter_new would do; the merging iterator is left
    ** with no children then */
    rc = merge_iter_set(it->pMerge, it->apKid, nKid == 1 ? 0 : nKid);
    if (rc) wcs_seterr(pzErr, rc, "out of memory");
    it->pM = nKid == 1 ? it->apKid[0] : it->pMerge;
    it->nSources = nKid;
    it->r.bUpperCmp = it->bUpper && !bBelow;
  }

  /* range tombstones visible at the snapshot (counted first: one added
  ** meanwhile makes a refresh rebuild; so does one in range that is newer
  ** than the snapshot, bDelNewer: read at an older snapshot, or one whose
  ** commit was not yet published, a refresh to a later sequence number
  ** must take it) */
  it->nMemDel = memtable_rangedel_count(it->sv->pMem);
  memset(&dl, 0, sizeof dl);
  dl.snap = it->snap;
  for (i = -1; rc == WCS_OK && i < it->sv->nImm; i++) {
    wcs_memtable *m = i < 0 ? it->sv->pMem : it->sv->apImm[i];
    if (memtable_rangedel_count(m)) {
      rc = memtable_rangedels(m, WCS_SEQ_MAX, it->bLower ? it->lower.a : NULL,
                              it->lower.n, it->bUpper ? it->upper.a : NULL,
                              it->upper.n, &dl, delListAdd);
    }
  }
  it->pVFrags = NULL;
  if (rc == WCS_OK) {
    /* the files' are sorted once per version, not per iterator: with
    ** many of them (rows deleted one by one), making an iterator over
    ** their keys would sort them all each time */
    uint64_t nMaxSeq = 0;
    rc = version_frags(it->sv->pVersion, it->bLower ? it->lower.a : NULL,
                       it->lower.n, it->bUpper ? it->upper.a : NULL,
                       it->upper.n, &it->pVFrags, &nMaxSeq);
    if (it->pVFrags && nMaxSeq > it->snap) dl.bNewer = 1; /* (maybe) */
  }
  it->bDelNewer = dl.bNewer;
  it->aDel = dl.a;
  if (rc == WCS_OK && dl.n) rc = frags_build(&it->frags, dl.a, dl.n);
  if (rc == WCS_NOMEM && *pzErr == NULL) wcs_seterr(pzErr, rc, "out of memory");
  return rc;
}

/* Build the merged stream over it->sv at it->snap: memtable children,
** then iterTarget. On failure returns the code with *pzErr set; the
** iterator is then left for iterUnbuild. */
static int iterBuild(wcs_iter *it, char **pzErr) {
  int rc = WCS_OK, i;
  it->bMemSkipped = 0;
  for (i = -1; rc == WCS_OK && i < it->sv->nImm; i++) {
    wcs_memtable *m = i < 0 ? it->sv->pMem : it->sv->apImm[i];
    /* entries added later are newer than the snapshot: an empty memtable
    ** contributes nothing */
    if (memtable_count(m) == 0) {
      if (i < 0) it->bMemSkipped = 1;
      continue;
    }
    rc = memtable_iter(m, &it->apMem[it->nMem]);
    if (rc == WCS_OK) it->apMemOf[it->nMem++] = m;
  }
  if (rc == WCS_OK) rc = merge_iter_new_borrowed(&it->pMerge);
  if (rc) return wcs_seterr(pzErr, rc, "out of memory");
  return iterTarget(it, pzErr);
}

int wcs_iter_new(wcs_db *db, const wcs_iter_options *pOpt, wcs_iter **pp) {
  wcs_iter *it;
  int rc;
  char *zErr = NULL;
  wcs_iter_options o;
  if (pp) *pp = NULL;
  if (db == NULL) return WCS_MISUSE;
  if (pp == NULL) {
    return setErrf(db, WCS_MISUSE, "%s: ppIter is NULL", "wcs_iter_new");
  }
  memset(&o, 0, sizeof o);
  if (pOpt) o = *pOpt;
  it = calloc(1, sizeof *it);
  if (it == NULL) return setErr(db, WCS_NOMEM, NULL);
  it->db = db;
  rc = iterSetBounds(it, &o);
  if (rc) {
    wcs_iter_free(it);
    return setErr(db, rc, NULL);
  }
  it->sv = svAcquire(db, o.pSnap, &it->snap);
  rc = iterBuild(it, &zErr);
  if (rc) {
    wcs_iter_free(it);
    return setErr(db, rc, zErr);
  }
  free(zErr);
  *pp = it;
  return WCS_OK;
}

/* A failed re-pin: the iterator keeps nothing but the error. */
static int iterBuildFailed(wcs_iter *it, int rc, char *zErr) {
  iterUnbuild(it);
  it->rc = rc;
  free(it->zErr);
  it->zErr = zErr;
  return setErr(it->db, rc, dupStr(zErr));
}

/* Re-pin: drop the iterator's children and super version, take sv (a
** reference the caller acquired) and build the children again at seq. */
static int iterRepin(wcs_iter *it, SuperVersion *sv, uint64_t seq) {
  char *zErr = NULL;
  int rc;
  iterUnbuild(it);
  svUnref(it->sv);
  it->sv = sv;
  it->snap = seq;
  rc = iterBuild(it, &zErr);
  if (rc) return iterBuildFailed(it, rc, zErr);
  free(zErr);
  return WCS_OK;
}

int wcs_iter_retarget(wcs_iter *it, const wcs_iter_options *pOpt) {
  wcs_iter_options o;
  SuperVersion *sv;
  uint64_t seq;
  char *zErr = NULL;
  int rc;
  if (it == NULL) return WCS_MISUSE;
  memset(&o, 0, sizeof o);
  if (pOpt) o = *pOpt;
  iterStart(it);
  iterNoEntry(it);
  rc = iterSetBounds(it, &o);
  if (rc) return iterBuildFailed(it, rc, NULL);
  /* The sequence number first, as in svAcquire. The iterator holds a
  ** reference to its super version, which therefore is never freed and
  ** its address never reused: while it is still current (no memtable
  ** switch, flush or compaction since) the pointers compare equal
  ** without the lock, and no reference need be taken. Once replaced it
  ** never becomes current again. */
  seq = o.pSnap ? o.pSnap->seq
                : atomic_load_explicit(&it->db->lastSeq, memory_order_acquire);
  if (it->pM != NULL &&
      atomic_load_explicit(&it->db->pSv, memory_order_acquire) == it->sv &&
      !(it->bMemSkipped && memtable_count(it->sv->pMem) != 0)) {
    /* Same memtables and files: the memtable children read the live
    ** skiplists, the file children are re-aimed, the tombstones taken
    ** again for the new range and snapshot. */
    it->snap = seq;
    rc = iterTarget(it, &zErr);
    if (rc) return iterBuildFailed(it, rc, zErr);
    free(zErr);
    return WCS_OK;
  }
  sv = svAcquire(it->db, o.pSnap, &seq);
  return iterRepin(it, sv, seq);
}

int wcs_iter_sources(const wcs_iter *it) {
  return it && it->pM ? it->nSources : 0;
}

int wcs_iter_prefix_absent(const wcs_iter *it, const void *pPre, size_t nPre) {
  const wcs_options *o;
  if (it == NULL || it->pM == NULL || it->nMemKid > 0) return 0;
  o = &it->db->opt;
  if (o->xBloomPrefix == NULL || nPre > INT_MAX ||
      o->xBloomPrefix(pPre, (int)nPre) != (int)nPre) {
    return 0;
  }
  return version_prefix_absent(it->sv->pVersion, pPre, nPre);
}

/* x for file f (wcs_iter_notes). */
static int noteOf(const wcs_fmeta *f, void *pCtx,
                  int (*x)(void *, const wcs_file_note *)) {
  wcs_file_note n;
  memset(&n, 0, sizeof n);
  if (f->pReader) n.pNote = sst_reader_note(f->pReader, &n.nNote);
  n.iFile = f->iFile;
  n.maxSeq = f->maxSeq;
  n.nRangeDel = f->nRangeDel;
  return x(pCtx, &n);
}

int wcs_iter_notes(const wcs_iter *it, int *pbRun, void *pCtx,
                   int (*x)(void *pCtx, const wcs_file_note *pNote)) {
  const wcs_version *v;
  const wcs_vslot *pOn = NULL;
  int nOn = 0, i, iLevel, rc = WCS_OK;
  *pbRun = 0;
  if (it == NULL) return WCS_MISUSE;
  if (it->rc) return it->rc;
  if (it->pM == NULL || it->pBloomPre) return WCS_OK;
  for (i = 0; i < it->vi.nSlot; i++) {
    if (it->vi.aSlot[i].bOn) {
      pOn = &it->vi.aSlot[i];
      nOn++;
    }
  }
  /* the other children are memtables with keys in the bounds; and a
  ** memtable's range delete (rare) may reach into them without a key */
  if (nOn > 1 || it->nSources != nOn) return WCS_OK;
  for (i = -1; i < it->sv->nImm; i++) {
    if (memtable_rangedel_count(i < 0 ? it->sv->pMem : it->sv->apImm[i])) {
      return WCS_OK;
    }
  }
  *pbRun = 1;
  if (pOn == NULL) return WCS_OK;
  if (pOn->pFile) return noteOf(pOn->pFile, pCtx, x);
  /* a level iterator: every file of that level within the bounds */
  v = it->vi.pVersion;
  iLevel = (int)(pOn - it->vi.aSlot) - v->anFile[0] + 1;
  for (i = 0; rc == WCS_OK && i < v->anFile[iLevel]; i++) {
    const wcs_fmeta *f = v->aaFile[iLevel][i];
    if (fmeta_overlaps(f, it->bLower ? it->lower.a : NULL, it->lower.n,
                       it->bUpper ? it->upper.a : NULL, it->upper.n)) {
      rc = noteOf(f, pCtx, x);
    }
  }
  return rc;
}

uint64_t wcs_iter_epoch(const wcs_iter *it) {
  return it ? it->iEpoch : 0;
}

int wcs_iter_refresh(wcs_iter *it) {
  SuperVersion *sv;
  uint64_t seq;
  if (it == NULL) return WCS_MISUSE;
  iterStart(it);
  iterNoEntry(it);
  sv = svAcquire(it->db, NULL, &seq);
  if (sv == it->sv && it->pM != NULL && !it->bDelNewer &&
      memtable_rangedel_count(sv->pMem) == it->nMemDel &&
      !(it->bMemOff && memtable_count(sv->pMem) != it->nMemOffCount)) {
    /* Same memtables and files, no new range tombstone: the children see
    ** the newer entries already (the memtable is read live); only the
    ** sequence number to read at moves. */
    svUnref(sv);
    it->snap = seq;
    return WCS_OK;
  }
  return iterRepin(it, sv, seq);
}

int wcs_iter_current(const wcs_iter *it) {
  /* without the lock, as in wcs_iter_refresh: the iterator's reference
  ** keeps its super version's address from being reused */
  if (it == NULL || it->pM == NULL) return 0;
  return atomic_load_explicit(&it->db->pSv, memory_order_acquire) == it->sv;
}

void wcs_iter_free(wcs_iter *it) {
  int i;
  if (it == NULL) return;
  iterUnbuild(it);
  svUnref(it->sv);
  free(it->apKid);
  wcs_buf_free(&it->lower);
  wcs_buf_free(&it->upper);
  wcs_buf_free(&it->prefix);
  for (i = 0; i < 3; i++)
    wcs_buf_free(&it->spare[i]);
  wcs_buf_free(&it->key);
  wcs_buf_free(&it->val);
  wcs_buf_free(&it->seekKey);
  free(it->zErr);
  free(it);
}

/* A seek given a NULL key of nonzero length: like any failed move, it
** leaves the iterator invalid with the error as its status. */
static int iterBadKey(wcs_iter *it, const char *zCall) {
  iterNoEntry(it);
  it->rc = WCS_MISUSE;
  return setErrf(it->db, WCS_MISUSE, "%s: the key is NULL but its length is "
                                     "not 0",
                 zCall);
}

int wcs_iter_seek(wcs_iter *it, const void *pKey, size_t nKey) {
  if (it == NULL) return WCS_MISUSE;
  if (pKey == NULL && nKey) return iterBadKey(it, "wcs_iter_seek");
  if (it->pM == NULL) return it->rc; /* a failed refresh */
  iterStart(it);
  if (it->bLower && wcs_ukey_cmp(pKey, nKey, it->lower.a, it->lower.n) < 0) {
    pKey = it->lower.a;
    nKey = it->lower.n;
  }
  if (it->bUpper && wcs_ukey_cmp(pKey, nKey, it->upper.a, it->upper.n) >= 0) {
    iterNoEntry(it);
    return WCS_OK;
  }
  if (iterSeekKey(it, pKey, nKey, wcs_ikey_pack(it->snap, 0xff))) {
    return setErr(it->db, WCS_NOMEM, NULL);
  }
  it->pM->pMethods->xSeek(it->pM, it->seekKey.a, it->seekKey.n);
  return findNext(it, 0);
}

int wcs_iter_first(wcs_iter *it) {
  if (it == NULL) return WCS_MISUSE;
  if (it->pM == NULL) return it->rc; /* a failed refresh */
  if (it->bLower) return wcs_iter_seek(it, it->lower.a, it->lower.n);
  iterStart(it);
  it->pM->pMethods->xFirst(it->pM);
  return findNext(it, 0);
}

/* Position the merged stream on the last entry < upper, then findPrev. */
static int iterToUpper(wcs_iter *it) {
  if (iterSeekKey(it, it->upper.a, it->upper.n, WCS_IKEY_SENTINEL)) {
    return setErr(it->db, WCS_NOMEM, NULL);
  }
  it->pM->pMethods->xSeekForPrev(it->pM, it->seekKey.a, it->seekKey.n);
  return findPrev(it);
}

int wcs_iter_last(wcs_iter *it) {
  if (it == NULL) return WCS_MISUSE;
  if (it->pM == NULL) return it->rc; /* a failed refresh */
  iterStart(it);
  if (it->bUpper) return iterToUpper(it);
  it->pM->pMethods->xLast(it->pM);
  return findPrev(it);
}

int wcs_iter_seek_for_prev(wcs_iter *it, const void *pKey, size_t nKey) {
  if (it == NULL) return WCS_MISUSE;
  if (pKey == NULL && nKey) return iterBadKey(it, "wcs_iter_seek_for_prev");
  if (it->pM == NULL) return it->rc; /* a failed refresh */
  iterStart(it);
  if (it->bUpper && wcs_ukey_cmp(pKey, nKey, it->upper.a, it->upper.n) >= 0) {
    return iterToUpper(it);
  }
  if (it->bLower && wcs_ukey_cmp(pKey, nKey, it->lower.a, it->lower.n) < 0) {
    iterNoEntry(it);
    return WCS_OK;
  }
  /* (key, trailer 0) is the last internal key of the user key */
  if (iterSeekKey(it, pKey, nKey, 0)) return setErr(it->db, WCS_NOMEM, NULL);
  it->pM->pMethods->xSeekForPrev(it->pM, it->seekKey.a, it->seekKey.n);
  return findPrev(it);
}

int wcs_iter_next(wcs_iter *it) {
  wcs_iiter *m;
  if (it == NULL) return WCS_MISUSE;
  if (!it->bValid) return it->rc;
  m = it->pM;
  if (it->bRev) {
    /* the key a reverse run step returned is borrowed: keep a copy, which
    ** findNext compares with once the stream is on the key's entries */
    if (it->r.bKeyOut) {
      it->key.n = 0;
      if (wcs_buf_append(&it->key, it->r.pKey, it->r.nKey)) {
        iterNoEntry(it);
        it->rc = WCS_NOMEM;
        return setErr(it->db, WCS_NOMEM, NULL);
      }
      it->r.bKeyOut = 0;
    }
    /* the stream is before the current key's entries: step onto them */
    if (m->pMethods->xValid(m)) {
      m->pMethods->xNext(m);
    } else if (it->bLower) {
      if (iterSeekKey(it, it->lower.a, it->lower.n, WCS_IKEY_SENTINEL)) {
        return setErr(it->db, WCS_NOMEM, NULL);
      }
      m->pMethods->xSeek(m, it->seekKey.a, it->seekKey.n);
    } else {
      m->pMethods->xFirst(m);
    }
    /* it->key holds the current key: skip its entries */
    return findNext(it, 1);
  }
  if (it->bSeqZero) {
    /* Only a put every reader sees and with nothing older below it is
    ** stored at sequence number 0 (compact.c), and nothing sorts after
    ** it with the same user key: step without copying the key (the
    ** child's key bytes may not survive the step). */
    /* within a run, the inline step (iterrun.h) */
    if (it->r.pBi) {
      const void *k, *v;
      size_t nK, nV;
      int r = wcs_iter_run_next(it, &k, &nK, &v, &nV);
      if (r != 0) return r > 0 ? WCS_OK : it->rc;
    }
    m->pMethods->xNext(m);
    return findNext(it, 0);
  }
  it->key.n = 0;
  if (wcs_buf_append(&it->key, it->r.pKey, it->r.nKey)) {
    iterNoEntry(it);
    it->rc = WCS_NOMEM;
    return setErr(it->db, WCS_NOMEM, NULL);
  }
  m->pMethods->xNext(m);
  return findNext(it, 1);
}

int wcs_iter_run_resume(wcs_iter *it) {
  return findNext(it, 0);
}

int wcs_iter_prev(wcs_iter *it) {
  wcs_iiter *m;
  if (it == NULL) return WCS_MISUSE;
  if (!it->bValid) return it->rc;
  if (it->r.pBiRev) {
    /* within a reverse run, the inline step (iterrun.h) */
    const void *k, *v;
    size_t nK, nV;
    if (wcs_iter_run_prev(it, &k, &nK, &v, &nV)) return WCS_OK;
  }
  m = it->pM;
  if (!it->bRev) {
    /* step the stream back before every entry of the current key */
    wcs_buf cur = {0};
    if (wcs_buf_append(&cur, it->r.pKey, it->r.nKey)) {
      iterNoEntry(it);
      it->rc = WCS_NOMEM;
      return setErr(it->db, WCS_NOMEM, NULL);
    }
    for (;;) {
      size_t nK;
      const uint8_t *k;
      m->pMethods->xPrev(m);
      if (!m->pMethods->xValid(m)) break;
      k = m->pMethods->xKey(m, &nK);
      if (wcs_ukey_cmp(k, nK - WCS_IKEY_TRAILER, cur.a, cur.n) < 0) break;
    }
    wcs_buf_free(&cur);
    if (!m->pMethods->xValid(m)) {
      if (iterFail(it)) return it->rc;
      iterNoEntry(it);
      it->bRev = 1;
      return WCS_OK;
    }
  }
  return findPrev(it);
}

int wcs_iter_valid(const wcs_iter *it) {
  return it && it->bValid;
}
int wcs_iter_status(const wcs_iter *it) {
  return it ? it->rc : WCS_MISUSE;
}

const void *wcs_iter_key(const wcs_iter *it, size_t *pn) {
  if (it == NULL || !it->bValid) {
    if (pn) *pn = 0;
    return NULL;
  }
  if (pn) *pn = it->r.nKey;
  return it->r.nKey ? (const void *)it->r.pKey : (const void *)"";
}

int wcs_iter_entry(const wcs_iter *it, const void **ppKey, size_t *pnKey,
                   const void **ppVal, size_t *pnVal) {
  if (it == NULL || !it->bValid) {
    *ppKey = *ppVal = NULL;
    *pnKey = *pnVal = 0;
    return 0;
  }
  *ppKey = it->r.nKey ? (const void *)it->r.pKey : (const void *)"";
  *pnKey = it->r.nKey;
  *ppVal = it->r.nVal ? (const void *)it->r.pVal : (const void *)"";
  *pnVal = it->r.nVal;
  return 1;
}

const void *wcs_iter_value(const wcs_iter *it, size_t *pn) {
  if (it == NULL || !it->bValid) {
    if (pn) *pn = 0;
    return NULL;
  }
  if (pn) *pn = it->r.nVal;
  return it->r.nVal ? (const void *)it->r.pVal : (const void *)"";
}

/* ====================================================================
** Open, recovery, close
** ==================================================================== */

typedef struct LogList {
  uint64_t *a;
  int n, nAlloc;
} LogList;

static int collectLog(void *p, const char *zName) {
  LogList *l = p;
  unsigned long long n;
  char c;
  if (sscanf(zName, "%llu.lo%c", &n, &c) == 2 && c == 'g' &&
      strlen(zName) > 4 && strcmp(zName + strlen(zName) - 4, ".log") == 0) {
    if (l->n == l->nAlloc) {
      int nNew = l->nAlloc ? l->nAlloc * 2 : 8;
      uint64_t *a = realloc(l->a, sizeof(uint64_t) * (size_t)nNew);
      if (a == NULL) return WCS_NOMEM;
      l->a = a;
      l->nAlloc = nNew;
    }
    l->a[l->n++] = n;
  }
  return WCS_OK;
}

static int cmpU64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : (x > y ? 1 : 0);
}

/* Flush the recovery memtable into level 0 (open, single-threaded). */
static int recoveryFlush(wcs_db *db, uint64_t maxSeq, char **pzErr) {
  wcs_vedit e;
  uint64_t nBytes = 0, aSnap[1];
  int rc;
  memset(&e, 0, sizeof e);
  aSnap[0] = maxSeq;
  rc = writeLevel0(db, db->pMem, vset_current(db->pVs), aSnap, 1, &e, &nBytes,
                   pzErr);
  if (rc == WCS_OK) {
    e.bLastSeq = 1;
    e.lastSeq =
        maxSeq > vset_last_seq(db->pVs) ? maxSeq : vset_last_seq(db->pVs);
    rc = vset_apply(db->pVs, &e, pzErr);
  }
  vedit_clear(&e);
  if (rc == WCS_OK) {
    wcs_memtable *m = NULL;
    if (memtable_new(db->nMemLimit, 0, &m)) {
      return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    }
    memtable_unref(db->pMem);
    db->pMem = m;
    db->nFlushes++;
    memCharge(db);
  }
  return rc;
}

/*
** Before anything is replayed or written: a sorted file in the directory
** that the manifest does not name is normally what a flush, compaction or
** bulk load left when its process stopped before the edit that installs
** it was recorded, and the sweep deletes it. Each file records the
** manifest in use when it was begun and that manifest's size then
** (sst_options.iManifest): a file begun when the manifest in use was
** longer than it is now shows the manifest lost edits it had (cut short,
** or replaced by an older copy), edits that may name this file and
** others. Opening would delete those files, and reuse their numbers for
** new ones: the open is refused instead, and nothing on disk is changed.
** Files that record nothing (written before the property existed) are
** taken as orphans, as before.
*/
typedef struct OrphanCheck {
  wcs_db *db;
  uint64_t iMan, nMan; /* the manifest in use and the bytes it holds */
  int rc;              /* WCS_OK, or the refusal (zErr) */
  char *zErr;
} OrphanCheck;

static int orphanOne(void *p, const char *zName) {
  OrphanCheck *c = p;
  wcs_db *db = c->db;
  unsigned long long n;
  char zExt[16];
  char *zPath;
  wcs_file *f = NULL;
  sst_reader *r = NULL;
  uint64_t nSize = 0, iMan = 0, nMan = 0;
  if (c->rc != WCS_OK || sscanf(zName, "%llu.%15s", &n, zExt) != 2 ||
      strcmp(zExt, "sst") != 0 || vset_file_live(db->pVs, n)) {
    return WCS_OK;
  }
  zPath = wcs_path_join(db->zDir, zName);
  if (zPath == NULL) {
    c->rc = wcs_seterr(&c->zErr, WCS_NOMEM, "out of memory");
    return WCS_OK;
  }
  if (db->pEnv->xOpen(db->pEnv, zPath, WCS_OPEN_READ, &f, NULL) == WCS_OK &&
      db->pEnv->xSize(f, &nSize, NULL) == WCS_OK &&
      sst_reader_open(db->pEnv, zPath, n, nSize, NULL, &r, NULL) == WCS_OK) {
    /* (a file that does not open is an unfinished one: the sweep's) */
    sst_reader_manifest_pos(r, &iMan, &nMan);
    if (iMan == c->iMan && nMan > c->nMan) {
      c->rc = wcs_seterr(
          &c->zErr, WCS_CORRUPT_BKPT,
          "store %s: MANIFEST-%06llu holds %llu bytes, but %s, which it does "
          "not name, was written when it held %llu: the manifest has lost "
          "edits (cut short, or an older copy), and opening would delete "
          "the files they name. Restore the manifest (from a backup of the "
          "store) and open again; the store was left as it is",
          db->zDir, (unsigned long long)c->iMan, (unsigned long long)c->nMan,
          zName, (unsigned long long)nMan);
    }
  }
  sst_reader_close(r);
  if (f) db->pEnv->xClose(f);
  free(zPath);
  return WCS_OK;
}

static int checkOrphans(wcs_db *db, char **pzErr) {
  OrphanCheck c;
  memset(&c, 0, sizeof c);
  c.db = db;
  c.iMan = vset_manifest_number(db->pVs);
  c.nMan = vset_manifest_end(db->pVs);
  if (c.iMan == 0) return WCS_OK;
  db->pEnv->xList(db->pEnv, db->zDir, &c, orphanOne, NULL);
  if (c.rc != WCS_OK) {
    if (pzErr) {
      *pzErr = c.zErr;
    } else {
      free(c.zErr);
    }
  }
  return c.rc;
}

typedef struct Replay {
  wcs_db *db;
  uint64_t maxSeq; /* highest seq replayed */
} Replay;

/* A log at most this long, the only one replayed, is kept at open with
** its memtable rather than flushed (RocksDB's avoid_flush_during_recovery):
** an open then writes nothing. Longer ones are flushed, so that opens do
** not replay ever more. */
#define LOG_REUSE_BYTES (1u << 20)

/*
** Before anything is replayed or written: every log the manifest tracks
** as live (numbers >= its log number) must exist, and a sealed one must
** hold at least the bytes it was sealed at, a cleanly closed one at least
** the bytes it held at that close (vedit_wal_min_bytes). A log lost or cut
** short would otherwise open as a smaller store, its commits silently
** gone. Nothing on disk is changed on failure.
*/
static int checkLiveLogs(wcs_db *db, char **pzErr) {
  const vedit_wal *a;
  int n = vset_live_logs(db->pVs, &a), i, rc = WCS_OK;
  for (i = 0; rc == WCS_OK && i < n; i++) {
    char *z = logPath(db, a[i].iNum);
    wcs_file *f = NULL;
    uint64_t nSize = 0, nMin = vedit_wal_min_bytes(&a[i]);
    int bExists = 0;
    if (z == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    db->pEnv->xExists(db->pEnv, z, &bExists);
    if (!bExists) {
      char zWant[64];
      if (nMin > 0) {
        snprintf(zWant, sizeof zWant, "a file of %llu bytes",
                 (unsigned long long)nMin);
      } else {
        snprintf(zWant, sizeof zWant, "the log being written");
      }
      rc = wcs_seterr(
          pzErr, WCS_CORRUPT_BKPT,
          "store %s: log %s is missing (expected %s, found no file); the "
          "manifest records it as holding commits that are in no sorted "
          "file, so opening without it would lose them. Restore the file "
          "(from a backup, or from wherever it was moved) and open again; "
          "the store was left as it is",
          db->zDir, z, zWant);
    } else if (nMin > 0) {
      rc = db->pEnv->xOpen(db->pEnv, z, WCS_OPEN_READ, &f, pzErr);
      if (rc == WCS_OK) rc = db->pEnv->xSize(f, &nSize, pzErr);
      db->pEnv->xClose(f);
      if (rc == WCS_OK && nSize < nMin) {
        rc = wcs_seterr(
            pzErr, WCS_CORRUPT_BKPT,
            "store %s: log %s is shorter than recorded (expected at least "
            "%llu bytes, found %llu: truncated?); the commits in its missing "
            "part are in no sorted file. Restore the file (from a backup) and "
            "open again; the store was left as it is",
            db->zDir, z, (unsigned long long)nMin, (unsigned long long)nSize);
      }
    }
    free(z);
  }
  return rc;
}

/*
** Replay WAL files into memtables. Unless read-only: flush them and start
** a new log, or, when one short log was all there was to replay, go on
** appending to it with the replayed memtable. A log the manifest sealed
** must read cleanly to its sealed length, one it recorded at a clean
** close to the length it held then: what would otherwise pass for a torn
** tail there is a lost part of the log, refused before the tail is cut
** (so a torn tail is never cut below that length).
*/
static int recoverLogs(wcs_db *db, char **pzErr) {
  LogList l;
  int rc, i, nReplayed = 0, bFlushed = 0;
  uint64_t maxSeq = vset_last_seq(db->pVs);
  uint64_t skipTo = vset_last_seq(db->pVs);
  uint64_t iLast = 0, nLastEnd = 0; /* the last log replayed, its length */
  memset(&l, 0, sizeof l);
  rc = db->pEnv->xList(db->pEnv, db->zDir, &l, collectLog, pzErr);
  if (rc == WCS_NOMEM) wcs_seterr(pzErr, rc, "out of memory");
  if (rc == WCS_OK && l.n > 1)
    qsort(l.a, (size_t)l.n, sizeof(uint64_t), cmpU64);
  for (i = 0; rc == WCS_OK && i < l.n; i++) {
    vset_mark_file_used(db->pVs, l.a[i]);
  }
  for (i = 0; rc == WCS_OK && i < l.n; i++) {
    char *zPath;
    wal_reader *r = NULL;
    if (l.a[i] < vset_log(db->pVs)) {
      if (!db->bReadOnly) deleteLog(db, l.a[i]); /* obsolete leftover */
      continue;
    }
    zPath = logPath(db, l.a[i]);
    if (zPath == NULL) {
      rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
      break;
    }
    rc = wal_reader_open(db->pEnv, zPath, &r, pzErr);
    while (rc == WCS_OK) {
      const uint8_t *p;
      size_t n;
      uint64_t iOff = 0, seq, nOp;
      rc = wal_reader_next(r, &p, &n, &iOff, pzErr);
      if (rc || p == NULL) break;
      if (n < WAL_BATCH_HEADER) {
        rc = wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                        "corrupt log %s at offset %llu: record too short for "
                        "a write batch",
                        zPath, (unsigned long long)iOff);
        break;
      }
      seq = wcs_get64(p + WAL_BATCH_OFF_SEQ);
      nOp = wcs_get32(p + WAL_BATCH_OFF_COUNT);
      if (nOp == 0 || seq + nOp - 1 <= skipTo) continue; /* in the files */
      if (seq <= maxSeq || seq <= skipTo) {
        rc = wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                        "corrupt log %s at offset %llu: sequence number %llu "
                        "does not follow %llu",
                        zPath, (unsigned long long)iOff,
                        (unsigned long long)seq, (unsigned long long)maxSeq);
        break;
      }
      rc = wal_batch_walk(p, n, zPath, iOff, db->pMem, applyOp, pzErr);
      if (rc == WCS_NOMEM || rc == WCS_TOOBIG) {
        wcs_seterr(pzErr, WCS_NOMEM, "out of memory replaying %s", zPath);
      }
      if (rc == WCS_OK && seq + nOp - 1 > maxSeq) maxSeq = seq + nOp - 1;
      memCharge(db);
      if (rc == WCS_OK && !db->bReadOnly &&
          memtable_bytes(db->pMem) >= db->nMemLimit) {
        rc = recoveryFlush(db, maxSeq, pzErr);
        skipTo = maxSeq;
        bFlushed = 1;
      }
    }
    if (r == NULL) { /* it could not be opened: rc says why */
      free(zPath);
      break;
    }
    nReplayed++;
    iLast = l.a[i];
    nLastEnd = wal_reader_good_end(r);
    if (rc == WCS_OK) {
      const vedit_wal *w = vset_log_tracked(db->pVs, l.a[i]);
      if (w && nLastEnd < vedit_wal_min_bytes(w)) {
        rc = wcs_seterr(
            pzErr, WCS_CORRUPT_BKPT,
            "store %s: log %s does not read cleanly to the length it was "
            "%s at (expected %llu bytes of whole records, found %llu; "
            "the bytes after that were changed or zeroed): the commits in "
            "them would be lost. Restore the file (from a backup) and open "
            "again; the log was left as it is",
            db->zDir, zPath, w->bSealed ? "sealed" : "closed cleanly",
            (unsigned long long)vedit_wal_min_bytes(w),
            (unsigned long long)nLastEnd);
      }
    }
    if (rc == WCS_OK && wal_reader_torn(r) && !db->bReadOnly) {
      /* cut the torn tail so new records never follow garbage */
      wcs_file *f = NULL;
      rc = db->pEnv->xOpen(db->pEnv, zPath, WCS_OPEN_WRITE, &f, pzErr);
      if (rc == WCS_OK)
        rc = db->pEnv->xTruncate(f, wal_reader_good_end(r), pzErr);
      if (rc == WCS_OK) rc = db->pEnv->xSync(f, pzErr);
      db->pEnv->xClose(f);
    }
    wal_reader_close(r);
    free(zPath);
  }
  if (rc == WCS_OK && !db->bReadOnly && nReplayed == 1 && !bFlushed &&
      nLastEnd <= LOG_REUSE_BYTES) {
    /* reuse it, unless sealed (nothing may follow its seal); a log the
    ** manifest does not track yet (written by a binary of format 1, or
    ** created by an open that crashed before recording it) is recorded
    ** first, so that from now on its loss is detected */
    const vedit_wal *w = vset_log_tracked(db->pVs, iLast);
    char *z = logPath(db, iLast);
    if (z == NULL) rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    if (rc == WCS_OK && (w == NULL || !w->bSealed) &&
        wal_writer_open_append(db->pEnv, z, nLastEnd, &db->pWal, NULL) ==
            WCS_OK) {
      if (w == NULL) {
        wcs_vedit e;
        memset(&e, 0, sizeof e);
        if (vedit_log_live(&e, iLast)) {
          rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
        } else {
          rc = vset_apply(db->pVs, &e, pzErr);
        }
        vedit_clear(&e);
      }
      if (rc == WCS_OK) {
        memtable_set_log(db->pMem, iLast);
        atomic_store(&db->lastSeq, maxSeq);
      }
      free(z);
      free(l.a);
      return rc;
    }
    free(z);
  }
  if (rc == WCS_OK && db->bFollow) {
    db->iFollowLog = iLast;
    db->nFollowLog = nLastEnd;
  }
  if (rc == WCS_OK) {
    atomic_store(&db->lastSeq, maxSeq);
    if (!db->bReadOnly) {
      if (memtable_count(db->pMem) || memtable_rangedel_count(db->pMem)) {
        rc = recoveryFlush(db, maxSeq, pzErr);
      }
    }
  }
  if (rc == WCS_OK && !db->bReadOnly) {
    /* every replayed log is now in the files: start a new one */
    char *z;
    wcs_vedit e;
    uint64_t iLog = vset_new_file_number(db->pVs);
    memset(&e, 0, sizeof e);
    e.bLog = 1;
    e.iLog = iLog;
    e.bLastSeq = 1;
    e.lastSeq = maxSeq;
    if (vedit_log_live(&e, iLog)) {
      rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    }
    z = logPath(db, iLog);
    if (z == NULL) rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    if (rc == WCS_OK) rc = wal_writer_open(db->pEnv, z, &db->pWal, pzErr);
    if (rc == WCS_OK) rc = db->pEnv->xSyncDir(db->pEnv, db->zDir, pzErr);
    if (rc == WCS_OK) rc = vset_apply(db->pVs, &e, pzErr);
    vedit_clear(&e);
    free(z);
    if (rc == WCS_OK) {
      memtable_unref(db->pMem);
      db->pMem = NULL;
      if (memtable_new(db->nMemLimit, iLog, &db->pMem)) {
        rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
      }
    }
    for (i = 0; rc == WCS_OK && i < l.n; i++) {
      if (l.a[i] < iLog) deleteLog(db, l.a[i]);
    }
  }
  free(l.a);
  return rc;
}

/* Delete files no version names: sorted files left by an interrupted
** flush or compaction, temporary files, old manifests. */
typedef struct Sweep {
  wcs_db *db;
} Sweep;

static int sweepOne(void *p, const char *zName) {
  wcs_db *db = ((Sweep *)p)->db;
  unsigned long long n;
  char zExt[16];
  char *zPath = NULL;
  int bDel = 0;
  size_t nName = strlen(zName);
  if (sscanf(zName, "%llu.%15s", &n, zExt) == 2) {
    if (strcmp(zExt, "sst") == 0) {
      bDel = !vset_file_live(db->pVs, n);
    } else if (strcmp(zExt, "tmp") == 0) {
      bDel = 1;
    }
  } else if (nName > 9 && strncmp(zName, "MANIFEST-", 9) == 0) {
    bDel = strtoull(zName + 9, NULL, 10) != vset_manifest_number(db->pVs);
  }
  if (bDel) {
    zPath = wcs_path_join(db->zDir, zName);
    if (zPath) {
      db->pEnv->xDelete(db->pEnv, zPath, NULL);
      free(zPath);
    }
  }
  return WCS_OK;
}

static void dbFree(wcs_db *db) {
  int i;
  if (db == NULL) return;
  while (db->pSnapFree) {
    wcs_snapshot *s = db->pSnapFree;
    db->pSnapFree = s->pNext;
    free(s);
  }
  while (db->pSnapFirst) { /* snapshots the caller did not free */
    wcs_snapshot *s = db->pSnapFirst;
    db->pSnapFirst = s->pNext;
    free(s);
  }
  db->pSnapLast = NULL;
  svUnref(db->pSv);
  memtable_unref(db->pMem);
  for (i = 0; i < db->nImm; i++)
    memtable_unref(db->apImm[i]);
  wal_writer_close(db->pWal);
  if (db->pFollowMan) db->pEnv->xClose(db->pFollowMan);
  if (db->pFollowLog) db->pEnv->xClose(db->pFollowLog);
  vset_close(db->pVs);
  if (db->pCache) wcs_cache_free(db->pCache);
  if (db->pLock) db->pEnv->xUnlock(db->pEnv, db->pLock);
  if (db->pOwnEnv) db->pOwnEnv->xDestroy(db->pOwnEnv);
  wcs_buf_free(&db->walBuf);
  free(db->zBgErr);
  free(db->zCompactErr);
  free(db->zDir);
  {
    void *z = pthread_getspecific(db->errKey);
    free(z);
    pthread_setspecific(db->errKey, NULL);
    pthread_key_delete(db->errKey);
  }
  pthread_cond_destroy(&db->cvBg);
  pthread_cond_destroy(&db->cvWork);
  pthread_mutex_destroy(&db->mu);
  pthread_mutex_destroy(&db->svMu);
  free(db);
}

/* The sorted files a store keeps open: nWant, but never more than half
** the process's limit on open files (and at least 8), which its logs,
** SQLite's files and other stores share; past it the least recently read
** are closed (and opened again when read), where opening more would
** fail. */
static int filesAllowed(int nWant) {
  struct rlimit r;
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
    rlim_t nCap = r.rlim_cur / 2;
    if (nCap < 8) nCap = 8;
    if (nWant <= 0 || (rlim_t)nWant > nCap) nWant = (int)nCap;
  }
  return nWant;
}

static int openOnce(wcs_db **ppDb, const char *zPath, const wcs_options *pOpt,
                    wcs_env *pEnv, char **pzErr) {
  wcs_db *db;
  char *zLock = NULL;
  int rc = WCS_OK;
  if (ppDb) *ppDb = NULL;
  if (pzErr) *pzErr = NULL;
  if (ppDb == NULL) return WCS_MISUSE;
  db = calloc(1, sizeof *db);
  if (db == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  if (pOpt)
    db->opt = *pOpt;
  else
    wcs_options_init(&db->opt);
  fixOptions(&db->opt);
  db->bReadOnly = db->opt.bReadOnly;
  db->bInMemory = db->opt.bInMemory;
  if (db->opt.bFollow && !db->bInMemory) {
    /* read-only, without the lock, every file kept open: the writer
    ** deletes the files its compactions replace, and a descriptor open
    ** before that keeps a file readable */
    db->bFollow = 1;
    db->bReadOnly = 1;
    db->opt.bCreate = 0;
    db->opt.nMaxOpenFiles = INT_MAX;
  }
  db->nMemLimit = db->opt.nMemtable / 2;
  /* the cache starts at nCache, as if the memtables held their whole
  ** budget; memCharge lends it what they do not */
  db->nMemCharged = db->opt.nMemtable;
  db->nCacheBudget = db->opt.nCache;
  pthread_mutex_init(&db->mu, NULL);
  pthread_mutex_init(&db->svMu, NULL);
  pthread_cond_init(&db->cvBg, NULL);
  pthread_cond_init(&db->cvWork, NULL);
  if (pthread_key_create(&db->errKey, freeErr) != 0) {
    pthread_cond_destroy(&db->cvBg);
    pthread_cond_destroy(&db->cvWork);
    pthread_mutex_destroy(&db->mu);
    pthread_mutex_destroy(&db->svMu);
    free(db);
    return wcs_seterr(pzErr, WCS_NOMEM, "out of thread-specific keys");
  }
  atomic_init(&db->lastSeq, 0);
  atomic_init(&db->bShutdown, 0);

  if (db->bInMemory) {
    db->pOwnEnv = db->pEnv = wcs_env_mem_new();
    db->bReadOnly = 0;
    db->zDir = dupStr(MEM_DIR);
    if (db->pEnv == NULL || db->zDir == NULL) {
      rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    }
  } else {
    if (zPath == NULL || zPath[0] == 0) {
      rc = wcs_seterr(pzErr, WCS_MISUSE, "no store path given");
    } else {
      size_t n = strlen(zPath);
      db->zDir = dupStr(zPath);
      if (db->zDir == NULL) rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
      while (rc == WCS_OK && n > 1 && db->zDir[n - 1] == '/')
        db->zDir[--n] = 0;
    }
    db->pEnv = pEnv ? pEnv : wcs_env_posix();
  }
  if (rc == WCS_OK && !db->bReadOnly && db->opt.bCreate) {
    rc = db->pEnv->xMkdir(db->pEnv, db->zDir, pzErr);
  }
  if (rc == WCS_OK) {
    int bExists = 0;
    db->pEnv->xExists(db->pEnv, db->zDir, &bExists);
    if (!bExists) {
      rc = wcs_seterr(pzErr, WCS_CANTOPEN,
                      "store directory %s does not exist%s", db->zDir,
                      db->bReadOnly ? ""
                                    : " (this open does not create stores; "
                                      "was it moved or removed?)");
    }
  }
  if (rc == WCS_OK) {
    zLock = malloc(strlen(db->zDir) + 8);
    if (zLock == NULL)
      rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    else
      sprintf(zLock, "%s/LOCK", db->zDir);
  }
  if (rc == WCS_OK && !db->bFollow) {
    rc = db->pEnv->xLock(db->pEnv, zLock, !db->bReadOnly, &db->pLock, pzErr);
  }
  free(zLock);
  if (rc == WCS_OK && wcs_cache_new(db->opt.nCache, &db->pCache)) {
    rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  if (rc == WCS_OK) {
    wcs_cache_set_max_files(db->pCache, filesAllowed(db->opt.nMaxOpenFiles));
    wcs_cache_set_prefetch(db->pCache, !db->opt.bNoPrefetch);
  }
  if (rc == WCS_OK) {
    rc = vset_open(db->pEnv, db->zDir, &db->opt, db->pCache, db->bReadOnly,
                   db->opt.bCreate, &db->pVs, pzErr);
  }
  if (rc == WCS_OK && !db->bInMemory) rc = checkLiveLogs(db, pzErr);
  if (rc == WCS_OK && !db->bInMemory && !db->bFollow) {
    rc = checkOrphans(db, pzErr);
  }
  if (rc == WCS_OK && !db->bReadOnly) rc = vset_open_manifest(db->pVs, pzErr);
  if (rc == WCS_OK && memtable_new(db->nMemLimit, 0, &db->pMem)) {
    rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  if (rc == WCS_OK && !db->bInMemory) rc = recoverLogs(db, pzErr);
  if (rc == WCS_OK && db->bFollow) {
    /* kept open, so that a check for the writer's progress is a stat of
    ** each (followState); opened before the check below, so that they
    ** are the files it vouches for */
    char *z = vset_manifest_path(db->pVs, vset_manifest_number(db->pVs));
    db->nFollowMan = vset_manifest_file_size(db->pVs);
    if (z == NULL) rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    if (rc == WCS_OK) {
      rc = db->pEnv->xOpen(db->pEnv, z, WCS_OPEN_READ, &db->pFollowMan, pzErr);
    }
    free(z);
    if (rc == WCS_OK && db->iFollowLog) {
      z = logPath(db, db->iFollowLog);
      if (z == NULL) rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
      if (rc == WCS_OK) {
        rc =
            db->pEnv->xOpen(db->pEnv, z, WCS_OPEN_READ, &db->pFollowLog, pzErr);
      }
      free(z);
    }
  }
  if (rc == WCS_OK && db->bFollow) {
    /* A flush, log switch or ingest the writer finished while the logs
    ** were read changed the manifest: the logs read may then lack commits
    ** that only the new state has (a log deleted after its flush) while
    ** holding later ones. Unchanged, the logs read continue the state
    ** read without a gap. */
    int bMoved = 0;
    rc = vset_moved_on(db->pVs, &bMoved, pzErr);
    if (rc == WCS_OK && bMoved) {
      rc = wcs_seterr(pzErr, WCS_BUSY,
                      "store %s changed while it was being opened (the "
                      "process writing it went on)",
                      db->zDir);
    }
  }
  if (rc == WCS_OK && db->bInMemory) {
    atomic_store(&db->lastSeq, vset_last_seq(db->pVs));
  }
  if (rc == WCS_OK) memCharge(db);
  if (rc == WCS_OK && !db->bReadOnly) {
    Sweep s;
    s.db = db;
    db->pEnv->xList(db->pEnv, db->zDir, &s, sweepOne, NULL);
  }
  if (rc == WCS_OK && svInstall(db)) {
    rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  if (rc == WCS_OK && !db->bReadOnly && !db->opt.bNoBackground) {
    /* (not "out of memory", which SQLite would say in its own words: a
    ** thread refused is mostly the process's limit on them) */
    int e = pthread_create(&db->flushThread, NULL, flushMain, db);
    if (e != 0) {
      rc = wcs_seterr(pzErr, WCS_ERROR,
                      "cannot start the flush thread of store %s: %s (the "
                      "limit on threads, ulimit -u?)",
                      db->zDir, strerror(e));
    } else if ((e = pthread_create(&db->compactThread, NULL, compactMain,
                                   db)) != 0) {
      atomic_store(&db->bShutdown, 1);
      pthread_mutex_lock(&db->mu);
      pthread_cond_broadcast(&db->cvWork);
      pthread_mutex_unlock(&db->mu);
      pthread_join(db->flushThread, NULL);
      rc = wcs_seterr(pzErr, WCS_ERROR,
                      "cannot start the compaction thread of store %s: %s "
                      "(the limit on threads, ulimit -u?)",
                      db->zDir, strerror(e));
    } else {
      db->bThreads = 1;
    }
  }
  if (rc) {
    dbFree(db);
    return rc;
  }
  *ppDb = db;
  return WCS_OK;
}

/* How often a follower's open is tried before its error is returned. */
#define FOLLOW_TRIES 40

/*
** Open the store. A follower (bFollow) reads files a writer in another
** process changes meanwhile: CURRENT may name a manifest the writer
** has just replaced and deleted, the manifest sorted files or logs that
** a compaction or flush then removed, the manifest may have moved on
** while the logs were read. Each of those ends the open with an error that a
** later try, reading the writer's newer state, does not meet; so a
** follower's open is tried again, after a short pause growing with each
** try, up to FOLLOW_TRIES times, and only the last error is returned (a
** store that is really damaged gives it every time).
*/
int wcs_db_open_env(wcs_db **ppDb, const char *zPath, const wcs_options *pOpt,
                    wcs_env *pEnv, char **pzErr) {
  int rc, i;
  if (pOpt == NULL || !pOpt->bFollow || pOpt->bInMemory) {
    return openOnce(ppDb, zPath, pOpt, pEnv, pzErr);
  }
  for (i = 1;; i++) {
    char *zErr = NULL;
    rc = openOnce(ppDb, zPath, pOpt, pEnv, &zErr);
    if (rc == WCS_OK || rc == WCS_NOMEM || rc == WCS_MISUSE ||
        i == FOLLOW_TRIES) {
      if (pzErr)
        *pzErr = zErr;
      else
        free(zErr);
      return rc;
    }
    free(zErr);
    usleep((useconds_t)(200 * i)); /* 0.2 ms, then longer: 164 ms in all */
  }
}

/*
** The writer's progress as a follower's open files show it (a stat of
** each): *pbMoved when its manifest grew or is gone (deleted once CURRENT
** named another: the writer reopened or rewrote it), or its log is gone
** (flushed and deleted, after the manifest said so); *pnLog the length
** of the log now (nFollowLog when there is none).
*/
static void followState(wcs_db *db, int *pbMoved, uint64_t *pnLog) {
  uint64_t n = 0;
  int bGone = 0;
  *pbMoved = 0;
  *pnLog = db->nFollowLog;
  if (db->pFollowMan == NULL ||
      db->pEnv->xStat(db->pFollowMan, &n, &bGone, NULL) != WCS_OK || bGone ||
      n != db->nFollowMan) {
    *pbMoved = 1;
    return;
  }
  if (db->pFollowLog) {
    if (db->pEnv->xStat(db->pFollowLog, &n, &bGone, NULL) != WCS_OK || bGone) {
      *pbMoved = 1;
      return;
    }
    *pnLog = n;
  }
}

int wcs_db_moved_on(wcs_db *db, int *pbMoved) {
  uint64_t nLog = 0;
  if (db == NULL || pbMoved == NULL) return WCS_MISUSE;
  *pbMoved = 0;
  if (!db->bFollow) return WCS_OK;
  followState(db, pbMoved, &nLog);
  if (nLog != db->nFollowLog) *pbMoved = 1;
  return WCS_OK;
}

/* wcs_db_follow's apply: one operation of a record appended to the log,
** noting whether it touches the watched keys. */
typedef struct Follow {
  wcs_memtable *pMem;
  const uint8_t *pWatch; /* the watched prefix */
  size_t nWatch;
  int bWatched; /* an operation touched it */
} Follow;

static int followOp(void *pCtx, uint64_t seq, int op, const uint8_t *pKey,
                    size_t nKey, const uint8_t *pVal, size_t nVal) {
  Follow *f = pCtx;
  if (f->nWatch &&
      ((nKey >= f->nWatch && memcmp(pKey, f->pWatch, f->nWatch) == 0) ||
       (op != WAL_OP_PUT && op != WAL_OP_DELETE &&
        wcs_ukey_cmp(pKey, nKey, f->pWatch, f->nWatch) <= 0))) {
    f->bWatched = 1; /* the key, or a range delete from before it */
  }
  return applyOp(f->pMem, seq, op, pKey, nKey, pVal, nVal);
}

/*
** A follower catches up with the writer's commits appended to the log it
** replayed last: only the records after the ones read at open (or at the
** last catch-up) are read, applied to its memtable and published, as a
** commit is. Anything else the writer did (a flush, a log switch, a
** compaction: the manifest moved) cannot be caught up with this way:
** *pbMoved = 1, and a new open is needed. Whole records only: a torn
** tail is a commit being written, left for next time. A record that does
** not follow the last sequence number read is treated as a move too.
*/
static int followLocked(wcs_db *db, const void *pWatch, size_t nWatch,
                        int *pbMoved, int *pbWatched) {
  wal_reader *r = NULL;
  char *zErr = NULL, *z;
  uint64_t maxSeq, nLog = 0;
  Follow f;
  int rc = WCS_OK, bMoved = 0;
  followState(db, &bMoved, &nLog);
  if (bMoved || nLog == db->nFollowLog) {
    *pbMoved = bMoved;
    return WCS_OK;
  }
  z = logPath(db, db->iFollowLog);
  if (z == NULL) return setErr(db, WCS_NOMEM, NULL);
  if (wal_reader_open(db->pEnv, z, &r, NULL) != WCS_OK) {
    free(z);
    *pbMoved = 1; /* gone: flushed and deleted */
    return WCS_OK;
  }
  memset(&f, 0, sizeof f);
  f.pMem = db->pMem;
  f.pWatch = pWatch;
  f.nWatch = pWatch ? nWatch : 0;
  maxSeq = atomic_load(&db->lastSeq);
  wal_reader_skip(r, db->nFollowLog);
  while (rc == WCS_OK) {
    const uint8_t *p;
    size_t n;
    uint64_t iOff = 0, seq, nOp;
    rc = wal_reader_next(r, &p, &n, &iOff, &zErr);
    if (rc || p == NULL) break;
    if (n < WAL_BATCH_HEADER) {
      bMoved = 1;
      break;
    }
    seq = wcs_get64(p + WAL_BATCH_OFF_SEQ);
    nOp = wcs_get32(p + WAL_BATCH_OFF_COUNT);
    if (nOp == 0) continue;
    if (seq != maxSeq + 1) {
      bMoved = 1;
      break;
    }
    rc = wal_batch_walk(p, n, z, iOff, &f, followOp, &zErr);
    if (rc == WCS_OK) {
      maxSeq = seq + nOp - 1;
      db->nFollowLog = wal_reader_good_end(r);
    }
  }
  wal_reader_close(r);
  free(z);
  atomic_store(&db->lastSeq, maxSeq); /* whole batches only */
  memCharge(db);
  if (rc == WCS_OK && !bMoved) {
    /* a switch or flush since the check above: the caller opens anew */
    followState(db, &bMoved, &nLog);
  }
  *pbMoved = bMoved;
  *pbWatched = f.bWatched;
  return setErr(db, rc, zErr);
}

int wcs_db_follow(wcs_db *db, const void *pWatch, size_t nWatch, int *pbMoved,
                  int *pbWatched) {
  int rc;
  *pbMoved = 0;
  *pbWatched = 0;
  if (db == NULL) return WCS_MISUSE;
  if (!db->bFollow) return WCS_OK;
  /* as a commit applies and publishes under mu: one catch-up at a time,
  ** while readers go on (they do not take mu) */
  pthread_mutex_lock(&db->mu);
  rc = followLocked(db, pWatch, nWatch, pbMoved, pbWatched);
  pthread_mutex_unlock(&db->mu);
  return rc;
}

int wcs_db_open(wcs_db **ppDb, const char *zPath, const wcs_options *pOpt,
                char **pzErr) {
  return wcs_db_open_env(ppDb, zPath, pOpt, NULL, pzErr);
}

/*
** At a clean close (threads joined, the log synced): record in the
** manifest (VE_LOG_CLOSED) the bytes of whole synced records that the log
** being written holds, so that the next open refuses the log cut short
** below them rather than take the cut for the torn tail of a crash, which
** would drop acknowledged commits without a word. The log stays live: the
** next open may append to it, which only makes it longer. One manifest
** append and fsync; none when the manifest already records that length
** (an open that wrote nothing), with SYNC OFF (nothing was synced, so
** nothing is promised), or when the log is unusable.
*/
static int recordClose(wcs_db *db, char **pzErr) {
  const vedit_wal *w;
  wcs_vedit e;
  uint64_t iLog, nClosed;
  int rc;
  if (db->bReadOnly || db->bInMemory || db->pWal == NULL ||
      db->opt.iSync == WCS_SYNC_OFF || wal_writer_broken(db->pWal)) {
    return WCS_OK;
  }
  iLog = memtable_log(db->pMem);
  nClosed = wal_writer_size(db->pWal) - wal_writer_unsynced(db->pWal);
  w = vset_log_tracked(db->pVs, iLog);
  if (iLog == 0 || nClosed == 0 || (w && w->bSealed) ||
      (w && w->bClosed && w->nClosed == nClosed)) {
    return WCS_OK;
  }
  memset(&e, 0, sizeof e);
  rc = vedit_log_closed(&e, iLog, nClosed);
  if (rc) {
    rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  } else {
    rc = vset_apply(db->pVs, &e, pzErr);
  }
  vedit_clear(&e);
  return rc;
}

int wcs_db_close(wcs_db *db) {
  int rc;
  if (db == NULL) return WCS_OK;
  pthread_mutex_lock(&db->mu);
  atomic_store(&db->bShutdown, 1);
  pthread_cond_broadcast(&db->cvWork);
  pthread_cond_broadcast(&db->cvBg);
  pthread_mutex_unlock(&db->mu);
  if (db->bThreads) {
    pthread_join(db->flushThread, NULL);
    pthread_join(db->compactThread, NULL);
  }
  rc = db->bgRc;
  if (db->pWal && db->opt.iSync != WCS_SYNC_OFF) {
    char *zErr = NULL;
    int rc2 = wal_writer_sync(db->pWal, &zErr);
    free(zErr);
    if (rc == WCS_OK) rc = rc2;
  }
  if (rc == WCS_OK) {
    char *zErr = NULL;
    pthread_mutex_lock(&db->mu);
    rc = recordClose(db, &zErr);
    pthread_mutex_unlock(&db->mu);
    free(zErr);
  }
  dbFree(db);
  return rc;
}

/* ====================================================================
** Maintenance
** ==================================================================== */

int wcs_db_flush(wcs_db *db) {
  char *zErr = NULL;
  int rc;
  if (db == NULL) return WCS_MISUSE;
  if (db->bReadOnly) {
    return setErrf(db, WCS_READONLY, "store %s is open read-only", db->zDir);
  }
  rc = commit(db, NULL, NULL, &zErr);
  if (rc == WCS_OK) {
    pthread_mutex_lock(&db->mu);
    while (db->nImm > 0 && db->bgRc == WCS_OK) {
      if (!db->bThreads) {
        flushInline(db);
      } else {
        pthread_cond_wait(&db->cvBg, &db->mu);
      }
    }
    if (db->bgRc) {
      rc = db->bgRc;
      zErr = dupStr(db->zBgErr);
    }
    pthread_mutex_unlock(&db->mu);
  }
  return setErr(db, rc, zErr);
}

/* Copy file zFrom of env pFrom to zTo of pTo (made anew) and sync it. */
static int copyStoreFile(wcs_env *pFrom, const char *zFrom, wcs_env *pTo,
                         const char *zTo, char **pzErr) {
  enum { CHUNK = 1 << 20 };
  wcs_file *fIn = NULL, *fOut = NULL;
  uint8_t *a = malloc(CHUNK);
  uint64_t iOff = 0;
  int rc;
  if (a == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  rc = pFrom->xOpen(pFrom, zFrom, WCS_OPEN_READ, &fIn, pzErr);
  if (rc == WCS_OK) {
    rc = pTo->xOpen(pTo, zTo, WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &fOut, pzErr);
  }
  while (rc == WCS_OK) {
    size_t n = 0;
    rc = pFrom->xRead(fIn, iOff, a, CHUNK, &n, pzErr);
    if (rc != WCS_OK || n == 0) break;
    rc = pTo->xAppend(fOut, a, n, pzErr);
    iOff += n;
  }
  if (rc == WCS_OK) rc = pTo->xSync(fOut, pzErr);
  if (fIn) pFrom->xClose(fIn);
  if (fOut) pTo->xClose(fOut);
  free(a);
  return rc;
}

/* What wcs_db_checkpoint() made in zDir so far, to remove on failure. */
static void removeCopy(wcs_env *pEnv, const char *zDir, const wcs_version *v,
                       uint64_t iManifest) {
  char zName[64];
  char *z;
  int i, j;
  for (i = 0; i < WCS_NLEVEL; i++) {
    for (j = 0; j < v->anFile[i]; j++) {
      snprintf(zName, sizeof zName, "%06llu.sst",
               (unsigned long long)v->aaFile[i][j]->iFile);
      z = wcs_path_join(zDir, zName);
      if (z) pEnv->xDelete(pEnv, z, NULL);
      free(z);
    }
  }
  snprintf(zName, sizeof zName, "MANIFEST-%06llu",
           (unsigned long long)iManifest);
  z = wcs_path_join(zDir, zName);
  if (z) pEnv->xDelete(pEnv, z, NULL);
  free(z);
  z = wcs_path_join(zDir, "CURRENT");
  if (z) pEnv->xDelete(pEnv, z, NULL);
  free(z);
  if (pEnv == wcs_env_posix()) rmdir(zDir); /* only once empty */
}

/* xList callback: count the entries (other than . and ..). */
static int countEntry(void *pCtx, const char *zName) {
  if (strcmp(zName, ".") != 0 && strcmp(zName, "..") != 0) ++*(int *)pCtx;
  return 0;
}

int wcs_db_checkpoint(wcs_db *db, const char *zDir) {
  wcs_env *pTo;
  wcs_version *v;
  uint64_t iManifest, lastSeq;
  char *zErr = NULL;
  int rc, bExists = 0, i, j;
  if (db == NULL) return WCS_MISUSE;
  if (zDir == NULL || zDir[0] == 0) {
    return setErrf(db, WCS_MISUSE, "%s: no directory given",
                   "wcs_db_checkpoint");
  }
  if (db->bReadOnly) {
    return setErrf(db, WCS_READONLY,
                   "store %s is open read-only: a checkpoint flushes it first",
                   db->zDir);
  }
  /* an in-memory store's copy goes to disk; any other stays in its env */
  pTo = db->bInMemory ? wcs_env_posix() : db->pEnv;
  rc = pTo->xExists(pTo, zDir, &bExists);
  if (rc == WCS_OK && bExists) {
    return setErrf(db, WCS_CANTOPEN,
                   "%s already exists: a checkpoint makes a new directory; "
                   "name one that does not exist",
                   zDir);
  }
  /* everything committed so far into sorted files */
  rc = wcs_db_flush(db);
  if (rc) return rc;
  pthread_mutex_lock(&db->mu);
  v = vset_current(db->pVs);
  version_ref(v); /* its files stay while it is held */
  iManifest = vset_new_file_number(db->pVs);
  lastSeq = vset_last_seq(db->pVs);
  pthread_mutex_unlock(&db->mu);
  for (i = 0; i < WCS_NLEVEL; i++) {
    for (j = 0; j < v->anFile[i]; j++) {
      if (v->aaFile[i][j]->maxSeq > lastSeq) lastSeq = v->aaFile[i][j]->maxSeq;
    }
  }
  rc = pTo->xMkdir(pTo, zDir, &zErr);
  if (rc == WCS_OK) {
    /* made by someone else since the test above: not ours to fill, nor to
    ** clean up */
    int nEntry = 0;
    rc = pTo->xList(pTo, zDir, &nEntry, countEntry, &zErr);
    if (rc != WCS_OK || nEntry > 0) {
      if (rc == WCS_OK) {
        rc = wcs_seterr(&zErr, WCS_MISUSE, "%s appeared meanwhile", zDir);
      }
      version_unref(v);
      return setErr(db, rc, zErr);
    }
  }
  for (i = 0; rc == WCS_OK && i < WCS_NLEVEL; i++) {
    for (j = 0; rc == WCS_OK && j < v->anFile[i]; j++) {
      uint64_t iFile = v->aaFile[i][j]->iFile;
      char *zFrom = vset_file_path(db->pVs, iFile, "sst"), *zTo;
      char zName[32];
      snprintf(zName, sizeof zName, "%06llu.sst", (unsigned long long)iFile);
      zTo = wcs_path_join(zDir, zName);
      if (zFrom == NULL || zTo == NULL) {
        rc = wcs_seterr(&zErr, WCS_NOMEM, "out of memory");
      } else {
        rc = copyStoreFile(db->pEnv, zFrom, pTo, zTo, &zErr);
      }
      free(zFrom);
      free(zTo);
    }
  }
  if (rc == WCS_OK) {
    rc = vset_write_copy_manifest(pTo, zDir, v, iManifest, lastSeq, &zErr);
  }
  if (rc != WCS_OK) {
    char *z = zErr;
    zErr = NULL;
    wcs_seterr(&zErr, rc, "checkpoint of store %s into %s: %s", db->zDir, zDir,
               z ? z : wcs_errstr(rc));
    free(z);
    removeCopy(pTo, zDir, v, iManifest);
  }
  version_unref(v);
  return setErr(db, rc, zErr);
}

int wcs_db_compact_range(wcs_db *db, const void *pStart, size_t nStart,
                         const void *pEnd, size_t nEnd) {
  int rc, iLevel, iTarget = 1, bIntoTarget = 0;
  char *zErr = NULL;
  const uint8_t *pLo = pStart, *pHi = pEnd;
  if (db == NULL) return WCS_MISUSE;
  if (db->bReadOnly) {
    return setErrf(db, WCS_READONLY, "store %s is open read-only", db->zDir);
  }
  rc = wcs_db_flush(db);
  if (rc) return rc;
  pthread_mutex_lock(&db->mu);
  db->nManual++;
  while (db->bCompactRunning)
    pthread_cond_wait(&db->cvBg, &db->mu);
  {
    wcs_version *v = vset_current(db->pVs);
    for (iLevel = 1; iLevel < WCS_NLEVEL; iLevel++) {
      if (v->anFile[iLevel]) iTarget = iLevel;
    }
  }
  for (iLevel = 0; rc == WCS_OK && iLevel < iTarget; iLevel++) {
    wcs_compaction *c = NULL;
    rc = compact_pick_range(vset_current(db->pVs), iLevel, iLevel + 1, pLo,
                            nStart, pHi, nEnd, &c);
    if (rc == WCS_OK && c) {
      if (iLevel + 1 == iTarget) bIntoTarget = 1;
      rc = doCompaction(db, c, &zErr);
    }
  }
  if (rc == WCS_OK && !bIntoTarget) {
    /* rewrite the last level in place to drop deletes and old versions */
    wcs_compaction *c = NULL;
    rc = compact_pick_range(vset_current(db->pVs), iTarget, iTarget, pLo,
                            nStart, pHi, nEnd, &c);
    if (rc == WCS_OK && c) rc = doCompaction(db, c, &zErr);
  }
  db->nManual--;
  pthread_cond_broadcast(&db->cvWork);
  pthread_mutex_unlock(&db->mu);
  return setErr(db, rc, zErr);
}

int wcs_db_approximate(wcs_db *db, const void *pStart, size_t nStart,
                       const void *pEnd, size_t nEnd, uint64_t *pnBytes,
                       uint64_t *pnKeys) {
  SuperVersion *sv;
  uint64_t snap, nBytes = 0, nKeys = 0;
  int i, j;
  if (db == NULL) return WCS_MISUSE;
  sv = svAcquire(db, NULL, &snap);
  for (i = 0; i < WCS_NLEVEL; i++) {
    for (j = 0; j < sv->pVersion->anFile[i]; j++) {
      wcs_fmeta *f = sv->pVersion->aaFile[i][j];
      uint64_t a = 0, b, nData;
      if (!fmeta_overlaps(f, pStart, nStart, pEnd, nEnd)) continue;
      /* keys are spread over the data blocks, not the index and filter
      ** that follow them (a sixth or more of a file of short entries) */
      nData = sst_reader_data_end(f->pReader);
      b = nData;
      if (pStart) a = sst_reader_approx_offset(f->pReader, pStart, nStart);
      if (pEnd) b = sst_reader_approx_offset(f->pReader, pEnd, nEnd);
      if (b <= a) continue;
      nBytes += b - a;
      nKeys += (uint64_t)((double)f->nEntries * (double)(b - a) /
                          (double)nData);
    }
  }
  svUnref(sv);
  if (pnBytes) *pnBytes = nBytes;
  if (pnKeys) *pnKeys = nKeys;
  return WCS_OK;
}

typedef struct Sample {
  uint8_t *pKey; /* malloc'd user key */
  size_t nKey;
  uint64_t nBytes; /* bytes of the block the key starts */
} Sample;

typedef struct SampleColl {
  Sample *a;
  int n, nAlloc;
  uint64_t iPrevOff; /* offset of the previous index entry in this file */
  int bFirst;
  uint64_t nFile;
  int rc;
} SampleColl;

static int sampleCb(void *p, const uint8_t *pKey, size_t nKey, uint64_t iOff) {
  SampleColl *c = p;
  Sample *s;
  if (c->n == c->nAlloc) {
    int nNew = c->nAlloc ? c->nAlloc * 2 : 64;
    Sample *a = realloc(c->a, sizeof(Sample) * (size_t)nNew);
    if (a == NULL) {
      c->rc = WCS_NOMEM;
      return 1;
    }
    c->a = a;
    c->nAlloc = nNew;
  }
  s = &c->a[c->n];
  s->pKey = malloc(nKey ? nKey : 1);
  if (s->pKey == NULL) {
    c->rc = WCS_NOMEM;
    return 1;
  }
  if (nKey) memcpy(s->pKey, pKey, nKey);
  s->nKey = nKey;
  /* the size of the previous block is known once this one starts */
  if (!c->bFirst && c->n > 0) c->a[c->n - 1].nBytes = iOff - c->iPrevOff;
  s->nBytes = c->nFile > iOff ? c->nFile - iOff : 0;
  c->iPrevOff = iOff;
  c->bFirst = 0;
  c->n++;
  return 0;
}

static int cmpSample(const void *a, const void *b) {
  const Sample *x = a, *y = b;
  return wcs_ukey_cmp(x->pKey, x->nKey, y->pKey, y->nKey);
}

int wcs_db_sample_keys(wcs_db *db, void *pCtx,
                       int (*xSample)(void *, const void *, size_t, uint64_t)) {
  SuperVersion *sv;
  uint64_t snap, nTotal = 0, nStep, nAcc = 0, nNext;
  SampleColl c;
  int i, j;
  if (db == NULL) return WCS_MISUSE;
  if (xSample == NULL) {
    return setErrf(db, WCS_MISUSE, "%s: xSample is NULL",
                   "wcs_db_sample_keys");
  }
  memset(&c, 0, sizeof c);
  sv = svAcquire(db, NULL, &snap);
  for (i = 0; c.rc == WCS_OK && i < WCS_NLEVEL; i++) {
    for (j = 0; c.rc == WCS_OK && j < sv->pVersion->anFile[i]; j++) {
      wcs_fmeta *f = sv->pVersion->aaFile[i][j];
      c.bFirst = 1;
      c.nFile = f->nBytes;
      sst_reader_index_keys(f->pReader, &c, sampleCb);
      nTotal += f->nBytes;
    }
  }
  svUnref(sv);
  if (c.rc == WCS_OK) {
    if (c.n > 1) qsort(c.a, (size_t)c.n, sizeof(Sample), cmpSample);
    nStep = nTotal / 256;
    if (nStep < 65536) nStep = 65536;
    nNext = nStep;
    for (i = 0; i < c.n; i++) {
      nAcc += c.a[i].nBytes;
      if (nAcc >= nNext) {
        if (xSample(pCtx, c.a[i].pKey, c.a[i].nKey, nAcc)) break;
        while (nNext <= nAcc)
          nNext += nStep;
      }
    }
  }
  for (i = 0; i < c.n; i++)
    free(c.a[i].pKey);
  free(c.a);
  return c.rc ? setErr(db, c.rc, NULL) : WCS_OK;
}

int wcs_db_stats(wcs_db *db, char **pzJson) {
  wcs_buf b = {0};
  char aLine[2048];
  SuperVersion *sv;
  uint64_t snap, nCacheBytes = 0, nHit = 0, nMiss = 0, nRaw = 0, nStored = 0,
                 nKeys = 0, nMem = 0, nWal = 0, nHeld = 0, nReopen = 0,
                 nMetaHit = 0, nMetaMiss = 0;
  int i, j, n, nOpenFiles = 0, nReaders = 0;
  if (pzJson) *pzJson = NULL;
  if (db == NULL) return WCS_MISUSE;
  if (pzJson == NULL) {
    return setErrf(db, WCS_MISUSE, "%s: pzJson is NULL", "wcs_db_stats");
  }
  sv = svAcquire(db, NULL, &snap);
  if (wcs_buf_append(&b, "{\"levels\":[", 11)) goto nomem;
  for (i = 0; i < WCS_NLEVEL; i++) {
    uint64_t nB = 0;
    for (j = 0; j < sv->pVersion->anFile[i]; j++) {
      wcs_fmeta *f = sv->pVersion->aaFile[i][j];
      nB += f->nBytes;
      nRaw += f->nRawBytes;
      nKeys += f->nEntries;
    }
    nStored += nB;
    n = snprintf(aLine, sizeof aLine,
                 "%s{\"level\":%d,\"files\":%d,\"bytes\":%llu}", i ? "," : "",
                 i, sv->pVersion->anFile[i], (unsigned long long)nB);
    if (wcs_buf_append(&b, aLine, (size_t)n)) goto nomem;
  }
  nMem = memtable_bytes(sv->pMem);
  for (i = 0; i < sv->nImm; i++)
    nMem += memtable_bytes(sv->apImm[i]);
  svUnref(sv);
  wcs_cache_stats(db->pCache, &nCacheBytes, &nHit, &nMiss);
  wcs_cache_meta_stats(db->pCache, &nMetaHit, &nMetaMiss);
  wcs_cache_file_stats(db->pCache, &nOpenFiles, &nReaders, &nHeld, &nReopen);
  n = snprintf(aLine, sizeof aLine,
               "],\"open_files\":%d,\"readers\":%d,\"reader_bytes\":%llu,"
               "\"file_reopens\":%llu,\"index_hits\":%llu,"
               "\"index_misses\":%llu,\"cache_budget\":%llu,"
               "\"prefetched_blocks\":%llu",
               nOpenFiles, nReaders, (unsigned long long)nHeld,
               (unsigned long long)nReopen, (unsigned long long)nMetaHit,
               (unsigned long long)nMetaMiss,
               (unsigned long long)db->opt.nCache,
               (unsigned long long)wcs_cache_prefetched(db->pCache));
  if (wcs_buf_append(&b, aLine, (size_t)n)) goto nomem;
  pthread_mutex_lock(&db->mu);
  if (db->pWal) nWal = wal_writer_size(db->pWal);
  n = snprintf(aLine, sizeof aLine,
               ",\"memtable_bytes\":%llu,\"cache_budget_now\":%llu,"
               "\"cache_bytes\":%llu,"
               "\"cache_hits\":%llu,\"cache_misses\":%llu,\"seq\":%llu,"
               "\"raw_bytes\":%llu,\"stored_bytes\":%llu,\"keys\":%llu,"
               "\"wal_bytes\":%llu,\"compactions\":%llu,\"trivial_moves\":%llu,"
               "\"flushes\":%llu,\"stall_micros\":%llu,"
               "\"flushed_bytes\":%llu,\"compacted_bytes\":%llu,"
               "\"filtered\":%llu,\"filter_reruns\":%llu,"
               "\"ingests\":%llu,\"ingested_bytes\":%llu,"
               "\"prebuilds\":%llu}",
               (unsigned long long)nMem,
               (unsigned long long)db->nCacheBudget,
               (unsigned long long)nCacheBytes,
               (unsigned long long)nHit, (unsigned long long)nMiss,
               (unsigned long long)snap, (unsigned long long)nRaw,
               (unsigned long long)nStored, (unsigned long long)nKeys,
               (unsigned long long)nWal, (unsigned long long)db->nCompactions,
               (unsigned long long)db->nTrivialMoves,
               (unsigned long long)db->nFlushes,
               (unsigned long long)db->nStallMicros,
               (unsigned long long)db->nBytesFlushed,
               (unsigned long long)db->nBytesCompacted,
               (unsigned long long)db->nFiltered,
               (unsigned long long)db->nCompactReruns,
               (unsigned long long)db->nIngests,
               (unsigned long long)db->nBytesIngested,
               (unsigned long long)db->nPrebuilds);
  pthread_mutex_unlock(&db->mu);
  if (wcs_buf_append(&b, aLine, (size_t)n + 1)) goto nomem;
  *pzJson = (char *)b.a;
  return WCS_OK;
nomem:
  wcs_buf_free(&b);
  return setErr(db, WCS_NOMEM, NULL);
}
