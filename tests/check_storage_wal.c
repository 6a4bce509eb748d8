/*
** Tests of the log format (storage/wal.c) and of WAL recovery through the
** store: golden bytes of a framed write batch (the worked example of
** doc/format.md), round trips, torn tails cut at every offset of the
** last record, zero-filled tails and holes, flipped bytes reported as
** corruption with file and offset, and a store that reopens after a torn
** tail with every earlier commit and keeps working.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/db_int.h"
#include "storage/env.h"
#include "storage/wal.h"
#include "testutil.h"
#include "wcs.h"

Suite *storage_wal_suite(void);

/* The worked example: a batch at seq 7 with put k=v, delete d and range
** delete [a, c), framed as one record. */
static const uint8_t aGoldenBatch[] = {
    0x07, 0,    0,   0,    0,   0, 0, 0, /* seq 7 */
    0x03, 0,    0,   0,                  /* 3 operations */
    0x01, 0x01, 'k', 0x01, 'v',          /* put k v */
    0x00, 0x01, 'd',                     /* delete d */
    0x02, 0x01, 'a', 0x01, 'c',          /* range delete [a, c) */
};
static const uint8_t aGoldenRecord[] = {
    0xdc, 0xfe, 0xcb, 0x09, /* masked CRC-32C of the length bytes */
    0x19, 0x00, 0x00, 0x00, /* length 25 */
    0x12, 0x78, 0x5f, 0x79, /* masked CRC-32C of the payload */
    0x07, 0,    0,    0,    0,    0,    0,   0,    0x03, 0,   0,    0,   0x01,
    0x01, 'k',  0x01, 'v',  0x00, 0x01, 'd', 0x02, 0x01, 'a', 0x01, 'c',
};

START_TEST(test_wal_record_golden_bytes) {
  wcs_buf b = {0};
  ck_assert_int_eq(wal_frame(&b, aGoldenBatch, sizeof aGoldenBatch), WCS_OK);
  ck_assert_uint_eq(b.n, sizeof aGoldenRecord);
  ck_assert(memcmp(b.a, aGoldenRecord, b.n) == 0);
  wcs_buf_free(&b);
}
END_TEST

/* What wal_batch_walk reports, as text. */
static int walkCb(void *p, uint64_t seq, int op, const uint8_t *k, size_t nK,
                  const uint8_t *v, size_t nV) {
  char *z = p;
  size_t n = strlen(z);
  snprintf(z + n, 256 - n, "%llu:%d:%.*s:%.*s;", (unsigned long long)seq, op,
           (int)nK, k, (int)nV, v ? (const char *)v : "");
  return WCS_OK;
}

START_TEST(test_wal_batch_payload_decodes) {
  char z[256] = "";
  ck_assert_int_eq(wal_batch_walk(aGoldenBatch, sizeof aGoldenBatch, "f", 0, z,
                                  walkCb, NULL),
                   WCS_OK);
  ck_assert_str_eq(z, "7:1:k:v;8:0:d:;9:2:a:c;");
}
END_TEST

START_TEST(test_wal_batch_rejects_bad_payloads) {
  uint8_t a[sizeof aGoldenBatch + 1];
  char z[256];
  char *zErr = NULL;
  size_t i;
  /* every truncation is corrupt */
  for (i = 0; i < sizeof aGoldenBatch; i++) {
    z[0] = 0;
    ck_assert_int_eq(
        wal_batch_walk(aGoldenBatch, i, "x.log", 99, z, walkCb, NULL),
        WCS_CORRUPT);
  }
  /* trailing garbage and an unknown op */
  memcpy(a, aGoldenBatch, sizeof aGoldenBatch);
  a[sizeof aGoldenBatch] = 0;
  z[0] = 0;
  ck_assert_int_eq(wal_batch_walk(a, sizeof a, "x.log", 99, z, walkCb, &zErr),
                   WCS_CORRUPT);
  ck_assert_ptr_nonnull(strstr(zErr, "x.log"));
  ck_assert_ptr_nonnull(strstr(zErr, "offset 99"));
  free(zErr);
  memcpy(a, aGoldenBatch, sizeof aGoldenBatch);
  a[12] = 9;
  z[0] = 0;
  ck_assert_int_eq(
      wal_batch_walk(a, sizeof aGoldenBatch, "x", 0, z, walkCb, NULL),
      WCS_CORRUPT);
}
END_TEST

/* ---- a log in a memory env */

typedef struct LogFix {
  wcs_env *pEnv;
  uint64_t aOff[64]; /* record offsets */
  size_t anLen[64];  /* payload lengths */
  int nRec;
  uint64_t nSize;
} LogFix;

/* Write nRec records of assorted sizes (one larger than the read-ahead). */
static void logWrite(LogFix *f, int nRec) {
  wal_writer *w = NULL;
  wcs_buf b = {0};
  int i;
  memset(f, 0, sizeof *f);
  f->pEnv = wcs_env_mem_new();
  ck_assert_int_eq(wal_writer_open(f->pEnv, "/l/000001.log", &w, NULL), WCS_OK);
  for (i = 0; i < nRec; i++) {
    size_t n = i == 3 ? 300000 : 1 + (size_t)(i * 37) % 700, j;
    uint8_t *p = malloc(n);
    for (j = 0; j < n; j++)
      p[j] = (uint8_t)(i + j * 7 + 1);
    b.n = 0;
    ck_assert_int_eq(wal_frame(&b, p, n), WCS_OK);
    f->aOff[i] = wal_writer_size(w);
    f->anLen[i] = n;
    ck_assert_int_eq(wal_writer_append(w, b.a, b.n, NULL), WCS_OK);
    free(p);
  }
  ck_assert_int_eq(wal_writer_sync(w, NULL), WCS_OK);
  f->nRec = nRec;
  f->nSize = wal_writer_size(w);
  wal_writer_close(w);
  wcs_buf_free(&b);
}

/* Read all records; returns the count, *pRc the final code. */
static int logRead(LogFix *f, int *pRc, int *pbTorn, uint64_t *pGood,
                   char **pzErr) {
  wal_reader *r = NULL;
  int n = 0, rc;
  rc = wal_reader_open(f->pEnv, "/l/000001.log", &r, pzErr);
  ck_assert_int_eq(rc, WCS_OK);
  for (;;) {
    const uint8_t *p;
    size_t nP;
    uint64_t iOff;
    rc = wal_reader_next(r, &p, &nP, &iOff, pzErr);
    if (rc || p == NULL) break;
    ck_assert_uint_eq(iOff, f->aOff[n]);
    ck_assert_uint_eq(nP, f->anLen[n]);
    ck_assert_uint_eq(p[0], (uint8_t)(n + 1));
    n++;
  }
  *pRc = rc;
  *pbTorn = wal_reader_torn(r);
  *pGood = wal_reader_good_end(r);
  wal_reader_close(r);
  return n;
}

static void setSize(LogFix *f, uint64_t n) {
  wcs_file *fl = NULL;
  ck_assert_int_eq(
      f->pEnv->xOpen(f->pEnv, "/l/000001.log", WCS_OPEN_WRITE, &fl, NULL),
      WCS_OK);
  ck_assert_int_eq(f->pEnv->xTruncate(fl, n, NULL), WCS_OK);
  f->pEnv->xClose(fl);
}

static void patch(LogFix *f, uint64_t iOff, const void *p, size_t n) {
  /* rewrite the file with bytes [iOff, iOff+n) replaced */
  wcs_file *fl = NULL;
  uint8_t *a = malloc(f->nSize);
  size_t nRead = 0;
  ck_assert_int_eq(
      f->pEnv->xOpen(f->pEnv, "/l/000001.log", WCS_OPEN_READ, &fl, NULL),
      WCS_OK);
  f->pEnv->xRead(fl, 0, a, f->nSize, &nRead, NULL);
  f->pEnv->xClose(fl);
  memcpy(a + iOff, p, n);
  ck_assert_int_eq(f->pEnv->xOpen(f->pEnv, "/l/000001.log",
                                  WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &fl,
                                  NULL),
                   WCS_OK);
  f->pEnv->xAppend(fl, a, nRead, NULL);
  f->pEnv->xClose(fl);
  free(a);
}

START_TEST(test_wal_roundtrip_records_of_all_sizes) {
  LogFix f;
  int rc, bTorn;
  uint64_t good;
  logWrite(&f, 20);
  ck_assert_int_eq(logRead(&f, &rc, &bTorn, &good, NULL), 20);
  ck_assert_int_eq(rc, WCS_OK);
  ck_assert_int_eq(bTorn, 0);
  ck_assert_uint_eq(good, f.nSize);
  f.pEnv->xDestroy(f.pEnv);
}
END_TEST

/* Cut the file at every offset inside the last record: all earlier records
** come back, the tail is torn, and the good end is the last record's
** start. */
START_TEST(test_wal_torn_tail_at_every_offset_loses_only_the_tail) {
  LogFix f;
  uint64_t iCut;
  logWrite(&f, 8);
  for (iCut = f.aOff[7] + 1; iCut < f.nSize; iCut++) {
    int rc, bTorn;
    uint64_t good;
    char *zErr = NULL;
    LogFix g;
    logWrite(&g, 8); /* a fresh copy of the file, then cut */
    f.pEnv->xDestroy(f.pEnv);
    f = g;
    setSize(&f, iCut);
    ck_assert_int_eq(logRead(&f, &rc, &bTorn, &good, &zErr), 7);
    ck_assert_msg(rc == WCS_OK, "cut at %llu: %s", (unsigned long long)iCut,
                  zErr);
    ck_assert_int_eq(bTorn, 1);
    ck_assert_uint_eq(good, f.aOff[7]);
  }
  f.pEnv->xDestroy(f.pEnv);
}
END_TEST

START_TEST(test_wal_zero_filled_tail_is_torn) {
  LogFix f;
  int rc, bTorn;
  uint64_t good;
  logWrite(&f, 6);
  setSize(&f, f.nSize + 4096); /* the size grew, the data never came */
  ck_assert_int_eq(logRead(&f, &rc, &bTorn, &good, NULL), 6);
  ck_assert_int_eq(rc, WCS_OK);
  ck_assert_int_eq(bTorn, 1);
  ck_assert_uint_eq(good, f.nSize);
  f.pEnv->xDestroy(f.pEnv);
}
END_TEST

/* A sector of the last record never reached the disk (zeros) while a later
** one did: a torn write, not corruption. */
START_TEST(test_wal_hole_in_last_record_is_torn) {
  LogFix f;
  int rc, bTorn;
  uint64_t good, iSec;
  uint8_t aZero[WAL_SECTOR];
  memset(aZero, 0, sizeof aZero);
  logWrite(&f, 5); /* record 3 is 300000 bytes: make it the last */
  f.nRec = 4;
  setSize(&f, f.aOff[4]);
  f.nSize = f.aOff[4];
  iSec = (f.aOff[3] / WAL_SECTOR + 8) * WAL_SECTOR;
  patch(&f, iSec, aZero, sizeof aZero);
  ck_assert_int_eq(logRead(&f, &rc, &bTorn, &good, NULL), 3);
  ck_assert_int_eq(rc, WCS_OK);
  ck_assert_int_eq(bTorn, 1);
  ck_assert_uint_eq(good, f.aOff[3]);
  f.pEnv->xDestroy(f.pEnv);
}
END_TEST

/* Records whose payloads end in zeros, the last one ending the file in a
** short all-zero piece and holding a whole all-zero sector: a flipped byte
** in a record before them, in its payload or its header, is corruption,
** not a torn tail (their zeros are data, checked by their checksums),
** while a zeroed sector inside the damaged record still reads as a torn
** write. */
START_TEST(test_wal_zeros_after_a_damaged_record_are_data) {
  static const size_t anLen[3] = {100, 900, 1538};
  wal_writer *w = NULL;
  wcs_buf b = {0};
  LogFix f;
  int i, k, rc, bTorn;
  uint64_t good;
  char *zErr = NULL;
  for (k = 0; k < 3; k++) {
    memset(&f, 0, sizeof f);
    f.pEnv = wcs_env_mem_new();
    ck_assert_int_eq(wal_writer_open(f.pEnv, "/l/000001.log", &w, NULL),
                     WCS_OK);
    for (i = 0; i < 3; i++) {
      uint8_t *p = calloc(anLen[i], 1);
      size_t j;
      for (j = 0; j < anLen[i] / 2; j++)
        p[j] = (uint8_t)(i + j * 7 + 1); /* the second half zeros */
      b.n = 0;
      ck_assert_int_eq(wal_frame(&b, p, anLen[i]), WCS_OK);
      f.aOff[i] = wal_writer_size(w);
      f.anLen[i] = anLen[i];
      ck_assert_int_eq(wal_writer_append(w, b.a, b.n, NULL), WCS_OK);
      free(p);
    }
    f.nRec = 3;
    f.nSize = wal_writer_size(w);
    wal_writer_close(w);
    /* the file ends 14 bytes past a sector boundary, in zeros, and the
    ** sector before those is all zeros too: both in record 2, whole */
    ck_assert_uint_eq(f.nSize % WAL_SECTOR, 14);
    if (k != 1) {
      /* a byte of record 1's payload, or of its header's length */
      uint8_t c = 0x5a;
      patch(&f, f.aOff[1] + (k == 0 ? WAL_HEADER + 10 : WAL_OFF_LEN + 1), &c,
            1);
      ck_assert_int_eq(logRead(&f, &rc, &bTorn, &good, &zErr), 1);
      ck_assert_int_eq(rc, WCS_CORRUPT);
      ck_assert_msg(strstr(zErr, "at offset 112") != NULL, "%s", zErr);
      free(zErr);
      zErr = NULL;
    } else {
      /* record 1 is [112, 1024), its payload's zeros from 574 on: the
      ** sector [512, 1024) made all zero never reached the disk */
      uint8_t aZero[WAL_SECTOR];
      memset(aZero, 0, sizeof aZero);
      ck_assert_uint_eq(f.aOff[2], 1024);
      patch(&f, 512, aZero, sizeof aZero);
      ck_assert_int_eq(logRead(&f, &rc, &bTorn, &good, NULL), 1);
      ck_assert_int_eq(rc, WCS_OK);
      ck_assert_int_eq(bTorn, 1);
      ck_assert_uint_eq(good, f.aOff[1]);
    }
    f.pEnv->xDestroy(f.pEnv);
  }
  wcs_buf_free(&b);
}
END_TEST

/* Flip every byte of a middle record and of the last one: each case is
** WCS_CORRUPT naming the file and that record's offset. */
START_TEST(test_wal_flipped_byte_is_corruption_naming_offset) {
  LogFix f;
  int iRec;
  logWrite(&f, 8);
  for (iRec = 5; iRec < 8; iRec += 2) {
    uint64_t i, iEnd = iRec + 1 < f.nRec ? f.aOff[iRec + 1] : f.nSize;
    for (i = f.aOff[iRec]; i < iEnd; i++) {
      LogFix g;
      int rc, bTorn, n;
      uint64_t good;
      char *zErr = NULL;
      char zWant[64];
      uint8_t c;
      logWrite(&g, 8);
      {
        wcs_file *fl = NULL;
        size_t nR;
        g.pEnv->xOpen(g.pEnv, "/l/000001.log", WCS_OPEN_READ, &fl, NULL);
        g.pEnv->xRead(fl, i, &c, 1, &nR, NULL);
        g.pEnv->xClose(fl);
      }
      c ^= 0x20;
      if (c == 0) c = 0x55; /* keep it a change, never a zero hole */
      patch(&g, i, &c, 1);
      n = logRead(&g, &rc, &bTorn, &good, &zErr);
      ck_assert_msg(rc == WCS_CORRUPT, "flip at %llu: rc %d torn %d",
                    (unsigned long long)i, rc, bTorn);
      ck_assert_int_eq(n, iRec);
      snprintf(zWant, sizeof zWant, "at offset %llu",
               (unsigned long long)g.aOff[iRec]);
      ck_assert_ptr_nonnull(strstr(zErr, "/l/000001.log"));
      ck_assert_msg(strstr(zErr, zWant) != NULL, "%s", zErr);
      free(zErr);
      g.pEnv->xDestroy(g.pEnv);
    }
  }
  f.pEnv->xDestroy(f.pEnv);
}
END_TEST

/* ---- recovery through the store */

/* The name of the (one) WAL file in zDir. */
static int logNameCb(void *p, const char *z) {
  size_t n = strlen(z);
  if (n > 4 && strcmp(z + n - 4, ".log") == 0) strcpy(p, z);
  return WCS_OK;
}

static char *findLog(wcs_env *pEnv, const char *zDir) {
  static char zName[256];
  zName[0] = 0;
  pEnv->xList(pEnv, zDir, zName, logNameCb, NULL);
  return zName[0] ? zName : NULL;
}

static void openMem(wcs_env *pEnv, wcs_db **pDb, int rcWant, char **pzErr) {
  wcs_options o;
  wcs_options_init(&o);
  o.bNoBackground = 1;
  ck_assert_int_eq(wcs_db_open_env(pDb, "/s", &o, pEnv, pzErr), rcWant);
}

/* A whole file of pEnv (malloc'd), or NULL if it cannot be read. */
static uint8_t *fileBytes(wcs_env *pEnv, const char *z, size_t *pn) {
  wcs_file *f = NULL;
  uint64_t n = 0;
  uint8_t *a = NULL;
  *pn = 0;
  if (pEnv->xOpen(pEnv, z, WCS_OPEN_READ, &f, NULL) != WCS_OK) return NULL;
  if (pEnv->xSize(f, &n, NULL) == WCS_OK && (a = malloc(n + 1)) != NULL &&
      pEnv->xRead(f, 0, a, n, pn, NULL) != WCS_OK) {
    free(a);
    a = NULL;
  }
  pEnv->xClose(f);
  return a;
}

/* Free db as a process that died leaves the store /s: a clean close
** records the length of the log in the manifest (VE_LOG_CLOSED, which
** makes a later cut of the log an error, not a torn tail), so the
** manifest is put back as it was before the close. */
static void closeAsCrashed(wcs_env *pEnv, wcs_db *db) {
  char zMan[64];
  size_t nCur = 0, nMan = 0;
  uint8_t *aCur = fileBytes(pEnv, "/s/CURRENT", &nCur), *aMan;
  wcs_file *f = NULL;
  ck_assert_ptr_nonnull(aCur);
  ck_assert_uint_gt(nCur, 1);
  snprintf(zMan, sizeof zMan, "/s/%.*s", (int)nCur - 1, (char *)aCur);
  free(aCur);
  aMan = fileBytes(pEnv, zMan, &nMan);
  ck_assert_ptr_nonnull(aMan);
  wcs_db_close(db);
  ck_assert_int_eq(
      pEnv->xOpen(pEnv, zMan, WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &f, NULL),
      WCS_OK);
  ck_assert_int_eq(pEnv->xAppend(f, aMan, nMan, NULL), WCS_OK);
  pEnv->xClose(f);
  free(aMan);
}

/* A store whose WAL lost the second half of its last record when its
** process died reopens with every earlier commit, cuts the tail, and
** later commits survive another reopen (they do not follow garbage). */
START_TEST(test_wal_store_recovers_torn_tail_and_keeps_working) {
  wcs_env *pEnv = wcs_env_mem_new();
  wcs_db *db = NULL;
  char zLog[512];
  wcs_file *f = NULL;
  uint64_t n = 0;
  void *p;
  size_t nV;
  int i;
  openMem(pEnv, &db, WCS_OK, NULL);
  for (i = 0; i < 10; i++) {
    char k[8];
    snprintf(k, sizeof k, "k%d", i);
    ck_assert_int_eq(wcs_db_put(db, k, strlen(k), "value", 5), WCS_OK);
  }
  closeAsCrashed(pEnv, db);
  snprintf(zLog, sizeof zLog, "/s/%s", findLog(pEnv, "/s"));
  ck_assert_int_eq(pEnv->xOpen(pEnv, zLog, WCS_OPEN_WRITE, &f, NULL), WCS_OK);
  pEnv->xSize(f, &n, NULL);
  ck_assert_int_eq(pEnv->xTruncate(f, n - 3, NULL), WCS_OK);
  pEnv->xClose(f);
  db = NULL;
  openMem(pEnv, &db, WCS_OK, NULL);
  ck_assert_int_eq(wcs_db_get(db, NULL, "k8", 2, &p, &nV), WCS_OK);
  ck_assert_ptr_nonnull(p);
  wcs_free(p);
  ck_assert_int_eq(wcs_db_get(db, NULL, "k9", 2, &p, &nV), WCS_OK);
  ck_assert_ptr_null(p); /* the torn commit */
  ck_assert_int_eq(wcs_db_put(db, "after", 5, "x", 1), WCS_OK);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  db = NULL;
  openMem(pEnv, &db, WCS_OK, NULL);
  ck_assert_int_eq(wcs_db_get(db, NULL, "after", 5, &p, &nV), WCS_OK);
  ck_assert_ptr_nonnull(p);
  wcs_free(p);
  ck_assert_int_eq(wcs_db_get(db, NULL, "k0", 2, &p, &nV), WCS_OK);
  ck_assert_ptr_nonnull(p);
  wcs_free(p);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  pEnv->xDestroy(pEnv);
}
END_TEST

/* A flipped byte in the body of a WAL makes open fail with WCS_CORRUPT
** naming the log and the offset. */
START_TEST(test_wal_store_refuses_corrupt_log_naming_file_and_offset) {
  wcs_env *pEnv = wcs_env_mem_new();
  wcs_db *db = NULL;
  char zLog[512];
  char *zErr = NULL;
  wcs_file *f = NULL;
  uint8_t a[4096];
  size_t nRead = 0;
  int i;
  openMem(pEnv, &db, WCS_OK, NULL);
  for (i = 0; i < 10; i++) {
    ck_assert_int_eq(wcs_db_put(db, "key", 3, "value", 5), WCS_OK);
  }
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  snprintf(zLog, sizeof zLog, "/s/%s", findLog(pEnv, "/s"));
  pEnv->xOpen(pEnv, zLog, WCS_OPEN_READ, &f, NULL);
  pEnv->xRead(f, 0, a, sizeof a, &nRead, NULL);
  pEnv->xClose(f);
  /* each record is 12 + 12 + 1 + 1+3 + 1+5 = 35 bytes; flip in record 2 */
  a[35 * 2 + 20] ^= 1;
  pEnv->xOpen(pEnv, zLog, WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &f, NULL);
  pEnv->xAppend(f, a, nRead, NULL);
  pEnv->xClose(f);
  db = NULL;
  openMem(pEnv, &db, WCS_CORRUPT, &zErr);
  ck_assert_ptr_null(db);
  ck_assert_ptr_nonnull(strstr(zErr, zLog));
  ck_assert_msg(strstr(zErr, "offset 70") != NULL, "%s", zErr);
  wcs_free(zErr);
  pEnv->xDestroy(pEnv);
}
END_TEST

Suite *storage_wal_suite(void) {
  Suite *s = suite_create("storage_wal");
  TCase *tc = tcase_create("wal");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_wal_record_golden_bytes);
  tcase_add_test(tc, test_wal_batch_payload_decodes);
  tcase_add_test(tc, test_wal_batch_rejects_bad_payloads);
  tcase_add_test(tc, test_wal_roundtrip_records_of_all_sizes);
  tcase_add_test(tc, test_wal_torn_tail_at_every_offset_loses_only_the_tail);
  tcase_add_test(tc, test_wal_zero_filled_tail_is_torn);
  tcase_add_test(tc, test_wal_hole_in_last_record_is_torn);
  tcase_add_test(tc, test_wal_zeros_after_a_damaged_record_are_data);
  tcase_add_test(tc, test_wal_flipped_byte_is_corruption_naming_offset);
  tcase_add_test(tc, test_wal_store_recovers_torn_tail_and_keeps_working);
  tcase_add_test(tc, test_wal_store_refuses_corrupt_log_naming_file_and_offset);
  suite_add_tcase(s, tc);
  return s;
}
