/*
** check_engine_gc.c — physical GC at compaction (engine/gcfilter.c): the
** engine's GC policies run as the store's compaction filter. For each
** policy kind, many versions are written and flushed, the whole store is
** compacted, and then the store's "filtered" counter and a raw scan of its
** keys show the expired cells are physically gone while reads return
** exactly what they returned before. Also: a snapshot held during the
** compaction keeps everything, catalog keys survive, an alter that relaxes
** a policy is followed, families without rules and aggregates are kept.
**
** The stores are on disk in a temporary directory, with background work
** off (flushes and compactions run in the calling thread) and a fixed
** engine clock.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/util.h"
#include "testutil.h"
#include "wcs.h"

#define T0    1700000000000000LL /* the fixed clock: micros since the epoch */
#define NROW  10                 /* rows written per family */
#define NQUAL 2                  /* qualifiers per row */
#define NVER  10                 /* versions per column, ts T0 - i*1000 */

static int64_t gNow = T0;
static int64_t fixed_now(void *p) {
  (void)p;
  return gNow;
}

typedef struct Fx {
  char *zDir; /* temporary directory (owned) */
  wcs_engine *e;
  wcs_table *t;
} Fx;

static void fx_open(Fx *f, const char *zSchema) {
  wcs_options o;
  char *zErr = NULL;
  char zPath[1024];
  int rc;
  memset(f, 0, sizeof(*f));
  f->zDir = strdup(tu_tmpdir("engine_gc"));
  snprintf(zPath, sizeof(zPath), "%s/store", f->zDir);
  wcs_options_init(&o);
  o.bNoBackground = 1;
  rc = wcs_engine_open_path(&f->e, zPath, &o, &zErr);
  ck_assert_msg(rc == WCS_OK, "open: %s", zErr ? zErr : "?");
  gNow = T0;
  wcs_engine_set_clock(f->e, fixed_now, NULL);
  rc = wcs_table_create(f->e, "t", zSchema, &f->t);
  ck_assert_msg(rc == WCS_OK, "create: %s", wcs_engine_errmsg(f->e));
}

static void fx_close(Fx *f) {
  wcs_table_close(f->t);
  ck_assert_int_eq(wcs_engine_close(f->e), WCS_OK);
  tu_rmrf(f->zDir);
  free(f->zDir);
}

/* NROW x NQUAL columns of NVER versions each in family zFam, one commit. */
static void write_versions(Fx *f, const char *zFam) {
  wcs_txn *x = NULL;
  int r, q, v, rc;
  rc = wcs_txn_begin(f->e, 0, &x);
  ck_assert_int_eq(rc, WCS_OK);
  for (r = 0; r < NROW; r++) {
    for (q = 0; q < NQUAL; q++) {
      for (v = 0; v < NVER; v++) {
        char zRow[16], zQual[8], zVal[16];
        snprintf(zRow, sizeof(zRow), "row%02d", r);
        snprintf(zQual, sizeof(zQual), "q%d", q);
        snprintf(zVal, sizeof(zVal), "v%d", v);
        rc = wcs_txn_set_cell(x, f->t, zRow, strlen(zRow), zFam, zQual,
                              strlen(zQual), T0 - (int64_t)v * 1000, zVal,
                              strlen(zVal));
        ck_assert_msg(rc == WCS_OK, "set_cell: %s", wcs_engine_errmsg(f->e));
      }
    }
  }
  rc = wcs_txn_commit(x);
  ck_assert_msg(rc == WCS_OK, "commit: %s", wcs_engine_errmsg(f->e));
  wcs_txn_free(x);
}

/* Render a full scan: "row: fam.qual@ts=val ...; row2: ...;" (malloc'd). */
static char *dump(Fx *f) {
  wcs_read_options o;
  wcs_cursor *c = NULL;
  wcs_buf b = {0};
  int rc;
  wcs_read_options_init(&o);
  rc = wcs_cursor_open(&c, f->t, NULL, &o);
  ck_assert_msg(rc == WCS_OK, "cursor: %s", wcs_engine_errmsg(f->e));
  while (!wcs_cursor_eof(c)) {
    size_t nRow;
    const char *pRow = wcs_cursor_row(c, &nRow);
    int nCell, i;
    const wcs_cell *a = wcs_cursor_cells(c, &nCell);
    char z[256];
    int n = snprintf(z, sizeof(z), "%.*s:", (int)nRow, pRow);
    ck_assert_int_eq(wcs_buf_append(&b, z, (size_t)n), 0);
    for (i = 0; i < nCell; i++) {
      n = snprintf(z, sizeof(z), " %s.%.*s@%lld=%.*s", a[i].zFamily,
                   (int)a[i].nQual, (const char *)a[i].pQual,
                   (long long)(T0 - a[i].iTs), (int)a[i].nVal,
                   (const char *)a[i].pVal);
      ck_assert_int_eq(wcs_buf_append(&b, z, (size_t)n), 0);
    }
    ck_assert_int_eq(wcs_buf_append(&b, ";", 1), 0);
    ck_assert_int_eq(wcs_cursor_next(c), WCS_OK);
  }
  wcs_cursor_close(c);
  ck_assert_int_eq(wcs_buf_append(&b, "", 1), 0);
  return (char *)b.a;
}

/* The store's "filtered" counter. */
static unsigned long long filtered(Fx *f) {
  char *z = NULL, *p;
  unsigned long long n = 0;
  ck_assert_int_eq(wcs_db_stats(wcs_engine_db(f->e), &z), WCS_OK);
  p = strstr(z, "\"filtered\":");
  ck_assert_ptr_nonnull(p);
  n = strtoull(p + strlen("\"filtered\":"), NULL, 10);
  wcs_free(z);
  return n;
}

/* Raw keys in the store: catalog keys (table id 0) and cell keys of
** family id iFid (any table id >= 1), or of every family if iFid < 0. */
static void raw_count(Fx *f, int iFid, int *pnCat, int *pnCell) {
  wcs_iter *it = NULL;
  int rc;
  *pnCat = *pnCell = 0;
  ck_assert_int_eq(wcs_iter_new(wcs_engine_db(f->e), NULL, &it), WCS_OK);
  for (rc = wcs_iter_first(it); rc == WCS_OK && wcs_iter_valid(it);
       rc = wcs_iter_next(it)) {
    size_t n;
    const uint8_t *k = wcs_iter_key(it, &n);
    ck_assert_uint_ge(n, 4);
    if (k[0] == 0 && k[1] == 0 && k[2] == 0 && k[3] == 0) {
      (*pnCat)++;
    } else if (n > 6 && (iFid < 0 || (k[4] << 8 | k[5]) == iFid)) {
      (*pnCell)++;
    }
  }
  ck_assert_int_eq(rc, WCS_OK);
  wcs_iter_free(it);
}

static void compact_all(Fx *f) {
  int rc = wcs_db_compact_range(wcs_engine_db(f->e), NULL, 0, NULL, 0);
  ck_assert_int_eq(rc, WCS_OK);
}

/*
** One policy case: family f gets zPolicy, family g (no rule) the same
** data. Writes, flushes, reads, compacts, and checks that nKeep versions
** per column of f are left physically, all of g, the catalog, and that
** reads are unchanged. Compaction drops only what the policy expires even
** for a column's newest version (MAX AGE under UNION): what MAX VERSIONS
** or INTERSECTION expire by position stays stored, hidden by reads,
** because a later delete of newer versions makes it visible again
** (engine/gcfilter.c explains).
*/
static void policy_case(const char *zPolicy, int nKeep) {
  Fx f;
  char zSchema[200];
  char *zBefore, *zAfter;
  int nCat, nCell, nCat0, nCell0;
  unsigned long long nFilt0;
  snprintf(zSchema, sizeof(zSchema), "FAMILY f %s, FAMILY g", zPolicy);
  fx_open(&f, zSchema);
  write_versions(&f, "f");
  write_versions(&f, "g");
  ck_assert_int_eq(wcs_db_flush(wcs_engine_db(f.e)), WCS_OK);
  zBefore = dump(&f);
  raw_count(&f, -1, &nCat0, &nCell0);
  ck_assert_int_eq(nCell0, 2 * NROW * NQUAL * NVER);
  ck_assert_int_ge(nCat0, 2); /* next table id, the table record */
  nFilt0 = filtered(&f);
  compact_all(&f);
  ck_assert_uint_eq(filtered(&f) - nFilt0,
                    (unsigned long long)(NROW * NQUAL * (NVER - nKeep)));
  raw_count(&f, 1, &nCat, &nCell); /* family f: the first id */
  ck_assert_int_eq(nCell, NROW * NQUAL * nKeep);
  ck_assert_int_eq(nCat, nCat0); /* catalog keys survive */
  raw_count(&f, -1, &nCat, &nCell);
  ck_assert_int_eq(nCell, NROW * NQUAL * (nKeep + NVER));
  zAfter = dump(&f);
  ck_assert_str_eq(zAfter, zBefore);
  free(zBefore);
  free(zAfter);
  fx_close(&f);
}

START_TEST(test_compaction_keeps_versions_beyond_max_versions) {
  policy_case("MAX VERSIONS 2", NVER); /* hidden by reads, not dropped */
}
END_TEST

START_TEST(test_compaction_drops_cells_older_than_max_age) {
  /* versions are 1000us apart: ages 0..4000 stay, 5000.. go */
  policy_case("MAX AGE '4500us'", 5);
}
END_TEST

START_TEST(test_compaction_union_drops_when_either_rule_does) {
  policy_case("MAX VERSIONS 3 MAX AGE '4500us' UNION", 5); /* reads: 3 */
  policy_case("MAX VERSIONS 7 MAX AGE '4500us'", 5);       /* UNION: default */
}
END_TEST

START_TEST(test_compaction_keeps_what_intersection_expires_by_position) {
  /* the age rule alone never expires a cell under INTERSECTION: a later
  ** delete can make any version the newest */
  policy_case("MAX VERSIONS 3 MAX AGE '4500us' INTERSECTION", NVER);
  policy_case("MAX VERSIONS 7 MAX AGE '4500us' INTERSECTION", NVER);
}
END_TEST

START_TEST(test_compaction_follows_the_engine_clock) {
  Fx f;
  char *zBefore, *zAfter;
  int nCat, nCell;
  fx_open(&f, "FAMILY f MAX AGE '4500us'");
  write_versions(&f, "f");
  ck_assert_int_eq(wcs_db_flush(wcs_engine_db(f.e)), WCS_OK);
  gNow = T0 + 2000; /* ages 2000..6000 stay: 3 versions */
  zBefore = dump(&f);
  compact_all(&f);
  raw_count(&f, 1, &nCat, &nCell);
  ck_assert_int_eq(nCell, NROW * NQUAL * 3);
  zAfter = dump(&f);
  ck_assert_str_eq(zAfter, zBefore);
  free(zBefore);
  free(zAfter);
  fx_close(&f);
}
END_TEST

START_TEST(test_snapshot_during_compaction_keeps_everything) {
  Fx f;
  wcs_snapshot *pSnap = NULL;
  int nCat, nCell;
  unsigned long long nFilt0;
  fx_open(&f, "FAMILY f MAX AGE '4500us'");
  write_versions(&f, "f");
  ck_assert_int_eq(wcs_db_flush(wcs_engine_db(f.e)), WCS_OK);
  nFilt0 = filtered(&f);
  ck_assert_int_eq(wcs_snapshot_new(wcs_engine_db(f.e), &pSnap), WCS_OK);
  compact_all(&f);
  ck_assert_uint_eq(filtered(&f), nFilt0); /* nothing was offered */
  raw_count(&f, 1, &nCat, &nCell);
  ck_assert_int_eq(nCell, NROW * NQUAL * NVER);
  wcs_snapshot_free(wcs_engine_db(f.e), pSnap);
  /* without the snapshot, a later compaction collects */
  compact_all(&f);
  raw_count(&f, 1, &nCat, &nCell);
  ck_assert_int_eq(nCell, NROW * NQUAL * 5);
  fx_close(&f);
}
END_TEST

START_TEST(test_compaction_follows_an_alter_that_relaxes_the_policy) {
  Fx f;
  int nCat, nCell, rc;
  fx_open(&f, "FAMILY f MAX AGE '2500us'");
  write_versions(&f, "f");
  ck_assert_int_eq(wcs_db_flush(wcs_engine_db(f.e)), WCS_OK);
  rc = wcs_table_alter(f.e, "t", "FAMILY f MAX AGE '6500us'");
  ck_assert_msg(rc == WCS_OK, "alter: %s", wcs_engine_errmsg(f.e));
  compact_all(&f);
  raw_count(&f, 1, &nCat, &nCell);
  ck_assert_int_eq(nCell, NROW * NQUAL * 7);
  /* and one that tightens it */
  rc = wcs_table_alter(f.e, "t", "FAMILY f MAX AGE '1500us'");
  ck_assert_msg(rc == WCS_OK, "alter: %s", wcs_engine_errmsg(f.e));
  compact_all(&f);
  raw_count(&f, 1, &nCat, &nCell);
  ck_assert_int_eq(nCell, NROW * NQUAL * 2);
  fx_close(&f);
}
END_TEST

START_TEST(test_compaction_keeps_aggregate_families) {
  Fx f;
  int nCat, nCell, r, rc;
  wcs_txn *x = NULL;
  fx_open(&f, "FAMILY s AGGREGATE SUM");
  rc = wcs_txn_begin(f.e, 0, &x);
  ck_assert_int_eq(rc, WCS_OK);
  for (r = 0; r < NVER; r++) {
    rc = wcs_txn_add_to_cell(x, f.t, "row", 3, "s", "q", 1,
                             T0 - (int64_t)r * 1000, 1);
    ck_assert_msg(rc == WCS_OK, "add: %s", wcs_engine_errmsg(f.e));
  }
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  ck_assert_int_eq(wcs_db_flush(wcs_engine_db(f.e)), WCS_OK);
  compact_all(&f);
  raw_count(&f, 1, &nCat, &nCell);
  ck_assert_int_eq(nCell, NVER);
  fx_close(&f);
}
END_TEST

START_TEST(test_reopened_engine_still_collects) {
  Fx f;
  char zPath[1024];
  char *zErr = NULL;
  int nCat, nCell, rc;
  fx_open(&f, "FAMILY f MAX AGE '4500us'");
  write_versions(&f, "f");
  ck_assert_int_eq(wcs_db_flush(wcs_engine_db(f.e)), WCS_OK);
  wcs_table_close(f.t);
  f.t = NULL;
  ck_assert_int_eq(wcs_engine_close(f.e), WCS_OK);
  snprintf(zPath, sizeof(zPath), "%s/store", f.zDir);
  rc = wcs_engine_open_path(&f.e, zPath, NULL, &zErr);
  ck_assert_msg(rc == WCS_OK, "reopen: %s", zErr ? zErr : "?");
  wcs_engine_set_clock(f.e, fixed_now, NULL);
  compact_all(&f); /* policies loaded from the catalog at open */
  raw_count(&f, 1, &nCat, &nCell);
  ck_assert_int_eq(nCell, NROW * NQUAL * 5);
  fx_close(&f);
}
END_TEST

START_TEST(test_delete_after_compaction_revives_older_versions) {
  /* why MAX VERSIONS is not applied at compaction: after deleting the two
  ** newest versions, reads must show the next two */
  Fx f;
  wcs_txn *x = NULL;
  char *z;
  int rc;
  fx_open(&f, "FAMILY f MAX VERSIONS 2");
  write_versions(&f, "f");
  ck_assert_int_eq(wcs_db_flush(wcs_engine_db(f.e)), WCS_OK);
  compact_all(&f);
  ck_assert_int_eq(wcs_txn_begin(f.e, 0, &x), WCS_OK);
  rc =
      wcs_txn_delete_cells(x, f.t, "row00", 5, "f", "q0", 2, T0 - 1000, T0 + 1);
  ck_assert_msg(rc == WCS_OK, "delete: %s", wcs_engine_errmsg(f.e));
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  z = dump(&f);
  ck_assert_msg(strncmp(z,
                        "row00: f.q0@2000=v2 f.q0@3000=v3 f.q1@0=v0 "
                        "f.q1@1000=v1;",
                        strlen("row00: f.q0@2000=v2 "
                               "f.q0@3000=v3 f.q1@0=v0 f.q1@1000=v1;")) == 0,
                "got [%.200s]", z);
  free(z);
  fx_close(&f);
}
END_TEST

Suite *engine_gc_suite(void);
Suite *engine_gc_suite(void) {
  Suite *s = suite_create("engine_gc");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_compaction_keeps_versions_beyond_max_versions);
  tcase_add_test(tc, test_compaction_drops_cells_older_than_max_age);
  tcase_add_test(tc, test_compaction_union_drops_when_either_rule_does);
  tcase_add_test(tc,
                 test_compaction_keeps_what_intersection_expires_by_position);
  tcase_add_test(tc, test_delete_after_compaction_revives_older_versions);
  tcase_add_test(tc, test_compaction_follows_the_engine_clock);
  tcase_add_test(tc, test_snapshot_during_compaction_keeps_everything);
  tcase_add_test(tc, test_compaction_follows_an_alter_that_relaxes_the_policy);
  tcase_add_test(tc, test_compaction_keeps_aggregate_families);
  tcase_add_test(tc, test_reopened_engine_still_collects);
  suite_add_tcase(s, tc);
  return s;
}
