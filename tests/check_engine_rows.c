/*
** check_engine_rows.c — rows from the files' notes (engine/rownote.c,
** engine/cursor.c rows_proven; doc/engine.md). A read of some families
** that must still return every row of the table (bRowsOfAll, or keys
** only) skips the other families only when the files' notes prove that
** every family has the same rows. These tests check both sides: when
** the families do have the same rows in one sorted run (also with rows
** split across files), only the asked family is read (its cells alone
** come back); whenever something could make the rows differ — a row in
** one family only, in the memtable or in files; a delete; a transaction's
** own writes; a snapshot older than the files; an age limit or a time
** filter — the rows are still exactly the table's rows.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "wcs.h"

Suite *engine_rows_suite(void);

#define T0 1700000000000000LL /* the engine clock, unless moved */

static int64_t iNow = T0;
static int64_t fixed_now(void *p) {
  (void)p;
  return iNow;
}

#define OKX(x) ck_assert_int_eq((x), WCS_OK)

static wcs_engine *open_dir(const char *zDir) {
  wcs_options o;
  wcs_engine *e = NULL;
  char *zErr = NULL;
  int rc;
  iNow = T0;
  wcs_options_init(&o);
  o.bNoBackground = 1;
  o.nMemtable = 256 * 1024;
  o.nFileBytes = 16 * 1024; /* a family in several files */
  o.nBlockSize = 1024;
  o.iZstdLevel = 0; /* files of a few rows' bytes each */
  o.nL0Trigger = 100;
  o.nL0Stop = 200;
  rc = wcs_engine_open_path(&e, zDir, &o, &zErr);
  ck_assert_msg(rc == WCS_OK, "open: %s", zErr ? zErr : "?");
  wcs_engine_set_clock(e, fixed_now, NULL);
  return e;
}

/* Close table t, engine e and remove its directory zDir (malloc'd). */
static void close_dir(wcs_engine *e, wcs_table *t, char *zDir) {
  wcs_table_close(t);
  OKX(wcs_engine_close(e));
  tu_rmrf(zDir);
  free(zDir);
}

/* Write row i: nA cells in family a, nB in family b (0: none). */
static void put_row(wcs_txn *x, wcs_table *t, int i, int nA, int nB) {
  char zRow[16], zQ[16], zV[32];
  int q;
  snprintf(zRow, sizeof zRow, "r%05d", i);
  for (q = 0; q < nA + nB; q++) {
    snprintf(zQ, sizeof zQ, "q%02d", q);
    snprintf(zV, sizeof zV, "v%d.%d", i, q);
    OKX(wcs_txn_set_cell(x, t, zRow, strlen(zRow), q < nA ? "a" : "b", zQ,
                         strlen(zQ), T0 - 1000 + q, zV, strlen(zV)));
  }
}

static void put_rows(wcs_engine *e, wcs_table *t, int iFrom, int iTo, int nA,
                     int nB) {
  wcs_txn *x = NULL;
  int i;
  OKX(wcs_txn_begin(e, 0, &x));
  for (i = iFrom; i < iTo; i++)
    put_row(x, t, i, nA, nB);
  OKX(wcs_txn_commit(x));
  wcs_txn_free(x);
}

static void compact_all(wcs_engine *e) {
  OKX(wcs_db_compact_range(wcs_engine_db(e), NULL, 0, NULL, 0));
}

/* A read of family a (bRowsOfAll) or of keys only (bKeys): the rows it
** returns and how many cells of each family came with them; whether the
** files' notes counted its rows (wcs_cursor_rows_left), and how many. */
typedef struct Read {
  int nRow;
  long anCell[2];
  char zFirst[16], zLast[16];
  int bCounted;
  uint64_t nCounted;
} Read;

static Read read_rows(wcs_table *t, wcs_txn *x, int bKeys, int64_t iMinTs,
                      int bReverse) {
  wcs_read_options o;
  wcs_cursor *c = NULL;
  const char *az[1] = {"a"};
  Read r;
  memset(&r, 0, sizeof r);
  wcs_read_options_init(&o);
  if (bKeys) {
    o.bKeysOnly = 1;
  } else {
    o.azFamily = az;
    o.nFamily = 1;
    o.bRowsOfAll = 1;
  }
  o.iMinTs = iMinTs;
  o.bReverse = bReverse;
  OKX(wcs_cursor_open(&c, t, x, &o));
  r.bCounted = wcs_cursor_rows_left(c, &r.nCounted);
  if (r.bCounted && !wcs_cursor_eof(c)) r.nCounted++;
  while (!wcs_cursor_eof(c)) {
    size_t nRow;
    const char *pRow = wcs_cursor_row(c, &nRow);
    int nCell, i;
    const wcs_cell *a = wcs_cursor_cells(c, &nCell);
    uint64_t nLeft = 0;
    ck_assert_uint_lt(nRow, sizeof r.zLast);
    if (r.nRow++ == 0) memcpy(r.zFirst, pRow, nRow);
    memcpy(r.zLast, pRow, nRow);
    r.zLast[nRow] = 0;
    for (i = 0; i < nCell; i++)
      r.anCell[a[i].iFamily]++;
    /* a count, once known, stays so and counts down with the rows */
    ck_assert_int_eq(wcs_cursor_rows_left(c, &nLeft), r.bCounted);
    if (r.bCounted) ck_assert_uint_eq(nLeft + (uint64_t)r.nRow, r.nCounted);
    OKX(wcs_cursor_next(c));
  }
  /* whenever the notes counted the rows, the count is the rows read */
  if (r.bCounted) ck_assert_uint_eq(r.nCounted, (uint64_t)r.nRow);
  wcs_cursor_close(c);
  return r;
}

/* Families a and b with the same rows, in files that split rows: the read
** of a returns every row and no cell of b (b was not read). */
START_TEST(test_rows_same_rows_read_one_family) {
  char *zDir = strdup(tu_tmpdir("engrows"));
  wcs_engine *e = open_dir(zDir);
  wcs_table *t = NULL;
  Read r;
  OKX(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t));
  put_rows(e, t, 0, 600, 5, 3);
  put_rows(e, t, 300, 900, 2, 1); /* overwrites some, adds more */
  compact_all(e);
  ck_assert_int_gt(tu_level_files(wcs_engine_db(e), tu_only_level(
                                                       wcs_engine_db(e))),
                   2);
  r = read_rows(t, NULL, 0, 0, 0);
  ck_assert_int_eq(r.nRow, 900);
  ck_assert_int_eq(r.anCell[0], 600 * 5 + 300 * 2);
  ck_assert_int_eq(r.anCell[1], 0);
  r = read_rows(t, NULL, 0, 0, 1);
  ck_assert_int_eq(r.nRow, 900);
  ck_assert_str_eq(r.zFirst, "r00899");
  ck_assert_int_eq(r.anCell[1], 0);
  r = read_rows(t, NULL, 1, 0, 0);
  ck_assert_int_eq(r.nRow, 900);
  /* a time filter may hide one family's cells only: both are read */
  r = read_rows(t, NULL, 0, T0 - 999, 0);
  ck_assert_int_eq(r.nRow, 900);
  ck_assert_int_gt(r.anCell[1], 0);
  close_dir(e, t, zDir);
}
END_TEST

/* A row in family b only, in the memtable, in level 0, and after a
** compaction: every read still returns it. */
START_TEST(test_rows_row_of_one_family_is_found) {
  char *zDir = strdup(tu_tmpdir("engrows"));
  wcs_engine *e = open_dir(zDir);
  wcs_table *t = NULL;
  Read r;
  int iStep;
  OKX(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t));
  put_rows(e, t, 0, 500, 2, 2);
  compact_all(e);
  ck_assert_int_eq(read_rows(t, NULL, 0, 0, 0).anCell[1], 0);
  put_rows(e, t, 700, 701, 0, 1);
  for (iStep = 0; iStep < 3; iStep++) {
    if (iStep == 1) OKX(wcs_db_flush(wcs_engine_db(e)));
    if (iStep == 2) compact_all(e);
    r = read_rows(t, NULL, 0, 0, 0);
    ck_assert_int_eq(r.nRow, 501);
    ck_assert_str_eq(r.zLast, "r00700");
    ck_assert_int_eq(r.anCell[1], 500 * 2 + 1);
    ck_assert_int_eq(read_rows(t, NULL, 1, 0, 0).nRow, 501);
  }
  close_dir(e, t, zDir);
}
END_TEST

/* Deleting a row's cells of family a leaves the row (family b): found
** before and after compactions. */
START_TEST(test_rows_delete_of_one_family) {
  char *zDir = strdup(tu_tmpdir("engrows"));
  wcs_engine *e = open_dir(zDir);
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  int iStep;
  OKX(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t));
  put_rows(e, t, 0, 400, 2, 2);
  compact_all(e);
  OKX(wcs_txn_begin(e, 0, &x));
  OKX(wcs_txn_delete_family(x, t, "r00123", 6, "a"));
  OKX(wcs_txn_commit(x));
  wcs_txn_free(x);
  for (iStep = 0; iStep < 3; iStep++) {
    Read r;
    if (iStep == 1) OKX(wcs_db_flush(wcs_engine_db(e)));
    if (iStep == 2) compact_all(e);
    r = read_rows(t, NULL, 0, 0, 0);
    ck_assert_int_eq(r.nRow, 400);
    ck_assert_int_eq(r.anCell[0], 399 * 2);
    ck_assert_int_eq(read_rows(t, NULL, 1, 0, 0).nRow, 400);
  }
  close_dir(e, t, zDir);
}
END_TEST

/* A transaction's own row of family b, and a snapshot older than the
** files: reads see the rows of their own state. */
START_TEST(test_rows_transaction_and_snapshot) {
  char *zDir = strdup(tu_tmpdir("engrows"));
  wcs_engine *e = open_dir(zDir);
  wcs_table *t = NULL;
  wcs_txn *x = NULL, *y = NULL;
  Read r;
  OKX(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t));
  put_rows(e, t, 0, 300, 1, 1);
  compact_all(e);
  OKX(wcs_txn_begin(e, 0, &x));
  put_row(x, t, 999, 0, 2);
  r = read_rows(t, x, 0, 0, 0);
  ck_assert_int_eq(r.nRow, 301);
  ck_assert_int_eq(read_rows(t, x, 1, 0, 0).nRow, 301);
  OKX(wcs_txn_rollback(x));
  wcs_txn_free(x);
  ck_assert_int_eq(read_rows(t, NULL, 0, 0, 0).nRow, 300);

  /* y reads at its snapshot, where row 999 has cells of b only; then
  ** row 999 gets cells of a, and rows of b alone are added, all compacted
  ** into files newer than that snapshot (where a and b have the same
  ** rows again) */
  put_rows(e, t, 999, 1000, 0, 1);
  OKX(wcs_txn_begin(e, 0, &y));
  ck_assert_int_eq(read_rows(t, y, 0, 0, 0).nRow, 301);
  put_rows(e, t, 999, 1000, 1, 0);
  compact_all(e);
  ck_assert_int_eq(read_rows(t, NULL, 0, 0, 0).anCell[1], 0);
  ck_assert_int_eq(read_rows(t, y, 0, 0, 0).nRow, 301);
  ck_assert_int_eq(read_rows(t, y, 1, 0, 0).nRow, 301);
  put_rows(e, t, 500, 520, 0, 1);
  compact_all(e);
  ck_assert_int_eq(read_rows(t, y, 0, 0, 0).nRow, 301);
  OKX(wcs_txn_rollback(y));
  wcs_txn_free(y);
  ck_assert_int_eq(read_rows(t, NULL, 0, 0, 0).nRow, 321);
  close_dir(e, t, zDir);
}
END_TEST

/* An age limit hides cells at read time: a row whose family-a cells
** expired after the compaction kept them is a row of family b only, so
** both families are read. */
START_TEST(test_rows_age_limit_reads_every_family) {
  char *zDir = strdup(tu_tmpdir("engrows"));
  wcs_engine *e = open_dir(zDir);
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  Read r;
  OKX(wcs_table_create(e, "t", "FAMILY a MAX AGE '1h', FAMILY b", &t));
  OKX(wcs_txn_begin(e, 0, &x));
  OKX(wcs_txn_set_cell(x, t, "old", 3, "a", "q", 1, T0 - 1800000000LL, "v",
                       1));
  OKX(wcs_txn_set_cell(x, t, "old", 3, "b", "q", 1, T0 - 1800000000LL, "v",
                       1));
  OKX(wcs_txn_commit(x));
  wcs_txn_free(x);
  put_rows(e, t, 0, 50, 1, 1);
  compact_all(e);
  ck_assert_int_eq(read_rows(t, NULL, 0, 0, 0).nRow, 51);
  iNow = T0 + 3600000000LL; /* "old" has a cell of b only now */
  r = read_rows(t, NULL, 0, 0, 0);
  ck_assert_int_eq(r.nRow, 51);
  ck_assert_int_eq(r.anCell[0], 0); /* the others are old by now too */
  ck_assert_int_eq(read_rows(t, NULL, 1, 0, 0).nRow, 51);
  close_dir(e, t, zDir);
}
END_TEST

/* How many rows a keys-only read of t through x is known to have from
** the notes (and a row limit), without reading them; -1: not known. */
static long counted(wcs_table *t, wcs_txn *x, uint64_t nRowLimit,
                    const wcs_key_range *pRange) {
  wcs_read_options o;
  wcs_cursor *c = NULL;
  uint64_t n = 0;
  long nRet = -1;
  wcs_read_options_init(&o);
  o.bKeysOnly = 1;
  o.nRowLimit = nRowLimit;
  o.aRange = pRange;
  o.nRange = pRange != NULL;
  OKX(wcs_cursor_open(&c, t, x, &o));
  if (wcs_cursor_rows_left(c, &n)) nRet = (long)n + !wcs_cursor_eof(c);
  wcs_cursor_close(c);
  return nRet;
}

static int drop_all(void *pCtx, const void *pRow, size_t nRow,
                    const void **ppSeek, size_t *pnSeek) {
  (void)pCtx, (void)pRow, (void)nRow, (void)ppSeek, (void)pnSeek;
  return WCS_ROW_SKIP;
}

/* A keys-only read of a whole table knows how many rows it has, without
** reading them, exactly when the notes prove the rows: settled data, no
** delete left, nothing of the transaction's own; never with a range, a
** row filter, a time filter or after a seek. */
START_TEST(test_rows_counted_from_notes) {
  char *zDir = strdup(tu_tmpdir("engrows"));
  wcs_engine *e = open_dir(zDir);
  wcs_table *t = NULL, *u = NULL;
  wcs_txn *x = NULL;
  wcs_read_options o;
  wcs_cursor *c = NULL;
  wcs_key_range rg;
  uint64_t n = 0;
  Read r;
  OKX(wcs_table_create(e, "t", "FAMILY a, FAMILY b", &t));
  OKX(wcs_table_create(e, "u", "FAMILY a", &u));
  put_rows(e, t, 0, 600, 5, 3);
  put_rows(e, t, 300, 900, 2, 1);
  put_rows(e, u, 0, 250, 3, 0);
  ck_assert_int_eq(counted(t, NULL, 0, NULL), -1); /* in the memtable */
  ck_assert_int_eq(counted(u, NULL, 0, NULL), -1);
  ck_assert_int_eq(read_rows(t, NULL, 1, 0, 0).nRow, 900);
  compact_all(e);
  ck_assert_int_eq(counted(t, NULL, 0, NULL), 900);
  ck_assert_int_eq(counted(u, NULL, 0, NULL), 250); /* one family */
  ck_assert_int_eq(counted(t, NULL, 10, NULL), 10);
  r = read_rows(t, NULL, 1, 0, 0);
  ck_assert(r.bCounted);
  ck_assert_int_eq(r.nRow, 900);
  ck_assert(read_rows(t, NULL, 1, 0, 1).bCounted);         /* reverse too */
  ck_assert(!read_rows(t, NULL, 0, 0, 0).bCounted);        /* cells of a */
  ck_assert(!read_rows(t, NULL, 1, T0 - 999, 0).bCounted); /* time filter */
  memset(&rg, 0, sizeof rg);
  rg.pStart = "r00100";
  rg.nStart = 6;
  ck_assert_int_eq(counted(t, NULL, 0, &rg), -1);

  /* a row filter, and a seek */
  wcs_read_options_init(&o);
  o.bKeysOnly = 1;
  o.xRowFilter = drop_all;
  OKX(wcs_cursor_open(&c, t, NULL, &o));
  ck_assert(wcs_cursor_eof(c));
  ck_assert(!wcs_cursor_rows_left(c, &n));
  wcs_cursor_close(c);
  wcs_read_options_init(&o);
  o.bKeysOnly = 1;
  OKX(wcs_cursor_open(&c, t, NULL, &o));
  ck_assert(wcs_cursor_rows_left(c, &n));
  ck_assert_uint_eq(n, 899);
  OKX(wcs_cursor_seek(c, "r00500", 6));
  ck_assert(!wcs_cursor_rows_left(c, &n));
  wcs_cursor_close(c);

  /* a transaction's own row: not counted; a read-only one: counted */
  OKX(wcs_txn_begin(e, 0, &x));
  ck_assert_int_eq(counted(t, x, 0, NULL), 900);
  put_row(x, t, 950, 1, 1);
  ck_assert_int_eq(counted(t, x, 0, NULL), -1);
  ck_assert_int_eq(read_rows(t, x, 1, 0, 0).nRow, 901);
  OKX(wcs_txn_commit(x));
  wcs_txn_free(x);
  ck_assert_int_eq(counted(t, NULL, 0, NULL), -1); /* in the memtable */
  OKX(wcs_db_flush(wcs_engine_db(e)));
  ck_assert_int_eq(counted(t, NULL, 0, NULL), -1); /* two levels */
  compact_all(e);
  ck_assert_int_eq(counted(t, NULL, 0, NULL), 901);

  /* a deleted row: not counted until the compaction drops its cells */
  OKX(wcs_txn_begin(e, 0, &x));
  OKX(wcs_txn_delete_row(x, t, "r00950", 6));
  OKX(wcs_txn_commit(x));
  wcs_txn_free(x);
  OKX(wcs_db_flush(wcs_engine_db(e)));
  ck_assert_int_eq(counted(t, NULL, 0, NULL), -1);
  ck_assert_int_eq(read_rows(t, NULL, 1, 0, 0).nRow, 900);
  compact_all(e);
  ck_assert_int_eq(counted(t, NULL, 0, NULL), 900);

  /* a row of one family only: the families differ, nothing is counted */
  put_rows(e, t, 970, 971, 0, 1);
  compact_all(e);
  ck_assert_int_eq(counted(t, NULL, 0, NULL), -1);
  ck_assert_int_eq(read_rows(t, NULL, 1, 0, 0).nRow, 901);
  wcs_table_close(u);
  close_dir(e, t, zDir);
}
END_TEST

Suite *engine_rows_suite(void) {
  Suite *s = suite_create("engine_rows");
  TCase *tc = tcase_create("rows");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_rows_same_rows_read_one_family);
  tcase_add_test(tc, test_rows_row_of_one_family_is_found);
  tcase_add_test(tc, test_rows_delete_of_one_family);
  tcase_add_test(tc, test_rows_transaction_and_snapshot);
  tcase_add_test(tc, test_rows_age_limit_reads_every_family);
  tcase_add_test(tc, test_rows_counted_from_notes);
  suite_add_tcase(s, tc);
  return s;
}
