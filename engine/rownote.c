/*
** rownote.c — the engine's file notes (wcs_options.xNoteBegin/xNoteAdd/
** xNoteEnd, doc/storage.md "File notes"): for each table family whose
** cells a sorted file holds, how many rows it holds cells of and a sum of
** their hashes, so that a scan can tell from the files alone that every
** family of a table has the same rows (engine/cursor.c, rows_proven) and
** read only the families it needs. doc/engine.md, "Rows from the files'
** notes", has the argument and the format:
**
**   01                          version
**   varint                      records, in key order
**   per record:
**     tid:4 BE, fid:2 BE        the table family
**     varint                    rows: distinct esc(row) among its keys
**     varint                    deletes among its keys
**     byte                      flags: bit 0 = a key that is not a cell key
**     sum:16                    sum mod 2^128 of H(row) = XXH3-128 of
**                               esc(row) 00 01, over those rows
**     first:16, last:16         H of its first and its last row
**   (each 16-byte hash: low 8 bytes then high 8 bytes, little-endian)
**
** A row whose keys a file cut splits is counted in both files; the files
** of one sorted run come in key order, so eng_note_sum takes it out again
** when a file's first row is the one before's last. Catalog keys (tid 0)
** are left out.
*/
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define NOTE_VERSION 1
#define NOTE_BAD_KEY 0x01 /* flags: a key that is not a cell key */

typedef struct NoteSum {
  int bOpen;                    /* a record is being counted */
  uint8_t aPre[ENG_PREFIX_BYTES]; /* its table family */
  uint64_t nRows, nDel;
  uint64_t lo, hi; /* the hash sum */
  XXH128_hash_t hFirst, hLast; /* of its first and last row */
  int flags;
  wcs_buf row;   /* esc(row) 00 01 of the last row counted */
  wcs_buf recs;  /* finished records */
  uint64_t nRec; /* and how many */
  int bNoMem;    /* a buffer could not grow: the note is left empty */
} NoteSum;

void *eng_note_begin(void *pCtx) {
  (void)pCtx;
  return calloc(1, sizeof(NoteSum));
}

/* Append the record being counted to recs. */
static void note_close(NoteSum *s) {
  uint8_t a[48];
  if (!s->bOpen) return;
  s->bOpen = 0;
  wcs_put64(a, s->lo);
  wcs_put64(a + 8, s->hi);
  wcs_put64(a + 16, s->hFirst.low64);
  wcs_put64(a + 24, s->hFirst.high64);
  wcs_put64(a + 32, s->hLast.low64);
  wcs_put64(a + 40, s->hLast.high64);
  if (wcs_buf_append(&s->recs, s->aPre, ENG_PREFIX_BYTES) ||
      wcs_buf_append_varint(&s->recs, s->nRows) ||
      wcs_buf_append_varint(&s->recs, s->nDel) ||
      wcs_buf_append(&s->recs, (uint8_t[]){(uint8_t)s->flags}, 1) ||
      wcs_buf_append(&s->recs, a, sizeof a)) {
    s->bNoMem = 1;
  }
  s->nRec++;
}

void eng_note_add(void *p, const void *pKey, size_t nKey, int bDelete) {
  NoteSum *s = p;
  const uint8_t *k = pKey;
  size_t nRowT;
  if (s->bNoMem || nKey < ENG_PREFIX_BYTES) return;
  if (k[0] == 0 && k[1] == 0 && k[2] == 0 && k[3] == 0) return; /* catalog */
  if (!s->bOpen || memcmp(s->aPre, k, ENG_PREFIX_BYTES) != 0) {
    note_close(s);
    memcpy(s->aPre, k, ENG_PREFIX_BYTES);
    s->bOpen = 1;
    s->nRows = s->nDel = s->lo = s->hi = 0;
    s->flags = 0;
    s->row.n = 0;
  }
  if (bDelete) s->nDel++;
  nRowT = eng_field_len(k + ENG_PREFIX_BYTES, nKey - ENG_PREFIX_BYTES);
  if (nRowT == 0) {
    s->flags |= NOTE_BAD_KEY;
    return;
  }
  if (s->row.n != nRowT ||
      memcmp(s->row.a, k + ENG_PREFIX_BYTES, nRowT) != 0) {
    XXH128_hash_t h = XXH3_128bits(k + ENG_PREFIX_BYTES, nRowT);
    if (s->nRows == 0) s->hFirst = h;
    s->hLast = h;
    s->nRows++;
    s->lo += h.low64;
    s->hi += h.high64 + (s->lo < h.low64);
    s->row.n = 0;
    if (wcs_buf_append(&s->row, k + ENG_PREFIX_BYTES, nRowT)) s->bNoMem = 1;
  }
}

int eng_note_end(void *p, int bAbandon, void **ppOut, size_t *pnOut) {
  NoteSum *s = p;
  wcs_buf out = {0};
  if (!bAbandon) {
    note_close(s);
    /* out of memory: an empty note, which proves nothing */
    if (!s->bNoMem) {
      if (wcs_buf_append(&out, (uint8_t[]){NOTE_VERSION}, 1) ||
          wcs_buf_append_varint(&out, s->nRec) ||
          wcs_buf_append(&out, s->recs.a ? s->recs.a : (uint8_t *)"",
                         s->recs.n)) {
        wcs_buf_free(&out);
      }
    }
    *ppOut = out.a;
    *pnOut = out.n;
  }
  wcs_buf_free(&s->row);
  wcs_buf_free(&s->recs);
  free(s);
  return WCS_OK;
}

/* Read a varint at *pz (< zEnd) and move past it; 0 if it does not fit. */
static int note_varint(const uint8_t **pz, const uint8_t *zEnd,
                       uint64_t *pv) {
  int n = wcs_get_varint(*pz, zEnd, pv);
  *pz += n;
  return n;
}

int eng_note_sum(const void *pNote, size_t nNote, const uint8_t *pPre,
                 EngRowSum *pSum) {
  const uint8_t *z = pNote, *zEnd = z + nNote;
  uint64_t nRec, i;
  if (nNote < 2 || z[0] != NOTE_VERSION) return WCS_CORRUPT_BKPT;
  z++;
  if (!note_varint(&z, zEnd, &nRec)) return WCS_CORRUPT_BKPT;
  int bSeen = 0;
  for (i = 0; i < nRec; i++) {
    uint64_t nRows, nDel, lo, hi;
    int bMine;
    if ((size_t)(zEnd - z) < ENG_PREFIX_BYTES) return WCS_CORRUPT_BKPT;
    bMine = memcmp(z, pPre, ENG_PREFIX_BYTES) == 0;
    z += ENG_PREFIX_BYTES;
    if (!note_varint(&z, zEnd, &nRows) || !note_varint(&z, zEnd, &nDel) ||
        (size_t)(zEnd - z) < 49) {
      return WCS_CORRUPT_BKPT;
    }
    if (bMine && nRows > 0) {
      uint64_t fLo = wcs_get64(z + 17), fHi = wcs_get64(z + 25);
      if (z[0] & NOTE_BAD_KEY) pSum->bBad = 1;
      lo = wcs_get64(z + 1);
      hi = wcs_get64(z + 9);
      pSum->nRows += nRows;
      pSum->nDel += nDel;
      pSum->lo += lo;
      pSum->hi += hi + (pSum->lo < lo);
      if (pSum->bLast && pSum->lastLo == fLo && pSum->lastHi == fHi) {
        /* the row the file before ended with: counted once already */
        pSum->nRows--;
        pSum->hi -= fHi + (pSum->lo < fLo);
        pSum->lo -= fLo;
      }
      pSum->bLast = 1;
      pSum->lastLo = wcs_get64(z + 33);
      pSum->lastHi = wcs_get64(z + 41);
      bSeen = 1;
    } else if (bMine) {
      pSum->nDel += nDel;
      if (z[0] & NOTE_BAD_KEY) pSum->bBad = 1;
    }
    z += 49;
  }
  if (!bSeen) pSum->bLast = 0; /* no row of it here: no row to join */
  return z == zEnd ? WCS_OK : WCS_CORRUPT_BKPT;
}
