/*
** Tests of bulk ingest (storage/ingest.c and its commit in storage/db.c):
** a batch of at least nIngestBytes is written straight into sorted files.
** What is checked: the path is taken (the "ingests" statistic) and the
** files land at the level the rule says (deepest level overlapping nothing
** at or above it, else level 0); the batch becomes visible all at once and
** never to snapshots or iterators made before it; it survives reopens and
** a process crash, together with the small commits around it (whose WAL
** records must not be skipped by recovery); range deletes and repeated
** keys in one batch; later writes, deletes and compactions over ingested
** data; a damaged ingested file is reported as corruption; a full disk or
** a failing sync while the files are written leaves none of them behind;
** and a randomized differential run against a model mixing ingested and
** logged batches with snapshots, compactions and reopens (WCS_SEED replays
** one).
** Batches adopted with a run prefix (wcs_batch_adopt), as the engine
** commits a load of several families: the plan reads their interleaved
** runs without sorting, cuts them for two threads, and falls back to
** sorting whenever the hint does not hold; the data reads back the same.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/db_int.h"
#include "storage/ikey.h"
#include "storage/ingest.h"
#include "storage/util.h"
#include "storage/wal.h"
#include "testutil.h"
#include "wcs.h"

Suite *storage_ingest_suite(void);

#define OK(x) TU_DB_OK(x)

#define INGEST_MIN 4096 /* batches of this many bytes are ingested */

static void options(wcs_options *o) {
  wcs_options_init(o);
  o->nMemtable = 64 * 1024;
  o->nL1Bytes = 64 * 1024;
  o->nFileBytes = 16 * 1024;
  o->nBlockSize = 1024;
  o->nL0Trigger = 4;
  o->nL0Stop = 12;
  o->nIngestBytes = INGEST_MIN;
}

/* Put keys zPre[lo, hi) with values tagged zTag in one batch; asserts it
** is big enough to be ingested. */
static void putRange(wcs_db *db, const char *zPre, int lo, int hi,
                     const char *zTag) {
  wcs_batch *b = NULL;
  char k[64], v[128];
  int i;
  OK(wcs_batch_new(&b));
  for (i = lo; i < hi; i++) {
    tu_key_of(k, zPre, i);
    tu_val_of(v, zTag, i);
    OK(wcs_batch_put(b, k, strlen(k), v, strlen(v)));
  }
  ck_assert_uint_ge(wcs_batch_bytes(b), INGEST_MIN);
  OK(wcs_db_write(db, b));
  wcs_batch_free(b);
}

/* Does key zPre<i> read as the value tagged zTag (NULL: absent)? */
static void checkKey(wcs_db *db, const wcs_snapshot *s, const char *zPre,
                     int i, const char *zTag) {
  char k[64], v[128];
  const char *zGot;
  tu_key_of(k, zPre, i);
  zGot = tu_get_str(db, s, k);
  if (zTag == NULL) {
    ck_assert_msg(zGot == NULL, "%s: expected absent, got %s", k, zGot);
  } else {
    tu_val_of(v, zTag, i);
    ck_assert_msg(zGot && strcmp(zGot, v) == 0, "%s: expected %s, got %s", k,
                  v, zGot ? zGot : "(absent)");
  }
}

/* Keys of a full scan at s. */
static int countKeys(wcs_db *db, const wcs_snapshot *s) {
  wcs_iter_options io;
  wcs_iter *it = NULL;
  int n = 0, rc;
  memset(&io, 0, sizeof io);
  io.pSnap = s;
  OK(wcs_iter_new(db, &io, &it));
  for (rc = wcs_iter_first(it); wcs_iter_valid(it); rc = wcs_iter_next(it))
    n++;
  ck_assert_int_eq(rc, WCS_OK);
  ck_assert_int_eq(wcs_iter_status(it), WCS_OK);
  wcs_iter_free(it);
  return n;
}

START_TEST(test_ingest_into_empty_store_goes_to_last_level) {
  wcs_db *db = NULL;
  wcs_options o;
  const char *zDir = tu_tmpdir("ingest_last");
  int i;
  options(&o);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  putRange(db, "a", 0, 5000, "one");
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
  ck_assert_uint_eq(tu_db_stat(db, "wal_bytes"), 0); /* nothing was logged */
  ck_assert_int_eq(tu_only_level(db), 6);
  ck_assert_int_gt(tu_level_files(db, 6), 1); /* cut at nFileBytes */
  for (i = 0; i < 5000; i += 37)
    checkKey(db, NULL, "a", i, "one");
  checkKey(db, NULL, "a", 5000, NULL);
  ck_assert_int_eq(countKeys(db, NULL), 5000);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);

  /* reopen: the manifest names the files */
  db = NULL;
  OK(wcs_db_open(&db, zDir, &o, NULL));
  ck_assert_int_eq(tu_only_level(db), 6);
  ck_assert_int_eq(countKeys(db, NULL), 5000);
  checkKey(db, NULL, "a", 4999, "one");
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_ingest_level_is_deepest_without_overlap_above) {
  wcs_db *db = NULL;
  wcs_options o;
  const char *zDir = tu_tmpdir("ingest_levels");
  int n5, n6;
  options(&o);
  o.bNoBackground = 1; /* no compaction moves files between the checks */
  o.nL0Trigger = 100;
  o.nL0Stop = 100;
  o.nL1Bytes = 1u << 30;
  OK(wcs_db_open(&db, zDir, &o, NULL));
  putRange(db, "k", 0, 1000, "A");
  ck_assert_int_gt(tu_level_files(db, 6), 0);
  /* overlaps level 6 only: level 5 */
  putRange(db, "k", 500, 1500, "B");
  ck_assert_int_gt(tu_level_files(db, 5), 0);
  /* disjoint from everything: level 6 beside A */
  n5 = tu_level_files(db, 5);
  n6 = tu_level_files(db, 6);
  putRange(db, "z", 0, 500, "C");
  ck_assert_int_eq(tu_level_files(db, 5), n5);
  ck_assert_int_gt(tu_level_files(db, 6), n6);
  /* overlaps level 5: level 4 */
  putRange(db, "k", 1400, 1600, "D");
  ck_assert_int_gt(tu_level_files(db, 4), 0);
  ck_assert_int_eq(tu_level_files(db, 0), 0);
  /* a logged write inside the range is flushed to level 0 first; an
  ** ingest overlapping it goes to level 0 above it */
  OK(tu_put_one(db, "k", 100, "E"));
  putRange(db, "k", 50, 150, "F");
  ck_assert_int_eq(tu_level_files(db, 0), 2);
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 5);
  /* newest wins everywhere */
  checkKey(db, NULL, "k", 0, "A");
  checkKey(db, NULL, "k", 100, "F");
  checkKey(db, NULL, "k", 200, "A");
  checkKey(db, NULL, "k", 700, "B");
  checkKey(db, NULL, "k", 1450, "D");
  checkKey(db, NULL, "k", 1550, "D");
  checkKey(db, NULL, "k", 1700, NULL);
  checkKey(db, NULL, "z", 499, "C");
  ck_assert_int_eq(countKeys(db, NULL), 1600 + 500);
  /* and after compacting it all together */
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  checkKey(db, NULL, "k", 100, "F");
  checkKey(db, NULL, "k", 1450, "D");
  checkKey(db, NULL, "k", 700, "B");
  ck_assert_int_eq(countKeys(db, NULL), 1600 + 500);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_ingest_is_invisible_to_earlier_snapshots_and_iterators) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_snapshot *s = NULL;
  wcs_iter *it = NULL;
  const char *zDir = tu_tmpdir("ingest_snap");
  char k[64];
  options(&o);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  putRange(db, "k", 0, 1000, "old");
  OK(wcs_snapshot_new(db, &s));
  OK(wcs_iter_new(db, NULL, &it));
  putRange(db, "k", 500, 1500, "new");
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 2);
  /* the snapshot reads the state before the ingest */
  checkKey(db, s, "k", 700, "old");
  checkKey(db, s, "k", 1200, NULL);
  ck_assert_int_eq(countKeys(db, s), 1000);
  /* so does the iterator made before it */
  tu_key_of(k, "k", 1200);
  OK(wcs_iter_seek(it, k, strlen(k)));
  ck_assert(!wcs_iter_valid(it));
  tu_key_of(k, "k", 700);
  OK(wcs_iter_seek(it, k, strlen(k)));
  ck_assert(wcs_iter_valid(it));
  {
    size_t n;
    const char *p = wcs_iter_value(it, &n);
    ck_assert(n >= 3 && memcmp(p, "old", 3) == 0);
  }
  /* a refresh sees all of it */
  OK(wcs_iter_refresh(it));
  tu_key_of(k, "k", 1200);
  OK(wcs_iter_seek(it, k, strlen(k)));
  ck_assert(wcs_iter_valid(it));
  /* new reads see the whole batch */
  checkKey(db, NULL, "k", 700, "new");
  checkKey(db, NULL, "k", 1499, "new");
  checkKey(db, NULL, "k", 499, "old");
  ck_assert_int_eq(countKeys(db, NULL), 1500);
  /* compactions keep what the snapshot sees */
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  checkKey(db, s, "k", 700, "old");
  checkKey(db, s, "k", 1200, NULL);
  checkKey(db, NULL, "k", 700, "new");
  wcs_iter_free(it);
  wcs_snapshot_free(db, s);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_ingest_range_deletes_and_repeated_keys_in_one_batch) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_batch *b = NULL;
  const char *zDir = tu_tmpdir("ingest_rdel");
  char k[64], k2[64], v[128];
  int i, pass;
  options(&o);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  putRange(db, "k", 0, 1000, "old");
  for (pass = 0; pass < 2; pass++) {
    /* pass 0: in key order; pass 1: descending, so the ingest sorts */
    OK(wcs_batch_new(&b));
    for (i = 0; i < 1000; i++) {
      int j = pass == 0 ? i : 999 - i;
      if (j % 10 != 3) continue;
      tu_key_of(k, "k", j);
      tu_val_of(v, "first", j);
      OK(wcs_batch_put(b, k, strlen(k), v, strlen(v)));
    }
    /* delete [k000100, k000200): the old keys and this batch's above */
    tu_key_of(k, "k", 100);
    tu_key_of(k2, "k", 200);
    OK(wcs_batch_delete_range(b, k, strlen(k), k2, strlen(k2)));
    /* puts after the range delete survive it (k000150 and the "second"
    ** ones at 103, 123, ..., 183); later puts win */
    tu_key_of(k, "k", 150);
    tu_val_of(v, "after", 150);
    OK(wcs_batch_put(b, k, strlen(k), v, strlen(v)));
    for (i = 0; i < 1000; i++) {
      int j = pass == 0 ? i : 999 - i;
      if (j % 10 != 3 || j % 20 != 3) continue;
      tu_key_of(k, "k", j);
      tu_val_of(v, "second", j);
      OK(wcs_batch_put(b, k, strlen(k), v, strlen(v)));
    }
    tu_key_of(k, "k", 503);
    OK(wcs_batch_delete(b, k, strlen(k)));
    /* an open range delete from k000990 */
    tu_key_of(k, "k", 990);
    OK(wcs_batch_delete_range(b, k, strlen(k), NULL, 0));
    ck_assert_uint_ge(wcs_batch_bytes(b), INGEST_MIN);
    OK(wcs_db_write(db, b));
    wcs_batch_free(b);
    ck_assert_uint_eq(tu_db_stat(db, "ingests"), 2); /* counted since the open */

    checkKey(db, NULL, "k", 99, "old");
    checkKey(db, NULL, "k", 100, NULL);
    checkKey(db, NULL, "k", 113, NULL);
    checkKey(db, NULL, "k", 150, "after");
    checkKey(db, NULL, "k", 199, NULL);
    checkKey(db, NULL, "k", 200, "old");
    checkKey(db, NULL, "k", 213, "first");
    checkKey(db, NULL, "k", 223, "second");
    checkKey(db, NULL, "k", 503, NULL);
    checkKey(db, NULL, "k", 989, "old");
    checkKey(db, NULL, "k", 990, NULL);
    checkKey(db, NULL, "k", 999, NULL);
    ck_assert_int_eq(countKeys(db, NULL), 1000 - 100 + 1 + 5 - 1 - 10);
    ck_assert_int_eq(wcs_db_close(db), WCS_OK);
    db = NULL;
    OK(wcs_db_open(&db, zDir, &o, NULL));
    checkKey(db, NULL, "k", 150, "after");
    checkKey(db, NULL, "k", 113, NULL);
    checkKey(db, NULL, "k", 995, NULL);
    ck_assert_int_eq(countKeys(db, NULL), 1000 - 100 + 1 + 5 - 1 - 10);
    /* put the deleted keys back for the next pass */
    putRange(db, "k", 0, 1000, "old");
  }
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

/* ---- payloads for wcs_batch_adopt: interleaved runs */

/* Start a payload: the header gap. */
static void payStart(wcs_buf *p) {
  p->n = 0;
  ck_assert_int_eq(wcs_buf_reserve(p, WAL_BATCH_HEADER), WCS_OK);
  memset(p->a, 0, WAL_BATCH_HEADER);
  p->n = WAL_BATCH_HEADER;
}

/* Append one operation (v NULL: a delete; op WAL_OP_RANGEDEL: v is the
** end). */
static void payOp(wcs_buf *p, int op, const char *k, const char *v) {
  uint8_t c = (uint8_t)op;
  ck_assert_int_eq(wcs_buf_append(p, &c, 1), WCS_OK);
  ck_assert_int_eq(wcs_buf_append_varint(p, strlen(k)), WCS_OK);
  ck_assert_int_eq(wcs_buf_append(p, k, strlen(k)), WCS_OK);
  if (v) {
    ck_assert_int_eq(wcs_buf_append_varint(p, strlen(v)), WCS_OK);
    ck_assert_int_eq(wcs_buf_append(p, v, strlen(v)), WCS_OK);
  }
}

/* Rows [0, n) of runs "a:", "b:", "c:" (2-byte prefixes) interleaved row
** by row, as a load of three families writes them; returns the ops. */
static int payRuns(wcs_buf *p, int n, const char *zTag) {
  char k[64], v[128];
  int i, r;
  for (i = 0; i < n; i++) {
    for (r = 0; r < 3; r++) {
      char zPre[3] = {(char)('a' + r), ':', 0};
      tu_key_of(k, zPre, i);
      tu_val_of(v, zTag, i);
      payOp(p, WAL_OP_PUT, k, v);
    }
  }
  return 3 * n;
}

/* The runs of a plan of payload p with nOp operations and prefix nPre. */
static int planRuns(wcs_buf *p, int nOp, size_t nPre, int *pbSplit) {
  ingest_plan *pPlan = NULL;
  char *zErr = NULL;
  int n, rc;
  wcs_put64(p->a + WAL_BATCH_OFF_SEQ, 1);
  wcs_put32(p->a + WAL_BATCH_OFF_COUNT, (uint32_t)nOp);
  rc = ingest_plan_new(p->a, p->n, nPre, &pPlan, &zErr);
  ck_assert_msg(rc == WCS_OK, "plan: %s", zErr ? zErr : "?");
  n = ingest_plan_runs(pPlan);
  if (pbSplit) *pbSplit = ingest_plan_split(pPlan);
  ingest_plan_free(pPlan);
  return n;
}

/* A new payload of n one-operation runs, their prefixes descending from
** ('a' + n - 1) ":" down to "a:". */
static void payDescendingRuns(wcs_buf *p, int n) {
  char k[64];
  int i;
  payStart(p);
  for (i = 0; i < n; i++) {
    char zPre[3] = {(char)('a' + n - 1 - i), ':', 0};
    tu_key_of(k, zPre, i);
    payOp(p, WAL_OP_PUT, k, "x");
  }
}

START_TEST(test_ingest_plan_reads_interleaved_runs_and_checks_the_hint) {
  wcs_buf p = {0};
  char k[64];
  int nOp, bSplit = 0, i;
  /* three families row by row: three runs with the hint, sorted without */
  payStart(&p);
  nOp = payRuns(&p, 2000, "v");
  ck_assert_int_eq(planRuns(&p, nOp, 2, &bSplit), 3);
  ck_assert_int_eq(bSplit, 1);
  ck_assert_int_eq(planRuns(&p, nOp, 0, &bSplit), 0);
  ck_assert_int_eq(bSplit, 1); /* the sorted entries are cut instead */
  /* a batch in key order is one run with or without the hint */
  payStart(&p);
  for (i = 0; i < 100; i++) {
    tu_key_of(k, "a:", i);
    payOp(&p, WAL_OP_PUT, k, "x");
  }
  ck_assert_int_eq(planRuns(&p, 100, 0, NULL), 1);
  ck_assert_int_eq(planRuns(&p, 100, 2, NULL), 1);
  /* a range delete in the middle is not part of any run */
  payStart(&p);
  nOp = payRuns(&p, 50, "v");
  payOp(&p, WAL_OP_RANGEDEL, "b:", "b:~");
  nOp++;
  for (i = 50; i < 60; i++) {
    tu_key_of(k, "c:", i);
    payOp(&p, WAL_OP_PUT, k, "x");
    nOp++;
  }
  ck_assert_int_eq(planRuns(&p, nOp, 2, NULL), 3);
  /* the hint is wrong: a run goes down */
  payStart(&p);
  nOp = payRuns(&p, 50, "v");
  tu_key_of(k, "b:", 10);
  payOp(&p, WAL_OP_PUT, k, "x");
  ck_assert_int_eq(planRuns(&p, nOp + 1, 2, NULL), 0);
  /* a key repeats in its run */
  payStart(&p);
  nOp = payRuns(&p, 50, "v");
  tu_key_of(k, "c:", 49);
  payOp(&p, WAL_OP_PUT, k, "again");
  ck_assert_int_eq(planRuns(&p, nOp + 1, 2, NULL), 0);
  /* a key shorter than the prefix */
  payStart(&p);
  nOp = payRuns(&p, 50, "v");
  payOp(&p, WAL_OP_PUT, "z", "x");
  ck_assert_int_eq(planRuns(&p, nOp + 1, 2, NULL), 0);
  /* INGEST_RUNS_MAX (8) runs, given in descending order, and one more */
  payDescendingRuns(&p, 8);
  ck_assert_int_eq(planRuns(&p, 8, 2, NULL), 8);
  payDescendingRuns(&p, 9);
  ck_assert_int_eq(planRuns(&p, 9, 2, NULL), 0);
  wcs_buf_free(&p);
}
END_TEST

/* Append 150,000 operations of run "b:" and then 100 of run "a:" (over
** 8 MiB: the plan cuts the batch in two inside run b). */
static void payBThenA(wcs_buf *p) {
  char k[64], v[128];
  int i;
  for (i = 0; i < 150000; i++) {
    tu_key_of(k, "b:", i);
    tu_val_of(v, "v", i);
    payOp(p, WAL_OP_PUT, k, v);
  }
  for (i = 0; i < 100; i++) {
    tu_key_of(k, "a:", i);
    payOp(p, WAL_OP_PUT, k, "x");
  }
}

/* A batch of 8 MiB or more (INGEST_SPLIT_MIN, cut in two halves): a run
** is checked across the cut, and bad bytes in the upper half or a wrong
** operation count are reported. */
START_TEST(test_ingest_plan_of_a_large_batch_checks_runs_across_halves) {
  wcs_buf p = {0};
  ingest_plan *pPlan = NULL;
  char k[64], *zErr = NULL;
  int nOp, bSplit = 0, rc;
  size_t iLast;
  payStart(&p);
  nOp = payRuns(&p, 50000, "v");
  ck_assert_uint_ge(p.n, 8u << 20);
  ck_assert_int_eq(planRuns(&p, nOp, 2, &bSplit), 3);
  ck_assert_int_eq(bSplit, 1);
  ck_assert_int_eq(planRuns(&p, nOp, 0, &bSplit), 0);
  /* a key of run c: again near the end */
  tu_key_of(k, "c:", 40000);
  payOp(&p, WAL_OP_PUT, k, "again");
  ck_assert_int_eq(planRuns(&p, nOp + 1, 2, NULL), 0);
  /* run a: one key above all others at the start, the rest at the end:
  ** each half increases, the two together do not */
  payStart(&p);
  payOp(&p, WAL_OP_PUT, "a:999999", "x");
  payBThenA(&p);
  ck_assert_uint_ge(p.n, 8u << 20);
  ck_assert_int_eq(planRuns(&p, 1 + 150000 + 100, 2, NULL), 0);
  ck_assert_int_eq(planRuns(&p, 1 + 150000 + 100, 0, NULL), 0);
  /* without the first key: two runs */
  payStart(&p);
  payBThenA(&p);
  ck_assert_int_eq(planRuns(&p, 150000 + 100, 2, &bSplit), 2);
  ck_assert_int_eq(bSplit, 1);
  /* bad bytes in the upper half: an unknown operation code */
  iLast = p.n;
  payOp(&p, WAL_OP_PUT, "c:", "x");
  p.a[iLast] = 0x7f;
  wcs_put64(p.a + WAL_BATCH_OFF_SEQ, 1);
  wcs_put32(p.a + WAL_BATCH_OFF_COUNT, 150000 + 100 + 1);
  rc = ingest_plan_new(p.a, p.n, 2, &pPlan, &zErr);
  ck_assert_int_eq(rc, WCS_CORRUPT);
  ck_assert_ptr_null(pPlan);
  ck_assert_ptr_nonnull(strstr(zErr, "do not parse"));
  wcs_free(zErr);
  zErr = NULL;
  /* a count larger than the operations, or smaller (bytes left over) */
  p.a[iLast] = WAL_OP_PUT;
  wcs_put32(p.a + WAL_BATCH_OFF_COUNT, 150000 + 100 + 2);
  rc = ingest_plan_new(p.a, p.n, 2, &pPlan, &zErr);
  ck_assert_int_eq(rc, WCS_CORRUPT);
  wcs_free(zErr);
  zErr = NULL;
  wcs_put32(p.a + WAL_BATCH_OFF_COUNT, 150000 + 100);
  rc = ingest_plan_new(p.a, p.n, 2, &pPlan, &zErr);
  ck_assert_int_eq(rc, WCS_CORRUPT);
  wcs_free(zErr);
  zErr = NULL;
  wcs_put32(p.a + WAL_BATCH_OFF_COUNT, 150000 + 100 + 1);
  rc = ingest_plan_new(p.a, p.n, 2, &pPlan, &zErr);
  ck_assert_int_eq(rc, WCS_OK);
  ck_assert_int_eq(ingest_plan_runs(pPlan), 3);
  ingest_plan_free(pPlan);
  wcs_buf_free(&p);
}
END_TEST

/* Check that a scan reads rows [0, n) of the three runs with zTag values,
** except row iAgain of run "a:", which reads "again" when iAgain >= 0. */
static void checkRuns(wcs_db *db, int n, const char *zTag, int iAgain) {
  wcs_iter_options io;
  wcs_iter *it = NULL;
  char k[64], v[128];
  int i = 0, r = 0, rc;
  memset(&io, 0, sizeof io);
  OK(wcs_iter_new(db, &io, &it));
  for (rc = wcs_iter_first(it); wcs_iter_valid(it); rc = wcs_iter_next(it)) {
    char zPre[3] = {(char)('a' + r), ':', 0};
    size_t nk, nv;
    const void *pk = wcs_iter_key(it, &nk);
    const void *pv = wcs_iter_value(it, &nv);
    ck_assert_int_lt(r, 3);
    tu_key_of(k, zPre, i);
    if (r == 0 && i == iAgain) {
      strcpy(v, "again");
    } else {
      tu_val_of(v, zTag, i);
    }
    ck_assert_msg(nk == strlen(k) && memcmp(pk, k, nk) == 0,
                  "key %d of run %d: expected %s, got %.*s", i, r, k, (int)nk,
                  (const char *)pk);
    ck_assert_msg(nv == strlen(v) && memcmp(pv, v, nv) == 0,
                  "value of %s: expected %s, got %.*s", k, v, (int)nv,
                  (const char *)pv);
    if (++i == n) {
      i = 0;
      r++;
    }
  }
  ck_assert_int_eq(rc, WCS_OK);
  ck_assert_int_eq(r, 3);
  wcs_iter_free(it);
}

START_TEST(test_ingest_adopted_batch_of_interleaved_runs_reads_back) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_batch *b = NULL;
  wcs_buf p = {0};
  const char *zDir = tu_tmpdir("ingest_runs");
  char k[64], k2[64];
  /* enough bytes for two threads (INGEST_SPLIT_MIN, 8 MiB) */
  int nBig = 50000, nOp, i;
  options(&o);
  o.nFileBytes = 1 << 20;
  OK(wcs_db_open(&db, zDir, &o, NULL));

  /* pass 1: the runs, cut for two threads */
  payStart(&p);
  nOp = payRuns(&p, nBig, "one");
  ck_assert_uint_ge(p.n, 8u << 20);
  OK(wcs_batch_new(&b));
  OK(wcs_batch_adopt(b, &p, nOp, 2));
  ck_assert_int_eq(p.n, 0); /* the batch's old buffer, empty */
  ck_assert_int_eq(wcs_batch_count(b), nOp);
  OK(wcs_db_write(db, b));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
  checkRuns(db, nBig, "one", -1);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  db = NULL;
  OK(wcs_db_open(&db, zDir, &o, NULL));
  checkRuns(db, nBig, "one", -1);

  /* pass 2: runs with a range delete (one part, the compaction writer):
  ** old keys b:100000.. go under it, the batch's own keys after it stay */
  putRange(db, "b:1", 0, 100, "old");
  payStart(&p);
  tu_key_of(k, "b:1", 0);
  tu_key_of(k2, "b:1", 50);
  payOp(&p, WAL_OP_RANGEDEL, k, k2);
  nOp = 1 + payRuns(&p, 1000, "two");
  wcs_batch_clear(b);
  OK(wcs_batch_adopt(b, &p, nOp, 2));
  OK(wcs_db_write(db, b));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 2); /* since the reopen */
  checkKey(db, NULL, "b:1", 0, NULL);
  checkKey(db, NULL, "b:1", 49, NULL);
  checkKey(db, NULL, "b:1", 50, "old");
  for (i = 0; i < 1000; i += 99) {
    checkKey(db, NULL, "a:", i, "two");
    checkKey(db, NULL, "b:", i, "two");
    checkKey(db, NULL, "c:", i, "two");
  }
  checkKey(db, NULL, "a:", 1000, "one");
  {
    wcs_batch *d = NULL;
    OK(wcs_batch_new(&d));
    OK(wcs_batch_delete_range(d, "b:1", 3, "b:2", 3));
    OK(wcs_db_write(db, d));
    wcs_batch_free(d);
  }

  /* pass 3: the hint is wrong (a key of run a: comes again): sorted, and
  ** the later write wins */
  payStart(&p);
  nOp = payRuns(&p, nBig, "three");
  tu_key_of(k, "a:", 7);
  payOp(&p, WAL_OP_PUT, k, "again");
  wcs_batch_clear(b);
  OK(wcs_batch_adopt(b, &p, nOp + 1, 2));
  OK(wcs_db_write(db, b));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 3);
  checkRuns(db, nBig, "three", 7);
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  checkRuns(db, nBig, "three", 7);
  wcs_batch_free(b);
  wcs_buf_free(&p);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

/* Key i of run r with a run prefix of nPre bytes into z: the runs'
** prefixes are 00 bytes but for one byte, 'x' in the middle (run 1) or at
** the end (run 2), then the row number; rows cycle through key lengths of
** about 13, 40, 60 and 140 bytes (one-byte and two-byte varints). */
static size_t runKey(uint8_t *z, size_t nPre, int r, int i) {
  static const int anPad[] = {0, 27, 47, 127};
  size_t n = nPre;
  memset(z, 0, nPre);
  if (r == 1) z[nPre / 2] = 'x';
  if (r == 2) z[nPre - 1] = 'x';
  n += (size_t)sprintf((char *)z + n, "%06d", i);
  memset(z + n, '0' + r, (size_t)anPad[i % 4]);
  return n + (size_t)anPad[i % 4];
}

/* Value of key i of run r into z: 200 bytes for every fifth row. */
static size_t runVal(uint8_t *z, int r, int i) {
  size_t n = (size_t)sprintf((char *)z, "v%d.%d", r, i);
  if (i % 5 == 0) {
    memset(z + n, 'v', 200 - n);
    n = 200;
  }
  return n;
}

/* The direct writer of sorted runs matches each operation to its run by
** its first nPre bytes and copies keys of every length: prefixes of 3 to
** 17 bytes that differ from one another in one byte only, keys and values
** of one-byte and two-byte lengths, all read back. */
START_TEST(test_ingest_runs_with_prefixes_of_every_width_read_back) {
  static const size_t anPre[] = {3, 4, 5, 6, 7, 8, 12, 16, 17};
  wcs_db *db = NULL;
  wcs_options o;
  wcs_batch *b = NULL;
  wcs_buf p = {0};
  const char *zDir = tu_tmpdir("ingest_widths");
  int w, n = 300;
  options(&o);
  for (w = 0; w < (int)(sizeof anPre / sizeof anPre[0]); w++) {
    size_t nPre = anPre[w];
    uint8_t k[256], v[256];
    int i, r, nOp = 0;
    if (db) wcs_db_close(db);
    db = NULL;
    tu_rmrf(zDir);
    OK(wcs_db_open(&db, zDir, &o, NULL));
    payStart(&p);
    for (i = 0; i < n; i++) {
      for (r = 0; r < 3; r++) {
        size_t nK = runKey(k, nPre, r, i), nV = runVal(v, r, i);
        uint8_t c = WAL_OP_PUT;
        ck_assert_int_eq(wcs_buf_append(&p, &c, 1), WCS_OK);
        ck_assert_int_eq(wcs_buf_append_varint(&p, nK), WCS_OK);
        ck_assert_int_eq(wcs_buf_append(&p, k, nK), WCS_OK);
        ck_assert_int_eq(wcs_buf_append_varint(&p, nV), WCS_OK);
        ck_assert_int_eq(wcs_buf_append(&p, v, nV), WCS_OK);
        nOp++;
      }
    }
    ck_assert_int_eq(planRuns(&p, nOp, nPre, NULL), 3);
    OK(wcs_batch_new(&b));
    OK(wcs_batch_adopt(b, &p, nOp, nPre));
    OK(wcs_db_write(db, b));
    wcs_batch_free(b);
    ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
    ck_assert_int_eq(countKeys(db, NULL), 3 * n);
    for (i = 0; i < n; i++) {
      for (r = 0; r < 3; r++) {
        size_t nK = runKey(k, nPre, r, i), nV = runVal(v, r, i), nGot = 0;
        void *pGot = NULL;
        OK(wcs_db_get(db, NULL, k, nK, &pGot, &nGot));
        ck_assert_msg(pGot && nGot == nV && memcmp(pGot, v, nV) == 0,
                      "prefix %zu, run %d, row %d", nPre, r, i);
        wcs_free(pGot);
      }
    }
  }
  wcs_buf_free(&p);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

/* A batch adopted with a run prefix whose one point key is shorter than
** the prefix is not a sorted run: the plan sorts it, and its key range
** must still cover that key, or the file would go to a level below the
** key's older version and reads would find the old value. */
START_TEST(test_ingest_single_key_shorter_than_the_run_prefix) {
  wcs_db *db = NULL;
  wcs_batch *b = NULL;
  wcs_buf p = {0};
  wcs_options o;
  const char *zDir = tu_tmpdir("ingest_short");
  char aBig[INGEST_MIN + 1];
  options(&o);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  OK(wcs_db_put(db, "z", 1, "old", 3));
  OK(wcs_db_flush(db));
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  memset(aBig, 'n', INGEST_MIN);
  aBig[INGEST_MIN] = 0;
  payStart(&p);
  payOp(&p, WAL_OP_PUT, "z", aBig);
  OK(wcs_batch_new(&b));
  OK(wcs_batch_adopt(b, &p, 1, 2));
  OK(wcs_db_write(db, b));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
  {
    void *pGot = NULL;
    size_t nGot = 0;
    OK(wcs_db_get(db, NULL, "z", 1, &pGot, &nGot));
    ck_assert_uint_eq(nGot, INGEST_MIN);
    ck_assert(pGot != NULL && memcmp(pGot, aBig, nGot) == 0);
    wcs_free(pGot);
  }
  wcs_batch_free(b);
  wcs_buf_free(&p);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

/* A batch in key order with range deletes between its puts stays one
** run; the plan collects its tombstones (more than its first array
** holds) as it checks the order, and drops an empty one. */
START_TEST(test_ingest_sorted_batch_keeps_its_many_range_deletes) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_batch *b = NULL;
  wcs_buf p = {0};
  const char *zDir = tu_tmpdir("ingest_sorted_rdel");
  char k[64], k2[64], v[128];
  int nOp = 0, i;
  options(&o);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  putRange(db, "k", 0, 1000, "old");
  payStart(&p);
  for (i = 0; i < 1000; i += 10) {
    /* delete k[i+1, i+5) of the old keys, put n<i> */
    tu_key_of(k, "k", i + 1);
    tu_key_of(k2, "k", i + 5);
    payOp(&p, WAL_OP_RANGEDEL, k, k2);
    tu_key_of(k, "n", i);
    tu_val_of(v, "new", i);
    payOp(&p, WAL_OP_PUT, k, v);
    nOp += 2;
  }
  tu_key_of(k, "k", 507);
  tu_key_of(k2, "k", 506);
  payOp(&p, WAL_OP_RANGEDEL, k, k2); /* empty: deletes nothing */
  nOp++;
  ck_assert_int_eq(planRuns(&p, nOp, 0, NULL), 1);
  OK(wcs_batch_new(&b));
  OK(wcs_batch_adopt(b, &p, nOp, 0));
  OK(wcs_db_write(db, b));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 2);
  for (i = 0; i < 1000; i++) {
    int r = i % 10;
    checkKey(db, NULL, "k", i, r >= 1 && r < 5 ? NULL : "old");
  }
  for (i = 0; i < 1000; i += 10)
    checkKey(db, NULL, "n", i, "new");
  ck_assert_int_eq(countKeys(db, NULL), 600 + 100);
  wcs_batch_free(b);
  wcs_buf_free(&p);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

/* ---- faults while an ingest writes its files */

/*
** One case: a fresh store over the fault env ingests three interleaved
** runs (with bDel, after a range delete that hides nothing, so that
** compact_run writes them instead of the direct writer) while the nth
** append (bSync: sync) from the start of the ingest fails once. Returns
** 1 when the fault did not land in the files: the ingest succeeded, or
** it failed in the manifest edit, which is sticky. Else the commit must
** fail with the injected code, leave no sorted file behind, and the same
** batch must then go in.
*/
static int ingestFaultCase(int bDel, int bSync, int n) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_fault fault;
  wcs_env *pEnv;
  wcs_batch *b = NULL;
  wcs_buf p = {0};
  const char *zDir = tu_tmpdir("ingest_fault");
  char *zErr = NULL;
  int rcWant = bSync ? WCS_IOERR : WCS_FULL, rc, nOp = 0, bDone = 0;
  memset(&fault, 0, sizeof fault);
  pEnv = wcs_env_fault_new(wcs_env_posix(), &fault);
  ck_assert_ptr_nonnull(pEnv);
  options(&o);
  o.bNoBackground = 1;
  rc = wcs_db_open_env(&db, zDir, &o, pEnv, &zErr);
  ck_assert_msg(rc == WCS_OK, "open: %s", zErr ? zErr : "");
  payStart(&p);
  if (bDel) {
    payOp(&p, WAL_OP_RANGEDEL, "0", "1");
    nOp++;
  }
  nOp += payRuns(&p, 2000, "f");
  OK(wcs_batch_new(&b));
  OK(wcs_batch_adopt(b, &p, nOp, 2));
  fault.rcFail = rcWant;
  if (bSync) {
    fault.nSyncFail = fault.nSyncs + n;
  } else {
    fault.nWriteFail = fault.nWrites + n;
  }
  rc = wcs_db_write(db, b);
  fault.nWriteFail = fault.nSyncFail = 0;
  if (rc == WCS_OK) {
    bDone = 1;
  } else {
    ck_assert_msg(rc == rcWant, "fault at call %d: %s (%s)", n, wcs_errstr(rc),
                  wcs_errmsg(db));
    rc = wcs_db_write(db, b);
    if (rc != WCS_OK) {
      bDone = 1; /* the edit failed: sticky */
    } else {
      /* nothing of the failed ingest is left: the directory holds
      ** the files of the retry only */
      ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
      ck_assert_int_eq(tu_count_ssts(zDir), tu_level_files(db, 6));
      checkRuns(db, 2000, "f", -1);
    }
  }
  wcs_batch_free(b);
  wcs_buf_free(&p);
  (void)wcs_db_close(db); /* may repeat a sticky error */
  pEnv->xDestroy(pEnv);
  tu_rmrf(zDir);
  return bDone;
}

/* Both writers of an ingest, at every append and every sync of its
** files: the commit fails with the injected code and deletes what it
** wrote (finished files and the one being built), and the store goes on. */
START_TEST(test_ingest_fault_in_its_files_leaves_none_behind) {
  int bDel, bSync, n;
  for (bDel = 0; bDel < 2; bDel++) {
    for (bSync = 0; bSync < 2; bSync++) {
      for (n = 1; !ingestFaultCase(bDel, bSync, n); n++) {
      }
      ck_assert_int_gt(n, 3); /* it failed in several files */
    }
  }
}
END_TEST

/* ---- ingest_level against files made by hand (no readers) */

/* A file of user keys [zLo, zHi]: bLoDel starts it at (zLo, sentinel), a
** range tombstone from zLo; bHiDel ends it at (zHi, sentinel), a
** tombstone clipped at zHi, which holds nothing of zHi. */
typedef struct HandFile {
  wcs_fmeta f;
  uint8_t aLo[32], aHi[32];
} HandFile;

static wcs_fmeta *handFile(HandFile *p, const char *zLo, int bLoDel,
                           const char *zHi, int bHiDel) {
  size_t nLo = strlen(zLo), nHi = strlen(zHi);
  memset(p, 0, sizeof *p);
  memcpy(p->aLo, zLo, nLo);
  wcs_put64(p->aLo + nLo,
            bLoDel ? WCS_IKEY_SENTINEL : wcs_ikey_pack(1, WCS_KT_PUT));
  memcpy(p->aHi, zHi, nHi);
  wcs_put64(p->aHi + nHi,
            bHiDel ? WCS_IKEY_SENTINEL : wcs_ikey_pack(1, WCS_KT_PUT));
  p->f.pSmallest = p->aLo;
  p->f.nSmallest = nLo + WCS_IKEY_TRAILER;
  p->f.pLargest = p->aHi;
  p->f.nLargest = nHi + WCS_IKEY_TRAILER;
  return &p->f;
}

/* The level ingest_level picks in v for a batch putting keys zA < zB. */
static int levelFor(const wcs_version *v, const char *zA, const char *zB) {
  wcs_buf p = {0};
  ingest_plan *pPlan = NULL;
  char *zErr = NULL;
  int iLevel;
  payStart(&p);
  payOp(&p, WAL_OP_PUT, zA, "x");
  payOp(&p, WAL_OP_PUT, zB, "x");
  wcs_put64(p.a + WAL_BATCH_OFF_SEQ, 100);
  wcs_put32(p.a + WAL_BATCH_OFF_COUNT, 2);
  ck_assert_int_eq(ingest_plan_new(p.a, p.n, 0, &pPlan, &zErr), WCS_OK);
  iLevel = ingest_level(v, pPlan);
  ingest_plan_free(pPlan);
  wcs_buf_free(&p);
  return iLevel;
}

START_TEST(test_ingest_level_reads_tombstone_ends_as_the_version_does) {
  wcs_version v;
  HandFile a, b, c1, c2;
  wcs_fmeta *apL5[2], *apL6[1];
  memset(&v, 0, sizeof v);
  /* a file ending at (m, sentinel) holds nothing of m: a batch from m
  ** goes beside it, as the next file of a level may start there */
  apL6[0] = handFile(&a, "a", 0, "m", 1);
  v.anFile[6] = 1;
  v.aaFile[6] = apL6;
  ck_assert_int_eq(levelFor(&v, "m", "n"), 6);
  ck_assert_int_eq(levelFor(&v, "l", "n"), 5);
  /* a file from (p, sentinel) deletes p: a batch whose last key is p
  ** goes above it */
  apL6[0] = handFile(&b, "p", 1, "z", 0);
  ck_assert_int_eq(levelFor(&v, "n", "p"), 5);
  ck_assert_int_eq(levelFor(&v, "n", "o"), 6);
  /* a compaction of [c, d] and [f, (m, sentinel)] from level 5 may write
  ** anywhere in [c, m), the gap between its inputs too, but nothing of m */
  v.anFile[6] = 0;
  apL5[0] = handFile(&c1, "c", 0, "d", 0);
  apL5[1] = handFile(&c2, "f", 0, "m", 1);
  c1.f.bCompacting = c2.f.bCompacting = 1;
  v.anFile[5] = 2;
  v.aaFile[5] = apL5;
  ck_assert_int_eq(levelFor(&v, "e0", "e1"), 4);
  ck_assert_int_eq(levelFor(&v, "m", "n"), 6);
}
END_TEST

START_TEST(test_ingest_then_writes_deletes_and_compactions) {
  wcs_db *db = NULL;
  wcs_options o;
  const char *zDir = tu_tmpdir("ingest_mixed");
  char k[64], v[128];
  int i;
  options(&o);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  putRange(db, "k", 0, 3000, "A");
  /* small writes over it: through the WAL */
  for (i = 0; i < 3000; i += 3) {
    tu_key_of(k, "k", i);
    if (i % 2) {
      OK(wcs_db_delete(db, k, strlen(k)));
    } else {
      tu_val_of(v, "B", i);
      OK(wcs_db_put(db, k, strlen(k), v, strlen(v)));
    }
  }
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
  putRange(db, "k", 2500, 3500, "C");
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  for (i = 0; i < 3500; i++) {
    const char *zTag = "A";
    if (i >= 2500) zTag = "C";
    else if (i % 3 == 0) zTag = i % 2 ? NULL : "B";
    checkKey(db, NULL, "k", i, zTag);
  }
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  db = NULL;
  OK(wcs_db_open(&db, zDir, &o, NULL));
  checkKey(db, NULL, "k", 3, NULL);
  checkKey(db, NULL, "k", 6, "B");
  checkKey(db, NULL, "k", 2700, "C");
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

/* A process that logs, ingests, logs again and dies without closing: the
** logged commits before the ingest were flushed by it, the ones after are
** in the WAL, and recovery must replay them (their sequence numbers are
** above the manifest's, which the ingest moved). */
START_TEST(test_ingest_survives_a_process_crash_with_logged_commits_around) {
  wcs_db *db = NULL;
  wcs_options o;
  const char *zDir = tu_tmpdir("ingest_crash");
  pid_t pid;
  int st;
  options(&o);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    char k[64];
    if (wcs_db_open(&db, zDir, &o, NULL)) _exit(2);
    if (tu_put_one(db, "k", 5, "before")) _exit(3);
    if (tu_put_one(db, "m", 1, "before")) _exit(3);
    putRange(db, "k", 0, 1000, "ingested");
    if (tu_put_one(db, "k", 7, "after")) _exit(4);
    tu_key_of(k, "k", 8);
    if (wcs_db_delete(db, k, strlen(k))) _exit(4);
    _exit(0); /* no close */
  }
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  checkKey(db, NULL, "k", 5, "ingested");
  checkKey(db, NULL, "m", 1, "before");
  checkKey(db, NULL, "k", 7, "after");
  checkKey(db, NULL, "k", 8, NULL);
  checkKey(db, NULL, "k", 999, "ingested");
  ck_assert_int_eq(countKeys(db, NULL), 1000 - 1 + 1);
  /* later writes get sequence numbers above the ingested ones */
  OK(tu_put_one(db, "k", 9, "reopened"));
  OK(wcs_db_flush(db));
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  checkKey(db, NULL, "k", 9, "reopened");
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_ingest_damaged_file_is_reported_as_corrupt) {
  wcs_db *db = NULL;
  wcs_options o;
  const char *zDir = tu_tmpdir("ingest_corrupt");
  char zDirCopy[1024], zFile[1100];
  uint8_t *p;
  size_t n;
  int rc, i, nBad = 0;
  options(&o);
  o.nFileBytes = 1u << 20; /* one file */
  snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  putRange(db, "k", 0, 2000, "A");
  ck_assert_int_eq(tu_level_files(db, 6), 1);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  db = NULL;
  /* the store's only sorted file: the first number after the manifest's */
  for (i = 1; i < 100; i++) {
    snprintf(zFile, sizeof zFile, "%s/%06d.sst", zDirCopy, i);
    if (access(zFile, F_OK) == 0) break;
  }
  ck_assert_int_lt(i, 100);
  p = tu_read_file(zFile, &n);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_gt(n, 100);
  p[10] ^= 0x40; /* inside the first data block */
  ck_assert_int_eq(tu_write_file(zFile, p, n), 0);
  free(p);
  rc = wcs_db_open(&db, zDirCopy, &o, NULL);
  if (rc == WCS_OK) {
    for (i = 0; i < 2000; i += 10) {
      char k[64];
      void *pV = NULL;
      size_t nV;
      tu_key_of(k, "k", i);
      rc = wcs_db_get(db, NULL, k, strlen(k), &pV, &nV);
      wcs_free(pV);
      if (rc) {
        ck_assert_int_eq(rc, WCS_CORRUPT);
        ck_assert_ptr_nonnull(strstr(wcs_errmsg(db), ".sst"));
        nBad++;
      }
    }
    wcs_db_close(db);
  } else {
    ck_assert_int_eq(rc, WCS_CORRUPT);
    nBad = 1;
  }
  ck_assert_int_gt(nBad, 0);
  tu_rmrf(zDirCopy);
}
END_TEST

START_TEST(test_ingest_in_memory_store_and_threshold_option) {
  wcs_db *db = NULL;
  wcs_options o;
  options(&o);
  o.bInMemory = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  putRange(db, "k", 0, 1000, "A");
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
  checkKey(db, NULL, "k", 999, "A");
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  /* UINT64_MAX turns it off */
  db = NULL;
  o.nIngestBytes = UINT64_MAX;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  putRange(db, "k", 0, 1000, "A");
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 0);
  checkKey(db, NULL, "k", 999, "A");
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
}
END_TEST

/* ---- randomized differential run */

#define NKEY 600

typedef struct MState {
  int aVer[NKEY]; /* value version of key i, 0: absent */
} MState;

static void checkModel(wcs_db *db, const wcs_snapshot *s, const MState *m) {
  int i, n = 0;
  for (i = 0; i < NKEY; i++) {
    char k[64], v[128];
    const char *zGot;
    tu_key_of(k, "r", i);
    zGot = tu_get_str(db, s, k);
    if (m->aVer[i] == 0) {
      ck_assert_msg(zGot == NULL, "%s: expected absent, got %s", k, zGot);
    } else {
      sprintf(v, "v%d", m->aVer[i]);
      tu_val_of(v + strlen(v), "", i);
      ck_assert_msg(zGot && strcmp(zGot, v) == 0, "%s: expected %s, got %s",
                    k, v, zGot ? zGot : "(absent)");
      n++;
    }
  }
  ck_assert_int_eq(countKeys(db, s), n);
}

static void differential(int bMem, int bNoBackground, int nStep) {
  wcs_db *db = NULL;
  wcs_options o;
  MState m, mSnap;
  wcs_snapshot *s = NULL;
  const char *zDir = bMem ? NULL : tu_tmpdir("ingest_diff");
  char zDirCopy[1024];
  int step, ver = 0;
  uint64_t nIngests = 0; /* the statistic restarts at every open */
  tu_seed(0);
  options(&o);
  o.bInMemory = bMem;
  o.nIngestBytes = 2048;
  o.bNoBackground = bNoBackground;
  if (zDir) snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  OK(wcs_db_open(&db, zDir ? zDirCopy : NULL, &o, NULL));
  memset(&m, 0, sizeof m);
  for (step = 0; step < nStep; step++) {
    int r = (int)tu_rand_range(100);
    if (r < 60) {
      /* a batch of random operations, small or large */
      wcs_batch *b = NULL;
      int nOp = 1 + (int)tu_rand_range(tu_rand_range(4) ? 20 : 400), i;
      OK(wcs_batch_new(&b));
      ver++;
      for (i = 0; i < nOp; i++) {
        int q = (int)tu_rand_range(100), k0 = (int)tu_rand_range(NKEY);
        char k[64], k2[64], v[128];
        tu_key_of(k, "r", k0);
        if (q < 80) {
          sprintf(v, "v%d", ver);
          tu_val_of(v + strlen(v), "", k0);
          OK(wcs_batch_put(b, k, strlen(k), v, strlen(v)));
          m.aVer[k0] = ver;
        } else if (q < 95) {
          OK(wcs_batch_delete(b, k, strlen(k)));
          m.aVer[k0] = 0;
        } else {
          int k1 = k0 + (int)tu_rand_range(30), j;
          tu_key_of(k2, "r", k1);
          OK(wcs_batch_delete_range(b, k, strlen(k), k2, strlen(k2)));
          for (j = k0; j < k1 && j < NKEY; j++)
            m.aVer[j] = 0;
        }
      }
      OK(wcs_db_write(db, b));
      wcs_batch_free(b);
    } else if (r < 70) {
      if (s) wcs_snapshot_free(db, s);
      OK(wcs_snapshot_new(db, &s));
      mSnap = m;
    } else if (r < 75) {
      OK(wcs_db_flush(db));
    } else if (r < 80) {
      OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
    } else if (r < 85 && !bMem) {
      if (s) wcs_snapshot_free(db, s);
      s = NULL;
      nIngests += tu_db_stat(db, "ingests");
      ck_assert_int_eq(wcs_db_close(db), WCS_OK);
      db = NULL;
      OK(wcs_db_open(&db, zDirCopy, &o, NULL));
    } else {
      checkModel(db, NULL, &m);
      if (s) checkModel(db, s, &mSnap);
    }
  }
  checkModel(db, NULL, &m);
  if (s) checkModel(db, s, &mSnap);
  ck_assert_uint_gt(nIngests + tu_db_stat(db, "ingests"), 0);
  if (s) wcs_snapshot_free(db, s);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  if (zDir) tu_rmrf(zDirCopy);
}

START_TEST(test_ingest_differential_disk) {
  differential(0, 0, 400);
}
END_TEST

START_TEST(test_ingest_differential_memory_inline) {
  differential(1, 1, 400);
}
END_TEST

Suite *storage_ingest_suite(void) {
  Suite *s = suite_create("storage_ingest");
  TCase *tc = tcase_create("ingest");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_ingest_into_empty_store_goes_to_last_level);
  tcase_add_test(tc, test_ingest_level_is_deepest_without_overlap_above);
  tcase_add_test(tc,
                 test_ingest_is_invisible_to_earlier_snapshots_and_iterators);
  tcase_add_test(tc, test_ingest_range_deletes_and_repeated_keys_in_one_batch);
  tcase_add_test(tc,
                 test_ingest_plan_reads_interleaved_runs_and_checks_the_hint);
  tcase_add_test(tc,
                 test_ingest_plan_of_a_large_batch_checks_runs_across_halves);
  tcase_add_test(tc, test_ingest_adopted_batch_of_interleaved_runs_reads_back);
  tcase_add_test(tc, test_ingest_then_writes_deletes_and_compactions);
  tcase_add_test(
      tc, test_ingest_survives_a_process_crash_with_logged_commits_around);
  tcase_add_test(tc, test_ingest_damaged_file_is_reported_as_corrupt);
  tcase_add_test(tc, test_ingest_in_memory_store_and_threshold_option);
  tcase_add_test(tc, test_ingest_differential_disk);
  tcase_add_test(tc, test_ingest_differential_memory_inline);
  tcase_add_test(tc, test_ingest_single_key_shorter_than_the_run_prefix);
  tcase_add_test(tc, test_ingest_runs_with_prefixes_of_every_width_read_back);
  tcase_add_test(tc,
                 test_ingest_level_reads_tombstone_ends_as_the_version_does);
  tcase_add_test(tc, test_ingest_sorted_batch_keeps_its_many_range_deletes);
  tcase_add_test(tc, test_ingest_fault_in_its_files_leaves_none_behind);
  suite_add_tcase(s, tc);
  return s;
}
