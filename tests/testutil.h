/*
** Helpers shared by the test programs: fresh temporary directories under
** $WCS_TEST_TMP (or /tmp), recursive removal, and a seeded PRNG so that a
** failing random test can be replayed (each test prints its seed), a
** store statistic by name, and numbered keys and values.
*/
#ifndef WCS_TESTUTIL_H
#define WCS_TESTUTIL_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wcs.h"

/* Create a new empty directory and return its path (static buffer owned by
** the caller until the next call; copy it if you need two). The tag names
** the test for a reader of leftover directories. */
const char *tu_tmpdir(const char *zTag);

/* Remove a directory tree (ignores missing paths). Returns 0 on success. */
int tu_rmrf(const char *zPath);

/* The sorted files (*.sst) in directory zDir, -1 if it cannot be read. */
int tu_count_ssts(const char *zDir);

/* Check (check.h) that x returns WCS_OK, else fail with the expression,
** the code and the store's message: for tests whose store is a variable
** named db (NULL before it opens). */
#define TU_DB_OK(x)                                                            \
  do {                                                                         \
    int rc_ = (x);                                                             \
    ck_assert_msg(rc_ == WCS_OK, "%s -> %d (%s)", #x, rc_,                     \
                  db ? wcs_errmsg(db) : "");                                   \
  } while (0)

/* A kill test's child: fork with a pipe for its acknowledgements. Returns
** 0 in the child, *pfd the pipe's write end; the child's pid in the
** parent, *pfd the read end; -1 after printing why it failed. */
pid_t tu_fork_acked(int *pfd);

/* A kill test's round: after nDelay microseconds, kill child pid with
** SIGKILL, read its acknowledgements from fd (uint64_t ids written one at
** a time, each the one after *pnAcked, which gets the last), close fd and
** wait for the child. Returns 0, or 1 after printing why the round is
** wrong (acknowledgements out of order, the child ended on its own). */
int tu_kill_round(pid_t pid, int fd, long nDelay, uint64_t *pnAcked,
                  int iRound);

/* xorshift64* PRNG. tu_seed(0) takes the seed from WCS_SEED (a number, or
** "random" for one from the clock; unset: a fixed default, so test runs
** repeat) and prints it to stderr; returns the seed used. */
uint64_t tu_seed(uint64_t seed);
uint64_t tu_rand(void);
uint64_t tu_rand_range(uint64_t n); /* uniform in [0, n), n > 0 */
void tu_rand_bytes(void *p, size_t n);

/* Read a whole file into a malloc'd buffer; *pn gets its size. NULL on
** failure. Write a whole buffer to a file; 0 on success. */
void *tu_read_file(const char *zPath, size_t *pn);
int tu_write_file(const char *zPath, const void *p, size_t n);

/* A counter of the store's statistics (wcs_db_stats' JSON), e.g.
** "index_misses". Aborts, naming it, if the statistics fail or lack it. */
uint64_t tu_db_stat(wcs_db *db, const char *zName);

/* Numbered keys and values for store tests: key i is zPre followed by i
** in six digits; its value, tagged zTag, holds a hash of i (so files do
** not compress to nothing), under 128 bytes. tu_put_one puts that pair
** on its own and returns the store's code. */
void tu_key_of(char *z, const char *zPre, int i);
void tu_val_of(char *z, const char *zTag, int i);
int tu_put_one(wcs_db *db, const char *zPre, int i, const char *zTag);

/* Files in level i (from the statistics); the one level holding files,
** or -1 when several do (or none). Abort, naming the cause, on failure. */
int tu_level_files(wcs_db *db, int i);
int tu_only_level(wcs_db *db);

/* The value of key k (a C string) at snapshot s (NULL: the latest) as a
** C string in a static buffer, or NULL if absent. Aborts on an error or a
** value over 1023 bytes. */
const char *tu_get_str(wcs_db *db, const wcs_snapshot *s, const char *k);

#endif
