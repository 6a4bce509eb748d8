/*
** Tests of the store's memory bound (doc/storage.md, "Memory budget"):
** with hundreds of sorted files, a block cache far smaller than their
** indexes and bloom filters together and a small limit on open files,
** every key still reads back (point reads, scans, seeks), the cache holds
** no more than its budget between reads, the open descriptors stay within
** the limit, and what the readers hold outside the cache stays within the
** documented constant per file. And the budget the memtables and the
** cache share: the cache uses what the memtables do not hold, gives it
** back as they fill and takes it again after a flush; with bFixedCache it
** keeps nCache.
*/
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "wcs.h"

Suite *storage_bound_suite(void);

#define OK(x) TU_DB_OK(x)

#define CACHE_BUDGET   (256 * 1024)
#define MEM_BUDGET     (64 * 1024)
#define MAX_OPEN_FILES 16
/* doc/storage.md: a reader holds at most this many bytes outside the cache
** beyond its file's path, its two bound keys (here 11-byte user keys with
** an 8-byte trailer), its index sample (at most 32 entries of 48 bytes)
** and its range tombstones (none here). */
#define READER_FIXED  320
#define READER_SAMPLE (32 * 48)
#define KEY_BOUND    (11 + 8)

static int nFiles(wcs_db *db) {
  char *z = NULL, *p;
  int n = 0;
  OK(wcs_db_stats(db, &z));
  for (p = strstr(z, "\"files\":"); p; p = strstr(p + 1, "\"files\":")) {
    n += atoi(p + 8);
  }
  wcs_free(z);
  return n;
}

/* Key i and its value: 16 random-looking bytes, so blocks barely
** compress and the files stay many. */
static int mkKey(char *z, int i) {
  return snprintf(z, 32, "key%08d", i * 7);
}
static void mkVal(uint8_t *a, int i) {
  uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + 1;
  int j;
  for (j = 0; j < 100; j++) {
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    a[j] = (uint8_t)(x >> 56);
  }
}

static void checkBounds(wcs_db *db, const char *zPath) {
  uint64_t nReaders = tu_db_stat(db, "readers");
  size_t nName = strlen(zPath) + sizeof "/000000.sst";
  uint64_t nBudget = tu_db_stat(db, "cache_budget_now");
  /* the cache within its budget, which the memtables' bytes leave */
  ck_assert_uint_le(tu_db_stat(db, "cache_bytes"), nBudget);
  ck_assert_uint_le(nBudget + tu_db_stat(db, "memtable_bytes"),
                    CACHE_BUDGET + MEM_BUDGET);
  ck_assert_uint_le(tu_db_stat(db, "open_files"), MAX_OPEN_FILES);
  ck_assert_uint_le(tu_db_stat(db, "reader_bytes"),
                    nReaders * (READER_FIXED + READER_SAMPLE + nName + 2 * KEY_BOUND));
}

START_TEST(test_bound_hundreds_of_files_tiny_cache_few_descriptors) {
  const char *zDir = tu_tmpdir("bound");
  char zPath[512];
  wcs_db *db = NULL;
  wcs_options o;
  wcs_iter *it = NULL;
  enum { N = 50000 };
  uint8_t aVal[100];
  char zKey[32];
  int i, nK, nSeen, nFile;
  snprintf(zPath, sizeof zPath, "%s/db", zDir);
  wcs_options_init(&o);
  o.nMemtable = MEM_BUDGET;
  o.nFileBytes = 16 * 1024;
  o.nL1Bytes = 128 * 1024;
  o.nBlockSize = 1024;
  o.nCache = CACHE_BUDGET;
  o.nMaxOpenFiles = MAX_OPEN_FILES;
  o.iZstdLevel = 1;
  o.bNoBackground = 1;
  o.iSync = WCS_SYNC_OFF;
  OK(wcs_db_open(&db, zPath, &o, NULL));
  for (i = 0; i < N; i++) {
    nK = mkKey(zKey, i);
    mkVal(aVal, i);
    OK(wcs_db_put(db, zKey, (size_t)nK, aVal, sizeof aVal));
  }
  OK(wcs_db_flush(db));
  checkBounds(db, zPath);
  OK(wcs_db_close(db));
  db = NULL;

  /* Reopen: every file is checked at open, through the same bounds. */
  OK(wcs_db_open(&db, zPath, &o, NULL));
  nFile = nFiles(db);
  ck_assert_int_ge(nFile, 200);
  ck_assert_uint_eq(tu_db_stat(db, "readers"), (uint64_t)nFile);
  checkBounds(db, zPath);

  for (i = 0; i < N; i++) {
    void *p = NULL;
    size_t n = 0;
    nK = mkKey(zKey, i);
    mkVal(aVal, i);
    OK(wcs_db_get(db, NULL, zKey, (size_t)nK, &p, &n));
    ck_assert_msg(p != NULL, "key %s missing", zKey);
    ck_assert_uint_eq(n, sizeof aVal);
    ck_assert(memcmp(p, aVal, n) == 0);
    wcs_free(p);
    /* absent keys between the present ones */
    zKey[nK - 1]++;
    OK(wcs_db_get(db, NULL, zKey, (size_t)nK, &p, &n));
    ck_assert_ptr_null(p);
    if (i % 2000 == 0) checkBounds(db, zPath);
  }
  checkBounds(db, zPath);
  ck_assert_uint_gt(tu_db_stat(db, "file_reopens"), 0);
  /* The indexes and filters did not all fit: they were evicted and read
  ** again while the reads went on. */
  ck_assert_uint_gt(tu_db_stat(db, "index_misses"), (uint64_t)nFile / 2);

  /* A full scan in order, then seeks spread over the key space. */
  OK(wcs_iter_new(db, NULL, &it));
  nSeen = 0;
  OK(wcs_iter_first(it));
  while (wcs_iter_valid(it)) {
    size_t n;
    const void *pk = wcs_iter_key(it, &n);
    nK = mkKey(zKey, nSeen);
    ck_assert_uint_eq(n, (size_t)nK);
    ck_assert(memcmp(pk, zKey, n) == 0);
    nSeen++;
    OK(wcs_iter_next(it));
  }
  ck_assert_int_eq(nSeen, N);
  for (i = 0; i < N; i += 97) {
    size_t n;
    const void *pv;
    nK = mkKey(zKey, i);
    OK(wcs_iter_seek(it, zKey, (size_t)nK));
    ck_assert(wcs_iter_valid(it));
    pv = wcs_iter_value(it, &n);
    mkVal(aVal, i);
    ck_assert_uint_eq(n, sizeof aVal);
    ck_assert(memcmp(pv, aVal, n) == 0);
  }
  wcs_iter_free(it);
  checkBounds(db, zPath);
  OK(wcs_db_close(db));
  tu_rmrf(zDir);
}
END_TEST

/* The shared budget (doc/storage.md, "Memory budget"). A store with 256
** KiB of memtable budget and 256 KiB of cache, about 1 MB of data in
** sorted files (blocks stored as they are, so the decoded blocks are as
** big), background work in the writer's thread so the steps are exact. */
#define SHARE_MEM   (256 * 1024)
#define SHARE_CACHE (256 * 1024)
#define SHARE_KEYS  8000
/* what an empty memtable holds at most: one arena block (nMemtable / 32)
** and its header */
#define SHARE_EMPTY_MEM (SHARE_MEM / 32 + 64)

static void readAll(wcs_db *db) {
  char zKey[32];
  int i, j, nK;
  for (j = 0; j < 2; j++) {
    for (i = 0; i < SHARE_KEYS; i++) {
      void *p = NULL;
      size_t n = 0;
      nK = mkKey(zKey, i);
      OK(wcs_db_get(db, NULL, zKey, (size_t)nK, &p, &n));
      ck_assert_msg(p != NULL, "key %s missing", zKey);
      wcs_free(p);
    }
  }
}

/* The cache's budget is nCache plus the memtable budget the memtables do
** not hold (nCache alone with bFixedCache), and the cache is within it. */
static uint64_t checkShare(wcs_db *db, int bFixed) {
  uint64_t nBudget = tu_db_stat(db, "cache_budget_now");
  uint64_t nMem = tu_db_stat(db, "memtable_bytes");
  if (bFixed) {
    ck_assert_uint_eq(nBudget, SHARE_CACHE);
  } else {
    ck_assert_uint_le(nMem, SHARE_MEM);
    ck_assert_uint_eq(nBudget + nMem, SHARE_CACHE + SHARE_MEM);
  }
  ck_assert_uint_le(tu_db_stat(db, "cache_bytes"), nBudget);
  return nBudget;
}

/* The memtables were just emptied: the budget is back to (nearly) nCache
** + nMemtable, and reading everything fills the cache past nCache (with
** bFixedCache, to most of nCache). Returns the cache's bytes then. */
static uint64_t checkShareBack(wcs_db *db, int bFixed) {
  uint64_t nBudget, nCached;
  ck_assert_uint_le(tu_db_stat(db, "memtable_bytes"), SHARE_EMPTY_MEM);
  nBudget = checkShare(db, bFixed);
  if (!bFixed) {
    ck_assert_uint_ge(nBudget, SHARE_CACHE + SHARE_MEM - SHARE_EMPTY_MEM);
  }
  readAll(db);
  checkShare(db, bFixed);
  nCached = tu_db_stat(db, "cache_bytes");
  if (bFixed) {
    ck_assert_uint_ge(nCached, SHARE_CACHE * 3 / 4);
  } else {
    ck_assert_uint_gt(nCached, SHARE_CACHE + SHARE_MEM / 2);
  }
  return nCached;
}

static void shareRun(int bFixed) {
  const char *zDir = tu_tmpdir("share");
  char zPath[512], zKey[32];
  wcs_db *db = NULL;
  wcs_options o;
  uint8_t aVal[100];
  uint64_t nBudget, nCached, nCachedFull, nFlushes;
  int i, nK;
  snprintf(zPath, sizeof zPath, "%s/db", zDir);
  wcs_options_init(&o);
  o.nMemtable = SHARE_MEM;
  o.nCache = SHARE_CACHE;
  o.bFixedCache = bFixed;
  o.nBlockSize = 4096;
  o.iZstdLevel = 0;
  o.bNoBackground = 1;
  o.iSync = WCS_SYNC_OFF;
  OK(wcs_db_open(&db, zPath, &o, NULL));
  checkShare(db, bFixed);
  for (i = 0; i < SHARE_KEYS; i++) {
    nK = mkKey(zKey, i);
    mkVal(aVal, i);
    OK(wcs_db_put(db, zKey, (size_t)nK, aVal, sizeof aVal));
  }
  OK(wcs_db_flush(db));

  /* Memtables nearly empty: the cache may hold nCache and almost all of
  ** nMemtable besides, and reads of 1 MB of blocks fill it. */
  nCachedFull = checkShareBack(db, bFixed);

  /* Writes fill the active memtable to 3/8 of the budget (it switches at
  ** half): the cache's budget shrinks with every block the memtable
  ** takes, and the cache evicts to stay within it. */
  nFlushes = tu_db_stat(db, "flushes");
  for (i = 0; tu_db_stat(db, "memtable_bytes") < SHARE_MEM * 3 / 8; i++) {
    nK = snprintf(zKey, sizeof zKey, "new%08d", i);
    mkVal(aVal, i);
    OK(wcs_db_put(db, zKey, (size_t)nK, aVal, sizeof aVal));
    checkShare(db, bFixed);
  }
  ck_assert_uint_eq(tu_db_stat(db, "flushes"), nFlushes); /* no switch */
  nBudget = checkShare(db, bFixed);
  nCached = tu_db_stat(db, "cache_bytes");
  if (!bFixed) {
    ck_assert_uint_le(nBudget, SHARE_CACHE + SHARE_MEM * 5 / 8);
    ck_assert_uint_lt(nCached, nCachedFull); /* it gave blocks back */
  }

  /* A flush empties the memtable: the budget grows back and reads fill
  ** the cache past nCache again. */
  OK(wcs_db_flush(db));
  checkShareBack(db, bFixed);
  OK(wcs_db_close(db));

  /* Reopen: the budget is shared from the start. */
  OK(wcs_db_open(&db, zPath, &o, NULL));
  nBudget = checkShare(db, bFixed);
  if (!bFixed) {
    ck_assert_uint_ge(nBudget, SHARE_CACHE + SHARE_MEM - SHARE_EMPTY_MEM);
  }
  readAll(db);
  checkShare(db, bFixed);
  OK(wcs_db_close(db));

  /* With the background threads: the flush thread gives the budget back
  ** too (compactions may still pin blocks, so only the budget is
  ** compared). */
  o.bNoBackground = 0;
  OK(wcs_db_open(&db, zPath, &o, NULL));
  for (i = 0; i < SHARE_KEYS; i++) {
    nK = snprintf(zKey, sizeof zKey, "bg%08d", i);
    mkVal(aVal, i);
    OK(wcs_db_put(db, zKey, (size_t)nK, aVal, sizeof aVal));
  }
  OK(wcs_db_flush(db));
  ck_assert_uint_gt(tu_db_stat(db, "flushes"), 1);
  ck_assert_uint_le(tu_db_stat(db, "memtable_bytes"), SHARE_EMPTY_MEM);
  nBudget = tu_db_stat(db, "cache_budget_now");
  if (bFixed) {
    ck_assert_uint_eq(nBudget, SHARE_CACHE);
  } else {
    ck_assert_uint_eq(nBudget + tu_db_stat(db, "memtable_bytes"),
                      SHARE_CACHE + SHARE_MEM);
  }
  OK(wcs_db_close(db));
  tu_rmrf(zDir);
}

START_TEST(test_bound_cache_uses_idle_memtable_budget) {
  shareRun(0);
}
END_TEST

START_TEST(test_bound_fixed_cache_keeps_its_budget) {
  shareRun(1);
}
END_TEST

Suite *storage_bound_suite(void) {
  Suite *s = suite_create("storage_bound");
  TCase *tc = tcase_create("bound");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_bound_hundreds_of_files_tiny_cache_few_descriptors);
  tcase_add_test(tc, test_bound_cache_uses_idle_memtable_budget);
  tcase_add_test(tc, test_bound_fixed_cache_keeps_its_budget);
  suite_add_tcase(s, tc);
  return s;
}
