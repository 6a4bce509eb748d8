/*
** sql_crash — kill a process that writes through the SQL module at random
** moments, then check through SQL that recovery kept every acknowledged
** transaction, each whole across both tables of its store, and nothing
** else.
**
** Three databases, one per SYNC mode (FULL, NORMAL, OFF: a process crash
** loses no acknowledged commit in any of them), each with two wcs tables
** in the store beside it:
**
**   a  KEY (k STRING, j INT64 DECIMAL(2)) DELIMITED BY '#',
**      FAMILY f (v INT64, s STRING)
**   b  KEY (id INT64 ORDERED CODE), FAMILY g (n INT64)
**
** Each round a child opens one of them and runs transaction after
** transaction, i = N + 1, N + 2, ... (N: the last one committed, b's row 0):
**
**   BEGIN;
**   INSERT INTO a rows ('t<i>', j, i, 's<i>') for j < 1 + i % 7;
**   (every third i) SAVEPOINT, a row 'x<i>' and b's row 0 set to -1,
**     ROLLBACK TO, RELEASE: none of it may ever be seen;
**   (i > D) DELETE FROM a WHERE k = 't<i - D>'; DELETE FROM b WHERE
**     id = i - D;
**   INSERT INTO b VALUES (i, i); UPDATE b SET n = i WHERE id = 0;
**   COMMIT;
**
** and writes i to a pipe once COMMIT has returned. After a random delay
** (one round in eight early, while the child may still be opening the
** store and recovering it) the parent sends SIGKILL, reads the pipe,
** opens the database through SQL and checks:
**
**   - N is the last acknowledged transaction or the one after it (its
**     COMMIT may have reached the store without returning), never older;
**   - a holds exactly the rows of transactions N - D + 1 .. N, each with
**     all of its rows and values, and no 'x' row;
**   - b holds row 0 (n = N) and exactly the rows of those transactions.
**
** Rounds: 30, or WCS_SQL_CRASH_ROUNDS. The seed is printed; WCS_SEED
** replays a run.
*/
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sqlutil.h"
#include "testutil.h"
#include "wcs.h"

#define D 12 /* transaction i deletes transaction i - D's rows */

static const char *azSync[3] = {"FULL", "NORMAL", "OFF"};

static int nRowsOf(sqlite3_int64 i) {
  return 1 + (int)(i % 7);
}

static sqlite3 *openDb(const char *zPath) {
  sqlite3 *db = NULL;
  if (sqlite3_open(zPath, &db) != SQLITE_OK || wcs_register(db) != SQLITE_OK) {
    fprintf(stderr, "sql_crash: cannot open %s: %s\n", zPath,
            db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return NULL;
  }
  sqlite3_busy_timeout(db, 5000);
  return db;
}

/* The child's statements fail only on a bug: say which, and stop. */
static void childCheck(sqlite3 *db, int rc, const char *zWhat) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return;
  fprintf(stderr, "sql_crash: child: %s: %s\n", zWhat, sqlite3_errmsg(db));
  _exit(3);
}

static void childExec(sqlite3 *db, const char *zSql) {
  childCheck(db, sqlite3_exec(db, zSql, NULL, NULL, NULL), zSql);
}

/* Run pStmt once with its bindings, then reset it. */
static void childStep(sqlite3 *db, sqlite3_stmt *pStmt) {
  int rc = sqlite3_step(pStmt);
  childCheck(db, rc, sqlite3_sql(pStmt));
  sqlite3_reset(pStmt);
}

static sqlite3_stmt *childPrepare(sqlite3 *db, const char *zSql) {
  sqlite3_stmt *p = NULL;
  childCheck(db, sqlite3_prepare_v2(db, zSql, -1, &p, NULL), zSql);
  return p;
}

/* b's row 0: the last transaction committed; -1 if it cannot be read. */
static sqlite3_int64 lastCommitted(sqlite3 *db) {
  sqlite3_stmt *p = NULL;
  sqlite3_int64 n = -1;
  if (sqlite3_prepare_v2(db, "SELECT n FROM b WHERE id = 0", -1, &p, NULL) ==
          SQLITE_OK &&
      sqlite3_step(p) == SQLITE_ROW) {
    n = sqlite3_column_int64(p, 0);
  }
  sqlite3_finalize(p);
  return n;
}

static void child(const char *zPath, int fdAck) {
  sqlite3 *db = openDb(zPath);
  sqlite3_stmt *pInsA, *pDelA, *pInsB, *pDelB, *pSetN;
  sqlite3_int64 i, N;
  char zK[32], zS[32];
  if (db == NULL) _exit(3);
  N = lastCommitted(db);
  if (N < 0) {
    fprintf(stderr, "sql_crash: child: no row 0 in b: %s\n",
            sqlite3_errmsg(db));
    _exit(3);
  }
  pInsA = childPrepare(db, "INSERT INTO a(k, j, v, s) VALUES (?1, ?2, ?3, ?4)");
  pDelA = childPrepare(db, "DELETE FROM a WHERE k = ?1");
  pInsB = childPrepare(db, "INSERT INTO b(id, n) VALUES (?1, ?1)");
  pDelB = childPrepare(db, "DELETE FROM b WHERE id = ?1");
  pSetN = childPrepare(db, "UPDATE b SET n = ?1 WHERE id = 0");
  for (i = N + 1;; i++) {
    int j;
    childExec(db, "BEGIN");
    snprintf(zK, sizeof zK, "t%08lld", (long long)i);
    snprintf(zS, sizeof zS, "s%lld", (long long)i);
    for (j = 0; j < nRowsOf(i); j++) {
      sqlite3_bind_text(pInsA, 1, zK, -1, SQLITE_TRANSIENT);
      sqlite3_bind_int(pInsA, 2, j);
      sqlite3_bind_int64(pInsA, 3, i);
      sqlite3_bind_text(pInsA, 4, zS, -1, SQLITE_TRANSIENT);
      childStep(db, pInsA);
    }
    if (i % 3 == 0) {
      char zSql[160];
      childExec(db, "SAVEPOINT sp");
      snprintf(zSql, sizeof zSql,
               "INSERT INTO a(k, j, v, s) VALUES ('x%08lld', 0, %lld, 'gone');"
               "UPDATE b SET n = -1 WHERE id = 0",
               (long long)i, (long long)i);
      childExec(db, zSql);
      childExec(db, "ROLLBACK TO sp");
      childExec(db, "RELEASE sp");
    }
    if (i > D) {
      snprintf(zK, sizeof zK, "t%08lld", (long long)(i - D));
      sqlite3_bind_text(pDelA, 1, zK, -1, SQLITE_TRANSIENT);
      childStep(db, pDelA);
      sqlite3_bind_int64(pDelB, 1, i - D);
      childStep(db, pDelB);
    }
    sqlite3_bind_int64(pInsB, 1, i);
    childStep(db, pInsB);
    sqlite3_bind_int64(pSetN, 1, i);
    childStep(db, pSetN);
    childExec(db, "COMMIT");
    {
      uint64_t id = (uint64_t)i;
      if (write(fdAck, &id, sizeof id) != (ssize_t)sizeof id) _exit(4);
    }
  }
}

/* Check the database after a kill; returns its N, or -1 after printing
** what is wrong. */
static sqlite3_int64 verify(const char *zPath, sqlite3_int64 nAcked,
                            int iRound) {
  sqlite3 *db = openDb(zPath);
  sqlite3_str *pA, *pB;
  char *zWantA, *zWantB, *zGotA = NULL, *zGotB = NULL;
  sqlite3_int64 N, i;
  int bOk = 0;
  if (db == NULL) return -1;
  N = lastCommitted(db);
  pA = sqlite3_str_new(NULL);
  pB = sqlite3_str_new(NULL);
  if (N != nAcked && N != nAcked + 1) {
    fprintf(stderr,
            "round %d (%s): last committed transaction %lld, acknowledged "
            "%lld: %s\n",
            iRound, zPath, (long long)N, (long long)nAcked,
            N < nAcked ? "an acknowledged commit is lost"
                       : "a transaction never committed is there");
    goto done;
  }
  sqlite3_str_appendf(pB, "0|%lld", (long long)N);
  for (i = N - D + 1 > 1 ? N - D + 1 : 1; i <= N; i++) {
    sqlite3_str_appendf(pA, "%st%08lld|%d|%lld|%lld|s%lld|s%lld",
                        sqlite3_str_length(pA) ? "\n" : "", (long long)i,
                        nRowsOf(i), (long long)i, (long long)i, (long long)i,
                        (long long)i);
    sqlite3_str_appendf(pB, "\n%lld|%lld", (long long)i, (long long)i);
  }
  zWantA = sqlite3_str_finish(pA);
  zWantB = sqlite3_str_finish(pB);
  pA = pB = NULL;
  zGotA = tu_sql_run(db,
                     "SELECT k, count(*), min(v), max(v), min(s), max(s) "
                     "FROM a GROUP BY k ORDER BY k",
                     TU_SQL_TEXT);
  zGotB = tu_sql_run(db, "SELECT id, n FROM b ORDER BY id", TU_SQL_TEXT);
  if (strcmp(zGotA, zWantA) != 0 || strcmp(zGotB, zWantB) != 0) {
    fprintf(stderr,
            "round %d (%s), N = %lld:\n  a: %.600s\n  want: %.600s\n"
            "  b: %.600s\n  want: %.600s\n",
            iRound, zPath, (long long)N, zGotA, zWantA, zGotB, zWantB);
  } else {
    bOk = 1;
  }
  sqlite3_free(zWantA);
  sqlite3_free(zWantB);
done:
  sqlite3_free(sqlite3_str_finish(pA));
  sqlite3_free(sqlite3_str_finish(pB));
  sqlite3_free(zGotA);
  sqlite3_free(zGotB);
  sqlite3_close(db);
  return bOk ? N : -1;
}

/* Make database zPath's tables, in a store beside it, with SYNC zSync. */
static int create(const char *zPath, const char *zSync) {
  sqlite3 *db = openDb(zPath);
  char *zSql, *zErr = NULL;
  int rc;
  if (db == NULL) return 1;
  zSql = sqlite3_mprintf(
      "CREATE VIRTUAL TABLE a USING wcs(KEY (k STRING, j INT64 DECIMAL(2)) "
      "DELIMITED BY '#', FAMILY f (v INT64, s STRING), SYNC %s);"
      "CREATE VIRTUAL TABLE b USING wcs(KEY (id INT64 ORDERED CODE), "
      "FAMILY g (n INT64), SYNC %s);"
      "INSERT INTO b(id, n) VALUES (0, 0)",
      zSync, zSync);
  rc = sqlite3_exec(db, zSql, NULL, NULL, &zErr);
  if (rc != SQLITE_OK) fprintf(stderr, "sql_crash: %s: %s\n", zPath, zErr);
  sqlite3_free(zErr);
  sqlite3_free(zSql);
  sqlite3_close(db);
  return rc != SQLITE_OK;
}

int main(void) {
  const char *zRounds = getenv("WCS_SQL_CRASH_ROUNDS");
  int nRound = zRounds ? atoi(zRounds) : 30;
  const char *zTmp = tu_tmpdir("sql_crash");
  char azPath[3][1100];
  sqlite3_int64 aLast[3] = {0, 0, 0}, nAckTotal = 0;
  int iRound, nEarly = 0, k;
  if (zTmp == NULL) {
    fprintf(stderr, "sql_crash: cannot make a temporary directory\n");
    return 1;
  }
  tu_seed(0);
  for (k = 0; k < 3; k++) {
    snprintf(azPath[k], sizeof azPath[k], "%s/%s.db", zTmp, azSync[k]);
    if (create(azPath[k], azSync[k])) return 1;
  }
  for (iRound = 1; iRound <= nRound; iRound++) {
    const int iDb = iRound % 3;
    int fd;
    pid_t pid;
    uint64_t nAcked = (uint64_t)aLast[iDb];
    sqlite3_int64 N;
    long nDelay;
    pid = tu_fork_acked(&fd);
    if (pid < 0) return 1;
    if (pid == 0) {
      child(azPath[iDb], fd);
      _exit(0);
    }
    /* mostly while committing; one round in eight early, while opening */
    nDelay = (tu_rand_range(8) == 0) ? (long)tu_rand_range(20000)
                                     : 20000 + (long)tu_rand_range(100000);
    if (tu_kill_round(pid, fd, nDelay, &nAcked, iRound)) return 1;
    if ((sqlite3_int64)nAcked == aLast[iDb]) nEarly++;
    nAckTotal += (sqlite3_int64)nAcked - aLast[iDb];
    N = verify(azPath[iDb], (sqlite3_int64)nAcked, iRound);
    if (N < 0) {
      fprintf(stderr, "sql_crash: FAILED in round %d; database kept in %s\n",
              iRound, azPath[iDb]);
      return 1;
    }
    aLast[iDb] = N;
  }
  printf("sql_crash: ok, %d rounds (%d killed before a commit was "
         "acknowledged), %lld transactions acknowledged, last %lld / %lld / "
         "%lld (FULL / NORMAL / OFF)\n",
         nRound, nEarly, (long long)nAckTotal, (long long)aLast[0],
         (long long)aLast[1], (long long)aLast[2]);
  tu_rmrf(zTmp);
  return 0;
}
