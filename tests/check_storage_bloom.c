/*
** Tests of the bloom filter (storage/bloom.c) and of its use by sorted
** files: no false negatives ever, a false-positive rate within bounds for
** several bits-per-key settings (the measured rates are printed; see
** doc/format.md "Bloom block"), the "no filter" and empty-filter cases,
** layout checks, and prefix filters answering for whole rows.
*/
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/bloom.h"
#include "storage/env.h"
#include "storage/ikey.h"
#include "storage/sst.h"
#include "testutil.h"

/* Build a filter over keys "key%08d" for i in [0, n). */
static uint8_t *buildFilter(int n, int nBits, wcs_bloom *pB, size_t *pnBlk) {
  bloom_builder bb;
  wcs_buf out = {0};
  int i;
  bloom_builder_init(&bb, nBits);
  for (i = 0; i < n; i++) {
    char z[32];
    int nz = snprintf(z, sizeof z, "key%08d", i);
    ck_assert_int_eq(bloom_builder_add(&bb, bloom_hash(z, (size_t)nz)), WCS_OK);
  }
  ck_assert_int_eq(bloom_builder_finish(&bb, WCS_BLOOM_KIND_KEYS, &out),
                   WCS_OK);
  bloom_builder_free(&bb);
  ck_assert_int_eq(bloom_open(pB, out.a, out.n), WCS_OK);
  *pnBlk = out.n;
  return out.a;
}

/* False-positive rate over 200,000 keys that were not added. */
static double fpRate(const wcs_bloom *pB, int n) {
  int i, nFp = 0, nProbe = 200000;
  for (i = 0; i < nProbe; i++) {
    char z[32];
    int nz = snprintf(z, sizeof z, "key%08d", n + 1000000 + i);
    nFp += bloom_may_contain(pB, bloom_hash(z, (size_t)nz));
  }
  return (double)nFp / nProbe;
}

START_TEST(test_bloom_has_no_false_negatives) {
  static const int aN[] = {1, 10, 1000, 100000};
  size_t k;
  for (k = 0; k < sizeof aN / sizeof aN[0]; k++) {
    wcs_bloom b;
    size_t nBlk;
    uint8_t *p = buildFilter(aN[k], 10, &b, &nBlk);
    int i, nMiss = 0;
    for (i = 0; i < aN[k]; i++) {
      char z[32];
      int nz = snprintf(z, sizeof z, "key%08d", i);
      nMiss += !bloom_may_contain(&b, bloom_hash(z, (size_t)nz));
    }
    ck_assert_int_eq(nMiss, 0);
    free(p);
  }
}
END_TEST

START_TEST(test_bloom_false_positive_rate_within_bounds) {
  /* A filter confined to 512-bit lines pays for the uneven load of its
  ** lines: measured 9.3% at 5 bits per key (ideal unblocked filter 9.2%),
  ** 1.03% at 10 (0.82%), 0.19% at 15 (0.07%), 0.07% at 20 (0.007%). The
  ** bounds leave room for other key sets but catch a broken hash or probe
  ** sequence. */
  static const struct {
    int nBits;
    double mx;
  } aCase[] = {{5, 0.11}, {10, 0.0125}, {15, 0.0028}, {20, 0.0011}};
  size_t k;
  for (k = 0; k < sizeof aCase / sizeof aCase[0]; k++) {
    wcs_bloom b;
    size_t nBlk;
    int n = 100000;
    uint8_t *p = buildFilter(n, aCase[k].nBits, &b, &nBlk);
    double r = fpRate(&b, n);
    fprintf(stderr,
            "bloom: %d bits/key, k=%d, %zu bytes for %d keys: "
            "false positives %.4f%%\n",
            aCase[k].nBits, b.k, nBlk, n, 100.0 * r);
    ck_assert_msg(r <= aCase[k].mx, "fp rate %f > %f at %d bits", r,
                  aCase[k].mx, aCase[k].nBits);
    ck_assert_uint_eq(nBlk, (size_t)(n * aCase[k].nBits + 511) / 512 * 64 +
                                WCS_BLOOM_TAIL);
    free(p);
  }
}
END_TEST

START_TEST(test_bloom_without_bits_says_maybe_and_empty_says_no) {
  wcs_bloom b;
  size_t nBlk;
  uint8_t *p = buildFilter(100, 0, &b, &nBlk);
  ck_assert_uint_eq(nBlk, WCS_BLOOM_TAIL);
  ck_assert_int_eq(b.k, 0);
  ck_assert_int_eq(bloom_may_contain(&b, bloom_hash("x", 1)), 1);
  free(p);
  p = buildFilter(0, 10, &b, &nBlk);
  ck_assert_int_gt(b.k, 0);
  ck_assert_int_eq(bloom_may_contain(&b, bloom_hash("x", 1)), 0);
  free(p);
}
END_TEST

START_TEST(test_bloom_rejects_bad_layout) {
  wcs_bloom b;
  size_t nBlk, i;
  uint8_t *p = buildFilter(50, 10, &b, &nBlk);
  uint8_t *t = p + nBlk - WCS_BLOOM_TAIL;
  for (i = 0; i < WCS_BLOOM_TAIL; i++)
    ck_assert_int_eq(bloom_open(&b, p, i), WCS_CORRUPT);
  ck_assert_int_eq(bloom_open(&b, p, nBlk - 1), WCS_CORRUPT);
  t[0]++; /* line count disagrees with the size */
  ck_assert_int_eq(bloom_open(&b, p, nBlk), WCS_CORRUPT);
  t[0]--;
  t[4] = 31; /* k out of range */
  ck_assert_int_eq(bloom_open(&b, p, nBlk), WCS_CORRUPT);
  t[4] = 7;
  t[6] = 9; /* a hash this build does not know: no filter, not an error */
  ck_assert_int_eq(bloom_open(&b, p, nBlk), WCS_OK);
  ck_assert_int_eq(bloom_may_contain(&b, bloom_hash("nope", 4)), 1);
  free(p);
}
END_TEST

/* Row prefix: the key up to and including the first '#'; keys without one
** stay out of the filter. */
static int rowPrefix(const void *pKey, int nKey) {
  const char *z = memchr(pKey, '#', (size_t)nKey);
  return z ? (int)(z - (const char *)pKey) + 1 : -1;
}

START_TEST(test_sst_prefix_bloom_answers_for_whole_rows) {
  wcs_env *env = wcs_env_mem_new();
  sst_options o;
  sst_builder *b;
  sst_meta meta;
  sst_reader *r;
  int i, j, nFp = 0;
  uint64_t seq = 1;
  memset(&o, 0, sizeof o);
  o.nBlockSize = 4096;
  o.nBloomBits = 10;
  o.xBloomPrefix = rowPrefix;
  ck_assert_int_eq(sst_builder_new(env, "p.sst", 1, &o, &b, NULL), WCS_OK);
  for (i = 0; i < 500; i++) {
    for (j = 0; j < 20; j++) { /* 20 columns per row */
      uint8_t k[64];
      int n = snprintf((char *)k, 40, "row%05d#col%02d", 2 * i, j);
      wcs_put64(k + n, wcs_ikey_pack(seq++, WCS_KT_PUT));
      ck_assert_int_eq(sst_builder_add(b, k, (size_t)n + 8, k, 4, NULL),
                       WCS_OK);
    }
  }
  ck_assert_int_eq(sst_builder_finish(b, &meta, NULL), WCS_OK);
  ck_assert_int_eq(sst_reader_open(env, "p.sst", 1, 0, NULL, &r, NULL), WCS_OK);
  ck_assert_int_eq(sst_reader_bloom_prefixed(r), 1);
  for (i = 0; i < 1000; i++) {
    char z[32];
    int n = snprintf(z, sizeof z, "row%05d#", i);
    int bMay = sst_reader_may_contain(r, z, (size_t)n);
    ck_assert_int_eq(
        bMay, sst_reader_may_contain_hash(r, sst_bloom_hash(z, (size_t)n)));
    if (i % 2 == 0)
      ck_assert_int_eq(bMay, 1); /* rows present */
    else
      nFp += bMay;
  }
  /* 500 distinct prefixes got 10 bits each, not 10,000 keys: still ~1%. */
  ck_assert_int_le(nFp, 20);
  sst_reader_close(r);
  sst_meta_clear(&meta);
  env->xDestroy(env);
}
END_TEST

START_TEST(test_sst_whole_key_bloom_skips_absent_keys) {
  wcs_env *env = wcs_env_mem_new();
  sst_options o;
  sst_builder *b;
  sst_meta meta;
  sst_reader *r;
  int i, nFp = 0;
  memset(&o, 0, sizeof o);
  o.nBloomBits = 10;
  ck_assert_int_eq(sst_builder_new(env, "w.sst", 1, &o, &b, NULL), WCS_OK);
  for (i = 0; i < 5000; i++) {
    uint8_t k[32];
    int n = snprintf((char *)k, 24, "k%06d", 2 * i), v;
    for (v = 3; v >= 1; v--) { /* three versions: one filter entry */
      wcs_put64(k + n, wcs_ikey_pack((uint64_t)(10 * i + v), WCS_KT_PUT));
      ck_assert_int_eq(sst_builder_add(b, k, (size_t)n + 8, NULL, 0, NULL),
                       WCS_OK);
    }
  }
  ck_assert_int_eq(sst_builder_finish(b, &meta, NULL), WCS_OK);
  ck_assert_int_eq(sst_reader_open(env, "w.sst", 1, 0, NULL, &r, NULL), WCS_OK);
  ck_assert_int_eq(sst_reader_bloom_prefixed(r), 0);
  for (i = 0; i < 10000; i++) {
    char z[32];
    int n = snprintf(z, sizeof z, "k%06d", i);
    int bMay = sst_reader_may_contain(r, z, (size_t)n);
    if (i % 2 == 0)
      ck_assert_int_eq(bMay, 1);
    else
      nFp += bMay;
  }
  ck_assert_int_le(nFp, 100); /* 2% of 5000 */
  sst_reader_close(r);
  sst_meta_clear(&meta);
  env->xDestroy(env);
}
END_TEST

Suite *storage_bloom_suite(void);
Suite *storage_bloom_suite(void) {
  Suite *s = suite_create("storage_bloom");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_bloom_has_no_false_negatives);
  tcase_add_test(tc, test_bloom_false_positive_rate_within_bounds);
  tcase_add_test(tc, test_bloom_without_bits_says_maybe_and_empty_says_no);
  tcase_add_test(tc, test_bloom_rejects_bad_layout);
  tcase_add_test(tc, test_sst_prefix_bloom_answers_for_whole_rows);
  tcase_add_test(tc, test_sst_whole_key_bloom_skips_absent_keys);
  suite_add_tcase(s, tc);
  return s;
}
