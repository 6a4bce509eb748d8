/*
** check_engine_txn.c — SetCell's record in the transaction's op log
** (engine/txn.c): the cell keys it builds straight into the log, with the
** row's escaping reused from cell to cell and short strings copied and
** checked for 00 bytes a word at a time, must be the keys eng_cell_key
** (cellkey.c, the general builder) makes, with the values as given, both
** in what commit stores and in what the transaction reads back before it
** commits (its overlay, built from the log at the first read and kept up
** to date by each write after it).
** The prebuilt commit of a large load (txn.c, "Prebuilt commit"): a log
** in key order past TXN_PRE_START is written into files while the
** transaction runs and installed at commit (the store's "prebuilds"
** statistic says so); a read in the middle does not stop it; a cut by a
** savepoint rollback, a delete, or a rollback drops it, and the load is
** then committed (or not) as any other. Either way the table holds
** exactly what the transaction wrote. The tests of the prebuild write
** logs past TXN_FAULT_START, with savepoints and rollbacks, so the worker
** that faults a large log in ahead runs (and moves and stops) in them; one
** more test checks that the writer meets few page faults with it.
** The commit gate (txn.c): from a successful precheck to its commit,
** rollback or free a transaction that wrote is a commit in flight, and a
** reader that awaits the commits in flight then reads what they wrote.
*/
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <sys/resource.h>
#endif

#include "engine/engine.h"
#include "storage/util.h"
#include "testutil.h"
#include "wcs.h"

Suite *engine_txn_suite(void);

/* One cell written: its key by eng_cell_key, and its value. */
typedef struct Want {
  wcs_buf key;
  uint8_t aVal[48];
  size_t nVal;
} Want;

static int cmpWant(const void *a, const void *b) {
  const Want *x = a, *y = b;
  return wcs_bytes_cmp(x->key.a, x->key.n, y->key.a, y->key.n);
}

/* Row i of the test: 1 to 70 bytes (every length, then again), without a
** 00 byte, or with one at a position that moves through the row, or all
** 00; some start with 00 FF, as an escaped 00 does. */
static size_t testRow(int i, uint8_t *a) {
  size_t n = 1 + (size_t)(i % 70), j;
  int eKind = (i / 70) % 4;
  for (j = 0; j < n; j++)
    a[j] = (uint8_t)('A' + (i + (int)j) % 50);
  if (eKind == 1) a[(size_t)(i / 3) % n] = 0x00;
  if (eKind == 2) memset(a, 0, n);
  if (eKind == 3 && n >= 2) {
    a[0] = 0x00;
    a[1] = 0xFF;
  }
  return n;
}

/* Qualifier k: 0 to 40 bytes, a 00 in every third one. */
static size_t testQual(int k, uint8_t *a) {
  size_t n = (size_t)(k % 41), j;
  for (j = 0; j < n; j++)
    a[j] = (uint8_t)('a' + (k + (int)j) % 26);
  if (k % 3 == 0 && n > 0) a[(size_t)k % n] = 0x00;
  return n;
}

/* Write cells of rows [iFirst, iEnd): three per row, the families
** alternating, the same row several times in a row as the SQL module
** writes them. Records each in aWant[*pnWant]. */
static void writeRows(wcs_txn *x, wcs_table *t, int iFirst, int iEnd,
                      Want *aWant, int *pnWant) {
  static const char *azFam[2] = {"a", "b"};
  int i, k;
  for (i = iFirst; i < iEnd; i++) {
    uint8_t aRow[80];
    size_t nRow = testRow(i, aRow);
    for (k = 0; k < 3; k++) {
      Want *w = &aWant[(*pnWant)++];
      const char *zFam = azFam[(i + k) % 2];
      EngFamily *f = eng_family(t->pDef, zFam, NULL);
      uint8_t aQual[48];
      size_t nQual = testQual(i * 3 + k, aQual), j;
      int64_t iTs = 1 + i;
      ck_assert_ptr_nonnull(f);
      w->nVal = (size_t)((i + 7 * k) % 41);
      for (j = 0; j < w->nVal; j++)
        w->aVal[j] = (uint8_t)(i * 31 + k + (int)j);
      memset(&w->key, 0, sizeof(w->key));
      ck_assert_int_eq(eng_cell_key(&w->key, t->pDef->iTid, f->iFid, aRow, nRow,
                                    aQual, nQual, iTs),
                       WCS_OK);
      ck_assert_msg(wcs_txn_set_cell(x, t, aRow, nRow, zFam, aQual, nQual, iTs,
                                     w->nVal ? w->aVal : NULL,
                                     w->nVal) == WCS_OK,
                    "set_cell: %s", wcs_engine_errmsg(NULL));
    }
  }
}

/* Every cell the transaction (or, x NULL, the store) reads is one
** written, with its value; returns how many there are. */
static int readBack(wcs_table *t, wcs_txn *x, Want *aWant, int nWant) {
  wcs_cursor *c = NULL;
  wcs_read_options o;
  wcs_buf key = {0};
  int n = 0;
  wcs_read_options_init(&o);
  ck_assert_int_eq(wcs_cursor_open(&c, t, x, &o), WCS_OK);
  for (; !wcs_cursor_eof(c); wcs_cursor_next(c)) {
    size_t nRow;
    const void *pRow = wcs_cursor_row(c, &nRow);
    int nCell, i;
    const wcs_cell *a = wcs_cursor_cells(c, &nCell);
    for (i = 0; i < nCell; i++) {
      Want probe, *w;
      key.n = 0;
      ck_assert_int_eq(eng_cell_key(&key, t->pDef->iTid,
                                    t->pDef->aFam[a[i].iFamily].iFid, pRow,
                                    nRow, a[i].pQual, a[i].nQual, a[i].iTs),
                       WCS_OK);
      probe.key = key;
      w = bsearch(&probe, aWant, (size_t)nWant, sizeof(Want), cmpWant);
      ck_assert_msg(w != NULL, "a cell not written, ts %lld",
                    (long long)a[i].iTs);
      ck_assert_uint_eq(a[i].nVal, w->nVal);
      ck_assert(w->nVal == 0 || memcmp(a[i].pVal, w->aVal, w->nVal) == 0);
      n++;
    }
  }
  wcs_cursor_close(c);
  wcs_buf_free(&key);
  return n;
}

/* An in-memory engine with table "t" of the given families. */
static void openTable(const char *zSchema, wcs_engine **pe, wcs_table **pt) {
  wcs_options opt;
  char *zErr = NULL;
  wcs_options_init(&opt);
  opt.bInMemory = 1;
  ck_assert_int_eq(wcs_engine_open_path(pe, NULL, &opt, &zErr), WCS_OK);
  ck_assert_int_eq(wcs_table_create(*pe, "t", zSchema, pt), WCS_OK);
}

/* Free the expected cells, close the table and the engine. */
static void closeTable(Want *aWant, int nWant, wcs_engine *e, wcs_table *t) {
  int i;
  for (i = 0; i < nWant; i++)
    wcs_buf_free(&aWant[i].key);
  free(aWant);
  wcs_table_close(t);
  wcs_engine_close(e);
}

/* The rows a cursor reads, each "key:value of its first cell," (an
** aggregate cell as its 8-byte number), from its current row on. */
static void rowsOf(wcs_cursor *c, char *z, size_t nz) {
  size_t n = 0;
  z[0] = 0;
  for (; !wcs_cursor_eof(c); wcs_cursor_next(c)) {
    size_t nRow;
    const char *pRow = wcs_cursor_row(c, &nRow);
    int nCell;
    const wcs_cell *a = wcs_cursor_cells(c, &nCell);
    ck_assert_int_gt(nCell, 0);
    if (a[0].nVal == 8) {
      n += (size_t)snprintf(z + n, nz - n, "%.*s:%lld,", (int)nRow, pRow,
                            (long long)wcs_get64be(a[0].pVal));
    } else {
      n += (size_t)snprintf(z + n, nz - n, "%.*s:%.*s,", (int)nRow, pRow,
                            (int)a[0].nVal, (const char *)a[0].pVal);
    }
    ck_assert_uint_lt(n, nz);
  }
}

static void putRow(wcs_txn *x, wcs_table *t, const char *zRow,
                   const char *zVal) {
  ck_assert_int_eq(wcs_txn_set_cell(x, t, zRow, strlen(zRow), "a", "q", 1, 1,
                                    zVal, strlen(zVal)),
                   WCS_OK);
}

/* A frozen cursor (wcs_cursor_freeze) reads the transaction's writes as
** they were at the freeze, to its end and through its seeks, forward and
** in reverse: puts, row deletes, prefix deletes (ranges), a put under a
** range and an aggregate's pending merge, over committed rows; a cursor
** opened after reads the writes since. */
START_TEST(test_a_frozen_cursor_reads_the_writes_of_its_moment) {
  wcs_engine *e;
  wcs_table *t;
  wcs_txn *x;
  wcs_cursor *c, *r, *d;
  wcs_read_options o, ro, so;
  char z[512];
  static const char *azFam[] = {"s"};
  openTable("FAMILY a, FAMILY s AGGREGATE SUM", &e, &t);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  putRow(x, t, "b", "1");
  putRow(x, t, "d", "1");
  putRow(x, t, "f", "1");
  putRow(x, t, "h", "1");
  ck_assert_int_eq(wcs_txn_add_to_cell(x, t, "m", 1, "s", "n", 1, 0, 5),
                   WCS_OK);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  putRow(x, t, "c", "2");
  ck_assert_int_eq(wcs_txn_delete_row(x, t, "d", 1), WCS_OK);
  ck_assert_int_eq(wcs_txn_delete_prefix(x, t, "f", 1), WCS_OK);
  putRow(x, t, "f", "2"); /* under its own range */
  ck_assert_int_eq(wcs_txn_add_to_cell(x, t, "m", 1, "s", "n", 1, 0, 2),
                   WCS_OK); /* a merge over the stored 5 */
  wcs_read_options_init(&o);
  ro = o;
  ro.bReverse = 1;
  so = o;
  so.azFamily = azFam;
  so.nFamily = 1;
  ck_assert_int_eq(wcs_cursor_open(&c, t, x, &o), WCS_OK);
  ck_assert_int_eq(wcs_cursor_open(&r, t, x, &ro), WCS_OK);
  ck_assert_int_eq(wcs_cursor_open(&d, t, x, &so), WCS_OK);
  ck_assert_int_eq(wcs_cursor_freeze(c), WCS_OK);
  ck_assert_int_eq(wcs_cursor_freeze(c), WCS_OK); /* once is enough */
  ck_assert_int_eq(wcs_cursor_freeze(r), WCS_OK);
  ck_assert_int_eq(wcs_cursor_freeze(d), WCS_OK);
  /* the transaction writes on: before, at and after each cursor */
  putRow(x, t, "a", "3");
  putRow(x, t, "b", "3");
  putRow(x, t, "e", "3");
  ck_assert_int_eq(wcs_txn_delete_row(x, t, "h", 1), WCS_OK);
  ck_assert_int_eq(wcs_txn_delete_prefix(x, t, "c", 1), WCS_OK);
  putRow(x, t, "z", "3");
  ck_assert_int_eq(wcs_txn_add_to_cell(x, t, "m", 1, "s", "n", 1, 0, 100),
                   WCS_OK);
  rowsOf(c, z, sizeof z);
  ck_assert_str_eq(z, "b:1,c:2,f:2,h:1,m:7,");
  rowsOf(r, z, sizeof z);
  ck_assert_str_eq(z, "m:7,h:1,f:2,c:2,b:1,");
  rowsOf(d, z, sizeof z);
  ck_assert_str_eq(z, "m:7,");
  /* seeks stay at the moment */
  ck_assert_int_eq(wcs_cursor_seek(c, "a", 1), WCS_OK);
  rowsOf(c, z, sizeof z);
  ck_assert_str_eq(z, "b:1,c:2,f:2,h:1,m:7,");
  wcs_cursor_close(c);
  wcs_cursor_close(r);
  wcs_cursor_close(d);
  /* a cursor opened now (from the pool, as they were) reads the rest */
  ck_assert_int_eq(wcs_cursor_open(&c, t, x, &o), WCS_OK);
  rowsOf(c, z, sizeof z);
  ck_assert_str_eq(z, "a:3,b:3,e:3,f:2,m:107,z:3,");
  wcs_cursor_close(c);
  ck_assert_int_eq(wcs_cursor_freeze(NULL), WCS_OK);
  /* a moment: the writes up to a mark, for a cursor opened later, and
  ** for one frozen at it; a thaw reads the writes as they are now */
  {
    size_t iMark = wcs_txn_mark(x);
    wcs_moment *m = NULL, *m2 = NULL;
    wcs_read_options mo = o;
    putRow(x, t, "y", "4");
    ck_assert_int_eq(wcs_txn_moment(x, iMark, &m), WCS_OK);
    ck_assert_int_eq(wcs_txn_moment(x, wcs_txn_mark(x) + 1, &m2), WCS_MISUSE);
    ck_assert_ptr_null(m2);
    mo.pMoment = m;
    {
      /* a moment is its own transaction's: another one's cursor refuses
      ** it (it would read the other's writes) */
      wcs_txn *y = NULL;
      ck_assert_int_eq(wcs_txn_begin(e, 0, &y), WCS_OK);
      ck_assert_int_eq(wcs_cursor_open(&c, t, y, &mo), WCS_MISUSE);
      ck_assert_ptr_null(c);
      ck_assert_int_eq(wcs_cursor_open(&c, t, y, &o), WCS_OK);
      ck_assert_int_eq(wcs_cursor_freeze_at(c, m), WCS_MISUSE);
      wcs_cursor_close(c);
      wcs_txn_free(y);
    }
    ck_assert_int_eq(wcs_cursor_open(&c, t, x, &mo), WCS_OK);
    ck_assert_int_eq(wcs_cursor_open(&r, t, x, &o), WCS_OK);
    ck_assert_int_eq(wcs_cursor_freeze_at(r, m), WCS_OK);
    wcs_moment_free(m); /* the cursors hold it */
    putRow(x, t, "x", "4");
    rowsOf(c, z, sizeof z);
    ck_assert_str_eq(z, "a:3,b:3,e:3,f:2,m:107,z:3,");
    rowsOf(r, z, sizeof z);
    ck_assert_str_eq(z, "a:3,b:3,e:3,f:2,m:107,z:3,");
    ck_assert_int_eq(wcs_cursor_seek(r, "a", 1), WCS_OK);
    wcs_cursor_thaw(r);
    rowsOf(r, z, sizeof z);
    ck_assert_str_eq(z, "a:3,b:3,e:3,f:2,m:107,x:4,y:4,z:3,");
    wcs_cursor_close(c);
    wcs_cursor_close(r);
  }
  /* a cursor open across its transaction's commit reads what it read
  ** then; frozen after, it keeps that, not the next writes */
  ck_assert_int_eq(wcs_cursor_open(&c, t, x, &o), WCS_OK);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  putRow(x, t, "c", "5");
  ck_assert_int_eq(wcs_cursor_freeze(c), WCS_OK);
  putRow(x, t, "d", "5");
  rowsOf(c, z, sizeof z);
  ck_assert_str_eq(z, "a:3,b:3,e:3,f:2,m:107,x:4,y:4,z:3,");
  wcs_cursor_close(c);
  wcs_txn_free(x);
  closeTable(NULL, 0, e, t);
}
END_TEST

START_TEST(test_set_cell_keys_are_eng_cell_keys) {
  enum { NROW = 700 };
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  wcs_iter *it = NULL;
  wcs_iter_options io;
  uint8_t aTid[4];
  Want *aWant = calloc(3 * NROW, sizeof(Want));
  int nWant = 0, nSorted, i, rc;
  ck_assert_ptr_nonnull(aWant);
  openTable("FAMILY a, FAMILY b", &e, &t);

  /* the first half into the log alone (nothing has read it yet), then a
  ** read, which builds the overlay; the second half goes to both */
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  writeRows(x, t, 0, NROW / 2, aWant, &nWant);
  nSorted = nWant;
  qsort(aWant, (size_t)nSorted, sizeof(Want), cmpWant);
  ck_assert_int_eq(readBack(t, x, aWant, nSorted), nSorted);
  writeRows(x, t, NROW / 2, NROW, aWant, &nWant);
  qsort(aWant, (size_t)nWant, sizeof(Want), cmpWant);
  for (i = 1; i < nWant; i++) {
    ck_assert_int_lt(cmpWant(&aWant[i - 1], &aWant[i]), 0); /* all distinct */
  }
  ck_assert_int_eq(readBack(t, x, aWant, nWant), nWant);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  ck_assert_int_eq(readBack(t, NULL, aWant, nWant), nWant);

  /* the store holds exactly those keys and values, in that order */
  aTid[0] = (uint8_t)(t->pDef->iTid >> 24);
  aTid[1] = (uint8_t)(t->pDef->iTid >> 16);
  aTid[2] = (uint8_t)(t->pDef->iTid >> 8);
  aTid[3] = (uint8_t)t->pDef->iTid;
  memset(&io, 0, sizeof(io));
  io.pPrefix = aTid;
  io.nPrefix = sizeof(aTid);
  ck_assert_int_eq(wcs_iter_new(wcs_engine_db(e), &io, &it), WCS_OK);
  i = 0;
  for (rc = wcs_iter_first(it); rc == WCS_OK && wcs_iter_valid(it);
       rc = wcs_iter_next(it)) {
    size_t nk, nv;
    const uint8_t *k = wcs_iter_key(it, &nk);
    const uint8_t *v = wcs_iter_value(it, &nv);
    ck_assert_int_lt(i, nWant);
    ck_assert_msg(nk == aWant[i].key.n && memcmp(k, aWant[i].key.a, nk) == 0,
                  "key %d differs", i);
    ck_assert_uint_eq(nv, aWant[i].nVal);
    ck_assert(nv == 0 || memcmp(v, aWant[i].aVal, nv) == 0);
    i++;
  }
  ck_assert_int_eq(rc, WCS_OK);
  ck_assert_int_eq(i, nWant);
  wcs_iter_free(it);

  closeTable(aWant, nWant, e, t);
}
END_TEST

/* Rows of one length written one after another that differ in one byte,
** at every position: SetCell reuses the last row's escaping only for the
** same row, so each must get a key of its own. */
START_TEST(test_set_cell_rows_differing_in_one_byte) {
  enum { NMAX = 40 };
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  Want *aWant = calloc(NMAX * (NMAX + 1), sizeof(Want));
  EngFamily *f;
  int nWant = 0, n, iPos;
  ck_assert_ptr_nonnull(aWant);
  openTable("FAMILY a", &e, &t);
  f = eng_family(t->pDef, "a", NULL);
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  for (n = 1; n <= NMAX; n++) {
    for (iPos = -1; iPos < n; iPos++) {
      /* iPos -1: the row of n 'r' bytes; then one 's' at iPos */
      uint8_t aRow[NMAX];
      Want *w = &aWant[nWant++];
      memset(aRow, 'r', (size_t)n);
      if (iPos >= 0) aRow[iPos] = 's';
      w->nVal = 2;
      w->aVal[0] = (uint8_t)n;
      w->aVal[1] = (uint8_t)(iPos + 1);
      ck_assert_int_eq(eng_cell_key(&w->key, t->pDef->iTid, f->iFid, aRow,
                                    (size_t)n, "q", 1, 5),
                       WCS_OK);
      ck_assert_int_eq(wcs_txn_set_cell(x, t, aRow, (size_t)n, "a", "q", 1, 5,
                                        w->aVal, w->nVal),
                       WCS_OK);
    }
  }
  qsort(aWant, (size_t)nWant, sizeof(Want), cmpWant);
  ck_assert_int_eq(readBack(t, x, aWant, nWant), nWant);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  ck_assert_int_eq(readBack(t, NULL, aWant, nWant), nWant);
  closeTable(aWant, nWant, e, t);
}
END_TEST

/* ---- prebuilt commit ------------------------------------------------ */

/* Rows of the large loads: "r" and a 7-digit number, in key order. */
#define PRE_ROWS 90000 /* two cells of 110 to 140 bytes a row: ~25 MiB */

static size_t preRow(int i, char *z) {
  return (size_t)snprintf(z, 16, "r%07d", i);
}

static size_t preVal(int i, int k, uint8_t *a) {
  size_t n = 100 + (size_t)((i + k) % 31), j;
  for (j = 0; j < n; j++)
    a[j] = (uint8_t)(i * 7 + k * 13 + (int)j);
  return n;
}

/* Write rows [iFirst, iEnd) of the load: a cell in family a and one in b. */
static void preWrite(wcs_txn *x, wcs_table *t, int iFirst, int iEnd) {
  int i;
  for (i = iFirst; i < iEnd; i++) {
    char zRow[16];
    uint8_t aVal[160];
    size_t nRow = preRow(i, zRow), nVal;
    nVal = preVal(i, 0, aVal);
    ck_assert_int_eq(
        wcs_txn_set_cell(x, t, zRow, nRow, "a", "x", 1, 7, aVal, nVal), WCS_OK);
    nVal = preVal(i, 1, aVal);
    ck_assert_int_eq(
        wcs_txn_set_cell(x, t, zRow, nRow, "b", "y", 1, 7, aVal, nVal), WCS_OK);
  }
}

/* The table (x NULL: the store) holds exactly the rows i with abWant[i],
** each with its two cells. */
static void preCheck(wcs_table *t, wcs_txn *x, const char *abWant) {
  wcs_cursor *c = NULL;
  wcs_read_options o;
  int i = 0;
  wcs_read_options_init(&o);
  ck_assert_int_eq(wcs_cursor_open(&c, t, x, &o), WCS_OK);
  for (; !wcs_cursor_eof(c); i++) {
    size_t nRow, nWant;
    const void *pRow = wcs_cursor_row(c, &nRow);
    int nCell, k;
    const wcs_cell *a = wcs_cursor_cells(c, &nCell);
    char zRow[16];
    while (i < PRE_ROWS && !abWant[i])
      i++;
    ck_assert_int_lt(i, PRE_ROWS);
    nWant = preRow(i, zRow);
    ck_assert_msg(nRow == nWant && memcmp(pRow, zRow, nRow) == 0,
                  "row %.*s where %s was expected", (int)nRow,
                  (const char *)pRow, zRow);
    ck_assert_int_eq(nCell, 2);
    for (k = 0; k < 2; k++) {
      uint8_t aVal[160];
      size_t nVal = preVal(i, k, aVal);
      ck_assert_uint_eq(a[k].nVal, nVal);
      ck_assert(memcmp(a[k].pVal, aVal, nVal) == 0);
    }
    ck_assert_int_eq(wcs_cursor_next(c), WCS_OK);
  }
  wcs_cursor_close(c);
  while (i < PRE_ROWS && !abWant[i])
    i++;
  ck_assert_msg(i == PRE_ROWS, "row %d is missing", i);
}

/* Open the store in directory zDir with its table "t" (FAMILY a, FAMILY
** b), made if bCreate. */
static void preOpen(const char *zDir, int bCreate, wcs_engine **pe,
                    wcs_table **pt) {
  wcs_options opt;
  char *zErr = NULL;
  wcs_options_init(&opt);
  ck_assert_int_eq(wcs_engine_open_path(pe, zDir, &opt, &zErr), WCS_OK);
  if (bCreate) {
    ck_assert_int_eq(wcs_table_create(*pe, "t", "FAMILY a, FAMILY b", pt),
                     WCS_OK);
  } else {
    ck_assert_int_eq(wcs_table_open(*pe, "t", pt), WCS_OK);
  }
}

static void preClose(wcs_engine *e, wcs_table *t) {
  wcs_table_close(t);
  wcs_engine_close(e);
}

/* Table files in the store's directory. */
static int preFiles(const char *zDir) {
  DIR *d = opendir(zDir);
  struct dirent *p;
  int n = 0;
  ck_assert_ptr_nonnull(d);
  while ((p = readdir(d)) != NULL) {
    size_t nName = strlen(p->d_name);
    if (nName > 4 && strcmp(p->d_name + nName - 4, ".sst") == 0) n++;
  }
  closedir(d);
  return n;
}

/* Commit x, which must take the prebuilt path nPrebuilt (0 or 1) times,
** check that the table holds the rows abWant says, and close. */
static void preCommit(wcs_engine *e, wcs_table *t, wcs_txn *x,
                      const char *abWant, uint64_t nPrebuilt) {
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  ck_assert_uint_eq(tu_db_stat(wcs_engine_db(e), "prebuilds"), nPrebuilt);
  preCheck(t, NULL, abWant);
  preClose(e, t);
}

static char *preWantAll(void) {
  char *ab = malloc(PRE_ROWS);
  ck_assert_ptr_nonnull(ab);
  memset(ab, 1, PRE_ROWS);
  return ab;
}

START_TEST(test_prebuilt_commit_of_a_load_in_key_order) {
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  char *ab = preWantAll();
  char *zDir = strdup(tu_tmpdir("prebuild-load"));
  preOpen(zDir, 1, &e, &t);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  preWrite(x, t, 0, PRE_ROWS / 2);
  /* a read in the middle builds the overlay; the prebuild goes on */
  {
    char *abHalf = calloc(PRE_ROWS, 1);
    memset(abHalf, 1, PRE_ROWS / 2);
    preCheck(t, x, abHalf);
    free(abHalf);
  }
  preWrite(x, t, PRE_ROWS / 2, PRE_ROWS);
  preCommit(e, t, x, ab, 1);
  /* and after a reopen */
  preOpen(zDir, 0, &e, &t);
  preCheck(t, NULL, ab);
  preClose(e, t);
  free(ab);
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

/* A savepoint rollback cuts the log under what the prebuild read: it is
** dropped, and the load commits through the log. */
START_TEST(test_prebuild_dropped_by_a_savepoint_rollback) {
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  char *ab = preWantAll();
  int i;
  char *zDir = strdup(tu_tmpdir("prebuild-savepoint"));
  preOpen(zDir, 1, &e, &t);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  preWrite(x, t, 0, 70000);
  ck_assert_int_eq(wcs_txn_savepoint(x, 1), WCS_OK);
  preWrite(x, t, 70000, 80000);
  ck_assert_int_eq(wcs_txn_rollback_to(x, 1), WCS_OK);
  preWrite(x, t, 85000, PRE_ROWS);
  for (i = 70000; i < 85000; i++)
    ab[i] = 0;
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  ck_assert_uint_eq(tu_db_stat(wcs_engine_db(e), "prebuilds"), 0);
  ck_assert_uint_eq(tu_db_stat(wcs_engine_db(e), "ingests"), 1);
  preCheck(t, NULL, ab);
  preClose(e, t);
  free(ab);
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

/* A savepoint rollback to the empty log starts over: the prebuild that
** read the old log is dropped, a new one reads the new log. */
START_TEST(test_prebuild_starts_over_after_a_rollback_to_empty) {
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  char *ab = preWantAll();
  char *zDir = strdup(tu_tmpdir("prebuild-restart"));
  preOpen(zDir, 1, &e, &t);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  ck_assert_int_eq(wcs_txn_savepoint(x, 1), WCS_OK);
  preWrite(x, t, 0, 70000);
  ck_assert_int_eq(wcs_txn_rollback_to(x, 1), WCS_OK);
  memset(ab, 0, 30000);
  preWrite(x, t, 30000, PRE_ROWS);
  preCommit(e, t, x, ab, 1);
  free(ab);
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

/* A key below its family's last one makes the log no batch in key order:
** no prebuild is installed (the engine drops it; the store's ingest, which
** checks the order itself, would decline it too), and the rows read back
** as written. The late row differs from the last one early in its key
** (byte 9 of the cell key) or late (byte 13). */
START_TEST(test_prebuild_dropped_by_a_key_out_of_order) {
  static const int aLate[2] = {30005, 59998};
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  char *ab = preWantAll();
  char *zDir = strdup(tu_tmpdir("prebuild-order"));
  int iLate = aLate[_i];
  preOpen(zDir, 1, &e, &t);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  preWrite(x, t, 0, iLate);
  preWrite(x, t, iLate + 1, 60000);
  preWrite(x, t, iLate, iLate + 1); /* after row 59999 */
  preWrite(x, t, 60000, PRE_ROWS);
  preCommit(e, t, x, ab, 0);
  free(ab);
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

/* A delete makes the log no batch in key order: the prebuild is dropped
** at the next record, the rows read back as written. */
START_TEST(test_prebuild_dropped_by_a_delete) {
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  char *ab = preWantAll();
  char zRow[16];
  size_t nRow;
  char *zDir = strdup(tu_tmpdir("prebuild-delete"));
  preOpen(zDir, 1, &e, &t);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  preWrite(x, t, 0, 80000);
  nRow = preRow(1234, zRow);
  ck_assert_int_eq(wcs_txn_delete_row(x, t, zRow, nRow), WCS_OK);
  ab[1234] = 0;
  preWrite(x, t, 80000, PRE_ROWS);
  preCommit(e, t, x, ab, 0);
  free(ab);
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

/* A rollback leaves nothing: no row, no file left behind (a later load
** of the same rows is prebuilt and reads back alone). */
START_TEST(test_prebuild_rollback_leaves_nothing) {
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  char *ab = preWantAll(), *abNone = calloc(PRE_ROWS, 1);
  int nFiles;
  char *zDir = strdup(tu_tmpdir("prebuild-rollback"));
  preOpen(zDir, 1, &e, &t);
  ck_assert_ptr_nonnull(abNone);
  nFiles = preFiles(zDir);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  preWrite(x, t, 0, PRE_ROWS);
  ck_assert_int_eq(wcs_txn_rollback(x), WCS_OK);
  preCheck(t, NULL, abNone);
  ck_assert_int_eq(preFiles(zDir), nFiles);
  preWrite(x, t, 0, PRE_ROWS);
  preCommit(e, t, x, ab, 1);
  free(ab);
  free(abNone);
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

/* A transaction's log past 32 MiB grows by 64 MiB more (1 KiB values, in
** descending key order, so no prebuild reads it): the writing thread takes
** at most a quarter of the page faults those 16,384 pages would cost it,
** the worker having mapped them first. Where the kernel cannot map pages
** ahead (MADV_POPULATE_WRITE), or the thread's own fault count is not
** available, there is nothing to check; nor under Address or Thread
** Sanitizer, whose realloc copies the grown log into new pages (glibc's
** moves the pages of a large block). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TXN_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TXN_TEST_ASAN 1
#endif
#endif
START_TEST(test_big_log_is_faulted_in_ahead) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE) &&                      \
    defined(RUSAGE_THREAD) && !defined(TXN_TEST_ASAN)
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  wcs_options o;
  char *zErr = NULL;
  static uint8_t aVal[1024];
  struct rusage ru0, ru1;
  long nFault;
  int i, k;
  void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert(p != MAP_FAILED);
  k = madvise(p, 4096, MADV_POPULATE_WRITE);
  munmap(p, 4096);
  if (k != 0) return; /* the kernel cannot: nothing to check */
  memset(aVal, 'v', sizeof aVal);
  wcs_options_init(&o);
  o.bInMemory = 1;
  ck_assert_int_eq(wcs_engine_open_path(&e, NULL, &o, &zErr), WCS_OK);
  ck_assert_int_eq(wcs_table_create(e, "t", "FAMILY a", &t), WCS_OK);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  for (k = 0; k < 2; k++) {
    int iFirst = k == 0 ? 0 : 32 * 1024,
        iEnd = k == 0 ? iFirst + 32 * 1024 : iFirst + 64 * 1024;
    if (k == 1) ck_assert_int_eq(getrusage(RUSAGE_THREAD, &ru0), 0);
    for (i = iFirst; i < iEnd; i++) {
      char zRow[16];
      int nRow = snprintf(zRow, sizeof zRow, "r%08d", 999999 - i);
      ck_assert_int_eq(wcs_txn_set_cell(x, t, zRow, (size_t)nRow, "a", "q", 1,
                                        7, aVal, sizeof aVal),
                       WCS_OK);
    }
  }
  ck_assert_int_eq(getrusage(RUSAGE_THREAD, &ru1), 0);
  nFault = ru1.ru_minflt - ru0.ru_minflt;
  ck_assert_msg(nFault < 16384 / 4,
                "the writer took %ld page faults for 64 MiB of log", nFault);
  ck_assert_int_eq(wcs_txn_rollback(x), WCS_OK);
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
#endif
}
END_TEST

START_TEST(test_precheck_refuses_what_commit_would) {
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  char *zPre;
  openTable("FAMILY f", &e, &t);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  ck_assert_int_eq(wcs_txn_precheck(x), WCS_OK); /* nothing written */
  ck_assert_int_eq(
      wcs_txn_set_cell(x, t, "r", 1, "f", "q", 1, WCS_TS_NOW, "v", 1), WCS_OK);
  ck_assert_int_eq(wcs_txn_precheck(x), WCS_OK);
  ck_assert_int_eq(wcs_txn_precheck(x), WCS_OK); /* as often as asked */
  ck_assert_int_eq(wcs_table_alter(e, "t", "FAMILY f, FAMILY g"), WCS_OK);
  ck_assert_int_eq(wcs_txn_precheck(x), WCS_SCHEMA);
  zPre = strdup(wcs_engine_errmsg(e));
  ck_assert_msg(strstr(zPre, "table t was altered or dropped") != NULL, "%s",
                zPre);
  ck_assert_int_eq(wcs_txn_count(x), 1); /* still there */
  ck_assert_int_eq(wcs_txn_commit(x), WCS_SCHEMA);
  ck_assert_str_eq(wcs_engine_errmsg(e), zPre);
  free(zPre);
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* Rows of table t, read at the latest commit. */
static int rowsNow(wcs_table *t) {
  wcs_cursor *c = NULL;
  wcs_read_options o;
  int n = 0;
  wcs_read_options_init(&o);
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, &o), WCS_OK);
  for (; !wcs_cursor_eof(c); wcs_cursor_next(c))
    n++;
  wcs_cursor_close(c);
  return n;
}

typedef struct Awaiter {
  wcs_engine *e;
  wcs_table *t;
  int bDone; /* wcs_engine_await_commits' result */
  int nRows; /* rows it read right after */
} Awaiter;

static void *awaitInThread(void *pArg) {
  Awaiter *a = pArg;
  a->bDone = wcs_engine_await_commits(a->e, NULL, 0, 20000);
  a->nRows = rowsNow(a->t);
  return NULL;
}

/* The commit gate: a transaction that wrote counts as a commit in flight
** from its successful precheck to its commit or rollback; a reader that
** awaits the commits in flight then reads what the commit wrote. */
START_TEST(test_commits_in_flight_are_awaited) {
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_txn *x = NULL, *y = NULL;
  Awaiter a;
  pthread_t th;
  openTable("FAMILY f", &e, &t);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 0), 0);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &y), WCS_OK);
  ck_assert_int_eq(wcs_txn_precheck(x), WCS_OK); /* nothing to commit */
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 0), 0);

  /* a rollback ends it, as often as prechecked */
  ck_assert_int_eq(
      wcs_txn_set_cell(x, t, "r", 1, "f", "q", 1, WCS_TS_NOW, "v", 1), WCS_OK);
  ck_assert_int_eq(wcs_txn_precheck(x), WCS_OK);
  ck_assert_int_eq(wcs_txn_precheck(x), WCS_OK);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 0), 1);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, x, 0), 0); /* its own */
  ck_assert_int_eq(wcs_engine_await_commits(e, x, 0, 0), 1);
  ck_assert_int_eq(wcs_engine_await_commits(e, NULL, 0, 20), 0); /* timeout */
  ck_assert_int_eq(wcs_txn_rollback(x), WCS_OK);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 0), 0);

  /* two at once; a reader waits for both, then sees their rows */
  ck_assert_int_eq(
      wcs_txn_set_cell(x, t, "r1", 2, "f", "q", 1, WCS_TS_NOW, "v", 1), WCS_OK);
  ck_assert_int_eq(
      wcs_txn_set_cell(y, t, "r2", 2, "f", "q", 1, WCS_TS_NOW, "v", 1), WCS_OK);
  ck_assert_int_eq(wcs_txn_precheck(x), WCS_OK);
  ck_assert_int_eq(wcs_txn_precheck(y), WCS_OK);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 0), 2);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, y, 0), 1);
  a.e = e;
  a.t = t;
  a.bDone = -1;
  a.nRows = -1;
  ck_assert_int_eq(pthread_create(&th, NULL, awaitInThread, &a), 0);
  usleep(20000);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 0), 1);
  usleep(20000);
  ck_assert_int_eq(wcs_txn_commit(y), WCS_OK);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_int_eq(a.bDone, 1);
  ck_assert_int_eq(a.nRows, 2);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 0), 0);

  /* keyed: a waiter with a key waits for the transactions of that key
  ** and for those of none, not for others (another lock's commit, which
  ** may stay in flight for as long as its owner waits) */
  ck_assert_int_eq(
      wcs_txn_set_cell(x, t, "r4", 2, "f", "q", 1, WCS_TS_NOW, "v", 1), WCS_OK);
  wcs_txn_gate_key(x, 7);
  wcs_txn_gate_key(x, 9);
  ck_assert_int_eq(wcs_txn_precheck(x), WCS_OK);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 0), 1);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 7), 1);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 9), 1);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 8), 0);
  ck_assert_int_eq(wcs_engine_await_commits(e, NULL, 8, 20000),
                   1); /* at once */
  ck_assert_int_eq(wcs_engine_await_commits(e, NULL, 7, 20), 0);
  ck_assert_int_eq(wcs_txn_rollback(x), WCS_OK); /* clears its keys */
  ck_assert_int_eq(
      wcs_txn_set_cell(x, t, "r4", 2, "f", "q", 1, WCS_TS_NOW, "v", 1), WCS_OK);
  ck_assert_int_eq(wcs_txn_precheck(x), WCS_OK);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 8), 1); /* none */
  {
    uint64_t k;
    for (k = 1; k <= 5; k++)
      wcs_txn_gate_key(x, k); /* past four: all */
    ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 99), 1);
  }
  ck_assert_int_eq(wcs_txn_rollback(x), WCS_OK);

  /* freeing a transaction ends it too */
  ck_assert_int_eq(
      wcs_txn_set_cell(x, t, "r3", 2, "f", "q", 1, WCS_TS_NOW, "v", 1), WCS_OK);
  ck_assert_int_eq(wcs_txn_precheck(x), WCS_OK);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 0), 1);
  wcs_txn_free(x);
  ck_assert_int_eq(wcs_engine_commits_in_flight(e, NULL, 0), 0);
  wcs_txn_free(y);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* A thread's failed call: the message it sees, and what it sees after. */
static void *failInThread(void *pArg) {
  wcs_engine *e = pArg;
  char *z;
  ck_assert_str_eq(wcs_engine_errmsg(e), ""); /* a new thread: none yet */
  ck_assert_int_ne(wcs_table_drop(e, "no_such_table"), WCS_OK);
  z = strdup(wcs_engine_errmsg(e));
  return z;
}

START_TEST(test_error_messages_are_per_thread_and_cut) {
  wcs_engine *e = NULL;
  pthread_t th;
  void *pMsg = NULL;
  char *zLong = malloc(5000), *zMine;
  wcs_options opt;
  char *zErr = NULL;
  wcs_options_init(&opt);
  opt.bInMemory = 1;
  ck_assert_int_eq(wcs_engine_open_path(&e, NULL, &opt, &zErr), WCS_OK);
  /* a name longer than any message: the message is cut */
  memset(zLong, 'n', 4999);
  zLong[4999] = 0;
  ck_assert_int_ne(wcs_table_alter(e, zLong, "FAMILY f"), WCS_OK);
  ck_assert_int_eq((int)strlen(wcs_engine_errmsg(e)), 2047);
  ck_assert_str_eq(wcs_engine_errmsg(e) + 2044, "...");
  zMine = strdup(wcs_engine_errmsg(e));
  /* another thread's failure leaves this thread's message alone */
  ck_assert_int_eq(pthread_create(&th, NULL, failInThread, e), 0);
  ck_assert_int_eq(pthread_join(th, &pMsg), 0);
  ck_assert_msg(strstr(pMsg, "no_such_table") != NULL, "%s", (char *)pMsg);
  ck_assert_str_eq(wcs_engine_errmsg(e), zMine);
  free(pMsg);
  free(zMine);
  free(zLong);
  wcs_engine_close(e);
}
END_TEST

/* Keys of the overlay test: byte strings of 0 to 3 bytes over three
** letters, all 40 of them in byte order. */
#define OVK_N 40
static void ovKeys(uint8_t aKey[OVK_N][3], int *anKey) {
  int n = 0, len, i, j;
  for (len = 0; len <= 3; len++) {
    int nOf = len == 0 ? 1 : len == 1 ? 3 : len == 2 ? 9 : 27;
    for (i = 0; i < nOf; i++) {
      int x = i;
      for (j = len - 1; j >= 0; j--) {
        aKey[n][j] = (uint8_t)(0x10 * (1 + x % 3));
        x /= 3;
      }
      anKey[n++] = len;
    }
  }
  /* byte order */
  for (i = 1; i < n; i++) {
    for (j = i; j > 0 && wcs_bytes_cmp(aKey[j - 1], (size_t)anKey[j - 1],
                                       aKey[j], (size_t)anKey[j]) > 0;
         j--) {
      uint8_t t[3];
      int nt = anKey[j];
      memcpy(t, aKey[j], 3);
      memcpy(aKey[j], aKey[j - 1], 3);
      memcpy(aKey[j - 1], t, 3);
      anKey[j] = anKey[j - 1];
      anKey[j - 1] = nt;
    }
  }
}

/* The ranges of o must be the union of the half-open ranges [aS[i],
** aE[i]) (indexes into the sorted keys) in its canonical form: sorted,
** disjoint, not touching, and each key covered iff a range holds it. */
static void ovCheck(Overlay *o, uint8_t aKey[OVK_N][3], const int *anKey,
                    const int *aS, const int *aE, int nAdded) {
  int aCov[OVK_N] = {0}, i, j, nRun = 0;
  OvRange *r = ov_range_first(o);
  for (i = 0; i < nAdded; i++) {
    for (j = aS[i]; j < aE[i]; j++)
      aCov[j] = 1;
  }
  for (i = 0; i < OVK_N; i++) {
    ck_assert_int_eq(ov_range_covers(o, aKey[i], (size_t)anKey[i]), aCov[i]);
  }
  /* each run of covered keys is one range from its first key to the key
  ** after it (or, at the end, to the largest end added) */
  for (i = 0; i < OVK_N; i = j) {
    const uint8_t *s, *e;
    size_t ns, ne;
    if (!aCov[i]) {
      j = i + 1;
      continue;
    }
    for (j = i; j < OVK_N && aCov[j]; j++) {
    }
    ck_assert_ptr_nonnull(r);
    ov_range_bounds(r, &s, &ns, &e, &ne);
    ck_assert_int_eq(wcs_bytes_cmp(s, ns, aKey[i], (size_t)anKey[i]), 0);
    ck_assert(j < OVK_N);
    ck_assert_int_eq(wcs_bytes_cmp(e, ne, aKey[j], (size_t)anKey[j]), 0);
    r = ov_range_next(r);
    nRun++;
  }
  ck_assert_ptr_null(r);
  ck_assert_int_eq(ov_range_count(o), nRun);
}

/* The overlay's range deletes (a skiplist): random ranges, and the
** pattern of a statement deleting rows of two families one after the
** other (the ranges of each family added in order, the two interleaved),
** against a model over every key of a small key space; a clone holds the
** same ranges, and a point entry under a range is wiped. */
START_TEST(test_overlay_range_deletes_match_a_model) {
  uint8_t aKey[OVK_N][3];
  int anKey[OVK_N], aS[400], aE[400], nAdded, iRound, i;
  uint64_t x = 0x243F6A8885A308D3ull;
  ovKeys(aKey, anKey);
  for (iRound = 0; iRound < 60; iRound++) {
    Overlay *o = NULL, *q = NULL;
    int nOps = 1 + iRound % 30;
    ck_assert_int_eq(ov_new(&o), WCS_OK);
    nAdded = 0;
    for (i = 0; i < nOps; i++) {
      int a, b;
      if (iRound % 3 == 2) {
        /* rows of two families: keys 1..19 and 20..39, ranges of one key
        ** each, the families alternating */
        a = (i % 2 ? 20 : 1) + (i / 2) * 2 % 19;
        b = a + 1;
      } else {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        a = (int)((x >> 33) % (OVK_N - 1));
        b = a + 1 +
            (int)((x >> 45) % (uint64_t)(iRound % 2 ? 3 : OVK_N - a - 1));
        if (b >= OVK_N) b = OVK_N - 1;
        if (a >= b) continue;
      }
      ck_assert_int_eq(ov_delete_range(o, aKey[a], (size_t)anKey[a], aKey[b],
                                       (size_t)anKey[b]),
                       WCS_OK);
      aS[nAdded] = a;
      aE[nAdded++] = b;
      ovCheck(o, aKey, anKey, aS, aE, nAdded);
    }
    ck_assert_int_eq(ov_clone(o, &q), WCS_OK);
    ovCheck(q, aKey, anKey, aS, aE, nAdded);
    /* a point entry, then a range over it: wiped, not kept */
    ck_assert_int_eq(ov_put(q, aKey[39], 3, "v", 1), WCS_OK);
    ck_assert_int_eq(ov_delete_range(q, aKey[38], 3, aKey[39], 3), WCS_OK);
    ck_assert_int_eq(ov_node_kind(ov_first(q)), OV_PUT);
    ck_assert_int_eq(ov_delete_range(q, aKey[39], 3, "\xff", 1), WCS_OK);
    ck_assert_int_eq(ov_node_kind(ov_first(q)), OV_NONE);
    ov_free(q);
    ov_clear(o);
    ovCheck(o, aKey, anKey, aS, aE, 0);
    ov_free(o);
  }
}
END_TEST

Suite *engine_txn_suite(void) {
  Suite *s = suite_create("engine_txn");
  TCase *tc = tcase_create("txn");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_set_cell_keys_are_eng_cell_keys);
  tcase_add_test(tc, test_a_frozen_cursor_reads_the_writes_of_its_moment);
  tcase_add_test(tc, test_set_cell_rows_differing_in_one_byte);
  tcase_add_test(tc, test_prebuilt_commit_of_a_load_in_key_order);
  tcase_add_test(tc, test_prebuild_dropped_by_a_savepoint_rollback);
  tcase_add_test(tc, test_prebuild_dropped_by_a_delete);
  tcase_add_loop_test(tc, test_prebuild_dropped_by_a_key_out_of_order, 0, 2);
  tcase_add_test(tc, test_prebuild_starts_over_after_a_rollback_to_empty);
  tcase_add_test(tc, test_prebuild_rollback_leaves_nothing);
  tcase_add_test(tc, test_big_log_is_faulted_in_ahead);
  tcase_add_test(tc, test_precheck_refuses_what_commit_would);
  tcase_add_test(tc, test_commits_in_flight_are_awaited);
  tcase_add_test(tc, test_error_messages_are_per_thread_and_cut);
  tcase_add_test(tc, test_overlay_range_deletes_match_a_model);
  suite_add_tcase(s, tc);
  return s;
}
