/*
** File notes (wcs_options.xNoteBegin/xNoteAdd/xNoteEnd, wcs_iter_notes):
** every file a flush, compaction or bulk ingest writes carries the note
** its summary made of exactly its entries; the notes survive a reopen;
** and an iterator reports one sorted run only when no memtable and no
** second file or level can hold a key in its bounds.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "wcs.h"

Suite *storage_notes_suite(void);

#define OK(x) TU_DB_OK(x)

/* The test summary: counts of puts and deletes and the first and last
** user key, as text "P<puts> D<deletes> <first>..<last>". */
typedef struct Sum {
  long nPut, nDel;
  char zFirst[32], zLast[32];
} Sum;

static int nBegun, nEnded, nAbandoned;

static void *noteBegin(void *pCtx) {
  ck_assert_ptr_eq(pCtx, &nBegun);
  nBegun++;
  return calloc(1, sizeof(Sum));
}

static void noteAdd(void *p, const void *pKey, size_t nKey, int bDelete) {
  Sum *s = p;
  size_t n = nKey < 31 ? nKey : 31;
  if (s->nPut + s->nDel == 0) {
    memcpy(s->zFirst, pKey, n);
    s->zFirst[n] = 0;
  } else {
    /* in file order: never below the last key */
    char z[32];
    memcpy(z, pKey, n);
    z[n] = 0;
    ck_assert_int_ge(strcmp(z, s->zLast), 0);
  }
  memcpy(s->zLast, pKey, n);
  s->zLast[n] = 0;
  if (bDelete) {
    s->nDel++;
  } else {
    s->nPut++;
  }
}

static int noteEnd(void *p, int bAbandon, void **ppOut, size_t *pnOut) {
  Sum *s = p;
  nEnded++;
  if (bAbandon) {
    nAbandoned++;
  } else {
    char *z = malloc(100);
    ck_assert_ptr_nonnull(z);
    *pnOut = (size_t)snprintf(z, 100, "P%ld D%ld %s..%s", s->nPut, s->nDel,
                              s->zFirst, s->zLast);
    *ppOut = z;
  }
  free(s);
  return WCS_OK;
}

static void noteOptions(wcs_options *o, int bNotes) {
  wcs_options_init(o);
  o->bNoBackground = 1;
  o->nMemtable = 64 * 1024;
  o->nL1Bytes = 64 * 1024;
  o->nFileBytes = 8 * 1024;
  o->nBlockSize = 1024;
  o->nL0Trigger = 100; /* level 0 grows until a compaction is asked for */
  o->nL0Stop = 200;
  if (bNotes) {
    o->xNoteBegin = noteBegin;
    o->xNoteAdd = noteAdd;
    o->xNoteEnd = noteEnd;
    o->pNoteCtx = &nBegun;
  }
}

/* What wcs_iter_notes reported: the notes joined by '|' ("-" for a file
** without one), and totals. */
typedef struct Got {
  char z[4096];
  int nFile;
  long nPut, nDel;
  uint64_t nRangeDel, maxSeq;
} Got;

static int gotNote(void *pCtx, const wcs_file_note *n) {
  Got *g = pCtx;
  size_t k = strlen(g->z);
  if (g->nFile++) g->z[k++] = '|';
  if (n->pNote) {
    long p = 0, d = 0;
    ck_assert_uint_lt(k + n->nNote, sizeof g->z - 1);
    memcpy(g->z + k, n->pNote, n->nNote);
    g->z[k + n->nNote] = 0;
    ck_assert_int_eq(sscanf(g->z + k, "P%ld D%ld", &p, &d), 2);
    g->nPut += p;
    g->nDel += d;
  } else {
    g->z[k++] = '-';
    g->z[k] = 0;
  }
  g->nRangeDel += n->nRangeDel;
  if (n->maxSeq > g->maxSeq) g->maxSeq = n->maxSeq;
  ck_assert_uint_gt(n->iFile, 0);
  return 0;
}

/* wcs_iter_notes over [zLo, zHi) (NULL: open) with prefix zPre (NULL:
** none); returns *pbRun and fills *g. */
static int notesOf(wcs_db *db, const char *zLo, const char *zHi,
                   const char *zPre, Got *g) {
  wcs_iter_options io;
  wcs_iter *it = NULL;
  int bRun = -1;
  memset(&io, 0, sizeof io);
  memset(g, 0, sizeof *g);
  if (zLo) io.pLower = zLo, io.nLower = strlen(zLo);
  if (zHi) io.pUpper = zHi, io.nUpper = strlen(zHi);
  if (zPre) io.pPrefix = zPre, io.nPrefix = strlen(zPre);
  OK(wcs_iter_new(db, &io, &it));
  OK(wcs_iter_first(it));
  OK(wcs_iter_notes(it, &bRun, g, gotNote));
  if (!bRun) ck_assert_int_eq(g->nFile, 0);
  wcs_iter_free(it);
  return bRun;
}

static void putN(wcs_db *db, const char *zPre, int iFrom, int iTo) {
  int i;
  for (i = iFrom; i < iTo; i++)
    OK(tu_put_one(db, zPre, i, "v"));
}

START_TEST(test_notes_flush_memtable_and_level0) {
  wcs_db *db = NULL;
  wcs_options o;
  Got g;
  char *zDir = strdup(tu_tmpdir("notes"));
  nBegun = nEnded = nAbandoned = 0;
  noteOptions(&o, 1);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  putN(db, "a", 0, 200);
  /* in the memtable: not a run of files */
  ck_assert_int_eq(notesOf(db, "a", "b", NULL, &g), 0);
  OK(wcs_db_flush(db));
  ck_assert_int_eq(notesOf(db, "a", "b", NULL, &g), 1);
  ck_assert_int_eq(g.nFile, 1);
  ck_assert_str_eq(g.z, "P200 D0 a000000..a000199");
  /* a write outside the bounds leaves the run alone; inside, it does not */
  putN(db, "z", 0, 1);
  ck_assert_int_eq(notesOf(db, "a", "b", NULL, &g), 1);
  ck_assert_int_eq(notesOf(db, NULL, NULL, NULL, &g), 0);
  OK(wcs_db_delete(db, "a000007", 7));
  ck_assert_int_eq(notesOf(db, "a", "b", NULL, &g), 0);
  OK(wcs_db_flush(db));
  /* two level-0 files hold keys of [a, b): two runs */
  ck_assert_int_eq(notesOf(db, "a", "b", NULL, &g), 0);
  /* but the second one alone is one run, with the delete counted */
  ck_assert_int_eq(notesOf(db, "a000007", "a000008", NULL, &g), 0);
  ck_assert_int_eq(notesOf(db, "z", NULL, NULL, &g), 1);
  ck_assert_str_eq(g.z, "P1 D1 a000007..z000000");
  /* a bloom prefix may leave files out: never a run */
  ck_assert_int_eq(notesOf(db, "z", NULL, "z0", &g), 0);
  OK(wcs_db_close(db));
  ck_assert_int_eq(nBegun, nEnded);
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

START_TEST(test_notes_compaction_level_files_in_order) {
  wcs_db *db = NULL;
  wcs_options o;
  Got g;
  char *zDir = strdup(tu_tmpdir("notes"));
  char zPrev[32] = "";
  char *z, *zSave = NULL;
  int i;
  nBegun = nEnded = nAbandoned = 0;
  noteOptions(&o, 1);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  for (i = 0; i < 4; i++) {
    putN(db, "k", i * 500, i * 500 + 600); /* overlapping flushes */
    OK(wcs_db_flush(db));
  }
  OK(wcs_db_delete(db, "k000100", 7));
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  ck_assert_int_ge(tu_only_level(db), 1);
  ck_assert_int_eq(notesOf(db, NULL, NULL, NULL, &g), 1);
  ck_assert_int_gt(g.nFile, 2); /* several files of one level */
  /* the bottom level keeps one version per key and no delete */
  ck_assert_int_eq(g.nPut, 2099);
  ck_assert_int_eq(g.nDel, 0);
  ck_assert_uint_eq(g.nRangeDel, 0);
  for (z = strtok_r(g.z, "|", &zSave); z; z = strtok_r(NULL, "|", &zSave)) {
    char zFirst[32], zLast[32];
    long p, d;
    ck_assert_int_eq(sscanf(z, "P%ld D%ld %7s..%7s", &p, &d, zFirst, zLast),
                     4);
    ck_assert_int_gt(strcmp(zFirst, zPrev), 0); /* files in key order */
    ck_assert_int_le(strcmp(zFirst, zLast), 0);
    memcpy(zPrev, zLast, sizeof zPrev);
  }
  /* bounds inside the level: only the files they reach */
  ck_assert_int_eq(notesOf(db, "k000500", "k000501", NULL, &g), 1);
  ck_assert_int_eq(g.nFile, 1);
  OK(wcs_db_close(db));
  ck_assert_int_eq(nBegun, nEnded);
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

START_TEST(test_notes_reopen_range_delete_and_files_without) {
  wcs_db *db = NULL;
  wcs_options o;
  Got g;
  char *zDir = strdup(tu_tmpdir("notes"));
  nBegun = nEnded = nAbandoned = 0;
  noteOptions(&o, 1);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  putN(db, "a", 0, 50);
  OK(wcs_db_flush(db));
  OK(wcs_db_close(db));
  /* read back from the file by a store that writes no notes */
  noteOptions(&o, 0);
  db = NULL;
  OK(wcs_db_open(&db, zDir, &o, NULL));
  ck_assert_int_eq(notesOf(db, "a", "b", NULL, &g), 1);
  ck_assert_str_eq(g.z, "P50 D0 a000000..a000049");
  putN(db, "c", 0, 10);
  OK(wcs_db_flush(db));
  ck_assert_int_eq(notesOf(db, "c", "d", NULL, &g), 1);
  ck_assert_str_eq(g.z, "-"); /* written without a note */
  {
    /* a range delete that a live snapshot keeps through the compaction */
    wcs_snapshot *pSnap = NULL;
    wcs_batch *b = NULL;
    OK(wcs_snapshot_new(db, &pSnap));
    OK(wcs_batch_new(&b));
    OK(wcs_batch_delete_range(b, "c000002", 7, "c000004", 7));
    OK(wcs_db_write(db, b));
    wcs_batch_free(b);
    OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
    ck_assert_int_eq(notesOf(db, "c", "d", NULL, &g), 1);
    ck_assert_uint_eq(g.nRangeDel, 1);
    ck_assert_uint_gt(g.maxSeq, 0);
    wcs_snapshot_free(db, pSnap);
  }
  OK(wcs_db_close(db));
  ck_assert_int_eq(nBegun, 1);
  ck_assert_int_eq(nBegun, nEnded);
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

START_TEST(test_notes_bulk_ingest) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_batch *b = NULL;
  Got g;
  char *zDir = strdup(tu_tmpdir("notes"));
  int i;
  nBegun = nEnded = nAbandoned = 0;
  noteOptions(&o, 1);
  o.nIngestBytes = 4096; /* this batch goes straight into files */
  OK(wcs_db_open(&db, zDir, &o, NULL));
  OK(wcs_batch_new(&b));
  for (i = 0; i < 300; i++) {
    char k[16], v[128];
    tu_key_of(k, "b", i);
    tu_val_of(v, "i", i);
    OK(wcs_batch_put(b, k, strlen(k), v, strlen(v)));
  }
  OK(wcs_db_write(db, b));
  wcs_batch_free(b);
  ck_assert_uint_ge(tu_db_stat(db, "ingests"), 1);
  ck_assert_int_eq(notesOf(db, "b", "c", NULL, &g), 1);
  ck_assert_int_eq(g.nPut, 300);
  ck_assert_ptr_null(strchr(g.z, '-')); /* every file has its note */
  OK(wcs_db_close(db));
  ck_assert_int_eq(nBegun, nEnded);
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

/* The epoch stays while the sources do, and moves when they change. */
START_TEST(test_notes_epoch_follows_the_sources) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_iter_options io;
  wcs_iter *it = NULL;
  uint64_t e0, e1;
  char *zDir = strdup(tu_tmpdir("notes"));
  nBegun = nEnded = nAbandoned = 0;
  noteOptions(&o, 1);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  putN(db, "a", 0, 20);
  OK(wcs_db_flush(db));
  memset(&io, 0, sizeof io);
  io.pLower = "a";
  io.nLower = 1;
  io.pUpper = "b";
  io.nUpper = 1;
  OK(wcs_iter_new(db, &io, &it));
  e0 = wcs_iter_epoch(it);
  ck_assert_uint_gt(e0, 0);
  OK(wcs_iter_refresh(it));
  ck_assert_uint_eq(wcs_iter_epoch(it), e0); /* nothing changed */
  putN(db, "a", 100, 101); /* the memtable grows */
  OK(wcs_iter_refresh(it));
  e1 = wcs_iter_epoch(it);
  ck_assert_uint_ne(e1, e0);
  OK(wcs_db_flush(db)); /* new files */
  OK(wcs_iter_refresh(it));
  ck_assert_uint_ne(wcs_iter_epoch(it), e1);
  wcs_iter_free(it);
  OK(wcs_db_close(db));
  tu_rmrf(zDir);
  free(zDir);
}
END_TEST

Suite *storage_notes_suite(void) {
  Suite *s = suite_create("storage_notes");
  TCase *tc = tcase_create("notes");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_notes_flush_memtable_and_level0);
  tcase_add_test(tc, test_notes_compaction_level_files_in_order);
  tcase_add_test(tc, test_notes_reopen_range_delete_and_files_without);
  tcase_add_test(tc, test_notes_bulk_ingest);
  tcase_add_test(tc, test_notes_epoch_follows_the_sources);
  suite_add_tcase(s, tc);
  return s;
}
