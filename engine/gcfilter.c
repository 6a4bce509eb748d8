/*
** gcfilter.c — physical GC at compaction. The store offers its compaction
** filter (wcs_options.xCompactionFilter, contract in include/wcs.h) the
** entries a compaction rewrites, in ascending key order; this file drops
** the cells their family's GC policy expires, so compaction removes what
** reads already hide (doc/engine.md, "Physical GC").
**
** How it works. A GcFilter holds a registry (table id, family id) -> GC
** policy under a mutex; the catalog updates it on open, create, alter and
** drop (catalog.c calls the gcf_* hooks). The filter runs on the
** compaction thread and never calls into the store: per key it parses the
** cell key (tid:4 | fid:2 | esc(row) 00 01 | esc(qual) 00 01 | ~ts:8, see
** engine.h), keeps anything that is not a cell key (the catalog, tid 0),
** follows the current column (everything but the timestamp) across
** consecutive keys to number the versions it is offered (0 = newest), and
** asks eng_gc_expired() — the read-time rule — with the engine clock.
**
** Which expiries are applied: only those that do not depend on the
** cell's position in its column. The read-time rule is exact about
** positions among the cells that are live *now*: a later delete of newer
** versions (or a delete already stored above the compaction, in a level
** it does not read) moves an older version up, and reads then return it.
** A compaction cannot know about either, so a cell MAX VERSIONS expires
** today may be one a read returns tomorrow; dropping it would break the
** "reads are exact" contract (tests/prog_engine_model.c catches it). A
** cell expired at position 0 — the most favourable position it can ever
** have — is expired at every position and, since MAX AGE only grows
** stricter as the engine clock moves on, forever: that is safe to drop.
** So the filter drops MAX AGE expiries under UNION (or MAX AGE alone), and
** leaves MAX VERSIONS and INTERSECTION expiries to read-time hiding and
** wcs_engine_gc(), whose "once collected, stays gone" rule is explicit.
**
** The position is still counted (GCF_BY_POSITION 1 applies it), and
** counting only the offered versions would be conservative on its own:
** the store may offer a column's versions only in part (newer ones may sit
** in a level the compaction does not read), and each newer version not
** offered only pushes an offered one further down. So the counted
** position is <= the true one among stored puts — the hazard is deletes,
** not missing puts.
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

/*
** 0: a cell is dropped only if the policy expires it even as the newest
** version of its column (position 0) — MAX AGE under UNION, or alone.
** 1: also by its position among the versions offered (MAX VERSIONS, and
** INTERSECTION). See the file comment for why 0 is the setting.
*/
#define GCF_BY_POSITION 0

/* The policy of one family with a GC rule. */
typedef struct GcPol {
  uint32_t iTid; /* table id, >= 1 */
  uint16_t iFid; /* family id */
  int bHold;     /* table held by DDL in flight: keep all of it */
  EngFamily f;   /* nMaxVersions, iMaxAge, bIntersection (zName
                 ** is NULL: never read here) */
} GcPol;

struct GcFilter {
  pthread_mutex_t mu; /* guards pEng, aPol, nPol, iGen */
  wcs_engine *pEng;   /* bound engine (its clock), NULL until bound */
  GcPol *aPol;        /* one per family with a rule, plus holds */
  int nPol, nAlloc;
  uint64_t iGen; /* bumped by every registry change */
  /* scan state: used only by the compaction thread (one at a time) */
  wcs_buf col;        /* current column: the key without ~ts */
  int64_t iPos;       /* versions of col offered so far, minus one */
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
  wcs_buf_free(&p->col);
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
  int rc = WCS_OK;
  (void)pVal;
  (void)nVal;
  *pbDrop = 0;
  if (nKey < ENG_PREFIX_BYTES || eng_parse_key(k, nKey, &key) != WCS_OK ||
      key.iTid == ENG_CATALOG_TID) {
    p->col.n = 0; /* not a cell key: keep it, and start a new column */
    return WCS_OK;
  }
  nCol = nKey - ENG_TS_BYTES;
  if (p->col.n == nCol && memcmp(p->col.a, k, nCol) == 0) {
    p->iPos++;
  } else {
    p->col.n = 0;
    if (wcs_buf_append(&p->col, k, nCol)) return WCS_NOMEM;
    p->iPos = 0;
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
      *pbDrop =
          eng_gc_expired(&p->aPol[p->iCache].f, GCF_BY_POSITION ? p->iPos : 0,
                         key.iTs, eng_now(p->pEng));
    }
  }
  pthread_mutex_unlock(&p->mu);
  return rc;
}
