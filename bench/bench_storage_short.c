/*
** bench_storage_short.c — the cost of short reads on a layered store.
**
** The SQL layer reads one row by making a fresh store iterator, seeking to
** the row and reading a key or a few (wcs_iter_new + wcs_iter_seek +
** wcs_iter_next + wcs_iter_free). This program builds a store whose data
** sits in every place a read must look — the memtable, two level-0 files,
** levels 1 and 2, and the last level — and times, per operation:
**
**   get        wcs_db_get of a random existing key
**   iter       wcs_iter_new (no options) + seek + one next + free
**   iterpfx    the same with pPrefix = the key (blooms may skip files)
**   iterrow    the same with pPrefix = the key's row (first 12 bytes),
**              bloom prefix = 12 bytes: the engine's shape
**   openrow    wcs_iter_new with the row prefix + wcs_iter_free alone
**   seek       seek + one next on one long-lived iterator
**   refresh    wcs_iter_refresh + seek + one next on one iterator
**   retarget   wcs_iter_retarget to the key's row prefix + seek + one next
**              on one iterator (what the engine does per point row)
**
** Usage: bench_storage_short [-n KEYS] [-q READS] [-d DIR]
**   KEYS (default 400000) 16-byte keys with 100-byte values; READS
**   (default 200000) operations per measurement. Prints one line per
**   measurement: "SHORT op=NAME ns_per_op=... ops=...".
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wcs.h"

static double now_secs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(wcs_db *db, int rc, const char *zWhat) {
  if (rc != WCS_OK) {
    fprintf(stderr, "%s: %s (%s)\n", zWhat, wcs_errstr(rc),
            db ? wcs_errmsg(db) : "");
    exit(1);
  }
}

static uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Key i: 12-byte row + 4-byte column, zero-padded decimal. */
static void make_key(char *z, uint64_t i) {
  char a[32];
  snprintf(a, sizeof a, "%012llu%04llu", (unsigned long long)(i / 4),
           (unsigned long long)(i % 4));
  memcpy(z, a, 16);
}

static int bloomRow(const void *pKey, int nKey) {
  (void)pKey;
  return nKey >= 12 ? 12 : -1;
}

/* Put keys [from, to) in a scrambled order, 1000 per batch. */
static void load(wcs_db *db, uint64_t from, uint64_t to, uint64_t nAll) {
  wcs_batch *b = NULL;
  char k[16], v[100];
  uint64_t i;
  check(db, wcs_batch_new(&b), "batch");
  for (i = from; i < to; i++) {
    uint64_t x = splitmix(i) % nAll;
    int j;
    make_key(k, x);
    for (j = 0; j < 100; j++)
      v[j] =
          (char)(j < 50 ? 'a' + (splitmix(i * 131 + (uint64_t)j) % 26) : 'x');
    check(db, wcs_batch_put(b, k, 16, v, 100), "put");
    if (wcs_batch_count(b) >= 1000) {
      check(db, wcs_db_write(db, b), "write");
      wcs_batch_clear(b);
    }
  }
  if (wcs_batch_count(b)) check(db, wcs_db_write(db, b), "write");
  wcs_batch_free(b);
}

/* Wait until the background compactions stop changing the file layout. */
static void settle(wcs_db *db) {
  char *zPrev = NULL;
  int nSame = 0;
  while (nSame < 4) {
    char *z = NULL, *p;
    check(db, wcs_db_stats(db, &z), "stats");
    /* ignore cache counters: compare the "levels" part only */
    p = strstr(z, "\"memtable_bytes\"");
    if (p) *p = 0;
    if (zPrev && strcmp(z, zPrev) == 0) {
      nSame++;
    } else {
      nSame = 0;
    }
    wcs_free(zPrev);
    zPrev = z;
    usleep(250000);
  }
  wcs_free(zPrev);
}

static void report(const char *zOp, double secs, uint64_t n) {
  printf("SHORT op=%s ns_per_op=%.0f ops=%llu\n", zOp, secs * 1e9 / (double)n,
         (unsigned long long)n);
  fflush(stdout);
}

int main(int argc, char **argv) {
  uint64_t nKeys = 400000, nReads = 200000, i, nHit = 0;
  const char *zDir = "./bench-short-data";
  wcs_options o;
  wcs_db *db = NULL;
  char *zErr = NULL, *zStats = NULL, zCmd[512];
  char k[16];
  double t;
  int c, iPass;
  while ((c = getopt(argc, argv, "n:q:d:")) != -1) {
    switch (c) {
    case 'n':
      nKeys = strtoull(optarg, NULL, 10);
      break;
    case 'q':
      nReads = strtoull(optarg, NULL, 10);
      break;
    case 'd':
      zDir = optarg;
      break;
    default:
      fprintf(stderr, "usage: %s [-n KEYS] [-q READS] [-d DIR]\n", argv[0]);
      return 2;
    }
  }
  snprintf(zCmd, sizeof zCmd, "rm -rf '%s'", zDir);
  if (system(zCmd) != 0) return 1;
  wcs_options_init(&o);
  o.nMemtable = 16u << 20;
  o.nCache = 64u << 20;
  o.nL1Bytes = 4u << 20;
  o.nFileBytes = 1u << 20;
  o.nL0Trigger = 8;
  o.nL0Stop = 24;
  o.xBloomPrefix = bloomRow;
  if (wcs_db_open(&db, zDir, &o, &zErr) != WCS_OK) {
    fprintf(stderr, "open: %s\n", zErr ? zErr : "?");
    return 1;
  }
  /* the last level, then levels 1-2, two level-0 files, the memtable */
  load(db, 0, nKeys, nKeys);
  check(db, wcs_db_compact_range(db, NULL, 0, NULL, 0), "compact");
  load(db, nKeys, nKeys + nKeys / 2, nKeys);
  check(db, wcs_db_flush(db), "flush");
  settle(db);
  load(db, 2 * nKeys, 2 * nKeys + nKeys / 20, nKeys);
  check(db, wcs_db_flush(db), "flush");
  load(db, 3 * nKeys, 3 * nKeys + nKeys / 20, nKeys);
  check(db, wcs_db_flush(db), "flush");
  settle(db);
  load(db, 4 * nKeys, 4 * nKeys + nKeys / 20, nKeys);
  check(db, wcs_db_stats(db, &zStats), "stats");
  printf("STORE %s\n", zStats);
  wcs_free(zStats);

  for (iPass = 0; iPass < 2; iPass++) { /* pass 0 warms the cache */
    int bShow = iPass == 1;
    t = now_secs();
    for (i = 0; i < nReads; i++) {
      void *pVal = NULL;
      size_t nVal = 0;
      make_key(k, splitmix(i + 1000003) % nKeys);
      check(db, wcs_db_get(db, NULL, k, 16, &pVal, &nVal), "get");
      nHit += pVal != NULL;
      wcs_free(pVal);
    }
    if (bShow) report("get", now_secs() - t, nReads);

    for (c = 0; c < 3; c++) {
      const char *azOp[3] = {"iter", "iterpfx", "iterrow"};
      t = now_secs();
      for (i = 0; i < nReads; i++) {
        wcs_iter_options io;
        wcs_iter *it = NULL;
        memset(&io, 0, sizeof io);
        make_key(k, splitmix(i + 2000003) % nKeys);
        if (c > 0) {
          io.pPrefix = k;
          io.nPrefix = c == 1 ? 16 : 12;
        }
        check(db, wcs_iter_new(db, &io, &it), "iter_new");
        check(db, wcs_iter_seek(it, k, 16), "seek");
        nHit +=
            wcs_iter_valid(it) && memcmp(wcs_iter_key(it, NULL), k, 16) == 0;
        check(db, wcs_iter_next(it), "next");
        wcs_iter_free(it);
      }
      if (bShow) report(azOp[c], now_secs() - t, nReads);
    }

    t = now_secs();
    for (i = 0; i < nReads; i++) {
      wcs_iter_options io;
      wcs_iter *it = NULL;
      memset(&io, 0, sizeof io);
      make_key(k, splitmix(i + 5000003) % nKeys);
      io.pPrefix = k;
      io.nPrefix = 12;
      check(db, wcs_iter_new(db, &io, &it), "iter_new");
      wcs_iter_free(it);
    }
    if (bShow) report("openrow", now_secs() - t, nReads);

    {
      wcs_iter *it = NULL;
      check(db, wcs_iter_new(db, NULL, &it), "iter_new");
      t = now_secs();
      for (i = 0; i < nReads; i++) {
        make_key(k, splitmix(i + 3000003) % nKeys);
        check(db, wcs_iter_seek(it, k, 16), "seek");
        nHit += wcs_iter_valid(it);
        check(db, wcs_iter_next(it), "next");
      }
      if (bShow) report("seek", now_secs() - t, nReads);
      t = now_secs();
      for (i = 0; i < nReads; i++) {
        make_key(k, splitmix(i + 4000003) % nKeys);
        check(db, wcs_iter_refresh(it), "refresh");
        check(db, wcs_iter_seek(it, k, 16), "seek");
        nHit += wcs_iter_valid(it);
        check(db, wcs_iter_next(it), "next");
      }
      if (bShow) report("refresh", now_secs() - t, nReads);
      t = now_secs();
      for (i = 0; i < nReads; i++) {
        wcs_iter_options io;
        memset(&io, 0, sizeof io);
        make_key(k, splitmix(i + 2000003) % nKeys);
        io.pPrefix = k;
        io.nPrefix = 12;
        check(db, wcs_iter_retarget(it, &io), "retarget");
        check(db, wcs_iter_seek(it, k, 16), "seek");
        nHit +=
            wcs_iter_valid(it) && memcmp(wcs_iter_key(it, NULL), k, 16) == 0;
        check(db, wcs_iter_next(it), "next");
      }
      if (bShow) report("retarget", now_secs() - t, nReads);
      wcs_iter_free(it);
    }
  }
  printf("HITS %llu\n", (unsigned long long)nHit);
  check(db, wcs_db_close(db), "close");
  if (system(zCmd) != 0) return 1;
  return 0;
}
