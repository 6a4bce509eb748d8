/*
** version.c — versions, version edits, the manifest and the level
** iterator. See version.h for the model; the manifest's bytes (log framing
** of wal.h around the edit encoding below) are documented in
** doc/format.md.
**
** Edit encoding: a sequence of fields, each a varint tag followed by its
** values (VE_* in version.h). Varints are LevelDB's (util.h). An edit that
** does not parse to its last byte is corruption.
**
** Manifest lifecycle: every writable open writes a fresh manifest holding
** one edit with the whole state ("snapshot edit"), fsyncs it, writes its
** name to a temporary file, fsyncs that, renames it over CURRENT and
** fsyncs the directory; only then is the previous manifest deleted. Later
** edits are appended and fsynced one by one. A torn tail of the manifest
** is an edit that was never applied (the change it describes only takes
** effect after the fsync), so recovery ignores it.
**
** Live logs (formats 2 and 3): besides the sorted files the set tracks
** the WAL files that hold commits not yet in them (aWal): VE_LOG_LIVE when
** the store starts writing to one, VE_LOG_SEAL with its length when the
** memtable switches away from it, VE_LOG_CLOSED (format 3) with the
** length of whole synced records when the store is closed cleanly while
** writing it (it stays live: the next open may append to it), dropped
** when VE_LOG moves past it. The snapshot edit of a fresh manifest
** repeats them. db.c checks them at open, so that a lost or shortened log
** is refused rather than opened as a smaller store. A manifest of an older
** format tracks fewer or none; a writable open rewrites it in the current
** format (vset_open_manifest) before appending an edit with the new tags,
** so a manifest never holds tags its declared format lacks.
*/
#include "storage/version.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/ikey.h"
#include "storage/wal.h"

struct wcs_vset {
  wcs_env *pEnv;                   /* not owned */
  char *zDir;                      /* store directory, owned */
  const wcs_options *pOpt;         /* borrowed */
  wcs_cache *pCache;               /* borrowed */
  int bReadOnly;                   /* never write or delete */
  uint64_t iNextFile;              /* next unused file number */
  uint64_t iLog;                   /* WAL files numbered below are obsolete */
  uint64_t lastSeq;                /* every seq <= this is in the files */
  uint64_t iManifest;              /* number of the manifest in use, 0: none */
  uint64_t nManifestRead;          /* bytes of it replay() read, all whole
                                   ** records (0: its tail was torn) */
  uint64_t nManifestEnd;           /* the same, torn tail or not */
  uint64_t nManifestFile;          /* its size as replay() found it, a
                                   ** torn tail included */
  wal_writer *pManifest;           /* open manifest (writable stores) */
  uint64_t nManifestBase;          /* its size when this process began it
                                   ** (the state's record), 0: opened to
                                   ** append */
  int bManifestBroken;             /* an append failed: refuse more edits */
  int iFormat;                     /* format the manifest in use declares */
  int nWal;                        /* entries in aWal */
  int nWalAlloc;                   /* room in aWal */
  vedit_wal *aWal;                 /* tracked live logs: numbers >= iLog,
                                   ** ascending, no repeats */
  wcs_version *pCurrent;           /* referenced */
  wcs_buf aCompactPtr[WCS_NLEVEL]; /* round-robin cursors (user keys) */
};

/* ====================================================================
** Keys and ranges
** ==================================================================== */

static int isSentinel(const uint8_t *p, size_t n) {
  return wcs_ikey_trailer(p, n) == WCS_IKEY_SENTINEL;
}

/* Set f->aBound from f's keys. */
static void fmetaSlices(wcs_fmeta *f) {
  size_t nS = f->nSmallest - WCS_IKEY_TRAILER, nL = f->nLargest - WCS_IKEY_TRAILER;
  f->aBound[0] = wcs_key_slice(f->pSmallest, nS, 0);
  f->aBound[1] = wcs_key_slice(f->pSmallest, nS, 8);
  f->aBound[2] = wcs_key_slice(f->pLargest, nL, 0);
  f->aBound[3] = wcs_key_slice(f->pLargest, nL, 8);
}

/* A user key with its first 16 bytes as two slices (wcs_key_slice), so
** that it is compared with a file's bounds without reading the file's
** keys unless the slices tie: for the bounds of a target, taken once. */
typedef struct KeySl {
  const uint8_t *p; /* the key; NULL: unbounded */
  size_t n;
  uint64_t hi, lo; /* bytes [0, 8) and [8, 16) */
} KeySl;

static void keySl(KeySl *k, const uint8_t *p, size_t n) {
  k->p = p;
  k->n = n;
  k->hi = p ? wcs_key_slice(p, n, 0) : 0;
  k->lo = p ? wcs_key_slice(p, n, 8) : 0;
}

/* Compare user key k with f's smallest (iEnd 0) or largest (iEnd 1) user
** key, as wcs_ukey_cmp does. */
static inline int cmpBound(const KeySl *k, const wcs_fmeta *f, int iEnd) {
  uint64_t hi = f->aBound[2 * iEnd], lo = f->aBound[2 * iEnd + 1];
  if (k->hi != hi) return k->hi < hi ? -1 : 1;
  if (k->lo != lo) return k->lo < lo ? -1 : 1;
  return iEnd ? wcs_ukey_cmp(k->p, k->n, f->pLargest,
                             f->nLargest - WCS_IKEY_TRAILER)
              : wcs_ukey_cmp(k->p, k->n, f->pSmallest,
                             f->nSmallest - WCS_IKEY_TRAILER);
}

/* fmeta_ends_before and fmeta_overlaps on bounds taken with keySl. */
static int endsBeforeSl(const wcs_fmeta *f, const KeySl *pLo) {
  int c;
  if (pLo->p == NULL || f->bUnbounded) return 0;
  c = cmpBound(pLo, f, 1);
  return c > 0 || (c == 0 && isSentinel(f->pLargest, f->nLargest));
}

static int overlapsSl(const wcs_fmeta *f, const KeySl *pLo, const KeySl *pHi) {
  if (pHi->p && cmpBound(pHi, f, 0) <= 0) return 0;
  return !endsBeforeSl(f, pLo);
}

int fmeta_may_hold(const wcs_fmeta *f, const uint8_t *pKey, size_t nKey) {
  int c;
  if (wcs_ukey_cmp(f->pSmallest, f->nSmallest - WCS_IKEY_TRAILER, pKey, nKey) >
      0) {
    return 0;
  }
  if (f->bUnbounded) return 1;
  c = wcs_ukey_cmp(pKey, nKey, f->pLargest, f->nLargest - WCS_IKEY_TRAILER);
  return c < 0 || (c == 0 && !isSentinel(f->pLargest, f->nLargest));
}

int fmeta_ends_before(const wcs_fmeta *f, const uint8_t *pLo, size_t nLo) {
  int c;
  if (pLo == NULL || f->bUnbounded) return 0;
  c = wcs_ukey_cmp(pLo, nLo, f->pLargest, f->nLargest - WCS_IKEY_TRAILER);
  return c > 0 || (c == 0 && isSentinel(f->pLargest, f->nLargest));
}

int fmeta_overlaps(const wcs_fmeta *f, const uint8_t *pLo, size_t nLo,
                   const uint8_t *pHi, size_t nHi) {
  if (pHi && wcs_ukey_cmp(f->pSmallest, f->nSmallest - WCS_IKEY_TRAILER, pHi,
                          nHi) >= 0) {
    return 0;
  }
  return !fmeta_ends_before(f, pLo, nLo);
}

/* Compare f's largest key with internal key k (unbounded is +inf). */
static int cmpLargest(const wcs_fmeta *f, const uint8_t *k, size_t n) {
  if (f->bUnbounded) return 1;
  return wcs_ikey_cmp(f->pLargest, f->nLargest, k, n);
}

/* ====================================================================
** Files
** ==================================================================== */

char *vset_file_path(const wcs_vset *vs, uint64_t iFile, const char *zExt) {
  size_t n = strlen(vs->zDir) + 32 + strlen(zExt);
  char *z = malloc(n);
  if (z)
    snprintf(z, n, "%s/%06llu.%s", vs->zDir, (unsigned long long)iFile, zExt);
  return z;
}

char *vset_manifest_path(const wcs_vset *vs, uint64_t iManifest) {
  char zName[40];
  snprintf(zName, sizeof zName, "MANIFEST-%06llu",
           (unsigned long long)iManifest);
  return wcs_path_join(vs->zDir, zName);
}

static wcs_fmeta *fmetaAlloc(wcs_vset *vs) {
  wcs_fmeta *f = calloc(1, sizeof *f);
  if (f == NULL) return NULL;
  atomic_init(&f->nRef, 1);
  f->pVs = vs;
  return f;
}

int fmeta_new(wcs_vset *vs, const sst_meta *m, wcs_fmeta **pp) {
  wcs_fmeta *f = fmetaAlloc(vs);
  *pp = NULL;
  if (f == NULL) return WCS_NOMEM;
  f->iFile = m->iFile;
  f->nBytes = m->nBytes;
  f->nEntries = m->nEntries;
  f->nRawBytes = m->nRawBytes;
  f->nRangeDel = m->nRangeDel;
  f->minSeq = m->minSeq;
  f->maxSeq = m->maxSeq;
  f->bUnbounded = m->bUnbounded;
  f->pSmallest = malloc(m->nSmallest ? m->nSmallest : 1);
  f->pLargest = malloc(m->nLargest ? m->nLargest : 1);
  if (f->pSmallest == NULL || f->pLargest == NULL) {
    fmeta_unref(f);
    return WCS_NOMEM;
  }
  memcpy(f->pSmallest, m->pSmallest, m->nSmallest);
  f->nSmallest = m->nSmallest;
  memcpy(f->pLargest, m->pLargest, m->nLargest);
  f->nLargest = m->nLargest;
  fmetaSlices(f);
  *pp = f;
  return WCS_OK;
}

void fmeta_ref(wcs_fmeta *f) {
  atomic_fetch_add_explicit(&f->nRef, 1, memory_order_relaxed);
}

void fmeta_unref(wcs_fmeta *f) {
  if (f == NULL) return;
  if (atomic_fetch_sub_explicit(&f->nRef, 1, memory_order_acq_rel) != 1) {
    return;
  }
  frags_free(&f->frags);
  if (f->pReader) sst_reader_close(f->pReader);
  if (f->bObsolete && f->pVs && !f->pVs->bReadOnly) {
    char *z = vset_file_path(f->pVs, f->iFile, "sst");
    if (z) {
      f->pVs->pEnv->xDelete(f->pVs->pEnv, z, NULL);
      free(z);
    }
    if (f->pVs->pCache) wcs_cache_evict_file(f->pVs->pCache, f->iFile);
  }
  free(f->pSmallest);
  free(f->pLargest);
  free(f);
}

int fmeta_open(wcs_fmeta *f, char **pzErr) {
  char *z;
  int rc;
  if (f->pReader) return WCS_OK;
  z = vset_file_path(f->pVs, f->iFile, "sst");
  if (z == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  rc = sst_reader_open(f->pVs->pEnv, z, f->iFile, f->nBytes, f->pVs->pCache,
                       &f->pReader, pzErr);
  if (rc == WCS_OK) {
    const sst_rangedel *aDel;
    int nDel;
    sst_reader_rangedels(f->pReader, &aDel, &nDel);
    if (nDel && frags_build(&f->frags, aDel, nDel)) {
      rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory opening %s", z);
    }
  }
  if (rc == WCS_CANTOPEN) {
    /* a file the manifest names is gone: that is damage to the store */
    int bExists = 1;
    f->pVs->pEnv->xExists(f->pVs->pEnv, z, &bExists);
    if (!bExists) {
      char *zOld = pzErr ? *pzErr : NULL;
      if (pzErr) *pzErr = NULL;
      rc = wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                      "sorted file %s named by the manifest is missing", z);
      free(zOld);
    }
  }
  free(z);
  return rc;
}

/* ====================================================================
** Edits
** ==================================================================== */

void vedit_clear(wcs_vedit *e) {
  int i;
  for (i = 0; i < e->nAdd; i++)
    fmeta_unref(e->aAdd[i].pMeta);
  free(e->aAdd);
  free(e->aDel);
  free(e->aWal);
  memset(e, 0, sizeof *e);
}

/* Add a live-log field: eTag VE_LOG_LIVE, VE_LOG_SEAL or VE_LOG_CLOSED,
** n the length of the last two. */
static int walAdd(wcs_vedit *e, uint64_t iNum, uint64_t eTag, uint64_t n) {
  vedit_wal *a = realloc(e->aWal, sizeof(vedit_wal) * (size_t)(e->nWal + 1));
  if (a == NULL) return WCS_NOMEM;
  e->aWal = a;
  memset(&a[e->nWal], 0, sizeof a[e->nWal]);
  a[e->nWal].iNum = iNum;
  if (eTag == VE_LOG_SEAL) {
    a[e->nWal].bSealed = 1;
    a[e->nWal].nSealed = n;
  } else if (eTag == VE_LOG_CLOSED) {
    a[e->nWal].bClosed = 1;
    a[e->nWal].nClosed = n;
  }
  e->nWal++;
  return WCS_OK;
}

int vedit_log_live(wcs_vedit *e, uint64_t iNum) {
  assert(iNum > 0);
  return walAdd(e, iNum, VE_LOG_LIVE, 0);
}

int vedit_log_seal(wcs_vedit *e, uint64_t iNum, uint64_t nSealed) {
  assert(iNum > 0);
  return walAdd(e, iNum, VE_LOG_SEAL, nSealed);
}

int vedit_log_closed(wcs_vedit *e, uint64_t iNum, uint64_t nClosed) {
  assert(iNum > 0);
  return walAdd(e, iNum, VE_LOG_CLOSED, nClosed);
}

int vedit_add_file(wcs_vedit *e, int iLevel, wcs_fmeta *p) {
  vedit_add *a = realloc(e->aAdd, sizeof(vedit_add) * (size_t)(e->nAdd + 1));
  if (a == NULL) {
    fmeta_unref(p);
    return WCS_NOMEM;
  }
  e->aAdd = a;
  a[e->nAdd].iLevel = iLevel;
  a[e->nAdd].pMeta = p;
  e->nAdd++;
  return WCS_OK;
}

int vedit_del_file(wcs_vedit *e, int iLevel, uint64_t iFile) {
  vedit_del *a = realloc(e->aDel, sizeof(vedit_del) * (size_t)(e->nDel + 1));
  if (a == NULL) return WCS_NOMEM;
  e->aDel = a;
  a[e->nDel].iLevel = iLevel;
  a[e->nDel].iFile = iFile;
  e->nDel++;
  return WCS_OK;
}

static int putBytes(wcs_buf *b, const uint8_t *p, size_t n) {
  int rc = wcs_buf_append_varint(b, n);
  if (rc == WCS_OK) rc = wcs_buf_append(b, p, n);
  return rc;
}

static int encodeAdd(wcs_buf *b, int iLevel, const wcs_fmeta *f) {
  int rc = wcs_buf_append_varint(b, VE_ADD_FILE);
  if (!rc) rc = wcs_buf_append_varint(b, (uint64_t)iLevel);
  if (!rc) rc = wcs_buf_append_varint(b, f->iFile);
  if (!rc) rc = wcs_buf_append_varint(b, f->nBytes);
  if (!rc) rc = wcs_buf_append_varint(b, f->nEntries);
  if (!rc) rc = wcs_buf_append_varint(b, f->nRawBytes);
  if (!rc) rc = wcs_buf_append_varint(b, f->nRangeDel);
  if (!rc) rc = wcs_buf_append_varint(b, f->minSeq);
  if (!rc) rc = wcs_buf_append_varint(b, f->maxSeq);
  if (!rc) rc = wcs_buf_append_varint(b, f->bUnbounded ? 1 : 0);
  if (!rc) rc = putBytes(b, f->pSmallest, f->nSmallest);
  if (!rc) rc = putBytes(b, f->pLargest, f->nLargest);
  return rc;
}

static int encodeWal(wcs_buf *b, const vedit_wal *w) {
  uint64_t eTag = w->bSealed   ? VE_LOG_SEAL
                  : w->bClosed ? VE_LOG_CLOSED
                               : VE_LOG_LIVE;
  int rc = wcs_buf_append_varint(b, eTag);
  if (!rc) rc = wcs_buf_append_varint(b, w->iNum);
  if (!rc && eTag != VE_LOG_LIVE) {
    rc = wcs_buf_append_varint(b, vedit_wal_min_bytes(w));
  }
  return rc;
}

int vedit_encode(const wcs_vedit *e, wcs_buf *b) {
  int rc = WCS_OK, i;
  if (e->bLog) {
    rc = wcs_buf_append_varint(b, VE_LOG);
    if (!rc) rc = wcs_buf_append_varint(b, e->iLog);
  }
  if (!rc && e->bNextFile) {
    rc = wcs_buf_append_varint(b, VE_NEXT_FILE);
    if (!rc) rc = wcs_buf_append_varint(b, e->iNextFile);
  }
  if (!rc && e->bLastSeq) {
    rc = wcs_buf_append_varint(b, VE_LAST_SEQ);
    if (!rc) rc = wcs_buf_append_varint(b, e->lastSeq);
  }
  for (i = 0; !rc && i < e->nWal; i++) {
    rc = encodeWal(b, &e->aWal[i]);
  }
  for (i = 0; !rc && i < e->nDel; i++) {
    rc = wcs_buf_append_varint(b, VE_DEL_FILE);
    if (!rc) rc = wcs_buf_append_varint(b, (uint64_t)e->aDel[i].iLevel);
    if (!rc) rc = wcs_buf_append_varint(b, e->aDel[i].iFile);
  }
  for (i = 0; !rc && i < e->nAdd; i++) {
    rc = encodeAdd(b, e->aAdd[i].iLevel, e->aAdd[i].pMeta);
  }
  return rc;
}

/* A cursor over an edit's bytes. */
typedef struct Dec {
  const uint8_t *p, *pEnd;
  int bad;
} Dec;

static uint64_t decVarint(Dec *d) {
  uint64_t v = 0;
  int n;
  if (d->bad) return 0;
  n = wcs_get_varint(d->p, d->pEnd, &v);
  if (n == 0) {
    d->bad = 1;
    return 0;
  }
  d->p += n;
  return v;
}

static const uint8_t *decBytes(Dec *d, size_t *pn) {
  uint64_t n = decVarint(d);
  const uint8_t *p = d->p;
  if (d->bad || n > (uint64_t)(d->pEnd - d->p)) {
    d->bad = 1;
    *pn = 0;
    return NULL;
  }
  d->p += n;
  *pn = (size_t)n;
  return p;
}

int vedit_decode(wcs_vedit *e, const uint8_t *p, size_t n, const char *zFile,
                 uint64_t iOff, char **pzErr) {
  Dec d;
  const char *zWhy = "unparseable field";
  memset(e, 0, sizeof *e);
  d.p = p;
  d.pEnd = p + n;
  d.bad = 0;
  while (!d.bad && d.p < d.pEnd) {
    uint64_t tag = decVarint(&d);
    if (d.bad) break;
    switch (tag) {
    case VE_FORMAT: {
      uint64_t v = decVarint(&d);
      if (!d.bad && v > VE_FORMAT_VERSION) {
        vedit_clear(e);
        return wcs_seterr(pzErr, WCS_PROTOCOL,
                          "manifest %s has format version %llu; this build "
                          "reads versions up to %d: use a newer wcs",
                          zFile, (unsigned long long)v, VE_FORMAT_VERSION);
      }
      e->iFormat = (int)v;
      break;
    }
    case VE_LOG_LIVE:
    case VE_LOG_SEAL:
    case VE_LOG_CLOSED: {
      uint64_t iNum = decVarint(&d), nBytes = 0;
      if (tag != VE_LOG_LIVE) nBytes = decVarint(&d);
      if (d.bad) break;
      if (iNum == 0) {
        d.bad = 1;
        zWhy = "log number 0 in a live-log field";
        break;
      }
      if (walAdd(e, iNum, tag, nBytes)) {
        vedit_clear(e);
        return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
      }
      break;
    }
    case VE_LOG:
      e->bLog = 1;
      e->iLog = decVarint(&d);
      break;
    case VE_NEXT_FILE:
      e->bNextFile = 1;
      e->iNextFile = decVarint(&d);
      break;
    case VE_LAST_SEQ:
      e->bLastSeq = 1;
      e->lastSeq = decVarint(&d);
      if (e->lastSeq > WCS_SEQ_MAX) d.bad = 1;
      break;
    case VE_DEL_FILE: {
      uint64_t lvl = decVarint(&d), f = decVarint(&d);
      if (d.bad || lvl >= WCS_NLEVEL) {
        d.bad = 1;
        zWhy = "bad level in a file deletion";
        break;
      }
      if (vedit_del_file(e, (int)lvl, f)) {
        vedit_clear(e);
        return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
      }
      break;
    }
    case VE_ADD_FILE: {
      wcs_fmeta *f = fmetaAlloc(NULL);
      uint64_t lvl, flags;
      const uint8_t *pS, *pL;
      size_t nS, nL;
      if (f == NULL) {
        vedit_clear(e);
        return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
      }
      lvl = decVarint(&d);
      f->iFile = decVarint(&d);
      f->nBytes = decVarint(&d);
      f->nEntries = decVarint(&d);
      f->nRawBytes = decVarint(&d);
      f->nRangeDel = decVarint(&d);
      f->minSeq = decVarint(&d);
      f->maxSeq = decVarint(&d);
      flags = decVarint(&d);
      pS = decBytes(&d, &nS);
      pL = decBytes(&d, &nL);
      if (!d.bad && (lvl >= WCS_NLEVEL || flags > 1 || nS < WCS_IKEY_TRAILER ||
                     nL < WCS_IKEY_TRAILER)) {
        d.bad = 1;
        zWhy = "bad file entry";
      }
      if (!d.bad) {
        f->bUnbounded = (int)(flags & 1);
        f->pSmallest = malloc(nS);
        f->pLargest = malloc(nL);
        if (f->pSmallest == NULL || f->pLargest == NULL) {
          fmeta_unref(f);
          vedit_clear(e);
          return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
        }
        memcpy(f->pSmallest, pS, nS);
        f->nSmallest = nS;
        memcpy(f->pLargest, pL, nL);
        f->nLargest = nL;
        fmetaSlices(f);
        if (vedit_add_file(e, (int)lvl, f)) {
          vedit_clear(e);
          return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
        }
      } else {
        fmeta_unref(f);
      }
      break;
    }
    default:
      d.bad = 1;
      zWhy = "unknown field tag";
      break;
    }
  }
  if (d.bad) {
    vedit_clear(e);
    return wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                      "corrupt manifest %s: edit at offset %llu: %s", zFile,
                      (unsigned long long)iOff, zWhy);
  }
  return WCS_OK;
}

/* ====================================================================
** Versions
** ==================================================================== */

static wcs_version *versionAlloc(wcs_vset *vs) {
  wcs_version *v = calloc(1, sizeof *v);
  if (v == NULL) return NULL;
  atomic_init(&v->nRef, 1);
  atomic_init(&v->bFrags, 0);
  pthread_mutex_init(&v->fragsMu, NULL);
  v->pVs = vs;
  return v;
}

void version_ref(wcs_version *v) {
  atomic_fetch_add_explicit(&v->nRef, 1, memory_order_relaxed);
}

void version_unref(wcs_version *v) {
  int i, j;
  if (v == NULL) return;
  if (atomic_fetch_sub_explicit(&v->nRef, 1, memory_order_acq_rel) != 1) {
    return;
  }
  for (i = 0; i < WCS_NLEVEL; i++) {
    for (j = 0; j < v->anFile[i]; j++)
      fmeta_unref(v->aaFile[i][j]);
    free(v->aaFile[i]);
  }
  frags_free(&v->frags);
  free(v->aFragDel);
  pthread_mutex_destroy(&v->fragsMu);
  free(v);
}

uint64_t version_level_target(const wcs_options *pOpt, int iLevel) {
  uint64_t n = pOpt->nL1Bytes;
  int i;
  for (i = 1; i < iLevel; i++)
    n *= 10;
  return n;
}

static int cmpL0(const void *a, const void *b) {
  const wcs_fmeta *x = *(wcs_fmeta *const *)a, *y = *(wcs_fmeta *const *)b;
  if (x->maxSeq != y->maxSeq) return x->maxSeq > y->maxSeq ? -1 : 1;
  return x->iFile > y->iFile ? -1 : (x->iFile < y->iFile ? 1 : 0);
}

static int cmpByKey(const void *a, const void *b) {
  const wcs_fmeta *x = *(wcs_fmeta *const *)a, *y = *(wcs_fmeta *const *)b;
  return wcs_ikey_cmp(x->pSmallest, x->nSmallest, y->pSmallest, y->nSmallest);
}

/* Build base + edit as a new version (files referenced). Level arrays are
** sorted; levels >= 1 are checked for overlaps. */
static int versionBuild(wcs_vset *vs, const wcs_version *pBase,
                        const wcs_vedit *e, wcs_version **ppOut, char **pzErr) {
  wcs_version *v = versionAlloc(vs);
  int i, j, k;
  *ppOut = NULL;
  if (v == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  for (i = 0; i < WCS_NLEVEL; i++) {
    int nBase = pBase ? pBase->anFile[i] : 0, nMax = nBase;
    for (k = 0; k < e->nAdd; k++)
      nMax += e->aAdd[k].iLevel == i;
    if (nMax == 0) continue;
    v->aaFile[i] = malloc(sizeof(wcs_fmeta *) * (size_t)nMax);
    if (v->aaFile[i] == NULL) {
      version_unref(v);
      return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    }
    for (j = 0; j < nBase; j++) {
      wcs_fmeta *f = pBase->aaFile[i][j];
      int bDel = 0;
      for (k = 0; k < e->nDel && !bDel; k++) {
        bDel = e->aDel[k].iLevel == i && e->aDel[k].iFile == f->iFile;
      }
      if (bDel) continue;
      fmeta_ref(f);
      v->aaFile[i][v->anFile[i]++] = f;
      v->anBytes[i] += f->nBytes;
    }
    for (k = 0; k < e->nAdd; k++) {
      wcs_fmeta *f = e->aAdd[k].pMeta;
      if (e->aAdd[k].iLevel != i) continue;
      fmeta_ref(f);
      v->aaFile[i][v->anFile[i]++] = f;
      v->anBytes[i] += f->nBytes;
    }
    if (v->anFile[i] > 1) {
      qsort(v->aaFile[i], (size_t)v->anFile[i], sizeof(wcs_fmeta *),
            i == 0 ? cmpL0 : cmpByKey);
    }
    if (i > 0) {
      for (j = 1; j < v->anFile[i]; j++) {
        wcs_fmeta *a = v->aaFile[i][j - 1], *b = v->aaFile[i][j];
        int c = a->bUnbounded ? 1 : cmpLargest(a, b->pSmallest, b->nSmallest);
        /* an exclusive tombstone end may equal the next file's start */
        if (c > 0 || (c == 0 && !isSentinel(a->pLargest, a->nLargest))) {
          version_unref(v);
          return wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                            "the manifest of %s puts overlapping files "
                            "%06llu.sst and %06llu.sst in level %d",
                            vs->zDir, (unsigned long long)a->iFile,
                            (unsigned long long)b->iFile, i);
        }
      }
    }
  }
  *ppOut = v;
  return WCS_OK;
}

/* ====================================================================
** Point lookups
** ==================================================================== */

/* What a point read wants from the entry sst_reader_get finds. */
typedef struct GetCtx {
  uint64_t maxDel; /* newest covering tombstone seen so far */
  int *pType;      /* out: WCS_KT_PUT or WCS_KT_DELETE */
  void **ppVal;    /* out: malloc'd value copy for a put */
  size_t *pnVal;
} GetCtx;

static int gotEntry(void *p, const uint8_t *k, size_t nK, const uint8_t *v,
                    size_t nV) {
  GetCtx *g = p;
  if (nK < WCS_IKEY_TRAILER) return WCS_CORRUPT_BKPT;
  if (wcs_ikey_type(k, nK) != WCS_KT_PUT || wcs_ikey_seq(k, nK) < g->maxDel) {
    *g->pType = WCS_KT_DELETE;
    return WCS_OK;
  }
  *g->pType = WCS_KT_PUT;
  *g->ppVal = malloc(nV ? nV : 1);
  if (*g->ppVal == NULL) return WCS_NOMEM;
  if (nV) memcpy(*g->ppVal, v, nV);
  *g->pnVal = nV;
  return WCS_OK;
}

/* Look up key in one file: updates *pMaxDel from its range tombstones;
** returns WCS_OK with *pbFound set when a version of the key is there. */
static int fileGet(wcs_fmeta *f, const sst_probe *pr, const uint8_t *pKey,
                   size_t nKey, const uint8_t *pLookup, size_t nLookup,
                   uint64_t snap, uint64_t *pMaxDel, int *pbFound, int *pType,
                   void **ppVal, size_t *pnVal, char **pzErr) {
  GetCtx g;
  int rc;
  if (f->frags.n) {
    const wcs_frag *fr = frags_find(&f->frags, pKey, nKey);
    int i;
    for (i = 0; fr && i < fr->nSeq; i++) {
      if (fr->aSeq[i] <= snap) {
        if (fr->aSeq[i] > *pMaxDel) *pMaxDel = fr->aSeq[i];
        break;
      }
    }
  }
  g.maxDel = *pMaxDel;
  g.pType = pType;
  g.ppVal = ppVal;
  g.pnVal = pnVal;
  rc = sst_reader_get_probe(f->pReader, pLookup, nLookup, pr, pbFound, &g,
                            gotEntry, pzErr);
  if (rc && pzErr && *pzErr == NULL) {
    char *z = vset_file_path(f->pVs, f->iFile, "sst");
    wcs_seterr(pzErr, rc, "%s reading %s",
               rc == WCS_CORRUPT ? "an entry key shorter than its trailer"
                                 : wcs_errstr(rc),
               z ? z : "a sorted file");
    free(z);
  }
  return rc;
}

int version_get(wcs_version *v, const uint8_t *pKey, size_t nKey, uint64_t snap,
                uint64_t *pMaxDel, int *pbFound, int *pType, void **ppVal,
                size_t *pnVal, char **pzErr) {
  const wcs_options *pOpt = v->pVs->pOpt;
  uint8_t aStack[256];
  uint8_t *pLookup = aStack;
  size_t nLookup = nKey + WCS_IKEY_TRAILER;
  sst_probe pr;
  int rc = WCS_OK, i;
  *pbFound = 0;
  if (nLookup > sizeof aStack) {
    pLookup = malloc(nLookup);
    if (pLookup == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  if (nKey) memcpy(pLookup, pKey, nKey);
  wcs_put64(pLookup + nKey, wcs_ikey_pack(snap, 0xff));
  pr.hKey = sst_bloom_hash(pKey, nKey);
  pr.hasPrefix = 0;
  pr.hPrefix = 0;
  if (pOpt->xBloomPrefix) {
    int n = pOpt->xBloomPrefix(pKey, (int)nKey);
    if (n >= 0 && (size_t)n <= nKey) {
      pr.hasPrefix = 1;
      pr.hPrefix = sst_bloom_hash(pKey, (size_t)n);
    }
  }

  /* level 0: every file whose range holds the key, newest first */
  for (i = 0; rc == WCS_OK && !*pbFound && i < v->anFile[0]; i++) {
    wcs_fmeta *f = v->aaFile[0][i];
    if (f->minSeq > snap || !fmeta_may_hold(f, pKey, nKey)) continue;
    rc = fileGet(f, &pr, pKey, nKey, pLookup, nLookup, snap, pMaxDel, pbFound,
                 pType, ppVal, pnVal, pzErr);
  }
  /* deeper levels: at most one file each, found by binary search */
  for (i = 1; rc == WCS_OK && !*pbFound && i < WCS_NLEVEL; i++) {
    int lo = 0, hi = v->anFile[i];
    wcs_fmeta *f;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (cmpLargest(v->aaFile[i][mid], pLookup, nLookup) < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo >= v->anFile[i]) continue;
    f = v->aaFile[i][lo];
    if (!fmeta_may_hold(f, pKey, nKey)) continue;
    rc = fileGet(f, &pr, pKey, nKey, pLookup, nLookup, snap, pMaxDel, pbFound,
                 pType, ppVal, pnVal, pzErr);
  }
  if (pLookup != aStack) free(pLookup);
  return rc;
}

/* ====================================================================
** Level iterator: concatenates the files of one level.
** ==================================================================== */

/* File iterators a level iterator keeps open besides its current one.
** Point reads and short scans at random keys (a prepared lookup reuses its
** iterator from one statement to the next) land in another file of the
** level most of the time; opening a file iterator (pinning the file's
** index, allocating its cursor) cost about a twentieth of a point read. */
#define LV_PARKED 4

typedef struct LevelIter {
  wcs_iiter base;    /* must be first */
  int nFile;         /* files, > 0 */
  wcs_fmeta **aFile; /* referenced, ascending disjoint ranges */
  int bFillCache;    /* passed to the file iterators */
  int iCur;          /* file of pCur, -1 when none */
  wcs_iiter *pCur;   /* iterator over aFile[iCur] */
  int bCurValid;     /* pCur is positioned, as its xValid said after its
                     ** last move (every move of pCur is made here) */
  int rc;            /* error opening a file iterator */
  char *zErr;        /* its message */
  int iParkNext;     /* the kept iterator to close when all are kept */
  struct {
    int iFile;     /* index in aFile */
    wcs_iiter *p;  /* its iterator (NULL: a free entry) */
  } aPark[LV_PARKED];
} LevelIter;

/* Keep p, the iterator over file i, for a later lvOpen of that file: in a
** free entry, or else in place of one of the kept ones, taken in turn. */
static void lvPark(LevelIter *l, int i, wcs_iiter *p) {
  int j;
  for (j = 0; j < LV_PARKED && l->aPark[j].p; j++) {
  }
  if (j == LV_PARKED) {
    j = l->iParkNext;
    l->iParkNext = (j + 1) % LV_PARKED;
    l->aPark[j].p->pMethods->xClose(l->aPark[j].p);
  }
  l->aPark[j].iFile = i;
  l->aPark[j].p = p;
}

/* Make file i current (keeping the previous one's iterator aside). Every
** caller positions it next: a kept iterator's position means nothing. */
static int lvOpen(LevelIter *l, int i) {
  int j;
  if (l->iCur == i && l->pCur) return WCS_OK;
  if (l->pCur) {
    /* one that failed is not kept: its error would come back */
    if (l->pCur->pMethods->xStatus(l->pCur, NULL) == WCS_OK) {
      lvPark(l, l->iCur, l->pCur);
    } else {
      l->pCur->pMethods->xClose(l->pCur);
    }
  }
  l->pCur = NULL;
  l->iCur = -1;
  l->bCurValid = 0;
  if (i < 0 || i >= l->nFile) return WCS_OK;
  for (j = 0; j < LV_PARKED; j++) {
    if (l->aPark[j].p && l->aPark[j].iFile == i) {
      l->pCur = l->aPark[j].p;
      l->aPark[j].p = NULL;
      l->iCur = i;
      return WCS_OK;
    }
  }
  l->rc =
      sst_reader_iter(l->aFile[i]->pReader, l->bFillCache, &l->pCur, &l->zErr);
  if (l->rc == WCS_OK) l->iCur = i;
  return l->rc;
}

/* Ask pCur whether it is positioned (after a move) and remember it. */
static int lvCurValid(LevelIter *l) {
  l->bCurValid = l->pCur && l->pCur->pMethods->xValid(l->pCur);
  return l->bCurValid;
}

static int lvCurStatus(const LevelIter *l) {
  return l->pCur ? l->pCur->pMethods->xStatus(l->pCur, NULL) : WCS_OK;
}

/* Move forward across files until positioned or at the end. */
static void lvSkipForward(LevelIter *l) {
  while (l->rc == WCS_OK && !lvCurValid(l) && lvCurStatus(l) == WCS_OK) {
    int i = l->iCur + 1;
    if (l->iCur < 0 || i >= l->nFile) {
      lvOpen(l, -1);
      return;
    }
    if (lvOpen(l, i) == WCS_OK) l->pCur->pMethods->xFirst(l->pCur);
  }
}

static void lvSkipBackward(LevelIter *l) {
  while (l->rc == WCS_OK && !lvCurValid(l) && lvCurStatus(l) == WCS_OK) {
    int i = l->iCur - 1;
    if (l->iCur < 0 || i < 0) {
      lvOpen(l, -1);
      return;
    }
    if (lvOpen(l, i) == WCS_OK) l->pCur->pMethods->xLast(l->pCur);
  }
}

static int lvFirst(wcs_iiter *p) {
  LevelIter *l = (LevelIter *)p;
  l->rc = WCS_OK;
  if (lvOpen(l, 0) == WCS_OK) l->pCur->pMethods->xFirst(l->pCur);
  lvSkipForward(l);
  return l->rc;
}

static int lvLast(wcs_iiter *p) {
  LevelIter *l = (LevelIter *)p;
  l->rc = WCS_OK;
  if (lvOpen(l, l->nFile - 1) == WCS_OK) l->pCur->pMethods->xLast(l->pCur);
  lvSkipBackward(l);
  return l->rc;
}

static int lvSeek(wcs_iiter *p, const uint8_t *k, size_t n) {
  LevelIter *l = (LevelIter *)p;
  int lo = 0, hi = l->nFile;
  l->rc = WCS_OK;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (cmpLargest(l->aFile[mid], k, n) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo >= l->nFile) {
    lvOpen(l, -1);
    return WCS_OK;
  }
  if (lvOpen(l, lo) == WCS_OK) l->pCur->pMethods->xSeek(l->pCur, k, n);
  lvSkipForward(l);
  return l->rc;
}

static int lvSeekForPrev(wcs_iiter *p, const uint8_t *k, size_t n) {
  LevelIter *l = (LevelIter *)p;
  int lo = 0, hi = l->nFile;
  l->rc = WCS_OK;
  /* last file whose smallest <= k */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (wcs_ikey_cmp(l->aFile[mid]->pSmallest, l->aFile[mid]->nSmallest, k,
                     n) <= 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == 0) {
    lvOpen(l, -1);
    return WCS_OK;
  }
  if (lvOpen(l, lo - 1) == WCS_OK) {
    l->pCur->pMethods->xSeekForPrev(l->pCur, k, n);
  }
  lvSkipBackward(l);
  return l->rc;
}

static int lvNext(wcs_iiter *p) {
  LevelIter *l = (LevelIter *)p;
  if (!l->bCurValid) return l->rc;
  l->pCur->pMethods->xNext(l->pCur);
  if (lvCurValid(l)) return WCS_OK; /* still in the file: the common case */
  lvSkipForward(l);
  return l->rc;
}

/* The current file's block cursor: within its block, a step of it is a
** step of the level (which moves to another file only at a file's end). */
static struct block_iter *lvRun(wcs_iiter *p) {
  LevelIter *l = (LevelIter *)p;
  if (l->rc != WCS_OK || !l->bCurValid) return NULL;
  return l->pCur->pMethods->xRun(l->pCur);
}

static int lvPrev(wcs_iiter *p) {
  LevelIter *l = (LevelIter *)p;
  if (!l->bCurValid) return l->rc;
  l->pCur->pMethods->xPrev(l->pCur);
  lvSkipBackward(l);
  return l->rc;
}

static int lvValid(const wcs_iiter *p) {
  const LevelIter *l = (const LevelIter *)p;
  return l->rc == WCS_OK && l->bCurValid;
}

static const uint8_t *lvKey(const wcs_iiter *p, size_t *pn) {
  const LevelIter *l = (const LevelIter *)p;
  return l->pCur->pMethods->xKey(l->pCur, pn);
}

static const uint8_t *lvValue(const wcs_iiter *p, size_t *pn) {
  const LevelIter *l = (const LevelIter *)p;
  return l->pCur->pMethods->xValue(l->pCur, pn);
}

static int lvStatus(const wcs_iiter *p, char **pzErr) {
  const LevelIter *l = (const LevelIter *)p;
  if (l->rc) {
    if (l->zErr) wcs_seterr(pzErr, l->rc, "%s", l->zErr);
    return l->rc;
  }
  if (l->pCur) return l->pCur->pMethods->xStatus(l->pCur, pzErr);
  return WCS_OK;
}

static void lvClose(wcs_iiter *p) {
  LevelIter *l = (LevelIter *)p;
  int i;
  if (l == NULL) return;
  if (l->pCur) l->pCur->pMethods->xClose(l->pCur);
  for (i = 0; i < LV_PARKED; i++) {
    if (l->aPark[i].p) l->aPark[i].p->pMethods->xClose(l->aPark[i].p);
  }
  for (i = 0; i < l->nFile; i++)
    fmeta_unref(l->aFile[i]);
  free(l->zErr);
  free(l);
}

static const wcs_iiter_methods levelMethods = {
    lvFirst, lvLast, lvSeek,  lvSeekForPrev, lvNext, lvPrev,
    lvValid, lvKey,  lvValue, lvStatus,      lvClose, lvRun};

int level_iter_new(wcs_fmeta **aFile, int nFile, int bFillCache,
                   wcs_iiter **pp) {
  LevelIter *l;
  int i;
  *pp = NULL;
  l = calloc(1, sizeof *l + sizeof(wcs_fmeta *) * (size_t)nFile);
  if (l == NULL) return WCS_NOMEM;
  l->base.pMethods = &levelMethods;
  l->nFile = nFile;
  l->aFile = (wcs_fmeta **)&l[1];
  for (i = 0; i < nFile; i++) {
    l->aFile[i] = aFile[i];
    fmeta_ref(aFile[i]);
  }
  l->bFillCache = bFillCache;
  l->iCur = -1;
  *pp = &l->base;
  return WCS_OK;
}

/* ====================================================================
** Iterators and tombstones over a version
** ==================================================================== */

/* The first of the nFile files of a level >= 1 that does not end before
** lo: the files that meet [lo, hi) are a run starting there. */
static int firstNotBefore(wcs_fmeta **aFile, int nFile, const KeySl *lo) {
  int iLo = 0, iHi = nFile;
  while (iLo < iHi) {
    int mid = (iLo + iHi) / 2;
    if (endsBeforeSl(aFile[mid], lo))
      iLo = mid + 1;
    else
      iHi = mid;
  }
  return iLo;
}

/* May f hold keys with this bloom prefix? */
static int prefixMay(const wcs_fmeta *f, int bUse, uint64_t h) {
  if (!bUse || !sst_reader_bloom_prefixed(f->pReader)) return 1;
  return sst_reader_may_contain_hash(f->pReader, h);
}

/* Does f end before user key lo (every key of f < lo)? Monotone over the
** files of a level >= 1, which are disjoint and ascending. */

static void slotClose(wcs_vslot *s) {
  if (s->p) s->p->pMethods->xClose(s->p);
  s->p = NULL;
  s->pFile = NULL;
  s->bOn = 0;
}

/* Point slot s at file f alone, keeping its child if it already reads f
** (and has not failed), and switch it on unless f's filter rules out the
** prefix. */
static int slotFile(wcs_viters *p, wcs_vslot *s, wcs_fmeta *f, int bPrefix,
                    uint64_t h, char **pzErr) {
  int rc;
  if (s->p && (s->pFile != f || s->p->pMethods->xStatus(s->p, NULL))) {
    slotClose(s);
  }
  if (s->p == NULL) {
    rc = sst_reader_iter(f->pReader, p->bFill, &s->p, pzErr);
    if (rc != WCS_OK) return rc;
    s->pFile = f;
  }
  s->bOn = sst_iter_retarget(s->p, bPrefix, h);
  return WCS_OK;
}

void version_iters_clear(wcs_viters *p) {
  int i;
  for (i = 0; i < p->nSlot; i++)
    slotClose(&p->aSlot[i]);
  free(p->aSlot);
  free(p->aSel);
  memset(p, 0, sizeof *p);
}

int version_iters_target(wcs_version *v, wcs_viters *p, const uint8_t *pLo,
                         size_t nLo, const uint8_t *pHi, size_t nHi,
                         const uint8_t *pPrefix, size_t nPrefix,
                         int bFillCache, char **pzErr) {
  const wcs_options *pOpt = v->pVs->pOpt;
  int bPrefix = 0, i, j, rc = WCS_OK;
  uint64_t h = 0;
  KeySl lo, hi;
  keySl(&lo, pLo, nLo);
  keySl(&hi, pHi, nHi);
  if (p->pVersion != v || p->bFill != bFillCache) {
    int nSlot = v->anFile[0] + WCS_NLEVEL - 1;
    version_iters_clear(p);
    p->aSlot = calloc((size_t)nSlot, sizeof *p->aSlot);
    if (p->aSlot == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    p->nSlot = nSlot;
    p->pVersion = v;
    p->bFill = bFillCache;
  }
  if (pPrefix && pOpt->xBloomPrefix &&
      pOpt->xBloomPrefix(pPrefix, (int)nPrefix) == (int)nPrefix) {
    bPrefix = 1;
    h = sst_bloom_hash(pPrefix, nPrefix);
  }
  for (i = 0; rc == WCS_OK && i < v->anFile[0]; i++) {
    wcs_fmeta *f = v->aaFile[0][i];
    p->aSlot[i].bOn = 0;
    if (!overlapsSl(f, &lo, &hi)) continue;
    rc = slotFile(p, &p->aSlot[i], f, bPrefix, h, pzErr);
  }
  for (i = 1; rc == WCS_OK && i < WCS_NLEVEL; i++) {
    wcs_vslot *s = &p->aSlot[v->anFile[0] + i - 1];
    wcs_fmeta **aFile = v->aaFile[i];
    int iLo = firstNotBefore(aFile, v->anFile[i], &lo), nSel = 0, k;
    s->bOn = 0;
    for (j = iLo; j < v->anFile[i] && overlapsSl(aFile[j], &lo, &hi); j++) {
      nSel++;
    }
    if (nSel == 0) continue;
    if (nSel == 1) {
      /* one file (a row's range, say): its filter is probed under the
      ** pin of its index that the iterator then keeps */
      rc = slotFile(p, s, aFile[iLo], bPrefix, h, pzErr);
      continue;
    }
    if (nSel > p->nSelAlloc) {
      wcs_fmeta **aNew = realloc(p->aSel, sizeof(wcs_fmeta *) * (size_t)nSel);
      if (aNew == NULL) {
        rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
        break;
      }
      p->aSel = aNew;
      p->nSelAlloc = nSel;
    }
    for (j = iLo, k = 0; j < iLo + nSel; j++) {
      if (prefixMay(aFile[j], bPrefix, h)) p->aSel[k++] = aFile[j];
    }
    if (k == 1) {
      rc = slotFile(p, s, p->aSel[0], 0, 0, pzErr);
    } else if (k > 1) {
      slotClose(s);
      rc = level_iter_new(p->aSel, k, bFillCache, &s->p);
      if (rc != WCS_OK) {
        wcs_seterr(pzErr, rc, "out of memory");
      } else {
        s->bOn = 1;
      }
    }
  }
  return rc;
}

int version_prefix_absent(wcs_version *v, const uint8_t *pPre, size_t nPre) {
  uint8_t aHi[256];
  size_t nHi = wcs_successor_len(pPre, nPre);
  uint64_t h;
  KeySl lo, hi;
  int i, j;
  if (nHi == 0 || nPre > sizeof(aHi)) return 0;
  /* the keys with the prefix are [pPre, successor of pPre) */
  memcpy(aHi, pPre, nHi);
  aHi[nHi - 1]++;
  keySl(&lo, pPre, nPre);
  keySl(&hi, aHi, nHi);
  h = sst_bloom_hash(pPre, nPre);
  for (i = 0; i < v->anFile[0]; i++) {
    wcs_fmeta *f = v->aaFile[0][i];
    if (overlapsSl(f, &lo, &hi) && prefixMay(f, 1, h)) return 0;
  }
  for (i = 1; i < WCS_NLEVEL; i++) {
    wcs_fmeta **aFile = v->aaFile[i];
    for (j = firstNotBefore(aFile, v->anFile[i], &lo);
         j < v->anFile[i] && overlapsSl(aFile[j], &lo, &hi); j++) {
      if (prefixMay(aFile[j], 1, h)) return 0;
    }
  }
  return 1;
}

/* Make v's fragments (version_frags; fragsMu held). */
static int versionFragsMake(wcs_version *v) {
  size_t n = 0, iOut = 0;
  int i, j, k, q;
  for (i = 0; i < WCS_NLEVEL; i++) {
    for (j = 0; j < v->anFile[i]; j++) {
      const wcs_frags *fr = &v->aaFile[i][j]->frags;
      for (k = 0; k < fr->n; k++)
        n += (size_t)fr->a[k].nSeq;
    }
  }
  if (n == 0) return WCS_OK;
  if (n > INT_MAX || (v->aFragDel = malloc(n * sizeof(sst_rangedel))) == NULL) {
    return WCS_NOMEM;
  }
  for (i = 0; i < WCS_NLEVEL; i++) {
    for (j = 0; j < v->anFile[i]; j++) {
      const wcs_frags *fr = &v->aaFile[i][j]->frags;
      for (k = 0; k < fr->n; k++) {
        const wcs_frag *m = &fr->a[k];
        for (q = 0; q < m->nSeq; q++) {
          sst_rangedel *d = &v->aFragDel[iOut++];
          d->pStart = m->pStart;
          d->nStart = m->nStart;
          d->pEnd = m->pEnd;
          d->nEnd = m->nEnd;
          d->seq = m->aSeq[q];
          if (d->seq > v->maxDelSeq) v->maxDelSeq = d->seq;
        }
      }
    }
  }
  if (frags_build(&v->frags, v->aFragDel, (int)n)) {
    free(v->aFragDel);
    v->aFragDel = NULL;
    memset(&v->frags, 0, sizeof v->frags);
    v->maxDelSeq = 0;
    return WCS_NOMEM;
  }
  return WCS_OK;
}

int version_frags(wcs_version *v, const uint8_t *pLo, size_t nLo,
                  const uint8_t *pHi, size_t nHi, const wcs_frags **ppFrags,
                  uint64_t *pMaxSeq) {
  int i, j, k, bAny = 0;
  *ppFrags = NULL;
  *pMaxSeq = 0;
  /* any file with tombstones in the bounds at all? (most have none) */
  for (i = 0; !bAny && i < WCS_NLEVEL; i++) {
    for (j = 0; !bAny && j < v->anFile[i]; j++) {
      wcs_fmeta *f = v->aaFile[i][j];
      bAny = f->frags.n > 0 && fmeta_overlaps(f, pLo, nLo, pHi, nHi);
    }
  }
  if (!bAny) return WCS_OK;
  if (!atomic_load_explicit(&v->bFrags, memory_order_acquire)) {
    int rc = WCS_OK;
    pthread_mutex_lock(&v->fragsMu);
    if (!atomic_load_explicit(&v->bFrags, memory_order_relaxed)) {
      rc = versionFragsMake(v);
      if (rc == WCS_OK)
        atomic_store_explicit(&v->bFrags, 1, memory_order_release);
    }
    pthread_mutex_unlock(&v->fragsMu);
    if (rc) return rc;
  }
  /* the fragments in the bounds, if any */
  k = frags_first_after(&v->frags, pLo, nLo);
  if (k >= v->frags.n ||
      (pHi && wcs_ukey_cmp(v->frags.a[k].pStart, v->frags.a[k].nStart, pHi,
                           nHi) >= 0)) {
    return WCS_OK;
  }
  *ppFrags = &v->frags;
  *pMaxSeq = v->maxDelSeq;
  return WCS_OK;
}

/* ====================================================================
** The version set and the manifest
** ==================================================================== */

/* Read CURRENT: the manifest's name. */
static int readCurrent(wcs_vset *vs, uint64_t *piManifest, char **pzErr) {
  char *zPath = wcs_path_join(vs->zDir, "CURRENT");
  wcs_file *f = NULL;
  char aBuf[64];
  size_t n = 0;
  int rc;
  unsigned long long iNum = 0;
  char cNl = 0;
  if (zPath == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  rc = vs->pEnv->xOpen(vs->pEnv, zPath, WCS_OPEN_READ, &f, pzErr);
  if (rc == WCS_OK)
    rc = vs->pEnv->xRead(f, 0, aBuf, sizeof aBuf - 1, &n, pzErr);
  vs->pEnv->xClose(f);
  if (rc == WCS_OK) {
    aBuf[n] = 0;
    if (n < 10 || sscanf(aBuf, "MANIFEST-%llu%c", &iNum, &cNl) != 2 ||
        cNl != '\n' || iNum == 0 || strchr(aBuf, '\n') != aBuf + n - 1) {
      rc = wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                      "%s does not name a manifest (expected "
                      "\"MANIFEST-<number>\" and a newline)",
                      zPath);
    }
  }
  free(zPath);
  *piManifest = iNum;
  return rc;
}

/* Make room in vs->aWal for n more logs, so that walApply cannot fail
** once an edit is durable. */
static int walReserve(wcs_vset *vs, int n) {
  vedit_wal *a;
  int nNew;
  if (vs->nWal + n <= vs->nWalAlloc) return WCS_OK;
  nNew = vs->nWalAlloc ? vs->nWalAlloc : 4;
  while (nNew < vs->nWal + n)
    nNew *= 2;
  a = realloc(vs->aWal, sizeof(vedit_wal) * (size_t)nNew);
  if (a == NULL) return WCS_NOMEM;
  vs->aWal = a;
  vs->nWalAlloc = nNew;
  return WCS_OK;
}

/* Index of the first tracked log numbered >= iNum. */
static int walFind(const wcs_vset *vs, uint64_t iNum) {
  int lo = 0, hi = vs->nWal;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (vs->aWal[mid].iNum < iNum)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/*
** Apply the live-log fields of e to the tracked set (room reserved with
** walReserve), then forget the logs below iLog, which VE_LOG made
** obsolete. A seal wins over a close and a close over a live mark,
** whichever comes first, so the fields of one edit may come in any order;
** a later close replaces an earlier one (the log only grew in between).
*/
static void walApply(wcs_vset *vs, const wcs_vedit *e, uint64_t iLog) {
  int i, k;
  for (i = 0; i < e->nWal; i++) {
    const vedit_wal *w = &e->aWal[i];
    k = walFind(vs, w->iNum);
    if (k < vs->nWal && vs->aWal[k].iNum == w->iNum) {
      if (w->bSealed || (w->bClosed && !vs->aWal[k].bSealed)) {
        vs->aWal[k] = *w;
      }
      continue;
    }
    assert(vs->nWal < vs->nWalAlloc);
    memmove(&vs->aWal[k + 1], &vs->aWal[k],
            sizeof(vedit_wal) * (size_t)(vs->nWal - k));
    vs->aWal[k] = *w;
    vs->nWal++;
  }
  k = walFind(vs, iLog);
  if (k > 0) {
    memmove(&vs->aWal[0], &vs->aWal[k],
            sizeof(vedit_wal) * (size_t)(vs->nWal - k));
    vs->nWal -= k;
  }
}

/* Replay manifest iManifest into vs->pCurrent. */
static int replay(wcs_vset *vs, uint64_t iManifest, char **pzErr) {
  char *zPath;
  wal_reader *r = NULL;
  wcs_version *v = NULL;
  int rc, bFormat = 0, bLog = 0, bNext = 0, bSeq = 0;
  zPath = vset_manifest_path(vs, iManifest);
  if (zPath == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  rc = wal_reader_open(vs->pEnv, zPath, &r, pzErr);
  if (rc == WCS_CANTOPEN) {
    char *zOld = *pzErr;
    *pzErr = NULL;
    rc = wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                    "manifest %s named by CURRENT is missing", zPath);
    free(zOld);
  }
  if (rc == WCS_OK) {
    v = versionAlloc(vs);
    if (v == NULL) rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  while (rc == WCS_OK) {
    const uint8_t *p;
    size_t n;
    uint64_t iOff = 0;
    wcs_vedit e;
    wcs_version *vNew = NULL;
    rc = wal_reader_next(r, &p, &n, &iOff, pzErr);
    if (rc || p == NULL) break;
    /* the first edit must declare the format */
    if (!bFormat) {
      Dec d;
      d.p = p;
      d.pEnd = p + n;
      d.bad = 0;
      if (decVarint(&d) != VE_FORMAT || d.bad) {
        rc = wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                        "corrupt manifest %s: it does not start with a "
                        "format field",
                        zPath);
        break;
      }
      bFormat = 1;
    }
    rc = vedit_decode(&e, p, n, zPath, iOff, pzErr);
    if (rc) break;
    if (vs->iFormat == 0) vs->iFormat = e.iFormat;
    if (walReserve(vs, e.nWal)) {
      vedit_clear(&e);
      rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
      break;
    }
    if (e.bLog) {
      vs->iLog = e.iLog;
      bLog = 1;
    }
    if (e.bNextFile) {
      vs->iNextFile = e.iNextFile;
      bNext = 1;
    }
    if (e.bLastSeq) {
      vs->lastSeq = e.lastSeq;
      bSeq = 1;
    }
    walApply(vs, &e, vs->iLog);
    {
      int i;
      for (i = 0; i < e.nAdd; i++)
        e.aAdd[i].pMeta->pVs = vs;
    }
    rc = versionBuild(vs, v, &e, &vNew, pzErr);
    vedit_clear(&e);
    if (rc == WCS_OK) {
      version_unref(v);
      v = vNew;
    }
  }
  if (rc == WCS_OK && (!bFormat || !bLog || !bNext || !bSeq)) {
    rc = wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                    "corrupt manifest %s: the store's state is incomplete "
                    "(missing log number, next file number or last "
                    "sequence number)",
                    zPath);
  }
  if (rc == WCS_OK) {
    int i, j;
    for (i = 0; rc == WCS_OK && i < WCS_NLEVEL; i++) {
      for (j = 0; rc == WCS_OK && j < v->anFile[i]; j++) {
        wcs_fmeta *f = v->aaFile[i][j];
        if (f->iFile >= vs->iNextFile) vs->iNextFile = f->iFile + 1;
        rc = fmeta_open(f, pzErr);
      }
    }
  }
  if (iManifest >= vs->iNextFile) vs->iNextFile = iManifest + 1;
  if (vs->nWal > 0 && vs->aWal[vs->nWal - 1].iNum >= vs->iNextFile) {
    vs->iNextFile = vs->aWal[vs->nWal - 1].iNum + 1;
  }
  if (rc == WCS_OK && !wal_reader_torn(r)) {
    vs->nManifestRead = wal_reader_good_end(r);
  }
  if (r) {
    vs->nManifestEnd = wal_reader_good_end(r);
    vs->nManifestFile = wal_reader_file_size(r);
  }
  wal_reader_close(r);
  free(zPath);
  if (rc) {
    version_unref(v);
    return rc;
  }
  vs->pCurrent = v;
  vs->iManifest = iManifest;
  return WCS_OK;
}

/* What a directory without CURRENT holds (xList callback state). A store
** is created by writing its first manifest and then CURRENT, and no commit
** is acknowledged before open returns; so manifests with no sorted file
** and no WAL data are what a crash during creation leaves, while sorted
** files or a non-empty WAL mean a store that lost its CURRENT. */
typedef struct DirScan {
  wcs_env *pEnv;    /* env to size WAL files with */
  const char *zDir; /* the store directory */
  int bManifest;    /* a MANIFEST-<n> exists */
  int bData;        /* a sorted file or a non-empty WAL exists */
} DirScan;

static int storeFile(void *p, const char *zName) {
  DirScan *s = (DirScan *)p;
  size_t n = strlen(zName);
  if (strncmp(zName, "MANIFEST-", 9) == 0) {
    s->bManifest = 1;
  } else if (n > 4 && strcmp(zName + n - 4, ".sst") == 0) {
    s->bData = 1;
  } else if (n > 4 && strcmp(zName + n - 4, ".log") == 0) {
    char *zPath = wcs_path_join(s->zDir, zName);
    wcs_file *f = NULL;
    uint64_t nSize = 1; /* unknown size counts as data: refuse, not sweep */
    if (zPath &&
        s->pEnv->xOpen(s->pEnv, zPath, WCS_OPEN_READ, &f, NULL) == WCS_OK) {
      if (s->pEnv->xSize(f, &nSize, NULL) != WCS_OK) nSize = 1;
      s->pEnv->xClose(f);
    }
    free(zPath);
    if (nSize > 0) s->bData = 1;
  }
  return WCS_OK;
}

int vset_open(wcs_env *pEnv, const char *zDir, const wcs_options *pOpt,
              wcs_cache *pCache, int bReadOnly, int bCreate, wcs_vset **pp,
              char **pzErr) {
  wcs_vset *vs = calloc(1, sizeof *vs);
  char *zCur;
  int bExists = 0, rc = WCS_OK;
  *pp = NULL;
  if (vs == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  vs->zDir = malloc(strlen(zDir) + 1);
  if (vs->zDir == NULL) {
    free(vs);
    return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  strcpy(vs->zDir, zDir);
  vs->pEnv = pEnv;
  vs->pOpt = pOpt;
  vs->pCache = pCache;
  vs->bReadOnly = bReadOnly;
  vs->iNextFile = 2;
  vs->iLog = 0;
  zCur = wcs_path_join(zDir, "CURRENT");
  if (zCur == NULL) rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  if (rc == WCS_OK) pEnv->xExists(pEnv, zCur, &bExists);
  free(zCur);
  if (rc == WCS_OK && bExists) {
    uint64_t iManifest = 0;
    rc = readCurrent(vs, &iManifest, pzErr);
    if (rc == WCS_OK) rc = replay(vs, iManifest, pzErr);
  } else if (rc == WCS_OK) {
    DirScan scan = {0};
    scan.pEnv = pEnv;
    scan.zDir = zDir;
    pEnv->xList(pEnv, zDir, &scan, storeFile, NULL);
    if (scan.bData) {
      /* never start afresh over the files of a store that lost CURRENT:
      ** the sweep at open would delete them */
      rc = wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                      "%s/CURRENT is missing but the directory holds a "
                      "store's data (sorted files or a WAL); restore "
                      "CURRENT (one line: the newest MANIFEST-<number>) or "
                      "move the files away",
                      zDir);
    } else if (!bCreate || bReadOnly) {
      rc = wcs_seterr(pzErr, WCS_CANTOPEN,
                      "no store in %s (CURRENT is missing)%s", zDir,
                      bReadOnly ? "" : "; open with bCreate to make one");
    } else {
      vs->pCurrent = versionAlloc(vs);
      if (vs->pCurrent == NULL) {
        rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
      }
    }
  }
  if (rc) {
    vset_close(vs);
    return rc;
  }
  *pp = vs;
  return WCS_OK;
}

uint64_t vset_manifest_end(const wcs_vset *vs) {
  return vs->nManifestEnd;
}

uint64_t vset_manifest_file_size(const wcs_vset *vs) {
  return vs->nManifestFile;
}

int vset_moved_on(wcs_vset *vs, int *pbMoved, char **pzErr) {
  uint64_t iManifest = 0, nSize = 0;
  wcs_file *f = NULL;
  char *zPath;
  int rc;
  *pbMoved = 1;
  if (vs->iManifest == 0) return WCS_OK;
  if (readCurrent(vs, &iManifest, pzErr) != WCS_OK) {
    /* being replaced: CURRENT is renamed over, never written in place */
    free(pzErr ? *pzErr : NULL);
    if (pzErr) *pzErr = NULL;
    return WCS_OK;
  }
  if (iManifest != vs->iManifest) return WCS_OK;
  zPath = vset_manifest_path(vs, vs->iManifest);
  if (zPath == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  rc = vs->pEnv->xOpen(vs->pEnv, zPath, WCS_OPEN_READ, &f, NULL);
  if (rc == WCS_OK) rc = vs->pEnv->xSize(f, &nSize, NULL);
  vs->pEnv->xClose(f);
  free(zPath);
  /* (against the size read, not the end of its whole records: a torn
  ** tail a writer left when it stopped is not a writer going on) */
  *pbMoved = rc != WCS_OK || nSize != vs->nManifestFile;
  return WCS_OK;
}

void vset_close(wcs_vset *vs) {
  int i;
  if (vs == NULL) return;
  version_unref(vs->pCurrent);
  wal_writer_close(vs->pManifest);
  free(vs->aWal);
  for (i = 0; i < WCS_NLEVEL; i++)
    wcs_buf_free(&vs->aCompactPtr[i]);
  free(vs->zDir);
  free(vs);
}

/* Point CURRENT at MANIFEST-iManifest ("MANIFEST-<n>\n", atomically): a
** temporary file, synced, renamed
** over CURRENT, the directory synced. *pbRenamed (may be NULL) is set
** once the rename went through: CURRENT may then name the new manifest
** even though an error is returned (the directory's sync failed). */
static int writeCurrent(wcs_env *pEnv, const char *zDir, uint64_t iManifest,
                        int *pbRenamed, char **pzErr) {
  char aBuf[64];
  char zTmpName[64];
  char *zTmp, *zCur;
  wcs_file *f = NULL;
  int n, rc;
  n = snprintf(aBuf, sizeof aBuf, "MANIFEST-%06llu\n",
               (unsigned long long)iManifest);
  snprintf(zTmpName, sizeof zTmpName, "%06llu.tmp",
           (unsigned long long)iManifest);
  zTmp = wcs_path_join(zDir, zTmpName);
  zCur = wcs_path_join(zDir, "CURRENT");
  if (zTmp == NULL || zCur == NULL) {
    free(zTmp);
    free(zCur);
    return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  rc = pEnv->xOpen(pEnv, zTmp, WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &f, pzErr);
  if (rc == WCS_OK) rc = pEnv->xAppend(f, aBuf, (size_t)n, pzErr);
  if (rc == WCS_OK) rc = pEnv->xSync(f, pzErr);
  pEnv->xClose(f);
  if (pbRenamed) *pbRenamed = 0;
  if (rc == WCS_OK) rc = pEnv->xRename(pEnv, zTmp, zCur, pzErr);
  if (rc == WCS_OK && pbRenamed) *pbRenamed = 1;
  if (rc == WCS_OK) rc = pEnv->xSyncDir(pEnv, zDir, pzErr);
  if (rc) pEnv->xDelete(pEnv, zTmp, NULL);
  free(zTmp);
  free(zCur);
  return rc;
}

static int setCurrent(wcs_vset *vs, uint64_t iManifest, int *pbRenamed,
                      char **pzErr) {
  return writeCurrent(vs->pEnv, vs->zDir, iManifest, pbRenamed, pzErr);
}

/* A manifest's first record: the whole state, version v's files with the
** given log number, next file number, last sequence and live logs. */
static int encodeState(wcs_buf *b, const wcs_version *v, uint64_t iLog,
                       uint64_t iNextFile, uint64_t lastSeq,
                       const vedit_wal *aWal, int nWal) {
  int rc = wcs_buf_append_varint(b, VE_FORMAT), i, j;
  if (!rc) rc = wcs_buf_append_varint(b, VE_FORMAT_VERSION);
  if (!rc) rc = wcs_buf_append_varint(b, VE_LOG);
  if (!rc) rc = wcs_buf_append_varint(b, iLog);
  if (!rc) rc = wcs_buf_append_varint(b, VE_NEXT_FILE);
  if (!rc) rc = wcs_buf_append_varint(b, iNextFile);
  if (!rc) rc = wcs_buf_append_varint(b, VE_LAST_SEQ);
  if (!rc) rc = wcs_buf_append_varint(b, lastSeq);
  for (i = 0; !rc && i < nWal; i++) {
    rc = encodeWal(b, &aWal[i]);
  }
  for (i = 0; !rc && i < WCS_NLEVEL; i++) {
    for (j = 0; !rc && j < v->anFile[i]; j++) {
      rc = encodeAdd(b, i, v->aaFile[i][j]);
    }
  }
  return rc;
}

/* Write manifest iManifest of directory zDir (in pEnv) holding one
** record, payload, framed; synced. */
static int writeManifest(wcs_env *pEnv, const char *zDir, uint64_t iManifest,
                         const wcs_buf *pPayload, wal_writer **ppW,
                         char **pzErr) {
  char zName[64];
  char *zPath;
  wcs_buf framed = {0};
  wal_writer *w = NULL;
  int rc;
  *ppW = NULL;
  snprintf(zName, sizeof zName, "MANIFEST-%06llu",
           (unsigned long long)iManifest);
  zPath = wcs_path_join(zDir, zName);
  if (zPath == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  rc = wal_frame(&framed, pPayload->a, pPayload->n);
  if (rc) rc = wcs_seterr(pzErr, rc, "out of memory writing the manifest");
  if (rc == WCS_OK) rc = wal_writer_open(pEnv, zPath, &w, pzErr);
  if (rc == WCS_OK) rc = wal_writer_append(w, framed.a, framed.n, pzErr);
  if (rc == WCS_OK) rc = wal_writer_sync(w, pzErr);
  wcs_buf_free(&framed);
  if (rc) {
    wal_writer_close(w);
    pEnv->xDelete(pEnv, zPath, NULL);
  } else {
    *ppW = w;
  }
  free(zPath);
  return rc;
}

int vset_new_manifest(wcs_vset *vs, char **pzErr) {
  uint64_t iNew = vs->iNextFile++;
  uint64_t iOld = vs->iManifest;
  char zName[64];
  char *zPath;
  wcs_buf payload = {0};
  wal_writer *w = NULL;
  int rc, bRenamed = 0;
  rc = encodeState(&payload, vs->pCurrent, vs->iLog, vs->iNextFile, vs->lastSeq,
                   vs->aWal, vs->nWal);
  if (rc) {
    wcs_buf_free(&payload);
    return wcs_seterr(pzErr, rc, "out of memory writing the manifest");
  }
  rc = writeManifest(vs->pEnv, vs->zDir, iNew, &payload, &w, pzErr);
  wcs_buf_free(&payload);
  if (rc == WCS_OK) {
    rc = setCurrent(vs, iNew, &bRenamed, pzErr);
    if (rc && !bRenamed) {
      wal_writer_close(w);
      snprintf(zName, sizeof zName, "MANIFEST-%06llu",
               (unsigned long long)iNew);
      zPath = wcs_path_join(vs->zDir, zName);
      if (zPath) vs->pEnv->xDelete(vs->pEnv, zPath, NULL);
      free(zPath);
    }
  }
  if (rc && !bRenamed) return rc;
  /* CURRENT names the new manifest (or may, if the directory's sync
  ** failed): edits go to it from now on */
  wal_writer_close(vs->pManifest);
  vs->pManifest = w;
  vs->bManifestBroken = 0;
  vs->iManifest = iNew;
  vs->iFormat = VE_FORMAT_VERSION;
  vs->nManifestBase = wal_writer_size(w);
  if (rc) return rc; /* the old one stays, for a CURRENT not yet durable */
  if (iOld) {
    snprintf(zName, sizeof zName, "MANIFEST-%06llu", (unsigned long long)iOld);
    zPath = wcs_path_join(vs->zDir, zName);
    if (zPath) vs->pEnv->xDelete(vs->pEnv, zPath, NULL);
    free(zPath);
  }
  return WCS_OK;
}

int vset_write_copy_manifest(wcs_env *pEnv, const char *zDir,
                             const wcs_version *v, uint64_t iManifest,
                             uint64_t lastSeq, char **pzErr) {
  wcs_buf payload = {0};
  wal_writer *w = NULL;
  int rc;
  /* no live log: every log number below the next file's is obsolete */
  rc = encodeState(&payload, v, iManifest + 1, iManifest + 1, lastSeq, NULL, 0);
  if (rc) {
    wcs_buf_free(&payload);
    return wcs_seterr(pzErr, rc, "out of memory writing the manifest");
  }
  rc = writeManifest(pEnv, zDir, iManifest, &payload, &w, pzErr);
  wcs_buf_free(&payload);
  wal_writer_close(w);
  if (rc == WCS_OK) rc = writeCurrent(pEnv, zDir, iManifest, NULL, pzErr);
  return rc;
}

int vset_open_manifest(wcs_vset *vs, char **pzErr) {
  char zName[64];
  char *zPath;
  int rc;
  if (vs->iManifest == 0 || vs->nManifestRead == 0 ||
      vs->nManifestRead > VSET_REUSE_BYTES ||
      vs->iFormat != VE_FORMAT_VERSION) {
    return vset_new_manifest(vs, pzErr);
  }
  snprintf(zName, sizeof zName, "MANIFEST-%06llu",
           (unsigned long long)vs->iManifest);
  zPath = wcs_path_join(vs->zDir, zName);
  if (zPath == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  rc = wal_writer_open_append(vs->pEnv, zPath, vs->nManifestRead,
                              &vs->pManifest, pzErr);
  free(zPath);
  if (rc) return vset_new_manifest(vs, pzErr);
  vs->bManifestBroken = 0;
  return WCS_OK;
}

static wcs_fmeta *findFile(const wcs_version *v, int iLevel, uint64_t iFile) {
  int j;
  for (j = 0; j < v->anFile[iLevel]; j++) {
    if (v->aaFile[iLevel][j]->iFile == iFile) return v->aaFile[iLevel][j];
  }
  return NULL;
}

int vset_apply(wcs_vset *vs, wcs_vedit *e, char **pzErr) {
  wcs_version *v = NULL;
  wcs_buf payload = {0}, framed = {0};
  int rc = WCS_OK, i, k;
  if (vs->bReadOnly) {
    return wcs_seterr(pzErr, WCS_READONLY, "store %s is open read-only",
                      vs->zDir);
  }
  if (vs->pManifest == NULL || vs->bManifestBroken) {
    rc = wcs_seterr(pzErr, WCS_IOERR,
                    "the manifest of %s could not be written earlier; close "
                    "and reopen the store",
                    vs->zDir);
  }
  if (rc == WCS_OK) {
    if (!e->bLog) {
      e->bLog = 1;
      e->iLog = vs->iLog;
    }
    if (!e->bLastSeq) {
      e->bLastSeq = 1;
      e->lastSeq = vs->lastSeq;
    }
    e->bNextFile = 1;
    e->iNextFile = vs->iNextFile;
    for (i = 0; i < e->nDel; i++) {
      if (findFile(vs->pCurrent, e->aDel[i].iLevel, e->aDel[i].iFile) == NULL) {
        rc =
            wcs_seterr(pzErr, WCS_INTERNAL,
                       "internal error: edit deletes file %06llu.sst which "
                       "is not in level %d",
                       (unsigned long long)e->aDel[i].iFile, e->aDel[i].iLevel);
      }
    }
  }
  if (rc == WCS_OK && walReserve(vs, e->nWal)) {
    rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  if (rc == WCS_OK) rc = versionBuild(vs, vs->pCurrent, e, &v, pzErr);
  if (rc == WCS_OK) {
    rc = vedit_encode(e, &payload);
    if (!rc) rc = wal_frame(&framed, payload.a, payload.n);
    if (rc) rc = wcs_seterr(pzErr, rc, "out of memory writing the manifest");
  }
  if (rc == WCS_OK) {
    /* new files must be findable after a power cut before an edit names
    ** them: make their directory entries durable first */
    for (k = 0; k < e->nAdd; k++) {
      if (!vset_file_live(vs, e->aAdd[k].pMeta->iFile)) break;
    }
    if (k < e->nAdd) rc = vs->pEnv->xSyncDir(vs->pEnv, vs->zDir, pzErr);
  }
  if (rc == WCS_OK) {
    rc = wal_writer_append(vs->pManifest, framed.a, framed.n, pzErr);
    if (rc == WCS_OK) rc = wal_writer_sync(vs->pManifest, pzErr);
    if (rc) vs->bManifestBroken = 1;
  }
  wcs_buf_free(&payload);
  wcs_buf_free(&framed);
  if (rc) {
    version_unref(v);
    /* New files no version holds are deleted when the edit lets go of
    ** them — unless the edit may have reached the manifest (its append
    ** went through but the sync failed, or a failed append could not be
    ** undone): then a reopen may find them named, and the sweep at open
    ** deletes them if it does not. */
    if (vs->pManifest == NULL || !wal_writer_broken(vs->pManifest)) {
      for (k = 0; k < e->nAdd; k++) {
        if (!vset_file_live(vs, e->aAdd[k].pMeta->iFile)) {
          e->aAdd[k].pMeta->bObsolete = 1;
        }
      }
    }
    return rc;
  }
  /* files leaving the store are deleted with their last reference */
  for (i = 0; i < e->nDel; i++) {
    int bReadded = 0;
    for (k = 0; k < e->nAdd; k++) {
      if (e->aAdd[k].pMeta->iFile == e->aDel[i].iFile) bReadded = 1;
    }
    if (!bReadded) {
      wcs_fmeta *f =
          findFile(vs->pCurrent, e->aDel[i].iLevel, e->aDel[i].iFile);
      if (f) f->bObsolete = 1;
    }
  }
  version_unref(vs->pCurrent);
  vs->pCurrent = v;
  vs->iLog = e->iLog;
  vs->lastSeq = e->lastSeq;
  walApply(vs, e, vs->iLog);
  if (wal_writer_size(vs->pManifest) > VSET_REUSE_BYTES &&
      wal_writer_size(vs->pManifest) > 2 * vs->nManifestBase) {
    /* a store open for long would append edits forever (each flush and
    ** compaction adds one): start a manifest holding the current state,
    ** as an open does past this size, once the edits are at least as
    ** large as the state (a state past the size would else be written
    ** again at every edit). The edit is in the old one already; if the
    ** new one cannot be made, appending goes on. */
    char *zErr = NULL;
    (void)vset_new_manifest(vs, &zErr);
    wcs_free(zErr);
  }
  return WCS_OK;
}

wcs_version *vset_current(wcs_vset *vs) {
  return vs->pCurrent;
}
uint64_t vset_new_file_number(wcs_vset *vs) {
  return vs->iNextFile++;
}
uint64_t vset_log(const wcs_vset *vs) {
  return vs->iLog;
}
uint64_t vset_last_seq(const wcs_vset *vs) {
  return vs->lastSeq;
}
void vset_set_last_seq(wcs_vset *vs, uint64_t s) {
  vs->lastSeq = s;
}
uint64_t vset_manifest_number(const wcs_vset *vs) {
  return vs->iManifest;
}
void vset_manifest_pos(const wcs_vset *vs, uint64_t *piManifest,
                       uint64_t *pnBytes) {
  *piManifest = vs->iManifest;
  /* what is synced: an edit whose sync failed may be lost, and a file
  ** begun after it must not claim the manifest held it */
  *pnBytes = vs->pManifest ? wal_writer_size(vs->pManifest) -
                                 wal_writer_unsynced(vs->pManifest)
                           : vs->nManifestEnd;
}
uint64_t vset_next_file(const wcs_vset *vs) {
  return vs->iNextFile;
}
void vset_mark_file_used(wcs_vset *vs, uint64_t iFile) {
  if (iFile >= vs->iNextFile) vs->iNextFile = iFile + 1;
}
const char *vset_dir(const wcs_vset *vs) {
  return vs->zDir;
}
wcs_env *vset_env(const wcs_vset *vs) {
  return vs->pEnv;
}
const wcs_options *vset_options(const wcs_vset *vs) {
  return vs->pOpt;
}
wcs_cache *vset_cache(const wcs_vset *vs) {
  return vs->pCache;
}

int vset_live_logs(const wcs_vset *vs, const vedit_wal **pa) {
  *pa = vs->aWal;
  return vs->nWal;
}

const vedit_wal *vset_log_tracked(const wcs_vset *vs, uint64_t iNum) {
  int k = walFind(vs, iNum);
  return k < vs->nWal && vs->aWal[k].iNum == iNum ? &vs->aWal[k] : NULL;
}

int vset_file_live(const wcs_vset *vs, uint64_t iFile) {
  int i;
  for (i = 0; i < WCS_NLEVEL; i++) {
    if (findFile(vs->pCurrent, i, iFile)) return 1;
  }
  return 0;
}

wcs_buf *vset_compact_ptr(wcs_vset *vs, int iLevel) {
  return &vs->aCompactPtr[iLevel];
}
