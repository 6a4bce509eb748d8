/*
** check_vtab_damage.c — Check suite "vtab_damage": a damaged store seen
** through SQL. One byte of one of the store's files (sorted files with
** the catalog and the rows, the log, the manifest, CURRENT) is flipped in
** a copy of a database and its store, and a set of statements runs on the
** copy: each must give the rows it gives on the undamaged store, or fail
** with an error; never other rows, never a crash (the sanitizer builds
** run this suite too).
**
** The store holds settled rows (compacted into a sorted file) and newer
** ones only in the log, two families with a GC policy, and overwritten
** cells, so the statements read every kind of file and block. The flipped
** offsets are a fixed-seed sample of every file's bytes (all of the small
** files'); WCS_DAMAGE_ALL=1 flips every byte of every file.
*/
#include <check.h>
#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sqlutil.h"
#include "testutil.h"
#include "wcs.h"

Suite *vtab_damage_suite(void);

#define MAX_FILES 32

/* The statements, and what each gives on the undamaged store. */
static const char *azQuery[] = {
    "SELECT k, n, v, s, g FROM t ORDER BY k, n",
    "SELECT v, s FROM t WHERE k = 'key0042' AND n = 7",
    ("SELECT k, n FROM t WHERE k >= 'key0100' AND k < 'key0110' "
     "ORDER BY k DESC, n DESC"),
    "SELECT count(*), sum(v) FROM t",
    /* (columns by position: a view attached to a store that does not
    ** open declares none of its own, so a name would fail in SQLite) */
    "SELECT * FROM th LIMIT 60",
    "SELECT count(*) FROM th",
    "SELECT count(*) FROM t WHERE k = 'new0003'",
};
#define N_QUERY ((int)(sizeof azQuery / sizeof azQuery[0]))

static sqlite3 *openDb(const char *zPath) {
  sqlite3 *db = NULL;
  ck_assert_int_eq(sqlite3_open(zPath, &db), SQLITE_OK);
  ck_assert_int_eq(wcs_register(db), SQLITE_OK);
  return db;
}

static void exec(sqlite3 *db, const char *zSql) {
  char *zErr = NULL;
  int rc = sqlite3_exec(db, zSql, NULL, NULL, &zErr);
  ck_assert_msg(rc == SQLITE_OK, "%s: %s", zSql, zErr ? zErr : "?");
  sqlite3_free(zErr);
}

/* Build the database zDir/d.db and its store zDir/d.db.wcs. */
static void build(const char *zDir) {
  char zPath[1200];
  sqlite3 *db;
  snprintf(zPath, sizeof zPath, "%s/d.db", zDir);
  db = openDb(zPath);
  exec(db, "CREATE VIRTUAL TABLE t USING wcs("
           "KEY (k STRING, n INT64 DECIMAL(4)) DELIMITED BY '#',"
           "FAMILY f (v INT64, s STRING) MAX VERSIONS 2, FAMILY g);"
           "CREATE VIRTUAL TABLE th USING wcs(TABLE 't', HISTORY)");
  exec(db, "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c "
           "WHERE i < 1499) "
           "INSERT INTO t(k, n, v, s, g, _timestamp) "
           "SELECT printf('key%04d', i / 10), i % 10, i * 7919, "
           "printf('text %d of the row', i), json_object('x', i % 3), "
           "1000000 + i FROM c");
  exec(db, "UPDATE t SET v = v + 1, _timestamp = 3000000 WHERE n = 7");
  exec(db, "SELECT wcs_compact('t')");
  /* newer rows that stay in the log */
  exec(db, "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c "
           "WHERE i < 19) "
           "INSERT INTO t(k, n, v, s, _timestamp) "
           "SELECT printf('new%04d', i), 1, i, 'fresh', 4000000 + i FROM c");
  exec(db, "UPDATE t SET s = 'changed', _timestamp = 5000000 "
           "WHERE k = 'key0007' AND n < 3");
  sqlite3_close(db);
}

static void copyFile(const char *zFrom, const char *zTo) {
  size_t n = 0;
  void *p = tu_read_file(zFrom, &n);
  ck_assert_msg(p != NULL || n == 0, "cannot read %s", zFrom);
  ck_assert_int_eq(tu_write_file(zTo, p ? p : "", n), 0);
  free(p);
}

/* The store's file names (not LOCK), sorted. */
static int storeFiles(const char *zStore, char azName[][64]) {
  DIR *d = opendir(zStore);
  struct dirent *e;
  int n = 0, i, j;
  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, "LOCK") == 0) continue;
    ck_assert_int_lt(n, MAX_FILES);
    ck_assert_int_lt(strlen(e->d_name), 64);
    strcpy(azName[n++], e->d_name);
  }
  closedir(d);
  for (i = 1; i < n; i++) {
    for (j = i; j > 0 && strcmp(azName[j - 1], azName[j]) > 0; j--) {
      char t[64];
      strcpy(t, azName[j]);
      strcpy(azName[j], azName[j - 1]);
      strcpy(azName[j - 1], t);
    }
  }
  return n;
}

/* Copy the database and store of zSrc into zDst (made anew), with byte
** iOff of store file zFlip flipped (zFlip NULL: no flip). */
static void copyWithFlip(const char *zSrc, const char *zDst, char azName[][64],
                         int nName, const char *zFlip, size_t iOff) {
  char zA[1200], zB[1200];
  int i;
  tu_rmrf(zDst);
  ck_assert_int_eq(mkdir(zDst, 0755), 0);
  snprintf(zA, sizeof zA, "%s/d.db.wcs", zDst);
  ck_assert_int_eq(mkdir(zA, 0755), 0);
  snprintf(zA, sizeof zA, "%s/d.db", zSrc);
  snprintf(zB, sizeof zB, "%s/d.db", zDst);
  copyFile(zA, zB);
  for (i = 0; i < nName; i++) {
    snprintf(zA, sizeof zA, "%s/d.db.wcs/%s", zSrc, azName[i]);
    snprintf(zB, sizeof zB, "%s/d.db.wcs/%s", zDst, azName[i]);
    if (zFlip && strcmp(zFlip, azName[i]) == 0) {
      size_t n = 0;
      uint8_t *p = tu_read_file(zA, &n);
      ck_assert_ptr_nonnull(p);
      ck_assert_uint_lt(iOff, n);
      p[iOff] ^= 0xFF;
      ck_assert_int_eq(tu_write_file(zB, p, n), 0);
      free(p);
    } else {
      copyFile(zA, zB);
    }
  }
}

/* Run every statement on zDir/d.db: results into azGot (sqlite3_free). */
static void runAll(const char *zDir, char *azGot[N_QUERY]) {
  char zPath[1200];
  sqlite3 *db;
  int i;
  snprintf(zPath, sizeof zPath, "%s/d.db", zDir);
  db = openDb(zPath);
  for (i = 0; i < N_QUERY; i++)
    azGot[i] = tu_sql_run(db, azQuery[i], TU_SQL_TYPED);
  sqlite3_close(db);
}

START_TEST(test_flipped_store_bytes_give_right_rows_or_an_error) {
  char zSrc[1000], zDst[1100], zStore[1100], azName[MAX_FILES][64];
  char *azWant[N_QUERY];
  int nName, i, q, nTrial = 0, nErr = 0, bAll = getenv("WCS_DAMAGE_ALL") != 0;
  snprintf(zSrc, sizeof zSrc, "%.900s", tu_tmpdir("vtab_damage"));
  snprintf(zDst, sizeof zDst, "%s/copy", zSrc);
  tu_seed(0);
  build(zSrc);
  snprintf(zStore, sizeof zStore, "%.990s/d.db.wcs", zSrc);
  nName = storeFiles(zStore, azName);
  /* the undamaged copy gives the rows every damaged one is held to */
  copyWithFlip(zSrc, zDst, azName, nName, NULL, 0);
  runAll(zDst, azWant);
  for (q = 0; q < N_QUERY; q++) {
    ck_assert_msg(strncmp(azWant[q], "ERROR", 5) != 0 && azWant[q][0], "%s: %s",
                  azQuery[q], azWant[q]);
  }
  for (i = 0; i < nName; i++) {
    char zFile[1300];
    struct stat st;
    size_t n, iOff, nStep;
    snprintf(zFile, sizeof zFile, "%.1100s/%.63s", zStore, azName[i]);
    ck_assert_int_eq(stat(zFile, &st), 0);
    n = (size_t)st.st_size;
    /* small files whole; in large ones about 150 offsets */
    nStep = bAll || n <= 600 ? 1 : n / 150;
    for (iOff = tu_rand_range(nStep); iOff < n; iOff += nStep) {
      char *azGot[N_QUERY];
      int bErr = 0;
      copyWithFlip(zSrc, zDst, azName, nName, azName[i], iOff);
      runAll(zDst, azGot);
      for (q = 0; q < N_QUERY; q++) {
        if (strncmp(azGot[q], "ERROR: ", 7) == 0) {
          /* the message names the damaged file (or the store's, for
          ** damage that shows as another file's) */
          ck_assert_msg(strstr(azGot[q], "d.db.wcs/") != NULL,
                        "%s, byte %zu of %zu flipped: %s\n  %.400s", azName[i],
                        iOff, n, azQuery[q], azGot[q]);
          bErr = 1;
        } else {
          ck_assert_msg(strcmp(azGot[q], azWant[q]) == 0,
                        "%s, byte %zu of %zu flipped: %s\n  got:  %.400s\n"
                        "  want: %.400s",
                        azName[i], iOff, n, azQuery[q], azGot[q], azWant[q]);
        }
        sqlite3_free(azGot[q]);
      }
      nTrial++;
      nErr += bErr;
    }
  }
  fprintf(stderr, "vtab_damage: %d flips in %d files, %d reported\n", nTrial,
          nName, nErr);
  ck_assert_int_gt(nErr, 0);
  for (q = 0; q < N_QUERY; q++)
    sqlite3_free(azWant[q]);
  tu_rmrf(zSrc);
}
END_TEST

Suite *vtab_damage_suite(void) {
  Suite *s = suite_create("vtab_damage");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_flipped_store_bytes_give_right_rows_or_an_error);
  suite_add_tcase(s, tc);
  return s;
}
