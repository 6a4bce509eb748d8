/*
** bench_engine.c — throughput of the engine (the Tables API): writing rows
** of 3 families x 2 qualifiers, reading them back by full scan and by key
** prefix (one family read versus all three), point reads of single rows by
** full key, short scans, and latest-version scans of many-version columns.
**
** Usage: bench_engine [rows] [dir] [workloads]
**   rows       default 200000
**   dir        a store directory; "-" or absent: a temporary one, removed
**   workloads  comma list of scan,prefix,point,short,versions (default:
**              all; point1 / point3: only the one-family / all-family
**              point reads); the write phase always runs
** Prints one line per measurement and a JSON summary line. Timed phases
** are repeated (WCS_BENCH_REPS, default 5) and the median is reported, as
** the machines this runs on are shared and noisy.
**
** The goal (issue: engine) is that reading one family costs at most half
** of reading all three: each family is its own key range, so the other
** two are never touched. Point reads look like the SQL module's point
** lookup: one cursor opened per key (as xFilter does), random existing
** keys, nVersions 1, and are timed with data in sorted files, a level-0
** file and the memtable.
**
** Row keys: "tenant%03d#user%07d" (100 tenants); values: 32 random bytes.
** Writes go in transactions of 1000 rows (one store batch each). Scans run
** after a flush and a full compaction so they come from sorted files;
** point reads and short scans run after 1% of the rows were rewritten and
** flushed into a level-0 file and another 1% left in the memtable.
** The versions workload writes a second table with one column of 50
** versions per row and scans it with nVersions 1 (latest only) and 0.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdint.h>
#include <unistd.h>

#include "wcs.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(wcs_engine *e, const char *zWhat) {
  fprintf(stderr, "bench_engine: %s: %s\n", zWhat,
          e ? wcs_engine_errmsg(e) : "");
  exit(1);
}

static int g_nRep = 5; /* repetitions of each timed phase (median) */

static int dbl_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *a, int n) {
  qsort(a, (size_t)n, sizeof(double), dbl_cmp);
  return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

static uint64_t g_rand = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  g_rand ^= g_rand << 13;
  g_rand ^= g_rand >> 7;
  g_rand ^= g_rand << 17;
  return g_rand;
}

static int row_key(char *z, size_t n, int i) {
  return snprintf(z, n, "tenant%03d#user%07d", i % 100, i / 100);
}

/* Timed phases stay out of line so a profiler can single them out
** (valgrind --toggle-collect=point_reads). */
#define NOINLINE __attribute__((noinline))

/* Scan with the given families and ranges; returns rows and cells. */
static NOINLINE void scan(wcs_engine *e, wcs_table *t, const char *const *az,
                          int nFam, const wcs_key_range *r, int nR,
                          int nVersions, uint64_t *pnRows, uint64_t *pnCells) {
  wcs_read_options o;
  wcs_cursor *c = NULL;
  uint64_t nRows = 0, nCells = 0, sum = 0;
  wcs_read_options_init(&o);
  o.azFamily = az;
  o.nFamily = nFam;
  o.aRange = r;
  o.nRange = nR;
  o.nVersions = nVersions;
  if (wcs_cursor_open(&c, t, NULL, &o)) die(e, "cursor");
  while (!wcs_cursor_eof(c)) {
    int n, i;
    const wcs_cell *a = wcs_cursor_cells(c, &n);
    for (i = 0; i < n; i++)
      sum += a[i].nVal;
    nRows++;
    nCells += (uint64_t)n;
    if (wcs_cursor_next(c)) die(e, "next");
  }
  wcs_cursor_close(c);
  *pnRows = nRows;
  *pnCells = nCells + (sum == 0xFFFFFFFFFFFFull);
}

/* Median seconds of g_nRep scans. */
static NOINLINE double time_scan(wcs_engine *e, wcs_table *t,
                                 const char *const *az, int nFam,
                                 const wcs_key_range *r, int nR, int nVersions,
                                 uint64_t *pnRows, uint64_t *pnCells) {
  double a[64];
  int i, n = g_nRep < 64 ? g_nRep : 64;
  for (i = 0; i < n; i++) {
    double t0 = now_s();
    scan(e, t, az, nFam, r, nR, nVersions, pnRows, pnCells);
    a[i] = now_s() - t0;
  }
  return median(a, n);
}

/* nPoint point reads of random existing rows, one cursor each (as the SQL
** module's xFilter opens one); returns seconds. */
static NOINLINE double point_reads(wcs_engine *e, wcs_table *t,
                                   const char *const *az, int nFam, int nRows,
                                   int nPoint, uint64_t *pnCells) {
  double t0 = now_s();
  int i;
  uint64_t nCells = 0;
  for (i = 0; i < nPoint; i++) {
    char zRow[40];
    int nRow = row_key(zRow, sizeof(zRow), (int)(rnd() % (uint64_t)nRows));
    wcs_key_range r;
    uint64_t m, c;
    memset(&r, 0, sizeof(r));
    r.pStart = r.pEnd = zRow;
    r.nStart = r.nEnd = (size_t)nRow;
    r.bEndIncl = 1;
    scan(e, t, az, nFam, &r, 1, 1, &m, &c);
    if (m != 1) die(e, "point read missed");
    nCells += c;
  }
  *pnCells = nCells;
  return now_s() - t0;
}

/* nScan scans of 10 consecutive rows (a "user" decade of one tenant). */
static NOINLINE double short_scans(wcs_engine *e, wcs_table *t,
                                   const char *const *az, int nFam, int nRows,
                                   int nScan, uint64_t *pnRows) {
  double t0 = now_s();
  int i, nDecade = nRows / 1000;
  uint64_t nAll = 0;
  for (i = 0; i < nScan; i++) {
    char zLo[40], zHi[40];
    int iTen = (int)(rnd() % 100), iDec = (int)(rnd() % (uint64_t)nDecade);
    wcs_key_range r;
    uint64_t m, c;
    memset(&r, 0, sizeof(r));
    r.pStart = zLo;
    r.nStart =
        (size_t)snprintf(zLo, sizeof(zLo), "tenant%03d#user%06d", iTen, iDec);
    r.pEnd = zHi;
    r.nEnd = (size_t)snprintf(zHi, sizeof(zHi), "tenant%03d#user%06d", iTen,
                              iDec + 1);
    scan(e, t, az, nFam, &r, 1, 1, &m, &c);
    nAll += m;
  }
  *pnRows = nAll;
  return now_s() - t0;
}

static void write_rows(wcs_engine *e, wcs_table *t, int iFrom, int nRows,
                       int nStep, int64_t iTs) {
  static const char *azFam[3] = {"f0", "f1", "f2"};
  static const char *azQual[2] = {"q0", "q1"};
  wcs_txn *x = NULL;
  unsigned char aVal[32];
  int i, f, q, nInTxn = 0;
  if (wcs_txn_begin(e, 0, &x)) die(e, "begin");
  for (i = iFrom; i < nRows; i += nStep) {
    char zRow[40];
    int nRow = row_key(zRow, sizeof(zRow), i);
    for (f = 0; f < 3; f++) {
      for (q = 0; q < 2; q++) {
        int k;
        for (k = 0; k < 32; k++)
          aVal[k] = (unsigned char)rnd();
        if (wcs_txn_set_cell(x, t, zRow, (size_t)nRow, azFam[f], azQual[q], 2,
                             iTs, aVal, sizeof(aVal))) {
          die(e, "set_cell");
        }
      }
    }
    if (++nInTxn == 1000) {
      if (wcs_txn_commit(x)) die(e, "commit");
      nInTxn = 0;
    }
  }
  if (wcs_txn_commit(x)) die(e, "commit");
  wcs_txn_free(x);
}

static int has(const char *zList, const char *zWord) {
  size_t n = strlen(zWord);
  const char *p = zList;
  if (zList == NULL) return 1;
  while ((p = strstr(p, zWord)) != NULL) {
    if ((p == zList || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
    p += n;
  }
  return 0;
}

int main(int argc, char **argv) {
  int nRows = argc > 1 ? atoi(argv[1]) : 200000;
  const char *zOnly = argc > 3 ? argv[3] : NULL;
  int bTmp = argc <= 2 || strcmp(argv[2], "-") == 0;
  char zDir[512];
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_options opt;
  char *zErr = NULL;
  int i;
  double t0, tWrite, tAll = 0, tOne = 0, tPreAll = 0, tPreOne = 0;
  double usPointOne = 0, usPointAll = 0, tVer1 = 0, tVerAll = 0;
  uint64_t n, nPre, nCells;
  static const char *azFam[3] = {"f0", "f1", "f2"};
  wcs_key_range r;
  char zPre[32];

  if (getenv("WCS_BENCH_REPS")) g_nRep = atoi(getenv("WCS_BENCH_REPS"));
  if (g_nRep < 1) g_nRep = 1;
  if (nRows < 1000) nRows = 1000;
  if (!bTmp) {
    snprintf(zDir, sizeof(zDir), "%s", argv[2]);
  } else {
    const char *zTmp = getenv("TMPDIR");
    snprintf(zDir, sizeof(zDir), "%s/wcs-bench-engine-%d", zTmp ? zTmp : "/tmp",
             (int)getpid());
  }
  wcs_options_init(&opt);
  if (wcs_engine_open_path(&e, zDir, &opt, &zErr)) {
    fprintf(stderr, "bench_engine: open %s: %s\n", zDir, zErr ? zErr : "?");
    return 1;
  }
  if (wcs_table_create(e, "bench",
                       "KEY (tenant STRING, user STRING) "
                       "DELIMITED BY '#', FAMILY f0, FAMILY f1, "
                       "FAMILY f2",
                       &t)) {
    die(e, "create");
  }

  /* write */
  t0 = now_s();
  write_rows(e, t, 0, nRows, 1, 1000000);
  tWrite = now_s() - t0;
  printf("write          %8d rows  %7.3f s  %10.0f rows/s  (3 families x 2 "
         "qualifiers, 32-byte values)\n",
         nRows, tWrite, nRows / tWrite);

  if (wcs_db_flush(wcs_engine_db(e))) die(e, "flush");
  if (wcs_db_compact_range(wcs_engine_db(e), NULL, 0, NULL, 0)) {
    die(e, "compact");
  }

  if (has(zOnly, "scan")) {
    tAll = time_scan(e, t, NULL, 0, NULL, 0, 1, &n, &nCells);
    printf("scan all 3     %8llu rows  %7.3f s  %10.0f rows/s\n",
           (unsigned long long)n, tAll, n / tAll);
    tOne = time_scan(e, t, azFam + 1, 1, NULL, 0, 1, &n, &nCells);
    printf("scan 1 family  %8llu rows  %7.3f s  %10.0f rows/s  (%.2fx the "
           "cost of all 3)\n",
           (unsigned long long)n, tOne, n / tOne, tOne / tAll);
  }

  /* prefix: 10 tenants of 100, as a key range each */
  if (has(zOnly, "prefix")) {
    nPre = 0;
    for (i = 0; i < 10; i++) {
      uint64_t m;
      static char zEnd[32];
      memset(&r, 0, sizeof(r));
      snprintf(zPre, sizeof(zPre), "tenant%03d#", i * 10);
      r.pStart = zPre;
      r.nStart = strlen(zPre);
      /* [prefix, prefix with '#' -> '$') */
      snprintf(zEnd, sizeof(zEnd), "tenant%03d$", i * 10);
      r.pEnd = zEnd;
      r.nEnd = strlen(zEnd);
      tPreAll += time_scan(e, t, NULL, 0, &r, 1, 1, &m, &nCells);
      nPre += m;
      tPreOne += time_scan(e, t, azFam + 1, 1, &r, 1, 1, &m, &nCells);
    }
    printf("prefix all 3   %8llu rows  %7.3f s  %10.0f rows/s  (10 tenant "
           "prefixes)\n",
           (unsigned long long)nPre, tPreAll, nPre / tPreAll);
    printf("prefix 1 fam   %8llu rows  %7.3f s  %10.0f rows/s  (%.2fx the "
           "cost of all 3)\n",
           (unsigned long long)nPre, tPreOne, nPre / tPreOne,
           tPreOne / tPreAll);
  }

  /* rewrite 1% of the rows into a level-0 file, another 1% stays in the
  ** memtable: a point read now sees memtable, level 0 and the last level */
  if (has(zOnly, "point") || has(zOnly, "point1") || has(zOnly, "point3") ||
      has(zOnly, "short")) {
    write_rows(e, t, 7, nRows, 100, 2000000);
    if (wcs_db_flush(wcs_engine_db(e))) die(e, "flush");
    write_rows(e, t, 53, nRows, 100, 3000000);
  }

  /* point reads of whole rows by full key (bloom-prefixed); "point1" and
  ** "point3" run one of the two (for profiling) */
  if (has(zOnly, "point") || has(zOnly, "point1") || has(zOnly, "point3")) {
    int nPoint = nRows < 20000 ? nRows : 20000;
    int b1 = !has(zOnly, "point3") || has(zOnly, "point");
    int b3 = !has(zOnly, "point1") || has(zOnly, "point");
    double aOne[64], aAll[64];
    int nR = g_nRep < 64 ? g_nRep : 64;
    uint64_t c1 = 0, c3 = 0;
    for (i = 0; i < nR; i++) {
      if (b1) aOne[i] = point_reads(e, t, azFam + 1, 1, nRows, nPoint, &c1);
      if (b3) aAll[i] = point_reads(e, t, NULL, 0, nRows, nPoint, &c3);
    }
    if (b1) {
      usPointOne = median(aOne, nR) * 1e6 / nPoint;
      printf("point 1 family %8d rows  %7.2f us/row  %10.0f rows/s  (%llu "
             "cells)\n",
             nPoint, usPointOne, 1e6 / usPointOne, (unsigned long long)c1);
    }
    if (b3) {
      usPointAll = median(aAll, nR) * 1e6 / nPoint;
      printf("point all 3    %8d rows  %7.2f us/row  %10.0f rows/s  (%llu "
             "cells)\n",
             nPoint, usPointAll, 1e6 / usPointAll, (unsigned long long)c3);
    }
  }

  /* short scans: 10 consecutive rows, one cursor each */
  if (has(zOnly, "short")) {
    int nScan = 5000;
    double aOne[64], aAll[64], tS1, tS3;
    int nR = g_nRep < 64 ? g_nRep : 64;
    uint64_t m1 = 0, m3 = 0;
    for (i = 0; i < nR; i++) {
      aOne[i] = short_scans(e, t, azFam + 1, 1, nRows, nScan, &m1);
      aAll[i] = short_scans(e, t, NULL, 0, nRows, nScan, &m3);
    }
    tS1 = median(aOne, nR);
    tS3 = median(aAll, nR);
    printf("short 1 family %8d scans %7.2f us/scan %9.0f rows/s  (10 rows "
           "each)\n",
           nScan, tS1 * 1e6 / nScan, m1 / tS1);
    printf("short all 3    %8d scans %7.2f us/scan %9.0f rows/s\n", nScan,
           tS3 * 1e6 / nScan, m3 / tS3);
  }

  /* many versions per column: latest-only scans should skip the rest */
  if (has(zOnly, "versions")) {
    wcs_table *h = NULL;
    wcs_txn *x = NULL;
    int nHRows = nRows / 20, nVer = 50, v;
    uint64_t nC1 = 0, nCA = 0, nR1 = 0, nRA = 0;
    if (wcs_table_create(e, "hist", "KEY (k STRING), FAMILY h", &h)) {
      die(e, "create hist");
    }
    for (v = 0; v < nVer; v++) {
      if (wcs_txn_begin(e, 0, &x)) die(e, "begin");
      for (i = 0; i < nHRows; i++) {
        char zRow[40];
        unsigned char aVal[16];
        int nRow = snprintf(zRow, sizeof(zRow), "k%08d", i), k;
        for (k = 0; k < 16; k++)
          aVal[k] = (unsigned char)rnd();
        if (wcs_txn_set_cell(x, h, zRow, (size_t)nRow, "h", "c", 1, 1000000 + v,
                             aVal, sizeof(aVal))) {
          die(e, "set_cell");
        }
        if (i % 1000 == 999 && wcs_txn_commit(x)) die(e, "commit");
      }
      if (wcs_txn_commit(x)) die(e, "commit");
      wcs_txn_free(x);
    }
    if (wcs_db_flush(wcs_engine_db(e))) die(e, "flush");
    if (wcs_db_compact_range(wcs_engine_db(e), NULL, 0, NULL, 0)) {
      die(e, "compact");
    }
    tVer1 = time_scan(e, h, NULL, 0, NULL, 0, 1, &nR1, &nC1);
    tVerAll = time_scan(e, h, NULL, 0, NULL, 0, 0, &nRA, &nCA);
    printf("latest of 50   %8llu rows  %7.3f s  %10.0f rows/s  (%llu cells)"
           "\n",
           (unsigned long long)nR1, tVer1, nR1 / tVer1,
           (unsigned long long)nC1);
    printf("all 50 vers.   %8llu rows  %7.3f s  %10.0f rows/s  (%llu cells)"
           "\n",
           (unsigned long long)nRA, tVerAll, nRA / tVerAll,
           (unsigned long long)nCA);
    wcs_table_close(h);
    wcs_table_drop(e, "hist");
  }

  printf("{\"bench\":\"engine\",\"rows\":%d,\"write_rows_s\":%.0f,"
         "\"scan_all_rows_s\":%.0f,\"scan_one_rows_s\":%.0f,"
         "\"scan_one_vs_all\":%.3f,\"prefix_one_vs_all\":%.3f,"
         "\"point_one_us\":%.2f,\"point_all_us\":%.2f,"
         "\"latest_of_50_rows_s\":%.0f}\n",
         nRows, nRows / tWrite, tAll > 0 ? nRows / tAll : 0,
         tOne > 0 ? nRows / tOne : 0, tAll > 0 ? tOne / tAll : 0,
         tPreAll > 0 ? tPreOne / tPreAll : 0, usPointOne, usPointAll,
         tVer1 > 0 ? (nRows / 20) / tVer1 : 0);

  wcs_table_close(t);
  wcs_table_drop(e, "bench");
  wcs_engine_close(e);
  if (bTmp) {
    char zCmd[600];
    snprintf(zCmd, sizeof(zCmd), "rm -rf '%s'", zDir);
    if (system(zCmd) != 0) fprintf(stderr, "could not remove %s\n", zDir);
  }
  return 0;
}
