/*
** Tests of the store (storage/db.c) through the public API: basic reads
** and writes, range deletes, snapshots, iterator bounds and directions,
** reopen and recovery, prefetch of long scans, faults (disk full and I/O
** errors during WAL appends, flushes and compactions), the process lock,
** the live logs the manifest tracks (a lost or shortened log is refused),
** and a randomized differential test against a sorted in-memory model
** with flushes, compactions, range deletes, snapshots, reverse iteration
** and reopens (WCS_DIFF_STEPS sets its length for long runs; WCS_SEED
** replays one).
*/
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/db_int.h"
#include "storage/iterrun.h"
#include "storage/env.h"
#include "storage/ikey.h"
#include "storage/sst.h"
#include "storage/util.h"
#include "storage/version.h"
#include "storage/wal.h"
#include "testutil.h"
#include "wcs.h"
#include "storage/iterrun.h"

Suite *storage_db_suite(void);

#define OK(x) TU_DB_OK(x)

static void smallOptions(wcs_options *o) {
  wcs_options_init(o);
  o->nMemtable = 32 * 1024;
  o->nL1Bytes = 64 * 1024;
  o->nFileBytes = 16 * 1024;
  o->nBlockSize = 1024;
  o->nL0Trigger = 2;
  o->nL0Stop = 6;
}

static void putS(wcs_db *db, const char *k, const char *v) {
  OK(wcs_db_put(db, k, strlen(k), v, strlen(v)));
}

/* All keys of an iterator, joined by ',' (forward or reverse). */
static char *scan(wcs_db *db, const wcs_iter_options *o, int bRev) {
  static char aBuf[8192];
  wcs_iter *it = NULL;
  size_t n = 0;
  int rc, nKey = 0;
  OK(wcs_iter_new(db, o, &it));
  aBuf[0] = 0;
  for (rc = bRev ? wcs_iter_last(it) : wcs_iter_first(it); wcs_iter_valid(it);
       rc = bRev ? wcs_iter_prev(it) : wcs_iter_next(it)) {
    size_t nK;
    const char *k = wcs_iter_key(it, &nK);
    ck_assert_uint_lt(n + nK + 2, sizeof aBuf);
    if (nKey++) aBuf[n++] = ',';
    memcpy(aBuf + n, k, nK);
    n += nK;
    aBuf[n] = 0;
  }
  ck_assert_int_eq(rc, WCS_OK);
  ck_assert_int_eq(wcs_iter_status(it), WCS_OK);
  wcs_iter_free(it);
  return aBuf;
}

START_TEST(test_db_memory_store_put_get_delete) {
  wcs_db *db = NULL;
  wcs_options o;
  char *zErr = NULL;
  wcs_options_init(&o);
  o.bInMemory = 1;
  OK(wcs_db_open(&db, NULL, &o, &zErr));
  putS(db, "a", "1");
  putS(db, "b", "2");
  putS(db, "a", "3");
  ck_assert_str_eq(tu_get_str(db, NULL, "a"), "3");
  ck_assert_str_eq(tu_get_str(db, NULL, "b"), "2");
  ck_assert_ptr_null(tu_get_str(db, NULL, "c"));
  OK(wcs_db_delete(db, "a", 1));
  ck_assert_ptr_null(tu_get_str(db, NULL, "a"));
  /* empty key and empty value are ordinary */
  OK(wcs_db_put(db, "", 0, "", 0));
  ck_assert_str_eq(tu_get_str(db, NULL, ""), "");
  ck_assert_str_eq(scan(db, NULL, 0), ",b");
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
}
END_TEST

/* wcs_iter_key, wcs_iter_value and wcs_iter_entry return NULL exactly when
** the iterator is not valid (wcs.h): an empty key and an empty value are
** not NULL. */
START_TEST(test_db_iter_key_is_null_only_when_not_valid) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_iter *it = NULL;
  size_t n = 99, nV = 99;
  const void *pK = "x", *pV = "x";
  wcs_options_init(&o);
  o.bInMemory = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  OK(wcs_db_put(db, "", 0, "", 0));
  OK(wcs_db_put(db, "k", 1, "v", 1));
  OK(wcs_iter_new(db, NULL, &it));
  ck_assert_ptr_null(wcs_iter_key(it, &n)); /* not positioned yet */
  ck_assert_uint_eq(n, 0);
  ck_assert_int_eq(wcs_iter_entry(it, &pK, &n, &pV, &nV), 0);
  ck_assert(pK == NULL && pV == NULL && n == 0 && nV == 0);
  OK(wcs_iter_first(it));
  ck_assert_ptr_nonnull(wcs_iter_key(it, &n));
  ck_assert_uint_eq(n, 0);
  ck_assert_ptr_nonnull(wcs_iter_value(it, &n));
  ck_assert_uint_eq(n, 0);
  n = nV = 99;
  ck_assert_int_eq(wcs_iter_entry(it, &pK, &n, &pV, &nV), 1);
  ck_assert(pK != NULL && pV != NULL && n == 0 && nV == 0);
  OK(wcs_iter_next(it));
  ck_assert_ptr_nonnull(wcs_iter_key(it, &n));
  ck_assert_uint_eq(n, 1);
  ck_assert_int_eq(wcs_iter_entry(it, &pK, &n, &pV, &nV), 1);
  ck_assert(n == 1 && nV == 1 && memcmp(pK, "k", 1) == 0 &&
            memcmp(pV, "v", 1) == 0);
  OK(wcs_iter_next(it));
  ck_assert(!wcs_iter_valid(it));
  ck_assert_ptr_null(wcs_iter_key(it, &n));
  ck_assert_ptr_null(wcs_iter_value(it, &n));
  ck_assert_uint_eq(n, 0);
  ck_assert_int_eq(wcs_iter_entry(it, &pK, &n, &pV, &nV), 0);
  ck_assert(pK == NULL && pV == NULL && n == 0 && nV == 0);
  wcs_iter_free(it);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
}
END_TEST

/* A scan of settled data steps inside a block without the merging code
** (iterrun.h) only over puts at sequence number 0. Here the blocks of the
** last level also hold newer versions, older versions kept for a snapshot
** and deletes (a compaction ran while the snapshot was live): every scan,
** at the snapshot and at the latest state, bounded or not, must return
** exactly the visible versions. */
static int nRunSteps;    /* steps scanExpect took within a run */
static int nRunStepsRev; /* and scanExpectRev */

/* One step as the engine's scan takes it: within the run when it can
** (iterrun.h), else wcs_iter_next (wcs_iter_prev backward). What the run
** returns must be what the iterator then shows. */
static int stepAsScan(wcs_iter *it, int bRev) {
  const void *k, *v;
  size_t nK, nV, n;
  int r = bRev ? wcs_iter_run_prev(it, &k, &nK, &v, &nV)
               : wcs_iter_run_next(it, &k, &nK, &v, &nV);
  if (r == 0) return bRev ? wcs_iter_prev(it) : wcs_iter_next(it);
  if (r < 0) {
    ck_assert(!wcs_iter_valid(it));
    return wcs_iter_status(it);
  }
  if (bRev)
    nRunStepsRev++;
  else
    nRunSteps++;
  ck_assert(wcs_iter_valid(it));
  ck_assert(wcs_iter_key(it, &n) == k && n == nK);
  ck_assert(wcs_iter_value(it, &n) == v && n == nV);
  return WCS_OK;
}

/* Key i is visible in that state, with value aV. */
static int visibleAt(int i, int bSnapState, char *aV, size_t nV) {
  if (!bSnapState && i % 7 == 3) return 0;
  snprintf(aV, nV, "%s%d", !bSnapState && i % 5 == 1 ? "new" : "v", i);
  return 1;
}

/* The iterator is at key i (k%05d) with value zV. */
static void expectAt(wcs_iter *it, int i, const char *zV) {
  char aK[16];
  size_t nK, nV;
  const char *k, *v;
  snprintf(aK, sizeof aK, "k%05d", i);
  ck_assert_msg(wcs_iter_valid(it), "the scan ended before %s", aK);
  k = wcs_iter_key(it, &nK);
  v = wcs_iter_value(it, &nV);
  ck_assert_msg(nK == strlen(aK) && memcmp(k, aK, nK) == 0,
                "key %.*s, expected %s", (int)nK, k, aK);
  ck_assert_msg(nV == strlen(zV) && memcmp(v, zV, nV) == 0,
                "value of %s: %.*s, expected %s", aK, (int)nV, v, zV);
}

static void scanExpect(wcs_db *db, const wcs_snapshot *pSnap, int bUpper,
                       int bSnapState) {
  wcs_iter_options io;
  wcs_iter *it = NULL;
  int i = 0, n = 0, iEnd = bUpper ? 250 : 400;
  char aUp[16];
  memset(&io, 0, sizeof io);
  io.pSnap = pSnap;
  if (bUpper) {
    snprintf(aUp, sizeof aUp, "k%05d", 250);
    io.pUpper = aUp;
    io.nUpper = strlen(aUp);
  }
  OK(wcs_iter_new(db, &io, &it));
  OK(wcs_iter_first(it));
  for (i = 0; i < iEnd; i++) {
    char aV[16];
    /* the latest state: every 7th key deleted, every 5th rewritten */
    if (!visibleAt(i, bSnapState, aV, sizeof aV)) continue;
    expectAt(it, i, aV);
    n++;
    OK(stepAsScan(it, 0));
  }
  ck_assert_msg(!wcs_iter_valid(it), "scan went on past %d keys", n);
  wcs_iter_free(it);
}

/* The same backward (wcs_iter_run_prev), down to an optional lower bound,
** and turned around now and then: a forward step after backward ones. */
static void scanExpectRev(wcs_db *db, const wcs_snapshot *pSnap, int bLower,
                          int bSnapState) {
  wcs_iter_options io;
  wcs_iter *it = NULL;
  int i, iLow = bLower ? 134 : 0, nTurn = 0; /* 132, 133: plain keys */
  char aLow[16];
  memset(&io, 0, sizeof io);
  io.pSnap = pSnap;
  if (bLower) {
    snprintf(aLow, sizeof aLow, "k%05d", iLow);
    io.pLower = aLow;
    io.nLower = strlen(aLow);
  }
  OK(wcs_iter_new(db, &io, &it));
  OK(wcs_iter_last(it));
  for (i = 399; i >= iLow; i--) {
    char aV[16];
    if (!visibleAt(i, bSnapState, aV, sizeof aV)) continue;
    expectAt(it, i, aV);
    if (i % 50 == 7 && nTurn < 3) {
      /* turn around: forward to the next visible key, and back */
      int j = i + 1;
      char aV2[16];
      nTurn++;
      OK(wcs_iter_next(it));
      while (!visibleAt(j, bSnapState, aV2, sizeof aV2))
        j++;
      expectAt(it, j, aV2);
      OK(wcs_iter_prev(it));
    }
    OK(stepAsScan(it, 1));
  }
  ck_assert_msg(!wcs_iter_valid(it), "reverse scan went on past k%05d", iLow);
  wcs_iter_free(it);
}

START_TEST(test_db_settled_scan_steps_over_versions_and_deletes) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_snapshot *pSnap = NULL;
  char *zDir = strdup(tu_tmpdir("dbsettled"));
  int i;
  wcs_options_init(&o);
  o.bNoBackground = 1;
  o.nBlockSize = 1024; /* many blocks, each with several kinds of entry */
  OK(wcs_db_open(&db, zDir, &o, NULL));
  for (i = 0; i < 400; i++) {
    char aK[16], aV[16];
    snprintf(aK, sizeof aK, "k%05d", i);
    snprintf(aV, sizeof aV, "v%d", i);
    OK(wcs_db_put(db, aK, strlen(aK), aV, strlen(aV)));
  }
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0)); /* settled: seq 0 */
  OK(wcs_snapshot_new(db, &pSnap));
  for (i = 0; i < 400; i++) {
    char aK[16], aV[16];
    snprintf(aK, sizeof aK, "k%05d", i);
    if (i % 7 == 3) {
      OK(wcs_db_delete(db, aK, strlen(aK)));
    } else if (i % 5 == 1) {
      snprintf(aV, sizeof aV, "new%d", i);
      OK(wcs_db_put(db, aK, strlen(aK), aV, strlen(aV)));
    }
  }
  /* with the snapshot live, the old versions stay beside the new ones */
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  scanExpect(db, NULL, 0, 0);
  scanExpect(db, NULL, 1, 0);
  scanExpect(db, pSnap, 0, 1);
  scanExpect(db, pSnap, 1, 1);
  ck_assert_int_gt(nRunSteps, 400); /* the runs were taken */
  scanExpectRev(db, NULL, 0, 0);
  scanExpectRev(db, NULL, 1, 0);
  scanExpectRev(db, pSnap, 0, 1);
  scanExpectRev(db, pSnap, 1, 1);
  ck_assert_int_gt(nRunStepsRev, 200);
  wcs_snapshot_free(db, pSnap);
  OK(wcs_db_close(db));
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

/* Scan it (over db), forward (from its first key) or backward (from its last),
*and
** expect keys tenant-0001/device-NNNNN for NNNNN from 100 up to 199 or
** down to 100, then the end, with most steps taken within a run. */
static void expectTieScan(wcs_db *db, wcs_iter *it, int bRev) {
  int i, nRun = bRev ? nRunStepsRev : nRunSteps;
  OK(bRev ? wcs_iter_last(it) : wcs_iter_first(it));
  for (i = 0; i < 100; i++) {
    char aK[32];
    size_t nK;
    const void *k;
    snprintf(aK, sizeof aK, "tenant-0001/device-%05d",
             bRev ? 199 - i : 100 + i);
    ck_assert_msg(wcs_iter_valid(it), "the scan ended before %s", aK);
    k = wcs_iter_key(it, &nK);
    ck_assert_msg(nK == strlen(aK) && memcmp(k, aK, nK) == 0,
                  "key %.*s, expected %s", (int)nK, (const char *)k, aK);
    OK(stepAsScan(it, bRev));
  }
  ck_assert_msg(!wcs_iter_valid(it), "the scan went past its %s bound",
                bRev ? "lower" : "upper");
  ck_assert_int_gt((bRev ? nRunStepsRev : nRunSteps) - nRun, 50);
}

/* Keys of a long common prefix (a prefix scan's) tie with bounds of the
** same prefix in the 16 bytes the run step compares first; the step then
** compares them whole. A scan stops exactly at its upper bound forward
** and at its lower bound backward, and steps within the run up to them. */
START_TEST(test_db_settled_scan_bounds_tie_in_their_first_16_bytes) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_iter_options io;
  wcs_iter *it = NULL;
  char *zDir = strdup(tu_tmpdir("dbtie"));
  char aLo[32], aHi[32];
  int i;
  wcs_options_init(&o);
  o.bNoBackground = 1;
  o.nBlockSize = 1024;
  OK(wcs_db_open(&db, zDir, &o, NULL));
  for (i = 0; i < 300; i++) {
    char aK[32];
    snprintf(aK, sizeof aK, "tenant-0001/device-%05d", i);
    OK(wcs_db_put(db, aK, strlen(aK), "v", 1));
  }
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0)); /* settled: seq 0 */
  snprintf(aLo, sizeof aLo, "tenant-0001/device-%05d", 100);
  snprintf(aHi, sizeof aHi, "tenant-0001/device-%05d", 200);
  memset(&io, 0, sizeof io);
  io.pLower = aLo;
  io.nLower = strlen(aLo);
  io.pUpper = aHi;
  io.nUpper = strlen(aHi);
  OK(wcs_iter_new(db, &io, &it));
  expectTieScan(db, it, 0);
  expectTieScan(db, it, 1);
  wcs_iter_free(it);
  OK(wcs_db_close(db));
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

START_TEST(test_db_batch_is_atomic_and_ordered) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_batch *b = NULL;
  wcs_options_init(&o);
  o.bInMemory = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  OK(wcs_batch_new(&b));
  OK(wcs_batch_put(b, "k1", 2, "v1", 2));
  OK(wcs_batch_put(b, "k2", 2, "v2", 2));
  OK(wcs_batch_delete(b, "k1", 2));
  OK(wcs_batch_put(b, "k3", 2, "v3", 2));
  ck_assert_int_eq(wcs_batch_count(b), 4);
  ck_assert_uint_gt(wcs_batch_bytes(b), 12);
  OK(wcs_db_write(db, b));
  /* later operations of a batch win over earlier ones */
  ck_assert_ptr_null(tu_get_str(db, NULL, "k1"));
  ck_assert_str_eq(tu_get_str(db, NULL, "k2"), "v2");
  wcs_batch_clear(b);
  ck_assert_int_eq(wcs_batch_count(b), 0);
  OK(wcs_db_write(db, b)); /* empty batch: nothing */
  wcs_batch_free(b);
  OK(wcs_db_close(db));
}
END_TEST

/* Range deletes hide older keys in memtables and in files, not newer. */
static void rangeDeleteCase(int bFlush) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_batch *b = NULL;
  wcs_options_init(&o);
  o.bInMemory = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  putS(db, "t1#a", "1");
  putS(db, "t1#b", "2");
  putS(db, "t2#a", "3");
  putS(db, "t3#a", "4");
  if (bFlush) OK(wcs_db_flush(db));
  OK(wcs_batch_new(&b));
  OK(wcs_batch_delete_range(b, "t1#", 3, "t1$", 3));
  OK(wcs_db_write(db, b));
  if (bFlush) OK(wcs_db_flush(db));
  putS(db, "t1#c", "5"); /* newer than the tombstone: visible */
  ck_assert_ptr_null(tu_get_str(db, NULL, "t1#a"));
  ck_assert_str_eq(tu_get_str(db, NULL, "t1#c"), "5");
  ck_assert_str_eq(tu_get_str(db, NULL, "t2#a"), "3");
  ck_assert_str_eq(scan(db, NULL, 0), "t1#c,t2#a,t3#a");
  ck_assert_str_eq(scan(db, NULL, 1), "t3#a,t2#a,t1#c");
  /* an unbounded range delete */
  wcs_batch_clear(b);
  OK(wcs_batch_delete_range(b, "t3", 2, NULL, 0));
  OK(wcs_db_write(db, b));
  ck_assert_str_eq(scan(db, NULL, 0), "t1#c,t2#a");
  if (bFlush) {
    OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
    ck_assert_str_eq(scan(db, NULL, 0), "t1#c,t2#a");
    ck_assert_str_eq(scan(db, NULL, 1), "t2#a,t1#c");
  }
  wcs_batch_free(b);
  OK(wcs_db_close(db));
}

START_TEST(test_db_range_delete_in_memtable) {
  rangeDeleteCase(0);
}
END_TEST

START_TEST(test_db_range_delete_in_files_and_compaction) {
  rangeDeleteCase(1);
}
END_TEST

/* Tombstones of several files, overlapping, read through the version's
** one set of fragments: each snapshot sees those older than it only, and
** an iterator made after a flush or a compaction sees the new ones. */
START_TEST(test_db_file_tombstones_at_each_snapshot) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_batch *b = NULL;
  wcs_snapshot *s0 = NULL, *s1 = NULL, *s2 = NULL;
  wcs_iter_options io;
  wcs_options_init(&o);
  o.bInMemory = 1;
  o.bNoBackground = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  putS(db, "a", "1");
  putS(db, "b", "1");
  putS(db, "c", "1");
  putS(db, "d", "1");
  OK(wcs_db_flush(db));
  OK(wcs_snapshot_new(db, &s0));
  OK(wcs_batch_new(&b));
  OK(wcs_batch_delete_range(b, "b", 1, "d", 1)); /* b, c */
  OK(wcs_db_write(db, b));
  OK(wcs_db_flush(db));
  OK(wcs_snapshot_new(db, &s1));
  wcs_batch_clear(b);
  OK(wcs_batch_delete_range(b, "a", 1, "c", 1)); /* a, b again */
  OK(wcs_db_write(db, b));
  putS(db, "b", "2"); /* newer than both */
  OK(wcs_db_flush(db));
  OK(wcs_snapshot_new(db, &s2));
  memset(&io, 0, sizeof io);
  io.pSnap = s0;
  ck_assert_str_eq(scan(db, &io, 0), "a,b,c,d");
  ck_assert_str_eq(scan(db, &io, 1), "d,c,b,a");
  io.pSnap = s1;
  ck_assert_str_eq(scan(db, &io, 0), "a,d");
  io.pSnap = s2;
  ck_assert_str_eq(scan(db, &io, 0), "b,d");
  ck_assert_ptr_null(tu_get_str(db, s1, "b"));
  ck_assert_str_eq(tu_get_str(db, s0, "c"), "1");
  ck_assert_str_eq(tu_get_str(db, s2, "b"), "2");
  /* bounded iterators, one inside a fragment */
  io.pSnap = s1;
  io.pLower = "b";
  io.nLower = 1;
  io.pUpper = "c~";
  io.nUpper = 2;
  ck_assert_str_eq(scan(db, &io, 0), "");
  io.pSnap = s0;
  ck_assert_str_eq(scan(db, &io, 0), "b,c");
  wcs_snapshot_free(db, s0);
  wcs_snapshot_free(db, s1);
  wcs_snapshot_free(db, s2);
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  ck_assert_str_eq(scan(db, NULL, 0), "b,d");
  wcs_batch_free(b);
  OK(wcs_db_close(db));
}
END_TEST

START_TEST(test_db_snapshot_sees_frozen_state) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_snapshot *s = NULL;
  wcs_iter_options io;
  wcs_options_init(&o);
  o.bInMemory = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  putS(db, "a", "old");
  putS(db, "b", "old");
  OK(wcs_snapshot_new(db, &s));
  ck_assert_uint_eq(wcs_snapshot_seq(s), 2);
  putS(db, "a", "new");
  OK(wcs_db_delete(db, "b", 1));
  putS(db, "c", "new");
  OK(wcs_db_flush(db));
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  ck_assert_str_eq(tu_get_str(db, s, "a"), "old");
  ck_assert_str_eq(tu_get_str(db, s, "b"), "old");
  ck_assert_ptr_null(tu_get_str(db, s, "c"));
  ck_assert_str_eq(tu_get_str(db, NULL, "a"), "new");
  ck_assert_ptr_null(tu_get_str(db, NULL, "b"));
  memset(&io, 0, sizeof io);
  io.pSnap = s;
  ck_assert_str_eq(scan(db, &io, 0), "a,b");
  ck_assert_str_eq(scan(db, NULL, 0), "a,c");
  wcs_snapshot_free(db, s);
  /* a second free of the same snapshot changes nothing (it once put the
  ** snapshot on the free list twice, and the next flush spun forever) */
  wcs_snapshot_free(db, s);
  OK(wcs_snapshot_new(db, &s));
  {
    wcs_snapshot *s2 = NULL;
    OK(wcs_snapshot_new(db, &s2));
    ck_assert_ptr_ne(s, s2);
    wcs_snapshot_free(db, s2);
  }
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  ck_assert_str_eq(scan(db, NULL, 1), "c,a");
  /* s is still live at close: the close frees it (the leak check of the
  ** sanitizer build sees it otherwise) */
  OK(wcs_db_close(db));
}
END_TEST

static void assertMsgHas(wcs_db *db, const char *zWant);

/* A store whose only keys are empty flushes into a file whose sampled
** keys are all empty (the sanitizer build once stopped at a copy of zero
** bytes from a NULL key buffer). */
START_TEST(test_db_empty_key_flushes) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_options_init(&o);
  o.bInMemory = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  OK(wcs_db_put(db, "", 0, "v", 1));
  OK(wcs_db_flush(db));
  ck_assert_str_eq(tu_get_str(db, NULL, ""), "v");
  /* and a checkpoint without a directory says so, not an older error */
  ck_assert_int_eq(wcs_db_checkpoint(db, ""), WCS_MISUSE);
  assertMsgHas(db, "no directory");
  OK(wcs_db_close(db));
}
END_TEST

START_TEST(test_db_iterator_bounds_prefix_and_seeks) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_iter_options io;
  wcs_iter *it = NULL;
  size_t n;
  const char *k;
  wcs_options_init(&o);
  o.bInMemory = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  putS(db, "a", "");
  putS(db, "ab", "");
  putS(db, "abc", "");
  putS(db, "ac", "");
  putS(db, "b", "");
  putS(db, "b\xff", "");
  putS(db, "c", "");
  memset(&io, 0, sizeof io);
  io.pLower = "ab";
  io.nLower = 2;
  io.pUpper = "b";
  io.nUpper = 1;
  ck_assert_str_eq(scan(db, &io, 0), "ab,abc,ac");
  ck_assert_str_eq(scan(db, &io, 1), "ac,abc,ab");
  memset(&io, 0, sizeof io);
  io.pPrefix = "b";
  io.nPrefix = 1;
  ck_assert_str_eq(scan(db, &io, 0), "b,b\xff");
  ck_assert_str_eq(scan(db, &io, 1), "b\xff,b");
  io.pPrefix = "ab";
  io.nPrefix = 2;
  ck_assert_str_eq(scan(db, &io, 0), "ab,abc");

  OK(wcs_iter_new(db, NULL, &it));
  OK(wcs_iter_seek(it, "abb", 3));
  k = wcs_iter_key(it, &n);
  ck_assert(n == 3 && memcmp(k, "abc", 3) == 0);
  OK(wcs_iter_seek_for_prev(it, "abb", 3));
  k = wcs_iter_key(it, &n);
  ck_assert(n == 2 && memcmp(k, "ab", 2) == 0);
  OK(wcs_iter_seek_for_prev(it, "ac", 2));
  k = wcs_iter_key(it, &n);
  ck_assert(n == 2 && memcmp(k, "ac", 2) == 0);
  /* direction changes */
  OK(wcs_iter_next(it));
  k = wcs_iter_key(it, &n);
  ck_assert(n == 1 && memcmp(k, "b", 1) == 0);
  OK(wcs_iter_prev(it));
  k = wcs_iter_key(it, &n);
  ck_assert(n == 2 && memcmp(k, "ac", 2) == 0);
  OK(wcs_iter_prev(it));
  OK(wcs_iter_next(it));
  k = wcs_iter_key(it, &n);
  ck_assert(n == 2 && memcmp(k, "ac", 2) == 0);
  OK(wcs_iter_seek(it, "d", 1));
  ck_assert(!wcs_iter_valid(it));
  OK(wcs_iter_seek_for_prev(it, "0", 1));
  ck_assert(!wcs_iter_valid(it));
  wcs_iter_free(it);
  OK(wcs_db_close(db));
}
END_TEST

/* Put keys k00000.. (n of them), key k<i> with value v<i>. */
static void putNumbered(wcs_db *db, int n) {
  char k[32], v[32];
  int i;
  for (i = 0; i < n; i++) {
    snprintf(k, sizeof k, "k%05d", i);
    snprintf(v, sizeof v, "v%d", i);
    putS(db, k, v);
  }
}

/* Writes survive close and reopen (WAL replay), and flushed files too. */
START_TEST(test_db_reopen_keeps_every_commit) {
  const char *zDir = tu_tmpdir("dbreopen");
  char zPath[1100];
  wcs_db *db = NULL;
  wcs_options o;
  int i;
  char k[32], v[32];
  smallOptions(&o);
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  OK(wcs_db_open(&db, zPath, &o, NULL));
  putNumbered(db, 3000);
  OK(wcs_db_close(db));
  db = NULL;
  OK(wcs_db_open(&db, zPath, &o, NULL));
  for (i = 0; i < 3000; i += 7) {
    snprintf(k, sizeof k, "k%05d", i);
    snprintf(v, sizeof v, "v%d", i);
    ck_assert_str_eq(tu_get_str(db, NULL, k), v);
  }
  OK(wcs_db_close(db));
  tu_rmrf(zDir);
}
END_TEST

/* A store of more sorted files than the process may open at once opens
** and reads them all: it keeps at most half the limit open (ulimit -n),
** closing the least recently read. */
START_TEST(test_db_more_files_than_the_open_file_limit) {
  char *zDir = strdup(tu_tmpdir("dbfiles"));
  char zPath[1100], k[32];
  wcs_db *db = NULL;
  wcs_options o;
  wcs_iter *it = NULL;
  struct rlimit rOld, rLow;
  int i, n = 0;
  smallOptions(&o);
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  OK(wcs_db_open(&db, zPath, &o, NULL));
  for (i = 0; i < 60; i++) {
    /* disjoint ranges: each flush's file moves down whole */
    snprintf(k, sizeof k, "k%03d", i);
    putS(db, k, "v");
    OK(wcs_db_flush(db));
  }
  OK(wcs_db_close(db));
  db = NULL;
  ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rOld), 0);
  rLow = rOld;
  rLow.rlim_cur = 40;
  ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rLow), 0);
  i = wcs_db_open(&db, zPath, &o, NULL);
  if (i == WCS_OK) i = wcs_iter_new(db, NULL, &it);
  if (i == WCS_OK) {
    for (wcs_iter_first(it); wcs_iter_valid(it); wcs_iter_next(it))
      n++;
    i = wcs_iter_status(it);
    wcs_iter_free(it);
  }
  if (db) ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rOld), 0);
  ck_assert_msg(i == WCS_OK, "with ulimit -n 40: %s", wcs_errstr(i));
  ck_assert_int_eq(n, 60);
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

/* A memtable far under its budget is still flushed once it holds 4096
** range tombstones (rows deleted one by one, a sliding window): reads
** over their keys sort them each time they are made. The deletes hold. */
START_TEST(test_db_many_range_tombstones_flush_the_memtable) {
  wcs_db *db = NULL;
  wcs_options o;
  char *z = NULL;
  const char *p;
  int i;
  wcs_options_init(&o);
  o.bInMemory = 1;
  o.bNoBackground = 1;
  o.nMemtable = 64 << 20;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  for (i = 0; i < 5000; i++) {
    wcs_batch *b = NULL;
    char k[16], e[16];
    snprintf(k, sizeof k, "r%05d", i);
    snprintf(e, sizeof e, "r%05d~", i);
    putS(db, k, "v");
    OK(wcs_batch_new(&b));
    OK(wcs_batch_delete_range(b, k, strlen(k), e, strlen(e)));
    OK(wcs_db_write(db, b));
    wcs_batch_free(b);
  }
  putS(db, "z", "v");
  OK(wcs_db_stats(db, &z));
  p = strstr(z, "\"flushes\":");
  ck_assert_ptr_nonnull(p);
  ck_assert_int_ge(atoi(p + 10), 1);
  wcs_free(z);
  ck_assert_ptr_null(tu_get_str(db, NULL, "r00000"));
  ck_assert_ptr_null(tu_get_str(db, NULL, "r04999"));
  ck_assert_str_eq(tu_get_str(db, NULL, "z"), "v");
  OK(wcs_db_close(db));
}
END_TEST

/* Sum of the range tombstones of the files wcs_iter_notes reports. */
static int sumRangeDels(void *pCtx, const wcs_file_note *n) {
  *(uint64_t *)pCtx += n->nRangeDel;
  return 0;
}

/* Whether the files holding keys of [zLo, zHi) are one sorted run, and
** their range tombstones (*pnDel). */
static int oneRun(wcs_db *db, const char *zLo, const char *zHi,
                  uint64_t *pnDel) {
  wcs_iter_options io;
  wcs_iter *it = NULL;
  int bRun = -1;
  memset(&io, 0, sizeof io);
  io.pLower = zLo;
  io.nLower = strlen(zLo);
  io.pUpper = zHi;
  io.nUpper = strlen(zHi);
  *pnDel = 0;
  OK(wcs_iter_new(db, &io, &it));
  OK(wcs_iter_notes(it, &bRun, pnDel, sumRangeDels));
  wcs_iter_free(it);
  return bRun;
}

/* A level whose files hold COMPACT_TOMB_TRIGGER (4096) range tombstones
** compacts as if it were full (compact.c): rows deleted one by one over a
** settled table are taken down to the data they hide and dropped with it
** by the compactions of the writes that flushed them, with nothing else
** written. Tombstones of rows deleted here and there, which overlap more
** than ten files of the next level, wait. */
START_TEST(test_db_many_tombstones_compact_down_to_their_data) {
  int bSpread;
  for (bSpread = 0; bSpread < 2; bSpread++) {
    wcs_db *db = NULL;
    wcs_options o;
    uint64_t nDel = 0;
    char *z = NULL;
    const char *p;
    int i, nRows = bSpread ? 40000 : 6000;
    smallOptions(&o);
    o.bInMemory = 1;
    o.bNoBackground = 1;
    o.nMemtable = 4 << 20;
    OK(wcs_db_open(&db, NULL, &o, NULL));
    for (i = 0; i < nRows; i++) {
      char k[16], v[40];
      snprintf(k, sizeof k, "r%05d", i);
      snprintf(v, sizeof v, "value of row %05d, padded to 32", i);
      putS(db, k, v);
    }
    OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
    ck_assert_int_eq(oneRun(db, "r", "r~", &nDel), 1);
    ck_assert_uint_eq(nDel, 0);
    /* 4500 row deletes: the first rows, or every eighth row; the next
    ** write switches the memtable (4096 tombstones or more) */
    for (i = 0; i < 4500; i += 500) {
      wcs_batch *b = NULL;
      int j;
      OK(wcs_batch_new(&b));
      for (j = i; j < i + 500; j++) {
        char k[16], e[24];
        snprintf(k, sizeof k, "r%05d", bSpread ? 8 * j : j);
        snprintf(e, sizeof e, "%s~", k);
        OK(wcs_batch_delete_range(b, k, strlen(k), e, strlen(e)));
      }
      OK(wcs_db_write(db, b));
      wcs_batch_free(b);
    }
    putS(db, "z", "v");
    if (!bSpread) {
      ck_assert_int_eq(oneRun(db, "r", "r~", &nDel), 1);
      ck_assert_uint_eq(nDel, 0);
      OK(wcs_db_stats(db, &z));
      p = strstr(z, "\"keys\":");
      ck_assert_ptr_nonnull(p);
      ck_assert_int_eq(atoi(p + 7), 1500); /* the rows left */
      wcs_free(z);
    } else {
      ck_assert_int_eq(oneRun(db, "r", "r~", &nDel), 0);
    }
    ck_assert_ptr_null(tu_get_str(db, NULL, "r00000"));
    ck_assert_ptr_null(tu_get_str(db, NULL, bSpread ? "r35992" : "r04499"));
    ck_assert_ptr_nonnull(tu_get_str(db, NULL, bSpread ? "r35993" : "r04500"));
    ck_assert_str_eq(tu_get_str(db, NULL, "z"), "v");
    OK(wcs_db_close(db));
  }
}
END_TEST

START_TEST(test_db_second_writer_process_gets_busy) {
  const char *zDir = tu_tmpdir("dbbusy");
  char zPath[1100];
  wcs_db *db = NULL;
  wcs_options o;
  int aPipe[2], st = 0;
  pid_t pid;
  char c;
  wcs_options_init(&o);
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  ck_assert_int_eq(pipe(aPipe), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    wcs_db *d2 = NULL;
    c = wcs_db_open(&d2, zPath, &o, NULL) == WCS_OK ? 'y' : 'n';
    if (write(aPipe[1], &c, 1) != 1) _exit(2);
    pause();
    _exit(0);
  }
  ck_assert_int_eq(read(aPipe[0], &c, 1), 1);
  ck_assert_int_eq(c, 'y');
  {
    char *zErr = NULL;
    int rc = wcs_db_open(&db, zPath, &o, &zErr);
    ck_assert_int_eq(rc, WCS_BUSY);
    ck_assert_ptr_null(db);
    ck_assert_ptr_nonnull(strstr(zErr, "locked by another process"));
    ck_assert_ptr_nonnull(strstr(zErr, zPath));
    wcs_free(zErr);
    zErr = NULL;
    o.bReadOnly = 1;
    ck_assert_int_eq(wcs_db_open(&db, zPath, &o, &zErr), WCS_BUSY);
    wcs_free(zErr);
    o.bReadOnly = 0;
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  OK(wcs_db_open(&db, zPath, &o, NULL));
  OK(wcs_db_close(db));
  close(aPipe[0]);
  close(aPipe[1]);
  tu_rmrf(zDir);
}
END_TEST

/* wcs_errmsg after an argument error: a message of its own naming the
** call and what is wrong, never "" or the text of an earlier error. */
static void assertMsgHas(wcs_db *db, const char *zWant) {
  ck_assert_msg(strstr(wcs_errmsg(db), zWant) != NULL,
                "message [%s] should contain [%s]", wcs_errmsg(db), zWant);
}

static int sampleNone(void *pCtx, const void *pKey, size_t nKey,
                      uint64_t nOff) {
  return 0;
}

START_TEST(test_db_argument_errors_have_their_own_message) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_iter *it = NULL;
  wcs_snapshot *snap = NULL;
  void *pVal = NULL;
  size_t nVal = 0;
  char *z = NULL;
  wcs_options_init(&o);
  o.bInMemory = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  ck_assert_int_eq(wcs_db_put(db, NULL, 3, "v", 1), WCS_MISUSE);
  assertMsgHas(db, "wcs_db_put");
  assertMsgHas(db, "NULL");
  ck_assert_int_eq(wcs_db_put(db, "k", 1, NULL, 2), WCS_MISUSE);
  assertMsgHas(db, "wcs_db_put");
  ck_assert_int_eq(wcs_db_delete(db, NULL, 2), WCS_MISUSE);
  assertMsgHas(db, "wcs_db_delete");
  ck_assert_int_eq(wcs_db_get(db, NULL, "k", 1, NULL, &nVal), WCS_MISUSE);
  assertMsgHas(db, "wcs_db_get");
  ck_assert_int_eq(wcs_db_get(db, NULL, NULL, 1, &pVal, &nVal), WCS_MISUSE);
  assertMsgHas(db, "wcs_db_get");
  ck_assert_int_eq(wcs_db_write(db, NULL), WCS_MISUSE);
  assertMsgHas(db, "wcs_db_write");
  ck_assert_int_eq(wcs_snapshot_new(db, NULL), WCS_MISUSE);
  assertMsgHas(db, "wcs_snapshot_new");
  ck_assert_int_eq(wcs_iter_new(db, NULL, NULL), WCS_MISUSE);
  assertMsgHas(db, "wcs_iter_new");
  ck_assert_int_eq(wcs_db_stats(db, NULL), WCS_MISUSE);
  assertMsgHas(db, "wcs_db_stats");
  ck_assert_int_eq(wcs_db_sample_keys(db, NULL, NULL), WCS_MISUSE);
  assertMsgHas(db, "wcs_db_sample_keys");
  /* sizes over the limits: the length is named (the bytes are not read) */
  ck_assert_int_eq(wcs_db_put(db, "k", (size_t)UINT32_MAX + 10, "v", 1),
                   WCS_TOOBIG);
  assertMsgHas(db, "wcs_db_put");
  assertMsgHas(db, "4294967305");
  ck_assert_int_eq(wcs_db_delete(db, "k", (size_t)UINT32_MAX), WCS_TOOBIG);
  assertMsgHas(db, "wcs_db_delete");
  assertMsgHas(db, "4294967295");
  ck_assert_int_eq(wcs_db_put(db, "key1", 4, "v", (size_t)UINT32_MAX),
                   WCS_TOOBIG);
  assertMsgHas(db, "key1");
  assertMsgHas(db, "4294967295");
  /* batches: a NULL start or end with a length is refused, not read */
  {
    wcs_batch *b = NULL;
    OK(wcs_batch_new(&b));
    ck_assert_int_eq(wcs_batch_delete_range(b, NULL, 5, "a", 1), WCS_MISUSE);
    ck_assert_int_eq(wcs_batch_delete_range(b, "a", 1, NULL, 5), WCS_MISUSE);
    ck_assert_int_eq(wcs_batch_delete_range(b, NULL, 5, NULL, 0),
                     WCS_MISUSE);
    ck_assert_int_eq(wcs_batch_count(b), 0);
    OK(wcs_batch_delete_range(b, NULL, 0, "a", 1));
    ck_assert_int_eq(wcs_batch_count(b), 1);
    wcs_batch_free(b);
  }
  /* the good calls still work */
  OK(wcs_db_put(db, "k", 1, "v", 1));
  OK(wcs_db_get(db, NULL, "k", 1, &pVal, &nVal));
  ck_assert_uint_eq(nVal, 1);
  wcs_free(pVal);
  OK(wcs_snapshot_new(db, &snap));
  wcs_snapshot_free(db, snap);
  OK(wcs_iter_new(db, NULL, &it));
  /* a seek to a NULL key with a length fails like any move: the iterator
  ** is not valid and its status repeats the error, until a good seek */
  OK(wcs_iter_seek(it, "k", 1));
  ck_assert(wcs_iter_valid(it));
  ck_assert_int_eq(wcs_iter_seek(it, NULL, 4), WCS_MISUSE);
  ck_assert(!wcs_iter_valid(it));
  ck_assert_int_eq(wcs_iter_status(it), WCS_MISUSE);
  assertMsgHas(db, "wcs_iter_seek: the key is NULL");
  ck_assert_int_eq(wcs_iter_seek_for_prev(it, NULL, 4), WCS_MISUSE);
  ck_assert(!wcs_iter_valid(it));
  assertMsgHas(db, "wcs_iter_seek_for_prev");
  OK(wcs_iter_seek(it, "k", 1));
  ck_assert(wcs_iter_valid(it));
  OK(wcs_iter_status(it));
  wcs_iter_free(it);
  OK(wcs_db_stats(db, &z));
  wcs_free(z);
  OK(wcs_db_sample_keys(db, NULL, sampleNone));
  OK(wcs_db_close(db));
}
END_TEST

START_TEST(test_db_read_only_open_reads_and_refuses_writes) {
  const char *zDir = tu_tmpdir("dbro");
  char zPath[1100];
  wcs_db *db = NULL, *db2 = NULL;
  wcs_options o;
  wcs_options_init(&o);
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  OK(wcs_db_open(&db, zPath, &o, NULL));
  putS(db, "x", "1");
  OK(wcs_db_flush(db));
  putS(db, "y", "2"); /* only in the WAL */
  OK(wcs_db_close(db));
  db = NULL;
  o.bReadOnly = 1;
  OK(wcs_db_open(&db, zPath, &o, NULL));
  OK(wcs_db_open(&db2, zPath, &o, NULL)); /* shared lock */
  ck_assert_str_eq(tu_get_str(db, NULL, "x"), "1");
  ck_assert_str_eq(tu_get_str(db, NULL, "y"), "2");
  ck_assert_int_eq(wcs_db_put(db, "z", 1, "3", 1), WCS_READONLY);
  ck_assert_ptr_nonnull(strstr(wcs_errmsg(db), "read-only"));
  OK(wcs_db_close(db2));
  OK(wcs_db_close(db));
  tu_rmrf(zDir);
}
END_TEST

/* A store without a LOCK file (a checkpoint's copy) on a read-only file
** system opens read-only, without a lock: no process can write it there.
** The file system is a read-only bind mount of the test's directory in a
** child of its own mount namespace; where that is not allowed (no root),
** the test says so and checks nothing else. A read-only open elsewhere
** makes the lock file, the one file it may write. */
START_TEST(test_db_read_only_open_on_a_read_only_file_system) {
  const char *zDir = tu_tmpdir("dbrofs");
  char zPath[1100], zLock[1200];
  wcs_db *db = NULL;
  wcs_options o;
  pid_t pid;
  int st = 0;
  struct stat sb;
  wcs_options_init(&o);
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  snprintf(zLock, sizeof zLock, "%s/LOCK", zPath);
  OK(wcs_db_open(&db, zPath, &o, NULL));
  putS(db, "x", "1");
  OK(wcs_db_close(db));
  db = NULL;
  ck_assert_int_eq(unlink(zLock), 0);
  o.bReadOnly = 1;
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    const char *zGot;
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount(zDir, zDir, NULL, MS_BIND, NULL) != 0 ||
        mount(NULL, zDir, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) != 0) {
      _exit(77);
    }
    if (wcs_db_open(&db, zPath, &o, NULL) != WCS_OK) _exit(1);
    zGot = tu_get_str(db, NULL, "x");
    if (zGot == NULL || strcmp(zGot, "1") != 0) _exit(2);
    if (wcs_db_close(db) != WCS_OK) _exit(3);
    _exit(access(zLock, F_OK) == 0 ? 4 : 0);
  }
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFEXITED(st));
  if (WEXITSTATUS(st) == 77) {
    fprintf(stderr, "test_db_read_only_open_on_a_read_only_file_system: "
                    "no read-only mount here (not root?); skipped\n");
  } else {
    ck_assert_int_eq(WEXITSTATUS(st), 0);
  }
  ck_assert_int_ne(stat(zLock, &sb), 0);
  OK(wcs_db_open(&db, zPath, &o, NULL));
  ck_assert_str_eq(tu_get_str(db, NULL, "x"), "1");
  OK(wcs_db_close(db));
  ck_assert_int_eq(stat(zLock, &sb), 0);
  tu_rmrf(zDir);
}
END_TEST

/* A manifest that ends in a torn tail (a writer killed while it appended
** an edit) opens for a follower, read-only, as for a writer: the tail is
** what a writer that stopped left, not a writer going on. It said the
** store "changed while it was being opened" on every open. */
START_TEST(test_db_follower_opens_a_manifest_with_a_torn_tail) {
  const char *zDir = tu_tmpdir("dbtorn");
  char zPath[1100], zMan[1400];
  wcs_db *db = NULL;
  wcs_options o;
  DIR *d;
  struct dirent *e;
  FILE *f;
  int bMoved = -1;
  wcs_options_init(&o);
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  OK(wcs_db_open(&db, zPath, &o, NULL));
  putS(db, "x", "1");
  OK(wcs_db_flush(db));
  OK(wcs_db_close(db));
  db = NULL;
  zMan[0] = 0;
  d = opendir(zPath);
  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, "MANIFEST-", 9) == 0) {
      snprintf(zMan, sizeof zMan, "%s/%s", zPath, e->d_name);
    }
  }
  closedir(d);
  ck_assert(zMan[0]);
  f = fopen(zMan, "ab");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(fwrite("\0\0\0\0\0\0\0", 1, 7, f),
                   7); /* a header cut short */
  fclose(f);
  o.bFollow = 1;
  OK(wcs_db_open(&db, zPath, &o, NULL));
  ck_assert_str_eq(tu_get_str(db, NULL, "x"), "1");
  OK(wcs_db_moved_on(db, &bMoved));
  ck_assert_int_eq(bMoved, 0);
  OK(wcs_db_close(db));
  db = NULL;
  o.bFollow = 0;
  o.bReadOnly = 1;
  OK(wcs_db_open(&db, zPath, &o, NULL));
  ck_assert_str_eq(tu_get_str(db, NULL, "x"), "1");
  OK(wcs_db_close(db));
  tu_rmrf(zDir);
}
END_TEST

/* A follower (bFollow) opens beside a writer, without the lock: it reads
** the store as of its open, the sorted files and the log alike, refuses
** writes, keeps reading while the writer's compactions delete the files
** it opened, and wcs_db_moved_on says when a new open would see more. */
START_TEST(test_db_follower_reads_beside_a_writer) {
  const char *zDir = tu_tmpdir("dbfollow");
  char zPath[1100], k[32], v[32];
  wcs_db *db = NULL, *f = NULL;
  wcs_options o, of;
  int i, bMoved = -1, nSeen;
  wcs_iter *it = NULL;
  smallOptions(&o);
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  OK(wcs_db_open(&db, zPath, &o, NULL));
  putNumbered(db, 2000);
  OK(wcs_db_flush(db));
  putS(db, "y", "2"); /* only in the log */
  wcs_options_init(&of);
  of.bFollow = 1;
  OK(wcs_db_open(&f, zPath, &of, NULL));
  ck_assert_str_eq(tu_get_str(f, NULL, "k00007"), "v7");
  ck_assert_str_eq(tu_get_str(f, NULL, "y"), "2");
  OK(wcs_db_moved_on(f, &bMoved));
  ck_assert_int_eq(bMoved, 0);
  ck_assert_int_eq(wcs_db_put(f, "z", 1, "3", 1), WCS_READONLY);
  OK(wcs_db_moved_on(db, &bMoved)); /* not a follower: never */
  ck_assert_int_eq(bMoved, 0);

  putS(db, "z", "3");
  OK(wcs_db_moved_on(f, &bMoved));
  ck_assert_int_eq(bMoved, 1);
  ck_assert_ptr_null(tu_get_str(f, NULL, "z")); /* as of its open */

  /* commits appended to the log: caught up with in place, the watched
  ** prefix noticed; not in a handle that is no follower */
  {
    int bWatched = -1;
    OK(wcs_db_follow(f, "q", 1, &bMoved, &bWatched));
    ck_assert_int_eq(bMoved, 0);
    ck_assert_int_eq(bWatched, 0);
    ck_assert_str_eq(tu_get_str(f, NULL, "z"), "3");
    OK(wcs_db_moved_on(f, &bMoved));
    ck_assert_int_eq(bMoved, 0);
    putS(db, "q1", "x");
    {
      wcs_batch *b = NULL;
      OK(wcs_batch_new(&b));
      OK(wcs_batch_delete_range(b, "k00000", 6, "k00002", 6));
      OK(wcs_db_write(db, b));
      wcs_batch_free(b);
    }
    OK(wcs_db_follow(f, "q", 1, &bMoved, &bWatched));
    ck_assert_int_eq(bMoved, 0);
    ck_assert_int_eq(bWatched, 1);
    ck_assert_str_eq(tu_get_str(f, NULL, "q1"), "x");
    ck_assert_ptr_null(tu_get_str(f, NULL, "k00001"));
    ck_assert_str_eq(tu_get_str(f, NULL, "k00002"), "v2");
    OK(wcs_db_follow(db, NULL, 0, &bMoved, &bWatched));
    ck_assert_int_eq(bMoved + bWatched, 0);
    OK(wcs_db_flush(db)); /* more than an append: a new open is needed */
    OK(wcs_db_follow(f, NULL, 0, &bMoved, &bWatched));
    ck_assert_int_eq(bMoved, 1);
  }

  /* the writer rewrites everything: the follower's files are deleted */
  for (i = 0; i < 2000; i += 2) {
    snprintf(k, sizeof k, "k%05d", i);
    putS(db, k, "new");
  }
  OK(wcs_db_flush(db));
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  OK(wcs_iter_new(f, NULL, &it));
  nSeen = 0;
  for (wcs_iter_first(it); wcs_iter_valid(it); wcs_iter_next(it)) {
    size_t nK, nV;
    const char *zK = wcs_iter_key(it, &nK);
    const char *zV = wcs_iter_value(it, &nV);
    if (nK == 6 && zK[0] == 'k') {
      snprintf(v, sizeof v, "v%d", atoi(zK + 1));
      ck_assert_uint_eq(nV, strlen(v));
      ck_assert_int_eq(memcmp(zV, v, nV), 0);
      nSeen++;
    }
  }
  ck_assert_int_eq(wcs_iter_status(it), WCS_OK);
  wcs_iter_free(it);
  ck_assert_int_eq(nSeen, 1998); /* k00000 and k00001 deleted */
  OK(wcs_db_close(f));

  f = NULL;
  OK(wcs_db_open(&f, zPath, &of, NULL));
  ck_assert_str_eq(tu_get_str(f, NULL, "z"), "3");
  ck_assert_ptr_null(tu_get_str(f, NULL, "k00001"));
  ck_assert_str_eq(tu_get_str(f, NULL, "k00008"), "new");
  ck_assert_str_eq(tu_get_str(f, NULL, "k00009"), "v9");
  OK(wcs_db_moved_on(f, &bMoved));
  ck_assert_int_eq(bMoved, 0);
  OK(wcs_db_close(f));
  OK(wcs_db_close(db));
  tu_rmrf(zDir);
}
END_TEST

/* The writer of test_db_follower_sees_whole_commits: commits batches of
** FOLLOW_BATCH keys "b<batch>-<i>" until told to stop, with a small
** memtable, so that logs switch and flushes and compactions run all the
** time, and now and then a manual compaction of everything. */
#define FOLLOW_BATCH 20
typedef struct FollowWriter {
  wcs_db *db;
  atomic_int bStop;
  int nBatch;     /* batches committed */
  int rc;         /* the first error (Check's asserts belong to the */
  char zErr[256]; /* test's thread), and its message */
} FollowWriter;

static void *followWriter(void *p) {
  FollowWriter *w = p;
  char k[32];
  while (!atomic_load(&w->bStop) && w->rc == WCS_OK) {
    wcs_batch *b = NULL;
    int i;
    w->rc = wcs_batch_new(&b);
    for (i = 0; w->rc == WCS_OK && i < FOLLOW_BATCH; i++) {
      snprintf(k, sizeof k, "b%06d-%02d", w->nBatch, i);
      w->rc = wcs_batch_put(b, k, strlen(k), "value-of-a-batch", 16);
    }
    if (w->rc == WCS_OK) w->rc = wcs_db_write(w->db, b);
    wcs_batch_free(b);
    if (w->rc == WCS_OK) w->nBatch++;
    if (w->rc == WCS_OK && w->nBatch % 500 == 0) {
      w->rc = wcs_db_compact_range(w->db, NULL, 0, NULL, 0);
    }
  }
  if (w->rc != WCS_OK) {
    snprintf(w->zErr, sizeof w->zErr, "%s", wcs_errmsg(w->db));
  }
  return NULL;
}

/* A follower beside a writer that commits, switches logs, flushes and
** compacts, caught up 60 times (wcs_db_follow), opened again whenever
** that is not enough: each open succeeds (the races with the writer's
** deletions are tried again inside it), and after each open or catch-up
** the follower shows whole commits only, every one up to some point and
** none after (no gap), never fewer than the time before. */
START_TEST(test_db_follower_sees_whole_commits) {
  const char *zDir = tu_tmpdir("dbfollow2");
  char zPath[1100];
  FollowWriter w;
  pthread_t th;
  wcs_db *db = NULL, *f = NULL;
  wcs_options o, of;
  int nOpen, nPrev = 0, nCaught = 0;
  char zBad[512] = "";
  smallOptions(&o);
  o.nMemtable = 1 << 20; /* log switches now and then, not at every read */
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  memset(&w, 0, sizeof w);
  atomic_init(&w.bStop, 0);
  OK(wcs_db_open(&db, zPath, &o, NULL));
  w.db = db;
  ck_assert_int_eq(pthread_create(&th, NULL, followWriter, &w), 0);
  wcs_options_init(&of);
  of.bFollow = 1;
  /* Check's asserts stay out of the loop: the writer must be stopped and
  ** joined before the test can end */
  for (nOpen = 0; nOpen < 60 && zBad[0] == 0; nOpen++) {
    wcs_iter *it = NULL;
    char *zErr = NULL;
    int rc = WCS_OK, nKey = 0, iBatch = -1, n = 0;
    if (f) {
      /* caught up with in place, or opened anew when the writer did
      ** more than append to its log */
      int bMoved = 0, bWatched = 0;
      rc = wcs_db_follow(f, NULL, 0, &bMoved, &bWatched);
      if (rc != WCS_OK) {
        snprintf(zBad, sizeof zBad, "follow %d: %d %s", nOpen, rc,
                 wcs_errmsg(f));
        break;
      }
      if (bMoved) {
        wcs_db_close(f);
        f = NULL;
      } else {
        nCaught++;
      }
    }
    if (f == NULL) rc = wcs_db_open(&f, zPath, &of, &zErr);
    if (rc != WCS_OK) {
      snprintf(zBad, sizeof zBad, "follower open %d: %d %s", nOpen, rc,
               zErr ? zErr : "?");
      wcs_free(zErr);
      break;
    }
    rc = wcs_iter_new(f, NULL, &it);
    for (wcs_iter_first(it); rc == WCS_OK && wcs_iter_valid(it);
         wcs_iter_next(it)) {
      size_t nK;
      const char *zK = wcs_iter_key(it, &nK);
      int b = atoi(zK + 1);
      if (b != iBatch) {
        /* a new batch: the one before was whole, and this one follows it */
        if (n != (iBatch < 0 ? 0 : FOLLOW_BATCH) || b != iBatch + 1) {
          snprintf(zBad, sizeof zBad,
                   "open %d: batch %d has %d keys, then batch %d", nOpen,
                   iBatch, n, b);
          break;
        }
        iBatch = b;
        n = 0;
      }
      n++;
      nKey++;
    }
    if (rc == WCS_OK) rc = wcs_iter_status(it);
    wcs_iter_free(it);
    if (zBad[0] == 0 && rc != WCS_OK) {
      snprintf(zBad, sizeof zBad, "open %d: read: %d %s", nOpen, rc,
               wcs_errmsg(f));
    }
    if (zBad[0] == 0 &&
        (n != (iBatch < 0 ? 0 : FOLLOW_BATCH) || iBatch + 1 < nPrev ||
         nKey != (iBatch + 1) * FOLLOW_BATCH)) {
      snprintf(zBad, sizeof zBad,
               "open %d: %d keys, last batch %d of %d keys, before %d "
               "batches",
               nOpen, nKey, iBatch, n, nPrev);
    }
    nPrev = iBatch + 1;
    usleep(2000);
  }
  if (f && wcs_db_close(f) != WCS_OK && zBad[0] == 0) {
    snprintf(zBad, sizeof zBad, "close failed");
  }
  atomic_store(&w.bStop, 1);
  pthread_join(th, NULL);
  ck_assert_msg(zBad[0] == 0, "%s", zBad);
  ck_assert_msg(w.rc == WCS_OK, "writer: %d %s", w.rc, w.zErr);
  ck_assert_int_gt(nCaught, 0);
  ck_assert_int_gt(nPrev, 0);
  ck_assert_int_le(nPrev, w.nBatch);
  OK(wcs_db_close(db));
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_db_missing_store_without_create_is_cantopen) {
  const char *zDir = tu_tmpdir("dbmissing");
  char zPath[1100];
  wcs_db *db = NULL;
  wcs_options o;
  char *zErr = NULL;
  wcs_options_init(&o);
  o.bCreate = 0;
  snprintf(zPath, sizeof zPath, "%s/none", zDir);
  ck_assert_int_eq(wcs_db_open(&db, zPath, &o, &zErr), WCS_CANTOPEN);
  ck_assert_ptr_nonnull(strstr(zErr, zPath));
  wcs_free(zErr);
  tu_rmrf(zDir);
}
END_TEST

/* A file where the store's directory should be: WCS_CANTOPEN naming it,
** for every kind of open (not an I/O error about a LOCK file inside). */
START_TEST(test_db_file_in_place_of_the_directory_is_cantopen) {
  const char *zDir = tu_tmpdir("dbisfile");
  char zPath[1100];
  int k;
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  ck_assert_int_eq(tu_write_file(zPath, "x", 1), 0);
  for (k = 0; k < 3; k++) {
    wcs_db *db = NULL;
    wcs_options o;
    char *zErr = NULL;
    wcs_options_init(&o);
    o.bCreate = k == 0;
    o.bReadOnly = k == 2;
    int rc = wcs_db_open(&db, zPath, &o, &zErr);
    ck_assert_ptr_null(db);
    ck_assert_ptr_nonnull(zErr);
    ck_assert_msg(rc == WCS_CANTOPEN, "open %d: %d %s", k, rc, zErr);
    ck_assert_msg(strstr(zErr, zPath) != NULL && strstr(zErr, "LOCK") == NULL,
                  "open %d: %s", k, zErr);
    wcs_free(zErr);
  }
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_db_permission_problem_names_the_path) {
  const char *zDir = tu_tmpdir("dbperm");
  char zPath[1100];
  pid_t pid;
  int st = 0;
  ck_assert_int_eq(chmod(zDir, 0755), 0);
  snprintf(zPath, sizeof zPath, "%s/locked", zDir);
  ck_assert_int_eq(mkdir(zPath, 0555), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    wcs_db *db = NULL;
    wcs_options o;
    char *zErr = NULL;
    char zStore[1200];
    int rc;
    if (geteuid() == 0 && setuid(65534) != 0) _exit(3);
    wcs_options_init(&o);
    snprintf(zStore, sizeof zStore, "%s/store", zPath);
    rc = wcs_db_open(&db, zStore, &o, &zErr);
    if (rc != WCS_PERM) _exit(4);
    if (zErr == NULL || strstr(zErr, zStore) == NULL) _exit(5);
    if (strstr(zErr, "Permission denied") == NULL) _exit(6);
    _exit(0);
  }
  waitpid(pid, &st, 0);
  ck_assert(WIFEXITED(st));
  ck_assert_int_eq(WEXITSTATUS(st), 0);
  tu_rmrf(zDir);
}
END_TEST

/* ---- approximate sizes, key samples, statistics */

typedef struct Samples {
  int n;
  uint64_t nLast;
  char aPrev[64];
  int bSorted;
} Samples;

static int onSample(void *p, const void *k, size_t n, uint64_t off) {
  Samples *s = p;
  char z[64];
  if (n >= sizeof z) n = sizeof z - 1;
  memcpy(z, k, n);
  z[n] = 0;
  if (s->n && (strcmp(z, s->aPrev) <= 0 || off < s->nLast)) s->bSorted = 0;
  strcpy(s->aPrev, z);
  s->nLast = off;
  s->n++;
  return 0;
}

START_TEST(test_db_approximate_samples_and_stats) {
  wcs_db *db = NULL;
  wcs_options o;
  uint64_t nAll = 0, nKeysAll = 0, nHalf = 0, nKeysHalf = 0;
  Samples sm;
  char *zJson = NULL;
  int i;
  wcs_options_init(&o);
  o.bInMemory = 1;
  o.nBlockSize = 4096;
  o.iZstdLevel = 0;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  for (i = 0; i < 20000; i++) {
    char k[16], v[100];
    snprintf(k, sizeof k, "k%06d", i);
    memset(v, 'a' + i % 26, sizeof v);
    OK(wcs_db_put(db, k, strlen(k), v, sizeof v));
  }
  OK(wcs_db_flush(db));
  OK(wcs_db_approximate(db, NULL, 0, NULL, 0, &nAll, &nKeysAll));
  OK(wcs_db_approximate(db, "k000000", 7, "k010000", 7, &nHalf, &nKeysHalf));
  ck_assert_uint_gt(nAll, 20000 * 100);
  ck_assert_uint_ge(nKeysAll, 19000);
  ck_assert_uint_le(nKeysAll, 20000);
  ck_assert_msg(nHalf > nAll * 4 / 10 && nHalf < nAll * 6 / 10,
                "half the keys: %llu of %llu bytes", (unsigned long long)nHalf,
                (unsigned long long)nAll);
  ck_assert(nKeysHalf > 8000 && nKeysHalf < 12000);
  memset(&sm, 0, sizeof sm);
  sm.bSorted = 1;
  OK(wcs_db_sample_keys(db, &sm, onSample));
  ck_assert_int_gt(sm.n, 3);
  ck_assert(sm.bSorted);
  OK(wcs_db_stats(db, &zJson));
  ck_assert_ptr_nonnull(strstr(zJson, "\"levels\":[{\"level\":0"));
  ck_assert_ptr_nonnull(strstr(zJson, "\"seq\":20000"));
  ck_assert_ptr_nonnull(strstr(zJson, "\"flushes\":"));
  ck_assert_ptr_nonnull(strstr(zJson, "\"stall_micros\":"));
  ck_assert(zJson[strlen(zJson) - 1] == '}');
  wcs_free(zJson);
  OK(wcs_db_close(db));
}
END_TEST

/* Estimates come from the readers' index samples: no index is loaded
** (the cache here is too small to keep one), a flush shows at once, and
** on evenly spread decimal keys every range is within 5% of its true
** count plus 1/256 of the file's keys (an eighth of an interval of the
** sample; without interpolation inside an interval it fails). */
START_TEST(test_db_approximate_loads_no_index_and_stays_close) {
  wcs_db *db = NULL;
  wcs_options o;
  uint64_t nMiss, nHit, nBytes, nKeys;
  const int nKey = 200000;
  int a, b, i;
  char zA[16], zB[16], v[100];
  wcs_options_init(&o);
  o.bInMemory = 1;
  o.nBlockSize = 4096;
  o.iZstdLevel = 0;
  o.nCache = 64 * 1024;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  memset(v, 'v', sizeof v);
  for (i = 0; i < nKey; i++) {
    snprintf(zA, sizeof zA, "k%07d", i * 5);
    OK(wcs_db_put(db, zA, strlen(zA), v, sizeof v));
  }
  OK(wcs_db_flush(db));
  nMiss = tu_db_stat(db, "index_misses");
  nHit = tu_db_stat(db, "index_hits");
  for (a = 0; a < nKey; a += 9973) {
    for (b = a + 1; b <= nKey; b += 7919) {
      uint64_t nTrue = (uint64_t)(b - a), nSlack = nTrue / 20 + nKey / 256;
      snprintf(zA, sizeof zA, "k%07d", a * 5);
      snprintf(zB, sizeof zB, "k%07d", b * 5);
      OK(wcs_db_approximate(db, zA, strlen(zA), zB, strlen(zB), &nBytes,
                            &nKeys));
      ck_assert_msg(nKeys + nSlack >= nTrue && nKeys <= nTrue + nSlack,
                    "[%d, %d): %llu keys estimated, %llu true", a, b,
                    (unsigned long long)nKeys, (unsigned long long)nTrue);
    }
  }
  ck_assert_uint_eq(tu_db_stat(db, "index_misses"), nMiss);
  ck_assert_uint_eq(tu_db_stat(db, "index_hits"), nHit);
  /* a flush is seen by the next estimate */
  OK(wcs_db_approximate(db, "m", 1, "n", 1, &nBytes, &nKeys));
  ck_assert_uint_eq(nKeys, 0);
  for (i = 0; i < 20000; i++) {
    snprintf(zA, sizeof zA, "m%07d", i);
    OK(wcs_db_put(db, zA, strlen(zA), v, sizeof v));
  }
  OK(wcs_db_flush(db));
  OK(wcs_db_approximate(db, "m", 1, "n", 1, &nBytes, &nKeys));
  ck_assert_msg(nKeys >= 19000 && nKeys <= 20000, "%llu keys",
                (unsigned long long)nKeys);
  ck_assert_uint_eq(tu_db_stat(db, "index_misses"), nMiss);
  OK(wcs_db_close(db));
}
END_TEST

/* The files of all levels, from wcs_db_stats' per-level "files". */
static int filesOf(wcs_db *db) {
  char *zJson = NULL, *z;
  int n = 0;
  OK(wcs_db_stats(db, &zJson));
  for (z = strstr(zJson, "\"files\":"); z; z = strstr(z + 1, "\"files\":")) {
    n += atoi(z + 8);
  }
  wcs_free(zJson);
  return n;
}

/* Compaction output is cut once a file's decoded index and filter would
** reach WCS_SST_META_CUT, however small its data: 400K short keys that
** compress well are 5 MB of bloom filter at 100 bits per key. Kept in one
** file, that entry would be larger than a shard of this 16 MiB cache (4
** shards of 4 MiB), evicted at each release and read again by each get;
** cut, the entries stay cached and reads hit them. */
START_TEST(test_db_compaction_cuts_files_by_index_and_filter_size) {
  wcs_db *db = NULL;
  wcs_options o;
  uint64_t nMiss;
  const int nKey = 400000;
  int i, nFile;
  char zK[16];
  wcs_options_init(&o);
  o.bInMemory = 1;
  o.nBloomBits = 100;
  o.nCache = 16u << 20;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  for (i = 0; i < nKey; i++) {
    snprintf(zK, sizeof zK, "k%07d", i);
    OK(wcs_db_put(db, zK, strlen(zK), "v", 1));
  }
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  nFile = filesOf(db);
  /* 5 MB of filter in pieces of under 1 MiB */
  ck_assert_msg(nFile >= 5, "%d files", nFile);
  nMiss = tu_db_stat(db, "index_misses");
  for (i = 0; i < 2000; i++) {
    void *pV = NULL;
    size_t nV = 0;
    snprintf(zK, sizeof zK, "k%07d", (int)((i * 7919u) % (unsigned)nKey));
    OK(wcs_db_get(db, NULL, zK, strlen(zK), &pV, &nV));
    ck_assert_uint_eq(nV, 1);
    wcs_free(pV);
  }
  /* each file's entry is loaded once at most */
  ck_assert_msg(tu_db_stat(db, "index_misses") - nMiss <= (uint64_t)nFile,
                "%llu index loads for %d files",
                (unsigned long long)(tu_db_stat(db, "index_misses") - nMiss),
                nFile);
  OK(wcs_db_close(db));
}
END_TEST

/* A level iterator keeps the iterators of a few of its files open for the
** next seek into them (version.c, LV_PARKED). Seeks that go round more
** files than it keeps, seeks past the end, and steps both ways across file
** ends after them read what the keys say. */
static void expectNumAt(wcs_iter *it, int i) {
  char zK[16];
  const char *k, *v;
  size_t nK = 0, nV = 0;
  snprintf(zK, sizeof zK, "k%07d", i);
  ck_assert_msg(wcs_iter_valid(it), "not valid, expected %s", zK);
  k = wcs_iter_key(it, &nK);
  v = wcs_iter_value(it, &nV);
  ck_assert_msg(nK == 8 && memcmp(k, zK, 8) == 0, "at %.*s, expected %s",
                (int)nK, k, zK);
  ck_assert_msg(nV == 7 && memcmp(v, zK + 1, 7) == 0, "value of %s", zK);
}

START_TEST(test_db_seeks_round_more_files_than_a_level_keeps_open) {
  wcs_db *db = NULL;
  wcs_iter *it = NULL;
  wcs_options o;
  const int nKey = 300000;
  int i, r, nFile;
  char zK[16];
  wcs_options_init(&o);
  o.bInMemory = 1;
  o.nFileBytes = 64u << 10; /* many files */
  OK(wcs_db_open(&db, NULL, &o, NULL));
  for (i = 0; i < nKey; i++) {
    snprintf(zK, sizeof zK, "k%07d", i);
    OK(wcs_db_put(db, zK, 8, zK + 1, 7));
  }
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  nFile = filesOf(db);
  ck_assert_msg(nFile >= 7, "%d files", nFile);
  OK(wcs_iter_new(db, NULL, &it));
  for (r = 0; r < 4000; r++) {
    /* a walk over the files in a scattered order, each met again soon */
    i = (int)(((unsigned)r * 104729u + (unsigned)(r % 7) * 57139u) %
              (unsigned)nKey);
    snprintf(zK, sizeof zK, "k%07d", i);
    if (r % 5 == 4) {
      /* between two keys: for prev, the one before */
      zK[8] = '5';
      OK(wcs_iter_seek_for_prev(it, zK, 9));
      expectNumAt(it, i);
    } else {
      OK(wcs_iter_seek(it, zK, 8));
      expectNumAt(it, i);
    }
    if (r % 3 == 0 && i + 2 < nKey) {
      OK(wcs_iter_next(it));
      OK(wcs_iter_next(it));
      expectNumAt(it, i + 2);
      OK(wcs_iter_prev(it));
      expectNumAt(it, i + 1);
    }
    if (r % 11 == 0) {
      OK(wcs_iter_seek(it, "l", 1)); /* past every file */
      ck_assert(!wcs_iter_valid(it));
    }
  }
  /* across every file end, both ways */
  OK(wcs_iter_seek(it, "k", 1));
  for (i = 0; i < nKey; i += 1) {
    if (i % 997 == 0) expectNumAt(it, i);
    OK(wcs_iter_next(it));
  }
  ck_assert(!wcs_iter_valid(it));
  OK(wcs_iter_last(it));
  for (i = nKey - 1; i >= 0; i--) {
    if (i % 991 == 0) expectNumAt(it, i);
    OK(wcs_iter_prev(it));
  }
  ck_assert(!wcs_iter_valid(it));
  wcs_iter_free(it);
  OK(wcs_db_close(db));
}
END_TEST

/* ---- group commit: concurrent writers share WAL writes and fsyncs */

typedef struct GroupArg {
  wcs_db *db;
  int iThread;
  int nFail;
} GroupArg;

static void *groupWriter(void *p) {
  GroupArg *a = p;
  int i;
  for (i = 0; i < 150; i++) {
    char k[32], v[32];
    wcs_batch *b = NULL;
    if (wcs_batch_new(&b)) {
      a->nFail++;
      continue;
    }
    snprintf(k, sizeof k, "t%d-%04d-a", a->iThread, i);
    snprintf(v, sizeof v, "%d", i);
    wcs_batch_put(b, k, strlen(k), v, strlen(v));
    k[strlen(k) - 1] = 'b';
    wcs_batch_put(b, k, strlen(k), v, strlen(v));
    if (wcs_db_write(a->db, b) != WCS_OK) a->nFail++;
    wcs_batch_free(b);
  }
  return NULL;
}

START_TEST(test_db_concurrent_writers_group_commit) {
  const char *zDir = tu_tmpdir("dbgroup");
  char zPath[1100];
  wcs_db *db = NULL;
  wcs_options o;
  pthread_t aT[4];
  GroupArg aArg[4];
  int i, j;
  smallOptions(&o);
  o.iSync = WCS_SYNC_FULL;
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  OK(wcs_db_open(&db, zPath, &o, NULL));
  for (i = 0; i < 4; i++) {
    aArg[i].db = db;
    aArg[i].iThread = i;
    aArg[i].nFail = 0;
    pthread_create(&aT[i], NULL, groupWriter, &aArg[i]);
  }
  for (i = 0; i < 4; i++) {
    pthread_join(aT[i], NULL);
    ck_assert_int_eq(aArg[i].nFail, 0);
  }
  OK(wcs_db_close(db));
  db = NULL;
  OK(wcs_db_open(&db, zPath, &o, NULL));
  for (i = 0; i < 4; i++) {
    for (j = 0; j < 150; j++) {
      char k[32], v[32];
      snprintf(k, sizeof k, "t%d-%04d-a", i, j);
      snprintf(v, sizeof v, "%d", j);
      ck_assert_str_eq(tu_get_str(db, NULL, k), v);
      k[strlen(k) - 1] = 'b';
      ck_assert_str_eq(tu_get_str(db, NULL, k), v);
    }
  }
  OK(wcs_db_close(db));
  tu_rmrf(zDir);
}
END_TEST

/* With bNoBackground, flushes run in the calling thread: a writer that
** fills the memtable and another thread calling wcs_db_flush must take
** turns at the one immutable memtable, not flush it twice. */
typedef struct InlineArg {
  wcs_db *db;
  _Atomic int bDone;
  int nFail;
} InlineArg;

static void *inlineWriter(void *p) {
  InlineArg *a = p;
  int i;
  for (i = 0; i < 3000; i++) {
    if (tu_put_one(a->db, "w", i, "inline") != WCS_OK) a->nFail++;
  }
  atomic_store(&a->bDone, 1);
  return NULL;
}

static void *inlineFlusher(void *p) {
  InlineArg *a = p;
  while (!atomic_load(&a->bDone)) {
    if (wcs_db_flush(a->db) != WCS_OK) a->nFail++;
  }
  return NULL;
}

START_TEST(test_db_inline_flushes_from_two_threads_take_turns) {
  const char *zDir = tu_tmpdir("dbinline");
  char zPath[1100];
  wcs_db *db = NULL;
  wcs_options o;
  pthread_t aT[3];
  InlineArg a;
  int i;
  smallOptions(&o);
  o.bNoBackground = 1;
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  OK(wcs_db_open(&db, zPath, &o, NULL));
  memset(&a, 0, sizeof a);
  a.db = db;
  pthread_create(&aT[0], NULL, inlineWriter, &a);
  pthread_create(&aT[1], NULL, inlineFlusher, &a);
  pthread_create(&aT[2], NULL, inlineFlusher, &a);
  for (i = 0; i < 3; i++)
    pthread_join(aT[i], NULL);
  ck_assert_int_eq(a.nFail, 0);
  OK(wcs_db_flush(db));
  for (i = 0; i < 3000; i += 7) {
    char k[32], v[160];
    tu_key_of(k, "w", i);
    tu_val_of(v, "inline", i);
    ck_assert_str_eq(tu_get_str(db, NULL, k), v);
  }
  OK(wcs_db_close(db));
  tu_rmrf(zDir);
}
END_TEST

/* The smallest memtable budget still holds many writes per memtable: an
** empty memtable is never switched for being full (a budget below what an
** empty memtable occupies made every write switch again, forever). */
START_TEST(test_db_smallest_memtable_budget_still_writes) {
  const char *zDir = tu_tmpdir("dbtinymem");
  char zPath[1100];
  pid_t pid;
  int st = 0;
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    wcs_db *db = NULL;
    wcs_options o;
    int i;
    alarm(20);
    wcs_options_init(&o);
    o.nMemtable = 1; /* raised to the minimum */
    if (wcs_db_open(&db, zPath, &o, NULL) != WCS_OK) _exit(2);
    for (i = 0; i < 400; i++) {
      if (tu_put_one(db, "m", i, "tiny") != WCS_OK) _exit(3);
    }
    if (wcs_db_flush(db) != WCS_OK) _exit(4);
    /* several writes per memtable, so far fewer flushes than writes */
    if (tu_db_stat(db, "flushes") > 100) _exit(5);
    for (i = 0; i < 400; i++) {
      char k[32], v[160];
      const char *z;
      tu_key_of(k, "m", i);
      tu_val_of(v, "tiny", i);
      z = tu_get_str(db, NULL, k);
      if (z == NULL || strcmp(z, v) != 0) _exit(6);
    }
    if (wcs_db_close(db) != WCS_OK) _exit(7);
    _exit(0);
  }
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                "child status %d (a signal: it hung switching memtables)",
                st);
  tu_rmrf(zDir);
}
END_TEST

/* ---- faults */

/* Open a store in a memory env behind a fault env. */
typedef struct FaultFix {
  wcs_env *pMem;
  wcs_env *pEnv;
  wcs_fault fault;
  wcs_options o;
} FaultFix;

static void faultOpen(FaultFix *f) {
  memset(f, 0, sizeof *f);
  f->pMem = wcs_env_mem_new();
  f->pEnv = wcs_env_fault_new(f->pMem, &f->fault);
  smallOptions(&f->o);
  f->o.bNoBackground = 1;
}

static void faultClose(FaultFix *f) {
  f->pEnv->xDestroy(f->pEnv);
  f->pMem->xDestroy(f->pMem);
}

/* The files of a store directory, saved (names and bytes). */
typedef struct SavedDir {
  wcs_env *pEnv; /* the env the files are read and written through */
  const char *zDir;
  char az[64][64]; /* names in zDir */
  uint8_t *aa[64]; /* their bytes, malloc'd */
  size_t an[64];   /* their sizes */
  int n;
} SavedDir;

static int savedName(void *p, const char *z) {
  SavedDir *d = p;
  ck_assert_int_lt(d->n, 64);
  snprintf(d->az[d->n++], sizeof d->az[0], "%s", z);
  return WCS_OK;
}

static void saveDir(SavedDir *d, wcs_env *pEnv, const char *zDir) {
  int i;
  memset(d, 0, sizeof *d);
  d->pEnv = pEnv;
  d->zDir = zDir;
  ck_assert_int_eq(pEnv->xList(pEnv, zDir, d, savedName, NULL), WCS_OK);
  for (i = 0; i < d->n; i++) {
    char z[160];
    wcs_file *f = NULL;
    uint64_t n = 0;
    size_t nRead = 0;
    snprintf(z, sizeof z, "%s/%s", zDir, d->az[i]);
    ck_assert_int_eq(pEnv->xOpen(pEnv, z, WCS_OPEN_READ, &f, NULL), WCS_OK);
    ck_assert_int_eq(pEnv->xSize(f, &n, NULL), WCS_OK);
    d->aa[i] = malloc(n + 1);
    ck_assert_ptr_nonnull(d->aa[i]);
    ck_assert_int_eq(pEnv->xRead(f, 0, d->aa[i], n, &nRead, NULL), WCS_OK);
    ck_assert_uint_eq(nRead, n);
    d->an[i] = (size_t)n;
    pEnv->xClose(f);
  }
}

/* Put the directory back as saved: every file now in it is deleted, the
** saved ones are written back. Frees what d holds. */
static void restoreDir(SavedDir *d) {
  SavedDir now;
  int i;
  memset(&now, 0, sizeof now);
  ck_assert_int_eq(d->pEnv->xList(d->pEnv, d->zDir, &now, savedName, NULL),
                   WCS_OK);
  for (i = 0; i < now.n; i++) {
    char z[160];
    snprintf(z, sizeof z, "%s/%s", d->zDir, now.az[i]);
    ck_assert_int_eq(d->pEnv->xDelete(d->pEnv, z, NULL), WCS_OK);
  }
  for (i = 0; i < d->n; i++) {
    char z[160];
    wcs_file *f = NULL;
    snprintf(z, sizeof z, "%s/%s", d->zDir, d->az[i]);
    ck_assert_int_eq(d->pEnv->xOpen(d->pEnv, z,
                                    WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &f,
                                    NULL),
                     WCS_OK);
    if (d->an[i]) {
      ck_assert_int_eq(d->pEnv->xAppend(f, d->aa[i], d->an[i], NULL), WCS_OK);
    }
    d->pEnv->xClose(f);
    free(d->aa[i]);
  }
  d->n = 0;
}

/*
** Free db as a process that died leaves its store: wcs_db_close would
** write (a clean close records the length of the log in the manifest,
** VE_LOG_CLOSED), so the files of zDir are saved before it and put back
** after, through pBase (a fault env's base: what it writes there is not
** tracked for a later wcs_env_fault_crash).
*/
static void closeAsCrashed(wcs_env *pBase, const char *zDir, wcs_db *db) {
  SavedDir d;
  saveDir(&d, pBase, zDir);
  wcs_db_close(db); /* its writes, if any, are undone below */
  restoreDir(&d);
}

/* Write keys 0..n-1 one per commit; returns how many were acknowledged
** before the first error (and that error in *pRc, message in *pzErr). */
static int writeUntilError(wcs_db *db, int n, int *pRc, char **pzMsg) {
  int i;
  char k[32], v[64];
  *pRc = WCS_OK;
  for (i = 0; i < n; i++) {
    int rc;
    snprintf(k, sizeof k, "key%06d", i);
    memset(v, 'a' + i % 26, sizeof v);
    rc = wcs_db_put(db, k, strlen(k), v, sizeof v);
    if (rc) {
      *pRc = rc;
      *pzMsg = strdup(wcs_errmsg(db));
      return i;
    }
  }
  return n;
}

static void checkAcked(wcs_db *db, int nAcked) {
  int i;
  char k[32];
  for (i = 0; i < nAcked; i++) {
    void *p = NULL;
    size_t n = 0;
    snprintf(k, sizeof k, "key%06d", i);
    OK(wcs_db_get(db, NULL, k, strlen(k), &p, &n));
    ck_assert_msg(p != NULL, "acknowledged %s lost", k);
    ck_assert_uint_eq(n, 64);
    wcs_free(p);
  }
}

/* The Nth append fails (disk full or I/O error) at many points: the call
** fails with a message naming a file, and a reopen has every commit
** acknowledged before it. */
static void faultedWrites(int rcFail, int bSync) {
  int iFail;
  for (iFail = 5; iFail < 400; iFail += 37) {
    FaultFix f;
    wcs_db *db = NULL;
    int rc = WCS_OK, nAcked;
    char *zMsg = NULL;
    faultOpen(&f);
    f.o.iSync = WCS_SYNC_FULL;
    OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
    if (bSync)
      f.fault.nSyncFail = f.fault.nSyncs + iFail / 4 + 1;
    else
      f.fault.nWriteFail = f.fault.nWrites + iFail;
    f.fault.rcFail = rcFail;
    nAcked = writeUntilError(db, 3000, &rc, &zMsg);
    ck_assert_msg(rc == rcFail, "fault %d: got rc %d", iFail, rc);
    ck_assert_msg(strstr(zMsg, "/s/") != NULL, "message names no file: %s",
                  zMsg);
    free(zMsg);
    wcs_db_close(db);
    db = NULL;
    f.fault.nWriteFail = f.fault.nSyncFail = 0;
    OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
    checkAcked(db, nAcked);
    OK(wcs_db_close(db));
    faultClose(&f);
  }
}

START_TEST(test_db_disk_full_during_writes_keeps_acknowledged) {
  faultedWrites(WCS_FULL, 0);
}
END_TEST

START_TEST(test_db_io_error_during_writes_keeps_acknowledged) {
  faultedWrites(WCS_IOERR, 0);
}
END_TEST

START_TEST(test_db_sync_failure_keeps_acknowledged) {
  faultedWrites(WCS_IOERR, 1);
}
END_TEST

/* Opening a store whose manifest ends whole and whose one log is short
** writes nothing: the manifest is appended to and the log, replayed into
** the memtable, goes on taking commits. Commits made after such an open,
** and after a crash that cuts the unsynced tail, are kept as before; a
** log over LOG_REUSE_BYTES (1 MiB) is flushed at open instead. */
START_TEST(test_db_open_writes_nothing_for_a_short_log) {
  FaultFix f;
  wcs_db *db = NULL;
  int64_t nW, nS;
  int i, iRound;
  char k[32], v[200];
  faultOpen(&f);
  f.o.nMemtable = 8 << 20; /* no flush while writing below */
  f.o.iSync = WCS_SYNC_FULL;
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
  for (i = 0; i < 100; i++) {
    snprintf(k, sizeof k, "key%06d", i);
    putS(db, k, "first");
  }
  OK(wcs_db_close(db));
  for (iRound = 0; iRound < 3; iRound++) {
    db = NULL;
    nW = f.fault.nWrites;
    nS = f.fault.nSyncs;
    OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
    ck_assert_int_eq(f.fault.nWrites, nW);
    ck_assert_int_eq(f.fault.nSyncs, nS);
    for (i = 0; i < 100; i++) {
      snprintf(k, sizeof k, "key%06d", i);
      ck_assert_str_eq(tu_get_str(db, NULL, k), iRound == 0 ? "first" : "again");
    }
    for (i = 0; i < 100; i += 2) {
      snprintf(k, sizeof k, "key%06d", i);
      putS(db, k, "again");
    }
    for (i = 1; i < 100; i += 2) {
      snprintf(k, sizeof k, "key%06d", i);
      putS(db, k, "again");
    }
    /* a crash, not a close: every commit was synced (SYNC FULL) */
    ck_assert_int_eq(wcs_env_fault_crash(f.pEnv), WCS_OK);
    closeAsCrashed(f.pMem, "/s", db);
  }

  /* more than 1 MiB in the log: the open flushes it */
  db = NULL;
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
  memset(v, 'x', sizeof v);
  for (i = 0; i < 6000; i++) {
    snprintf(k, sizeof k, "big%06d", i);
    OK(wcs_db_put(db, k, strlen(k), v, sizeof v));
  }
  OK(wcs_db_close(db));
  db = NULL;
  nS = f.fault.nSyncs;
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
  ck_assert_int_gt(f.fault.nSyncs, nS);
  for (i = 0; i < 6000; i += 97) {
    void *p = NULL;
    size_t n = 0;
    snprintf(k, sizeof k, "big%06d", i);
    OK(wcs_db_get(db, NULL, k, strlen(k), &p, &n));
    ck_assert_uint_eq(n, sizeof v);
    wcs_free(p);
  }
  ck_assert_str_eq(tu_get_str(db, NULL, "key000042"), "again");
  OK(wcs_db_close(db));
  faultClose(&f);
}
END_TEST

/* A simulated power cut with SYNC FULL keeps every acknowledged commit;
** with SYNC NORMAL and OFF the store still opens, with a prefix of the
** commits. The memtable is small: flushes and compactions run (in the
** writer's thread) before the cut. */
static void powerCut(int iSync) {
  int iRound;
  for (iRound = 0; iRound < 12; iRound++) {
    FaultFix f;
    wcs_db *db = NULL;
    int n = 200 + iRound * 97, i;
    char k[32];
    faultOpen(&f);
    f.o.iSync = iSync;
    f.o.bNoBackground = 1; /* nothing runs while the power is cut */
    OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
    for (i = 0; i < n; i++) {
      char v[64];
      snprintf(k, sizeof k, "key%06d", i);
      memset(v, 'a' + i % 26, sizeof v);
      OK(wcs_db_put(db, k, strlen(k), v, sizeof v));
    }
    /* crash: no close; what was not synced is gone */
    ck_assert_int_eq(wcs_env_fault_crash(f.pEnv), WCS_OK);
    closeAsCrashed(f.pMem, "/s", db); /* frees memory only */
    ck_assert_int_eq(wcs_env_fault_crash(f.pEnv), WCS_OK);
    db = NULL;
    OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
    if (iSync == WCS_SYNC_FULL) {
      checkAcked(db, n);
    } else {
      /* a prefix: once a key is missing, every later one is too */
      int bGap = 0;
      for (i = 0; i < n; i++) {
        void *p = NULL;
        size_t nV;
        snprintf(k, sizeof k, "key%06d", i);
        OK(wcs_db_get(db, NULL, k, strlen(k), &p, &nV));
        if (p == NULL)
          bGap = 1;
        else
          ck_assert_msg(!bGap, "%s present after a lost commit", k);
        wcs_free(p);
      }
    }
    OK(wcs_db_close(db));
    faultClose(&f);
  }
}

START_TEST(test_db_power_cut_sync_full_keeps_acknowledged) {
  powerCut(WCS_SYNC_FULL);
}
END_TEST

START_TEST(test_db_power_cut_sync_off_keeps_a_prefix) {
  powerCut(WCS_SYNC_OFF);
}
END_TEST

START_TEST(test_db_power_cut_sync_normal_keeps_a_prefix) {
  powerCut(WCS_SYNC_NORMAL);
}
END_TEST

/* ---- live logs: the manifest tracks the logs that hold commits not yet
** in sorted files (doc/format.md, VE_LOG_LIVE and VE_LOG_SEAL) */

/* The log files of a store directory, in ascending order. */
typedef struct LogNames {
  char az[16][64]; /* "<dir>/NNNNNN.log" */
  int n;
  const char *zDir;
} LogNames;

static int logName(void *p, const char *z) {
  LogNames *l = p;
  size_t n = strlen(z);
  if (n > 4 && strcmp(z + n - 4, ".log") == 0 && l->n < 16) {
    int i = l->n++;
    snprintf(l->az[i], sizeof l->az[i], "%s/%s", l->zDir, z);
    while (i > 0 && strcmp(l->az[i - 1], l->az[i]) > 0) {
      char t[64];
      memcpy(t, l->az[i], sizeof t);
      memcpy(l->az[i], l->az[i - 1], sizeof t);
      memcpy(l->az[i - 1], t, sizeof t);
      i--;
    }
  }
  return WCS_OK;
}

static void listLogs(wcs_env *pEnv, const char *zDir, LogNames *l) {
  memset(l, 0, sizeof *l);
  l->zDir = zDir;
  ck_assert_int_eq(pEnv->xList(pEnv, zDir, l, logName, NULL), WCS_OK);
}

/* A whole file of env pEnv (malloc'd), and writing one back. */
static uint8_t *envRead(wcs_env *pEnv, const char *z, size_t *pn) {
  wcs_file *f = NULL;
  uint64_t n = 0;
  uint8_t *a;
  ck_assert_int_eq(pEnv->xOpen(pEnv, z, WCS_OPEN_READ, &f, NULL), WCS_OK);
  ck_assert_int_eq(pEnv->xSize(f, &n, NULL), WCS_OK);
  a = malloc(n + 1);
  ck_assert_ptr_nonnull(a);
  ck_assert_int_eq(pEnv->xRead(f, 0, a, n, pn, NULL), WCS_OK);
  ck_assert_uint_eq(*pn, n);
  pEnv->xClose(f);
  return a;
}

static void envWrite(wcs_env *pEnv, const char *z, const uint8_t *a, size_t n) {
  wcs_file *f = NULL;
  ck_assert_int_eq(
      pEnv->xOpen(pEnv, z, WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &f, NULL),
      WCS_OK);
  if (n) ck_assert_int_eq(pEnv->xAppend(f, a, n, NULL), WCS_OK);
  pEnv->xClose(f);
}

static uint64_t envSize(wcs_env *pEnv, const char *z) {
  wcs_file *f = NULL;
  uint64_t n = 0;
  ck_assert_int_eq(pEnv->xOpen(pEnv, z, WCS_OPEN_READ, &f, NULL), WCS_OK);
  ck_assert_int_eq(pEnv->xSize(f, &n, NULL), WCS_OK);
  pEnv->xClose(f);
  return n;
}

/* Open the store at /s (read-only or not) and return the code; the
** message goes to *pzErr (free with wcs_free). On success, keys
** key000000 .. nKey-1 must all be there. */
static int openLogged(FaultFix *f, int bReadOnly, int nKey, char **pzErr) {
  wcs_db *db = NULL;
  wcs_options o = f->o;
  int rc;
  o.bReadOnly = bReadOnly;
  *pzErr = NULL;
  rc = wcs_db_open_env(&db, "/s", &o, f->pEnv, pzErr);
  if (rc == WCS_OK) {
    checkAcked(db, nKey);
    OK(wcs_db_close(db));
  }
  return rc;
}

/* Open the store at /s (read-only or not), which must be refused for
** log zLog: WCS_CORRUPT with a message naming the store, the log, zWhat,
** and what to do. Returns the message (free with wcs_free). */
static char *openRefused(FaultFix *f, int bReadOnly, const char *zLog,
                         const char *zWhat) {
  char *zErr = NULL;
  int rc = openLogged(f, bReadOnly, 0, &zErr);
  ck_assert_msg(rc == WCS_CORRUPT, "rc %d (%s)", rc, zErr ? zErr : "");
  ck_assert_ptr_nonnull(zErr);
  ck_assert_msg(strstr(zErr, "store /s") != NULL, "%s", zErr);
  ck_assert_msg(strstr(zErr, zLog) != NULL, "%s", zErr);
  ck_assert_msg(strstr(zErr, zWhat) != NULL, "%s", zErr);
  ck_assert_msg(strstr(zErr, "Restore the file") != NULL, "%s", zErr);
  return zErr;
}

/* Deleting the log of a store's last commits is reported at open,
** naming the file, by a writable and a read-only open alike; the refused
** opens change nothing. */
START_TEST(test_db_missing_live_log_is_refused_naming_it) {
  FaultFix f;
  wcs_db *db = NULL;
  LogNames l, l2;
  char *zErr = NULL;
  size_t nMan = 0, nMan2 = 0;
  uint8_t *aMan, *aMan2;
  int i;
  char k[32], v[64];
  faultOpen(&f);
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
  for (i = 0; i < 50; i++) {
    snprintf(k, sizeof k, "key%06d", i);
    memset(v, 'a' + i % 26, sizeof v);
    OK(wcs_db_put(db, k, strlen(k), v, sizeof v));
  }
  OK(wcs_db_close(db));
  listLogs(f.pEnv, "/s", &l);
  ck_assert_int_eq(l.n, 1);
  ck_assert_int_eq(openLogged(&f, 1, 50, &zErr), WCS_OK);
  ck_assert_int_eq(f.pEnv->xDelete(f.pEnv, l.az[0], NULL), WCS_OK);
  aMan = envRead(f.pEnv, "/s/CURRENT", &nMan);

  wcs_free(openRefused(&f, 1, l.az[0], "missing"));
  wcs_free(openRefused(&f, 0, l.az[0], "missing"));
  /* nothing changed: same manifest, still no log */
  aMan2 = envRead(f.pEnv, "/s/CURRENT", &nMan2);
  ck_assert_uint_eq(nMan, nMan2);
  ck_assert(memcmp(aMan, aMan2, nMan) == 0);
  listLogs(f.pEnv, "/s", &l2);
  ck_assert_int_eq(l2.n, 0);
  free(aMan);
  free(aMan2);
  faultClose(&f);
}
END_TEST

/*
** A sealed log that has lost its end is refused: cut at a record
** boundary (shorter than its seal), or with its last sector zeroed (as
** long as its seal, but its records stop short, which would pass for a
** torn tail), or deleted. A log is left sealed and unflushed by a flush
** that fails (every write after the switch's first fails), so the store
** holds two live logs: the sealed one and the new, empty one.
*/
START_TEST(test_db_sealed_log_cut_short_is_refused) {
  FaultFix f;
  wcs_db *db = NULL;
  LogNames l;
  char *zErr = NULL;
  uint8_t *aLog, *aCut;
  size_t nLog = 0, off, cut = 0;
  int i, rc = WCS_OK, nAcked;
  char k[32], v[64], zNum[32];
  faultOpen(&f);
  f.o.iSync = WCS_SYNC_NORMAL;
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
  for (i = 0; i < 5000; i++) {
    /* a commit appends once; the one that switches the memtable and
    ** flushes appends more: from its second append on, writes fail */
    f.fault.nWriteFail = f.fault.nWrites + 2;
    f.fault.rcFail = WCS_FULL;
    f.fault.bSticky = 1;
    snprintf(k, sizeof k, "key%06d", i);
    memset(v, 'a' + i % 26, sizeof v);
    rc = wcs_db_put(db, k, strlen(k), v, sizeof v);
    if (rc) break;
  }
  ck_assert_int_ne(rc, WCS_OK);
  nAcked = i;
  ck_assert_int_gt(nAcked, 100);
  f.fault.nWriteFail = 0;
  f.fault.bSticky = 0;
  wcs_db_close(db);
  listLogs(f.pEnv, "/s", &l);
  ck_assert_int_eq(l.n, 2);
  ck_assert_int_eq(openLogged(&f, 1, nAcked, &zErr), WCS_OK);

  /* cut at the record boundary nearest the middle */
  aLog = envRead(f.pEnv, l.az[0], &nLog);
  ck_assert_uint_gt(nLog, 1024);
  for (off = 0; off + WAL_HEADER <= nLog;) {
    off += WAL_HEADER + wcs_get32(aLog + off + WAL_OFF_LEN);
    if (cut == 0 && off >= nLog / 2) cut = off;
  }
  ck_assert_uint_eq(off, nLog); /* whole records */
  ck_assert(cut > 0 && cut < nLog);
  envWrite(f.pEnv, l.az[0], aLog, cut);
  zErr = openRefused(&f, 1, l.az[0], "shorter");
  snprintf(zNum, sizeof zNum, "%zu bytes", nLog);
  ck_assert_msg(strstr(zErr, zNum) != NULL, "%s", zErr); /* expected */
  snprintf(zNum, sizeof zNum, "found %zu", cut);
  ck_assert_msg(strstr(zErr, zNum) != NULL, "%s", zErr);
  wcs_free(zErr);
  wcs_free(openRefused(&f, 0, l.az[0], "shorter"));
  ck_assert_uint_eq(envSize(f.pEnv, l.az[0]), cut); /* left as it was */

  /* the last sector zeroed: the length is right, the records are not */
  aCut = malloc(nLog);
  memcpy(aCut, aLog, nLog);
  off = ((nLog - 1) / 512) * 512;
  memset(aCut + off, 0, nLog - off);
  envWrite(f.pEnv, l.az[0], aCut, nLog);
  wcs_free(openRefused(&f, 1, l.az[0], "does not read cleanly"));
  wcs_free(openRefused(&f, 0, l.az[0], "does not read cleanly"));
  ck_assert_uint_eq(envSize(f.pEnv, l.az[0]), nLog); /* not cut back */

  /* deleted */
  ck_assert_int_eq(f.pEnv->xDelete(f.pEnv, l.az[0], NULL), WCS_OK);
  wcs_free(openRefused(&f, 0, l.az[0], "missing"));

  /* restored: every acknowledged commit is back */
  envWrite(f.pEnv, l.az[0], aLog, nLog);
  ck_assert_int_eq(openLogged(&f, 0, nAcked, &zErr), WCS_OK);
  ck_assert_int_eq(openLogged(&f, 1, nAcked, &zErr), WCS_OK);
  free(aLog);
  free(aCut);
  faultClose(&f);
}
END_TEST

/* Commit keys key<i0> .. key<i1 - 1>, one per commit. */
static void putKeys(wcs_db *db, int i0, int i1) {
  int i;
  char k[32], v[64];
  for (i = i0; i < i1; i++) {
    snprintf(k, sizeof k, "key%06d", i);
    memset(v, 'a' + i % 26, sizeof v);
    OK(wcs_db_put(db, k, strlen(k), v, sizeof v));
  }
}

/* The bytes of the manifest CURRENT names (malloc'd). */
static uint8_t *readManifest(wcs_env *pEnv, size_t *pn) {
  char zMan[64];
  size_t nCur = 0;
  uint8_t *aCur = envRead(pEnv, "/s/CURRENT", &nCur);
  ck_assert_uint_gt(nCur, 1);
  snprintf(zMan, sizeof zMan, "/s/%.*s", (int)nCur - 1, (char *)aCur);
  free(aCur);
  return envRead(pEnv, zMan, pn);
}

/* Open /s (read-only or not), which must be refused for log zLog as
** shorter than the nWant bytes recorded, found nFound; then check that
** the refusal changed nothing: the manifest is aMan, the log nFound
** bytes, and it is the only log. */
static void refusedShort(FaultFix *f, int bReadOnly, const char *zLog,
                         size_t nWant, size_t nFound, const uint8_t *aMan,
                         size_t nMan) {
  char zNum[64];
  char *zErr = openRefused(f, bReadOnly, zLog, "shorter than recorded");
  size_t n = 0;
  uint8_t *a;
  LogNames l;
  snprintf(zNum, sizeof zNum, "expected at least %zu bytes", nWant);
  ck_assert_msg(strstr(zErr, zNum) != NULL, "%s", zErr);
  snprintf(zNum, sizeof zNum, "found %zu", nFound);
  ck_assert_msg(strstr(zErr, zNum) != NULL, "%s", zErr);
  wcs_free(zErr);
  a = readManifest(f->pEnv, &n);
  ck_assert_uint_eq(n, nMan);
  ck_assert(memcmp(a, aMan, n) == 0);
  free(a);
  ck_assert_uint_eq(envSize(f->pEnv, zLog), nFound);
  listLogs(f->pEnv, "/s", &l);
  ck_assert_int_eq(l.n, 1);
  ck_assert_str_eq(l.az[0], zLog);
}

/*
** The log a store was writing when it was closed cleanly is still live
** (the next open goes on appending to it), but the close recorded its
** length (VE_LOG_CLOSED): cut at a record boundary, in the middle of a
** record or to nothing, it is refused, by a read-only and a writable
** open alike, and not taken for the torn tail of a crash (which dropped
** the cut commits without a word). With its last sector zeroed it is as
** long as recorded but does not read cleanly to that length, and is not
** cut back. Nothing on disk changes; restored, every commit is there. In
** SYNC NORMAL and FULL alike: the close syncs the log first.
*/
static void closedLogCut(int iSync) {
  FaultFix f;
  wcs_db *db = NULL;
  LogNames l;
  char *zErr = NULL;
  uint8_t *aLog, *aMan, *aCut;
  size_t nLog = 0, nMan = 0, n2 = 0, off, cut = 0;
  size_t aCutAt[3];
  int i;
  faultOpen(&f);
  f.o.iSync = iSync;
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
  putKeys(db, 0, 2);
  OK(wcs_db_close(db));
  db = NULL;
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
  putKeys(db, 2, 60);
  OK(wcs_db_close(db));
  listLogs(f.pEnv, "/s", &l);
  ck_assert_int_eq(l.n, 1); /* one short log, reused by the second open */
  aLog = envRead(f.pEnv, l.az[0], &nLog);
  for (off = 0; off + WAL_HEADER <= nLog;) {
    off += WAL_HEADER + wcs_get32(aLog + off + WAL_OFF_LEN);
    if (cut == 0 && off >= nLog / 2) cut = off;
  }
  ck_assert_uint_eq(off, nLog); /* whole records */
  ck_assert(cut > 0 && cut < nLog);
  /* a read-only open of the whole store writes nothing, and a writable
  ** one that commits nothing writes no manifest edit at its close */
  aMan = readManifest(f.pEnv, &nMan);
  ck_assert_int_eq(openLogged(&f, 1, 60, &zErr), WCS_OK);
  ck_assert_int_eq(openLogged(&f, 0, 60, &zErr), WCS_OK);
  free(readManifest(f.pEnv, &n2));
  ck_assert_uint_eq(n2, nMan);

  aCutAt[0] = cut;      /* at a record boundary */
  aCutAt[1] = nLog - 3; /* inside the last record */
  aCutAt[2] = 0;        /* to nothing */
  for (i = 0; i < 3; i++) {
    envWrite(f.pEnv, l.az[0], aLog, aCutAt[i]);
    refusedShort(&f, 1, l.az[0], nLog, aCutAt[i], aMan, nMan);
    refusedShort(&f, 0, l.az[0], nLog, aCutAt[i], aMan, nMan);
  }

  /* the last sector zeroed: as long as recorded, its records are not */
  aCut = malloc(nLog);
  memcpy(aCut, aLog, nLog);
  off = ((nLog - 1) / 512) * 512;
  memset(aCut + off, 0, nLog - off);
  envWrite(f.pEnv, l.az[0], aCut, nLog);
  zErr = openRefused(&f, 1, l.az[0], "does not read cleanly");
  ck_assert_msg(strstr(zErr, "closed cleanly") != NULL, "%s", zErr);
  wcs_free(zErr);
  wcs_free(openRefused(&f, 0, l.az[0], "does not read cleanly"));
  ck_assert_uint_eq(envSize(f.pEnv, l.az[0]), nLog); /* not cut back */

  /* restored: every commit is back, and the store goes on */
  envWrite(f.pEnv, l.az[0], aLog, nLog);
  ck_assert_int_eq(openLogged(&f, 1, 60, &zErr), WCS_OK);
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
  checkAcked(db, 60);
  putKeys(db, 60, 70);
  OK(wcs_db_close(db));
  ck_assert_int_eq(openLogged(&f, 0, 70, &zErr), WCS_OK);
  free(aLog);
  free(aCut);
  free(aMan);
  faultClose(&f);
}

START_TEST(test_db_closed_log_cut_short_is_refused_sync_full) {
  closedLogCut(WCS_SYNC_FULL);
}
END_TEST

START_TEST(test_db_closed_log_cut_short_is_refused_sync_normal) {
  closedLogCut(WCS_SYNC_NORMAL);
}
END_TEST

/*
** A store closed cleanly, reopened, appended to, then crashed: what the
** crash left after the length recorded at the close is a torn tail like
** any other, cut at the next open, with every acknowledged commit kept —
** a record cut short by a dying process (SYNC FULL), or a power cut that
** takes every commit since the reopen (SYNC NORMAL: none was synced, so
** the log is back at the recorded length exactly). A log then cut below
** that length is still refused.
*/
START_TEST(test_db_crash_after_reopen_of_closed_log_keeps_acknowledged) {
  int iSync;
  for (iSync = WCS_SYNC_NORMAL; iSync <= WCS_SYNC_FULL; iSync++) {
    FaultFix f;
    wcs_db *db = NULL;
    LogNames l;
    char *zErr = NULL;
    uint8_t *aLog, *aMan;
    size_t nClosed = 0, nLog = 0, nMan = 0;
    int nAcked;
    faultOpen(&f);
    f.o.iSync = iSync;
    OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
    putKeys(db, 0, 40);
    OK(wcs_db_close(db));
    listLogs(f.pEnv, "/s", &l);
    ck_assert_int_eq(l.n, 1);
    nClosed = (size_t)envSize(f.pEnv, l.az[0]);
    db = NULL;
    OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
    putKeys(db, 40, 80);
    if (iSync == WCS_SYNC_FULL) {
      /* the process dies in the middle of appending one more record */
      static const uint8_t aHalf[] = {0x11, 0x22, 0x33, 0x44, 0x55};
      wcs_file *fl = NULL;
      closeAsCrashed(f.pMem, "/s", db);
      ck_assert_int_eq(
          f.pMem->xOpen(f.pMem, l.az[0], WCS_OPEN_WRITE, &fl, NULL), WCS_OK);
      ck_assert_int_eq(f.pMem->xAppend(fl, aHalf, sizeof aHalf, NULL), WCS_OK);
      f.pMem->xClose(fl);
      nLog = (size_t)envSize(f.pEnv, l.az[0]);
      ck_assert_uint_gt(nLog, nClosed + sizeof aHalf);
      nAcked = 80;
    } else {
      /* a power cut: nothing since the reopen was synced */
      ck_assert_int_eq(wcs_env_fault_crash(f.pEnv), WCS_OK);
      closeAsCrashed(f.pMem, "/s", db);
      ck_assert_uint_eq(envSize(f.pEnv, l.az[0]), nClosed);
      nAcked = 40;
    }
    ck_assert_int_eq(openLogged(&f, 1, nAcked, &zErr), WCS_OK);
    ck_assert_int_eq(openLogged(&f, 0, nAcked, &zErr), WCS_OK);
    if (iSync == WCS_SYNC_FULL) {
      /* the torn tail was cut, to the last whole record */
      ck_assert_uint_eq(envSize(f.pEnv, l.az[0]), nLog - 5);
    }
    /* and below the recorded length, it is refused */
    aLog = envRead(f.pEnv, l.az[0], &nLog);
    aMan = readManifest(f.pEnv, &nMan);
    envWrite(f.pEnv, l.az[0], aLog, nClosed - 1);
    refusedShort(&f, 0, l.az[0], nLog, nClosed - 1, aMan, nMan);
    envWrite(f.pEnv, l.az[0], aLog, nLog);
    ck_assert_int_eq(openLogged(&f, 0, nAcked, &zErr), WCS_OK);
    free(aLog);
    free(aMan);
    faultClose(&f);
  }
}
END_TEST

/* Append a one-record log holding a batch at seq that puts k=v. */
static void oldLog(wcs_env *pEnv, const char *zPath, uint64_t seq,
                   const char *k, const char *v) {
  uint8_t a[64];
  size_t n = WAL_BATCH_HEADER;
  wcs_buf b = {0};
  wcs_put64(a + WAL_BATCH_OFF_SEQ, seq);
  wcs_put32(a + WAL_BATCH_OFF_COUNT, 1);
  a[n++] = WAL_OP_PUT;
  a[n++] = (uint8_t)strlen(k);
  memcpy(a + n, k, strlen(k));
  n += strlen(k);
  a[n++] = (uint8_t)strlen(v);
  memcpy(a + n, v, strlen(v));
  n += strlen(v);
  ck_assert_int_eq(wal_frame(&b, a, n), WCS_OK);
  envWrite(pEnv, zPath, b.a, b.n);
  wcs_buf_free(&b);
}

/* A store written before logs were tracked (format 1: no VE_LOG_LIVE or
** VE_LOG_SEAL) opens as before, read-only and writable, and replays its
** logs; the writable open moves it to the current format, after which
** the loss of its log is detected. */
START_TEST(test_db_store_of_format_1_opens_and_starts_tracking) {
  FaultFix f;
  wcs_db *db = NULL;
  wcs_buf b = {0};
  LogNames l;
  char *zErr = NULL;
  uint8_t *aMan;
  size_t nMan = 0;
  static const uint8_t aEdit[] = {VE_FORMAT,    1, VE_LOG,      3,
                                  VE_NEXT_FILE, 5, VE_LAST_SEQ, 0};
  faultOpen(&f);
  ck_assert_int_eq(f.pEnv->xMkdir(f.pEnv, "/s", NULL), WCS_OK);
  ck_assert_int_eq(wal_frame(&b, aEdit, sizeof aEdit), WCS_OK);
  envWrite(f.pEnv, "/s/MANIFEST-000002", b.a, b.n);
  envWrite(f.pEnv, "/s/CURRENT", (const uint8_t *)"MANIFEST-000002\n", 16);
  oldLog(f.pEnv, "/s/000003.log", 1, "a", "1");
  oldLog(f.pEnv, "/s/000004.log", 2, "b", "2");

  f.o.bReadOnly = 1;
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, &zErr));
  ck_assert_str_eq(tu_get_str(db, NULL, "a"), "1");
  ck_assert_str_eq(tu_get_str(db, NULL, "b"), "2");
  OK(wcs_db_close(db));
  db = NULL;
  /* no check is possible without tracking: a lost log goes unnoticed */
  f.o.bReadOnly = 0;
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, &zErr));
  ck_assert_str_eq(tu_get_str(db, NULL, "a"), "1");
  ck_assert_str_eq(tu_get_str(db, NULL, "b"), "2");
  putS(db, "c", "3");
  OK(wcs_db_close(db));
  db = NULL;

  /* the manifest now declares the current format and tracks the new log */
  {
    char zMan[64];
    size_t nCur = 0;
    uint8_t *aCur = envRead(f.pEnv, "/s/CURRENT", &nCur);
    snprintf(zMan, sizeof zMan, "/s/%.*s", (int)nCur - 1, (char *)aCur);
    free(aCur);
    aMan = envRead(f.pEnv, zMan, &nMan);
    ck_assert_uint_gt(nMan, WAL_HEADER + 2);
    ck_assert_int_eq(aMan[WAL_HEADER], VE_FORMAT);
    ck_assert_int_eq(aMan[WAL_HEADER + 1], VE_FORMAT_VERSION);
    free(aMan);
  }
  listLogs(f.pEnv, "/s", &l);
  ck_assert_int_eq(l.n, 1);
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, &zErr));
  ck_assert_str_eq(tu_get_str(db, NULL, "c"), "3");
  OK(wcs_db_close(db));
  ck_assert_int_eq(f.pEnv->xDelete(f.pEnv, l.az[0], NULL), WCS_OK);
  wcs_free(openRefused(&f, 1, l.az[0], "missing"));
  wcs_buf_free(&b);
  faultClose(&f);
}
END_TEST

/* Many memtable switches, flushes and compactions (background threads),
** closes and reopens: every open succeeds and finds every commit. Logs a
** crash can leave behind open too: an empty one no edit names (created,
** not yet recorded) and an obsolete one (recorded, not yet deleted). */
START_TEST(test_db_reopen_after_many_switches_flushes_and_compactions) {
  const char *zDir = tu_tmpdir("dblivelogs");
  char zPath[1100], zLog[1200];
  wcs_db *db = NULL;
  wcs_options o;
  int iRound, i, nKey = 0;
  char k[32], v[128];
  smallOptions(&o);
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  for (iRound = 0; iRound < 6; iRound++) {
    OK(wcs_db_open(&db, zPath, &o, NULL));
    for (i = 0; i < 1500; i++, nKey++) {
      tu_key_of(k, "key", nKey);
      tu_val_of(v, "v", nKey);
      putS(db, k, v);
    }
    if (iRound % 3 == 1) OK(wcs_db_flush(db));
    if (iRound % 3 == 2) {
      OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
      ck_assert_uint_gt(
          tu_db_stat(db, "compactions") + tu_db_stat(db, "trivial_moves"), 0);
    }
    ck_assert_uint_gt(tu_db_stat(db, "flushes"), 0);
    OK(wcs_db_close(db));
    db = NULL;
    if (iRound == 3) {
      snprintf(zLog, sizeof zLog, "%s/999999.log", zPath);
      ck_assert_int_eq(tu_write_file(zLog, "", 0), 0);
      snprintf(zLog, sizeof zLog, "%s/000001.log", zPath);
      ck_assert_int_eq(tu_write_file(zLog, "junk", 4), 0);
    }
    o.bReadOnly = 1;
    OK(wcs_db_open(&db, zPath, &o, NULL));
    for (i = 0; i < nKey; i += 13) {
      tu_key_of(k, "key", i);
      tu_val_of(v, "v", i);
      ck_assert_str_eq(tu_get_str(db, NULL, k), v);
    }
    OK(wcs_db_close(db));
    db = NULL;
    o.bReadOnly = 0;
  }
  OK(wcs_db_open(&db, zPath, &o, NULL));
  for (i = 0; i < nKey; i++) {
    tu_key_of(k, "key", i);
    tu_val_of(v, "v", i);
    ck_assert_str_eq(tu_get_str(db, NULL, k), v);
  }
  OK(wcs_db_close(db));
  snprintf(zLog, sizeof zLog, "%s/000001.log", zPath);
  ck_assert_int_ne(access(zLog, F_OK), 0); /* the obsolete one went */
  tu_rmrf(zDir);
}
END_TEST

/* Reads that fail (I/O error on a sorted file) return the error with the
** file's name, never a wrong answer. */
START_TEST(test_db_read_error_is_reported) {
  FaultFix f;
  wcs_db *db = NULL;
  int i, nErr = 0;
  char k[32];
  faultOpen(&f);
  f.o.nCache = 1; /* every read goes to the file */
  f.o.bFixedCache = 1;
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, NULL));
  for (i = 0; i < 2000; i++) {
    snprintf(k, sizeof k, "key%06d", i);
    putS(db, k, "value");
  }
  OK(wcs_db_flush(db));
  f.fault.nReadFail = f.fault.nReads + 1;
  f.fault.bSticky = 1;
  f.fault.rcFail = WCS_IOERR;
  for (i = 0; i < 2000; i += 100) {
    void *p = NULL;
    size_t n;
    int rc;
    snprintf(k, sizeof k, "key%06d", i);
    rc = wcs_db_get(db, NULL, k, strlen(k), &p, &n);
    if (rc) {
      nErr++;
      ck_assert_int_eq(rc, WCS_IOERR);
      ck_assert_ptr_nonnull(strstr(wcs_errmsg(db), ".sst"));
    } else {
      ck_assert_ptr_nonnull(p); /* found in the memtable or cache */
      wcs_free(p);
    }
  }
  ck_assert_int_gt(nErr, 0);
  f.fault.nReadFail = 0;
  f.fault.bSticky = 0;
  OK(wcs_db_close(db));
  faultClose(&f);
}
END_TEST

/* ---- randomized differential test against a sorted model */

typedef struct MEnt {
  char *k;
  size_t nK;
  char *v;
  size_t nV;
} MEnt;

typedef struct Model {
  MEnt *a;
  int n, nAlloc;
} Model;

static int mcmp(const char *a, size_t na, const char *b, size_t nb) {
  size_t n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, n) : 0;
  if (c) return c;
  return na < nb ? -1 : na > nb;
}

/* index of the first entry >= k */
static int mfind(const Model *m, const char *k, size_t nK) {
  int lo = 0, hi = m->n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (mcmp(m->a[mid].k, m->a[mid].nK, k, nK) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void *memdup(const void *p, size_t n) {
  void *q = malloc(n ? n : 1);
  if (n) memcpy(q, p, n);
  return q;
}

static void mput(Model *m, const char *k, size_t nK, const char *v, size_t nV) {
  int i = mfind(m, k, nK);
  if (i < m->n && mcmp(m->a[i].k, m->a[i].nK, k, nK) == 0) {
    free(m->a[i].v);
    m->a[i].v = memdup(v, nV);
    m->a[i].nV = nV;
    return;
  }
  if (m->n == m->nAlloc) {
    m->nAlloc = m->nAlloc ? m->nAlloc * 2 : 64;
    m->a = realloc(m->a, sizeof(MEnt) * (size_t)m->nAlloc);
  }
  memmove(&m->a[i + 1], &m->a[i], sizeof(MEnt) * (size_t)(m->n - i));
  m->a[i].k = memdup(k, nK);
  m->a[i].nK = nK;
  m->a[i].v = memdup(v, nV);
  m->a[i].nV = nV;
  m->n++;
}

static void mdelRange(Model *m, const char *s, size_t nS, const char *e,
                      size_t nE, int bOpen) {
  int i = mfind(m, s, nS), j = i, k;
  while (j < m->n && (bOpen || mcmp(m->a[j].k, m->a[j].nK, e, nE) < 0))
    j++;
  for (k = i; k < j; k++) {
    free(m->a[k].k);
    free(m->a[k].v);
  }
  memmove(&m->a[i], &m->a[j], sizeof(MEnt) * (size_t)(m->n - j));
  m->n -= j - i;
}

static void mdel(Model *m, const char *k, size_t nK) {
  int i = mfind(m, k, nK);
  if (i < m->n && mcmp(m->a[i].k, m->a[i].nK, k, nK) == 0) {
    free(m->a[i].k);
    free(m->a[i].v);
    memmove(&m->a[i], &m->a[i + 1], sizeof(MEnt) * (size_t)(m->n - i - 1));
    m->n--;
  }
}

static void mcopy(Model *dst, const Model *src) {
  int i;
  memset(dst, 0, sizeof *dst);
  for (i = 0; i < src->n; i++) {
    mput(dst, src->a[i].k, src->a[i].nK, src->a[i].v, src->a[i].nV);
  }
}

static void mfree(Model *m) {
  int i;
  for (i = 0; i < m->n; i++) {
    free(m->a[i].k);
    free(m->a[i].v);
  }
  free(m->a);
  memset(m, 0, sizeof *m);
}

/* A random key from a small space, sometimes with an extra suffix. */
static size_t rkey(char *z) {
  size_t n = (size_t)sprintf(z, "k%03u", (unsigned)tu_rand_range(600));
  if (tu_rand_range(4) == 0) {
    n += (size_t)sprintf(z + n, "%c", (char)('a' + tu_rand_range(3)));
  }
  return n;
}

static size_t rval(char *z) {
  size_t n = (size_t)tu_rand_range(120), i;
  for (i = 0; i < n; i++)
    z[i] = (char)('A' + tu_rand_range(26));
  return n;
}

/* Compare a whole scan (with random bounds) of db against model m. */
static void checkScan(wcs_db *db, const wcs_snapshot *s, const Model *m) {
  wcs_iter_options io;
  wcs_iter *it = NULL;
  char aLo[16], aHi[16];
  size_t nLo = 0, nHi = 0;
  int iLo = 0, iHi = m->n, i, bRev = (int)tu_rand_range(2), rc;
  memset(&io, 0, sizeof io);
  io.pSnap = s;
  if (tu_rand_range(2)) {
    nLo = rkey(aLo);
    io.pLower = aLo;
    io.nLower = nLo;
    iLo = mfind(m, aLo, nLo);
  }
  if (tu_rand_range(2)) {
    nHi = rkey(aHi);
    io.pUpper = aHi;
    io.nUpper = nHi;
    iHi = mfind(m, aHi, nHi);
  }
  if (iHi < iLo) iHi = iLo;
  OK(wcs_iter_new(db, &io, &it));
  i = bRev ? iHi - 1 : iLo;
  for (rc = bRev ? wcs_iter_last(it) : wcs_iter_first(it); wcs_iter_valid(it);
       rc = bRev ? wcs_iter_prev(it) : wcs_iter_next(it)) {
    size_t nK, nV;
    const char *k = wcs_iter_key(it, &nK);
    const char *v = wcs_iter_value(it, &nV);
    ck_assert_msg(i >= iLo && i < iHi, "iterator returned extra key %.*s",
                  (int)nK, k);
    ck_assert_msg(mcmp(k, nK, m->a[i].k, m->a[i].nK) == 0,
                  "iterator key %.*s, model %.*s", (int)nK, k, (int)m->a[i].nK,
                  m->a[i].k);
    ck_assert(nV == m->a[i].nV && (nV == 0 || memcmp(v, m->a[i].v, nV) == 0));
    i += bRev ? -1 : 1;
  }
  ck_assert_int_eq(rc, WCS_OK);
  ck_assert_msg(bRev ? i == iLo - 1 : i == iHi, "iterator stopped early");
  /* random seeks with a step each way */
  for (i = 0; i < 5; i++) {
    char aK[16];
    size_t nK = rkey(aK), nGot;
    int j = mfind(m, aK, nK);
    const char *k;
    if (nLo && mcmp(aK, nK, aLo, nLo) < 0) continue;
    if (nHi && mcmp(aK, nK, aHi, nHi) >= 0) continue;
    OK(wcs_iter_seek(it, aK, nK));
    if (j >= iHi) {
      ck_assert(!wcs_iter_valid(it));
    } else {
      k = wcs_iter_key(it, &nGot);
      ck_assert(mcmp(k, nGot, m->a[j].k, m->a[j].nK) == 0);
      OK(wcs_iter_prev(it));
      if (j - 1 >= iLo) {
        k = wcs_iter_key(it, &nGot);
        ck_assert(wcs_iter_valid(it));
        ck_assert(mcmp(k, nGot, m->a[j - 1].k, m->a[j - 1].nK) == 0);
      } else {
        ck_assert(!wcs_iter_valid(it));
      }
    }
    OK(wcs_iter_seek_for_prev(it, aK, nK));
    j = (j < m->n && mcmp(m->a[j].k, m->a[j].nK, aK, nK) == 0) ? j : j - 1;
    if (j < iLo) {
      ck_assert(!wcs_iter_valid(it));
    } else {
      k = wcs_iter_key(it, &nGot);
      ck_assert(wcs_iter_valid(it));
      ck_assert(mcmp(k, nGot, m->a[j].k, m->a[j].nK) == 0);
      OK(wcs_iter_next(it));
      if (j + 1 < iHi) {
        k = wcs_iter_key(it, &nGot);
        ck_assert(mcmp(k, nGot, m->a[j + 1].k, m->a[j + 1].nK) == 0);
      } else {
        ck_assert(!wcs_iter_valid(it));
      }
    }
  }
  wcs_iter_free(it);
}

static void checkGets(wcs_db *db, const wcs_snapshot *s, const Model *m) {
  int i;
  for (i = 0; i < 30; i++) {
    char aK[16];
    size_t nK = rkey(aK), nV = 0;
    void *p = NULL;
    int j = mfind(m, aK, nK);
    int bIn = j < m->n && mcmp(m->a[j].k, m->a[j].nK, aK, nK) == 0;
    OK(wcs_db_get(db, s, aK, nK, &p, &nV));
    if (bIn) {
      ck_assert_msg(p != NULL, "get %.*s: missing", (int)nK, aK);
      ck_assert(nV == m->a[j].nV && (nV == 0 || memcmp(p, m->a[j].v, nV) == 0));
    } else {
      ck_assert_msg(p == NULL, "get %.*s: should be absent", (int)nK, aK);
    }
    wcs_free(p);
  }
}

#define MAXSNAP 3

static void differential(int bMem, int bNoBackground, int nStep) {
  const char *zTmp = bMem ? NULL : tu_tmpdir("dbdiff");
  char zPath[1100];
  wcs_db *db = NULL;
  wcs_options o;
  Model m;
  Model aSnapModel[MAXSNAP];
  wcs_snapshot *apSnap[MAXSNAP];
  wcs_batch *b = NULL;
  int step, i;
  tu_seed(0);
  if (getenv("WCS_DIFF_STEPS")) {
    /* long runs: WCS_DIFF_STEPS=200000 */
    nStep = atoi(getenv("WCS_DIFF_STEPS"));
  }
  memset(&m, 0, sizeof m);
  memset(apSnap, 0, sizeof apSnap);
  memset(aSnapModel, 0, sizeof aSnapModel);
  smallOptions(&o);
  o.bInMemory = bMem;
  o.bNoBackground = bNoBackground;
  if (zTmp) snprintf(zPath, sizeof zPath, "%s/store", zTmp);
  OK(wcs_db_open(&db, zTmp ? zPath : NULL, &o, NULL));
  OK(wcs_batch_new(&b));
  for (step = 0; step < nStep; step++) {
    int r = (int)tu_rand_range(1000);
    char aK[16], aE[16], aV[128];
    size_t nK, nE, nV;
    if (r < 550) {
      nK = rkey(aK);
      nV = rval(aV);
      OK(wcs_db_put(db, aK, nK, aV, nV));
      mput(&m, aK, nK, aV, nV);
    } else if (r < 700) {
      nK = rkey(aK);
      OK(wcs_db_delete(db, aK, nK));
      mdel(&m, aK, nK);
    } else if (r < 800) {
      /* a batch mixing everything */
      int nOp = 1 + (int)tu_rand_range(20), q;
      wcs_batch_clear(b);
      for (q = 0; q < nOp; q++) {
        int t = (int)tu_rand_range(10);
        nK = rkey(aK);
        if (t < 6) {
          nV = rval(aV);
          OK(wcs_batch_put(b, aK, nK, aV, nV));
          mput(&m, aK, nK, aV, nV);
        } else if (t < 9) {
          OK(wcs_batch_delete(b, aK, nK));
          mdel(&m, aK, nK);
        } else {
          nE = rkey(aE);
          OK(wcs_batch_delete_range(b, aK, nK, aE, nE));
          if (mcmp(aK, nK, aE, nE) < 0) mdelRange(&m, aK, nK, aE, nE, 0);
        }
      }
      OK(wcs_db_write(db, b));
    } else if (r < 815) {
      /* a range delete, sometimes unbounded */
      nK = rkey(aK);
      wcs_batch_clear(b);
      if (tu_rand_range(8) == 0) {
        aK[1] = '5';
        OK(wcs_batch_delete_range(b, aK, nK, NULL, 0));
        mdelRange(&m, aK, nK, NULL, 0, 1);
      } else {
        memcpy(aE, aK, nK);
        nE = nK;
        aE[2] = (char)(aE[2] + 1 + (char)tu_rand_range(2));
        OK(wcs_batch_delete_range(b, aK, nK, aE, nE));
        if (mcmp(aK, nK, aE, nE) < 0) mdelRange(&m, aK, nK, aE, nE, 0);
      }
      OK(wcs_db_write(db, b));
    } else if (r < 835) {
      /* a row delete: [k, k\0) holds k alone; rows repeat and interleave */
      nK = rkey(aK);
      memcpy(aE, aK, nK);
      aE[nK] = 0;
      wcs_batch_clear(b);
      OK(wcs_batch_delete_range(b, aK, nK, aE, nK + 1));
      if (tu_rand_range(2)) {
        nV = rval(aV);
        OK(wcs_batch_put(b, aK, nK, aV, nV)); /* INSERT OR REPLACE */
        OK(wcs_db_write(db, b));
        mput(&m, aK, nK, aV, nV);
      } else {
        OK(wcs_db_write(db, b));
        mdel(&m, aK, nK);
      }
    } else if (r < 850) {
      checkGets(db, NULL, &m);
      for (i = 0; i < MAXSNAP; i++) {
        if (apSnap[i]) checkGets(db, apSnap[i], &aSnapModel[i]);
      }
    } else if (r < 880) {
      checkScan(db, NULL, &m);
      i = (int)tu_rand_range(MAXSNAP);
      if (apSnap[i]) checkScan(db, apSnap[i], &aSnapModel[i]);
    } else if (r < 900) {
      i = (int)tu_rand_range(MAXSNAP);
      if (apSnap[i]) {
        wcs_snapshot_free(db, apSnap[i]);
        mfree(&aSnapModel[i]);
        apSnap[i] = NULL;
      } else {
        OK(wcs_snapshot_new(db, &apSnap[i]));
        mcopy(&aSnapModel[i], &m);
      }
    } else if (r < 920) {
      OK(wcs_db_flush(db));
    } else if (r < 930) {
      if (tu_rand_range(2)) {
        OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
      } else {
        nK = rkey(aK);
        nE = rkey(aE);
        OK(wcs_db_compact_range(db, aK, nK, aE, nE));
      }
    } else if (r < 940 && !bMem) {
      /* reopen: snapshots do not survive */
      for (i = 0; i < MAXSNAP; i++) {
        if (apSnap[i]) wcs_snapshot_free(db, apSnap[i]);
        apSnap[i] = NULL;
        mfree(&aSnapModel[i]);
      }
      OK(wcs_db_close(db));
      db = NULL;
      OK(wcs_db_open(&db, zPath, &o, NULL));
    }
  }
  checkScan(db, NULL, &m);
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  checkScan(db, NULL, &m);
  checkGets(db, NULL, &m);
  for (i = 0; i < MAXSNAP; i++) {
    if (apSnap[i]) {
      checkScan(db, apSnap[i], &aSnapModel[i]);
      wcs_snapshot_free(db, apSnap[i]);
    }
    mfree(&aSnapModel[i]);
  }
  wcs_batch_free(b);
  OK(wcs_db_close(db));
  mfree(&m);
  if (zTmp) tu_rmrf(zTmp);
}

START_TEST(test_db_differential_memory_background) {
  differential(1, 0, 20000);
}
END_TEST

START_TEST(test_db_differential_memory_inline) {
  differential(1, 1, 20000);
}
END_TEST

START_TEST(test_db_differential_disk_with_reopens) {
  differential(0, 0, 5000);
}
END_TEST

START_TEST(test_db_differential_disk_inline_with_reopens) {
  differential(0, 1, 5000);
}
END_TEST

/* ---- wcs_iter_refresh */

static const char *iterAt(wcs_iter *it, const char *k) {
  static char aBuf[256];
  size_t n = 0;
  const void *p;
  ck_assert_int_eq(wcs_iter_seek(it, k, strlen(k)), WCS_OK);
  if (!wcs_iter_valid(it)) return NULL;
  p = wcs_iter_key(it, &n);
  ck_assert_uint_lt(n, sizeof aBuf);
  memcpy(aBuf, p, n);
  aBuf[n] = 0;
  return aBuf;
}

/* Keys an iterator shows from its first. */
static int countAll(wcs_iter *it) {
  int n = 0;
  ck_assert_int_eq(wcs_iter_first(it), WCS_OK);
  while (wcs_iter_valid(it)) {
    n++;
    ck_assert_int_eq(wcs_iter_next(it), WCS_OK);
  }
  return n;
}

/* A memtable with no key within an iterator's bounds is left out of its
** stream (a scan of files of its own then steps inside their blocks), but
** a write into the bounds is seen after a refresh, and a retarget to
** bounds the memtable reaches reads it. */
START_TEST(test_db_memtable_outside_the_bounds_is_left_out_until_it_reaches_them) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_iter *it = NULL;
  wcs_iter_options io;
  char k[32];
  int i;
  smallOptions(&o);
  o.bInMemory = 1;
  o.bNoBackground = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  for (i = 0; i < 500; i++) {
    snprintf(k, sizeof k, "b%04d", i);
    putS(db, k, "file");
  }
  OK(wcs_db_flush(db));
  putS(db, "a1", "memtable");
  putS(db, "c1", "memtable");
  memset(&io, 0, sizeof io);
  io.pLower = "b";
  io.nLower = 1;
  io.pUpper = "c";
  io.nUpper = 1;
  OK(wcs_iter_new(db, &io, &it));
  ck_assert_int_eq(countAll(it), 500);
  /* a write into the bounds, in the memtable that was left out */
  putS(db, "b0100x", "memtable");
  OK(wcs_iter_refresh(it));
  ck_assert_str_eq(iterAt(it, "b0100"), "b0100");
  OK(wcs_iter_next(it));
  ck_assert_int_eq(wcs_iter_valid(it), 1);
  ck_assert_str_eq(iterAt(it, "b0100x"), "b0100x");
  ck_assert_int_eq(countAll(it), 501);
  /* retargeted below: the memtable's "a1" */
  io.pLower = "a";
  io.nLower = 1;
  io.pUpper = "b";
  io.nUpper = 1;
  OK(wcs_iter_retarget(it, &io));
  OK(wcs_iter_first(it));
  ck_assert_int_eq(wcs_iter_valid(it), 1);
  ck_assert_str_eq(iterAt(it, "a"), "a1");
  /* and back, with another write in between: seen without a refresh,
  ** since a retarget reads at the latest state */
  putS(db, "b0200x", "memtable");
  io.pLower = "b";
  io.nLower = 1;
  io.pUpper = "c";
  io.nUpper = 1;
  OK(wcs_iter_retarget(it, &io));
  ck_assert_str_eq(iterAt(it, "b0200+"), "b0200x");
  wcs_iter_free(it);
  OK(wcs_db_close(db));
}
END_TEST

START_TEST(test_db_iter_refresh_sees_new_writes_files_and_tombstones) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_iter *it = NULL;
  wcs_iter_options io;
  wcs_snapshot *s = NULL;
  wcs_batch *b = NULL;
  smallOptions(&o);
  o.bInMemory = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  putS(db, "k1", "1");
  memset(&io, 0, sizeof io);
  io.pLower = "k";
  io.nLower = 1;
  io.pUpper = "l";
  io.nUpper = 1;
  OK(wcs_iter_new(db, &io, &it));
  putS(db, "k2", "2");
  putS(db, "m", "out of bounds");
  /* not refreshed: still the old state */
  ck_assert_ptr_null(iterAt(it, "k2"));
  /* same memtable: the cheap path */
  OK(wcs_iter_refresh(it));
  ck_assert_int_eq(wcs_iter_valid(it), 0);
  ck_assert_str_eq(iterAt(it, "k2"), "k2");
  OK(wcs_iter_next(it));
  ck_assert_int_eq(wcs_iter_valid(it), 0); /* "m" stays out of bounds */
  /* a flush changes the files: re-pinned */
  OK(wcs_db_flush(db));
  putS(db, "k3", "3");
  OK(wcs_iter_refresh(it));
  ck_assert_str_eq(iterAt(it, "k0"), "k1");
  ck_assert_str_eq(iterAt(it, "k3"), "k3");
  /* a range delete in the same memtable is seen */
  OK(wcs_batch_new(&b));
  OK(wcs_batch_delete_range(b, "k2", 2, "k3", 2));
  OK(wcs_db_write(db, b));
  OK(wcs_iter_refresh(it));
  ck_assert_str_eq(iterAt(it, "k2"), "k3");
  wcs_iter_free(it);
  it = NULL;
  /* an iterator at a snapshot moves to the latest state */
  OK(wcs_snapshot_new(db, &s));
  putS(db, "k4", "4");
  io.pSnap = s;
  OK(wcs_iter_new(db, &io, &it));
  ck_assert_ptr_null(iterAt(it, "k4"));
  OK(wcs_iter_refresh(it));
  ck_assert_str_eq(iterAt(it, "k4"), "k4");
  ck_assert_str_eq(tu_get_str(db, s, "k1"), "1"); /* the snapshot is untouched */
  ck_assert_ptr_null(tu_get_str(db, s, "k4"));
  wcs_iter_free(it);
  it = NULL;
  wcs_snapshot_free(db, s);
  /* made at a snapshot older than a range tombstone already in the same
  ** memtable: the refresh takes the tombstone (a refresh that only moved
  ** the sequence number showed the deleted key again; so would a
  ** tombstone counted before its commit was published) */
  OK(wcs_snapshot_new(db, &s));
  wcs_batch_free(b);
  OK(wcs_batch_new(&b));
  OK(wcs_batch_delete_range(b, "k4", 2, "k5", 2));
  OK(wcs_db_write(db, b));
  io.pSnap = s;
  OK(wcs_iter_new(db, &io, &it));
  ck_assert_str_eq(iterAt(it, "k4"), "k4"); /* as of the snapshot */
  OK(wcs_iter_refresh(it));
  ck_assert_ptr_null(iterAt(it, "k4"));
  wcs_iter_free(it);
  it = NULL;
  /* the same with the tombstone in a file */
  putS(db, "k6", "6");
  OK(wcs_db_flush(db));
  wcs_snapshot_free(db, s);
  OK(wcs_snapshot_new(db, &s));
  wcs_batch_free(b);
  OK(wcs_batch_new(&b));
  OK(wcs_batch_delete_range(b, "k6", 2, "k7", 2));
  OK(wcs_db_write(db, b));
  OK(wcs_db_flush(db));
  OK(wcs_iter_new(db, &io, &it));
  ck_assert_str_eq(iterAt(it, "k6"), "k6");
  OK(wcs_iter_refresh(it));
  ck_assert_ptr_null(iterAt(it, "k6"));
  wcs_iter_free(it);
  wcs_snapshot_free(db, s);
  wcs_batch_free(b);
  ck_assert_int_eq(wcs_iter_refresh(NULL), WCS_MISUSE);
  OK(wcs_db_close(db));
}
END_TEST

/* ---- bounds within one bloom prefix skip files */

static int bloom3(const void *pKey, int nKey) {
  (void)pKey;
  return nKey >= 3 ? 3 : -1;
}

/* An in-memory store whose bloom prefix is a key's first 3 bytes, with
** rows r00, r02, ..., r98 (keys r00a..r00e and so on) in one file. */
static wcs_db *even_rows_in_a_file(void) {
  wcs_db *db = NULL;
  wcs_options o;
  char k[16];
  int i, j;
  smallOptions(&o);
  o.bInMemory = 1;
  o.bNoBackground = 1;
  o.xBloomPrefix = bloom3;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  for (i = 0; i < 100; i += 2) {
    for (j = 0; j < 5; j++) {
      snprintf(k, sizeof k, "r%02d%c", i, 'a' + j);
      putS(db, k, "value");
    }
  }
  OK(wcs_db_flush(db));
  return db;
}

/* Key i of the warm-block tests, and its value. */
static void warmKey(char *k, size_t n, int i) {
  snprintf(k, n, "warm%05d", i);
}

/* Read keys [iFrom, iTo) and check their values; the data block lookups
** that missed the cache. */
static uint64_t warmReads(wcs_db *db, int iFrom, int iTo) {
  uint64_t nMiss = tu_db_stat(db, "cache_misses");
  char k[32];
  int i;
  for (i = iFrom; i < iTo; i++) {
    void *p = NULL;
    size_t n = 0;
    warmKey(k, sizeof k, i);
    OK(wcs_db_get(db, NULL, k, strlen(k), &p, &n));
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(n, strlen(k));
    ck_assert_int_eq(memcmp(p, k, n), 0);
    wcs_free(p);
  }
  return tu_db_stat(db, "cache_misses") - nMiss;
}

START_TEST(test_db_blocks_written_are_read_warm) {
  /* The data blocks a flush and a compaction write go into the block
  ** cache as they are written, so the first reads of a new file find
  ** them there: no block lookup misses. */
  wcs_db *db = NULL;
  wcs_options o;
  char k[32];
  int i;
  smallOptions(&o);
  o.bInMemory = 1;
  o.bNoBackground = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  for (i = 0; i < 400; i++) {
    warmKey(k, sizeof k, i);
    putS(db, k, k);
  }
  OK(wcs_db_flush(db));
  ck_assert_uint_eq(warmReads(db, 0, 400), 0);
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  ck_assert_uint_eq(warmReads(db, 0, 400), 0);
  OK(wcs_db_close(db));
}
END_TEST

START_TEST(test_db_blocks_written_evict_no_block) {
  /* Writing a file larger than the cache's room puts in what fits
  ** without evicting: a block that reads keep using stays cached, and
  ** the new file's blocks that did not fit are read from the file. */
  wcs_db *db = NULL;
  wcs_options o;
  char k[32];
  int i;
  smallOptions(&o);
  o.bInMemory = 1;
  o.bNoBackground = 1;
  o.nMemtable = 1 << 20; /* one flush per file below */
  o.nL0Trigger = 100;
  o.nL0Stop = 200;
  o.nCache = 24 * 1024;
  o.bFixedCache = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  for (i = 0; i < 20; i++) {
    warmKey(k, sizeof k, i);
    putS(db, k, k);
  }
  OK(wcs_db_flush(db));
  ck_assert_uint_eq(warmReads(db, 0, 20), 0);
  ck_assert_uint_eq(warmReads(db, 0, 20), 0);
  for (i = 20; i < 4000; i++) {
    warmKey(k, sizeof k, i);
    putS(db, k, k);
  }
  OK(wcs_db_flush(db));
  ck_assert_uint_eq(warmReads(db, 0, 20), 0);
  ck_assert_uint_gt(warmReads(db, 20, 4000), 0);
  ck_assert_uint_le(tu_db_stat(db, "cache_bytes"), o.nCache);
  OK(wcs_db_close(db));
}
END_TEST

START_TEST(test_db_bounds_within_one_bloom_prefix_skip_files) {
  wcs_db *db = even_rows_in_a_file();
  wcs_iter *it = NULL;
  wcs_iter_options io;
  uint64_t nReads;
  memset(&io, 0, sizeof io);
  io.pLower = "r51";
  io.nLower = 3;
  io.pUpper = "r51\xff";
  io.nUpper = 4;
  nReads = tu_db_stat(db, "cache_hits") + tu_db_stat(db, "cache_misses");
  OK(wcs_iter_new(db, &io, &it));
  OK(wcs_iter_seek(it, "r51", 3));
  ck_assert_int_eq(wcs_iter_valid(it), 0);
  wcs_iter_free(it);
  /* the row is in no file's bloom filter: no block was read */
  ck_assert_uint_eq(tu_db_stat(db, "cache_hits") + tu_db_stat(db, "cache_misses"),
                    nReads);
  /* a present row is still found through the same path */
  io.pLower = "r52";
  io.pUpper = "r52c";
  ck_assert_str_eq(scan(db, &io, 0), "r52a,r52b");
  ck_assert_str_eq(scan(db, &io, 1), "r52b,r52a");
  OK(wcs_db_close(db));
}
END_TEST

START_TEST(test_db_iter_prefix_absent_asks_the_files_filters) {
  /* An iterator over a wider range answers whether its sources can hold
  ** a key with a given bloom prefix: files only, every one ruling it out. */
  wcs_db *db = even_rows_in_a_file();
  wcs_iter *it = NULL;
  char k[16];
  int i, nAbsent = 0;
  OK(wcs_iter_new(db, NULL, &it));
  for (i = 0; i < 100; i++) {
    snprintf(k, sizeof k, "r%02d", i);
    if (i % 2 == 0) {
      /* a row the files hold: never ruled out */
      ck_assert_int_eq(wcs_iter_prefix_absent(it, k, 3), 0);
    } else {
      nAbsent += wcs_iter_prefix_absent(it, k, 3);
    }
  }
  /* the missing rows: all but a filter's false positives (ten bits a key) */
  ck_assert_int_ge(nAbsent, 45);
  /* not a bloom prefix (bloom3 gives 3, not 2 or 4): no answer */
  ck_assert_int_eq(wcs_iter_prefix_absent(it, "r5", 2), 0);
  ck_assert_int_eq(wcs_iter_prefix_absent(it, "r51a", 4), 0);
  wcs_iter_free(it);
  /* a key of the prefix in the memtable: the iterator merges it, and the
  ** filters cannot speak for it */
  putS(db, "r51a", "value");
  OK(wcs_iter_new(db, NULL, &it));
  ck_assert_int_eq(wcs_iter_prefix_absent(it, "r51", 3), 0);
  ck_assert_int_eq(wcs_iter_prefix_absent(it, "r53", 3), 0);
  wcs_iter_free(it);
  /* flushed into a file of its own: that file's filter holds it */
  OK(wcs_db_flush(db));
  OK(wcs_iter_new(db, NULL, &it));
  ck_assert_int_eq(wcs_iter_prefix_absent(it, "r51", 3), 0);
  wcs_iter_free(it);
  OK(wcs_db_close(db));
}
END_TEST

/* ---- the compaction filter */

typedef struct FilterCtx {
  char cDrop;   /* drop keys starting with this byte */
  int nCalls;   /* calls seen */
  int bOrdered; /* keys came in ascending order within each run */
  char aLast[64];
  size_t nLast;
} FilterCtx;

static int dropPrefix(void *pCtx, const void *pKey, size_t nKey,
                      const void *pVal, size_t nVal, int *pbDrop) {
  FilterCtx *f = pCtx;
  (void)pVal;
  (void)nVal;
  f->nCalls++;
  if (f->nLast && nKey < sizeof f->aLast &&
      memcmp(pKey, f->aLast, nKey < f->nLast ? nKey : f->nLast) == 0 &&
      nKey == f->nLast) {
    f->bOrdered = 0; /* the same key twice in a row */
  }
  if (nKey < sizeof f->aLast) {
    memcpy(f->aLast, pKey, nKey);
    f->nLast = nKey;
  }
  *pbDrop = nKey > 0 && ((const char *)pKey)[0] == f->cDrop;
  return WCS_OK;
}

START_TEST(test_db_compaction_filter_drops_keys_and_spares_snapshots) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_snapshot *s = NULL;
  FilterCtx f;
  char k[16];
  int i;
  memset(&f, 0, sizeof f);
  f.cDrop = 'x';
  f.bOrdered = 1;
  smallOptions(&o);
  o.bInMemory = 1;
  o.bNoBackground = 1;
  o.xCompactionFilter = dropPrefix;
  o.pFilterCtx = &f;
  OK(wcs_db_open(&db, NULL, &o, NULL));

  /* a snapshot is live: the filter is not consulted, nothing goes */
  putS(db, "x9", "old");
  putS(db, "y9", "old");
  OK(wcs_snapshot_new(db, &s));
  OK(wcs_db_flush(db));
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  ck_assert_int_eq(f.nCalls, 0);
  ck_assert_str_eq(tu_get_str(db, NULL, "x9"), "old");
  ck_assert_str_eq(tu_get_str(db, s, "x9"), "old");

  /* newer data, still under the snapshot: kept for it */
  for (i = 0; i < 200; i++) {
    snprintf(k, sizeof k, "%c%03d", i % 2 ? 'x' : 'y', i);
    putS(db, k, "some value to fill the memtable a little");
  }
  putS(db, "x9", "new");
  OK(wcs_db_flush(db));
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  ck_assert_int_eq(f.nCalls, 0);
  ck_assert_str_eq(tu_get_str(db, s, "x9"), "old");
  ck_assert_str_eq(tu_get_str(db, NULL, "x9"), "new");
  ck_assert_str_eq(tu_get_str(db, NULL, "x001"),
                   "some value to fill the memtable a little");
  wcs_snapshot_free(db, s);

  /* no snapshot: every x key goes, y keys stay, "old" does not come back */
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  ck_assert_int_gt(f.nCalls, 0);
  ck_assert_int_eq(f.bOrdered, 1);
  ck_assert_ptr_null(tu_get_str(db, NULL, "x9"));
  ck_assert_ptr_null(tu_get_str(db, NULL, "x001"));
  ck_assert_str_eq(tu_get_str(db, NULL, "y9"), "old");
  ck_assert_str_eq(tu_get_str(db, NULL, "y000"),
                   "some value to fill the memtable a little");
  ck_assert_uint_eq(tu_db_stat(db, "filtered"), 101);
  {
    const char *z = scan(db, NULL, 0);
    ck_assert_ptr_null(strchr(z, 'x'));
  }

  /* a filtered put above an older version below leaves a delete */
  putS(db, "x5", "below");
  OK(wcs_db_flush(db));
  OK(wcs_snapshot_new(db, &s)); /* keeps "below" through this compaction */
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  wcs_snapshot_free(db, s);
  ck_assert_str_eq(tu_get_str(db, NULL, "x5"), "below");
  putS(db, "x5", "above");
  putS(db, "y5", "a");
  OK(wcs_db_flush(db));
  putS(db, "x5", "above2");
  putS(db, "y6", "a");
  OK(wcs_db_flush(db)); /* two level-0 files: a compaction into level 1 */
  ck_assert_ptr_null(tu_get_str(db, NULL, "x5"));
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  ck_assert_ptr_null(tu_get_str(db, NULL, "x5"));
  ck_assert_str_eq(tu_get_str(db, NULL, "y5"), "a");
  OK(wcs_db_close(db));
}
END_TEST

/* A compaction cuts its output into files of about nFileBytes, but never
** between two versions of one user key: with snapshots keeping five
** versions of every key, the files written (read back from the directory
** after the store is closed) hold every version, and no user key ends one
** file and starts the next. */
START_TEST(test_db_compaction_keeps_versions_of_a_key_in_one_file) {
  wcs_db *db = NULL;
  wcs_options o;
  const char *zDir = tu_tmpdir("db_versions");
  wcs_snapshot *aSnap[5];
  wcs_env *env = wcs_env_posix();
  DIR *d;
  struct dirent *e;
  struct {
    uint8_t *pLo, *pHi;
    size_t nLo, nHi;
  } aFile[256];
  int nFile = 0, i, v, k;
  uint64_t nEntries = 0;
  char zKey[32], zVal[160];
  smallOptions(&o);
  tu_seed(0);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  for (v = 0; v < 5; v++) {
    for (k = 0; k < 600; k++) {
      snprintf(zKey, sizeof zKey, "key%05d", k);
      snprintf(zVal, sizeof zVal, "%d.%d %016llx%016llx%016llx%016llx", k, v,
               (unsigned long long)tu_rand(), (unsigned long long)tu_rand(),
               (unsigned long long)tu_rand(), (unsigned long long)tu_rand());
      putS(db, zKey, zVal);
    }
    OK(wcs_snapshot_new(db, &aSnap[v]));
  }
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  for (v = 0; v < 5; v++)
    wcs_snapshot_free(db, aSnap[v]);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  db = NULL;

  d = opendir(zDir);
  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)) != NULL) {
    char zPath[4200];
    size_t n = strlen(e->d_name);
    sst_reader *r = NULL;
    sst_meta m;
    uint64_t nSize;
    wcs_file *f;
    if (n < 4 || strcmp(e->d_name + n - 4, ".sst") != 0) continue;
    snprintf(zPath, sizeof zPath, "%s/%s", zDir, e->d_name);
    ck_assert_int_eq(env->xOpen(env, zPath, WCS_OPEN_READ, &f, NULL), WCS_OK);
    ck_assert_int_eq(env->xSize(f, &nSize, NULL), WCS_OK);
    env->xClose(f);
    ck_assert_int_eq(sst_reader_open(env, zPath, 1, nSize, NULL, &r, NULL),
                     WCS_OK);
    ck_assert_int_eq(sst_reader_meta(r, &m), WCS_OK);
    ck_assert_int_lt(nFile, 256);
    aFile[nFile].nLo = m.nSmallest - WCS_IKEY_TRAILER;
    aFile[nFile].nHi = m.nLargest - WCS_IKEY_TRAILER;
    aFile[nFile].pLo = malloc(aFile[nFile].nLo + 1);
    aFile[nFile].pHi = malloc(aFile[nFile].nHi + 1);
    memcpy(aFile[nFile].pLo, m.pSmallest, aFile[nFile].nLo);
    memcpy(aFile[nFile].pHi, m.pLargest, aFile[nFile].nHi);
    nEntries += m.nEntries;
    nFile++;
    sst_meta_clear(&m);
    sst_reader_close(r);
  }
  closedir(d);
  ck_assert_int_gt(nFile, 5);
  ck_assert_uint_eq(nEntries, 5 * 600);
  for (i = 0; i < nFile; i++) {
    for (k = 0; k < nFile; k++) {
      if (k == i) continue;
      /* disjoint user-key ranges: one ends before the other starts */
      ck_assert_msg(wcs_ukey_cmp(aFile[i].pHi, aFile[i].nHi, aFile[k].pLo,
                                 aFile[k].nLo) < 0 ||
                        wcs_ukey_cmp(aFile[k].pHi, aFile[k].nHi, aFile[i].pLo,
                                     aFile[i].nLo) < 0,
                    "files %d and %d share a user key", i, k);
    }
  }
  for (i = 0; i < nFile; i++) {
    free(aFile[i].pLo);
    free(aFile[i].pHi);
  }
  env->xDestroy(env);
  tu_rmrf(zDir);
}
END_TEST

/* A long scan of a store just opened (nothing in its cache) has the blocks
** ahead decompressed by the store's worker, unless bNoPrefetch: the same
** rows either way, and closing the store ends the worker (under ASan,
** nothing of it is left). The scan pauses now and then so that the
** worker, not the scan catching up with it, decodes some blocks. */
START_TEST(test_db_long_scan_prefetches_unless_turned_off) {
  wcs_db *db = NULL;
  wcs_options o;
  char *zDir = strdup(tu_tmpdir("dbprefetch"));
  int i, bOff, n = 20000;
  wcs_options_init(&o);
  o.bNoBackground = 1;
  o.nBlockSize = 1024;
  OK(wcs_db_open(&db, zDir, &o, NULL));
  for (i = 0; i < n; i++)
    OK(tu_put_one(db, "k", i, "v"));
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  OK(wcs_db_close(db));
  for (bOff = 0; bOff < 2; bOff++) {
    wcs_iter *it = NULL;
    o.bNoPrefetch = bOff;
    OK(wcs_db_open(&db, zDir, &o, NULL));
    OK(wcs_iter_new(db, NULL, &it));
    OK(wcs_iter_first(it));
    for (i = 0; wcs_iter_valid(it);) {
      char zK[32], zV[128];
      size_t nK, nV;
      const char *k = wcs_iter_key(it, &nK);
      const char *v = wcs_iter_value(it, &nV);
      tu_key_of(zK, "k", i);
      tu_val_of(zV, "v", i);
      ck_assert(nK == strlen(zK) && memcmp(k, zK, nK) == 0);
      ck_assert(nV == strlen(zV) && memcmp(v, zV, nV) == 0);
      if (++i % 1000 == 0) usleep(10000);
      OK(wcs_iter_next(it));
    }
    ck_assert_int_eq(i, n);
    ck_assert_int_eq(wcs_iter_status(it), WCS_OK);
    wcs_iter_free(it);
    if (bOff) {
      ck_assert_uint_eq(tu_db_stat(db, "prefetched_blocks"), 0);
    } else if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
      ck_assert_uint_gt(tu_db_stat(db, "prefetched_blocks"), 0);
    }
    OK(wcs_db_close(db));
    db = NULL;
  }
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

/* ---- checkpoints ------------------------------------------------------ */

#define CKPT_D 8 /* batch i deletes batch i - CKPT_D's keys */

typedef struct CkptArg {
  wcs_db *db;
  atomic_int iNext; /* next batch */
  atomic_int bGo;   /* keep writing */
  int nFail;
} CkptArg;

/* Batch i: keys "c<i>#<j>" for j < 1 + i % 5, "last" = i, and batch
** i - CKPT_D's keys deleted. */
static int ckptBatch(wcs_db *db, int i) {
  wcs_batch *b = NULL;
  char k[32], v[32];
  int j, rc;
  if (wcs_batch_new(&b)) return WCS_NOMEM;
  for (j = 0; j < 1 + i % 5; j++) {
    snprintf(k, sizeof k, "c%06d#%d", i, j);
    snprintf(v, sizeof v, "v%d.%d", i, j);
    wcs_batch_put(b, k, strlen(k), v, strlen(v));
  }
  if (i > CKPT_D) {
    for (j = 0; j < 1 + (i - CKPT_D) % 5; j++) {
      snprintf(k, sizeof k, "c%06d#%d", i - CKPT_D, j);
      wcs_batch_delete(b, k, strlen(k));
    }
  }
  snprintf(v, sizeof v, "%d", i);
  wcs_batch_put(b, "last", 4, v, strlen(v));
  rc = wcs_db_write(db, b);
  wcs_batch_free(b);
  return rc;
}

static void *ckptWriter(void *p) {
  CkptArg *a = p;
  while (atomic_load(&a->bGo)) {
    if (ckptBatch(a->db, atomic_load(&a->iNext)) != WCS_OK) {
      a->nFail++;
      break;
    }
    atomic_fetch_add(&a->iNext, 1);
  }
  return NULL;
}

/* Open the store at zDir and check that it holds whole batches
** N - CKPT_D + 1 .. N and nothing else, N being its "last"; returns N. */
static int ckptVerify(const char *zDir) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_iter *it = NULL;
  char *zErr = NULL, aWant[32];
  void *pVal = NULL;
  size_t nVal = 0;
  int N, i, j, rc;
  smallOptions(&o);
  rc = wcs_db_open(&db, zDir, &o, &zErr);
  ck_assert_msg(rc == WCS_OK, "open %s: %s", zDir, zErr ? zErr : "?");
  OK(wcs_db_get(db, NULL, "last", 4, &pVal, &nVal));
  ck_assert_ptr_nonnull(pVal);
  ck_assert_uint_lt(nVal, sizeof aWant);
  memcpy(aWant, pVal, nVal);
  aWant[nVal] = 0;
  N = atoi(aWant);
  wcs_free(pVal);
  OK(wcs_iter_new(db, NULL, &it));
  wcs_iter_first(it);
  for (i = N - CKPT_D + 1 > 1 ? N - CKPT_D + 1 : 1; i <= N; i++) {
    for (j = 0; j < 1 + i % 5; j++) {
      size_t nK, nV;
      const char *k, *v;
      char aKey[32];
      snprintf(aKey, sizeof aKey, "c%06d#%d", i, j);
      snprintf(aWant, sizeof aWant, "v%d.%d", i, j);
      ck_assert_msg(wcs_iter_valid(it), "%s: %s missing (last %d)", zDir, aKey,
                    N);
      k = wcs_iter_key(it, &nK);
      v = wcs_iter_value(it, &nV);
      ck_assert_msg(nK == strlen(aKey) && memcmp(k, aKey, nK) == 0,
                    "%s: %.*s where %s should be (last %d)", zDir, (int)nK, k,
                    aKey, N);
      ck_assert(nV == strlen(aWant) && memcmp(v, aWant, nV) == 0);
      wcs_iter_next(it);
    }
  }
  ck_assert(wcs_iter_valid(it));
  {
    size_t nK;
    const char *k = wcs_iter_key(it, &nK);
    ck_assert_msg(nK == 4 && memcmp(k, "last", 4) == 0, "%s: extra key %.*s",
                  zDir, (int)nK, k);
  }
  wcs_iter_next(it);
  ck_assert(!wcs_iter_valid(it));
  ck_assert_int_eq(wcs_iter_status(it), WCS_OK);
  wcs_iter_free(it);
  OK(wcs_db_close(db));
  return N;
}

/* A checkpoint is the store as of the call, files and memtable, and a
** store of its own; one taken while a writer commits holds a prefix of its
** batches, each whole; a directory that exists is refused. */
START_TEST(test_db_checkpoint_is_a_consistent_copy) {
  const char *zTmp = tu_tmpdir("ckpt");
  char zStore[1100], zC1[1100], zC2[1100];
  wcs_db *db = NULL;
  wcs_options o;
  CkptArg a;
  pthread_t th;
  char *zErr = NULL;
  int i, N;
  snprintf(zStore, sizeof zStore, "%.1000s/s", zTmp);
  snprintf(zC1, sizeof zC1, "%.1000s/c1", zTmp);
  snprintf(zC2, sizeof zC2, "%.1000s/c2", zTmp);
  smallOptions(&o);
  OK(wcs_db_open(&db, zStore, &o, &zErr));
  /* enough batches for flushes and compactions; the last ones in the
  ** memtable */
  for (i = 1; i <= 400; i++)
    OK(ckptBatch(db, i));
  OK(wcs_db_checkpoint(db, zC1));
  ck_assert_int_eq(ckptVerify(zC1), 400);
  /* while a writer commits */
  memset(&a, 0, sizeof a);
  a.db = db;
  atomic_init(&a.iNext, 401);
  atomic_init(&a.bGo, 1);
  ck_assert_int_eq(pthread_create(&th, NULL, ckptWriter, &a), 0);
  while (atomic_load(&a.iNext) < 600)
    sleep(0);
  OK(wcs_db_checkpoint(db, zC2));
  atomic_store(&a.bGo, 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(a.nFail, 0);
  N = ckptVerify(zC2);
  ck_assert_int_ge(N, 599);
  ck_assert_int_lt(N, atomic_load(&a.iNext));
  /* refused: the directory exists; nothing of it changes */
  ck_assert_int_eq(wcs_db_checkpoint(db, zC1), WCS_CANTOPEN);
  assertMsgHas(db, "already exists");
  ck_assert_int_eq(ckptVerify(zC1), 400);
  /* the store itself goes on */
  OK(ckptBatch(db, atomic_load(&a.iNext)));
  OK(wcs_db_close(db));
  ck_assert_int_eq(ckptVerify(zStore), atomic_load(&a.iNext));
  /* a copy is a store: it takes writes of its own */
  smallOptions(&o);
  OK(wcs_db_open(&db, zC1, &o, &zErr));
  OK(ckptBatch(db, 401));
  OK(wcs_db_close(db));
  ck_assert_int_eq(ckptVerify(zC1), 401);
  tu_rmrf(zTmp);
}
END_TEST

/* A checkpoint that fails part of the way (a write of the copy, at each
** point in turn) reports the copy and the cause and leaves no store there;
** the store goes on. */
START_TEST(test_db_checkpoint_failure_leaves_no_copy) {
  FaultFix f;
  wcs_db *db = NULL;
  char *zErr = NULL;
  int i, nFail, nWrites = 0;
  faultOpen(&f);
  OK(wcs_db_open_env(&db, "/s", &f.o, f.pEnv, &zErr));
  for (i = 1; i <= 200; i++)
    OK(ckptBatch(db, i));
  OK(wcs_db_flush(db));
  /* the writes a whole checkpoint makes */
  nWrites = (int)f.fault.nWrites;
  OK(wcs_db_checkpoint(db, "/whole"));
  nWrites = (int)f.fault.nWrites - nWrites;
  ck_assert_int_gt(nWrites, 2);
  for (nFail = 1; nFail <= nWrites; nFail++) {
    char zDir[32];
    int bExists = 1;
    snprintf(zDir, sizeof zDir, "/c%d", nFail);
    f.fault.rcFail = WCS_IOERR;
    f.fault.nWriteFail = f.fault.nWrites + nFail;
    ck_assert_int_eq(wcs_db_checkpoint(db, zDir), WCS_IOERR);
    assertMsgHas(db, "checkpoint of store /s into ");
    f.fault.nWriteFail = 0;
    {
      char zCur[64];
      snprintf(zCur, sizeof zCur, "%s/CURRENT", zDir);
      ck_assert_int_eq(f.pEnv->xExists(f.pEnv, zCur, &bExists), WCS_OK);
      ck_assert_msg(!bExists, "failure at write %d left %s", nFail, zCur);
    }
  }
  OK(ckptBatch(db, 201));
  OK(wcs_db_close(db));
  faultClose(&f);
}
END_TEST

/* An in-memory store's checkpoint is a store on disk. */
START_TEST(test_db_checkpoint_of_memory_store_is_on_disk) {
  const char *zTmp = tu_tmpdir("ckptmem");
  char zCopy[1100];
  wcs_db *db = NULL;
  wcs_options o;
  char *zErr = NULL;
  int i;
  snprintf(zCopy, sizeof zCopy, "%.1000s/copy", zTmp);
  smallOptions(&o);
  o.bInMemory = 1;
  OK(wcs_db_open(&db, NULL, &o, &zErr));
  for (i = 1; i <= 120; i++)
    OK(ckptBatch(db, i));
  OK(wcs_db_checkpoint(db, zCopy));
  OK(wcs_db_close(db));
  ck_assert_int_eq(ckptVerify(zCopy), 120);
  tu_rmrf(zTmp);
}
END_TEST

/* Fragments of range tombstones (merge.c): frags_build from tombstones in
** key order and apart (no sort) or in any order with overlaps, and
** frags_find and frags_find_near (a hint kept across calls, keys forward,
** backward and at random) against a model: a key's fragment lists the
** sequence numbers of every tombstone that holds it, newest first, and a
** key no tombstone holds has none. Keys "k00" to "k99". */
START_TEST(test_db_tombstone_fragments_match_a_model) {
  char aKey[100][4];
  uint64_t x = 0x9E3779B97F4A7C15ull;
  int iRound, i;
  for (i = 0; i < 100; i++)
    snprintf(aKey[i], sizeof aKey[i], "k%02d", i);
  for (iRound = 0; iRound < 300; iRound++) {
    sst_rangedel aDel[40];
    int aS[40], aE[40], nDel = 1 + iRound % 40, bSorted = iRound % 2,
                        iHint = -1;
    int iPass;
    wcs_frags f;
    for (i = 0; i < nDel; i++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      if (bSorted) {
        /* apart or touching, in order: starts 2 apart at most */
        aS[i] =
            i == 0 ? (int)((x >> 40) % 3) : aE[i - 1] + (int)((x >> 40) % 2);
        aE[i] = aS[i] + 1 + (int)((x >> 50) % 2);
        if (aE[i] > 99) aE[i] = 99;
        if (aS[i] >= aE[i]) {
          nDel = i;
          break;
        }
      } else {
        aS[i] = (int)((x >> 33) % 99);
        aE[i] = aS[i] + 1 + (int)((x >> 45) % (uint64_t)(99 - aS[i]));
      }
      aDel[i].pStart = (const uint8_t *)aKey[aS[i]];
      aDel[i].nStart = 3;
      /* the last one of the unsorted rounds sometimes open */
      if (!bSorted && i == nDel - 1 && iRound % 5 == 0) {
        aDel[i].pEnd = NULL;
        aDel[i].nEnd = 0;
        aE[i] = 100;
      } else {
        aDel[i].pEnd = (const uint8_t *)aKey[aE[i]];
        aDel[i].nEnd = 3;
      }
      aDel[i].seq = 1 + (x >> 20) % 1000;
    }
    if (nDel == 0) continue;
    ck_assert_int_eq(frags_build(&f, aDel, nDel), WCS_OK);
    for (iPass = 0; iPass < 3; iPass++) {
      int j;
      for (j = 0; j < 100; j++) {
        int k = iPass == 0   ? j
                : iPass == 1 ? 99 - j
                             : (int)((x >> (j % 40)) % 100);
        const wcs_frag *a = frags_find(&f, (const uint8_t *)aKey[k], 3);
        const wcs_frag *b =
            frags_find_near(&f, (const uint8_t *)aKey[k], 3, &iHint);
        uint64_t aWant[40];
        int nWant = 0, q, r;
        for (q = 0; q < nDel; q++) {
          if (aS[q] <= k && k < aE[q]) aWant[nWant++] = aDel[q].seq;
        }
        /* newest first */
        for (q = 1; q < nWant; q++) {
          for (r = q; r > 0 && aWant[r - 1] < aWant[r]; r--) {
            uint64_t t = aWant[r];
            aWant[r] = aWant[r - 1];
            aWant[r - 1] = t;
          }
        }
        ck_assert_ptr_eq(a, b);
        if (nWant == 0) {
          ck_assert_ptr_null(a);
          continue;
        }
        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(a->nSeq, nWant);
        for (q = 0; q < nWant; q++)
          ck_assert_uint_eq(a->aSeq[q], aWant[q]);
      }
    }
    frags_free(&f);
  }
}
END_TEST

Suite *storage_db_suite(void) {
  Suite *s = suite_create("storage_db");
  TCase *tc = tcase_create("db");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_db_memory_store_put_get_delete);
  tcase_add_test(tc, test_db_checkpoint_is_a_consistent_copy);
  tcase_add_test(tc, test_db_checkpoint_of_memory_store_is_on_disk);
  tcase_add_test(tc, test_db_checkpoint_failure_leaves_no_copy);
  tcase_add_test(tc, test_db_iter_key_is_null_only_when_not_valid);
  tcase_add_test(tc, test_db_settled_scan_steps_over_versions_and_deletes);
  tcase_add_test(tc, test_db_settled_scan_bounds_tie_in_their_first_16_bytes);
  tcase_add_test(tc, test_db_batch_is_atomic_and_ordered);
  tcase_add_test(tc, test_db_range_delete_in_memtable);
  tcase_add_test(tc, test_db_range_delete_in_files_and_compaction);
  tcase_add_test(tc, test_db_snapshot_sees_frozen_state);
  tcase_add_test(tc, test_db_empty_key_flushes);
  tcase_add_test(tc, test_db_more_files_than_the_open_file_limit);
  tcase_add_test(tc, test_db_many_range_tombstones_flush_the_memtable);
  tcase_add_test(tc, test_db_tombstone_fragments_match_a_model);
  tcase_add_test(tc, test_db_many_tombstones_compact_down_to_their_data);
  tcase_add_test(tc, test_db_file_tombstones_at_each_snapshot);
  tcase_add_test(tc, test_db_iterator_bounds_prefix_and_seeks);
  tcase_add_test(tc, test_db_reopen_keeps_every_commit);
  tcase_add_test(tc, test_db_second_writer_process_gets_busy);
  tcase_add_test(tc, test_db_read_only_open_reads_and_refuses_writes);
  tcase_add_test(tc, test_db_read_only_open_on_a_read_only_file_system);
  tcase_add_test(tc, test_db_follower_opens_a_manifest_with_a_torn_tail);
  tcase_add_test(tc, test_db_follower_reads_beside_a_writer);
  tcase_add_test(tc, test_db_follower_sees_whole_commits);
  tcase_add_test(tc, test_db_argument_errors_have_their_own_message);
  tcase_add_test(tc, test_db_missing_store_without_create_is_cantopen);
  tcase_add_test(tc, test_db_permission_problem_names_the_path);
  tcase_add_test(tc, test_db_file_in_place_of_the_directory_is_cantopen);
  tcase_add_test(tc, test_db_approximate_samples_and_stats);
  tcase_add_test(tc, test_db_approximate_loads_no_index_and_stays_close);
  tcase_add_test(tc, test_db_compaction_cuts_files_by_index_and_filter_size);
  tcase_add_test(tc, test_db_seeks_round_more_files_than_a_level_keeps_open);
  tcase_add_test(tc, test_db_concurrent_writers_group_commit);
  tcase_add_test(tc, test_db_inline_flushes_from_two_threads_take_turns);
  tcase_add_test(tc, test_db_smallest_memtable_budget_still_writes);
  tcase_add_test(tc, test_db_disk_full_during_writes_keeps_acknowledged);
  tcase_add_test(tc, test_db_io_error_during_writes_keeps_acknowledged);
  tcase_add_test(tc, test_db_sync_failure_keeps_acknowledged);
  tcase_add_test(tc, test_db_power_cut_sync_full_keeps_acknowledged);
  tcase_add_test(tc, test_db_open_writes_nothing_for_a_short_log);
  tcase_add_test(
      tc, test_db_memtable_outside_the_bounds_is_left_out_until_it_reaches_them);
  tcase_add_test(tc, test_db_power_cut_sync_off_keeps_a_prefix);
  tcase_add_test(tc, test_db_power_cut_sync_normal_keeps_a_prefix);
  tcase_add_test(tc, test_db_missing_live_log_is_refused_naming_it);
  tcase_add_test(tc, test_db_sealed_log_cut_short_is_refused);
  tcase_add_test(tc, test_db_closed_log_cut_short_is_refused_sync_full);
  tcase_add_test(tc, test_db_closed_log_cut_short_is_refused_sync_normal);
  tcase_add_test(tc,
                 test_db_crash_after_reopen_of_closed_log_keeps_acknowledged);
  tcase_add_test(tc, test_db_store_of_format_1_opens_and_starts_tracking);
  tcase_add_test(tc,
                 test_db_reopen_after_many_switches_flushes_and_compactions);
  tcase_add_test(tc, test_db_read_error_is_reported);
  tcase_add_test(tc, test_db_iter_refresh_sees_new_writes_files_and_tombstones);
  tcase_add_test(tc, test_db_bounds_within_one_bloom_prefix_skip_files);
  tcase_add_test(tc, test_db_blocks_written_are_read_warm);
  tcase_add_test(tc, test_db_blocks_written_evict_no_block);
  tcase_add_test(tc, test_db_iter_prefix_absent_asks_the_files_filters);
  tcase_add_test(tc, test_db_compaction_filter_drops_keys_and_spares_snapshots);
  tcase_add_test(tc, test_db_differential_memory_background);
  tcase_add_test(tc, test_db_differential_memory_inline);
  tcase_add_test(tc, test_db_differential_disk_with_reopens);
  tcase_add_test(tc, test_db_differential_disk_inline_with_reopens);
  tcase_add_test(tc, test_db_compaction_keeps_versions_of_a_key_in_one_file);
  tcase_add_test(tc, test_db_long_scan_prefetches_unless_turned_off);
  suite_add_tcase(s, tc);
  return s;
}
