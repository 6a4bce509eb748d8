/*
** bench_storage.c — the wcs store against RocksDB, side by side, in the
** style of RocksDB's db_bench.
**
** USAGE
**   bench_storage [-n KEYS] [-r RUNS] [-w LIST] [-d DIR] [-e LIST]
**                 [-R READS] [-S SEEKS] [-z LEVEL] [-s off|normal]
**                 [-I 0|1] [-W MIB] [-M] [-o FILE] [-v]
**
**   -n KEYS   keys in the store (default 10000000)
**   -r RUNS   repetitions; each result is the median of the runs (default 3)
**   -w LIST   workloads, comma separated (default all):
**             fillseq,fillrandom,readrandom,seekrandom,readseq
**   -d DIR    where the stores are made (default ./bench-storage-data);
**             every engine and run gets a fresh subdirectory, removed after
**   -e LIST   engines: wcs,rocksdb (default both when RocksDB is built in)
**   -R READS  point reads in readrandom (default min(KEYS, 1000000))
**   -S SEEKS  seeks in seekrandom, each followed by 100 nexts
**             (default min(KEYS, 100000))
**   -z LEVEL  zstd level for both stores (default 3)
**   -s MODE   durability: "normal" (default) or "off", see SETTINGS
**   -I 0|1    RocksDB: keep index and filter blocks in the block cache
**             (cache_index_and_filter_blocks); default 1, what wcs does
**             (every file's index and bloom are block cache entries, charged
**             to its budget); 0 is RocksDB's default, index and filter
**             blocks held outside the cache for as long as a file is open
**   -W MIB    RocksDB write_buffer_size in MiB (default 32, see SETTINGS)
**   -M        in-memory: wcs bInMemory, RocksDB on its memory env (peak
**             memory then includes the data and is not held to the budgets)
**   -o FILE   also append the machine-readable lines to FILE
**   -v        print each store's statistics after the reads
**
** EXAMPLE
**   ./bench/bench_storage -n 1000000 -r 3          # a quick run
**   ./bench/bench_storage                          # the full 10M-key run
**
** SETTINGS (the same for both stores)
**   keys      16 bytes: the key number as zero-padded decimal
**             ("0000000000001234"), so byte order is numeric order.
**   values    100 bytes cut from a 1 MiB buffer of printable text in which
**             every 100-byte piece is 50 random characters written twice
**             (about 50% compressible, like db_bench's generator). A key's
**             value starts at an offset hashed from the key number, so a
**             read can check the exact bytes it got back.
**   writes    1000 puts per write batch in both fill workloads; WAL on; no
**             fsync per write: RocksDB sync=false (it syncs a WAL only when
**             it is retired), wcs WCS_SYNC_NORMAL (fsync at WAL rotation,
**             flush and close). "-s off" uses WCS_SYNC_OFF for wcs.
**   memory    memtables 64 MiB in all, block cache 64 MiB (wcs nCache,
**             RocksDB LRU cache). wcs's nMemtable = 64 MiB is the budget of
**             its active and its one immutable memtable together (it
**             switches at half); RocksDB's write_buffer_size is per memtable
**             and it keeps up to max_write_buffer_number = 2, so the same
**             budget is write_buffer_size = 32 MiB. "-W 64" gives RocksDB
**             twice the memtable memory instead. wcs's cache is fixed
**             (bFixedCache): by default it would also use what the
**             memtables leave idle, which RocksDB's cache does not here.
**   files     zstd at the same level for every block, 16 KiB data blocks,
**             bloom filters of 10 bits per key (RocksDB: full filters),
**             index and bloom charged to the block cache (RocksDB:
**             cache_index_and_filter_blocks = 1; see -I).
**             Everything else is each store's default.
**
** WORKLOADS (db_bench's names and meanings)
**   fillseq     KEYS puts in ascending key order into an empty store.
**   fillrandom  KEYS puts into an empty store, every key exactly once, in a
**               pseudo-random order (a Feistel permutation of 0..KEYS-1, so
**               no memory is spent on a shuffle array).
**   readrandom  READS point reads of uniformly random keys; every key exists
**               and every value is checked byte for byte.
**   seekrandom  SEEKS seeks to a random existing key, each followed by 100
**               nexts reading key and value; ops are seeks.
**   readseq     one iteration over the whole store; ops are keys.
**   A fill's time ends when its last write returns (as in db_bench); the
**   background work it leaves is timed separately as "settle".
**
** HOW IT WORKS
**   Each run of each engine happens in a forked child process, so that its
**   peak resident memory (getrusage ru_maxrss) belongs to that engine alone;
**   the child sends one record per workload to the parent over a pipe. The
**   engines alternate which goes first from run to run. Within a child:
**   fillseq runs on its own fresh store, which is then removed. The read
**   workloads run on a second fresh store filled by fillrandom (timed when
**   fillrandom was asked for, untimed otherwise) and then *settled*: wcs
**   flushes and compacts everything (wcs_db_flush + wcs_db_compact_range,
**   repeated while its stats show data in more than one level), RocksDB
**   compacts everything (rocksdb_compact_range, which flushes first) and
**   waits until no compaction is pending or running; then both wait until
**   the process is idle (under 2% of a core for half a second), so no
**   background work overlaps the reads. Reads therefore measure both
**   stores in the same state: all data in sorted files in one level,
**   nothing in the memtable. The store's size on disk is reported after
**   settling.
**
** OUTPUT
**   A table per workload: median ops/s of wcs and RocksDB and their ratio
**   (wcs / RocksDB; above 1 means wcs is faster), then peak memory per
**   engine against the budgets. One line per measurement starts with
**   "RESULT", one per workload summary with "SUMMARY", and one per engine's
**   memory with "MEMORY"; each is a list of key=value pairs.
**
** Built by bench/CMakeLists.txt; WCS_HAVE_ROCKSDB is defined when RocksDB's
** C API (rocksdb/c.h) is available. Without it, only wcs is measured.
*/
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "wcs.h"

#ifdef WCS_HAVE_ROCKSDB
#include <rocksdb/c.h>
#endif

#define KEY_SIZE       16
#define VAL_SIZE       100
#define RING_SIZE      (1 << 20) /* bytes of generated value text */
#define BATCH_KEYS     1000      /* puts per write batch in the fills */
#define SEEK_NEXTS     100       /* nexts after each seek in seekrandom */
#define MEMTABLE_BYTES (64u << 20)
#define CACHE_BYTES    (64u << 20)
#define BLOCK_BYTES    (16 << 10)
#define BLOOM_BITS     10
#define MAX_RUNS       31

/* ------------------------------------------------------------------ */
/* Workloads                                                           */

enum {
  W_FILLSEQ,
  W_FILLRANDOM,
  W_READRANDOM,
  W_SEEKRANDOM,
  W_READSEQ,
  W_SETTLE,
  W_COUNT
};
static const char *azWork[W_COUNT] = {"fillseq",    "fillrandom", "readrandom",
                                      "seekrandom", "readseq",    "settle"};
/* The ratio goal of issue 2 for each measured workload. */
static const double aGoal[W_COUNT] = {1.0, 0.7, 0.7, 0.7, 1.0, 0};

enum { E_WCS, E_ROCKSDB, E_COUNT };
static const char *azEngine[E_COUNT] = {"wcs", "rocksdb"};

/* Settings of one invocation. */
typedef struct Config {
  uint64_t nKeys;        /* keys in the store, >= 1 */
  int nRuns;             /* repetitions, 1..MAX_RUNS */
  unsigned mWork;        /* bit (1<<W_x) per workload asked for */
  unsigned mEngine;      /* bit (1<<E_x) per engine asked for */
  const char *zDir;      /* parent directory of the stores */
  uint64_t nReads;       /* point reads in readrandom */
  uint64_t nSeeks;       /* seeks in seekrandom */
  int iZstd;             /* zstd level for both */
  int bSyncOff;          /* wcs WCS_SYNC_OFF instead of NORMAL */
  int bRocksIdxInCache;  /* RocksDB cache_index_and_filter_blocks */
  size_t nRocksWriteBuf; /* RocksDB write_buffer_size, bytes */
  int bInMemory;         /* both stores in memory */
  int bVerbose;          /* print store statistics */
  FILE *pOut;            /* copy of the machine-readable lines, or NULL */
} Config;

/* One measurement, sent from the child to the parent. */
typedef struct Record {
  int iWork;           /* W_x */
  uint64_t nOps;       /* operations done (0 for settle) */
  double secs;         /* wall time */
  long nRssKb;         /* child's peak RSS so far, KiB */
  uint64_t nDiskBytes; /* settle only: store size on disk after it */
} Record;

/* ------------------------------------------------------------------ */
/* Small utilities                                                     */

static double now_secs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long peak_rss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* The 1-minute load average, or -1 if unknown: printed with the results,
** because other work on the machine skews every number. */
static double load_avg(void) {
  double a = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &a) != 1) a = -1;
    fclose(f);
  }
  return a;
}

/* CPU seconds used so far by every thread of this process. */
static double cpu_secs(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
         ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

/* Wait until the store's background threads have nothing left to do,
** judged from outside: the process uses under 2% of a core over half a
** second (compaction and flush are CPU-bound: zstd, merging, CRCs). */
static void wait_idle(void) {
  int i;
  for (i = 0; i < 2400; i++) {
    double c0 = cpu_secs();
    usleep(500000);
    if (cpu_secs() - c0 < 0.01) return;
  }
}

static void die(const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  fprintf(stderr, "bench_storage: ");
  vfprintf(stderr, zFmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

static uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* A deterministic stream of 64-bit numbers (the same on both engines). */
typedef struct Rng {
  uint64_t s;
} Rng;
static uint64_t rng_next(Rng *r) {
  return splitmix(r->s++);
}

/* Key number i as 16 zero-padded decimal digits. */
static void make_key(char *z, uint64_t i) {
  int k;
  for (k = KEY_SIZE - 1; k >= 0; k--) {
    z[k] = (char)('0' + i % 10);
    i /= 10;
  }
}

/* The value text: 100-byte pieces, each 50 random printable characters
** written twice, so zstd roughly halves it. */
static char *aRing;
static void ring_init(void) {
  Rng r = {12345};
  size_t i, j;
  aRing = malloc(RING_SIZE + VAL_SIZE);
  if (aRing == NULL) die("out of memory");
  for (i = 0; i < RING_SIZE + VAL_SIZE; i += VAL_SIZE) {
    char aPiece[VAL_SIZE / 2];
    for (j = 0; j < sizeof aPiece; j++) {
      aPiece[j] = (char)(' ' + rng_next(&r) % 95);
    }
    for (j = 0; j < VAL_SIZE && i + j < RING_SIZE + VAL_SIZE; j++) {
      aRing[i + j] = aPiece[j % sizeof aPiece];
    }
  }
}

/* The value of key number i: borrowed, VAL_SIZE bytes. */
static const char *value_of(uint64_t i) {
  return aRing + splitmix(i ^ 0x5bd1e995) % RING_SIZE;
}

/* How much zstd at this level shrinks 16 KiB blocks of keys and values,
** as a fraction of the raw size (for the header line). */
static double measured_compressibility(int iLevel) {
  size_t nRaw = 0, nOut = 0, nBound;
  char *aBlock = malloc(BLOCK_BYTES), *aOut;
  uint64_t i = 0;
  int b;
  nBound = ZSTD_compressBound(BLOCK_BYTES);
  aOut = malloc(nBound);
  if (aBlock == NULL || aOut == NULL) die("out of memory");
  for (b = 0; b < 64; b++) {
    size_t n = 0, r;
    while (n + KEY_SIZE + VAL_SIZE <= BLOCK_BYTES) {
      make_key(aBlock + n, i);
      memcpy(aBlock + n + KEY_SIZE, value_of(i), VAL_SIZE);
      n += KEY_SIZE + VAL_SIZE;
      i++;
    }
    r = ZSTD_compress(aOut, nBound, aBlock, n, iLevel > 0 ? iLevel : 1);
    if (ZSTD_isError(r)) die("zstd: %s", ZSTD_getErrorName(r));
    nRaw += n;
    nOut += r;
  }
  free(aBlock);
  free(aOut);
  return (double)nOut / (double)nRaw;
}

/*
** A bijection on [0, n): a 4-round Feistel network on the smallest even
** number of bits covering n, with cycle walking for results >= n. Expected
** walks are under 4 because 2^bits < 4n.
*/
typedef struct Perm {
  uint64_t n;       /* domain size */
  int nHalf;        /* bits per Feistel half */
  uint64_t mask;    /* (1 << nHalf) - 1 */
  uint64_t aKey[4]; /* round keys */
} Perm;

static void perm_init(Perm *p, uint64_t n, uint64_t seed) {
  int bits = 2, k;
  while (bits < 64 && ((uint64_t)1 << bits) < n)
    bits += 2;
  p->n = n;
  p->nHalf = bits / 2;
  p->mask = ((uint64_t)1 << p->nHalf) - 1;
  for (k = 0; k < 4; k++)
    p->aKey[k] = splitmix(seed * 4 + (uint64_t)k);
}

static uint64_t perm_at(const Perm *p, uint64_t x) {
  do {
    uint64_t l = x >> p->nHalf, r = x & p->mask, t;
    int k;
    for (k = 0; k < 4; k++) {
      t = r;
      r = l ^ (splitmix(r ^ p->aKey[k]) & p->mask);
      l = t;
    }
    x = (l << p->nHalf) | r;
  } while (x >= p->n);
  return x;
}

static int rm_one(const char *z, const struct stat *st, int flag,
                  struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(z);
}

static void rm_rf(const char *zPath) {
  struct stat st;
  if (lstat(zPath, &st) == 0) nftw(zPath, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static uint64_t nDuBytes;
static int du_one(const char *z, const struct stat *st, int flag,
                  struct FTW *ftw) {
  (void)z;
  (void)ftw;
  if (flag == FTW_F) nDuBytes += (uint64_t)st->st_size;
  return 0;
}

/* Total size of the regular files under zPath. */
static uint64_t du_bytes(const char *zPath) {
  nDuBytes = 0;
  nftw(zPath, du_one, 16, FTW_PHYS);
  return nDuBytes;
}

/* ------------------------------------------------------------------ */
/* The two stores behind one small interface                           */

typedef struct Store Store;
struct Store {
  int iEngine; /* E_x */
  const Config *pCfg;
  char zPath[4096]; /* the store's directory */
  /* operations; each returns 0 or dies with the store's message */
  void (*xOpen)(Store *);
  void (*xClose)(Store *);
  void (*xPut)(Store *, const char *pKey, const char *pVal); /* to batch */
  void (*xCommit)(Store *);                                  /* the batch */
  /* Point read: returns a malloc'd value (NULL if absent), freed by xFree */
  char *(*xGet)(Store *, const char *pKey, size_t *pnVal);
  void (*xFree)(void *);
  void (*xSettle)(Store *);
  void (*xStats)(Store *);
  void (*xIterOpen)(Store *);
  void (*xIterClose)(Store *);
  void (*xSeek)(Store *, const char *pKey);
  void (*xFirst)(Store *);
  void (*xNext)(Store *);
  int (*xValid)(Store *);
  const char *(*xKey)(Store *, size_t *pn);
  const char *(*xValue)(Store *, size_t *pn);

  wcs_db *pWcs;
  wcs_batch *pWcsBatch;
  wcs_iter *pWcsIter;
#ifdef WCS_HAVE_ROCKSDB
  rocksdb_t *pRdb;
  rocksdb_options_t *pROpt;
  rocksdb_block_based_table_options_t *pRTable;
  rocksdb_cache_t *pRCache;
  rocksdb_filterpolicy_t *pRFilter;
  rocksdb_env_t *pREnv;
  rocksdb_writeoptions_t *pRWrite;
  rocksdb_readoptions_t *pRRead;
  rocksdb_writebatch_t *pRBatch;
  rocksdb_iterator_t *pRIter;
#endif
};

/* --- wcs */

static void wcs_check_rc(Store *s, int rc, const char *zWhat) {
  if (rc != WCS_OK) {
    die("wcs %s: %s (%s)", zWhat, wcs_errstr(rc),
        s->pWcs ? wcs_errmsg(s->pWcs) : "");
  }
}

static void w_open(Store *s) {
  wcs_options opt;
  char *zErr = NULL;
  int rc;
  wcs_options_init(&opt);
  opt.iSync = s->pCfg->bSyncOff ? WCS_SYNC_OFF : WCS_SYNC_NORMAL;
  opt.bInMemory = s->pCfg->bInMemory;
  opt.nMemtable = MEMTABLE_BYTES;
  opt.nCache = CACHE_BYTES;
  opt.bFixedCache = 1; /* RocksDB's cache does not borrow memtable memory */
  opt.nBlockSize = BLOCK_BYTES;
  opt.iZstdLevel = s->pCfg->iZstd;
  opt.nBloomBits = BLOOM_BITS;
  rc = wcs_db_open(&s->pWcs, s->zPath, &opt, &zErr);
  if (rc != WCS_OK)
    die("wcs open %s: %s (%s)", s->zPath, wcs_errstr(rc), zErr ? zErr : "");
  rc = wcs_batch_new(&s->pWcsBatch);
  wcs_check_rc(s, rc, "batch");
}

static void w_close(Store *s) {
  int rc;
  wcs_batch_free(s->pWcsBatch);
  s->pWcsBatch = NULL;
  rc = wcs_db_close(s->pWcs);
  s->pWcs = NULL;
  if (rc != WCS_OK) die("wcs close: %s", wcs_errstr(rc));
}

static void w_put(Store *s, const char *pKey, const char *pVal) {
  int rc = wcs_batch_put(s->pWcsBatch, pKey, KEY_SIZE, pVal, VAL_SIZE);
  if (rc != WCS_OK) wcs_check_rc(s, rc, "batch put");
}

static void w_commit(Store *s) {
  int rc = wcs_db_write(s->pWcs, s->pWcsBatch);
  if (rc != WCS_OK) wcs_check_rc(s, rc, "write");
  wcs_batch_clear(s->pWcsBatch);
}

static char *w_get(Store *s, const char *pKey, size_t *pnVal) {
  void *pVal = NULL;
  int rc = wcs_db_get(s->pWcs, NULL, pKey, KEY_SIZE, &pVal, pnVal);
  if (rc != WCS_OK) wcs_check_rc(s, rc, "get");
  return pVal;
}

/* Non-empty levels in wcs's stats JSON ("files":N appears once per level
** and nowhere else). */
static int w_levels_used(Store *s) {
  char *z = NULL;
  const char *p;
  int n = 0;
  wcs_check_rc(s, wcs_db_stats(s->pWcs, &z), "stats");
  for (p = z; (p = strstr(p, "\"files\":")) != NULL; p += 8) {
    if (atoi(p + 8) > 0) n++;
  }
  wcs_free(z);
  return n;
}

/*
** Flush, compact everything, and wait until background work is over.
** wcs_db_compact_range() compacts into the deepest non-empty level; when
** that level is then over its size target, a background compaction moves
** part of it one level down right after the call returns. So: wait for the
** process to go idle, and while the data is spread over more than one
** level, compact again (the second pass lands in the deepest level).
*/
static void w_settle(Store *s) {
  int rc = wcs_db_flush(s->pWcs), nPass;
  wcs_check_rc(s, rc, "flush");
  for (nPass = 0; nPass < 4; nPass++) {
    rc = wcs_db_compact_range(s->pWcs, NULL, 0, NULL, 0);
    wcs_check_rc(s, rc, "compact_range");
    wait_idle();
    if (w_levels_used(s) <= 1) break;
  }
}

static void w_stats(Store *s) {
  char *z = NULL;
  if (wcs_db_stats(s->pWcs, &z) == WCS_OK && z) {
    fprintf(stderr, "wcs stats: %s\n", z);
  }
  wcs_free(z);
}

static void w_iter_open(Store *s) {
  int rc = wcs_iter_new(s->pWcs, NULL, &s->pWcsIter);
  wcs_check_rc(s, rc, "iter_new");
}
static void w_iter_close(Store *s) {
  wcs_iter_free(s->pWcsIter);
  s->pWcsIter = NULL;
}
static void w_seek(Store *s, const char *pKey) {
  int rc = wcs_iter_seek(s->pWcsIter, pKey, KEY_SIZE);
  if (rc != WCS_OK) wcs_check_rc(s, rc, "iter_seek");
}
static void w_first(Store *s) {
  int rc = wcs_iter_first(s->pWcsIter);
  if (rc != WCS_OK) wcs_check_rc(s, rc, "iter_first");
}
static void w_next(Store *s) {
  int rc = wcs_iter_next(s->pWcsIter);
  if (rc != WCS_OK) wcs_check_rc(s, rc, "iter_next");
}
static int w_valid(Store *s) {
  return wcs_iter_valid(s->pWcsIter);
}
static const char *w_key(Store *s, size_t *pn) {
  return wcs_iter_key(s->pWcsIter, pn);
}
static const char *w_value(Store *s, size_t *pn) {
  return wcs_iter_value(s->pWcsIter, pn);
}

static void store_init_wcs(Store *s) {
  s->xOpen = w_open;
  s->xClose = w_close;
  s->xPut = w_put;
  s->xCommit = w_commit;
  s->xGet = w_get;
  s->xFree = wcs_free;
  s->xSettle = w_settle;
  s->xStats = w_stats;
  s->xIterOpen = w_iter_open;
  s->xIterClose = w_iter_close;
  s->xSeek = w_seek;
  s->xFirst = w_first;
  s->xNext = w_next;
  s->xValid = w_valid;
  s->xKey = w_key;
  s->xValue = w_value;
}

/* --- RocksDB */
#ifdef WCS_HAVE_ROCKSDB

static void r_check(char *zErr, const char *zWhat) {
  if (zErr) die("rocksdb %s: %s", zWhat, zErr);
}

static void r_open(Store *s) {
  char *zErr = NULL;
  rocksdb_options_t *o = rocksdb_options_create();
  rocksdb_block_based_table_options_t *t = rocksdb_block_based_options_create();
  s->pROpt = o;
  s->pRTable = t;
  rocksdb_options_set_create_if_missing(o, 1);
  rocksdb_options_set_write_buffer_size(o, s->pCfg->nRocksWriteBuf);
  rocksdb_options_set_max_write_buffer_number(o, 2);
  rocksdb_options_set_compression(o, rocksdb_zstd_compression);
  /* window bits (default), level, strategy, max dict bytes */
  rocksdb_options_set_compression_options(o, -14, s->pCfg->iZstd, 0, 0);
  s->pRCache = rocksdb_cache_create_lru(CACHE_BYTES);
  rocksdb_block_based_options_set_block_cache(t, s->pRCache);
  rocksdb_block_based_options_set_block_size(t, BLOCK_BYTES);
  s->pRFilter = rocksdb_filterpolicy_create_bloom_full(BLOOM_BITS);
  rocksdb_block_based_options_set_filter_policy(t, s->pRFilter);
  rocksdb_block_based_options_set_cache_index_and_filter_blocks(
      t, (unsigned char)s->pCfg->bRocksIdxInCache);
  rocksdb_options_set_block_based_table_factory(o, t);
  if (s->pCfg->bInMemory) {
    s->pREnv = rocksdb_create_mem_env();
    rocksdb_options_set_env(o, s->pREnv);
  }
  s->pRdb = rocksdb_open(o, s->zPath, &zErr);
  r_check(zErr, "open");
  s->pRWrite = rocksdb_writeoptions_create();
  rocksdb_writeoptions_set_sync(s->pRWrite, 0);
  s->pRRead = rocksdb_readoptions_create();
  s->pRBatch = rocksdb_writebatch_create();
}

static void r_close(Store *s) {
  rocksdb_writebatch_destroy(s->pRBatch);
  rocksdb_readoptions_destroy(s->pRRead);
  rocksdb_writeoptions_destroy(s->pRWrite);
  rocksdb_close(s->pRdb);
  rocksdb_options_destroy(s->pROpt);
  /* the table options own the filter policy */
  rocksdb_block_based_options_destroy(s->pRTable);
  rocksdb_cache_destroy(s->pRCache);
  if (s->pREnv) rocksdb_env_destroy(s->pREnv);
  s->pRdb = NULL;
  s->pREnv = NULL;
}

static void r_put(Store *s, const char *pKey, const char *pVal) {
  rocksdb_writebatch_put(s->pRBatch, pKey, KEY_SIZE, pVal, VAL_SIZE);
}

static void r_commit(Store *s) {
  char *zErr = NULL;
  rocksdb_write(s->pRdb, s->pRWrite, s->pRBatch, &zErr);
  r_check(zErr, "write");
  rocksdb_writebatch_clear(s->pRBatch);
}

static char *r_get(Store *s, const char *pKey, size_t *pnVal) {
  char *zErr = NULL;
  char *p = rocksdb_get(s->pRdb, s->pRRead, pKey, KEY_SIZE, pnVal, &zErr);
  r_check(zErr, "get");
  return p;
}

static uint64_t r_prop(Store *s, const char *zName) {
  uint64_t v = 0;
  if (rocksdb_property_int(s->pRdb, zName, &v) != 0) v = 0;
  return v;
}

static void r_settle(Store *s) {
  rocksdb_compact_range(s->pRdb, NULL, 0, NULL, 0);
  while (r_prop(s, "rocksdb.compaction-pending") ||
         r_prop(s, "rocksdb.num-running-compactions") ||
         r_prop(s, "rocksdb.num-running-flushes")) {
    usleep(20000);
  }
  wait_idle();
}

static void r_stats(Store *s) {
  char *z = rocksdb_property_value(s->pRdb, "rocksdb.levelstats");
  if (z) fprintf(stderr, "rocksdb levelstats:\n%s\n", z);
  rocksdb_free(z);
}

static void r_iter_open(Store *s) {
  s->pRIter = rocksdb_create_iterator(s->pRdb, s->pRRead);
}
static void r_iter_close(Store *s) {
  char *zErr = NULL;
  rocksdb_iter_get_error(s->pRIter, &zErr);
  r_check(zErr, "iterator");
  rocksdb_iter_destroy(s->pRIter);
  s->pRIter = NULL;
}
static void r_seek(Store *s, const char *pKey) {
  rocksdb_iter_seek(s->pRIter, pKey, KEY_SIZE);
}
static void r_first(Store *s) {
  rocksdb_iter_seek_to_first(s->pRIter);
}
static void r_next(Store *s) {
  rocksdb_iter_next(s->pRIter);
}
static int r_valid(Store *s) {
  return rocksdb_iter_valid(s->pRIter);
}
static const char *r_key(Store *s, size_t *pn) {
  return rocksdb_iter_key(s->pRIter, pn);
}
static const char *r_value(Store *s, size_t *pn) {
  return rocksdb_iter_value(s->pRIter, pn);
}
static void r_free(void *p) {
  rocksdb_free(p);
}

static void store_init_rocksdb(Store *s) {
  s->xOpen = r_open;
  s->xClose = r_close;
  s->xPut = r_put;
  s->xCommit = r_commit;
  s->xGet = r_get;
  s->xFree = r_free;
  s->xSettle = r_settle;
  s->xStats = r_stats;
  s->xIterOpen = r_iter_open;
  s->xIterClose = r_iter_close;
  s->xSeek = r_seek;
  s->xFirst = r_first;
  s->xNext = r_next;
  s->xValid = r_valid;
  s->xKey = r_key;
  s->xValue = r_value;
}
#endif /* WCS_HAVE_ROCKSDB */

/* ------------------------------------------------------------------ */
/* The workloads, run in the child                                     */

static int fdResult = -1;       /* the child's end of the pipe to the parent */
static volatile uint64_t uSink; /* bytes seen by scans, so they really read */

static void send_record(int iWork, uint64_t nOps, double secs, uint64_t nDisk) {
  Record r;
  memset(&r, 0, sizeof r);
  r.iWork = iWork;
  r.nOps = nOps;
  r.secs = secs;
  r.nRssKb = peak_rss_kb();
  r.nDiskBytes = nDisk;
  if (write(fdResult, &r, sizeof r) != (ssize_t)sizeof r) {
    die("cannot report to the parent: %s", strerror(errno));
  }
}

/* Put keys order(0..n-1) in batches of BATCH_KEYS; returns seconds. */
static double do_fill(Store *s, const Perm *pPerm) {
  const uint64_t n = s->pCfg->nKeys;
  char aKey[KEY_SIZE];
  uint64_t i;
  double t0 = now_secs();
  for (i = 0; i < n; i++) {
    uint64_t k = pPerm ? perm_at(pPerm, i) : i;
    make_key(aKey, k);
    s->xPut(s, aKey, value_of(k));
    if ((i + 1) % BATCH_KEYS == 0 || i + 1 == n) s->xCommit(s);
  }
  return now_secs() - t0;
}

static double do_readrandom(Store *s, uint64_t seed) {
  const uint64_t n = s->pCfg->nKeys, nReads = s->pCfg->nReads;
  Rng r = {seed};
  char aKey[KEY_SIZE];
  uint64_t i;
  double t0 = now_secs();
  for (i = 0; i < nReads; i++) {
    uint64_t k = rng_next(&r) % n;
    size_t nVal = 0;
    char *pVal;
    make_key(aKey, k);
    pVal = s->xGet(s, aKey, &nVal);
    if (pVal == NULL)
      die("%s: key %.16s not found", azEngine[s->iEngine], aKey);
    if (nVal != VAL_SIZE || memcmp(pVal, value_of(k), VAL_SIZE) != 0) {
      die("%s: wrong value for key %.16s", azEngine[s->iEngine], aKey);
    }
    s->xFree(pVal);
  }
  return now_secs() - t0;
}

static double do_seekrandom(Store *s, uint64_t seed) {
  const uint64_t n = s->pCfg->nKeys, nSeeks = s->pCfg->nSeeks;
  Rng r = {seed};
  char aKey[KEY_SIZE];
  uint64_t i, nBytes = 0;
  double t0 = now_secs();
  s->xIterOpen(s);
  for (i = 0; i < nSeeks; i++) {
    uint64_t k = rng_next(&r) % n;
    size_t nK = 0, nV = 0;
    const char *p;
    int j;
    make_key(aKey, k);
    s->xSeek(s, aKey);
    if (!s->xValid(s))
      die("%s: seek to %.16s found nothing", azEngine[s->iEngine], aKey);
    p = s->xKey(s, &nK);
    if (nK != KEY_SIZE || memcmp(p, aKey, KEY_SIZE) != 0) {
      die("%s: seek to %.16s landed elsewhere", azEngine[s->iEngine], aKey);
    }
    for (j = 0; j < SEEK_NEXTS && s->xValid(s); j++) {
      s->xNext(s);
      if (!s->xValid(s)) break;
      s->xKey(s, &nK);
      p = s->xValue(s, &nV);
      nBytes += nK + nV + (unsigned char)p[0];
    }
  }
  s->xIterClose(s);
  uSink += nBytes; /* keep the reads from being optimised away */
  return now_secs() - t0;
}

static double do_readseq(Store *s) {
  const uint64_t n = s->pCfg->nKeys;
  uint64_t nSeen = 0, nBytes = 0;
  double t0 = now_secs(), t;
  s->xIterOpen(s);
  for (s->xFirst(s); s->xValid(s); s->xNext(s)) {
    size_t nK = 0, nV = 0;
    s->xKey(s, &nK);
    s->xValue(s, &nV);
    nBytes += nK + nV;
    nSeen++;
  }
  t = now_secs() - t0;
  s->xIterClose(s);
  if (nSeen != n || nBytes != n * (KEY_SIZE + VAL_SIZE)) {
    die("%s: readseq saw %" PRIu64 " keys (%" PRIu64
        " bytes), expected %" PRIu64,
        azEngine[s->iEngine], nSeen, nBytes, n);
  }
  return t;
}

static void make_path(Store *s, int iRun, const char *zTag) {
  if (s->pCfg->bInMemory) {
    snprintf(s->zPath, sizeof s->zPath, "/bench-mem-%s-%d-%s",
             azEngine[s->iEngine], iRun, zTag);
  } else {
    snprintf(s->zPath, sizeof s->zPath, "%s/%s-%d-r%d-%s", s->pCfg->zDir,
             azEngine[s->iEngine], (int)getpid(), iRun, zTag);
    rm_rf(s->zPath);
  }
}

/* Run the chosen workloads of one engine; called in the child. */
static void run_engine(const Config *pCfg, int iEngine, int iRun) {
  Store s;
  const unsigned mRead =
      (1u << W_READRANDOM) | (1u << W_SEEKRANDOM) | (1u << W_READSEQ);
  memset(&s, 0, sizeof s);
  s.iEngine = iEngine;
  s.pCfg = pCfg;
  if (iEngine == E_WCS) store_init_wcs(&s);
#ifdef WCS_HAVE_ROCKSDB
  else
    store_init_rocksdb(&s);
#endif

  if (pCfg->mWork & (1u << W_FILLSEQ)) {
    double t;
    make_path(&s, iRun, "seq");
    s.xOpen(&s);
    t = do_fill(&s, NULL);
    send_record(W_FILLSEQ, pCfg->nKeys, t, 0);
    s.xClose(&s);
    if (!pCfg->bInMemory) rm_rf(s.zPath);
  }

  if (pCfg->mWork & ((1u << W_FILLRANDOM) | mRead)) {
    Perm perm;
    double t;
    uint64_t nDisk;
    perm_init(&perm, pCfg->nKeys, 1000 + (uint64_t)iRun);
    make_path(&s, iRun, "rnd");
    s.xOpen(&s);
    t = do_fill(&s, &perm);
    if (pCfg->mWork & (1u << W_FILLRANDOM)) {
      send_record(W_FILLRANDOM, pCfg->nKeys, t, 0);
    }
    if (pCfg->mWork & mRead) {
      t = now_secs();
      s.xSettle(&s);
      t = now_secs() - t;
      nDisk = pCfg->bInMemory ? 0 : du_bytes(s.zPath);
      send_record(W_SETTLE, 0, t, nDisk);
      if (pCfg->mWork & (1u << W_READRANDOM)) {
        t = do_readrandom(&s, 7 + (uint64_t)iRun);
        send_record(W_READRANDOM, pCfg->nReads, t, 0);
      }
      if (pCfg->mWork & (1u << W_SEEKRANDOM)) {
        t = do_seekrandom(&s, 77 + (uint64_t)iRun);
        send_record(W_SEEKRANDOM, pCfg->nSeeks, t, 0);
      }
      if (pCfg->mWork & (1u << W_READSEQ)) {
        t = do_readseq(&s);
        send_record(W_READSEQ, pCfg->nKeys, t, 0);
      }
      if (pCfg->bVerbose) s.xStats(&s);
    }
    s.xClose(&s);
    if (!pCfg->bInMemory) rm_rf(s.zPath);
  }
}

/* ------------------------------------------------------------------ */
/* The parent: runs the children, collects, prints                     */

typedef struct Results {
  double aOps[E_COUNT][W_COUNT][MAX_RUNS]; /* ops/s (settle: seconds) */
  int aN[E_COUNT][W_COUNT];                /* runs recorded */
  long aRssKb[E_COUNT];                    /* peak over all runs */
  uint64_t aDisk[E_COUNT];                 /* last settled size */
  int aFailed[E_COUNT];                    /* runs that failed */
} Results;

static void out_line(const Config *pCfg, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  vprintf(zFmt, ap);
  va_end(ap);
  if (pCfg->pOut) {
    va_start(ap, zFmt);
    vfprintf(pCfg->pOut, zFmt, ap);
    va_end(ap);
    fflush(pCfg->pOut);
  }
  fflush(stdout);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(const double *a, int n) {
  double aSort[MAX_RUNS];
  if (n == 0) return 0;
  memcpy(aSort, a, sizeof(double) * (size_t)n);
  qsort(aSort, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? aSort[n / 2] : (aSort[n / 2 - 1] + aSort[n / 2]) / 2;
}

static void run_child(const Config *pCfg, Results *pRes, int iEngine,
                      int iRun) {
  int aFd[2];
  pid_t pid;
  Record r;
  int status = 0;
  struct rusage ru;
  ssize_t got;

  if (pipe(aFd) != 0) die("pipe: %s", strerror(errno));
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid < 0) die("fork: %s", strerror(errno));
  if (pid == 0) {
    close(aFd[0]);
    fdResult = aFd[1];
    run_engine(pCfg, iEngine, iRun);
    close(aFd[1]);
    _exit(0);
  }
  close(aFd[1]);
  while ((got = read(aFd[0], &r, sizeof r)) == (ssize_t)sizeof r) {
    if (r.iWork < 0 || r.iWork >= W_COUNT) break;
    if (r.iWork == W_SETTLE) {
      out_line(pCfg,
               "RESULT engine=%s run=%d workload=settle secs=%.3f "
               "disk_bytes=%" PRIu64 " maxrss_kb=%ld\n",
               azEngine[iEngine], iRun + 1, r.secs, r.nDiskBytes, r.nRssKb);
      pRes->aOps[iEngine][W_SETTLE][pRes->aN[iEngine][W_SETTLE]++] = r.secs;
      pRes->aDisk[iEngine] = r.nDiskBytes;
    } else {
      double ops = r.secs > 0 ? (double)r.nOps / r.secs : 0;
      out_line(pCfg,
               "RESULT engine=%s run=%d workload=%s ops=%" PRIu64
               " secs=%.3f ops_per_sec=%.0f maxrss_kb=%ld load_avg=%.2f\n",
               azEngine[iEngine], iRun + 1, azWork[r.iWork], r.nOps, r.secs,
               ops, r.nRssKb, load_avg());
      pRes->aOps[iEngine][r.iWork][pRes->aN[iEngine][r.iWork]++] = ops;
    }
  }
  close(aFd[0]);
  if (wait4(pid, &status, 0, &ru) < 0) die("wait: %s", strerror(errno));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    pRes->aFailed[iEngine]++;
    out_line(pCfg, "FAILED engine=%s run=%d status=%d\n", azEngine[iEngine],
             iRun + 1,
             WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  if (ru.ru_maxrss > pRes->aRssKb[iEngine])
    pRes->aRssKb[iEngine] = ru.ru_maxrss;
}

/* ops/s as text, or "-" when not measured (two static buffers). */
static const char *fmt_ops(double ops, int iBuf) {
  static char az[2][32];
  if (ops <= 0) return "-";
  snprintf(az[iBuf], sizeof az[iBuf], "%.0f", ops);
  return az[iBuf];
}

static void print_report(const Config *pCfg, Results *pRes) {
  int w, e;
  int bBoth =
      (pCfg->mEngine & (1u << E_WCS)) && (pCfg->mEngine & (1u << E_ROCKSDB));

  printf("\n%-11s %14s %14s %8s %6s\n", "workload", "wcs ops/s",
         "RocksDB ops/s", "ratio", "goal");
  for (w = 0; w < W_SETTLE; w++) {
    double m[E_COUNT];
    char zRatio[32] = "-", zGoal[32] = "-";
    if (!(pCfg->mWork & (1u << w))) continue;
    for (e = 0; e < E_COUNT; e++)
      m[e] = median(pRes->aOps[e][w], pRes->aN[e][w]);
    if (bBoth && m[E_ROCKSDB] > 0 && m[E_WCS] > 0) {
      snprintf(zRatio, sizeof zRatio, "%.2f", m[E_WCS] / m[E_ROCKSDB]);
      snprintf(zGoal, sizeof zGoal, "%s%.1f",
               m[E_WCS] / m[E_ROCKSDB] >= aGoal[w] ? ">=" : "<", aGoal[w]);
    }
    printf("%-11s %14s %14s %8s %6s\n", azWork[w], fmt_ops(m[E_WCS], 0),
           fmt_ops(m[E_ROCKSDB], 1), zRatio, zGoal);
  }
  for (w = 0; w < W_SETTLE; w++) {
    double m[E_COUNT];
    if (!(pCfg->mWork & (1u << w))) continue;
    for (e = 0; e < E_COUNT; e++)
      m[e] = median(pRes->aOps[e][w], pRes->aN[e][w]);
    out_line(pCfg,
             "SUMMARY workload=%s keys=%" PRIu64
             " runs=%d wcs_ops_per_sec=%.0f "
             "rocksdb_ops_per_sec=%.0f ratio=%.3f goal=%.1f\n",
             azWork[w], pCfg->nKeys, pCfg->nRuns, m[E_WCS], m[E_ROCKSDB],
             m[E_ROCKSDB] > 0 && m[E_WCS] > 0 ? m[E_WCS] / m[E_ROCKSDB] : 0.0,
             aGoal[w]);
  }
  printf("\n");
  for (e = 0; e < E_COUNT; e++) {
    double rss = (double)pRes->aRssKb[e] / 1024;
    /* memtable memory the engine may hold: wcs's nMemtable covers its
    ** active and immutable memtables; RocksDB keeps up to 2 buffers */
    size_t nMem = e == E_WCS ? MEMTABLE_BYTES : 2 * pCfg->nRocksWriteBuf;
    double budget = (double)(nMem + CACHE_BYTES) / (1 << 20);
    if (!(pCfg->mEngine & (1u << e))) continue;
    printf("%-8s peak RSS %7.1f MiB (budget: memtables %zu + cache %u = %.0f "
           "MiB; %s)",
           azEngine[e], rss, nMem >> 20, CACHE_BYTES >> 20, budget,
           pCfg->bInMemory ? "in-memory: data counts too"
           : rss <= budget ? "within"
                           : "over");
    if (pRes->aN[e][W_SETTLE]) {
      printf(", settle %.1f s, %.1f MiB on disk",
             median(pRes->aOps[e][W_SETTLE], pRes->aN[e][W_SETTLE]),
             (double)pRes->aDisk[e] / (1 << 20));
    }
    if (pRes->aFailed[e]) printf(", %d FAILED runs", pRes->aFailed[e]);
    printf("\n");
    out_line(pCfg,
             "MEMORY engine=%s maxrss_kb=%ld budget_kb=%zu within=%d "
             "disk_bytes=%" PRIu64 " failed_runs=%d\n",
             azEngine[e], pRes->aRssKb[e], (nMem + CACHE_BYTES) >> 10,
             rss <= budget, pRes->aDisk[e], pRes->aFailed[e]);
  }
}

static void usage(void) {
  fprintf(stderr,
          "usage: bench_storage [-n KEYS] [-r RUNS] [-w LIST] [-d DIR] "
          "[-e LIST] [-R READS] [-S SEEKS] [-z LEVEL] [-s off|normal] "
          "[-I 0|1] [-W MIB] [-M] [-o FILE] [-v]\n"
          "  workloads: fillseq,fillrandom,readrandom,seekrandom,readseq\n"
          "  engines:   wcs,rocksdb\n");
  exit(2);
}

/* Parse a comma-separated list of names into a bit mask. */
static unsigned parse_list(const char *z, const char **azName, int nName) {
  unsigned m = 0;
  char *zCopy = strdup(z), *zTok, *zSave = NULL;
  if (zCopy == NULL) die("out of memory");
  for (zTok = strtok_r(zCopy, ",", &zSave); zTok;
       zTok = strtok_r(NULL, ",", &zSave)) {
    int i;
    for (i = 0; i < nName; i++) {
      if (strcmp(zTok, azName[i]) == 0) break;
    }
    if (i == nName) {
      fprintf(stderr, "bench_storage: unknown name '%s'\n", zTok);
      usage();
    }
    m |= 1u << i;
  }
  free(zCopy);
  return m;
}

int main(int argc, char **argv) {
  Config cfg;
  static Results res;
  const char *zOut = NULL;
  int c, iRun, bReadsSet = 0, bSeeksSet = 0;

  memset(&cfg, 0, sizeof cfg);
  cfg.nKeys = 10000000;
  cfg.nRuns = 3;
  cfg.mWork = (1u << W_SETTLE) - 1;
  cfg.mEngine = 1u << E_WCS;
#ifdef WCS_HAVE_ROCKSDB
  cfg.mEngine |= 1u << E_ROCKSDB;
#endif
  cfg.zDir = "bench-storage-data";
  cfg.iZstd = 3;
  cfg.nRocksWriteBuf = MEMTABLE_BYTES / 2;
  cfg.bRocksIdxInCache = 1;

  while ((c = getopt(argc, argv, "n:r:w:d:e:R:S:z:s:I:W:Mo:vh")) != -1) {
    switch (c) {
    case 'n':
      cfg.nKeys = strtoull(optarg, NULL, 10);
      break;
    case 'r':
      cfg.nRuns = atoi(optarg);
      break;
    case 'w':
      cfg.mWork = parse_list(optarg, azWork, W_SETTLE);
      break;
    case 'd':
      cfg.zDir = optarg;
      break;
    case 'e':
      cfg.mEngine = parse_list(optarg, azEngine, E_COUNT);
      break;
    case 'R':
      cfg.nReads = strtoull(optarg, NULL, 10);
      bReadsSet = 1;
      break;
    case 'S':
      cfg.nSeeks = strtoull(optarg, NULL, 10);
      bSeeksSet = 1;
      break;
    case 'z':
      cfg.iZstd = atoi(optarg);
      break;
    case 's':
      if (strcmp(optarg, "off") == 0)
        cfg.bSyncOff = 1;
      else if (strcmp(optarg, "normal") == 0)
        cfg.bSyncOff = 0;
      else
        usage();
      break;
    case 'I':
      cfg.bRocksIdxInCache = atoi(optarg) != 0;
      break;
    case 'W':
      cfg.nRocksWriteBuf = (size_t)atoi(optarg) << 20;
      break;
    case 'M':
      cfg.bInMemory = 1;
      break;
    case 'o':
      zOut = optarg;
      break;
    case 'v':
      cfg.bVerbose = 1;
      break;
    default:
      usage();
    }
  }
  if (optind != argc || cfg.nKeys == 0 || cfg.nRuns < 1 ||
      cfg.nRuns > MAX_RUNS || cfg.iZstd < 0 || cfg.iZstd > 19 ||
      cfg.nRocksWriteBuf < (1u << 20)) {
    usage();
  }
  if (!bReadsSet) cfg.nReads = cfg.nKeys < 1000000 ? cfg.nKeys : 1000000;
  if (!bSeeksSet) cfg.nSeeks = cfg.nKeys < 100000 ? cfg.nKeys : 100000;
#ifndef WCS_HAVE_ROCKSDB
  if (cfg.mEngine & (1u << E_ROCKSDB)) {
    fprintf(stderr, "bench_storage: built without RocksDB; measuring wcs "
                    "only\n");
    cfg.mEngine &= ~(1u << E_ROCKSDB);
  }
#endif
  if (cfg.mEngine == 0) usage();
  if (zOut) {
    cfg.pOut = fopen(zOut, "a");
    if (cfg.pOut == NULL) die("cannot open %s: %s", zOut, strerror(errno));
  }
  if (!cfg.bInMemory && mkdir(cfg.zDir, 0755) != 0 && errno != EEXIST) {
    die("cannot create %s: %s", cfg.zDir, strerror(errno));
  }
  ring_init();

  out_line(&cfg,
           "CONFIG keys=%" PRIu64 " key_bytes=%d value_bytes=%d runs=%d "
           "reads=%" PRIu64 " seeks=%" PRIu64 " seek_nexts=%d batch=%d "
           "zstd=%d block=%d bloom_bits=%d memtable=%u cache=%u sync=%s "
           "rocksdb_write_buffer=%zu rocksdb_index_in_cache=%d in_memory=%d "
           "value_compressed_fraction=%.2f load_avg=%.2f\n",
           cfg.nKeys, KEY_SIZE, VAL_SIZE, cfg.nRuns, cfg.nReads, cfg.nSeeks,
           SEEK_NEXTS, BATCH_KEYS, cfg.iZstd, BLOCK_BYTES, BLOOM_BITS,
           MEMTABLE_BYTES, CACHE_BYTES, cfg.bSyncOff ? "off" : "normal",
           cfg.nRocksWriteBuf, cfg.bRocksIdxInCache, cfg.bInMemory,
           measured_compressibility(cfg.iZstd), load_avg());

  for (iRun = 0; iRun < cfg.nRuns; iRun++) {
    int k;
    for (k = 0; k < E_COUNT; k++) {
      /* alternate which engine goes first, so neither always gets the
      ** cooler machine (page cache, disk write-back) */
      int e = (iRun % 2) ? E_COUNT - 1 - k : k;
      if (cfg.mEngine & (1u << e)) run_child(&cfg, &res, e, iRun);
    }
  }
  print_report(&cfg, &res);
  if (!cfg.bInMemory) rmdir(cfg.zDir); /* only if empty: not ours else */
  if (cfg.pOut) fclose(cfg.pOut);
  return res.aFailed[E_WCS] || res.aFailed[E_ROCKSDB] ? 1 : 0;
}
