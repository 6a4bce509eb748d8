/*
** check_keyschema_codec.c — the row key codecs (keyschema/codec.c):
** golden bytes for every field and struct encoding (orderedcode's vectors,
** Bigtable's struct examples), the exact errors for values that would break
** sorted mode and for keys that do not decode, and property tests over
** random schemas and tuples: decode(encode(t)) == t, encode(decode(k)) == k,
** and byte order of keys == tuple order.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyschema/ksint.h"
#include "keyschema/schema.h"
#include "testutil.h"

Suite *keyschema_codec_suite(void);

static ks_schema *mustParse(const char *z) {
  ks_schema *s = NULL;
  char *zErr = NULL;
  int rc = ks_parse_text(z, &s, &zErr);
  ck_assert_msg(rc == WCS_OK, "parse of [%s] failed: %s", z, zErr);
  free(zErr);
  return s;
}

static ks_value S(const char *z) {
  ks_value v;
  memset(&v, 0, sizeof v);
  v.eType = KS_VAL_BYTES;
  v.p = (const uint8_t *)z;
  v.n = (int)strlen(z);
  return v;
}

static ks_value B(const void *p, int n) {
  ks_value v;
  memset(&v, 0, sizeof v);
  v.eType = KS_VAL_BYTES;
  v.p = p;
  v.n = n;
  return v;
}

static ks_value I(int64_t i) {
  ks_value v;
  memset(&v, 0, sizeof v);
  v.eType = KS_VAL_INT;
  v.i = i;
  return v;
}

static ks_value N(void) {
  ks_value v;
  memset(&v, 0, sizeof v);
  return v;
}

/* Hex of bytes, "00 3F 80" style, in a static buffer. */
static const char *hex(const uint8_t *a, size_t n) {
  static char z[8192];
  size_t i, j = 0;
  z[0] = 0;
  for (i = 0; i < n && j + 4 < sizeof z; i++) {
    j += (size_t)snprintf(z + j, sizeof z - j, "%s%02X", i ? " " : "", a[i]);
  }
  return z;
}

/* Encode and compare with hex; then decode and re-encode. */
static void checkGolden(const ks_schema *s, const ks_value *aVal,
                        const char *zHex) {
  wcs_buf b = {0}, b2 = {0}, scratch = {0};
  ks_value aOut[KS_MAX_FIELDS];
  char *zErr = NULL;
  int rc = ks_key_encode(s, aVal, &b, &zErr);
  ck_assert_msg(rc == WCS_OK, "encode failed: %s", zErr);
  ck_assert_str_eq(hex(b.a, b.n), zHex);
  rc = ks_key_decode(s, b.a, (int)b.n, aOut, &scratch, &zErr);
  ck_assert_msg(rc == WCS_OK, "decode of %s failed: %s", zHex, zErr);
  ck_assert_int_eq(ks_key_encode(s, aOut, &b2, &zErr), WCS_OK);
  ck_assert_str_eq(hex(b2.a, b2.n), zHex);
  wcs_buf_free(&b);
  wcs_buf_free(&b2);
  wcs_buf_free(&scratch);
}

/* ---- orderedcode integers */

static const struct {
  int64_t v;
  const char *zHex;
} aOcVec[] = {
    {0, "80"},
    {1, "81"},
    {-1, "7F"},
    {63, "BF"},
    {-64, "40"},
    {64, "C0 40"},
    {-65, "3F BF"},
    {255, "C0 FF"},
    {256, "C1 00"},
    {8191, "DF FF"},
    {8192, "E0 20 00"},
    {-8193, "1F DF FF"},
    {0x424242, "F0 42 42 42"},
    {(int64_t)1 << 48, "FF 01 00 00 00 00 00 00"},
    {(int64_t)1 << 55, "FF 80 80 00 00 00 00 00 00"},
    {(int64_t)1 << 62, "FF C0 40 00 00 00 00 00 00 00"},
    {INT64_MAX, "FF C0 7F FF FF FF FF FF FF FF"},
    {INT64_MIN, "00 3F 80 00 00 00 00 00 00 00"},
};

START_TEST(test_codec_orderedcode_int_vectors) {
  uint8_t a[10];
  int64_t v = 0;
  int n = ksOcPutInt(a, aOcVec[_i].v);
  ck_assert_str_eq(hex(a, (size_t)n), aOcVec[_i].zHex);
  ck_assert_int_eq(ksOcGetInt(a, n, &v), n);
  ck_assert_int_eq(v, aOcVec[_i].v);
  /* every shorter input is malformed */
  while (--n > 0)
    ck_assert_int_eq(ksOcGetInt(a, n, &v), 0);
}
END_TEST

START_TEST(test_codec_orderedcode_int_vectors_as_singleton_key) {
  ks_schema *s = mustParse("KEY (n INT64 ORDERED CODE)");
  ks_value v = I(aOcVec[_i].v);
  checkGolden(s, &v, aOcVec[_i].zHex);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_codec_orderedcode_rejects_non_minimal_forms) {
  int64_t v;
  static const uint8_t a1[] = {0xC0, 0x05}; /* 5 in two bytes */
  static const uint8_t a2[] = {0x3F, 0xFF}; /* -1 in two bytes */
  static const uint8_t a3[] = {0xFF, 0xC1, 0, 0, 0, 0, 0, 0, 0, 0}; /* >64b */
  static const uint8_t a4[] = {0xFF, 0xC0, 0x80, 0, 0,
                               0,    0,    0,    0, 0}; /* 2^63 */
  static const uint8_t a5[] = {0xFF, 0xE0};             /* 11-byte header */
  ck_assert_int_eq(ksOcGetInt(a1, 2, &v), 0);
  ck_assert_int_eq(ksOcGetInt(a2, 2, &v), 0);
  ck_assert_int_eq(ksOcGetInt(a3, 10, &v), 0);
  ck_assert_int_eq(ksOcGetInt(a4, 10, &v), 0);
  ck_assert_int_eq(ksOcGetInt(a5, 2, &v), 0);
}
END_TEST

START_TEST(test_codec_orderedcode_int_roundtrip_and_order) {
  uint8_t a[10], b[10];
  int i;
  tu_seed(0);
  for (i = 0; i < 100000; i++) {
    int64_t x = (int64_t)tu_rand() >> (tu_rand() % 64);
    int64_t y = (int64_t)tu_rand() >> (tu_rand() % 64);
    int64_t v;
    int nx = ksOcPutInt(a, x), ny = ksOcPutInt(b, y), c;
    ck_assert_int_eq(ksOcGetInt(a, nx, &v), nx);
    ck_assert_int_eq(v, x);
    c = memcmp(a, b, (size_t)(nx < ny ? nx : ny));
    if (c == 0) c = nx - ny;
    ck_assert_int_eq(c < 0, x < y);
    ck_assert_int_eq(c == 0, x == y);
  }
}
END_TEST

/* ---- struct encodings */

START_TEST(test_codec_struct_ordered_code_bigtable_examples) {
  ks_schema *s1 = mustParse("KEY (a STRING) ORDERED CODE");
  ks_schema *s2 = mustParse("KEY (a STRING, b STRING) ORDERED CODE");
  ks_schema *s3 = mustParse("KEY (a STRING, b STRING, c STRING) ORDERED CODE");
  ks_value v[3];
  v[0] = S("");
  checkGolden(s1, v, "00 00");
  v[0] = S("");
  v[1] = S("");
  checkGolden(s2, v, "00 00");
  v[1] = S("B");
  checkGolden(s2, v, "00 00 00 01 42");
  v[0] = S("A");
  v[1] = S("");
  checkGolden(s2, v, "41");
  v[0] = S("");
  v[1] = S("B");
  v[2] = S("");
  checkGolden(s3, v, "00 00 00 01 42");
  v[0] = S("A");
  v[1] = S("");
  v[2] = S("C");
  checkGolden(s3, v, "41 00 01 00 00 00 01 43");
  ks_schema_free(s2);
  /* 00 inside a field is escaped as 00 FF; FF is not escaped */
  s2 = mustParse("KEY (a BYTES, b BYTES) ORDERED CODE");
  v[0] = B("a\0b", 3);
  v[1] = B("\xff", 1);
  checkGolden(s2, v, "61 00 FF 62 00 01 FF");
  v[0] = B("\0", 1);
  v[1] = B("", 0);
  checkGolden(s2, v, "00 FF");
  ks_schema_free(s1);
  ks_schema_free(s2);
  ks_schema_free(s3);
}
END_TEST

START_TEST(test_codec_struct_ordered_code_with_integers) {
  ks_schema *s = mustParse("KEY (a STRING, n INT64, t TIMESTAMP BIG ENDIAN) "
                           "ORDERED CODE");
  ks_value v[3] = {S("x"), I(INT64_MIN), I(258)};
  checkGolden(s, v,
              "78 00 01 00 FF 3F 80 00 FF 00 FF 00 FF 00 FF 00 FF 00 FF 00 FF"
              " 00 01 00 FF 00 FF 00 FF 00 FF 00 FF 00 FF 01 02");
  v[0] = S("");
  v[1] = I(0);
  v[2] = I(0);
  checkGolden(s, v,
              "00 00 00 01 80 00 01 00 FF 00 FF 00 FF 00 FF 00 FF 00 FF 00 FF"
              " 00 FF");
  ks_schema_free(s);
}
END_TEST

START_TEST(test_codec_struct_delimited_schema_guide_example) {
  ks_schema *s = mustParse("KEY (device STRING, id STRING, day INT64 "
                           "DECIMAL(8)) DELIMITED BY '#'");
  ks_value v[3] = {S("phone"), S("4c410523"), I(20200501)};
  wcs_buf b = {0};
  checkGolden(s, v,
              "70 68 6F 6E 65 23 34 63 34 31 30 35 32 33 23 32 30 32 "
              "30 30 35 30 31");
  ck_assert_int_eq(ks_key_encode(s, v, &b, NULL), WCS_OK);
  ck_assert_int_eq((int)b.n, 23);
  ck_assert(memcmp(b.a, "phone#4c410523#20200501", 23) == 0);
  /* empty fields are allowed: "##" */
  v[0] = S("");
  v[1] = S("");
  v[2] = I(7);
  checkGolden(s, v, "23 23 30 30 30 30 30 30 30 37");
  wcs_buf_free(&b);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_codec_struct_delimited_multibyte_and_nul_delimiters) {
  ks_schema *s = mustParse("KEY (a STRING, b BYTES) DELIMITED BY '#|'");
  ks_schema *s0 = mustParse("KEY (a STRING, b STRING) DELIMITED BY X'00'");
  ks_value v[2] = {S("ab"), S("$")};
  checkGolden(s, v, "61 62 23 7C 24");
  v[0] = B("\x01", 1);
  v[1] = S("");
  checkGolden(s0, v, "01 00");
  ks_schema_free(s);
  ks_schema_free(s0);
}
END_TEST

START_TEST(test_codec_field_encodings_golden) {
  ks_schema *s;
  ks_value v;
  s = mustParse("KEY (n INT64 BIG ENDIAN)");
  v = I(258);
  checkGolden(s, &v, "00 00 00 00 00 00 01 02");
  v = I(INT64_MAX);
  checkGolden(s, &v, "7F FF FF FF FF FF FF FF");
  ks_schema_free(s);
  s = mustParse("KEY (t TIMESTAMP DECIMAL(5))");
  v = I(42);
  checkGolden(s, &v, "30 30 30 34 32");
  ks_schema_free(s);
  s = mustParse("KEY (t TIMESTAMP REVERSED DECIMAL(4))");
  v = I(1);
  checkGolden(s, &v, "39 39 39 38"); /* 9999 - 1 = "9998" */
  v = I(0);
  checkGolden(s, &v, "39 39 39 39");
  v = I(9999);
  checkGolden(s, &v, "30 30 30 30");
  ks_schema_free(s);
  s = mustParse("KEY (n INT64 DECIMAL(19))");
  v = I(INT64_MAX);
  checkGolden(s, &v,
              "39 32 32 33 33 37 32 30 33 36 38 35 34 37 37 35 38 30 37");
  ks_schema_free(s);
  s = mustParse("KEY (n INT64 REVERSED DECIMAL(19))");
  v = I(0);
  checkGolden(s, &v,
              "39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39 39");
  ks_schema_free(s);
  s = mustParse("KEY (k BYTES)");
  v = B("\x00\xff\x23", 3);
  checkGolden(s, &v, "00 FF 23");
  ks_schema_free(s);
  s = mustParse("KEY (k STRING)");
  v = S("\xc3\xa9t\xc3\xa9");
  checkGolden(s, &v, "C3 A9 74 C3 A9");
  ks_schema_free(s);
}
END_TEST

START_TEST(test_codec_salt_byte_is_xxh3_of_the_rest) {
  ks_schema *s = mustParse("KEY (device STRING, id STRING) SALT 4");
  ks_schema *s16 = mustParse("KEY (device STRING, id STRING) SALT 16");
  ks_value v[2] = {S("phone"), S("4c41")};
  /* XXH3_64bits("phone#4c41") = 0xd9418b07ea108e3e: % 4 = 2, % 16 = 14 */
  checkGolden(s, v, "02 70 68 6F 6E 65 23 34 63 34 31");
  checkGolden(s16, v, "0E 70 68 6F 6E 65 23 34 63 34 31");
  ck_assert_int_eq(ks_salt_bucket(s, (const uint8_t *)"phone#4c41", 10), 2);
  ks_schema_free(s);
  ks_schema_free(s16);
}
END_TEST

START_TEST(test_codec_prefix_includes_the_delimiter) {
  ks_schema *s = mustParse("KEY (device STRING, id STRING, day INT64 "
                           "DECIMAL(8)) DELIMITED BY '#'");
  ks_schema *oc = mustParse("KEY (a STRING, n INT64) ORDERED CODE");
  ks_schema *oc2 = mustParse("KEY (a STRING, b STRING) ORDERED CODE");
  ks_value v[3] = {S("phone"), S("4c41"), I(20200501)};
  wcs_buf b = {0};
  ck_assert_int_eq(ks_key_prefix(s, v, 2, &b, NULL), WCS_OK);
  ck_assert_str_eq(hex(b.a, b.n), "70 68 6F 6E 65 23 34 63 34 31 23");
  b.n = 0;
  ck_assert_int_eq(ks_key_prefix(s, v, 0, &b, NULL), WCS_OK);
  ck_assert_int_eq((int)b.n, 0);
  ck_assert_int_eq(ks_key_prefix(s, v, 3, &b, NULL), WCS_OK);
  ck_assert_int_eq((int)b.n, 19);
  b.n = 0;
  /* ORDERED CODE: the separator follows when a later field is never empty */
  ck_assert_int_eq(ks_key_prefix(oc, v, 1, &b, NULL), WCS_OK);
  ck_assert_str_eq(hex(b.a, b.n), "70 68 6F 6E 65 00 01");
  b.n = 0;
  /* ... but not when the rest may be empty (a key may end right there) */
  ck_assert_int_eq(ks_key_prefix(oc2, v, 1, &b, NULL), WCS_OK);
  ck_assert_str_eq(hex(b.a, b.n), "70 68 6F 6E 65");
  wcs_buf_free(&b);
  ks_schema_free(s);
  ks_schema_free(oc);
  ks_schema_free(oc2);
}
END_TEST

START_TEST(test_codec_prefix_of_a_key_identifies_its_leading_fields) {
  ks_schema *oc = mustParse("KEY (a STRING, b STRING, c STRING) ORDERED CODE "
                            "SALT 2");
  ks_schema *dl = mustParse("KEY (a STRING, b STRING, c STRING)");
  ks_value v1[3] = {S("x"), S(""), S("")}, v2[3] = {S("x"), S(""), S("c")};
  wcs_buf k1 = {0}, k2 = {0}, p1 = {0}, p2 = {0};
  int m;
  for (m = 0; m <= 3; m++) {
    k1.n = k2.n = p1.n = p2.n = 0;
    ck_assert_int_eq(ks_key_encode(oc, v1, &k1, NULL), WCS_OK);
    ck_assert_int_eq(ks_key_encode(oc, v2, &k2, NULL), WCS_OK);
    ck_assert_int_eq(ks_key_prefix_of(oc, k1.a, (int)k1.n, m, &p1), WCS_OK);
    ck_assert_int_eq(ks_key_prefix_of(oc, k2.a, (int)k2.n, m, &p2), WCS_OK);
    /* ("x","","") and ("x","","c") share exactly their first two fields */
    ck_assert_int_eq(p1.n == p2.n && memcmp(p1.a, p2.a, p1.n) == 0, m < 3);
  }
  p1.n = 0;
  ck_assert_int_eq(ks_key_prefix_of(dl, (const uint8_t *)"ph#4c#1", 7, 2, &p1),
                   WCS_OK);
  ck_assert_str_eq(hex(p1.a, p1.n), "70 68 23 34 63 23");
  ck_assert_int_eq(ks_key_prefix_of(dl, (const uint8_t *)"ph#4c", 5, 1, &p1),
                   WCS_MISMATCH);
  wcs_buf_free(&k1);
  wcs_buf_free(&k2);
  wcs_buf_free(&p1);
  wcs_buf_free(&p2);
  ks_schema_free(oc);
  ks_schema_free(dl);
}
END_TEST

/* ---- errors on encode */

static void checkEncodeError(const char *zSchema, const ks_value *aVal,
                             int rcWant, const char *zWant) {
  ks_schema *s = mustParse(zSchema);
  wcs_buf b = {0};
  char *zErr = NULL;
  int rc;
  ck_assert_int_eq(wcs_buf_append(&b, "xy", 2), WCS_OK);
  rc = ks_key_encode(s, aVal, &b, &zErr);
  ck_assert_msg(rc == rcWant, "rc %d (%s), expected %d", rc, zErr, rcWant);
  ck_assert_str_eq(zErr, zWant);
  ck_assert_int_eq((int)b.n, 2); /* the buffer is left as it was */
  free(zErr);
  wcs_buf_free(&b);
  ks_schema_free(s);
}

START_TEST(test_codec_encode_rejects_values_that_break_sorted_mode) {
  static const char zDel[] = "KEY (device STRING, id STRING, day INT64 "
                             "DECIMAL(8)) DELIMITED BY '#'";
  ks_value v[3] = {S("phone"), S("4c#41"), I(1)};
  checkEncodeError(zDel, v, WCS_CONSTRAINT,
                   "key field \"id\" holds byte 0x23 at offset 2, which is "
                   "not above the delimiter's first byte 0x23: delimited "
                   "fields may only hold bytes above it, or keys would not "
                   "sort by field");
  v[1] = S("a b");
  checkEncodeError(zDel, v, WCS_CONSTRAINT,
                   "key field \"id\" holds byte 0x20 at offset 1, which is "
                   "not above the delimiter's first byte 0x23: delimited "
                   "fields may only hold bytes above it, or keys would not "
                   "sort by field");
  v[1] = S("x");
  v[2] = I(-1);
  checkEncodeError(zDel, v, WCS_RANGE,
                   "key field \"day\" is DECIMAL(8), "
                   "which holds only values >= 0; got -1");
  v[2] = I(123456789);
  checkEncodeError(zDel, v, WCS_RANGE,
                   "key field \"day\" is DECIMAL(8); "
                   "123456789 has more than 8 digits");
  v[2] = N();
  checkEncodeError(zDel, v, WCS_CONSTRAINT,
                   "key field \"day\" may not be NULL");
  v[2] = S("20200501");
  checkEncodeError(zDel, v, WCS_MISMATCH,
                   "key field \"day\" is INT64; got "
                   "a non-integer value");
  v[0] = I(5);
  checkEncodeError(zDel, v, WCS_MISMATCH,
                   "key field \"device\" is STRING; got a number");
  v[0] = S("caf\xc3");
  v[2] = I(1);
  checkEncodeError(zDel, v, WCS_CONSTRAINT,
                   "key field \"device\": invalid UTF-8 at offset 3");
  v[0] = I(-5);
  checkEncodeError("KEY (n INT64 BIG ENDIAN)", v, WCS_RANGE,
                   "key field \"n\" is BIG ENDIAN, which sorts only values "
                   ">= 0 (negative values would sort after positive ones); "
                   "got -5; use ORDERED CODE for negative values");
  v[0] = I(10000);
  checkEncodeError("KEY (t TIMESTAMP REVERSED DECIMAL(4))", v, WCS_RANGE,
                   "key field \"t\" is REVERSED DECIMAL(4); 10000 has more "
                   "than 4 digits");
}
END_TEST

START_TEST(test_codec_delimited_fields_checked_at_every_offset) {
  /* A delimited field is checked eight bytes at a time: each bad byte, at
  ** any offset of fields up to 24 bytes, is reported as the byte-by-byte
  ** check reports it (the first bad byte; invalid UTF-8 before any
  ** delimiter byte), and good fields give the field bytes unchanged. */
  static const char zDel[] = "KEY (a STRING, b BYTES) DELIMITED BY '#'";
  static const uint8_t aBad[] = {0x00, 0x01, 0x20, 0x22, 0x23};
  char zWant[300];
  uint8_t z[32];
  int n, k, j, iCase;
  for (n = 0; n <= 24; n++) {
    ks_value v[2];
    ks_schema *s = mustParse(zDel);
    wcs_buf b = {0};
    char *zErr = NULL;
    for (k = 0; k < n; k++)
      z[k] = (uint8_t)('$' + (k * 7) % 90); /* 0x24 .. 0x7D */
    v[0] = B(z, n);
    v[1] = B(z, n);
    ck_assert_int_eq(ks_key_encode(s, v, &b, &zErr), WCS_OK);
    ck_assert_int_eq((int)b.n, 2 * n + 1);
    ck_assert(memcmp(b.a, z, (size_t)n) == 0 && b.a[n] == '#' &&
              memcmp(b.a + n + 1, z, (size_t)n) == 0);
    wcs_buf_free(&b);
    /* valid UTF-8 above the delimiter: accepted by the slow path */
    if (n >= 2) {
      uint8_t sv[2] = {z[n - 2], z[n - 1]};
      z[n - 2] = 0xC3;
      z[n - 1] = 0xA9;
      ck_assert_int_eq(ks_key_encode(s, v, &b, &zErr), WCS_OK);
      ck_assert_int_eq((int)b.n, 2 * n + 1);
      wcs_buf_free(&b);
      /* invalid UTF-8 in the STRING field; then a delimiter byte too */
      z[n - 1] = 0x41;
      ks_schema_free(s);
      {
        ks_value w[2];
        w[0] = B(z, n);
        w[1] = S("ok");
        snprintf(zWant, sizeof zWant,
                 "key field \"a\": invalid UTF-8 at offset %d", n - 2);
        checkEncodeError(zDel, w, WCS_CONSTRAINT, zWant);
      }
      if (n >= 3) z[0] = '#';
      for (iCase = 0; iCase < 2; iCase++) {
        ks_value w[2];
        w[0] = iCase ? S("ok") : B(z, n);
        w[1] = iCase ? B(z, n) : S("ok");
        if (iCase == 0) {
          snprintf(zWant, sizeof zWant,
                   "key field \"a\": invalid UTF-8 at offset %d", n - 2);
          checkEncodeError(zDel, w, WCS_CONSTRAINT, zWant);
        } else if (n >= 3) {
          /* BYTES: no UTF-8 check; the delimiter byte at 0 is reported */
          snprintf(zWant, sizeof zWant,
                   "key field \"b\" holds byte 0x23 at offset 0, which is "
                   "not above the delimiter's first byte 0x23: delimited "
                   "fields may only hold bytes above it, or keys would not "
                   "sort by field");
          checkEncodeError(zDel, w, WCS_CONSTRAINT, zWant);
        }
      }
      z[0] = (uint8_t)'$';
      z[n - 2] = sv[0];
      z[n - 1] = sv[1];
      s = mustParse(zDel);
    }
    ks_schema_free(s);
    for (k = 0; k < n; k++) {
      for (j = 0; j < (int)sizeof(aBad); j++) {
        uint8_t c = z[k];
        ks_value w[2];
        z[k] = aBad[j];
        w[0] = B(z, n);
        w[1] = S("ok");
        snprintf(zWant, sizeof zWant,
                 "key field \"a\" holds byte 0x%02X at offset %d, which is "
                 "not above the delimiter's first byte 0x23: delimited "
                 "fields may only hold bytes above it, or keys would not "
                 "sort by field",
                 aBad[j], k);
        checkEncodeError(zDel, w, WCS_CONSTRAINT, zWant);
        if (k + 1 < n) {
          /* a later bad byte too: the first is reported */
          uint8_t c2 = z[n - 1];
          z[n - 1] = 0x01;
          checkEncodeError(zDel, w, WCS_CONSTRAINT, zWant);
          z[n - 1] = c2;
        }
        z[k] = c;
      }
    }
  }
}
END_TEST

START_TEST(test_codec_decimal_fields_of_every_width) {
  /* DECIMAL(w) and REVERSED DECIMAL(w) field bytes are the w digits of
  ** the value (or of 10^w - 1 - value), zero-padded, for every width. */
  int w, k;
  tu_seed(0);
  for (w = 1; w <= 19; w++) {
    char zSchema[80];
    ks_schema *s;
    uint64_t vMax = 1, vTop;
    for (k = 0; k < w; k++)
      vMax *= 10;
    vMax -= 1;
    /* DECIMAL(19) holds only up to INT64_MAX */
    vTop = vMax > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : vMax;
    snprintf(zSchema, sizeof zSchema, "KEY (t INT64 DECIMAL(%d))", w);
    s = mustParse(zSchema);
    for (k = 0; k < 200; k++) {
      uint64_t x = k == 0   ? 0
                   : k == 1 ? vTop
                   : k == 2 ? (vTop > 0xFFFFFFFFu ? 0xFFFFFFFFu : vTop / 2)
                   : k == 3 ? (vTop > 0xFFFFFFFFu ? 0x100000000u : vTop / 3)
                            : tu_rand_range(vTop + 1);
      ks_value v = I((int64_t)x);
      wcs_buf b = {0};
      char *zErr = NULL;
      char zWant[32];
      ck_assert_int_eq(ks_key_encode(s, &v, &b, &zErr), WCS_OK);
      snprintf(zWant, sizeof zWant, "%0*llu", w, (unsigned long long)x);
      ck_assert_int_eq((int)b.n, w);
      ck_assert_msg(memcmp(b.a, zWant, (size_t)w) == 0, "w %d: %.*s for %s", w,
                    w, (const char *)b.a, zWant);
      wcs_buf_free(&b);
    }
    ks_schema_free(s);
    snprintf(zSchema, sizeof zSchema, "KEY (t INT64 REVERSED DECIMAL(%d))", w);
    s = mustParse(zSchema);
    for (k = 0; k < 50; k++) {
      uint64_t x = k == 0 ? 0 : k == 1 ? vTop : tu_rand_range(vTop + 1);
      ks_value v = I((int64_t)x);
      wcs_buf b = {0};
      char *zErr = NULL;
      char zWant[32];
      ck_assert_int_eq(ks_key_encode(s, &v, &b, &zErr), WCS_OK);
      snprintf(zWant, sizeof zWant, "%0*llu", w,
               (unsigned long long)(vMax - x));
      ck_assert_int_eq((int)b.n, w);
      ck_assert(memcmp(b.a, zWant, (size_t)w) == 0);
      wcs_buf_free(&b);
    }
    ks_schema_free(s);
  }
}
END_TEST

START_TEST(test_codec_encode_rejects_keys_over_4096_bytes) {
  ks_schema *s = mustParse("KEY (k BYTES) SALT 2");
  static uint8_t a[4096];
  ks_value v = B(a, 4095);
  wcs_buf b = {0};
  char *zErr = NULL;
  ck_assert_int_eq(ks_key_encode(s, &v, &b, &zErr), WCS_OK);
  ck_assert_int_eq((int)b.n, 4096);
  b.n = 0;
  v.n = 4096;
  ck_assert_int_eq(ks_key_encode(s, &v, &b, &zErr), WCS_TOOBIG);
  ck_assert_str_eq(zErr, "the row key would have 4097 bytes; the limit is "
                         "4096");
  ck_assert_int_eq((int)b.n, 0);
  free(zErr);
  wcs_buf_free(&b);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_codec_encode_accepts_integral_reals) {
  ks_schema *s = mustParse("KEY (n INT64)");
  ks_value v;
  wcs_buf b = {0};
  memset(&v, 0, sizeof v);
  v.eType = KS_VAL_REAL;
  v.r = 64.0;
  ck_assert_int_eq(ks_key_encode(s, &v, &b, NULL), WCS_OK);
  ck_assert_str_eq(hex(b.a, b.n), "C0 40");
  v.r = 0.5;
  ck_assert_int_eq(ks_key_encode(s, &v, &b, NULL), WCS_MISMATCH);
  wcs_buf_free(&b);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_codec_no_key_schema_is_misuse) {
  ks_schema *s = mustParse("TABLE 't'");
  ks_value v = S("x");
  wcs_buf b = {0};
  char *zErr = NULL;
  ck_assert_int_eq(ks_key_encode(s, &v, &b, &zErr), WCS_MISUSE);
  free(zErr);
  zErr = NULL;
  ck_assert_int_eq(ks_key_decode(s, (const uint8_t *)"x", 1, &v, &b, &zErr),
                   WCS_MISUSE);
  free(zErr);
  ks_schema_free(s);
}
END_TEST

/* ---- errors on decode */

static const struct {
  const char *zSchema;
  const char *zKey; /* bytes; \x escapes as C allows */
  int nKey;         /* -1: strlen */
  const char *zErr;
} aBadKey[] = {
    {"KEY (device STRING, id STRING, day INT64 DECIMAL(8))", "phone#4c41", -1,
     "row key 'phone#4c41' does not match the key schema: fewer fields than "
     "the key schema has"},
    {"KEY (device STRING, id STRING, day INT64 DECIMAL(8))",
     "phone#4c41#20200501#x", -1,
     "row key 'phone#4c41#20200501#x' does not match the key schema: more "
     "fields than the key schema has"},
    {"KEY (device STRING, id STRING, day INT64 DECIMAL(8))",
     "phone#4c41#2020050", -1,
     "row key 'phone#4c41#2020050' does not match the key schema: field "
     "\"day\": wrong number of digits"},
    {"KEY (device STRING, id STRING, day INT64 DECIMAL(8))",
     "phone#4c41#2020o501", -1,
     "row key 'phone#4c41#2020o501' does not match the key schema: field "
     "\"day\": not a decimal digit"},
    {"KEY (device STRING, id STRING, day INT64 DECIMAL(8))",
     "pho ne#4c41#20200501", -1,
     "row key 'pho ne#4c41#20200501' does not match the key schema: field "
     "\"device\": a byte at or below the delimiter inside a field"},
    {"KEY (device STRING, id STRING)", "ph\xc3#x", -1,
     "row key 'ph\\xC3#x' does not match the key schema: field \"device\": "
     "invalid UTF-8"},
    {"KEY (a STRING, b STRING) DELIMITED BY '#|'", "a#b", -1,
     "row key 'a#b' does not match the key schema: field \"a\": a byte at or "
     "below the delimiter inside a field"},
    {"KEY (a STRING, b STRING) ORDERED CODE", "A\x00\x01\x00\x00", 5,
     "row key 'A\\x00\\x01\\x00\\x00' does not match the key schema: field "
     "\"b\": a trailing empty field that should have been dropped"},
    {"KEY (a STRING, b STRING) ORDERED CODE", "A\x00\x02", 3,
     "row key 'A\\x00\\x02' does not match the key schema: field \"a\": a 00 "
     "byte that is neither 00 FF (escape) nor 00 01 (separator)"},
    {"KEY (a STRING, b STRING) ORDERED CODE", "A\x00\x01", 3,
     "row key 'A\\x00\\x01' does not match the key schema: field \"b\": a "
     "separator at the end of the key"},
    {"KEY (a STRING, b STRING) ORDERED CODE",
     "A\x00\x01"
     "B\x00\x01"
     "C",
     7,
     "row key 'A\\x00\\x01B\\x00\\x01C' does not match the key schema: more "
     "fields than the key schema has"},
    {"KEY (a STRING, b STRING) ORDERED CODE", "", 0,
     "row key '' does not match the key schema: an empty key (an all-empty "
     "key is 00 00)"},
    {"KEY (a STRING, b STRING) ORDERED CODE",
     "\x00\x01"
     "B",
     3,
     "row key '\\x00\\x01B' does not match the key schema: field \"a\": an "
     "empty field not written as 00 00"},
    {"KEY (a STRING, n INT64) ORDERED CODE", "A", 1,
     "row key 'A' does not match the key schema: field \"n\": not one "
     "ORDERED CODE integer"},
    {"KEY (n INT64)", "\xC0\x05", 2,
     "row key '\\xC0\\x05' does not match the key schema: field \"n\": not "
     "one ORDERED CODE integer"},
    {"KEY (n INT64 BIG ENDIAN)", "\xff\xff\xff\xff\xff\xff\xff\xfb", 8,
     "row key '\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFB' does not match the "
     "key schema: field \"n\": a negative BIG ENDIAN integer (only values >= "
     "0 sort)"},
    {"KEY (n INT64 BIG ENDIAN)", "\x00\x01", 2,
     "row key '\\x00\\x01' does not match the key schema: field \"n\": BIG "
     "ENDIAN integers have 8 bytes"},
    {"KEY (n INT64 DECIMAL(19))", "9999999999999999999", -1,
     "row key '9999999999999999999' does not match the key schema: field "
     "\"n\": value beyond the INT64 range"},
    {"KEY (device STRING, id STRING) SALT 4", "\x01phone#4c41", -1,
     "row key '\\x01phone#4c41' does not match the key schema: the salt byte "
     "does not match the hash of the rest of the key"},
    {"KEY (device STRING, id STRING) SALT 4", "", 0,
     "row key '' does not match the key schema: no salt byte"},
};

START_TEST(test_codec_decode_names_the_key_and_the_problem) {
  ks_schema *s = mustParse(aBadKey[_i].zSchema);
  ks_value aOut[KS_MAX_FIELDS];
  wcs_buf scratch = {0};
  char *zErr = NULL;
  int n =
      aBadKey[_i].nKey < 0 ? (int)strlen(aBadKey[_i].zKey) : aBadKey[_i].nKey;
  int rc = ks_key_decode(s, (const uint8_t *)aBadKey[_i].zKey, n, aOut,
                         &scratch, &zErr);
  ck_assert_int_eq(rc, WCS_MISMATCH);
  ck_assert_str_eq(zErr, aBadKey[_i].zErr);
  free(zErr);
  wcs_buf_free(&scratch);
  ks_schema_free(s);
}
END_TEST

/* Split, then decode each field: the same error as ks_key_decode, found
** at the field that holds the problem (or at the split for structure). */
START_TEST(test_codec_split_then_field_decode_reports_as_decode_does) {
  ks_schema *s = mustParse(aBadKey[_i].zSchema);
  ks_value aOut[KS_MAX_FIELDS];
  wcs_buf scratch = {0};
  char *zErr = NULL;
  const uint8_t *pKey = (const uint8_t *)aBadKey[_i].zKey;
  int n =
      aBadKey[_i].nKey < 0 ? (int)strlen(aBadKey[_i].zKey) : aBadKey[_i].nKey;
  int i, rc = ks_key_split(s, pKey, n, aOut, &scratch, &zErr);
  for (i = 0; rc == WCS_OK && i < s->nField; i++) {
    ck_assert_int_eq(aOut[i].eType, KS_VAL_BYTES);
    rc = ks_key_field_decode(s, i, &aOut[i], pKey, n, &zErr);
  }
  ck_assert_int_eq(rc, WCS_MISMATCH);
  ck_assert_str_eq(zErr, aBadKey[_i].zErr);
  free(zErr);
  wcs_buf_free(&scratch);
  ks_schema_free(s);
}
END_TEST

/* A random earlier key of schema s that splits: random field values
** encoded (ORDERED CODE: strings and bytes may be empty or hold 00 bytes,
** integers are of every size), or fields of letters joined by the
** delimiter. */
static int randomKey(const ks_schema *s, uint8_t *aKey) {
  static const uint8_t aOcByte[] = {0x00, 0x00, 0x01, 'a', 'q', 'z', 0xFF};
  uint8_t aaByte[KS_MAX_FIELDS][6];
  ks_value aV[KS_MAX_FIELDS];
  wcs_buf key = {0};
  int i, j, n;
  if (s->eStruct != KS_STRUCT_ORDERED_CODE) {
    n = 0;
    for (i = 0; i < s->nField; i++) {
      int nF = (int)tu_rand_range(5);
      if (i > 0) {
        memcpy(aKey + n, s->aDelim, (size_t)s->nDelim);
        n += s->nDelim;
      }
      for (j = 0; j < nF; j++)
        aKey[n++] = (uint8_t)('a' + tu_rand_range(26));
    }
    return n;
  }
  for (i = 0; i < s->nField; i++) {
    if (s->aField[i].eType == KS_INT64 || s->aField[i].eType == KS_TIMESTAMP) {
      /* 1 to 63 random bits, either sign (a timestamp is not negative) */
      int64_t v = (int64_t)(tu_rand() >> (1 + tu_rand_range(63)));
      aV[i] = I(
          tu_rand_range(2) || s->aField[i].eType == KS_TIMESTAMP ? v : -v - 1);
    } else {
      int nF = tu_rand_range(4) ? (int)tu_rand_range(7) : 0;
      /* (a STRING field takes no FF: it must be UTF-8) */
      const int nAlpha =
          (int)sizeof aOcByte - (s->aField[i].eType == KS_STRING);
      for (j = 0; j < nF && j < 6; j++)
        aaByte[i][j] = tu_rand_range(3)
                           ? (uint8_t)('a' + tu_rand_range(26))
                           : aOcByte[tu_rand_range((uint64_t)nAlpha)];
      aV[i] = B(aaByte[i], nF < 6 ? nF : 6);
    }
  }
  ck_assert_int_eq(ks_key_encode(s, aV, &key, NULL), WCS_OK);
  ck_assert_uint_le(key.n, 60);
  memcpy(aKey, key.a, key.n);
  n = (int)key.n;
  wcs_buf_free(&key);
  return n;
}

/* Splitting again from a field boundary of an earlier key that the new
** key shares gives what a whole split gives: the same views (the same
** bytes, where a field is unescaped), the same boundaries, or the same
** error. New keys are the earlier one up to a boundary, then random bytes
** over an alphabet of field bytes, delimiter bytes, bytes below the
** delimiter and ORDERED CODE's escape and separator bytes, so that both
** good and bad tails occur. */
START_TEST(test_codec_split_from_matches_a_whole_split) {
  static const char *azSchema[] = {
      "KEY (a STRING, b STRING, c INT64 DECIMAL(4)) DELIMITED BY '#'",
      "KEY (a BYTES, b BYTES, c BYTES, d STRING) DELIMITED BY '::'",
      "KEY (a STRING, b STRING) DELIMITED BY '#'",
      "KEY (a BYTES, n INT64, b BYTES) ORDERED CODE",
      "KEY (n INT64 ORDERED CODE, a STRING, m INT64 ORDERED CODE) "
      "ORDERED CODE",
      "KEY (a BYTES, b BYTES) ORDERED CODE"};
  static const uint8_t aAlpha[] = {'#', ':',  '0',  '7',  'a',
                                   'z', 0x01, 0xC3, 0x00, 0xFF};
  int iS, iRound, nOk = 0, nBad = 0, nEsc = 0, nMissing = 0;
  tu_seed(0);
  for (iS = 0; iS < (int)(sizeof azSchema / sizeof azSchema[0]); iS++) {
    ks_schema *s = mustParse(azSchema[iS]);
    ck_assert(ks_key_split_resumes(s));
    for (iRound = 0; iRound < 4000; iRound++) {
      uint8_t aPrev[80], aKey[80];
      ks_value aP[KS_MAX_FIELDS], aW[KS_MAX_FIELDS], aF[KS_MAX_FIELDS];
      int aOffP[KS_MAX_FIELDS], aOffW[KS_MAX_FIELDS], aOffF[KS_MAX_FIELDS];
      wcs_buf scratchP = {0}, scratchW = {0}, scratchF = {0};
      char *zW = NULL, *zF = NULL;
      int nPrev, nKey, k, i, nOff, rcW, rcF, nKeep;
      nPrev = randomKey(s, aPrev);
      ck_assert_int_eq(
          ks_key_split_from(s, aPrev, nPrev, 0, 0, aP, aOffP, &scratchP, &zW),
          WCS_OK);
      /* the boundaries a split may start at: fields the key holds, up to
      ** and including the first unescaped one (the views before k must
      ** be in the key) */
      for (nKeep = 0; nKeep < s->nField && aOffP[nKeep] >= 0; nKeep++) {
        if (aP[nKeep].p != aPrev + aOffP[nKeep]) {
          nKeep++;
          nEsc++;
          break;
        }
      }
      if (nKeep < s->nField) nMissing++;
      if (nKeep < 2) {
        wcs_buf_free(&scratchP);
        continue;
      }
      k = 1 + (int)tu_rand_range((uint64_t)(nKeep - 1));
      nOff = aOffP[k];
      memcpy(aKey, aPrev, (size_t)nOff);
      nKey = nOff + (int)tu_rand_range(12);
      for (i = nOff; i < nKey; i++)
        aKey[i] = tu_rand_range(3) ? (uint8_t)('a' + tu_rand_range(26))
                                   : aAlpha[tu_rand_range(sizeof aAlpha)];
      rcW = ks_key_split_from(s, aKey, nKey, 0, 0, aW, aOffW, &scratchW, &zW);
      ck_assert_int_eq(rcW, ks_key_split(s, aKey, nKey, aF, &scratchF, NULL));
      for (i = 0; i < k; i++) {
        aF[i] = aP[i];
        aF[i].p = aKey + (aP[i].p - aPrev);
      }
      rcF =
          ks_key_split_from(s, aKey, nKey, k, nOff, aF, aOffF, &scratchF, &zF);
      ck_assert_int_eq(rcF, rcW);
      if (rcW == WCS_OK) {
        nOk++;
        for (i = 0; i < s->nField; i++) {
          ck_assert_int_eq(aF[i].eType, KS_VAL_BYTES);
          ck_assert_int_eq(aF[i].n, aW[i].n);
          if (aW[i].p >= aKey && aW[i].p <= aKey + nKey) {
            ck_assert_ptr_eq(aF[i].p, aW[i].p);
          } else if (aW[i].n > 0) {
            ck_assert_mem_eq(aF[i].p, aW[i].p, (size_t)aW[i].n);
          }
          if (i >= k) ck_assert_int_eq(aOffF[i], aOffW[i]);
        }
      } else {
        nBad++;
        ck_assert_str_eq(zF, zW);
      }
      free(zW);
      free(zF);
      wcs_buf_free(&scratchP);
      wcs_buf_free(&scratchW);
      wcs_buf_free(&scratchF);
    }
    ks_schema_free(s);
  }
  ck_assert_int_gt(nOk, 5000);
  ck_assert_int_gt(nBad, 5000);
  ck_assert_int_gt(nEsc, 500);
  ck_assert_int_gt(nMissing, 500);
}
END_TEST

/* The last field as an integer, taken from its offset in an earlier split,
** says yes exactly when the whole split and the field's decode do, with
** the same value; it says no (WCS_MISMATCH) for every key they reject and
** for schemas it does not handle, whose keys then take that general path.
** Keys are random digits, delimiters and bytes around them. */
START_TEST(test_codec_last_int_matches_split_and_decode) {
  static const struct {
    const char *zSchema;
    int bHandled; /* ks_key_last_int decodes its good keys */
  } aS[] = {
      {"KEY (a STRING, d INT64 DECIMAL(4)) DELIMITED BY '#'", 1},
      {"KEY (a STRING, b STRING, t TIMESTAMP REVERSED DECIMAL(5)) "
       "DELIMITED BY '#'",
       1},
      /* eight digits: the inline path */
      {"KEY (a STRING, d INT64 DECIMAL(8)) DELIMITED BY '#'", 1},
      {"KEY (a STRING, t TIMESTAMP REVERSED DECIMAL(8)) DELIMITED BY '/'", 1},
      {"KEY (a STRING, d INT64 DECIMAL(4)) DELIMITED BY '//'", 0},
      {"KEY (a STRING, b STRING) DELIMITED BY '#'", 0}};
  static const uint8_t aAlpha[] = {'#', ':', '/', '0', '5', '9', 'a', 0xC3};
  int iS, iRound, nYes = 0, nNo = 0;
  /* (the grammar keeps a DECIMAL field's delimiter below '0') */
  tu_seed(0);
  for (iS = 0; iS < (int)(sizeof aS / sizeof aS[0]); iS++) {
    ks_schema *s = mustParse(aS[iS].zSchema);
    const ks_field *f = &s->aField[s->nField - 1];
    int nW = f->nWidth > 0 ? f->nWidth : 4;
    for (iRound = 0; iRound < 3000; iRound++) {
      uint8_t aKey[40];
      ks_value aW[KS_MAX_FIELDS];
      wcs_buf scratch = {0};
      char *zW = NULL;
      int nKey = 0, i, nOff, rcW, rcL;
      int64_t v = -1;
      for (i = 0; i + 1 < s->nField; i++) {
        int j, n = 1 + (int)tu_rand_range(4);
        for (j = 0; j < n; j++)
          aKey[nKey++] = (uint8_t)('a' + tu_rand_range(26));
        memcpy(aKey + nKey, s->aDelim, (size_t)s->nDelim);
        nKey += s->nDelim;
      }
      nOff = nKey;
      /* mostly the field's width of digits, sometimes other bytes or
      ** another length */
      {
        int n = tu_rand_range(4) ? nW : (int)tu_rand_range((uint64_t)nW + 3);
        for (i = 0; i < n; i++)
          aKey[nKey++] = tu_rand_range(8) ? (uint8_t)('0' + tu_rand_range(10))
                                         : aAlpha[tu_rand_range(sizeof aAlpha)];
      }
      rcW = ks_key_split(s, aKey, nKey, aW, &scratch, &zW);
      if (rcW == WCS_OK && (aW[s->nField - 1].p - aKey) != nOff) {
        rcW = WCS_MISMATCH; /* a delimiter inside the tail: another split */
      }
      for (i = 0; rcW == WCS_OK && i < s->nField; i++) {
        rcW = ks_key_field_decode(s, i, &aW[i], aKey, nKey, &zW);
      }
      rcL = ks_key_last_int(s, aKey, nKey, nOff, &v);
      if (rcL == WCS_OK) {
        nYes++;
        ck_assert(aS[iS].bHandled);
        ck_assert_int_eq(rcW, WCS_OK);
        ck_assert_int_eq(aW[s->nField - 1].eType, KS_VAL_INT);
        ck_assert_int_eq(v, aW[s->nField - 1].i);
      } else {
        nNo++;
        ck_assert_int_eq(rcL, WCS_MISMATCH);
        if (aS[iS].bHandled) ck_assert_int_ne(rcW, WCS_OK);
      }
      free(zW);
      wcs_buf_free(&scratch);
    }
    ks_schema_free(s);
  }
  ck_assert_int_gt(nYes, 3000);
  ck_assert_int_gt(nNo, 3000);
}
END_TEST

/* The same for ORDERED CODE keys: the last integer field, from its offset,
** decodes exactly when the whole split and the field's decode do, with the
** same value, unless the field holds a 00 byte (an escape, or a separator
** of more fields: the general path). The keys are encoded, then their
** last field is kept or replaced by random bytes. */
START_TEST(test_codec_last_int_of_ordered_code_keys) {
  static const char *azSchema[] = {
      "KEY (a STRING, n INT64) ORDERED CODE",
      "KEY (a BYTES, b BYTES, t TIMESTAMP BIG ENDIAN) ORDERED CODE",
      "KEY (n INT64 ORDERED CODE, m INT64 ORDERED CODE) ORDERED CODE",
      "KEY (a STRING, d INT64 DECIMAL(8)) ORDERED CODE"};
  static const uint8_t aAlpha[] = {0x00, 0x01, 0xFF, 0x80, 0x7F, 0x81, '5'};
  int iS, iRound, nYes = 0, nNo = 0, nZero = 0;
  tu_seed(0);
  for (iS = 0; iS < (int)(sizeof azSchema / sizeof azSchema[0]); iS++) {
    ks_schema *s = mustParse(azSchema[iS]);
    const int iLast = s->nField - 1;
    for (iRound = 0; iRound < 3000; iRound++) {
      uint8_t aKey[80];
      ks_value aW[KS_MAX_FIELDS];
      int aOff[KS_MAX_FIELDS];
      wcs_buf scratch = {0};
      int nKey = 0, i, nOff, rcW, rcL, bZero = 0;
      int64_t v = -1;
      if (iS == 3) {
        /* (randomKey gives no DECIMAL digits) */
        aKey[nKey++] = (uint8_t)('a' + tu_rand_range(26));
        aKey[nKey++] = 0x00;
        aKey[nKey++] = 0x01;
        for (i = 0; i < 8; i++)
          aKey[nKey++] = (uint8_t)('0' + tu_rand_range(10));
      } else {
        nKey = randomKey(s, aKey);
      }
      if (ks_key_split_from(s, aKey, nKey, 0, 0, aW, aOff, &scratch, NULL) !=
              WCS_OK ||
          aOff[iLast] < 0) {
        wcs_buf_free(&scratch);
        continue;
      }
      nOff = aOff[iLast];
      if (tu_rand_range(2)) {
        /* the last field replaced by 0 to 9 random bytes */
        nKey = nOff + (int)tu_rand_range(10);
        for (i = nOff; i < nKey; i++)
          aKey[i] = aAlpha[tu_rand_range(sizeof aAlpha)];
      }
      for (i = nOff; i < nKey; i++)
        bZero |= aKey[i] == 0x00;
      rcW = ks_key_split_from(s, aKey, nKey, 0, 0, aW, aOff, &scratch, NULL);
      if (rcW == WCS_OK && aOff[iLast] != nOff) rcW = WCS_MISMATCH;
      for (i = 0; rcW == WCS_OK && i < s->nField; i++) {
        rcW = ks_key_field_decode(s, i, &aW[i], aKey, nKey, NULL);
      }
      rcL = ks_key_last_int(s, aKey, nKey, nOff, &v);
      if (rcL == WCS_OK) {
        nYes++;
        ck_assert(!bZero);
        ck_assert_int_eq(rcW, WCS_OK);
        ck_assert_int_eq(v, aW[iLast].i);
      } else {
        nNo++;
        ck_assert_int_eq(rcL, WCS_MISMATCH);
        if (rcW == WCS_OK) {
          ck_assert(bZero);
          nZero++;
        }
      }
      wcs_buf_free(&scratch);
    }
    ks_schema_free(s);
  }
  ck_assert_int_gt(nYes, 4000);
  ck_assert_int_gt(nNo, 3000);
  ck_assert_int_gt(nZero, 100);
}
END_TEST

/* Only keys without salt split from a boundary (a salt byte is a hash of
** the whole key), and never from a field past the schema's, a byte past
** the key, or field 0 anywhere but at byte 0. */
START_TEST(test_codec_split_from_needs_a_key_without_salt) {
  static const struct {
    const char *zSchema;
    int iField, iOff;
  } aCase[] = {{"KEY (a STRING, b STRING) DELIMITED BY '#' SALT 4", 1, 2},
               {"KEY (a STRING, b STRING) ORDERED CODE SALT 2", 1, 2},
               {"KEY (a STRING)", 0, 0},
               {"KEY (a STRING, b STRING) DELIMITED BY '#'", 2, 2},
               {"KEY (a STRING, b STRING) DELIMITED BY '#'", 1, 4},
               {"KEY (a STRING, b STRING) ORDERED CODE", 0, 2},
               {"KEY (a STRING, b STRING) ORDERED CODE", 1, 0}};
  int i;
  for (i = 0; i < (int)(sizeof aCase / sizeof aCase[0]); i++) {
    ks_schema *s = mustParse(aCase[i].zSchema);
    ks_value a[KS_MAX_FIELDS];
    char *zErr = NULL;
    if (i < 3) ck_assert(!ks_key_split_resumes(s));
    ck_assert_int_eq(ks_key_split_from(s, (const uint8_t *)"x#y", 3,
                                       aCase[i].iField, aCase[i].iOff, a, NULL,
                                       NULL, &zErr),
                     WCS_MISUSE);
    ck_assert_ptr_nonnull(zErr);
    free(zErr);
    ks_schema_free(s);
  }
}
END_TEST

/* One field decodes without the others: a bad field elsewhere in the key
** is not looked at, a bad structure always is. */
START_TEST(test_codec_field_decode_reads_only_its_field) {
  ks_schema *s = mustParse("KEY (device STRING, id STRING, day INT64 "
                           "DECIMAL(8))");
  static const char zKey[] = "ph\xc3#4c41#20200501";
  ks_value a[3];
  wcs_buf scratch = {0};
  char *zErr = NULL;
  int n = (int)strlen(zKey);
  ck_assert_int_eq(
      ks_key_split(s, (const uint8_t *)zKey, n, a, &scratch, &zErr), WCS_OK);
  ck_assert_int_eq(a[1].n, 4);
  ck_assert(memcmp(a[1].p, "4c41", 4) == 0);
  ck_assert_int_eq(a[2].n, 8);
  ck_assert_int_eq(
      ks_key_field_decode(s, 2, &a[2], (const uint8_t *)zKey, n, &zErr),
      WCS_OK);
  ck_assert_int_eq(a[2].eType, KS_VAL_INT);
  ck_assert_int_eq(a[2].i, 20200501);
  ck_assert_int_eq(
      ks_key_field_decode(s, 1, &a[1], (const uint8_t *)zKey, n, &zErr),
      WCS_OK);
  ck_assert_int_eq(a[1].eType, KS_VAL_BYTES);
  ck_assert_ptr_eq(a[1].p, (const uint8_t *)zKey + 4);
  ck_assert_ptr_null(zErr);
  ck_assert_int_eq(
      ks_key_field_decode(s, 0, &a[0], (const uint8_t *)zKey, n, &zErr),
      WCS_MISMATCH);
  ck_assert_ptr_nonnull(strstr(zErr, "field \"device\": invalid UTF-8"));
  free(zErr);
  zErr = NULL;
  ck_assert_int_eq(
      ks_key_split(s, (const uint8_t *)"ph#4c41", 7, a, &scratch, &zErr),
      WCS_MISMATCH);
  ck_assert_ptr_nonnull(strstr(zErr, "fewer fields"));
  free(zErr);
  wcs_buf_free(&scratch);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_codec_decode_points_into_the_key) {
  ks_schema *s = mustParse("KEY (device STRING, id STRING, day INT64 "
                           "DECIMAL(8))");
  static const char zKey[] = "phone#4c410523#20200501";
  ks_value a[3];
  wcs_buf scratch = {0};
  ck_assert_int_eq(
      ks_key_decode(s, (const uint8_t *)zKey, 23, a, &scratch, NULL), WCS_OK);
  ck_assert(a[0].p == (const uint8_t *)zKey);
  ck_assert_int_eq(a[0].n, 5);
  ck_assert(a[1].p == (const uint8_t *)zKey + 6);
  ck_assert_int_eq(a[2].eType, KS_VAL_INT);
  ck_assert_int_eq(a[2].i, 20200501);
  ck_assert_ptr_null(scratch.a); /* nothing allocated */
  ks_schema_free(s);
}
END_TEST

/* ---- property tests over random schemas and tuples */

typedef struct RSchema {
  ks_schema *s;
  char zText[600];
} RSchema;

/* A random schema exercising every struct and field encoding. */
static void randomSchema(RSchema *r, int bAllowSalt) {
  static const char *azDelim[] = {"'#'",  "'/'",   "X'01'",
                                  "'#|'", "X'00'", "' '"};
  int eStruct = (int)tu_rand_range(3); /* 0 singleton, 1 delim, 2 oc */
  int nField = eStruct == 0 ? 1 : 1 + (int)tu_rand_range(4);
  int i, n = 0;
  n += snprintf(r->zText + n, sizeof r->zText - (size_t)n, "KEY (");
  for (i = 0; i < nField; i++) {
    int k = (int)tu_rand_range(eStruct == 1 ? 5 : 9);
    static const char *azType[] = {"STRING",
                                   "BYTES",
                                   "INT64 DECIMAL(%d)",
                                   "TIMESTAMP REVERSED DECIMAL(%d)",
                                   "INT64 DECIMAL(%d)",
                                   "INT64 ORDERED CODE",
                                   "INT64 BIG ENDIAN",
                                   "TIMESTAMP ORDERED CODE",
                                   "STRING"};
    char zType[64];
    snprintf(zType, sizeof zType, azType[k], 1 + (int)tu_rand_range(19));
    n += snprintf(r->zText + n, sizeof r->zText - (size_t)n, "%sf%d %s",
                  i ? ", " : "", i, zType);
  }
  n += snprintf(r->zText + n, sizeof r->zText - (size_t)n, ")");
  if (eStruct == 1) {
    n += snprintf(r->zText + n, sizeof r->zText - (size_t)n, " DELIMITED BY %s",
                  azDelim[tu_rand_range(6)]);
  } else if (eStruct == 2) {
    n += snprintf(r->zText + n, sizeof r->zText - (size_t)n, " ORDERED CODE");
  }
  if (bAllowSalt && tu_rand_range(4) == 0) {
    snprintf(r->zText + n, sizeof r->zText - (size_t)n, " SALT %d",
             1 + (int)tu_rand_range(256));
  }
  r->s = mustParse(r->zText);
}

/* Random field values. Strings draw from pieces that stress the codecs:
** empty, multi-byte UTF-8, bytes just above the delimiter, 00 and FF. */
typedef struct RTuple {
  ks_value a[KS_MAX_FIELDS];
  uint8_t aBuf[KS_MAX_FIELDS][64];
} RTuple;

static void randomTuple(const ks_schema *s, RTuple *t) {
  int i;
  int d = ksDelimByte(s);
  for (i = 0; i < s->nField; i++) {
    const ks_field *f = &s->aField[i];
    if (f->eType == KS_STRING || f->eType == KS_BYTES) {
      static const char *azPiece[] = {
          "a", "b", "z", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80",
          "A", "0", "~"};
      int nPiece = (int)tu_rand_range(5), j, n = 0;
      for (j = 0; j < nPiece; j++) {
        int k = (int)tu_rand_range(12);
        uint8_t c;
        if (k < 9) {
          const char *z = azPiece[k];
          int m = (int)strlen(z);
          if (n + m > 60) break;
          memcpy(t->aBuf[i] + n, z, (size_t)m);
          n += m;
          continue;
        }
        /* a single raw byte: just above the delimiter, 00, 01 or FF */
        c = k == 9 ? (uint8_t)(d + 1) : k == 10 ? 0x00 : 0xFF;
        if (k == 10 && tu_rand_range(2)) c = 0x01;
        if (f->eType == KS_STRING && c >= 0x80) continue;
        if (d >= 0 && c <= d) continue;
        if (n < 60) t->aBuf[i][n++] = c;
      }
      t->a[i] = B(t->aBuf[i], n);
    } else {
      int64_t vMin, vMax, v;
      ksIntDomain(f, &vMin, &vMax);
      switch (tu_rand_range(6)) {
      case 0:
        v = vMin;
        break;
      case 1:
        v = vMax;
        break;
      case 2:
        v = 0;
        break;
      case 3:
        v = (int64_t)tu_rand_range(130) - 65;
        break;
      default:
        v = (int64_t)tu_rand() >> tu_rand_range(64);
        break;
      }
      if (v < vMin) v = vMin;
      if (v > vMax)
        v = vMin + (int64_t)((uint64_t)v % ((uint64_t)(vMax - vMin) + 1));
      t->a[i] = I(v);
    }
  }
}

static int cmpTuple(const ks_schema *s, const ks_value *a, const ks_value *b) {
  int i;
  for (i = 0; i < s->nField; i++) {
    const ks_field *f = &s->aField[i];
    int c;
    if (f->eType == KS_STRING || f->eType == KS_BYTES) {
      int n = a[i].n < b[i].n ? a[i].n : b[i].n;
      c = n ? memcmp(a[i].p, b[i].p, (size_t)n) : 0;
      if (c == 0) c = a[i].n - b[i].n;
    } else {
      c = a[i].i < b[i].i ? -1 : a[i].i > b[i].i;
      if (f->eEnc == KS_ENC_REVERSED_DECIMAL) c = -c; /* newest first */
    }
    if (c) return c < 0 ? -1 : 1;
  }
  return 0;
}

START_TEST(test_codec_random_tuples_roundtrip) {
  int iSchema, iTuple;
  wcs_buf b = {0}, b2 = {0}, scratch = {0};
  tu_seed(0);
  for (iSchema = 0; iSchema < 300; iSchema++) {
    RSchema r;
    randomSchema(&r, 1);
    for (iTuple = 0; iTuple < 200; iTuple++) {
      RTuple t;
      ks_value aOut[KS_MAX_FIELDS];
      char *zErr = NULL;
      int rc;
      randomTuple(r.s, &t);
      b.n = 0;
      rc = ks_key_encode(r.s, t.a, &b, &zErr);
      ck_assert_msg(rc == WCS_OK, "%s: %s", r.zText, zErr);
      rc = ks_key_decode(r.s, b.a, (int)b.n, aOut, &scratch, &zErr);
      ck_assert_msg(rc == WCS_OK, "%s: key %s: %s", r.zText, hex(b.a, b.n),
                    zErr);
      ck_assert_msg(cmpTuple(r.s, t.a, aOut) == 0, "%s: key %s", r.zText,
                    hex(b.a, b.n));
      b2.n = 0;
      ck_assert_int_eq(ks_key_encode(r.s, aOut, &b2, NULL), WCS_OK);
      ck_assert(b2.n == b.n && (b.n == 0 || memcmp(b.a, b2.a, b.n) == 0));
    }
    ks_schema_free(r.s);
  }
  wcs_buf_free(&b);
  wcs_buf_free(&b2);
  wcs_buf_free(&scratch);
}
END_TEST

/* Tuples sorted by tuple order must have keys in byte order, equal keys
** exactly for equal tuples; checking neighbours suffices (transitivity). */
typedef struct Pair {
  const ks_schema *s;
  RTuple *t;
  wcs_buf *b;
} Pair;

static int cmpPairTuple(const void *a, const void *b) {
  const Pair *x = a, *y = b;
  return cmpTuple(x->s, x->t->a, y->t->a);
}

START_TEST(test_codec_byte_order_is_tuple_order) {
  enum { NT = 400 };
  int iSchema, i;
  static RTuple t[NT];
  static wcs_buf ab[NT];
  static Pair ap[NT];
  tu_seed(0);
  for (iSchema = 0; iSchema < 300; iSchema++) {
    RSchema r;
    randomSchema(&r, 0);
    for (i = 0; i < NT; i++) {
      randomTuple(r.s, &t[i]);
      ab[i].n = 0;
      ck_assert_int_eq(ks_key_encode(r.s, t[i].a, &ab[i], NULL), WCS_OK);
      ap[i].s = r.s;
      ap[i].t = &t[i];
      ap[i].b = &ab[i];
    }
    qsort(ap, NT, sizeof(Pair), cmpPairTuple);
    for (i = 1; i < NT; i++) {
      const wcs_buf *x = ap[i - 1].b, *y = ap[i].b;
      int ct = cmpTuple(r.s, ap[i - 1].t->a, ap[i].t->a);
      size_t n = x->n < y->n ? x->n : y->n;
      int cb = n ? memcmp(x->a, y->a, n) : 0;
      if (cb == 0) cb = x->n < y->n ? -1 : x->n > y->n;
      ck_assert_msg(ct <= 0, "sort");
      ck_assert_msg((cb < 0) == (ct < 0) && (cb == 0) == (ct == 0),
                    "%s: %s and %s: tuple order %d, byte order %d", r.zText,
                    hex(x->a, x->n), hex(y->a, y->n), ct, cb);
    }
    ks_schema_free(r.s);
  }
  for (i = 0; i < NT; i++)
    wcs_buf_free(&ab[i]);
}
END_TEST

START_TEST(test_codec_mutated_keys_decode_only_to_their_own_encoding) {
  int iSchema, iKey;
  wcs_buf b = {0}, b2 = {0}, scratch = {0};
  tu_seed(0);
  for (iSchema = 0; iSchema < 200; iSchema++) {
    RSchema r;
    randomSchema(&r, 1);
    for (iKey = 0; iKey < 300; iKey++) {
      RTuple t;
      ks_value aOut[KS_MAX_FIELDS];
      char *zErr = NULL;
      int k, nFlip = 1 + (int)tu_rand_range(3), rc;
      randomTuple(r.s, &t);
      b.n = 0;
      ck_assert_int_eq(ks_key_encode(r.s, t.a, &b, NULL), WCS_OK);
      for (k = 0; k < nFlip && b.n > 0; k++) {
        switch (tu_rand_range(4)) {
        case 0:
          b.a[tu_rand_range(b.n)] ^= (uint8_t)(1 << tu_rand_range(8));
          break;
        case 1:
          b.n--;
          break;
        case 2:
          b.a[tu_rand_range(b.n)] = (uint8_t)tu_rand();
          break;
        default:
          wcs_buf_append(&b, "\x00", 1);
          break;
        }
      }
      rc = ks_key_decode(r.s, b.a, (int)b.n, aOut, &scratch, &zErr);
      if (rc == WCS_OK) {
        b2.n = 0;
        ck_assert_int_eq(ks_key_encode(r.s, aOut, &b2, NULL), WCS_OK);
        ck_assert_msg(b2.n == b.n && (b.n == 0 || memcmp(b.a, b2.a, b.n) == 0),
                      "%s: %s decodes but re-encodes differently", r.zText,
                      hex(b.a, b.n));
      } else {
        ck_assert_int_eq(rc, WCS_MISMATCH);
        ck_assert_ptr_nonnull(zErr);
        ck_assert(strncmp(zErr, "row key '", 9) == 0);
        free(zErr);
      }
    }
    ks_schema_free(r.s);
  }
  wcs_buf_free(&b);
  wcs_buf_free(&b2);
  wcs_buf_free(&scratch);
}
END_TEST

START_TEST(test_codec_utf8_validation) {
  static const struct {
    const char *z;
    int bOk;
  } a[] = {
      {"plain", 1},
      {"\xc3\xa9", 1},
      {"\xe4\xb8\xad", 1},
      {"\xf0\x9f\x98\x80", 1},
      {"\xc0\x80", 0},
      {"\xe0\x80\x80", 0},
      {"\xed\xa0\x80", 0},
      {"\xf4\x90\x80\x80", 0},
      {"\xc3", 0},
      {"\x80", 0},
      {"\xf5\x80\x80\x80", 0},
      {"abcdefgh\xc3\xa9xyz", 1},
      {"abcdefghij\xffxyz", 0},
  };
  size_t i;
  for (i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
    ck_assert_msg(ks_utf8_valid((const uint8_t *)a[i].z, (int)strlen(a[i].z),
                                NULL) == a[i].bOk,
                  "case %zu", i);
  }
}
END_TEST

/* Perturb a valid tuple toward the errors and edges of the encoder: NULL,
** a number for a string or text for a number, REALs, bytes at or below the
** delimiter, 00 and invalid UTF-8, integers at and past the domain, and
** strings near and over the key limit. */
static void hostileTuple(const ks_schema *s, RTuple *t, uint8_t *aBig,
                         int nBig) {
  /* aBig: nBig + 40 bytes at least */
  int i;
  int d = ksDelimByte(s);
  for (i = 0; i < s->nField; i++) {
    const ks_field *f = &s->aField[i];
    int k = (int)tu_rand_range(16);
    if (k >= 10) continue; /* most fields stay valid */
    switch (k) {
    case 0:
      t->a[i] = N();
      break;
    case 1:
      t->a[i] = f->eType == KS_STRING || f->eType == KS_BYTES ? I(7) : S("7");
      break;
    case 2:
      t->a[i].eType = KS_VAL_REAL;
      t->a[i].r = tu_rand_range(2) ? 20240131.0 : 0.5;
      break;
    case 3:
      if (f->eType == KS_STRING || f->eType == KS_BYTES) {
        int n = 1 + (int)tu_rand_range(20), j;
        for (j = 0; j < n; j++) {
          t->aBuf[i][j] = (uint8_t)('a' + (int)tu_rand_range(26));
        }
        /* one byte at the delimiter (or 00), somewhere */
        t->aBuf[i][tu_rand_range((uint64_t)n)] = (uint8_t)(d >= 0 ? d : 0);
        t->a[i] = B(t->aBuf[i], n);
      } else {
        t->a[i] = I(tu_rand_range(2) ? INT64_MIN : INT64_MAX);
      }
      break;
    case 4:
      if (f->eType == KS_STRING || f->eType == KS_BYTES) {
        static const char azBad[][5] = {"\xc3", "\xff", "\xed\xa0\x80",
                                        "a\x80z"};
        const char *z = azBad[tu_rand_range(4)];
        t->a[i] = B(z, (int)strlen(z));
      } else {
        t->a[i] = I(-1 - (int64_t)tu_rand_range(3));
      }
      break;
    case 5:
      if (f->eType == KS_STRING || f->eType == KS_BYTES) {
        /* a long ASCII string: the key fits, just fits, or not */
        int n = nBig - 40 + (int)tu_rand_range(80);
        t->a[i] = B(aBig, n);
      } else {
        int64_t vMin, vMax;
        ksIntDomain(f, &vMin, &vMax);
        t->a[i] = I(vMax < INT64_MAX ? vMax + 1 : vMax);
      }
      break;
    case 6:
      t->a[i] = B("", 0);
      t->a[i].p = NULL; /* an empty value may have no bytes */
      break;
    case 7:
      t->a[i] = I(tu_rand_range(2) ? 99999999 : 100000000);
      break;
    case 8:
      t->a[i] = I((int64_t)tu_rand_range(100000000));
      break;
    default:
      t->a[i] = B(aBig, KS_MAX_KEY + 1 + (int)tu_rand_range(3));
      break;
    }
  }
}

/* ks_key_encode writes a DELIMITED or SINGLETON key straight into its
** buffer (encodeFlat); ks_key_prefix of every field still goes through the
** field views and ksJoin. Both must give the same bytes, or the same error
** and message, for every tuple, valid or not. */
START_TEST(test_codec_whole_key_encode_matches_the_general_path) {
  int iSchema, iTuple;
  wcs_buf b = {0}, b2 = {0};
  uint8_t *aBig = malloc(KS_MAX_KEY + 128);
  ck_assert_ptr_nonnull(aBig);
  memset(aBig, 'q', KS_MAX_KEY + 128);
  tu_seed(0);
  for (iSchema = 0; iSchema < 300; iSchema++) {
    RSchema r;
    int bSalt;
    randomSchema(&r, 1);
    bSalt = r.s->nSalt > 0;
    for (iTuple = 0; iTuple < 200; iTuple++) {
      RTuple t;
      char *zErr = NULL, *zErr2 = NULL;
      int rc, rc2;
      size_t nPre;
      randomTuple(r.s, &t);
      if (iTuple % 2) hostileTuple(r.s, &t, aBig, KS_MAX_KEY - 2);
      /* something before the key (the encoder appends), or a buffer
      ** with no room at all */
      b.n = 0;
      b2.n = 0;
      if (iTuple % 3 == 0) {
        wcs_buf_free(&b);
        memset(&b, 0, sizeof(b));
        nPre = 0;
      } else {
        ck_assert_int_eq(wcs_buf_append(&b, "pre", 3), WCS_OK);
        ck_assert_int_eq(wcs_buf_append(&b2, "pre", 3), WCS_OK);
        nPre = 3;
      }
      rc = ks_key_encode(r.s, t.a, &b, &zErr);
      rc2 = ks_key_prefix(r.s, t.a, r.s->nField, &b2, &zErr2);
      if (bSalt && ((rc2 == WCS_OK && b2.n - nPre + 1 > KS_MAX_KEY) ||
                    rc2 == WCS_TOOBIG)) {
        /* the salt byte counts toward the limit (and the size in the
        ** message) of the key only */
        ck_assert_int_eq(rc, WCS_TOOBIG);
      } else {
        ck_assert_msg(rc == rc2, "%s: tuple %d: %d vs %d (%s / %s)", r.zText,
                      iTuple, rc, rc2, zErr ? zErr : "", zErr2 ? zErr2 : "");
        ck_assert_str_eq(zErr ? zErr : "", zErr2 ? zErr2 : "");
      }
      if (rc == WCS_OK) {
        size_t nSalt = bSalt ? 1 : 0;
        ck_assert_msg(
            b.n == b2.n + nSalt &&
                memcmp(b.a + nPre + nSalt, b2.a + nPre, b2.n - nPre) == 0,
            "%s: %s", r.zText, hex(b.a, b.n));
        if (nPre) ck_assert(memcmp(b.a, "pre", 3) == 0);
        if (bSalt) {
          ck_assert_int_eq(
              b.a[nPre], ks_salt_bucket(r.s, b2.a + nPre, (int)(b2.n - nPre)));
        }
      } else {
        ck_assert_int_eq((int)b.n, (int)nPre); /* nothing appended */
      }
      free(zErr);
      free(zErr2);
    }
    ks_schema_free(r.s);
  }
  free(aBig);
  wcs_buf_free(&b);
  wcs_buf_free(&b2);
}
END_TEST

Suite *keyschema_codec_suite(void) {
  Suite *s = suite_create("keyschema_codec");
  TCase *tc = tcase_create("codec");
  int nOc = (int)(sizeof(aOcVec) / sizeof(aOcVec[0]));
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_codec_orderedcode_int_vectors, 0, nOc);
  tcase_add_loop_test(tc, test_codec_orderedcode_int_vectors_as_singleton_key,
                      0, nOc);
  tcase_add_test(tc, test_codec_orderedcode_rejects_non_minimal_forms);
  tcase_add_test(tc, test_codec_orderedcode_int_roundtrip_and_order);
  tcase_add_test(tc, test_codec_struct_ordered_code_bigtable_examples);
  tcase_add_test(tc, test_codec_struct_ordered_code_with_integers);
  tcase_add_test(tc, test_codec_struct_delimited_schema_guide_example);
  tcase_add_test(tc, test_codec_struct_delimited_multibyte_and_nul_delimiters);
  tcase_add_test(tc, test_codec_field_encodings_golden);
  tcase_add_test(tc, test_codec_salt_byte_is_xxh3_of_the_rest);
  tcase_add_test(tc, test_codec_prefix_includes_the_delimiter);
  tcase_add_test(tc, test_codec_prefix_of_a_key_identifies_its_leading_fields);
  tcase_add_test(tc, test_codec_encode_rejects_values_that_break_sorted_mode);
  tcase_add_test(tc, test_codec_encode_rejects_keys_over_4096_bytes);
  tcase_add_test(tc, test_codec_delimited_fields_checked_at_every_offset);
  tcase_add_test(tc, test_codec_decimal_fields_of_every_width);
  tcase_add_test(tc, test_codec_encode_accepts_integral_reals);
  tcase_add_test(tc, test_codec_no_key_schema_is_misuse);
  tcase_add_loop_test(tc, test_codec_decode_names_the_key_and_the_problem, 0,
                      (int)(sizeof(aBadKey) / sizeof(aBadKey[0])));
  tcase_add_loop_test(tc,
                      test_codec_split_then_field_decode_reports_as_decode_does,
                      0, (int)(sizeof(aBadKey) / sizeof(aBadKey[0])));
  tcase_add_test(tc, test_codec_field_decode_reads_only_its_field);
  tcase_add_test(tc, test_codec_split_from_matches_a_whole_split);
  tcase_add_test(tc, test_codec_last_int_matches_split_and_decode);
  tcase_add_test(tc, test_codec_last_int_of_ordered_code_keys);
  tcase_add_test(tc, test_codec_split_from_needs_a_key_without_salt);
  tcase_add_test(tc, test_codec_decode_points_into_the_key);
  tcase_add_test(tc, test_codec_random_tuples_roundtrip);
  tcase_add_test(tc, test_codec_whole_key_encode_matches_the_general_path);
  tcase_add_test(tc, test_codec_byte_order_is_tuple_order);
  tcase_add_test(tc, test_codec_mutated_keys_decode_only_to_their_own_encoding);
  tcase_add_test(tc, test_codec_utf8_validation);
  suite_add_tcase(s, tc);
  return s;
}
