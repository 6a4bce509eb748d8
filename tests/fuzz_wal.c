/*
** Fuzz target for WAL recovery: the input becomes the write-ahead log of a
** store in a memory env, which is then opened (replay, torn-tail cutting,
** flush), scanned and closed. Opening may fail (corruption is reported as
** WCS_CORRUPT), but must never crash, hang or leak.
**
** Input: the first byte picks the mode. Mode 0 (even): the rest is the log
** file's bytes as they are. Mode 1 (odd): the rest is a list of payloads,
** each one length byte then that many bytes, which are framed with valid
** checksums, so the fuzzer reaches the write-batch decoder and the
** memtable instead of stopping at the CRC.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/db_int.h"
#include "storage/env.h"
#include "storage/wal.h"
#include "wcs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int findLog(void *p, const char *z) {
  size_t n = strlen(z);
  if (n > 4 && strcmp(z + n - 4, ".log") == 0) snprintf(p, 64, "/s/%s", z);
  return WCS_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wcs_env *pEnv = wcs_env_mem_new();
  wcs_db *db = NULL;
  wcs_options o;
  wcs_file *f = NULL;
  wcs_buf b = {0};
  char zLog[64] = "";
  char *zErr = NULL;
  if (pEnv == NULL) return 0;
  wcs_options_init(&o);
  o.bNoBackground = 1;
  o.nMemtable = 16 * 1024;
  /* an empty store: CURRENT, a manifest and an empty log */
  if (wcs_db_open_env(&db, "/s", &o, pEnv, NULL) != WCS_OK) abort();
  wcs_db_close(db);
  db = NULL;
  pEnv->xList(pEnv, "/s", zLog, findLog, NULL);
  if (zLog[0] == 0) abort();
  if (size > 0 && (data[0] & 1)) {
    size_t i = 1;
    while (i < size) {
      size_t n = data[i++];
      if (n > size - i) n = size - i;
      if (n > 0) wal_frame(&b, data + i, n);
      i += n;
    }
  } else if (size > 0) {
    wcs_buf_append(&b, data + 1, size - 1);
  }
  if (pEnv->xOpen(pEnv, zLog, WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &f, NULL) ==
      WCS_OK) {
    pEnv->xAppend(f, b.a, b.n, NULL);
    pEnv->xClose(f);
  }
  if (wcs_db_open_env(&db, "/s", &o, pEnv, &zErr) == WCS_OK) {
    wcs_iter *it = NULL;
    if (wcs_iter_new(db, NULL, &it) == WCS_OK) {
      int n = 0;
      for (wcs_iter_first(it); wcs_iter_valid(it) && n < 100000;
           wcs_iter_next(it)) {
        n++;
      }
      for (wcs_iter_last(it); wcs_iter_valid(it) && n > 0; wcs_iter_prev(it)) {
        n--;
      }
      wcs_iter_free(it);
    }
    wcs_db_close(db);
  }
  wcs_free(zErr);
  wcs_buf_free(&b);
  pEnv->xDestroy(pEnv);
  return 0;
}
