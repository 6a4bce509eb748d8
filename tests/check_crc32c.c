/*
** Tests of CRC-32C (storage/crc32c.c): the published test vectors, the
** incremental form, agreement of the hardware and table engines at every
** alignment, and the masking used when a CRC is stored.
*/
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "storage/sst.h"
#include "testutil.h"

START_TEST(test_crc32c_matches_published_vectors) {
  uint8_t a[32];
  int i;
  ck_assert_uint_eq(wcs_crc32c(0, "123456789", 9), 0xE3069283u);
  memset(a, 0, sizeof a);
  ck_assert_uint_eq(wcs_crc32c(0, a, 32), 0x8A9136AAu);
  memset(a, 0xff, sizeof a);
  ck_assert_uint_eq(wcs_crc32c(0, a, 32), 0x62A8AB43u);
  for (i = 0; i < 32; i++)
    a[i] = (uint8_t)i;
  ck_assert_uint_eq(wcs_crc32c(0, a, 32), 0x46DD794Eu);
  for (i = 0; i < 32; i++)
    a[i] = (uint8_t)(31 - i);
  ck_assert_uint_eq(wcs_crc32c(0, a, 32), 0x113FDB5Cu);
  ck_assert_uint_eq(wcs_crc32c(0, "", 0), 0);
  ck_assert_uint_eq(wcs_crc32c_portable(0, "123456789", 9), 0xE3069283u);
}
END_TEST

START_TEST(test_crc32c_extends_across_split_points) {
  uint8_t a[300];
  uint32_t whole;
  size_t i;
  tu_seed(0);
  tu_rand_bytes(a, sizeof a);
  whole = wcs_crc32c(0, a, sizeof a);
  for (i = 0; i <= sizeof a; i++) {
    uint32_t c = wcs_crc32c(0, a, i);
    ck_assert_uint_eq(wcs_crc32c(c, a + i, sizeof a - i), whole);
  }
}
END_TEST

START_TEST(test_crc32c_hardware_and_table_engines_agree) {
  static uint8_t a[70000];
  int k;
  tu_seed(0);
  tu_rand_bytes(a, sizeof a);
  for (k = 0; k < 2000; k++) {
    size_t off = tu_rand_range(64);
    size_t n = k < 200 ? (size_t)k : tu_rand_range(sizeof a - 64);
    uint32_t seed = (uint32_t)tu_rand();
    ck_assert_uint_eq(wcs_crc32c(seed, a + off, n),
                      wcs_crc32c_portable(seed, a + off, n));
  }
  /* The machine this runs on says which engine the first check used. */
  ck_assert(wcs_crc32c_hw() == 0 || wcs_crc32c_hw() == 1);
}
END_TEST

START_TEST(test_crc32c_mask_round_trips_and_changes_value) {
  uint32_t v[] = {0, 1, 0xE3069283u, 0xffffffffu, 0xa282ead8u};
  size_t i;
  for (i = 0; i < sizeof v / sizeof v[0]; i++) {
    ck_assert_uint_eq(wcs_crc_unmask(wcs_crc_mask(v[i])), v[i]);
    ck_assert_uint_ne(wcs_crc_mask(v[i]), v[i]);
  }
  /* LevelDB-compatible constant: mask(0) is the delta itself. */
  ck_assert_uint_eq(wcs_crc_mask(0), 0xa282ead8u);
}
END_TEST

Suite *crc32c_suite(void);
Suite *crc32c_suite(void) {
  Suite *s = suite_create("crc32c");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_crc32c_matches_published_vectors);
  tcase_add_test(tc, test_crc32c_extends_across_split_points);
  tcase_add_test(tc, test_crc32c_hardware_and_table_engines_agree);
  tcase_add_test(tc, test_crc32c_mask_round_trips_and_changes_value);
  suite_add_tcase(s, tc);
  return s;
}
