/*
** bench_keyschema.c — micro-benchmarks of the row key schema module:
**   - decode of a 3-field DELIMITED key (phone#4c410523#20200501), ns/key
**   - decode of an ORDERED CODE struct key (string, int64, timestamp)
**   - encode of the same keys
**   - ks_plan_check on a skip-scan plan, ns/key
**   - planning a 1,000-value IN list, microseconds per plan
** and the number of heap allocations made by the decode loops (the goal
** is none: decode reuses one scratch buffer). malloc and friends are
** wrapped here to count calls. Times are CPU time of the process.
** Goal: decode <= 50 ns per key.
**
** Usage: bench_keyschema [iterations]   (default 5,000,000)
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keyschema/schema.h"

/* ---- allocation counting (glibc: the real allocator under __libc_*);
** not under the sanitizers, which bring their own allocator */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WCS_SANITIZE 1
#endif
#endif
#ifndef WCS_SANITIZE
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static uint64_t nAlloc = 0;
void *malloc(size_t n) {
  nAlloc++;
  return __libc_malloc(n);
}
void *calloc(size_t n, size_t m) {
  nAlloc++;
  return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n) {
  nAlloc++;
  return __libc_realloc(p, n);
}
void free(void *p) {
  __libc_free(p);
}
#else
static uint64_t nAlloc = 0; /* not counted */
#endif

/* Process CPU time: the loops are single-threaded, and on a shared
** machine wall-clock time also counts the time other processes run. */
static double nowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define NKEY 1024

static ks_schema *parse(const char *z) {
  ks_schema *s = NULL;
  char *zErr = NULL;
  if (ks_parse_text(z, &s, &zErr) != WCS_OK) {
    fprintf(stderr, "bench: %s\n", zErr);
    exit(1);
  }
  return s;
}

static ks_value str(const char *z, int n) {
  ks_value v;
  memset(&v, 0, sizeof v);
  v.eType = KS_VAL_BYTES;
  v.p = (const uint8_t *)z;
  v.n = n;
  return v;
}

static ks_value num(int64_t i) {
  ks_value v;
  memset(&v, 0, sizeof v);
  v.eType = KS_VAL_INT;
  v.i = i;
  return v;
}

/* Encode NKEY keys of schema s from tuples made by xTuple. */
static void makeKeys(const ks_schema *s, wcs_buf *aKey,
                     void (*xTuple)(int, ks_value *, char *)) {
  int i;
  for (i = 0; i < NKEY; i++) {
    ks_value a[3];
    char zBuf[64];
    xTuple(i, a, zBuf);
    aKey[i].n = 0;
    if (ks_key_encode(s, a, &aKey[i], NULL) != WCS_OK) {
      fprintf(stderr, "bench: encode failed\n");
      exit(1);
    }
  }
}

static void tupleDelimited(int i, ks_value *a, char *zBuf) {
  static const char *azDev[] = {"phone", "tablet", "watch", "laptop"};
  int n = snprintf(zBuf, 64, "%08x", (unsigned)(i * 2654435761u));
  a[0] = str(azDev[i % 4], (int)strlen(azDev[i % 4]));
  a[1] = str(zBuf, n);
  a[2] = num(20200501 + i % 31);
}

static void tupleOrdered(int i, ks_value *a, char *zBuf) {
  int n = snprintf(zBuf, 64, "user%05d", i);
  a[0] = str(zBuf, n);
  a[1] = num((int64_t)i * 1000003 - 500000000);
  a[2] = num(1588291200000000LL + (int64_t)i * 60000000);
}

static double benchDecode(const ks_schema *s, wcs_buf *aKey, long nIter,
                          uint64_t *pnAlloc) {
  wcs_buf scratch = {0};
  ks_value aOut[3];
  long i;
  int64_t sum = 0;
  double t0, t1;
  uint64_t n0;
  /* warm up: let the scratch buffer grow once */
  for (i = 0; i < NKEY; i++) {
    ks_key_decode(s, aKey[i].a, (int)aKey[i].n, aOut, &scratch, NULL);
  }
  n0 = nAlloc;
  t0 = nowNs();
  for (i = 0; i < nIter; i++) {
    const wcs_buf *k = &aKey[i & (NKEY - 1)];
    if (ks_key_decode(s, k->a, (int)k->n, aOut, &scratch, NULL) != WCS_OK) {
      fprintf(stderr, "bench: decode failed\n");
      exit(1);
    }
    sum += aOut[2].i + aOut[0].n;
  }
  t1 = nowNs();
  *pnAlloc = nAlloc - n0;
  if (sum == 42) printf("(unlikely)\n");
  wcs_buf_free(&scratch);
  return (t1 - t0) / (double)nIter;
}

static double benchEncode(const ks_schema *s, long nIter,
                          void (*xTuple)(int, ks_value *, char *)) {
  static ks_value aT[NKEY][3];
  static char aBuf[NKEY][64];
  wcs_buf out = {0};
  long i;
  double t0, t1;
  for (i = 0; i < NKEY; i++)
    xTuple((int)i, aT[i], aBuf[i]);
  t0 = nowNs();
  for (i = 0; i < nIter; i++) {
    out.n = 0;
    ks_key_encode(s, aT[i & (NKEY - 1)], &out, NULL);
  }
  t1 = nowNs();
  wcs_buf_free(&out);
  return (t1 - t0) / (double)nIter;
}

static int cmpBuf(const void *a, const void *b) {
  const wcs_buf *x = a, *y = b;
  size_t n = x->n < y->n ? x->n : y->n;
  int c = memcmp(x->a, y->a, n);
  return c ? c : (x->n < y->n ? -1 : x->n > y->n);
}

int main(int argc, char **argv) {
  long nIter = argc > 1 ? atol(argv[1]) : 5000000;
  static wcs_buf aDel[NKEY], aOc[NKEY];
  ks_schema *sDel = parse("KEY (device STRING, id STRING, day INT64 "
                          "DECIMAL(8)) DELIMITED BY '#'");
  ks_schema *sOc = parse("KEY (user STRING, n INT64 ORDERED CODE, "
                         "t TIMESTAMP ORDERED CODE) ORDERED CODE");
  uint64_t nA1, nA2, nA3;
  double ns;
  int i;

  makeKeys(sDel, aDel, tupleDelimited);
  makeKeys(sOc, aOc, tupleOrdered);
  printf("keyschema micro-benchmarks (%ld iterations)\n", nIter);

  ns = benchDecode(sDel, aDel, nIter, &nA1);
  printf("decode DELIMITED 3-field key (%.*s):  %6.1f ns/key, "
         "%llu allocations\n",
         (int)aDel[0].n, (const char *)aDel[0].a, ns, (unsigned long long)nA1);
  ns = benchDecode(sOc, aOc, nIter, &nA2);
  printf("decode ORDERED CODE key (string,int64,timestamp, %zu bytes): "
         "%6.1f ns/key, %llu allocations\n",
         aOc[0].n, ns, (unsigned long long)nA2);
  printf("encode DELIMITED 3-field key:   %6.1f ns/key\n",
         benchEncode(sDel, nIter, tupleDelimited));
  printf("encode ORDERED CODE key:        %6.1f ns/key\n",
         benchEncode(sOc, nIter, tupleOrdered));

  /* ks_plan_check over sorted keys under a skip plan on `day` */
  {
    ks_value v = num(20200515);
    ks_constraint c;
    ks_plan_opts o = {0, 1};
    ks_plan *p = NULL;
    wcs_buf seek = {0};
    long k, nMatch = 0;
    double t0, t1;
    memset(&c, 0, sizeof c);
    c.iField = 2;
    c.op = KS_OP_GE;
    c.aVal = &v;
    c.nVal = 1;
    qsort(aDel, NKEY, sizeof(wcs_buf), cmpBuf);
    ks_plan_make(sDel, &c, 1, &o, &p, NULL);
    t0 = nowNs();
    for (k = 0; k < nIter; k++) {
      const wcs_buf *b = &aDel[k & (NKEY - 1)];
      nMatch += ks_plan_check(p, b->a, (int)b->n, 0, &seek) == KS_MATCH;
    }
    t1 = nowNs();
    printf("ks_plan_check, %s:  %6.1f ns/key (%ld of %ld match)\n",
           ks_plan_describe(p), (t1 - t0) / (double)nIter, nMatch, nIter);
    ks_plan_free(p);
    wcs_buf_free(&seek);
  }

  /* planning a 1,000-value IN list on the leading field */
  {
    static ks_value aVal[1000];
    static char aBuf[1000][16];
    ks_constraint c;
    ks_plan *p = NULL;
    int nRep = 2000, r;
    double t0, t1;
    for (i = 0; i < 1000; i++) {
      int n = snprintf(aBuf[i], sizeof aBuf[i], "dev%05d", (i * 7919) % 100000);
      aVal[i] = str(aBuf[i], n);
    }
    memset(&c, 0, sizeof c);
    c.iField = 0;
    c.op = KS_OP_IN;
    c.aVal = aVal;
    c.nVal = 1000;
    nA3 = nAlloc;
    t0 = nowNs();
    for (r = 0; r < nRep; r++) {
      ks_plan_make(sDel, &c, 1, NULL, &p, NULL);
      if (r < nRep - 1) ks_plan_free(p);
    }
    t1 = nowNs();
    printf("plan a 1,000-value IN list (%s): %6.1f us/plan, %llu "
           "allocations/plan\n",
           ks_plan_describe(p), (t1 - t0) / nRep / 1000.0,
           (unsigned long long)((nAlloc - nA3) / (uint64_t)nRep));
    ks_plan_free(p);
  }
  for (i = 0; i < NKEY; i++) {
    wcs_buf_free(&aDel[i]);
    wcs_buf_free(&aOc[i]);
  }
  ks_schema_free(sDel);
  ks_schema_free(sOc);
  return 0;
}
