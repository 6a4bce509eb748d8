/*
** pgo_train.c — the training run of a profile-guided build (`make install`
** and `make bench` build the library twice: once instrumented, which runs
** this program, and once optimised with the profile it leaves; README,
** "Optimised builds"). It does what the module's users do, through SQL:
** loads in key order and in random order, updates that make versions,
** deletes, point reads, prefix, range, reverse, skip and multi-point
** scans, aggregates, history reads, family columns and the SQL functions,
** compaction, and reads after a reopen.
**
** It deliberately does not run the benchmark's table: its tables have
** other key schemas (a reversed timestamp, an ORDERED CODE key) and other
** families (text, floats, counters as 8-byte big-endian INT64 — Bigtable's
** default —, DECIMAL text, bytes, JSON, a GC policy), so that the profile
** says which paths are hot in general, not on one workload.
**
** USAGE
**   pgo_train DIR [ROWS [MODULE]]
**
** DIR is made (it must not exist) and removed at the end; ROWS (default
** 150000, at least 10000) sets the size of the main table. The module is
** the one linked in (wcs_register), or with MODULE the loadable one at
** that path (the build compiles the SQL module twice, and each copy needs
** its own profile).
** Exit status 0 if every statement did what it should.
*/
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wcs.h"

#define BENCH_NAME "pgo_train"
#include "benchsql.h"

static const char *azTenant[5] = {"acme", "globex", "initech", "umbrella",
                                  "wonka"};
static const char *azKind[4] = {"click", "purchase", "refund", "view"};

static int bVerbose; /* WCS_TRAIN_VERBOSE set: each statement's time */

static uint64_t rngState = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void) {
  rngState ^= rngState << 13;
  rngState ^= rngState >> 7;
  rngState ^= rngState << 17;
  return rngState;
}

/* Step st to its end and reset it; returns the rows it gave. Every column
** of every row is read, as a client would. */
static long drain(sqlite3 *db, sqlite3_stmt *st) {
  long n = 0;
  int rc, i;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (i = 0; i < sqlite3_column_count(st); i++) {
      (void)sqlite3_column_text(st, i);
    }
    n++;
  }
  if (rc != SQLITE_DONE) {
    die("%s: %s", sqlite3_sql(st), sqlite3_errmsg(db));
  }
  sqlite3_reset(st);
  return n;
}

static const char *zModule; /* MODULE, or NULL: the linked-in one */

/* Run the bound INSERT or UPDATE st, the i-th of a transaction's
** statements; with nEvery, COMMIT and BEGIN again after every nEvery. */
static void stepRow(sqlite3 *db, sqlite3_stmt *st, long i, long nEvery) {
  if (sqlite3_step(st) != SQLITE_DONE) {
    die("%s: %s", sqlite3_sql(st), sqlite3_errmsg(db));
  }
  sqlite3_reset(st);
  if (nEvery && (i + 1) % nEvery == 0) {
    exec(db, "COMMIT");
    exec(db, "BEGIN");
  }
}

static sqlite3 *openDb(const char *zPath) {
  sqlite3 *db = NULL;
  char *zErr = NULL;
  if (sqlite3_open(zPath, &db) != SQLITE_OK) {
    die("cannot open %s: %s", zPath, db ? sqlite3_errmsg(db) : "no memory");
  }
  if (zModule == NULL
          ? wcs_register(db) != SQLITE_OK
          : (sqlite3_enable_load_extension(db, 1),
             sqlite3_load_extension(db, zModule, NULL, &zErr) != SQLITE_OK)) {
    die("cannot load the module%s%s: %s", zModule ? " " : "",
        zModule ? zModule : "", zErr ? zErr : sqlite3_errmsg(db));
  }
  exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL");
  return db;
}

/* Row i of the events table: tenant, user (4 hex digits), and a time in
** microseconds that grows with i within a user. */
typedef struct Ev {
  int iTenant;
  char zUser[24];
  int64_t ts;
} Ev;

#define PER_USER 300 /* rows of one user: one tenant#user prefix */

static void evAt(long i, Ev *e) {
  long u = i / PER_USER;
  e->iTenant = (int)(u % 5);
  snprintf(e->zUser, sizeof e->zUser, "u%04lx", u / 5);
  e->ts = 1700000000000000LL + (int64_t)(i % PER_USER) * 60000000LL;
}

static void bindEv(sqlite3_stmt *st, const Ev *e) {
  sqlite3_bind_text(st, 1, azTenant[e->iTenant], -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, e->zUser, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 3, e->ts);
}

static void loadEvents(sqlite3 *db, long nRow) {
  sqlite3_stmt *st = prep(db, "INSERT INTO events(tenant, usr, ts, kind, "
                              "amount, n, attrs, score) "
                              "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  long i, *aOrder;
  char zAttrs[96];
  /* in key order, one transaction */
  exec(db, "BEGIN");
  for (i = 0; i < nRow; i++) {
    Ev e;
    evAt(i, &e);
    bindEv(st, &e);
    sqlite3_bind_text(st, 4, azKind[rnd() % 4], -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 5, (double)(rnd() % 100000) / 100.0);
    sqlite3_bind_int64(st, 6, (int64_t)(rnd() % 1000));
    if (i % 3 == 0) {
      snprintf(zAttrs, sizeof zAttrs, "{\"src\":\"web\",\"v\":%d}",
               (int)(rnd() % 9));
      sqlite3_bind_text(st, 7, zAttrs, -1, SQLITE_TRANSIENT);
    } else {
      sqlite3_bind_null(st, 7);
    }
    sqlite3_bind_int64(st, 8, (int64_t)(rnd() % 50));
    stepRow(db, st, i, 0);
  }
  exec(db, "COMMIT");
  /* new versions of a quarter of the rows, in random order, a COMMIT
  ** every 2,000 */
  aOrder = malloc((size_t)nRow * sizeof *aOrder);
  if (aOrder == NULL) die("out of memory");
  for (i = 0; i < nRow; i++)
    aOrder[i] = i;
  for (i = nRow - 1; i > 0; i--) {
    long j = (long)(rnd() % (uint64_t)(i + 1)), t = aOrder[i];
    aOrder[i] = aOrder[j];
    aOrder[j] = t;
  }
  sqlite3_finalize(st);
  st = prep(db, "UPDATE events SET score = score + ?4, n = ?5 "
                "WHERE tenant = ?1 AND usr = ?2 AND ts = ?3");
  exec(db, "BEGIN");
  for (i = 0; i < nRow / 4; i++) {
    Ev e;
    evAt(aOrder[i], &e);
    bindEv(st, &e);
    sqlite3_bind_int64(st, 4, 1 + (int64_t)(rnd() % 5));
    sqlite3_bind_int64(st, 5, (int64_t)(rnd() % 1000));
    stepRow(db, st, i, 2000);
  }
  exec(db, "COMMIT");
  sqlite3_finalize(st);
  free(aOrder);
  /* a few deletes, a rolled back transaction */
  exec(db, "DELETE FROM events WHERE tenant = 'wonka' AND usr = 'u0001'");
  exec(db, "BEGIN; DELETE FROM events WHERE tenant = 'acme'; ROLLBACK");
}

static void loadSeries(sqlite3 *db, long nRow) {
  sqlite3_stmt *st = prep(db, "INSERT INTO series(region, seq, x, y, z) "
                              "VALUES (?, ?, ?, ?, ?)");
  long i;
  uint8_t aBlob[24];
  exec(db, "BEGIN");
  for (i = 0; i < nRow; i++) {
    long k = (long)(rnd() % (uint64_t)nRow);
    size_t j;
    for (j = 0; j < sizeof aBlob; j++)
      aBlob[j] = (uint8_t)rnd();
    sqlite3_bind_text(st, 1, azTenant[k % 5], -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (int64_t)k - nRow / 2);
    sqlite3_bind_blob(st, 3, aBlob, (int)(8 + k % 16), SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, azKind[k % 4], -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, (int64_t)(k % 1000000));
    stepRow(db, st, i, 10000);
  }
  exec(db, "COMMIT");
  sqlite3_finalize(st);
}

/* The reads: each statement of one user's rows run nQ / nDiv times with
** random arguments, each of the others once. */
static void reads(sqlite3 *db, long nRow, long nQ) {
  static const struct {
    const char *zSql;
    int nDiv; /* runs: nQ / nDiv (a scan of many users runs less often) */
  } aUser[] = {
      /* point lookups, all columns and one family */
      {"SELECT * FROM events WHERE tenant = ?1 AND usr = ?2 AND ts = ?3", 1},
      {"SELECT kind, amount FROM events WHERE tenant = ?1 AND usr = ?2 AND "
       "ts = ?3",
       1},
      /* prefix, range and reverse scans of one user */
      {"SELECT ts, amount FROM events WHERE tenant = ?1 AND usr = ?2", 1},
      {"SELECT sum(n) FROM events WHERE tenant = ?1 AND usr = ?2", 1},
      {"SELECT count(*), sum(n) FROM events WHERE tenant = ?1 AND usr = ?2 "
       "AND ts BETWEEN ?3 AND ?3 + 3600000000",
       1},
      {"SELECT ts, kind FROM events WHERE tenant = ?1 AND usr = ?2 "
       "ORDER BY ts DESC LIMIT 8",
       1},
      {"SELECT ts, score FROM events WHERE tenant = ?1 AND usr = ?2 "
       "ORDER BY ts LIMIT 20 OFFSET 5",
       1},
      /* multi-point, a LIKE prefix over 16 users, _key, starts_with */
      {"SELECT n FROM events WHERE tenant = ?1 AND usr IN (?2, 'u0002', "
       "'u0003') AND ts = ?3",
       1},
      {"SELECT count(*) FROM events WHERE tenant = ?1 AND usr LIKE 'u000%' "
       "AND ?2 IS NOT NULL AND ?3 IS NOT NULL",
       10},
      {"SELECT _key, kind FROM events WHERE starts_with(_key, ?1 || '#' || "
       "?2)",
       1},
      /* the family column, its JSON and the value functions */
      {"SELECT attrs ->> 'src', json_extract(attrs, '$.v') FROM events WHERE "
       "tenant = ?1 AND usr = ?2 AND attrs IS NOT NULL",
       1},
      {"SELECT map_keys(e), to_int64(c ->> 'score') FROM events WHERE "
       "tenant = ?1 AND usr = ?2 LIMIT 10",
       1},
      /* history */
      {"SELECT qualifier, _timestamp, value FROM events_history WHERE "
       "tenant = ?1 AND usr = ?2 AND family = 'c'",
       1},
  };
  static const char *azWide[] = {
      "SELECT kind, count(*), avg(amount) FROM events GROUP BY kind",
      "SELECT count(*), sum(n), max(amount) FROM events",
      "SELECT count(*), max(score) FROM events WHERE usr = 'u0004'",
      "SELECT tenant, count(DISTINCT usr) FROM events GROUP BY tenant",
      "SELECT count(*), sum(length(x)), max(z) FROM series WHERE region = "
      "'acme'",
      "SELECT seq, y FROM series WHERE region = 'globex' AND seq BETWEEN "
      "-500 AND 500 ORDER BY seq DESC",
      "SELECT e.kind, s.y FROM events e JOIN series s ON s.region = e.tenant "
      "AND s.seq = e.n WHERE e.tenant = 'initech' AND e.usr = 'u0003'",
      "SELECT count(*) FROM events",
      "SELECT wcs_stats('events')",
  };
  size_t k;
  long q;
  for (k = 0; k < sizeof aUser / sizeof aUser[0]; k++) {
    sqlite3_stmt *st = prep(db, aUser[k].zSql);
    long nGot = 0;
    double t0 = benchNow();
    for (q = 0; q < nQ / aUser[k].nDiv; q++) {
      Ev e;
      evAt((long)(rnd() % (uint64_t)nRow), &e);
      bindEv(st, &e);
      nGot += drain(db, st);
    }
    if (nGot == 0) die("no rows from %s", aUser[k].zSql);
    if (bVerbose) {
      fprintf(stderr, "%8.3f s  %s\n", benchNow() - t0, aUser[k].zSql);
    }
    sqlite3_finalize(st);
  }
  for (k = 0; k < sizeof azWide / sizeof azWide[0]; k++) {
    sqlite3_stmt *st = prep(db, azWide[k]);
    double t0 = benchNow();
    if (drain(db, st) == 0) die("no rows from %s", azWide[k]);
    if (bVerbose) fprintf(stderr, "%8.3f s  %s\n", benchNow() - t0, azWide[k]);
    sqlite3_finalize(st);
  }
}

int main(int argc, char **argv) {
  char zDb[4200], zCmd[4300];
  long nRow = argc > 2 ? atol(argv[2]) : 150000;
  sqlite3 *db;
  if (argc < 2 || nRow < 10000) {
    die("usage: pgo_train DIR [ROWS (>= 10000) [MODULE]]");
  }
  zModule = argc > 3 ? argv[3] : NULL;
  bVerbose = getenv("WCS_TRAIN_VERBOSE") != NULL;
  if (mkdir(argv[1], 0777) != 0)
    die("cannot make %s (it must not exist)", argv[1]);
  snprintf(zDb, sizeof zDb, "%s/train.db", argv[1]);

  db = openDb(zDb);
  exec(db, "CREATE VIRTUAL TABLE events USING wcs("
           "KEY (tenant STRING, usr STRING, ts INT64 REVERSED DECIMAL(17)) "
           "DELIMITED BY '#', "
           "FAMILY e (kind STRING, amount FLOAT64, n INT64), "
           "FAMILY attrs, FAMILY c (score INT64) MAX VERSIONS 3, "
           "SYNC NORMAL)");
  exec(db, "CREATE VIRTUAL TABLE events_history USING wcs(TABLE 'events', "
           "HISTORY)");
  exec(db, "CREATE VIRTUAL TABLE series USING wcs("
           "KEY (region STRING, seq INT64) ORDERED CODE, "
           "FAMILY v (x BYTES, y STRING, z INT64 DECIMAL(6)))");
  loadEvents(db, nRow);
  loadSeries(db, nRow / 3);
  reads(db, nRow, 300); /* with memtables and several files */
  exec(db, "SELECT wcs_compact()");
  reads(db, nRow, 1500);
  sqlite3_close(db);

  db = openDb(zDb); /* cold: a new connection on the store */
  reads(db, nRow, 500);
  exec(db, "DROP TABLE events_history; DROP TABLE events; DROP TABLE series");
  sqlite3_close(db);

  snprintf(zCmd, sizeof zCmd, "rm -rf '%s'", argv[1]);
  if (strchr(argv[1], '\'') || system(zCmd) != 0) {
    die("cannot remove %s", argv[1]);
  }
  return 0;
}
