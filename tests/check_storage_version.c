/*
** Tests of version edits and the manifest (storage/version.c): golden
** bytes of an edit and its framed record (the worked example of
** doc/format.md), round trips, malformed edits reported as corruption
** with file and offset, a newer format version refused, the live-log
** fields (golden bytes, malformed ones, the tracked set they build), and a
** store whose
** manifest, CURRENT file or sorted files are damaged: a flipped byte at any
** offset of the manifest is WCS_CORRUPT naming it, a torn manifest tail is
** ignored, and a missing sorted file is named.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/db_int.h"
#include "storage/env.h"
#include "storage/util.h"
#include "storage/version.h"
#include "storage/wal.h"
#include "testutil.h"
#include "wcs.h"

Suite *storage_version_suite(void);

/* log 5, next file 9, last seq 300, delete 000004.sst from level 1, add
** 000008.sst to level 2 (1000 bytes, 2 entries, 20 raw bytes, no range
** tombstones, seqs 1..2, keys a@1 .. z@2). */
static const uint8_t aGoldenEdit[] = {
    0x02, 0x05,       /* VE_LOG 5 */
    0x03, 0x09,       /* VE_NEXT_FILE 9 */
    0x04, 0xac, 0x02, /* VE_LAST_SEQ 300 */
    0x05, 0x01, 0x04, /* VE_DEL_FILE level 1, file 4 */
    0x06, 0x02, 0x08, /* VE_ADD_FILE level 2, file 8 */
    0xe8, 0x07,       /*   1000 bytes */
    0x02, 0x14, 0x00, /*   2 entries, 20 raw bytes, 0 tombstones */
    0x01, 0x02, 0x00, /*   seqs 1..2, flags 0 */
    0x09, 'a',  0x01, 0x01, 0, 0, 0, 0, 0, 0, /* smallest a, seq 1 put */
    0x09, 'z',  0x01, 0x02, 0, 0, 0, 0, 0, 0, /* largest z, seq 2 put */
};
static const uint8_t aGoldenHeader[] = {
    0x5f, 0x53, 0xa8, 0xce, 0x29, 0x00, 0x00, 0x00, 0x8f, 0xa0, 0x8e, 0x7c,
};

static void goldenEdit(wcs_vedit *e) {
  static uint8_t s[9] = {'a', 0x01, 0x01, 0, 0, 0, 0, 0, 0};
  static uint8_t l[9] = {'z', 0x01, 0x02, 0, 0, 0, 0, 0, 0};
  sst_meta m;
  wcs_fmeta *f = NULL;
  memset(e, 0, sizeof *e);
  e->bLog = 1;
  e->iLog = 5;
  e->bNextFile = 1;
  e->iNextFile = 9;
  e->bLastSeq = 1;
  e->lastSeq = 300;
  ck_assert_int_eq(vedit_del_file(e, 1, 4), WCS_OK);
  memset(&m, 0, sizeof m);
  m.iFile = 8;
  m.nBytes = 1000;
  m.nEntries = 2;
  m.nRawBytes = 20;
  m.minSeq = 1;
  m.maxSeq = 2;
  m.pSmallest = s;
  m.nSmallest = 9;
  m.pLargest = l;
  m.nLargest = 9;
  ck_assert_int_eq(fmeta_new(NULL, &m, &f), WCS_OK);
  ck_assert_int_eq(vedit_add_file(e, 2, f), WCS_OK);
}

/* Edit e encodes to exactly aEdit[0..nEdit), and its log record's header
** (wal_frame) to aHeader[0..nHeader). */
static void expectEncoding(const wcs_vedit *e, const uint8_t *aEdit,
                           size_t nEdit, const uint8_t *aHeader,
                           size_t nHeader) {
  wcs_buf b = {0}, r = {0};
  ck_assert_int_eq(vedit_encode(e, &b), WCS_OK);
  ck_assert_uint_eq(b.n, nEdit);
  ck_assert(memcmp(b.a, aEdit, b.n) == 0);
  ck_assert_int_eq(wal_frame(&r, b.a, b.n), WCS_OK);
  ck_assert(memcmp(r.a, aHeader, nHeader) == 0);
  wcs_buf_free(&b);
  wcs_buf_free(&r);
}

START_TEST(test_version_edit_golden_bytes) {
  wcs_vedit e;
  goldenEdit(&e);
  expectEncoding(&e, aGoldenEdit, sizeof aGoldenEdit, aGoldenHeader,
                 sizeof aGoldenHeader);
  vedit_clear(&e);
}
END_TEST

START_TEST(test_version_edit_round_trip) {
  wcs_vedit e, d;
  ck_assert_int_eq(
      vedit_decode(&d, aGoldenEdit, sizeof aGoldenEdit, "M", 0, NULL), WCS_OK);
  goldenEdit(&e);
  ck_assert_int_eq(d.bLog, 1);
  ck_assert_uint_eq(d.iLog, 5);
  ck_assert_uint_eq(d.iNextFile, 9);
  ck_assert_uint_eq(d.lastSeq, 300);
  ck_assert_int_eq(d.nDel, 1);
  ck_assert_int_eq(d.aDel[0].iLevel, 1);
  ck_assert_uint_eq(d.aDel[0].iFile, 4);
  ck_assert_int_eq(d.nAdd, 1);
  ck_assert_int_eq(d.aAdd[0].iLevel, 2);
  ck_assert_uint_eq(d.aAdd[0].pMeta->iFile, 8);
  ck_assert_uint_eq(d.aAdd[0].pMeta->nBytes, 1000);
  ck_assert_uint_eq(d.aAdd[0].pMeta->nSmallest, 9);
  ck_assert(memcmp(d.aAdd[0].pMeta->pLargest, e.aAdd[0].pMeta->pLargest, 9) ==
            0);
  vedit_clear(&e);
  vedit_clear(&d);
}
END_TEST

START_TEST(test_version_malformed_edits_are_corruption) {
  wcs_vedit d;
  uint8_t a[sizeof aGoldenEdit];
  size_t i;
  char *zErr = NULL;
  for (i = 1; i < sizeof aGoldenEdit; i++) {
    int rc = vedit_decode(&d, aGoldenEdit, i, "M", 0, NULL);
    /* a prefix may end exactly between fields; otherwise corrupt */
    if (rc == WCS_OK)
      vedit_clear(&d);
    else
      ck_assert_int_eq(rc, WCS_CORRUPT);
  }
  memcpy(a, aGoldenEdit, sizeof a);
  a[0] = 0x7f; /* unknown tag */
  ck_assert_int_eq(
      vedit_decode(&d, a, sizeof a, "dir/MANIFEST-000003", 77, &zErr),
      WCS_CORRUPT);
  ck_assert_ptr_nonnull(strstr(zErr, "dir/MANIFEST-000003"));
  ck_assert_ptr_nonnull(strstr(zErr, "offset 77"));
  free(zErr);
  zErr = NULL;
  memcpy(a, aGoldenEdit, sizeof a);
  a[11] = 9; /* level 9 */
  ck_assert_int_eq(vedit_decode(&d, a, sizeof a, "M", 0, NULL), WCS_CORRUPT);
  {
    const uint8_t aNew[] = {VE_FORMAT, 9};
    ck_assert_int_eq(vedit_decode(&d, aNew, sizeof aNew, "M", 0, &zErr),
                     WCS_PROTOCOL);
    ck_assert_ptr_nonnull(strstr(zErr, "format version 9"));
    free(zErr);
  }
}
END_TEST

/* The edit of a memtable switch (doc/format.md, "Worked example: live
** logs"): log 5, next file 10, last seq 300, log 7 sealed at 70000 bytes,
** log 9 live. */
static const uint8_t aGoldenLogEdit[] = {
    0x02, 0x05,                   /* VE_LOG 5 */
    0x03, 0x0a,                   /* VE_NEXT_FILE 10 */
    0x04, 0xac, 0x02,             /* VE_LAST_SEQ 300 */
    0x08, 0x07, 0xf0, 0xa2, 0x04, /* VE_LOG_SEAL log 7, 70000 bytes */
    0x07, 0x09,                   /* VE_LOG_LIVE log 9 */
};
static const uint8_t aGoldenLogHeader[] = {
    0xa4, 0xdf, 0x29, 0x17, 0x0e, 0x00, 0x00, 0x00, 0xc0, 0x6d, 0x6e, 0x99,
};

START_TEST(test_version_live_log_fields_golden_bytes) {
  wcs_vedit e, d;
  memset(&e, 0, sizeof e);
  e.bLog = 1;
  e.iLog = 5;
  e.bNextFile = 1;
  e.iNextFile = 10;
  e.bLastSeq = 1;
  e.lastSeq = 300;
  ck_assert_int_eq(vedit_log_seal(&e, 7, 70000), WCS_OK);
  ck_assert_int_eq(vedit_log_live(&e, 9), WCS_OK);
  expectEncoding(&e, aGoldenLogEdit, sizeof aGoldenLogEdit, aGoldenLogHeader,
                 sizeof aGoldenLogHeader);
  /* and back */
  ck_assert_int_eq(
      vedit_decode(&d, aGoldenLogEdit, sizeof aGoldenLogEdit, "M", 0, NULL),
      WCS_OK);
  ck_assert_int_eq(d.nWal, 2);
  ck_assert_uint_eq(d.aWal[0].iNum, 7);
  ck_assert_int_eq(d.aWal[0].bSealed, 1);
  ck_assert_uint_eq(d.aWal[0].nSealed, 70000);
  ck_assert_uint_eq(d.aWal[1].iNum, 9);
  ck_assert_int_eq(d.aWal[1].bSealed, 0);
  ck_assert_uint_eq(d.iLog, 5);
  vedit_clear(&d);
  vedit_clear(&e);
}
END_TEST

/* The edit of a clean close (doc/format.md, "Worked example: a clean
** close"): log number 9, next file 12, last seq 300, log 9 closed at
** 70000 bytes. */
static const uint8_t aGoldenCloseEdit[] = {
    0x02, 0x09,                   /* VE_LOG 9 */
    0x03, 0x0c,                   /* VE_NEXT_FILE 12 */
    0x04, 0xac, 0x02,             /* VE_LAST_SEQ 300 */
    0x09, 0x09, 0xf0, 0xa2, 0x04, /* VE_LOG_CLOSED log 9, 70000 bytes */
};
static const uint8_t aGoldenCloseHeader[] = {
    0xda, 0x74, 0x28, 0xd6, 0x0c, 0x00, 0x00, 0x00, 0x6f, 0xdf, 0x88, 0x03,
};

START_TEST(test_version_closed_log_field_golden_bytes) {
  wcs_vedit e, d;
  size_t i;
  memset(&e, 0, sizeof e);
  e.bLog = 1;
  e.iLog = 9;
  e.bNextFile = 1;
  e.iNextFile = 12;
  e.bLastSeq = 1;
  e.lastSeq = 300;
  ck_assert_int_eq(vedit_log_closed(&e, 9, 70000), WCS_OK);
  expectEncoding(&e, aGoldenCloseEdit, sizeof aGoldenCloseEdit,
                 aGoldenCloseHeader, sizeof aGoldenCloseHeader);
  /* and back */
  ck_assert_int_eq(
      vedit_decode(&d, aGoldenCloseEdit, sizeof aGoldenCloseEdit, "M", 0, NULL),
      WCS_OK);
  ck_assert_int_eq(d.nWal, 1);
  ck_assert_uint_eq(d.aWal[0].iNum, 9);
  ck_assert_int_eq(d.aWal[0].bSealed, 0);
  ck_assert_int_eq(d.aWal[0].bClosed, 1);
  ck_assert_uint_eq(d.aWal[0].nClosed, 70000);
  ck_assert_uint_eq(vedit_wal_min_bytes(&d.aWal[0]), 70000);
  vedit_clear(&d);
  /* cut inside the field (after its tag, its number, or inside the
  ** length): corruption; log number 0 too */
  for (i = 8; i < sizeof aGoldenCloseEdit; i++) {
    ck_assert_int_eq(vedit_decode(&d, aGoldenCloseEdit, i, "M", 0, NULL),
                     WCS_CORRUPT);
  }
  {
    static const uint8_t aZero[] = {VE_LOG_CLOSED, 0, 5};
    ck_assert_int_eq(vedit_decode(&d, aZero, sizeof aZero, "M", 0, NULL),
                     WCS_CORRUPT);
  }
  vedit_clear(&e);
}
END_TEST

/* Cut short, log number 0: corruption naming the manifest. Formats up to
** VE_FORMAT_VERSION are read; a later one is refused with
** WCS_PROTOCOL. */
START_TEST(test_version_malformed_live_log_fields_are_corruption) {
  wcs_vedit d;
  size_t i;
  char *zErr = NULL;
  static const uint8_t aZero[] = {VE_LOG_LIVE, 0};
  static const uint8_t aSealZero[] = {VE_LOG_SEAL, 0, 5};
  static const uint8_t aV2[] = {VE_FORMAT, 2, VE_LOG_LIVE, 4};
  static const uint8_t aV3[] = {VE_FORMAT, 3, VE_LOG_CLOSED, 4, 0x1d};
  static const uint8_t aV4[] = {VE_FORMAT, 4};
  for (i = 1; i < sizeof aGoldenLogEdit; i++) {
    int rc = vedit_decode(&d, aGoldenLogEdit, i, "M", 0, NULL);
    if (rc == WCS_OK)
      vedit_clear(&d);
    else
      ck_assert_int_eq(rc, WCS_CORRUPT);
  }
  /* cut inside the seal: between its number and its length */
  ck_assert_int_eq(vedit_decode(&d, aGoldenLogEdit, 9, "M", 0, NULL),
                   WCS_CORRUPT);
  ck_assert_int_eq(
      vedit_decode(&d, aZero, sizeof aZero, "dir/MANIFEST-000004", 12, &zErr),
      WCS_CORRUPT);
  ck_assert_ptr_nonnull(strstr(zErr, "dir/MANIFEST-000004"));
  ck_assert_ptr_nonnull(strstr(zErr, "log number 0"));
  free(zErr);
  zErr = NULL;
  ck_assert_int_eq(vedit_decode(&d, aSealZero, sizeof aSealZero, "M", 0, NULL),
                   WCS_CORRUPT);
  ck_assert_int_eq(vedit_decode(&d, aV2, sizeof aV2, "M", 0, NULL), WCS_OK);
  ck_assert_int_eq(d.iFormat, 2);
  vedit_clear(&d);
  ck_assert_int_eq(vedit_decode(&d, aV3, sizeof aV3, "M", 0, NULL), WCS_OK);
  ck_assert_int_eq(d.iFormat, 3);
  vedit_clear(&d);
  ck_assert_int_eq(vedit_decode(&d, aV4, sizeof aV4, "M", 0, &zErr),
                   WCS_PROTOCOL);
  ck_assert_ptr_nonnull(strstr(zErr, "format version 4"));
  free(zErr);
}
END_TEST

static void writeAll(wcs_env *pEnv, const char *z, const uint8_t *a, size_t n);

/* Append one framed edit to b. */
static void frameEdit(wcs_buf *b, const uint8_t *p, size_t n) {
  ck_assert_int_eq(wal_frame(b, p, n), WCS_OK);
}

/* The tracked set follows the edits: live, then sealed (a seal wins, in
** either order), and forgotten once VE_LOG passes a log. */
START_TEST(test_version_live_logs_follow_the_edits) {
  wcs_env *pEnv = wcs_env_mem_new();
  wcs_cache *pCache = NULL;
  wcs_vset *vs = NULL;
  wcs_options o;
  wcs_buf b = {0};
  const vedit_wal *a;
  char *zErr = NULL;
  int n;
  static const uint8_t e1[] = {VE_FORMAT,   2, VE_LOG,      3, VE_NEXT_FILE, 4,
                               VE_LAST_SEQ, 0, VE_LOG_LIVE, 3};
  static const uint8_t e2[] = {VE_LOG,      3, VE_LOG_SEAL, 3, 0x64,
                               VE_LOG_LIVE, 6, VE_LOG_LIVE, 5};
  static const uint8_t e3[] = {VE_LOG_LIVE, 8, VE_LOG_SEAL, 8, 0x10,
                               VE_LOG_LIVE, 8, VE_LOG,      5};
  ck_assert_int_eq(pEnv->xMkdir(pEnv, "/s", NULL), WCS_OK);
  frameEdit(&b, e1, sizeof e1);
  frameEdit(&b, e2, sizeof e2);
  frameEdit(&b, e3, sizeof e3);
  writeAll(pEnv, "/s/MANIFEST-000002", b.a, b.n);
  writeAll(pEnv, "/s/CURRENT", (const uint8_t *)"MANIFEST-000002\n", 16);
  wcs_options_init(&o);
  ck_assert_int_eq(wcs_cache_new(1 << 20, &pCache), WCS_OK);
  ck_assert_int_eq(vset_open(pEnv, "/s", &o, pCache, 1, 0, &vs, &zErr), WCS_OK);
  n = vset_live_logs(vs, &a);
  ck_assert_int_eq(n, 3);
  ck_assert_uint_eq(a[0].iNum, 5);
  ck_assert_int_eq(a[0].bSealed, 0);
  ck_assert_uint_eq(a[1].iNum, 6);
  ck_assert_int_eq(a[1].bSealed, 0);
  ck_assert_uint_eq(a[2].iNum, 8);
  ck_assert_int_eq(a[2].bSealed, 1);
  ck_assert_uint_eq(a[2].nSealed, 16);
  ck_assert_ptr_null(vset_log_tracked(vs, 3));
  ck_assert_ptr_nonnull(vset_log_tracked(vs, 6));
  /* file numbers never repeat: the next one is above every tracked log */
  ck_assert_uint_ge(vset_next_file(vs), 9);
  vset_close(vs);
  wcs_cache_free(pCache);
  wcs_buf_free(&b);
  pEnv->xDestroy(pEnv);
}
END_TEST

/* A clean close's record keeps a log live and tracks its length: it wins
** over a live mark (in either order), a later close replaces it, a seal
** wins over it (in either order), and VE_LOG drops it like the others. */
START_TEST(test_version_closed_logs_follow_the_edits) {
  wcs_env *pEnv = wcs_env_mem_new();
  wcs_cache *pCache = NULL;
  wcs_vset *vs = NULL;
  wcs_options o;
  wcs_buf b = {0};
  const vedit_wal *a;
  char *zErr = NULL;
  int n;
  static const uint8_t e1[] = {
      VE_FORMAT,     3, VE_LOG,      3, VE_NEXT_FILE, 4,
      VE_LAST_SEQ,   0, VE_LOG_LIVE, 3, /* log 3 live, */
      VE_LOG_CLOSED, 3, 0x20,           /* then closed */
      VE_LOG_CLOSED, 4, 0x30,           /* log 4 closed, */
      VE_LOG_LIVE,   4,                 /* then live: still closed */
  };
  static const uint8_t e2[] = {
      VE_LOG_CLOSED, 3, 0x40, /* closed again, longer */
      VE_LOG_CLOSED, 5, 0x50, /* log 5 closed, */
      VE_LOG_SEAL,   5, 0x60, /* then sealed */
      VE_LOG_CLOSED, 6, 0x70, /* log 6 closed */
  };
  static const uint8_t e3[] = {
      VE_LOG_SEAL,   6, 0x71, /* sealed, */
      VE_LOG_CLOSED, 6, 0x72, /* then closed: still sealed */
      VE_LOG,        4,       /* log 3 obsolete */
  };
  ck_assert_int_eq(pEnv->xMkdir(pEnv, "/s", NULL), WCS_OK);
  frameEdit(&b, e1, sizeof e1);
  frameEdit(&b, e2, sizeof e2);
  frameEdit(&b, e3, sizeof e3);
  writeAll(pEnv, "/s/MANIFEST-000002", b.a, b.n);
  writeAll(pEnv, "/s/CURRENT", (const uint8_t *)"MANIFEST-000002\n", 16);
  wcs_options_init(&o);
  ck_assert_int_eq(wcs_cache_new(1 << 20, &pCache), WCS_OK);
  ck_assert_int_eq(vset_open(pEnv, "/s", &o, pCache, 1, 0, &vs, &zErr), WCS_OK);
  n = vset_live_logs(vs, &a);
  ck_assert_int_eq(n, 3); /* log 3 went with VE_LOG 4 */
  ck_assert_uint_eq(a[0].iNum, 4);
  ck_assert_int_eq(a[0].bSealed, 0);
  ck_assert_int_eq(a[0].bClosed, 1); /* not undone by the later live mark */
  ck_assert_uint_eq(a[0].nClosed, 0x30);
  ck_assert_uint_eq(vedit_wal_min_bytes(&a[0]), 0x30);
  ck_assert_uint_eq(a[1].iNum, 5);
  ck_assert_int_eq(a[1].bSealed, 1); /* sealed after its close */
  ck_assert_uint_eq(vedit_wal_min_bytes(&a[1]), 0x60);
  ck_assert_uint_eq(a[2].iNum, 6);
  ck_assert_int_eq(a[2].bSealed, 1); /* a close after the seal: still sealed */
  ck_assert_uint_eq(a[2].nSealed, 0x71);
  ck_assert_uint_eq(vedit_wal_min_bytes(&a[2]), 0x71);
  ck_assert_ptr_null(vset_log_tracked(vs, 3));
  vset_close(vs);
  wcs_cache_free(pCache);
  wcs_buf_free(&b);
  pEnv->xDestroy(pEnv);
}
END_TEST

/* ---- damaged stores */

static void fill(wcs_env *pEnv) {
  wcs_db *db = NULL;
  wcs_options o;
  int i;
  wcs_options_init(&o);
  o.bNoBackground = 1;
  ck_assert_int_eq(wcs_db_open_env(&db, "/s", &o, pEnv, NULL), WCS_OK);
  for (i = 0; i < 50; i++) {
    char k[16];
    snprintf(k, sizeof k, "key%03d", i);
    ck_assert_int_eq(wcs_db_put(db, k, strlen(k), "v", 1), WCS_OK);
    if (i % 20 == 19) ck_assert_int_eq(wcs_db_flush(db), WCS_OK);
  }
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
}

static int openRc(wcs_env *pEnv, char **pzErr) {
  wcs_db *db = NULL;
  wcs_options o;
  int rc;
  wcs_options_init(&o);
  o.bNoBackground = 1;
  o.bReadOnly = 1; /* leave the files as they are */
  rc = wcs_db_open_env(&db, "/s", &o, pEnv, pzErr);
  if (rc == WCS_OK) {
    void *p = NULL;
    size_t n;
    ck_assert_int_eq(wcs_db_get(db, NULL, "key007", 6, &p, &n), WCS_OK);
    ck_assert_ptr_nonnull(p);
    wcs_free(p);
    wcs_db_close(db);
  }
  return rc;
}

static int manifestName(void *p, const char *z) {
  if (strncmp(z, "MANIFEST-", 9) == 0) snprintf(p, 64, "/s/%s", z);
  return WCS_OK;
}

static uint8_t *readAll(wcs_env *pEnv, const char *z, size_t *pn) {
  wcs_file *f = NULL;
  uint64_t n = 0;
  uint8_t *a;
  ck_assert_int_eq(pEnv->xOpen(pEnv, z, WCS_OPEN_READ, &f, NULL), WCS_OK);
  pEnv->xSize(f, &n, NULL);
  a = malloc(n + 1);
  pEnv->xRead(f, 0, a, n, pn, NULL);
  pEnv->xClose(f);
  return a;
}

static void writeAll(wcs_env *pEnv, const char *z, const uint8_t *a, size_t n) {
  wcs_file *f = NULL;
  ck_assert_int_eq(
      pEnv->xOpen(pEnv, z, WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &f, NULL),
      WCS_OK);
  ck_assert_int_eq(pEnv->xAppend(f, a, n, NULL), WCS_OK);
  pEnv->xClose(f);
}

/* Every single flipped byte of the manifest is detected and named. */
START_TEST(test_version_flipped_manifest_byte_is_corruption) {
  wcs_env *pEnv = wcs_env_mem_new();
  char zMan[64] = "";
  uint8_t *a;
  size_t n = 0, i;
  fill(pEnv);
  pEnv->xList(pEnv, "/s", zMan, manifestName, NULL);
  ck_assert(zMan[0] != 0);
  a = readAll(pEnv, zMan, &n);
  ck_assert_uint_gt(n, 40);
  ck_assert_int_eq(openRc(pEnv, NULL), WCS_OK);
  for (i = 0; i < n; i++) {
    char *zErr = NULL;
    int rc;
    a[i] ^= 0x08;
    writeAll(pEnv, zMan, a, n);
    rc = openRc(pEnv, &zErr);
    ck_assert_msg(rc == WCS_CORRUPT, "flip at %zu: rc %d (%s)", i, rc,
                  zErr ? zErr : "");
    ck_assert_msg(strstr(zErr, zMan) != NULL, "%s", zErr);
    ck_assert_msg(strstr(zErr, "offset") != NULL, "%s", zErr);
    wcs_free(zErr);
    a[i] ^= 0x08;
  }
  writeAll(pEnv, zMan, a, n);
  ck_assert_int_eq(openRc(pEnv, NULL), WCS_OK);
  free(a);
  pEnv->xDestroy(pEnv);
}
END_TEST

/* Half of an edit at the end of the manifest was never applied: ignored. */
START_TEST(test_version_torn_manifest_tail_is_ignored) {
  wcs_env *pEnv = wcs_env_mem_new();
  char zMan[64] = "";
  uint8_t *a;
  size_t n = 0;
  wcs_buf b = {0};
  fill(pEnv);
  pEnv->xList(pEnv, "/s", zMan, manifestName, NULL);
  a = readAll(pEnv, zMan, &n);
  ck_assert_int_eq(wal_frame(&b, aGoldenEdit, sizeof aGoldenEdit), WCS_OK);
  a = realloc(a, n + b.n);
  memcpy(a + n, b.a, b.n / 2);
  writeAll(pEnv, zMan, a, n + b.n / 2);
  ck_assert_int_eq(openRc(pEnv, NULL), WCS_OK);
  /* and a writable open goes on from there */
  {
    wcs_db *db = NULL;
    wcs_options o;
    wcs_options_init(&o);
    ck_assert_int_eq(wcs_db_open_env(&db, "/s", &o, pEnv, NULL), WCS_OK);
    ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  }
  ck_assert_int_eq(openRc(pEnv, NULL), WCS_OK);
  free(a);
  wcs_buf_free(&b);
  pEnv->xDestroy(pEnv);
}
END_TEST

/* A fresh manifest (written here because the old one's tail is torn)
** repeats the live logs in its first edit, with the length recorded at
** the last clean close: losing the log, or a part of it, is still
** detected after the rewrite. */
START_TEST(test_version_fresh_manifest_carries_live_logs) {
  wcs_env *pEnv = wcs_env_mem_new();
  char zMan[64] = "", zNew[64] = "", zLog[64];
  uint8_t *a;
  size_t n = 0;
  uint64_t nClosed = 0;
  wcs_buf b = {0};
  wcs_vedit e;
  char *zErr = NULL;
  fill(pEnv);
  pEnv->xList(pEnv, "/s", zMan, manifestName, NULL);
  a = readAll(pEnv, zMan, &n);
  ck_assert_int_eq(wal_frame(&b, aGoldenEdit, sizeof aGoldenEdit), WCS_OK);
  a = realloc(a, n + b.n);
  memcpy(a + n, b.a, b.n / 2);
  writeAll(pEnv, zMan, a, n + b.n / 2);
  free(a);
  {
    wcs_db *db = NULL;
    wcs_options o;
    wcs_options_init(&o);
    ck_assert_int_eq(wcs_db_open_env(&db, "/s", &o, pEnv, NULL), WCS_OK);
    ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  }
  pEnv->xList(pEnv, "/s", zNew, manifestName, NULL);
  ck_assert_str_ne(zMan, zNew);
  a = readAll(pEnv, zNew, &n);
  ck_assert_uint_gt(n, WAL_HEADER);
  ck_assert_int_eq(vedit_decode(&e, a + WAL_HEADER, wcs_get32(a + WAL_OFF_LEN),
                                zNew, 0, NULL),
                   WCS_OK);
  ck_assert_int_eq(e.iFormat, VE_FORMAT_VERSION);
  ck_assert_int_eq(e.nWal, 1);
  snprintf(zLog, sizeof zLog, "/s/%06llu.log",
           (unsigned long long)e.aWal[0].iNum);
  ck_assert_int_eq(e.aWal[0].bClosed, 1);
  nClosed = e.aWal[0].nClosed;
  vedit_clear(&e);
  free(a);
  ck_assert_int_eq(openRc(pEnv, NULL), WCS_OK);
  a = readAll(pEnv, zLog, &n);
  ck_assert_uint_eq(n, nClosed); /* fill()'s last commits are in it */
  ck_assert_uint_gt(n, 0);
  writeAll(pEnv, zLog, a, n - 1);
  ck_assert_int_eq(openRc(pEnv, &zErr), WCS_CORRUPT);
  ck_assert_msg(strstr(zErr, "shorter than recorded") != NULL, "%s", zErr);
  wcs_free(zErr);
  zErr = NULL;
  writeAll(pEnv, zLog, a, n);
  free(a);
  ck_assert_int_eq(openRc(pEnv, NULL), WCS_OK);
  ck_assert_int_eq(pEnv->xDelete(pEnv, zLog, NULL), WCS_OK);
  ck_assert_int_eq(openRc(pEnv, &zErr), WCS_CORRUPT);
  ck_assert_msg(strstr(zErr, zLog) != NULL, "%s", zErr);
  wcs_free(zErr);
  wcs_buf_free(&b);
  pEnv->xDestroy(pEnv);
}
END_TEST

/* An environment over the memory one whose directory sync fails once,
** right after CURRENT was renamed (armed by gbSyncFail). */
static wcs_env *gpBaseEnv;
static int gbSyncFail, gbRenamedCurrent, gbManifestFull;
static int renameNoting(wcs_env *e, const char *zFrom, const char *zTo,
                        char **pzErr) {
  size_t n = strlen(zTo);
  (void)e;
  gbRenamedCurrent = n >= 7 && strcmp(zTo + n - 7, "CURRENT") == 0;
  return gpBaseEnv->xRename(gpBaseEnv, zFrom, zTo, pzErr);
}
static int syncDirFailing(wcs_env *e, const char *zDir, char **pzErr) {
  (void)e;
  if (gbSyncFail && gbRenamedCurrent) {
    gbSyncFail = 0;
    return wcs_seterr(pzErr, WCS_IOERR, "injected: syncing %s", zDir);
  }
  return gpBaseEnv->xSyncDir(gpBaseEnv, zDir, pzErr);
}
static void destroyNothing(wcs_env *e) { (void)e; }
/* (the memory environment's own functions take it, not the wrapper) */
static int openBase(wcs_env *e, const char *z, int fl, wcs_file **pp,
                    char **pzErr) {
  (void)e;
  if (gbManifestFull && (fl & WCS_OPEN_WRITE) && strstr(z, "MANIFEST-")) {
    return wcs_seterr(pzErr, WCS_FULL, "injected: no room for %s", z);
  }
  return gpBaseEnv->xOpen(gpBaseEnv, z, fl, pp, pzErr);
}
static int deleteBase(wcs_env *e, const char *z, char **pzErr) {
  (void)e;
  return gpBaseEnv->xDelete(gpBaseEnv, z, pzErr);
}
static int existsBase(wcs_env *e, const char *z, int *pb) {
  (void)e;
  return gpBaseEnv->xExists(gpBaseEnv, z, pb);
}
static int mkdirBase(wcs_env *e, const char *z, char **pzErr) {
  (void)e;
  return gpBaseEnv->xMkdir(gpBaseEnv, z, pzErr);
}
static int listBase(wcs_env *e, const char *z, void *pCtx,
                    int (*x)(void *, const char *), char **pzErr) {
  (void)e;
  return gpBaseEnv->xList(gpBaseEnv, z, pCtx, x, pzErr);
}
static int lockBase(wcs_env *e, const char *z, int bEx, void **pp,
                    char **pzErr) {
  (void)e;
  return gpBaseEnv->xLock(gpBaseEnv, z, bEx, pp, pzErr);
}
static void unlockBase(wcs_env *e, void *p) {
  (void)e;
  gpBaseEnv->xUnlock(gpBaseEnv, p);
}

/* A store open for long starts a fresh manifest once the one in use
** passes the size an open would rewrite (each flush and compaction
** appends an edit): the manifest stays bounded, and the store reopens
** whole. */
START_TEST(test_version_manifest_rolls_while_open) {
  wcs_env *pEnv = wcs_env_mem_new();
  wcs_db *db = NULL;
  wcs_options o;
  char zMan[64] = "", zFirst[64] = "";
  size_t n = 0;
  uint8_t *a;
  int i, nRolls = 0;
  wcs_options_init(&o);
  ck_assert_int_eq(wcs_db_open_env(&db, "/s", &o, pEnv, NULL), WCS_OK);
  pEnv->xList(pEnv, "/s", zFirst, manifestName, NULL);
  for (i = 0; i < 1200; i++) {
    /* keys of 1,500 bytes: each edit names a file by its first and last
    ** keys, so a few hundred flushes pass the size */
    char zKey[1501];
    memset(zKey, 'k', 1500);
    snprintf(zKey + 1494, 7, "%05d", i % 50);
    ck_assert_int_eq(wcs_db_put(db, zKey, 1500, "v", 1), WCS_OK);
    ck_assert_int_eq(wcs_db_flush(db), WCS_OK);
    if (i % 100 == 99) {
      pEnv->xList(pEnv, "/s", zMan, manifestName, NULL);
      a = readAll(pEnv, zMan, &n);
      free(a);
      ck_assert_uint_le(n, VSET_REUSE_BYTES + 4096);
      nRolls += strcmp(zMan, zFirst) != 0;
      strcpy(zFirst, zMan);
    }
  }
  ck_assert_int_gt(nRolls, 0);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  /* a roll whose CURRENT was renamed but whose directory sync failed: the
  ** new manifest stays and takes the edits, CURRENT naming it (the old
  ** one was kept for a CURRENT not yet durable, and deleted at open) */
  {
    wcs_env wrap = *pEnv;
    gpBaseEnv = pEnv;
    wrap.xRename = renameNoting;
    wrap.xSyncDir = syncDirFailing;
    wrap.xDestroy = destroyNothing;
    wrap.xOpen = openBase;
    wrap.xDelete = deleteBase;
    wrap.xExists = existsBase;
    wrap.xMkdir = mkdirBase;
    wrap.xList = listBase;
    wrap.xLock = lockBase;
    wrap.xUnlock = unlockBase;
    ck_assert_int_eq(wcs_db_open_env(&db, "/s", &o, &wrap, NULL), WCS_OK);
    gbSyncFail = 1;
    for (i = 0; i < 1200 && gbSyncFail; i++) {
      char zKey[1501];
      memset(zKey, 'k', 1500);
      snprintf(zKey + 1494, 7, "%05d", i % 50);
      ck_assert_int_eq(wcs_db_put(db, zKey, 1500, "w", 1), WCS_OK);
      ck_assert_int_eq(wcs_db_flush(db), WCS_OK);
    }
    ck_assert_int_eq(gbSyncFail, 0); /* the failure happened */
    gbManifestFull = 1; /* and no later roll can mend CURRENT */
    {
      /* one more row, in the edits after the failure */
      char zKey[1501];
      memset(zKey, 'k', 1500);
      snprintf(zKey + 1494, 7, "%05d", 0);
      ck_assert_int_eq(wcs_db_put(db, zKey, 1500, "x", 1), WCS_OK);
      ck_assert_int_eq(wcs_db_flush(db), WCS_OK);
    }
    ck_assert_int_eq(wcs_db_close(db), WCS_OK);
    gbManifestFull = 0;
  }
  ck_assert_int_eq(wcs_db_open_env(&db, "/s", &o, pEnv, NULL), WCS_OK);
  for (i = 0; i < 50; i++) {
    char zKey[1501];
    void *v = NULL;
    size_t nv = 0;
    memset(zKey, 'k', 1500);
    snprintf(zKey + 1494, 7, "%05d", i);
    ck_assert_int_eq(wcs_db_get(db, NULL, zKey, 1500, &v, &nv), WCS_OK);
    ck_assert_uint_eq(nv, 1);
    ck_assert_int_eq(((char *)v)[0], i == 0 ? 'x' : 'w');
    wcs_free(v);
  }
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  pEnv->xDestroy(pEnv);
}
END_TEST

START_TEST(test_version_damaged_current_is_named) {
  wcs_env *pEnv = wcs_env_mem_new();
  char *zErr = NULL;
  fill(pEnv);
  writeAll(pEnv, "/s/CURRENT", (const uint8_t *)"MANIFEST-", 9);
  ck_assert_int_eq(openRc(pEnv, &zErr), WCS_CORRUPT);
  ck_assert_ptr_nonnull(strstr(zErr, "/s/CURRENT"));
  wcs_free(zErr);
  zErr = NULL;
  writeAll(pEnv, "/s/CURRENT", (const uint8_t *)"MANIFEST-000999\n", 16);
  ck_assert_int_eq(openRc(pEnv, &zErr), WCS_CORRUPT);
  ck_assert_ptr_nonnull(strstr(zErr, "MANIFEST-000999"));
  wcs_free(zErr);
  pEnv->xDestroy(pEnv);
}
END_TEST

static int sstName(void *p, const char *z) {
  size_t n = strlen(z);
  if (n > 4 && strcmp(z + n - 4, ".sst") == 0) snprintf(p, 64, "/s/%s", z);
  return WCS_OK;
}

START_TEST(test_version_missing_sorted_file_is_named) {
  wcs_env *pEnv = wcs_env_mem_new();
  char zSst[64] = "";
  char *zErr = NULL;
  fill(pEnv);
  pEnv->xList(pEnv, "/s", zSst, sstName, NULL);
  ck_assert(zSst[0] != 0);
  ck_assert_int_eq(pEnv->xDelete(pEnv, zSst, NULL), WCS_OK);
  ck_assert_int_eq(openRc(pEnv, &zErr), WCS_CORRUPT);
  ck_assert_msg(strstr(zErr, zSst) != NULL, "%s", zErr);
  ck_assert_ptr_nonnull(strstr(zErr, "missing"));
  wcs_free(zErr);
  pEnv->xDestroy(pEnv);
}
END_TEST

/* Files no version names (an interrupted compaction's output) are removed
** by the next writable open; live ones stay. */
START_TEST(test_version_unreferenced_files_are_swept) {
  wcs_env *pEnv = wcs_env_mem_new();
  wcs_db *db = NULL;
  wcs_options o;
  int bExists = 1;
  fill(pEnv);
  writeAll(pEnv, "/s/999999.sst", (const uint8_t *)"junk", 4);
  writeAll(pEnv, "/s/000777.tmp", (const uint8_t *)"junk", 4);
  wcs_options_init(&o);
  ck_assert_int_eq(wcs_db_open_env(&db, "/s", &o, pEnv, NULL), WCS_OK);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  pEnv->xExists(pEnv, "/s/999999.sst", &bExists);
  ck_assert_int_eq(bExists, 0);
  pEnv->xExists(pEnv, "/s/000777.tmp", &bExists);
  ck_assert_int_eq(bExists, 0);
  ck_assert_int_eq(openRc(pEnv, NULL), WCS_OK);
  pEnv->xDestroy(pEnv);
}
END_TEST

/* A manifest that lost edits (cut short, or an older copy put back)
** would open as an older store and sweep away the files only those edits
** name: each file records the manifest's size when it was begun, so one
** the manifest does not name that was begun when it was longer proves the
** loss, and the open is refused with nothing changed. A file the manifest
** does not name that was begun within its present length is what an
** unfinished flush or compaction leaves, and is swept as before. */
START_TEST(test_version_manifest_that_lost_edits_is_refused) {
  wcs_env *pEnv = wcs_env_mem_new();
  wcs_db *db = NULL;
  wcs_options o;
  char zMan[64] = "", zSst[64] = "";
  char *zErr = NULL;
  uint8_t *a;
  size_t n = 0;
  int bExists = 0;
  fill(pEnv);
  /* an unfinished job's output: a copy of a live file, under a new number */
  pEnv->xList(pEnv, "/s", zSst, sstName, NULL);
  a = readAll(pEnv, zSst, &n);
  writeAll(pEnv, "/s/999998.sst", a, n);
  free(a);
  wcs_options_init(&o);
  o.bNoBackground = 1;
  ck_assert_int_eq(wcs_db_open_env(&db, "/s", &o, pEnv, NULL), WCS_OK);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  pEnv->xExists(pEnv, "/s/999998.sst", &bExists);
  ck_assert_int_eq(bExists, 0);
  /* a manifest cut to its first edit */
  pEnv->xList(pEnv, "/s", zMan, manifestName, NULL);
  a = readAll(pEnv, zMan, &n);
  ck_assert_uint_gt(n, 40);
  writeAll(pEnv, zMan, a, 20);
  ck_assert_int_eq(wcs_db_open_env(&db, "/s", &o, pEnv, &zErr), WCS_CORRUPT);
  ck_assert_msg(strstr(zErr, "the manifest has lost edits") != NULL, "%s",
                zErr);
  ck_assert_msg(strstr(zErr, zMan + 3) != NULL, "%s", zErr);
  wcs_free(zErr);
  zErr = NULL;
  ck_assert_int_eq(openRc(pEnv, &zErr), WCS_CORRUPT);
  wcs_free(zErr);
  pEnv->xExists(pEnv, zSst, &bExists);
  ck_assert_int_eq(bExists, 1); /* nothing was swept */
  /* the manifest put back whole: everything is there */
  writeAll(pEnv, zMan, a, n);
  free(a);
  ck_assert_int_eq(openRc(pEnv, NULL), WCS_OK);
  pEnv->xDestroy(pEnv);
}
END_TEST

/* A store that lost CURRENT is refused, not recreated over its files. */
START_TEST(test_version_missing_current_with_files_is_refused) {
  wcs_env *pEnv = wcs_env_mem_new();
  wcs_db *db = NULL;
  wcs_options o;
  char *zErr = NULL;
  int bExists = 0;
  fill(pEnv);
  ck_assert_int_eq(pEnv->xDelete(pEnv, "/s/CURRENT", NULL), WCS_OK);
  wcs_options_init(&o);
  ck_assert_int_eq(wcs_db_open_env(&db, "/s", &o, pEnv, &zErr), WCS_CORRUPT);
  ck_assert_ptr_nonnull(strstr(zErr, "/s/CURRENT is missing"));
  wcs_free(zErr);
  {
    char zSst[64] = "";
    pEnv->xList(pEnv, "/s", zSst, sstName, NULL);
    pEnv->xExists(pEnv, zSst, &bExists);
    ck_assert_int_eq(bExists, 1); /* nothing was swept */
  }
  pEnv->xDestroy(pEnv);
}
END_TEST

/* A crash while a store is being created leaves a manifest without CURRENT
** and no data; the next open creates the store instead of refusing. A
** non-empty WAL without CURRENT is refused like sorted files are. */
START_TEST(test_version_unfinished_creation_is_recreated) {
  wcs_env *pEnv = wcs_env_mem_new();
  wcs_db *db = NULL;
  wcs_options o;
  char *zErr = NULL;
  static const uint8_t aJunk[] = {1, 2, 3};
  ck_assert_int_eq(pEnv->xMkdir(pEnv, "/s", NULL), WCS_OK);
  writeAll(pEnv, "/s/MANIFEST-000002", aJunk, sizeof aJunk);
  writeAll(pEnv, "/s/000003.log", aJunk, 0);
  wcs_options_init(&o);
  ck_assert_int_eq(wcs_db_open_env(&db, "/s", &o, pEnv, &zErr), WCS_OK);
  ck_assert_int_eq(wcs_db_put(db, "k", 1, "v", 1), WCS_OK);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  db = NULL;
  ck_assert_int_eq(pEnv->xDelete(pEnv, "/s/CURRENT", NULL), WCS_OK);
  ck_assert_int_eq(wcs_db_open_env(&db, "/s", &o, pEnv, &zErr), WCS_CORRUPT);
  ck_assert_ptr_nonnull(strstr(zErr, "/s/CURRENT is missing"));
  wcs_free(zErr);
  pEnv->xDestroy(pEnv);
}
END_TEST

Suite *storage_version_suite(void) {
  Suite *s = suite_create("storage_version");
  TCase *tc = tcase_create("version");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_version_edit_golden_bytes);
  tcase_add_test(tc, test_version_edit_round_trip);
  tcase_add_test(tc, test_version_malformed_edits_are_corruption);
  tcase_add_test(tc, test_version_live_log_fields_golden_bytes);
  tcase_add_test(tc, test_version_malformed_live_log_fields_are_corruption);
  tcase_add_test(tc, test_version_live_logs_follow_the_edits);
  tcase_add_test(tc, test_version_closed_log_field_golden_bytes);
  tcase_add_test(tc, test_version_closed_logs_follow_the_edits);
  tcase_add_test(tc, test_version_flipped_manifest_byte_is_corruption);
  tcase_add_test(tc, test_version_torn_manifest_tail_is_ignored);
  tcase_add_test(tc, test_version_fresh_manifest_carries_live_logs);
  tcase_add_test(tc, test_version_manifest_rolls_while_open);
  tcase_add_test(tc, test_version_damaged_current_is_named);
  tcase_add_test(tc, test_version_missing_sorted_file_is_named);
  tcase_add_test(tc, test_version_unreferenced_files_are_swept);
  tcase_add_test(tc, test_version_manifest_that_lost_edits_is_refused);
  tcase_add_test(tc, test_version_missing_current_with_files_is_refused);
  tcase_add_test(tc, test_version_unfinished_creation_is_recreated);
  suite_add_tcase(s, tc);
  return s;
}
