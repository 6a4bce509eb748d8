/*
** bench_engine.c — throughput of the engine (the Tables API): writing rows
** of 3 families x 2 qualifiers, and reading them back by full scan and by
** key prefix, with one family read versus all three.
**
** Usage: bench_engine [rows] [dir]   (default 200000 rows, a temporary
** directory). Prints one line per measurement and a JSON summary line.
** The goal (issue: engine) is that reading one family costs at most half
** of reading all three: each family is its own key range, so the other
** two are never touched.
**
** Row keys: "tenant%03d#user%07d" (100 tenants); values: 32 random bytes.
** Writes go in transactions of 1000 rows (one store batch each). Reads
** are repeated after a flush and a full compaction so they come from
** sorted files, as a cold-ish store would serve them.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

/* Scan with the given families and ranges; returns rows and cells. */
static void scan(wcs_engine *e, wcs_table *t, const char *const *az, int nFam,
                 const wcs_key_range *r, int nR, uint64_t *pnRows,
                 uint64_t *pnCells) {
  wcs_read_options o;
  wcs_cursor *c = NULL;
  uint64_t nRows = 0, nCells = 0, sum = 0;
  wcs_read_options_init(&o);
  o.azFamily = az;
  o.nFamily = nFam;
  o.aRange = r;
  o.nRange = nR;
  o.nVersions = 1;
  if (wcs_cursor_open(&c, t, NULL, &o)) die(e, "cursor");
  while (!wcs_cursor_eof(c)) {
    int n, i;
    const wcs_cell *a = wcs_cursor_cells(c, &n);
    for (i = 0; i < n; i++) sum += a[i].nVal;
    nRows++;
    nCells += (uint64_t)n;
    if (wcs_cursor_next(c)) die(e, "next");
  }
  wcs_cursor_close(c);
  *pnRows = nRows;
  *pnCells = nCells + (sum == 0xFFFFFFFFFFFFull);
}

static double best_of(wcs_engine *e, wcs_table *t, const char *const *az,
                      int nFam, const wcs_key_range *r, int nR, int nRep,
                      uint64_t *pnRows) {
  double best = 1e30;
  int i;
  for (i = 0; i < nRep; i++) {
    uint64_t nRows, nCells;
    double t0 = now_s(), dt;
    scan(e, t, az, nFam, r, nR, &nRows, &nCells);
    dt = now_s() - t0;
    if (dt < best) best = dt;
    *pnRows = nRows;
  }
  return best;
}

int main(int argc, char **argv) {
  int nRows = argc > 1 ? atoi(argv[1]) : 200000;
  char zDir[512];
  wcs_engine *e = NULL;
  wcs_table *t = NULL;
  wcs_txn *x = NULL;
  wcs_options opt;
  char *zErr = NULL;
  int i, f, q;
  double t0, tWrite, tAll, tOne, tPreAll, tPreOne;
  uint64_t n, nPre;
  static const char *azFam[3] = {"f0", "f1", "f2"};
  static const char *azQual[2] = {"q0", "q1"};
  wcs_key_range r;
  char zPre[32];
  unsigned char aVal[32];
  uint64_t seed = 0x9E3779B97F4A7C15ull;

  if (argc > 2) {
    snprintf(zDir, sizeof(zDir), "%s", argv[2]);
  } else {
    const char *zTmp = getenv("TMPDIR");
    snprintf(zDir, sizeof(zDir), "%s/wcs-bench-engine-%d",
             zTmp ? zTmp : "/tmp", (int)getpid());
  }
  wcs_options_init(&opt);
  if (wcs_engine_open_path(&e, zDir, &opt, &zErr)) {
    fprintf(stderr, "bench_engine: open %s: %s\n", zDir, zErr ? zErr : "?");
    return 1;
  }
  if (wcs_table_create(e, "bench", "KEY (tenant STRING, user STRING) "
                                   "DELIMITED BY '#', FAMILY f0, FAMILY f1, "
                                   "FAMILY f2",
                       &t)) {
    die(e, "create");
  }

  /* write */
  t0 = now_s();
  if (wcs_txn_begin(e, 0, &x)) die(e, "begin");
  for (i = 0; i < nRows; i++) {
    char zRow[40];
    int nRow = snprintf(zRow, sizeof(zRow), "tenant%03d#user%07d", i % 100,
                        i / 100);
    for (f = 0; f < 3; f++) {
      for (q = 0; q < 2; q++) {
        int k;
        for (k = 0; k < 32; k++) {
          seed ^= seed << 13;
          seed ^= seed >> 7;
          seed ^= seed << 17;
          aVal[k] = (unsigned char)seed;
        }
        if (wcs_txn_set_cell(x, t, zRow, (size_t)nRow, azFam[f], azQual[q], 2,
                             1000000, aVal, sizeof(aVal))) {
          die(e, "set_cell");
        }
      }
    }
    if (i % 1000 == 999 && wcs_txn_commit(x)) die(e, "commit");
  }
  if (wcs_txn_commit(x)) die(e, "commit");
  wcs_txn_free(x);
  tWrite = now_s() - t0;
  printf("write          %8d rows  %7.3f s  %10.0f rows/s  (3 families x 2 "
         "qualifiers, 32-byte values)\n",
         nRows, tWrite, nRows / tWrite);

  if (wcs_db_flush(wcs_engine_db(e))) die(e, "flush");
  if (wcs_db_compact_range(wcs_engine_db(e), NULL, 0, NULL, 0)) {
    die(e, "compact");
  }

  tAll = best_of(e, t, NULL, 0, NULL, 0, 3, &n);
  printf("scan all 3     %8llu rows  %7.3f s  %10.0f rows/s\n",
         (unsigned long long)n, tAll, n / tAll);
  tOne = best_of(e, t, azFam + 1, 1, NULL, 0, 3, &n);
  printf("scan 1 family  %8llu rows  %7.3f s  %10.0f rows/s  (%.2fx the "
         "cost of all 3)\n",
         (unsigned long long)n, tOne, n / tOne, tOne / tAll);

  /* prefix: 10 tenants of 100, as a key range each */
  {
    double sumAll = 0, sumOne = 0;
    nPre = 0;
    for (i = 0; i < 10; i++) {
      uint64_t m;
      memset(&r, 0, sizeof(r));
      snprintf(zPre, sizeof(zPre), "tenant%03d#", i * 10);
      r.pStart = zPre;
      r.nStart = strlen(zPre);
      r.pEnd = zPre; /* [prefix, prefix with '#' -> '$') */
      {
        static char zEnd[32];
        snprintf(zEnd, sizeof(zEnd), "tenant%03d$", i * 10);
        r.pEnd = zEnd;
        r.nEnd = strlen(zEnd);
      }
      sumAll += best_of(e, t, NULL, 0, &r, 1, 3, &m);
      nPre += m;
      sumOne += best_of(e, t, azFam + 1, 1, &r, 1, 3, &m);
    }
    tPreAll = sumAll;
    tPreOne = sumOne;
    printf("prefix all 3   %8llu rows  %7.3f s  %10.0f rows/s  (10 tenant "
           "prefixes)\n",
           (unsigned long long)nPre, tPreAll, nPre / tPreAll);
    printf("prefix 1 fam   %8llu rows  %7.3f s  %10.0f rows/s  (%.2fx the "
           "cost of all 3)\n",
           (unsigned long long)nPre, tPreOne, nPre / tPreOne,
           tPreOne / tPreAll);
  }

  /* point reads of whole rows (bloom-prefixed) */
  {
    double tp;
    int nPoint = nRows < 20000 ? nRows : 20000;
    t0 = now_s();
    for (i = 0; i < nPoint; i++) {
      char zRow[40];
      int j = (int)((uint64_t)i * 7919 % (uint64_t)nRows);
      int nRow = snprintf(zRow, sizeof(zRow), "tenant%03d#user%07d", j % 100,
                          j / 100);
      uint64_t m, c;
      memset(&r, 0, sizeof(r));
      r.pStart = r.pEnd = zRow;
      r.nStart = r.nEnd = (size_t)nRow;
      r.bEndIncl = 1;
      scan(e, t, NULL, 0, &r, 1, &m, &c);
      if (m != 1) die(e, "point read missed");
    }
    tp = now_s() - t0;
    printf("point row      %8d rows  %7.3f s  %10.0f rows/s\n", nPoint, tp,
           nPoint / tp);
  }
  printf("{\"bench\":\"engine\",\"rows\":%d,\"write_rows_s\":%.0f,"
         "\"scan_all_rows_s\":%.0f,\"scan_one_rows_s\":%.0f,"
         "\"scan_one_vs_all\":%.3f,\"prefix_one_vs_all\":%.3f}\n",
         nRows, nRows / tWrite, nRows / tAll, nRows / tOne, tOne / tAll,
         tPreOne / tPreAll);

  wcs_table_close(t);
  wcs_table_drop(e, "bench");
  wcs_engine_close(e);
  {
    char zCmd[600];
    if (argc <= 2) {
      snprintf(zCmd, sizeof(zCmd), "rm -rf '%s'", zDir);
      if (system(zCmd) != 0) fprintf(stderr, "could not remove %s\n", zDir);
    }
  }
  return 0;
}
