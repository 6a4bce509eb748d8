/*
** catalog.c — the engine handle, its error messages, the catalog of tables
** and table DDL (create, open, alter, drop, list), and Bigtable's limits.
**
** The catalog lives in the store under table id 0 (doc/engine.md,
** "Catalog"):
**
**   00000000 'N'          -> varint: the next table id to hand out
**   00000000 'T' name     -> table record (below)
**   00000000 'H' tid:4 BE -> saved key-distribution counters (stats.c)
**
** Table record, version 1:
**   01 | varint tid | varint schema version | varint next family id |
**   varint nFamily | nFamily x (varint fid | varint nName | name) |
**   varint nText | canonical schema text (ks_schema_text)
** Family ids map names to key spaces; they are handed out once per table
** and never reused, so data of a dropped family can never reappear under a
** new one. Table ids likewise.
**
** The whole catalog is cached in memory (one EngDef per table, sorted by
** name). DDL runs under the commit lock, so a commit sees either the old
** or the new definition, and writes its catalog change and any range
** deletes as one store batch.
*/
#include "engine/engine.h"
#include "engine/gcfilter.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* errors: one message per thread                                      */

/* Each thread's last message and warning live in buffers of its own, so
** that nothing is left to free when the thread ends or the library is
** unloaded (a heap string per thread would be lost with the thread). A
** longer message is cut, ending in "...": messages name a table, a file
** and a key cut to 80 bytes, well inside. */
#define ENG_ERR_MAX  2048
#define ENG_WARN_MAX 1024
static _Thread_local char tls_aErr[ENG_ERR_MAX];
static _Thread_local char tls_aWarn[ENG_WARN_MAX];
static _Thread_local int tls_bWarn; /* tls_aWarn holds a warning */

/* Copy z (n bytes, or a NUL-terminated string if n < 0) into a[nA], cut
** with "..." if it does not fit. */
static void msg_put(char *a, size_t nA, const char *z, long n) {
  size_t nz = n < 0 ? strlen(z) : (size_t)n;
  if (nz < nA) {
    memmove(a, z, nz);
    a[nz] = 0;
  } else {
    memmove(a, z, nA - 4);
    memcpy(a + nA - 4, "...", 4);
  }
}

int eng_err_take(int rc, char *zMsg) {
  if (zMsg) {
    msg_put(tls_aErr, sizeof tls_aErr, zMsg, -1);
    free(zMsg);
  } else {
    tls_aErr[0] = 0;
  }
  return rc;
}

int eng_err(int rc, const char *zFmt, ...) {
  va_list ap;
  char a[ENG_ERR_MAX]; /* the arguments may point into tls_aErr */
  int n;
  va_start(ap, zFmt);
  n = vsnprintf(a, sizeof a, zFmt, ap);
  va_end(ap);
  if (n < 0) {
    tls_aErr[0] = 0;
  } else {
    /* n >= sizeof a: cut (msg_put adds the "...") */
    msg_put(tls_aErr, sizeof tls_aErr, a,
            (size_t)n < sizeof a ? n : (long)sizeof a);
  }
  return rc;
}

int eng_err_db(wcs_db *db, int rc, const char *zWhat) {
  const char *z = wcs_errmsg(db);
  return eng_err(rc, "%s: %s", zWhat, (z && z[0]) ? z : wcs_errstr(rc));
}

void eng_err_clear(void) {
  tls_aErr[0] = 0;
}

const char *wcs_engine_errmsg(wcs_engine *pEng) {
  (void)pEng;
  return tls_aErr;
}

const char *wcs_engine_warning(wcs_engine *pEng) {
  (void)pEng;
  return tls_bWarn ? tls_aWarn : NULL;
}

/* Set the thread's warning to z (taken: freed here), or clear it. */
static void set_warning(char *z) {
  tls_bWarn = z != NULL;
  if (z) msg_put(tls_aWarn, sizeof tls_aWarn, z, -1);
  free(z);
}

/* ------------------------------------------------------------------ */
/* limits                                                              */

static char *esc(const void *p, size_t n) {
  char *z = wcs_escape(p, n, 64);
  return z;
}

int eng_check_bytes(const void *p, size_t n, const char *zWhat) {
  if (p == NULL && n > 0) {
    return eng_err(WCS_MISUSE, "%s is a NULL pointer with a length of %zu",
                   zWhat, n);
  }
  return WCS_OK;
}

int eng_check_row(const void *pRow, size_t nRow) {
  if (nRow == 0) {
    return eng_err(WCS_ERROR, "row keys must not be empty");
  }
  if (nRow > WCS_MAX_ROW_KEY) {
    char *z = esc(pRow, nRow);
    int rc = eng_err(WCS_TOOBIG, "row key '%s' is %zu bytes; the limit is "
                     "%d bytes (4 KiB)", z ? z : "?", nRow, WCS_MAX_ROW_KEY);
    free(z);
    return rc;
  }
  return WCS_OK;
}

int eng_check_qual(const void *pRow, size_t nRow, const void *pQual,
                   size_t nQual) {
  if (nQual > WCS_MAX_QUALIFIER) {
    char *zR = esc(pRow, nRow), *zQ = esc(pQual, nQual);
    int rc = eng_err(WCS_TOOBIG, "qualifier '%s' in row '%s' is %zu bytes; "
                     "the limit is %d bytes (16 KiB)", zQ ? zQ : "?",
                     zR ? zR : "?", nQual, WCS_MAX_QUALIFIER);
    free(zR);
    free(zQ);
    return rc;
  }
  return WCS_OK;
}

int eng_check_value(const void *pRow, size_t nRow, const char *zFamily,
                    const void *pQual, size_t nQual, size_t nVal) {
  if (nVal > WCS_MAX_VALUE) {
    char *z = esc(pRow, nRow), *zQ = esc(pQual, nQual);
    int rc = eng_err(WCS_TOOBIG,
                     "cell value of %s:%s in row '%s' is %zu "
                     "bytes; the limit is %d bytes (100 MiB)",
                     zFamily, zQ ? zQ : "?", z ? z : "?", nVal, WCS_MAX_VALUE);
    free(z);
    free(zQ);
    return rc;
  }
  return WCS_OK;
}

int eng_check_ts(int64_t iTs) {
  if (iTs < 0) {
    return eng_err(WCS_RANGE, "cell timestamp %lld is negative; timestamps "
                   "are microseconds since the epoch (or -1 for now)",
                   (long long)iTs);
  }
  if (iTs > ENG_TS_MAX) {
    return eng_err(WCS_RANGE, "cell timestamp %lld is too large; the largest "
                   "is %lld",
                   (long long)iTs, (long long)ENG_TS_MAX);
  }
  return WCS_OK;
}

static int check_family_name(const char *z) {
  size_t n = strlen(z), i;
  if (n == 0 || n > WCS_MAX_FAMILY_NAME) {
    return eng_err(WCS_ERROR, "column family name '%s' must be 1..%d "
                   "characters", z, WCS_MAX_FAMILY_NAME);
  }
  for (i = 0; i < n; i++) {
    char c = z[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')) {
      return eng_err(WCS_ERROR, "column family name '%s' may only contain "
                     "letters, digits, '-', '_' and '.'", z);
    }
  }
  return WCS_OK;
}

/* ------------------------------------------------------------------ */
/* engine, clock, locks                                                */

int64_t eng_now(wcs_engine *pEng) {
  return pEng->xNow ? pEng->xNow(pEng->pClockCtx) : wcs_now_micros();
}

void wcs_engine_set_clock(wcs_engine *pEng, int64_t (*xNow)(void *),
                          void *pCtx) {
  pEng->xNow = xNow;
  pEng->pClockCtx = pCtx;
}

wcs_db *wcs_engine_db(wcs_engine *pEng) { return pEng->db; }

int eng_commit_lock(wcs_engine *pEng) {
  if (pEng->bExclHeld && pthread_equal(pEng->exclOwner, pthread_self())) {
    return 0;
  }
  pthread_mutex_lock(&pEng->commitMu);
  return 1;
}

void eng_commit_unlock(wcs_engine *pEng, int bLocked) {
  if (bLocked) pthread_mutex_unlock(&pEng->commitMu);
}

/* ------------------------------------------------------------------ */
/* table definitions                                                   */

static void def_free(EngDef *d) {
  int i;
  if (d == NULL) return;
  for (i = 0; i < d->nFam; i++) free(d->aFam[i].zName);
  free(d->aFam);
  free(d->zName);
  free(d->zSchema);
  ks_schema_free(d->pSchema);
  free(d);
}

void eng_def_ref(wcs_engine *pEng, EngDef *d) {
  pthread_mutex_lock(&pEng->mu);
  d->nRef++;
  pthread_mutex_unlock(&pEng->mu);
}

/* A referenced copy of the catalog's table list, so callers can walk it
** without holding the engine mutex (and may run DDL meanwhile). Release
** each entry with eng_def_unref() and free the array. NULL on OOM. */
EngDef **eng_defs_snapshot(wcs_engine *pEng, int *pn) {
  EngDef **a;
  int i, n;
  pthread_mutex_lock(&pEng->mu);
  n = pEng->nDef;
  a = malloc((size_t)(n ? n : 1) * sizeof(EngDef *));
  if (a) {
    for (i = 0; i < n; i++) {
      a[i] = pEng->apDef[i];
      a[i]->nRef++;
    }
  }
  pthread_mutex_unlock(&pEng->mu);
  *pn = a ? n : 0;
  return a;
}

void eng_def_unref(wcs_engine *pEng, EngDef *d) {
  int bFree;
  if (d == NULL) return;
  pthread_mutex_lock(&pEng->mu);
  bFree = (--d->nRef == 0);
  pthread_mutex_unlock(&pEng->mu);
  if (bFree) {
    EngStats *s = d->pStats;
    def_free(d);
    eng_stats_release(pEng, s);
  }
}

EngFamily *eng_family(const EngDef *d, const char *zName, int *piFam) {
  EngFamily *f = eng_family_at(d, zName, piFam);
  int i;
  if (f) return f;
  if (zName) {
    for (i = 0; i < d->nFam; i++) {
      if (strcmp(d->aFam[i].zName, zName) == 0) {
        if (piFam) *piFam = i;
        return &d->aFam[i];
      }
    }
  }
  if (piFam) *piFam = -1;
  if (zName == NULL) {
    eng_err(WCS_ERROR, "no column family name given (NULL) for table %s",
            d->zName);
  } else {
    eng_err(WCS_ERROR, "table %s has no column family '%s'", d->zName,
            zName);
  }
  return NULL;
}

/* Index of the def named zName in pEng->apDef, or -(insertion point)-1. */
static int def_find(wcs_engine *pEng, const char *zName) {
  int lo = 0, hi = pEng->nDef;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    int c = strcmp(pEng->apDef[mid]->zName, zName);
    if (c == 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -lo - 1;
}

/* Parse schema text, drop the options that do not belong in the catalog
** (STORE, TABLE, SYNC, CACHE, HISTORY) and check family names. */
static int parse_schema(const char *zText, ks_schema **ppSchema) {
  char *zErr = NULL;
  ks_schema *p = NULL;
  int rc = ks_parse_text(zText ? zText : "", &p, &zErr);
  int i;
  *ppSchema = NULL;
  if (rc) {
    return eng_err_take(rc, zErr ? zErr : strdup("bad schema text"));
  }
  free(zErr);
  free(p->zStore);
  p->zStore = NULL;
  free(p->zTable);
  p->zTable = NULL;
  p->iSync = -1;
  p->nCacheBytes = -1;
  p->bHistory = 0;
  for (i = 0; i < p->nFamily; i++) {
    int j;
    rc = check_family_name(p->aFamily[i].zName);
    for (j = 0; rc == WCS_OK && j < i; j++) {
      if (strcmp(p->aFamily[i].zName, p->aFamily[j].zName) == 0) {
        rc = eng_err(WCS_SCHEMA, "column family '%s' is declared twice",
                     p->aFamily[i].zName);
      }
    }
    if (rc) {
      ks_schema_free(p);
      return rc;
    }
  }
  *ppSchema = p;
  return WCS_OK;
}

/*
** Build a def for schema pSchema (taken over). Family ids come from
** pOld's families of the same name, new ones from *piNextFid.
*/
static int def_build(const char *zName, uint32_t iTid, uint64_t iVersion,
                     ks_schema *pSchema, const EngDef *pOld,
                     uint16_t iNextFid, EngDef **ppDef) {
  EngDef *d = calloc(1, sizeof(*d));
  char *zText = NULL;
  int rc = WCS_OK, i;
  *ppDef = NULL;
  if (d == NULL) {
    ks_schema_free(pSchema);
    return eng_err(WCS_NOMEM, "out of memory");
  }
  d->pSchema = pSchema;
  d->zName = strdup(zName);
  d->iTid = iTid;
  d->iVersion = iVersion;
  d->iNextFid = iNextFid;
  d->nFam = pSchema->nFamily;
  d->aFam = calloc((size_t)(d->nFam ? d->nFam : 1), sizeof(EngFamily));
  if (d->zName == NULL || d->aFam == NULL) rc = WCS_NOMEM;
  if (rc == WCS_OK) rc = ks_schema_text(pSchema, &zText);
  d->zSchema = zText;
  for (i = 0; rc == WCS_OK && i < d->nFam; i++) {
    const ks_family *kf = &pSchema->aFamily[i];
    EngFamily *f = &d->aFam[i];
    int j;
    f->zName = strdup(kf->zName);
    if (f->zName == NULL) {
      rc = WCS_NOMEM;
      break;
    }
    f->eAgg = (int)kf->eAgg;
    f->nMaxVersions = kf->nMaxVersions;
    f->iMaxAge = kf->nMaxAgeMicros;
    f->bIntersection = kf->eGc == KS_GC_INTERSECTION;
    f->nColumn = kf->nQual;
    f->iFid = 0;
    for (j = 0; pOld && j < pOld->nFam; j++) {
      if (strcmp(pOld->aFam[j].zName, kf->zName) == 0) {
        f->iFid = pOld->aFam[j].iFid;
      }
    }
    if (f->iFid == 0) {
      if (d->iNextFid == 0xFFFF) {
        rc = eng_err(WCS_FULL, "table %s has used up its 65534 family ids",
                     zName);
        break;
      }
      f->iFid = d->iNextFid++;
    }
  }
  if (rc) {
    if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
    def_free(d);
    return rc;
  }
  d->nRef = 1;
  *ppDef = d;
  return WCS_OK;
}

static int record_encode(const EngDef *d, wcs_buf *b) {
  int rc = WCS_OK, i;
  uint8_t v = ENG_TABLE_RECORD_VERSION;
  size_t nText = strlen(d->zSchema);
  b->n = 0;
  rc = wcs_buf_append(b, &v, 1);
  if (rc == WCS_OK) rc = wcs_buf_append_varint(b, d->iTid);
  if (rc == WCS_OK) rc = wcs_buf_append_varint(b, d->iVersion);
  if (rc == WCS_OK) rc = wcs_buf_append_varint(b, d->iNextFid);
  if (rc == WCS_OK) rc = wcs_buf_append_varint(b, (uint64_t)d->nFam);
  for (i = 0; rc == WCS_OK && i < d->nFam; i++) {
    size_t n = strlen(d->aFam[i].zName);
    rc = wcs_buf_append_varint(b, d->aFam[i].iFid);
    if (rc == WCS_OK) rc = wcs_buf_append_varint(b, n);
    if (rc == WCS_OK) rc = wcs_buf_append(b, d->aFam[i].zName, n);
  }
  if (rc == WCS_OK) rc = wcs_buf_append_varint(b, nText);
  if (rc == WCS_OK) rc = wcs_buf_append(b, d->zSchema, nText);
  return rc;
}

/* Decode a table record into a def named zName. */
static int record_decode(const char *zName, const uint8_t *p, size_t n,
                         EngDef **ppDef) {
  const uint8_t *pEnd = p + n;
  uint64_t iTid, iVer, iNextFid, nFam, nText, i;
  int k;
  ks_schema *pSchema = NULL;
  EngDef *d = NULL;
  char *zText = NULL;
  uint16_t *aFid = NULL;
  char **azFam = NULL;
  int rc = WCS_OK;
  *ppDef = NULL;
  if (n < 1 || p[0] != ENG_TABLE_RECORD_VERSION) goto corrupt;
  p++;
  if ((k = wcs_get_varint(p, pEnd, &iTid)) == 0) goto corrupt;
  p += k;
  if ((k = wcs_get_varint(p, pEnd, &iVer)) == 0) goto corrupt;
  p += k;
  if ((k = wcs_get_varint(p, pEnd, &iNextFid)) == 0) goto corrupt;
  p += k;
  if ((k = wcs_get_varint(p, pEnd, &nFam)) == 0) goto corrupt;
  p += k;
  if (iTid == 0 || iTid > UINT32_MAX || iNextFid > 0xFFFF || nFam > 0xFFFF) {
    goto corrupt;
  }
  aFid = calloc((size_t)nFam + 1, sizeof(uint16_t));
  azFam = calloc((size_t)nFam + 1, sizeof(char *));
  if (aFid == NULL || azFam == NULL) {
    rc = WCS_NOMEM;
    goto done;
  }
  for (i = 0; i < nFam; i++) {
    uint64_t iFid, nName;
    if ((k = wcs_get_varint(p, pEnd, &iFid)) == 0) goto corrupt;
    p += k;
    if ((k = wcs_get_varint(p, pEnd, &nName)) == 0) goto corrupt;
    p += k;
    if (iFid == 0 || iFid > 0xFFFF || nName > (uint64_t)(pEnd - p)) {
      goto corrupt;
    }
    aFid[i] = (uint16_t)iFid;
    azFam[i] = strndup((const char *)p, (size_t)nName);
    if (azFam[i] == NULL) {
      rc = WCS_NOMEM;
      goto done;
    }
    p += nName;
  }
  if ((k = wcs_get_varint(p, pEnd, &nText)) == 0) goto corrupt;
  p += k;
  if (nText != (uint64_t)(pEnd - p)) goto corrupt;
  zText = strndup((const char *)p, (size_t)nText);
  if (zText == NULL) {
    rc = WCS_NOMEM;
    goto done;
  }
  rc = parse_schema(zText, &pSchema);
  if (rc) {
    rc = eng_err(WCS_CORRUPT_BKPT, "catalog: the stored schema of table %s "
                 "does not parse: %s", zName, wcs_engine_errmsg(NULL));
    goto done;
  }
  if ((uint64_t)pSchema->nFamily != nFam) goto corrupt_free;
  {
    /* fids come from the record; def_build only hands out new ones */
    EngDef old;
    EngFamily *aOld = calloc((size_t)nFam + 1, sizeof(EngFamily));
    if (aOld == NULL) {
      rc = WCS_NOMEM;
      goto done_free;
    }
    memset(&old, 0, sizeof(old));
    old.nFam = (int)nFam;
    old.aFam = aOld;
    for (i = 0; i < nFam; i++) {
      aOld[i].zName = azFam[i];
      aOld[i].iFid = aFid[i];
    }
    rc = def_build(zName, (uint32_t)iTid, iVer, pSchema, &old,
                   (uint16_t)iNextFid, &d);
    pSchema = NULL;
    free(aOld);
    if (rc == WCS_OK && d->iNextFid != iNextFid) {
      /* a family without a stored id */
      def_free(d);
      d = NULL;
      goto corrupt;
    }
  }
  goto done;
corrupt_free:
  ks_schema_free(pSchema);
  pSchema = NULL;
corrupt:
  rc = eng_err(WCS_CORRUPT_BKPT, "catalog: the record of table %s is "
               "malformed", zName);
  goto done;
done_free:
  ks_schema_free(pSchema);
done:
  if (azFam) {
    for (i = 0; i < nFam; i++) free(azFam[i]);
  }
  free(azFam);
  free(aFid);
  free(zText);
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory reading the catalog");
  *ppDef = d;
  return rc;
}

static int cat_key(wcs_buf *b, int cType, const void *p, size_t n) {
  uint8_t a[5] = {0, 0, 0, 0, (uint8_t)cType};
  b->n = 0;
  if (wcs_buf_append(b, a, 5)) return WCS_NOMEM;
  return wcs_buf_append(b, p, n);
}

/* ------------------------------------------------------------------ */
/* open / close                                                        */

/* Every engine open in this process, so that no store handle gets two:
** each engine numbers the tables it creates from its own catalog state,
** and two over one store would give two tables the same id (their cells
** mixed for good). Guarded by gOverMu, apart from the registry's mutex,
** which wcs_engine_open_path holds while it calls wcs_engine_open. */
static pthread_mutex_t gOverMu = PTHREAD_MUTEX_INITIALIZER;
static wcs_engine *gpOver;

/* Add pEng to the list, unless another engine (not one a parent process
** opened, fork) is open over the same store handle. */
static int over_claim(wcs_engine *pEng) {
  wcs_engine *p;
  pthread_mutex_lock(&gOverMu);
  for (p = gpOver; p; p = p->pNextOver) {
    if (p->db == pEng->db && !wcs_engine_forked(p)) break;
  }
  if (p == NULL) {
    pEng->pNextOver = gpOver;
    gpOver = pEng;
  }
  pthread_mutex_unlock(&gOverMu);
  return p == NULL;
}

static void over_release(wcs_engine *pEng) {
  wcs_engine **pp;
  pthread_mutex_lock(&gOverMu);
  for (pp = &gpOver; *pp; pp = &(*pp)->pNextOver) {
    if (*pp == pEng) {
      *pp = pEng->pNextOver;
      break;
    }
  }
  pthread_mutex_unlock(&gOverMu);
}

static void engine_free(wcs_engine *pEng) {
  int i;
  EngStats *s, *sNext;
  over_release(pEng);
  eng_pool_clear(pEng);
  for (i = 0; i < pEng->nDef; i++) eng_def_unref(pEng, pEng->apDef[i]);
  free(pEng->apDef);
  for (s = pEng->pStatsList; s; s = sNext) {
    sNext = *(EngStats **)s; /* first field of EngStats is pNext */
    eng_stats_free(s);
  }
  pthread_mutex_destroy(&pEng->mu);
  pthread_mutex_destroy(&pEng->commitMu);
  pthread_mutex_destroy(&pEng->gateMu);
  pthread_cond_destroy(&pEng->gateCv);
  pthread_mutex_destroy(&pEng->poolMu);
  free(pEng->zKey);
  free(pEng);
}

static int load_catalog(wcs_engine *pEng) {
  wcs_iter *pIter = NULL;
  wcs_iter_options o;
  uint8_t aPre[5] = {0, 0, 0, 0, ENG_CAT_TABLE};
  wcs_buf k = {0};
  void *pVal = NULL;
  size_t nVal = 0;
  int rc;

  pEng->iNextTid = 1;
  rc = cat_key(&k, ENG_CAT_NEXT, NULL, 0);
  if (rc == WCS_OK) rc = wcs_db_get(pEng->db, NULL, k.a, k.n, &pVal, &nVal);
  if (rc) {
    wcs_buf_free(&k);
    return eng_err_db(pEng->db, rc, "reading the catalog");
  }
  if (pVal) {
    uint64_t v;
    if (wcs_get_varint(pVal, (uint8_t *)pVal + nVal, &v) == 0 || v == 0 ||
        v > UINT32_MAX) {
      wcs_free(pVal);
      wcs_buf_free(&k);
      return eng_err(WCS_CORRUPT_BKPT, "catalog: bad next table id");
    }
    pEng->iNextTid = (uint32_t)v;
    wcs_free(pVal);
  }
  wcs_buf_free(&k);

  memset(&o, 0, sizeof(o));
  o.pPrefix = aPre;
  o.nPrefix = sizeof(aPre);
  rc = wcs_iter_new(pEng->db, &o, &pIter);
  if (rc == WCS_OK) rc = wcs_iter_seek(pIter, aPre, sizeof(aPre));
  while (rc == WCS_OK && wcs_iter_valid(pIter)) {
    size_t nk, nv;
    const uint8_t *pk = wcs_iter_key(pIter, &nk);
    const uint8_t *pv = wcs_iter_value(pIter, &nv);
    char *zName;
    EngDef *d = NULL;
    if (nk < 5 || memcmp(pk, aPre, 5) != 0) break;
    zName = strndup((const char *)pk + 5, nk - 5);
    if (zName == NULL) {
      rc = eng_err(WCS_NOMEM, "out of memory");
      break;
    }
    rc = record_decode(zName, pv, nv, &d);
    free(zName);
    if (rc) break;
    {
      EngDef **a = realloc(pEng->apDef,
                           (size_t)(pEng->nDef + 1) * sizeof(EngDef *));
      if (a == NULL) {
        def_free(d);
        rc = eng_err(WCS_NOMEM, "out of memory");
        break;
      }
      pEng->apDef = a;
      pEng->apDef[pEng->nDef++] = d; /* keys come in name order */
    }
    if (d->iTid >= pEng->iNextTid) pEng->iNextTid = d->iTid + 1;
    rc = eng_stats_new(pEng, d->iTid, &d->pStats);
    if (rc == WCS_OK) rc = eng_stats_load(pEng, d->pStats);
    if (rc == WCS_OK) rc = wcs_iter_next(pIter);
  }
  if (rc == WCS_OK) rc = wcs_iter_status(pIter);
  if (rc && wcs_engine_errmsg(NULL)[0] == 0) {
    eng_err_db(pEng->db, rc, "reading the catalog");
  }
  wcs_iter_free(pIter);
  return rc;
}

/*
** fork(). A child process inherits every engine its parent had open, but
** not their threads (flushes, compactions) nor the right to write their
** stores, whose LOCK the parent holds: such an engine must not be used,
** shared or closed there. gForkGen counts the forks this process is a
** child of (pthread_atfork); an engine remembers the count it was opened
** at, so the child's registry passes over the inherited ones, and an open
** of the same store in the child opens it anew (as a follower of the
** parent, which holds the lock). The registry mutex, and gOverMu after
** it, are held across fork() so that the child finds them consistent.
*/
static pthread_mutex_t gRegistryMu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gRegistryCv =
    PTHREAD_COND_INITIALIZER; /* a close ended */
static wcs_engine *gpRegistry;
static unsigned gForkGen;
static pthread_once_t gForkOnce = PTHREAD_ONCE_INIT;

static void fork_prepare(void) {
  pthread_mutex_lock(&gRegistryMu);
  pthread_mutex_lock(&gOverMu); /* (the order wcs_engine_open_path takes) */
}
static void fork_parent(void) {
  pthread_mutex_unlock(&gOverMu);
  pthread_mutex_unlock(&gRegistryMu);
}
static void fork_child(void) {
  gForkGen++;
  /* a parent's thread waiting for a close left its mark in the condition
  ** variable; the child has no such thread */
  pthread_cond_init(&gRegistryCv, NULL);
  pthread_mutex_unlock(&gOverMu);
  pthread_mutex_unlock(&gRegistryMu);
}
static void fork_register(void) {
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int wcs_engine_forked(const wcs_engine *pEng) {
  return pEng != NULL && pEng->iForkGen != gForkGen;
}

int wcs_engine_open(wcs_engine **ppEng, wcs_db *db, char **pzErr) {
  wcs_engine *pEng = calloc(1, sizeof(*pEng));
  int rc;
  *ppEng = NULL;
  if (pEng == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  pthread_once(&gForkOnce, fork_register);
  pEng->iForkGen = gForkGen;
  pEng->db = db;
  pthread_mutex_init(&pEng->mu, NULL);
  pthread_mutex_init(&pEng->commitMu, NULL);
  pthread_mutex_init(&pEng->gateMu, NULL);
  {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&pEng->gateCv, &a);
    pthread_condattr_destroy(&a);
  }
  pthread_mutex_init(&pEng->poolMu, NULL);
  eng_err_clear();
  if (!over_claim(pEng)) {
    wcs_seterr(pzErr, WCS_MISUSE,
               "the store already has an engine open in this process: "
               "use that engine (or open stores by path with "
               "wcs_engine_open_path(), which shares one)");
    engine_free(pEng);
    return WCS_MISUSE;
  }
  rc = load_catalog(pEng);
  if (rc) {
    wcs_seterr(pzErr, rc, "%s", wcs_engine_errmsg(pEng));
    engine_free(pEng);
    return rc;
  }
  *ppEng = pEng;
  return WCS_OK;
}

/* Process-wide registry of engines opened by path (gpRegistry, above). */

/* The registry's engine for key zKey (this process's, not one inherited
** across fork()), with one more reference, or NULL. gRegistryMu held. An
** engine whose last reference went is still listed while its store
** closes: an open of its path waits for that, since until the store's
** lock is let go a new open would take this process for another one that
** writes the store. */
static wcs_engine *registry_take(const char *zKey) {
  wcs_engine *pEng;
again:
  for (pEng = gpRegistry; pEng; pEng = pEng->pNextOpen) {
    if (strcmp(pEng->zKey, zKey) == 0 && !wcs_engine_forked(pEng)) {
      if (pEng->bClosing) {
        pthread_cond_wait(&gRegistryCv, &gRegistryMu);
        goto again;
      }
      pEng->nOpen++;
      return pEng;
    }
  }
  return NULL;
}

static char *registry_key(const char *zPath, int bInMemory) {
  char *z = NULL;
  if (bInMemory) {
    if (asprintf(&z, "mem:%s", zPath) < 0) return NULL;
    return z;
  }
  z = realpath(zPath, NULL);
  if (z == NULL) z = strdup(zPath);
  return z;
}

int wcs_engine_open_path(wcs_engine **ppEng, const char *zPath,
                         const wcs_options *pOpt, char **pzErr) {
  wcs_options o;
  wcs_engine *pEng;
  wcs_db *db = NULL;
  GcFilter *pGc = NULL;
  char *zKey = NULL;
  int rc;
  *ppEng = NULL;
  if (pOpt) o = *pOpt;
  else wcs_options_init(&o);
  wcs_engine_options(&o);
  if (zPath == NULL && !o.bInMemory) {
    return wcs_seterr(pzErr, WCS_MISUSE, "no store path given");
  }
  if (o.xCompactionFilter == NULL) {
    /* physical GC at compaction (gcfilter.c): the context exists before
    ** the store (which copies it) and is bound once the engine is open */
    if (gcf_new(&pGc)) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    o.xCompactionFilter = gcf_filter;
    o.pFilterCtx = pGc;
  }
  pthread_mutex_lock(&gRegistryMu);
  /* a follower (bFollow) is its opener's own, as of its open: never
  ** shared, nor found by a later open that wants to write */
  if (zPath && !o.bFollow) {
    zKey = registry_key(zPath, o.bInMemory);
    if (zKey == NULL) {
      pthread_mutex_unlock(&gRegistryMu);
      gcf_free(pGc);
      return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    }
    if ((pEng = registry_take(zKey)) != NULL) {
      pthread_mutex_unlock(&gRegistryMu);
      free(zKey);
      gcf_free(pGc);
      *ppEng = pEng;
      return WCS_OK;
    }
  }
  rc = wcs_db_open(&db, zPath, &o, pzErr);
  if (rc == WCS_OK) rc = wcs_engine_open(&pEng, db, pzErr);
  if (rc == WCS_OK && pGc) {
    rc = gcf_bind(pGc, pEng);
    if (rc) {
      wcs_seterr(pzErr, rc, "%s", wcs_engine_errmsg(pEng));
      engine_free(pEng);
      pEng = NULL;
    }
  }
  if (rc == WCS_OK) {
    pEng->bOwnDb = 1;
    pEng->nOpen = 1;
    if (zKey) {
      /* the directory exists now: key by its real path */
      char *zReal = registry_key(zPath, o.bInMemory);
      if (zReal) {
        free(zKey);
        zKey = zReal;
      }
      pEng->zKey = zKey;
      zKey = NULL;
      pEng->pNextOpen = gpRegistry;
      gpRegistry = pEng;
    }
    *ppEng = pEng;
  } else {
    wcs_db_close(db);
    gcf_free(pGc); /* after the store: no compaction can call it now */
  }
  pthread_mutex_unlock(&gRegistryMu);
  free(zKey);
  return rc;
}

int wcs_engine_open_shared(wcs_engine **ppEng, const char *zPath,
                           const wcs_options *pOpt, int *pbFollow,
                           char **pzErr) {
  wcs_options o;
  char *zErr = NULL;
  int rc = wcs_engine_open_path(ppEng, zPath, pOpt, &zErr);
  *pbFollow = 0;
  if (rc != WCS_BUSY) {
    if (pzErr)
      *pzErr = zErr;
    else
      wcs_free(zErr);
    return rc;
  }
  /* another process writes it: read it beside that process */
  if (pOpt)
    o = *pOpt;
  else
    wcs_options_init(&o);
  o.bFollow = 1;
  if (wcs_engine_open_path(ppEng, zPath, &o, NULL) == WCS_OK) {
    *pbFollow = 1;
    wcs_free(zErr);
    return WCS_OK;
  }
  if (pzErr)
    *pzErr = zErr; /* the reason the store could not be opened to write */
  else
    wcs_free(zErr);
  return rc;
}

int wcs_engine_open_reader(wcs_engine **ppEng, const char *zPath,
                           const wcs_options *pOpt, int *pbFollow,
                           char **pzErr) {
  wcs_options o;
  *ppEng = NULL;
  *pbFollow = 0;
  if (zPath) {
    char *zKey = registry_key(zPath, 0);
    if (zKey == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    pthread_mutex_lock(&gRegistryMu);
    *ppEng = registry_take(zKey);
    pthread_mutex_unlock(&gRegistryMu);
    free(zKey);
    if (*ppEng) return WCS_OK;
  }
  if (pOpt)
    o = *pOpt;
  else
    wcs_options_init(&o);
  o.bFollow = 1;
  *pbFollow = 1;
  return wcs_engine_open_path(ppEng, zPath, &o, pzErr);
}

int wcs_engine_follow(wcs_engine *pEng, int *pbReopen) {
  static const uint8_t aCatalog[4] = {0, 0, 0, 0}; /* ENG_CATALOG_TID */
  int bMoved = 0, bCatalog = 0, rc;
  *pbReopen = 0;
  if (pEng == NULL) return WCS_MISUSE;
  rc = wcs_db_follow(pEng->db, aCatalog, sizeof aCatalog, &bMoved, &bCatalog);
  if (rc) return eng_err_db(pEng->db, rc, "following the store's writer");
  *pbReopen = bMoved || bCatalog;
  return WCS_OK;
}

int wcs_engine_close(wcs_engine *pEng) {
  GcFilter *pGc;
  int rc = WCS_OK;
  if (pEng == NULL) return WCS_OK;
  if (wcs_engine_forked(pEng)) {
    /* the parent's: closing it would flush its store and wait for
    ** threads this process does not have; left as it is */
    return WCS_OK;
  }
  if (pEng->bOwnDb) {
    pthread_mutex_lock(&gRegistryMu);
    if (--pEng->nOpen > 0) {
      pthread_mutex_unlock(&gRegistryMu);
      return WCS_OK;
    }
    pEng->bClosing = 1; /* listed until its store is closed */
    pthread_mutex_unlock(&gRegistryMu);
    eng_pool_clear(pEng); /* idle cursors hold store iterators */
    pGc = gcf_unbind(pEng);
    rc = wcs_db_close(pEng->db);
    gcf_free(pGc); /* after the store: no compaction can call it now */
    pthread_mutex_lock(&gRegistryMu);
    if (pEng->zKey) {
      wcs_engine **pp;
      for (pp = &gpRegistry; *pp; pp = &(*pp)->pNextOpen) {
        if (*pp == pEng) {
          *pp = pEng->pNextOpen;
          break;
        }
      }
    }
    pthread_cond_broadcast(&gRegistryCv);
    pthread_mutex_unlock(&gRegistryMu);
  }
  engine_free(pEng);
  return rc;
}

/* ------------------------------------------------------------------ */
/* DDL                                                                 */

static int check_table_name(const char *zName) {
  if (zName == NULL || zName[0] == 0 || strlen(zName) > 128) {
    return eng_err(WCS_ERROR,
                   "table name '%.40s%s' has %zu bytes: table names must be "
                   "1..128 bytes",
                   zName ? zName : "", zName && strlen(zName) > 40 ? "..." : "",
                   zName ? strlen(zName) : (size_t)0);
  }
  return WCS_OK;
}

static void warn_families(const EngDef *d) {
  char *z = NULL;
  if (d->nFam > WCS_WARN_FAMILIES &&
      asprintf(&z, "table %s has %d column families; Bigtable recommends "
               "at most %d", d->zName, d->nFam, WCS_WARN_FAMILIES) >= 0) {
    set_warning(z);
  }
}

static int open_handle(wcs_engine *pEng, EngDef *d, wcs_table **ppTab) {
  wcs_table *t = calloc(1, sizeof(*t));
  if (t == NULL) return eng_err(WCS_NOMEM, "out of memory");
  eng_def_ref(pEng, d);
  t->pEng = pEng;
  t->pDef = d;
  *ppTab = t;
  return WCS_OK;
}

int wcs_table_create(wcs_engine *pEng, const char *zName,
                     const char *zSchema, wcs_table **ppTab) {
  ks_schema *pSchema = NULL;
  EngDef *d = NULL;
  wcs_batch *pBatch = NULL;
  wcs_buf k = {0}, v = {0};
  int rc, bLocked, i;
  uint8_t aNext[WCS_VARINT_MAX];

  if (ppTab) *ppTab = NULL;
  set_warning(NULL);
  if (pEng == NULL) return eng_err(WCS_MISUSE, "a NULL engine");
  rc = check_table_name(zName);
  if (rc) return rc;
  rc = parse_schema(zSchema, &pSchema);
  if (rc) return rc;
  bLocked = eng_commit_lock(pEng);
  pthread_mutex_lock(&pEng->mu);
  i = def_find(pEng, zName);
  pthread_mutex_unlock(&pEng->mu);
  if (i >= 0) {
    ks_schema_free(pSchema);
    rc = eng_err(WCS_SCHEMA, "table %s already exists", zName);
    goto out;
  }
  if (pEng->iNextTid == UINT32_MAX) {
    ks_schema_free(pSchema);
    rc = eng_err(WCS_FULL, "the store has used up its table ids");
    goto out;
  }
  rc = def_build(zName, pEng->iNextTid, 1, pSchema, NULL, 1, &d);
  if (rc) goto out;
  rc = eng_stats_new(pEng, d->iTid, &d->pStats);
  if (rc == WCS_OK) rc = wcs_batch_new(&pBatch);
  if (rc == WCS_OK) rc = cat_key(&k, ENG_CAT_NEXT, NULL, 0);
  if (rc == WCS_OK) {
    int n = wcs_put_varint(aNext, (uint64_t)pEng->iNextTid + 1);
    rc = wcs_batch_put(pBatch, k.a, k.n, aNext, (size_t)n);
  }
  if (rc == WCS_OK) rc = cat_key(&k, ENG_CAT_TABLE, zName, strlen(zName));
  if (rc == WCS_OK) rc = record_encode(d, &v);
  if (rc == WCS_OK) rc = wcs_batch_put(pBatch, k.a, k.n, v.a, v.n);
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
  if (rc == WCS_OK) {
    rc = wcs_db_write(pEng->db, pBatch);
    if (rc) eng_err_db(pEng->db, rc, "writing the catalog");
    else eng_pool_release_views(pEng);
  }
  if (rc == WCS_OK) {
    EngDef **a;
    pthread_mutex_lock(&pEng->mu);
    a = realloc(pEng->apDef, (size_t)(pEng->nDef + 1) * sizeof(EngDef *));
    if (a == NULL) {
      rc = eng_err(WCS_NOMEM, "out of memory");
    } else {
      int at;
      pEng->apDef = a;
      at = -def_find(pEng, zName) - 1;
      memmove(&a[at + 1], &a[at], (size_t)(pEng->nDef - at) * sizeof(*a));
      a[at] = d;
      pEng->nDef++;
      pEng->iNextTid++;
    }
    pthread_mutex_unlock(&pEng->mu);
  }
  /* a new table has no cells yet: its policies can follow the write (on
  ** OOM the table is kept whole at compaction: GC at read time only) */
  if (rc == WCS_OK) (void)gcf_set_table(pEng, d);
  if (rc == WCS_OK) {
    warn_families(d);
    if (ppTab) rc = open_handle(pEng, d, ppTab);
    d = NULL;
  }
out:
  eng_commit_unlock(pEng, bLocked);
  if (d) eng_def_unref(pEng, d);
  wcs_batch_free(pBatch);
  wcs_buf_free(&k);
  wcs_buf_free(&v);
  return rc;
}

int wcs_table_open(wcs_engine *pEng, const char *zName, wcs_table **ppTab) {
  int i, rc = WCS_OK;
  if (ppTab == NULL) return eng_err(WCS_MISUSE, "a NULL ppTab");
  *ppTab = NULL;
  if (pEng == NULL) return eng_err(WCS_MISUSE, "a NULL engine");
  if (zName == NULL) return WCS_OK;
  pthread_mutex_lock(&pEng->mu);
  i = def_find(pEng, zName);
  if (i >= 0) {
    wcs_table *t = calloc(1, sizeof(*t));
    if (t == NULL) {
      rc = eng_err(WCS_NOMEM, "out of memory");
    } else {
      t->pEng = pEng;
      t->pDef = pEng->apDef[i];
      t->pDef->nRef++;
      *ppTab = t;
    }
  }
  pthread_mutex_unlock(&pEng->mu);
  return rc;
}

void wcs_table_close(wcs_table *pTab) {
  if (pTab == NULL) return;
  eng_def_unref(pTab->pEng, pTab->pDef);
  free(pTab);
}

/* 1 if two schemas have the same row key. */
static int same_key(const ks_schema *a, const ks_schema *b) {
  int i;
  if (a->nField != b->nField || a->eStruct != b->eStruct ||
      a->nDelim != b->nDelim || a->nSalt != b->nSalt ||
      memcmp(a->aDelim, b->aDelim, (size_t)a->nDelim) != 0) {
    return 0;
  }
  for (i = 0; i < a->nField; i++) {
    if (strcmp(a->aField[i].zName, b->aField[i].zName) != 0 ||
        a->aField[i].eType != b->aField[i].eType ||
        a->aField[i].eEnc != b->aField[i].eEnc ||
        a->aField[i].nWidth != b->aField[i].nWidth) {
      return 0;
    }
  }
  return 1;
}

int wcs_table_alter(wcs_engine *pEng, const char *zName,
                    const char *zSchema) {
  ks_schema *pSchema = NULL;
  EngDef *pOld, *d = NULL;
  wcs_batch *pBatch = NULL;
  wcs_buf k = {0}, v = {0}, e = {0};
  int rc, bLocked, i, j;

  set_warning(NULL);
  if (pEng == NULL) return eng_err(WCS_MISUSE, "a NULL engine");
  rc = parse_schema(zSchema, &pSchema);
  if (rc) return rc;
  bLocked = eng_commit_lock(pEng);
  pthread_mutex_lock(&pEng->mu);
  i = def_find(pEng, zName ? zName : "");
  pOld = i >= 0 ? pEng->apDef[i] : NULL;
  pthread_mutex_unlock(&pEng->mu);
  if (pOld == NULL) {
    ks_schema_free(pSchema);
    rc = eng_err(WCS_ERROR, "no such table: %s", zName ? zName : "(null)");
    goto out;
  }
  if (!same_key(pOld->pSchema, pSchema)) {
    ks_schema_free(pSchema);
    rc = eng_err(WCS_SCHEMA, "cannot alter table %s: the KEY clause must "
                 "stay the same", zName);
    goto out;
  }
  for (i = 0; i < pSchema->nFamily; i++) {
    for (j = 0; j < pOld->nFam; j++) {
      if (strcmp(pOld->aFam[j].zName, pSchema->aFamily[i].zName) == 0 &&
          pOld->aFam[j].eAgg != (int)pSchema->aFamily[i].eAgg) {
        rc = eng_err(WCS_SCHEMA, "cannot alter table %s: family %s cannot "
                     "change its aggregate type", zName,
                     pOld->aFam[j].zName);
        ks_schema_free(pSchema);
        goto out;
      }
    }
  }
  rc = def_build(zName, pOld->iTid, pOld->iVersion + 1, pSchema, pOld,
                 pOld->iNextFid, &d);
  if (rc) goto out;
  d->pStats = pOld->pStats;
  eng_stats_hold(pEng, d->pStats);
  /* no compaction may drop by the old policy what the new one shows */
  rc = gcf_hold_table(pEng, pOld->iTid);
  if (rc == WCS_OK) rc = wcs_batch_new(&pBatch);
  /* drop the data of families that are gone */
  for (j = 0; rc == WCS_OK && j < pOld->nFam; j++) {
    int bKept = 0;
    for (i = 0; i < d->nFam; i++) bKept |= d->aFam[i].iFid == pOld->aFam[j].iFid;
    if (!bKept) {
      uint16_t iFid = pOld->aFam[j].iFid;
      k.n = 0;
      e.n = 0;
      rc = eng_put_prefix(&k, d->iTid, iFid);
      if (rc == WCS_OK) {
        rc = eng_put_family_end(&e, d->iTid, iFid);
      }
      if (rc == WCS_OK) rc = wcs_batch_delete_range(pBatch, k.a, k.n, e.a, e.n);
    }
  }
  if (rc == WCS_OK) rc = cat_key(&k, ENG_CAT_TABLE, zName, strlen(zName));
  if (rc == WCS_OK) rc = record_encode(d, &v);
  if (rc == WCS_OK) rc = wcs_batch_put(pBatch, k.a, k.n, v.a, v.n);
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
  if (rc == WCS_OK) {
    rc = wcs_db_write(pEng->db, pBatch);
    if (rc) eng_err_db(pEng->db, rc, "writing the catalog");
  }
  if (rc == WCS_OK) {
    pthread_mutex_lock(&pEng->mu);
    i = def_find(pEng, zName);
    pEng->apDef[i] = d;
    pOld->bStale = 1;
    pthread_mutex_unlock(&pEng->mu);
    eng_pool_clear(pEng); /* idle cursors on the old definition */
    eng_def_unref(pEng, pOld); /* the catalog's reference */
    warn_families(d);
    /* on OOM the table stays held (kept whole at compaction) */
    (void)gcf_set_table(pEng, d);
    d = NULL;
  } else if (pOld) {
    gcf_set_table(pEng, pOld); /* the write failed: the old rules again */
  }
out:
  eng_commit_unlock(pEng, bLocked);
  if (d) eng_def_unref(pEng, d);
  wcs_batch_free(pBatch);
  wcs_buf_free(&k);
  wcs_buf_free(&v);
  wcs_buf_free(&e);
  return rc;
}

int wcs_table_drop(wcs_engine *pEng, const char *zName) {
  EngDef *d;
  wcs_batch *pBatch = NULL;
  wcs_buf k = {0}, e = {0};
  int rc, bLocked, i;
  if (pEng == NULL) return eng_err(WCS_MISUSE, "a NULL engine");
  rc = check_table_name(zName);
  if (rc) return rc;
  bLocked = eng_commit_lock(pEng);
  pthread_mutex_lock(&pEng->mu);
  i = def_find(pEng, zName);
  d = i >= 0 ? pEng->apDef[i] : NULL;
  pthread_mutex_unlock(&pEng->mu);
  if (d == NULL) {
    rc = eng_err(WCS_ERROR, "no such table: %s", zName ? zName : "(null)");
    goto out;
  }
  rc = wcs_batch_new(&pBatch);
  if (rc == WCS_OK) rc = eng_put_prefix(&k, d->iTid, 0);
  if (rc == WCS_OK) rc = eng_put_prefix(&e, d->iTid + 1, 0);
  if (rc == WCS_OK) rc = wcs_batch_delete_range(pBatch, k.a, 4, e.a, 4);
  if (rc == WCS_OK) rc = cat_key(&k, ENG_CAT_TABLE, zName, strlen(zName));
  if (rc == WCS_OK) rc = wcs_batch_delete(pBatch, k.a, k.n);
  if (rc == WCS_OK) {
    uint8_t aTid[4];
    aTid[0] = (uint8_t)(d->iTid >> 24);
    aTid[1] = (uint8_t)(d->iTid >> 16);
    aTid[2] = (uint8_t)(d->iTid >> 8);
    aTid[3] = (uint8_t)d->iTid;
    rc = cat_key(&k, ENG_CAT_HEAT, aTid, 4);
    if (rc == WCS_OK) rc = wcs_batch_delete(pBatch, k.a, k.n);
  }
  if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
  if (rc == WCS_OK) {
    rc = wcs_db_write(pEng->db, pBatch);
    if (rc) eng_err_db(pEng->db, rc, "dropping a table");
  }
  if (rc == WCS_OK) {
    pthread_mutex_lock(&pEng->mu);
    i = def_find(pEng, zName);
    memmove(&pEng->apDef[i], &pEng->apDef[i + 1],
            (size_t)(pEng->nDef - i - 1) * sizeof(EngDef *));
    pEng->nDef--;
    d->bStale = 1;
    pthread_mutex_unlock(&pEng->mu);
    eng_pool_clear(pEng); /* idle cursors on the dropped definition */
    gcf_drop_table(pEng, d->iTid); /* its cells are under a range delete */
    eng_def_unref(pEng, d);
  }
out:
  eng_commit_unlock(pEng, bLocked);
  wcs_batch_free(pBatch);
  wcs_buf_free(&k);
  wcs_buf_free(&e);
  return rc;
}

int wcs_table_list(wcs_engine *pEng, void *pCtx,
                   int (*xTable)(void *, const char *, const char *)) {
  EngDef **a;
  int n, i, rc = WCS_OK;
  /* copy the list so the callback may run DDL */
  a = eng_defs_snapshot(pEng, &n);
  if (a == NULL) return eng_err(WCS_NOMEM, "out of memory");
  for (i = 0; i < n; i++) {
    if (rc == WCS_OK) rc = xTable(pCtx, a[i]->zName, a[i]->zSchema);
    eng_def_unref(pEng, a[i]);
  }
  free(a);
  return rc;
}

const char *wcs_table_name(const wcs_table *t) { return t->pDef->zName; }
const char *wcs_table_schema_text(const wcs_table *t) {
  return t->pDef->zSchema;
}
uint64_t wcs_table_schema_version(const wcs_table *t) {
  return t->pDef->iVersion;
}
int wcs_table_stale(const wcs_table *t) {
  return t->pDef->bStale != 0;
}
uint32_t wcs_table_id(const wcs_table *t) {
  return t->pDef->iTid;
}
const struct ks_schema *wcs_table_schema(const wcs_table *t) {
  return t->pDef->pSchema;
}
int wcs_table_family_count(const wcs_table *t) { return t->pDef->nFam; }

int wcs_table_family(const wcs_table *t, int i, wcs_family_info *pInfo) {
  const EngFamily *f;
  if (i < 0 || i >= t->pDef->nFam) {
    return eng_err(WCS_RANGE, "family index %d out of range", i);
  }
  f = &t->pDef->aFam[i];
  pInfo->zName = f->zName;
  pInfo->eAggregate = f->eAgg;
  pInfo->nMaxVersions = (int)(f->nMaxVersions > INT_MAX ? INT_MAX
                                                        : f->nMaxVersions);
  pInfo->iMaxAge = f->iMaxAge;
  pInfo->bIntersection = f->bIntersection;
  pInfo->nColumn = f->nColumn;
  return WCS_OK;
}

int wcs_table_family_index(const wcs_table *t, const char *zName) {
  int i;
  for (i = 0; zName && i < t->pDef->nFam; i++) {
    if (strcmp(t->pDef->aFam[i].zName, zName) == 0) return i;
  }
  return -1;
}
