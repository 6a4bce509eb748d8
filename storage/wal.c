/*
** wal.c — log files: record framing, the write-batch payload, a writer and
** a recovering reader. Owns the log format of *.log and MANIFEST-* files,
** documented in doc/format.md (constants in wal.h).
**
** The reader keeps a read-ahead window (WAL_READAHEAD bytes, more for a
** larger record) so recovery does one pread per window, not two per
** record. When a record is bad it decides between "torn tail" and
** "corruption" by looking for a hole that explains the damage, as wal.h
** explains.
*/
#include "storage/wal.h"

#include <stdlib.h>
#include <string.h>

#include "storage/ikey.h"
#include "storage/sst.h"

#define WAL_READAHEAD (256 * 1024)

int wal_frame(wcs_buf *pOut, const uint8_t *p, size_t n) {
  uint8_t aLen[4];
  uint8_t *h;
  int rc;
  if (n == 0 || n > WAL_MAX_RECORD) return WCS_TOOBIG;
  rc = wcs_buf_reserve(pOut, WAL_HEADER + n);
  if (rc) return rc;
  h = pOut->a + pOut->n;
  wcs_put32(aLen, (uint32_t)n);
  wcs_put32(h + WAL_OFF_HCRC, wcs_crc_mask(wcs_crc32c(0, aLen, 4)));
  memcpy(h + WAL_OFF_LEN, aLen, 4);
  wcs_put32(h + WAL_OFF_CRC, wcs_crc_mask(wcs_crc32c(0, p, n)));
  memcpy(h + WAL_HEADER, p, n);
  pOut->n += WAL_HEADER + n;
  return WCS_OK;
}

int wal_batch_walk(const uint8_t *p, size_t n, const char *zFile, uint64_t iOff,
                   void *pCtx,
                   int (*x)(void *, uint64_t, int, const uint8_t *, size_t,
                            const uint8_t *, size_t),
                   char **pzErr) {
  const uint8_t *pEnd = p + n, *q;
  uint64_t seq;
  uint32_t nOp, i;
  if (n < WAL_BATCH_HEADER) goto corrupt;
  seq = wcs_get64(p + WAL_BATCH_OFF_SEQ);
  nOp = wcs_get32(p + WAL_BATCH_OFF_COUNT);
  if (seq == 0 || seq > WCS_SEQ_MAX - nOp) goto corrupt;
  q = p + WAL_BATCH_HEADER;
  for (i = 0; i < nOp; i++) {
    uint64_t nKey, nVal = 0;
    const uint8_t *pKey, *pVal = NULL;
    int op, k, rc;
    if (q >= pEnd) goto corrupt;
    op = *q++;
    if (op > WAL_OP_RANGEDEL_OPEN) goto corrupt;
    k = wcs_get_varint(q, pEnd, &nKey);
    if (k == 0 || nKey > (uint64_t)(pEnd - q - k)) goto corrupt;
    q += k;
    pKey = q;
    q += nKey;
    if (op == WAL_OP_PUT || op == WAL_OP_RANGEDEL) {
      k = wcs_get_varint(q, pEnd, &nVal);
      if (k == 0 || nVal > (uint64_t)(pEnd - q - k)) goto corrupt;
      q += k;
      pVal = q;
      q += nVal;
    }
    rc = x(pCtx, seq + i, op, pKey, (size_t)nKey, pVal, (size_t)nVal);
    if (rc) return rc;
  }
  if (q != pEnd) goto corrupt;
  return WCS_OK;

corrupt:
  return wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                    "corrupt write batch in %s at offset %llu: the record's "
                    "checksum matches but its operations do not parse",
                    zFile, (unsigned long long)iOff);
}

/* ====================================================================
** Writer
** ==================================================================== */

struct wal_writer {
  wcs_env *pEnv;    /* not owned */
  wcs_file *pFile;  /* open for appends */
  char *zPath;      /* owned, for messages */
  uint64_t nSize;   /* bytes in the file */
  uint64_t nSynced; /* bytes covered by the last sync, <= nSize */
  int bBroken;      /* a failed append could not be undone */
};

/* Open zPath for appends with the given env flags; its first nSize bytes
** are whole records. */
static int writerOpen(wcs_env *pEnv, const char *zPath, int flags,
                      uint64_t nSize, wal_writer **pp, char **pzErr) {
  wal_writer *w = calloc(1, sizeof *w);
  int rc;
  *pp = NULL;
  if (w == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  w->zPath = malloc(strlen(zPath) + 1);
  if (w->zPath == NULL) {
    free(w);
    return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  strcpy(w->zPath, zPath);
  w->pEnv = pEnv;
  rc = pEnv->xOpen(pEnv, zPath, flags, &w->pFile, pzErr);
  if (rc) {
    free(w->zPath);
    free(w);
    return rc;
  }
  /* an existing file's bytes may be in the page cache only (its writer
  ** was killed before syncing): the first sync covers them too, so that
  ** a sealed length recorded after it is durable */
  w->nSize = nSize;
  w->nSynced = 0;
  *pp = w;
  return WCS_OK;
}

int wal_writer_open(wcs_env *pEnv, const char *zPath, wal_writer **pp,
                    char **pzErr) {
  return writerOpen(pEnv, zPath, WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, 0, pp,
                    pzErr);
}

int wal_writer_open_append(wcs_env *pEnv, const char *zPath, uint64_t nSize,
                           wal_writer **pp, char **pzErr) {
  return writerOpen(pEnv, zPath, WCS_OPEN_WRITE, nSize, pp, pzErr);
}

int wal_writer_append(wal_writer *w, const uint8_t *p, size_t n, char **pzErr) {
  int rc;
  if (w->bBroken) {
    return wcs_seterr(pzErr, WCS_IOERR,
                      "log %s is unusable after an earlier write error; "
                      "close and reopen the store",
                      w->zPath);
  }
  rc = w->pEnv->xAppend(w->pFile, p, n, pzErr);
  if (rc == WCS_OK) {
    w->nSize += n;
  } else if (w->pEnv->xTruncate(w->pFile, w->nSize, NULL) != WCS_OK) {
    w->bBroken = 1;
  }
  return rc;
}

int wal_writer_sync(wal_writer *w, char **pzErr) {
  int rc;
  if (w->nSynced == w->nSize) return WCS_OK;
  rc = w->pEnv->xSync(w->pFile, pzErr);
  if (rc == WCS_OK)
    w->nSynced = w->nSize;
  else
    w->bBroken = 1; /* after a failed fsync the page state is unknown */
  return rc;
}

uint64_t wal_writer_size(const wal_writer *w) {
  return w->nSize;
}
uint64_t wal_writer_unsynced(const wal_writer *w) {
  return w->nSize - w->nSynced;
}
const char *wal_writer_path(const wal_writer *w) {
  return w->zPath;
}
int wal_writer_broken(const wal_writer *w) {
  return w->bBroken;
}

void wal_writer_close(wal_writer *w) {
  if (w == NULL) return;
  w->pEnv->xClose(w->pFile);
  free(w->zPath);
  free(w);
}

/* ====================================================================
** Reader
** ==================================================================== */

struct wal_reader {
  wcs_env *pEnv;   /* not owned */
  wcs_file *pFile; /* open for reads */
  char *zPath;     /* owned, for messages */
  uint64_t nFile;  /* file size at open */
  uint64_t iOff;   /* offset of the next record */
  uint8_t *aBuf;   /* read-ahead window */
  size_t nAlloc;   /* bytes allocated at aBuf */
  uint64_t iBuf;   /* file offset of aBuf[0] */
  size_t nBuf;     /* valid bytes in aBuf */
  int bEnd;        /* no more records */
  int bTorn;       /* the end was a torn tail */
};

int wal_reader_open(wcs_env *pEnv, const char *zPath, wal_reader **pp,
                    char **pzErr) {
  wal_reader *r = calloc(1, sizeof *r);
  int rc;
  *pp = NULL;
  if (r == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  r->zPath = malloc(strlen(zPath) + 1);
  if (r->zPath == NULL) {
    free(r);
    return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  strcpy(r->zPath, zPath);
  r->pEnv = pEnv;
  rc = pEnv->xOpen(pEnv, zPath, WCS_OPEN_READ, &r->pFile, pzErr);
  if (rc == WCS_OK) rc = pEnv->xSize(r->pFile, &r->nFile, pzErr);
  if (rc) {
    wal_reader_close(r);
    return rc;
  }
  *pp = r;
  return WCS_OK;
}

uint64_t wal_reader_file_size(const wal_reader *r) {
  return r->nFile;
}

void wal_reader_skip(wal_reader *r, uint64_t iOff) {
  r->iOff = iOff < r->nFile ? iOff : r->nFile;
}

/* Make [iOff, iOff+n) available in the window (caller checked it is inside
** the file). Returns a pointer to it. */
static int fill(wal_reader *r, uint64_t iOff, size_t n, const uint8_t **pp,
                char **pzErr) {
  size_t nWant, nRead = 0;
  int rc;
  if (iOff >= r->iBuf && iOff + n <= r->iBuf + r->nBuf) {
    *pp = r->aBuf + (iOff - r->iBuf);
    return WCS_OK;
  }
  nWant = n > WAL_READAHEAD ? n : WAL_READAHEAD;
  if (nWant > r->nFile - iOff) nWant = (size_t)(r->nFile - iOff);
  if (nWant > r->nAlloc) {
    uint8_t *a = realloc(r->aBuf, nWant);
    if (a == NULL) {
      return wcs_seterr(pzErr, WCS_NOMEM, "out of memory reading %s", r->zPath);
    }
    r->aBuf = a;
    r->nAlloc = nWant;
  }
  rc = r->pEnv->xRead(r->pFile, iOff, r->aBuf, nWant, &nRead, pzErr);
  if (rc) return rc;
  r->iBuf = iOff;
  r->nBuf = nRead;
  if (nRead < n) {
    /* the file shrank under us: treat like the end of the file */
    r->nFile = iOff + nRead;
    return WCS_NOTFOUND;
  }
  *pp = r->aBuf;
  return WCS_OK;
}

/* Is there a hole (an all-zero sector-aligned piece of [iOff, nFile)) that
** begins before iEnd? */
static int hasHole(wal_reader *r, uint64_t iOff, uint64_t iEnd, int *pbHole,
                   char **pzErr) {
  uint64_t a = iOff;
  *pbHole = 0;
  while (a < r->nFile && a < iEnd) {
    uint64_t b = (a / WAL_SECTOR + 1) * WAL_SECTOR;
    const uint8_t *p = NULL;
    size_t i, n;
    int rc;
    if (b > r->nFile) b = r->nFile;
    n = (size_t)(b - a);
    rc = fill(r, a, n, &p, pzErr);
    if (rc == WCS_NOTFOUND) {
      *pbHole = 1;
      return WCS_OK;
    }
    if (rc) return rc;
    for (i = 0; i < n && p[i] == 0; i++) {
    }
    if (i == n && (n >= WAL_HOLE_MIN || b == r->nFile)) {
      *pbHole = 1;
      return WCS_OK;
    }
    a = b;
  }
  return WCS_OK;
}

/* The record at r->iOff is bad: torn tail or corruption? A write that
** never reached the disk leaves zeros where it should be, so it is torn
** when a hole explains the damage: one inside the record's nRec bytes,
** when its header checks out and tells them (the bytes after it may be
** later records, whole, whose own zeros are data); when the header does
** not, one among its bytes, or (nRec 0, a header all zero) a hole anywhere
** from it to the end of the file. */
static int badRecord(wal_reader *r, uint64_t nRec, const char *zWhy,
                     char **pzErr) {
  int bHole = 0;
  int rc = hasHole(r, r->iOff, nRec ? r->iOff + nRec : r->nFile, &bHole, pzErr);
  if (rc) return rc;
  if (bHole) {
    r->bEnd = 1;
    r->bTorn = 1;
    return WCS_OK;
  }
  return wcs_seterr(pzErr, WCS_CORRUPT_BKPT,
                    "corrupt record in %s at offset %llu: %s (it was "
                    "written whole and changed since: the disk or another "
                    "program damaged the file; restore the store from a "
                    "backup)",
                    r->zPath, (unsigned long long)r->iOff, zWhy);
}

int wal_reader_next(wal_reader *r, const uint8_t **ppRec, size_t *pnRec,
                    uint64_t *piOff, char **pzErr) {
  const uint8_t *h = NULL, *p = NULL;
  uint32_t nLen;
  int rc;
  *ppRec = NULL;
  *pnRec = 0;
  if (r->bEnd) return WCS_OK;
  if (r->iOff == r->nFile) {
    r->bEnd = 1;
    return WCS_OK;
  }
  if (r->nFile - r->iOff < WAL_HEADER) {
    /* a header cut short can only be the tail of an interrupted write */
    r->bEnd = 1;
    r->bTorn = 1;
    return WCS_OK;
  }
  rc = fill(r, r->iOff, WAL_HEADER, &h, pzErr);
  if (rc == WCS_NOTFOUND) {
    r->bEnd = r->bTorn = 1;
    return WCS_OK;
  }
  if (rc) return rc;
  if (wcs_crc_unmask(wcs_get32(h + WAL_OFF_HCRC)) !=
      wcs_crc32c(0, h + WAL_OFF_LEN, 4)) {
    /* all zero: a sector that never reached the disk, whose length is
    ** unknown; else damaged bytes, which only a hole among them explains */
    static const uint8_t aZero[WAL_HEADER];
    return badRecord(r, memcmp(h, aZero, WAL_HEADER) ? WAL_HEADER : 0,
                     "record header checksum mismatch", pzErr);
  }
  nLen = wcs_get32(h + WAL_OFF_LEN);
  if (nLen == 0 || nLen > WAL_MAX_RECORD) {
    return badRecord(r, WAL_HEADER, "record length out of range", pzErr);
  }
  if (nLen > r->nFile - r->iOff - WAL_HEADER) {
    /* the record runs past the end of the file: an interrupted write */
    r->bEnd = 1;
    r->bTorn = 1;
    return WCS_OK;
  }
  rc = fill(r, r->iOff, WAL_HEADER + (size_t)nLen, &h, pzErr);
  if (rc == WCS_NOTFOUND) {
    r->bEnd = r->bTorn = 1;
    return WCS_OK;
  }
  if (rc) return rc;
  p = h + WAL_HEADER;
  if (wcs_crc_unmask(wcs_get32(h + WAL_OFF_CRC)) != wcs_crc32c(0, p, nLen)) {
    return badRecord(r, WAL_HEADER + (uint64_t)nLen, "record checksum mismatch",
                     pzErr);
  }
  *ppRec = p;
  *pnRec = nLen;
  if (piOff) *piOff = r->iOff;
  r->iOff += WAL_HEADER + nLen;
  return WCS_OK;
}

uint64_t wal_reader_good_end(const wal_reader *r) {
  return r->iOff;
}
int wal_reader_torn(const wal_reader *r) {
  return r->bTorn;
}

void wal_reader_close(wal_reader *r) {
  if (r == NULL) return;
  if (r->pFile) r->pEnv->xClose(r->pFile);
  free(r->aBuf);
  free(r->zPath);
  free(r);
}
