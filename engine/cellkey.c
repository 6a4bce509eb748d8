/*
** cellkey.c — the storage keys of cells: building, escaping and parsing.
** Owns the cell key format of engine/engine.h (doc/engine.md, "Cell
** keys"):
**
**   tid:4 BE | fid:2 BE | esc(row) 00 01 | esc(qual) 00 01 | ~ts:8 BE
**
** esc() writes every 00 byte as 00 FF and leaves other bytes alone. Why it
** orders correctly: compare x and y at their first difference. If neither
** is a prefix of the other, the differing bytes compare as before (00 FF vs
** a nonzero byte c still puts 00 first). If x is a proper prefix of y, x's
** terminator 00 01 meets either a nonzero byte of y (bigger) or y's escaped
** 00 FF (bigger, since 01 < FF). And 00 01 never occurs inside esc(x), so
** the first 00 01 ends the field.
*/
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

int eng_escape(wcs_buf *pOut, const void *p, size_t n) {
  const uint8_t *a = p;
  size_t i, nZero = 0;
  uint8_t *z;
  for (i = 0; i < n; i++) nZero += (a[i] == 0);
  if (n == 0) return WCS_OK; /* the buffer may have no memory yet */
  if (wcs_buf_reserve(pOut, n + nZero)) return WCS_NOMEM;
  z = pOut->a + pOut->n;
  if (nZero == 0) {
    if (n) memcpy(z, a, n);
  } else {
    for (i = 0; i < n; i++) {
      *z++ = a[i];
      if (a[i] == 0) *z++ = 0xFF;
    }
  }
  pOut->n += n + nZero;
  return WCS_OK;
}

int eng_escape_term(wcs_buf *pOut, const void *p, size_t n) {
  static const uint8_t aTerm[2] = {0x00, 0x01};
  int rc = eng_escape(pOut, p, n);
  if (rc == WCS_OK) rc = wcs_buf_append(pOut, aTerm, 2);
  return rc;
}

int eng_put_family_end(wcs_buf *pOut, uint32_t iTid, uint16_t iFid) {
  if (iFid == 0xFFFF) return eng_put_prefix(pOut, iTid + 1, 0);
  return eng_put_prefix(pOut, iTid, (uint16_t)(iFid + 1));
}

int eng_put_prefix(wcs_buf *pOut, uint32_t iTid, uint16_t iFid) {
  uint8_t a[ENG_PREFIX_BYTES];
  eng_prefix_bytes(a, iTid, iFid);
  return wcs_buf_append(pOut, a, sizeof(a));
}

int eng_cell_key(wcs_buf *pOut, uint32_t iTid, uint16_t iFid,
                 const void *pRow, size_t nRow, const void *pQual,
                 size_t nQual, int64_t iTs) {
  int rc = eng_put_prefix(pOut, iTid, iFid);
  if (rc == WCS_OK) rc = eng_escape_term(pOut, pRow, nRow);
  if (rc == WCS_OK) rc = eng_escape_term(pOut, pQual, nQual);
  if (rc == WCS_OK) rc = wcs_buf_reserve(pOut, ENG_TS_BYTES);
  if (rc == WCS_OK) {
    wcs_put64be(pOut->a + pOut->n, eng_ts_invert(iTs));
    pOut->n += ENG_TS_BYTES;
  }
  return rc;
}

size_t eng_field_len(const uint8_t *p, size_t n) {
  size_t i;
  const uint8_t *z = p;
  for (i = 0; i < n;) {
    const uint8_t *q = memchr(z + i, 0, n - i);
    if (q == NULL) return 0;
    i = (size_t)(q - z);
    if (i + 1 >= n) return 0;
    if (z[i + 1] == 0x01) return i + 2;
    if (z[i + 1] != 0xFF) return 0;
    i += 2;
  }
  return 0;
}

int eng_unescape(wcs_buf *pOut, const uint8_t *p, size_t nEsc) {
  size_t i = 0;
  if (wcs_buf_reserve(pOut, nEsc)) return WCS_NOMEM;
  while (i < nEsc) {
    const uint8_t *q = memchr(p + i, 0, nEsc - i);
    size_t nRun = q ? (size_t)(q - (p + i)) : nEsc - i;
    memcpy(pOut->a + pOut->n, p + i, nRun);
    pOut->n += nRun;
    i += nRun;
    if (i < nEsc) {
      if (i + 1 >= nEsc || p[i + 1] != 0xFF) return WCS_CORRUPT_BKPT;
      pOut->a[pOut->n++] = 0;
      i += 2;
    }
  }
  return WCS_OK;
}

int eng_parse_key(const uint8_t *p, size_t n, EngKey *pKey) {
  size_t nRow, nQual;
  if (n < ENG_PREFIX_BYTES + 4 + ENG_TS_BYTES) return WCS_CORRUPT_BKPT;
  pKey->iTid = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
               (uint32_t)p[2] << 8 | p[3];
  pKey->iFid = (uint16_t)(p[4] << 8 | p[5]);
  nRow = eng_field_len(p + ENG_PREFIX_BYTES,
                       n - ENG_PREFIX_BYTES - ENG_TS_BYTES);
  if (nRow == 0) return WCS_CORRUPT_BKPT;
  pKey->pRowT = p + ENG_PREFIX_BYTES;
  pKey->nRowT = nRow;
  nQual = eng_field_len(pKey->pRowT + nRow,
                        n - ENG_PREFIX_BYTES - nRow - ENG_TS_BYTES);
  if (nQual == 0 || ENG_PREFIX_BYTES + nRow + nQual + ENG_TS_BYTES != n) {
    return WCS_CORRUPT_BKPT;
  }
  pKey->pQualT = pKey->pRowT + nRow;
  pKey->nQualT = nQual;
  pKey->iTs = (int64_t)~wcs_get64be(p + n - ENG_TS_BYTES);
  if (pKey->iTs < 0) return WCS_CORRUPT_BKPT;
  return WCS_OK;
}

int eng_prefix_successor(wcs_buf *pOut, const uint8_t *p, size_t n) {
  pOut->n = 0;
  while (n > 0 && p[n - 1] == 0xFF) n--;
  if (n == 0) return 0;
  if (wcs_buf_append(pOut, p, n)) return -1;
  pOut->a[n - 1]++;
  return 1;
}

int wcs_engine_bloom_prefix(const void *pKey, int nKey) {
  const uint8_t *p = pKey;
  size_t nRow;
  /* Only cell keys have a row prefix. Everything else (catalog keys, bare
  ** family prefixes) is left out of the filters (-1): the store then never
  ** rules a file out for such a key or prefix. Returning a length here for
  ** a key that is not a row prefix would make prefix scans skip files. */
  if (nKey < ENG_PREFIX_BYTES + 2) return -1;
  if (p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 0) return -1;
  nRow = eng_field_len(p + ENG_PREFIX_BYTES,
                       (size_t)nKey - ENG_PREFIX_BYTES);
  if (nRow == 0) return -1;
  return (int)(ENG_PREFIX_BYTES + nRow);
}

void wcs_engine_options(wcs_options *pOpt) {
  pOpt->xBloomPrefix = wcs_engine_bloom_prefix;
  pOpt->xNoteBegin = eng_note_begin;
  pOpt->xNoteAdd = eng_note_add;
  pOpt->xNoteEnd = eng_note_end;
  pOpt->pNoteCtx = NULL;
}
