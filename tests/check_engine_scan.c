/*
** check_engine_scan.c — the row cursor's fast paths against a model.
**
** The cursor (engine/cursor.c) takes shortcuts on its per-row and per-cell
** path: a view without a transaction overlay steps the store iterator
** directly, rows and qualifiers without an escaped 00 are copied instead
** of unescaped, row terminators are found eight bytes at a time,
** qualifiers are checked for a 00 a word at a time, streams are not
** placed again right after a row was assembled, and forward a run of
** cells that each begin a column in the time range is kept with nothing
** else to decide. Each test writes cells whose keys hit both sides of
** these shortcuts (a 00 byte at every position of a long row key,
** qualifiers of 1 to 40 bytes with and without 00 bytes, rows present in
** one family only, several versions), then compares whole scans with the
** same scans computed from a sorted list of the cells: forward and
** reverse, all versions or the latest, one family or two, time ranges,
** committed data and a transaction's own writes on top of it.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/util.h"
#include "testutil.h"
#include "wcs.h"

#define T0   1700000000000000LL /* the fixed engine clock */
#define MAXC 4096               /* cells in a model */

static int64_t fixed_now(void *p) {
  (void)p;
  return T0;
}

static wcs_engine *open_mem(void) {
  wcs_options o;
  wcs_engine *e = NULL;
  char *zErr = NULL;
  int rc;
  wcs_options_init(&o);
  o.bInMemory = 1;
  rc = wcs_engine_open_path(&e, NULL, &o, &zErr);
  ck_assert_msg(rc == WCS_OK, "open: %s", zErr ? zErr : "?");
  wcs_engine_set_clock(e, fixed_now, NULL);
  return e;
}

/* One cell of the model. */
typedef struct MCell {
  uint8_t aRow[40];
  int nRow;
  int iFam; /* 0: a, 1: b */
  uint8_t aQual[48];
  int nQual;
  int64_t iTs;
  char zVal[24];
} MCell;

typedef struct Model {
  MCell a[MAXC];
  int n;
} Model;

static int bytes_cmp(const uint8_t *a, int na, const uint8_t *b, int nb) {
  int n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, (size_t)n) : 0;
  return c ? c : (na > nb) - (na < nb);
}

/* cell order: row, family, qualifier, newest first */
static int mcell_cmp(const void *x, const void *y) {
  const MCell *a = x, *b = y;
  int c = bytes_cmp(a->aRow, a->nRow, b->aRow, b->nRow);
  if (c == 0) c = a->iFam - b->iFam;
  if (c == 0) c = bytes_cmp(a->aQual, a->nQual, b->aQual, b->nQual);
  if (c == 0) c = (a->iTs < b->iTs) - (a->iTs > b->iTs);
  return c;
}

static void put_cell(wcs_txn *x, wcs_table *t, Model *m, const uint8_t *pRow,
                     int nRow, int iFam, const uint8_t *pQual, int nQual,
                     int64_t iTs) {
  MCell *c = NULL;
  int rc, i;
  /* a cell of the same key replaces the one written before */
  for (i = 0; i < m->n && c == NULL; i++) {
    MCell *o = &m->a[i];
    if (o->iFam == iFam && o->iTs == iTs &&
        bytes_cmp(o->aRow, o->nRow, pRow, nRow) == 0 &&
        bytes_cmp(o->aQual, o->nQual, pQual, nQual) == 0) {
      c = o;
    }
  }
  if (c == NULL) {
    ck_assert_int_lt(m->n, MAXC);
    c = &m->a[m->n++];
  }
  memcpy(c->aRow, pRow, (size_t)nRow);
  c->nRow = nRow;
  c->iFam = iFam;
  memcpy(c->aQual, pQual, (size_t)nQual);
  c->nQual = nQual;
  c->iTs = iTs;
  snprintf(c->zVal, sizeof(c->zVal), "v%d.%lld", m->n, (long long)iTs);
  rc = wcs_txn_set_cell(x, t, pRow, (size_t)nRow, iFam ? "b" : "a", pQual,
                        (size_t)nQual, iTs, c->zVal, strlen(c->zVal));
  ck_assert_int_eq(rc, WCS_OK);
}

/* Append "row|fam.qual@ts=val ...;" for one cell or row start. */
static void out(wcs_buf *b, const char *z) {
  ck_assert_int_eq(wcs_buf_append(b, z, strlen(z)), WCS_OK);
}
static void out_bytes(wcs_buf *b, const void *p, size_t n) {
  char *z = wcs_escape(p, n, 200);
  out(b, z);
  free(z);
}
static void out_cell(wcs_buf *b, int iFam, const void *pQual, size_t nQual,
                     int64_t iTs, const void *pVal, size_t nVal) {
  char z[64];
  out(b, iFam ? " b." : " a.");
  out_bytes(b, pQual, nQual);
  snprintf(z, sizeof(z), "@%lld=", (long long)iTs);
  out(b, z);
  out_bytes(b, pVal, nVal);
}

/* The scan the model predicts: families selected by mFam (bit 0: a, bit
** 1: b), the cells with iMinTs <= ts < iMaxTs, of those the nVersions
** newest per column (0: all), forward or reverse. */
static char *model_scan(Model *m, int mFam, int nVersions, int bReverse,
                        int64_t iMinTs, int64_t iMaxTs) {
  wcs_buf rows[MAXC];
  wcs_buf all;
  int i, nRows = 0, k;
  memset(&all, 0, sizeof(all));
  qsort(m->a, (size_t)m->n, sizeof(MCell), mcell_cmp);
  for (i = 0; i < m->n;) {
    int j = i, nCell = 0;
    wcs_buf *b = &rows[nRows];
    memset(b, 0, sizeof(*b));
    out_bytes(b, m->a[i].aRow, (size_t)m->a[i].nRow);
    out(b, ":");
    while (j < m->n && bytes_cmp(m->a[j].aRow, m->a[j].nRow, m->a[i].aRow,
                                 m->a[i].nRow) == 0) {
      const MCell *c = &m->a[j];
      /* position among its column's versions in the time range */
      int iPos = 0, p = j - 1;
      while (p >= i && m->a[p].iFam == c->iFam &&
             bytes_cmp(m->a[p].aQual, m->a[p].nQual, c->aQual, c->nQual) == 0) {
        iPos += m->a[p].iTs >= iMinTs && m->a[p].iTs < iMaxTs;
        p--;
      }
      if ((mFam >> c->iFam & 1) && c->iTs >= iMinTs && c->iTs < iMaxTs &&
          (nVersions == 0 || iPos < nVersions)) {
        out_cell(b, c->iFam, c->aQual, (size_t)c->nQual, c->iTs, c->zVal,
                 strlen(c->zVal));
        nCell++;
      }
      j++;
    }
    out(b, ";");
    if (nCell > 0) {
      nRows++;
    } else {
      wcs_buf_free(b);
    }
    i = j;
  }
  for (k = 0; k < nRows; k++) {
    wcs_buf *b = &rows[bReverse ? nRows - 1 - k : k];
    ck_assert_int_eq(wcs_buf_append(&all, b->a, b->n), WCS_OK);
    wcs_buf_free(b);
  }
  out(&all, "");
  ck_assert_int_eq(wcs_buf_append(&all, "", 1), WCS_OK);
  return (char *)all.a;
}

/* The same scan through a cursor. */
/* Every row the open cursor c reads, as "row:cells;" (the model's
** format); closes c. The caller frees the text. */
static char *cursor_text(wcs_cursor *c) {
  wcs_buf b;
  memset(&b, 0, sizeof(b));
  while (!wcs_cursor_eof(c)) {
    size_t nRow;
    const void *pRow = wcs_cursor_row(c, &nRow);
    int nCell, i;
    const wcs_cell *a = wcs_cursor_cells(c, &nCell);
    out_bytes(&b, pRow, nRow);
    out(&b, ":");
    for (i = 0; i < nCell; i++) {
      out_cell(&b, a[i].iFamily, a[i].pQual, a[i].nQual, a[i].iTs, a[i].pVal,
               a[i].nVal);
    }
    out(&b, ";");
    ck_assert_int_eq(wcs_cursor_next(c), WCS_OK);
  }
  wcs_cursor_close(c);
  ck_assert_int_eq(wcs_buf_append(&b, "", 1), WCS_OK);
  return (char *)b.a;
}

static char *cursor_scan(wcs_table *t, wcs_txn *x, int mFam, int nVersions,
                         int bReverse, int64_t iMinTs, int64_t iMaxTs) {
  wcs_read_options o;
  wcs_cursor *c = NULL;
  const char *az[2];
  int rc;
  wcs_read_options_init(&o);
  o.nVersions = nVersions;
  o.bReverse = bReverse;
  o.iMinTs = iMinTs;
  o.iMaxTs = iMaxTs;
  if (mFam != 3) {
    az[0] = mFam == 1 ? "a" : "b";
    o.azFamily = az;
    o.nFamily = 1;
  }
  rc = wcs_cursor_open(&c, t, x, &o);
  ck_assert_int_eq(rc, WCS_OK);
  return cursor_text(c);
}

/* Every scan shape the cursor and the model must agree on, with the
** time range [iMinTs, iMaxTs). */
static void check_scans_in(wcs_table *t, wcs_txn *x, Model *m, int64_t iMinTs,
                           int64_t iMaxTs) {
  static const int aFam[3] = {1, 2, 3};
  static const int aVer[3] = {0, 1, 2};
  int f, v, r;
  for (f = 0; f < 3; f++) {
    for (v = 0; v < 3; v++) {
      for (r = 0; r < 2; r++) {
        char *zWant = model_scan(m, aFam[f], aVer[v], r, iMinTs, iMaxTs);
        char *zGot = cursor_scan(t, x, aFam[f], aVer[v], r, iMinTs, iMaxTs);
        ck_assert_msg(strcmp(zGot, zWant) == 0,
                      "families %d versions %d reverse %d time [%lld, %lld)"
                      "\ngot  [%.400s]\nwant [%.400s]",
                      aFam[f], aVer[v], r, (long long)iMinTs, (long long)iMaxTs,
                      zGot, zWant);
        free(zWant);
        free(zGot);
      }
    }
  }
}

static void check_all_scans(wcs_table *t, wcs_txn *x, Model *m) {
  check_scans_in(t, x, m, 0, INT64_MAX);
}

/* Cells whose keys exercise the shortcuts (see the file comment). Row i
** of a round: a 24-byte key with a 00 at position i % 25 (none at 24),
** or, every fourth row, a key of 1 to 12 bytes. Qualifiers: 1 to 40
** bytes, some with a 00 byte. Every third row has family b only; every
** fifth has two versions of its columns. */
static void write_round(wcs_txn *x, wcs_table *t, Model *m, int iRound,
                        int nRow) {
  int i;
  for (i = 0; i < nRow; i++) {
    uint8_t aRow[40], aQual[48];
    int nR, q;
    if (i % 4 == 3) {
      nR = 1 + (i * 7 + iRound) % 12;
      memset(aRow, 'a' + iRound, (size_t)nR);
      aRow[nR - 1] = (uint8_t)i;
    } else {
      nR = 24;
      memset(aRow, 'k', (size_t)nR);
      aRow[0] = (uint8_t)('a' + iRound);
      aRow[3] = (uint8_t)i;
      if (i % 25 < 24) aRow[i % 25] = 0x00;
    }
    for (q = 0; q < 3; q++) {
      int nQ = q == 0 ? 1 : q == 1 ? 17 + i % 24 : 3;
      int iFam = (i % 3 == 2) ? 1 : q == 2;
      memset(aQual, 'q', (size_t)nQ);
      aQual[0] = (uint8_t)('c' + q);
      if (q == 1 && i % 2) aQual[nQ - 1 - i % 16] = 0x00;
      if (q == 2 && i % 2) aQual[1] = 0x00;
      put_cell(x, t, m, aRow, nR, iFam, aQual, nQ, 100 + iRound);
      if (i % 5 == 0) put_cell(x, t, m, aRow, nR, iFam, aQual, nQ, 50);
    }
  }
}

START_TEST(test_scans_match_model_without_overlay) {
  wcs_engine *e = open_mem();
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  static Model m;
  m.n = 0;
  ck_assert_int_eq(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t), WCS_OK);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  write_round(x, t, &m, 0, 120);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  check_all_scans(t, NULL, &m);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_scans_match_model_with_own_writes_on_top) {
  wcs_engine *e = open_mem();
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  static Model m;
  m.n = 0;
  ck_assert_int_eq(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t), WCS_OK);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  write_round(x, t, &m, 0, 80);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  /* uncommitted: new rows between the committed ones, and newer
  ** versions of committed columns */
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  write_round(x, t, &m, 0, 40);
  write_round(x, t, &m, 1, 60);
  check_all_scans(t, x, &m);
  ck_assert_int_eq(wcs_txn_rollback(x), WCS_OK);
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_scans_match_model_after_flush) {
  wcs_engine *e = open_mem();
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  static Model m;
  m.n = 0;
  ck_assert_int_eq(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t), WCS_OK);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  write_round(x, t, &m, 0, 100);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  ck_assert_int_eq(wcs_db_flush(wcs_engine_db(e)), WCS_OK);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  write_round(x, t, &m, 2, 50);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  /* twice: the second pass reuses the pooled cursor and its iterators */
  check_all_scans(t, NULL, &m);
  check_all_scans(t, NULL, &m);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* Rows of 1 to 10 bytes over 00, 01, 02, FF and 'k': neighbours share
** prefixes of every length, with and without a 00 byte (escaped as 00 FF
** in cell keys), and some rows are prefixes of others. */
static void write_short_rows(wcs_txn *x, wcs_table *t, Model *m, int nRow) {
  static const uint8_t aAlpha[5] = {0x00, 0x01, 0x02, 0xFF, 'k'};
  int i, j;
  for (i = 0; i < nRow; i++) {
    uint8_t aRow[10], aQual[3] = {'c', 'p', 'u'};
    int nR = 1 + (int)tu_rand_range(10);
    for (j = 0; j < nR; j++) {
      /* mostly 'k', so that rows share long prefixes */
      aRow[j] = tu_rand_range(3) ? 'k' : aAlpha[tu_rand_range(5)];
    }
    put_cell(x, t, m, aRow, nR, 0, aQual, 3, 100);
    if (i % 2) put_cell(x, t, m, aRow, nR, 0, aQual, 1, 100);
    if (i % 3 == 0) put_cell(x, t, m, aRow, nR, 1, aQual, 2, 100);
  }
}

/* Settled data (a full compaction) is read by the run steps, which tell
** the cursor how much of each key the one before it had (view_shared):
** one family's scan then finds a row's end and the next row's terminator
** from there. */
START_TEST(test_scans_match_model_after_compaction) {
  wcs_engine *e = open_mem();
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  static Model m;
  int k;
  m.n = 0;
  tu_seed(0);
  ck_assert_int_eq(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t), WCS_OK);
  for (k = 0; k < 2; k++) {
    ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
    if (k == 0) {
      write_round(x, t, &m, 0, 100);
    } else {
      write_short_rows(x, t, &m, 400);
    }
    ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
    wcs_txn_free(x);
    ck_assert_int_eq(wcs_db_compact_range(wcs_engine_db(e), NULL, 0, NULL, 0),
                     WCS_OK);
    /* twice: the second pass reuses the pooled cursor and its iterators */
    check_all_scans(t, NULL, &m);
    check_all_scans(t, NULL, &m);
  }
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* Time ranges that cut between the versions of a column (write_round()
** writes timestamps 50 and 100 + round), keep only the older or only the
** newer ones, or nothing: a column's first cell in the range is not its
** newest, which the plain run of cells must leave to the general loop. */
START_TEST(test_scans_match_model_in_time_ranges) {
  static const int64_t aRange[][2] = {{0, 51},    {51, INT64_MAX}, {50, 101},
                                      {101, 102}, {60, 90},        {100, 100}};
  wcs_engine *e = open_mem();
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  static Model m;
  size_t i;
  m.n = 0;
  ck_assert_int_eq(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t), WCS_OK);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  write_round(x, t, &m, 0, 60);
  write_round(x, t, &m, 1, 40);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  for (i = 0; i < sizeof(aRange) / sizeof(aRange[0]); i++) {
    check_scans_in(t, NULL, &m, aRange[i][0], aRange[i][1]);
  }
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* A read of row (pRow, nRow) through a one-row range, as a point lookup
** makes it, in the format of cursor_scan; the latest version of both
** families. */
static char *point_read(wcs_table *t, const uint8_t *pRow, int nRow) {
  wcs_read_options o;
  wcs_key_range r;
  wcs_cursor *c = NULL;
  memset(&r, 0, sizeof(r));
  r.pStart = r.pEnd = pRow;
  r.nStart = r.nEnd = (size_t)nRow;
  r.bEndIncl = 1;
  wcs_read_options_init(&o);
  o.nVersions = 1;
  o.aRange = &r;
  o.nRange = 1;
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, &o), WCS_OK);
  return cursor_text(c);
}

/* Every row of the model, and rows next to them that do not exist, read
** one at a time agree with the model's latest-version scan, twice (the
** second pass reuses the pooled cursor's iterators). */
static void check_point_reads(wcs_table *t, Model *pModel) {
  static Model one, sorted;
  Model *m = &sorted;
  int k, pass, q;
  sorted = *pModel; /* the cells of a row next to each other */
  qsort(sorted.a, (size_t)sorted.n, sizeof(MCell), mcell_cmp);
  for (pass = 0; pass < 2; pass++) {
    for (k = 0; k < m->n; k++) {
      const MCell *p = &m->a[k];
      char *zGot, *zWant;
      uint8_t aMiss[41];
      if (k > 0 && p->nRow == m->a[k - 1].nRow &&
          memcmp(p->aRow, m->a[k - 1].aRow, (size_t)p->nRow) == 0) {
        continue; /* one read per row */
      }
      /* the model of this row alone */
      one.n = 0;
      for (q = k; q < m->n && m->a[q].nRow == p->nRow &&
                  memcmp(m->a[q].aRow, p->aRow, (size_t)p->nRow) == 0;
           q++) {
        one.a[one.n++] = m->a[q];
      }
      zWant = model_scan(&one, 3, 1, 0, 0, INT64_MAX);
      zGot = point_read(t, p->aRow, p->nRow);
      ck_assert_msg(strcmp(zGot, zWant) == 0, "row %d\ngot  [%s]\nwant [%s]", k,
                    zGot, zWant);
      free(zGot);
      free(zWant);
      /* a row that does not exist: the key and one byte more */
      memcpy(aMiss, p->aRow, (size_t)p->nRow);
      aMiss[p->nRow] = 0x01;
      zGot = point_read(t, aMiss, p->nRow + 1);
      ck_assert_msg(zGot[0] == 0, "row %d plus 01 read back [%s]", k, zGot);
      free(zGot);
    }
  }
}

/* Write rows to a table of families a and b and read them with xCheck
** as its sources change: settled (one sorted run), with new writes in the
** memtable, with a level-0 file over the settled level, and settled again
** once the reads stop avoiding the whole family's iterator
** (ENG_VIEW_REUSE_MICROS after they last met several sources). */
static void check_as_sources_change(void (*xCheck)(wcs_table *, Model *)) {
  wcs_engine *e = open_mem();
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  wcs_db *db;
  static Model m;
  struct timespec ts = {0, 150 * 1000 * 1000};
  m.n = 0;
  ck_assert_int_eq(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t), WCS_OK);
  db = wcs_engine_db(e);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  write_round(x, t, &m, 0, 100);
  write_round(x, t, &m, 2, 30);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  ck_assert_int_eq(wcs_db_compact_range(db, NULL, 0, NULL, 0), WCS_OK);
  xCheck(t, &m); /* one sorted run */
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  write_round(x, t, &m, 0, 30); /* newer versions of some rows */
  write_round(x, t, &m, 1, 40); /* new rows */
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  xCheck(t, &m); /* the memtable too */
  ck_assert_int_eq(wcs_db_flush(db), WCS_OK);
  xCheck(t, &m); /* a level-0 file over the level */
  ck_assert_int_eq(wcs_db_compact_range(db, NULL, 0, NULL, 0), WCS_OK);
  nanosleep(&ts, NULL);
  xCheck(t, &m); /* one run again */
  wcs_table_close(t);
  wcs_engine_close(e);
}

/* Point reads go through an iterator over the whole family while the
** family is one sorted run, and through the row's own (with its bloom
** prefix) while it is several (cursor.c, STREAM_FAMILY): as the sources
** change, the reads agree with the model. */
START_TEST(test_point_reads_match_model_as_the_sources_change) {
  check_as_sources_change(check_point_reads);
}
END_TEST

/* Rows [pLo, pHi] (both included) of families mFam (bit 0: a, bit 1: b),
** latest versions, forward or reverse, through a cursor. */
static char *range_read(wcs_table *t, int mFam, int bReverse,
                        const uint8_t *pLo, int nLo, const uint8_t *pHi,
                        int nHi) {
  wcs_read_options o;
  wcs_key_range r;
  wcs_cursor *c = NULL;
  const char *az[1];
  memset(&r, 0, sizeof(r));
  r.pStart = pLo;
  r.nStart = (size_t)nLo;
  r.pEnd = pHi;
  r.nEnd = (size_t)nHi;
  r.bEndIncl = 1;
  wcs_read_options_init(&o);
  o.nVersions = 1;
  o.aRange = &r;
  o.nRange = 1;
  o.bReverse = bReverse;
  if (mFam != 3) {
    az[0] = mFam == 1 ? "a" : "b";
    o.azFamily = az;
    o.nFamily = 1;
  }
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, &o), WCS_OK);
  return cursor_text(c);
}

/* Ranges of the model's rows, from one row to another a few rows on,
** read forward and backward, per family and both, agree with the model,
** twice (the second pass reuses the pooled cursor's iterators, which a
** read of the latest state keeps over the whole family). */
static void check_range_reads(wcs_table *t, Model *pModel) {
  static Model sorted, part;
  static int aStart[MAXC];
  static const int aSpan[3] = {0, 3, 25};
  Model *m = &sorted;
  int nRow = 0, k, pass, sp, f, r, q;
  sorted = *pModel;
  qsort(sorted.a, (size_t)sorted.n, sizeof(MCell), mcell_cmp);
  for (k = 0; k < m->n; k++) {
    if (k == 0 || bytes_cmp(m->a[k].aRow, m->a[k].nRow, m->a[k - 1].aRow,
                            m->a[k - 1].nRow) != 0) {
      aStart[nRow++] = k; /* the first cell of each row */
    }
  }
  for (pass = 0; pass < 2; pass++) {
    for (k = 0; k < nRow; k += 5) {
      for (sp = 0; sp < 3; sp++) {
        const MCell *pLo = &m->a[aStart[k]];
        const MCell *pHi =
            &m->a[aStart[k + aSpan[sp] < nRow ? k + aSpan[sp] : nRow - 1]];
        part.n = 0;
        for (q = 0; q < m->n; q++) {
          if (bytes_cmp(m->a[q].aRow, m->a[q].nRow, pLo->aRow, pLo->nRow) >=
                  0 &&
              bytes_cmp(m->a[q].aRow, m->a[q].nRow, pHi->aRow, pHi->nRow) <=
                  0) {
            part.a[part.n++] = m->a[q];
          }
        }
        for (f = 1; f <= 3; f++) {
          for (r = 0; r < 2; r++) {
            char *zWant = model_scan(&part, f, 1, r, 0, INT64_MAX);
            char *zGot =
                range_read(t, f, r, pLo->aRow, pLo->nRow, pHi->aRow, pHi->nRow);
            ck_assert_msg(strcmp(zGot, zWant) == 0,
                          "rows %d..+%d families %d reverse %d\ngot  "
                          "[%.300s]\nwant [%.300s]",
                          k, aSpan[sp], f, r, zGot, zWant);
            free(zGot);
            free(zWant);
          }
        }
      }
    }
  }
}

/* Range reads of the latest state go through an iterator over the whole
** family, kept from read to read, while the family is one sorted run, and
** through one bounded by the read's range while it is several (cursor.c,
** STREAM_FAMILY): as the sources change, the reads agree with the model. */
START_TEST(test_range_reads_match_model_as_the_sources_change) {
  check_as_sources_change(check_range_reads);
}
END_TEST

/* Data blocks looked up in the block cache so far. */
static uint64_t block_lookups(wcs_db *db) {
  return tu_db_stat(db, "cache_hits") + tu_db_stat(db, "cache_misses");
}

/* Set cell a:q (and b:q) of row zRow to zVal, in one transaction. */
static void set_row(wcs_engine *e, wcs_table *t, const char *zRow,
                    const char *zVal) {
  wcs_txn *x = NULL;
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, zRow, strlen(zRow), "a", "q", 1, 1,
                                    zVal, strlen(zVal)),
                   WCS_OK);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, zRow, strlen(zRow), "b", "q", 1, 1,
                                    zVal, strlen(zVal)),
                   WCS_OK);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
}

/* Point reads through the whole family's iterator (one sorted run) ask the
** bloom filters first once a read found no row: missing rows then cost no
** data block, rows that exist are still read, and a row written since is
** found in the next run. */
START_TEST(test_point_reads_of_missing_rows_ask_the_filters) {
  wcs_engine *e = open_mem();
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  wcs_db *db;
  char zRow[16], zVal[101], zWant[300], *z;
  uint64_t n0;
  int i;
  /* values of 100 bytes: the family spans dozens of blocks, so that reads
  ** of rows far apart each look up a block of their own when they seek */
  memset(zVal, 'v', 100);
  zVal[100] = 0;
  ck_assert_int_eq(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t), WCS_OK);
  db = wcs_engine_db(e);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  for (i = 0; i < 2000; i++) {
    snprintf(zRow, sizeof zRow, "r%05d", i);
    ck_assert_int_eq(
        wcs_txn_set_cell(x, t, zRow, 6, "a", "q", 1, 1, zVal, 100), WCS_OK);
    ck_assert_int_eq(
        wcs_txn_set_cell(x, t, zRow, 6, "b", "q", 1, 1, zVal, 100), WCS_OK);
  }
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  ck_assert_int_eq(wcs_db_compact_range(db, NULL, 0, NULL, 0), WCS_OK);
  for (i = 0; i < 10; i++) { /* rows that exist */
    snprintf(zRow, sizeof zRow, "r%05d", i * 199);
    snprintf(zWant, sizeof zWant, "%s: a.q@1=%s b.q@1=%s;", zRow, zVal, zVal);
    z = point_read(t, (const uint8_t *)zRow, 6);
    ck_assert_str_eq(z, zWant);
    free(z);
  }
  /* the first miss seeks both families, the next ones ask the filters */
  z = point_read(t, (const uint8_t *)"r00007x", 7);
  ck_assert_str_eq(z, "");
  free(z);
  n0 = block_lookups(db);
  for (i = 0; i < 40; i++) {
    snprintf(zRow, sizeof zRow, "r%05dx", i * 47);
    z = point_read(t, (const uint8_t *)zRow, 7);
    ck_assert_str_eq(z, "");
    free(z);
  }
  /* 80 seeks in blocks of their own without the filters; with them, a few
  ** false positives at most */
  ck_assert_uint_le(block_lookups(db) - n0, 8);
  for (i = 0; i < 10; i++) { /* rows that exist, while the filters are asked */
    snprintf(zRow, sizeof zRow, "r%05d", i * 199 + 3);
    snprintf(zWant, sizeof zWant, "%s: a.q@1=%s b.q@1=%s;", zRow, zVal, zVal);
    z = point_read(t, (const uint8_t *)zRow, 6);
    ck_assert_str_eq(z, zWant);
    free(z);
  }
  /* a missing row written, and the family one run again: found */
  set_row(e, t, "r00007x", "new");
  ck_assert_int_eq(wcs_db_compact_range(db, NULL, 0, NULL, 0), WCS_OK);
  {
    struct timespec ts = {0, 150 * 1000 * 1000};
    nanosleep(&ts, NULL); /* as in the test above */
  }
  z = point_read(t, (const uint8_t *)"r00007x", 7);
  ck_assert_str_eq(z, "r00007x: a.q@1=new b.q@1=new;");
  free(z);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* A row whose cells outgrow the cursor's cell buffer several times while
** it is read: every cell must still point at its own bytes. */
START_TEST(test_wide_row_cells_survive_buffer_growth) {
  wcs_engine *e = open_mem();
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  wcs_cursor *c = NULL;
  uint8_t aVal[600];
  int i, r, nCell;
  ck_assert_int_eq(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t), WCS_OK);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  for (r = 0; r < 3; r++) {
    for (i = 0; i < 300; i++) {
      char zQual[16];
      int nVal = (i * 37 + r) % 600;
      memset(aVal, 'a' + i % 26, (size_t)nVal);
      snprintf(zQual, sizeof(zQual), "q%04d", i);
      ck_assert_int_eq(wcs_txn_set_cell(x, t, "row\0", 3 + (r > 0),
                                        i % 2 ? "b" : "a", zQual, 5, 7 + r,
                                        aVal, (size_t)nVal),
                       WCS_OK);
    }
  }
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  for (r = 0; r < 2; r++) {
    wcs_read_options o;
    wcs_read_options_init(&o);
    o.bReverse = r;
    o.nVersions = 1;
    ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, &o), WCS_OK);
    ck_assert(!wcs_cursor_eof(c));
    {
      const wcs_cell *a = wcs_cursor_cells(c, &nCell);
      size_t nRow;
      const char *pRow = wcs_cursor_row(c, &nRow);
      int bLast = r == 1; /* reverse: "row\0" comes first */
      ck_assert_int_eq(nCell, 300);
      ck_assert_int_eq((int)nRow, bLast ? 4 : 3);
      ck_assert(memcmp(pRow, "row", 3) == 0);
      for (i = 0; i < nCell; i++) {
        /* family a (even columns) first, then b, qualifiers ascending */
        int iq = i < 150 ? 2 * i : 2 * (i - 150) + 1;
        int nVal = (iq * 37 + (bLast ? 2 : 0)) % 600, k;
        char zQual[16];
        snprintf(zQual, sizeof(zQual), "q%04d", iq);
        ck_assert_int_eq(a[i].iFamily, iq % 2);
        ck_assert_int_eq((int)a[i].nQual, 5);
        ck_assert(memcmp(a[i].pQual, zQual, 5) == 0);
        ck_assert_int_eq((int)a[i].nVal, nVal);
        for (k = 0; k < nVal; k++) {
          ck_assert_int_eq(((const uint8_t *)a[i].pVal)[k], 'a' + iq % 26);
        }
      }
    }
    wcs_cursor_close(c);
  }
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

Suite *engine_scan_suite(void);
Suite *engine_scan_suite(void) {
  Suite *s = suite_create("engine_scan");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_scans_match_model_without_overlay);
  tcase_add_test(tc, test_scans_match_model_with_own_writes_on_top);
  tcase_add_test(tc, test_scans_match_model_after_flush);
  tcase_add_test(tc, test_scans_match_model_after_compaction);
  tcase_add_test(tc, test_scans_match_model_in_time_ranges);
  tcase_add_test(tc, test_wide_row_cells_survive_buffer_growth);
  tcase_add_test(tc, test_point_reads_match_model_as_the_sources_change);
  tcase_add_test(tc, test_range_reads_match_model_as_the_sources_change);
  tcase_add_test(tc, test_point_reads_of_missing_rows_ask_the_filters);
  suite_add_tcase(s, tc);
  return s;
}
