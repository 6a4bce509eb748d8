/*
** engine.h — internals shared by the engine's files (the engine/ sources). The
** public surface is the "Tables" section of include/wcs.h.
**
** Files:
**   cellkey.c   storage keys of cells and their escaping (the layout below)
**   catalog.c   engine open/close, errors, the catalog, table DDL
**   overlay.c   a transaction's uncommitted writes (skiplist + range set)
**               and the view iterator that merges them over the store
**   txn.c       transactions, savepoints, mutations, aggregates, commit
**   cursor.c    row cursors: family streams merged by row, GC at read time,
**               and which families a read needs (rows_proven)
**   rownote.c   file notes: each sorted file's rows per table family
**   hll.c       HyperLogLog++ sketches (WCS_AGG_HLL states)
**   stats.c     planner estimates, key-distribution counters, physical GC
**
** Storage layout (owned here, documented in doc/engine.md):
**
**   cell key   = tid:4 BE | fid:2 BE | esc(row) 00 01 | esc(qual) 00 01 |
**                ~ts:8 BE
**   cell value = the cell value bytes, as is
**   catalog    = tid 0: 00000000 'N'            -> varint next table id
**                       00000000 'T' name       -> table record
**                       00000000 'H' tid:4 BE   -> saved heat counters
**
** esc() doubles every 00 byte as 00 FF, so esc(x) 00 01 orders exactly as x
** and no escaped string contains 00 01: the terminator ends the field.
** ~ts is the bitwise complement of the (non-negative) timestamp, so the
** newest cell of a column comes first. Each (table, family) pair is one
** contiguous key range, like a Bigtable locality group: a read of one
** family never touches the bytes of the others.
*/
#ifndef WCS_ENGINE_H
#define WCS_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "keyschema/schema.h"
#include "storage/iterrun.h"
#include "storage/util.h"
#include "wcs.h"

/* ---- storage keys (cellkey.c) ------------------------------------- */

#define ENG_TID_BYTES            4   /* table id, big-endian */
#define ENG_FID_BYTES            2   /* family id, big-endian */
#define ENG_PREFIX_BYTES         6   /* tid + fid: a family's key space */
#define ENG_TS_BYTES             8   /* inverted timestamp */
#define ENG_CATALOG_TID          0   /* table id of the catalog */
#define ENG_CAT_NEXT             'N' /* catalog: next table id */
#define ENG_CAT_TABLE            'T' /* catalog: table record by name */
#define ENG_CAT_HEAT             'H' /* catalog: heat counters by tid */
#define ENG_TABLE_RECORD_VERSION 1   /* first byte of a table record */

/* Append esc(p) (no terminator). */
int eng_escape(wcs_buf *pOut, const void *p, size_t n);
/* Append esc(p) 00 01. */
int eng_escape_term(wcs_buf *pOut, const void *p, size_t n);
/* Append the 6-byte family prefix. */
int eng_put_prefix(wcs_buf *pOut, uint32_t iTid, uint16_t iFid);
/* Append the exclusive end of family iFid's key range: the next family's
** prefix, or the next table's for the last possible family id. */
int eng_put_family_end(wcs_buf *pOut, uint32_t iTid, uint16_t iFid);
/* Append the full cell key. */
int eng_cell_key(wcs_buf *pOut, uint32_t iTid, uint16_t iFid, const void *pRow,
                 size_t nRow, const void *pQual, size_t nQual, int64_t iTs);
/* Bytes of an escaped, terminated field starting at p: the offset just past
** its 00 01 terminator, or 0 if there is none or an escape is malformed. */
size_t eng_field_len(const uint8_t *p, size_t n);
/* Unescape an escaped field of nEsc bytes (terminator excluded) into pOut
** (appends). Returns WCS_CORRUPT on a bad escape. */
int eng_unescape(wcs_buf *pOut, const uint8_t *p, size_t nEsc);

/* A parsed cell key; pointers into the key. */
typedef struct EngKey {
  uint32_t iTid;
  uint16_t iFid;
  const uint8_t *pRowT; /* esc(row) 00 01 */
  size_t nRowT;
  const uint8_t *pQualT; /* esc(qual) 00 01 */
  size_t nQualT;
  int64_t iTs;
} EngKey;
/* Parse a cell key; WCS_CORRUPT if it is not one. */
int eng_parse_key(const uint8_t *p, size_t n, EngKey *pKey);
/* Smallest key greater than every key that starts with p[0..n-1], written
** into pOut (replacing it). Returns 0 if there is none (all 0xFF). */
int eng_prefix_successor(wcs_buf *pOut, const uint8_t *p, size_t n);

/* The prefix tid:4 BE | fid:2 BE of a table family's keys, into a. */
static inline void eng_prefix_bytes(uint8_t *a, uint32_t iTid, uint16_t iFid) {
  a[0] = (uint8_t)(iTid >> 24);
  a[1] = (uint8_t)(iTid >> 16);
  a[2] = (uint8_t)(iTid >> 8);
  a[3] = (uint8_t)iTid;
  a[4] = (uint8_t)(iFid >> 8);
  a[5] = (uint8_t)iFid;
}

/* ---- file notes (rownote.c) ----------------------------------------- */
/* The engine's wcs_options.xNoteBegin/xNoteAdd/xNoteEnd: per table family
** of a file, its rows' count and hash sum (doc/engine.md). */
void *eng_note_begin(void *pCtx);
void eng_note_add(void *pSum, const void *pKey, size_t nKey, int bDelete);
int eng_note_end(void *pSum, int bAbandon, void **ppOut, size_t *pnOut);

/* One table family's rows over the files of a sorted run: the sums of
** their notes. Start zeroed. */
typedef struct EngRowSum {
  uint64_t nRows;  /* rows */
  uint64_t nDel;   /* deletes */
  uint64_t lo, hi; /* hash sum mod 2^128 */
  int bBad;        /* a key that is not a cell key */
  int bLast;       /* the last file added ended with a row of the family, */
  uint64_t lastLo, lastHi; /* whose hash this is */
} EngRowSum;
/* Add the record of table family pPre (tid, fid: ENG_PREFIX_BYTES) in
** note pNote to *pSum (nothing if the note has none). The files of a run
** must be added in key order: a row split by a file cut is counted once.
** WCS_CORRUPT if the note does not parse (an empty note, written out of
** memory, does not). */
int eng_note_sum(const void *pNote, size_t nNote, const uint8_t *pPre,
                 EngRowSum *pSum);

static inline uint64_t eng_ts_invert(int64_t iTs) {
  return ~(uint64_t)iTs;
}

/* ---- errors (catalog.c) -------------------------------------------- */

/* Record the thread's engine error message and return rc. */
int eng_err(int rc, const char *zFmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Take over a malloc'd message (may be NULL: then zDefault is used). */
int eng_err_take(int rc, char *zMsg);
/* Copy the store's message for rc after a failed store call. */
int eng_err_db(wcs_db *db, int rc, const char *zWhat);
void eng_err_clear(void);

/* ---- catalog -------------------------------------------------------- */

typedef struct EngFamily {
  char *zName;          /* family name */
  uint16_t iFid;        /* family id, unique in the table for all time */
  int eAgg;             /* WCS_AGG_* */
  int64_t nMaxVersions; /* 0 = rule unset */
  int64_t iMaxAge;      /* micros, 0 = rule unset */
  int bIntersection;    /* KS_GC_INTERSECTION */
  int nColumn;          /* declared qualifier columns */
} EngFamily;

typedef struct EngStats EngStats;

/*
** One version of a table's definition. Immutable once published; shared by
** handles, cursors and transactions through nRef. An alter publishes a new
** def and marks the old one stale; a drop marks it stale and dropped.
*/
typedef struct EngDef {
  int nRef;            /* protected by wcs_engine.mu */
  volatile int bStale; /* replaced or dropped: reads and writes through
                       ** it fail (WCS_SCHEMA) */
  char *zName;
  uint32_t iTid;     /* >= 1 */
  uint64_t iVersion; /* schema version, 1 at create */
  uint16_t iNextFid; /* next family id to hand out */
  char *zSchema;     /* canonical schema text */
  ks_schema *pSchema;
  int nFam;
  EngFamily *aFam;  /* in schema order */
  EngStats *pStats; /* shared by every def of this tid; engine owns */
} EngDef;

struct wcs_engine {
  wcs_db *db;
  unsigned iForkGen;        /* eng_fork_gen() when opened: another value
                            ** means a parent process opened it (fork) */
  int bOwnDb;               /* opened by wcs_engine_open_path */
  char *zKey;               /* registry key (open_path), or NULL */
  int nOpen;                /* registry references */
  int bClosing;             /* the last reference went: its store is being
                            ** closed, and opens of the path wait */
  wcs_engine *pNextOpen;    /* registry list */
  wcs_engine *pNextOver;    /* list of every engine open, by its store */
  pthread_mutex_t mu;       /* catalog list, def refcounts, stats */
  pthread_mutex_t commitMu; /* serializes commits and DDL */
  pthread_mutex_t gateMu;   /* the commit gate (txn.c): nGate and gateCv */
  pthread_cond_t gateCv;    /* signalled when nGate drops */
  wcs_txn *pGate;           /* those transactions (their pNextGate) */
  atomic_int nGate;         /* transactions between a successful precheck
                            ** and their commit or rollback */
  pthread_t exclOwner;      /* thread holding commitMu for an exclusive txn */
  int bExclHeld;            /* commitMu held by an exclusive txn */
  uint32_t iNextTid;        /* next table id */
  int nDef;
  EngDef **apDef;       /* current defs, sorted by name */
  EngStats *pStatsList; /* every table's stats, freed at close */
  int64_t (*xNow)(void *);
  void *pClockCtx;
  pthread_mutex_t poolMu; /* the idle cursors below */
  wcs_cursor *pPool;      /* idle cursors for reuse, most recent first */
  int nPool;              /* <= ENG_POOL_MAX */
  int64_t iPoolSweep;     /* monotonic micros of the last expiry sweep */
};

int64_t eng_now(wcs_engine *pEng);
void eng_def_ref(wcs_engine *pEng, EngDef *pDef);
void eng_def_unref(wcs_engine *pEng, EngDef *pDef);
EngDef **eng_defs_snapshot(wcs_engine *pEng, int *pn);
/* The family of pDef named zName, or NULL (sets an error naming it). */
EngFamily *eng_family(const EngDef *pDef, const char *zName, int *piFam);
/* eng_family's first test, inline for the write path: the family whose
** name is the string zName points at in pDef's own schema (a caller that
** took it from wcs_table_schema(), as the SQL module does), by address,
** without a string compare; the def owns those strings, so an address
** names one family. NULL otherwise, without an error. */
static inline EngFamily *eng_family_at(const EngDef *pDef, const char *zName,
                                       int *piFam) {
  int i;
  if (zName == NULL || pDef->pSchema == NULL ||
      pDef->pSchema->nFamily != pDef->nFam) {
    return NULL;
  }
  for (i = 0; i < pDef->nFam; i++) {
    if (pDef->pSchema->aFamily[i].zName == zName) {
      if (piFam) *piFam = i;
      return &pDef->aFam[i];
    }
  }
  return NULL;
}
/* Lock / unlock the commit mutex unless this thread holds it for an
** exclusive transaction. Returns 1 if it locked. */
int eng_commit_lock(wcs_engine *pEng);
void eng_commit_unlock(wcs_engine *pEng, int bLocked);

struct wcs_table {
  wcs_engine *pEng;
  EngDef *pDef; /* referenced */
};

/* ---- limits (catalog.c) --------------------------------------------- */
/* WCS_OK unless p is NULL and n is not 0 (WCS_MISUSE, naming zWhat): the
** public calls take (pointer, length) pairs, and "" for empty bytes. */
int eng_check_bytes(const void *p, size_t n, const char *zWhat);
int eng_check_row(const void *pRow, size_t nRow);
int eng_check_qual(const void *pRow, size_t nRow, const void *pQual,
                   size_t nQual);
int eng_check_value(const void *pRow, size_t nRow, const char *zFamily,
                    const void *pQual, size_t nQual, size_t nVal);
/* The largest cell timestamp: a read's time range [start, end) ends at
** INT64_MAX at most, so a cell at INT64_MAX could never be read. */
#define ENG_TS_MAX (INT64_MAX - 1)
/* The error for a cell timestamp outside [0, ENG_TS_MAX]. */
int eng_check_ts(int64_t iTs);

/* ---- overlay (overlay.c) -------------------------------------------- */

#define OV_NONE  0 /* entry wiped by a later range delete: no effect */
#define OV_PUT   1 /* final value */
#define OV_DEL   2 /* point delete */
#define OV_MERGE 3 /* aggregate operand folded into the base at commit */

typedef struct OvNode OvNode;
typedef struct OvRange OvRange;
typedef struct Overlay Overlay;

int ov_new(Overlay **pp);
void ov_free(Overlay *p);
void ov_clear(Overlay *p);
/* Point operations. eAgg is the aggregate kind for OV_MERGE. */
int ov_put(Overlay *p, const void *pKey, size_t nKey, const void *pVal,
           size_t nVal);
int ov_delete(Overlay *p, const void *pKey, size_t nKey);
int ov_merge(Overlay *p, const void *pKey, size_t nKey, int eAgg,
             const void *pOp, size_t nOp);
int ov_delete_range(Overlay *p, const void *pStart, size_t nStart,
                    const void *pEnd, size_t nEnd);
/* 1 if a range delete of this overlay covers the key. */
int ov_range_covers(const Overlay *p, const void *pKey, size_t nKey);
/* A copy of p (its net effect: the same entries and ranges), for a reader
** that must not see p's later changes. */
int ov_clone(const Overlay *p, Overlay **pp);

/* A transaction's writes as of a mark (wcs_txn_moment): an overlay of its
** own, shared by the cursors that read it (each holds a reference). */
struct wcs_moment {
  Overlay *pOv;
  int nRef;
  const wcs_txn *pTxn; /* whose writes these are (compared, never used) */
};
void eng_moment_unref(wcs_moment *m);
uint64_t ov_generation(const Overlay *p);
int ov_count(const Overlay *p);
size_t ov_bytes(const Overlay *p);

/* Walk for commit: ranges, then entries, each in key order. */
int ov_range_count(const Overlay *p);
OvRange *ov_range_first(const Overlay *p);
OvRange *ov_range_next(const OvRange *pRange);
void ov_range_bounds(const OvRange *pRange, const uint8_t **ppS, size_t *pnS,
                     const uint8_t **ppE, size_t *pnE);
OvNode *ov_first(const Overlay *p);
OvNode *ov_next(const OvNode *pNode);
int ov_node_kind(const OvNode *pNode);
int ov_node_agg(const OvNode *pNode);
const uint8_t *ov_node_key(const OvNode *pNode, size_t *pn);
const uint8_t *ov_node_val(const OvNode *pNode, size_t *pn);

/* Fold an aggregate operand into a base state (pBase NULL: none) into
** pOut (replaced). Returns WCS_CORRUPT on a malformed state. */
int eng_agg_fold(int eAgg, const uint8_t *pBase, size_t nBase,
                 const uint8_t *pOp, size_t nOp, wcs_buf *pOut);

/*
** The view iterator: a store iterator (over a snapshot, within bounds)
** merged with an optional overlay. One direction, fixed at creation.
** Keys and values are borrowed until the next move. Without an overlay a
** step is one step of the store iterator, nothing more.
*/
typedef struct EngView EngView;
/* The view's current entry. It is the first member of struct EngView, so
** the accessors below read it without a call: the cursor reads it a few
** times per cell. Only overlay.c writes it. */
typedef struct EngViewPos {
  int eCur;            /* 0 invalid; 1 store; 2 overlay; 3 both */
  const uint8_t *pKey; /* current key (borrowed from the winner) */
  size_t nKey;         /* bytes at pKey */
  const uint8_t *pVal; /* current value */
  size_t nVal;         /* bytes at pVal */
  size_t nShared;      /* bytes pKey shares with the view's previous key,
                       ** when the step is known to have kept them (a step
                       ** within a run of settled data); 0: unknown */
  wcs_iter *pRun;      /* the store iterator, when the view moves forward
                       ** with no overlay, so that a step within its run
                       ** is the view's step (view_next); else NULL */
} EngViewPos;
int view_new(EngView **pp, wcs_db *db, const wcs_snapshot *pSnap, Overlay *pOv,
             const void *pLower, size_t nLower, const void *pUpper,
             size_t nUpper, const void *pPrefix, size_t nPrefix, int bReverse);
void view_free(EngView *p);
/* Make a new store iterator for an existing view (its buffers are kept),
** as view_new would. On failure the view has no iterator (view_live 0). */
int view_reopen(EngView *p, wcs_db *db, const wcs_snapshot *pSnap, Overlay *pOv,
                const void *pLower, size_t nLower, const void *pUpper,
                size_t nUpper, const void *pPrefix, size_t nPrefix,
                int bReverse);
/* Keep the store iterator (its snapshot and bounds) but start over with
** another overlay and direction: unpositioned, as after view_new. */
void view_retarget(EngView *p, Overlay *pOv, int bReverse);
/* Read pOv (a copy of the view's overlay, ov_clone) from now on, at the
** same position: the view stops seeing later changes of the overlay it
** read. */
void view_detach(EngView *p, Overlay *pOv);
/* The overlay the view reads, or NULL. */
Overlay *view_overlay(const EngView *p);
/* Move the store iterator to the latest committed state (its bounds and
** prefix kept; see wcs_iter_refresh). Call view_retarget or a seek next.
** On failure the iterator is unusable: view_release or view_reopen it. */
int view_refresh(EngView *p);
/* Free the store iterator only (it pins storage files and memtables). */
void view_release(EngView *p);
/* 1 if the view has a store iterator. */
int view_live(const EngView *p);
/* Sources its store iterator merges (wcs_iter_sources); 0 without one. */
int view_sources(const EngView *p);
/* 1 when the view certainly has no key starting with pPre (a row's bloom
** prefix): no overlay, and wcs_iter_prefix_absent says so. */
int view_prefix_absent(const EngView *p, const void *pPre, size_t nPre);
/* 1 if its store iterator reads the current memtables and files (no
** flush or compaction installed since it was made or refreshed). */
int view_current(const EngView *p);
/* 1 if the view's iterator serves [lower, upper) with exactly this prefix
** option (a NULL bound is unbounded): its own bounds contain those, and
** its prefix is the same (so bloom skipping was decided for it). */
int view_within(const EngView *p, const void *pLower, size_t nLower,
                const void *pUpper, size_t nUpper, const void *pPrefix,
                size_t nPrefix);
/* Forward: first key >= k. Reverse: last key < k (k NULL: the last). */
int view_seek(EngView *p, const void *pKey, size_t nKey);
int view_step(EngView *p);
/* view_step() for a step that ended the store iterator's run with the
** iterator no longer valid (wcs_iter_run_next returned -1). */
int view_run_end(EngView *p);
/* Settle again at the current key if the overlay changed since the view
** last moved. Call before reading a view that may have gone stale. */
int view_sync(EngView *p);
static inline int view_valid(const EngView *p) {
  return ((const EngViewPos *)p)->eCur != 0;
}
static inline const uint8_t *view_key(const EngView *p, size_t *pn) {
  *pn = ((const EngViewPos *)p)->nKey;
  return ((const EngViewPos *)p)->pKey;
}
/* A lower bound on the bytes the current key shares with the key the view
** was at before its last step (0 when not known, and after a seek). */
static inline size_t view_shared(const EngView *p) {
  return ((const EngViewPos *)p)->nShared;
}
static inline const uint8_t *view_value(const EngView *p, size_t *pn) {
  *pn = ((const EngViewPos *)p)->nVal;
  return ((const EngViewPos *)p)->pVal;
}

/* view_step(), with a step within the store iterator's run (forward, no
** overlay) taken inline: the cursor steps once per cell. */
__attribute__((always_inline)) static inline int view_next(EngView *p) {
  EngViewPos *v = (EngViewPos *)p;
  if (v->pRun != NULL && v->eCur != 0) {
    const void *pK, *pV;
    int r = wcs_iter_run_next(v->pRun, &pK, &v->nKey, &pV, &v->nVal);
    if (r > 0) {
      v->pKey = pK;
      v->pVal = pV;
      v->nShared = ((const wcs_iter_run *)v->pRun)->nShared;
      return WCS_OK;
    }
    if (r < 0) return view_run_end(p);
  }
  return view_step(p);
}

/* ---- heat counters (stats.c) ---------------------------------------- */

#define ENG_HEAT_KEY_MAX 32 /* bytes of a row key the heat counters use */

/* One heat bucket of a table as of one slot: rows r with lo <= r < hi
** (the first ENG_HEAT_KEY_MAX bytes of r compared; no lo: from the first
** row, no hi: to the last). */
typedef struct EngHeatSpan {
  const EngDef *pDef; /* its table; NULL: no bucket known */
  int bLo, bHi;       /* the bounds present */
  uint8_t nLo, nHi;
  uint8_t aLo[ENG_HEAT_KEY_MAX];
  uint8_t aHi[ENG_HEAT_KEY_MAX];
} EngHeatSpan;

/* ---- transactions (txn.c) ------------------------------------------- */

#define ENG_TXN_STREAMS 8 /* families a write-only txn keeps in key order */

struct wcs_txn {
  wcs_engine *pEng;
  int flags;           /* WCS_TXN_* */
  int bLocked;         /* holds commitMu (exclusive) */
  int bGate;           /* counted in the engine's nGate (precheck) */
  wcs_txn *pNextGate;  /* the engine's list of those (pGate, gateMu) */
  int nGateKey;        /* entries of aGateKey; -1: more than fit (every
                       ** waiter waits for this transaction) */
  uint64_t aGateKey[4]; /* wcs_txn_gate_key(): whose waits it holds up */
  wcs_snapshot *pSnap; /* read snapshot, NULL until first read */
  Overlay *pOv;        /* uncommitted writes, once materialized */
  int bOvLive;         /* pOv mirrors the log (set by the first read);
                       ** until then writes only append to the log, so
                       ** a write-only transaction costs one copy */
  int bHasMerge;       /* the log holds aggregate merges */
  wcs_buf log;         /* op log for savepoints (see txn.c) */
  int nOp;             /* ops in the log */
  int nSave;           /* savepoints */
  int *aSaveId;        /* [nSave] SQLite savepoint numbers */
  size_t *aSaveOff;    /* [nSave] log offsets */
  int *aSaveOp;        /* [nSave] op counts */
  int nDef;            /* tables written */
  EngDef **apDef;      /* referenced; checked for staleness at commit */
  int nCursor;         /* open cursors on this txn */
  struct TxnKept *pKept; /* overlays and snapshots of commits made while
                       ** cursors were open: those cursors read on through
                       ** them; freed when the last cursor closes */
  int bNow;            /* iNow is set */
  int64_t iNow;        /* the transaction's time for WCS_TS_NOW: the clock
                       ** at its first such write, until commit/rollback */
  wcs_buf lastRow;     /* row of the last SetCell (raw bytes) */
  wcs_buf lastRowEsc;  /* esc(lastRow) 00 01, reused by the next SetCell */
  /* Heat counts not yet handed to eng_stats_count (txn.c, heat_row):
  ** nHeat writes of nHeatRow rows of pHeatDef, the last of them lastRow;
  ** bHeatIn: every one of those rows lies in heatSpan, the heat bucket of
  ** the last row counted. */
  EngDef *pHeatDef;
  uint64_t nHeat;
  int nHeatRow;
  int bHeatIn;
  EngHeatSpan heatSpan;
  /* Key order of the log (see txn.c, "commit in key order"): the log
  ** holds only puts, and within each family (tid, fid prefix) their keys
  ** strictly increase. */
  wcs_batch *pBatch; /* kept for the next commit while it is small */
  int bOrdered;
  int bNoRange;              /* the log holds no range delete */
  int nStream;               /* families written, <= ENG_TXN_STREAMS */
  struct wcs_prebuild *pPre; /* files being built from the log (txn.c) */
  size_t nPreAt;             /* log size at which to start or feed it next */
  struct TxnFault *pFault;   /* faults the log's pages in ahead (txn.c) */
  size_t nFaultAt;           /* log size at which to tell it again */
  uint8_t aStreamPrefix[ENG_TXN_STREAMS][ENG_PREFIX_BYTES]; /* theirs */
  size_t aStreamLast[ENG_TXN_STREAMS];  /* log offset of each one's last key */
  size_t anStreamLast[ENG_TXN_STREAMS]; /* and its bytes */
};

/* Convert a row key range to bounds over esc(row) 00 01 strings: rows r
** with lo <= esc(r) 00 01 < hi are in it; *pbHiOpen: no upper bound. */
int eng_range_bounds(const wcs_key_range *r, wcs_buf *pLo, wcs_buf *pHi,
                     int *pbHiOpen);

/* Take the read snapshot if not yet taken. */
int eng_txn_snapshot(wcs_txn *pTxn, const wcs_snapshot **ppSnap);
/* A cursor on pTxn closed: the last one frees what commits kept for the
** open cursors (wcs_txn.pKept). */
void eng_txn_cursor_closed(wcs_txn *pTxn);

/* ---- cursors (cursor.c) --------------------------------------------- */

/*
** Closed cursors are kept by the engine for reuse (ENG_POOL_MAX of them):
** a cursor opened on the same table definition takes one over with its
** buffers and, when they still fit, its storage iterators (see cursor.c).
*/
/* Release the storage iterators of every idle cursor (they pin files and
** memtables); the cursors stay for reuse. */
void eng_pool_release_views(wcs_engine *pEng);
/* Free every idle cursor (DDL, engine close: before the store closes). */
void eng_pool_clear(wcs_engine *pEng);

/* The latest live cell of one column as pTxn (or the latest committed
** state) sees it: *pbFound, and the value/timestamp copied into pVal. */
int eng_read_latest(wcs_table *pTab, wcs_txn *pTxn, const void *pRow,
                    size_t nRow, int iFam, const void *pQual, size_t nQual,
                    int *pbFound, int64_t *piTs, wcs_buf *pVal);
/* 1 if the row has any live cell. */
int eng_row_exists(wcs_table *pTab, wcs_txn *pTxn, const void *pRow,
                   size_t nRow, int *pbExists);

/* GC: is the cell at position iPos (0 = newest) in its column, with
** timestamp iTs, expired under family f at time iNow? */
int eng_gc_expired(const EngFamily *f, int64_t iPos, int64_t iTs, int64_t iNow);

/* ---- stats (stats.c) ------------------------------------------------ */
/* The statistics of table iTid, made on first need and held for a
** definition of it (each definition that points at them holds them once:
** eng_stats_hold for one that shares them; eng_def_unref releases them,
** and they go with the last). */
int eng_stats_new(wcs_engine *pEng, uint32_t iTid, EngStats **pp);
void eng_stats_hold(wcs_engine *pEng, EngStats *p);
void eng_stats_release(wcs_engine *pEng, EngStats *p);
void eng_stats_free(EngStats *p);
/* Count n reads or writes of row pRow of table pDef into its heat
** counters (may read the table once per slot to pick bucket bounds). */
void eng_stats_count(wcs_engine *pEng, const EngDef *pDef, int bWrite,
                     const void *pRow, size_t nRow, uint64_t n);
/* The same, and *pSpan set to the key range of the bucket row pRow was
** counted in (pSpan->pDef NULL if there is none): a writer that counts in
** batches keeps a batch to rows of one bucket with eng_heat_span_has(). */
void eng_stats_count_span(wcs_engine *pEng, const EngDef *pDef, int bWrite,
                          const void *pRow, size_t nRow, uint64_t n,
                          EngHeatSpan *pSpan);
/* 1 if row pRow of table pDef falls in bucket pSpan. */
int eng_heat_span_has(const EngHeatSpan *pSpan, const EngDef *pDef,
                      const void *pRow, size_t nRow);
int eng_stats_load(wcs_engine *pEng, EngStats *p);

/* ---- HLL (hll.c) ---------------------------------------------------- */
/* Fold the element (hashed) into the state in pState (replaced). */
int eng_hll_add(wcs_buf *pState, const void *pElem, size_t nElem);
/* Merge state B into state A (pOut replaced with the result). */
int eng_hll_merge(const uint8_t *pA, size_t nA, const uint8_t *pB, size_t nB,
                  wcs_buf *pOut);
/* An HLL operand that adds one element: a sketch holding only it. */
int eng_hll_single(const void *pElem, size_t nElem, wcs_buf *pOut);

#endif /* WCS_ENGINE_H */
