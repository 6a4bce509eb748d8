/*
** Tests of the memtable (storage/memtable.c): versions by snapshot, the
** internal iterator in both directions with seeks, range tombstone
** coverage, arena accounting, and readers running while the single writer
** inserts.
*/
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/ikey.h"
#include "storage/memtable.h"
#include "testutil.h"

Suite *storage_memtable_suite(void);

static void add(wcs_memtable *m, uint64_t seq, int type, const char *k,
                const char *v) {
  ck_assert_int_eq(
      memtable_add(m, seq, type, k, strlen(k), v, v ? strlen(v) : 0), WCS_OK);
}

START_TEST(test_memtable_get_newest_visible_version) {
  wcs_memtable *m = NULL;
  uint64_t seq;
  int type;
  const uint8_t *v;
  size_t n;
  ck_assert_int_eq(memtable_new(1 << 20, 3, &m), WCS_OK);
  ck_assert_uint_eq(memtable_log(m), 3);
  add(m, 1, WCS_KT_PUT, "a", "one");
  add(m, 5, WCS_KT_PUT, "a", "five");
  add(m, 7, WCS_KT_DELETE, "a", NULL);
  add(m, 2, WCS_KT_PUT, "ab", "x");
  ck_assert(!memtable_get(m, "a", 1, 0, &seq, &type, &v, &n));
  ck_assert(memtable_get(m, "a", 1, 4, &seq, &type, &v, &n));
  ck_assert_uint_eq(seq, 1);
  ck_assert(n == 3 && memcmp(v, "one", 3) == 0);
  ck_assert(memtable_get(m, "a", 1, 6, &seq, &type, &v, &n));
  ck_assert(n == 4 && memcmp(v, "five", 4) == 0);
  ck_assert(memtable_get(m, "a", 1, 100, &seq, &type, &v, &n));
  ck_assert_int_eq(type, WCS_KT_DELETE);
  ck_assert(!memtable_get(m, "b", 1, 100, &seq, &type, &v, &n));
  ck_assert(!memtable_get(m, "", 0, 100, &seq, &type, &v, &n));
  ck_assert_uint_eq(memtable_count(m), 4);
  ck_assert_uint_eq(memtable_min_seq(m), 1);
  ck_assert_uint_eq(memtable_max_seq(m), 7);
  memtable_unref(m);
}
END_TEST

static void expectKey(wcs_iiter *it, const char *k, uint64_t seq) {
  size_t n;
  const uint8_t *p;
  ck_assert(it->pMethods->xValid(it));
  p = it->pMethods->xKey(it, &n);
  ck_assert_uint_eq(n, strlen(k) + 8);
  ck_assert(memcmp(p, k, strlen(k)) == 0);
  ck_assert_uint_eq(wcs_ikey_seq(p, n), seq);
}

START_TEST(test_memtable_iterator_order_and_seeks) {
  wcs_memtable *m = NULL;
  wcs_iiter *it = NULL;
  uint8_t aK[16];
  ck_assert_int_eq(memtable_new(4096, 0, &m), WCS_OK);
  add(m, 3, WCS_KT_PUT, "b", "");
  add(m, 1, WCS_KT_PUT, "a", "");
  add(m, 4, WCS_KT_PUT, "b", "");
  add(m, 2, WCS_KT_PUT, "c", "");
  ck_assert_int_eq(memtable_iter(m, &it), WCS_OK);
  memtable_unref(m); /* the iterator keeps it alive */
  it->pMethods->xFirst(it);
  expectKey(it, "a", 1);
  it->pMethods->xNext(it);
  expectKey(it, "b", 4); /* newest version first */
  it->pMethods->xNext(it);
  expectKey(it, "b", 3);
  it->pMethods->xNext(it);
  expectKey(it, "c", 2);
  it->pMethods->xNext(it);
  ck_assert(!it->pMethods->xValid(it));
  it->pMethods->xLast(it);
  expectKey(it, "c", 2);
  it->pMethods->xPrev(it);
  expectKey(it, "b", 3);
  /* seek to (b, 3) exactly, and to (b, seq 3.5) between the versions */
  memcpy(aK, "b", 1);
  wcs_put64(aK + 1, wcs_ikey_pack(3, WCS_KT_PUT));
  it->pMethods->xSeek(it, aK, 9);
  expectKey(it, "b", 3);
  it->pMethods->xSeekForPrev(it, aK, 9);
  expectKey(it, "b", 3);
  wcs_put64(aK + 1, wcs_ikey_pack(3, 0xff));
  it->pMethods->xSeek(it, aK, 9);
  expectKey(it, "b", 3);
  it->pMethods->xSeekForPrev(it, aK, 9);
  expectKey(it, "b", 4);
  memcpy(aK, "0", 1);
  it->pMethods->xSeekForPrev(it, aK, 9);
  ck_assert(!it->pMethods->xValid(it));
  memcpy(aK, "z", 1);
  it->pMethods->xSeek(it, aK, 9);
  ck_assert(!it->pMethods->xValid(it));
  ck_assert_int_eq(it->pMethods->xStatus(it, NULL), WCS_OK);
  it->pMethods->xClose(it);
}
END_TEST

static int countDel(void *p, const sst_rangedel *d) {
  (void)d;
  (*(int *)p)++;
  return WCS_OK;
}

/* Insert n keys "k%06u" in the order given by aOrder (with a second,
** newer version of every seventh key), then walk the list: it must hold
** every key once in ascending order (the newer version first) and find
** each by lookup. The orders exercise every path of the search that
** starts from the previous insert. */
static void checkInsertOrder(const unsigned *aOrder, unsigned n) {
  wcs_memtable *m = NULL;
  wcs_iiter *it = NULL;
  unsigned i, nSeen = 0;
  uint64_t seq = 1;
  char zK[16], zV[16];
  ck_assert_int_eq(memtable_new(1 << 20, 0, &m), WCS_OK);
  for (i = 0; i < n; i++) {
    snprintf(zK, sizeof zK, "k%06u", aOrder[i]);
    snprintf(zV, sizeof zV, "v%u", aOrder[i]);
    add(m, seq++, WCS_KT_PUT, zK, zV);
  }
  for (i = 0; i < n; i += 7) {
    snprintf(zK, sizeof zK, "k%06u", i);
    add(m, seq++, WCS_KT_PUT, zK, "new");
  }
  ck_assert_int_eq(memtable_iter(m, &it), WCS_OK);
  for (it->pMethods->xFirst(it); it->pMethods->xValid(it);
       it->pMethods->xNext(it)) {
    unsigned iKey = nSeen;
    size_t nK;
    const uint8_t *pK = it->pMethods->xKey(it, &nK);
    snprintf(zK, sizeof zK, "k%06u", iKey);
    ck_assert_msg(nK == strlen(zK) + 8 && memcmp(pK, zK, strlen(zK)) == 0,
                  "entry %u is not %s", nSeen, zK);
    nSeen++;
    if (iKey % 7 == 0) {
      /* the newer version, then the older one */
      size_t nV;
      const uint8_t *pV = it->pMethods->xValue(it, &nV);
      ck_assert(nV == 3 && memcmp(pV, "new", 3) == 0);
      it->pMethods->xNext(it);
      ck_assert(it->pMethods->xValid(it));
      pV = it->pMethods->xValue(it, &nV);
      snprintf(zV, sizeof zV, "v%u", iKey);
      ck_assert(nV == strlen(zV) && memcmp(pV, zV, nV) == 0);
    }
  }
  ck_assert_uint_eq(nSeen, n);
  it->pMethods->xClose(it);
  for (i = 0; i < n; i++) {
    uint64_t s;
    int type;
    const uint8_t *pV;
    size_t nV;
    snprintf(zK, sizeof zK, "k%06u", i);
    snprintf(zV, sizeof zV, "v%u", i);
    ck_assert(memtable_get(m, zK, strlen(zK), seq, &s, &type, &pV, &nV));
    if (i % 7 == 0)
      ck_assert(nV == 3 && memcmp(pV, "new", 3) == 0);
    else
      ck_assert(nV == strlen(zV) && memcmp(pV, zV, nV) == 0);
  }
  memtable_unref(m);
}

START_TEST(test_memtable_any_insert_order_keeps_the_list_sorted) {
  enum { N = 5000 };
  static unsigned a[N];
  unsigned i, j;
  uint64_t r = 12345;
  /* ascending: every insert appends after the previous one */
  for (i = 0; i < N; i++)
    a[i] = i;
  checkInsertOrder(a, N);
  /* descending: every insert goes before the previous one */
  for (i = 0; i < N; i++)
    a[i] = N - 1 - i;
  checkInsertOrder(a, N);
  /* two interleaved ascending runs (two families of a load in order) */
  for (i = 0; i < N; i++)
    a[i] = (i % 2) ? N / 2 + i / 2 : i / 2;
  checkInsertOrder(a, N);
  /* ascending runs with growing gaps, filled in by later runs */
  for (i = 0, j = 0; j < 10; j++) {
    unsigned k;
    for (k = j; k < N; k += 10)
      a[i++] = k;
  }
  checkInsertOrder(a, N);
  /* random */
  for (i = 0; i < N; i++)
    a[i] = i;
  for (i = N - 1; i > 0; i--) {
    unsigned t;
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    j = (unsigned)((r >> 33) % (i + 1));
    t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
  checkInsertOrder(a, N);
}
END_TEST

START_TEST(test_memtable_range_tombstones_cover_by_snapshot) {
  wcs_memtable *m = NULL;
  int n = 0;
  ck_assert_int_eq(memtable_new(4096, 0, &m), WCS_OK);
  ck_assert_int_eq(memtable_add_rangedel(m, 10, "b", 1, "d", 1), WCS_OK);
  ck_assert_int_eq(memtable_add_rangedel(m, 20, "c", 1, NULL, 0), WCS_OK);
  ck_assert_uint_eq(memtable_rangedel_cover(m, "a", 1, 100), 0);
  ck_assert_uint_eq(memtable_rangedel_cover(m, "b", 1, 100), 10);
  ck_assert_uint_eq(memtable_rangedel_cover(m, "c", 1, 100), 20);
  ck_assert_uint_eq(memtable_rangedel_cover(m, "c", 1, 15), 10);
  ck_assert_uint_eq(memtable_rangedel_cover(m, "d", 1, 15), 0);
  ck_assert_uint_eq(memtable_rangedel_cover(m, "zzz", 3, 100), 20);
  ck_assert_uint_eq(memtable_rangedel_cover(m, "b", 1, 5), 0);
  ck_assert_int_eq(memtable_rangedels(m, 15, NULL, 0, NULL, 0, &n, countDel),
                   WCS_OK);
  ck_assert_int_eq(n, 1);
  ck_assert_uint_eq(memtable_rangedel_count(m), 2);
  memtable_unref(m);
}
END_TEST

/* Many row-like tombstones (disjoint or identical) and a few overlapping
** ones: coverage is exact for every key and snapshot. */
START_TEST(test_memtable_many_row_tombstones_and_overlaps) {
  wcs_memtable *m = NULL;
  int i;
  uint64_t seq = 1;
  ck_assert_int_eq(memtable_new(1 << 20, 0, &m), WCS_OK);
  for (i = 0; i < 2000; i++) {
    char s[16], e[16];
    snprintf(s, sizeof s, "r%05d", i);
    snprintf(e, sizeof e, "r%05d~", i);
    ck_assert_int_eq(memtable_add_rangedel(m, seq++, s, 6, e, 7), WCS_OK);
  }
  /* the same rows again (identical ranges), newer */
  for (i = 0; i < 2000; i += 2) {
    char s[16], e[16];
    snprintf(s, sizeof s, "r%05d", i);
    snprintf(e, sizeof e, "r%05d~", i);
    ck_assert_int_eq(memtable_add_rangedel(m, 5000 + (uint64_t)i, s, 6, e, 7),
                     WCS_OK);
  }
  /* an overlapping prefix delete over rows 1000..1099 */
  ck_assert_int_eq(memtable_add_rangedel(m, 9000, "r010", 4, "r011", 4),
                   WCS_OK);
  for (i = 0; i < 2000; i++) {
    char k[16];
    uint64_t want;
    snprintf(k, sizeof k, "r%05d#x", i);
    want = (i % 2 == 0) ? 5000 + (uint64_t)i : (uint64_t)i + 1;
    if (i >= 1000 && i < 1100) want = 9000;
    ck_assert_uint_eq(memtable_rangedel_cover(m, k, strlen(k), 100000), want);
    /* at a snapshot before the re-deletes and the prefix delete */
    ck_assert_uint_eq(memtable_rangedel_cover(m, k, strlen(k), 4999),
                      (uint64_t)i + 1);
    ck_assert_uint_eq(memtable_rangedel_cover(m, k, strlen(k), (uint64_t)i), 0);
    snprintf(k, sizeof k, "r%05d~", i); /* the exclusive end */
    ck_assert_uint_eq(memtable_rangedel_cover(m, k, strlen(k), 100000),
                      (i >= 1000 && i < 1100) ? 9000 : 0);
  }
  memtable_unref(m);
}
END_TEST

/* Tombstones added in key order (each after the one before: the path
** that checks the last one only), touching, overlapping the last one,
** and at random, against a model: for every key and a few snapshots, the
** newest covering tombstone visible is the one memtable_rangedel_cover
** gives. Keys "k000" to "k199". */
START_TEST(test_memtable_tombstones_in_any_order_match_a_model) {
  int iRound;
  uint64_t x = 0x2545F4914F6CDD1Dull;
  for (iRound = 0; iRound < 40; iRound++) {
    wcs_memtable *m = NULL;
    int aS[300], aE[300], n = 0, i, k, iPos = 0;
    ck_assert_int_eq(memtable_new(1 << 20, 0, &m), WCS_OK);
    for (i = 0; i < 300; i++) {
      char zS[8], zE[8];
      int y;
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      y = (int)((x >> 33) % 10);
      if (y < 6 && iPos < 198) {
        /* after the last: apart, touching, or reaching into it */
        int iStart = iPos + (y < 2 ? 0 : y < 5 ? 1 : -1);
        if (iStart < 0) iStart = 0;
        aS[n] = iStart;
        aE[n] = iStart + 1 + (int)((x >> 40) % 3);
      } else {
        aS[n] = (int)((x >> 40) % 199);
        aE[n] = aS[n] + 1 + (int)((x >> 50) % 5);
      }
      if (aE[n] > 199) aE[n] = 199;
      if (aS[n] >= aE[n]) continue;
      if (aE[n] > iPos) iPos = aE[n];
      snprintf(zS, sizeof zS, "k%03d", aS[n]);
      snprintf(zE, sizeof zE, "k%03d", aE[n]);
      ck_assert_int_eq(
          memtable_add_rangedel(m, (uint64_t)(n + 1), zS, 4, zE, 4), WCS_OK);
      n++;
    }
    for (k = 0; k < 200; k++) {
      char zK[8];
      uint64_t aSnap[3], q;
      int j;
      aSnap[0] = (uint64_t)n + 10;
      aSnap[1] = (uint64_t)n / 2;
      aSnap[2] = 1;
      snprintf(zK, sizeof zK, "k%03d", k);
      for (j = 0; j < 3; j++) {
        uint64_t want = 0;
        for (q = 0; q < (uint64_t)n && q + 1 <= aSnap[j]; q++) {
          if (aS[q] <= k && k < aE[q]) want = q + 1;
        }
        ck_assert_uint_eq(memtable_rangedel_cover(m, zK, 4, aSnap[j]), want);
      }
    }
    memtable_unref(m);
  }
}
END_TEST

START_TEST(test_memtable_arena_accounts_every_byte) {
  wcs_memtable *m = NULL;
  size_t n0;
  int i;
  char v[1000];
  memset(v, 'x', sizeof v);
  ck_assert_int_eq(memtable_new(1 << 20, 0, &m), WCS_OK);
  n0 = memtable_bytes(m);
  for (i = 0; i < 1000; i++) {
    char k[16];
    snprintf(k, sizeof k, "%08d", i);
    ck_assert_int_eq(
        memtable_add(m, (uint64_t)i + 1, WCS_KT_PUT, k, 8, v, sizeof v),
        WCS_OK);
  }
  /* at least the payload, at most payload + towers + 25% waste + a block */
  ck_assert_uint_ge(memtable_bytes(m) - n0, 1000 * (16 + 1000));
  ck_assert_uint_le(memtable_bytes(m) - n0,
                    1000 * (16 + 1000 + 140) * 5 / 4 + (1 << 16));
  /* a value larger than a block gets a block of its own */
  {
    char *big = calloc(1, 300000);
    ck_assert_int_eq(memtable_add(m, 5000, WCS_KT_PUT, "big", 3, big, 300000),
                     WCS_OK);
    free(big);
  }
  memtable_unref(m);
}
END_TEST

/* Readers scan while the writer inserts: they always see a sorted list
** and never a half-made node. */
typedef struct Race {
  wcs_memtable *m;
  atomic_int bStop;
  atomic_int nBad;
} Race;

static void *raceReader(void *p) {
  Race *r = p;
  while (!atomic_load(&r->bStop)) {
    wcs_iiter *it = NULL;
    uint8_t aPrev[64];
    size_t nPrev = 0;
    if (memtable_iter(r->m, &it) != WCS_OK) continue;
    for (it->pMethods->xFirst(it); it->pMethods->xValid(it);
         it->pMethods->xNext(it)) {
      size_t n, nV;
      const uint8_t *k = it->pMethods->xKey(it, &n);
      const uint8_t *v = it->pMethods->xValue(it, &nV);
      if (nPrev && wcs_ikey_cmp(aPrev, nPrev, k, n) >= 0)
        atomic_fetch_add(&r->nBad, 1);
      if (nV != 8 || memcmp(v, k, 8) != 0) atomic_fetch_add(&r->nBad, 1);
      if (n <= sizeof aPrev) {
        memcpy(aPrev, k, n);
        nPrev = n;
      }
    }
    it->pMethods->xClose(it);
  }
  return NULL;
}

START_TEST(test_memtable_readers_run_beside_the_writer) {
  Race r;
  pthread_t t[2];
  int i;
  memset(&r, 0, sizeof r);
  ck_assert_int_eq(memtable_new(1 << 20, 0, &r.m), WCS_OK);
  for (i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, raceReader, &r);
  tu_seed(0);
  for (i = 0; i < 100000; i++) {
    char k[16];
    snprintf(k, sizeof k, "%08u", (unsigned)tu_rand_range(1000000));
    ck_assert_int_eq(memtable_add(r.m, (uint64_t)i + 1, WCS_KT_PUT, k, 8, k, 8),
                     WCS_OK);
  }
  atomic_store(&r.bStop, 1);
  for (i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  ck_assert_int_eq(atomic_load(&r.nBad), 0);
  memtable_unref(r.m);
}
END_TEST

Suite *storage_memtable_suite(void) {
  Suite *s = suite_create("storage_memtable");
  TCase *tc = tcase_create("memtable");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_memtable_get_newest_visible_version);
  tcase_add_test(tc, test_memtable_iterator_order_and_seeks);
  tcase_add_test(tc, test_memtable_any_insert_order_keeps_the_list_sorted);
  tcase_add_test(tc, test_memtable_range_tombstones_cover_by_snapshot);
  tcase_add_test(tc, test_memtable_many_row_tombstones_and_overlaps);
  tcase_add_test(tc, test_memtable_tombstones_in_any_order_match_a_model);
  tcase_add_test(tc, test_memtable_arena_accounts_every_byte);
  tcase_add_test(tc, test_memtable_readers_run_beside_the_writer);
  suite_add_tcase(s, tc);
  return s;
}
