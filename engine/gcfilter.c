/*
** gcfilter.c — physical GC at compaction. The store offers its compaction
** filter (wcs_options.xCompactionFilter, contract in include/wcs.h) the
** entries a compaction rewrites, in ascending key order; this file drops
** the cells their family's GC policy expires, so compaction removes what
** reads already hide (doc/engine.md, "Physical GC at compaction").
**
** How it works. A GcFilter holds a registry (table id, family id) -> GC
** policy under a mutex; the catalog updates it on open, create, alter and
** drop (catalog.c calls the gcf_* hooks). The filter runs on the
** compaction thread and calls into the store only to ask
** wcs_compaction_covered() (below): per key it parses the
** cell key (tid:4 | fid:2 | esc(row) 00 01 | esc(qual) 00 01 | ~ts:8, see
** engine.h), keeps anything that is not a cell key (the catalog, tid 0),
** follows the current column (everything but the timestamp) across
** consecutive keys, and asks eng_gc_expired() — the read-time rule — with
** the engine clock and a position: the number of newer versions of the
** column it has counted (below).
**
** The position, and why it is safe. A cell may be dropped for its
** position (MAX VERSIONS n, or INTERSECTION) only if at least n newer
** versions of its column are live when the compaction runs; otherwise a
** read at that moment returns it, and dropping it is a bug. The versions
** the store offers are live as far as the compaction's input goes, and
** newer puts elsewhere only push a cell further down, so the offered ones
** are a lower bound — unless a delete stored outside the input (in a
** memtable or a level above) hides some of them. Deletes that cover a
** whole column (DeleteFromColumn without a start, DeleteFromFamily/Row,
** prefix and range deletes) cannot hurt: whatever of them covers a newer
** version and sits above the input is newer than everything the input
** holds in its range, the cell included, so the cell is hidden too. The
** ones that hurt end inside a column: DeleteFromColumn with a start time,
** the point deletes of wcs_engine_gc(), and the deletes a compaction
** leaves in place of a dropped cell. The hook passes key and value only,
** so the filter cannot tell by itself whether such a delete sits above
** its input.
**
** So versions are counted only when they are *vouched for*, which the
** store answers: wcs_compaction_covered() (wcs.h) says whether a delete
** outside the compaction's input (memtables, files of the levels above,
** as of the pick and anything written since) could hide a key of a
** range. The filter asks once per column, when the column's position
** first matters — at the (n+1)-th version offered, n the family's MAX
** VERSIONS — for the range from the column's first offered version up to
** (not including) this one. If nothing covers it, those n versions are
** live, and this version and every older one of the column are at
** positions >= n: the count of offered versions is their position's
** lower bound. If something may cover it, the whole column is judged at
** position 0 (only what is expired even as the newest version goes:
** MAX AGE, alone or under UNION, which since the clock only moves on
** stays expired). The store keeps "not covered" true until the result is
** installed: a compaction that a later delete or snapshot could make
** wrong is run again with every answer "covered" (upper.h).
**
** A GC compaction (gcf_compact_table) holds the commit lock, so no cell
** is written meanwhile, and compacts the table's key range down to one
** level: the last compaction of the range reads every version and every
** delete of each column, nothing is above it, and everything the policy
** expires goes.
**
** Column state across compactions. Consecutive calls of one compaction
** have strictly increasing keys; a key not greater than the previous one
** starts a new compaction, and so a new column. A column followed from
** one compaction into the next (its last key offered by one, a later key
** of it first in the next) is never counted: the store answers "covered"
** for a range reaching before the first key the running compaction
** offered.
**
** The clock is the engine's (wcs_engine_set_clock), read per decision, as
** reads do when a cursor opens. A cursor opened before the compaction and
** refreshed after it reads at its older "now", so in principle it could
** miss a cell that aged out in between; such a cell was already at the
** edge of its policy.
**
** Aggregate families and families without rules are kept. Cells of
** dropped tables and families are kept too: the range delete the drop
** wrote hides them, and the compaction that meets it removes them; a
** family id is never reused, so a stale policy cannot apply to new data.
*/
#include "engine/gcfilter.h"

#include <stdlib.h>
#include <string.h>

/* The policy of one family with a GC rule. */
typedef struct GcPol {
  uint32_t iTid; /* table id, >= 1 */
  uint16_t iFid; /* family id */
  int bHold;     /* table held by DDL in flight: keep all of it */
  EngFamily f;   /* nMaxVersions, iMaxAge, bIntersection (zName
                 ** is NULL: never read here) */
} GcPol;

struct GcFilter {
  pthread_mutex_t mu; /* guards pEng, aPol, nPol and iGen */
  wcs_engine *pEng;   /* bound engine (its clock), NULL until bound */
  GcPol *aPol;        /* one per family with a rule, plus holds */
  int nPol, nAlloc;
  uint64_t iGen; /* bumped by every registry change */
  /* scan state: used only by the thread running a compaction (one at a
  ** time per store) */
  wcs_buf prev;       /* previous key offered (empty: none, or not a cell) */
  size_t nCol;        /* its column part: the key without ~ts */
  wcs_buf colFirst;   /* the first key offered of that column */
  int64_t nNewer;     /* versions of that column offered so far */
  int eVouch;         /* -1: not asked yet; 1: no delete outside the
                      ** input covers the first versions (they count);
                      ** 0: one may (position 0 for the whole column) */
  uint64_t iCacheGen; /* iGen when cache below was looked up */
  int bCache;         /* cache valid */
  uint32_t iCacheTid;
  uint16_t iCacheFid;
  int iCache;           /* index into aPol, or -1: keep */
  GcFilter *pNextBound; /* list of bound contexts (gBindMu) */
};

/* Contexts bound to engines; the catalog hooks find theirs here. */
static pthread_mutex_t gBindMu = PTHREAD_MUTEX_INITIALIZER;
static GcFilter *gpBound;

int gcf_new(GcFilter **pp) {
  GcFilter *p = calloc(1, sizeof(*p));
  *pp = NULL;
  if (p == NULL) return WCS_NOMEM;
  pthread_mutex_init(&p->mu, NULL);
  p->iCache = -1;
  *pp = p;
  return WCS_OK;
}

void gcf_free(GcFilter *p) {
  if (p == NULL) return;
  pthread_mutex_destroy(&p->mu);
  free(p->aPol);
  wcs_buf_free(&p->prev);
  wcs_buf_free(&p->colFirst);
  free(p);
}

/* The bound context of pEng, or NULL. */
static GcFilter *bound(wcs_engine *pEng) {
  GcFilter *p;
  pthread_mutex_lock(&gBindMu);
  for (p = gpBound; p && p->pEng != pEng; p = p->pNextBound) {
  }
  pthread_mutex_unlock(&gBindMu);
  return p;
}

/* The 4-byte big-endian table id (the first field of a cell key). */
static void put_tid(uint8_t *a, uint32_t iTid) {
  a[0] = (uint8_t)(iTid >> 24);
  a[1] = (uint8_t)(iTid >> 16);
  a[2] = (uint8_t)(iTid >> 8);
  a[3] = (uint8_t)iTid;
}

/* Remove every entry of table iTid. Caller holds p->mu. */
static void remove_table(GcFilter *p, uint32_t iTid) {
  int i, w = 0;
  for (i = 0; i < p->nPol; i++) {
    if (p->aPol[i].iTid != iTid) p->aPol[w++] = p->aPol[i];
  }
  p->nPol = w;
}

/* Append an entry. Caller holds p->mu. */
static int add_pol(GcFilter *p, const GcPol *pPol) {
  if (p->nPol == p->nAlloc) {
    int n = p->nAlloc ? 2 * p->nAlloc : 16;
    GcPol *a = realloc(p->aPol, (size_t)n * sizeof(GcPol));
    if (a == NULL) return WCS_NOMEM;
    p->aPol = a;
    p->nAlloc = n;
  }
  p->aPol[p->nPol++] = *pPol;
  return WCS_OK;
}

/* Replace table pDef->iTid's entries by its families' rules. Room is
** made first, so on OOM nothing changes (a table held by DDL stays held,
** an unknown one stays kept): never a wrong drop. Caller holds p->mu. */
static int set_table(GcFilter *p, const EngDef *pDef) {
  int i, nNeed = p->nPol + pDef->nFam;
  GcPol pol;
  if (nNeed > p->nAlloc) {
    GcPol *a = realloc(p->aPol, (size_t)nNeed * sizeof(GcPol));
    if (a == NULL) return WCS_NOMEM;
    p->aPol = a;
    p->nAlloc = nNeed;
  }
  remove_table(p, pDef->iTid);
  p->iGen++;
  for (i = 0; i < pDef->nFam; i++) {
    const EngFamily *f = &pDef->aFam[i];
    if (f->eAgg != WCS_AGG_NONE) continue;
    if (f->nMaxVersions <= 0 && f->iMaxAge <= 0) continue;
    memset(&pol, 0, sizeof(pol));
    pol.iTid = pDef->iTid;
    pol.iFid = f->iFid;
    pol.f.iFid = f->iFid;
    pol.f.eAgg = f->eAgg;
    pol.f.nMaxVersions = f->nMaxVersions;
    pol.f.iMaxAge = f->iMaxAge;
    pol.f.bIntersection = f->bIntersection;
    p->aPol[p->nPol++] = pol;
  }
  return WCS_OK;
}

int gcf_bind(GcFilter *p, wcs_engine *pEng) {
  int i, rc = WCS_OK;
  pthread_mutex_lock(&pEng->mu);
  pthread_mutex_lock(&p->mu);
  for (i = 0; rc == WCS_OK && i < pEng->nDef; i++) {
    rc = set_table(p, pEng->apDef[i]);
  }
  if (rc == WCS_OK) p->pEng = pEng;
  pthread_mutex_unlock(&p->mu);
  pthread_mutex_unlock(&pEng->mu);
  if (rc) return eng_err(rc, "out of memory");
  pthread_mutex_lock(&gBindMu);
  p->pNextBound = gpBound;
  gpBound = p;
  pthread_mutex_unlock(&gBindMu);
  return WCS_OK;
}

GcFilter *gcf_unbind(wcs_engine *pEng) {
  GcFilter **pp, *p = NULL;
  pthread_mutex_lock(&gBindMu);
  for (pp = &gpBound; *pp; pp = &(*pp)->pNextBound) {
    if ((*pp)->pEng == pEng) {
      p = *pp;
      *pp = p->pNextBound;
      break;
    }
  }
  pthread_mutex_unlock(&gBindMu);
  return p;
}

int gcf_hold_table(wcs_engine *pEng, uint32_t iTid) {
  GcFilter *p = bound(pEng);
  GcPol pol;
  int rc;
  if (p == NULL) return WCS_OK;
  memset(&pol, 0, sizeof(pol));
  pol.iTid = iTid;
  pol.bHold = 1;
  pthread_mutex_lock(&p->mu);
  remove_table(p, iTid);
  p->iGen++;
  rc = add_pol(p, &pol);
  pthread_mutex_unlock(&p->mu);
  return rc ? eng_err(rc, "out of memory") : WCS_OK;
}

int gcf_set_table(wcs_engine *pEng, const EngDef *pDef) {
  GcFilter *p = bound(pEng);
  int rc;
  if (p == NULL) return WCS_OK;
  pthread_mutex_lock(&p->mu);
  rc = set_table(p, pDef);
  pthread_mutex_unlock(&p->mu);
  return rc ? eng_err(rc, "out of memory") : WCS_OK;
}

void gcf_drop_table(wcs_engine *pEng, uint32_t iTid) {
  GcFilter *p = bound(pEng);
  if (p == NULL) return;
  pthread_mutex_lock(&p->mu);
  remove_table(p, iTid);
  p->iGen++;
  pthread_mutex_unlock(&p->mu);
}

/* Index of the entry for (iTid, iFid): the table's hold if any, else the
** family's rule; -1 if none. Caller holds p->mu. */
static int lookup(const GcFilter *p, uint32_t iTid, uint16_t iFid) {
  int i, iFound = -1;
  for (i = 0; i < p->nPol; i++) {
    const GcPol *q = &p->aPol[i];
    if (q->iTid != iTid) continue;
    if (q->bHold) return i;
    if (q->iFid == iFid) iFound = i;
  }
  return iFound;
}

int gcf_filter(void *pCtx, const void *pKey, size_t nKey, const void *pVal,
               size_t nVal, int *pbDrop) {
  GcFilter *p = pCtx;
  const uint8_t *k = pKey;
  size_t nCol;
  EngKey key;
  int bSameCol;
  (void)pVal;
  (void)nVal;
  *pbDrop = 0;
  if (nKey < ENG_PREFIX_BYTES || eng_parse_key(k, nKey, &key) != WCS_OK ||
      key.iTid == ENG_CATALOG_TID) {
    p->prev.n = 0; /* not a cell key: keep it, and start a new column */
    return WCS_OK;
  }
  nCol = nKey - ENG_TS_BYTES;
  /* the same column as the previous key, and after it: the same
  ** compaction (a key not after the previous one starts a new one; and
  ** wcs_compaction_covered() answers "covered" for a range reaching
  ** before this compaction's first key, so a column followed across
  ** two compactions never counts) */
  bSameCol = p->prev.n > 0 && p->nCol == nCol &&
             memcmp(p->prev.a, k, nCol) == 0 &&
             memcmp(p->prev.a + nCol, k + nCol, ENG_TS_BYTES) < 0;
  if (!bSameCol) {
    p->nNewer = 0;
    p->eVouch = -1;
    p->colFirst.n = 0;
    if (wcs_buf_append(&p->colFirst, k, nKey)) {
      p->prev.n = 0;
      return WCS_NOMEM;
    }
  }
  /* the registry lock is held across the decision, so a DDL hook that
  ** returned has its effect on every later call */
  pthread_mutex_lock(&p->mu);
  if (p->pEng) {
    if (!p->bCache || p->iCacheGen != p->iGen || p->iCacheTid != key.iTid ||
        p->iCacheFid != key.iFid) {
      p->iCache = lookup(p, key.iTid, key.iFid);
      p->iCacheGen = p->iGen;
      p->iCacheTid = key.iTid;
      p->iCacheFid = key.iFid;
      p->bCache = 1;
    }
    if (p->iCache >= 0 && !p->aPol[p->iCache].bHold) {
      const EngFamily *f = &p->aPol[p->iCache].f;
      int64_t iPos = 0;
      if (f->nMaxVersions > 0 && p->nNewer >= f->nMaxVersions) {
        if (p->eVouch < 0) {
          /* the first time this column's position could matter: are
          ** the versions offered so far, from the column's first up to
          ** this one, free of deletes outside the input? Any error or
          ** doubt answers covered. */
          int bCovered = 1;
          int rc = wcs_compaction_covered(p->colFirst.a, p->colFirst.n, k,
                                          nKey, &bCovered);
          p->eVouch = rc == WCS_OK && !bCovered;
        }
        /* n live versions ahead are enough: this one and every older
        ** one of the column is at a position >= n */
        if (p->eVouch > 0) iPos = p->nNewer;
      }
      *pbDrop = eng_gc_expired(f, iPos, key.iTs, eng_now(p->pEng));
    }
  }
  pthread_mutex_unlock(&p->mu);
  p->nNewer++;
  p->prev.n = 0;
  p->nCol = nCol;
  if (wcs_buf_append(&p->prev, k, nKey)) {
    *pbDrop = 0; /* state lost: keep this one, start afresh */
    return WCS_NOMEM;
  }
  return WCS_OK;
}

int gcf_compact_table(wcs_engine *pEng, uint32_t iTid, int *pbCollected) {
  GcFilter *p = bound(pEng);
  uint8_t aLo[4], aHi[4];
  const uint8_t *pHi = aHi;
  size_t nHi = 4;
  int rc, bLocked;
  *pbCollected = 0;
  put_tid(aLo, iTid);
  if (iTid == UINT32_MAX) {
    pHi = NULL; /* the last table id: to the end of the key space */
    nHi = 0;
  } else {
    put_tid(aHi, iTid + 1);
  }
  /* no cell is written meanwhile (see the file comment) */
  bLocked = eng_commit_lock(pEng);
  rc = wcs_db_compact_range(pEng->db, aLo, 4, pHi, nHi);
  eng_commit_unlock(pEng, bLocked);
  if (rc) return eng_err_db(pEng->db, rc, "garbage-collecting a table");
  *pbCollected = p != NULL;
  return WCS_OK;
}
