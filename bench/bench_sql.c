/*
** bench_sql.c — the product's headline numbers: the same telemetry rows in a
** wcs virtual table and in a native SQLite table, the same SQL against both,
** measured side by side in one run (issue 5's benchmark table).
**
** USAGE
**   bench_sql [-n ROWS] [-r RUNS] [-d DIR] [-w LIST] [-q SCALE] [-c SIZE] [-f]
**             [-v] [-t] [-k]
**
**   -n ROWS   rows loaded (default 2000000); rounded to a whole number of
**             ids: 4 device types x ids x 365 days
**   -r RUNS   repetitions; every number is the median of the runs (default 3)
**   -d DIR    where the databases are made (default ./bench-sql-data); each
**             run gets fresh files, removed at the end
**   -w LIST   workloads to run, comma separated (default all; the names are
**             those of the result table: sorted,random,point,prefix,range,
**             agg,skip,desc10,distinct,minkey,rows,bytes,raw; and
**             shapes, which only runs when named)
**   -q SCALE  multiply the number of queries per workload (default 1.0)
**   -c SIZE   give the wcs table CACHE 'SIZE' (e.g. 256MiB): its store's
**             block cache budget (default: the store's 64 MiB)
**   -f        also run the sorted load and the queries against "the floor",
**             a virtual table over a sorted in-memory array (see "the
**             floor" below): what SQLite's virtual-table interface costs
**             by itself, so native / floor is the most a virtual table can
**             reach on each workload; and its time for the raw workload's
**             SQL scan, taken beside the raw iterator's passes, so that
**             raw / floor is the most a virtual table can reach on that
**             goal
**   -v        print each run's numbers as they come (and each load's time
**             split into its inserts and its COMMIT)
**   -t        the queries without SQLite's per-statement file locks, on
**             both sides: every statement on a table of a WAL file takes
**             and drops a read lock of its shared memory (two fcntl
**             calls), native and wcs alike. Native reconnects with
**             PRAGMA locking_mode=EXCLUSIVE (the lock taken once, kept);
**             wcs declares the table again in TEMP over its store
**             (CREATE VIRTUAL TABLE temp.m USING wcs(TABLE 'm', STORE
**             ...)), which the statements then read: the in-memory temp
**             schema has no file to lock (BENCHMARKS.md, "What SQLite's
**             file locking costs each query")
**   -k        the queries on the connections that loaded and settled the
**             tables, not new ones: each engine starts from what the load
**             left in its cache (native: its page cache; wcs: the blocks
**             the compaction wrote, as far as the cache had room); not
**             with -t, which reconnects
**
** EXAMPLE
**   ./bench/bench_sql                  # the BENCHMARKS.md run (a few minutes)
**   ./bench/bench_sql -n 200000 -r 1   # a quick look
**
** DATA (the seeds' telemetry shape)
**   key       device#id#yyyymmdd: devices laptop, phone, tablet, watch; ids
**             8 lowercase hex digits, ROWS/(4*365) per device; every day of
**             2023. wcs: KEY (device STRING, id STRING, day INT64 DECIMAL(8))
**             DELIMITED BY '#'.
**   families  stats (cpu INT64, mem INT64) and meta (note STRING); native
**             columns cpu INTEGER, mem INTEGER, note TEXT. cpu 0..99, mem
**             0..16383, note one of a few firmware strings.
**   native    CREATE TABLE ... PRIMARY KEY(device, id, day)) WITHOUT ROWID,
**             journal_mode=WAL, synchronous=NORMAL, cache_size 128 MiB.
**   wcs       SYNC NORMAL (a process crash loses nothing, a power cut may
**             lose the last commits: the same promise as WAL + NORMAL), the
**             store's defaults: 64 MiB memtable + 64 MiB block cache, zstd 3.
**             The connection holding the wcs table also runs WAL + NORMAL.
**
** WORKLOADS (ratio = native time / wcs time, > 1: wcs faster)
**   sorted   all rows in key order, one INSERT statement prepared once, one
**            transaction; timed to the end of COMMIT
**   random   the same rows in a random order, a COMMIT every 10000 rows
**   point    random full-key lookups, prepared, all columns
**   prefix   device=? AND id=? (365 rows each), sum(cpu)
**   range    device=? AND id=? AND day BETWEEN ? AND ? (30 days)
**   agg      SELECT count(*), sum(cpu), max(mem) over the whole table, four
**            times (times SCALE)
**   skip     WHERE id=? alone (native after ANALYZE: skip scan on its
**            primary key); also wcs's own full scan of the same query
**            (WHERE +id=?, which no planner can use): goal >= 100x
**   desc10   device=? AND id=? ORDER BY day DESC LIMIT 10
**   distinct SELECT DISTINCT id WHERE device=? (one row per id of the
**            device; not a goal of the issue: a query shape where a
**            scan of every row would be thousands of times slower)
**   minkey   SELECT min(id) WHERE device=? (one row; the same)
**   rows     SELECT count(*) over the whole table (not a goal either: a
**            statement that reads no column, which wcs answers from the
**            files' notes after the settling step)
**   shapes   (only with -w) a dozen other common statements, each timed
**            as the best of three runs on each engine (a run repeats the
**            statement for 20 ms), which must give the same answer:
**            aggregates by key field, filters on values, scans of a day
**            across devices and ids, both families of one prefix, and
**            joins whose bounds and IN lists SQLite does not know when it
**            plans (azShape below)
**   bytes    bytes on disk after the sorted load and the settling step
**            below: wcs store directory / native database file and WAL
**            (after a checkpoint); also reported right after the load
**   raw      full scan through SQL reading every family (sum(cpu),
**            sum(mem), count(note)) vs the raw storage iterator over the
**            table's keys (wcs_iter bounded to the table, every key and
**            value touched, no SQL), both cold (the SQL scan on a new
**            connection, the iterator on a store just opened read-only)
**            and both warm (a second pass of each, its blocks cached);
**            ratio = raw time / SQL time
**
** Each run: fresh databases, the sorted load for both engines (alternating
** which goes first), then settling: ANALYZE on the native one, SELECT
** wcs_compact('m') on wcs (flush and full compaction; not timed), a new
** connection for each, the queries, the raw scan, bytes, then a fresh
** random-order load for both. The queries of a workload run in NSLICE
** slices, the two engines taking turns slice by slice (each slice its
** own random queries, the same on both), so that a machine whose speed
** drifts over seconds slows both alike; a workload's time on an engine
** is the sum of its slices. Output: one table of
** medians with ratios and issue 5's goals.
*/
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "wcs.h"

#define BENCH_NAME "bench_sql"
#include "benchsql.h"

#define NDEV     4
#define NDAY     365
#define MAX_RUNS 15
#define NSLICE     8     /* slices a workload's queries take turns in */
#define SLICE_SEED 7919u /* slice s seeds its queries with base + s * this */

static const char *azDev[NDEV] = {"laptop", "phone", "tablet", "watch"};
static const char *azNote[4] = {"fw-1.0.3", "fw-1.2.0", "fw-2.0.1", "fw-2.1.7"};

/* ------------------------------------------------------------------ */
/* workloads and results                                               */

enum {
  W_SORTED,
  W_RANDOM,
  W_POINT,
  W_PREFIX,
  W_RANGE,
  W_AGG,
  W_SKIP,
  W_DESC10,
  W_DISTINCT,
  W_MINKEY,
  W_ROWS,
  W_SHAPES,
  W_BYTES,
  W_RAW,
  W_COUNT
};
static const char *azWork[W_COUNT] = {
    "sorted", "random",   "point",  "prefix", "range",  "agg",   "skip",
    "desc10", "distinct", "minkey", "rows",   "shapes", "bytes", "raw"};
static const char *azLabel[W_COUNT] = {
    "bulk load, sorted keys, one transaction",
    "load in random key order",
    "point lookup by full key (prepared)",
    "prefix scan device=? AND id=?",
    "range scan on day after an equal prefix",
    "full-scan aggregate",
    "skip scan WHERE id=? (native after ANALYZE)",
    "ORDER BY day DESC LIMIT 10 for one device+id",
    "SELECT DISTINCT id WHERE device=? (not in the issue)",
    "SELECT min(id) WHERE device=? (not in the issue)",
    "SELECT count(*) FROM m (not in the issue)",
    "other statements (not in the issue)",
    "bytes on disk (wcs / native)",
    "full scan: SQL vs raw storage iterator"};
static const char *azGoal[W_COUNT] = {
    ">= 2x", ">= 4x", ">= 1x", ">= 1x", ">= 1x", ">= 1x",    ">= 1x",
    ">= 1x", ">= 1x", ">= 1x", ">= 1x", ">= 1x", "<= 0.35x", ">= 0.5x"};
static const double aGoal[W_COUNT] = {2, 4, 1, 1, 1, 1,    1,
                                      1, 1, 1, 1, 1, 0.35, 0.5};

typedef struct Result {
  int nRun;
  double aNative[MAX_RUNS]; /* seconds (bytes for W_BYTES) */
  double aWcs[MAX_RUNS];    /* seconds (bytes); W_RAW: SQL scan */
  double aAux[MAX_RUNS];    /* W_SKIP: wcs full scan; W_RAW: raw iterator */
  long nOps;                /* operations per measurement */
} Result;

static Result aRes[W_COUNT];
static double aFloor[W_COUNT][MAX_RUNS]; /* -f: the floor table's seconds */
static int nFloorRun;
static int gbFloor; /* -f given */
static double
    aLeft[MAX_RUNS]; /* bytes wcs/native right after the sorted load */
static int nLeft;
static double aWarm[2][MAX_RUNS]; /* W_RAW, second passes: SQL, raw */
static int nWarm;
static int abWork[W_COUNT];

/* ------------------------------------------------------------------ */
/* helpers                                                             */

static int bVerbose = 0;

static uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static uint64_t rngState = 42;
static uint64_t rnd64(void) {
  return splitmix(rngState++);
}
static long rndN(long n) {
  return (long)(rnd64() % (uint64_t)n);
}

static void stepAll(sqlite3 *db, sqlite3_stmt *st, int64_t *pSum, long *pnRow) {
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (pSum) *pSum += sqlite3_column_int64(st, 0);
    if (pnRow) (*pnRow)++;
  }
  if (rc != SQLITE_DONE) die("step: %s", sqlite3_errmsg(db));
  sqlite3_reset(st);
}

/* Bytes of regular files under a path (recursively). */
static uint64_t diskBytes(const char *zPath) {
  struct stat st;
  uint64_t n = 0;
  if (lstat(zPath, &st) != 0) return 0;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(zPath);
    struct dirent *e;
    if (d == NULL) return 0;
    while ((e = readdir(d)) != NULL) {
      char z[4096];
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(z, sizeof z, "%s/%s", zPath, e->d_name);
      n += diskBytes(z);
    }
    closedir(d);
  } else if (S_ISREG(st.st_mode)) {
    n = (uint64_t)st.st_size;
  }
  return n;
}

static void rmTree(const char *zPath) {
  struct stat st;
  if (lstat(zPath, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(zPath);
    struct dirent *e;
    if (d) {
      while ((e = readdir(d)) != NULL) {
        char z[4096];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
          continue;
        snprintf(z, sizeof z, "%s/%s", zPath, e->d_name);
        rmTree(z);
      }
      closedir(d);
    }
    rmdir(zPath);
  } else {
    unlink(zPath);
  }
}

/* The median of a[0..n-1], a left as it is (NAN for none). */
static double median(const double *a, int n) {
  double t[MAX_RUNS];
  if (n == 0) return NAN;
  memcpy(t, a, sizeof(double) * n);
  return benchMedian(t, n);
}

/* ------------------------------------------------------------------ */
/* the data                                                            */

static long nRow; /* rows: NDEV * nId * NDAY */
static long nId;  /* ids per device */
static int aDay[NDAY];

static void initDays(void) {
  static const int aLen[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int m, d, i = 0;
  for (m = 0; m < 12; m++) {
    for (d = 1; d <= aLen[m]; d++)
      aDay[i++] = 20230000 + (m + 1) * 100 + d;
  }
}

/* Row i in key order: its key fields and values. */
typedef struct Row {
  int iDev;
  char zId[12];
  int day;
  int cpu, mem;
  const char *zNote;
} Row;

static void idText(long j, char *z) {
  /* increasing in j, spread over 32 bits: hex order == j order */
  uint64_t stride = (uint64_t)0xffffffffu / (uint64_t)nId;
  uint64_t v = (uint64_t)j * stride +
               (splitmix((uint64_t)j) % (stride > 1 ? stride - 1 : 1));
  snprintf(z, 12, "%08x", (unsigned)v);
}

static void rowAt(long i, Row *r) {
  long dev = i / (nId * NDAY), j = (i / NDAY) % nId;
  uint64_t h = splitmix((uint64_t)i * 7919u);
  r->iDev = (int)dev;
  idText(j, r->zId);
  r->day = aDay[i % NDAY];
  r->cpu = (int)(h % 100);
  r->mem = (int)((h >> 8) % 16384);
  r->zNote = azNote[(h >> 24) % 4];
}

/* ------------------------------------------------------------------ */
/* the floor: what SQLite's virtual-table interface costs by itself    */

/*
** `-f` adds a third table beside native and wcs: `bench_floor`, a virtual
** table that keeps the rows in a plain sorted C array in memory and plans
** the benchmark's queries exactly (binary search for the full key and the
** device+id prefix, the day range and DESC order inside it, one search
** per device for WHERE id=?). It stores nothing durably and does no key
** encoding, decompression or merging, so its times are what any virtual
** table pays SQLite for xBestIndex/xFilter/xNext/xColumn/xUpdate on these
** statements, and native time / floor time bounds the ratio that a
** virtual table can reach on each workload.
*/
typedef struct FloorRow {
  char zId[9];
  uint8_t iDev, iNote;
  int day, cpu, mem;
} FloorRow;

/* The rows, kept by the process across connections (as a store's files
** would be): CREATE VIRTUAL TABLE empties it, a reconnect finds it. */
static struct FloorData {
  FloorRow *a;
  long n, nAlloc;
  int bSorted;
} gFloor = {NULL, 0, 0, 1};

typedef struct FloorTab {
  sqlite3_vtab base;
  struct FloorData *d;
} FloorTab;

#define FLOOR_DEV    1  /* idxNum bits: device = ? */
#define FLOOR_ID     2  /* id = ? */
#define FLOOR_DAY    4  /* day = ? */
#define FLOOR_DAYLO  8  /* day >= ? */
#define FLOOR_DAYHI  16 /* day <= ? */
#define FLOOR_DESC   32 /* ORDER BY day DESC, consumed */
#define FLOOR_NRANGE NDEV

typedef struct FloorCur {
  sqlite3_vtab_cursor base;
  long aLo[FLOOR_NRANGE], aHi[FLOOR_NRANGE]; /* [lo, hi) per range */
  int nRange, iRange, bDesc;
  long i; /* current row */
} FloorCur;

static void floorReset(void) {
  free(gFloor.a);
  memset(&gFloor, 0, sizeof gFloor);
  gFloor.bSorted = 1;
}

static int floorCmp(const FloorRow *x, int iDev, const char *zId, int day) {
  int c = (int)x->iDev - iDev;
  if (c == 0) c = strcmp(x->zId, zId);
  if (c == 0) c = (x->day > day) - (x->day < day);
  return c;
}

/* First row >= (iDev, zId, day). */
static long floorSeek(struct FloorData *t, int iDev, const char *zId,
                      int day) {
  long lo = 0, hi = t->n;
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    if (floorCmp(&t->a[mid], iDev, zId, day) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int floorRowCmp(const void *pa, const void *pb) {
  const FloorRow *a = pa, *b = pb;
  return floorCmp(a, b->iDev, b->zId, b->day);
}

static int floorConnect(sqlite3 *db, void *pAux, int argc,
                        const char *const *argv, sqlite3_vtab **ppVtab,
                        char **pzErr) {
  FloorTab *t;
  (void)pAux, (void)argc, (void)argv, (void)pzErr;
  if (sqlite3_declare_vtab(db, "CREATE TABLE x(device TEXT, id TEXT, day "
                               "INTEGER, cpu INTEGER, mem INTEGER, note TEXT)"))
    return SQLITE_ERROR;
  t = sqlite3_malloc(sizeof *t);
  if (t == NULL) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->d = &gFloor;
  *ppVtab = &t->base;
  return SQLITE_OK;
}

static int floorCreate(sqlite3 *db, void *pAux, int argc,
                       const char *const *argv, sqlite3_vtab **ppVtab,
                       char **pzErr) {
  floorReset();
  return floorConnect(db, pAux, argc, argv, ppVtab, pzErr);
}

static int floorDisconnect(sqlite3_vtab *p) {
  sqlite3_free(p);
  return SQLITE_OK;
}

static int floorBestIndex(sqlite3_vtab *p, sqlite3_index_info *x) {
  struct FloorData *t = ((FloorTab *)p)->d;
  int i, aArg[5] = {-1, -1, -1, -1, -1}, nArg = 0, m = 0;
  double nRows;
  for (i = 0; i < x->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &x->aConstraint[i];
    int j = -1;
    if (!c->usable) continue;
    if (c->op == SQLITE_INDEX_CONSTRAINT_EQ && c->iColumn >= 0 &&
        c->iColumn <= 2)
      j = c->iColumn;
    else if (c->iColumn == 2 && c->op == SQLITE_INDEX_CONSTRAINT_GE)
      j = 3;
    else if (c->iColumn == 2 && c->op == SQLITE_INDEX_CONSTRAINT_LE)
      j = 4;
    if (j >= 0 && aArg[j] < 0) aArg[j] = i;
  }
  if (aArg[2] >= 0 && (aArg[0] < 0 || aArg[1] < 0)) aArg[2] = -1;
  if (aArg[0] >= 0 && aArg[1] < 0) aArg[0] = -1; /* device alone: full */
  if (aArg[1] < 0 || aArg[2] >= 0) aArg[3] = aArg[4] = -1;
  if (aArg[0] < 0) aArg[3] = aArg[4] = -1;
  for (i = 0; i < 5; i++) {
    if (aArg[i] < 0) continue;
    m |= 1 << i;
    x->aConstraintUsage[aArg[i]].argvIndex = ++nArg;
    x->aConstraintUsage[aArg[i]].omit = 1;
  }
  if (x->nOrderBy == 1 && x->aOrderBy[0].iColumn == 2 && (m & FLOOR_DEV) &&
      (m & FLOOR_ID)) {
    x->orderByConsumed = 1;
    if (x->aOrderBy[0].desc) m |= FLOOR_DESC;
  }
  if (m & FLOOR_DAY) {
    nRows = 1;
    x->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
  } else if (m & FLOOR_DEV) {
    nRows = (m & (FLOOR_DAYLO | FLOOR_DAYHI)) ? 30 : NDAY;
  } else if (m & FLOOR_ID) {
    nRows = NDEV * NDAY;
  } else {
    nRows = t->n > 0 ? (double)t->n : 1e6;
  }
  x->idxNum = m;
  x->estimatedRows = (sqlite3_int64)nRows;
  x->estimatedCost = nRows + ((m & FLOOR_ID) ? 20 : 0);
  return SQLITE_OK;
}

static int floorOpen(sqlite3_vtab *p, sqlite3_vtab_cursor **pp) {
  FloorCur *c = sqlite3_malloc(sizeof *c);
  (void)p;
  if (c == NULL) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *pp = &c->base;
  return SQLITE_OK;
}

static int floorClose(sqlite3_vtab_cursor *p) {
  sqlite3_free(p);
  return SQLITE_OK;
}

static int floorDevOf(const char *z) {
  int d;
  for (d = 0; d < NDEV; d++)
    if (z && strcmp(z, azDev[d]) == 0) return d;
  return -1;
}

static int floorFilter(sqlite3_vtab_cursor *p, int m, const char *zIdx,
                       int argc, sqlite3_value **argv) {
  FloorCur *c = (FloorCur *)p;
  struct FloorData *t = ((FloorTab *)p->pVtab)->d;
  int k = 0, d, iDev = -1, dayLo = 0, dayHi = 99999999;
  const char *zId = NULL;
  (void)zIdx, (void)argc;
  if (!t->bSorted) {
    qsort(t->a, (size_t)t->n, sizeof *t->a, floorRowCmp);
    t->bSorted = 1;
  }
  if (m & FLOOR_DEV) iDev = floorDevOf((const char *)sqlite3_value_text(argv[k++]));
  if (m & FLOOR_ID) zId = (const char *)sqlite3_value_text(argv[k++]);
  if (m & FLOOR_DAY) dayLo = dayHi = sqlite3_value_int(argv[k++]);
  if (m & FLOOR_DAYLO) dayLo = sqlite3_value_int(argv[k++]);
  if (m & FLOOR_DAYHI) dayHi = sqlite3_value_int(argv[k++]);
  c->nRange = 0;
  c->bDesc = (m & FLOOR_DESC) != 0;
  if (!(m & FLOOR_ID)) {
    c->aLo[0] = 0;
    c->aHi[0] = t->n;
    c->nRange = 1;
  } else if (zId && ((m & FLOOR_DEV) == 0 || iDev >= 0)) {
    for (d = (m & FLOOR_DEV) ? iDev : 0; d < NDEV; d++) {
      c->aLo[c->nRange] = floorSeek(t, d, zId, dayLo);
      c->aHi[c->nRange] = floorSeek(t, d, zId, dayHi + 1);
      c->nRange++;
      if (m & FLOOR_DEV) break;
    }
  }
  c->iRange = c->bDesc ? c->nRange - 1 : 0;
  while (c->iRange >= 0 && c->iRange < c->nRange &&
         c->aLo[c->iRange] >= c->aHi[c->iRange])
    c->iRange += c->bDesc ? -1 : 1;
  if (c->iRange >= 0 && c->iRange < c->nRange)
    c->i = c->bDesc ? c->aHi[c->iRange] - 1 : c->aLo[c->iRange];
  return SQLITE_OK;
}

static int floorEof(sqlite3_vtab_cursor *p) {
  FloorCur *c = (FloorCur *)p;
  return c->iRange < 0 || c->iRange >= c->nRange;
}

static int floorNext(sqlite3_vtab_cursor *p) {
  FloorCur *c = (FloorCur *)p;
  if (c->bDesc) {
    if (--c->i >= c->aLo[c->iRange]) return SQLITE_OK;
    while (--c->iRange >= 0 && c->aLo[c->iRange] >= c->aHi[c->iRange]) {
    }
    if (c->iRange >= 0) c->i = c->aHi[c->iRange] - 1;
  } else {
    if (++c->i < c->aHi[c->iRange]) return SQLITE_OK;
    while (++c->iRange < c->nRange &&
           c->aLo[c->iRange] >= c->aHi[c->iRange]) {
    }
    if (c->iRange < c->nRange) c->i = c->aLo[c->iRange];
  }
  return SQLITE_OK;
}

static int floorColumn(sqlite3_vtab_cursor *p, sqlite3_context *ctx, int i) {
  FloorCur *c = (FloorCur *)p;
  const FloorRow *r = &((FloorTab *)p->pVtab)->d->a[c->i];
  switch (i) {
    case 0: sqlite3_result_text(ctx, azDev[r->iDev], -1, SQLITE_STATIC); break;
    case 1: sqlite3_result_text(ctx, r->zId, 8, SQLITE_TRANSIENT); break;
    case 2: sqlite3_result_int(ctx, r->day); break;
    case 3: sqlite3_result_int(ctx, r->cpu); break;
    case 4: sqlite3_result_int(ctx, r->mem); break;
    default: sqlite3_result_text(ctx, azNote[r->iNote], -1, SQLITE_STATIC);
  }
  return SQLITE_OK;
}

static int floorRowid(sqlite3_vtab_cursor *p, sqlite3_int64 *pRowid) {
  *pRowid = ((FloorCur *)p)->i;
  return SQLITE_OK;
}

/* INSERT only: append, keeping track of whether the rows are in order. */
static int floorUpdate(sqlite3_vtab *p, int argc, sqlite3_value **argv,
                       sqlite3_int64 *pRowid) {
  struct FloorData *t = ((FloorTab *)p)->d;
  FloorRow *r;
  const char *zId, *zNote;
  int d, iNote;
  if (argc == 1 || sqlite3_value_type(argv[0]) != SQLITE_NULL) {
    p->zErrMsg = sqlite3_mprintf("bench_floor: INSERT only");
    return SQLITE_ERROR;
  }
  zId = (const char *)sqlite3_value_text(argv[3]);
  zNote = (const char *)sqlite3_value_text(argv[7]);
  d = floorDevOf((const char *)sqlite3_value_text(argv[2]));
  for (iNote = 0; iNote < 4 && zNote && strcmp(zNote, azNote[iNote]); iNote++) {
  }
  if (d < 0 || zId == NULL || strlen(zId) != 8 || iNote == 4) {
    p->zErrMsg = sqlite3_mprintf("bench_floor: not a benchmark row");
    return SQLITE_ERROR;
  }
  if (t->n == t->nAlloc) {
    long nNew = t->nAlloc ? t->nAlloc * 2 : 65536;
    FloorRow *aNew = realloc(t->a, sizeof(FloorRow) * (size_t)nNew);
    if (aNew == NULL) return SQLITE_NOMEM;
    t->a = aNew;
    t->nAlloc = nNew;
  }
  r = &t->a[t->n];
  memcpy(r->zId, zId, 9);
  r->iDev = (uint8_t)d;
  r->iNote = (uint8_t)iNote;
  r->day = sqlite3_value_int(argv[4]);
  r->cpu = sqlite3_value_int(argv[5]);
  r->mem = sqlite3_value_int(argv[6]);
  if (t->n > 0 && t->bSorted && floorRowCmp(&t->a[t->n - 1], r) > 0)
    t->bSorted = 0;
  *pRowid = t->n++;
  return SQLITE_OK;
}

static sqlite3_module floorModule = {
    0,          floorCreate,  floorConnect, floorBestIndex, floorDisconnect,
    floorDisconnect, floorOpen, floorClose, floorFilter,   floorNext,
    floorEof,   floorColumn,  floorRowid,   floorUpdate,    NULL,
    NULL,       NULL,         NULL,         NULL,           NULL,
    NULL,       NULL,         NULL,         NULL};

/* ------------------------------------------------------------------ */
/* the engines                                                         */

typedef struct Eng {
  const char *zName; /* "native", "wcs" or "floor" */
  int bWcs;
  int bFloor;
  char zDb[2048];    /* database file */
  char zStore[2100]; /* wcs store directory: the file's name + ".wcs" */
  sqlite3 *db;
} Eng;

static int gbTemp; /* -t: the queries take no per-statement file lock */
static int gbKeep; /* -k: the queries on the connections that loaded */

static void engOpen(Eng *e) {
  if (sqlite3_open(e->zDb, &e->db) != SQLITE_OK) {
    die("open %s: %s", e->zDb, sqlite3_errmsg(e->db));
  }
  if (gbTemp && !e->bWcs && !e->bFloor) {
    exec(e->db, "PRAGMA locking_mode=EXCLUSIVE");
  }
  if (wcs_register(e->db) != SQLITE_OK)
    die("wcs_register: %s", sqlite3_errmsg(e->db));
  if (sqlite3_create_module(e->db, "bench_floor", &floorModule, NULL))
    die("bench_floor: %s", sqlite3_errmsg(e->db));
  exec(e->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
              "PRAGMA cache_size=-131072");
}

static const char *gzCache; /* -c: wcs's CACHE clause, or NULL */

static void engCreate(Eng *e) {
  if (e->bFloor) {
    exec(e->db, "CREATE VIRTUAL TABLE m USING bench_floor");
  } else if (e->bWcs) {
    char *zCache = gzCache ? sqlite3_mprintf(", CACHE %Q", gzCache)
                           : sqlite3_mprintf("");
    char *zSql = sqlite3_mprintf(
        "CREATE VIRTUAL TABLE m USING wcs(KEY (device STRING, id STRING, "
        "day INT64 DECIMAL(8)) DELIMITED BY '#', FAMILY stats (cpu INT64, "
        "mem INT64), FAMILY meta (note STRING), SYNC NORMAL%s)",
        zCache ? zCache : "");
    sqlite3_free(zCache);
    if (zSql == NULL) die("out of memory");
    exec(e->db, zSql);
    sqlite3_free(zSql);
  } else {
    exec(e->db,
         "CREATE TABLE m(device TEXT, id TEXT, day INTEGER, cpu INTEGER, "
         "mem INTEGER, note TEXT, PRIMARY KEY(device, id, day)) WITHOUT ROWID");
  }
}

static void engClose(Eng *e) {
  if (e->db && sqlite3_close(e->db) != SQLITE_OK) {
    die("close %s: %s", e->zDb, sqlite3_errmsg(e->db));
  }
  e->db = NULL;
}

static void engRemove(Eng *e) {
  char z[4200];
  engClose(e);
  unlink(e->zDb);
  snprintf(z, sizeof z, "%s-wal", e->zDb);
  unlink(z);
  snprintf(z, sizeof z, "%s-shm", e->zDb);
  unlink(z);
  rmTree(e->zStore);
  if (e->bFloor) floorReset();
}

/* Bytes of the native database: the file and its WAL. */
static uint64_t engBytes(Eng *e) {
  char z[2100];
  snprintf(z, sizeof z, "%s-wal", e->zDb);
  return diskBytes(e->zDb) + diskBytes(z);
}

/* Load rows in key order (aOrder NULL) or in the order given; COMMIT every
** nCommit rows (0: one transaction). Returns seconds. */
static double load(Eng *e, const long *aOrder, long nCommit) {
  sqlite3_stmt *st =
      prep(e->db, "INSERT INTO m(device, id, day, cpu, mem, note) "
                  "VALUES (?, ?, ?, ?, ?, ?)");
  double t0 = benchNow();
  long i;
  Row r;
  exec(e->db, "BEGIN");
  for (i = 0; i < nRow; i++) {
    rowAt(aOrder ? aOrder[i] : i, &r);
    sqlite3_bind_text(st, 1, azDev[r.iDev], -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r.zId, 8, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 3, r.day);
    sqlite3_bind_int(st, 4, r.cpu);
    sqlite3_bind_int(st, 5, r.mem);
    sqlite3_bind_text(st, 6, r.zNote, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) {
      die("%s insert of row %ld: %s", e->zName, i, sqlite3_errmsg(e->db));
    }
    sqlite3_reset(st);
    if (nCommit && (i + 1) % nCommit == 0 && i + 1 < nRow) {
      exec(e->db, "COMMIT");
      exec(e->db, "BEGIN");
    }
  }
  {
    double tc = benchNow();
    exec(e->db, "COMMIT");
    if (bVerbose) {
      fprintf(stderr, "  %s load: inserts %.3f s, COMMIT %.3f s\n", e->zName,
              tc - t0, benchNow() - tc);
    }
  }
  sqlite3_finalize(st);
  return benchNow() - t0;
}

/* ------------------------------------------------------------------ */
/* queries                                                             */

static void bindPrefix(sqlite3_stmt *st, long iRowish, char *zId) {
  Row r;
  rowAt(iRowish, &r);
  memcpy(zId, r.zId, 9);
  sqlite3_bind_text(st, 1, azDev[r.iDev], -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, zId, 8, SQLITE_STATIC);
}

/* The same random sequence for both engines: reseed per slice. */
static double qPoint(Eng *e, long nQ, unsigned iSlice) {
  sqlite3_stmt *st =
      prep(e->db, "SELECT cpu, mem, note FROM m WHERE device = ? AND "
                  "id = ? AND day = ?");
  double t0;
  long i, nGot = 0;
  int64_t sum = 0;
  char zId[12];
  rngState = 1001 + SLICE_SEED * iSlice;
  t0 = benchNow();
  for (i = 0; i < nQ; i++) {
    long k = rndN(nRow);
    Row r;
    rowAt(k, &r);
    memcpy(zId, r.zId, 9);
    sqlite3_bind_text(st, 1, azDev[r.iDev], -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, zId, 8, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, r.day);
    stepAll(e->db, st, &sum, &nGot);
  }
  t0 = benchNow() - t0;
  if (nGot != nQ)
    die("%s point lookups found %ld of %ld rows", e->zName, nGot, nQ);
  sqlite3_finalize(st);
  return t0;
}

static double qPrefix(Eng *e, long nQ, unsigned iSlice) {
  sqlite3_stmt *st =
      prep(e->db, "SELECT cpu FROM m WHERE device = ? AND id = ?");
  double t0;
  long i, nGot = 0;
  int64_t sum = 0;
  char zId[12];
  rngState = 2002 + SLICE_SEED * iSlice;
  t0 = benchNow();
  for (i = 0; i < nQ; i++) {
    bindPrefix(st, rndN(nRow), zId);
    stepAll(e->db, st, &sum, &nGot);
  }
  t0 = benchNow() - t0;
  if (nGot != nQ * NDAY)
    die("%s prefix scans returned %ld rows, expected %ld", e->zName, nGot,
        nQ * NDAY);
  sqlite3_finalize(st);
  return t0;
}

static double qRange(Eng *e, long nQ, unsigned iSlice) {
  sqlite3_stmt *st =
      prep(e->db, "SELECT day, cpu FROM m WHERE device = ? AND id = ? "
                  "AND day BETWEEN ? AND ?");
  double t0;
  long i, nGot = 0;
  int64_t sum = 0;
  char zId[12];
  rngState = 3003 + SLICE_SEED * iSlice;
  t0 = benchNow();
  for (i = 0; i < nQ; i++) {
    int d = (int)rndN(NDAY - 30);
    bindPrefix(st, rndN(nRow), zId);
    sqlite3_bind_int(st, 3, aDay[d]);
    sqlite3_bind_int(st, 4, aDay[d + 29]);
    stepAll(e->db, st, &sum, &nGot);
  }
  t0 = benchNow() - t0;
  if (nGot != nQ * 30)
    die("%s range scans returned %ld rows, expected %ld", e->zName, nGot,
        nQ * 30);
  sqlite3_finalize(st);
  return t0;
}

static double qDesc10(Eng *e, long nQ, unsigned iSlice) {
  sqlite3_stmt *st =
      prep(e->db, "SELECT day, cpu FROM m WHERE device = ? AND id = ? "
                  "ORDER BY day DESC LIMIT 10");
  double t0;
  long i, nGot = 0;
  int64_t sum = 0;
  char zId[12];
  rngState = 4004 + SLICE_SEED * iSlice;
  t0 = benchNow();
  for (i = 0; i < nQ; i++) {
    bindPrefix(st, rndN(nRow), zId);
    stepAll(e->db, st, &sum, &nGot);
  }
  t0 = benchNow() - t0;
  if (nGot != nQ * 10)
    die("%s DESC LIMIT 10 returned %ld rows", e->zName, nGot);
  sqlite3_finalize(st);
  return t0;
}

/* nQ runs of zSql, a query of one random device (bound as ?1), each of
** which must return nPer rows. */
static double qPerDevice(Eng *e, long nQ, const char *zSql, long nPer,
                         unsigned iSeed, unsigned iSlice) {
  sqlite3_stmt *st = prep(e->db, zSql);
  double t0;
  long i, nGot = 0;
  int64_t sum = 0;
  rngState = iSeed + SLICE_SEED * iSlice;
  t0 = benchNow();
  for (i = 0; i < nQ; i++) {
    sqlite3_bind_text(st, 1, azDev[rndN(NDEV)], -1, SQLITE_STATIC);
    stepAll(e->db, st, &sum, &nGot);
  }
  t0 = benchNow() - t0;
  if (nGot != nQ * nPer) {
    die("%s: %s returned %ld rows, expected %ld", e->zName, zSql, nGot,
        nQ * nPer);
  }
  sqlite3_finalize(st);
  return t0;
}

/* SELECT DISTINCT id for a random device: every id of it, nId rows. */
static double qDistinct(Eng *e, long nQ, unsigned iSlice) {
  return qPerDevice(e, nQ, "SELECT DISTINCT id FROM m WHERE device = ?", nId,
                    5005, iSlice);
}

/* SELECT min(id) for a random device: one row. */
static double qMinKey(Eng *e, long nQ, unsigned iSlice) {
  return qPerDevice(e, nQ, "SELECT min(id) FROM m WHERE device = ?", 1, 6006,
                    iSlice);
}

/* zSql, a statement over the whole table whose first column is count(*),
** nQ times: every row each time. */
static double qWhole(Eng *e, long nQ, const char *zSql) {
  sqlite3_stmt *st = prep(e->db, zSql);
  double t0 = benchNow();
  long i;
  for (i = 0; i < nQ; i++) {
    int64_t n = 0;
    stepAll(e->db, st, &n, NULL);
    if (n != nRow)
      die("%s count(*) = %lld, expected %ld", e->zName, (long long)n, nRow);
  }
  t0 = benchNow() - t0;
  sqlite3_finalize(st);
  return t0;
}

/* SELECT count(*) of the whole table, nQ times (every query is the same:
** iSlice is not used). */
static double qRows(Eng *e, long nQ, unsigned iSlice) {
  (void)iSlice;
  return qWhole(e, nQ, "SELECT count(*) FROM m");
}

/* The statements of -w shapes; %s is an id of the table (idText(1)). */
static const char *azShape[] = {
    "SELECT count(*) FROM m WHERE device = 'phone'",
    "SELECT count(*) FROM (SELECT device, count(*) FROM m GROUP BY device)",
    "SELECT count(DISTINCT id) FROM m",
    "SELECT count(*) FROM (SELECT note, count(*) FROM m GROUP BY note)",
    "SELECT count(*) FROM m WHERE day = 20230501",
    "SELECT count(*) FROM m WHERE device = 'phone' AND day BETWEEN 20230101 "
    "AND 20230107",
    "SELECT count(*) FROM m WHERE device = 'phone' AND id != '%s' AND day = "
    "20230415",
    "SELECT count(*) FROM m WHERE id LIKE '1%%'",
    "SELECT sum(cpu) FROM m WHERE device = 'phone' AND day BETWEEN 20230101 "
    "AND 20230131",
    "SELECT sum(c) FROM (SELECT id, max(cpu) AS c FROM m WHERE device = "
    "'watch' GROUP BY id)",
    "SELECT count(*) FROM m WHERE device >= 'phone' AND device < 'tablet' "
    "AND cpu = 50",
    "SELECT count(*) FROM m WHERE device = 'laptop' AND cpu > 95",
    "SELECT count(*) FROM m WHERE note = 'fw-1.2.0' AND mem < 100",
    "SELECT day, device, id, cpu, mem, note FROM m WHERE device = 'phone' AND "
    "id = '%s'",
    /* joins whose bounds and lists SQLite does not know when it plans */
    "WITH w(lo, hi) AS (VALUES (20230110, 20230111), (20230301, 20230301)) "
    "SELECT count(*) FROM w JOIN m ON m.day BETWEEN w.lo AND w.hi",
    "WITH i(id) AS (VALUES ('%s')) SELECT count(*) FROM i JOIN m "
    "ON m.id = i.id WHERE m.device IN ('phone', 'watch') "
    "AND m.day IN (20230101, 20230102)",
};
#define NSHAPE ((int)(sizeof azShape / sizeof azShape[0]))
static double aShape[NSHAPE][2][MAX_RUNS]; /* [shape][native, wcs][run] */
static int64_t aShapeSum[NSHAPE];          /* native's answer, for wcs's */
static int nShapeRun;

/* Shape k on e: the best of three runs, in seconds a statement (a run
** repeats it for at least 20 ms); its answer (the first column summed
** over the rows) must be native's. */
static double qShape(Eng *e, int k, int bNative) {
  char zId[12];
  char *zSql;
  sqlite3_stmt *st;
  double best = 1e30;
  int r;
  idText(1, zId);
  zSql = sqlite3_mprintf(azShape[k], zId);
  st = prep(e->db, zSql);
  for (r = 0; r < 3; r++) {
    int64_t sum = 0;
    long nRep = 0;
    double t0 = benchNow(), t;
    do {
      sum = 0;
      stepAll(e->db, st, &sum, NULL);
      nRep++;
      t = benchNow() - t0;
    } while (t < 0.02);
    if (t / nRep < best) best = t / nRep;
    if (bNative) {
      aShapeSum[k] = sum;
    } else if (sum != aShapeSum[k]) {
      die("%s: %s gave %lld, native %lld", e->zName, zSql, (long long)sum,
          (long long)aShapeSum[k]);
    }
  }
  sqlite3_finalize(st);
  sqlite3_free(zSql);
  return best;
}

/* The full-scan aggregate, nQ times (iSlice not used, as for qRows). */
static double qAgg(Eng *e, long nQ, unsigned iSlice) {
  (void)iSlice;
  return qWhole(e, nQ, "SELECT count(*), sum(cpu), max(mem) FROM m");
}

/* WHERE id = ? (bPlain) or WHERE +id = ? (no planner can use it). */
static double qSkipAny(Eng *e, long nQ, int bPlain, unsigned iSlice) {
  sqlite3_stmt *st =
      prep(e->db, bPlain ? "SELECT count(*), sum(cpu) FROM m WHERE id = ?"
                         : "SELECT count(*), sum(cpu) FROM m WHERE +id = ?");
  double t0;
  long i;
  int64_t n = 0;
  char zId[12];
  rngState = 5005 + SLICE_SEED * iSlice;
  t0 = benchNow();
  for (i = 0; i < nQ; i++) {
    idText(rndN(nId), zId);
    sqlite3_bind_text(st, 1, zId, 8, SQLITE_STATIC);
    stepAll(e->db, st, &n, NULL);
  }
  t0 = benchNow() - t0;
  if (n != nQ * NDEV * NDAY)
    die("%s WHERE id=? counted %lld rows, expected %ld", e->zName, (long long)n,
        nQ * NDEV * NDAY);
  sqlite3_finalize(st);
  return t0;
}

/* WHERE id = ?: a skip scan where the planner can use one. */
static double qSkip(Eng *e, long nQ, unsigned iSlice) {
  return qSkipAny(e, nQ, 1, iSlice);
}

static double qFullSql(Eng *e) {
  sqlite3_stmt *st =
      prep(e->db, "SELECT sum(cpu), sum(mem), count(note) FROM m");
  double t0 = benchNow();
  stepAll(e->db, st, NULL, NULL);
  t0 = benchNow() - t0;
  sqlite3_finalize(st);
  return t0;
}

/* Every key and value of the table through wcs_iter, no SQL, twice: the
** first pass's time (cold: the store was just opened) is returned, the
** second's (warm: its blocks in the cache) goes to *pWarm. The store is
** opened read-only after the SQL connection closed. The iterator is bounded
** as a table scan is: the store's one table is every key from table id 1 up
** (cell keys start with the 4-byte table id, the catalog is table id 0), so
** the catalog's files, which compaction of the table's range leaves in the
** upper levels, are not merged in as they would be over the whole store. */
static double qRaw(Eng *e, uint64_t *pnKey, double *pWarm) {
  static const unsigned char aTid1[4] = {0, 0, 0, 1};
  wcs_options o;
  wcs_iter_options io;
  wcs_db *db = NULL;
  wcs_iter *it = NULL;
  char *zErr = NULL;
  uint64_t nKey = 0, nByte = 0;
  double t0, aT[2];
  int rc, iPass;
  wcs_options_init(&o);
  wcs_engine_options(&o);
  o.bReadOnly = 1;
  o.bCreate = 0;
  rc = wcs_db_open(&db, e->zStore, &o, &zErr);
  if (rc != WCS_OK)
    die("wcs_db_open %s: %s", e->zStore, zErr ? zErr : wcs_errstr(rc));
  memset(&io, 0, sizeof io);
  io.pLower = aTid1;
  io.nLower = sizeof aTid1;
  for (iPass = 0; iPass < 2; iPass++) {
    nKey = 0;
    t0 = benchNow();
    rc = wcs_iter_new(db, &io, &it);
    for (rc = rc ? rc : wcs_iter_first(it);
         rc == WCS_OK && wcs_iter_valid(it); rc = wcs_iter_next(it)) {
      size_t nK, nV;
      const unsigned char *pK = wcs_iter_key(it, &nK);
      const unsigned char *pV = wcs_iter_value(it, &nV);
      nKey++;
      nByte += nK + nV + pK[nK - 1] + (nV ? pV[0] : 0);
    }
    aT[iPass] = benchNow() - t0;
    if (rc != WCS_OK) die("raw iteration: %s", wcs_errstr(rc));
    wcs_iter_free(it);
    it = NULL;
  }
  wcs_db_close(db);
  if (nByte == 0) die("raw iteration read nothing");
  *pnKey = nKey;
  *pWarm = aT[1];
  return aT[0];
}

/* ------------------------------------------------------------------ */

static void note(const char *zFmt, ...) {
  va_list ap;
  if (!bVerbose) return;
  va_start(ap, zFmt);
  vfprintf(stdout, zFmt, ap);
  va_end(ap);
  fflush(stdout);
}

static void addRun(int w, double native, double wcs, double aux) {
  Result *r = &aRes[w];
  r->aNative[r->nRun] = native;
  r->aWcs[r->nRun] = wcs;
  r->aAux[r->nRun] = aux;
  r->nRun++;
}

static void fmtTime(char *z, size_t n, double sec, long nOps) {
  if (nOps > 1) {
    double us = sec * 1e6 / nOps;
    if (us < 1000)
      snprintf(z, n, "%.1f us/op", us);
    else
      snprintf(z, n, "%.2f ms/op", us / 1000);
  } else if (sec < 0.001) {
    snprintf(z, n, "%.1f us", sec * 1e6);
  } else if (sec < 1) {
    snprintf(z, n, "%.1f ms", sec * 1000);
  } else {
    snprintf(z, n, "%.2f s", sec);
  }
}

static void report(int nRuns, const char *zDir) {
  int w;
  printf("\nbench_sql: %ld rows (%d devices x %ld ids x %d days), medians of "
         "%d runs, data in %s\n",
         nRow, NDEV, nId, NDAY, nRuns, zDir);
  printf("| workload | native | wcs | ratio | goal | met |\n");
  printf("|---|---|---|---|---|---|\n");
  for (w = 0; w < W_COUNT; w++) {
    Result *r = &aRes[w];
    double n, c, ratio;
    char zN[64], zW[64];
    if (r->nRun == 0) continue;
    n = median(r->aNative, r->nRun);
    c = median(r->aWcs, r->nRun);
    if (w == W_BYTES) {
      snprintf(zN, sizeof zN, "%.1f MiB", n / 1048576);
      snprintf(zW, sizeof zW, "%.1f MiB", c / 1048576);
      ratio = c / n;
      printf("| %s | %s | %s | %.2fx | %s | %s |\n", azLabel[w], zN, zW, ratio,
             azGoal[w], ratio <= aGoal[w] ? "yes" : "no");
      if (nLeft) {
        printf("| bytes right after the load, before compaction | | | %.2fx | "
               "| |\n",
               median(aLeft, nLeft));
      }
    } else if (w == W_RAW) {
      double raw = median(r->aAux, r->nRun);
      fmtTime(zN, sizeof zN, raw, 1);
      fmtTime(zW, sizeof zW, c, 1);
      ratio = raw / c;
      printf("| %s | raw iterator %s | SQL %s | %.2fx | %s | %s |\n",
             azLabel[w], zN, zW, ratio, azGoal[w],
             ratio >= aGoal[w] ? "yes" : "no");
      if (nWarm) {
        double sw = median(aWarm[0], nWarm), rw = median(aWarm[1], nWarm);
        fmtTime(zN, sizeof zN, rw, 1);
        fmtTime(zW, sizeof zW, sw, 1);
        printf("| ... both warm (a second pass of each) | raw iterator %s | "
               "SQL %s | %.2fx | %s | %s |\n",
               zN, zW, rw / sw, azGoal[w], rw / sw >= aGoal[w] ? "yes" : "no");
      }
    } else {
      fmtTime(zN, sizeof zN, n, r->nOps);
      fmtTime(zW, sizeof zW, c, r->nOps);
      ratio = n / c;
      printf("| %s | %s | %s | %.2fx | %s | %s |\n", azLabel[w], zN, zW, ratio,
             azGoal[w], ratio >= aGoal[w] ? "yes" : "no");
      if (w == W_SKIP) {
        double full = median(r->aAux, r->nRun);
        char zF[64];
        fmtTime(zF, sizeof zF, full, r->nOps);
        printf("| skip scan vs wcs's own full scan (WHERE +id=?) | full scan "
               "%s | %s | %.0fx | >= 100x | %s |\n",
               zF, zW, full / c, full / c >= 100 ? "yes" : "no");
      }
    }
  }
  if (nShapeRun) {
    int k;
    printf("\nother statements (-w shapes): time a statement, the best of "
           "three runs of 20 ms on each engine, medians of %d runs\n",
           nShapeRun);
    printf("| statement | native | wcs | ratio |\n|---|---|---|---|\n");
    for (k = 0; k < NSHAPE; k++) {
      char zId[12], zN[32], zW[32], *zSql;
      double n = median(aShape[k][0], nShapeRun);
      double c = median(aShape[k][1], nShapeRun);
      idText(1, zId);
      zSql = sqlite3_mprintf(azShape[k], zId);
      fmtTime(zN, sizeof zN, n, 1);
      fmtTime(zW, sizeof zW, c, 1);
      printf("| `%s` | %s | %s | %.2fx |\n", zSql, zN, zW, n / c);
      sqlite3_free(zSql);
    }
  }
  if (nFloorRun) {
    static const int aW[] = {W_SORTED, W_POINT, W_PREFIX, W_RANGE,
                             W_AGG,    W_SKIP,  W_DESC10};
    size_t k;
    printf("\nthe floor: a virtual table over a sorted in-memory array "
           "(-f), medians of %d runs\n",
           nFloorRun);
    printf("| workload | native | floor | native / floor: the most a virtual "
           "table reaches | wcs / floor |\n");
    printf("|---|---|---|---|---|\n");
    for (k = 0; k < sizeof aW / sizeof aW[0]; k++) {
      Result *r = &aRes[aW[k]];
      double f = median(aFloor[aW[k]], nFloorRun), n, c;
      char zN[64], zF[64];
      if (r->nRun == 0 || !(f > 0)) continue;
      n = median(r->aNative, r->nRun);
      c = median(r->aWcs, r->nRun);
      fmtTime(zN, sizeof zN, n, r->nOps);
      fmtTime(zF, sizeof zF, f, r->nOps);
      printf("| %s | %s | %s | %.2fx | %.1fx |\n", azLabel[aW[k]], zN, zF, n / f,
             c / f);
    }
    if (aRes[W_RAW].nRun && nWarm && median(aFloor[W_RAW], nFloorRun) > 0) {
      /* raw iterator / SQL scan is the goal's ratio: with the floor's time
      ** in place of wcs's, the most a virtual table reaches */
      double f = median(aFloor[W_RAW], nFloorRun);
      double rw = median(aWarm[1], nWarm), sw = median(aWarm[0], nWarm);
      char zF[64], zR[64];
      fmtTime(zF, sizeof zF, f, 1);
      fmtTime(zR, sizeof zR, rw, 1);
      printf("\nthe raw workload's SQL scan, warm: floor %s, wcs %.1fx the "
             "floor; raw iterator %s / floor = %.2fx, the most a virtual table "
             "reaches against the goal of %.1fx\n",
             zF, sw / f, zR, rw / f, aGoal[W_RAW]);
    }
  }
  if (aRes[W_SORTED].nRun || aRes[W_RANDOM].nRun) {
    printf("\nload rates (rows/s, medians):");
    if (aRes[W_SORTED].nRun) {
      printf(" sorted native %.0f, wcs %.0f;",
             nRow / median(aRes[W_SORTED].aNative, aRes[W_SORTED].nRun),
             nRow / median(aRes[W_SORTED].aWcs, aRes[W_SORTED].nRun));
    }
    if (aRes[W_RANDOM].nRun) {
      printf(" random native %.0f, wcs %.0f",
             nRow / median(aRes[W_RANDOM].aNative, aRes[W_RANDOM].nRun),
             nRow / median(aRes[W_RANDOM].aWcs, aRes[W_RANDOM].nRun));
    }
    printf("\n");
  }
}

static int want(int w) {
  return abWork[w];
}

/* The queries of a workload, nQ in all, in NSLICE slices (slice s of
** query function q seeds its random queries with s, the same on every
** engine). On one engine: the slices one after the other. */
typedef double (*QueryFn)(Eng *, long, unsigned);

static double sliced(Eng *e, QueryFn q, long nQ) {
  double t = 0;
  long nDone = 0;
  unsigned s;
  for (s = 0; s < NSLICE; s++) {
    long n = nQ * (long)(s + 1) / NSLICE - nDone;
    if (n > 0) t += q(e, n, s);
    nDone += n;
  }
  return t;
}

/* On native (aEng[0]) and wcs (aEng[1]) side by side: the same slices,
** the engines taking turns slice by slice (which one goes first changes
** from slice to slice, and from run to run with bFirst), so that a
** machine whose speed drifts over seconds slows both alike. Each
** engine's times summed into t[0] (native) and t[1] (wcs). */
static void interleaved(Eng *aEng, QueryFn q, long nQ, int bFirst,
                        double t[2]) {
  long nDone = 0;
  unsigned s;
  t[0] = t[1] = 0;
  for (s = 0; s < NSLICE; s++) {
    long n = nQ * (long)(s + 1) / NSLICE - nDone;
    int i, first = bFirst ^ (int)(s & 1);
    for (i = 0; n > 0 && i < 2; i++) {
      t[i ^ first] += q(&aEng[i ^ first], n, s);
    }
    nDone += n;
  }
}

/* -f: the same sorted load and queries against the floor table. */
static void runFloor(Eng *e, int run, long nPoint, long nPrefix, long nRange,
                     long nDesc, long nSkip, long nAgg) {
  engRemove(e);
  engOpen(e);
  engCreate(e);
  aFloor[W_SORTED][run] = load(e, NULL, 0);
  engClose(e);
  engOpen(e);
  if (want(W_POINT)) aFloor[W_POINT][run] = sliced(e, qPoint, nPoint);
  if (want(W_PREFIX)) aFloor[W_PREFIX][run] = sliced(e, qPrefix, nPrefix);
  if (want(W_RANGE)) aFloor[W_RANGE][run] = sliced(e, qRange, nRange);
  if (want(W_DESC10)) aFloor[W_DESC10][run] = sliced(e, qDesc10, nDesc);
  if (want(W_AGG)) aFloor[W_AGG][run] = sliced(e, qAgg, nAgg);
  if (want(W_SKIP)) aFloor[W_SKIP][run] = sliced(e, qSkip, nSkip);
  note("  floor  sorted %.2f s, point %.3f s, agg %.3f s\n",
       aFloor[W_SORTED][run], aFloor[W_POINT][run], aFloor[W_AGG][run]);
  engRemove(e);
  nFloorRun = run + 1;
}

int main(int argc, char **argv) {
  long nWant = 2000000;
  int nRuns = 3, i, run;
  double qScale = 1.0;
  const char *zDir = "bench-sql-data";
  Eng aEng[3];
  long *aOrder = NULL;
  long nPoint, nPrefix, nRange, nDesc, nSkip, nFull, nDistinct, nMinKey, nRows;
  long nAgg;

  for (i = 0; i < W_COUNT; i++)
    abWork[i] = i != W_SHAPES; /* shapes only when named */
  for (i = 1; i < argc; i++) {
    const char *z = argv[i];
    if (strcmp(z, "-n") == 0 && i + 1 < argc)
      nWant = atol(argv[++i]);
    else if (strcmp(z, "-r") == 0 && i + 1 < argc)
      nRuns = atoi(argv[++i]);
    else if (strcmp(z, "-d") == 0 && i + 1 < argc)
      zDir = argv[++i];
    else if (strcmp(z, "-q") == 0 && i + 1 < argc)
      qScale = atof(argv[++i]);
    else if (strcmp(z, "-c") == 0 && i + 1 < argc)
      gzCache = argv[++i];
    else if (strcmp(z, "-v") == 0)
      bVerbose = 1;
    else if (strcmp(z, "-f") == 0)
      gbFloor = 1;
    else if (strcmp(z, "-t") == 0)
      gbTemp = 1;
    else if (strcmp(z, "-k") == 0)
      gbKeep = 1;
    else if (strcmp(z, "-w") == 0 && i + 1 < argc) {
      char *zList = strdup(argv[++i]), *p, *save = NULL;
      int w;
      for (w = 0; w < W_COUNT; w++)
        abWork[w] = 0;
      for (p = strtok_r(zList, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        for (w = 0; w < W_COUNT && strcmp(p, azWork[w]); w++) {
        }
        if (w == W_COUNT) die("unknown workload %s", p);
        abWork[w] = 1;
      }
      free(zList);
    } else {
      fprintf(stderr,
              "usage: %s [-n ROWS] [-r RUNS] [-d DIR] [-w LIST] "
              "[-q SCALE] [-c SIZE] [-f] [-v] [-t] [-k]\n",
              argv[0]);
      return 2;
    }
  }
  if (gbKeep && gbTemp) die("-k and -t: -t reconnects, -k does not");
  if (nRuns < 1 || nRuns > MAX_RUNS) die("-r must be 1..%d", MAX_RUNS);
  nId = nWant / (NDEV * NDAY);
  if (nId < 1) nId = 1;
  nRow = nId * NDEV * NDAY;
  initDays();
  if (mkdir(zDir, 0755) != 0 && errno != EEXIST)
    die("mkdir %s: %s", zDir, strerror(errno));

  nPoint = (long)(qScale * 100000);
  nPrefix = (long)(qScale * 2000);
  nRange = (long)(qScale * 10000);
  nDesc = (long)(qScale * 10000);
  nSkip = (long)(qScale * 50);
  nDistinct = (long)(qScale * 200);
  nMinKey = (long)(qScale * 10000);
  nRows = (long)(qScale * 10);
  nAgg = (long)(qScale * 4);
  nFull = 2;
  if (nPoint < 1) nPoint = 1;
  if (nPrefix < 1) nPrefix = 1;
  if (nRange < 1) nRange = 1;
  if (nDesc < 1) nDesc = 1;
  if (nSkip < 1) nSkip = 1;
  if (nDistinct < 1) nDistinct = 1;
  if (nMinKey < 1) nMinKey = 1;
  if (nRows < 1) nRows = 1;
  if (nAgg < 1) nAgg = 1;
  aRes[W_SORTED].nOps = aRes[W_RANDOM].nOps = 1;
  aRes[W_POINT].nOps = nPoint;
  aRes[W_PREFIX].nOps = nPrefix;
  aRes[W_RANGE].nOps = nRange;
  aRes[W_DESC10].nOps = nDesc;
  aRes[W_SKIP].nOps = nSkip;
  aRes[W_DISTINCT].nOps = nDistinct;
  aRes[W_MINKEY].nOps = nMinKey;
  aRes[W_ROWS].nOps = nRows;
  aRes[W_AGG].nOps = nAgg;

  printf("bench_sql: SQLite %s, %ld rows, %d runs\n", sqlite3_libversion(),
         nRow, nRuns);
  fflush(stdout);

  memset(aEng, 0, sizeof aEng);
  aEng[0].zName = "native";
  aEng[1].zName = "wcs";
  aEng[1].bWcs = 1;
  aEng[2].zName = "floor";
  aEng[2].bFloor = 1;
  for (i = 0; i < 3; i++) {
    snprintf(aEng[i].zDb, sizeof aEng[i].zDb, "%.2000s/%s.db", zDir,
             aEng[i].zName);
    snprintf(aEng[i].zStore, sizeof aEng[i].zStore, "%.2000s/%s.db.wcs", zDir,
             aEng[i].zName);
  }

  if (want(W_RANDOM)) {
    /* a fixed shuffle of the row numbers */
    long j;
    aOrder = malloc(sizeof(long) * nRow);
    if (aOrder == NULL) die("out of memory");
    for (j = 0; j < nRow; j++)
      aOrder[j] = j;
    rngState = 77;
    for (j = nRow - 1; j > 0; j--) {
      long k = rndN(j + 1), t = aOrder[j];
      aOrder[j] = aOrder[k];
      aOrder[k] = t;
    }
  }

  for (run = 0; run < nRuns; run++) {
    double t[2], aux = 0;
    int e, first = run & 1; /* alternate which engine goes first */
    int bQueries = want(W_POINT) || want(W_PREFIX) || want(W_RANGE) ||
                   want(W_AGG) || want(W_SKIP) || want(W_DESC10) ||
                   want(W_DISTINCT) || want(W_MINKEY) || want(W_ROWS) ||
                   want(W_SHAPES) || want(W_BYTES) || want(W_RAW);
    note("run %d\n", run + 1);
    if (want(W_SORTED) || bQueries) {
      for (i = 0; i < 2; i++) {
        Eng *p = &aEng[i ^ first];
        engRemove(p);
        engOpen(p);
        engCreate(p);
        t[i ^ first] = load(p, NULL, 0);
        note("  sorted load %-6s %.2f s\n", p->zName, t[i ^ first]);
      }
      if (want(W_SORTED)) addRun(W_SORTED, t[0], t[1], 0);
      /* bytes as the load left them (wcs: memtable and WAL included) */
      exec(aEng[0].db, "PRAGMA wal_checkpoint(TRUNCATE)");
      nLeft = run + 1;
      aLeft[run] =
          (double)diskBytes(aEng[1].zStore) / (double)engBytes(&aEng[0]);
      /* settle both: statistics for native, a full compaction for wcs */
      exec(aEng[0].db, "ANALYZE");
      exec(aEng[1].db, "SELECT wcs_compact('m')");
      /* reconnect both: the reads start from what a new connection sees
      ** (-k: from what the load and the settling left in each one's
      ** cache) */
      for (e = 0; e < 2 && !gbKeep; e++) {
        engClose(&aEng[e]);
        engOpen(&aEng[e]);
      }
      if (gbTemp) {
        char *zSql = sqlite3_mprintf(
            "CREATE VIRTUAL TABLE temp.m USING wcs(TABLE 'm', STORE %Q)",
            aEng[1].zStore);
        if (zSql == NULL) die("out of memory");
        exec(aEng[1].db, zSql);
        sqlite3_free(zSql);
      }
      if (want(W_POINT)) {
        interleaved(aEng, qPoint, nPoint, first, t);
        addRun(W_POINT, t[0], t[1], 0);
        note("  point  native %.3f s wcs %.3f s\n", t[0], t[1]);
      }
      if (want(W_PREFIX)) {
        interleaved(aEng, qPrefix, nPrefix, first, t);
        addRun(W_PREFIX, t[0], t[1], 0);
        note("  prefix native %.3f s wcs %.3f s\n", t[0], t[1]);
      }
      if (want(W_RANGE)) {
        interleaved(aEng, qRange, nRange, first, t);
        addRun(W_RANGE, t[0], t[1], 0);
        note("  range  native %.3f s wcs %.3f s\n", t[0], t[1]);
      }
      if (want(W_DESC10)) {
        interleaved(aEng, qDesc10, nDesc, first, t);
        addRun(W_DESC10, t[0], t[1], 0);
        note("  desc10 native %.3f s wcs %.3f s\n", t[0], t[1]);
      }
      if (want(W_DISTINCT)) {
        interleaved(aEng, qDistinct, nDistinct, first, t);
        addRun(W_DISTINCT, t[0], t[1], 0);
        note("  distinct native %.3f s wcs %.3f s\n", t[0], t[1]);
      }
      if (want(W_MINKEY)) {
        interleaved(aEng, qMinKey, nMinKey, first, t);
        addRun(W_MINKEY, t[0], t[1], 0);
        note("  minkey native %.3f s wcs %.3f s\n", t[0], t[1]);
      }
      if (want(W_ROWS)) {
        interleaved(aEng, qRows, nRows, first, t);
        addRun(W_ROWS, t[0], t[1], 0);
        note("  rows   native %.3f s wcs %.3f s\n", t[0], t[1]);
      }
      if (want(W_SHAPES)) {
        int k;
        for (k = 0; k < NSHAPE; k++) {
          /* native first: its answer checks wcs's */
          aShape[k][0][nShapeRun] = qShape(&aEng[0], k, 1);
          aShape[k][1][nShapeRun] = qShape(&aEng[1], k, 0);
          note("  shape %d native %.4f s wcs %.4f s\n", k,
               aShape[k][0][nShapeRun], aShape[k][1][nShapeRun]);
        }
        nShapeRun++;
      }
      if (want(W_AGG)) {
        interleaved(aEng, qAgg, nAgg, first, t);
        addRun(W_AGG, t[0], t[1], 0);
        note("  agg    native %.3f s wcs %.3f s\n", t[0], t[1]);
      }
      if (want(W_SKIP)) {
        interleaved(aEng, qSkip, nSkip, first, t);
        aux = qSkipAny(&aEng[1], nFull, 0, 0) * (double)nSkip / (double)nFull;
        addRun(W_SKIP, t[0], t[1], aux);
        note("  skip   native %.3f s wcs %.3f s (wcs full scan %.3f s per "
             "%ld)\n",
             t[0], t[1], aux, nSkip);
      }
      if (want(W_RAW)) {
        /* both cold (a store just opened), then both warm (a second pass
        ** of each): the two sides always in the same state */
        double sql, sqlWarm, raw, rawWarm, floorWarm = 0;
        uint64_t nKey = 0;
        if (gbFloor) {
          /* -f: the floor's time for the same SQL scan, warm, taken
          ** just before and just after the raw iterator's passes (the
          ** floor's own runs come later: it holds rows in memory) */
          Eng *f = &aEng[2];
          engRemove(f);
          engOpen(f);
          engCreate(f);
          load(f, NULL, 0);
        }
        engClose(&aEng[1]);
        engOpen(&aEng[1]);
        sql = qFullSql(&aEng[1]);
        sqlWarm = qFullSql(&aEng[1]);
        if (gbFloor) {
          qFullSql(&aEng[2]); /* the statement's first pass */
          floorWarm = qFullSql(&aEng[2]);
        }
        engClose(&aEng[1]);
        raw = qRaw(&aEng[1], &nKey, &rawWarm);
        engOpen(&aEng[1]);
        if (gbFloor) {
          aFloor[W_RAW][run] = (floorWarm + qFullSql(&aEng[2])) / 2;
          engRemove(&aEng[2]);
        }
        addRun(W_RAW, 0, sql, raw);
        aWarm[0][nWarm] = sqlWarm;
        aWarm[1][nWarm++] = rawWarm;
        note("  raw    SQL %.3f s (warm %.3f s), raw iterator %.3f s (warm "
             "%.3f s; %llu keys), floor SQL warm %.3f s\n",
             sql, sqlWarm, raw, rawWarm, (unsigned long long)nKey,
             gbFloor ? aFloor[W_RAW][run] : 0.0);
      }
      if (want(W_BYTES)) {
        uint64_t nN, nW;
        exec(aEng[0].db, "PRAGMA wal_checkpoint(TRUNCATE)");
        for (e = 0; e < 2; e++)
          engClose(&aEng[e]);
        nN = engBytes(&aEng[0]);
        nW = diskBytes(aEng[1].zStore);
        addRun(W_BYTES, (double)nN, (double)nW, 0);
        note("  bytes  native %llu wcs %llu\n", (unsigned long long)nN,
             (unsigned long long)nW);
      }
      for (e = 0; e < 2; e++)
        engRemove(&aEng[e]);
    }
    if (gbFloor) {
      runFloor(&aEng[2], run, nPoint, nPrefix, nRange, nDesc, nSkip, nAgg);
    }
    if (want(W_RANDOM)) {
      for (i = 0; i < 2; i++) {
        Eng *p = &aEng[i ^ first];
        engRemove(p);
        engOpen(p);
        engCreate(p);
        t[i ^ first] = load(p, aOrder, 10000);
        note("  random load %-6s %.2f s\n", p->zName, t[i ^ first]);
        engRemove(p);
      }
      addRun(W_RANDOM, t[0], t[1], 0);
    }
  }
  free(aOrder);
  report(nRuns, zDir);
  rmdir(zDir);
  return 0;
}
