/*
** Tests of the block cache (storage/cache.c): hits and misses, the byte
** budget, least-recently-used eviction, blocks pinned by a reader outliving
** eviction, dropping a file's blocks (the hash table against a model),
** two readers inserting the same block,
** several threads hammering one cache, and changing the budget of a cache
** in use.
*/
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/block.h"
#include "storage/sst.h"
#include "testutil.h"

/* A block of n bytes filled with a byte derived from its key. */
static wcs_cache_handle *mkBlock(uint64_t iFile, uint64_t iOff, size_t n) {
  wcs_cache_handle *h = wcs_cache_alloc(n);
  ck_assert_ptr_nonnull(h);
  memset(wcs_cache_data(h), (int)((iFile * 31 + iOff) & 0xff), n);
  return h;
}

static int blockOk(wcs_cache_handle *h, uint64_t iFile, uint64_t iOff,
                   size_t n) {
  size_t i;
  const uint8_t *p = wcs_cache_data(h);
  if (wcs_cache_size(h) != n) return 0;
  for (i = 0; i < n; i++) {
    if (p[i] != (uint8_t)((iFile * 31 + iOff) & 0xff)) return 0;
  }
  return 1;
}

/* Insert and release: the block stays cached but unpinned. */
static void put(wcs_cache *c, uint64_t iFile, uint64_t iOff, size_t n) {
  wcs_cache_handle *h =
      wcs_cache_insert(c, iFile, iOff, mkBlock(iFile, iOff, n));
  wcs_cache_release(c, h);
}

static int has(wcs_cache *c, uint64_t iFile, uint64_t iOff) {
  wcs_cache_handle *h = wcs_cache_lookup(c, iFile, iOff);
  if (h) wcs_cache_release(c, h);
  return h != NULL;
}

START_TEST(test_cache_counts_hits_and_misses) {
  wcs_cache *c;
  wcs_cache_handle *h;
  uint64_t nBytes, nHit, nMiss;
  ck_assert_int_eq(wcs_cache_new(1 << 20, &c), WCS_OK);
  ck_assert_ptr_null(wcs_cache_lookup(c, 1, 0));
  put(c, 1, 0, 1000);
  h = wcs_cache_lookup(c, 1, 0);
  ck_assert_ptr_nonnull(h);
  ck_assert(blockOk(h, 1, 0, 1000));
  wcs_cache_release(c, h);
  ck_assert_ptr_null(wcs_cache_lookup(c, 2, 0));    /* other file */
  ck_assert_ptr_null(wcs_cache_lookup(c, 1, 1000)); /* other offset */
  wcs_cache_stats(c, &nBytes, &nHit, &nMiss);
  ck_assert_uint_eq(nHit, 1);
  ck_assert_uint_eq(nMiss, 3);
  ck_assert_uint_ge(nBytes, 1000);
  ck_assert_uint_le(nBytes, 1200);
  wcs_cache_free(c);
}
END_TEST

START_TEST(test_cache_stays_within_budget) {
  wcs_cache *c;
  uint64_t nBytes;
  int i;
  ck_assert_int_eq(wcs_cache_new(64 * 1024, &c), WCS_OK);
  for (i = 0; i < 1000; i++) {
    put(c, 1, (uint64_t)i * 4096, 4000);
    wcs_cache_stats(c, &nBytes, NULL, NULL);
    ck_assert_uint_le(nBytes, 64 * 1024);
  }
  ck_assert_uint_ge(nBytes, 48 * 1024); /* and it is actually used */
  /* The most recent blocks are the ones kept. */
  ck_assert(has(c, 1, 999 * 4096));
  ck_assert(!has(c, 1, 0));
  wcs_cache_free(c);
}
END_TEST

START_TEST(test_cache_evicts_blocks_not_recently_used) {
  wcs_cache *c;
  int i;
  /* Room for about ten 1000-byte blocks. */
  ck_assert_int_eq(wcs_cache_new(10 * 1100, &c), WCS_OK);
  for (i = 0; i < 10; i++)
    put(c, 1, (uint64_t)i, 1000);
  ck_assert(has(c, 1, 0)); /* touch block 0: now the most recent */
  put(c, 1, 100, 1000);
  put(c, 1, 101, 1000);
  ck_assert(has(c, 1, 0));
  ck_assert(!has(c, 1, 1));
  ck_assert(!has(c, 1, 2));
  ck_assert(has(c, 1, 9));
  ck_assert(has(c, 1, 101));
  wcs_cache_free(c);
}
END_TEST

START_TEST(test_cache_pinned_block_survives_eviction) {
  wcs_cache *c;
  wcs_cache_handle *pPinned;
  int i;
  ck_assert_int_eq(wcs_cache_new(8 * 1024, &c), WCS_OK);
  pPinned = wcs_cache_insert(c, 5, 0, mkBlock(5, 0, 2000));
  for (i = 1; i < 100; i++)
    put(c, 5, (uint64_t)i * 2000, 2000);
  /* Still cached (pinned blocks are never evicted) and intact. */
  ck_assert(blockOk(pPinned, 5, 0, 2000));
  ck_assert(has(c, 5, 0));
  /* Dropping the file while pinned: gone from the cache, bytes valid. */
  wcs_cache_evict_file(c, 5);
  ck_assert(!has(c, 5, 0));
  ck_assert(!has(c, 5, 99 * 2000));
  ck_assert(blockOk(pPinned, 5, 0, 2000));
  wcs_cache_release(c, pPinned);
  wcs_cache_free(c);
}
END_TEST

START_TEST(test_cache_evict_file_keeps_other_files) {
  wcs_cache *c;
  uint64_t nBytes;
  int i;
  ck_assert_int_eq(wcs_cache_new(4 << 20, &c), WCS_OK);
  for (i = 0; i < 200; i++)
    put(c, (uint64_t)(i % 4), (uint64_t)i * 100, 100);
  wcs_cache_evict_file(c, 2);
  for (i = 0; i < 200; i++) {
    ck_assert_int_eq(has(c, (uint64_t)(i % 4), (uint64_t)i * 100), i % 4 != 2);
  }
  for (i = 0; i < 4; i++)
    wcs_cache_evict_file(c, (uint64_t)i);
  wcs_cache_stats(c, &nBytes, NULL, NULL);
  ck_assert_uint_eq(nBytes, 0);
  wcs_cache_free(c);
}
END_TEST

/* The table against a model: blocks of 16 files inserted in a scrambled
** order (the table doubles several times) and whole files dropped, over
** and over, so that deletions close gaps in runs of every shape, wrapped
** round the table's end included. Every block the model holds must be
** found, every other one not. */
START_TEST(test_cache_table_matches_model_through_drops) {
  enum { NFILE = 16, NOFF = 160 };
  static uint8_t aIn[NFILE][NOFF];
  wcs_cache *c;
  uint32_t x = 12345;
  int round, f, o;
  memset(aIn, 0, sizeof aIn);
  ck_assert_int_eq(wcs_cache_new(64 << 20, &c), WCS_OK);
  for (round = 0; round < 40; round++) {
    int i;
    for (i = 0; i < 600; i++) {
      x = x * 1103515245u + 12345u;
      f = (int)((x >> 8) % NFILE);
      o = (int)((x >> 16) % NOFF);
      put(c, (uint64_t)f + 1, (uint64_t)o * 4096, 16);
      aIn[f][o] = 1;
    }
    x = x * 1103515245u + 12345u;
    f = (int)((x >> 8) % NFILE);
    wcs_cache_evict_file(c, (uint64_t)f + 1);
    memset(aIn[f], 0, NOFF);
    for (f = 0; f < NFILE; f++) {
      for (o = 0; o < NOFF; o++) {
        ck_assert_int_eq(has(c, (uint64_t)f + 1, (uint64_t)o * 4096),
                         aIn[f][o]);
      }
    }
  }
  for (f = 0; f < NFILE; f++)
    wcs_cache_evict_file(c, (uint64_t)f + 1);
  for (o = 0; o < NOFF; o++)
    ck_assert(!has(c, 1, (uint64_t)o * 4096));
  wcs_cache_free(c);
}
END_TEST

START_TEST(test_cache_second_insert_of_a_block_shares_the_first) {
  wcs_cache *c;
  wcs_cache_handle *h1, *h2;
  ck_assert_int_eq(wcs_cache_new(1 << 20, &c), WCS_OK);
  h1 = wcs_cache_insert(c, 1, 7, mkBlock(1, 7, 500));
  h2 = wcs_cache_insert(c, 1, 7, mkBlock(1, 7, 500));
  ck_assert_ptr_eq(h1, h2);
  wcs_cache_release(c, h1);
  wcs_cache_release(c, h2);
  ck_assert(has(c, 1, 7));
  wcs_cache_free(c);
}
END_TEST

START_TEST(test_cache_unpinned_oversized_block_is_not_kept) {
  wcs_cache *c;
  uint64_t nBytes;
  ck_assert_int_eq(wcs_cache_new(1000, &c), WCS_OK);
  put(c, 1, 0, 5000);
  ck_assert(!has(c, 1, 0));
  wcs_cache_stats(c, &nBytes, NULL, NULL);
  ck_assert_uint_eq(nBytes, 0);
  /* A handle that was never inserted is simply freed. */
  wcs_cache_release(NULL, mkBlock(1, 1, 10));
  wcs_cache_free(c);
}
END_TEST

/* wcs_cache_set_budget: a smaller budget evicts idle blocks at once and
** leaves pinned ones alone (charged, intact, still found) until released;
** a larger one lets a cache of several shards hold more than the budget
** it was created with. */
START_TEST(test_cache_set_budget_evicts_idle_keeps_pinned) {
  wcs_cache *c;
  wcs_cache_handle *apPin[2];
  uint64_t nBytes, nPinned;
  int i;
  /* one shard: room for about sixteen 4000-byte blocks */
  ck_assert_int_eq(wcs_cache_new(64 * 1024, &c), WCS_OK);
  apPin[0] = wcs_cache_insert(c, 1, 0, mkBlock(1, 0, 4000));
  apPin[1] = wcs_cache_insert(c, 1, 4096, mkBlock(1, 4096, 4000));
  wcs_cache_stats(c, &nPinned, NULL, NULL);
  for (i = 2; i < 12; i++)
    put(c, 1, (uint64_t)i * 4096, 4000);
  wcs_cache_stats(c, &nBytes, NULL, NULL);
  ck_assert_uint_ge(nBytes, 12 * 4000);
  ck_assert(has(c, 1, 11 * 4096));

  wcs_cache_set_budget(c, 0);
  wcs_cache_stats(c, &nBytes, NULL, NULL);
  ck_assert_uint_eq(nBytes, nPinned); /* only the pinned blocks are left */
  for (i = 2; i < 12; i++)
    ck_assert(!has(c, 1, (uint64_t)i * 4096));
  ck_assert(blockOk(apPin[0], 1, 0, 4000));
  ck_assert(blockOk(apPin[1], 1, 4096, 4000));
  ck_assert(has(c, 1, 0));
  ck_assert(has(c, 1, 4096));
  /* released over budget: evicted then */
  wcs_cache_release(c, apPin[0]);
  wcs_cache_release(c, apPin[1]);
  wcs_cache_stats(c, &nBytes, NULL, NULL);
  ck_assert_uint_eq(nBytes, 0);

  /* back up: the cache fills again, within the new budget */
  wcs_cache_set_budget(c, 32 * 1024);
  for (i = 0; i < 100; i++) {
    put(c, 2, (uint64_t)i * 4096, 4000);
    wcs_cache_stats(c, &nBytes, NULL, NULL);
    ck_assert_uint_le(nBytes, 32 * 1024);
  }
  ck_assert_uint_ge(nBytes, 24 * 1024);
  wcs_cache_free(c);

  /* 16 MiB: four shards, each re-split */
  ck_assert_int_eq(wcs_cache_new(16u << 20, &c), WCS_OK);
  wcs_cache_set_budget(c, 32u << 20);
  for (i = 0; i < 6000; i++)
    put(c, 3, (uint64_t)i * 8192, 4000);
  wcs_cache_stats(c, &nBytes, NULL, NULL);
  ck_assert_uint_gt(nBytes, 20u << 20); /* more than created with */
  ck_assert_uint_le(nBytes, 32u << 20);
  wcs_cache_set_budget(c, 1u << 20);
  wcs_cache_stats(c, &nBytes, NULL, NULL);
  ck_assert_uint_le(nBytes, 1u << 20);
  ck_assert_uint_ge(nBytes, 1u << 19);
  wcs_cache_free(c);
}
END_TEST

typedef struct Worker {
  wcs_cache *c;
  uint64_t seed;
  int nBad;
} Worker;

static void *hammer(void *pArg) {
  Worker *w = pArg;
  uint64_t x = w->seed;
  int i;
  for (i = 0; i < 200000; i++) {
    uint64_t iFile, iOff;
    wcs_cache_handle *h;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    iFile = x % 3;
    iOff = (x >> 8) % 500;
    h = wcs_cache_lookup(w->c, iFile, iOff);
    if (h == NULL)
      h = wcs_cache_insert(w->c, iFile, iOff, mkBlock(iFile, iOff, 64 + iOff));
    if (!blockOk(h, iFile, iOff, 64 + iOff)) w->nBad++;
    wcs_cache_release(w->c, h);
    if ((x & 0xfff) == 0) wcs_cache_evict_file(w->c, iFile);
  }
  return NULL;
}

START_TEST(test_cache_threads_share_one_cache) {
  wcs_cache *c;
  pthread_t at[4];
  Worker aw[4];
  uint64_t nBytes;
  int i;
  /* 4 MiB: several shards; the blocks (~600 KB total) fit... */
  ck_assert_int_eq(wcs_cache_new(4 << 20, &c), WCS_OK);
  for (i = 0; i < 4; i++) {
    aw[i].c = c;
    aw[i].seed = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
    aw[i].nBad = 0;
    pthread_create(&at[i], NULL, hammer, &aw[i]);
  }
  for (i = 0; i < 4; i++) {
    pthread_join(at[i], NULL);
    ck_assert_int_eq(aw[i].nBad, 0);
  }
  wcs_cache_free(c);
  /* ...and a small cache (one shard) that evicts all the time. */
  ck_assert_int_eq(wcs_cache_new(16 * 1024, &c), WCS_OK);
  for (i = 0; i < 2; i++) {
    aw[i].c = c;
    pthread_create(&at[i], NULL, hammer, &aw[i]);
  }
  for (i = 0; i < 2; i++) {
    pthread_join(at[i], NULL);
    ck_assert_int_eq(aw[i].nBad, 0);
  }
  wcs_cache_stats(c, &nBytes, NULL, NULL);
  ck_assert_uint_le(nBytes, 16 * 1024);
  wcs_cache_free(c);
}
END_TEST

Suite *storage_cache_suite(void);
Suite *storage_cache_suite(void) {
  Suite *s = suite_create("storage_cache");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_cache_counts_hits_and_misses);
  tcase_add_test(tc, test_cache_stays_within_budget);
  tcase_add_test(tc, test_cache_evicts_blocks_not_recently_used);
  tcase_add_test(tc, test_cache_pinned_block_survives_eviction);
  tcase_add_test(tc, test_cache_evict_file_keeps_other_files);
  tcase_add_test(tc, test_cache_table_matches_model_through_drops);
  tcase_add_test(tc, test_cache_second_insert_of_a_block_shares_the_first);
  tcase_add_test(tc, test_cache_unpinned_oversized_block_is_not_kept);
  tcase_add_test(tc, test_cache_threads_share_one_cache);
  tcase_add_test(tc, test_cache_set_budget_evicts_idle_keeps_pinned);
  suite_add_tcase(s, tc);
  return s;
}
