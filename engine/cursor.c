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
** Assembly reads the cells of the row from each stream at that row and
** applies, per column in newest-first order: the family's GC policy (the
** cell's position among the column's cells for MAX VERSIONS, its age
** against the cursor's "now" for MAX AGE, combined by UNION or
** INTERSECTION), then the time filters, then latest-N. Rows left with no
** cell are not returned. Forward, this is decided cell by cell as the
** stream moves, and only the cells kept are copied; once a column can
** yield nothing more (latest-N reached, a GC-expired cell — every older
** one is expired too —, a cell older than the time range) or, for keys
** only, once the row is known to be live, the stream steps over at most
** ENG_SKIP_SEEK more cells and then seeks past the rest, so a column with
** thousands of versions costs one seek, not thousands of steps. Reverse,
** the cells come backwards (each column oldest first): those the time
** filters pass are staged straight into the row's cells, a column is
** settled by position (MAX VERSIONS, latest-N) at its end, and the
** family's cells are flipped into cell order; latest-1 in a family
** without a GC policy (the SQL table's reads) takes a shorter loop,
** collect_reverse_latest(), each column's newest cell replacing the one
** staged before it.
**
** The per-row path (doc/engine.md, "The per-row path of a scan"). Each
** key is looked at about once: the candidate pass finds a stream's row
** (Stream.pRowT; a stream at the best row takes its end from that one)
** and assembly reuses it; after a row is assembled every stream is past
** it (bPlaced), so the next row places nothing, and the bound past it is
** the row's own buffer (pos_past_row); rows and qualifiers without an
** escaped 00 are copied rather than unescaped; forward, kept cells are
** written straight into aCell, their bytes into data (data_reserve()
** re-points them if data grows mid-row). Forward, in a family without a
** GC policy, a cell that begins a column inside the time range is always
** kept: collect_plain() takes a run of those with nothing else to decide
** (the common case, one version per column), collect_rest() the others.
**
** Reuse. A closed cursor goes to its engine's pool of ENG_POOL_MAX idle
** cursors, and the next open on the same table definition takes it over:
** no allocation at all once its buffers have grown. Its storage iterators
** (one per family, in the view of each family) are reused too when their
** bounds contain the new ones and their bloom prefix is the same: a read
** of the latest state moves them there with wcs_iter_refresh (cheap while
** no memtable switch, file change or range delete happened); a read at a
** transaction's snapshot reuses them only if they were made at that very
** snapshot less than ENG_VIEW_REUSE_MICROS ago and no flush or compaction
** was installed since (a compaction moves no sequence number, but its
** filter may have collected cells such an iterator still shows).
** Refreshing is one family at a time, so with several families the cursor
** checks that nothing was committed meanwhile and otherwise makes them
** anew at its snapshot: a row is always read at one point in time. The
** iterators of a cursor idle for ENG_IDLE_MICROS are released (they pin
** files and memtables that flushes and compactions would free) when the
** pool is next used, and those of every idle cursor when a compaction
** asked for (wcs_engine_gc) returns. Point
** reads of one row use iterators with the row's bloom prefix (files whose
** blooms rule the row out are not read), which serve that row only; but
** outside a transaction, while a family is one sorted run (no filter
** could skip anything), they read it through an iterator over the whole
** family, which the next point read refreshes and seeks like a scan's
** (STREAM_FAMILY in stream_bounds()). Range reads do the same, so that
** scans of different ranges share one iterator; the cursor keeps to its
** ranges whatever the iterator's bounds.
*/
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ENG_POOL_MAX 16 /* idle cursors an engine keeps */
#define ENG_VIEW_REUSE_MICROS                                                  \
  100000 /* at one snapshot, reuse an iterator                                 \
         ** this long after it was made */
#define ENG_IDLE_MICROS                                                        \
  100000                       /* an idle cursor's iterators are               \
                               ** released after this long */
#define ENG_SWEEP_MICROS 20000 /* ... checked at most this often */
#define ENG_SKIP_SEEK    8     /* cells stepped over before a seek */
#define ENG_HEAT_BATCH   64    /* rows read counted in the heat map at once */
#define ENG_PROBE        64    /* point reads that ask the bloom filters
                               ** first, after one that found no row */
#define ENG_POOL_KEEP_BYTES                                                    \
  262144 /* an idle cursor keeps buffers of up                                 \
         ** to this size each */

typedef struct Stream {
  EngView *pView; /* the family's view (owned by its Slot) */
  int iFam;       /* index in the def's families */
  uint8_t aPre[ENG_PREFIX_BYTES];
  int bDone;            /* no key at or after (reverse: before) the last
                        ** seek: nothing more until a forced re-seek */
  const uint8_t *pRowT; /* escaped row (with terminator) of the current
                        ** key, as found by the candidate pass of
                        ** advance(); valid until the view moves */
  size_t nRowT;         /* bytes at pRowT */
  int bRowEsc;          /* pRowT holds an escaped 00 (00 FF) */
  int iSameAs;          /* candidate pass: index of the stream holding the
                        ** best row when this one was found at that same
                        ** row, or -1 */
  int bPlain;           /* forward, no GC policy, cells not keys only:
                        ** collect_plain() applies (set at open) */
  int bKeysPlain;       /* forward, keys only, no GC policy, no time
                        ** filter: collect_keys() applies (set at open) */
  int bAbsent;          /* a point read whose row the family's bloom
                        ** filters rule out: never seeked (set at open) */
  const char *zFamily;  /* the family's name, for its cells */
} Stream;

/* One family's view, kept across reuses of the cursor. */
typedef struct Slot {
  EngView *pView;    /* NULL until the family is first read */
  int bSeq;          /* iSeq is known */
  uint64_t iSeq;     /* snapshot seq its live iterator reads at */
  int64_t iBorn;     /* monotonic micros it was made or refreshed */
  int bRefreshed;    /* this open refreshed it (seq to be checked) */
  int eMode;         /* bounds of this open's view: STREAM_RANGE, _ROW or
                     ** _FAMILY (stream_bounds) */
  int64_t iRowUntil; /* reads use STREAM_ROW or _RANGE, not _FAMILY,
                     ** until then (monotonic micros): the family had
                     ** several sources */
  int nProbe;        /* point reads through the whole family's iterator
                     ** left to ask its bloom filters first (ENG_PROBE) */
} Slot;

/* One key range in escaped row space: lo <= esc(r) 00 01 < hi. */
typedef struct Range {
  size_t oLo, nLo; /* lower bound in rangeBuf */
  size_t oHi, nHi; /* upper bound in rangeBuf (unless bHiOpen) */
  int bHiOpen;     /* no upper bound */
} Range;

/* What rows_proven gathers of one family over the files of its run. */
typedef struct ProofAcc {
  uint8_t aPre[ENG_PREFIX_BYTES]; /* the family's prefix */
  int bRun;        /* the family's keys are one sorted run of files */
  int bFail;       /* a file that proves nothing */
  uint64_t maxSeq; /* the largest sequence number in those files */
  EngRowSum sum;
} ProofAcc;

/* One family's part of rows_proven, kept by the cursor between opens. */
typedef struct Proof {
  wcs_iter *pIter; /* over the whole family; NULL: none yet */
  uint64_t iEpoch; /* pIter's epoch when acc was gathered; 0: never */
  ProofAcc acc;    /* what the notes of its files said then */
  uint64_t nBytes; /* the family's stored bytes then (wcs_db_approximate) */
} Proof;

struct wcs_cursor {
  wcs_engine *pEng;
  EngDef *pDef;          /* referenced (also while idle in the pool) */
  wcs_cursor *pPoolNext; /* the engine's idle list */
  int64_t iIdleSince;    /* monotonic micros it went to the pool */
  wcs_txn *pTxn;         /* or NULL */
  wcs_snapshot *pSnap;   /* owned, while opening with pTxn NULL */
  Overlay *pOvCopy;      /* after wcs_cursor_freeze: the copy of the
                         ** overlay the views read, owned; else NULL */
  wcs_moment *pMoment;   /* the moment the views read (a read option, or
                         ** wcs_cursor_freeze_at), referenced; else NULL */
  int bOverlay;          /* the views merge pTxn's overlay (else they never
                         ** need view_sync) */
  int bReverse;
  uint64_t nRowLimit;
  int nVersions;
  int64_t iMinTs, iMaxTs;   /* effective [min, max) */
  uint64_t uMinTs, nTsSpan; /* the same as one unsigned test: iTs (>= 0)
                            ** is inside iff iTs - uMinTs < nTsSpan */
  int bKeysOnly;
  int (*xRowFilter)(void *, const void *, size_t, const void **, size_t *);
  void *pFilterCtx;
  int (*xCellFilter)(void *, const wcs_cell *, int); /* NULL with keys only */
  void *pCellFilterCtx;
  int64_t iNow; /* GC clock, fixed at open */

  Slot *aSlot; /* [pDef->nFam] */
  char *abFam; /* [pDef->nFam] families read by this open */
  int nStream;
  Stream *aStream; /* [pDef->nFam] */
  int nRange, nRangeAlloc;
  Range *aRange;    /* [nRange] sorted, disjoint, non-touching */
  Range *aRangeTmp; /* [nRangeAlloc] scratch for set_ranges */
  wcs_buf rangeBuf;
  int iRange; /* current range */

  wcs_buf pos;    /* F (forward) or C (reverse) */
  int bPosOpen;   /* reverse: C is +infinity */
  int bReseek;    /* re-seek every stream at the next advance */
  int bPlaced;    /* every stream is done or at or beyond pos (as after
                  ** assembling a row): placing them is not needed */
  int iHiRange;   /* forward: the range whose end nHiLcp is for, or -1 */
  size_t nHiLcp;  /* bytes the last row checked against that end shares
                  ** with it (below_end) */
  uint64_t nRows; /* rows returned */
  uint64_t nHeat; /* rows returned but not yet counted in the heat map */
  int bNoHeat;    /* the read is not counted in the heat map (bNoHeat) */

  int bEof;
  wcs_buf rowT;  /* current row: esc(row) 00 01 (within advance(): it
                 ** becomes pos once the row is done, pos_past_row) */
  int bRowEsc;   /* rowT holds an escaped 00 */
  wcs_buf row;   /* current row: raw key */
  wcs_buf data;  /* cell bytes */
  int nRaw;      /* cells of the row kept (also keys only) */
  int nPosAlloc; /* entries allocated in aPos */
  int64_t *aPos; /* reverse: for each cell staged in aCell, how many
                 ** cells of its column came before it */
  int nCell, nCellAlloc;
  wcs_cell *aCell;
  wcs_buf col;                  /* forward collection: the current column's
                                ** escaped qualifier esc(qual) 00 01 */
  wcs_buf lower, upper, prefix; /* scratch: a stream's iterator bounds */
  wcs_buf emitPrefix;           /* rows starting with these bytes pass the
                                ** row filter without a call (its last
                                ** WCS_ROW_EMIT_PREFIX), when bEmitPrefix */
  int bEmitPrefix;
  int bPointRead;       /* one range of one row: once it is returned, the
                        ** next step is the end */
  int bOneRev;          /* reverse, no overlay, not a point read:
                        ** advance_one() may take advance()'s step */
  int bOneFwd;          /* forward, collect_plain() or collect_keys() applies to
                        ** every stream, no overlay: advance_one() may take
                        ** advance()'s step */
  int bCountKnown;      /* a keys-only read of the whole table whose rows
                        ** the files' notes count: nCountTotal of them
                        ** (wcs_cursor_rows_left) */
  uint64_t nCountTotal; /* rows the read returns in all, before nRowLimit */
  wcs_buf tmp, tmp2;
  struct Proof *aProof; /* [pDef->nFam] for rows_proven; NULL until first
                        ** needed */
};

/* The 8 bytes at p as a word, in memory order (for equality tests). */
static inline uint64_t word(const uint8_t *p) {
  uint64_t x;
  memcpy(&x, p, 8);
  return x;
}

/* 1 if the first n bytes at a and b are equal, for n <= 8 with eight
** bytes readable at both: one load each, inline (wcs_same_bytes() is a
** call where the compiler does not inline it). */
static inline int same_short(const uint8_t *a, const uint8_t *b, size_t n) {
  uint64_t d = word(a) ^ word(b);
  if (n == 0) return 1;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return (d >> (64 - 8 * n)) == 0;
#else
  return (d << (64 - 8 * n)) == 0;
#endif
}

/* wcs_buf_append() with the bytes copied by wcs_copy_short() rather
** than by a memcpy call: the per-cell path appends a few short strings
** per cell. */
__attribute__((always_inline)) static inline int put(wcs_buf *b, const void *p,
                                                     size_t n) {
  if (b->nAlloc - b->n < n) return wcs_buf_append(b, p, n);
  wcs_copy_short(b->a + b->n, p, n);
  b->n += n;
  return WCS_OK;
}

/* eng_field_len() that also tells whether the field holds an escaped 00
** (*pbEsc), so that a field without one is unescaped by a plain copy. */
static inline size_t field_scan(const uint8_t *p, size_t n, int *pbEsc) {
  size_t i = 0;
  *pbEsc = 0;
  while (i < n) {
    const uint8_t *q = NULL;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* row keys are short: find the 00 eight bytes at a time, inline (the
    ** lowest byte flagged by the zero-byte test is the first 00) */
    while (n - i >= 8) {
      uint64_t x, m;
      memcpy(&x, p + i, 8);
      m = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
      if (m) {
        q = p + i + (__builtin_ctzll(m) >> 3);
        break;
      }
      i += 8;
    }
#endif
    if (q == NULL) q = memchr(p + i, 0, n - i);
    if (q == NULL) return 0;
    i = (size_t)(q - p);
    if (i + 1 >= n) return 0;
    if (p[i + 1] == 0x01) return i + 2;
    if (p[i + 1] != 0xFF) return 0;
    *pbEsc = 1;
    i += 2;
  }
  return 0;
}

/* Monotonic microseconds (coarse is enough: bounds of ~100 ms). */
static int64_t mono_micros(void) {
  struct timespec t;
#ifdef CLOCK_MONOTONIC_COARSE
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
#else
  clock_gettime(CLOCK_MONOTONIC, &t);
#endif
  return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
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

/* Find the escaped row (with terminator) of the stream's current key:
** s->pRowT, s->nRowT, s->bRowEsc. The first j bytes of the row are known
** to hold no 00 byte (so neither the terminator nor an escape): the
** search starts after them. */
static inline int stream_row(Stream *s, size_t j) {
  size_t nk, nr;
  const uint8_t *k = view_key(s->pView, &nk);
  if (nk < ENG_PREFIX_BYTES + j) return WCS_CORRUPT_BKPT;
  nr = field_scan(k + ENG_PREFIX_BYTES + j, nk - ENG_PREFIX_BYTES - j,
                  &s->bRowEsc);
  if (nr == 0) {
    return eng_err(WCS_CORRUPT_BKPT, "a cell key has no row terminator");
  }
  s->pRowT = k + ENG_PREFIX_BYTES;
  s->nRowT = j + nr;
  return WCS_OK;
}

/* For the candidate pass of advance() with one stream, just past a row
** (c->pos is its escaped row with the terminator's last byte changed):
** how many leading bytes of the stream's row are known to hold no 00
** byte. The stream's key shares view_shared() bytes with its key before,
** a cell of that row; if that row had no escaped 00, those of its bytes
** before the terminator hold no 00, and nor do the new key's same bytes. */
static inline size_t row_known(const wcs_cursor *c, const Stream *s) {
  size_t sh = view_shared(s->pView), j;
  if (c->bRowEsc || c->pos.n < 2 || sh <= ENG_PREFIX_BYTES) return 0;
  j = sh - ENG_PREFIX_BYTES;
  return j < c->pos.n - 2 ? j : c->pos.n - 2;
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
  int rc;
  if (s->bAbsent) {
    s->bDone = 1;
    return WCS_OK;
  }
  if (!bForce) {
    size_t nk;
    const uint8_t *k;
    int cmp;
    if (s->bDone) return WCS_OK;
    rc = view_sync(s->pView);
    if (rc) return rc;
    if (!view_valid(s->pView)) {
      s->bDone = 1;
      return WCS_OK;
    }
    if (bOpen) return WCS_OK; /* reverse from +inf: anything is below */
    k = view_key(s->pView, &nk);
    cmp = wcs_bytes_cmp(k + ENG_PREFIX_BYTES, nk - ENG_PREFIX_BYTES, b, n);
    if (!c->bReverse && cmp >= 0) return WCS_OK;
    if (c->bReverse && cmp < 0) return WCS_OK;
  }
  return stream_seek(c, s, b, n, bOpen);
}

/* Make room for n entries in aPos. */
static int grow_pos(wcs_cursor *c, int n) {
  if (n > c->nPosAlloc) {
    int nNew = c->nPosAlloc ? c->nPosAlloc * 2 : 32;
    int64_t *a;
    while (nNew < n)
      nNew *= 2;
    a = realloc(c->aPos, (size_t)nNew * sizeof(int64_t));
    if (a == NULL) return WCS_NOMEM;
    c->aPos = a;
    c->nPosAlloc = nNew;
  }
  return WCS_OK;
}

/* Make room for n cells in aCell. */
static int grow_cells(wcs_cursor *c, int n) {
  if (n > c->nCellAlloc) {
    int nNew = c->nCellAlloc ? c->nCellAlloc * 2 : 32;
    wcs_cell *a;
    while (nNew < n)
      nNew *= 2;
    a = realloc(c->aCell, (size_t)nNew * sizeof(wcs_cell));
    if (a == NULL) return WCS_NOMEM;
    c->aCell = a;
    c->nCellAlloc = nNew;
  }
  return WCS_OK;
}

/* Make room for nMore bytes in c->data, which aCell[0..nCell) point
** into: the bytes move to a new buffer and the cells are pointed there. */
static int data_reserve(wcs_cursor *c, size_t nMore) {
  wcs_buf *b = &c->data;
  size_t nNew = b->nAlloc ? b->nAlloc * 2 : 256;
  uint8_t *a;
  int i;
  while (nNew - b->n < nMore)
    nNew *= 2;
  a = malloc(nNew);
  if (a == NULL) return WCS_NOMEM;
  if (b->n) memcpy(a, b->a, b->n);
  for (i = 0; i < c->nCell; i++) {
    wcs_cell *pc = &c->aCell[i];
    pc->pQual = a + ((const uint8_t *)pc->pQual - b->a);
    pc->pVal = a + ((const uint8_t *)pc->pVal - b->a);
  }
  free(b->a);
  b->a = a;
  b->nAlloc = nNew;
  return WCS_OK;
}

/* Forward assembly: add the cell at the stream's position (key parsed
** into *pKey, its qualifier holding an escaped 00 if bEsc) to the row's
** cells directly, the cells kept being known as the stream moves (keys
** only: just count it). */
static int cell_put(wcs_cursor *c, Stream *s, const char *zFamily,
                    const EngKey *pKey, int bEsc) {
  size_t nQual = pKey->nQualT - 2, nVal;
  const uint8_t *pVal;
  wcs_cell *pc;
  uint8_t *z;
  c->nRaw++;
  if (c->bKeysOnly) return WCS_OK;
  pVal = view_value(s->pView, &nVal);
  if (c->nCell >= c->nCellAlloc && grow_cells(c, c->nCell + 1)) {
    return WCS_NOMEM;
  }
  /* (<=: an empty cell in an empty buffer still needs one, so that its
  ** pointers point somewhere) */
  if (c->data.nAlloc - c->data.n <= nQual + nVal &&
      data_reserve(c, nQual + nVal)) {
    return WCS_NOMEM;
  }
  pc = &c->aCell[c->nCell++];
  pc->iFamily = s->iFam;
  pc->zFamily = zFamily;
  pc->iTs = pKey->iTs;
  z = c->data.a + c->data.n;
  pc->pQual = z;
  if (bEsc) {
    /* shorter than nQual: the room is there, nothing moves */
    int rc = eng_unescape(&c->data, pKey->pQualT, nQual);
    if (rc) return eng_err(rc, "malformed qualifier escape in a cell key");
    pc->nQual = (size_t)(c->data.a + c->data.n - z);
  } else {
    wcs_copy_short(z, pKey->pQualT, nQual);
    c->data.n += nQual;
    pc->nQual = nQual;
  }
  z = c->data.a + c->data.n;
  wcs_copy_short(z, pVal, nVal);
  c->data.n += nVal;
  pc->pVal = z;
  pc->nVal = nVal;
  return WCS_OK;
}

/* 1 if the stream's current key is a cell of row c->rowT. */
static int at_row(wcs_cursor *c, const uint8_t *k, size_t nk) {
  return nk >= ENG_PREFIX_BYTES + c->rowT.n &&
         wcs_same_bytes(k + ENG_PREFIX_BYTES, c->rowT.a, c->rowT.n);
}

/* eng_parse_key() for a key at_row() accepted: the row part is known to
** be c->rowT, so only the qualifier and timestamp are checked. *pbEsc:
** the qualifier holds an escaped 00. Qualifiers are mostly short names
** without a 00 byte: those are checked a word at a time (wcs_has_zero), and
** only one with a 00 is scanned for its escapes. */
static inline int parse_in_row(const wcs_cursor *c, const uint8_t *k, size_t nk,
                               EngKey *pKey, int *pbEsc) {
  size_t o = ENG_PREFIX_BYTES + c->rowT.n, nQual, nBody;
  const uint8_t *q;
  pKey->pQualT = k; /* set on every path (callers read it only on OK) */
  pKey->nQualT = 0;
  pKey->iTs = 0;
  *pbEsc = 0;
  if (nk < o + 2 + ENG_TS_BYTES) return WCS_CORRUPT_BKPT;
  q = k + o;
  nQual = nk - o - ENG_TS_BYTES;
  nBody = nQual - 2;
  if (q[nBody] != 0x00 || q[nBody + 1] != 0x01) return WCS_CORRUPT_BKPT;
  *pbEsc = wcs_has_zero(q, nBody);
  if (*pbEsc && field_scan(q, nQual, pbEsc) != nQual) return WCS_CORRUPT_BKPT;
  /* iTid, iFid and the row are the stream's and c->rowT: not set */
  pKey->pQualT = k + o;
  pKey->nQualT = nQual;
  pKey->iTs = (int64_t)~wcs_get64be(k + nk - ENG_TS_BYTES);
  return pKey->iTs < 0 ? WCS_CORRUPT_BKPT : WCS_OK;
}

static int bad_key(const uint8_t *k, size_t nk, int rc) {
  char *z = wcs_escape(k, nk, 80);
  eng_err(rc, "malformed cell key '%s'", z ? z : "?");
  free(z);
  return rc;
}

/*
** Forward, the common case of collect_forward(), for a family without a
** GC policy and a read of cells (not keys only, Stream.bPlain): while the
** stream is at cells of row c->rowT that each begin a new column and are
** inside the time range, every one is kept (whatever the latest-N), so it
** is copied to the row's cells with nothing else to decide. Stops at the
** first key that is anything else (a second version of a column, an
** escaped 00 in the qualifier, a malformed key, a timestamp outside the
** range), which collect_rest() takes from there, knowing that key is at
** the row; or at the end of the row (*pbEnd). *pnPut: cells kept; the
** last one's qualifier (no 00 in it) is at *poQual in data, *pnQual bytes.
*/
static inline int collect_plain(wcs_cursor *c, Stream *s, size_t *poQual,
                                size_t *pnQual, int *pnPut, int *pbEnd) {
  EngView *v = s->pView;
  const char *zFamily = s->zFamily;
  const uint8_t *pRowT = c->rowT.a;
  const size_t nRowT = c->rowT.n, o = ENG_PREFIX_BYTES + nRowT;
  const uint64_t uMin = c->uMinTs, nSpan = c->nTsSpan;
  const int iFam = s->iFam;
  size_t oQual = 0, nQual = 0;
  int nPut = 0, rc = WCS_OK;
  *pbEnd = 0;
  for (;;) {
    size_t nk, nBody, nVal;
    const uint8_t *k = view_key(v, &nk), *q, *pVal;
    uint64_t uTs;
    wcs_cell *pc;
    uint8_t *z;
    /* the first key is at the row (the caller saw it); a later one is
    ** if it kept the row's bytes from the cell before (view_shared), or
    ** else has them */
    if (nPut > 0 && view_shared(v) < o) {
      /* its first view_shared() bytes are the cell before's, whose first
      ** o are the prefix and the row (the prefix is the stream's): at
      ** the first byte after those the key mostly differs from the row,
      ** which ends it without a compare of the whole row */
      size_t j =
          view_shared(v) > ENG_PREFIX_BYTES ? view_shared(v) : ENG_PREFIX_BYTES;
      if (nk < o || k[j] != pRowT[j - ENG_PREFIX_BYTES] ||
          !wcs_same_bytes(k + ENG_PREFIX_BYTES, pRowT, nRowT)) {
        *pbEnd = 1;
        break;
      }
    }
    if (nk < o + 2 + ENG_TS_BYTES) break;
    q = k + o;
    nBody = nk - o - ENG_TS_BYTES - 2;
    if (q[nBody] != 0x00 || q[nBody + 1] != 0x01 || wcs_has_zero(q, nBody)) {
      break;
    }
    uTs = ~wcs_get64be(k + nk - ENG_TS_BYTES);
    if (uTs - uMin >= nSpan) break;
    if (nPut > 0 && nQual == nBody &&
        (nBody <= 8 ? same_short(c->data.a + oQual, q, nBody)
                    : wcs_same_bytes(c->data.a + oQual, q, nBody))) {
      break; /* a second version of the column */
    }
    pVal = view_value(v, &nVal);
    if (c->nCell >= c->nCellAlloc && grow_cells(c, c->nCell + 1)) {
      rc = WCS_NOMEM;
      break;
    }
    /* 8 bytes of slack: a short qualifier is copied as one word */
    if (c->data.nAlloc - c->data.n < nBody + nVal + 8 &&
        data_reserve(c, nBody + nVal + 8)) {
      rc = WCS_NOMEM;
      break;
    }
    oQual = c->data.n;
    nQual = nBody;
    z = c->data.a + oQual;
    c->data.n = oQual + nBody + nVal;
    pc = &c->aCell[c->nCell++];
    pc->iFamily = iFam;
    pc->zFamily = zFamily;
    pc->iTs = (int64_t)uTs;
    pc->pQual = z;
    pc->nQual = nBody;
    pc->pVal = z + nBody;
    pc->nVal = nVal;
    if (nBody <= 8) {
      uint64_t x = word(q); /* the key goes on for 10 more bytes */
      memcpy(z, &x, 8);     /* bytes past nBody: the value's room */
    } else {
      wcs_copy_short(z, q, nBody);
    }
    wcs_copy_short(z + nBody, pVal, nVal);
    nPut++;
    rc = view_next(v);
    if (rc) break;
    if (!view_valid(v)) {
      *pbEnd = 1;
      break;
    }
  }
  c->nRaw += nPut;
  *poQual = oQual;
  *pnQual = nQual;
  *pnPut = nPut;
  return rc;
}

/* Seek view v past every key that begins with k[0..n), a row's or a
** column's key prefix: it ends in the terminator 00 01, and 00 02
** follows all of them. */
static int seek_past(wcs_cursor *c, EngView *v, const uint8_t *k, size_t n) {
  int rc;
  c->tmp2.n = 0;
  rc = wcs_buf_append(&c->tmp2, k, n);
  if (rc) return rc;
  c->tmp2.a[c->tmp2.n - 1] = 0x02;
  return view_seek(v, c->tmp2.a, c->tmp2.n);
}

/*
** Forward: read the rest of the cells of row c->rowT from stream s, which
** is at one of them, keeping only those the read returns (see the file
** comment), and skip what cannot be returned by seeking once a run of
** ENG_SKIP_SEEK cells was stepped over. oQual, nQual: as below, for the
** column of the last cell kept, if nPut (cells kept by collect_plain) is
** not 0. Kept out of line, so that the plain case stays small.
*/
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int
collect_rest(wcs_cursor *c, Stream *s, int nPut, size_t oQual, size_t nQual) {
  const EngFamily *f = &c->pDef->aFam[s->iFam];
  const char *zFamily = f->zName;
  int64_t iPos = 0, nEmit = 0;
  int nSkip = 0, rc = WCS_OK, bAtRow = 1; /* the caller saw the first key */
  int bGc = f->nMaxVersions > 0 || f->iMaxAge > 0;
  c->col.n = 0;
  if (nPut > 0) {
    iPos = nEmit = 1; /* the current column's first cell was kept */
  } else {
    oQual = (size_t)-1; /* see "a new column?" below */
  }
  while (rc == WCS_OK && view_valid(s->pView)) {
    size_t nk, nCol;
    const uint8_t *k = view_key(s->pView, &nk);
    EngKey key;
    int bExp, bKeep, bColDone, bRowDone, bEsc, bNewCol = 0;
    if (!bAtRow && !at_row(c, k, nk)) break;
    bAtRow = 0;
    rc = parse_in_row(c, k, nk, &key, &bEsc);
    if (rc) return bad_key(k, nk, rc);
    nCol = nk - ENG_TS_BYTES;
    /* a new column? (same stream and row: compare the qualifiers with
    ** the column's: its escaped qualifier in c->col or, when its first
    ** cell was kept and holds no escaped 00, that cell's copy at oQual in
    ** data, nQual bytes without a 00, so equal only to the same escaped
    ** bytes; this saves copying each column's qualifier twice) */
    if (oQual == (size_t)-1
            ? (c->col.n != key.nQualT ||
               !wcs_same_bytes(c->col.a, key.pQualT, key.nQualT))
            : (nQual != key.nQualT - 2 ||
               !wcs_same_bytes(c->data.a + oQual, key.pQualT, nQual))) {
      bNewCol = 1;
      iPos = nEmit = 0;
      nSkip = 0;
    }
    bExp = bGc && eng_gc_expired(f, iPos, key.iTs, c->iNow);
    iPos++;
    bRowDone = c->bKeysOnly && c->nRaw > 0;
    bKeep = !bExp && !bRowDone && key.iTs >= c->iMinTs && key.iTs < c->iMaxTs &&
            (c->nVersions == 0 || nEmit < c->nVersions);
    if (bNewCol) {
      if (bKeep && !bEsc && !c->bKeysOnly) {
        oQual = c->data.n; /* cell_put() copies the qualifier there */
        nQual = key.nQualT - 2;
      } else {
        c->col.n = 0;
        rc = put(&c->col, key.pQualT, key.nQualT);
        if (rc) break;
        oQual = (size_t)-1;
      }
    }
    if (bKeep) {
      rc = cell_put(c, s, zFamily, &key, bEsc);
      nEmit++;
      nSkip = 0;
    } else {
      /* expiry is monotone down a column: older cells are expired too */
      bColDone = bExp || key.iTs < c->iMinTs || c->iMaxTs <= c->iMinTs ||
                 (c->nVersions > 0 && nEmit >= c->nVersions);
      if ((bColDone || bRowDone) && ++nSkip > ENG_SKIP_SEEK) {
        /* seek past the column (or, keys only, the row) */
        nSkip = 0;
        rc = seek_past(c, s->pView, k,
                       bRowDone ? ENG_PREFIX_BYTES + c->rowT.n : nCol);
        continue;
      }
      if (!bColDone && !bRowDone && key.iTs >= c->iMaxTs && c->iMaxTs > 0 &&
          f->nMaxVersions == 0 && ++nSkip > ENG_SKIP_SEEK) {
        /* newer than the time range: seek to its newest cell (MAX
        ** VERSIONS would need the positions of the cells passed over) */
        uint8_t aTs[ENG_TS_BYTES];
        wcs_put64be(aTs, eng_ts_invert(c->iMaxTs - 1));
        c->tmp2.n = 0;
        rc = wcs_buf_append(&c->tmp2, k, nCol);
        if (rc == WCS_OK) rc = wcs_buf_append(&c->tmp2, aTs, sizeof(aTs));
        if (rc) break;
        nSkip = 0;
        iPos = 0; /* unused without MAX VERSIONS */
        rc = view_seek(s->pView, c->tmp2.a, c->tmp2.n);
        continue;
      }
    }
    if (rc == WCS_OK) rc = view_next(s->pView);
  }
  if (rc == WCS_OK) s->bDone = !view_valid(s->pView);
  return rc;
}

/*
** Forward, keys only, in a family without a GC policy and with no time
** filter (Stream.bKeysPlain): the row's first cell, at any time below
** INT64_MAX, keeps it, so nothing its other cells hold can change the
** answer. They are stepped over without being parsed, and after
** ENG_SKIP_SEEK of them the stream seeks past the row, as collect_rest()
** does for keys only. Anything else goes to collect_rest().
*/
static int collect_keys(wcs_cursor *c, Stream *s) {
  EngView *v = s->pView;
  const size_t o = ENG_PREFIX_BYTES + c->rowT.n;
  size_t nk;
  const uint8_t *k = view_key(v, &nk);
  EngKey key;
  int bEsc, rc, nStep = 0;
  rc = parse_in_row(c, k, nk, &key, &bEsc);
  if (rc) return bad_key(k, nk, rc);
  if (key.iTs >= c->iMaxTs) return collect_rest(c, s, 0, 0, 0);
  c->nRaw++;
  for (;;) {
    rc = view_next(v);
    if (rc || !view_valid(v)) break;
    k = view_key(v, &nk);
    if (view_shared(v) < o && !at_row(c, k, nk)) break;
    if (++nStep > ENG_SKIP_SEEK) {
      rc = seek_past(c, v, k, o);
      break;
    }
  }
  if (rc == WCS_OK) s->bDone = !view_valid(v);
  return rc;
}

/* Forward: read the cells of row c->rowT from stream s, which is at its
** first one: collect_plain() while it can, collect_rest() for the rest
** (collect_keys() for keys only). */
__attribute__((always_inline)) static inline int collect_forward(wcs_cursor *c,
                                                                 Stream *s) {
  size_t oQual = 0, nQual = 0;
  int nPut = 0, bEnd = 0, rc;
  if (s->bKeysPlain) return collect_keys(c, s);
  if (s->bPlain) {
    rc = collect_plain(c, s, &oQual, &nQual, &nPut, &bEnd);
    if (rc) return rc;
    if (bEnd) {
      s->bDone = !view_valid(s->pView);
      return WCS_OK;
    }
  }
  return collect_rest(c, s, nPut, oQual, nQual);
}

/* Reverse assembly, at the end of a column: its cells that passed the
** time filters are staged in aCell[iCol..nCell), oldest first, aPos
** telling how many of the column's nSeen cells came before each. Keep the
** newest of them that GC by position and latest-N leave (expiry is
** monotone down a column: once a cell is expired, older ones are too). */
static void column_end(wcs_cursor *c, const EngFamily *f, int iCol,
                       int64_t nSeen) {
  int iEnd = c->nCell, j, nKeep = 0;
  for (j = iEnd - 1; j >= iCol; j--) {
    int64_t iPos = nSeen - 1 - c->aPos[j];
    if (f->nMaxVersions > 0 &&
        eng_gc_expired(f, iPos, c->aCell[j].iTs, c->iNow)) {
      break;
    }
    if (c->nVersions > 0 && nKeep >= c->nVersions) break;
    nKeep++;
  }
  if (nKeep > 0 && nKeep < iEnd - iCol) {
    memmove(&c->aCell[iCol], &c->aCell[iEnd - nKeep],
            (size_t)nKeep * sizeof(wcs_cell));
  }
  c->nCell = iCol + nKeep;
}

/* Reverse, a family's cells were read backwards into aCell[iFirst..nCell):
** put them in cell order (columns ascending, newest first) and count
** them. */
static void flip_cells(wcs_cursor *c, int iFirst) {
  int i = iFirst, j = c->nCell - 1;
  while (i < j) {
    wcs_cell t = c->aCell[i];
    c->aCell[i++] = c->aCell[j];
    c->aCell[j--] = t;
  }
  c->nRaw += c->nCell - iFirst;
}

/*
** Reverse, the common case of collect_reverse(): the latest cell of each
** column (latest-1, as the SQL table reads), in a family without a GC
** policy. The cells come backwards, each column oldest first, so each
** kept cell of a column replaces the one staged before it, bytes and
** all; a column's qualifier (escaped, in c->col) tells a new column from
** a newer cell of the same one. No position is tracked and no column is
** settled after the fact. The family's cells are then flipped into cell
** order, as collect_reverse() does.
*/
static int collect_reverse_latest(wcs_cursor *c, Stream *s) {
  const char *zFamily = s->zFamily;
  const int iFam = s->iFam, iFirst = c->nCell;
  const size_t o = ENG_PREFIX_BYTES + c->rowT.n;
  int bStaged = 0, rc = WCS_OK;
  size_t oVal = 0;  /* the staged cell's value, the last bytes in data */
  size_t oQual = 0; /* the column's qualifier, escaped as in its keys: at
                    ** oQual in data (a staged cell's, without a 00) or,
                    ** oQual (size_t)-1, in c->col */
  size_t nQual = 0; /* and its length, terminator included; 0: none yet */
  while (view_valid(s->pView)) {
    size_t nk, nQualT, nVal;
    const uint8_t *k = view_key(s->pView, &nk), *q, *pVal;
    int bEsc;
    int64_t iTs;
    wcs_cell *pc;
    if (!at_row(c, k, nk)) break;
    if (nk < o + 2 + ENG_TS_BYTES) return bad_key(k, nk, WCS_CORRUPT_BKPT);
    q = k + o;
    nQualT = nk - o - ENG_TS_BYTES;
    if (q[nQualT - 2] != 0x00 || q[nQualT - 1] != 0x01) {
      return bad_key(k, nk, WCS_CORRUPT_BKPT);
    }
    bEsc = wcs_has_zero(q, nQualT - 2);
    if (bEsc && field_scan(q, nQualT, &bEsc) != nQualT) {
      return bad_key(k, nk, WCS_CORRUPT_BKPT);
    }
    iTs = (int64_t)~wcs_get64be(k + nk - ENG_TS_BYTES);
    if (iTs < 0) return bad_key(k, nk, WCS_CORRUPT_BKPT);
    if (nQual != nQualT ||
        (oQual == (size_t)-1 ? !wcs_same_bytes(c->col.a, q, nQualT - 2)
         : nQualT - 2 <= 8
             ? !same_short(c->data.a + oQual, q, nQualT - 2)
             : !wcs_same_bytes(c->data.a + oQual, q, nQualT - 2))) {
      /* a new column (the terminators are equal) */
      bStaged = 0;
      nQual = nQualT;
      oQual = (size_t)-1;
      c->col.n = 0;
      if (bEsc || iTs < c->iMinTs || iTs >= c->iMaxTs) {
        /* kept where a staged cell's copy cannot stand for it */
        rc = put(&c->col, q, nQualT);
        if (rc) return rc;
      }
    }
    if (iTs >= c->iMinTs && iTs < c->iMaxTs) {
      pVal = view_value(s->pView, &nVal);
      if (bStaged) {
        /* a newer cell of the column: in place of the staged one */
        c->data.n = oVal;
        if (c->data.nAlloc - c->data.n < nVal + 8 &&
            data_reserve(c, nVal + 8)) {
          return WCS_NOMEM;
        }
        pc = &c->aCell[c->nCell - 1];
      } else {
        size_t oQ;
        /* the unescaped qualifier is no longer than the escaped one */
        if (c->nCell >= c->nCellAlloc && grow_cells(c, c->nCell + 1)) {
          return WCS_NOMEM;
        }
        /* 8 bytes of slack: a short qualifier is compared as one word
        ** (same_short), past the staged cell's bytes */
        if (c->data.nAlloc - c->data.n < nQualT + nVal + 8 &&
            data_reserve(c, nQualT + nVal + 8)) {
          return WCS_NOMEM;
        }
        oQ = c->data.n;
        pc = &c->aCell[c->nCell++];
        pc->iFamily = iFam;
        pc->zFamily = zFamily;
        pc->pQual = c->data.a + oQ;
        if (bEsc) {
          rc = eng_unescape(&c->data, q, nQualT - 2);
          if (rc) {
            return eng_err(rc, "malformed qualifier escape in a cell key");
          }
        } else {
          wcs_copy_short(c->data.a + oQ, q, nQualT - 2);
          c->data.n += nQualT - 2;
          if (oQual == (size_t)-1 && c->col.n == 0) oQual = oQ;
        }
        pc->nQual = c->data.n - oQ;
        bStaged = 1;
      }
      oVal = c->data.n;
      wcs_copy_short(c->data.a + oVal, pVal, nVal);
      c->data.n += nVal;
      pc->iTs = iTs;
      pc->pVal = c->data.a + oVal;
      pc->nVal = nVal;
    }
    rc = view_step(s->pView);
    if (rc) return rc;
  }
  s->bDone = !view_valid(s->pView);
  flip_cells(c, iFirst);
  return WCS_OK;
}

/*
** Reverse: read the cells of row c->rowT from stream s. They come
** backwards: columns by descending qualifier, each column oldest first, so
** a cell's position (for MAX VERSIONS) is known only at the column's end.
** Cells the time filters (and, without MAX VERSIONS, MAX AGE) pass are
** staged straight into aCell and data, the column's qualifier copied once
** for all of them; with latest-1 a newer cell of the column replaces the
** staged one, bytes and all. column_end() settles each column; the
** family's cells are then flipped into cell order (columns ascending,
** newest first).
*/
static int collect_reverse(wcs_cursor *c, Stream *s) {
  const EngFamily *f = &c->pDef->aFam[s->iFam];
  const char *zFamily = f->zName;
  int bAge = f->nMaxVersions == 0 && f->iMaxAge > 0; /* decided per cell */
  int iFirst = c->nCell, iCol = c->nCell, bCol = 0, rc = WCS_OK;
  int64_t nSeen = 0;                    /* cells of this column read */
  size_t oQual = (size_t)-1, nQual = 0; /* as in collect_forward() */
  size_t oQualU = 0, nQualU = 0;        /* the column's qualifier, unescaped, in
                                        ** data */
  size_t oVal = 0;                      /* the last staged value in data */
  if (c->nVersions == 1 && !c->bKeysOnly && f->nMaxVersions <= 0 &&
      f->iMaxAge <= 0) {
    return collect_reverse_latest(c, s);
  }
  c->col.n = 0;
  while (rc == WCS_OK && view_valid(s->pView)) {
    size_t nk;
    const uint8_t *k = view_key(s->pView, &nk);
    EngKey key;
    int bEsc;
    wcs_cell *pc;
    if (!at_row(c, k, nk)) break;
    rc = parse_in_row(c, k, nk, &key, &bEsc);
    if (rc) return bad_key(k, nk, rc);
    if (!bCol ||
        (oQual == (size_t)-1
             ? (c->col.n != key.nQualT ||
                !wcs_same_bytes(c->col.a, key.pQualT, key.nQualT))
             : (nQual != key.nQualT - 2 ||
                !wcs_same_bytes(c->data.a + oQual, key.pQualT, nQual)))) {
      /* a new column */
      if (bCol) column_end(c, f, iCol, nSeen);
      bCol = 1;
      iCol = c->nCell;
      nSeen = 0;
      oQual = (size_t)-1;
      if (bEsc || c->bKeysOnly) {
        c->col.n = 0;
        rc = put(&c->col, key.pQualT, key.nQualT);
        if (rc) break;
      }
      if (!c->bKeysOnly) {
        /* the unescaped form is no longer than the escaped one */
        if (c->data.nAlloc - c->data.n < key.nQualT &&
            data_reserve(c, key.nQualT)) {
          rc = WCS_NOMEM;
          break;
        }
        oQualU = c->data.n;
        if (bEsc) {
          rc = eng_unescape(&c->data, key.pQualT, key.nQualT - 2);
          if (rc) {
            return eng_err(rc, "malformed qualifier escape in a cell key");
          }
        } else {
          memcpy(c->data.a + c->data.n, key.pQualT, key.nQualT - 2);
          c->data.n += key.nQualT - 2;
          oQual = oQualU;
          nQual = key.nQualT - 2;
        }
        nQualU = c->data.n - oQualU;
      }
    }
    if (key.iTs >= c->iMinTs && key.iTs < c->iMaxTs &&
        !(bAge && eng_gc_expired(f, 0, key.iTs, c->iNow))) {
      if (c->nVersions == 1 && c->nCell > iCol) {
        /* latest-1: this newer cell replaces the staged one, whose value
        ** is the last bytes written */
        c->nCell = iCol;
        if (!c->bKeysOnly) c->data.n = oVal;
      }
      if ((c->nCell >= c->nCellAlloc && grow_cells(c, c->nCell + 1)) ||
          (c->nCell >= c->nPosAlloc && grow_pos(c, c->nCell + 1))) {
        rc = WCS_NOMEM;
        break;
      }
      c->aPos[c->nCell] = nSeen;
      pc = &c->aCell[c->nCell];
      pc->iFamily = s->iFam;
      pc->zFamily = zFamily;
      pc->iTs = key.iTs;
      pc->pQual = NULL;
      pc->nQual = 0;
      pc->pVal = NULL;
      pc->nVal = 0;
      if (!c->bKeysOnly) {
        size_t nVal;
        const uint8_t *pVal = view_value(s->pView, &nVal);
        if (c->data.nAlloc - c->data.n < nVal && data_reserve(c, nVal)) {
          rc = WCS_NOMEM;
          break;
        }
        oVal = c->data.n;
        if (nVal) memcpy(c->data.a + oVal, pVal, nVal);
        c->data.n += nVal;
        pc->pQual = c->data.a + oQualU;
        pc->nQual = nQualU;
        pc->pVal = c->data.a + oVal;
        pc->nVal = nVal;
      }
      c->nCell++;
    }
    nSeen++;
    rc = view_step(s->pView);
  }
  if (rc) return rc;
  s->bDone = !view_valid(s->pView);
  if (bCol) column_end(c, f, iCol, nSeen);
  flip_cells(c, iFirst);
  if (c->bKeysOnly) c->nCell = iFirst; /* keys only: no cells */
  return WCS_OK;
}

/* Set c->pos to the successor bound of row rowT (forward: just past the
** row; reverse: just below it). The bound is rowT itself, its terminator
** 00 01 made 00 02 forward: the two buffers trade places rather than
** copy, which leaves rowT undefined until the next candidate is put. */
static inline void pos_past_row(wcs_cursor *c) {
  wcs_buf t = c->pos;
  c->pos = c->rowT;
  c->rowT = t;
  c->bPosOpen = 0;
  c->bPlaced = 0;
  if (!c->bReverse) c->pos.a[c->pos.n - 1] = 0x02;
}

/* Count the rows read since the last flush in the heat map, under the
** key of the last row read. Counting in batches keeps the stats lock and
** the clock out of the per-row path of scans; a batch spans at most
** ENG_HEAT_BATCH consecutive rows, so it lands in the bucket of its
** neighbours, and totals stay exact. A read of fewer rows counts once,
** when it ends (at its close, or at its end of rows). */
static void heat_flush(wcs_cursor *c) {
  if (c->nHeat == 0) return;
  if (!c->bNoHeat) {
    eng_stats_count(c->pEng, c->pDef, 0, c->row.a, c->row.n, c->nHeat);
  }
  c->nHeat = 0;
}

/* After a row's cells were collected: the bound moves past the row, and
** the row, if it kept a cell and the cell filter keeps it, is counted
** (1); with none it is not a row, and one the filter passes over is not
** returned (0). The end of both advance_one() and advance(), always
** inline (with GCC's choice the per-row path took 0.3% more
** instructions). */
__attribute__((always_inline)) static inline int row_done(wcs_cursor *c) {
  pos_past_row(c);
  c->bPlaced = 1;
  if (c->nRaw == 0) return 0;
  if (c->xCellFilter &&
      !c->xCellFilter(c->pCellFilterCtx, c->aCell, c->nCell)) {
    return 0;
  }
  c->nRows++;
  if (++c->nHeat >= ENG_HEAT_BATCH) heat_flush(c);
  return 1;
}

#define LO(i)     (c->rangeBuf.a + c->aRange[i].oLo)
#define HI(i)     (c->rangeBuf.a + c->aRange[i].oHi)
#define NLO(i)    (c->aRange[i].nLo)
#define NHI(i)    (c->aRange[i].nHi)
#define HIOPEN(i) (c->aRange[i].bHiOpen)

/*
** Forward: whether escaped row r[0..n) (with its terminator) is below the
** end of the current range. A row below the end that shares L bytes with
** it is smaller at byte L; the next row sharing more than L bytes with it
** has that same byte L, so it is below the end too, and shares exactly L
** bytes with it. So once a row was compared, the next row of one stream,
** just past it (bNext), needs no compare while the stream's key keeps more
** than L bytes of the key before it, the row's last cell; a prefix scan
** compares one row per block, not every row.
*/
static inline int below_end(wcs_cursor *c, int bNext, const uint8_t *r,
                            size_t n) {
  const uint8_t *pHi = HI(c->iRange);
  size_t nHi = NHI(c->iRange), m = n < nHi ? n : nHi, l;
  if (bNext && c->iHiRange == c->iRange && c->nStream == 1 &&
      view_shared(c->aStream[0].pView) > ENG_PREFIX_BYTES + c->nHiLcp) {
    return 1;
  }
  l = wcs_common_prefix(r, pHi, m);
  if (l < m ? r[l] > pHi[l] : n >= nHi) return 0;
  c->iHiRange = c->iRange;
  c->nHiLcp = l;
  return 1;
}

/*
** advance() for its most common step, inline. Forward (bRev 0): every
** stream of a family collect_plain() or collect_keys() reads (no
** overlay), just past a row (bPlaced), the first stream at the next row's
** first cell and every other one at that same row (the families hold the
** same rows, as they usually do), the row unescaped, below the range's
** end and passing the row filter without a call. Backward (bRev 1): any
** reverse read without an overlay, the first stream at the last cell of
** the row before the one assembled, and the same otherwise but for the
** range: that row is below the bound (the row just assembled) and so
** below the range's end too, and of the bound checks advance() makes per
** row only the one against the range's start is left. Returns 1 with
** that row assembled; 0 without a change when the step is anything else
** (a stream at another row or done among them), for advance() to take; 2
** when the streams moved but gave no row (no cell kept, or an error in
** *pRc), for advance() to go on from.
*/
__attribute__((always_inline)) static inline int
advance_one(wcs_cursor *c, int *pRc, const int bMulti, const int bRev) {
  Stream *s = &c->aStream[0];
  size_t nRowT;
  const uint8_t *pRowT;
  int rc, i;
  if (s->bDone || !view_valid(s->pView)) return 0;
  /* (row_known needs the stream's previous key to be of the row before,
  ** which only a stream read alone forward is sure of) */
  rc = stream_row(s, bMulti || bRev ? 0 : row_known(c, s));
  if (rc) return 0; /* advance() finds the same */
  /* (a row filter's run is of unescaped rows: compared with those) */
  if (s->bRowEsc && c->xRowFilter) return 0;
  pRowT = s->pRowT;
  nRowT = s->nRowT;
  /* escaped rows with their terminator are prefix-free: a stream whose
  ** key begins with the row's is at that row, and so no stream is at an
  ** earlier (backward: a later) one */
  for (i = 1; bMulti && i < c->nStream; i++) {
    Stream *t = &c->aStream[i];
    const uint8_t *k;
    size_t nk;
    if (t->bDone || !view_valid(t->pView)) return 0;
    k = view_key(t->pView, &nk);
    if (nk < ENG_PREFIX_BYTES + nRowT ||
        !wcs_same_bytes(k + ENG_PREFIX_BYTES, pRowT, nRowT)) {
      return 0;
    }
  }
  if (bRev) {
    if (wcs_bytes_cmp(pRowT, nRowT, LO(c->iRange), NLO(c->iRange)) < 0) {
      return 0;
    }
  } else if (!HIOPEN(c->iRange) && !below_end(c, 1, pRowT, nRowT)) {
    return 0;
  }
  if (c->xRowFilter &&
      !(c->bEmitPrefix && nRowT - 2 >= c->emitPrefix.n &&
        wcs_same_bytes(pRowT, c->emitPrefix.a, c->emitPrefix.n))) {
    return 0;
  }
  c->bPlaced = 0;
  c->bRowEsc = s->bRowEsc;
  c->rowT.n = 0;
  c->row.n = 0;
  c->nRaw = 0;
  c->nCell = 0;
  c->data.n = 0;
  rc = put(&c->rowT, pRowT, nRowT);
  if (rc == WCS_OK && !c->bRowEsc) rc = put(&c->row, pRowT, nRowT - 2);
  if (rc == WCS_OK && c->bRowEsc) {
    /* a row with a 00 byte (ORDERED CODE fields, a salt bucket 00) */
    rc = eng_unescape(&c->row, pRowT, nRowT - 2);
    if (rc) rc = eng_err(rc, "malformed row key escape in a cell key");
  }
  for (i = 0; rc == WCS_OK && i < (bMulti ? c->nStream : 1); i++) {
    Stream *t = &c->aStream[i];
    rc = bRev ? collect_reverse(c, t) : collect_forward(c, t);
  }
  if (rc) {
    *pRc = rc;
    return 2;
  }
  return row_done(c) ? 1 : 2;
}

/* Find and assemble the next row at or beyond c->pos. */
static int advance(wcs_cursor *c) {
  int rc = WCS_OK;
  for (;;) {
    const uint8_t *b;
    size_t nb;
    int bOpen = 0, i, iBest = -1, v = WCS_ROW_EMIT;
    const uint8_t *pBest = NULL;
    size_t nBest = 0;
    const int bNext = c->bPlaced && !c->bReseek; /* just past a row */

    if (c->nRowLimit && c->nRows >= c->nRowLimit) break;
    if (c->bPointRead && bNext && c->nRows > 0) break;
    if ((c->bOneFwd || c->bOneRev) && bNext) {
      int r = c->bOneRev        ? advance_one(c, &rc, 1, 1)
              : c->nStream == 1 ? advance_one(c, &rc, 0, 0)
                                : advance_one(c, &rc, 1, 0);
      if (r == 1) return WCS_OK;
      if (rc) break;
      if (r == 2) continue;
    }
    /* the range holding the bound */
    if (!c->bReverse) {
      /* just past a row of the current range (bPlaced), the bound is
      ** above its start, and the next candidate is checked against its
      ** end below: a bound at or past the end makes it a candidate past
      ** it too, which moves on to the next range from there */
      if (!c->bPlaced) {
        while (c->iRange < c->nRange && !HIOPEN(c->iRange) &&
               wcs_bytes_cmp(c->pos.a, c->pos.n, HI(c->iRange),
                             NHI(c->iRange)) >= 0) {
          c->iRange++;
        }
        if (c->iRange >= c->nRange) break;
        if (wcs_bytes_cmp(c->pos.a, c->pos.n, LO(c->iRange), NLO(c->iRange)) <
            0) {
          c->pos.n = 0;
          rc = wcs_buf_append(&c->pos, LO(c->iRange), NLO(c->iRange));
          if (rc) break;
        }
      }
      b = c->pos.a;
      nb = c->pos.n;
    } else {
      while (c->iRange >= 0 && !c->bPosOpen &&
             wcs_bytes_cmp(LO(c->iRange), NLO(c->iRange), c->pos.a, c->pos.n) >=
                 0) {
        c->iRange--;
      }
      if (c->iRange < 0) break;
      if (!HIOPEN(c->iRange) &&
          (c->bPosOpen || wcs_bytes_cmp(HI(c->iRange), NHI(c->iRange), c->pos.a,
                                        c->pos.n) < 0)) {
        c->pos.n = 0;
        c->bPosOpen = 0;
        c->bPlaced = 0;
        rc = wcs_buf_append(&c->pos, HI(c->iRange), NHI(c->iRange));
        if (rc) break;
      }
      b = c->pos.a;
      nb = c->pos.n;
      bOpen = c->bPosOpen;
    }
    /* place the streams and pick the candidate row; right after a row
    ** was assembled every stream is beyond it, so only a stream whose
    ** overlay changed may have to settle again (view_sync) */
    for (i = 0; rc == WCS_OK && i < c->nStream; i++) {
      Stream *s = &c->aStream[i];
      if (c->bReseek) s->bDone = 0;
      if (c->bPlaced && !c->bReseek) {
        if (s->bDone) continue;
        if (c->bOverlay) {
          rc = view_sync(s->pView);
          if (rc) break;
        }
        if (!view_valid(s->pView)) {
          s->bDone = 1;
          continue;
        }
      } else {
        rc = stream_place(c, s, b, nb, bOpen, c->bReseek);
        if (rc || s->bDone) continue;
      }
      if (iBest >= 0) {
        size_t nk;
        const uint8_t *k = view_key(s->pView, &nk);
        if (nk >= ENG_PREFIX_BYTES + nBest &&
            wcs_same_bytes(k + ENG_PREFIX_BYTES, pBest, nBest)) {
          /* at the best row (escaped rows with their terminator are
          ** prefix-free): no need to find the row's end again */
          s->pRowT = k + ENG_PREFIX_BYTES;
          s->nRowT = nBest;
          s->bRowEsc = c->aStream[iBest].bRowEsc;
          s->iSameAs = iBest; /* a later, better row makes this stale */
          continue;
        }
      }
      /* just past a row, one stream: the row it left tells where this
      ** row's terminator can be */
      rc = stream_row(s, c->nStream == 1 && c->bPlaced && !c->bReseek &&
                                 !c->bReverse
                             ? row_known(c, s)
                             : 0);
      if (rc) break;
      s->iSameAs = -1;
      if (iBest < 0 ||
          (c->bReverse ? wcs_bytes_cmp(s->pRowT, s->nRowT, pBest, nBest) > 0
                       : wcs_bytes_cmp(s->pRowT, s->nRowT, pBest, nBest) < 0)) {
        iBest = i;
        pBest = s->pRowT;
        nBest = s->nRowT;
      }
    }
    c->bReseek = 0;
    c->bPlaced = 0;
    if (rc || iBest < 0) break;
    c->rowT.n = 0;
    c->bRowEsc = c->aStream[iBest].bRowEsc;
    rc = put(&c->rowT, pBest, nBest);
    if (rc) break;
    /* outside the current range: move the bound to the candidate */
    if (!c->bReverse) {
      /* (from the stream's key, which has not moved: rowT's bytes were
      ** just stored, see below) */
      if (!HIOPEN(c->iRange) && !below_end(c, bNext, pBest, nBest)) {
        c->pos.n = 0;
        rc = wcs_buf_append(&c->pos, c->rowT.a, c->rowT.n);
        if (rc) break;
        continue; /* bPlaced is 0 */
      }
    } else if (wcs_bytes_cmp(c->rowT.a, c->rowT.n, LO(c->iRange),
                             NLO(c->iRange)) < 0) {
      pos_past_row(c);
      c->pos.a[c->pos.n - 1] = 0x02; /* rows < C include this one */
      continue;
    }
    c->row.n = 0;
    if (c->bRowEsc) {
      rc = eng_unescape(&c->row, c->rowT.a, c->rowT.n - 2);
      if (rc) {
        eng_err(rc, "malformed row key escape in a cell key");
        break;
      }
    } else {
      /* from the stream's key, which has not moved, rather than from
      ** rowT: its bytes were just stored, and loads that straddle two
      ** stores in flight wait for both to reach the cache */
      rc = put(&c->row, pBest, nBest - 2);
      if (rc) break;
    }
    if (c->xRowFilter && c->bEmitPrefix && c->row.n >= c->emitPrefix.n &&
        wcs_same_bytes(c->row.a, c->emitPrefix.a, c->emitPrefix.n)) {
      v = WCS_ROW_EMIT; /* in the run the filter passed as a whole */
    } else if (c->xRowFilter) {
      const void *pSeek = NULL;
      size_t nSeek = 0;
      v = c->xRowFilter(c->pFilterCtx, c->row.a, c->row.n, &pSeek, &nSeek);
      if (v == WCS_ROW_EMIT_PREFIX) {
        c->bEmitPrefix = 0;
        if (nSeek > c->row.n || memcmp(pSeek, c->row.a, nSeek) != 0) {
          rc = eng_err(WCS_MISUSE, "row filter gave a prefix the row does "
                                   "not have");
          break;
        }
        c->emitPrefix.n = 0;
        rc = wcs_buf_append(&c->emitPrefix, pSeek, nSeek);
        if (rc) break;
        c->bEmitPrefix = 1;
        v = WCS_ROW_EMIT;
      }
      if (v == WCS_ROW_DONE) break;
      if (v == WCS_ROW_SEEK) {
        c->tmp2.n = 0;
        rc = eng_escape(&c->tmp2, pSeek, nSeek);
        if (rc) break;
        if (!c->bReverse
                ? wcs_bytes_cmp(c->tmp2.a, c->tmp2.n, c->rowT.a, c->rowT.n) > 0
                : wcs_bytes_cmp(c->tmp2.a, c->tmp2.n, c->rowT.a, c->rowT.n) <
                      0) {
          c->pos.n = 0;
          c->bPosOpen = 0;
          rc = wcs_buf_append(&c->pos, c->tmp2.a, c->tmp2.n);
          if (rc) break;
          continue;
        }
        v = WCS_ROW_SKIP;
      }
      if (v == WCS_ROW_SKIP) {
        pos_past_row(c);
        continue;
      }
      if (v != WCS_ROW_EMIT) {
        rc = eng_err(v, "row filter returned %d", v);
        break;
      }
    }
    /* assemble */
    c->nRaw = 0;
    c->nCell = 0;
    c->data.n = 0;
    for (i = 0; rc == WCS_OK && i < c->nStream; i++) {
      Stream *s = &c->aStream[i];
      if (s->bDone) continue;
      /* the candidate pass found s at the best row (a stream before the
      ** best one cannot be at its row: it would have been the best) */
      if (i == iBest || s->iSameAs == iBest) {
        rc = c->bReverse ? collect_reverse(c, s) : collect_forward(c, s);
      }
    }
    if (rc) break;
    if (row_done(c)) return WCS_OK;
    /* no cell left: not a row */
  }
  heat_flush(c);
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

static int range_cmp_r(const void *a, const void *b, void *ctx) {
  const Range *x = a, *y = b;
  const uint8_t *base = ctx;
  return wcs_bytes_cmp(base + x->oLo, x->nLo, base + y->oLo, y->nLo);
}

/* Normalize the ranges into c->aRange: escape, drop empty ones, sort,
** merge overlapping or touching ones. */
static int set_ranges(wcs_cursor *c, const wcs_key_range *aRange, int nRange) {
  wcs_key_range all;
  Range *a;
  int i, n = 0, rc = WCS_OK;
  c->nRange = 0;
  c->rangeBuf.n = 0;
  /* LO()/HI() add offsets to rangeBuf.a, which stays NULL while every
  ** bound is empty (a full scan): NULL + 0 is undefined in C */
  if (wcs_buf_reserve(&c->rangeBuf, 1)) return WCS_NOMEM;
  if (aRange == NULL || nRange <= 0) {
    memset(&all, 0, sizeof(all));
    aRange = &all;
    nRange = 1;
  }
  if (nRange > c->nRangeAlloc) {
    Range *a1 = realloc(c->aRange, (size_t)nRange * sizeof(Range));
    Range *a2 =
        a1 ? realloc(c->aRangeTmp, (size_t)nRange * sizeof(Range)) : NULL;
    if (a1) c->aRange = a1;
    if (a2) c->aRangeTmp = a2;
    if (a1 == NULL || a2 == NULL) return WCS_NOMEM;
    c->nRangeAlloc = nRange;
  }
  a = c->aRangeTmp;
  if (nRange == 1 && aRange[0].pStart && aRange[0].pEnd &&
      aRange[0].nStart > 0 && !aRange[0].bStartExcl && aRange[0].bEndIncl &&
      aRange[0].nEnd == aRange[0].nStart &&
      memcmp(aRange[0].pStart, aRange[0].pEnd, aRange[0].nStart) == 0) {
    /* one row (a point read): [esc(r), esc(r) 00 02), escaped once */
    Range *r = &c->aRange[0];
    rc = eng_escape(&c->rangeBuf, aRange[0].pStart, aRange[0].nStart);
    r->oLo = 0;
    r->nLo = c->rangeBuf.n;
    if (rc == WCS_OK) rc = wcs_buf_reserve(&c->rangeBuf, r->nLo + 2);
    if (rc) return rc;
    r->oHi = c->rangeBuf.n;
    r->nHi = r->nLo + 2;
    r->bHiOpen = 0;
    memcpy(c->rangeBuf.a + r->oHi, c->rangeBuf.a, r->nLo);
    c->rangeBuf.a[r->oHi + r->nLo] = 0x00;
    c->rangeBuf.a[r->oHi + r->nLo + 1] = 0x02;
    c->rangeBuf.n += r->nHi;
    c->nRange = 1;
    return WCS_OK;
  }
  for (i = 0; rc == WCS_OK && i < nRange; i++) {
    int bHiOpen;
    wcs_buf *lo = &c->tmp, *hi = &c->tmp2;
    rc = eng_range_bounds(&aRange[i], lo, hi, &bHiOpen);
    if (rc) break;
    if (!bHiOpen && wcs_bytes_cmp(lo->a, lo->n, hi->a, hi->n) >= 0) continue;
    a[n].oLo = c->rangeBuf.n;
    a[n].nLo = lo->n;
    rc = wcs_buf_append(&c->rangeBuf, lo->a, lo->n);
    a[n].oHi = c->rangeBuf.n;
    a[n].nHi = bHiOpen ? 0 : hi->n;
    if (rc == WCS_OK && !bHiOpen)
      rc = wcs_buf_append(&c->rangeBuf, hi->a, hi->n);
    a[n].bHiOpen = bHiOpen;
    n++;
  }
  if (rc == WCS_OK && n > 1) {
    qsort_r(a, (size_t)n, sizeof(Range), range_cmp_r, c->rangeBuf.a);
  }
  for (i = 0; rc == WCS_OK && i < n; i++) {
    int k = c->nRange;
    const uint8_t *base = c->rangeBuf.a;
    if (k > 0 && (HIOPEN(k - 1) || wcs_bytes_cmp(base + a[i].oLo, a[i].nLo,
                                                 HI(k - 1), NHI(k - 1)) <= 0)) {
      /* overlaps or touches the previous range: extend it */
      if (!HIOPEN(k - 1)) {
        if (a[i].bHiOpen) {
          c->aRange[k - 1].bHiOpen = 1;
        } else if (wcs_bytes_cmp(base + a[i].oHi, a[i].nHi, HI(k - 1),
                                 NHI(k - 1)) > 0) {
          c->aRange[k - 1].oHi = a[i].oHi;
          c->aRange[k - 1].nHi = a[i].nHi;
        }
      }
      continue;
    }
    c->aRange[k] = a[i];
    c->nRange++;
  }
  return rc;
}

/* ------------------------------------------------------------------ */
/* the pool of idle cursors                                            */

/* Free the storage iterators of c's views; keep the views' memory. */
static void release_views(wcs_cursor *c) {
  int i;
  for (i = 0; c->aSlot && i < c->pDef->nFam; i++) {
    if (c->aSlot[i].pView) view_release(c->aSlot[i].pView);
    if (c->aProof && c->aProof[i].pIter) {
      wcs_iter_free(c->aProof[i].pIter);
      c->aProof[i].pIter = NULL; /* and with it what its notes said */
    }
  }
}

/* Drop c's copy of the overlay and its moment (wcs_cursor_freeze, _at, a
** read's pMoment): views still reading either move to pLive at their
** keys (wcs_cursor_thaw), or, pLive NULL, are unpositioned and read no
** overlay until they are aimed again. */
static void thaw_to(wcs_cursor *c, Overlay *pLive) {
  int i;
  if (c->pOvCopy == NULL && c->pMoment == NULL) return;
  for (i = 0; c->aSlot && i < c->pDef->nFam; i++) {
    EngView *v = c->aSlot[i].pView;
    Overlay *pOv = v ? view_overlay(v) : NULL;
    if (pOv == NULL ||
        (pOv != c->pOvCopy && (c->pMoment == NULL || pOv != c->pMoment->pOv))) {
      continue;
    }
    if (pLive) {
      view_detach(v, pLive);
    } else {
      view_retarget(v, NULL, c->bReverse);
    }
  }
  ov_free(c->pOvCopy);
  c->pOvCopy = NULL;
  eng_moment_unref(c->pMoment);
  c->pMoment = NULL;
}

static void thaw(wcs_cursor *c) {
  thaw_to(c, NULL);
}

void wcs_cursor_thaw(wcs_cursor *c) {
  if (c == NULL || c->pTxn == NULL || !c->bOverlay) return;
  thaw_to(c, c->pTxn->pOv);
}

/* The overlay c's views read, or NULL: every view of one read reads the
** same. */
static Overlay *read_overlay(const wcs_cursor *c) {
  int i;
  for (i = 0; i < c->nStream; i++) {
    Overlay *pOv =
        c->aStream[i].pView ? view_overlay(c->aStream[i].pView) : NULL;
    if (pOv) return pOv;
  }
  return NULL;
}

/* Aim c's streams at overlay pOv (a copy or a moment's) at their keys. */
static void detach_streams(wcs_cursor *c, Overlay *pOv) {
  int i;
  for (i = 0; i < c->nStream; i++) {
    if (c->aStream[i].pView) view_detach(c->aStream[i].pView, pOv);
  }
}

int wcs_cursor_freeze(wcs_cursor *c) {
  Overlay *pSrc, *pCopy;
  int rc;
  if (c == NULL || c->pTxn == NULL || !c->bOverlay || c->pOvCopy ||
      c->pMoment) {
    return WCS_OK;
  }
  /* the overlay the views read: the transaction's now, or, after a
  ** commit, the one kept for the cursors open then */
  pSrc = read_overlay(c);
  if (pSrc == NULL) return WCS_OK;
  rc = ov_clone(pSrc, &pCopy);
  if (rc != WCS_OK) return eng_err(rc, "out of memory");
  detach_streams(c, pCopy);
  c->pOvCopy = pCopy;
  return WCS_OK;
}

int wcs_cursor_freeze_at(wcs_cursor *c, wcs_moment *m) {
  if (c == NULL || m == NULL || c->pTxn == NULL || !c->bOverlay || c->pOvCopy ||
      c->pMoment) {
    return WCS_OK;
  }
  if (m->pTxn != c->pTxn) {
    return eng_err(WCS_MISUSE, "the moment is of another transaction than "
                               "the cursor's");
  }
  if (read_overlay(c) != c->pTxn->pOv) return wcs_cursor_freeze(c);
  m->nRef++;
  c->pMoment = m;
  detach_streams(c, m->pOv);
  return WCS_OK;
}

static void cursor_free(wcs_cursor *c) {
  int i;
  if (c == NULL) return;
  thaw(c);
  for (i = 0; c->aSlot && i < c->pDef->nFam; i++) {
    view_free(c->aSlot[i].pView);
    if (c->aProof) wcs_iter_free(c->aProof[i].pIter);
  }
  free(c->aProof);
  free(c->aSlot);
  free(c->abFam);
  free(c->aStream);
  if (c->pSnap) wcs_snapshot_free(c->pEng->db, c->pSnap);
  if (c->pTxn) eng_txn_cursor_closed(c->pTxn);
  eng_def_unref(c->pEng, c->pDef);
  free(c->aRange);
  free(c->aRangeTmp);
  wcs_buf_free(&c->rangeBuf);
  wcs_buf_free(&c->pos);
  wcs_buf_free(&c->rowT);
  wcs_buf_free(&c->row);
  wcs_buf_free(&c->data);
  wcs_buf_free(&c->col);
  wcs_buf_free(&c->lower);
  wcs_buf_free(&c->upper);
  wcs_buf_free(&c->prefix);
  wcs_buf_free(&c->emitPrefix);
  wcs_buf_free(&c->tmp);
  wcs_buf_free(&c->tmp2);
  free(c->aPos);
  free(c->aCell);
  free(c);
}

/* Release the iterators of cursors idle for ENG_IDLE_MICROS (poolMu
** held): they pin files and memtables that flushes and compactions would
** free. Runs at most every ENG_SWEEP_MICROS. */
static void pool_sweep(wcs_engine *pEng, int64_t tNow) {
  wcs_cursor *c;
  if (tNow - pEng->iPoolSweep < ENG_SWEEP_MICROS) return;
  pEng->iPoolSweep = tNow;
  for (c = pEng->pPool; c; c = c->pPoolNext) {
    if (tNow - c->iIdleSince >= ENG_IDLE_MICROS) release_views(c);
  }
}

/* An idle cursor on pDef, or NULL. */
static wcs_cursor *pool_take(wcs_engine *pEng, EngDef *pDef, int64_t tNow) {
  wcs_cursor *c, **pp;
  pthread_mutex_lock(&pEng->poolMu);
  for (pp = &pEng->pPool; (c = *pp) != NULL; pp = &c->pPoolNext) {
    if (c->pDef == pDef) {
      *pp = c->pPoolNext;
      c->pPoolNext = NULL;
      pEng->nPool--;
      break;
    }
  }
  pool_sweep(pEng, tNow);
  pthread_mutex_unlock(&pEng->poolMu);
  return c;
}

/* Free what one big row left behind, so that idle cursors stay small. */
static void trim_buffers(wcs_cursor *c) {
  if (c->data.nAlloc > ENG_POOL_KEEP_BYTES) wcs_buf_free(&c->data);
  if (c->rangeBuf.nAlloc > ENG_POOL_KEEP_BYTES) wcs_buf_free(&c->rangeBuf);
  if ((size_t)c->nPosAlloc * sizeof(int64_t) > ENG_POOL_KEEP_BYTES) {
    free(c->aPos);
    c->aPos = NULL;
    c->nPosAlloc = 0;
  }
  if ((size_t)c->nCellAlloc * sizeof(wcs_cell) > ENG_POOL_KEEP_BYTES) {
    free(c->aCell);
    c->aCell = NULL;
    c->nCellAlloc = 0;
  }
  if ((size_t)c->nRangeAlloc * sizeof(Range) > ENG_POOL_KEEP_BYTES) {
    free(c->aRange);
    free(c->aRangeTmp);
    c->aRange = c->aRangeTmp = NULL;
    c->nRangeAlloc = 0;
  }
}

/* Keep c for reuse; the least recently closed cursor beyond
** ENG_POOL_MAX is freed. A cursor on a stale definition is freed. */
static void pool_put(wcs_cursor *c) {
  wcs_engine *pEng = c->pEng;
  wcs_cursor *pDrop = NULL;
  if (c->pDef->bStale) {
    cursor_free(c);
    return;
  }
  trim_buffers(c);
  c->iIdleSince = mono_micros();
  pthread_mutex_lock(&pEng->poolMu);
  c->pPoolNext = pEng->pPool;
  pEng->pPool = c;
  if (++pEng->nPool > ENG_POOL_MAX) {
    wcs_cursor **pp = &pEng->pPool;
    while ((*pp)->pPoolNext)
      pp = &(*pp)->pPoolNext;
    pDrop = *pp;
    *pp = NULL;
    pEng->nPool--;
  }
  pool_sweep(pEng, c->iIdleSince);
  pthread_mutex_unlock(&pEng->poolMu);
  cursor_free(pDrop);
}

void eng_pool_release_views(wcs_engine *pEng) {
  wcs_cursor *c;
  pthread_mutex_lock(&pEng->poolMu);
  for (c = pEng->pPool; c; c = c->pPoolNext)
    release_views(c);
  pthread_mutex_unlock(&pEng->poolMu);
}

void eng_pool_clear(wcs_engine *pEng) {
  wcs_cursor *c;
  pthread_mutex_lock(&pEng->poolMu);
  c = pEng->pPool;
  pEng->pPool = NULL;
  pEng->nPool = 0;
  pthread_mutex_unlock(&pEng->poolMu);
  while (c) {
    wcs_cursor *pNext = c->pPoolNext;
    cursor_free(c);
    c = pNext;
  }
}

/* ------------------------------------------------------------------ */
/* open / close                                                        */

static wcs_cursor *cursor_new(wcs_engine *pEng, EngDef *pDef) {
  wcs_cursor *c = calloc(1, sizeof(*c));
  size_t nFam = (size_t)(pDef->nFam ? pDef->nFam : 1);
  if (c == NULL) return NULL;
  c->pEng = pEng;
  c->pDef = pDef;
  eng_def_ref(pEng, pDef);
  c->aSlot = calloc(nFam, sizeof(Slot));
  c->abFam = calloc(nFam, 1);
  c->aStream = calloc(nFam, sizeof(Stream));
  if (!c->aSlot || !c->abFam || !c->aStream) {
    cursor_free(c);
    return NULL;
  }
  return c;
}

/* What a stream's iterator is aimed at (stream_bounds): the open's
** ranges; one row, with its bloom prefix; or the whole family, with no
** prefix, where a read's rows are found by a seek (the cursor keeps to
** its ranges) and the iterator serves the next read after a refresh. */
#define STREAM_RANGE  0
#define STREAM_ROW    1
#define STREAM_FAMILY 2

/* Append to b the bloom prefix of a point read's row in the family of
** prefix aPre: P|esc(row) 00 01 (doc/engine.md, section 1), the one
** range being [esc(row), esc(row) 00 02). */
static int put_row_prefix(wcs_cursor *c, wcs_buf *b, const uint8_t *aPre) {
  int rc = put(b, aPre, ENG_PREFIX_BYTES);
  if (rc == WCS_OK) rc = put(b, LO(0), NLO(0));
  if (rc == WCS_OK) rc = put(b, "\x00\x01", 2);
  return rc;
}

/* The bounds of family i's iterator for this open (eMode, above):
** [P|lo(first range), P|hi(last range)) or the family's end; with
** STREAM_ROW also the row's bloom prefix P|esc(row) 00 01; with
** STREAM_FAMILY [P, the family's end). bAgain: c->lower, c->upper and
** c->prefix hold the bounds of another family of this open in the same
** mode, so that only the family id in P differs (unless upper is a
** family's end). */
static int stream_bounds(wcs_cursor *c, int i, int eMode, int bAgain) {
  const EngDef *d = c->pDef;
  uint16_t iFid = d->aFam[i].iFid;
  uint8_t aPre[ENG_PREFIX_BYTES];
  int bPoint = eMode == STREAM_ROW, rc;
  if (eMode == STREAM_FAMILY) {
    c->lower.n = c->upper.n = c->prefix.n = 0;
    rc = eng_put_prefix(&c->lower, d->iTid, iFid);
    if (rc == WCS_OK) rc = eng_put_family_end(&c->upper, d->iTid, iFid);
    return rc;
  }
  if (bAgain && c->nRange > 0 && !HIOPEN(c->nRange - 1)) {
    c->lower.a[4] = c->upper.a[4] = (uint8_t)(iFid >> 8);
    c->lower.a[5] = c->upper.a[5] = (uint8_t)iFid;
    if (bPoint) {
      c->prefix.a[4] = (uint8_t)(iFid >> 8);
      c->prefix.a[5] = (uint8_t)iFid;
    }
    return WCS_OK;
  }
  /* the family's prefix P, built once and copied inline: this runs for
  ** every family of every open */
  eng_prefix_bytes(aPre, d->iTid, iFid);
  c->lower.n = c->upper.n = c->prefix.n = 0;
  rc = put(&c->lower, aPre, ENG_PREFIX_BYTES);
  if (rc == WCS_OK && c->nRange > 0) rc = put(&c->lower, LO(0), NLO(0));
  if (rc == WCS_OK) {
    if (c->nRange > 0 && !HIOPEN(c->nRange - 1)) {
      rc = put(&c->upper, aPre, ENG_PREFIX_BYTES);
      if (rc == WCS_OK) {
        rc = put(&c->upper, HI(c->nRange - 1), NHI(c->nRange - 1));
      }
    } else {
      rc = eng_put_family_end(&c->upper, d->iTid, iFid);
    }
  }
  if (rc == WCS_OK && bPoint) rc = put_row_prefix(c, &c->prefix, aPre);
  return rc;
}

/* Make slot sl's view (family i) a new iterator at pSnap with the bounds
** in c->lower, c->upper and prefix pPre (c->prefix.n bytes, or none). */
static int stream_view(wcs_cursor *c, Slot *sl, int i,
                       const wcs_snapshot *pSnap, Overlay *pOv,
                       const uint8_t *pPre) {
  int rc;
  (void)i;
  if (sl->pView == NULL) {
    rc = view_new(&sl->pView, c->pEng->db, pSnap, pOv, c->lower.a, c->lower.n,
                  c->upper.a, c->upper.n, pPre, pPre ? c->prefix.n : 0,
                  c->bReverse);
  } else {
    rc = view_reopen(sl->pView, c->pEng->db, pSnap, pOv, c->lower.a, c->lower.n,
                     c->upper.a, c->upper.n, pPre, pPre ? c->prefix.n : 0,
                     c->bReverse);
  }
  if (rc) return eng_err_db(c->pEng->db, rc, "opening an iterator");
  return WCS_OK;
}

/* Make slot sl's view anew (stream_view) at pSnap, whose seq is iSeq (0:
** none), now (tNow). */
static int slot_make(wcs_cursor *c, Slot *sl, int i, const wcs_snapshot *pSnap,
                     Overlay *pOv, const uint8_t *pPre, uint64_t iSeq,
                     int64_t tNow) {
  int rc = stream_view(c, sl, i, pSnap, pOv, pPre);
  if (rc) return rc;
  sl->bSeq = pSnap != NULL;
  sl->iSeq = iSeq;
  sl->iBorn = tNow;
  return WCS_OK;
}

static int proof_note(void *pCtx, const wcs_file_note *n) {
  ProofAcc *a = pCtx;
  if (n->maxSeq > a->maxSeq) a->maxSeq = n->maxSeq;
  if (n->pNote == NULL || n->nRangeDel > 0 ||
      eng_note_sum(n->pNote, n->nNote, a->aPre, &a->sum) != WCS_OK) {
    a->bFail = 1;
  }
  return 0;
}

/*
** Whether every family of the table has the same rows at snapshot iSeq,
** as the files' notes show (doc/engine.md, "Rows from the files' notes"):
** each family's keys are one sorted run of files, none newer than the
** snapshot, with no delete or range delete among them and no memtable key,
** and every family's rows have the same count and hash sum. Then the
** table's rows are the rows of any one family, and *pnRows of them (a
** table of one family proves that count alone); *piSmall is the family
** with the fewest stored bytes, the cheapest to read them from. Anything
** else (a transaction's own writes, a time filter, an age limit that
** hides cells at read time, a file without a note) proves nothing:
** *pbProven = 0.
*/
static int rows_proven(wcs_cursor *c, wcs_txn *pTxn, uint64_t iSeq,
                       int *pbProven, uint64_t *pnRows, int *piSmall) {
  const EngDef *d = c->pDef;
  EngRowSum first;
  int i, rc = WCS_OK;
  *pbProven = 0;
  *pnRows = 0;
  *piSmall = 0;
  if (c->iMinTs > 0 || c->iMaxTs != INT64_MAX) return WCS_OK;
  if (pTxn && pTxn->pOv &&
      (ov_count(pTxn->pOv) > 0 || ov_range_count(pTxn->pOv) > 0)) {
    return WCS_OK;
  }
  for (i = 0; i < d->nFam; i++) {
    if (d->aFam[i].iMaxAge > 0) return WCS_OK;
  }
  if (c->aProof == NULL) {
    c->aProof = calloc((unsigned)d->nFam, sizeof(Proof));
    if (c->aProof == NULL) return eng_err(WCS_NOMEM, "out of memory");
  }
  memset(&first, 0, sizeof first);
  for (i = 0; i < d->nFam; i++) {
    Proof *p = &c->aProof[i];
    ProofAcc *a = &p->acc;
    if (p->pIter) {
      rc = wcs_iter_refresh(p->pIter);
    } else {
      wcs_iter_options io;
      rc = stream_bounds(c, i, STREAM_FAMILY, 0);
      if (rc) return eng_err(rc, "out of memory");
      memset(&io, 0, sizeof io);
      io.pLower = c->lower.a;
      io.nLower = c->lower.n;
      io.pUpper = c->upper.a;
      io.nUpper = c->upper.n;
      rc = wcs_iter_new(c->pEng->db, &io, &p->pIter);
      p->iEpoch = 0; /* a new iterator: nothing gathered yet */
    }
    if (rc == WCS_OK &&
        (p->iEpoch == 0 || p->iEpoch != wcs_iter_epoch(p->pIter))) {
      /* its sources changed: read the notes (and the size) again */
      memset(a, 0, sizeof *a);
      eng_prefix_bytes(a->aPre, d->iTid, d->aFam[i].iFid);
      rc = wcs_iter_notes(p->pIter, &a->bRun, a, proof_note);
      if (rc == WCS_OK) rc = stream_bounds(c, i, STREAM_FAMILY, 0);
      if (rc == WCS_OK) {
        rc = wcs_db_approximate(c->pEng->db, c->lower.a, c->lower.n, c->upper.a,
                                c->upper.n, &p->nBytes, NULL);
      }
      p->iEpoch = wcs_iter_epoch(p->pIter);
    }
    if (rc) {
      wcs_iter_free(p->pIter);
      p->pIter = NULL;
      return eng_err_db(c->pEng->db, rc, "reading the files' notes");
    }
    if (!a->bRun || a->bFail || a->maxSeq > iSeq || a->sum.bBad ||
        a->sum.nDel > 0) {
      return WCS_OK;
    }
    if (p->nBytes < c->aProof[*piSmall].nBytes) *piSmall = i;
    if (i == 0) {
      first = a->sum;
    } else if (a->sum.nRows != first.nRows || a->sum.lo != first.lo ||
               a->sum.hi != first.hi) {
      return WCS_OK;
    }
  }
  *pbProven = 1;
  *pnRows = first.nRows;
  return WCS_OK;
}

/* A point read's streams that read the whole family through one sorted
** run (STREAM_FAMILY) seek without the row's bloom filters, which serves
** rows that exist best: a row-prefix iterator per read costs more than
** the seek. A missing row costs that seek too, where the filters would
** rule it out for a few probes. So after a point read found no row, the
** next ENG_PROBE point reads through such a stream ask the filters first
** (view_prefix_absent, with the row's bloom prefix P|esc(row) 00 01) and
** skip the seek of a family that cannot hold the row; a run of reads that
** find their rows stops the asking. */
static int probe_blooms(wcs_cursor *c) {
  int i, rc;
  for (i = 0; i < c->nStream; i++) {
    Stream *s = &c->aStream[i];
    Slot *sl = &c->aSlot[s->iFam];
    if (sl->eMode != STREAM_FAMILY || sl->nProbe <= 0) continue;
    sl->nProbe--;
    c->tmp2.n = 0;
    rc = put_row_prefix(c, &c->tmp2, s->aPre);
    if (rc) return eng_err(rc, "out of memory");
    s->bAbsent = view_prefix_absent(s->pView, c->tmp2.a, c->tmp2.n);
  }
  return WCS_OK;
}

/* Set c up for a read with options o (c is fresh or taken from the pool:
** everything per-read is reset here) and position it on the first row. */
static int cursor_start(wcs_cursor *c, wcs_txn *pTxn, const wcs_read_options *o,
                        int64_t tNow) {
  const EngDef *d = c->pDef;
  const wcs_snapshot *pSnap = NULL;
  Overlay *pOv = NULL;
  uint64_t iSeq;
  int rc = WCS_OK, i, bPoint = 0, nRefreshed = 0, nSel = 0, bTry = 0;
  int bCount = 0;

  thaw(c);
  c->pTxn = pTxn;
  if (pTxn) pTxn->nCursor++;
  c->bReverse = o->bReverse != 0;
  c->nRowLimit = o->nRowLimit;
  c->nVersions = o->nVersions > 0 ? o->nVersions : 0;
  c->iMinTs = o->iMinTs;
  c->iMaxTs = o->iMaxTs;
  if (o->iAsOf >= 0 && o->iAsOf < INT64_MAX && o->iAsOf + 1 < c->iMaxTs) {
    c->iMaxTs = o->iAsOf + 1;
  }
  c->uMinTs = c->iMinTs > 0 ? (uint64_t)c->iMinTs : 0;
  c->nTsSpan =
      c->iMaxTs > (int64_t)c->uMinTs ? (uint64_t)c->iMaxTs - c->uMinTs : 0;
  c->bKeysOnly = o->bKeysOnly != 0;
  c->xRowFilter = o->xRowFilter;
  c->pFilterCtx = o->pFilterCtx;
  c->xCellFilter = c->bKeysOnly ? NULL : o->xCellFilter;
  c->pCellFilterCtx = o->pCellFilterCtx;
  c->bEmitPrefix = 0;
  c->iNow = eng_now(c->pEng);
  c->nStream = 0;
  c->bOneFwd = 0;
  c->bOneRev = 0;
  c->bCountKnown = 0;
  c->nCountTotal = 0;
  c->nRows = 0;
  c->nHeat = 0;
  c->bNoHeat = o->bNoHeat != 0;
  c->bEof = 0;
  c->nRaw = c->nCell = 0;
  c->row.n = c->rowT.n = c->pos.n = 0;

  /* which families: those asked for; all of them when the rows are the
  ** table's (bRowsOfAll, or keys only), unless the files' notes show that
  ** the families asked for (or any one, for keys only) have them all */
  for (i = 0; i < d->nFam; i++)
    c->abFam[i] = o->azFamily == NULL;
  for (i = 0; rc == WCS_OK && o->azFamily && i < o->nFamily; i++) {
    int iFam;
    if (eng_family(d, o->azFamily[i], &iFam) == NULL) {
      rc = WCS_ERROR;
    } else {
      c->abFam[iFam] = 1;
    }
  }
  for (i = 0; i < d->nFam; i++)
    nSel += c->abFam[i];
  if (rc == WCS_OK) {
    rc = set_ranges(c, o->aRange, o->nRange);
    if (rc) eng_err(rc, "out of memory");
  }
  /* keys only, every row of the whole table: the notes may count them */
  bCount = rc == WCS_OK && c->bKeysOnly && o->azFamily == NULL &&
           c->xRowFilter == NULL && c->nRange == 1 && NLO(0) == 0 && HIOPEN(0);
  if (rc == WCS_OK &&
      ((d->nFam > 1 &&
        (o->azFamily ? o->bRowsOfAll && nSel < d->nFam : o->bKeysOnly)) ||
       bCount)) {
    bTry = 1;
  }
  /* the snapshot all streams share; reading one family of the latest
  ** state needs none (its iterator reads at one sequence number anyway),
  ** except that a proof from the notes is made at one */
  if (rc == WCS_OK) {
    if (pTxn) {
      rc = eng_txn_snapshot(pTxn, &pSnap);
      pOv = pTxn->pOv;
      if (o->pMoment && o->pMoment->pTxn != pTxn) {
        rc = eng_err(WCS_MISUSE, "the read's moment is of another "
                                 "transaction than the cursor's");
      } else if (o->pMoment) {
        /* its writes as of a moment */
        c->pMoment = o->pMoment;
        c->pMoment->nRef++;
        pOv = c->pMoment->pOv;
      }
    } else if (o->pSnap) {
      pSnap = o->pSnap; /* the caller's, for several cursors at once */
    } else if (nSel > 1 || bTry) {
      rc = wcs_snapshot_new(c->pEng->db, &c->pSnap);
      if (rc) eng_err_db(c->pEng->db, rc, "taking a read snapshot");
      pSnap = c->pSnap;
    }
  }
  if (rc == WCS_OK && bTry) {
    int bProven = 0, iSmall = 0;
    uint64_t nRows = 0;
    rc = rows_proven(c, pTxn, wcs_snapshot_seq(pSnap), &bProven, &nRows,
                     &iSmall);
    if (rc == WCS_OK && bProven && bCount) {
      c->bCountKnown = 1;
      c->nCountTotal = nRows;
    }
    if (rc == WCS_OK && bProven && o->azFamily == NULL) {
      memset(c->abFam, 0, (size_t)d->nFam);
      c->abFam[iSmall] = 1; /* keys only: any family has every row */
    } else if (rc == WCS_OK && !bProven) {
      memset(c->abFam, 1, (size_t)d->nFam);
    }
  }
  if (rc) return rc;
  c->bOverlay = pOv != NULL;
  iSeq = pSnap ? wcs_snapshot_seq(pSnap) : 0;
  /* one point row: the streams can use the row-prefix bloom filters */
  if (c->nRange == 1 && !HIOPEN(0) && NHI(0) == NLO(0) + 2 &&
      memcmp(HI(0), LO(0), NLO(0)) == 0 && HI(0)[NLO(0)] == 0 &&
      HI(0)[NLO(0) + 1] == 2) {
    bPoint = 1;
  }
  for (i = 0; rc == WCS_OK && i < d->nFam; i++) {
    Slot *sl = &c->aSlot[i];
    const uint8_t *pPre;
    Stream *s;
    int bReuse = 0, eMode = STREAM_RANGE;
    if (!c->abFam[i]) continue;
    s = &c->aStream[c->nStream];
    s->iFam = i;
    s->bDone = 0;
    s->bPlain = !c->bReverse && !c->bKeysOnly && d->aFam[i].nMaxVersions <= 0 &&
                d->aFam[i].iMaxAge <= 0;
    s->bKeysPlain = !c->bReverse && c->bKeysOnly &&
                    d->aFam[i].nMaxVersions <= 0 && d->aFam[i].iMaxAge <= 0 &&
                    c->uMinTs == 0 && c->iMaxTs == INT64_MAX;
    s->zFamily = d->aFam[i].zName;
    s->bAbsent = 0;
    if (pTxn == NULL && tNow >= sl->iRowUntil) {
      /* the latest state: through an iterator over the whole family,
      ** kept from read to read (the next read refreshes it, whatever its
      ** rows), while the family is one sorted run (bloom filters and
      ** narrower bounds would skip nothing); else the read's own */
      eMode = STREAM_FAMILY;
    } else if (bPoint) {
      eMode = STREAM_ROW;
    }
    rc = stream_bounds(c, i, eMode,
                       c->nStream > 0 && eMode != STREAM_FAMILY &&
                           c->aSlot[c->aStream[c->nStream - 1].iFam].eMode ==
                               eMode);
    if (rc) return eng_err(rc, "out of memory");
    memcpy(s->aPre, c->lower.a, ENG_PREFIX_BYTES);
    pPre = eMode == STREAM_ROW ? c->prefix.a : NULL;
    sl->bRefreshed = 0;
    sl->eMode = eMode;
    if (sl->pView && view_within(sl->pView, c->lower.a, c->lower.n, c->upper.a,
                                 c->upper.n, pPre, c->prefix.n)) {
      if (pSnap && sl->bSeq && sl->iSeq == iSeq &&
          tNow - sl->iBorn < ENG_VIEW_REUSE_MICROS && view_current(sl->pView)) {
        /* made at this very snapshot, recently, and no compaction since
        ** (its filter may have removed cells the iterator still shows) */
        bReuse = 1;
      } else if (pTxn == NULL && view_refresh(sl->pView) == WCS_OK) {
        bReuse = 1; /* moved to the latest state: checked below */
        sl->bRefreshed = 1;
        sl->bSeq = 0;
        sl->iBorn = tNow;
        nRefreshed++;
      }
    }
    if (bReuse) {
      view_retarget(sl->pView, pOv, c->bReverse);
    } else {
      rc = slot_make(c, sl, i, pSnap, pOv, pPre, iSeq, tNow);
      if (rc) return rc;
    }
    if (eMode == STREAM_FAMILY && view_sources(sl->pView) != 1) {
      /* several sources: the row's bloom filters, or the range's bounds,
      ** may skip some; try the whole family again once
      ** ENG_VIEW_REUSE_MICROS have passed, counted from now, or a hundred
      ** times what this read took so far (making the view, mostly), if
      ** longer (many range
      ** tombstones, which a view over the whole family gathers and sorts
      ** all of, where a row's or a range's view takes those in its bounds
      ** alone): the attempts then cost reads at most a hundredth */
      int64_t tDone = mono_micros();
      int64_t nWait = (tDone - tNow) * 100;
      eMode = bPoint ? STREAM_ROW : STREAM_RANGE;
      if (nWait < ENG_VIEW_REUSE_MICROS) nWait = ENG_VIEW_REUSE_MICROS;
      sl->iRowUntil = tDone + nWait;
      sl->eMode = eMode;
      if (sl->bRefreshed) {
        sl->bRefreshed = 0;
        nRefreshed--;
      }
      rc = stream_bounds(c, i, eMode, 0);
      if (rc) return eng_err(rc, "out of memory");
      rc = slot_make(c, sl, i, pSnap, pOv, bPoint ? c->prefix.a : NULL, iSeq,
                     tNow);
      if (rc) return rc;
    }
    s->pView = sl->pView;
    c->nStream++;
  }
  /* (a point read has one row: the step from it is the range's end) */
  c->bPointRead = bPoint;
  c->bOneFwd = c->nStream > 0 && !c->bOverlay && !bPoint;
  c->bOneRev = c->bReverse && c->bOneFwd;
  for (i = 0; i < c->nStream; i++) {
    if (!c->aStream[i].bPlain && !c->aStream[i].bKeysPlain) c->bOneFwd = 0;
  }
  /* Refreshed iterators read the latest state as of their refresh: the
  ** same as the snapshot only if nothing was committed since it was taken.
  ** Otherwise (rare) they are made again at the snapshot, so that every
  ** family of a row is read at one sequence number. */
  if (nRefreshed > 0) {
    wcs_snapshot *pNow = NULL;
    int bSame = 0;
    if (c->nStream == 1 && o->pSnap == NULL) {
      bSame = 1; /* one stream: consistent by itself, seq unknown */
    } else {
      rc = wcs_snapshot_new(c->pEng->db, &pNow);
      if (rc) return eng_err_db(c->pEng->db, rc, "taking a read snapshot");
      bSame = wcs_snapshot_seq(pNow) == iSeq;
      wcs_snapshot_free(c->pEng->db, pNow);
    }
    for (i = 0; rc == WCS_OK && i < d->nFam; i++) {
      Slot *sl = &c->aSlot[i];
      if (!c->abFam[i] || !sl->bRefreshed) continue;
      if (bSame) {
        sl->bSeq = c->nStream > 1 || o->pSnap != NULL;
        sl->iSeq = iSeq;
      } else {
        rc = stream_bounds(c, i, sl->eMode, 0);
        if (rc == WCS_OK) {
          rc = stream_view(c, sl, i, pSnap, pOv,
                           sl->eMode == STREAM_ROW ? c->prefix.a : NULL);
        }
        if (rc == WCS_OK) {
          sl->bSeq = 1;
          sl->iSeq = iSeq;
        }
      }
    }
    if (rc) return rc;
  }
  /* the iterators hold their snapshot now (and pin what they read) */
  if (c->pSnap) {
    wcs_snapshot_free(c->pEng->db, c->pSnap);
    c->pSnap = NULL;
  }
  if (bPoint) {
    rc = probe_blooms(c);
    if (rc) return rc;
  }
  c->iRange = c->bReverse ? c->nRange - 1 : 0;
  c->iHiRange = -1;
  c->bPosOpen = c->bReverse;
  c->bReseek = 1;
  c->bPlaced = 0;
  rc = advance(c);
  if (rc == WCS_OK && bPoint && c->bEof) {
    /* no such row: ask the filters first for the next reads */
    for (i = 0; i < c->nStream; i++) {
      Slot *sl = &c->aSlot[c->aStream[i].iFam];
      if (sl->eMode == STREAM_FAMILY) sl->nProbe = ENG_PROBE;
    }
  }
  return rc;
}

void wcs_cursor_close(wcs_cursor *c) {
  if (c == NULL) return;
  heat_flush(c);
  thaw(c);
  if (c->pTxn) {
    eng_txn_cursor_closed(c->pTxn);
    c->pTxn = NULL;
  }
  if (c->pSnap) {
    wcs_snapshot_free(c->pEng->db, c->pSnap);
    c->pSnap = NULL;
  }
  c->xRowFilter = NULL;
  c->pFilterCtx = NULL;
  c->xCellFilter = NULL;
  c->pCellFilterCtx = NULL;
  pool_put(c);
}

int wcs_cursor_open(wcs_cursor **ppCur, wcs_table *pTab, wcs_txn *pTxn,
                    const wcs_read_options *pOpt) {
  wcs_read_options dflt;
  wcs_cursor *c;
  int64_t tNow = mono_micros();
  int rc;

  if (ppCur == NULL || pTab == NULL) {
    return eng_err(WCS_MISUSE, "wcs_cursor_open: a NULL %s",
                   ppCur == NULL ? "ppCur" : "table");
  }
  *ppCur = NULL;
  if (pTab->pDef->bStale) {
    /* its families' ids may now hold another table's cells, or none */
    return eng_err(WCS_SCHEMA, "table %s was altered or dropped; reopen it",
                   pTab->pDef->zName);
  }
  if (pTxn && pTxn->pEng != pTab->pEng) {
    return eng_err(WCS_MISUSE,
                   "table %s belongs to another engine than the "
                   "transaction",
                   pTab->pDef->zName);
  }
  if (pOpt == NULL) {
    wcs_read_options_init(&dflt);
    pOpt = &dflt;
  }
  if (pOpt->nVersions < 0 || pOpt->nRange < 0 || pOpt->nFamily < 0) {
    return eng_err(WCS_RANGE,
                   "reading table %s: nVersions, nRange and nFamily must "
                   "not be negative (nVersions 0 reads every version)",
                   pTab->pDef->zName);
  }
  c = pool_take(pTab->pEng, pTab->pDef, tNow);
  if (c == NULL) c = cursor_new(pTab->pEng, pTab->pDef);
  if (c == NULL) return eng_err(WCS_NOMEM, "out of memory");
  rc = cursor_start(c, pTxn, pOpt, tNow);
  if (rc) {
    /* whatever state it is in, do not keep it */
    if (rc == WCS_NOMEM) eng_err(rc, "out of memory");
    cursor_free(c);
    return rc;
  }
  *ppCur = c;
  return WCS_OK;
}

int wcs_cursor_eof(const wcs_cursor *c) {
  return c->bEof;
}

int wcs_cursor_next(wcs_cursor *c) {
  if (c->bEof) return WCS_OK;
  return advance(c);
}

int wcs_cursor_seek(wcs_cursor *c, const void *pKey, size_t nKey) {
  int rc;
  if (c == NULL) return eng_err(WCS_MISUSE, "wcs_cursor_seek: a NULL cursor");
  rc = eng_check_bytes(pKey, nKey, "the row key to seek");
  if (rc) return rc;
  c->pos.n = 0;
  c->bPosOpen = 0;
  rc = eng_escape(&c->pos, pKey, nKey);
  if (rc) return eng_err(rc, "out of memory");
  c->iRange = c->bReverse ? c->nRange - 1 : 0;
  c->bReseek = 1;
  c->bPlaced = 0;
  c->bEof = 0;
  c->bCountKnown = 0; /* rows skipped or read again: no longer counted */
  return advance(c);
}

int wcs_cursor_rows_left(const wcs_cursor *c, uint64_t *pnLeft) {
  uint64_t n = c->nCountTotal;
  if (!c->bCountKnown) return 0;
  if (c->nRowLimit && c->nRowLimit < n) n = c->nRowLimit;
  *pnLeft = n > c->nRows ? n - c->nRows : 0;
  return 1;
}

const void *wcs_cursor_row(const wcs_cursor *c, size_t *pnRow) {
  if (c->bEof) {
    if (pnRow) *pnRow = 0;
    return NULL;
  }
  if (pnRow) *pnRow = c->row.n;
  return c->row.a;
}

int wcs_cursor_ahead(const wcs_cursor *c, const void *pRow, size_t nRow) {
  int cmp;
  if (c == NULL || c->bEof) return 0;
  if (pRow == NULL) return 1;
  cmp = wcs_bytes_cmp(pRow, nRow, c->row.a, c->row.n);
  return c->bReverse ? cmp < 0 : cmp > 0;
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
      if (pc->nQual == nQual &&
          (nQual == 0 || memcmp(pc->pQual, pQual, nQual) == 0)) {
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
