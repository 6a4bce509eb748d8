/*
** Tests of the prebuilt ingest (wcs_prebuild in storage/wal.h; its worker
** and install in storage/db.c, the streaming writer in storage/ingest.c):
** a batch in the payload format is written into sorted files by a second
** thread while its owner still fills it, and its commit installs them.
** What is checked: interleaved runs offered in pieces, with the owner's
** buffer withdrawn and moved in between, read back whole by point reads
** and scans, from files cut per run, each holding one run's keys at the
** reserved sequence number, at the level the ingest rule picks; deletes
** and puts in the payload over older data, also after compactions and
** reopens; snapshots and iterators from before the commit see none of it;
** every payload the stream must decline (keys out of order or repeated,
** range deletes, unknown operations, too many runs, keys shorter than the
** run prefix, no operations, a payload that shrank) is declined with
** nothing written and no file left behind; two prebuilds reserving one
** sequence number (the second declines); abandoning; a commit with more
** bytes than were offered; a process killed after the commit (the data is
** there) and while offering (nothing is, and its files are swept at the
** open); later ordinary writes win over prebuilt data; binary keys and
** values of many sizes; an in-memory store.
*/
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/env.h"
#include "storage/ikey.h"
#include "storage/sst.h"
#include "storage/util.h"
#include "storage/wal.h"
#include "testutil.h"
#include "wcs.h"

Suite *storage_prebuild_suite(void);

#define OK(x) TU_DB_OK(x)

#define NOTFOUND(x) ck_assert_int_eq((x), WCS_NOTFOUND)

/* Small files, so that every run is cut into several. Batches are never
** ingested the ordinary way: "ingests" counts prebuilds only. */
static void options(wcs_options *o) {
  wcs_options_init(o);
  o->nMemtable = 64 * 1024;
  o->nL1Bytes = 64 * 1024;
  o->nFileBytes = 16 * 1024;
  o->nBlockSize = 1024;
  o->nL0Trigger = 4;
  o->nL0Stop = 12;
  o->nIngestBytes = UINT64_MAX;
}

/* A prebuild needs a second core; without one the tests have nothing to
** test (wcs_prebuild_start answers WCS_NOTFOUND). */
static int haveCores(void) {
  return sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

/* Files of every level. */
static int liveFiles(wcs_db *db) {
  int i, n = 0;
  for (i = 0; i < 7; i++)
    n += tu_level_files(db, i);
  return n;
}

/* The last sequence number (the latest snapshot's). */
static uint64_t lastSeq(wcs_db *db) {
  wcs_snapshot *s = NULL;
  uint64_t seq;
  OK(wcs_snapshot_new(db, &s));
  seq = wcs_snapshot_seq(s);
  wcs_snapshot_free(db, s);
  return seq;
}

/* Does key zPre<i> read as the value tagged zTag (NULL: absent)? */
static void checkKey(wcs_db *db, const wcs_snapshot *s, const char *zPre, int i,
                     const char *zTag) {
  char k[64], v[128];
  const char *zGot;
  tu_key_of(k, zPre, i);
  zGot = tu_get_str(db, s, k);
  if (zTag == NULL) {
    ck_assert_msg(zGot == NULL, "%s: expected absent, got %s", k, zGot);
  } else {
    tu_val_of(v, zTag, i);
    ck_assert_msg(zGot && strcmp(zGot, v) == 0, "%s: expected %s, got %s", k, v,
                  zGot ? zGot : "(absent)");
  }
}

/* Keys of a scan from the first with iterator it. */
static int iterCount(wcs_iter *it) {
  int n = 0, rc;
  for (rc = wcs_iter_first(it); wcs_iter_valid(it); rc = wcs_iter_next(it))
    n++;
  ck_assert_int_eq(rc, WCS_OK);
  ck_assert_int_eq(wcs_iter_status(it), WCS_OK);
  return n;
}

/* Keys of a full scan at s. */
static int countKeys(wcs_db *db, const wcs_snapshot *s) {
  wcs_iter_options io;
  wcs_iter *it = NULL;
  int n;
  memset(&io, 0, sizeof io);
  io.pSnap = s;
  OK(wcs_iter_new(db, &io, &it));
  n = iterCount(it);
  wcs_iter_free(it);
  return n;
}

/* ---- a model of the expected contents: operations in order, then sorted
** (the last operation of a key wins) */

typedef struct MEnt {
  char zKey[32];
  char zVal[112]; /* "" and bDel: deleted */
  int bDel;
  int iOrder;
} MEnt;

typedef struct Model {
  MEnt *a;
  int n, nAlloc;
  int bSorted;
} Model;

/* Key zPre<i> gets the value tagged zTag (NULL: deleted). */
static void modelSet(Model *m, const char *zPre, int i, const char *zTag) {
  MEnt *e;
  if (m->n == m->nAlloc) {
    m->nAlloc = m->nAlloc ? 2 * m->nAlloc : 1024;
    m->a = realloc(m->a, sizeof(MEnt) * (size_t)m->nAlloc);
    ck_assert_ptr_nonnull(m->a);
  }
  e = &m->a[m->n];
  memset(e, 0, sizeof *e);
  tu_key_of(e->zKey, zPre, i);
  if (zTag) tu_val_of(e->zVal, zTag, i);
  e->bDel = zTag == NULL;
  e->iOrder = m->n++;
  m->bSorted = 0;
}

static int cmpMEnt(const void *a, const void *b) {
  const MEnt *x = a, *y = b;
  int c = strcmp(x->zKey, y->zKey);
  if (c) return c;
  return x->iOrder < y->iOrder ? -1 : x->iOrder > y->iOrder;
}

/* Sort by key, keeping each key's last operation. */
static void modelSort(Model *m) {
  int i, j = 0;
  if (m->bSorted) return;
  qsort(m->a, (size_t)m->n, sizeof(MEnt), cmpMEnt);
  for (i = 0; i < m->n; i++) {
    if (j > 0 && strcmp(m->a[j - 1].zKey, m->a[i].zKey) == 0) {
      m->a[j - 1] = m->a[i];
    } else {
      m->a[j++] = m->a[i];
    }
  }
  m->n = j;
  for (i = 0; i < m->n; i++)
    m->a[i].iOrder = i;
  m->bSorted = 1;
}

static void modelFree(Model *m) {
  free(m->a);
  memset(m, 0, sizeof *m);
}

/* The store at s reads as m: every key by a point read, and a full scan
** returns exactly m's live keys with their values, in order. */
static void checkModel(wcs_db *db, const wcs_snapshot *s, Model *m) {
  wcs_iter_options io;
  wcs_iter *it = NULL;
  int i, rc;
  modelSort(m);
  for (i = 0; i < m->n; i++) {
    const MEnt *e = &m->a[i];
    const char *zGot = tu_get_str(db, s, e->zKey);
    if (e->bDel) {
      ck_assert_msg(zGot == NULL, "%s: expected absent, got %s", e->zKey, zGot);
    } else {
      ck_assert_msg(zGot && strcmp(zGot, e->zVal) == 0,
                    "%s: expected %s, got %s", e->zKey, e->zVal,
                    zGot ? zGot : "(absent)");
    }
  }
  memset(&io, 0, sizeof io);
  io.pSnap = s;
  OK(wcs_iter_new(db, &io, &it));
  i = 0;
  for (rc = wcs_iter_first(it); wcs_iter_valid(it); rc = wcs_iter_next(it)) {
    size_t nK, nV;
    const char *pK = wcs_iter_key(it, &nK);
    const char *pV = wcs_iter_value(it, &nV);
    while (i < m->n && m->a[i].bDel)
      i++;
    ck_assert_msg(i < m->n, "scan: extra key %.*s", (int)nK, pK);
    ck_assert_msg(nK == strlen(m->a[i].zKey) &&
                      memcmp(pK, m->a[i].zKey, nK) == 0,
                  "scan: expected %s, got %.*s", m->a[i].zKey, (int)nK, pK);
    ck_assert_msg(nV == strlen(m->a[i].zVal) &&
                      memcmp(pV, m->a[i].zVal, nV) == 0,
                  "scan: %s: expected %s, got %.*s", m->a[i].zKey, m->a[i].zVal,
                  (int)nV, pV);
    i++;
  }
  ck_assert_int_eq(rc, WCS_OK);
  ck_assert_int_eq(wcs_iter_status(it), WCS_OK);
  while (i < m->n && m->a[i].bDel)
    i++;
  ck_assert_msg(i == m->n, "scan ended before %s",
                i < m->n ? m->a[i].zKey : "");
  wcs_iter_free(it);
}

/* ---- the owner of a payload: a buffer it fills with operations in the
** batch format and offers to its prebuild as it goes, moving it (withdrawn
** first) whenever it is full */

typedef struct Owner {
  wcs_db *db;
  wcs_prebuild *pb; /* NULL: none (an ordinary batch) */
  uint8_t *a;       /* the payload (malloc'd) */
  size_t n, nAlloc;
  size_t nOffered; /* at the last offer (0: none yet) */
  size_t nStep;    /* offer whenever this many more bytes are complete */
  int nOp;
  int nMove; /* times the buffer moved */
} Owner;

static void ownInit(Owner *w, wcs_db *db, wcs_prebuild *pb, size_t nAlloc,
                    size_t nStep) {
  memset(w, 0, sizeof *w);
  w->db = db;
  w->pb = pb;
  w->nAlloc = nAlloc;
  w->nStep = nStep;
  w->a = malloc(nAlloc);
  ck_assert_ptr_nonnull(w->a);
  memset(w->a, 0, WAL_BATCH_HEADER); /* the gap the commit fills */
  w->n = WAL_BATCH_HEADER;
}

static void ownOffer(Owner *w) {
  if (w->pb) wcs_prebuild_offer(w->pb, w->a, w->n);
  w->nOffered = w->n;
}

/* Move the payload to a new buffer of nAlloc bytes: withdraw it, copy
** it, scribble over the old buffer (what a reader that did not let go
** would see), wait usSlow microseconds (a slow realloc, during which the
** worker must not read) and free it, then offer the new one. */
static void ownMove(Owner *w, size_t nAlloc, int usSlow) {
  uint8_t *a = malloc(nAlloc);
  ck_assert_ptr_nonnull(a);
  ck_assert_uint_ge(nAlloc, w->n);
  if (w->pb) wcs_prebuild_offer(w->pb, NULL, 0);
  memcpy(a, w->a, w->n);
  memset(w->a, 0xEE, w->nAlloc);
  usleep((useconds_t)usSlow);
  free(w->a);
  w->a = a;
  w->nAlloc = nAlloc;
  w->nMove++;
  if (w->nOffered) ownOffer(w);
}

/* Append one operation: op with key k and, when v is not NULL, a second
** string (a put's value, a range delete's end). Raw: no offer. */
static void ownRaw(Owner *w, int op, const void *k, size_t nK, const void *v,
                   size_t nV) {
  size_t nNeed = 1 + WCS_VARINT_MAX + nK + (v ? WCS_VARINT_MAX + nV : 0);
  uint8_t *p;
  if (w->n + nNeed > w->nAlloc) {
    size_t nNew = 2 * w->nAlloc;
    while (nNew < w->n + nNeed)
      nNew *= 2;
    ownMove(w, nNew, 1000);
  }
  p = w->a + w->n;
  *p++ = (uint8_t)op;
  p += wcs_put_varint(p, nK);
  memcpy(p, k, nK);
  p += nK;
  if (v) {
    p += wcs_put_varint(p, nV);
    memcpy(p, v, nV);
    p += nV;
  }
  w->n = (size_t)(p - w->a);
  w->nOp++;
  if (w->nStep && w->n - w->nOffered >= w->nStep) ownOffer(w);
}

/* Put zPre<i> with the value tagged zTag (NULL: delete it); m, if not
** NULL, records it. */
static void ownRow(Owner *w, Model *m, const char *zPre, int i,
                   const char *zTag) {
  char k[64], v[128];
  tu_key_of(k, zPre, i);
  if (zTag) {
    tu_val_of(v, zTag, i);
    ownRaw(w, WAL_OP_PUT, k, strlen(k), v, strlen(v));
  } else {
    ownRaw(w, WAL_OP_DELETE, k, strlen(k), NULL, 0);
  }
  if (m) modelSet(m, zPre, i, zTag);
}

/* Commit the payload through the prebuild; frees the owner's buffer. */
static int ownCommit(Owner *w) {
  int rc = wcs_prebuild_commit(w->pb, w->a, w->n, w->nOp);
  w->pb = NULL;
  free(w->a);
  w->a = NULL;
  return rc;
}

/* Commit the payload as an ordinary batch (what the owner does when the
** prebuild declines); frees the owner's buffer. */
static int ownWrite(Owner *w, size_t nRunPrefix) {
  wcs_batch *b = NULL;
  wcs_buf rep = {0};
  int rc;
  ck_assert_int_eq(wcs_buf_append(&rep, w->a, w->n), WCS_OK);
  ck_assert_int_eq(wcs_batch_new(&b), WCS_OK);
  ck_assert_int_eq(wcs_batch_adopt(b, &rep, w->nOp, nRunPrefix), WCS_OK);
  rc = wcs_db_write(w->db, b);
  wcs_batch_free(b);
  wcs_buf_free(&rep);
  free(w->a);
  w->a = NULL;
  return rc;
}

/* ---- the store's directory */

static int isTable(const char *z) {
  size_t m = strlen(z);
  return m > 4 &&
         (strcmp(z + m - 4, ".sst") == 0 || strcmp(z + m - 4, ".tmp") == 0);
}

static int cmpStr(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the sorted files (and their temporary files) in zDir,
** sorted, as one malloc'd string "name name ...". */
static char *tableFiles(const char *zDir) {
  DIR *d = opendir(zDir);
  struct dirent *e;
  char *az[1024];
  int n = 0, i;
  wcs_buf b = {0};
  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)) != NULL) {
    if (!isTable(e->d_name)) continue;
    ck_assert_int_lt(n, 1024);
    az[n] = strdup(e->d_name);
    ck_assert_ptr_nonnull(az[n]);
    n++;
  }
  closedir(d);
  qsort(az, (size_t)n, sizeof(char *), cmpStr);
  for (i = 0; i < n; i++) {
    ck_assert_int_eq(wcs_buf_append(&b, az[i], strlen(az[i])), WCS_OK);
    ck_assert_int_eq(wcs_buf_append(&b, " ", 1), WCS_OK);
    free(az[i]);
  }
  ck_assert_int_eq(wcs_buf_append(&b, "", 1), WCS_OK);
  return (char *)b.a;
}

/* Sorted files in zDir. */
static int sstFiles(const char *zDir) {
  char *z = tableFiles(zDir), *p;
  int n = 0;
  for (p = strstr(z, ".sst"); p; p = strstr(p + 1, ".sst"))
    n++;
  free(z);
  return n;
}

/* Has zDir the same sorted files as when zBefore was taken? zWhat names
** the case in a failure. */
static void checkSameFiles(const char *zDir, const char *zBefore,
                           const char *zWhat) {
  char *z = tableFiles(zDir);
  ck_assert_msg(strcmp(z, zBefore) == 0, "%s: files before: [%s], now: [%s]",
                zWhat, zBefore, z);
  free(z);
}

/* Wait (up to 10 s) until zDir holds a sorted file that zBefore does not:
** the worker has copied its first slice and writes files. */
static int waitNewFile(const char *zDir, const char *zBefore) {
  int i;
  for (i = 0; i < 10000; i++) {
    char *z = tableFiles(zDir);
    int bNew = strcmp(z, zBefore) != 0;
    free(z);
    if (bNew) return 1;
    usleep(1000);
  }
  return 0;
}

/* Check the sorted files in zDir that zBefore does not name: every entry
** has sequence number seq, and each file holds the keys of one run (the
** first nPre bytes); anRun[c - 'a'] counts the files of the run whose key
** starts with c. Returns the number of files. */
static int checkNewFiles(const char *zDir, const char *zBefore, uint64_t seq,
                         size_t nPre, int *anRun, int nRun) {
  DIR *d = opendir(zDir);
  struct dirent *e;
  wcs_env *env = wcs_env_posix();
  int nFile = 0;
  memset(anRun, 0, sizeof(int) * (size_t)nRun);
  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)) != NULL) {
    char zPath[4200], zPat[300];
    size_t n = strlen(e->d_name);
    sst_reader *r = NULL;
    sst_meta m;
    uint64_t nSize;
    wcs_file *f;
    int iRun;
    if (n < 4 || strcmp(e->d_name + n - 4, ".sst") != 0) continue;
    snprintf(zPat, sizeof zPat, "%s ", e->d_name);
    if (strstr(zBefore, zPat)) continue;
    snprintf(zPath, sizeof zPath, "%s/%s", zDir, e->d_name);
    ck_assert_int_eq(env->xOpen(env, zPath, WCS_OPEN_READ, &f, NULL), WCS_OK);
    ck_assert_int_eq(env->xSize(f, &nSize, NULL), WCS_OK);
    env->xClose(f);
    ck_assert_int_eq(sst_reader_open(env, zPath, 1, nSize, NULL, &r, NULL),
                     WCS_OK);
    ck_assert_int_eq(sst_reader_meta(r, &m), WCS_OK);
    ck_assert_uint_gt(m.nEntries, 0);
    ck_assert_uint_eq(m.nRangeDel, 0);
    ck_assert_uint_eq(m.minSeq, seq);
    ck_assert_uint_eq(m.maxSeq, seq);
    ck_assert_uint_ge(m.nSmallest, WCS_IKEY_TRAILER + nPre);
    ck_assert_uint_ge(m.nLargest, WCS_IKEY_TRAILER + nPre);
    ck_assert_msg(memcmp(m.pSmallest, m.pLargest, nPre) == 0,
                  "%s holds keys of two runs", e->d_name);
    iRun = m.pSmallest[0] - 'a';
    ck_assert_int_ge(iRun, 0);
    ck_assert_int_lt(iRun, nRun);
    anRun[iRun]++;
    nFile++;
    sst_meta_clear(&m);
    sst_reader_close(r);
  }
  closedir(d);
  return nFile;
}

/* Close db, reopen it from zDir, check it against m once more, close it,
** and remove everything. */
static void reopenCheckEnd(wcs_db *db, const char *zDir, const wcs_options *o,
                           Model *m) {
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  db = NULL;
  OK(wcs_db_open(&db, zDir, o, NULL));
  checkModel(db, NULL, m);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  modelFree(m);
  tu_rmrf(zDir);
}

/* ---- tests */

/* Two runs interleaved row by row, offered in pieces while the owner's
** buffer is withdrawn and moved (once while the worker still has most of
** an offer to read), read back whole. */
START_TEST(test_prebuild_interleaved_runs_offered_in_pieces_read_back) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pb = NULL;
  Owner w;
  Model m = {0};
  const char *zDir = tu_tmpdir("prebuild_runs");
  char zDirCopy[1024], *zBefore;
  uint64_t seq0;
  int i, anRun[2], nFile;
  if (!haveCores()) return;
  snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  options(&o);
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  seq0 = lastSeq(db);
  zBefore = tableFiles(zDirCopy);
  OK(wcs_prebuild_start(db, 2, &pb));
  /* more than a slice of the worker's at once, then moved at once */
  ownInit(&w, db, pb, 512 * 1024, 0);
  for (i = 0; i < 2500; i++) {
    ownRow(&w, &m, "a:", i, "pre");
    ownRow(&w, &m, "b:", i, "pre");
  }
  ck_assert_uint_gt(w.n, 256 * 1024);
  ownOffer(&w);
  ownMove(&w, 512 * 1024, 50000); /* the worker has the rest to read */
  /* then in steps, the buffer growing (moving) as it fills */
  w.nStep = 24 * 1024;
  for (; i < 5000; i++) {
    ownRow(&w, &m, "a:", i, "pre");
    ownRow(&w, &m, "b:", i, "pre");
  }
  ck_assert_int_ge(w.nMove, 2);
  ck_assert_int_eq(w.nOp, 10000);
  OK(ownCommit(&w));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
  ck_assert_uint_eq(lastSeq(db), seq0 + WCS_PREBUILD_SEQ_GAP);
  /* an empty store: the last level, several files per run */
  ck_assert_int_eq(tu_only_level(db), 6);
  nFile = checkNewFiles(zDirCopy, zBefore, seq0 + WCS_PREBUILD_SEQ_GAP, 2,
                        anRun, 2);
  ck_assert_int_eq(nFile, tu_level_files(db, 6));
  ck_assert_int_gt(anRun[0], 1);
  ck_assert_int_gt(anRun[1], 1);
  checkModel(db, NULL, &m);
  checkKey(db, NULL, "a:", 5000, NULL);
  ck_assert_int_eq(countKeys(db, NULL), 10000);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  /* the manifest names the files */
  db = NULL;
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  ck_assert_int_eq(tu_only_level(db), 6);
  checkModel(db, NULL, &m);
  ck_assert_uint_ge(lastSeq(db), seq0 + WCS_PREBUILD_SEQ_GAP);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  free(zBefore);
  modelFree(&m);
  tu_rmrf(zDirCopy);
}
END_TEST

/* Deletes and puts of a payload over data written before by ordinary
** commits (in files and in the memtable): the payload is newer. The same
** after compactions and a reopen, and a second prebuild over compacted
** data lands above it. */
START_TEST(test_prebuild_deletes_and_puts_over_older_data) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pb = NULL;
  Owner w;
  Model m = {0};
  const char *zDir = tu_tmpdir("prebuild_over");
  char zDirCopy[1024];
  int i, iOld;
  if (!haveCores()) return;
  snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  options(&o);
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  for (i = 0; i < 1000; i++) {
    OK(tu_put_one(db, "k:", i, "old"));
    modelSet(&m, "k:", i, "old");
    if (i == 600) OK(wcs_db_flush(db));
  }
  /* one run: deletes (i % 3 == 0), puts (1), untouched (2), past the
  ** old keys too */
  OK(wcs_prebuild_start(db, 0, &pb));
  ownInit(&w, db, pb, 16 * 1024, 8 * 1024);
  for (i = 0; i < 1200; i++) {
    if (i % 3 == 0) ownRow(&w, &m, "k:", i, NULL);
    if (i % 3 == 1) ownRow(&w, &m, "k:", i, "new");
  }
  OK(ownCommit(&w));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
  checkKey(db, NULL, "k:", 3, NULL);
  checkKey(db, NULL, "k:", 4, "new");
  checkKey(db, NULL, "k:", 5, "old");
  checkKey(db, NULL, "k:", 1002, NULL);
  checkModel(db, NULL, &m);
  ck_assert_int_eq(countKeys(db, NULL), 333 + 333 + 67);
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  checkModel(db, NULL, &m);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  db = NULL;
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  checkModel(db, NULL, &m);

  /* over data in one level: the level above it */
  iOld = tu_only_level(db);
  ck_assert_int_gt(iOld, 0);
  OK(wcs_prebuild_start(db, 0, &pb));
  ownInit(&w, db, pb, 16 * 1024, 8 * 1024);
  for (i = 0; i < 500; i++) {
    if (i % 3 == 2) ownRow(&w, &m, "k:", i, NULL);
    if (i % 3 == 1) ownRow(&w, &m, "k:", i, "newer");
  }
  OK(ownCommit(&w));
  ck_assert_int_gt(tu_level_files(db, iOld - 1), 0);
  checkKey(db, NULL, "k:", 5, NULL);
  checkKey(db, NULL, "k:", 4, "newer");
  checkKey(db, NULL, "k:", 506, "old");
  checkModel(db, NULL, &m);
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  checkModel(db, NULL, &m);
  reopenCheckEnd(db, zDirCopy, &o, &m);
}
END_TEST

/* Snapshots and an iterator made before the commit (before the start,
** and after it with an ordinary commit in between) see none of the
** payload, also after a compaction; ones made after see all of it. */
START_TEST(test_prebuild_is_invisible_to_earlier_snapshots_and_iterators) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pb = NULL;
  wcs_snapshot *s0 = NULL, *s1 = NULL, *s2 = NULL;
  wcs_iter *it = NULL;
  Owner w;
  const char *zDir = tu_tmpdir("prebuild_snap");
  char k[64];
  uint64_t seq0;
  int i;
  if (!haveCores()) return;
  options(&o);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  for (i = 0; i < 500; i++)
    OK(tu_put_one(db, "k:", i, "old"));
  OK(wcs_snapshot_new(db, &s0));
  seq0 = wcs_snapshot_seq(s0);
  OK(wcs_prebuild_start(db, 0, &pb));
  ownInit(&w, db, pb, 64 * 1024, 16 * 1024);
  for (i = 250; i < 1250; i++)
    ownRow(&w, NULL, "k:", i, "pre");
  OK(tu_put_one(db, "z:", 1, "between")); /* below the reserved seq */
  OK(wcs_snapshot_new(db, &s1));
  OK(wcs_iter_new(db, NULL, &it));
  OK(ownCommit(&w));
  OK(wcs_snapshot_new(db, &s2));
  ck_assert_uint_eq(wcs_snapshot_seq(s2), seq0 + WCS_PREBUILD_SEQ_GAP);

  checkKey(db, s0, "k:", 300, "old");
  checkKey(db, s0, "k:", 800, NULL);
  checkKey(db, s0, "z:", 1, NULL);
  ck_assert_int_eq(countKeys(db, s0), 500);
  checkKey(db, s1, "k:", 300, "old");
  checkKey(db, s1, "k:", 249, "old");
  checkKey(db, s1, "k:", 1249, NULL);
  checkKey(db, s1, "z:", 1, "between");
  ck_assert_int_eq(countKeys(db, s1), 501);
  ck_assert_int_eq(iterCount(it), 501);
  tu_key_of(k, "k:", 300);
  OK(wcs_iter_seek(it, k, strlen(k)));
  ck_assert(wcs_iter_valid(it));
  {
    size_t n;
    const char *p = wcs_iter_value(it, &n);
    ck_assert(n >= 3 && memcmp(p, "old", 3) == 0);
  }
  tu_key_of(k, "k:", 700);
  OK(wcs_iter_seek(it, k, strlen(k)));
  ck_assert(wcs_iter_valid(it));
  {
    size_t n;
    const char *p = wcs_iter_key(it, &n);
    ck_assert(n >= 2 && memcmp(p, "z:", 2) == 0); /* k:000700 is not there */
  }
  /* after the commit */
  for (i = 0; i < 1250; i += 7) {
    checkKey(db, NULL, "k:", i, i < 250 ? "old" : "pre");
    checkKey(db, s2, "k:", i, i < 250 ? "old" : "pre");
  }
  checkKey(db, s2, "z:", 1, "between");
  ck_assert_int_eq(countKeys(db, s2), 1251);
  ck_assert_int_eq(countKeys(db, NULL), 1251);
  /* compactions keep what each snapshot sees */
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  checkKey(db, s0, "k:", 300, "old");
  checkKey(db, s1, "k:", 499, "old");
  checkKey(db, s1, "k:", 500, NULL);
  ck_assert_int_eq(countKeys(db, s0), 500);
  ck_assert_int_eq(countKeys(db, s1), 501);
  ck_assert_int_eq(countKeys(db, s2), 1251);
  checkKey(db, NULL, "k:", 300, "pre");
  /* the iterator, refreshed, sees it all */
  OK(wcs_iter_refresh(it));
  ck_assert_int_eq(iterCount(it), 1251);
  wcs_iter_free(it);
  wcs_snapshot_free(db, s0);
  wcs_snapshot_free(db, s1);
  wcs_snapshot_free(db, s2);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

/* Payloads the stream cannot take. */
enum {
  BAD_ORDER,     /* a key below the run's last */
  BAD_DUPLICATE, /* the run's last key again */
  BAD_DEL_PUT,   /* a delete and then a put of one key */
  BAD_RANGEDEL,  /* a range delete */
  BAD_RANGEDEL_OPEN,
  BAD_OP,        /* an operation code no batch has */
  BAD_NINE_RUNS, /* nine run prefixes */
  BAD_SHORT_KEY, /* a key shorter than the run prefix */
  BAD_NO_OPS,    /* a whole payload, but committed as nOp 0 */
  BAD_N
};
static const char *const azBad[BAD_N] = {
    "key out of order", "repeated key",      "delete then put",
    "range delete",     "open range delete", "unknown op",
    "nine runs",        "short key",         "no operations"};

/*
** A store with older data gets a prebuild of two interleaved runs that
** breaks a rule (eBad) after 800 good rows, with 300 more after it,
** offered in steps. The commit declines, nothing is written (keys, the
** "ingests" statistic) and every file the worker wrote is gone; then a
** good prebuild goes in.
*/
static void declineCase(int eBad) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pb = NULL;
  Owner w;
  Model m = {0};
  const char *zDir = tu_tmpdir("prebuild_decline");
  char zDirCopy[1024], *zBefore, v[128];
  int i;
  snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  options(&o);
  o.bNoBackground = 1; /* no compaction changes the files meanwhile */
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  for (i = 0; i < 100; i++) {
    OK(tu_put_one(db, "a:", i, "old"));
    modelSet(&m, "a:", i, "old");
  }
  OK(wcs_db_flush(db));
  OK(tu_put_one(db, "b:", 5000, "old")); /* in the memtable */
  modelSet(&m, "b:", 5000, "old");
  zBefore = tableFiles(zDirCopy);
  OK(wcs_prebuild_start(db, 2, &pb));
  ownInit(&w, db, pb, 32 * 1024, 8 * 1024);
  for (i = 1000; i < 1800; i++) {
    ownRow(&w, NULL, "a:", i, "new");
    ownRow(&w, NULL, "b:", i, "new");
  }
  switch (eBad) {
  case BAD_ORDER:
    ownRow(&w, NULL, "a:", 1500, "new");
    break;
  case BAD_DUPLICATE:
    ownRow(&w, NULL, "a:", i - 1, "again");
    break;
  case BAD_DEL_PUT:
    ownRow(&w, NULL, "a:", i, NULL);
    ownRow(&w, NULL, "a:", i, "again");
    i++;
    break;
  case BAD_RANGEDEL:
    ownRaw(&w, WAL_OP_RANGEDEL, "a:x", 3, "a:y", 3);
    break;
  case BAD_RANGEDEL_OPEN:
    ownRaw(&w, WAL_OP_RANGEDEL_OPEN, "a:x", 3, NULL, 0);
    break;
  case BAD_OP:
    tu_val_of(v, "new", 0);
    ownRaw(&w, 9, "a:x", 3, v, strlen(v));
    break;
  case BAD_NINE_RUNS: {
    char c;
    for (c = 'c'; c <= 'i'; c++) {
      char zPre[3] = {c, ':', 0};
      ownRow(&w, NULL, zPre, 1, "new");
    }
    break;
  }
  case BAD_SHORT_KEY:
    ownRaw(&w, WAL_OP_PUT, "a", 1, "x", 1);
    break;
  default:
    break;
  }
  for (; i < 2100; i++) {
    ownRow(&w, NULL, "a:", i, "new");
    ownRow(&w, NULL, "b:", i, "new");
  }
  if (eBad == BAD_NO_OPS) w.nOp = 0;
  ck_assert_msg(ownCommit(&w) == WCS_NOTFOUND, "%s: not declined", azBad[eBad]);
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 0);
  checkKey(db, NULL, "a:", 1000, NULL);
  checkKey(db, NULL, "b:", 1999, NULL);
  checkModel(db, NULL, &m);
  checkSameFiles(zDirCopy, zBefore, azBad[eBad]);
  ck_assert_int_eq(sstFiles(zDirCopy), liveFiles(db));

  /* the store goes on: a good prebuild, the same reserved seq */
  OK(wcs_prebuild_start(db, 2, &pb));
  ownInit(&w, db, pb, 32 * 1024, 8 * 1024);
  for (i = 1000; i < 1300; i++) {
    ownRow(&w, &m, "a:", i, "good");
    ownRow(&w, &m, "b:", i, "good");
  }
  OK(ownCommit(&w));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
  checkModel(db, NULL, &m);
  ck_assert_int_eq(sstFiles(zDirCopy), liveFiles(db));
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  free(zBefore);
  modelFree(&m);
  tu_rmrf(zDirCopy);
}

START_TEST(test_prebuild_declines_what_the_stream_cannot_take) {
  int eBad;
  if (!haveCores()) return;
  for (eBad = 0; eBad < BAD_N; eBad++)
    declineCase(eBad);
}
END_TEST

/* A put and then a delete of one key in a run is a repeated key: within
** a run the keys must strictly increase. The two entries take one
** sequence number, and the put's sorts first: installed, the key would
** read as put although the batch deletes it last. */
START_TEST(test_prebuild_declines_a_put_then_a_delete_of_one_key) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pb = NULL;
  Owner w;
  const char *zDir = tu_tmpdir("prebuild_putdel");
  int i, rc;
  if (!haveCores()) return;
  options(&o);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  OK(wcs_prebuild_start(db, 0, &pb));
  ownInit(&w, db, pb, 32 * 1024, 8 * 1024);
  for (i = 0; i < 300; i++) {
    ownRow(&w, NULL, "k:", i, "new");
    if (i == 150) ownRow(&w, NULL, "k:", i, NULL);
  }
  rc = ownCommit(&w);
  if (rc == WCS_OK) {
    const char *zGot = tu_get_str(db, NULL, "k:000150");
    ck_assert_msg(zGot == NULL,
                  "committed, and k:000150, deleted last, reads %s", zGot);
  }
  ck_assert_int_eq(rc, WCS_NOTFOUND);
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 0);
  ck_assert_int_eq(countKeys(db, NULL), 0);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

/*
** Keys out of order (bDup 0: k:0 k:2 k:1 k:3) or repeated (1: k:0 k:1 k:1
** k:2) where a run's file is cut: values larger than a file put every
** entry into a file of its own, so the key breaking the order is always
** the first of a new file. The commit must decline, write nothing, and
** leave the store taking writes. (Within a file the sorted-file builder
** refuses keys out of order; the first key of a new file has nothing to
** be compared with.)
*/
static void cutCase(int bDup) {
  static const int aOrder[2][4] = {{0, 2, 1, 3}, {0, 1, 1, 2}};
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pb = NULL;
  Owner w;
  const char *zDir = tu_tmpdir("prebuild_cut");
  char zDirCopy[1024], *zBefore, *zErr;
  uint8_t *pBig;
  size_t nBig = 20 * 1024; /* above nFileBytes */
  int i, rc, rcPut;
  snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  pBig = malloc(nBig);
  ck_assert_ptr_nonnull(pBig);
  tu_seed(0);
  options(&o);
  o.bNoBackground = 1;
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  zBefore = tableFiles(zDirCopy);
  OK(wcs_prebuild_start(db, 0, &pb));
  ownInit(&w, db, pb, 128 * 1024, 1);
  for (i = 0; i < 4; i++) {
    char k[64];
    tu_key_of(k, "k:", aOrder[bDup][i]);
    tu_rand_bytes(pBig, nBig);
    pBig[0] = (uint8_t)('0' + i); /* the op's place in the payload */
    ownRaw(&w, WAL_OP_PUT, k, strlen(k), pBig, nBig);
  }
  rc = ownCommit(&w);
  if (rc == WCS_OK && bDup) {
    /* the batch's later put of k:1 must win */
    void *p = NULL;
    size_t n = 0;
    OK(wcs_db_get(db, NULL, "k:000001", 8, &p, &n));
    ck_assert_ptr_nonnull(p);
    ck_assert_msg(((uint8_t *)p)[0] == '2',
                  "committed, and k:000001 reads the first of its puts");
    wcs_free(p);
  }
  zErr = strdup(wcs_errmsg(db));
  rcPut = tu_put_one(db, "z:", 1, "after"); /* the store still takes writes */
  ck_assert_msg(rc == WCS_NOTFOUND && rcPut == WCS_OK,
                "commit -> %d (%s); a put after it -> %d", rc, zErr, rcPut);
  free(zErr);
  checkKey(db, NULL, "z:", 1, "after");
  ck_assert_int_eq(countKeys(db, NULL), 1);
  checkSameFiles(zDirCopy, zBefore, bDup ? "repeated" : "out of order");
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  free(zBefore);
  free(pBig);
  tu_rmrf(zDirCopy);
}

START_TEST(test_prebuild_declines_a_key_out_of_order_at_a_file_cut) {
  if (!haveCores()) return;
  cutCase(0);
}
END_TEST

START_TEST(test_prebuild_declines_a_repeated_key_at_a_file_cut) {
  if (!haveCores()) return;
  cutCase(1);
}
END_TEST

/* Two prebuilds started back to back reserve one sequence number: the
** first commit takes it, the second declines having written nothing, and
** its owner commits the batch the usual way. */
START_TEST(test_prebuild_second_of_two_on_one_seq_declines) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pbA = NULL, *pbB = NULL;
  Owner wA, wB;
  Model m = {0};
  const char *zDir = tu_tmpdir("prebuild_two");
  char zDirCopy[1024];
  uint64_t seq0;
  int i, nLive;
  if (!haveCores()) return;
  snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  options(&o);
  o.bNoBackground = 1;
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  OK(tu_put_one(db, "m:", 1, "old"));
  modelSet(&m, "m:", 1, "old");
  seq0 = lastSeq(db);
  OK(wcs_prebuild_start(db, 2, &pbA));
  OK(wcs_prebuild_start(db, 2, &pbB));
  ownInit(&wA, db, pbA, 16 * 1024, 8 * 1024);
  ownInit(&wB, db, pbB, 16 * 1024, 8 * 1024);
  for (i = 0; i < 1000; i++) {
    ownRow(&wA, &m, "a:", i, "A");
    ownRow(&wB, NULL, "b:", i, "B");
  }
  OK(ownCommit(&wA));
  ck_assert_uint_eq(lastSeq(db), seq0 + WCS_PREBUILD_SEQ_GAP);
  nLive = liveFiles(db);
  /* B's worker wrote its files (they are in the directory beside A's);
  ** the commit finds its seq taken */
  NOTFOUND(wcs_prebuild_commit(pbB, wB.a, wB.n, wB.nOp));
  wB.pb = NULL;
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
  ck_assert_uint_eq(lastSeq(db), seq0 + WCS_PREBUILD_SEQ_GAP);
  checkKey(db, NULL, "b:", 0, NULL);
  checkKey(db, NULL, "b:", 999, NULL);
  checkModel(db, NULL, &m);
  ck_assert_int_eq(liveFiles(db), nLive);
  ck_assert_int_eq(sstFiles(zDirCopy), nLive); /* B's files are gone */
  /* the owner's fallback */
  OK(ownWrite(&wB, 2));
  for (i = 0; i < 1000; i++)
    modelSet(&m, "b:", i, "B");
  checkModel(db, NULL, &m);
  ck_assert_uint_gt(lastSeq(db), seq0 + WCS_PREBUILD_SEQ_GAP);
  /* a new prebuild reserves above all that and wins */
  OK(wcs_prebuild_start(db, 2, &pbA));
  ownInit(&wA, db, pbA, 16 * 1024, 8 * 1024);
  for (i = 0; i < 100; i++) {
    ownRow(&wA, &m, "a:", i, "A2");
    ownRow(&wA, &m, "b:", i, "B2");
  }
  OK(ownCommit(&wA));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 2);
  checkModel(db, NULL, &m);
  ck_assert_int_eq(sstFiles(zDirCopy), liveFiles(db));
  reopenCheckEnd(db, zDirCopy, &o, &m);
}
END_TEST

/* Abandoned prebuilds: right after the start, after the worker wrote
** files, and after a withdrawal. Nothing is written and nothing is left. */
START_TEST(test_prebuild_abandon_leaves_nothing) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pb = NULL;
  Owner w;
  const char *zDir = tu_tmpdir("prebuild_abandon");
  char zDirCopy[1024], *zBefore;
  int i;
  if (!haveCores()) return;
  snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  options(&o);
  o.bNoBackground = 1;
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  OK(tu_put_one(db, "m:", 1, "old"));
  OK(wcs_db_flush(db));
  zBefore = tableFiles(zDirCopy);

  OK(wcs_prebuild_start(db, 2, &pb));
  wcs_prebuild_abandon(pb);
  checkSameFiles(zDirCopy, zBefore, "abandoned at once");

  OK(wcs_prebuild_start(db, 2, &pb));
  ownInit(&w, db, pb, 256 * 1024, 8 * 1024);
  for (i = 0; i < 1000; i++) {
    ownRow(&w, NULL, "a:", i, "new");
    ownRow(&w, NULL, "b:", i, "new");
  }
  ck_assert(waitNewFile(zDirCopy, zBefore));
  for (; i < 1500; i++) {
    ownRow(&w, NULL, "a:", i, "new");
    ownRow(&w, NULL, "b:", i, "new");
  }
  wcs_prebuild_abandon(pb);
  free(w.a);
  checkSameFiles(zDirCopy, zBefore, "abandoned while writing");

  OK(wcs_prebuild_start(db, 0, &pb));
  ownInit(&w, db, pb, 256 * 1024, 8 * 1024);
  for (i = 0; i < 1000; i++)
    ownRow(&w, NULL, "a:", i, "new");
  wcs_prebuild_offer(pb, NULL, 0);
  memset(w.a, 0xEE, w.nAlloc);
  free(w.a);
  wcs_prebuild_abandon(pb);
  checkSameFiles(zDirCopy, zBefore, "abandoned after a withdrawal");

  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 0);
  ck_assert_int_eq(countKeys(db, NULL), 1);
  checkKey(db, NULL, "m:", 1, "old");
  checkKey(db, NULL, "a:", 0, NULL);
  /* and a prebuild after them goes in */
  OK(wcs_prebuild_start(db, 0, &pb));
  ownInit(&w, db, pb, 64 * 1024, 8 * 1024);
  for (i = 0; i < 500; i++)
    ownRow(&w, NULL, "a:", i, "good");
  OK(ownCommit(&w));
  checkKey(db, NULL, "a:", 499, "good");
  ck_assert_int_eq(countKeys(db, NULL), 501);
  ck_assert_int_eq(sstFiles(zDirCopy), liveFiles(db));
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  free(zBefore);
  tu_rmrf(zDirCopy);
}
END_TEST

/* The commit's payload is the truth: more bytes than were offered are
** read at the commit; fewer than the worker read already, or a payload
** ending inside an operation, decline. */
START_TEST(test_prebuild_commit_with_more_or_fewer_bytes_than_offered) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pb = NULL;
  Owner w;
  Model m = {0};
  const char *zDir = tu_tmpdir("prebuild_bytes");
  char zDirCopy[1024], *zBefore;
  size_t nHalf = 0;
  int i, nOpHalf = 0;
  if (!haveCores()) return;
  snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  options(&o);
  o.bNoBackground = 1;
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));

  /* a third offered, the rest at the commit */
  OK(wcs_prebuild_start(db, 2, &pb));
  ownInit(&w, db, pb, 512 * 1024, 0);
  for (i = 0; i < 1500; i++) {
    ownRow(&w, &m, "a:", i, "one");
    ownRow(&w, &m, "b:", i, "one");
    if (i == 500) ownOffer(&w);
  }
  ck_assert_uint_lt(w.nOffered, w.n / 2);
  OK(ownCommit(&w));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
  checkModel(db, NULL, &m);

  /* nothing offered at all before the commit */
  OK(wcs_prebuild_start(db, 2, &pb));
  ownInit(&w, db, pb, 512 * 1024, 0);
  for (i = 2000; i < 2500; i++) {
    ownRow(&w, &m, "a:", i, "two");
    ownRow(&w, &m, "b:", i, "two");
  }
  OK(ownCommit(&w));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 2);
  checkModel(db, NULL, &m);

  /* all offered and read, then a commit of half of it */
  zBefore = tableFiles(zDirCopy);
  OK(wcs_prebuild_start(db, 2, &pb));
  ownInit(&w, db, pb, 512 * 1024, 0);
  for (i = 3000; i < 4000; i++) {
    ownRow(&w, NULL, "a:", i, "three");
    ownRow(&w, NULL, "b:", i, "three");
    if (i == 3500) {
      nHalf = w.n;
      nOpHalf = w.nOp;
    }
  }
  ck_assert_uint_lt(w.n, 256 * 1024); /* one slice of the worker's */
  ownOffer(&w);
  ck_assert(waitNewFile(zDirCopy, zBefore)); /* it copied the offer */
  NOTFOUND(wcs_prebuild_commit(pb, w.a, nHalf, nOpHalf));
  free(w.a);
  checkSameFiles(zDirCopy, zBefore, "shrunk");
  checkKey(db, NULL, "a:", 3000, NULL);

  /* a payload ending inside an operation */
  OK(wcs_prebuild_start(db, 2, &pb));
  ownInit(&w, db, pb, 512 * 1024, 8 * 1024);
  for (i = 3000; i < 3500; i++) {
    ownRow(&w, NULL, "a:", i, "four");
    ownRow(&w, NULL, "b:", i, "four");
  }
  NOTFOUND(wcs_prebuild_commit(pb, w.a, w.n - 3, w.nOp));
  free(w.a);
  checkSameFiles(zDirCopy, zBefore, "torn");

  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 2);
  checkModel(db, NULL, &m);
  ck_assert_int_eq(sstFiles(zDirCopy), liveFiles(db));
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  free(zBefore);
  modelFree(&m);
  tu_rmrf(zDirCopy);
}
END_TEST

/* A process that logs a write, starts a prebuild, logs another while it
** fills it, commits it, logs a write over it and dies without closing:
** all of it is there at the reopen, the last logged write (its seq above
** the reserved one) winning. */
START_TEST(test_prebuild_survives_a_process_killed_after_the_commit) {
  wcs_db *db = NULL;
  wcs_options o;
  const char *zDir = tu_tmpdir("prebuild_crash");
  char zDirCopy[1024];
  Model m = {0};
  pid_t pid;
  int st, i;
  if (!haveCores()) return;
  snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  options(&o);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    wcs_prebuild *pb = NULL;
    Owner w;
    if (wcs_db_open(&db, zDirCopy, &o, NULL)) _exit(2);
    if (tu_put_one(db, "m:", 1, "logged")) _exit(3);
    if (wcs_prebuild_start(db, 2, &pb)) _exit(4);
    ownInit(&w, db, pb, 64 * 1024, 16 * 1024);
    for (i = 0; i < 2000; i++) {
      ownRow(&w, NULL, "a:", i, "pre");
      ownRow(&w, NULL, "b:", i, "pre");
      if (i == 1000 && tu_put_one(db, "m:", 3, "between")) _exit(3);
    }
    if (ownCommit(&w)) _exit(5);
    if (tu_put_one(db, "a:", 7, "after")) _exit(6);
    if (tu_put_one(db, "m:", 2, "logged")) _exit(6);
    kill(getpid(), SIGKILL);
    _exit(7);
  }
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child: status %d",
                st);
  for (i = 0; i < 2000; i++) {
    modelSet(&m, "a:", i, i == 7 ? "after" : "pre");
    modelSet(&m, "b:", i, "pre");
  }
  modelSet(&m, "m:", 1, "logged");
  modelSet(&m, "m:", 2, "logged");
  modelSet(&m, "m:", 3, "between");
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  checkModel(db, NULL, &m);
  ck_assert_uint_gt(lastSeq(db), WCS_PREBUILD_SEQ_GAP + 1);
  /* writes after the reopen still win */
  OK(tu_put_one(db, "b:", 9, "reopened"));
  OK(wcs_db_flush(db));
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  modelSet(&m, "b:", 9, "reopened");
  checkModel(db, NULL, &m);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  modelFree(&m);
  tu_rmrf(zDirCopy);
}
END_TEST

/* A process killed while it offers a payload whose files the worker is
** writing: at the reopen none of it is there, and its files are gone. */
START_TEST(test_prebuild_killed_while_offering_leaves_nothing) {
  wcs_db *db = NULL;
  wcs_options o;
  const char *zDir = tu_tmpdir("prebuild_kill");
  char zDirCopy[1024];
  pid_t pid;
  int st, nLive, nLeft;
  if (!haveCores()) return;
  snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  options(&o);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    wcs_prebuild *pb = NULL;
    Owner w;
    char *zBefore;
    int i;
    if (wcs_db_open(&db, zDirCopy, &o, NULL)) _exit(2);
    for (i = 0; i < 300; i++) {
      if (tu_put_one(db, "m:", i, "logged")) _exit(3);
    }
    if (wcs_db_flush(db)) _exit(3);
    if (tu_put_one(db, "m:", 1000, "logged")) _exit(3);
    zBefore = tableFiles(zDirCopy);
    if (wcs_prebuild_start(db, 2, &pb)) _exit(4);
    ownInit(&w, db, pb, 64 * 1024, 16 * 1024);
    for (i = 0; i < 1500; i++) {
      ownRow(&w, NULL, "a:", i, "pre");
      ownRow(&w, NULL, "b:", i, "pre");
    }
    if (!waitNewFile(zDirCopy, zBefore)) _exit(5);
    for (; i < 3000; i++) {
      ownRow(&w, NULL, "a:", i, "pre");
      ownRow(&w, NULL, "b:", i, "pre");
    }
    kill(getpid(), SIGKILL);
    _exit(7);
  }
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child: status %d",
                st);
  nLeft = sstFiles(zDirCopy);
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  nLive = liveFiles(db);
  ck_assert_int_gt(nLeft, nLive); /* the worker's files were there */
  ck_assert_int_eq(sstFiles(zDirCopy), nLive); /* and are swept */
  ck_assert_int_eq(countKeys(db, NULL), 301);
  checkKey(db, NULL, "m:", 299, "logged");
  checkKey(db, NULL, "m:", 1000, "logged");
  checkKey(db, NULL, "a:", 0, NULL);
  checkKey(db, NULL, "b:", 1499, NULL);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDirCopy);
}
END_TEST

/* After a prebuild, the last sequence number is its reserved one: later
** ordinary writes of its keys win, in memory, after compactions and after
** a reopen; and a prebuild after them wins over them in turn. */
START_TEST(test_prebuild_later_writes_win_and_survive_reopens) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pb = NULL;
  Owner w;
  Model m = {0};
  const char *zDir = tu_tmpdir("prebuild_later");
  char zDirCopy[1024];
  uint64_t seq0;
  int i;
  if (!haveCores()) return;
  snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  options(&o);
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  seq0 = lastSeq(db);
  OK(wcs_prebuild_start(db, 0, &pb));
  ownInit(&w, db, pb, 64 * 1024, 16 * 1024);
  for (i = 0; i < 2000; i++)
    ownRow(&w, &m, "k:", i, "pre");
  OK(ownCommit(&w));
  for (i = 0; i < 100; i++) {
    OK(tu_put_one(db, "k:", i, "after"));
    modelSet(&m, "k:", i, "after");
  }
  for (i = 100; i < 120; i++) {
    char k[64];
    tu_key_of(k, "k:", i);
    OK(wcs_db_delete(db, k, strlen(k)));
    modelSet(&m, "k:", i, NULL);
  }
  ck_assert_uint_eq(lastSeq(db), seq0 + WCS_PREBUILD_SEQ_GAP + 120);
  checkModel(db, NULL, &m);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  db = NULL;
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  ck_assert_uint_eq(lastSeq(db), seq0 + WCS_PREBUILD_SEQ_GAP + 120);
  checkModel(db, NULL, &m);
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  checkModel(db, NULL, &m);
  for (i = 50; i < 150; i++) {
    OK(tu_put_one(db, "k:", i, "reopened"));
    modelSet(&m, "k:", i, "reopened");
  }
  checkModel(db, NULL, &m);
  /* a prebuild over all of it, then the reopen */
  seq0 = lastSeq(db);
  OK(wcs_prebuild_start(db, 0, &pb));
  ownInit(&w, db, pb, 64 * 1024, 16 * 1024);
  for (i = 0; i < 2000; i += 2)
    ownRow(&w, &m, "k:", i, "pre2");
  OK(ownCommit(&w));
  ck_assert_uint_eq(lastSeq(db), seq0 + WCS_PREBUILD_SEQ_GAP);
  checkModel(db, NULL, &m);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  db = NULL;
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  checkModel(db, NULL, &m);
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  checkModel(db, NULL, &m);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  modelFree(&m);
  tu_rmrf(zDirCopy);
}
END_TEST

/* Binary keys of many lengths (some prefixes of others, some holding 00
** and ff bytes) with values from empty to several blocks long, in one
** run: each reads back exactly, and a scan returns them in order. */
typedef struct BKey {
  uint8_t a[48];
  int n;
  int nVal;
} BKey;

static int cmpBKey(const void *a, const void *b) {
  const BKey *x = a, *y = b;
  int n = x->n < y->n ? x->n : y->n, c = memcmp(x->a, y->a, (size_t)n);
  if (c) return c;
  return x->n - y->n;
}

/* Value of key k: nVal bytes, a function of the key. */
static void bVal(const BKey *k, uint8_t *p) {
  int i;
  for (i = 0; i < k->nVal; i++)
    p[i] = (uint8_t)(k->a[i % k->n] * 31 + i);
}

START_TEST(test_prebuild_binary_keys_and_values_of_many_sizes) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pb = NULL;
  wcs_iter *it = NULL;
  Owner w;
  const char *zDir = tu_tmpdir("prebuild_binary");
  enum { NKEY = 1500 };
  BKey *aKey = calloc(NKEY, sizeof(BKey));
  uint8_t aVal[5000];
  int i, j, n = 0, rc;
  if (!haveCores()) {
    free(aKey);
    return;
  }
  ck_assert_ptr_nonnull(aKey);
  tu_seed(0);
  for (i = 0; i < NKEY; i++) {
    BKey *k = &aKey[i];
    if (i > 0 && tu_rand_range(4) == 0) {
      *k = aKey[i - 1]; /* a key extending the previous one */
      if (k->n < 40) k->n += 1 + (int)tu_rand_range(8);
      for (j = aKey[i - 1].n; j < k->n; j++)
        k->a[j] = (uint8_t)tu_rand_range(256);
    } else {
      k->n = 1 + (int)tu_rand_range(40);
      for (j = 0; j < k->n; j++) {
        int r = (int)tu_rand_range(4);
        k->a[j] = r == 0 ? 0 : r == 1 ? 0xff : (uint8_t)tu_rand_range(256);
      }
    }
    k->nVal = tu_rand_range(5) == 0 ? 0 : (int)tu_rand_range(sizeof aVal);
  }
  qsort(aKey, NKEY, sizeof(BKey), cmpBKey);
  for (i = 0; i < NKEY; i++) { /* drop repeats */
    if (n > 0 && cmpBKey(&aKey[n - 1], &aKey[i]) == 0) continue;
    aKey[n++] = aKey[i];
  }
  options(&o);
  OK(wcs_db_open(&db, zDir, &o, NULL));
  OK(wcs_prebuild_start(db, 0, &pb));
  ownInit(&w, db, pb, 64 * 1024, 32 * 1024);
  for (i = 0; i < n; i++) {
    bVal(&aKey[i], aVal);
    ownRaw(&w, WAL_OP_PUT, aKey[i].a, (size_t)aKey[i].n, aVal,
           (size_t)aKey[i].nVal);
  }
  OK(ownCommit(&w));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
  ck_assert_int_gt(tu_level_files(db, 6), 10);
  for (i = 0; i < n; i++) {
    void *p = NULL;
    size_t nV = 0;
    OK(wcs_db_get(db, NULL, aKey[i].a, (size_t)aKey[i].n, &p, &nV));
    ck_assert_msg(p != NULL, "key %d absent", i);
    bVal(&aKey[i], aVal);
    ck_assert_uint_eq(nV, (size_t)aKey[i].nVal);
    ck_assert(nV == 0 || memcmp(p, aVal, nV) == 0);
    wcs_free(p);
  }
  OK(wcs_iter_new(db, NULL, &it));
  i = 0;
  for (rc = wcs_iter_first(it); wcs_iter_valid(it); rc = wcs_iter_next(it)) {
    size_t nK, nV;
    const void *pK = wcs_iter_key(it, &nK);
    const void *pV = wcs_iter_value(it, &nV);
    ck_assert_int_lt(i, n);
    ck_assert_uint_eq(nK, (size_t)aKey[i].n);
    ck_assert(memcmp(pK, aKey[i].a, nK) == 0);
    bVal(&aKey[i], aVal);
    ck_assert_uint_eq(nV, (size_t)aKey[i].nVal);
    ck_assert(nV == 0 || memcmp(pV, aVal, nV) == 0);
    i++;
  }
  ck_assert_int_eq(rc, WCS_OK);
  ck_assert_int_eq(i, n);
  wcs_iter_free(it);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  free(aKey);
  tu_rmrf(zDir);
}
END_TEST

/* An in-memory store: the files go to its memory env. */
START_TEST(test_prebuild_in_memory_store) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pb = NULL;
  wcs_snapshot *s = NULL;
  Owner w;
  Model m = {0}, m0 = {0};
  int i;
  if (!haveCores()) return;
  options(&o);
  o.bInMemory = 1;
  OK(wcs_db_open(&db, NULL, &o, NULL));
  for (i = 0; i < 200; i++) {
    OK(tu_put_one(db, "a:", i, "old"));
    modelSet(&m, "a:", i, "old");
    modelSet(&m0, "a:", i, "old");
  }
  OK(wcs_snapshot_new(db, &s));
  OK(wcs_prebuild_start(db, 2, &pb));
  ownInit(&w, db, pb, 16 * 1024, 8 * 1024);
  for (i = 0; i < 1000; i++) {
    ownRow(&w, &m, "a:", i, i % 2 ? "new" : NULL);
    ownRow(&w, &m, "b:", i, "new");
  }
  OK(ownCommit(&w));
  ck_assert_uint_eq(tu_db_stat(db, "ingests"), 1);
  checkModel(db, NULL, &m);
  checkModel(db, s, &m0);
  OK(wcs_db_compact_range(db, NULL, 0, NULL, 0));
  checkModel(db, NULL, &m);
  checkModel(db, s, &m0);
  wcs_snapshot_free(db, s);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  modelFree(&m);
  modelFree(&m0);
}
END_TEST

/* Where no prebuild is offered: a read-only store, a run prefix longer
** than the stream takes. */
START_TEST(test_prebuild_start_is_refused_where_unavailable) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_prebuild *pb = NULL;
  const char *zDir = tu_tmpdir("prebuild_refused");
  char zDirCopy[1024];
  snprintf(zDirCopy, sizeof zDirCopy, "%s", zDir);
  options(&o);
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  OK(tu_put_one(db, "k:", 1, "old"));
  NOTFOUND(wcs_prebuild_start(db, 17, &pb));
  ck_assert_ptr_null(pb);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  db = NULL;
  o.bReadOnly = 1;
  OK(wcs_db_open(&db, zDirCopy, &o, NULL));
  NOTFOUND(wcs_prebuild_start(db, 0, &pb));
  ck_assert_ptr_null(pb);
  checkKey(db, NULL, "k:", 1, "old");
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDirCopy);
}
END_TEST

Suite *storage_prebuild_suite(void) {
  Suite *s = suite_create("storage_prebuild");
  TCase *tc = tcase_create("prebuild");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc,
                 test_prebuild_interleaved_runs_offered_in_pieces_read_back);
  tcase_add_test(tc, test_prebuild_deletes_and_puts_over_older_data);
  tcase_add_test(tc,
                 test_prebuild_is_invisible_to_earlier_snapshots_and_iterators);
  tcase_add_test(tc, test_prebuild_declines_what_the_stream_cannot_take);
  tcase_add_test(tc, test_prebuild_declines_a_put_then_a_delete_of_one_key);
  tcase_add_test(tc, test_prebuild_declines_a_key_out_of_order_at_a_file_cut);
  tcase_add_test(tc, test_prebuild_declines_a_repeated_key_at_a_file_cut);
  tcase_add_test(tc, test_prebuild_second_of_two_on_one_seq_declines);
  tcase_add_test(tc, test_prebuild_abandon_leaves_nothing);
  tcase_add_test(tc,
                 test_prebuild_commit_with_more_or_fewer_bytes_than_offered);
  tcase_add_test(tc, test_prebuild_survives_a_process_killed_after_the_commit);
  tcase_add_test(tc, test_prebuild_killed_while_offering_leaves_nothing);
  tcase_add_test(tc, test_prebuild_later_writes_win_and_survive_reopens);
  tcase_add_test(tc, test_prebuild_binary_keys_and_values_of_many_sizes);
  tcase_add_test(tc, test_prebuild_in_memory_store);
  tcase_add_test(tc, test_prebuild_start_is_refused_where_unavailable);
  suite_add_tcase(s, tc);
  return s;
}
