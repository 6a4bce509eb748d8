/*
** Stand-in driver for fuzz targets when libFuzzer is not in use (gcc
** builds). It replays every file of the corpus directories given as
** arguments, then feeds deterministic pseudo-random inputs (mutations of
** the corpus files and pure noise), so each target's entry point runs in
** the ordinary test suite, under the sanitizers too.
** WCS_FUZZ_RUNS (default 3000) sets the number of random inputs.
*/
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct Seed { uint8_t *a; size_t n; } Seed;

static uint64_t rngState = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  rngState ^= rngState << 13;
  rngState ^= rngState >> 7;
  rngState ^= rngState << 17;
  return rngState;
}

static int readFile(const char *zPath, Seed *p) {
  FILE *f = fopen(zPath, "rb");
  long n;
  if (f == NULL) return 0;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) { fclose(f); return 0; }
  rewind(f);
  p->a = malloc(n ? (size_t)n : 1);
  p->n = p->a ? fread(p->a, 1, (size_t)n, f) : 0;
  fclose(f);
  return p->a != NULL;
}

int main(int argc, char **argv) {
  Seed aSeed[512];
  int nSeed = 0, i, nRun = 3000;
  const char *zRuns = getenv("WCS_FUZZ_RUNS");
  if (zRuns) nRun = atoi(zRuns);

  for (i = 1; i < argc; i++) {
    DIR *d = opendir(argv[i]);
    struct dirent *e;
    if (d == NULL) continue;
    while ((e = readdir(d)) != NULL && nSeed < 512) {
      char zPath[4096];
      if (e->d_name[0] == '.') continue;
      snprintf(zPath, sizeof zPath, "%s/%s", argv[i], e->d_name);
      if (readFile(zPath, &aSeed[nSeed])) {
        LLVMFuzzerTestOneInput(aSeed[nSeed].a, aSeed[nSeed].n);
        nSeed++;
      }
    }
    closedir(d);
  }
  for (i = 0; i < nRun; i++) {
    size_t n;
    uint8_t *a;
    if (nSeed > 0 && (i & 3) != 0) {
      Seed *s = &aSeed[rnd() % (uint64_t)nSeed];
      int k, nFlip = 1 + (int)(rnd() % 8);
      n = s->n;
      if ((rnd() & 7) == 0 && n > 0) n = rnd() % n; /* truncate */
      a = malloc(n ? n : 1);
      if (a == NULL) return 1;
      if (n) memcpy(a, s->a, n);
      for (k = 0; k < nFlip && n > 0; k++) a[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
    } else {
      size_t k;
      n = rnd() % 512;
      a = malloc(n ? n : 1);
      if (a == NULL) return 1;
      for (k = 0; k < n; k++) a[k] = (uint8_t)rnd();
    }
    LLVMFuzzerTestOneInput(a, n);
    free(a);
  }
  for (i = 0; i < nSeed; i++) free(aSeed[i].a);
  printf("fuzz driver: %d corpus files, %d random inputs, no failure\n", nSeed, nRun);
  return 0;
}
