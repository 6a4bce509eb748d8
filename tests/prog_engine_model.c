/*
** prog_engine_model.c — model-based test of the engine. Random sequences of
** mutations (in transactions with savepoints and rollbacks), flushes,
** compactions, physical GC, clock moves and reopens are applied both to
** the engine on a real on-disk store and to a plain in-memory model (an
** array of cells); after every step, random reads (key ranges, reverse,
** row limits, point reads of one row, latest-N, time ranges, as-of,
** family subsets, keys only, reads inside the open transaction, reads at
** older snapshots) must render identically.
**
** GC semantics modelled. Reads hide what a policy expires, exactly, over
** the cells that exist. wcs_engine_gc() removes every expired cell (the
** model drops them too). Every compaction — a flush or a commit may run
** one, and with the store's threads on one may run at any time — removes
** cells expired by age, and by position when no delete above its input
** covers the newer versions; a removed version stays removed when newer
** ones are deleted later. So at the start of every step (after the clock
** moved) and at its end, the model marks every cell the policy expires at
** that moment "doomed": a compaction of the step may remove it. After
** each step, a doomed cell that the store no longer holds (a raw point
** read of its key) is dropped from the model, and one that it still holds
** and that is no longer expired (newer versions were deleted) is an
** ordinary cell again, which no compaction may remove. So a compaction may
** remove only doomed cells, and every read stays exact. Without a snapshot
** a GC compaction (gcf_compact_table) must remove every doomed cell
** (checked); sometimes a snapshot is held over it, and then it removes
** nothing.
**
** Snapshots. A few store snapshots (wcs_snapshot_new) are taken at
** random moments (between steps, and inside a transaction between its
** mutations), each with a copy of the committed model as of then; reads
** through wcs_read_options.pSnap at one of them, interleaved with reads
** of the latest state and inside the transaction (and sometimes with a
** cursor of each kind open at once), must render that copy. The copy is
** exact for every family, those with GC policies included: what a
** snapshot can read is never offered to a compaction's filter, so the
** cells it holds stay as they were; reads at it judge their policies at
** the current clock over those cells, as the model does. (The copy's
** doomed cells that a compaction removed before the snapshot was taken
** are dropped by raw reads at the snapshot.) While one is live a GC
** compaction need not remove every doomed cell; snapshots are freed at
** random times, all of them now and then, and before a reopen; and in
** about half the steps none is taken (runs of ~150 steps).
**
** The store's background threads are on in half the runs (chosen by the
** seed, or $WCS_MODEL_THREADS=0/1); then compactions race with the steps.
**
** Usage: engine_model [steps]   (default 5000, or $WCS_MODEL_STEPS);
** $WCS_SEED replays a run (the seed is printed at the start).
**
** Now and then a burst writes many versions into one column, so that
** reads pass over long runs of cells they do not return.
**
** The table: FAMILY a (no GC), FAMILY b MAX VERSIONS 2, FAMILY c MAX AGE
** '20us', FAMILY d MAX VERSIONS 1 MAX AGE '15us' INTERSECTION, FAMILY s
** AGGREGATE SUM. Row keys come from a small alphabet with 00 and FF bytes
** so that escaping, prefixes and ordering are all exercised.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/gcfilter.h"
#include "storage/util.h"
#include "testutil.h"
#include "wcs.h"

#define NFAM 5
static const char *azFam[NFAM] = {"a", "b", "c", "d", "s"};
static const char *zSchema =
    "FAMILY a, FAMILY b MAX VERSIONS 2, FAMILY c MAX AGE '20us', "
    "FAMILY d MAX VERSIONS 1 MAX AGE '15us' INTERSECTION, "
    "FAMILY s AGGREGATE SUM";

typedef struct Cell {
  uint8_t aRow[4];
  int nRow;
  int iFam;
  uint8_t aQual[3];
  int nQual;
  int64_t iTs;
  uint8_t aVal[12];
  int nVal;
  int bDoomed; /* expired when a GC compaction ran: may be gone */
} Cell;

typedef struct Model {
  Cell *a;
  int n, nAlloc;
} Model;

/* A live store snapshot and the committed model as of it. */
#define NSNAP 3
typedef struct Snap {
  wcs_snapshot *p; /* NULL: slot free */
  Model m;
  uint64_t nStep; /* taken at */
} Snap;

static int64_t gClock = 1000000;
static int64_t clock_now(void *p) {
  (void)p;
  return gClock;
}

static int bcmp3(const uint8_t *a, int na, const uint8_t *b, int nb) {
  int n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, (size_t)n) : 0;
  if (c) return c;
  return na - nb;
}

/* order: row, family, qualifier, ts descending */
static int cell_cmp(const void *x, const void *y) {
  const Cell *a = x, *b = y;
  int c = bcmp3(a->aRow, a->nRow, b->aRow, b->nRow);
  if (c) return c;
  if (a->iFam != b->iFam) return a->iFam - b->iFam;
  c = bcmp3(a->aQual, a->nQual, b->aQual, b->nQual);
  if (c) return c;
  return a->iTs > b->iTs ? -1 : a->iTs < b->iTs;
}

static void model_copy(Model *dst, const Model *src) {
  free(dst->a);
  dst->n = src->n;
  dst->nAlloc = src->n + 1;
  dst->a = malloc((size_t)dst->nAlloc * sizeof(Cell));
  if (src->n) memcpy(dst->a, src->a, (size_t)src->n * sizeof(Cell));
}

static Cell *model_find(Model *m, const Cell *k) {
  int i;
  for (i = 0; i < m->n; i++) {
    Cell *c = &m->a[i];
    if (c->iFam == k->iFam && c->iTs == k->iTs &&
        bcmp3(c->aRow, c->nRow, k->aRow, k->nRow) == 0 &&
        bcmp3(c->aQual, c->nQual, k->aQual, k->nQual) == 0) {
      return c;
    }
  }
  return NULL;
}

static void model_put(Model *m, const Cell *k) {
  Cell *c = model_find(m, k);
  if (c == NULL) {
    if (m->n == m->nAlloc) {
      m->nAlloc = m->nAlloc ? m->nAlloc * 2 : 64;
      m->a = realloc(m->a, (size_t)m->nAlloc * sizeof(Cell));
    }
    c = &m->a[m->n++];
  }
  *c = *k;
  c->bDoomed = 0; /* a new version: nothing has judged it yet */
}

/* delete cells matching a predicate */
typedef int (*CellPred)(const Cell *c, const void *ctx);
static void model_delete(Model *m, CellPred x, const void *ctx) {
  int i, j = 0;
  for (i = 0; i < m->n; i++) {
    if (!x(&m->a[i], ctx)) m->a[j++] = m->a[i];
  }
  m->n = j;
}

/* ------------------------------------------------------------------ */
/* random values                                                       */

static const uint8_t aAlpha[4] = {0x00, 'a', 'b', 0xFF};
static void rand_row(uint8_t *p, int *pn) {
  int n = 1 + (int)tu_rand_range(3), i;
  for (i = 0; i < n; i++)
    p[i] = aAlpha[tu_rand_range(4)];
  *pn = n;
}
static void rand_qual(uint8_t *p, int *pn) {
  static const char *az[4] = {"", "x", "y", "x\0"};
  static const int an[4] = {0, 1, 1, 2};
  int i = (int)tu_rand_range(4);
  memcpy(p, az[i], (size_t)an[i]);
  *pn = an[i];
}
static int64_t rand_ts(void) {
  return gClock - (int64_t)tu_rand_range(30);
}

/* ------------------------------------------------------------------ */
/* applying mutations to both                                          */

typedef struct Ctx {
  const char *zDir;
  wcs_engine *pEng;
  wcs_table *pTab;
  wcs_txn *pTxn;
  Model committed; /* what the store holds */
  Model pending;   /* committed + the open transaction */
  Model save[4];   /* savepoint copies of pending */
  int nSave;
  uint64_t nStep;
  uint64_t nReads;
  uint64_t nCollected; /* doomed cells the store removed */
  uint64_t nRevived;   /* doomed cells visible again */
  uint64_t nByPos;     /* ... of them, of family b (MAX VERSIONS only),
                       ** removed by a compaction other than a GC one */
  int bGcStep;         /* this step ran a GC compaction */
  int bThreads;        /* the store's background threads on */
  int nL0Trigger;      /* store shape: small levels and files, so that */
  uint64_t nL1Bytes;   /* compactions of deeper levels run while level 0 */
  uint64_t nFileBytes; /* holds newer data (deletes above the input) */
  Snap aSnap[NSNAP];   /* live snapshots with their models */
  int nSnap;           /* live ones */
  int bSnapOn;         /* snapshots are taken (in about half the steps:
                       ** without, GC compactions collect as before) */
  uint64_t nSnapTaken;
  uint64_t nSnapReads; /* reads at a snapshot */
  uint64_t nPairReads; /* reads with two cursors open at once */
} Ctx;

static void fail(Ctx *x, const char *zWhat) {
  fprintf(stderr, "engine_model: step %llu: %s: %s\n",
          (unsigned long long)x->nStep, zWhat, wcs_engine_errmsg(x->pEng));
  exit(1);
}

static int pred_col(const Cell *c, const void *ctx) {
  const Cell *k = ctx; /* iTs = start, aVal holds end as int64 */
  int64_t iEnd;
  memcpy(&iEnd, k->aVal, 8);
  return c->iFam == k->iFam && bcmp3(c->aRow, c->nRow, k->aRow, k->nRow) == 0 &&
         bcmp3(c->aQual, c->nQual, k->aQual, k->nQual) == 0 &&
         c->iTs >= k->iTs && (iEnd == 0 || c->iTs < iEnd);
}
static int pred_fam(const Cell *c, const void *ctx) {
  const Cell *k = ctx;
  return c->iFam == k->iFam && bcmp3(c->aRow, c->nRow, k->aRow, k->nRow) == 0;
}
static int pred_row(const Cell *c, const void *ctx) {
  const Cell *k = ctx;
  return bcmp3(c->aRow, c->nRow, k->aRow, k->nRow) == 0;
}
static int pred_prefix(const Cell *c, const void *ctx) {
  const Cell *k = ctx;
  return c->nRow >= k->nRow && memcmp(c->aRow, k->aRow, (size_t)k->nRow) == 0;
}
typedef struct RangeK {
  uint8_t s[4], e[4];
  int ns, ne, bStartExcl, bEndIncl, bNoStart, bNoEnd;
} RangeK;
static int in_range(const RangeK *r, const uint8_t *p, int n) {
  if (!r->bNoStart) {
    int c = bcmp3(p, n, r->s, r->ns);
    if (c < 0 || (c == 0 && r->bStartExcl)) return 0;
  }
  if (!r->bNoEnd) {
    int c = bcmp3(p, n, r->e, r->ne);
    if (c > 0 || (c == 0 && !r->bEndIncl)) return 0;
  }
  return 1;
}
static int pred_range(const Cell *c, const void *ctx) {
  return in_range(ctx, c->aRow, c->nRow);
}

static void rand_range(RangeK *r) {
  memset(r, 0, sizeof(*r));
  r->bNoStart = tu_rand_range(5) == 0;
  r->bNoEnd = tu_rand_range(5) == 0;
  rand_row(r->s, &r->ns);
  rand_row(r->e, &r->ne);
  r->bStartExcl = (int)tu_rand_range(2);
  r->bEndIncl = (int)tu_rand_range(2);
}
static void to_key_range(const RangeK *r, wcs_key_range *k) {
  memset(k, 0, sizeof(*k));
  if (!r->bNoStart) {
    k->pStart = r->s;
    k->nStart = (size_t)r->ns;
    k->bStartExcl = r->bStartExcl;
  }
  if (!r->bNoEnd) {
    k->pEnd = r->e;
    k->nEnd = (size_t)r->ne;
    k->bEndIncl = r->bEndIncl;
  }
}

static int expired(int iFam, int64_t iPos, int64_t iTs);
static void model_walk(Model *m, void (*x)(Model *, int, int64_t));

/* Cells hidden by their position (expired, not the newest of their
** column), doomed ones apart: indexes into the model walked last. */
static int *gaHidden, *gaDoomed;
static int gnHidden, gnDoomed;
static void hidden_cb(Model *m, int i, int64_t iPos) {
  if (iPos == 0 || !expired(m->a[i].iFam, iPos, m->a[i].iTs)) return;
  if (m->a[i].bDoomed) {
    gaDoomed[gnDoomed++] = i;
  } else {
    gaHidden[gnHidden++] = i;
  }
}

/* Pick a cell that a delete of newer versions would make visible again:
** doomed (it may be gone) or just hidden. 0 if there is none. */
static int pick_hidden(Model *m, Cell *pOut) {
  gaHidden = realloc(gaHidden, (size_t)(m->n + 1) * sizeof(int));
  gaDoomed = realloc(gaDoomed, (size_t)(m->n + 1) * sizeof(int));
  gnHidden = gnDoomed = 0;
  model_walk(m, hidden_cb);
  if (gnDoomed && (gnHidden == 0 || tu_rand_range(2))) {
    *pOut = m->a[gaDoomed[tu_rand_range((uint64_t)gnDoomed)]];
  } else if (gnHidden) {
    *pOut = m->a[gaHidden[tu_rand_range((uint64_t)gnHidden)]];
  } else {
    return 0;
  }
  return 1;
}

/* One random mutation on the open transaction and the pending model. */
static void random_mutation(Ctx *x) {
  Cell k;
  int op = (int)tu_rand_range(100), rc = WCS_OK;
  memset(&k, 0, sizeof(k));
  rand_row(k.aRow, &k.nRow);
  rand_qual(k.aQual, &k.nQual);
  k.iFam = (int)tu_rand_range(NFAM - 1); /* a..d */
  k.iTs = rand_ts();
  if (op < 3) {
    /* a burst of versions in one column, so that latest-N and time-range
    ** reads have many cells to pass over (the cursor seeks past them) */
    int n = 9 + (int)tu_rand_range(16), i;
    for (i = 0; rc == WCS_OK && i < n; i++) {
      k.iTs = gClock - (int64_t)tu_rand_range(40);
      k.nVal = 1 + (int)tu_rand_range(4);
      tu_rand_bytes(k.aVal, (size_t)k.nVal);
      rc = wcs_txn_set_cell(x->pTxn, x->pTab, k.aRow, (size_t)k.nRow,
                            azFam[k.iFam], k.aQual, (size_t)k.nQual, k.iTs,
                            k.aVal, (size_t)k.nVal);
      model_put(&x->pending, &k);
    }
  } else if (op < 62) {
    int bNow = tu_rand_range(8) == 0;
    k.nVal = 1 + (int)tu_rand_range(4);
    tu_rand_bytes(k.aVal, (size_t)k.nVal);
    if (bNow) k.iTs = gClock;
    rc = wcs_txn_set_cell(x->pTxn, x->pTab, k.aRow, (size_t)k.nRow,
                          azFam[k.iFam], k.aQual, (size_t)k.nQual,
                          bNow ? WCS_TS_NOW : k.iTs, k.aVal, (size_t)k.nVal);
    model_put(&x->pending, &k);
  } else if (op < 70) {
    /* AddToCell on the SUM family, a few timestamps */
    int64_t v = (int64_t)tu_rand_range(21) - 10;
    Cell *c;
    k.iFam = 4;
    k.iTs = gClock - (int64_t)tu_rand_range(3);
    rc = wcs_txn_add_to_cell(x->pTxn, x->pTab, k.aRow, (size_t)k.nRow, "s",
                             k.aQual, (size_t)k.nQual, k.iTs, v);
    c = model_find(&x->pending, &k);
    if (c) v += (int64_t)wcs_get64be(c->aVal);
    wcs_put64be(k.aVal, (uint64_t)v);
    k.nVal = 8;
    model_put(&x->pending, &k);
  } else if (op < 80) {
    int64_t iStart = 0, iEnd = 0;
    Cell h;
    k.iFam = (int)tu_rand_range(NFAM);
    if (tu_rand_range(2)) iStart = rand_ts();
    if (tu_rand_range(2)) iEnd = rand_ts() + 3;
    if (tu_rand_range(3) == 0 && pick_hidden(&x->pending, &h)) {
      /* delete some or all versions newer than a hidden one: it is
      ** visible again, unless a GC compaction collected it */
      k = h;
      iStart = h.iTs + 1;
      iEnd = tu_rand_range(2) ? 0 : iStart + 1 + (int64_t)tu_rand_range(8);
    }
    rc = wcs_txn_delete_cells(x->pTxn, x->pTab, k.aRow, (size_t)k.nRow,
                              azFam[k.iFam], k.aQual, (size_t)k.nQual, iStart,
                              iEnd);
    if (iEnd == 0 || iEnd > iStart) {
      k.iTs = iStart;
      memcpy(k.aVal, &iEnd, 8);
      model_delete(&x->pending, pred_col, &k);
    } else if (rc == WCS_RANGE) {
      rc = WCS_OK; /* an empty range is refused and changes nothing */
    } else {
      fail(x, "an empty delete time range was not refused");
    }
  } else if (op < 86) {
    k.iFam = (int)tu_rand_range(NFAM);
    rc = wcs_txn_delete_family(x->pTxn, x->pTab, k.aRow, (size_t)k.nRow,
                               azFam[k.iFam]);
    model_delete(&x->pending, pred_fam, &k);
  } else if (op < 94) {
    rc = wcs_txn_delete_row(x->pTxn, x->pTab, k.aRow, (size_t)k.nRow);
    model_delete(&x->pending, pred_row, &k);
  } else if (op < 97) {
    /* mostly 2..3 bytes; rarely 0 ("every row") or 1 */
    int r = (int)tu_rand_range(20);
    k.nRow = r == 0 ? 0 : r < 3 ? 1 : 2 + (int)tu_rand_range(2);
    rc = wcs_txn_delete_prefix(x->pTxn, x->pTab, k.aRow, (size_t)k.nRow);
    model_delete(&x->pending, pred_prefix, &k);
  } else {
    RangeK r;
    wcs_key_range kr;
    rand_range(&r);
    r.bNoStart = r.bNoEnd = 0; /* keep range deletes narrow-ish */
    to_key_range(&r, &kr);
    rc = wcs_txn_delete_range(x->pTxn, x->pTab, &kr);
    model_delete(&x->pending, pred_range, &r);
  }
  if (rc) fail(x, "mutation");
}

/* ------------------------------------------------------------------ */
/* reading both                                                        */

typedef struct Out {
  char *z;
  size_t n, nAlloc;
} Out;
static void out_add(Out *o, const void *p, size_t n) {
  if (o->n + n + 1 > o->nAlloc) {
    while (o->n + n + 1 > o->nAlloc)
      o->nAlloc = o->nAlloc ? o->nAlloc * 2 : 1024;
    o->z = realloc(o->z, o->nAlloc);
  }
  memcpy(o->z + o->n, p, n);
  o->n += n;
  o->z[o->n] = 0;
}
static void out_hex(Out *o, const void *p, size_t n) {
  static const char h[] = "0123456789abcdef";
  const uint8_t *a = p;
  size_t i;
  for (i = 0; i < n; i++) {
    char c[2] = {h[a[i] >> 4], h[a[i] & 15]};
    out_add(o, c, 2);
  }
}
static void out_cell(Out *o, const char *zFam, const void *q, size_t nq,
                     int64_t ts, const void *v, size_t nv) {
  char z[64];
  out_add(o, " ", 1);
  out_add(o, zFam, strlen(zFam));
  out_add(o, ".", 1);
  out_hex(o, q, nq);
  snprintf(z, sizeof(z), "@%lld=", (long long)ts);
  out_add(o, z, strlen(z));
  out_hex(o, v, nv);
}

typedef struct ReadSpec {
  RangeK aR[3];
  int nR; /* 0: whole table */
  int bReverse;
  uint64_t nLimit;
  int abFam[NFAM];
  int bAllFam;
  int nVersions;
  int64_t iMinTs, iMaxTs, iAsOf;
  int bKeysOnly;
} ReadSpec;

static void rand_spec(ReadSpec *s) {
  int i;
  memset(s, 0, sizeof(*s));
  s->nR = (int)tu_rand_range(4);
  for (i = 0; i < s->nR; i++)
    rand_range(&s->aR[i]);
  if (tu_rand_range(6) == 0) {
    /* a point read of one row (row-prefix iterators, bloom probes) */
    s->nR = 1;
    rand_row(s->aR[0].s, &s->aR[0].ns);
    s->aR[0].bNoStart = s->aR[0].bNoEnd = s->aR[0].bStartExcl = 0;
    s->aR[0].bEndIncl = 1;
    memcpy(s->aR[0].e, s->aR[0].s, sizeof(s->aR[0].s));
    s->aR[0].ne = s->aR[0].ns;
  }
  s->bReverse = (int)tu_rand_range(2);
  s->nLimit = tu_rand_range(3) == 0 ? 1 + tu_rand_range(5) : 0;
  s->bAllFam = tu_rand_range(2);
  for (i = 0; i < NFAM; i++)
    s->abFam[i] = s->bAllFam || tu_rand_range(2);
  s->nVersions = (int)tu_rand_range(4);
  s->iMinTs = tu_rand_range(3) == 0 ? rand_ts() : 0;
  s->iMaxTs = tu_rand_range(3) == 0 ? rand_ts() + 5 : INT64_MAX;
  s->iAsOf = tu_rand_range(5) == 0 ? rand_ts() : -1;
  s->bKeysOnly = tu_rand_range(8) == 0;
}

static const int64_t aMaxVer[NFAM] = {0, 2, 0, 1, 0};
static const int64_t aMaxAge[NFAM] = {0, 0, 20, 15, 0};
static const int abInter[NFAM] = {0, 0, 0, 1, 0};

static int expired(int iFam, int64_t iPos, int64_t iTs) {
  int bV = aMaxVer[iFam] > 0, bA = aMaxAge[iFam] > 0;
  int eV = bV && iPos >= aMaxVer[iFam];
  int eA = bA && iTs < gClock - aMaxAge[iFam];
  if (bV && bA && abInter[iFam]) return eV && eA;
  return eV || eA;
}

/* Physical GC as wcs_engine_gc() does it: drop what the policy expires
** now. (A collected version stays gone even if a later delete would make
** it young again by position, as in Bigtable.) */
static void model_gc(Model *m) {
  int i = 0, j, w = 0;
  if (m->n == 0) return;
  qsort(m->a, (size_t)m->n, sizeof(Cell), cell_cmp);
  while (i < m->n) {
    int64_t iPos = 0;
    j = i;
    while (j < m->n && m->a[j].iFam == m->a[i].iFam &&
           bcmp3(m->a[j].aRow, m->a[j].nRow, m->a[i].aRow, m->a[i].nRow) == 0 &&
           bcmp3(m->a[j].aQual, m->a[j].nQual, m->a[i].aQual, m->a[i].nQual) ==
               0) {
      if (!expired(m->a[j].iFam, iPos, m->a[j].iTs)) m->a[w++] = m->a[j];
      iPos++;
      j++;
    }
    i = j;
  }
  m->n = w;
}

/* Call x(m, i, iPos) for every cell, sorted, with its position in its
** column (0 = newest). */
static void model_walk(Model *m, void (*x)(Model *, int, int64_t)) {
  int i = 0, j;
  if (m->n == 0) return;
  qsort(m->a, (size_t)m->n, sizeof(Cell), cell_cmp);
  while (i < m->n) {
    int64_t iPos = 0;
    j = i;
    while (j < m->n && m->a[j].iFam == m->a[i].iFam &&
           bcmp3(m->a[j].aRow, m->a[j].nRow, m->a[i].aRow, m->a[i].nRow) == 0 &&
           bcmp3(m->a[j].aQual, m->a[j].nQual, m->a[i].aQual, m->a[i].nQual) ==
               0) {
      x(m, j, iPos++);
      j++;
    }
    i = j;
  }
}
static void doom_cb(Model *m, int i, int64_t iPos) {
  if (expired(m->a[i].iFam, iPos, m->a[i].iTs)) m->a[i].bDoomed = 1;
}
static uint64_t gnRevived;
static void undoom_cb(Model *m, int i, int64_t iPos) {
  if (m->a[i].bDoomed && !expired(m->a[i].iFam, iPos, m->a[i].iTs)) {
    m->a[i].bDoomed = 0;
    gnRevived++;
  }
}

/* A GC compaction may remove what the policy expires now. */
static void model_doom(Model *m) {
  model_walk(m, doom_cb);
}

/* Follow the store for doomed cells: drop those it no longer holds, and
** make those that are visible again ordinary cells. With bMustGo, none
** may be left (a GC compaction without a snapshot removes them all).
** Every other cell of the model must still be stored (a raw point read
** of its key): no compaction may remove a cell that was not doomed. */
static void resolve_doomed(Ctx *x, int bMustGo) {
  Model *m = &x->committed;
  wcs_buf k = {0};
  int i, w = 0;
  for (i = 0; i < m->n; i++) {
    Cell *c = &m->a[i];
    EngFamily *f = eng_family(x->pTab->pDef, azFam[c->iFam], NULL);
    void *pVal = NULL;
    size_t nVal = 0;
    k.n = 0;
    if (f == NULL ||
        eng_cell_key(&k, x->pTab->pDef->iTid, f->iFid, c->aRow,
                     (size_t)c->nRow, c->aQual, (size_t)c->nQual, c->iTs) ||
        wcs_db_get(wcs_engine_db(x->pEng), NULL, k.a, k.n, &pVal, &nVal)) {
      fail(x, "raw read of a cell");
    }
    if (!c->bDoomed && pVal == NULL) {
      fprintf(stderr,
              "engine_model: step %llu: a cell that was never expired is "
              "gone from the store (row %02x%02x%02x%02x/%d, family %s, "
              "qualifier %d bytes, ts %lld)\n",
              (unsigned long long)x->nStep, c->aRow[0], c->aRow[1],
              c->aRow[2], c->aRow[3], c->nRow, azFam[c->iFam], c->nQual,
              (long long)c->iTs);
      exit(1);
    }
    if (c->bDoomed) {
      if (pVal == NULL) {
        x->nCollected++;
        x->nByPos += !x->bGcStep && c->iFam == 1;
        continue;
      }
      if (bMustGo) {
        fprintf(stderr,
                "engine_model: step %llu: a GC compaction kept a cell its "
                "policy expires (family %s, ts %lld)\n",
                (unsigned long long)x->nStep, azFam[c->iFam],
                (long long)c->iTs);
        exit(1);
      }
    }
    wcs_free(pVal);
    m->a[w++] = *c;
  }
  m->n = w;
  gnRevived = 0;
  model_walk(m, undoom_cb);
  x->nRevived += gnRevived;
  wcs_buf_free(&k);
  model_copy(&x->pending, &x->committed);
}

static void model_read(Model *m, const ReadSpec *s, Out *o) {
  Cell *a;
  int i, nRowsAlloc = 0, nRows = 0;
  int64_t iMax = s->iMaxTs;
  struct Row {
    int iFirst, nCell;
  } *aRow = NULL;
  if (s->iAsOf >= 0 && s->iAsOf + 1 < iMax) iMax = s->iAsOf + 1;
  a = malloc((size_t)(m->n + 1) * sizeof(Cell));
  if (m->n) memcpy(a, m->a, (size_t)m->n * sizeof(Cell));
  qsort(a, (size_t)m->n, sizeof(Cell), cell_cmp);
  /* rows in order, with their filtered cells */
  i = 0;
  while (i < m->n) {
    int j = i, k, bIn = s->nR == 0, nLive = 0;
    while (j < m->n && bcmp3(a[j].aRow, a[j].nRow, a[i].aRow, a[i].nRow) == 0)
      j++;
    for (k = 0; k < s->nR; k++)
      bIn |= in_range(&s->aR[k], a[i].aRow, a[i].nRow);
    if (bIn) {
      int p = i, w = i;
      while (p < j) {
        int q = p;
        int64_t iPos = 0, nEmit = 0;
        while (q < j && a[q].iFam == a[p].iFam &&
               bcmp3(a[q].aQual, a[q].nQual, a[p].aQual, a[p].nQual) == 0) {
          int bKeep =
              s->abFam[a[q].iFam] && !expired(a[q].iFam, iPos, a[q].iTs);
          iPos++;
          if (bKeep && (a[q].iTs < s->iMinTs || a[q].iTs >= iMax)) bKeep = 0;
          if (bKeep && s->nVersions && nEmit >= s->nVersions) bKeep = 0;
          if (bKeep) {
            nEmit++;
            a[w++] = a[q];
            nLive++;
          }
          q++;
        }
        p = q;
      }
      if (nLive) {
        if (nRows == nRowsAlloc) {
          nRowsAlloc = nRowsAlloc ? nRowsAlloc * 2 : 64;
          aRow = realloc(aRow, (size_t)nRowsAlloc * sizeof(*aRow));
        }
        aRow[nRows].iFirst = i;
        aRow[nRows].nCell = nLive;
        nRows++;
      }
    }
    i = j;
  }
  for (i = 0; i < nRows; i++) {
    int r = s->bReverse ? nRows - 1 - i : i, k;
    Cell *c0 = &a[aRow[r].iFirst];
    if (s->nLimit && (uint64_t)i >= s->nLimit) break;
    out_hex(o, c0->aRow, (size_t)c0->nRow);
    out_add(o, ":", 1);
    for (k = 0; !s->bKeysOnly && k < aRow[r].nCell; k++) {
      Cell *c = &c0[k];
      out_cell(o, azFam[c->iFam], c->aQual, (size_t)c->nQual, c->iTs, c->aVal,
               (size_t)c->nVal);
    }
    out_add(o, ";", 1);
  }
  free(aRow);
  free(a);
}

static wcs_cursor *engine_open(Ctx *x, wcs_txn *pTxn, const wcs_snapshot *pSnap,
                               const ReadSpec *s) {
  wcs_read_options ro;
  wcs_key_range ak[3];
  const char *az[NFAM];
  wcs_cursor *c = NULL;
  int i, n = 0, rc;
  wcs_read_options_init(&ro);
  for (i = 0; i < s->nR; i++)
    to_key_range(&s->aR[i], &ak[i]);
  ro.aRange = s->nR ? ak : NULL;
  ro.nRange = s->nR;
  ro.bReverse = s->bReverse;
  ro.nRowLimit = s->nLimit;
  if (!s->bAllFam) {
    for (i = 0; i < NFAM; i++) {
      if (s->abFam[i]) az[n++] = azFam[i];
    }
    ro.azFamily = az;
    ro.nFamily = n;
  }
  ro.nVersions = s->nVersions;
  ro.iMinTs = s->iMinTs;
  ro.iMaxTs = s->iMaxTs;
  ro.iAsOf = s->iAsOf;
  ro.bKeysOnly = s->bKeysOnly;
  ro.pSnap = pSnap;
  rc = wcs_cursor_open(&c, x->pTab, pTxn, &ro);
  if (rc) fail(x, "cursor open");
  return c;
}

/* Render the cursor's current row and move on; 0 at its end. */
static int engine_step(Ctx *x, wcs_cursor *c, Out *o) {
  size_t nRow;
  const void *pRow;
  int nCell, i;
  const wcs_cell *a;
  if (wcs_cursor_eof(c)) return 0;
  pRow = wcs_cursor_row(c, &nRow);
  a = wcs_cursor_cells(c, &nCell);
  out_hex(o, pRow, nRow);
  out_add(o, ":", 1);
  for (i = 0; i < nCell; i++) {
    out_cell(o, a[i].zFamily, a[i].pQual, a[i].nQual, a[i].iTs, a[i].pVal,
             a[i].nVal);
  }
  out_add(o, ";", 1);
  if (wcs_cursor_next(c)) fail(x, "cursor next");
  return 1;
}

static void engine_read(Ctx *x, wcs_txn *pTxn, const wcs_snapshot *pSnap,
                        const ReadSpec *s, Out *o) {
  wcs_cursor *c = engine_open(x, pTxn, pSnap, s);
  while (engine_step(x, c, o)) {
  }
  wcs_cursor_close(c);
}

static void compare(Ctx *x, const char *zKind, const ReadSpec *ps, Out *pa,
                    Out *pb) {
  const ReadSpec s = *ps;
  Out a = *pa, b = *pb;
  if (strcmp(a.z ? a.z : "", b.z ? b.z : "") != 0) {
    fprintf(stderr,
            "engine_model: step %llu: %s read differs\n"
            "  ranges %d reverse %d limit %llu versions %d ts [%lld, %lld) "
            "asof %lld keysonly %d fams %d%d%d%d%d\n  model : %s\n"
            "  engine: %s\n",
            (unsigned long long)x->nStep, zKind, s.nR, s.bReverse,
            (unsigned long long)s.nLimit, s.nVersions, (long long)s.iMinTs,
            (long long)s.iMaxTs, (long long)s.iAsOf, s.bKeysOnly, s.abFam[0],
            s.abFam[1], s.abFam[2], s.abFam[3], s.abFam[4], a.z ? a.z : "",
            b.z ? b.z : "");
    exit(1);
  }
  x->nReads++;
  free(a.z);
  free(b.z);
}

static void check_read(Ctx *x, int bInTxn) {
  ReadSpec s;
  Out a = {0}, b = {0};
  rand_spec(&s);
  model_read(bInTxn ? &x->pending : &x->committed, &s, &a);
  engine_read(x, bInTxn ? x->pTxn : NULL, NULL, &s, &b);
  compare(x, bInTxn ? "in-transaction" : "latest", &s, &a, &b);
}

/* ------------------------------------------------------------------ */
/* snapshots                                                           */

static void snap_free(Ctx *x, int k) {
  Snap *p = &x->aSnap[k];
  if (p->p == NULL) return;
  wcs_snapshot_free(wcs_engine_db(x->pEng), p->p);
  p->p = NULL;
  p->m.n = 0;
  x->nSnap--;
}
static void snap_free_all(Ctx *x) {
  int k;
  for (k = 0; k < NSNAP; k++)
    snap_free(x, k);
}

/* Take a snapshot of the committed state into a free slot (if any), with
** a copy of the committed model as of it: doomed cells a compaction
** removed before it are dropped from the copy (raw reads at the
** snapshot); every other cell must be there. */
static void snap_take(Ctx *x) {
  Snap *p = NULL;
  wcs_buf k = {0};
  int i, w = 0;
  for (i = 0; i < NSNAP && p == NULL; i++) {
    if (x->aSnap[i].p == NULL) p = &x->aSnap[i];
  }
  if (p == NULL) return;
  if (wcs_snapshot_new(wcs_engine_db(x->pEng), &p->p)) fail(x, "snapshot");
  x->nSnap++;
  x->nSnapTaken++;
  p->nStep = x->nStep;
  model_copy(&p->m, &x->committed);
  for (i = 0; i < p->m.n; i++) {
    Cell *c = &p->m.a[i];
    EngFamily *f = eng_family(x->pTab->pDef, azFam[c->iFam], NULL);
    void *pVal = NULL;
    size_t nVal = 0;
    k.n = 0;
    if (f == NULL ||
        eng_cell_key(&k, x->pTab->pDef->iTid, f->iFid, c->aRow, (size_t)c->nRow,
                     c->aQual, (size_t)c->nQual, c->iTs) ||
        wcs_db_get(wcs_engine_db(x->pEng), p->p, k.a, k.n, &pVal, &nVal)) {
      fail(x, "raw read of a cell at a snapshot");
    }
    if (pVal == NULL && !c->bDoomed) {
      fprintf(stderr,
              "engine_model: step %llu: a cell that was never expired is "
              "not in a new snapshot (family %s, ts %lld)\n",
              (unsigned long long)x->nStep, azFam[c->iFam], (long long)c->iTs);
      exit(1);
    }
    wcs_free(pVal);
    if (pVal == NULL) continue;
    c->bDoomed = 0;
    p->m.a[w++] = *c;
  }
  p->m.n = w;
  wcs_buf_free(&k);
}

static int snap_pick(Ctx *x) {
  int a[NSNAP], n = 0, k;
  for (k = 0; k < NSNAP; k++) {
    if (x->aSnap[k].p) a[n++] = k;
  }
  return n ? a[tu_rand_range((uint64_t)n)] : -1;
}

/* A random read at a random live snapshot. */
static void check_read_snap(Ctx *x) {
  ReadSpec s;
  Out a = {0}, b = {0};
  char z[64];
  int k = snap_pick(x);
  if (k < 0) return;
  rand_spec(&s);
  model_read(&x->aSnap[k].m, &s, &a);
  engine_read(x, NULL, x->aSnap[k].p, &s, &b);
  snprintf(z, sizeof(z), "snapshot (of step %llu)",
           (unsigned long long)x->aSnap[k].nStep);
  compare(x, z, &s, &a, &b);
  x->nSnapReads++;
}

/* Two cursors open at once, stepped in turns: one at a snapshot, the
** other at another one, the latest state or in the transaction (bInTxn),
** so that the pool holds cursors whose views read at different moments. */
static void check_read_pair(Ctx *x, int bInTxn) {
  ReadSpec s[2];
  Out a[2] = {{0}}, b[2] = {{0}};
  wcs_cursor *c[2];
  int ak[2], i, bMore[2] = {1, 1};
  ak[0] = snap_pick(x);
  if (ak[0] < 0) return;
  ak[1] = tu_rand_range(3) == 0 ? snap_pick(x) : -1;
  for (i = 0; i < 2; i++) {
    const Model *m = ak[i] >= 0 ? &x->aSnap[ak[i]].m
                     : bInTxn   ? &x->pending
                                : &x->committed;
    rand_spec(&s[i]);
    model_read((Model *)m, &s[i], &a[i]);
  }
  /* in either order */
  if (tu_rand_range(2)) {
    c[1] = engine_open(x, ak[1] < 0 && bInTxn ? x->pTxn : NULL,
                       ak[1] >= 0 ? x->aSnap[ak[1]].p : NULL, &s[1]);
    c[0] = engine_open(x, NULL, x->aSnap[ak[0]].p, &s[0]);
  } else {
    c[0] = engine_open(x, NULL, x->aSnap[ak[0]].p, &s[0]);
    c[1] = engine_open(x, ak[1] < 0 && bInTxn ? x->pTxn : NULL,
                       ak[1] >= 0 ? x->aSnap[ak[1]].p : NULL, &s[1]);
  }
  while (bMore[0] || bMore[1]) {
    i = (int)tu_rand_range(2);
    if (!bMore[i]) i = !i;
    bMore[i] = engine_step(x, c[i], &b[i]);
  }
  /* close in either order */
  i = (int)tu_rand_range(2);
  wcs_cursor_close(c[i]);
  wcs_cursor_close(c[!i]);
  for (i = 0; i < 2; i++) {
    char z[80];
    if (ak[i] >= 0) {
      snprintf(z, sizeof(z), "paired, snapshot (of step %llu)",
               (unsigned long long)x->aSnap[ak[i]].nStep);
    } else {
      snprintf(z, sizeof(z), "paired, %s",
               bInTxn ? "in-transaction" : "latest");
    }
    compare(x, z, &s[i], &a[i], &b[i]);
  }
  x->nSnapReads++;
  x->nPairReads++;
}

/* Between mutations or steps: maybe take or free snapshots, and read at
** them, interleaved with reads of the latest state (and in the open
** transaction with bInTxn). */
static void snap_activity(Ctx *x, int bInTxn) {
  int r = (int)tu_rand_range(100);
  if (r < 8) {
    if (x->bSnapOn) snap_take(x);
  } else if (r < 12) {
    int k = snap_pick(x);
    if (k >= 0) snap_free(x, k);
  } else if (r < 13) {
    snap_free_all(x);
  }
  if (x->nSnap == 0) return;
  r = (int)tu_rand_range(100);
  if (r < 30) {
    check_read_snap(x);
    if (tu_rand_range(2)) check_read(x, bInTxn && tu_rand_range(2));
    if (tu_rand_range(2)) check_read_snap(x);
  } else if (r < 38) {
    check_read_pair(x, bInTxn);
  }
}

/* ------------------------------------------------------------------ */

static void open_all(Ctx *x) {
  GcFilter *pGc = NULL;
  wcs_options o;
  char *zErr = NULL;
  char zPath[1024];
  wcs_options_init(&o);
  o.nMemtable = 64 * 1024; /* small: flushes and compactions happen */
  o.bNoBackground = !x->bThreads;
  o.nL0Trigger = x->nL0Trigger;
  o.nL1Bytes = x->nL1Bytes;
  o.nFileBytes = x->nFileBytes;
  /* The GC filter is installed by hand and bound only once the model's
  ** clock is set: bound earlier, a background compaction of the open
  ** (after recovery) would judge ages by the wall clock. Unbound, it
  ** keeps everything. wcs_engine_close() frees it after the store. */
  if (gcf_new(&pGc)) {
    fprintf(stderr, "engine_model: out of memory\n");
    exit(1);
  }
  o.xCompactionFilter = gcf_filter;
  o.pFilterCtx = pGc;
  snprintf(zPath, sizeof(zPath), "%s/store", x->zDir);
  if (wcs_engine_open_path(&x->pEng, zPath, &o, &zErr)) {
    fprintf(stderr, "engine_model: open: %s\n", zErr ? zErr : "?");
    exit(1);
  }
  wcs_engine_set_clock(x->pEng, clock_now, NULL);
  if (gcf_bind(pGc, x->pEng)) fail(x, "gc filter bind");
  if (wcs_table_open(x->pEng, "m", &x->pTab)) fail(x, "table open");
  if (x->pTab == NULL && wcs_table_create(x->pEng, "m", zSchema, &x->pTab)) {
    fail(x, "table create");
  }
  if (wcs_txn_begin(x->pEng, 0, &x->pTxn)) fail(x, "txn begin");
}

static void close_all(Ctx *x) {
  wcs_txn_free(x->pTxn);
  wcs_table_close(x->pTab);
  if (wcs_engine_close(x->pEng)) {
    fprintf(stderr, "engine_model: close failed\n");
    exit(1);
  }
  x->pTxn = NULL;
  x->pTab = NULL;
  x->pEng = NULL;
}

int main(int argc, char **argv) {
  Ctx x;
  uint64_t nSteps = 5000, i;
  const char *zEnv = getenv("WCS_MODEL_STEPS");
  uint64_t seed = tu_seed(0);
  int j;
  if (argc > 1)
    nSteps = strtoull(argv[1], NULL, 10);
  else if (zEnv)
    nSteps = strtoull(zEnv, NULL, 10);
  memset(&x, 0, sizeof(x));
  x.zDir = tu_tmpdir("engine_model");
  x.bThreads = (int)tu_rand_range(2);
  if (getenv("WCS_MODEL_THREADS")) {
    x.bThreads = atoi(getenv("WCS_MODEL_THREADS")) != 0;
  }
  x.nL0Trigger = 2 + (int)tu_rand_range(3);
  x.nL1Bytes = (uint64_t)1024 << tu_rand_range(5);
  x.nFileBytes = (uint64_t)512 << tu_rand_range(4);
  fprintf(stderr,
          "engine_model: seed %llu, %llu steps, background threads %s, "
          "store %s\n",
          (unsigned long long)seed, (unsigned long long)nSteps,
          x.bThreads ? "on" : "off", x.zDir);
  open_all(&x);
  for (i = 0; i < nSteps; i++) {
    int op = (int)tu_rand_range(100);
    x.nStep = i;
    if (tu_rand_range(150) == 0) {
      x.bSnapOn = !x.bSnapOn;
      if (!x.bSnapOn) snap_free_all(&x);
    }
    if (tu_rand_range(4) == 0) gClock += (int64_t)tu_rand_range(4);
    /* any compaction of this step may remove what is expired now */
    model_doom(&x.committed);
    x.bGcStep = 0;
    if (op < 70) {
      /* a transaction of 1..5 mutations, maybe with a savepoint */
      int n = 1 + (int)tu_rand_range(5), k, bSave = tu_rand_range(3) == 0;
      int iSave = -1;
      if (x.bThreads) {
        /* A read first: the transaction's snapshot is then live while it
        ** writes and reads, so from here on no compaction drops a cell
        ** for its position (one that started before reruns without).
        ** What one dropped before leaves the model now, so that its own
        ** deletes of newer versions do not show it in the model. */
        check_read(&x, 1);
        resolve_doomed(&x, 0);
      }
      for (k = 0; k < n; k++) {
        if (bSave && k == n / 2) {
          iSave = (int)tu_rand_range(3);
          if (wcs_txn_savepoint(x.pTxn, iSave)) fail(&x, "savepoint");
          model_copy(&x.save[0], &x.pending);
        }
        random_mutation(&x);
        if (tu_rand_range(4) == 0) check_read(&x, 1);
        if (tu_rand_range(3) == 0) snap_activity(&x, 1);
      }
      if (iSave >= 0 && tu_rand_range(2)) {
        if (wcs_txn_rollback_to(x.pTxn, iSave)) fail(&x, "rollback_to");
        model_copy(&x.pending, &x.save[0]);
        check_read(&x, 1);
      }
      if (tu_rand_range(10) == 0) {
        if (wcs_txn_rollback(x.pTxn)) fail(&x, "rollback");
        model_copy(&x.pending, &x.committed);
      } else {
        if (wcs_txn_commit(x.pTxn)) fail(&x, "commit");
        model_copy(&x.committed, &x.pending);
      }
    } else if (op < 78) {
      if (wcs_db_flush(wcs_engine_db(x.pEng))) fail(&x, "flush");
    } else if (op < 82) {
      if (wcs_db_compact_range(wcs_engine_db(x.pEng), NULL, 0, NULL, 0)) {
        fail(&x, "compact");
      }
    } else if (op < 85) {
      /* a GC compaction, sometimes under a snapshot (then it keeps all) */
      wcs_snapshot *pSnap = NULL;
      int bCollected = 0;
      if (tu_rand_range(2) == 0 &&
          wcs_snapshot_new(wcs_engine_db(x.pEng), &pSnap)) {
        fail(&x, "snapshot");
      }
      x.bGcStep = 1;
      if (gcf_compact_table(x.pEng, x.pTab->pDef->iTid, &bCollected) ||
          !bCollected) {
        fail(&x, "gc compaction");
      }
      if (pSnap) wcs_snapshot_free(wcs_engine_db(x.pEng), pSnap);
      resolve_doomed(&x, pSnap == NULL && x.nSnap == 0);
    } else if (op < 88) {
      if (wcs_engine_gc(x.pEng, "m", (int)tu_rand_range(2))) fail(&x, "gc");
      model_gc(&x.committed);
      model_copy(&x.pending, &x.committed);
    } else if (op < 90) {
      snap_free_all(&x);
      close_all(&x);
      open_all(&x);
    } else {
      gClock += (int64_t)tu_rand_range(10);
    }
    /* ... and what is expired at its end (a commit or a clock move
    ** expired more; a background compaction may already have run) */
    model_doom(&x.committed);
    resolve_doomed(&x, 0);
    for (j = 0; j < 2; j++)
      check_read(&x, 0);
    snap_activity(&x, 0);
  }
  snap_free_all(&x);
  close_all(&x);
  fprintf(stderr,
          "engine_model: ok, %llu steps, %llu reads, %d cells in "
          "the model, %llu expired cells collected by compactions (%llu "
          "for their position outside GC compactions), %llu kept and "
          "visible again; %llu snapshots taken, %llu reads at them (%llu "
          "with two cursors open)\n",
          (unsigned long long)nSteps, (unsigned long long)x.nReads,
          x.committed.n, (unsigned long long)x.nCollected,
          (unsigned long long)x.nByPos, (unsigned long long)x.nRevived,
          (unsigned long long)x.nSnapTaken, (unsigned long long)x.nSnapReads,
          (unsigned long long)x.nPairReads);
  tu_rmrf(x.zDir);
  free(x.committed.a);
  free(x.pending.a);
  free(gaHidden);
  free(gaDoomed);
  for (j = 0; j < 4; j++)
    free(x.save[j].a);
  for (j = 0; j < NSNAP; j++)
    free(x.aSnap[j].m.a);
  return 0;
}
