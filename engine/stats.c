/*
** stats.c — what the planner and the operator ask about tables: row and
** distinct-prefix estimates, the key-distribution (read/write hotspot)
** counters, and physical garbage collection.
**
** Table size: wcs_db_approximate over each family's key range, summed.
**
** Row estimates: storage metadata (wcs_db_approximate) gives the keys in a
** family's key range; a small raw scan measures keys per row of that
** family (cached for ENG_KPR_TTL); rows = max over families of keys / keys
** per row. Small tables (few keys in few bytes by metadata, which may not
** see the memtable) are counted exactly by a bounded scan.
**
** Distinct prefixes: a skip scan over the table — land on a row, take the
** prefix of its first n key fields, seek past every row with that prefix —
** for at most ENG_PREFIX_PROBES prefixes. If it finishes, the count is
** exact; otherwise distinct ≈ probes x (rows in the table / rows up to the
** last prefix seen).
**
** Heat counters: per table, a ring of ENG_HEAT_SLOTS time slots of
** ENG_HEAT_SLOT_MICROS each; a slot has ENG_HEAT_BUCKETS key-space buckets
** bounded by row keys chosen when the slot starts, as quantiles of a
** reservoir sample of the keys seen in the slot before (one key per
** count handed in: readers and writers hand in batches), or, when nothing
** was seen (a fresh process, an idle minute), quantiles of the table's own
** keys by bytes (heat_seed(), kept for ENG_HEAT_SEED_TTL). A count can
** report the bucket it went to as a key range (EngHeatSpan), so a writer
** batches only rows of one bucket (txn.c, heat_row). Saved form
** (catalog key 00000000 'H' tid): 01 | varint nSlot | per slot: varint
** start | varint nBound | bounds as (varint n, bytes) | nBucket x (varint
** reads, varint writes).
*/
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

#define ENG_KPR_TTL          30000000 /* micros a keys-per-row sample lives */
#define ENG_KPR_SAMPLE       4096     /* keys read to measure keys per row */
#define ENG_KPR_BYTES        4194304  /* value bytes the sample reads at most */
#define ENG_EXACT_ROWS       4096     /* count exactly below this many keys */
#define ENG_EXACT_BYTES      1048576  /* ... in fewer file bytes than this */
#define ENG_PREFIX_PROBES    256      /* prefixes walked by the estimate */
/* ... or fewer, where a probe would read more than this / the probes */
#define ENG_PREFIX_READ 16777216
#define ENG_HEAT_SLOTS       60
#define ENG_HEAT_SLOT_MICROS 60000000 /* one minute */
#define ENG_HEAT_BUCKETS     32
#define ENG_HEAT_RESERVOIR   256
#define ENG_HEAT_SEED_TTL                                                      \
  600000000                      /* micros bounds taken from the table's       \
                                 ** keys are kept before a recompute */
#define ENG_HEAT_SEED_SCAN 65536 /* keys scanned for a small table */
#define ENG_HEAT_SEED_BYTES                                                    \
  1048576                      /* files holding less than this much of         \
                               ** a table: scan it (metadata counts            \
                               ** whole blocks, too coarse) */
#define ENG_HEAT_SEED_STEPS 64 /* bisection steps per boundary */

typedef struct HeatSlot {
  int64_t iStart; /* slot start, micros */
  int nBound;     /* <= ENG_HEAT_BUCKETS-1 */
  uint8_t aBound[ENG_HEAT_BUCKETS - 1][ENG_HEAT_KEY_MAX];
  uint8_t anBound[ENG_HEAT_BUCKETS - 1];
  uint64_t aRead[ENG_HEAT_BUCKETS];
  uint64_t aWrite[ENG_HEAT_BUCKETS];
} HeatSlot;

struct EngStats {
  EngStats *pNext; /* engine list; must be first */
  uint32_t iTid;
  int nDef; /* definitions that point here (pEng->mu): at 0, the table is
            ** gone and the entry goes (eng_stats_release) */
  pthread_mutex_t mu;
  /* keys per row cache, per family id */
  int nKpr;
  uint16_t *aKprFid;
  double *aKpr;
  int64_t *aKprTime;
  /* heat */
  int nSlot;       /* slots used, <= ENG_HEAT_SLOTS */
  int iCur;        /* ring index of the newest slot */
  HeatSlot *aSlot; /* [ENG_HEAT_SLOTS], lazily */
  int nRes;        /* reservoir keys held */
  uint64_t nSeen;  /* keys offered to the reservoir */
  uint8_t aRes[ENG_HEAT_RESERVOIR][ENG_HEAT_KEY_MAX];
  uint8_t anRes[ENG_HEAT_RESERVOIR];
  uint64_t iRand;
  /* bounds from the table's own keys, for a slot that starts with an
  ** empty reservoir (a fresh process, an idle minute): see heat_seed() */
  int nSeed; /* <= ENG_HEAT_BUCKETS-1, increasing */
  uint8_t aSeed[ENG_HEAT_BUCKETS - 1][ENG_HEAT_KEY_MAX];
  uint8_t anSeed[ENG_HEAT_BUCKETS - 1];
  int64_t iSeedTime; /* engine clock when made; 0 never */
  int bSeeding;      /* a thread is making them */
};

int eng_stats_new(wcs_engine *pEng, uint32_t iTid, EngStats **pp) {
  EngStats *s;
  *pp = NULL;
  pthread_mutex_lock(&pEng->mu);
  for (s = pEng->pStatsList; s; s = s->pNext) {
    if (s->iTid == iTid) {
      s->nDef++;
      pthread_mutex_unlock(&pEng->mu);
      *pp = s;
      return WCS_OK;
    }
  }
  s = calloc(1, sizeof(*s));
  if (s == NULL) {
    pthread_mutex_unlock(&pEng->mu);
    return eng_err(WCS_NOMEM, "out of memory");
  }
  s->iTid = iTid;
  s->nDef = 1;
  s->iRand = 0x853C49E6748FEA9Bull ^ iTid;
  pthread_mutex_init(&s->mu, NULL);
  s->pNext = pEng->pStatsList;
  pEng->pStatsList = s;
  pthread_mutex_unlock(&pEng->mu);
  *pp = s;
  return WCS_OK;
}

void eng_stats_hold(wcs_engine *pEng, EngStats *s) {
  if (s == NULL) return;
  pthread_mutex_lock(&pEng->mu);
  s->nDef++;
  pthread_mutex_unlock(&pEng->mu);
}

void eng_stats_release(wcs_engine *pEng, EngStats *s) {
  EngStats **pp;
  int bGone = 0;
  if (s == NULL) return;
  pthread_mutex_lock(&pEng->mu);
  if (--s->nDef == 0) {
    /* no definition of the table is left (it was dropped, and the last
    ** reader is done): a table created later has another id */
    for (pp = &pEng->pStatsList; *pp; pp = &(*pp)->pNext) {
      if (*pp == s) {
        *pp = s->pNext;
        bGone = 1;
        break;
      }
    }
  }
  pthread_mutex_unlock(&pEng->mu);
  if (bGone) eng_stats_free(s);
}

void eng_stats_free(EngStats *s) {
  if (s == NULL) return;
  pthread_mutex_destroy(&s->mu);
  free(s->aKprFid);
  free(s->aKpr);
  free(s->aKprTime);
  free(s->aSlot);
  free(s);
}

static int keycmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
  size_t n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, n) : 0;
  if (c) return c;
  return na < nb ? -1 : (na > nb);
}

/* ------------------------------------------------------------------ */
/* heat counters                                                       */

static int res_cmp(const void *a, const void *b) {
  const uint8_t *x = a, *y = b;
  return keycmp(x + 1, x[0], y + 1, y[0]);
}

/* Start a new slot at iStart with bounds from the reservoir. */
static void heat_roll(EngStats *s, int64_t iStart) {
  HeatSlot *h;
  if (s->aSlot == NULL) {
    s->aSlot = calloc(ENG_HEAT_SLOTS, sizeof(HeatSlot));
    if (s->aSlot == NULL) return;
    s->iCur = ENG_HEAT_SLOTS - 1;
  }
  s->iCur = (s->iCur + 1) % ENG_HEAT_SLOTS;
  if (s->nSlot < ENG_HEAT_SLOTS) s->nSlot++;
  h = &s->aSlot[s->iCur];
  memset(h, 0, sizeof(*h));
  h->iStart = iStart;
  if (s->nRes < 2 && s->nSeed > 0) {
    /* nothing seen in the slot before: the table's own key quantiles */
    memcpy(h->aBound, s->aSeed, sizeof(h->aBound));
    memcpy(h->anBound, s->anSeed, sizeof(h->anBound));
    h->nBound = s->nSeed;
  } else if (s->nRes >= 2) {
    /* sort a copy of the reservoir (length-prefixed) and take quantiles */
    uint8_t(*a)[ENG_HEAT_KEY_MAX + 1] =
        malloc((size_t)s->nRes * (ENG_HEAT_KEY_MAX + 1));
    if (a) {
      int i, nB = ENG_HEAT_BUCKETS - 1;
      for (i = 0; i < s->nRes; i++) {
        a[i][0] = s->anRes[i];
        memcpy(&a[i][1], s->aRes[i], s->anRes[i]);
      }
      qsort(a, (size_t)s->nRes, ENG_HEAT_KEY_MAX + 1, res_cmp);
      if (nB > s->nRes - 1) nB = s->nRes - 1;
      for (i = 0; i < nB; i++) {
        int j = (int)((int64_t)(i + 1) * s->nRes / (nB + 1));
        if (h->nBound > 0 && keycmp(&a[j][1], a[j][0], h->aBound[h->nBound - 1],
                                    h->anBound[h->nBound - 1]) <= 0) {
          continue; /* keep bounds strictly increasing */
        }
        memcpy(h->aBound[h->nBound], &a[j][1], a[j][0]);
        h->anBound[h->nBound] = a[j][0];
        h->nBound++;
      }
      free(a);
    }
  }
  s->nRes = 0;
  s->nSeen = 0;
}

/*
** Bucket bounds from a table's existing keys, for a slot that starts with
** nothing seen before it (a fresh process, or a minute without reads or
** writes). How: in the family holding the most bytes (by file metadata),
** each bound i/32 of the way through its bytes is found by bisection over
** the 8 bytes that follow the common prefix of the family's first and last
** keys, with wcs_db_approximate() as the measure (cheap: file indexes
** only), then moved to the first real row at or after it (one seek), so
** bounds are row keys. A table whose files hold less than
** ENG_HEAT_SEED_BYTES (small, or still in the memtable; metadata counts
** whole blocks, too coarse for it) is scanned instead: up to
** ENG_HEAT_SEED_SCAN keys of its first non-empty family, bounds at even
** steps through its rows. Errors only mean no bounds.
*/
typedef struct HeatSeed {
  int n; /* bounds found, increasing */
  uint8_t aKey[ENG_HEAT_BUCKETS - 1][ENG_HEAT_KEY_MAX];
  uint8_t anKey[ENG_HEAT_BUCKETS - 1];
} HeatSeed;

/* Add the row of storage key k (a family key) as the next bound, if it is
** above the last one. */
static void seed_add(HeatSeed *p, const uint8_t *k, size_t nk, wcs_buf *tmp) {
  size_t nr;
  if (p->n >= ENG_HEAT_BUCKETS - 1 || nk <= ENG_PREFIX_BYTES) return;
  nr = eng_field_len(k + ENG_PREFIX_BYTES, nk - ENG_PREFIX_BYTES);
  if (nr < 2) return;
  tmp->n = 0;
  if (eng_unescape(tmp, k + ENG_PREFIX_BYTES, nr - 2) != WCS_OK) return;
  if (tmp->n > ENG_HEAT_KEY_MAX) tmp->n = ENG_HEAT_KEY_MAX;
  if (p->n > 0 &&
      keycmp(tmp->a, tmp->n, p->aKey[p->n - 1], p->anKey[p->n - 1]) <= 0) {
    return;
  }
  memcpy(p->aKey[p->n], tmp->a, tmp->n);
  p->anKey[p->n] = (uint8_t)tmp->n;
  p->n++;
}

/* The escaped rows of a family's first and last keys, by a view. */
static int seed_ends(wcs_db *db, const wcs_buf *lo, const wcs_buf *hi,
                     wcs_buf *pFirst, wcs_buf *pLast) {
  EngView *v = NULL;
  int rc, k;
  for (k = 0; k < 2; k++) {
    wcs_buf *pOut = k ? pLast : pFirst;
    size_t nk;
    const uint8_t *key;
    rc = view_new(&v, db, NULL, NULL, lo->a, lo->n, hi->a, hi->n, NULL, 0, k);
    if (rc == WCS_OK) rc = view_seek(v, NULL, 0);
    if (rc == WCS_OK && !view_valid(v)) rc = WCS_NOTFOUND;
    if (rc == WCS_OK) {
      key = view_key(v, &nk);
      pOut->n = 0;
      rc = wcs_buf_append(pOut, key, nk);
    }
    view_free(v);
    v = NULL;
    if (rc) return rc;
  }
  return WCS_OK;
}

static uint64_t seed_num(const uint8_t *p, size_t n, size_t iFrom) {
  uint64_t x = 0;
  size_t i;
  for (i = 0; i < 8; i++)
    x = x << 8 | (iFrom + i < n ? p[iFrom + i] : 0);
  return x;
}

/* key = first[0..nCp) | x as 8 bytes big-endian */
static int seed_key(wcs_buf *key, const wcs_buf *first, size_t nCp,
                    uint64_t x) {
  uint8_t aNum[8];
  wcs_put64be(aNum, x);
  key->n = 0;
  if (wcs_buf_append(key, first->a, nCp)) return WCS_NOMEM;
  return wcs_buf_append(key, aNum, 8);
}

static void heat_seed(wcs_engine *pEng, const EngDef *d, HeatSeed *pOut) {
  wcs_db *db = pEng->db;
  wcs_buf lo = {0}, hi = {0}, first = {0}, last = {0}, key = {0}, tmp = {0};
  EngView *v = NULL;
  uint64_t nBest = 0;
  int i, iBest = -1, rc = WCS_OK;
  memset(pOut, 0, sizeof(*pOut));
  for (i = 0; rc == WCS_OK && i < d->nFam; i++) {
    uint64_t nb = 0;
    const EngFamily *f = &d->aFam[i];
    lo.n = hi.n = 0;
    rc = eng_put_prefix(&lo, d->iTid, f->iFid);
    if (rc == WCS_OK) {
      rc = eng_put_family_end(&hi, d->iTid, f->iFid);
    }
    if (rc == WCS_OK)
      rc = wcs_db_approximate(db, lo.a, lo.n, hi.a, hi.n, &nb, NULL);
    if (rc == WCS_OK && (iBest < 0 || nb > nBest)) {
      iBest = i;
      nBest = nb;
    }
  }
  if (rc == WCS_OK && iBest >= 0) {
    const EngFamily *f = &d->aFam[iBest];
    lo.n = hi.n = 0;
    rc = eng_put_prefix(&lo, d->iTid, f->iFid);
    if (rc == WCS_OK) {
      rc = eng_put_family_end(&hi, d->iTid, f->iFid);
    }
  }
  if (rc == WCS_OK && iBest >= 0 && nBest >= ENG_HEAT_SEED_BYTES) {
    /* bisection by bytes over the 8 bytes after the common prefix */
    size_t nCp = 0;
    uint64_t xLo = 0, xHi = 0; /* (read only when rc is WCS_OK) */
    rc = seed_ends(db, &lo, &hi, &first, &last);
    if (rc == WCS_OK) {
      while (nCp < first.n && nCp < last.n && first.a[nCp] == last.a[nCp]) {
        nCp++;
      }
      xLo = seed_num(first.a, first.n, nCp);
      xHi = seed_num(last.a, last.n, nCp);
      rc = view_new(&v, db, NULL, NULL, lo.a, lo.n, hi.a, hi.n, NULL, 0, 0);
    }
    /* f(x) = bytes from the family's start to cp|x; for each target t,
    ** keep f(a) < t <= f(b) (f(b) assumed at the end) and halve [a, b]
    ** until it holds under 1/1024 of the bytes */
    {
      uint64_t fLo = 0;
      for (i = 1; rc == WCS_OK && i < ENG_HEAT_BUCKETS && xLo < xHi; i++) {
        uint64_t t = nBest / ENG_HEAT_BUCKETS * (uint64_t)i;
        uint64_t a = xLo, b = xHi, fa = fLo, fb = nBest;
        int step;
        for (step = 0; rc == WCS_OK && step < ENG_HEAT_SEED_STEPS &&
                       b - a > 1 && fb - fa > nBest / 1024;
             step++) {
          uint64_t mid = a + (b - a) / 2, nb = 0;
          rc = seed_key(&key, &first, nCp, mid);
          if (rc == WCS_OK) {
            rc = wcs_db_approximate(db, lo.a, lo.n, key.a, key.n, &nb, NULL);
          }
          if (nb < t) {
            a = mid;
            fa = nb;
          } else {
            b = mid;
            fb = nb;
          }
        }
        /* the first real row at or after cp|b is the bound */
        if (rc == WCS_OK) rc = seed_key(&key, &first, nCp, b);
        if (rc == WCS_OK) rc = view_seek(v, key.a, key.n);
        if (rc == WCS_OK && view_valid(v)) {
          size_t nk;
          const uint8_t *k = view_key(v, &nk);
          seed_add(pOut, k, nk, &tmp);
        }
        xLo = a; /* the next bound is above this one */
        fLo = fa;
      }
    }
  } else if (rc == WCS_OK && d->nFam > 0) {
    /* nothing in files: scan the rows, up to ENG_HEAT_SEED_SCAN keys */
    int j, nKeys = 0, nRows = 0;
    wcs_buf rows = {0}; /* escaped rows, each as (varint n, bytes) */
    for (j = 0; rc == WCS_OK && j < d->nFam && nRows == 0; j++) {
      const EngFamily *f = &d->aFam[j];
      lo.n = hi.n = 0;
      rc = eng_put_prefix(&lo, d->iTid, f->iFid);
      if (rc == WCS_OK) {
        rc = eng_put_family_end(&hi, d->iTid, f->iFid);
      }
      if (rc == WCS_OK) {
        rc = view_new(&v, db, NULL, NULL, lo.a, lo.n, hi.a, hi.n, NULL, 0, 0);
      }
      if (rc == WCS_OK) rc = view_seek(v, NULL, 0);
      last.n = 0;
      while (rc == WCS_OK && view_valid(v) && nKeys < ENG_HEAT_SEED_SCAN) {
        size_t nk, nr;
        const uint8_t *k = view_key(v, &nk);
        nr = nk > ENG_PREFIX_BYTES
                 ? eng_field_len(k + ENG_PREFIX_BYTES, nk - ENG_PREFIX_BYTES)
                 : 0;
        if (nr && (last.n != nr || memcmp(last.a, k + ENG_PREFIX_BYTES, nr))) {
          last.n = 0;
          rc = wcs_buf_append(&last, k + ENG_PREFIX_BYTES, nr);
          if (rc == WCS_OK) rc = wcs_buf_append_varint(&rows, nk);
          if (rc == WCS_OK) rc = wcs_buf_append(&rows, k, nk);
          nRows++;
        }
        nKeys++;
        if (rc == WCS_OK) rc = view_next(v);
      }
      view_free(v);
      v = NULL;
    }
    if (rc == WCS_OK && nRows >= 2) {
      /* bounds at rows (i * nRows / 32), i = 1..31 */
      const uint8_t *p = rows.a, *pEnd = rows.a + rows.n;
      int iRow = 0, iNext = 1;
      while (p < pEnd && iNext < ENG_HEAT_BUCKETS) {
        uint64_t nk;
        int nv = wcs_get_varint(p, pEnd, &nk);
        if (nv == 0 || nk > (uint64_t)(pEnd - p - nv)) break;
        p += nv;
        while (iNext < ENG_HEAT_BUCKETS &&
               iRow >= (int)((int64_t)iNext * nRows / ENG_HEAT_BUCKETS)) {
          seed_add(pOut, p, (size_t)nk, &tmp);
          iNext++;
        }
        p += nk;
        iRow++;
      }
    }
    wcs_buf_free(&rows);
  }
  view_free(v);
  wcs_buf_free(&lo);
  wcs_buf_free(&hi);
  wcs_buf_free(&first);
  wcs_buf_free(&last);
  wcs_buf_free(&key);
  wcs_buf_free(&tmp);
  (void)rc; /* no bounds is the only consequence of an error */
}

/* Bucket b of slot h as a span of table pDef. */
static void heat_span(const HeatSlot *h, int b, const EngDef *pDef,
                      EngHeatSpan *p) {
  p->pDef = pDef;
  p->bLo = b > 0;
  p->bHi = b < h->nBound;
  p->nLo = p->bLo ? h->anBound[b - 1] : 0;
  p->nHi = p->bHi ? h->anBound[b] : 0;
  if (p->nLo) memcpy(p->aLo, h->aBound[b - 1], p->nLo);
  if (p->nHi) memcpy(p->aHi, h->aBound[b], p->nHi);
}

int eng_heat_span_has(const EngHeatSpan *p, const EngDef *pDef,
                      const void *pRow, size_t nRow) {
  size_t nKey = nRow < ENG_HEAT_KEY_MAX ? nRow : ENG_HEAT_KEY_MAX;
  if (p->pDef == NULL || p->pDef != pDef) return 0;
  /* the bucket search below: bucket b holds keys with bound[b-1] <= key
  ** < bound[b] */
  if (p->bLo && keycmp(p->aLo, p->nLo, pRow, nKey) > 0) return 0;
  if (p->bHi && keycmp(p->aHi, p->nHi, pRow, nKey) <= 0) return 0;
  return 1;
}

void eng_stats_count(wcs_engine *pEng, const EngDef *pDef, int bWrite,
                     const void *pRow, size_t nRow, uint64_t n) {
  eng_stats_count_span(pEng, pDef, bWrite, pRow, nRow, n, NULL);
}

void eng_stats_count_span(wcs_engine *pEng, const EngDef *pDef, int bWrite,
                          const void *pRow, size_t nRow, uint64_t n,
                          EngHeatSpan *pSpan) {
  EngStats *s = pDef->pStats;
  int64_t iNow, iStart;
  HeatSlot *h;
  int lo, hi;
  size_t nKey = nRow < ENG_HEAT_KEY_MAX ? nRow : ENG_HEAT_KEY_MAX;
  if (pSpan) pSpan->pDef = NULL;
  if (s == NULL) return;
  iNow = eng_now(pEng);
  iStart = iNow - iNow % ENG_HEAT_SLOT_MICROS;
  pthread_mutex_lock(&s->mu);
  if ((s->aSlot == NULL || s->aSlot[s->iCur].iStart != iStart) && s->nRes < 2 &&
      !s->bSeeding &&
      (s->iSeedTime == 0 || iNow - s->iSeedTime >= ENG_HEAT_SEED_TTL)) {
    /* the new slot has no keys to take bounds from: take them from the
    ** table (outside the lock: it reads the store) */
    HeatSeed seed;
    s->bSeeding = 1;
    pthread_mutex_unlock(&s->mu);
    heat_seed(pEng, pDef, &seed);
    pthread_mutex_lock(&s->mu);
    memcpy(s->aSeed, seed.aKey, sizeof(s->aSeed));
    memcpy(s->anSeed, seed.anKey, sizeof(s->anSeed));
    s->nSeed = seed.n;
    s->iSeedTime = iNow ? iNow : 1;
    s->bSeeding = 0;
  }
  if (s->aSlot == NULL || s->aSlot[s->iCur].iStart != iStart) {
    heat_roll(s, iStart);
    if (s->aSlot == NULL) {
      pthread_mutex_unlock(&s->mu);
      return;
    }
  }
  h = &s->aSlot[s->iCur];
  lo = 0;
  hi = h->nBound;
  while (lo < hi) { /* first bound > key: the bucket index */
    int mid = (lo + hi) / 2;
    if (keycmp(h->aBound[mid], h->anBound[mid], pRow, nKey) <= 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (bWrite)
    h->aWrite[lo] += n;
  else
    h->aRead[lo] += n;
  if (pSpan) heat_span(h, lo, pDef, pSpan);
  /* reservoir sample of keys seen, for the next slot's bounds */
  s->nSeen++;
  {
    uint64_t j;
    s->iRand ^= s->iRand << 13;
    s->iRand ^= s->iRand >> 7;
    s->iRand ^= s->iRand << 17;
    j = s->nRes < ENG_HEAT_RESERVOIR ? (uint64_t)s->nRes : s->iRand % s->nSeen;
    if (j < ENG_HEAT_RESERVOIR) {
      memcpy(s->aRes[j], pRow, nKey);
      s->anRes[j] = (uint8_t)nKey;
      if ((int)j == s->nRes) s->nRes++;
    }
  }
  pthread_mutex_unlock(&s->mu);
}

/* A handle whose table was altered or dropped answers nothing: its
** family ids may now hold another table's cells (include/wcs.h). */
static int stale(const wcs_table *pTab) {
  return eng_err(WCS_SCHEMA, "table %s was altered or dropped; reopen it",
                 pTab->pDef->zName);
}

int wcs_table_heatmap(wcs_table *pTab, wcs_heatmap **ppMap) {
  EngStats *s = pTab->pDef->pStats;
  wcs_heatmap *m;
  int i, rc = WCS_OK;
  *ppMap = NULL;
  if (pTab->pDef->bStale) return stale(pTab);
  m = calloc(1, sizeof(*m));
  if (m == NULL) return eng_err(WCS_NOMEM, "out of memory");
  m->nBucket = ENG_HEAT_BUCKETS;
  m->iSlotMicros = ENG_HEAT_SLOT_MICROS;
  pthread_mutex_lock(&s->mu);
  m->nSlot = s->aSlot ? s->nSlot : 0;
  m->aSlot = calloc((size_t)(m->nSlot ? m->nSlot : 1), sizeof(wcs_heat_slot));
  if (m->aSlot == NULL) rc = WCS_NOMEM;
  for (i = 0; rc == WCS_OK && i < m->nSlot; i++) {
    /* oldest first */
    int r = (s->iCur - m->nSlot + 1 + i + ENG_HEAT_SLOTS) % ENG_HEAT_SLOTS;
    HeatSlot *h = &s->aSlot[r];
    wcs_heat_slot *o = &m->aSlot[i];
    int b, nPad;
    o->iStart = h->iStart;
    o->aRead = calloc(ENG_HEAT_BUCKETS, sizeof(uint64_t));
    o->aWrite = calloc(ENG_HEAT_BUCKETS, sizeof(uint64_t));
    o->apBound = calloc(ENG_HEAT_BUCKETS, sizeof(void *));
    o->anBound = calloc(ENG_HEAT_BUCKETS, sizeof(size_t));
    if (!o->aRead || !o->aWrite || !o->apBound || !o->anBound) {
      rc = WCS_NOMEM;
      break;
    }
    /* A slot with nBound < 31 bounds (few keys to take them from) has
    ** nBound + 1 buckets, the last open-ended. The copy keeps the last
    ** bucket last: nPad copies of the first bound go before the real ones,
    ** making empty buckets 1..nPad, and bucket j > 0 becomes j + nPad
    ** (without bounds the one bucket is the last, every key in it). */
    nPad = ENG_HEAT_BUCKETS - 1 - h->nBound;
    for (b = 0; b <= h->nBound; b++) {
      int j = b > 0 || h->nBound == 0 ? b + nPad : 0;
      o->aRead[j] = h->aRead[b];
      o->aWrite[j] = h->aWrite[b];
    }
    for (b = 0; b < ENG_HEAT_BUCKETS - 1; b++) {
      int k = b < nPad ? 0 : b - nPad;
      uint8_t *z;
      size_t nz = h->nBound > 0 ? h->anBound[k] : 0;
      z = malloc(nz ? nz : 1);
      if (z == NULL) {
        rc = WCS_NOMEM;
        break;
      }
      if (nz) memcpy(z, h->aBound[k], nz);
      o->apBound[b] = z;
      o->anBound[b] = nz;
    }
  }
  pthread_mutex_unlock(&s->mu);
  if (rc) {
    wcs_heatmap_free(m);
    return eng_err(rc, "out of memory");
  }
  *ppMap = m;
  return WCS_OK;
}

void wcs_heatmap_free(wcs_heatmap *m) {
  int i, b;
  if (m == NULL) return;
  for (i = 0; m->aSlot && i < m->nSlot; i++) {
    wcs_heat_slot *o = &m->aSlot[i];
    for (b = 0; o->apBound && b < m->nBucket - 1; b++) {
      free((void *)o->apBound[b]);
    }
    free(o->apBound);
    free(o->anBound);
    free(o->aRead);
    free(o->aWrite);
  }
  free(m->aSlot);
  free(m);
}

static void heat_key(wcs_buf *k, uint32_t iTid) {
  uint8_t a[9] = {0,
                  0,
                  0,
                  0,
                  ENG_CAT_HEAT,
                  (uint8_t)(iTid >> 24),
                  (uint8_t)(iTid >> 16),
                  (uint8_t)(iTid >> 8),
                  (uint8_t)iTid};
  k->n = 0;
  wcs_buf_append(k, a, sizeof(a));
}

int wcs_engine_heat_save(wcs_engine *pEng) {
  EngStats *s;
  wcs_batch *pBatch = NULL;
  wcs_buf k = {0}, v = {0};
  int rc = wcs_batch_new(&pBatch);
  pthread_mutex_lock(&pEng->mu);
  for (s = pEng->pStatsList; rc == WCS_OK && s; s = s->pNext) {
    int i, b;
    int bLive = 0;
    for (i = 0; i < pEng->nDef; i++)
      bLive |= pEng->apDef[i]->iTid == s->iTid;
    if (!bLive || s->aSlot == NULL) continue;
    pthread_mutex_lock(&s->mu);
    v.n = 0;
    rc = wcs_buf_append(&v, "\x01", 1);
    if (rc == WCS_OK) rc = wcs_buf_append_varint(&v, (uint64_t)s->nSlot);
    for (i = 0; rc == WCS_OK && i < s->nSlot; i++) {
      int r = (s->iCur - s->nSlot + 1 + i + ENG_HEAT_SLOTS) % ENG_HEAT_SLOTS;
      HeatSlot *h = &s->aSlot[r];
      rc = wcs_buf_append_varint(&v, (uint64_t)h->iStart);
      if (rc == WCS_OK) rc = wcs_buf_append_varint(&v, (uint64_t)h->nBound);
      for (b = 0; rc == WCS_OK && b < h->nBound; b++) {
        rc = wcs_buf_append_varint(&v, h->anBound[b]);
        if (rc == WCS_OK) rc = wcs_buf_append(&v, h->aBound[b], h->anBound[b]);
      }
      for (b = 0; rc == WCS_OK && b < ENG_HEAT_BUCKETS; b++) {
        rc = wcs_buf_append_varint(&v, h->aRead[b]);
        if (rc == WCS_OK) rc = wcs_buf_append_varint(&v, h->aWrite[b]);
      }
    }
    pthread_mutex_unlock(&s->mu);
    heat_key(&k, s->iTid);
    if (rc == WCS_OK) rc = wcs_batch_put(pBatch, k.a, k.n, v.a, v.n);
  }
  pthread_mutex_unlock(&pEng->mu);
  if (rc == WCS_OK && wcs_batch_count(pBatch) > 0) {
    rc = wcs_db_write(pEng->db, pBatch);
    if (rc) eng_err_db(pEng->db, rc, "saving heat counters");
  } else if (rc) {
    eng_err(rc, "out of memory");
  }
  wcs_batch_free(pBatch);
  wcs_buf_free(&k);
  wcs_buf_free(&v);
  return rc;
}

int eng_stats_load(wcs_engine *pEng, EngStats *s) {
  wcs_buf k = {0};
  void *pVal = NULL;
  size_t nVal = 0;
  int rc;
  heat_key(&k, s->iTid);
  rc = wcs_db_get(pEng->db, NULL, k.a, k.n, &pVal, &nVal);
  wcs_buf_free(&k);
  if (rc) return eng_err_db(pEng->db, rc, "reading heat counters");
  if (pVal) {
    const uint8_t *p = pVal, *pEnd = p + nVal;
    uint64_t nSlot, i, b, x;
    int n;
    /* a malformed record only loses the picture: ignore it */
    if (nVal < 1 || p[0] != 1) goto done;
    p++;
    if ((n = wcs_get_varint(p, pEnd, &nSlot)) == 0 || nSlot > ENG_HEAT_SLOTS) {
      goto done;
    }
    p += n;
    s->aSlot = calloc(ENG_HEAT_SLOTS, sizeof(HeatSlot));
    if (s->aSlot == NULL) goto done;
    for (i = 0; i < nSlot; i++) {
      HeatSlot *h = &s->aSlot[i];
      uint64_t nB;
      if ((n = wcs_get_varint(p, pEnd, &x)) == 0) goto bad;
      p += n;
      h->iStart = (int64_t)x;
      if ((n = wcs_get_varint(p, pEnd, &nB)) == 0 ||
          nB > ENG_HEAT_BUCKETS - 1) {
        goto bad;
      }
      p += n;
      for (b = 0; b < nB; b++) {
        if ((n = wcs_get_varint(p, pEnd, &x)) == 0 || x > ENG_HEAT_KEY_MAX ||
            x > (uint64_t)(pEnd - p - n)) {
          goto bad;
        }
        p += n;
        memcpy(h->aBound[b], p, (size_t)x);
        h->anBound[b] = (uint8_t)x;
        p += x;
      }
      h->nBound = (int)nB;
      for (b = 0; b < ENG_HEAT_BUCKETS; b++) {
        if ((n = wcs_get_varint(p, pEnd, &h->aRead[b])) == 0) goto bad;
        p += n;
        if ((n = wcs_get_varint(p, pEnd, &h->aWrite[b])) == 0) goto bad;
        p += n;
      }
    }
    s->nSlot = (int)nSlot;
    s->iCur = (int)nSlot - 1;
    if (nSlot == 0) {
      free(s->aSlot);
      s->aSlot = NULL;
    }
    goto done;
  bad:
    free(s->aSlot);
    s->aSlot = NULL;
    s->nSlot = 0;
  }
done:
  wcs_free(pVal);
  return WCS_OK;
}

/* ------------------------------------------------------------------ */
/* estimates                                                           */

/* Keys per row of family f, from a raw scan of its first keys. */
static int keys_per_row(wcs_table *pTab, const EngFamily *f, double *pKpr) {
  EngStats *s = pTab->pDef->pStats;
  int64_t iNow = eng_now(pTab->pEng);
  EngView *v = NULL;
  wcs_buf lo = {0}, hi = {0}, last = {0};
  uint64_t nKeys = 0, nRows = 0, nBytes = 0;
  int i, rc;
  pthread_mutex_lock(&s->mu);
  for (i = 0; i < s->nKpr; i++) {
    if (s->aKprFid[i] == f->iFid && iNow - s->aKprTime[i] < ENG_KPR_TTL) {
      *pKpr = s->aKpr[i];
      pthread_mutex_unlock(&s->mu);
      return WCS_OK;
    }
  }
  pthread_mutex_unlock(&s->mu);
  rc = eng_put_prefix(&lo, pTab->pDef->iTid, f->iFid);
  if (rc == WCS_OK) {
    rc = eng_put_family_end(&hi, pTab->pDef->iTid, f->iFid);
  }
  if (rc == WCS_OK) {
    rc = view_new(&v, pTab->pEng->db, NULL, NULL, lo.a, lo.n, hi.a, hi.n, NULL,
                  0, 0);
  }
  if (rc == WCS_OK) rc = view_seek(v, NULL, 0);
  /* a few keys of large values are sample enough: the planner asks on
  ** every prepare, and reading a table of a few huge rows whole would make
  ** each prepare cost a scan */
  while (rc == WCS_OK && view_valid(v) && nKeys < ENG_KPR_SAMPLE &&
         nBytes < ENG_KPR_BYTES) {
    size_t nk, nr, nv = 0;
    const uint8_t *k = view_key(v, &nk);
    (void)view_value(v, &nv);
    nBytes += nk + nv;
    nr = nk > ENG_PREFIX_BYTES
             ? eng_field_len(k + ENG_PREFIX_BYTES, nk - ENG_PREFIX_BYTES)
             : 0;
    if (nr == 0 || last.n != nr || memcmp(last.a, k + ENG_PREFIX_BYTES, nr)) {
      nRows++;
      last.n = 0;
      rc = wcs_buf_append(&last, k + ENG_PREFIX_BYTES, nr);
    }
    nKeys++;
    if (rc == WCS_OK) rc = view_next(v);
  }
  view_free(v);
  wcs_buf_free(&lo);
  wcs_buf_free(&hi);
  wcs_buf_free(&last);
  if (rc) return eng_err_db(pTab->pEng->db, rc, "sampling a table");
  *pKpr = nRows ? (double)nKeys / (double)nRows : 1.0;
  pthread_mutex_lock(&s->mu);
  for (i = 0; i < s->nKpr && s->aKprFid[i] != f->iFid; i++) {
  }
  if (i == s->nKpr) {
    uint16_t *a = realloc(s->aKprFid, (size_t)(i + 1) * sizeof(uint16_t));
    double *b = a ? realloc(s->aKpr, (size_t)(i + 1) * sizeof(double)) : NULL;
    int64_t *c = NULL;
    if (a) s->aKprFid = a;
    if (b) s->aKpr = b;
    if (b) c = realloc(s->aKprTime, (size_t)(i + 1) * sizeof(int64_t));
    if (c) {
      s->aKprTime = c;
      s->nKpr++;
    }
  }
  if (i < s->nKpr) {
    s->aKprFid[i] = f->iFid;
    s->aKpr[i] = *pKpr;
    s->aKprTime[i] = iNow;
  }
  pthread_mutex_unlock(&s->mu);
  return WCS_OK;
}

/* Count rows exactly, up to nMax (then *pnRows = nMax and *pbMore). */
static int count_rows(wcs_table *pTab, const wcs_key_range *aRange, int nRange,
                      uint64_t nMax, uint64_t *pnRows) {
  wcs_read_options o;
  wcs_cursor *c = NULL;
  uint64_t n = 0;
  int rc;
  wcs_read_options_init(&o);
  o.aRange = aRange;
  o.nRange = nRange;
  o.bKeysOnly = 1;
  o.bNoHeat = 1; /* the planner's, not the table's traffic */
  o.nRowLimit = nMax;
  rc = wcs_cursor_open(&c, pTab, NULL, &o);
  while (rc == WCS_OK && !wcs_cursor_eof(c)) {
    n++;
    rc = wcs_cursor_next(c);
  }
  wcs_cursor_close(c);
  *pnRows = n;
  return rc;
}

int wcs_table_estimate_rows(wcs_table *pTab, const wcs_key_range *aRange,
                            int nRange, uint64_t *pnRows) {
  const EngDef *d = pTab->pDef;
  wcs_key_range all;
  wcs_buf lo = {0}, hi = {0}, s = {0}, e = {0};
  uint64_t nBest = 0, nKeysAll = 0, nBytesAll = 0;
  int rc = WCS_OK, i, j;
  *pnRows = 0;
  if (aRange == NULL || nRange <= 0) {
    memset(&all, 0, sizeof(all));
    aRange = &all;
    nRange = 1;
  }
  for (i = 0; rc == WCS_OK && i < d->nFam; i++) {
    const EngFamily *f = &d->aFam[i];
    uint64_t nKeys = 0;
    double kpr = 1.0;
    for (j = 0; rc == WCS_OK && j < nRange; j++) {
      int bHiOpen;
      uint64_t nb = 0, nk = 0;
      rc = eng_range_bounds(&aRange[j], &lo, &hi, &bHiOpen);
      s.n = e.n = 0;
      if (rc == WCS_OK) rc = eng_put_prefix(&s, d->iTid, f->iFid);
      if (rc == WCS_OK) rc = wcs_buf_append(&s, lo.a, lo.n);
      if (rc == WCS_OK) {
        if (bHiOpen) {
          rc = eng_put_family_end(&e, d->iTid, f->iFid);
        } else {
          rc = eng_put_prefix(&e, d->iTid, f->iFid);
          if (rc == WCS_OK) rc = wcs_buf_append(&e, hi.a, hi.n);
        }
      }
      if (rc == WCS_OK) {
        rc = wcs_db_approximate(pTab->pEng->db, s.a, s.n, e.a, e.n, &nb, &nk);
        if (rc) eng_err_db(pTab->pEng->db, rc, "estimating a range");
      }
      nKeys += nk;
      nBytesAll += nb;
    }
    nKeysAll += nKeys;
    if (rc == WCS_OK && nKeys > 0) rc = keys_per_row(pTab, f, &kpr);
    if (rc == WCS_OK && kpr > 0) {
      uint64_t n = (uint64_t)((double)nKeys / kpr + 0.5);
      if (n > nBest) nBest = n;
    }
  }
  wcs_buf_free(&lo);
  wcs_buf_free(&hi);
  wcs_buf_free(&s);
  wcs_buf_free(&e);
  if (rc) return rc;
  if (nKeysAll < ENG_EXACT_ROWS && nBytesAll < ENG_EXACT_BYTES) {
    /* metadata is thin (small table or data still in the memtable); not
    ** where the files' few keys hold many bytes (a few huge rows), which
    ** a count would read whole on every prepare */
    uint64_t n = 0;
    rc = count_rows(pTab, aRange, nRange, ENG_EXACT_ROWS, &n);
    if (rc) return rc;
    /* a count that ended before the cap is every live row: exact, where
    ** the files' key counts also hold deleted cells and old versions */
    if (n < ENG_EXACT_ROWS || n > nBest) nBest = n;
  }
  *pnRows = nBest;
  return WCS_OK;
}

int wcs_table_approximate(wcs_table *pTab, uint64_t *pnBytes,
                          uint64_t *pnKeys) {
  const EngDef *d = pTab->pDef;
  wcs_buf lo = {0}, hi = {0};
  uint64_t nBytes = 0, nKeys = 0;
  int rc = d->bStale ? stale(pTab) : WCS_OK, i;
  for (i = 0; rc == WCS_OK && i < d->nFam; i++) {
    const EngFamily *f = &d->aFam[i];
    uint64_t nb = 0, nk = 0;
    lo.n = hi.n = 0;
    rc = eng_put_prefix(&lo, d->iTid, f->iFid);
    if (rc == WCS_OK) {
      rc = eng_put_family_end(&hi, d->iTid, f->iFid);
    }
    if (rc == WCS_NOMEM) {
      eng_err(rc, "out of memory");
    } else if (rc == WCS_OK) {
      rc = wcs_db_approximate(pTab->pEng->db, lo.a, lo.n, hi.a, hi.n, &nb, &nk);
      if (rc) eng_err_db(pTab->pEng->db, rc, "sizing a table");
    }
    nBytes += nb;
    nKeys += nk;
  }
  wcs_buf_free(&lo);
  wcs_buf_free(&hi);
  if (pnBytes) *pnBytes = rc ? 0 : nBytes;
  if (pnKeys) *pnKeys = rc ? 0 : nKeys;
  return rc;
}

typedef struct PrefixWalk {
  const ks_schema *pSchema;
  int nField;
  uint64_t nDistinct;
  uint64_t nMax;
  wcs_buf seek; /* the successor we asked to seek to */
  wcs_buf scratch;
  wcs_buf last; /* last prefix seen */
  ks_value *aVal;
  int bStopped; /* hit nMax */
} PrefixWalk;

static int prefix_filter(void *pCtx, const void *pRow, size_t nRow,
                         const void **ppSeek, size_t *pnSeek) {
  PrefixWalk *w = pCtx;
  wcs_buf pre = {0};
  int r;
  if (w->nDistinct >= w->nMax) {
    w->bStopped = 1;
    return WCS_ROW_DONE;
  }
  w->nDistinct++;
  if (w->pSchema->nField == 0) {
    size_t n = nRow < (size_t)w->nField ? nRow : (size_t)w->nField;
    wcs_buf_append(&pre, pRow, n);
  } else {
    char *zErr = NULL;
    int rc =
        ks_key_decode(w->pSchema, pRow, (int)nRow, w->aVal, &w->scratch, &zErr);
    if (rc == WCS_OK) {
      rc = ks_key_prefix(w->pSchema, w->aVal, w->nField, &pre, &zErr);
    }
    free(zErr);
    if (rc != WCS_OK) {
      /* a key that does not decode counts as its own prefix */
      pre.n = 0;
      wcs_buf_append(&pre, pRow, nRow);
    }
  }
  w->last.n = 0;
  wcs_buf_append(&w->last, pre.a, pre.n);
  r = eng_prefix_successor(&w->seek, pre.a, pre.n);
  wcs_buf_free(&pre);
  if (r <= 0) return WCS_ROW_DONE;
  *ppSeek = w->seek.a;
  *pnSeek = w->seek.n;
  return WCS_ROW_SEEK;
}

int wcs_table_estimate_prefixes(wcs_table *pTab, int nField,
                                uint64_t *pnDistinct) {
  const ks_schema *pSchema = pTab->pDef->pSchema;
  PrefixWalk w;
  wcs_read_options o;
  wcs_cursor *c = NULL;
  int rc;
  *pnDistinct = 0;
  if (nField < 1 && pSchema->nField == 0) {
    return eng_err(WCS_RANGE,
                   "prefix length %d out of range: table %s has no key "
                   "schema, so it counts leading bytes, 1 or more",
                   nField, pTab->pDef->zName);
  }
  if (nField < 1 || (pSchema->nField > 0 && nField > pSchema->nField)) {
    return eng_err(WCS_RANGE,
                   "key field depth %d out of range 1..%d for table %s",
                   nField, pSchema->nField, pTab->pDef->zName);
  }
  if (pSchema->nField > 0 && nField == pSchema->nField) {
    return wcs_table_estimate_rows(pTab, NULL, 0, pnDistinct);
  }
  memset(&w, 0, sizeof(w));
  w.pSchema = pSchema;
  w.nField = nField;
  w.nMax = ENG_PREFIX_PROBES;
  {
    /* a probe lands on a row and reads the block of its first key: where
    ** keys are huge (values of megabytes), fewer probes, the walk then
    ** scaled to the table as when it stops at the limit */
    uint64_t nBytes = 0, nKeys = 0;
    if (wcs_table_approximate(pTab, &nBytes, &nKeys) == WCS_OK && nKeys > 0 &&
        nBytes / nKeys > ENG_PREFIX_READ / ENG_PREFIX_PROBES) {
      w.nMax = ENG_PREFIX_READ / (nBytes / nKeys);
      if (w.nMax < 2) w.nMax = 2;
    }
  }
  w.aVal = calloc((size_t)(pSchema->nField + 1), sizeof(ks_value));
  if (w.aVal == NULL) return eng_err(WCS_NOMEM, "out of memory");
  wcs_read_options_init(&o);
  o.bKeysOnly = 1;
  o.bNoHeat = 1;
  o.xRowFilter = prefix_filter;
  o.pFilterCtx = &w;
  rc = wcs_cursor_open(&c, pTab, NULL, &o);
  while (rc == WCS_OK && !wcs_cursor_eof(c))
    rc = wcs_cursor_next(c);
  wcs_cursor_close(c);
  if (rc == WCS_OK) {
    if (!w.bStopped) {
      *pnDistinct = w.nDistinct;
    } else {
      /* rows before the last prefix seen vs rows in the table */
      uint64_t nAll = 0, nPart = 0;
      wcs_key_range r;
      memset(&r, 0, sizeof(r));
      r.pEnd = w.last.a;
      r.nEnd = w.last.n;
      rc = wcs_table_estimate_rows(pTab, NULL, 0, &nAll);
      if (rc == WCS_OK) rc = wcs_table_estimate_rows(pTab, &r, 1, &nPart);
      if (rc == WCS_OK) {
        if (nPart == 0) nPart = 1;
        *pnDistinct = nAll > nPart ? (uint64_t)((double)(w.nDistinct - 1) *
                                                (double)nAll / (double)nPart)
                                   : w.nDistinct;
        if (*pnDistinct < w.nDistinct) *pnDistinct = w.nDistinct;
      }
    }
  }
  free(w.aVal);
  wcs_buf_free(&w.seek);
  wcs_buf_free(&w.scratch);
  wcs_buf_free(&w.last);
  return rc;
}

/* ------------------------------------------------------------------ */
/* physical GC                                                         */

static int gc_family(wcs_engine *pEng, const EngDef *d, const EngFamily *f,
                     int64_t iNow) {
  EngView *v = NULL;
  wcs_batch *pBatch = NULL;
  wcs_buf lo = {0}, hi = {0}, col = {0};
  int64_t iPos = 0;
  int rc;
  rc = eng_put_prefix(&lo, d->iTid, f->iFid);
  if (rc == WCS_OK) {
    rc = eng_put_family_end(&hi, d->iTid, f->iFid);
  }
  if (rc == WCS_OK) rc = wcs_batch_new(&pBatch);
  if (rc == WCS_OK) {
    rc = view_new(&v, pEng->db, NULL, NULL, lo.a, lo.n, hi.a, hi.n, NULL, 0, 0);
  }
  if (rc == WCS_OK) rc = view_seek(v, NULL, 0);
  while (rc == WCS_OK && view_valid(v)) {
    size_t nk;
    const uint8_t *k = view_key(v, &nk);
    EngKey key;
    size_t nCol;
    rc = eng_parse_key(k, nk, &key);
    if (rc) break;
    nCol = nk - ENG_TS_BYTES;
    if (col.n != nCol || memcmp(col.a, k, nCol) != 0) {
      col.n = 0;
      rc = wcs_buf_append(&col, k, nCol);
      iPos = 0;
    }
    if (rc == WCS_OK && eng_gc_expired(f, iPos, key.iTs, iNow)) {
      rc = wcs_batch_delete(pBatch, k, nk);
      if (rc == WCS_OK && wcs_batch_count(pBatch) >= 10000) {
        rc = wcs_db_write(pEng->db, pBatch);
        wcs_batch_clear(pBatch);
      }
    }
    iPos++;
    if (rc == WCS_OK) rc = view_next(v);
  }
  if (rc == WCS_OK && wcs_batch_count(pBatch) > 0) {
    rc = wcs_db_write(pEng->db, pBatch);
  }
  if (rc) eng_err_db(pEng->db, rc, "garbage-collecting a family");
  view_free(v);
  wcs_batch_free(pBatch);
  wcs_buf_free(&lo);
  wcs_buf_free(&hi);
  wcs_buf_free(&col);
  return rc;
}

int wcs_engine_backup(wcs_engine *pEng, const char *zDir) {
  int rc = wcs_db_checkpoint(pEng->db, zDir);
  if (rc) return eng_err_db(pEng->db, rc, "backing up the store");
  return WCS_OK;
}

int wcs_engine_gc(wcs_engine *pEng, const char *zTable, int bCompact) {
  int rc = WCS_OK, i, j, bLocked, n;
  EngDef **a;
  int64_t iNow = eng_now(pEng);
  a = eng_defs_snapshot(pEng, &n);
  if (a == NULL) return eng_err(WCS_NOMEM, "out of memory");
  if (zTable) {
    int bFound = 0;
    for (i = 0; i < n; i++)
      bFound |= strcmp(a[i]->zName, zTable) == 0;
    if (!bFound) rc = eng_err(WCS_ERROR, "no such table: %s", zTable);
  }
  for (i = 0; rc == WCS_OK && i < n; i++) {
    const EngDef *d = a[i];
    if (zTable && strcmp(d->zName, zTable) != 0) continue;
    /* writers wait while a table is collected: a cell rewritten at the
    ** same timestamp must not be deleted by a stale decision */
    bLocked = eng_commit_lock(pEng);
    for (j = 0; rc == WCS_OK && j < d->nFam; j++) {
      const EngFamily *f = &d->aFam[j];
      if (f->nMaxVersions > 0 || f->iMaxAge > 0) {
        rc = gc_family(pEng, d, f, iNow);
      }
    }
    eng_commit_unlock(pEng, bLocked);
    if (rc == WCS_OK && bCompact && zTable) {
      wcs_buf s = {0}, e = {0};
      rc = eng_put_prefix(&s, d->iTid, 0);
      if (rc == WCS_OK) rc = eng_put_prefix(&e, d->iTid + 1, 0);
      if (rc == WCS_OK) {
        rc = wcs_db_compact_range(pEng->db, s.a, 4, e.a, 4);
        if (rc) eng_err_db(pEng->db, rc, "compacting a table");
      }
      wcs_buf_free(&s);
      wcs_buf_free(&e);
    }
  }
  if (rc == WCS_OK && bCompact && zTable == NULL) {
    /* every table: the whole store at once (tables share files, so a
    ** compaction per table would rewrite them once per table) */
    rc = wcs_db_compact_range(pEng->db, NULL, 0, NULL, 0);
    if (rc) eng_err_db(pEng->db, rc, "compacting the store");
  }
  if (rc == WCS_OK && bCompact) {
    /* idle cursors kept for reuse hold the files the compaction replaced
    ** until their next use or sweep: let go of them now, so that the
    ** disk space comes back when the compaction returns */
    eng_pool_release_views(pEng);
  }
  for (i = 0; i < n; i++)
    eng_def_unref(pEng, a[i]);
  free(a);
  return rc;
}
