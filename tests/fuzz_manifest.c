/*
** Fuzz target for manifest recovery: the input becomes the manifest that
** CURRENT names in a memory env, and the store is opened read-only (replay
** of version edits, version building, level checks) and closed; the input
** also goes through the edit decoder directly. Failure is fine (corruption
** is reported), crashes, hangs and leaks are not.
**
** Input: the first byte picks the mode. Mode 0 (even): the rest is the
** manifest file as it is. Mode 1 (odd): the rest is a list of edit
** payloads, each one length byte then that many bytes, framed with valid
** checksums so the fuzzer gets past the CRCs into the edit decoder.
**
** Beside the manifest the directory holds two logs, so that edits which
** track live logs (VE_LOG_LIVE, VE_LOG_SEAL, VE_LOG_CLOSED) reach the
** checks of recovery:
** 000004.log, one write batch (seq 1, put "k" = "v") in a record of
** FUZZ_LOG4_BYTES bytes, and 000005.log, empty. The seeds live-logs and
** live-log-missing in tests/corpus/manifest track them.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/db_int.h"
#include "storage/env.h"
#include "storage/version.h"
#include "storage/wal.h"
#include "wcs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_LOG4_BYTES 29 /* WAL_HEADER + 12-byte batch header + 5 */

static void put(wcs_env *pEnv, const char *z, const void *p, size_t n) {
  wcs_file *f = NULL;
  if (pEnv->xOpen(pEnv, z, WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &f, NULL) ==
      WCS_OK) {
    pEnv->xAppend(f, p, n, NULL);
    pEnv->xClose(f);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wcs_env *pEnv = wcs_env_mem_new();
  wcs_db *db = NULL;
  wcs_options o;
  wcs_buf b = {0};
  wcs_vedit e;
  char *zErr = NULL;
  if (pEnv == NULL) return 0;
  if (size > 0 && (data[0] & 1)) {
    size_t i = 1;
    while (i < size) {
      size_t n = data[i++];
      if (n > size - i) n = size - i;
      if (n > 0) {
        if (vedit_decode(&e, data + i, n, "M", 0, NULL) == WCS_OK) {
          vedit_clear(&e);
        }
        wal_frame(&b, data + i, n);
      }
      i += n;
    }
  } else if (size > 0) {
    wcs_buf_append(&b, data + 1, size - 1);
  }
  pEnv->xMkdir(pEnv, "/s", NULL);
  put(pEnv, "/s/CURRENT", "MANIFEST-000001\n", 16);
  put(pEnv, "/s/MANIFEST-000001", b.a, b.n);
  {
    static const uint8_t aBatch[] = {1, 0, 0, 0,          0, 0,   0, 0,  1,
                                     0, 0, 0, WAL_OP_PUT, 1, 'k', 1, 'v'};
    wcs_buf log = {0};
    if (wal_frame(&log, aBatch, sizeof aBatch) == WCS_OK) {
      put(pEnv, "/s/000004.log", log.a, log.n);
    }
    wcs_buf_free(&log);
    put(pEnv, "/s/000005.log", "", 0);
  }
  wcs_options_init(&o);
  o.bReadOnly = 1;
  o.bNoBackground = 1;
  if (wcs_db_open_env(&db, "/s", &o, pEnv, &zErr) == WCS_OK) {
    char *zStats = NULL;
    if (wcs_db_stats(db, &zStats) == WCS_OK) wcs_free(zStats);
    wcs_db_close(db);
  }
  wcs_free(zErr);
  wcs_buf_free(&b);
  pEnv->xDestroy(pEnv);
  return 0;
}
