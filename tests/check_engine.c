/*
** check_engine.c — unit tests of the engine (engine/, the "Tables" API of
** include/wcs.h): catalog and DDL, cells and reads, every GC policy
** combination, every delete variant, aggregates, ReadModifyWrite,
** CheckAndMutate, transactions with savepoints, limits and statistics.
**
** Most tests run on a private in-memory store with a fixed engine clock,
** and compare a whole scan rendered as text ("row: fam.qual@ts=value ...;")
** with the expected text, which keeps each expectation readable.
*/
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "keyschema/schema.h"
#include "storage/util.h"
#include "testutil.h"
#include "wcs.h"

#define T0 1700000000000000LL /* the fixed clock: micros since the epoch */
static int64_t gNow = T0;
static int64_t fixed_now(void *p) {
  (void)p;
  return gNow;
}

static wcs_engine *open_mem(void) {
  wcs_options o;
  wcs_engine *e = NULL;
  char *zErr = NULL;
  int rc;
  wcs_options_init(&o);
  o.bInMemory = 1;
  rc = wcs_engine_open_path(&e, NULL, &o, &zErr);
  ck_assert_msg(rc == WCS_OK, "open: %s", zErr ? zErr : "?");
  gNow = T0;
  wcs_engine_set_clock(e, fixed_now, NULL);
  return e;
}

static wcs_table *mk(wcs_engine *e, const char *zName, const char *zSchema) {
  wcs_table *t = NULL;
  int rc = wcs_table_create(e, zName, zSchema, &t);
  ck_assert_msg(rc == WCS_OK, "create %s: %s", zName, wcs_engine_errmsg(e));
  return t;
}

/* one-shot SetCell through a transaction */
static void setc(wcs_engine *e, wcs_table *t, const char *zRow,
                 const char *zFam, const char *zQual, int64_t ts,
                 const char *zVal) {
  wcs_txn *x = NULL;
  int rc = wcs_txn_begin(e, 0, &x);
  ck_assert_int_eq(rc, WCS_OK);
  rc = wcs_txn_set_cell(x, t, zRow, strlen(zRow), zFam, zQual, strlen(zQual),
                        ts, zVal, strlen(zVal));
  ck_assert_msg(rc == WCS_OK, "set_cell: %s", wcs_engine_errmsg(e));
  rc = wcs_txn_commit(x);
  ck_assert_msg(rc == WCS_OK, "commit: %s", wcs_engine_errmsg(e));
  wcs_txn_free(x);
}

/* Render a scan: "row: fam.qual@ts=val fam.qual@ts=val; row2: ...;" */
static char *dump(wcs_table *t, wcs_txn *x, const wcs_read_options *o) {
  wcs_cursor *c = NULL;
  size_t nOut = 0, nAlloc = 256;
  char *z = malloc(nAlloc);
  int rc = wcs_cursor_open(&c, t, x, o);
  ck_assert_msg(rc == WCS_OK, "cursor: %s", wcs_engine_errmsg(NULL));
  z[0] = 0;
  while (!wcs_cursor_eof(c)) {
    size_t nRow;
    const char *pRow = wcs_cursor_row(c, &nRow);
    int nCell, i;
    const wcs_cell *a = wcs_cursor_cells(c, &nCell);
    char *zRow = wcs_escape(pRow, nRow, 200);
    size_t need = strlen(zRow) + 8;
    for (i = 0; i < nCell; i++)
      need += strlen(a[i].zFamily) + a[i].nQual + a[i].nVal * 4 + 40;
    if (nOut + need >= nAlloc) {
      while (nOut + need >= nAlloc)
        nAlloc *= 2;
      z = realloc(z, nAlloc);
    }
    nOut += (size_t)sprintf(z + nOut, "%s%s:", nOut ? " " : "", zRow);
    free(zRow);
    for (i = 0; i < nCell; i++) {
      char *zq = wcs_escape(a[i].pQual, a[i].nQual, 200);
      char *zv = wcs_escape(a[i].pVal, a[i].nVal, 200);
      nOut += (size_t)sprintf(z + nOut, " %s.%s@%lld=%s", a[i].zFamily, zq,
                              (long long)(a[i].iTs % 1000000), zv);
      free(zq);
      free(zv);
    }
    nOut += (size_t)sprintf(z + nOut, ";");
    rc = wcs_cursor_next(c);
    ck_assert_int_eq(rc, WCS_OK);
  }
  wcs_cursor_close(c);
  return z;
}

#define CHECK_DUMP(t, x, o, want)                                              \
  do {                                                                         \
    char *zGot_ = dump(t, x, o);                                               \
    ck_assert_msg(strcmp(zGot_, want) == 0, "got  [%s]\nwant [%s]", zGot_,     \
                  want);                                                       \
    free(zGot_);                                                               \
  } while (0)

static wcs_read_options ro(void) {
  wcs_read_options o;
  wcs_read_options_init(&o);
  return o;
}

/* ================================================================== */
/* catalog                                                             */

START_TEST(test_table_create_stores_canonical_schema) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "metrics",
                    "KEY (device STRING, day INT64 DECIMAL(8)) DELIMITED BY "
                    "'#', FAMILY stats (cpu INT64) MAX VERSIONS 3, FAMILY "
                    "meta MAX AGE '30d'");
  wcs_family_info fi;
  ck_assert_str_eq(wcs_table_name(t), "metrics");
  ck_assert_int_eq((int)wcs_table_schema_version(t), 1);
  ck_assert_int_eq(wcs_table_family_count(t), 2);
  ck_assert_int_eq(wcs_table_family(t, 0, &fi), WCS_OK);
  ck_assert_str_eq(fi.zName, "stats");
  ck_assert_int_eq(fi.nMaxVersions, 3);
  ck_assert_int_eq(fi.nColumn, 1);
  ck_assert_int_eq(wcs_table_family(t, 1, &fi), WCS_OK);
  ck_assert_str_eq(fi.zName, "meta");
  ck_assert(fi.iMaxAge == 30LL * 86400 * 1000000);
  ck_assert_int_eq(wcs_table_family_index(t, "meta"), 1);
  ck_assert_int_eq(wcs_table_family_index(t, "nope"), -1);
  ck_assert_int_eq(wcs_table_family(t, 2, &fi), WCS_RANGE);
  ck_assert_ptr_nonnull(wcs_table_schema(t));
  ck_assert_ptr_nonnull(strstr(wcs_table_schema_text(t), "FAMILY stats"));
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_table_create_existing_name_fails) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY f");
  ck_assert_int_eq(wcs_table_create(e, "t", "FAMILY g", NULL), WCS_SCHEMA);
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "already exists"));
  ck_assert_int_ne(wcs_table_create(e, "u", "FAMILY (", NULL), WCS_OK);
  ck_assert_int_ne(wcs_table_create(e, "", "FAMILY f", NULL), WCS_OK);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_table_open_missing_is_null_not_error) {
  wcs_engine *e = open_mem();
  wcs_table *t = (wcs_table *)1;
  ck_assert_int_eq(wcs_table_open(e, "nope", &t), WCS_OK);
  ck_assert_ptr_null(t);
  wcs_engine_close(e);
}
END_TEST

static int list_cb(void *pCtx, const char *zName, const char *zSchema) {
  char *z = pCtx;
  (void)zSchema;
  strcat(z, zName);
  strcat(z, ",");
  return 0;
}

/* A NULL pointer given with a nonzero length, or a NULL handle, is
** WCS_MISUSE, as in the storage layer: never a crash, and never bytes of
** the library's own memory stored in its place. */
START_TEST(test_null_arguments_are_misuse) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY cf");
  wcs_txn *x = NULL;
  wcs_cursor *c = NULL;
  wcs_mutation m;
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r", 1, "cf", NULL, 40, 1, "v", 1),
                   WCS_MISUSE);
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "the qualifier"));
  ck_assert_int_eq(wcs_txn_set_cell(x, t, NULL, 3, "cf", "q", 1, 1, "v", 1),
                   WCS_MISUSE);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r", 1, "cf", "q", 1, 1, NULL, 4),
                   WCS_MISUSE);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r", 1, NULL, "q", 1, 1, "v", 1),
                   WCS_ERROR);
  ck_assert_int_eq(
      wcs_txn_delete_cells(x, t, "r", 1, "cf", NULL, 8, 0, INT64_MAX),
      WCS_MISUSE);
  ck_assert_int_eq(wcs_txn_delete_prefix(x, t, NULL, 3), WCS_MISUSE);
  ck_assert_int_eq(wcs_txn_delete_row(x, t, NULL, 3), WCS_MISUSE);
  ck_assert_int_eq(wcs_txn_mutate_row(x, t, "r", 1, NULL, 1), WCS_MISUSE);
  memset(&m, 0, sizeof m);
  ck_assert_int_eq(wcs_txn_mutate_row(x, t, "r", 1, &m, -1), WCS_MISUSE);
  {
    /* a row's mutations are one: the second failing, the first is not
    ** kept either, and the message is the second's */
    static char aBig[16385];
    wcs_mutation a2[2];
    memset(a2, 0, sizeof a2);
    memset(aBig, 'q', sizeof aBig);
    a2[0].eType = a2[1].eType = WCS_MUT_SET_CELL;
    a2[0].zFamily = a2[1].zFamily = "cf";
    a2[0].pQual = "a";
    a2[0].nQual = 1;
    a2[1].pQual = aBig;
    a2[1].nQual = sizeof aBig;
    a2[0].iTs = a2[1].iTs = 7;
    a2[0].pVal = a2[1].pVal = "1";
    a2[0].nVal = a2[1].nVal = 1;
    ck_assert_int_eq(wcs_txn_mutate_row(x, t, "m", 1, a2, 2), WCS_TOOBIG);
    ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "16384"));
    ck_assert_int_eq(wcs_txn_count(x), 0);
    a2[1].zFamily = "nosuch";
    a2[1].eType = WCS_MUT_ADD_TO_CELL;
    ck_assert_int_eq(wcs_txn_mutate_row(x, t, "m", 1, a2, 2), WCS_ERROR);
    ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "nosuch"));
    ck_assert_int_eq(wcs_txn_count(x), 0);
  }
  ck_assert_int_eq(wcs_txn_set_cell(NULL, t, "r", 1, "cf", "q", 1, 1, "v", 1),
                   WCS_MISUSE);
  ck_assert_int_eq(wcs_txn_set_cell(x, NULL, "r", 1, "cf", "q", 1, 1, "v", 1),
                   WCS_MISUSE);
  /* nothing of it was kept: empty bytes are "" with a length of 0 */
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r", 1, "cf", NULL, 0, 1, "", 0),
                   WCS_OK);
  ck_assert_int_eq(wcs_txn_count(x), 1);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  ck_assert_int_eq(wcs_cursor_open(&c, NULL, NULL, NULL), WCS_MISUSE);
  ck_assert_int_eq(wcs_cursor_open(NULL, t, NULL, NULL), WCS_MISUSE);
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, NULL), WCS_OK);
  ck_assert_int_eq(wcs_cursor_seek(c, NULL, 4), WCS_MISUSE);
  ck_assert_int_eq(wcs_cursor_seek(NULL, "r", 1), WCS_MISUSE);
  wcs_cursor_close(c);
  ck_assert_int_eq(wcs_table_create(NULL, "u", "FAMILY f", NULL), WCS_MISUSE);
  ck_assert_int_eq(wcs_table_drop(e, NULL), WCS_ERROR);
  wcs_txn_free(x);
  x = NULL;
  {
    /* checks and mutation lists check their pointers too */
    wcs_predicate pr;
    wcs_key_range r;
    uint64_t n = 0;
    int bMatch = 1;
    memset(&pr, 0, sizeof pr);
    pr.eOp = WCS_PRED_EQ;
    pr.zFamily = "cf";
    pr.pQual = "q";
    pr.nQual = 1;
    pr.pVal = NULL;
    pr.nVal = 4;
    ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
    ck_assert_int_eq(wcs_txn_check(x, t, "r", 1, &pr, &bMatch), WCS_MISUSE);
    ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "the value"));
    pr.pVal = "v";
    pr.nVal = 1;
    pr.pQual = NULL;
    pr.nQual = 4;
    ck_assert_int_eq(wcs_txn_check(x, t, "r", 1, &pr, &bMatch), WCS_MISUSE);
    ck_assert_int_eq(wcs_txn_check(x, t, NULL, 4, NULL, &bMatch), WCS_MISUSE);
    ck_assert_int_eq(wcs_txn_check(x, NULL, "r", 1, NULL, &bMatch), WCS_MISUSE);
    ck_assert_int_eq(wcs_txn_mutate_row(x, NULL, "r", 1, &m, 1), WCS_MISUSE);
    ck_assert_int_eq(wcs_txn_mutate_row(NULL, t, "r", 1, &m, 1), WCS_MISUSE);
    ck_assert_int_eq(wcs_table_mutate_row(NULL, "r", 1, &m, 1), WCS_MISUSE);
    ck_assert_int_eq(
        wcs_table_check_and_mutate(NULL, "r", 1, NULL, &m, 1, NULL, 0, NULL),
        WCS_MISUSE);
    ck_assert_int_eq(wcs_hll_estimate(NULL, 5, &n), WCS_MISUSE);
    wcs_txn_free(x);
    /* a bound of a NULL pointer and a length is unbounded, as documented;
    ** the one-row shortcut must not compare it */
    memset(&r, 0, sizeof r);
    r.pStart = "r";
    r.nStart = 1;
    r.pEnd = NULL;
    r.nEnd = 1;
    r.bEndIncl = 1;
    {
      wcs_read_options o = ro();
      o.aRange = &r;
      o.nRange = 1;
      ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, &o), WCS_OK);
      ck_assert(!wcs_cursor_eof(c));
      wcs_cursor_close(c);
    }
  }
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* A table's statistics (heat counters, row estimates) go when it is
** dropped and its last reader is done, not when the store closes: a store
** that creates and drops tables for hours keeps those of its live ones
** only. */
START_TEST(test_dropped_tables_statistics_go) {
  wcs_engine *e = open_mem();
  wcs_table *keep = mk(e, "keep", "FAMILY cf");
  EngStats *s;
  int i, n;
  for (i = 0; i < 200; i++) {
    wcs_table *t = mk(e, "t", "FAMILY cf");
    wcs_cursor *c = NULL;
    setc(e, t, "r", "cf", "q", 1, "v");
    if (i == 199) {
      /* a reader open across the drop keeps them until it is done */
      ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, NULL), WCS_OK);
    }
    wcs_table_close(t);
    ck_assert_int_eq(wcs_table_drop(e, "t"), WCS_OK);
    if (c) {
      ck_assert_int_eq(wcs_cursor_eof(c), 0);
      wcs_cursor_close(c);
    }
  }
  pthread_mutex_lock(&e->mu);
  for (n = 0, s = e->pStatsList; s; s = *(EngStats **)s)
    n++;
  pthread_mutex_unlock(&e->mu);
  ck_assert_int_le(n, 2); /* keep's, and perhaps the catalog's */
  setc(e, keep, "r", "cf", "q", 1, "v");
  wcs_table_close(keep);
  wcs_engine_close(e);
}
END_TEST

/* Two engines over one store handle would number new tables alike (each
** from its own catalog state), mixing their cells: the second is refused,
** and a transaction of one engine cannot read a table of another. */
START_TEST(test_one_engine_per_store_handle) {
  wcs_engine *e = open_mem(), *e2 = NULL, *e3 = NULL;
  wcs_table *t = mk(e, "t", "FAMILY cf");
  wcs_txn *x = NULL;
  wcs_cursor *c = NULL;
  char *zErr = NULL;
  ck_assert_int_eq(wcs_engine_open(&e2, wcs_engine_db(e), &zErr), WCS_MISUSE);
  ck_assert_ptr_null(e2);
  ck_assert_ptr_nonnull(zErr);
  ck_assert_ptr_nonnull(strstr(zErr, "already has an engine"));
  wcs_free(zErr);
  zErr = NULL;
  setc(e, t, "r", "cf", "q", 1, "v");
  e3 = open_mem();
  ck_assert_int_eq(wcs_txn_begin(e3, 0, &x), WCS_OK);
  ck_assert_int_eq(wcs_cursor_open(&c, t, x, NULL), WCS_MISUSE);
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e3), "another engine"));
  ck_assert_int_eq(wcs_txn_check(x, t, "r", 1, NULL, &(int){0}), WCS_MISUSE);
  wcs_txn_free(x);
  wcs_engine_close(e3);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_table_list_in_name_order) {
  wcs_engine *e = open_mem();
  char z[256] = "";
  ck_assert_int_eq(wcs_table_create(e, "b", "FAMILY f", NULL), WCS_OK);
  ck_assert_int_eq(wcs_table_create(e, "a", "FAMILY f", NULL), WCS_OK);
  ck_assert_int_eq(wcs_table_create(e, "c", "FAMILY f", NULL), WCS_OK);
  ck_assert_int_eq(wcs_table_list(e, z, list_cb), WCS_OK);
  ck_assert_str_eq(z, "a,b,c,");
  ck_assert_int_eq(wcs_table_drop(e, "b"), WCS_OK);
  z[0] = 0;
  wcs_table_list(e, z, list_cb);
  ck_assert_str_eq(z, "a,c,");
  ck_assert_int_eq(wcs_table_drop(e, "b"), WCS_ERROR);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_catalog_persists_across_reopen) {
  const char *zDir = tu_tmpdir("engine_catalog");
  char zPath[1024];
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  char *zErr = NULL;
  wcs_read_options o = ro();
  snprintf(zPath, sizeof(zPath), "%s/store", zDir);
  ck_assert_int_eq(wcs_engine_open_path(&e, zPath, NULL, &zErr), WCS_OK);
  t = mk(e, "t1", "FAMILY a MAX VERSIONS 1, FAMILY b");
  setc(e, t, "r1", "a", "q", 5, "v1");
  setc(e, t, "r1", "a", "q", 6, "v2");
  setc(e, t, "r1", "b", "q", 5, "w");
  wcs_table_close(t);
  ck_assert_int_eq(wcs_table_alter(e, "t1",
                                   "FAMILY a MAX VERSIONS 1, "
                                   "FAMILY b, FAMILY c"),
                   WCS_OK);
  ck_assert_int_eq(wcs_table_create(e, "t2", "FAMILY z", NULL), WCS_OK);
  ck_assert_int_eq(wcs_table_drop(e, "t2"), WCS_OK);
  ck_assert_int_eq(wcs_engine_close(e), WCS_OK);

  ck_assert_int_eq(wcs_engine_open_path(&e, zPath, NULL, &zErr), WCS_OK);
  ck_assert_int_eq(wcs_table_open(e, "t1", &t), WCS_OK);
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq((int)wcs_table_schema_version(t), 2);
  ck_assert_int_eq(wcs_table_family_count(t), 3);
  CHECK_DUMP(t, NULL, &o, "r1: a.q@6=v2 b.q@5=w;");
  wcs_table_close(t);
  ck_assert_int_eq(wcs_table_open(e, "t2", &t), WCS_OK);
  ck_assert_ptr_null(t);
  /* a new table gets a fresh id: no data of the dropped one shows up */
  t = mk(e, "t2", "FAMILY z");
  CHECK_DUMP(t, NULL, &o, "");
  wcs_table_close(t);
  wcs_engine_close(e);
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_engine_open_path_shares_one_store) {
  const char *zDir = tu_tmpdir("engine_share");
  char zPath[1024];
  wcs_engine *e1 = NULL, *e2 = NULL;
  snprintf(zPath, sizeof(zPath), "%s/store", zDir);
  ck_assert_int_eq(wcs_engine_open_path(&e1, zPath, NULL, NULL), WCS_OK);
  ck_assert_int_eq(wcs_engine_open_path(&e2, zPath, NULL, NULL), WCS_OK);
  ck_assert_ptr_eq(e1, e2);
  ck_assert_int_eq(wcs_engine_close(e1), WCS_OK);
  ck_assert_int_eq(wcs_table_create(e2, "t", "FAMILY f", NULL), WCS_OK);
  ck_assert_int_eq(wcs_engine_close(e2), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

/* Threads that open and close one store by path, over and over: an open
** while another thread closes the last reference waits for that close,
** and never takes this process's own store lock for another process's
** (which would make it a follower that cannot write). */
typedef struct OpenLoop {
  const char *zPath;
  int nFollow, nFail;
} OpenLoop;

static void *open_loop(void *p) {
  OpenLoop *l = p;
  int i;
  for (i = 0; i < 300; i++) {
    wcs_engine *e = NULL;
    int bFollow = 0;
    if (wcs_engine_open_shared(&e, l->zPath, NULL, &bFollow, NULL) != WCS_OK) {
      l->nFail++;
      continue;
    }
    l->nFollow += bFollow;
    wcs_engine_close(e);
  }
  return NULL;
}

START_TEST(test_open_waits_for_a_close_of_the_same_store) {
  const char *zDir = tu_tmpdir("engine_reopen");
  char zPath[1024];
  OpenLoop a[2];
  pthread_t th[2];
  int i;
  snprintf(zPath, sizeof(zPath), "%s/store", zDir);
  for (i = 0; i < 2; i++) {
    a[i].zPath = zPath;
    a[i].nFollow = a[i].nFail = 0;
    ck_assert_int_eq(pthread_create(&th[i], NULL, open_loop, &a[i]), 0);
  }
  for (i = 0; i < 2; i++) {
    ck_assert_int_eq(pthread_join(th[i], NULL), 0);
    ck_assert_int_eq(a[i].nFail, 0);
    ck_assert_int_eq(a[i].nFollow, 0);
  }
  tu_rmrf(zDir);
}
END_TEST

/* A compaction lets go of the files it replaced before it returns, though
** a cursor idle in the engine's pool (kept for reuse after a read) still
** had them open. */
START_TEST(test_compaction_frees_files_idle_cursors_held) {
  const char *zDir = tu_tmpdir("engine_idle_pin");
  char zPath[1024];
  wcs_engine *e = NULL;
  wcs_table *t;
  wcs_read_options o = ro();
  int i, pass;
  snprintf(zPath, sizeof(zPath), "%s/store", zDir);
  ck_assert_int_eq(wcs_engine_open_path(&e, zPath, NULL, NULL), WCS_OK);
  t = mk(e, "t", "FAMILY f");
  for (pass = 0; pass < 2; pass++) {
    for (i = 0; i < 200; i++) {
      char r[16];
      snprintf(r, sizeof(r), "r%03d", i);
      setc(e, t, r, "f", "q", 1 + pass, pass ? "w" : "v");
    }
    ck_assert_int_eq(wcs_engine_gc(e, "t", 1), WCS_OK);
    if (pass == 0) {
      /* a read: its cursor goes idle into the pool, on this version */
      char *z = dump(t, NULL, &o);
      ck_assert_ptr_nonnull(strstr(z, "r199"));
      free(z);
    }
  }
  ck_assert_int_eq(tu_count_ssts(zPath), 1);
  wcs_table_close(t);
  ck_assert_int_eq(wcs_engine_close(e), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_drop_removes_all_data) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY f, FAMILY g");
  wcs_read_options o = ro();
  int i;
  for (i = 0; i < 50; i++) {
    char r[16];
    snprintf(r, sizeof(r), "r%02d", i);
    setc(e, t, r, i % 2 ? "f" : "g", "q", 1, "v");
  }
  wcs_table_close(t);
  ck_assert_int_eq(wcs_table_drop(e, "t"), WCS_OK);
  t = mk(e, "t", "FAMILY f, FAMILY g");
  CHECK_DUMP(t, NULL, &o, "");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_alter_adds_family_changes_gc_and_drops_family) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b");
  wcs_read_options o = ro();
  setc(e, t, "r", "a", "q", 1, "a1");
  setc(e, t, "r", "a", "q", 2, "a2");
  setc(e, t, "r", "b", "q", 1, "b1");
  ck_assert_int_eq(wcs_table_alter(e, "t", "FAMILY a MAX VERSIONS 1, FAMILY c"),
                   WCS_OK);
  /* the old handle is stale for writes */
  {
    wcs_txn *x = NULL;
    wcs_txn_begin(e, 0, &x);
    ck_assert_int_eq(wcs_txn_set_cell(x, t, "r", 1, "a", "q", 1, 3, "x", 1),
                     WCS_SCHEMA);
    wcs_txn_free(x);
  }
  wcs_table_close(t);
  ck_assert_int_eq(wcs_table_open(e, "t", &t), WCS_OK);
  ck_assert_int_eq((int)wcs_table_schema_version(t), 2);
  /* GC change is retroactive; family b's data is gone */
  CHECK_DUMP(t, NULL, &o, "r: a.q@2=a2;");
  setc(e, t, "r", "c", "q", 1, "c1");
  CHECK_DUMP(t, NULL, &o, "r: a.q@2=a2 c.q@1=c1;");
  /* re-adding b does not bring its old data back */
  ck_assert_int_eq(wcs_table_alter(e, "t",
                                   "FAMILY a MAX VERSIONS 1, "
                                   "FAMILY c, FAMILY b"),
                   WCS_OK);
  wcs_table_close(t);
  wcs_table_open(e, "t", &t);
  CHECK_DUMP(t, NULL, &o, "r: a.q@2=a2 c.q@1=c1;");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_alter_rejects_key_and_aggregate_change) {
  wcs_engine *e = open_mem();
  ck_assert_int_eq(wcs_table_create(e, "t",
                                    "KEY (a STRING, b STRING), "
                                    "FAMILY n AGGREGATE SUM",
                                    NULL),
                   WCS_OK);
  ck_assert_int_eq(wcs_table_alter(e, "t",
                                   "KEY (a STRING), FAMILY n "
                                   "AGGREGATE SUM"),
                   WCS_SCHEMA);
  ck_assert_int_eq(wcs_table_alter(e, "t",
                                   "KEY (a STRING, b STRING), "
                                   "FAMILY n AGGREGATE MAX"),
                   WCS_SCHEMA);
  ck_assert_int_eq(wcs_table_alter(e, "nope", "FAMILY f"), WCS_ERROR);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_many_families_warn_not_fail) {
  wcs_engine *e = open_mem();
  char *z = malloc(120 * 16);
  int i;
  z[0] = 0;
  for (i = 0; i < 101; i++) {
    sprintf(z + strlen(z), "%sFAMILY f%d", i ? ", " : "", i);
  }
  ck_assert_int_eq(wcs_table_create(e, "t", z, NULL), WCS_OK);
  ck_assert_ptr_nonnull(wcs_engine_warning(e));
  ck_assert_ptr_nonnull(strstr(wcs_engine_warning(e), "101"));
  ck_assert_int_eq(wcs_table_create(e, "u", "FAMILY f", NULL), WCS_OK);
  ck_assert_ptr_null(wcs_engine_warning(e));
  free(z);
  wcs_engine_close(e);
}
END_TEST

/* ================================================================== */
/* cells and reads                                                     */

START_TEST(test_cells_newest_first_grouped_by_family) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b");
  wcs_read_options o = ro();
  setc(e, t, "r1", "b", "y", 1, "b1");
  setc(e, t, "r1", "a", "x", 1, "x1");
  setc(e, t, "r1", "a", "x", 3, "x3");
  setc(e, t, "r1", "a", "w", 2, "w2");
  setc(e, t, "r1", "a", "x", 3, "x3b"); /* same timestamp overwrites */
  setc(e, t, "r0", "b", "", 7, "empty-qual");
  CHECK_DUMP(t, NULL, &o,
             "r0: b.@7=empty-qual; r1: a.w@2=w2 a.x@3=x3b "
             "a.x@1=x1 b.y@1=b1;");
  o.nVersions = 1;
  CHECK_DUMP(t, NULL, &o,
             "r0: b.@7=empty-qual; r1: a.w@2=w2 a.x@3=x3b "
             "b.y@1=b1;");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_family_names_from_the_table_schema_find_their_family) {
  /* A family name taken from wcs_table_schema() is found by its address
  ** (the SQL module passes those); any other string by its text. */
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b, FAMILY c");
  const ks_schema *s = wcs_table_schema(t);
  wcs_read_options o = ro();
  wcs_txn *x = NULL;
  char zB[2] = "b";
  int i;
  ck_assert_int_eq(s->nFamily, 3);
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  for (i = 2; i >= 0; i--) {
    char v[2] = {(char)('0' + i), 0};
    ck_assert_int_eq(
        wcs_txn_set_cell(x, t, "r", 1, s->aFamily[i].zName, "q", 1, 1, v, 1),
        WCS_OK);
  }
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "s", 1, zB, "q", 1, 1, "b", 1),
                   WCS_OK);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "s", 1, "d", "q", 1, 1, "d", 1),
                   WCS_ERROR);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  CHECK_DUMP(t, NULL, &o, "r: a.q@1=0 b.q@1=1 c.q@1=2; s: b.q@1=b;");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_ts_now_uses_engine_clock) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_cursor *c = NULL;
  int n;
  gNow = T0 + 42;
  setc(e, t, "r", "a", "q", WCS_TS_NOW, "v");
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, NULL), WCS_OK);
  ck_assert(!wcs_cursor_eof(c));
  ck_assert(wcs_cursor_cells(c, &n)[0].iTs == T0 + 42);
  wcs_cursor_close(c);
  {
    wcs_txn *x = NULL;
    wcs_txn_begin(e, 0, &x);
    ck_assert_int_eq(wcs_txn_set_cell(x, t, "r", 1, "a", "q", 1, -5, "v", 1),
                     WCS_RANGE);
    /* no read could see a cell at INT64_MAX: refused too */
    ck_assert_int_eq(
        wcs_txn_set_cell(x, t, "r", 1, "a", "q", 1, INT64_MAX, "v", 1),
        WCS_RANGE);
    ck_assert_int_eq(
        wcs_txn_set_cell(x, t, "r", 1, "a", "q", 1, INT64_MAX - 1, "v", 1),
        WCS_OK);
    wcs_txn_free(x);
  }
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_family_subset_reads_only_those_families) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b, FAMILY c");
  wcs_read_options o = ro();
  const char *az[2] = {"c", "a"};
  setc(e, t, "r1", "a", "q", 1, "a");
  setc(e, t, "r1", "b", "q", 1, "b");
  setc(e, t, "r2", "b", "q", 1, "b");
  setc(e, t, "r3", "c", "q", 1, "c");
  o.azFamily = az;
  o.nFamily = 2;
  /* r2 has nothing in a or c: not returned */
  CHECK_DUMP(t, NULL, &o, "r1: a.q@1=a; r3: c.q@1=c;");
  az[0] = "nope";
  o.nFamily = 1;
  {
    wcs_cursor *c = NULL;
    ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, &o), WCS_ERROR);
    ck_assert_ptr_null(c);
  }
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_ranges_are_unioned_sorted_and_bounded) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_read_options o = ro();
  wcs_key_range r[3];
  const char *az[] = {"a", "b", "c", "d", "e", "f", "g"};
  int i;
  for (i = 0; i < 7; i++)
    setc(e, t, az[i], "a", "q", 1, "v");
  o.nVersions = 1;
  memset(r, 0, sizeof(r));
  /* [e, g) , [b, c] , (a, c) : union is b, c, e, f */
  r[0].pStart = "e";
  r[0].nStart = 1;
  r[0].pEnd = "g";
  r[0].nEnd = 1;
  r[1].pStart = "b";
  r[1].nStart = 1;
  r[1].pEnd = "c";
  r[1].nEnd = 1;
  r[1].bEndIncl = 1;
  r[2].pStart = "a";
  r[2].nStart = 1;
  r[2].bStartExcl = 1;
  r[2].pEnd = "c";
  r[2].nEnd = 1;
  o.aRange = r;
  o.nRange = 3;
  CHECK_DUMP(t, NULL, &o, "b: a.q@1=v; c: a.q@1=v; e: a.q@1=v; f: a.q@1=v;");
  o.bReverse = 1;
  CHECK_DUMP(t, NULL, &o, "f: a.q@1=v; e: a.q@1=v; c: a.q@1=v; b: a.q@1=v;");
  o.nRowLimit = 3;
  CHECK_DUMP(t, NULL, &o, "f: a.q@1=v; e: a.q@1=v; c: a.q@1=v;");
  o.bReverse = 0;
  CHECK_DUMP(t, NULL, &o, "b: a.q@1=v; c: a.q@1=v; e: a.q@1=v;");
  /* open-ended */
  memset(r, 0, sizeof(r));
  r[0].pStart = "f";
  r[0].nStart = 1;
  o.nRange = 1;
  o.nRowLimit = 0;
  CHECK_DUMP(t, NULL, &o, "f: a.q@1=v; g: a.q@1=v;");
  memset(r, 0, sizeof(r));
  r[0].pEnd = "b";
  r[0].nEnd = 1;
  o.bReverse = 1;
  CHECK_DUMP(t, NULL, &o, "a: a.q@1=v;");
  /* an empty range */
  r[0].pStart = "d";
  r[0].nStart = 1;
  r[0].pEnd = "c";
  r[0].nEnd = 1;
  CHECK_DUMP(t, NULL, &o, "");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_qualifiers_and_rows_with_zero_bytes_of_every_length) {
  /* Qualifiers and rows of 0..40 bytes with 00 (and FF) bytes anywhere
  ** come back as written, qualifiers in byte order. */
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_txn *x = NULL;
  wcs_cursor *c = NULL;
  uint8_t aQ[41][40], aRow[48];
  int n, i, nCell = 0, nRow = 0;
  const wcs_cell *aCell;
  for (n = 0; n <= 40; n++) {
    for (i = 0; i < n; i++)
      aQ[n][i] = (uint8_t)(i % 3 == 0 ? 0x00 : i % 5 == 1 ? 0xFF : 'a' + i);
  }
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  for (n = 0; n <= 40; n++) {
    ck_assert_int_eq(
        wcs_txn_set_cell(x, t, "r", 1, "a", aQ[n], (size_t)n, 1, &n, sizeof(n)),
        WCS_OK);
  }
  /* rows: 1..40 bytes, zero bytes at the start, the end and between */
  for (n = 1; n <= 40; n++) {
    for (i = 0; i < n; i++)
      aRow[i] = (uint8_t)(i % 4 == 0 || i == n - 1 ? 0x00 : 's');
    ck_assert_int_eq(
        wcs_txn_set_cell(x, t, aRow, (size_t)n, "a", "q", 1, 1, &n, sizeof(n)),
        WCS_OK);
  }
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, NULL), WCS_OK);
  for (; !wcs_cursor_eof(c); wcs_cursor_next(c)) {
    size_t nr;
    const uint8_t *pRow = wcs_cursor_row(c, &nr);
    aCell = wcs_cursor_cells(c, &nCell);
    if (nr == 1 && pRow[0] == 'r') {
      /* 41 cells, qualifiers in byte order: check each is one written */
      ck_assert_int_eq(nCell, 41);
      for (i = 0; i < nCell; i++) {
        int v;
        ck_assert_int_eq((int)aCell[i].nVal, (int)sizeof(v));
        memcpy(&v, aCell[i].pVal, sizeof(v));
        ck_assert_int_eq((int)aCell[i].nQual, v);
        ck_assert(v == 0 || memcmp(aCell[i].pQual, aQ[v], (size_t)v) == 0);
        if (i > 0) {
          size_t na = aCell[i - 1].nQual, nb = aCell[i].nQual;
          int cmp =
              memcmp(aCell[i - 1].pQual, aCell[i].pQual, na < nb ? na : nb);
          ck_assert(cmp < 0 || (cmp == 0 && na < nb));
        }
      }
    } else {
      int v;
      ck_assert_int_eq(nCell, 1);
      memcpy(&v, aCell[0].pVal, sizeof(v));
      ck_assert_int_eq((int)nr, v);
      for (i = 0; i < v; i++)
        ck_assert_int_eq(pRow[i], i % 4 == 0 || i == v - 1 ? 0x00 : 's');
      nRow++;
    }
  }
  ck_assert_int_eq(nRow, 40);
  wcs_cursor_close(c);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_row_keys_with_zero_and_ff_bytes_sort_as_bytes) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_read_options o = ro();
  wcs_txn *x = NULL;
  /* "a" < "a\0" < "a\0\0" < "a\0\1" < "a\1" < "a\xff" < "b" */
  static const struct {
    const char *p;
    size_t n;
  } k[] = {{"a\xff", 2}, {"a\0\1", 3}, {"b", 1},  {"a", 1},
           {"a\0\0", 3}, {"a\1", 2},   {"a\0", 2}};
  int i;
  wcs_txn_begin(e, 0, &x);
  for (i = 0; i < 7; i++) {
    ck_assert_int_eq(
        wcs_txn_set_cell(x, t, k[i].p, k[i].n, "a", "q\0z", 3, 1, "v", 1),
        WCS_OK);
  }
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  CHECK_DUMP(t, NULL, &o,
             "a: a.q\\x00z@1=v; a\\x00: a.q\\x00z@1=v; "
             "a\\x00\\x00: a.q\\x00z@1=v; a\\x00\\x01: a.q\\x00z@1=v; "
             "a\\x01: a.q\\x00z@1=v; a\\xFF: a.q\\x00z@1=v; b: a.q\\x00z@1=v;");
  o.bReverse = 1;
  CHECK_DUMP(
      t, NULL, &o,
      "b: a.q\\x00z@1=v; a\\xFF: a.q\\x00z@1=v; "
      "a\\x01: a.q\\x00z@1=v; a\\x00\\x01: a.q\\x00z@1=v; "
      "a\\x00\\x00: a.q\\x00z@1=v; a\\x00: a.q\\x00z@1=v; a: a.q\\x00z@1=v;");
  /* prefix delete of "a\0" leaves a, a\1, a\xff, b */
  wcs_txn_begin(e, 0, &x);
  ck_assert_int_eq(wcs_txn_delete_prefix(x, t, "a\0", 2), WCS_OK);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  o.bReverse = 0;
  CHECK_DUMP(t, NULL, &o,
             "a: a.q\\x00z@1=v; a\\x01: a.q\\x00z@1=v; "
             "a\\xFF: a.q\\x00z@1=v; b: a.q\\x00z@1=v;");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_versions_time_range_and_as_of) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_read_options o = ro();
  int i;
  for (i = 1; i <= 5; i++) {
    char v[16];
    snprintf(v, sizeof(v), "v%d", i);
    setc(e, t, "r", "a", "q", i * 10, v);
  }
  o.nVersions = 2;
  CHECK_DUMP(t, NULL, &o, "r: a.q@50=v5 a.q@40=v4;");
  o.nVersions = 0;
  o.iMinTs = 20;
  o.iMaxTs = 40;
  CHECK_DUMP(t, NULL, &o, "r: a.q@30=v3 a.q@20=v2;");
  o.nVersions = 1;
  CHECK_DUMP(t, NULL, &o, "r: a.q@30=v3;");
  o = ro();
  o.iAsOf = 35;
  o.nVersions = 1;
  CHECK_DUMP(t, NULL, &o, "r: a.q@30=v3;");
  o.iAsOf = 5;
  CHECK_DUMP(t, NULL, &o, "");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_keys_only_returns_live_rows_without_cells) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a MAX AGE '1s'");
  wcs_read_options o = ro();
  wcs_cursor *c = NULL;
  int n = -1;
  setc(e, t, "old", "a", "q", T0 - 2000000, "v");
  setc(e, t, "new", "a", "q", T0, "v");
  o.bKeysOnly = 1;
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, &o), WCS_OK);
  ck_assert(!wcs_cursor_eof(c));
  {
    size_t nr;
    const char *p = wcs_cursor_row(c, &nr);
    ck_assert_int_eq((int)nr, 3);
    ck_assert(memcmp(p, "new", 3) == 0);
  }
  wcs_cursor_cells(c, &n);
  ck_assert_int_eq(n, 0);
  ck_assert_int_eq(wcs_cursor_next(c), WCS_OK);
  ck_assert(wcs_cursor_eof(c));
  wcs_cursor_close(c);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* Write n versions (ts 1..n, value "v<ts>") of row r, family f, qual q
** in one transaction. */
static void versions(wcs_engine *e, wcs_table *t, const char *zRow,
                     const char *zFam, const char *zQual, int n) {
  wcs_txn *x = NULL;
  int i;
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  for (i = 1; i <= n; i++) {
    char v[16];
    snprintf(v, sizeof(v), "v%d", i);
    ck_assert_int_eq(wcs_txn_set_cell(x, t, zRow, strlen(zRow), zFam, zQual,
                                      strlen(zQual), i, v, strlen(v)),
                     WCS_OK);
  }
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
}

START_TEST(test_latest_n_passes_over_long_columns) {
  /* Columns of 200 versions: latest-N, time ranges and keys-only reads
  ** skip the cells they do not return (by seeking); the results must be
  ** those of a cell-by-cell walk, with GC applied by position. */
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b MAX VERSIONS 3");
  wcs_read_options o = ro();
  int bFlushed;
  versions(e, t, "r", "a", "q", 200);
  versions(e, t, "r", "b", "q", 200);
  setc(e, t, "r", "a", "p", 7, "p7");
  setc(e, t, "r", "a", "z", 8, "z8");
  setc(e, t, "s", "a", "q", 9, "s9");
  for (bFlushed = 0; bFlushed < 2; bFlushed++) {
    o = ro();
    o.nVersions = 1;
    CHECK_DUMP(t, NULL, &o,
               "r: a.p@7=p7 a.q@200=v200 a.z@8=z8 b.q@200=v200; s: a.q@9=s9;");
    o.nVersions = 2;
    CHECK_DUMP(t, NULL, &o,
               "r: a.p@7=p7 a.q@200=v200 a.q@199=v199 a.z@8=z8 b.q@200=v200 "
               "b.q@199=v199; s: a.q@9=s9;");
    o.bReverse = 1;
    CHECK_DUMP(t, NULL, &o,
               "s: a.q@9=s9; r: a.p@7=p7 a.q@200=v200 a.q@199=v199 a.z@8=z8 "
               "b.q@200=v200 b.q@199=v199;");
    /* as of a time: the newer cells are passed over; MAX VERSIONS 3 has
    ** already expired everything below 198 in b */
    o = ro();
    o.nVersions = 1;
    o.iAsOf = 120;
    CHECK_DUMP(t, NULL, &o, "r: a.p@7=p7 a.q@120=v120 a.z@8=z8; s: a.q@9=s9;");
    o.iAsOf = 199;
    CHECK_DUMP(t, NULL, &o,
               "r: a.p@7=p7 a.q@199=v199 a.z@8=z8 b.q@199=v199; s: a.q@9=s9;");
    /* a window in the middle and one at the old end */
    o = ro();
    o.iMinTs = 101;
    o.iMaxTs = 104;
    CHECK_DUMP(t, NULL, &o, "r: a.q@103=v103 a.q@102=v102 a.q@101=v101;");
    o.iMinTs = 0;
    o.iMaxTs = 3;
    CHECK_DUMP(t, NULL, &o, "r: a.q@2=v2 a.q@1=v1;");
    o.iMinTs = 150;
    o.iMaxTs = INT64_MAX;
    o.nVersions = 1;
    o.azFamily = (const char *const[]){"b"};
    o.nFamily = 1;
    CHECK_DUMP(t, NULL, &o, "r: b.q@200=v200;");
    /* keys only: the rows, no cells */
    o = ro();
    o.bKeysOnly = 1;
    CHECK_DUMP(t, NULL, &o, "r:; s:;");
    o.nVersions = 1;
    o.iMaxTs = 8;
    CHECK_DUMP(t, NULL, &o, "r:;");
    /* the same from sorted files */
    if (bFlushed == 0) {
      ck_assert_int_eq(wcs_db_flush(wcs_engine_db(e)), WCS_OK);
    }
  }
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_cursor_reuse_sees_commits_and_new_options) {
  /* Closed cursors are reused (with their iterators while nothing was
  ** committed): every combination of reads in a row, with commits and
  ** transactions between them, must see exactly the state of its time. */
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY f, FAMILY g");
  wcs_table *t2 = NULL;
  wcs_read_options o = ro();
  wcs_key_range r;
  wcs_cursor *c1 = NULL, *c2 = NULL;
  wcs_txn *x = NULL;
  int i;
  setc(e, t, "a", "f", "q", 1, "a1");
  setc(e, t, "b", "g", "q", 1, "b1");
  setc(e, t, "c", "f", "q", 1, "c1");
  for (i = 0; i < 3; i++) {
    /* the same scan twice: the second reuses the first one's iterators */
    CHECK_DUMP(t, NULL, &o, "a: f.q@1=a1; b: g.q@1=b1; c: f.q@1=c1;");
    CHECK_DUMP(t, NULL, &o, "a: f.q@1=a1; b: g.q@1=b1; c: f.q@1=c1;");
  }
  o.bReverse = 1;
  CHECK_DUMP(t, NULL, &o, "c: f.q@1=c1; b: g.q@1=b1; a: f.q@1=a1;");
  o.bReverse = 0;
  o.azFamily = (const char *const[]){"g"};
  o.nFamily = 1;
  CHECK_DUMP(t, NULL, &o, "b: g.q@1=b1;");
  /* a commit in between: the reused cursor must see it */
  setc(e, t, "b", "f", "q", 2, "b2");
  o = ro();
  CHECK_DUMP(t, NULL, &o, "a: f.q@1=a1; b: f.q@2=b2 g.q@1=b1; c: f.q@1=c1;");
  /* point reads of one row, repeated, and of another row */
  memset(&r, 0, sizeof(r));
  r.pStart = r.pEnd = "b";
  r.nStart = r.nEnd = 1;
  r.bEndIncl = 1;
  o.aRange = &r;
  o.nRange = 1;
  CHECK_DUMP(t, NULL, &o, "b: f.q@2=b2 g.q@1=b1;");
  CHECK_DUMP(t, NULL, &o, "b: f.q@2=b2 g.q@1=b1;");
  r.pStart = r.pEnd = "c";
  CHECK_DUMP(t, NULL, &o, "c: f.q@1=c1;");
  /* a transaction's view, then the committed view again */
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "c", 1, "g", "q", 1, 3, "c3", 2),
                   WCS_OK);
  CHECK_DUMP(t, x, &o, "c: f.q@1=c1 g.q@3=c3;");
  CHECK_DUMP(t, NULL, &o, "c: f.q@1=c1;");
  o = ro();
  CHECK_DUMP(t, x, &o,
             "a: f.q@1=a1; b: f.q@2=b2 g.q@1=b1; c: f.q@1=c1 g.q@3=c3;");
  CHECK_DUMP(t, NULL, &o, "a: f.q@1=a1; b: f.q@2=b2 g.q@1=b1; c: f.q@1=c1;");
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  CHECK_DUMP(t, NULL, &o,
             "a: f.q@1=a1; b: f.q@2=b2 g.q@1=b1; c: f.q@1=c1 g.q@3=c3;");
  /* two cursors on the table at once, and a second handle */
  ck_assert_int_eq(wcs_table_open(e, "t", &t2), WCS_OK);
  ck_assert_int_eq(wcs_cursor_open(&c1, t, NULL, &o), WCS_OK);
  o.bReverse = 1;
  ck_assert_int_eq(wcs_cursor_open(&c2, t2, NULL, &o), WCS_OK);
  for (i = 0; i < 3; i++) {
    size_t n1, n2;
    const char *p1 = wcs_cursor_row(c1, &n1);
    const char *p2 = wcs_cursor_row(c2, &n2);
    ck_assert(n1 == 1 && n2 == 1);
    ck_assert_int_eq(p1[0], "abc"[i]);
    ck_assert_int_eq(p2[0], "cba"[i]);
    ck_assert_int_eq(wcs_cursor_next(c1), WCS_OK);
    ck_assert_int_eq(wcs_cursor_next(c2), WCS_OK);
  }
  ck_assert(wcs_cursor_eof(c1) && wcs_cursor_eof(c2));
  wcs_cursor_close(c1);
  wcs_cursor_close(c2);
  CHECK_DUMP(t2, NULL, &o,
             "c: f.q@1=c1 g.q@3=c3; b: f.q@2=b2 g.q@1=b1; "
             "a: f.q@1=a1;");
  wcs_table_close(t2);
  wcs_table_close(t);
  /* idle cursors are freed with the engine (checked by the sanitizers) */
  wcs_engine_close(e);
}
END_TEST

/* Writer thread for the atomicity test: rows r0..r9, each commit sets
** f.q and g.q of one row to the same new value. */
typedef struct AtomCtx {
  wcs_engine *e;
  wcs_table *t;
  int bStop;   /* atomic: the reader is done */
  int nCommit; /* atomic: commits so far */
  int bExited; /* atomic: the writer stopped (maybe failed) */
} AtomCtx;
static void *atom_writer(void *p) {
  AtomCtx *a = p;
  int i = 0;
  while (!__atomic_load_n(&a->bStop, __ATOMIC_ACQUIRE)) {
    wcs_txn *x = NULL;
    char r[8], v[16];
    int n;
    snprintf(r, sizeof(r), "r%d", i % 10);
    n = snprintf(v, sizeof(v), "%d", i);
    if (wcs_txn_begin(a->e, 0, &x) != WCS_OK) break;
    wcs_txn_set_cell(x, a->t, r, 2, "f", "q", 1, 1 + i, v, (size_t)n);
    wcs_txn_set_cell(x, a->t, r, 2, "g", "q", 1, 1 + i, v, (size_t)n);
    if (wcs_txn_commit(x) != WCS_OK) break;
    wcs_txn_free(x);
    i++;
    __atomic_store_n(&a->nCommit, i, __ATOMIC_RELEASE);
  }
  __atomic_store_n(&a->bExited, 1, __ATOMIC_RELEASE);
  return NULL;
}

START_TEST(test_reused_cursor_reads_a_row_at_one_point_in_time) {
  /* A reused cursor moves its iterators to the latest state one family at
  ** a time; while another thread commits rows that set two families
  ** together, every row read must show both families from one commit. */
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY f, FAMILY g");
  AtomCtx a;
  pthread_t th;
  int nRead = 0, nRows = 0;
  wcs_engine_set_clock(e, NULL, NULL);
  memset(&a, 0, sizeof(a));
  a.e = e;
  a.t = t;
  ck_assert_int_eq(pthread_create(&th, NULL, atom_writer, &a), 0);
  /* at least 3000 reads and 5000 rows read, 300 commits meanwhile */
  while ((nRead < 3000 || nRows < 5000 ||
          __atomic_load_n(&a.nCommit, __ATOMIC_ACQUIRE) < 300) &&
         !__atomic_load_n(&a.bExited, __ATOMIC_ACQUIRE)) {
    wcs_read_options o = ro();
    wcs_cursor *c = NULL;
    o.nVersions = 1;
    ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, &o), WCS_OK);
    while (!wcs_cursor_eof(c)) {
      int n;
      const wcs_cell *pc = wcs_cursor_cells(c, &n);
      ck_assert_int_eq(n, 2);
      ck_assert_msg(pc[0].iTs == pc[1].iTs,
                    "row read across commits: "
                    "f@%lld g@%lld",
                    (long long)pc[0].iTs, (long long)pc[1].iTs);
      nRows++;
      ck_assert_int_eq(wcs_cursor_next(c), WCS_OK);
    }
    wcs_cursor_close(c);
    nRead++;
  }
  __atomic_store_n(&a.bStop, 1, __ATOMIC_RELEASE);
  pthread_join(th, NULL);
  ck_assert_int_ge(a.nCommit, 300);
  ck_assert_int_gt(nRows, 0);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_cursor_reuse_after_alter_and_drop) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY f, FAMILY g");
  wcs_read_options o = ro();
  setc(e, t, "a", "f", "q", 1, "a1");
  setc(e, t, "a", "g", "q", 1, "a2");
  CHECK_DUMP(t, NULL, &o, "a: f.q@1=a1 g.q@1=a2;");
  ck_assert_int_eq(wcs_table_alter(e, "t", "FAMILY g, FAMILY h"), WCS_OK);
  wcs_table_close(t);
  ck_assert_int_eq(wcs_table_open(e, "t", &t), WCS_OK);
  setc(e, t, "a", "h", "q", 1, "a3");
  CHECK_DUMP(t, NULL, &o, "a: g.q@1=a2 h.q@1=a3;");
  wcs_table_close(t);
  ck_assert_int_eq(wcs_table_drop(e, "t"), WCS_OK);
  t = mk(e, "t", "FAMILY f");
  CHECK_DUMP(t, NULL, &o, "");
  setc(e, t, "b", "f", "q", 1, "b1");
  CHECK_DUMP(t, NULL, &o, "b: f.q@1=b1;");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* Row filter for the skip-scan test: keys "x#y"; emit rows with y == "2",
** seek from one x to the next. */
typedef struct SkipCtx {
  char aSeek[64];
  int nCalls;
} SkipCtx;
static int skip_filter(void *pCtx, const void *pRow, size_t nRow,
                       const void **ppSeek, size_t *pnSeek) {
  SkipCtx *s = pCtx;
  const char *z = pRow;
  s->nCalls++;
  if (nRow == 3 && z[2] == '2') return WCS_ROW_EMIT;
  if (nRow == 3 && z[2] < '2') {
    /* seek to x#2 */
    memcpy(s->aSeek, z, 2);
    s->aSeek[2] = '2';
    *ppSeek = s->aSeek;
    *pnSeek = 3;
    return WCS_ROW_SEEK;
  }
  /* past y == 2: seek to the next x */
  s->aSeek[0] = (char)(z[0] + 1);
  *ppSeek = s->aSeek;
  *pnSeek = 1;
  return WCS_ROW_SEEK;
}

/* Rows "x#y" for x from 'a' on (nx of them) and y from 0 (ny), each with
** the cell a.q@1 = v. */
static void put_grid(wcs_engine *e, wcs_table *t, int nx, int ny) {
  char r[16];
  int x, y;
  for (x = 0; x < nx; x++) {
    for (y = 0; y < ny; y++) {
      snprintf(r, sizeof(r), "%c#%d", 'a' + x, y);
      setc(e, t, r, "a", "q", 1, "v");
    }
  }
}

START_TEST(test_row_filter_skip_scan_seeks_between_prefixes) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_read_options o = ro();
  SkipCtx s;
  put_grid(e, t, 5, 5);
  memset(&s, 0, sizeof(s));
  o.xRowFilter = skip_filter;
  o.pFilterCtx = &s;
  CHECK_DUMP(t, NULL, &o,
             "a#2: a.q@1=v; b#2: a.q@1=v; c#2: a.q@1=v; "
             "d#2: a.q@1=v; e#2: a.q@1=v;");
  /* each prefix costs 3 looks (y=0, y=2, y=3), not 5 */
  ck_assert_int_eq(s.nCalls, 15);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* A filter that passes rows x#y with y in {1, 2, 3} whole runs at a time:
** for a row x#1 it answers WCS_ROW_EMIT_PREFIX with the prefix "x#" only
** when x is even (so the rows x#2 and x#3 need no call), else
** WCS_ROW_EMIT; y == 0 is skipped, y == 4 too (asked about only when the
** prefix did not cover it). */
typedef struct PrefixCtx {
  int nCalls;
  int bBad; /* answer with a prefix the row does not have */
} PrefixCtx;
static int prefix_filter(void *pCtx, const void *pRow, size_t nRow,
                         const void **ppSeek, size_t *pnSeek) {
  PrefixCtx *s = pCtx;
  const char *z = pRow;
  s->nCalls++;
  if (nRow != 3 || z[2] == '0' || z[2] == '4') return WCS_ROW_SKIP;
  if (((z[0] - 'a') % 2 == 0 || s->bBad) && z[2] == '1') {
    *ppSeek = s->bBad ? "zz" : pRow;
    *pnSeek = 2;
    return WCS_ROW_EMIT_PREFIX;
  }
  return WCS_ROW_EMIT;
}

/* A cell filter that keeps the rows whose a.q is "2" or "3" (counting its
** calls): a row without that cell is passed over. */
static int keep_a23(void *pCtx, const wcs_cell *aCell, int nCell) {
  int i;
  ++*(int *)pCtx;
  for (i = 0; i < nCell; i++) {
    if (strcmp(aCell[i].zFamily, "a") == 0 && aCell[i].nQual == 1 &&
        ((const char *)aCell[i].pQual)[0] == 'q' && aCell[i].nVal == 1) {
      char v = ((const char *)aCell[i].pVal)[0];
      return v == '2' || v == '3';
    }
  }
  return 0;
}

START_TEST(test_cell_filter_passes_over_rows) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b");
  wcs_read_options o = ro();
  wcs_txn *x = NULL;
  int nCalls = 0, iCase;
  char r[16], v[2] = {0, 0};
  int k;
  /* rows k0..k5, a.q = k, b.q = k; k6 has b only */
  for (k = 0; k < 6; k++) {
    snprintf(r, sizeof r, "k%d", k);
    v[0] = (char)('0' + k);
    setc(e, t, r, "a", "q", 1, v);
    setc(e, t, r, "b", "q", 1, v);
  }
  setc(e, t, "k6", "b", "q", 1, "2");
  o.xCellFilter = keep_a23;
  o.pCellFilterCtx = &nCalls;
  /* from the memtable, then settled in one sorted run (the row-to-row
  ** shortcut of both families) */
  for (iCase = 0; iCase < 2; iCase++) {
    if (iCase == 1) {
      ck_assert_int_eq(wcs_db_flush(wcs_engine_db(e)), WCS_OK);
      ck_assert_int_eq(wcs_db_compact_range(wcs_engine_db(e), NULL, 0, NULL, 0),
                       WCS_OK);
    }
    nCalls = 0;
    o.bReverse = 0;
    o.nRowLimit = 0;
    CHECK_DUMP(t, NULL, &o, "k2: a.q@1=2 b.q@1=2; k3: a.q@1=3 b.q@1=3;");
    ck_assert_int_eq(nCalls, 7); /* every row, once */
    o.bReverse = 1;
    CHECK_DUMP(t, NULL, &o, "k3: a.q@1=3 b.q@1=3; k2: a.q@1=2 b.q@1=2;");
    /* the limit counts the rows returned, not those passed over */
    o.bReverse = 0;
    o.nRowLimit = 1;
    CHECK_DUMP(t, NULL, &o, "k2: a.q@1=2 b.q@1=2;");
    o.nRowLimit = 0;
    /* one family read: the filter sees its cells alone */
    {
      static const char *const azA[] = {"a"};
      o.azFamily = azA;
      o.nFamily = 1;
      CHECK_DUMP(t, NULL, &o, "k2: a.q@1=2; k3: a.q@1=3;");
      o.azFamily = NULL;
      o.nFamily = 0;
    }
    /* keys only: no cells, no call */
    nCalls = 0;
    o.bKeysOnly = 1;
    CHECK_DUMP(t, NULL, &o, "k0:; k1:; k2:; k3:; k4:; k5:; k6:;");
    ck_assert_int_eq(nCalls, 0);
    o.bKeysOnly = 0;
  }
  /* a transaction's own writes on top (the general step); every version
  ** of a column is read here, newest first, the one the filter sees */
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "k4", 2, "a", "q", 1, 2, "3", 1),
                   WCS_OK);
  CHECK_DUMP(t, x, &o,
             "k2: a.q@1=2 b.q@1=2; k3: a.q@1=3 b.q@1=3; "
             "k4: a.q@2=3 a.q@1=4 b.q@1=4;");
  wcs_txn_rollback(x);
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_row_filter_prefix_passes_a_run_without_calls) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_read_options o = ro();
  wcs_cursor *c = NULL;
  PrefixCtx s;
  put_grid(e, t, 4, 5);
  memset(&s, 0, sizeof(s));
  o.xRowFilter = prefix_filter;
  o.pFilterCtx = &s;
  /* the rows x#4 of the even x come through the prefix "x#" as well: the
  ** filter's word covers every row that starts with it */
  CHECK_DUMP(t, NULL, &o,
             "a#1: a.q@1=v; a#2: a.q@1=v; a#3: a.q@1=v; a#4: a.q@1=v; "
             "b#1: a.q@1=v; b#2: a.q@1=v; b#3: a.q@1=v; "
             "c#1: a.q@1=v; c#2: a.q@1=v; c#3: a.q@1=v; c#4: a.q@1=v; "
             "d#1: a.q@1=v; d#2: a.q@1=v; d#3: a.q@1=v;");
  /* a and c: y = 0 and 1 asked; b and d: all five */
  ck_assert_int_eq(s.nCalls, 2 + 5 + 2 + 5);
  /* reverse: a run entered at x#4 is asked until x#1 gives the prefix */
  memset(&s, 0, sizeof(s));
  o.bReverse = 1;
  CHECK_DUMP(t, NULL, &o,
             "d#3: a.q@1=v; d#2: a.q@1=v; d#1: a.q@1=v; "
             "c#3: a.q@1=v; c#2: a.q@1=v; c#1: a.q@1=v; c#0: a.q@1=v; "
             "b#3: a.q@1=v; b#2: a.q@1=v; b#1: a.q@1=v; "
             "a#3: a.q@1=v; a#2: a.q@1=v; a#1: a.q@1=v; a#0: a.q@1=v;");
  ck_assert_int_eq(s.nCalls, 5 + 4 + 5 + 4);
  /* a prefix the row does not have is an error */
  memset(&s, 0, sizeof(s));
  s.bBad = 1;
  o.bReverse = 0;
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, &o), WCS_MISUSE);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_cursor_seek_moves_both_ways) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_cursor *c = NULL;
  wcs_read_options o = ro();
  size_t n;
  const char *az[] = {"a", "c", "e", "g"};
  int i;
  for (i = 0; i < 4; i++)
    setc(e, t, az[i], "a", "q", 1, "v");
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, &o), WCS_OK);
  ck_assert_int_eq(wcs_cursor_seek(c, "d", 1), WCS_OK);
  ck_assert(memcmp(wcs_cursor_row(c, &n), "e", 1) == 0);
  ck_assert_int_eq(wcs_cursor_seek(c, "a", 1), WCS_OK);
  ck_assert(memcmp(wcs_cursor_row(c, &n), "a", 1) == 0);
  ck_assert_int_eq(wcs_cursor_seek(c, "h", 1), WCS_OK);
  ck_assert(wcs_cursor_eof(c));
  wcs_cursor_close(c);
  o.bReverse = 1;
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, &o), WCS_OK);
  ck_assert(memcmp(wcs_cursor_row(c, &n), "g", 1) == 0);
  ck_assert_int_eq(wcs_cursor_seek(c, "e", 1), WCS_OK); /* last row < e */
  ck_assert(memcmp(wcs_cursor_row(c, &n), "c", 1) == 0);
  ck_assert_int_eq(wcs_cursor_next(c), WCS_OK);
  ck_assert(memcmp(wcs_cursor_row(c, &n), "a", 1) == 0);
  wcs_cursor_close(c);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* ================================================================== */
/* GC policies                                                         */

/* Five versions at T0-4s .. T0 (one second apart), read at T0. */
static void gc_case(const char *zFamily, const char *zWant) {
  wcs_engine *e = open_mem();
  char zSchema[128];
  wcs_table *t;
  wcs_read_options o = ro();
  int i;
  snprintf(zSchema, sizeof(zSchema), "FAMILY a %s", zFamily);
  t = mk(e, "t", zSchema);
  for (i = 0; i < 5; i++) {
    char v[16];
    snprintf(v, sizeof(v), "v%d", i);
    setc(e, t, "r", "a", "q", T0 - (4 - i) * 1000000LL, v);
  }
  {
    char *z = dump(t, NULL, &o);
    /* timestamps print modulo 1e6, all 0 here: compare values only */
    char zVals[128] = "";
    const char *p = z;
    while ((p = strstr(p, "=v")) != NULL) {
      strncat(zVals, p + 1, 2);
      p += 2;
    }
    ck_assert_msg(strcmp(zVals, zWant) == 0, "%s: got %s want %s", zFamily,
                  zVals, zWant);
    free(z);
  }
  /* physical GC keeps exactly what reads show */
  ck_assert_int_eq(wcs_engine_gc(e, "t", 1), WCS_OK);
  {
    char *z1 = dump(t, NULL, &o);
    wcs_read_options o2 = ro();
    char *z2 = dump(t, NULL, &o2);
    ck_assert_str_eq(z1, z2);
    free(z1);
    free(z2);
  }
  wcs_table_close(t);
  wcs_engine_close(e);
}

START_TEST(test_gc_none_keeps_everything) {
  gc_case("", "v4v3v2v1v0");
}
END_TEST
START_TEST(test_gc_max_versions) {
  gc_case("MAX VERSIONS 2", "v4v3");
}
END_TEST
START_TEST(test_gc_max_age) {
  /* older than now - 2.5s: v0 (4s) and v1 (3s) expire */
  gc_case("MAX AGE '2500ms'", "v4v3v2");
}
END_TEST
START_TEST(test_gc_union_expires_when_either_rule_does) {
  gc_case("MAX VERSIONS 4 MAX AGE '1500ms' UNION", "v4v3");
  gc_case("MAX VERSIONS 1 MAX AGE '10s'", "v4"); /* UNION is the default */
}
END_TEST
START_TEST(test_gc_intersection_expires_when_both_rules_do) {
  /* versions beyond 2 AND older than 2.5s: v1, v0 */
  gc_case("MAX VERSIONS 2 MAX AGE '2500ms' INTERSECTION", "v4v3v2");
  /* versions beyond 4 AND older than 1.5s: v0 only */
  gc_case("MAX VERSIONS 4 MAX AGE '1500ms' INTERSECTION", "v4v3v2v1");
}
END_TEST

START_TEST(test_gc_age_moves_with_the_clock) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a MAX AGE '10s'");
  wcs_read_options o = ro();
  setc(e, t, "r", "a", "q", T0, "v");
  CHECK_DUMP(t, NULL, &o, "r: a.q@0=v;");
  gNow = T0 + 10000000; /* exactly 10 s old: still alive */
  CHECK_DUMP(t, NULL, &o, "r: a.q@0=v;");
  gNow = T0 + 10000001;
  CHECK_DUMP(t, NULL, &o, "");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* ================================================================== */
/* deletes                                                             */

static wcs_table *del_fixture(wcs_engine *e) {
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b");
  int i;
  for (i = 1; i <= 3; i++) {
    setc(e, t, "r1", "a", "x", i, "ax");
    setc(e, t, "r1", "a", "y", i, "ay");
    setc(e, t, "r1", "b", "x", i, "bx");
    setc(e, t, "r2", "a", "x", i, "ax");
  }
  return t;
}

static void run_del(wcs_engine *e, wcs_table *t,
                    int (*xDel)(wcs_txn *, wcs_table *)) {
  wcs_txn *x = NULL;
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  ck_assert_int_eq(xDel(x, t), WCS_OK);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
}

static int del_col_all(wcs_txn *x, wcs_table *t) {
  return wcs_txn_delete_cells(x, t, "r1", 2, "a", "x", 1, 0, 0);
}
static int del_col_range(wcs_txn *x, wcs_table *t) {
  return wcs_txn_delete_cells(x, t, "r1", 2, "a", "x", 1, 2, 3);
}
static int del_col_from(wcs_txn *x, wcs_table *t) {
  return wcs_txn_delete_cells(x, t, "r1", 2, "a", "x", 1, 2, 0);
}
static int del_col_until(wcs_txn *x, wcs_table *t) {
  return wcs_txn_delete_cells(x, t, "r1", 2, "a", "x", 1, 0, 3);
}
static int del_fam(wcs_txn *x, wcs_table *t) {
  return wcs_txn_delete_family(x, t, "r1", 2, "a");
}
static int del_row(wcs_txn *x, wcs_table *t) {
  return wcs_txn_delete_row(x, t, "r1", 2);
}
static int del_range(wcs_txn *x, wcs_table *t) {
  wcs_key_range r;
  memset(&r, 0, sizeof(r));
  r.pStart = "r1";
  r.nStart = 2;
  r.pEnd = "r2";
  r.nEnd = 2;
  r.bEndIncl = 1;
  return wcs_txn_delete_range(x, t, &r);
}
static int del_prefix(wcs_txn *x, wcs_table *t) {
  return wcs_txn_delete_prefix(x, t, "r", 1);
}

START_TEST(test_delete_from_column_all_versions) {
  wcs_engine *e = open_mem();
  wcs_table *t = del_fixture(e);
  wcs_read_options o = ro();
  o.nVersions = 1;
  run_del(e, t, del_col_all);
  CHECK_DUMP(t, NULL, &o, "r1: a.y@3=ay b.x@3=bx; r2: a.x@3=ax;");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_delete_from_column_time_ranges) {
  wcs_engine *e = open_mem();
  wcs_table *t = del_fixture(e);
  wcs_read_options o = ro();
  const char *az[] = {"a"};
  o.azFamily = az;
  o.nFamily = 1;
  o.aRange = NULL;
  run_del(e, t, del_col_range); /* [2,3): removes ts 2 */
  CHECK_DUMP(t, NULL, &o,
             "r1: a.x@3=ax a.x@1=ax a.y@3=ay a.y@2=ay a.y@1=ay; "
             "r2: a.x@3=ax a.x@2=ax a.x@1=ax;");
  run_del(e, t, del_col_from); /* [2, inf): removes 3 */
  CHECK_DUMP(t, NULL, &o,
             "r1: a.x@1=ax a.y@3=ay a.y@2=ay a.y@1=ay; "
             "r2: a.x@3=ax a.x@2=ax a.x@1=ax;");
  run_del(e, t, del_col_until); /* [0, 3): removes 1 */
  CHECK_DUMP(t, NULL, &o,
             "r1: a.y@3=ay a.y@2=ay a.y@1=ay; "
             "r2: a.x@3=ax a.x@2=ax a.x@1=ax;");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_delete_from_family_row_range_and_prefix) {
  wcs_engine *e = open_mem();
  wcs_table *t = del_fixture(e);
  wcs_read_options o = ro();
  o.nVersions = 1;
  run_del(e, t, del_fam);
  CHECK_DUMP(t, NULL, &o, "r1: b.x@3=bx; r2: a.x@3=ax;");
  run_del(e, t, del_row);
  CHECK_DUMP(t, NULL, &o, "r2: a.x@3=ax;");
  wcs_table_close(t);
  wcs_engine_close(e);

  e = open_mem();
  t = del_fixture(e);
  run_del(e, t, del_range);
  CHECK_DUMP(t, NULL, &o, "");
  setc(e, t, "r3", "a", "x", 1, "v");
  setc(e, t, "s", "a", "x", 1, "v");
  run_del(e, t, del_prefix);
  CHECK_DUMP(t, NULL, &o, "s: a.x@1=v;");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_write_after_delete_in_one_txn_survives) {
  wcs_engine *e = open_mem();
  wcs_table *t = del_fixture(e);
  wcs_read_options o = ro();
  wcs_txn *x = NULL;
  o.nVersions = 1;
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  ck_assert_int_eq(wcs_txn_delete_row(x, t, "r1", 2), WCS_OK);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r1", 2, "a", "x", 1, 2, "new", 3),
                   WCS_OK);
  CHECK_DUMP(t, x, &o, "r1: a.x@2=new; r2: a.x@3=ax;");
  CHECK_DUMP(t, NULL, &o, "r1: a.x@3=ax a.y@3=ay b.x@3=bx; r2: a.x@3=ax;");
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  CHECK_DUMP(t, NULL, &o, "r1: a.x@2=new; r2: a.x@3=ax;");
  /* and the other way round: a delete after a write removes it */
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r3", 2, "a", "x", 1, 2, "w", 1),
                   WCS_OK);
  ck_assert_int_eq(wcs_txn_delete_prefix(x, t, "r", 1), WCS_OK);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  CHECK_DUMP(t, NULL, &o, "");
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* ================================================================== */
/* aggregates                                                          */

static int64_t read_int(wcs_table *t, const char *zRow, const char *zFam) {
  wcs_read_options o = ro();
  wcs_key_range r;
  wcs_cursor *c = NULL;
  const char *az[1];
  int n;
  int64_t v;
  const wcs_cell *a;
  memset(&r, 0, sizeof(r));
  r.pStart = r.pEnd = zRow;
  r.nStart = r.nEnd = strlen(zRow);
  r.bEndIncl = 1;
  az[0] = zFam;
  o.aRange = &r;
  o.nRange = 1;
  o.azFamily = az;
  o.nFamily = 1;
  o.nVersions = 1;
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, &o), WCS_OK);
  ck_assert(!wcs_cursor_eof(c));
  a = wcs_cursor_cells(c, &n);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq((int)a[0].nVal, 8);
  v = 0;
  {
    const unsigned char *p = a[0].pVal;
    int i;
    for (i = 0; i < 8; i++)
      v = (int64_t)((uint64_t)v << 8 | p[i]);
  }
  wcs_cursor_close(c);
  return v;
}

START_TEST(test_aggregate_sum_min_max) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t",
                    "FAMILY s AGGREGATE SUM, FAMILY lo AGGREGATE MIN,"
                    " FAMILY hi AGGREGATE MAX, FAMILY plain");
  wcs_txn *x = NULL;
  static const int64_t aIn[] = {5, -3, 12, 7};
  int i;
  wcs_txn_begin(e, 0, &x);
  for (i = 0; i < 4; i++) {
    ck_assert_int_eq(wcs_txn_add_to_cell(x, t, "r", 1, "s", "c", 1, 0, aIn[i]),
                     WCS_OK);
    ck_assert_int_eq(wcs_txn_add_to_cell(x, t, "r", 1, "lo", "c", 1, 0, aIn[i]),
                     WCS_OK);
    ck_assert_int_eq(wcs_txn_add_to_cell(x, t, "r", 1, "hi", "c", 1, 0, aIn[i]),
                     WCS_OK);
    if (i == 1) ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  }
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  ck_assert(read_int(t, "r", "s") == 21);
  ck_assert(read_int(t, "r", "lo") == -3);
  ck_assert(read_int(t, "r", "hi") == 12);
  /* type mismatches */
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r", 1, "s", "c", 1, 0, "x", 1),
                   WCS_MISMATCH);
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "type mismatch"));
  ck_assert_int_eq(wcs_txn_add_to_cell(x, t, "r", 1, "plain", "c", 1, 0, 1),
                   WCS_MISMATCH);
  ck_assert_int_eq(
      wcs_txn_merge_to_cell(x, t, "r", 1, "s", "c", 1, 0, "abc", 3),
      WCS_MISMATCH);
  {
    /* MergeToCell of an 8-byte state; separate timestamps stay apart */
    unsigned char st[8] = {0, 0, 0, 0, 0, 0, 0, 100};
    ck_assert_int_eq(wcs_txn_merge_to_cell(x, t, "r", 1, "s", "c", 1, 0, st, 8),
                     WCS_OK);
    ck_assert_int_eq(wcs_txn_add_to_cell(x, t, "r", 1, "s", "c", 1, 5, 1),
                     WCS_OK);
    ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  }
  ck_assert(read_int(t, "r", "s") == 1); /* the newest cell is ts 5 */
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_aggregate_sum_visible_inside_txn_before_commit) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY s AGGREGATE SUM");
  wcs_txn *x = NULL, *y = NULL;
  wcs_read_options o = ro();
  wcs_txn_begin(e, 0, &x);
  wcs_txn_begin(e, 0, &y);
  CHECK_DUMP(t, y, &o, ""); /* y's snapshot: before x commits */
  ck_assert_int_eq(wcs_txn_add_to_cell(x, t, "r", 1, "s", "c", 1, 0, 2), 0);
  ck_assert_int_eq(wcs_txn_commit(x), 0);
  /* y started before x committed; its add still lands on top */
  ck_assert_int_eq(wcs_txn_add_to_cell(y, t, "r", 1, "s", "c", 1, 0, 3), 0);
  CHECK_DUMP(t, y, &o, "r: s.c@0=\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x03;");
  ck_assert_int_eq(wcs_txn_commit(y), 0);
  ck_assert(read_int(t, "r", "s") == 5);
  wcs_txn_free(x);
  wcs_txn_free(y);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_aggregate_hll_estimate_within_error) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY u AGGREGATE HLL");
  wcs_txn *x = NULL;
  wcs_cursor *c = NULL;
  uint64_t n = 0;
  int i, nCell;
  const wcs_cell *a;
  wcs_txn_begin(e, 0, &x);
  for (i = 0; i < 20000; i++) {
    char z[32];
    snprintf(z, sizeof(z), "user-%d", i % 10000); /* 10000 distinct */
    ck_assert_int_eq(
        wcs_txn_add_to_cell_bytes(x, t, "r", 1, "u", "v", 1, 0, z, strlen(z)),
        WCS_OK);
    if (i % 5000 == 4999) ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  }
  wcs_txn_free(x);
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, NULL), WCS_OK);
  a = wcs_cursor_cells(c, &nCell);
  ck_assert_int_eq(nCell, 1);
  ck_assert_int_eq(wcs_hll_estimate(a[0].pVal, a[0].nVal, &n), WCS_OK);
  /* 3 standard errors of 0.81% */
  ck_assert_msg(n > 9750 && n < 10250, "estimate %llu", (unsigned long long)n);
  ck_assert_int_eq(wcs_hll_estimate(a[0].pVal, a[0].nVal - 1, &n), WCS_CORRUPT);
  wcs_cursor_close(c);
  /* small counts are near exact */
  {
    wcs_txn_begin(e, 0, &x);
    for (i = 0; i < 100; i++) {
      char z[16];
      snprintf(z, sizeof(z), "%d", i);
      wcs_txn_add_to_cell_bytes(x, t, "s", 1, "u", "v", 1, 0, z, strlen(z));
    }
    wcs_txn_commit(x);
    wcs_txn_free(x);
    ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, NULL), WCS_OK);
    ck_assert_int_eq(wcs_cursor_next(c), WCS_OK);
    a = wcs_cursor_cells(c, &nCell);
    wcs_hll_estimate(a[0].pVal, a[0].nVal, &n);
    ck_assert_msg(n >= 99 && n <= 101, "estimate %llu", (unsigned long long)n);
    wcs_cursor_close(c);
  }
  ck_assert_int_eq(wcs_hll_estimate("", 0, &n), WCS_OK);
  ck_assert(n == 0);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* ================================================================== */
/* ReadModifyWrite and CheckAndMutate                                  */

START_TEST(test_increment_and_append) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_txn *x = NULL;
  wcs_read_options o = ro();
  int64_t v = 0;
  void *p = NULL;
  size_t n = 0;
  wcs_txn_begin(e, WCS_TXN_EXCLUSIVE, &x);
  ck_assert_int_eq(wcs_txn_increment(x, t, "r", 1, "a", "n", 1, 5, &v), 0);
  ck_assert(v == 5);
  ck_assert_int_eq(wcs_txn_increment(x, t, "r", 1, "a", "n", 1, -7, &v), 0);
  ck_assert(v == -2);
  ck_assert_int_eq(wcs_txn_append(x, t, "r", 1, "a", "s", 1, "ab", 2, &p, &n),
                   0);
  ck_assert_int_eq((int)n, 2);
  wcs_free(p);
  ck_assert_int_eq(wcs_txn_append(x, t, "r", 1, "a", "s", 1, "cd", 2, &p, &n),
                   0);
  ck_assert_int_eq((int)n, 4);
  ck_assert(memcmp(p, "abcd", 4) == 0);
  wcs_free(p);
  ck_assert_int_eq(wcs_txn_commit(x), 0);
  /* new cells at max(latest ts, now) = now: one version each */
  o.nVersions = 0;
  CHECK_DUMP(t, NULL, &o,
             "r: a.n@0=\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFE "
             "a.s@0=abcd;");
  /* a cell in the future keeps its timestamp */
  {
    wcs_txn *y = NULL;
    wcs_txn_begin(e, 0, &y);
    wcs_txn_set_cell(y, t, "f", 1, "a", "n", 1, T0 + 7, "\0\0\0\0\0\0\0", 7);
    wcs_txn_set_cell(y, t, "f", 1, "a", "z", 1, T0 + 7, "x", 1);
    ck_assert_int_eq(wcs_txn_commit(y), 0);
    wcs_txn_free(y);
  }
  ck_assert_int_eq(wcs_txn_increment(x, t, "f", 1, "a", "n", 1, 1, &v),
                   WCS_MISMATCH); /* 7 bytes, not 8 */
  ck_assert_int_eq(
      wcs_txn_append(x, t, "f", 1, "a", "z", 1, "y", 1, NULL, NULL), 0);
  ck_assert_int_eq(wcs_txn_commit(x), 0);
  {
    wcs_key_range r;
    memset(&r, 0, sizeof(r));
    r.pStart = "f";
    r.nStart = 1;
    r.pEnd = "f";
    r.nEnd = 1;
    r.bEndIncl = 1;
    o.aRange = &r;
    o.nRange = 1;
    CHECK_DUMP(t, NULL, &o,
               "f: a.n@7=\\x00\\x00\\x00\\x00\\x00\\x00\\x00 "
               "a.z@7=xy;");
  }
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_check_and_mutate_picks_branch) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b");
  wcs_read_options o = ro();
  wcs_predicate p;
  wcs_mutation mt, mf;
  int bMatched = -1;
  memset(&mt, 0, sizeof(mt));
  memset(&mf, 0, sizeof(mf));
  mt.eType = WCS_MUT_SET_CELL;
  mt.zFamily = "b";
  mt.pQual = "res";
  mt.nQual = 3;
  mt.iTs = 1;
  mt.pVal = "true";
  mt.nVal = 4;
  mf = mt;
  mf.pVal = "false";
  mf.nVal = 5;
  /* unset predicate: row exists? */
  ck_assert_int_eq(
      wcs_table_check_and_mutate(t, "r", 1, NULL, &mt, 1, &mf, 1, &bMatched),
      WCS_OK);
  ck_assert_int_eq(bMatched, 0);
  CHECK_DUMP(t, NULL, &o, "r: b.res@1=false;");
  ck_assert_int_eq(
      wcs_table_check_and_mutate(t, "r", 1, NULL, &mt, 1, &mf, 1, &bMatched),
      WCS_OK);
  ck_assert_int_eq(bMatched, 1);
  setc(e, t, "r", "a", "v", 1, "m");
  memset(&p, 0, sizeof(p));
  p.zFamily = "a";
  p.pQual = "v";
  p.nQual = 1;
  p.pVal = "m";
  p.nVal = 1;
  {
    static const struct {
      int op;
      int want;
    } k[] = {{WCS_PRED_EXISTS, 1}, {WCS_PRED_NOT_EXISTS, 0}, {WCS_PRED_EQ, 1},
             {WCS_PRED_NE, 0},     {WCS_PRED_LT, 0},         {WCS_PRED_LE, 1},
             {WCS_PRED_GT, 0},     {WCS_PRED_GE, 1}};
    int i;
    wcs_txn *x = NULL;
    wcs_txn_begin(e, 0, &x);
    for (i = 0; i < 8; i++) {
      int b = -1;
      p.eOp = k[i].op;
      ck_assert_int_eq(wcs_txn_check(x, t, "r", 1, &p, &b), WCS_OK);
      ck_assert_msg(b == k[i].want, "op %d gave %d", k[i].op, b);
    }
    p.pVal = "n"; /* "m" < "n" */
    p.eOp = WCS_PRED_LT;
    ck_assert_int_eq(wcs_txn_check(x, t, "r", 1, &p, &bMatched), 0);
    ck_assert_int_eq(bMatched, 1);
    p.pQual = "missing";
    p.nQual = 7;
    p.eOp = WCS_PRED_NE;
    ck_assert_int_eq(wcs_txn_check(x, t, "r", 1, &p, &bMatched), 0);
    ck_assert_int_eq(bMatched, 0);
    wcs_txn_free(x);
  }
  ck_assert_int_eq(
      wcs_table_check_and_mutate(t, "r", 1, NULL, NULL, 0, NULL, 0, NULL),
      WCS_MISUSE);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* A mutation list that cannot apply fails the whole CheckAndMutateRow,
** whichever branch the predicate picks, as Bigtable validates both; and
** nothing of the taken branch is committed. */
START_TEST(test_check_and_mutate_validates_both_branches) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY n AGGREGATE SUM");
  wcs_read_options o = ro();
  wcs_mutation mt, mf;
  int bMatched = -1;
  memset(&mt, 0, sizeof(mt));
  memset(&mf, 0, sizeof(mf));
  mt.eType = WCS_MUT_SET_CELL;
  mt.zFamily = "a";
  mt.pQual = "q";
  mt.nQual = 1;
  mt.iTs = 1;
  mt.pVal = "v";
  mt.nVal = 1;
  mf = mt;
  mf.zFamily = "nosuch";
  /* the row does not exist: the false branch is taken and fails */
  ck_assert_int_eq(
      wcs_table_check_and_mutate(t, "r", 1, NULL, &mt, 1, &mf, 1, &bMatched),
      WCS_ERROR);
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "nosuch"));
  /* the true branch would be taken: still refused, nothing written */
  ck_assert_int_eq(
      wcs_table_check_and_mutate(t, "r", 1, NULL, &mf, 1, &mt, 1, &bMatched),
      WCS_ERROR);
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "nosuch"));
  setc(e, t, "r", "a", "x", 1, "m");
  ck_assert_int_eq(
      wcs_table_check_and_mutate(t, "r", 1, NULL, &mt, 1, &mf, 1, &bMatched),
      WCS_ERROR);
  CHECK_DUMP(t, NULL, &o, "r: a.x@1=m;");
  /* a plain cell written into an aggregate family, in the untaken branch */
  mf = mt;
  mf.zFamily = "n";
  ck_assert_int_eq(
      wcs_table_check_and_mutate(t, "r", 1, NULL, &mt, 1, &mf, 1, &bMatched),
      WCS_MISMATCH);
  CHECK_DUMP(t, NULL, &o, "r: a.x@1=m;");
  /* an empty time range of a delete, in the untaken branch */
  mf = mt;
  mf.eType = WCS_MUT_DELETE_CELLS;
  mf.iTs = 5;
  mf.iEndTs = 5;
  ck_assert_int_eq(
      wcs_table_check_and_mutate(t, "r", 1, NULL, &mt, 1, &mf, 1, &bMatched),
      WCS_RANGE);
  CHECK_DUMP(t, NULL, &o, "r: a.x@1=m;");
  /* both valid: the taken one applies */
  mf = mt;
  mf.pVal = "w";
  ck_assert_int_eq(
      wcs_table_check_and_mutate(t, "r", 1, NULL, &mt, 1, &mf, 1, &bMatched),
      WCS_OK);
  ck_assert_int_eq(bMatched, 1);
  CHECK_DUMP(t, NULL, &o, "r: a.q@1=v a.x@1=m;");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* DeleteFromColumn with end <= start (end 0 is "no bound") names no cell:
** a caller's mistake, refused rather than done as nothing. */
START_TEST(test_delete_cells_empty_time_range) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_read_options o = ro();
  wcs_txn *x = NULL;
  setc(e, t, "r", "a", "q", 4, "v");
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  ck_assert_int_eq(wcs_txn_delete_cells(x, t, "r", 1, "a", "q", 1, 5, 3),
                   WCS_RANGE);
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "[5, 3)"));
  ck_assert_int_eq(wcs_txn_delete_cells(x, t, "r", 1, "a", "q", 1, 4, 4),
                   WCS_RANGE);
  ck_assert_int_eq(wcs_txn_delete_cells(x, t, "r", 1, "a", "q", 1, 4, 0),
                   WCS_OK);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  CHECK_DUMP(t, NULL, &o, "");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_mutate_row_applies_in_order) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY n AGGREGATE SUM");
  wcs_read_options o = ro();
  wcs_mutation m[4];
  memset(m, 0, sizeof(m));
  m[0].eType = WCS_MUT_SET_CELL;
  m[0].zFamily = "a";
  m[0].pQual = "q";
  m[0].nQual = 1;
  m[0].iTs = 1;
  m[0].pVal = "v";
  m[0].nVal = 1;
  m[1].eType = WCS_MUT_DELETE_ROW;
  m[2] = m[0];
  m[2].pVal = "w";
  m[3].eType = WCS_MUT_ADD_TO_CELL;
  m[3].zFamily = "n";
  m[3].pQual = "c";
  m[3].nQual = 1;
  m[3].iValue = 9;
  ck_assert_int_eq(wcs_table_mutate_row(t, "r", 1, m, 4), WCS_OK);
  CHECK_DUMP(t, NULL, &o,
             "r: a.q@1=w n.c@0=\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x09;");
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* ================================================================== */
/* transactions                                                        */

START_TEST(test_txn_reads_its_own_writes_over_snapshot) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_table *u = mk(e, "u", "FAMILY a");
  wcs_read_options o = ro();
  wcs_txn *x = NULL;
  setc(e, t, "r1", "a", "q", 1, "old");
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  CHECK_DUMP(t, x, &o, "r1: a.q@1=old;"); /* takes the snapshot */
  setc(e, t, "r9", "a", "q", 1, "other"); /* committed after: not seen */
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r2", 2, "a", "q", 1, 1, "new", 3),
                   0);
  ck_assert_int_eq(wcs_txn_set_cell(x, u, "z", 1, "a", "q", 1, 1, "u", 1), 0);
  ck_assert_int_eq(wcs_txn_delete_row(x, t, "r1", 2), 0);
  CHECK_DUMP(t, x, &o, "r2: a.q@1=new;");
  CHECK_DUMP(u, x, &o, "z: a.q@1=u;");
  CHECK_DUMP(u, NULL, &o, "");
  CHECK_DUMP(t, NULL, &o, "r1: a.q@1=old; r9: a.q@1=other;");
  ck_assert_int_gt(wcs_txn_count(x), 0);
  ck_assert_int_eq(wcs_txn_commit(x), 0);
  ck_assert_int_eq(wcs_txn_count(x), 0);
  CHECK_DUMP(t, NULL, &o, "r2: a.q@1=new; r9: a.q@1=other;");
  CHECK_DUMP(u, NULL, &o, "z: a.q@1=u;");
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_table_close(u);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_txn_rollback_discards_everything) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_read_options o = ro();
  wcs_txn *x = NULL;
  setc(e, t, "r1", "a", "q", 1, "old");
  wcs_txn_begin(e, 0, &x);
  wcs_txn_delete_prefix(x, t, "", 0);
  wcs_txn_set_cell(x, t, "r2", 2, "a", "q", 1, 1, "new", 3);
  CHECK_DUMP(t, x, &o, "r2: a.q@1=new;");
  ck_assert_int_eq(wcs_txn_rollback(x), 0);
  CHECK_DUMP(t, x, &o, "r1: a.q@1=old;");
  ck_assert_int_eq(wcs_txn_commit(x), 0);
  CHECK_DUMP(t, NULL, &o, "r1: a.q@1=old;");
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* A rollback_to below every recorded savepoint (SQLite's savepoint opened
** before the table joined the transaction) discards everything, also with
** savepoints recorded; one above every recorded savepoint changes nothing. */
START_TEST(test_txn_rollback_to_an_unrecorded_savepoint) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_read_options o = ro();
  wcs_txn *x = NULL;
  wcs_txn_begin(e, 0, &x);
  wcs_txn_set_cell(x, t, "a", 1, "a", "q", 1, 1, "0", 1);
  ck_assert_int_eq(wcs_txn_savepoint(x, 2), 0);
  wcs_txn_set_cell(x, t, "b", 1, "a", "q", 1, 1, "1", 1);
  ck_assert_int_eq(wcs_txn_rollback_to(x, 5), 0);
  CHECK_DUMP(t, x, &o, "a: a.q@1=0; b: a.q@1=1;");
  ck_assert_int_eq(wcs_txn_rollback_to(x, 1), 0);
  CHECK_DUMP(t, x, &o, "");
  ck_assert_int_eq(wcs_txn_count(x), 0);
  /* and savepoint 2 went with it: a rollback to it is one to before it */
  wcs_txn_set_cell(x, t, "c", 1, "a", "q", 1, 1, "2", 1);
  ck_assert_int_eq(wcs_txn_rollback_to(x, 2), 0);
  CHECK_DUMP(t, x, &o, "");
  /* with none recorded, the same */
  wcs_txn_set_cell(x, t, "d", 1, "a", "q", 1, 1, "3", 1);
  ck_assert_int_eq(wcs_txn_rollback_to(x, 7), 0);
  ck_assert_int_eq(wcs_txn_count(x), 0);
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_txn_savepoints_roll_back_and_release) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_read_options o = ro();
  wcs_txn *x = NULL;
  wcs_txn_begin(e, 0, &x);
  wcs_txn_set_cell(x, t, "a", 1, "a", "q", 1, 1, "0", 1);
  ck_assert_int_eq(wcs_txn_savepoint(x, 0), 0);
  wcs_txn_set_cell(x, t, "b", 1, "a", "q", 1, 1, "1", 1);
  ck_assert_int_eq(wcs_txn_savepoint(x, 1), 0);
  wcs_txn_delete_row(x, t, "a", 1);
  wcs_txn_set_cell(x, t, "c", 1, "a", "q", 1, 1, "2", 1);
  CHECK_DUMP(t, x, &o, "b: a.q@1=1; c: a.q@1=2;");
  ck_assert_int_eq(wcs_txn_rollback_to(x, 1), 0);
  CHECK_DUMP(t, x, &o, "a: a.q@1=0; b: a.q@1=1;");
  /* savepoint 1 still exists after rollback_to(1) */
  wcs_txn_set_cell(x, t, "d", 1, "a", "q", 1, 1, "3", 1);
  ck_assert_int_eq(wcs_txn_rollback_to(x, 1), 0);
  CHECK_DUMP(t, x, &o, "a: a.q@1=0; b: a.q@1=1;");
  ck_assert_int_eq(wcs_txn_release(x, 1), 0);
  wcs_txn_set_cell(x, t, "e", 1, "a", "q", 1, 1, "4", 1);
  ck_assert_int_eq(wcs_txn_rollback_to(x, 0), 0);
  CHECK_DUMP(t, x, &o, "a: a.q@1=0;");
  wcs_txn_set_cell(x, t, "f", 1, "a", "q", 1, 1, "5", 1);
  ck_assert_int_eq(wcs_txn_release(x, 0), 0);
  ck_assert_int_eq(wcs_txn_commit(x), 0);
  CHECK_DUMP(t, NULL, &o, "a: a.q@1=0; f: a.q@1=5;");
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* The value of row i, family iFam of the load below (100 bytes; z has
** room for 128). */
static void load_val(char *z, int i, int iFam) {
  snprintf(z, 128, "%c%07d %0*d", 'a' + iFam, i, 91, i * 7 + iFam);
}

/* A write-only load of two families in key order, row by row, with a
** statement savepoint per row as SQL takes them: its log (in the batch
** format) goes to the store as it stands and, being larger than the
** bulk-ingest size, as one ingest of two interleaved runs. A rollback to
** the start first empties the log; the data reads back exactly. */
START_TEST(test_ordered_load_of_two_families_is_adopted_and_ingested) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b");
  wcs_txn *x = NULL;
  wcs_cursor *c = NULL;
  int nRow = 70000, i, f, n = 0;
  char r[16], v[128];
  uint64_t nIngest = tu_db_stat(wcs_engine_db(e), "ingests");
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  ck_assert_int_eq(wcs_txn_savepoint(x, 0), WCS_OK);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "zz", 2, "a", "q", 1, 1, "gone", 4),
                   WCS_OK);
  ck_assert_int_eq(wcs_txn_rollback_to(x, 0), WCS_OK);
  for (i = 0; i < nRow; i++) {
    snprintf(r, sizeof r, "r%07d", i);
    ck_assert_int_eq(wcs_txn_savepoint(x, 1), WCS_OK);
    for (f = 0; f < 2; f++) {
      load_val(v, i, f);
      ck_assert_int_eq(wcs_txn_set_cell(x, t, r, strlen(r), f ? "b" : "a", "q",
                                        1, 1, v, strlen(v)),
                       WCS_OK);
    }
    ck_assert_int_eq(wcs_txn_release(x, 1), WCS_OK);
  }
  ck_assert_uint_ge(wcs_txn_bytes(x), 16u << 20);
  ck_assert_msg(wcs_txn_commit(x) == WCS_OK, "commit: %s",
                wcs_engine_errmsg(e));
  wcs_txn_free(x);
  ck_assert_uint_eq(tu_db_stat(wcs_engine_db(e), "ingests"), nIngest + 1);
  ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, NULL), WCS_OK);
  while (!wcs_cursor_eof(c)) {
    size_t nr;
    const char *p = wcs_cursor_row(c, &nr);
    int nCell;
    const wcs_cell *a = wcs_cursor_cells(c, &nCell);
    snprintf(r, sizeof r, "r%07d", n);
    ck_assert_msg(nr == strlen(r) && memcmp(p, r, nr) == 0, "row %d", n);
    ck_assert_int_eq(nCell, 2);
    for (f = 0; f < 2; f++) {
      load_val(v, n, f);
      ck_assert_int_eq(a[f].iFamily, f);
      ck_assert_msg(a[f].nVal == strlen(v) &&
                        memcmp(a[f].pVal, v, a[f].nVal) == 0,
                    "row %d family %d", n, f);
    }
    n++;
    ck_assert_int_eq(wcs_cursor_next(c), WCS_OK);
  }
  ck_assert_int_eq(n, nRow);
  wcs_cursor_close(c);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_cursor_stays_valid_while_its_txn_writes) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_txn *x = NULL;
  wcs_cursor *c = NULL;
  int n = 0, i;
  for (i = 0; i < 20; i++) {
    char r[16];
    snprintf(r, sizeof(r), "r%02d", i);
    setc(e, t, r, "a", "q", 1, "v");
  }
  wcs_txn_begin(e, 0, &x);
  ck_assert_int_eq(wcs_cursor_open(&c, t, x, NULL), WCS_OK);
  while (!wcs_cursor_eof(c)) {
    size_t nr;
    const char *p = wcs_cursor_row(c, &nr);
    char r[16];
    memcpy(r, p, nr);
    /* UPDATE-like: rewrite the row, delete the next, add after it */
    ck_assert_int_eq(wcs_txn_set_cell(x, t, r, nr, "a", "q", 1, 1, "w", 1), 0);
    ck_assert_int_eq(wcs_txn_savepoint(x, 0), 0);
    ck_assert_int_eq(wcs_txn_set_cell(x, t, "zz", 2, "a", "q", 1, 1, "w", 1),
                     0);
    ck_assert_int_eq(wcs_txn_rollback_to(x, 0), 0); /* rebuilds the overlay */
    n++;
    ck_assert_int_eq(wcs_cursor_next(c), WCS_OK);
  }
  ck_assert_int_eq(n, 20);
  wcs_cursor_close(c);
  ck_assert_int_eq(wcs_txn_commit(x), 0);
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* A cursor that stays open while its transaction commits goes on reading
** what the transaction saw, its own writes included (a SQL statement
** still stepping when COMMIT runs); after a rollback it no longer shows
** the writes rolled back. Writes of the next transaction on the same
** handle are not part of its view. */
START_TEST(test_cursor_open_across_commit_keeps_the_committed_writes) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b AGGREGATE SUM");
  wcs_txn *x = NULL;
  wcs_cursor *c = NULL, *c2 = NULL;
  setc(e, t, "a", "a", "q", 1, "v");
  wcs_txn_begin(e, 0, &x);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "b", 1, "a", "q", 1, 1, "w", 1), 0);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "c", 1, "a", "q", 1, 1, "w", 1), 0);
  ck_assert_int_eq(wcs_txn_add_to_cell(x, t, "c", 1, "b", "n", 1, 1, 5), 0);
  ck_assert_int_eq(wcs_cursor_open(&c, t, x, NULL), WCS_OK);
  ck_assert(!wcs_cursor_eof(c)); /* at a */
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  /* the next transaction on the same handle writes and reads */
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "d", 1, "a", "q", 1, 1, "w", 1), 0);
  ck_assert_int_eq(wcs_cursor_open(&c2, t, x, NULL), WCS_OK);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  ck_assert_int_eq(wcs_cursor_next(c), WCS_OK);
  ck_assert(!wcs_cursor_eof(c));
  {
    size_t n;
    const char *p = wcs_cursor_row(c, &n);
    int nCell;
    ck_assert(n == 1 && p[0] == 'b');
    ck_assert_int_eq(wcs_cursor_next(c), WCS_OK);
    ck_assert(!wcs_cursor_eof(c));
    p = wcs_cursor_row(c, &n);
    ck_assert(n == 1 && p[0] == 'c');
    wcs_cursor_cells(c, &nCell);
    ck_assert_int_eq(nCell, 2);
  }
  ck_assert_int_eq(wcs_cursor_next(c), WCS_OK);
  ck_assert(wcs_cursor_eof(c));
  /* the second cursor, opened over d, still has it after its commit */
  ck_assert_int_eq(wcs_cursor_seek(c2, "d", 1), WCS_OK);
  ck_assert(!wcs_cursor_eof(c2));
  wcs_cursor_close(c);
  wcs_cursor_close(c2);
  /* a rollback takes the writes away from an open cursor */
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "e", 1, "a", "q", 1, 1, "w", 1), 0);
  ck_assert_int_eq(wcs_cursor_open(&c, t, x, NULL), WCS_OK);
  ck_assert_int_eq(wcs_txn_rollback(x), WCS_OK);
  ck_assert_int_eq(wcs_cursor_seek(c, "e", 1), WCS_OK);
  ck_assert(wcs_cursor_eof(c));
  wcs_cursor_close(c);
  CHECK_DUMP(t, NULL, NULL,
             "a: a.q@1=v; b: a.q@1=w; c: a.q@1=w b.n@1=\\x00\\x00\\x00\\x00"
             "\\x00\\x00\\x00\\x05; d: a.q@1=w;");
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_commit_fails_if_table_dropped_meanwhile) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_txn *x = NULL;
  wcs_txn_begin(e, 0, &x);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r", 1, "a", "q", 1, 1, "v", 1), 0);
  ck_assert_int_eq(wcs_table_drop(e, "t"), WCS_OK);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_SCHEMA);
  wcs_txn_free(x);
  {
    /* reads through the old handle fail too, also once a table of the
    ** same name exists again */
    wcs_cursor *c = NULL;
    wcs_table *t2 = mk(e, "t", "FAMILY b");
    wcs_heatmap *m = NULL;
    uint64_t nBytes = 1, nKeys = 1;
    ck_assert_int_eq(wcs_cursor_open(&c, t, NULL, NULL), WCS_SCHEMA);
    ck_assert_ptr_null(c);
    /* so do its statistics: its family ids now hold another table's */
    ck_assert_int_eq(wcs_table_approximate(t, &nBytes, &nKeys), WCS_SCHEMA);
    ck_assert(nBytes == 0 && nKeys == 0);
    ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "reopen it"));
    ck_assert_int_eq(wcs_table_heatmap(t, &m), WCS_SCHEMA);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(wcs_cursor_open(&c, t2, NULL, NULL), WCS_OK);
    wcs_cursor_close(c);
    {
      /* negative counts in the read options are refused, not read as 0 */
      wcs_read_options o;
      wcs_read_options_init(&o);
      o.nVersions = -1;
      ck_assert_int_eq(wcs_cursor_open(&c, t2, NULL, &o), WCS_RANGE);
      ck_assert_ptr_null(c);
      ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "not be negative"));
      wcs_read_options_init(&o);
      o.nRange = -2;
      ck_assert_int_eq(wcs_cursor_open(&c, t2, NULL, &o), WCS_RANGE);
    }
    ck_assert_int_eq(wcs_table_approximate(t2, &nBytes, &nKeys), WCS_OK);
    ck_assert_int_eq(wcs_table_heatmap(t2, &m), WCS_OK);
    wcs_heatmap_free(m);
    wcs_table_close(t2);
  }
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* ================================================================== */
/* limits                                                              */

/* Arguments an embedder may get wrong: each failure has a message of its
** own (not the one a previous call left behind), and a NULL key range
** deletes every row as a NULL prefix does. */
START_TEST(test_bad_arguments_have_their_own_message) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_txn *x = NULL;
  uint64_t n = 99;
  int rc;
  setc(e, t, "r", "a", "q", 1, "v");
  setc(e, t, "s", "a", "q", 1, "v");
  wcs_txn_begin(e, 0, &x);
  /* a family name that is NULL */
  rc = wcs_txn_set_cell(x, t, "r", 1, NULL, "q", 1, 1, "v", 1);
  ck_assert_int_eq(rc, WCS_ERROR);
  ck_assert_msg(strstr(wcs_engine_errmsg(e), "no column family name") &&
                    !strstr(wcs_engine_errmsg(e), "(null)"),
                "%s", wcs_engine_errmsg(e));
  /* a malformed HLL state, after an unrelated failure */
  ck_assert_int_eq(wcs_table_drop(e, "nope"), WCS_ERROR);
  ck_assert_int_eq(wcs_hll_estimate("H\001\016\001", 4, &n), WCS_CORRUPT);
  ck_assert_msg(strstr(wcs_engine_errmsg(e), "HLL state") != NULL, "%s",
                wcs_engine_errmsg(e));
  ck_assert(n == 0);
  /* a prefix depth below 1 on a table without key schema */
  ck_assert_int_eq(wcs_table_estimate_prefixes(t, 0, &n), WCS_RANGE);
  ck_assert_msg(strstr(wcs_engine_errmsg(e), "1..0") == NULL &&
                    strstr(wcs_engine_errmsg(e), "leading bytes") != NULL,
                "%s", wcs_engine_errmsg(e));
  /* a NULL key range: every row */
  ck_assert_int_eq(wcs_txn_delete_range(x, t, NULL), WCS_OK);
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  CHECK_DUMP(t, NULL, NULL, "");
  wcs_txn_free(x);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_limits_name_the_limit_and_key) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_txn *x = NULL;
  char *big = calloc(1, 16385);
  memset(big, 'k', 16384);
  wcs_txn_begin(e, 0, &x);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, big, 4096, "a", "q", 1, 1, "v", 1),
                   WCS_OK);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, big, 4097, "a", "q", 1, 1, "v", 1),
                   WCS_TOOBIG);
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "4 KiB"));
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "kkkk"));
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "", 0, "a", "q", 1, 1, "v", 1),
                   WCS_ERROR);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r", 1, "a", big, 16384, 1, "v", 1),
                   WCS_OK);
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r", 1, "a", big, 16385, 1, "v", 1),
                   WCS_TOOBIG);
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "16 KiB"));
  /* the value limit is checked before the value is read */
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r", 1, "a", "q", 1, 1, "v",
                                    (size_t)WCS_MAX_VALUE + 1),
                   WCS_TOOBIG);
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "100 MiB"));
  /* naming the cell: of several columns a statement writes, which one */
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "a:q in row 'r'"));
  ck_assert_int_eq(wcs_txn_set_cell(x, t, "r", 1, "nope", "q", 1, 1, "v", 1),
                   WCS_ERROR);
  ck_assert_ptr_nonnull(strstr(wcs_engine_errmsg(e), "nope"));
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
  ck_assert_int_ne(wcs_table_create(e, "u", "FAMILY bad$name", NULL), WCS_OK);
  free(big);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* ================================================================== */
/* statistics and layout                                               */

START_TEST(test_estimates_rows_and_prefixes) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t",
                    "KEY (dev STRING, id STRING) DELIMITED BY '#', "
                    "FAMILY a, FAMILY b");
  wcs_txn *x = NULL;
  uint64_t n = 0;
  wcs_key_range r;
  int i, j;
  wcs_txn_begin(e, 0, &x);
  for (i = 0; i < 10; i++) {
    for (j = 0; j < 30; j++) {
      char z[32];
      snprintf(z, sizeof(z), "d%02d#%03d", i, j);
      wcs_txn_set_cell(x, t, z, strlen(z), "a", "q", 1, 1, "v", 1);
      wcs_txn_set_cell(x, t, z, strlen(z), "a", "p", 1, 1, "v", 1);
      if (j % 2) wcs_txn_set_cell(x, t, z, strlen(z), "b", "q", 1, 1, "v", 1);
    }
  }
  ck_assert_int_eq(wcs_txn_commit(x), 0);
  wcs_txn_free(x);
  ck_assert_int_eq(wcs_table_estimate_rows(t, NULL, 0, &n), WCS_OK);
  ck_assert_msg(n >= 270 && n <= 330, "rows %llu", (unsigned long long)n);
  memset(&r, 0, sizeof(r));
  r.pStart = "d03";
  r.nStart = 3;
  r.pEnd = "d05";
  r.nEnd = 3;
  ck_assert_int_eq(wcs_table_estimate_rows(t, &r, 1, &n), WCS_OK);
  ck_assert_msg(n >= 50 && n <= 70, "rows %llu", (unsigned long long)n);
  ck_assert_int_eq(wcs_table_estimate_prefixes(t, 1, &n), WCS_OK);
  ck_assert_msg(n == 10, "prefixes %llu", (unsigned long long)n);
  ck_assert_int_eq(wcs_table_estimate_prefixes(t, 3, &n), WCS_RANGE);
  /* a small table is counted exactly: old versions and deleted rows in
  ** the files do not inflate the estimate */
  for (i = 0; i < 4; i++) {
    wcs_txn_begin(e, 0, &x);
    for (j = 0; j < 30; j++) {
      char z[32];
      snprintf(z, sizeof(z), "d%02d#%03d", 0, j);
      wcs_txn_set_cell(x, t, z, strlen(z), "a", "q", 1, 100 + i, "w", 1);
      snprintf(z, sizeof(z), "d%02d#%03d", 9, j);
      wcs_txn_delete_row(x, t, z, strlen(z));
    }
    ck_assert_int_eq(wcs_txn_commit(x), 0);
    wcs_txn_free(x);
  }
  ck_assert_int_eq(wcs_db_flush(wcs_engine_db(e)), WCS_OK);
  ck_assert_int_eq(wcs_table_estimate_rows(t, NULL, 0, &n), WCS_OK);
  ck_assert_msg(n == 270, "rows %llu", (unsigned long long)n);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* A table of a few huge rows is estimated from the files' metadata and a
** sample of bounded bytes: the planner asks on every prepare, and a count
** or sample that read such a table whole made each prepare cost a scan. */
START_TEST(test_estimate_of_few_huge_rows_reads_little) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_db *db = wcs_engine_db(e);
  wcs_txn *x = NULL;
  uint64_t n = 0, n0;
  const size_t nVal = 1 << 20;
  char *zVal = malloc(nVal);
  int i;
  ck_assert_ptr_nonnull(zVal);
  for (i = 0; i < 40; i++) {
    char z[8];
    tu_rand_bytes(zVal, nVal); /* bytes zstd cannot shrink */
    snprintf(z, sizeof(z), "r%02d", i);
    ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
    ck_assert_int_eq(wcs_txn_set_cell(x, t, z, 3, "a", "q", 1, 1, zVal, nVal),
                     WCS_OK);
    ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
    wcs_txn_free(x);
  }
  free(zVal);
  ck_assert_int_eq(wcs_db_compact_range(db, NULL, 0, NULL, 0), WCS_OK);
  n0 = tu_db_stat(db, "cache_hits") + tu_db_stat(db, "cache_misses");
  ck_assert_int_eq(wcs_table_estimate_rows(t, NULL, 0, &n), WCS_OK);
  ck_assert_msg(n >= 20 && n <= 80, "rows %llu", (unsigned long long)n);
  /* 40 values of 1 MiB: a count and a sample read them all twice (80
  ** blocks or more); the sample's 4 MiB is a handful */
  ck_assert_uint_le(
      tu_db_stat(db, "cache_hits") + tu_db_stat(db, "cache_misses") - n0, 8);
  /* distinct prefixes (here of 3 bytes, each key's own): a probe a row
  ** would read 40 blocks; 16 MiB of probes is 16, scaled to the table */
  n0 = tu_db_stat(db, "cache_hits") + tu_db_stat(db, "cache_misses");
  ck_assert_int_eq(wcs_table_estimate_prefixes(t, 3, &n), WCS_OK);
  ck_assert_msg(n >= 20 && n <= 80, "prefixes %llu", (unsigned long long)n);
  ck_assert_uint_le(
      tu_db_stat(db, "cache_hits") + tu_db_stat(db, "cache_misses") - n0, 24);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_heatmap_counts_reads_and_writes) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_heatmap *m = NULL;
  wcs_read_options o = ro();
  uint64_t nR = 0, nW = 0;
  int i, b;
  char *z;
  for (i = 0; i < 10; i++) {
    char r[16];
    snprintf(r, sizeof(r), "r%d", i);
    setc(e, t, r, "a", "q", 1, "v");
  }
  z = dump(t, NULL, &o);
  free(z);
  ck_assert_int_eq(wcs_table_heatmap(t, &m), WCS_OK);
  ck_assert_int_ge(m->nSlot, 1);
  for (i = 0; i < m->nSlot; i++) {
    for (b = 0; b < m->nBucket; b++) {
      nR += m->aSlot[i].aRead[b];
      nW += m->aSlot[i].aWrite[b];
    }
  }
  ck_assert(nW == 10);
  ck_assert(nR == 10);
  wcs_heatmap_free(m);
  ck_assert_int_eq(wcs_engine_heat_save(e), WCS_OK);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

/* Write rows k00000..k(n-1) with one cell each in family zFam, in one
** transaction per 500 rows; values of nVal random bytes (at most 128), or
** "value-of-some-bytes" when nVal is 0. */
static void rows_k(wcs_engine *e, wcs_table *t, const char *zFam, int n,
                   int nVal) {
  wcs_txn *x = NULL;
  int i;
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  for (i = 0; i < n; i++) {
    char r[16];
    unsigned char v[128];
    snprintf(r, sizeof(r), "k%05d", i);
    if (nVal)
      tu_rand_bytes(v, (size_t)nVal);
    else
      memcpy(v, "value-of-some-bytes", 19);
    ck_assert_int_eq(wcs_txn_set_cell(x, t, r, strlen(r), zFam, "q", 1, 1, v,
                                      nVal ? (size_t)nVal : 19),
                     WCS_OK);
    if (i % 500 == 499) ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  }
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);
}

/* Cells written into table t's heat map, over every slot. */
static uint64_t heat_writes(wcs_table *t) {
  wcs_heatmap *m = NULL;
  uint64_t nW = 0;
  int i, b;
  ck_assert_int_eq(wcs_table_heatmap(t, &m), WCS_OK);
  for (i = 0; i < m->nSlot; i++) {
    for (b = 0; b < m->nBucket; b++)
      nW += m->aSlot[i].aWrite[b];
  }
  wcs_heatmap_free(m);
  return nW;
}

/* SetCell of row zRow (family zFam, qualifier "q") in transaction x. */
static void txset(wcs_txn *x, wcs_table *t, const char *zRow,
                  const char *zFam) {
  int rc = wcs_txn_set_cell(x, t, zRow, strlen(zRow), zFam, "q", 1, 1, "v", 1);
  ck_assert_msg(rc == WCS_OK, "set_cell: %s", wcs_engine_errmsg(NULL));
}

START_TEST(test_heatmap_write_totals_exact_at_txn_boundaries) {
  /* Writes reach the heat map in batches of rows; whatever is pending is
  ** counted when the transaction ends, committed or rolled back (a
  ** rolled-back write was still a write), and a batch never mixes two
  ** tables, even for the same row key. */
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b");
  wcs_table *u = mk(e, "u", "FAMILY a");
  wcs_txn *x = NULL;
  char r[16];
  int i;
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  for (i = 0; i < 300; i++) {
    snprintf(r, sizeof(r), "r%04d", i);
    txset(x, t, r, "a");
    txset(x, t, r, "b");
  }
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  ck_assert(heat_writes(t) == 600);
  /* rollback */
  for (i = 0; i < 100; i++) {
    snprintf(r, sizeof(r), "s%04d", i);
    txset(x, t, r, "a");
  }
  ck_assert_int_eq(wcs_txn_rollback(x), WCS_OK);
  ck_assert(heat_writes(t) == 700);
  /* rollback to a savepoint, then more rows, then commit */
  ck_assert_int_eq(wcs_txn_savepoint(x, 1), WCS_OK);
  for (i = 0; i < 50; i++) {
    snprintf(r, sizeof(r), "u%04d", i);
    txset(x, t, r, "a");
  }
  ck_assert_int_eq(wcs_txn_rollback_to(x, 1), WCS_OK);
  for (i = 0; i < 20; i++) {
    snprintf(r, sizeof(r), "v%04d", i);
    txset(x, t, r, "b");
  }
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  ck_assert(heat_writes(t) == 770);
  ck_assert(heat_writes(u) == 0);
  /* two tables in one transaction: the same row keys alternately, then
  ** rows of u alone */
  for (i = 0; i < 200; i++) {
    snprintf(r, sizeof(r), "w%04d", i);
    txset(x, t, r, "a");
    txset(x, u, r, "a");
    txset(x, u, r, "a");
  }
  for (i = 0; i < 90; i++) {
    snprintf(r, sizeof(r), "x%04d", i);
    txset(x, u, r, "a");
  }
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  ck_assert(heat_writes(t) == 970);
  ck_assert(heat_writes(u) == 490);
  /* a transaction freed without commit or rollback */
  for (i = 0; i < 7; i++) {
    snprintf(r, sizeof(r), "y%04d", i);
    txset(x, u, r, "a");
  }
  wcs_txn_free(x);
  ck_assert(heat_writes(u) == 497);
  wcs_table_close(t);
  wcs_table_close(u);
  wcs_engine_close(e);
}
END_TEST

/* The bucket of slot h of heat map m that six-byte row key r falls in:
** the first whose upper bound is above r (the last has none). */
static int heat_bucket(const wcs_heatmap *m, const wcs_heat_slot *h,
                       const char *r) {
  int b;
  for (b = 0; b < m->nBucket - 1; b++) {
    size_t nb = h->anBound[b];
    int c = memcmp(h->apBound[b], r, nb < 6 ? nb : 6);
    if (c > 0 || (c == 0 && nb > 6)) break;
  }
  return b;
}

START_TEST(test_heatmap_write_batches_keep_each_row_in_its_bucket) {
  /* Rows written in random order, one batch of heat counts per run of
  ** rows in one bucket: every write is counted in the bucket of its own
  ** row, as if each were counted alone. */
  enum { N = 4000 };
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b");
  wcs_txn *x = NULL;
  wcs_heatmap *m = NULL;
  const wcs_heat_slot *h;
  uint64_t aWant[64] = {0};
  static int aOrder[N];
  char r[16];
  int i, b;
  /* the first slot: rows in order (no bounds yet); its keys give the
  ** next slot's bounds */
  rows_k(e, t, "a", N, 0);
  gNow += 60000000;
  tu_seed(0);
  for (i = 0; i < N; i++)
    aOrder[i] = i;
  for (i = N - 1; i > 0; i--) {
    int j = (int)tu_rand_range((uint64_t)i + 1), tmp = aOrder[i];
    aOrder[i] = aOrder[j];
    aOrder[j] = tmp;
  }
  ck_assert_int_eq(wcs_txn_begin(e, 0, &x), WCS_OK);
  for (i = 0; i < N; i++) {
    snprintf(r, sizeof(r), "k%05d", aOrder[i]);
    txset(x, t, r, "a");
    if (i % 3 == 0) txset(x, t, r, "b");
  }
  /* and runs of neighbouring rows, which share batches */
  for (i = 0; i < N; i += 2) {
    snprintf(r, sizeof(r), "k%05d", i);
    txset(x, t, r, "b");
  }
  ck_assert_int_eq(wcs_txn_commit(x), WCS_OK);
  wcs_txn_free(x);

  ck_assert_int_eq(wcs_table_heatmap(t, &m), WCS_OK);
  ck_assert_int_eq(m->nSlot, 2);
  ck_assert_int_le(m->nBucket, 64);
  h = &m->aSlot[1];
  for (b = 1; b < m->nBucket - 1; b++) {
    /* 31 real bounds: each above the one before */
    size_t na = h->anBound[b - 1], nb = h->anBound[b];
    int c = memcmp(h->apBound[b - 1], h->apBound[b], na < nb ? na : nb);
    ck_assert(c < 0 || (c == 0 && na < nb));
  }
  for (i = 0; i < N; i++) {
    int nCell = 1 + (i % 3 == 0);
    snprintf(r, sizeof(r), "k%05d", aOrder[i]);
    aWant[heat_bucket(m, h, r)] += (uint64_t)nCell;
  }
  for (i = 0; i < N; i += 2) {
    snprintf(r, sizeof(r), "k%05d", i);
    aWant[heat_bucket(m, h, r)]++;
  }
  for (b = 0; b < m->nBucket; b++) {
    ck_assert_msg(h->aWrite[b] == aWant[b], "bucket %d: %llu writes, want %llu",
                  b, (unsigned long long)h->aWrite[b],
                  (unsigned long long)aWant[b]);
  }
  wcs_heatmap_free(m);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_heatmap_slot_with_few_bounds_keeps_the_last_bucket_open) {
  /* A minute that saw writes to three rows gives the next slot two
  ** bounds (k00002, k00003) and three buckets. The copy still has 32
  ** buckets, the last holding every key from its bound on: a write above
  ** k00003 is in the last bucket, one below k00002 in the first, as the
  ** bounds say, and the buckets between hold nothing. */
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_heatmap *m = NULL;
  const wcs_heat_slot *h;
  int b;
  uint64_t n = 0;
  setc(e, t, "k00001", "a", "q", 1, "v");
  setc(e, t, "k00002", "a", "q", 1, "v");
  setc(e, t, "k00003", "a", "q", 1, "v");
  gNow += 60000000;
  setc(e, t, "k00009", "a", "q", 1, "v");
  setc(e, t, "k00009", "a", "q", 2, "v");
  setc(e, t, "k00000", "a", "q", 1, "v");
  ck_assert_int_eq(wcs_table_heatmap(t, &m), WCS_OK);
  ck_assert_int_eq(m->nSlot, 2);
  h = &m->aSlot[1];
  ck_assert_int_eq(heat_bucket(m, h, "k00009"), m->nBucket - 1);
  ck_assert_int_eq(heat_bucket(m, h, "k00000"), 0);
  ck_assert_int_eq(heat_bucket(m, h, "k00002"), m->nBucket - 2);
  ck_assert(h->aWrite[m->nBucket - 1] == 2);
  ck_assert(h->aWrite[0] == 1);
  for (b = 0; b < m->nBucket; b++)
    n += h->aWrite[b];
  ck_assert(n == 3);
  wcs_heatmap_free(m);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_heatmap_read_batches_land_among_their_rows) {
  /* Reads reach the heat map in batches of rows: the first row of a read
  ** at once, then up to 64 at a time. A scan that ends inside a batch
  ** counts it in the bucket of one of its own rows, long after those rows
  ** were returned. */
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a");
  wcs_read_options o = ro();
  wcs_key_range r;
  wcs_heatmap *m = NULL;
  const wcs_heat_slot *h;
  uint64_t nIn = 0, nAll = 0;
  int b, bLo, bHi;
  char *z;
  rows_k(e, t, "a", 4000, 0);
  gNow += 60000000; /* a new slot, with bounds from the rows written */
  memset(&r, 0, sizeof(r));
  r.pStart = "k03900";
  r.nStart = 6;
  r.pEnd = "k03950";
  r.nEnd = 6;
  o.aRange = &r;
  o.nRange = 1;
  z = dump(t, NULL, &o); /* 50 rows: one, then a batch cut by the end */
  free(z);
  ck_assert_int_eq(wcs_table_heatmap(t, &m), WCS_OK);
  ck_assert_int_eq(m->nSlot, 2);
  h = &m->aSlot[1];
  bLo = heat_bucket(m, h, "k03900");
  bHi = heat_bucket(m, h, "k03949");
  ck_assert_int_gt(bLo, 0); /* so that a batch under no key would show */
  for (b = 0; b < m->nBucket; b++) {
    nAll += h->aRead[b];
    if (b >= bLo && b <= bHi) nIn += h->aRead[b];
  }
  ck_assert(nAll == 50);
  ck_assert(nIn == 50);
  wcs_heatmap_free(m);
  wcs_table_close(t);
  wcs_engine_close(e);
}
END_TEST

START_TEST(test_table_approximate_sums_its_families) {
  wcs_engine *e = open_mem();
  wcs_table *t = mk(e, "t", "FAMILY a, FAMILY b");
  wcs_table *u = mk(e, "u", "FAMILY a");
  uint64_t nBytes = 1, nKeys = 1, nB2 = 0, nK2 = 0;
  /* nothing in files yet */
  ck_assert_int_eq(wcs_table_approximate(t, &nBytes, &nKeys), WCS_OK);
  ck_assert(nBytes == 0 && nKeys == 0);
  rows_k(e, t, "a", 3000, 0);
  rows_k(e, t, "b", 1000, 0);
  rows_k(e, u, "a", 100, 0);
  ck_assert_int_eq(wcs_db_flush(wcs_engine_db(e)), WCS_OK);
  ck_assert_int_eq(wcs_table_approximate(t, &nBytes, &nKeys), WCS_OK);
  /* by whole blocks: coarse on files this small */
  ck_assert_msg(nKeys >= 2000 && nKeys <= 6000, "keys %llu",
                (unsigned long long)nKeys);
  ck_assert(nBytes > 0);
  ck_assert_int_eq(wcs_table_approximate(u, &nB2, &nK2), WCS_OK);
  ck_assert(nB2 < nBytes && nK2 <= 400);
  ck_assert_int_eq(wcs_table_approximate(u, NULL, NULL), WCS_OK);
  /* a dropped family no longer counts */
  ck_assert_int_eq(wcs_table_alter(e, "t", "FAMILY a"), WCS_OK);
  wcs_table_close(t);
  ck_assert_int_eq(wcs_table_open(e, "t", &t), WCS_OK);
  ck_assert_int_eq(wcs_table_approximate(t, &nB2, &nK2), WCS_OK);
  ck_assert(nB2 < nBytes && nK2 < nKeys);
  wcs_table_close(t);
  wcs_table_close(u);
  wcs_engine_close(e);
}
END_TEST

/* The newest slot of t's heat map: its bounds must be real rows k%05d,
** increasing, spread over [k00000, k(n-1)]; the read counts must sum to
** nReads. */
/* The row number of bound b ("k%05d", not NUL-terminated). */
static int bound_num(const wcs_heat_slot *h, int b) {
  char z[8];
  ck_assert_int_eq((int)h->anBound[b], 6);
  memcpy(z, h->apBound[b], 6);
  z[6] = 0;
  ck_assert_int_eq(z[0], 'k');
  return atoi(z + 1);
}

static void check_seeded_bounds(wcs_table *t, int n, uint64_t nReads) {
  wcs_heatmap *m = NULL;
  const wcs_heat_slot *h;
  int b, nReal = 0;
  uint64_t nR = 0;
  ck_assert_int_eq(wcs_table_heatmap(t, &m), WCS_OK);
  ck_assert_int_ge(m->nSlot, 1);
  h = &m->aSlot[m->nSlot - 1];
  for (b = 0; b < m->nBucket - 1; b++) {
    ck_assert_int_lt(bound_num(h, b), n);
    if (b > 0) {
      ck_assert_int_le(bound_num(h, b - 1), bound_num(h, b));
      nReal += bound_num(h, b - 1) < bound_num(h, b);
    }
  }
  /* at least 3/4 of the 31 bounds distinct, the first in the first
  ** tenth, the last in the last tenth */
  ck_assert_int_ge(nReal + 1, 3 * (m->nBucket - 1) / 4);
  ck_assert_int_lt(bound_num(h, 0), n / 10);
  ck_assert_int_gt(bound_num(h, m->nBucket - 2), n - n / 10);
  for (b = 0; b < m->nBucket; b++)
    nR += h->aRead[b];
  ck_assert(nR == nReads);
  wcs_heatmap_free(m);
}

START_TEST(test_heatmap_bounds_come_from_table_keys_in_a_fresh_process) {
  /* A fresh process has seen no keys: the first slot takes its bucket
  ** bounds from the stored keys: by a scan for a small table (also one
  ** still in the memtable after recovery), by file metadata for a big one
  ** (20000 rows of 128 random bytes, 2.5 MiB). */
  const char *zDir = tu_tmpdir("engine_heat_seed");
  char zPath[1024];
  int iCase;
  tu_seed(0);
  for (iCase = 0; iCase < 3; iCase++) {
    wcs_engine *e = NULL;
    wcs_table *t = NULL;
    wcs_read_options o = ro();
    wcs_key_range r;
    int n = iCase < 2 ? 4000 : 20000;
    char zRow[16];
    char *z;
    snprintf(zPath, sizeof(zPath), "%s/store%d", zDir, iCase);
    ck_assert_int_eq(wcs_engine_open_path(&e, zPath, NULL, NULL), WCS_OK);
    t = mk(e, "t", "FAMILY a, FAMILY b");
    rows_k(e, t, "a", n, iCase < 2 ? 0 : 128);
    rows_k(e, t, "b", 50, 0);
    if (iCase > 0) ck_assert_int_eq(wcs_db_flush(wcs_engine_db(e)), WCS_OK);
    wcs_table_close(t);
    ck_assert_int_eq(wcs_engine_close(e), WCS_OK);

    ck_assert_int_eq(wcs_engine_open_path(&e, zPath, NULL, NULL), WCS_OK);
    ck_assert_int_eq(wcs_table_open(e, "t", &t), WCS_OK);
    memset(&r, 0, sizeof(r));
    snprintf(zRow, sizeof(zRow), "k%05d", n - 1);
    r.pStart = r.pEnd = zRow;
    r.nStart = r.nEnd = 6;
    r.bEndIncl = 1;
    o.aRange = &r;
    o.nRange = 1;
    o.bKeysOnly = 1;
    z = dump(t, NULL, &o);
    ck_assert_int_eq((int)strlen(z), 8); /* "k.....:;" */
    free(z);
    check_seeded_bounds(t, n, 1);
    wcs_table_close(t);
    ck_assert_int_eq(wcs_engine_close(e), WCS_OK);
  }
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_bloom_prefix_ends_after_row_key) {
  /* tid 1, fid 1, row "a\0b", qual "q", ts */
  unsigned char k[] = {0,   0, 0, 1, 0, 1, 'a', 0, 0xFF, 'b', 0, 1,
                       'q', 0, 1, 1, 2, 3, 4,   5, 6,    7,   8};
  ck_assert_int_eq(wcs_engine_bloom_prefix(k, (int)sizeof(k)), 12);
  /* catalog keys and bare family prefixes stay out of the filters */
  ck_assert_int_eq(wcs_engine_bloom_prefix("\0\0\0\0Tname", 9), -1);
  ck_assert_int_eq(wcs_engine_bloom_prefix(k, 6), -1);
  ck_assert_int_eq(wcs_engine_bloom_prefix(k, 12), 12);
  {
    wcs_options o;
    wcs_options_init(&o);
    wcs_engine_options(&o);
    ck_assert_ptr_eq((void *)o.xBloomPrefix, (void *)wcs_engine_bloom_prefix);
  }
}
END_TEST

Suite *engine_suite(void);
Suite *engine_suite(void) {
  Suite *s = suite_create("engine");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_table_create_stores_canonical_schema);
  tcase_add_test(tc, test_table_create_existing_name_fails);
  tcase_add_test(tc, test_table_open_missing_is_null_not_error);
  tcase_add_test(tc, test_null_arguments_are_misuse);
  tcase_add_test(tc, test_table_list_in_name_order);
  tcase_add_test(tc, test_catalog_persists_across_reopen);
  tcase_add_test(tc, test_engine_open_path_shares_one_store);
  tcase_add_test(tc, test_open_waits_for_a_close_of_the_same_store);
  tcase_add_test(tc, test_compaction_frees_files_idle_cursors_held);
  tcase_add_test(tc, test_drop_removes_all_data);
  tcase_add_test(tc, test_alter_adds_family_changes_gc_and_drops_family);
  tcase_add_test(tc, test_alter_rejects_key_and_aggregate_change);
  tcase_add_test(tc, test_many_families_warn_not_fail);
  tcase_add_test(tc, test_cells_newest_first_grouped_by_family);
  tcase_add_test(tc, test_family_names_from_the_table_schema_find_their_family);
  tcase_add_test(tc, test_ts_now_uses_engine_clock);
  tcase_add_test(tc, test_family_subset_reads_only_those_families);
  tcase_add_test(tc, test_ranges_are_unioned_sorted_and_bounded);
  tcase_add_test(tc, test_row_keys_with_zero_and_ff_bytes_sort_as_bytes);
  tcase_add_test(tc, test_qualifiers_and_rows_with_zero_bytes_of_every_length);
  tcase_add_test(tc, test_versions_time_range_and_as_of);
  tcase_add_test(tc, test_keys_only_returns_live_rows_without_cells);
  tcase_add_test(tc, test_latest_n_passes_over_long_columns);
  tcase_add_test(tc, test_cursor_reuse_sees_commits_and_new_options);
  tcase_add_test(tc, test_cursor_reuse_after_alter_and_drop);
  tcase_add_test(tc, test_reused_cursor_reads_a_row_at_one_point_in_time);
  tcase_add_test(tc, test_row_filter_skip_scan_seeks_between_prefixes);
  tcase_add_test(tc, test_row_filter_prefix_passes_a_run_without_calls);
  tcase_add_test(tc, test_cell_filter_passes_over_rows);
  tcase_add_test(tc, test_cursor_seek_moves_both_ways);
  tcase_add_test(tc, test_gc_none_keeps_everything);
  tcase_add_test(tc, test_gc_max_versions);
  tcase_add_test(tc, test_gc_max_age);
  tcase_add_test(tc, test_gc_union_expires_when_either_rule_does);
  tcase_add_test(tc, test_gc_intersection_expires_when_both_rules_do);
  tcase_add_test(tc, test_gc_age_moves_with_the_clock);
  tcase_add_test(tc, test_delete_from_column_all_versions);
  tcase_add_test(tc, test_delete_from_column_time_ranges);
  tcase_add_test(tc, test_delete_from_family_row_range_and_prefix);
  tcase_add_test(tc, test_write_after_delete_in_one_txn_survives);
  tcase_add_test(tc, test_aggregate_sum_min_max);
  tcase_add_test(tc, test_aggregate_sum_visible_inside_txn_before_commit);
  tcase_add_test(tc, test_aggregate_hll_estimate_within_error);
  tcase_add_test(tc, test_increment_and_append);
  tcase_add_test(tc, test_check_and_mutate_picks_branch);
  tcase_add_test(tc, test_check_and_mutate_validates_both_branches);
  tcase_add_test(tc, test_delete_cells_empty_time_range);
  tcase_add_test(tc, test_mutate_row_applies_in_order);
  tcase_add_test(tc, test_txn_reads_its_own_writes_over_snapshot);
  tcase_add_test(tc, test_txn_rollback_discards_everything);
  tcase_add_test(tc, test_txn_savepoints_roll_back_and_release);
  tcase_add_test(tc, test_txn_rollback_to_an_unrecorded_savepoint);
  tcase_add_test(tc, test_ordered_load_of_two_families_is_adopted_and_ingested);
  tcase_add_test(tc, test_cursor_stays_valid_while_its_txn_writes);
  tcase_add_test(tc, test_cursor_open_across_commit_keeps_the_committed_writes);
  tcase_add_test(tc, test_commit_fails_if_table_dropped_meanwhile);
  tcase_add_test(tc, test_limits_name_the_limit_and_key);
  tcase_add_test(tc, test_bad_arguments_have_their_own_message);
  tcase_add_test(tc, test_estimates_rows_and_prefixes);
  tcase_add_test(tc, test_estimate_of_few_huge_rows_reads_little);
  tcase_add_test(tc, test_heatmap_counts_reads_and_writes);
  tcase_add_test(tc, test_heatmap_write_totals_exact_at_txn_boundaries);
  tcase_add_test(tc, test_heatmap_write_batches_keep_each_row_in_its_bucket);
  tcase_add_test(tc,
                 test_heatmap_slot_with_few_bounds_keeps_the_last_bucket_open);
  tcase_add_test(tc, test_heatmap_read_batches_land_among_their_rows);
  tcase_add_test(tc, test_table_approximate_sums_its_families);
  tcase_add_test(tc,
                 test_heatmap_bounds_come_from_table_keys_in_a_fresh_process);
  tcase_add_test(tc, test_bloom_prefix_ends_after_row_key);
  tcase_add_test(tc, test_one_engine_per_store_handle);
  tcase_add_test(tc, test_dropped_tables_statistics_go);
  suite_add_tcase(s, tc);
  return s;
}
