/*
** cursor.c — row cursors: rows from key ranges, forward or reverse, one
** row in memory at a time, with family subsets, GC at read time, versions
** and time filters, and a row filter for skip scans.
**
** How it works. Each family read is a stream: a view iterator (overlay.c)
** over that family's own key range tid|fid (cellkey.c), so families not
** read cost nothing. The cursor merges the streams by row: the candidate
** row is the smallest (reverse: largest) escaped row key among the streams;
** comparing escaped keys is comparing row keys, since esc() preserves
** order and the terminator makes them prefix-free.
**
** Position is one bound in escaped-row space: forward, a floor F (the next
** row r satisfies esc(r) 00 01 >= F); reverse, a ceiling C (< C). Range
** changes, skips, the row filter's seeks and wcs_cursor_seek() all just
** move that bound; streams positioned before it are re-seeked lazily, so a
** stream that is already past the bound costs nothing.
**
** Assembly reads every cell of the row from each stream at that row (in
** reverse mode the cells come backwards and are flipped), then applies, per
** column in newest-first order: the family's GC policy (the cell's
** position among the column's cells for MAX VERSIONS, its age against the
** cursor's "now" for MAX AGE, combined by UNION or INTERSECTION), then the
** time filters, then latest-N. Rows left with no cell are not returned.
*/
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

typedef struct Stream {
  EngView *pView;
  int iFam;               /* index in the def's families */
  uint8_t aPre[ENG_PREFIX_BYTES];
  int bDone;              /* no key at or after (reverse: before) the last
                          ** seek: nothing more until a forced re-seek */
} Stream;

typedef struct RawCell {
  int iFam;
  size_t oQual, nQual;    /* unescaped qualifier in the data buffer */
  size_t oVal, nVal;      /* value in the data buffer */
  int64_t iTs;
  size_t oQualT, nQualT;  /* escaped qualifier (for grouping), in data */
} RawCell;

struct wcs_cursor {
  wcs_engine *pEng;
  EngDef *pDef;           /* referenced */
  wcs_txn *pTxn;          /* or NULL */
  wcs_snapshot *pSnap;    /* owned when pTxn is NULL */
  int bReverse;
  uint64_t nRowLimit;
  int nVersions;
  int64_t iMinTs, iMaxTs; /* effective [min, max) */
  int bKeysOnly;
  int (*xRowFilter)(void *, const void *, size_t, const void **, size_t *);
  void *pFilterCtx;
  int64_t iNow;           /* GC clock, fixed at open */

  int nStream;
  Stream *aStream;
  int nRange;
  size_t *aLo, *anLo;     /* [nRange] offsets/lengths into rangeBuf */
  size_t *aHi, *anHi;
  int *abHiOpen;
  wcs_buf rangeBuf;
  int iRange;             /* current range */

  wcs_buf pos;            /* F (forward) or C (reverse) */
  int bPosOpen;           /* reverse: C is +infinity */
  int bReseek;            /* re-seek every stream at the next advance */
  uint64_t nRows;         /* rows returned */

  int bEof;
  wcs_buf rowT;           /* current row: esc(row) 00 01 */
  wcs_buf row;            /* current row: raw key */
  wcs_buf data;           /* cell bytes */
  int nRaw, nRawAlloc;
  RawCell *aRaw;
  int nCell, nCellAlloc;
  wcs_cell *aCell;
  wcs_buf tmp, tmp2;
};

static int bcmp2(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
  size_t n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, n) : 0;
  if (c) return c;
  return na < nb ? -1 : (na > nb);
}

int eng_gc_expired(const EngFamily *f, int64_t iPos, int64_t iTs,
                   int64_t iNow) {
  int bV = f->nMaxVersions > 0;
  int bA = f->iMaxAge > 0;
  int eV = bV && iPos >= f->nMaxVersions;
  int eA = bA && iTs < iNow - f->iMaxAge;
  if (bV && bA && f->bIntersection) return eV && eA;
  return eV || eA;
}

/* The escaped row (with terminator) of the stream's current key. */
static int stream_row(Stream *s, const uint8_t **pp, size_t *pn) {
  size_t nk, nr;
  const uint8_t *k = view_key(s->pView, &nk);
  if (nk < ENG_PREFIX_BYTES) return WCS_CORRUPT_BKPT;
  nr = eng_field_len(k + ENG_PREFIX_BYTES, nk - ENG_PREFIX_BYTES);
  if (nr == 0) {
    return eng_err(WCS_CORRUPT_BKPT, "a cell key has no row terminator");
  }
  *pp = k + ENG_PREFIX_BYTES;
  *pn = nr;
  return WCS_OK;
}

/* Seek stream s so that (forward) its key is >= P|b, (reverse) < P|b or,
** with b NULL in reverse, the last key of the family. */
static int stream_seek(wcs_cursor *c, Stream *s, const uint8_t *b, size_t n,
                       int bOpen) {
  int rc;
  if (bOpen) {
    rc = view_seek(s->pView, NULL, 0);
  } else {
    c->tmp.n = 0;
    rc = wcs_buf_append(&c->tmp, s->aPre, ENG_PREFIX_BYTES);
    if (rc == WCS_OK) rc = wcs_buf_append(&c->tmp, b, n);
    if (rc == WCS_OK) rc = view_seek(s->pView, c->tmp.a, c->tmp.n);
  }
  if (rc) return rc;
  s->bDone = !view_valid(s->pView);
  return WCS_OK;
}

/* Make sure stream s is positioned at or beyond bound b (see file
** comment); bForce re-seeks even if it is. */
static int stream_place(wcs_cursor *c, Stream *s, const uint8_t *b, size_t n,
                        int bOpen, int bForce) {
  const uint8_t *r;
  size_t nr;
  int rc;
  if (!bForce) {
    if (s->bDone) return WCS_OK;
    rc = view_sync(s->pView);
    if (rc) return rc;
    if (!view_valid(s->pView)) {
      s->bDone = 1;
      return WCS_OK;
    }
    if (bOpen) return WCS_OK; /* reverse from +inf: anything is below */
    {
      size_t nk;
      const uint8_t *k = view_key(s->pView, &nk);
      int cmp;
      (void)r;
      (void)nr;
      cmp = bcmp2(k + ENG_PREFIX_BYTES, nk - ENG_PREFIX_BYTES, b, n);
      if (!c->bReverse && cmp >= 0) return WCS_OK;
      if (c->bReverse && cmp < 0) return WCS_OK;
    }
  }
  return stream_seek(c, s, b, n, bOpen);
}

static int grow_raw(wcs_cursor *c) {
  if (c->nRaw == c->nRawAlloc) {
    int n = c->nRawAlloc ? c->nRawAlloc * 2 : 32;
    RawCell *a = realloc(c->aRaw, (size_t)n * sizeof(RawCell));
    if (a == NULL) return WCS_NOMEM;
    c->aRaw = a;
    c->nRawAlloc = n;
  }
  return WCS_OK;
}

/* Read every cell of the current row (c->rowT) from stream s. */
static int stream_collect(wcs_cursor *c, Stream *s) {
  int rc = WCS_OK;
  int iFirst = c->nRaw;
  while (rc == WCS_OK && view_valid(s->pView)) {
    size_t nk, nv;
    const uint8_t *k = view_key(s->pView, &nk);
    const uint8_t *v;
    EngKey key;
    RawCell *rc0;
    if (nk < ENG_PREFIX_BYTES + c->rowT.n ||
        memcmp(k + ENG_PREFIX_BYTES, c->rowT.a, c->rowT.n) != 0) {
      break;
    }
    rc = eng_parse_key(k, nk, &key);
    if (rc) {
      char *z = wcs_escape(k, nk, 80);
      eng_err(rc, "malformed cell key '%s'", z ? z : "?");
      free(z);
      break;
    }
    rc = grow_raw(c);
    if (rc) break;
    rc0 = &c->aRaw[c->nRaw];
    rc0->iFam = s->iFam;
    rc0->iTs = key.iTs;
    rc0->oQualT = c->data.n;
    rc0->nQualT = key.nQualT;
    rc = wcs_buf_append(&c->data, key.pQualT, key.nQualT);
    if (rc) break;
    rc0->oQual = c->data.n;
    rc = eng_unescape(&c->data, key.pQualT, key.nQualT - 2);
    if (rc) {
      eng_err(rc, "malformed qualifier escape in a cell key");
      break;
    }
    rc0->nQual = c->data.n - rc0->oQual;
    rc0->oVal = c->data.n;
    rc0->nVal = 0;
    if (!c->bKeysOnly) {
      v = view_value(s->pView, &nv);
      rc = wcs_buf_append(&c->data, v, nv);
      if (rc) break;
      rc0->nVal = nv;
    }
    c->nRaw++;
    rc = view_step(s->pView);
  }
  if (rc == WCS_OK) s->bDone = !view_valid(s->pView);
  if (rc == WCS_OK && c->bReverse) {
    /* cells came newest-last and qualifiers descending: flip them */
    int i = iFirst, j = c->nRaw - 1;
    while (i < j) {
      RawCell t = c->aRaw[i];
      c->aRaw[i++] = c->aRaw[j];
      c->aRaw[j--] = t;
    }
  }
  return rc;
}

/* GC + filters over the collected cells; builds aCell. */
static int row_filter_cells(wcs_cursor *c) {
  int i = 0, nOut = 0;
  const EngDef *d = c->pDef;
  c->nCell = 0;
  while (i < c->nRaw) {
    /* one column: same family and escaped qualifier */
    int j = i;
    int64_t iPos = 0, nEmit = 0;
    const EngFamily *f = &d->aFam[c->aRaw[i].iFam];
    while (j < c->nRaw && c->aRaw[j].iFam == c->aRaw[i].iFam &&
           c->aRaw[j].nQualT == c->aRaw[i].nQualT &&
           memcmp(c->data.a + c->aRaw[j].oQualT,
                  c->data.a + c->aRaw[i].oQualT, c->aRaw[i].nQualT) == 0) {
      RawCell *r = &c->aRaw[j];
      int bKeep = !eng_gc_expired(f, iPos, r->iTs, c->iNow);
      iPos++;
      if (bKeep && (r->iTs < c->iMinTs || r->iTs >= c->iMaxTs)) bKeep = 0;
      if (bKeep && c->nVersions > 0 && nEmit >= c->nVersions) bKeep = 0;
      if (bKeep) {
        nEmit++;
        nOut++;
        if (!c->bKeysOnly) {
          wcs_cell *pc;
          if (c->nCell == c->nCellAlloc) {
            int n = c->nCellAlloc ? c->nCellAlloc * 2 : 32;
            wcs_cell *a = realloc(c->aCell, (size_t)n * sizeof(wcs_cell));
            if (a == NULL) return eng_err(WCS_NOMEM, "out of memory");
            c->aCell = a;
            c->nCellAlloc = n;
          }
          pc = &c->aCell[c->nCell++];
          pc->iFamily = r->iFam;
          pc->zFamily = f->zName;
          pc->pQual = c->data.a + r->oQual;
          pc->nQual = r->nQual;
          pc->iTs = r->iTs;
          pc->pVal = c->data.a + r->oVal;
          pc->nVal = r->nVal;
        }
      }
      j++;
    }
    i = j;
  }
  return nOut;
}

/* Set c->pos to the successor bound of row rowT (forward: just past the
** row; reverse: just below it). */
static int pos_past_row(wcs_cursor *c) {
  int rc;
  c->pos.n = 0;
  c->bPosOpen = 0;
  rc = wcs_buf_append(&c->pos, c->rowT.a, c->rowT.n);
  if (rc == WCS_OK && !c->bReverse) c->pos.a[c->pos.n - 1] = 0x02;
  return rc;
}

#define LO(i) (c->rangeBuf.a + c->aLo[i])
#define HI(i) (c->rangeBuf.a + c->aHi[i])

/* Find and assemble the next row at or beyond c->pos. */
static int advance(wcs_cursor *c) {
  int rc = WCS_OK;
  for (;;) {
    const uint8_t *b;
    size_t nb;
    int bOpen = 0, i, iBest = -1, v = WCS_ROW_EMIT;
    const uint8_t *pBest = NULL;
    size_t nBest = 0;

    if (c->nRowLimit && c->nRows >= c->nRowLimit) break;
    /* the range holding the bound */
    if (!c->bReverse) {
      while (c->iRange < c->nRange && !c->abHiOpen[c->iRange] &&
             bcmp2(c->pos.a, c->pos.n, HI(c->iRange), c->anHi[c->iRange]) >=
                 0) {
        c->iRange++;
      }
      if (c->iRange >= c->nRange) break;
      if (bcmp2(c->pos.a, c->pos.n, LO(c->iRange), c->anLo[c->iRange]) < 0) {
        c->pos.n = 0;
        rc = wcs_buf_append(&c->pos, LO(c->iRange), c->anLo[c->iRange]);
        if (rc) break;
      }
      b = c->pos.a;
      nb = c->pos.n;
    } else {
      while (c->iRange >= 0 && !c->bPosOpen &&
             bcmp2(LO(c->iRange), c->anLo[c->iRange], c->pos.a, c->pos.n) >=
                 0) {
        c->iRange--;
      }
      if (c->iRange < 0) break;
      if (!c->abHiOpen[c->iRange] &&
          (c->bPosOpen || bcmp2(HI(c->iRange), c->anHi[c->iRange], c->pos.a,
                                c->pos.n) < 0)) {
        c->pos.n = 0;
        c->bPosOpen = 0;
        rc = wcs_buf_append(&c->pos, HI(c->iRange), c->anHi[c->iRange]);
        if (rc) break;
      }
      b = c->pos.a;
      nb = c->pos.n;
      bOpen = c->bPosOpen;
    }
    /* place the streams and pick the candidate row */
    for (i = 0; rc == WCS_OK && i < c->nStream; i++) {
      Stream *s = &c->aStream[i];
      const uint8_t *r;
      size_t nr;
      if (c->bReseek) s->bDone = 0;
      rc = stream_place(c, s, b, nb, bOpen, c->bReseek);
      if (rc || s->bDone) continue;
      rc = stream_row(s, &r, &nr);
      if (rc) break;
      if (iBest < 0 || (c->bReverse ? bcmp2(r, nr, pBest, nBest) > 0
                                    : bcmp2(r, nr, pBest, nBest) < 0)) {
        iBest = i;
        pBest = r;
        nBest = nr;
      }
    }
    c->bReseek = 0;
    if (rc || iBest < 0) break;
    c->rowT.n = 0;
    rc = wcs_buf_append(&c->rowT, pBest, nBest);
    if (rc) break;
    /* outside the current range: move the bound to the candidate */
    if (!c->bReverse) {
      if (!c->abHiOpen[c->iRange] &&
          bcmp2(c->rowT.a, c->rowT.n, HI(c->iRange), c->anHi[c->iRange]) >=
              0) {
        c->pos.n = 0;
        rc = wcs_buf_append(&c->pos, c->rowT.a, c->rowT.n);
        if (rc) break;
        continue;
      }
    } else if (bcmp2(c->rowT.a, c->rowT.n, LO(c->iRange),
                     c->anLo[c->iRange]) < 0) {
      rc = pos_past_row(c);
      if (rc) break;
      c->pos.a[c->pos.n - 1] = 0x02; /* rows < C include this one */
      continue;
    }
    c->row.n = 0;
    rc = eng_unescape(&c->row, c->rowT.a, c->rowT.n - 2);
    if (rc) {
      eng_err(rc, "malformed row key escape in a cell key");
      break;
    }
    if (c->xRowFilter) {
      const void *pSeek = NULL;
      size_t nSeek = 0;
      v = c->xRowFilter(c->pFilterCtx, c->row.a, c->row.n, &pSeek, &nSeek);
      if (v == WCS_ROW_DONE) break;
      if (v == WCS_ROW_SEEK) {
        c->tmp2.n = 0;
        rc = eng_escape(&c->tmp2, pSeek, nSeek);
        if (rc) break;
        if (!c->bReverse
                ? bcmp2(c->tmp2.a, c->tmp2.n, c->rowT.a, c->rowT.n) > 0
                : bcmp2(c->tmp2.a, c->tmp2.n, c->rowT.a, c->rowT.n) < 0) {
          c->pos.n = 0;
          c->bPosOpen = 0;
          rc = wcs_buf_append(&c->pos, c->tmp2.a, c->tmp2.n);
          if (rc) break;
          continue;
        }
        v = WCS_ROW_SKIP;
      }
      if (v == WCS_ROW_SKIP) {
        rc = pos_past_row(c);
        if (rc) break;
        continue;
      }
      if (v != WCS_ROW_EMIT) {
        rc = eng_err(v, "row filter returned %d", v);
        break;
      }
    }
    /* assemble */
    c->nRaw = 0;
    c->data.n = 0;
    for (i = 0; rc == WCS_OK && i < c->nStream; i++) {
      Stream *s = &c->aStream[i];
      const uint8_t *r;
      size_t nr;
      if (s->bDone) continue;
      rc = stream_row(s, &r, &nr);
      if (rc == WCS_OK && nr == c->rowT.n && memcmp(r, c->rowT.a, nr) == 0) {
        rc = stream_collect(c, s);
      }
    }
    if (rc) break;
    rc = pos_past_row(c);
    if (rc) break;
    {
      int n = row_filter_cells(c);
      if (n < 0) {
        rc = WCS_NOMEM;
        break;
      }
      if (n == 0) continue;
    }
    c->nRows++;
    eng_stats_count(c->pEng, c->pDef->pStats, 0, c->row.a, c->row.n, 1);
    return WCS_OK;
  }
  c->bEof = 1;
  c->nCell = 0;
  if (rc && rc != WCS_NOMEM) return rc;
  if (rc) return eng_err(rc, "out of memory");
  return WCS_OK;
}

void wcs_read_options_init(wcs_read_options *o) {
  memset(o, 0, sizeof(*o));
  o->iMaxTs = INT64_MAX;
  o->iAsOf = -1;
}

/* Normalize the ranges: escape, drop empty ones, sort, merge. */
typedef struct RangeTmp {
  size_t oLo, nLo, oHi, nHi;
  int bHiOpen;
} RangeTmp;
static int range_cmp_r(const void *a, const void *b, void *ctx) {
  const RangeTmp *x = a, *y = b;
  const uint8_t *base = ctx;
  return bcmp2(base + x->oLo, x->nLo, base + y->oLo, y->nLo);
}

static int set_ranges(wcs_cursor *c, const wcs_key_range *aRange,
                      int nRange) {
  wcs_key_range all;
  RangeTmp *a;
  wcs_buf lo = {0}, hi = {0};
  int i, n = 0, rc = WCS_OK;
  if (aRange == NULL || nRange <= 0) {
    memset(&all, 0, sizeof(all));
    aRange = &all;
    nRange = 1;
  }
  a = calloc((size_t)nRange, sizeof(RangeTmp));
  if (a == NULL) return WCS_NOMEM;
  for (i = 0; rc == WCS_OK && i < nRange; i++) {
    int bHiOpen;
    rc = eng_range_bounds(&aRange[i], &lo, &hi, &bHiOpen);
    if (rc) break;
    if (!bHiOpen && bcmp2(lo.a, lo.n, hi.a, hi.n) >= 0) continue;
    a[n].oLo = c->rangeBuf.n;
    a[n].nLo = lo.n;
    rc = wcs_buf_append(&c->rangeBuf, lo.a, lo.n);
    a[n].oHi = c->rangeBuf.n;
    a[n].nHi = hi.n;
    if (rc == WCS_OK) rc = wcs_buf_append(&c->rangeBuf, hi.a, hi.n);
    a[n].bHiOpen = bHiOpen;
    n++;
  }
  wcs_buf_free(&lo);
  wcs_buf_free(&hi);
  if (rc == WCS_OK && n > 1) {
    qsort_r(a, (size_t)n, sizeof(RangeTmp), range_cmp_r, c->rangeBuf.a);
  }
  if (rc == WCS_OK) {
    c->aLo = calloc((size_t)(n ? n : 1), sizeof(size_t));
    c->anLo = calloc((size_t)(n ? n : 1), sizeof(size_t));
    c->aHi = calloc((size_t)(n ? n : 1), sizeof(size_t));
    c->anHi = calloc((size_t)(n ? n : 1), sizeof(size_t));
    c->abHiOpen = calloc((size_t)(n ? n : 1), sizeof(int));
    if (!c->aLo || !c->anLo || !c->aHi || !c->anHi || !c->abHiOpen) {
      rc = WCS_NOMEM;
    }
  }
  for (i = 0; rc == WCS_OK && i < n; i++) {
    int k = c->nRange;
    const uint8_t *base = c->rangeBuf.a;
    if (k > 0 &&
        (c->abHiOpen[k - 1] ||
         bcmp2(base + a[i].oLo, a[i].nLo, base + c->aHi[k - 1],
               c->anHi[k - 1]) <= 0)) {
      /* overlaps or touches the previous range: extend it */
      if (!c->abHiOpen[k - 1]) {
        if (a[i].bHiOpen) {
          c->abHiOpen[k - 1] = 1;
        } else if (bcmp2(base + a[i].oHi, a[i].nHi, base + c->aHi[k - 1],
                         c->anHi[k - 1]) > 0) {
          c->aHi[k - 1] = a[i].oHi;
          c->anHi[k - 1] = a[i].nHi;
        }
      }
      continue;
    }
    c->aLo[k] = a[i].oLo;
    c->anLo[k] = a[i].nLo;
    c->aHi[k] = a[i].oHi;
    c->anHi[k] = a[i].nHi;
    c->abHiOpen[k] = a[i].bHiOpen;
    c->nRange++;
  }
  free(a);
  return rc;
}

void wcs_cursor_close(wcs_cursor *c) {
  int i;
  if (c == NULL) return;
  for (i = 0; i < c->nStream; i++) view_free(c->aStream[i].pView);
  free(c->aStream);
  if (c->pSnap) wcs_snapshot_free(c->pEng->db, c->pSnap);
  if (c->pTxn) c->pTxn->nCursor--;
  eng_def_unref(c->pEng, c->pDef);
  free(c->aLo);
  free(c->anLo);
  free(c->aHi);
  free(c->anHi);
  free(c->abHiOpen);
  wcs_buf_free(&c->rangeBuf);
  wcs_buf_free(&c->pos);
  wcs_buf_free(&c->rowT);
  wcs_buf_free(&c->row);
  wcs_buf_free(&c->data);
  wcs_buf_free(&c->tmp);
  wcs_buf_free(&c->tmp2);
  free(c->aRaw);
  free(c->aCell);
  free(c);
}

int wcs_cursor_open(wcs_cursor **ppCur, wcs_table *pTab, wcs_txn *pTxn,
                    const wcs_read_options *pOpt) {
  wcs_read_options dflt;
  wcs_cursor *c;
  const wcs_snapshot *pSnap = NULL;
  int rc = WCS_OK, i;
  char *abFam = NULL;
  wcs_buf lower = {0}, upper = {0}, prefix = {0};
  int bPoint = 0;

  *ppCur = NULL;
  if (pOpt == NULL) {
    wcs_read_options_init(&dflt);
    pOpt = &dflt;
  }
  c = calloc(1, sizeof(*c));
  if (c == NULL) return eng_err(WCS_NOMEM, "out of memory");
  c->pEng = pTab->pEng;
  c->pDef = pTab->pDef;
  eng_def_ref(c->pEng, c->pDef);
  c->pTxn = pTxn;
  if (pTxn) pTxn->nCursor++;
  c->bReverse = pOpt->bReverse != 0;
  c->nRowLimit = pOpt->nRowLimit;
  c->nVersions = pOpt->nVersions > 0 ? pOpt->nVersions : 0;
  c->iMinTs = pOpt->iMinTs;
  c->iMaxTs = pOpt->iMaxTs;
  if (pOpt->iAsOf >= 0 && pOpt->iAsOf < INT64_MAX &&
      pOpt->iAsOf + 1 < c->iMaxTs) {
    c->iMaxTs = pOpt->iAsOf + 1;
  }
  c->bKeysOnly = pOpt->bKeysOnly != 0;
  c->xRowFilter = pOpt->xRowFilter;
  c->pFilterCtx = pOpt->pFilterCtx;
  c->iNow = eng_now(c->pEng);

  /* which families */
  abFam = calloc((size_t)(c->pDef->nFam + 1), 1);
  if (abFam == NULL) rc = eng_err(WCS_NOMEM, "out of memory");
  for (i = 0; rc == WCS_OK && i < c->pDef->nFam; i++) {
    abFam[i] = pOpt->azFamily == NULL;
  }
  for (i = 0; rc == WCS_OK && pOpt->azFamily && i < pOpt->nFamily; i++) {
    int iFam;
    if (eng_family(c->pDef, pOpt->azFamily[i], &iFam) == NULL) {
      rc = WCS_ERROR;
    } else {
      abFam[iFam] = 1;
    }
  }
  if (rc == WCS_OK) {
    rc = set_ranges(c, pOpt->aRange, pOpt->nRange);
    if (rc) eng_err(rc, "out of memory");
  }
  /* the snapshot all streams share */
  if (rc == WCS_OK) {
    if (pTxn) {
      rc = eng_txn_snapshot(pTxn, &pSnap);
    } else {
      rc = wcs_snapshot_new(c->pEng->db, &c->pSnap);
      if (rc) eng_err_db(c->pEng->db, rc, "taking a read snapshot");
      pSnap = c->pSnap;
    }
  }
  /* one point row: the streams can use the row-prefix bloom filters */
  if (rc == WCS_OK && c->nRange == 1 && !c->abHiOpen[0] &&
      c->anHi[0] == c->anLo[0] + 2 &&
      memcmp(HI(0), LO(0), c->anLo[0]) == 0 && HI(0)[c->anLo[0]] == 0 &&
      HI(0)[c->anLo[0] + 1] == 2) {
    bPoint = 1;
  }
  if (rc == WCS_OK) {
    c->aStream = calloc((size_t)(c->pDef->nFam + 1), sizeof(Stream));
    if (c->aStream == NULL) rc = eng_err(WCS_NOMEM, "out of memory");
  }
  for (i = 0; rc == WCS_OK && i < c->pDef->nFam; i++) {
    Stream *s;
    uint16_t iFid = c->pDef->aFam[i].iFid;
    if (!abFam[i]) continue;
    s = &c->aStream[c->nStream];
    s->iFam = i;
    lower.n = upper.n = prefix.n = 0;
    rc = eng_put_prefix(&lower, c->pDef->iTid, iFid);
    if (rc) break;
    memcpy(s->aPre, lower.a, ENG_PREFIX_BYTES);
    if (c->nRange > 0) rc = wcs_buf_append(&lower, LO(0), c->anLo[0]);
    if (rc == WCS_OK) {
      if (c->nRange > 0 && !c->abHiOpen[c->nRange - 1]) {
        rc = eng_put_prefix(&upper, c->pDef->iTid, iFid);
        if (rc == WCS_OK) {
          rc = wcs_buf_append(&upper, HI(c->nRange - 1),
                              c->anHi[c->nRange - 1]);
        }
      } else if (iFid == 0xFFFF) {
        rc = eng_put_prefix(&upper, c->pDef->iTid + 1, 0);
      } else {
        rc = eng_put_prefix(&upper, c->pDef->iTid, (uint16_t)(iFid + 1));
      }
    }
    if (rc == WCS_OK && bPoint) {
      rc = eng_put_prefix(&prefix, c->pDef->iTid, iFid);
      if (rc == WCS_OK) rc = wcs_buf_append(&prefix, LO(0), c->anLo[0]);
      if (rc == WCS_OK) rc = wcs_buf_append(&prefix, "\x00\x01", 2);
    }
    if (rc == WCS_OK) {
      rc = view_new(&s->pView, c->pEng->db, pSnap, pTxn ? pTxn->pOv : NULL,
                    lower.a, lower.n, upper.a, upper.n,
                    bPoint ? prefix.a : NULL, prefix.n, c->bReverse);
      if (rc) eng_err_db(c->pEng->db, rc, "opening an iterator");
    }
    if (rc == WCS_OK) c->nStream++;
  }
  free(abFam);
  wcs_buf_free(&lower);
  wcs_buf_free(&upper);
  wcs_buf_free(&prefix);
  if (rc == WCS_OK) {
    c->iRange = c->bReverse ? c->nRange - 1 : 0;
    c->bPosOpen = c->bReverse;
    c->bReseek = 1;
    rc = advance(c);
  }
  if (rc) {
    wcs_cursor_close(c);
    return rc;
  }
  *ppCur = c;
  return WCS_OK;
}

int wcs_cursor_eof(const wcs_cursor *c) { return c->bEof; }

int wcs_cursor_next(wcs_cursor *c) {
  if (c->bEof) return WCS_OK;
  return advance(c);
}

int wcs_cursor_seek(wcs_cursor *c, const void *pKey, size_t nKey) {
  int rc;
  c->pos.n = 0;
  c->bPosOpen = 0;
  rc = eng_escape(&c->pos, pKey, nKey);
  if (rc) return eng_err(rc, "out of memory");
  c->iRange = c->bReverse ? c->nRange - 1 : 0;
  c->bReseek = 1;
  c->bEof = 0;
  return advance(c);
}

const void *wcs_cursor_row(const wcs_cursor *c, size_t *pnRow) {
  if (c->bEof) {
    if (pnRow) *pnRow = 0;
    return NULL;
  }
  if (pnRow) *pnRow = c->row.n;
  return c->row.a;
}

const wcs_cell *wcs_cursor_cells(const wcs_cursor *c, int *pnCell) {
  if (pnCell) *pnCell = c->bEof ? 0 : c->nCell;
  return c->aCell;
}

/* ------------------------------------------------------------------ */
/* single-row reads used by mutations                                  */

int eng_read_latest(wcs_table *pTab, wcs_txn *pTxn, const void *pRow,
                    size_t nRow, int iFam, const void *pQual, size_t nQual,
                    int *pbFound, int64_t *piTs, wcs_buf *pVal) {
  wcs_read_options o;
  wcs_key_range r;
  wcs_cursor *c = NULL;
  const char *az[1];
  int rc;
  *pbFound = 0;
  wcs_read_options_init(&o);
  memset(&r, 0, sizeof(r));
  r.pStart = r.pEnd = pRow;
  r.nStart = r.nEnd = nRow;
  r.bEndIncl = 1;
  az[0] = pTab->pDef->aFam[iFam].zName;
  o.aRange = &r;
  o.nRange = 1;
  o.azFamily = az;
  o.nFamily = 1;
  o.nVersions = 1;
  rc = wcs_cursor_open(&c, pTab, pTxn, &o);
  if (rc == WCS_OK && !c->bEof) {
    int i;
    for (i = 0; i < c->nCell; i++) {
      const wcs_cell *pc = &c->aCell[i];
      if (pc->nQual == nQual && (nQual == 0 || memcmp(pc->pQual, pQual,
                                                      nQual) == 0)) {
        *pbFound = 1;
        *piTs = pc->iTs;
        pVal->n = 0;
        rc = wcs_buf_append(pVal, pc->pVal, pc->nVal);
        break;
      }
    }
  }
  wcs_cursor_close(c);
  return rc;
}

int eng_row_exists(wcs_table *pTab, wcs_txn *pTxn, const void *pRow,
                   size_t nRow, int *pbExists) {
  wcs_read_options o;
  wcs_key_range r;
  wcs_cursor *c = NULL;
  int rc;
  wcs_read_options_init(&o);
  memset(&r, 0, sizeof(r));
  r.pStart = r.pEnd = pRow;
  r.nStart = r.nEnd = nRow;
  r.bEndIncl = 1;
  o.aRange = &r;
  o.nRange = 1;
  o.bKeysOnly = 1;
  rc = wcs_cursor_open(&c, pTab, pTxn, &o);
  *pbExists = rc == WCS_OK && !c->bEof;
  wcs_cursor_close(c);
  return rc;
}
