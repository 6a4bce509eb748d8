/*
** Tests of wcs_iter_retarget (storage/db.c): one iterator moved from target
** to target — bounds, prefixes that the files' bloom filters rule in or
** out, snapshots, the cache option — while writes, flushes, compactions
** and range deletes change the store between the moves. The model is an
** iterator over the whole store at the same snapshot, filtered by the
** test (no bounds, so no filter is consulted): after every retarget both
** must show the same keys and values, forward, backward and from a seek.
** WCS_SEED replays one run of the randomized test.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "wcs.h"

Suite *storage_retarget_suite(void);

#define OK(x) TU_DB_OK(x)

/* Rows are "rNN", cells "rNN:cMM"; the filters hold the 3-byte row. */
static int rowPrefix(const void *pKey, int nKey) {
  (void)pKey;
  return nKey >= 3 ? 3 : -1;
}

static void openStore(wcs_db **pDb) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_options_init(&o);
  o.bInMemory = 1;
  o.nMemtable = 16 * 1024;
  o.nL1Bytes = 32 * 1024;
  o.nFileBytes = 8 * 1024;
  o.nBlockSize = 1024;
  o.nL0Trigger = 3;
  o.nL0Stop = 8;
  o.xBloomPrefix = rowPrefix;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  *pDb = db;
}

typedef struct Out {
  char *a;  /* NUL-terminated */
  size_t n; /* bytes before the NUL */
  size_t nAlloc;
} Out;

static void outAdd(Out *p, const void *z, size_t n) {
  if (p->n + n + 1 > p->nAlloc) {
    p->nAlloc = (p->n + n + 1) * 2;
    p->a = realloc(p->a, p->nAlloc);
    ck_assert_ptr_nonnull(p->a);
  }
  memcpy(p->a + p->n, z, n);
  p->n += n;
  p->a[p->n] = 0;
}

/* Everything the iterator shows: a forward scan, a backward scan, and
** forward and backward from a seek to pSeek, as "key=value," lists. */
static void dump(wcs_iter *it, const char *pSeek, Out *p) {
  int rc, i;
  p->n = 0;
  outAdd(p, "", 0);
  for (i = 0; i < 4; i++) {
    int bRev = i & 1;
    if (i < 2) {
      rc = bRev ? wcs_iter_last(it) : wcs_iter_first(it);
    } else {
      rc = bRev ? wcs_iter_seek_for_prev(it, pSeek, strlen(pSeek))
                : wcs_iter_seek(it, pSeek, strlen(pSeek));
    }
    while (rc == WCS_OK && wcs_iter_valid(it)) {
      size_t nK, nV;
      const void *k = wcs_iter_key(it, &nK);
      const void *v = wcs_iter_value(it, &nV);
      outAdd(p, k, nK);
      outAdd(p, "=", 1);
      outAdd(p, v, nV);
      outAdd(p, ",", 1);
      rc = bRev ? wcs_iter_prev(it) : wcs_iter_next(it);
    }
    ck_assert_int_eq(rc, WCS_OK);
    outAdd(p, "|", 1);
  }
}

static int keyCmp(const void *a, size_t na, const void *b, size_t nb) {
  int c = memcmp(a, b, na < nb ? na : nb);
  return c ? c : (na > nb) - (na < nb);
}

/* Is key k in o's range? */
static int inRange(const wcs_iter_options *o, const void *k, size_t n) {
  if (o == NULL) return 1;
  if (o->pLower && keyCmp(k, n, o->pLower, o->nLower) < 0) return 0;
  if (o->pUpper && keyCmp(k, n, o->pUpper, o->nUpper) >= 0) return 0;
  if (o->pPrefix && o->nPrefix &&
      (n < o->nPrefix || memcmp(k, o->pPrefix, o->nPrefix) != 0)) {
    return 0;
  }
  return 1;
}

typedef struct Ent {
  char *k, *v; /* malloc'd, NUL-terminated */
  size_t nK, nV;
} Ent;

/* What dump() must show for options o: every key of an iterator with no
** bounds and no prefix (so no filter is consulted) at o's snapshot,
** filtered here. */
static void model(wcs_db *db, const wcs_iter_options *o, const char *pSeek,
                  Out *p) {
  wcs_iter_options all;
  wcs_iter *it = NULL;
  Ent *a = NULL;
  int n = 0, nAlloc = 0, i, j, rc;
  size_t nSeek = strlen(pSeek);
  memset(&all, 0, sizeof all);
  all.pSnap = o ? o->pSnap : NULL;
  OK(wcs_iter_new(db, &all, &it));
  for (rc = wcs_iter_first(it); rc == WCS_OK && wcs_iter_valid(it);
       rc = wcs_iter_next(it)) {
    Ent *e;
    const void *k, *v;
    size_t nK, nV;
    k = wcs_iter_key(it, &nK);
    if (!inRange(o, k, nK)) continue;
    v = wcs_iter_value(it, &nV);
    if (n == nAlloc) {
      nAlloc = nAlloc ? nAlloc * 2 : 64;
      a = realloc(a, sizeof *a * (size_t)nAlloc);
      ck_assert_ptr_nonnull(a);
    }
    e = &a[n++];
    e->k = malloc(nK + 1);
    e->v = malloc(nV + 1);
    memcpy(e->k, k, nK);
    memcpy(e->v, v, nV);
    e->nK = nK;
    e->nV = nV;
  }
  ck_assert_int_eq(rc, WCS_OK);
  wcs_iter_free(it);
  p->n = 0;
  outAdd(p, "", 0);
  for (j = 0; j < 4; j++) {
    for (i = 0; i < n; i++) {
      const Ent *e = &a[j & 1 ? n - 1 - i : i];
      int c = keyCmp(e->k, e->nK, pSeek, nSeek);
      if (j == 2 && c < 0) continue;
      if (j == 3 && c > 0) continue;
      outAdd(p, e->k, e->nK);
      outAdd(p, "=", 1);
      outAdd(p, e->v, e->nV);
      outAdd(p, ",", 1);
    }
    outAdd(p, "|", 1);
  }
  for (i = 0; i < n; i++) {
    free(a[i].k);
    free(a[i].v);
  }
  free(a);
}

/* Compare a retargeted iterator with the model of options o. */
static void check(wcs_db *db, wcs_iter *it, const wcs_iter_options *o,
                  const char *pSeek, Out *pGot, Out *pWant) {
  model(db, o, pSeek, pWant);
  dump(it, pSeek, pGot);
  ck_assert_msg(strcmp(pGot->a, pWant->a) == 0,
                "retargeted iterator differs:\n got  %.900s\n want %.900s",
                pGot->a, pWant->a);
}

static void cellKey(char *z, int iRow, int iCol) {
  snprintf(z, 16, "r%02d:c%02d", iRow, iCol);
}

/* One of the shapes of target a reader uses. Keys go to aLo/aHi/aPre. */
static void randomTarget(wcs_iter_options *o, char *aLo, char *aHi,
                         char *aPre, const wcs_snapshot *pSnap) {
  int iRow = (int)tu_rand_range(40), c1 = (int)tu_rand_range(30);
  int c2 = (int)tu_rand_range(30);
  memset(o, 0, sizeof *o);
  switch (tu_rand_range(6)) {
  case 0: /* one row by prefix: the filters decide */
    snprintf(aPre, 16, "r%02d", iRow);
    o->pPrefix = aPre;
    o->nPrefix = 3;
    break;
  case 1: /* some cells of one row by bounds: the filters decide too */
    cellKey(aLo, iRow, c1 < c2 ? c1 : c2);
    cellKey(aHi, iRow, c1 < c2 ? c2 : c1);
    o->pLower = aLo;
    o->nLower = strlen(aLo);
    o->pUpper = aHi;
    o->nUpper = strlen(aHi);
    break;
  case 2: /* one cell, as a point read through an iterator */
    cellKey(aPre, iRow, c1);
    o->pPrefix = aPre;
    o->nPrefix = strlen(aPre);
    break;
  case 3: /* rows across files and levels */
    cellKey(aLo, iRow, c1);
    cellKey(aHi, iRow + (int)tu_rand_range(10), c2);
    o->pLower = aLo;
    o->nLower = strlen(aLo);
    o->pUpper = aHi;
    o->nUpper = strlen(aHi);
    break;
  case 4: /* a prefix shorter than the filters' */
    snprintf(aPre, 16, "r%d", iRow / 10);
    o->pPrefix = aPre;
    o->nPrefix = 2;
    break;
  default: /* everything, or from a lower bound on */
    if (tu_rand_range(2)) {
      cellKey(aLo, iRow, c1);
      o->pLower = aLo;
      o->nLower = strlen(aLo);
    }
    break;
  }
  o->pSnap = pSnap;
  o->bNoCacheFill = tu_rand_range(8) == 0;
}

/* Write some cells of a few rows, so that each file holds some rows and
** the filters of the others rule them out; sometimes delete a cell or a
** range of cells. */
static void randomWrites(wcs_db *db, int iStep) {
  wcs_batch *b = NULL;
  int i, iRow = (int)tu_rand_range(40), nRow = 1 + (int)tu_rand_range(4);
  OK(wcs_batch_new(&b));
  for (i = 0; i < 40; i++) {
    char k[16], v[32];
    int r = iRow + (int)tu_rand_range((uint64_t)nRow);
    cellKey(k, r % 40, (int)tu_rand_range(30));
    if (tu_rand_range(10) == 0) {
      OK(wcs_batch_delete(b, k, strlen(k)));
    } else {
      snprintf(v, sizeof v, "%s@%d", k, iStep);
      OK(wcs_batch_put(b, k, strlen(k), v, strlen(v)));
    }
  }
  if (tu_rand_range(6) == 0) {
    char lo[16], hi[16];
    cellKey(lo, iRow, (int)tu_rand_range(30));
    cellKey(hi, iRow + (int)tu_rand_range(2), (int)tu_rand_range(30));
    if (strcmp(lo, hi) < 0) {
      OK(wcs_batch_delete_range(b, lo, strlen(lo), hi, strlen(hi)));
    }
  }
  OK(wcs_db_write(db, b));
  wcs_batch_free(b);
}

START_TEST(test_retarget_matches_a_filtered_full_scan_through_store_changes) {
  wcs_db *db = NULL;
  wcs_iter *it = NULL;
  wcs_snapshot *pSnap = NULL;
  Out got = {0}, want = {0};
  int iStep, nStep = 1500;
  tu_seed(0);
  openStore(&db);
  OK(wcs_iter_new(db, NULL, &it));
  for (iStep = 0; iStep < nStep; iStep++) {
    wcs_iter_options o;
    char aLo[16], aHi[16], aPre[16], aSeek[16];
    int eChange = (int)tu_rand_range(40);
    /* the store changes between some of the moves */
    if (eChange < 8) {
      randomWrites(db, iStep);
    } else if (eChange == 8) {
      OK(wcs_db_flush(db));
    } else if (eChange == 9) {
      char lo[16], hi[16];
      cellKey(lo, (int)tu_rand_range(40), 0);
      cellKey(hi, (int)tu_rand_range(40), 0);
      OK(wcs_db_compact_range(db, lo, strlen(lo), hi, strlen(hi)));
    } else if (eChange == 10) {
      wcs_snapshot_free(db, pSnap);
      pSnap = NULL;
      if (tu_rand_range(2)) OK(wcs_snapshot_new(db, &pSnap));
    }
    randomTarget(&o, aLo, aHi, aPre, tu_rand_range(2) ? pSnap : NULL);
    cellKey(aSeek, (int)tu_rand_range(40), (int)tu_rand_range(30));
    OK(wcs_iter_retarget(it, &o));
    check(db, it, &o, aSeek, &got, &want);
  }
  wcs_iter_free(it);
  wcs_snapshot_free(db, pSnap);
  free(got.a);
  free(want.a);
  OK(wcs_db_close(db));
}
END_TEST

/* Files are left out and taken back in by their filters, and an iterator
** that was at the file keeps reading it right. */
START_TEST(test_retarget_follows_bloom_prefixes_in_and_out_of_files) {
  wcs_db *db = NULL;
  wcs_iter *it = NULL;
  wcs_iter_options o;
  Out got = {0}, want = {0};
  int i, j;
  openStore(&db);
  /* level-0 files each holding a different set of rows */
  for (i = 0; i < 3; i++) {
    for (j = 0; j < 30; j++) {
      char k[16], v[16];
      cellKey(k, i * 10 + j % 3, j);
      snprintf(v, sizeof v, "f%d", i);
      OK(wcs_db_put(db, k, strlen(k), v, strlen(v)));
    }
    OK(wcs_db_flush(db));
  }
  OK(wcs_iter_new(db, NULL, &it));
  for (i = 0; i < 200; i++) {
    char aPre[16];
    memset(&o, 0, sizeof o);
    snprintf(aPre, sizeof aPre, "r%02d", (i * 7) % 33);
    o.pPrefix = aPre;
    o.nPrefix = 3;
    OK(wcs_iter_retarget(it, &o));
    check(db, it, &o, "r10:c05", &got, &want);
  }
  /* rows leave the memtable for a file between two moves */
  OK(wcs_db_put(db, "r05:c01", 7, "m", 1));
  o.pPrefix = "r05";
  OK(wcs_iter_retarget(it, &o));
  check(db, it, &o, "r05", &got, &want);
  ck_assert_ptr_nonnull(strstr(got.a, "r05:c01=m"));
  OK(wcs_db_flush(db));
  o.pPrefix = "r00";
  OK(wcs_iter_retarget(it, &o));
  check(db, it, &o, "r00", &got, &want);
  o.pPrefix = "r05";
  OK(wcs_iter_retarget(it, &o));
  check(db, it, &o, "r05", &got, &want);
  ck_assert_ptr_nonnull(strstr(got.a, "r05:c01=m"));
  wcs_iter_free(it);
  free(got.a);
  free(want.a);
  OK(wcs_db_close(db));
}
END_TEST

/* The options may point into the iterator itself (its current key), and
** a snapshot given to a retarget is read like one given to wcs_iter_new. */
START_TEST(test_retarget_takes_bounds_from_its_own_key_and_a_snapshot) {
  wcs_db *db = NULL;
  wcs_iter *it = NULL;
  wcs_snapshot *pSnap = NULL;
  wcs_iter_options o;
  const void *k;
  size_t n;
  Out got = {0}, want = {0};
  openStore(&db);
  OK(wcs_db_put(db, "a1", 2, "1", 1));
  OK(wcs_db_put(db, "b1", 2, "1", 1));
  OK(wcs_snapshot_new(db, &pSnap));
  OK(wcs_db_put(db, "b2", 2, "2", 1));
  OK(wcs_db_delete(db, "a1", 2));
  OK(wcs_iter_new(db, NULL, &it));
  OK(wcs_iter_last(it)); /* backward: the key is the iterator's copy */
  k = wcs_iter_key(it, &n);
  ck_assert_uint_eq(n, 2);
  memset(&o, 0, sizeof o);
  o.pLower = "b";
  o.nLower = 1;
  o.pUpper = k; /* "b2" */
  o.nUpper = n;
  OK(wcs_iter_retarget(it, &o));
  o.pUpper = "b2";
  check(db, it, &o, "b", &got, &want);
  ck_assert_str_eq(got.a, "b1=1,|b1=1,|b1=1,||");
  memset(&o, 0, sizeof o);
  o.pSnap = pSnap;
  OK(wcs_iter_retarget(it, &o));
  check(db, it, &o, "a", &got, &want);
  ck_assert_str_eq(got.a, "a1=1,b1=1,|b1=1,a1=1,|a1=1,b1=1,||");
  OK(wcs_iter_retarget(it, NULL));
  check(db, it, NULL, "a", &got, &want);
  ck_assert_str_eq(got.a, "b1=1,b2=2,|b2=2,b1=1,|b1=1,b2=2,||");
  ck_assert_int_eq(wcs_iter_retarget(NULL, NULL), WCS_MISUSE);
  wcs_iter_free(it);
  wcs_snapshot_free(db, pSnap);
  free(got.a);
  free(want.a);
  OK(wcs_db_close(db));
}
END_TEST

Suite *storage_retarget_suite(void) {
  Suite *s = suite_create("storage_retarget");
  TCase *tc = tcase_create("retarget");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_retarget_matches_a_filtered_full_scan_through_store_changes);
  tcase_add_test(tc, test_retarget_follows_bloom_prefixes_in_and_out_of_files);
  tcase_add_test(tc, test_retarget_takes_bounds_from_its_own_key_and_a_snapshot);
  suite_add_tcase(s, tc);
  return s;
}
