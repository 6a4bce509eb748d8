/*
** Tests of the store's memory bound (doc/storage.md, "Memory budget"):
** with hundreds of sorted files, a block cache far smaller than their
** indexes and bloom filters together and a small limit on open files,
** every key still reads back (point reads, scans, seeks), the cache holds
** no more than its budget between reads, the open descriptors stay within
** the limit, and what the readers hold outside the cache stays within the
** documented constant per file.
*/
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "wcs.h"

Suite *storage_bound_suite(void);

#define OK(x)                                                                  \
  do {                                                                         \
    int rc_ = (x);                                                             \
    ck_assert_msg(rc_ == WCS_OK, "%s -> %d (%s)", #x, rc_,                     \
                  db ? wcs_errmsg(db) : "");                                   \
  } while (0)

#define CACHE_BUDGET   (256 * 1024)
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
  ck_assert_uint_le(tu_db_stat(db, "cache_bytes"), CACHE_BUDGET);
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
  o.nMemtable = 64 * 1024;
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

Suite *storage_bound_suite(void) {
  Suite *s = suite_create("storage_bound");
  TCase *tc = tcase_create("bound");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_bound_hundreds_of_files_tiny_cache_few_descriptors);
  suite_add_tcase(s, tc);
  return s;
}
