/*
** plan.c — from SQL constraints on key fields (and on _key) to a plan of
** key ranges, and the stepping function the scan layer executes it with.
**
** How it works.
**
** 1. Per-field value sets. Every field encoding preserves order, so the
**    planner works on "field bytes" (the encoding of one field, before the
**    struct encoding joins the fields): each constraint becomes a sorted
**    list of disjoint intervals of field bytes, and the constraints on one
**    field are intersected. Integers are handled in their order space
**    (ksIntToU: REVERSED DECIMAL flips direction there), clamped to what
**    the encoding can hold (BIG ENDIAN and DECIMAL hold no negatives,
**    DECIMAL(n) nothing wider than n digits), then encoded. Under DELIMITED
**    BY, string bounds are moved to the nearest string a key can hold (no
**    byte at or below the delimiter), so the byte ranges never admit a
**    wrong key. A constraint whose value has another SQL class than the
**    field (text against an INT64 field) is not used at all: SQLite
**    re-checks it.
**
** 2. Key ranges. The leading fields whose sets are finite point lists
**    (= and IN) are expanded as a cartesian product (capped by
**    ks_plan_opts.nMaxPoints; past the cap the field gets one covering
**    interval and SQLite re-checks); the next field contributes its
**    intervals. For a tuple t of leading field values the keys starting
**    with t form one interval [LOW(t), HIGH(t)) of byte strings (ksJoin),
**    which is how each (combination, interval) becomes a key range. With
**    SALT every range is repeated in every bucket, points go to their own
**    bucket. Constraints on _key are intersected last, on the physical key.
**
** 3. Skip scans. When a field after the first non-point field is
**    constrained and the caller allows it, the plan keeps the per-field
**    sets ("slots", Phoenix's SkipScanFilter) and ks_plan_check walks them:
**    for a key it compares each field with its slot and, when the field is
**    below the next interval, returns a seek to the smallest key with those
**    leading fields and that interval's start; when it is above the last
**    interval, a seek to the next distinct prefix HIGH(earlier fields).
**    So a scan costs about one seek per distinct prefix instead of reading
**    every key.
**
** Every seek target lies strictly beyond the key just checked (forward:
** greater, reverse: smaller), so a scan always terminates. The plan's
** byte strings live in an arena freed with the plan.
*/
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyschema/ksint.h"

/* ====================================================================
** Intervals of byte strings
** ==================================================================== */

typedef struct Bnd {
  const uint8_t *p; /* bound bytes (arena or borrowed), unused if bInf */
  int n;
  uint8_t bIncl; /* the bound itself is inside */
  uint8_t bInf;  /* unbounded on this side */
} Bnd;

typedef struct Ivl {
  Bnd lo, hi;
} Ivl;

/* A sorted list of disjoint intervals; bFull: everything. */
typedef struct IvlSet {
  Ivl *a;
  int n;
  int nAlloc;
  int bFull;
} IvlSet;

static int cmpBytes(const uint8_t *a, int na, const uint8_t *b, int nb) {
  int n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, (size_t)n) : 0;
  if (c) return c;
  return na - nb;
}

/* Order of two lower bounds: the larger is the tighter one. */
static int cmpLo(const Bnd *a, const Bnd *b) {
  int c;
  if (a->bInf || b->bInf) return (int)b->bInf - (int)a->bInf;
  c = cmpBytes(a->p, a->n, b->p, b->n);
  if (c) return c;
  return (int)b->bIncl - (int)a->bIncl; /* exclusive is larger */
}

/* Order of two upper bounds: the smaller is the tighter one. */
static int cmpHi(const Bnd *a, const Bnd *b) {
  int c;
  if (a->bInf || b->bInf) return (int)a->bInf - (int)b->bInf;
  c = cmpBytes(a->p, a->n, b->p, b->n);
  if (c) return c;
  return (int)a->bIncl - (int)b->bIncl; /* inclusive is larger */
}

static int ivlEmpty(const Ivl *v) {
  int c;
  if (!v->hi.bInf && v->hi.n == 0 && !v->hi.bIncl) return 1; /* < "" */
  if (v->lo.bInf || v->hi.bInf) return 0;
  c = cmpBytes(v->lo.p, v->lo.n, v->hi.p, v->hi.n);
  return c > 0 || (c == 0 && !(v->lo.bIncl && v->hi.bIncl));
}

static int ivlIsPoint(const Ivl *v) {
  return !v->lo.bInf && !v->hi.bInf && v->lo.bIncl && v->hi.bIncl &&
         cmpBytes(v->lo.p, v->lo.n, v->hi.p, v->hi.n) == 0;
}

/* Position of bytes x relative to a lower bound: < 0 below it. */
static int vsLo(const uint8_t *x, int n, const Bnd *b) {
  int c;
  if (b->bInf) return 1;
  c = cmpBytes(x, n, b->p, b->n);
  if (c == 0) return b->bIncl ? 0 : -1;
  return c;
}

/* Position of bytes x relative to an upper bound: > 0 above it. */
static int vsHi(const uint8_t *x, int n, const Bnd *b) {
  int c;
  if (b->bInf) return -1;
  c = cmpBytes(x, n, b->p, b->n);
  if (c == 0) return b->bIncl ? 0 : 1;
  return c;
}

/* ====================================================================
** The plan object and its arena
** ==================================================================== */

typedef struct ArenaBlk {
  struct ArenaBlk *pNext;
  size_t nUsed, nAlloc;
  uint8_t a[];
} ArenaBlk;

struct ks_plan_skip {
  int nSlot;     /* fields 0..nSlot-1 are checked against their slot */
  IvlSet *aSlot; /* nSlot sets of field bytes (arena) */
};

/* Letters of a LIKE prefix spelled out in every case: 2^5 ranges at most,
** which times 256 salt buckets or an IN list of 300 values stays under
** the plan's cap on ranges (past it, one covering range). */
#define LIKE_VARIANT_LETTERS 5
/* The arena's first block comes with the plan (one allocation for both):
** enough for the byte strings of most plans, which are made per statement
** run (xFilter). Later blocks are KS_ARENA_BLOCK bytes or more. */
#define KS_ARENA_FIRST 1024
#define KS_ARENA_BLOCK 16000

typedef struct PlanInt {
  ks_plan base;     /* must be first: a ks_plan* is a PlanInt* */
  ArenaBlk *pArena; /* every byte string of the plan */
  int nRangeAlloc;
  int *aStream; /* stream i has ranges aStream[i]..aStream[i+1]-1 (aOne
                ** when there is one stream) */
  int aOne[2];
  int nStream;
  struct ks_plan_skip skip;
} PlanInt;

/* The arena's first block, in the same allocation right after the plan. */
static ArenaBlk *arenaFirst(PlanInt *p) {
  return (ArenaBlk *)(p + 1);
}

static void *arenaAlloc(PlanInt *p, size_t n) {
  ArenaBlk *b = p->pArena;
  n = (n + 7) & ~(size_t)7;
  if (b == NULL || b->nUsed + n > b->nAlloc) {
    size_t nAlloc = n > KS_ARENA_BLOCK ? n : KS_ARENA_BLOCK;
    b = malloc(sizeof(ArenaBlk) + nAlloc);
    if (b == NULL) return NULL;
    b->nUsed = 0;
    b->nAlloc = nAlloc;
    b->pNext = p->pArena;
    p->pArena = b;
  }
  b->nUsed += n;
  return b->a + b->nUsed - n;
}

static const uint8_t *arenaDup(PlanInt *p, const void *a, int n) {
  uint8_t *z = arenaAlloc(p, (size_t)n + 1);
  if (z && n) memcpy(z, a, (size_t)n);
  return z;
}

void ks_plan_free(ks_plan *pPlan) {
  PlanInt *p = (PlanInt *)pPlan;
  ArenaBlk *b;
  if (p == NULL) return;
  while ((b = p->pArena) != NULL) {
    p->pArena = b->pNext;
    if (b != arenaFirst(p)) free(b);
  }
  free(p->base.aRange);
  free(p->base.zDesc);
  if (p->aStream != p->aOne) free(p->aStream);
  free(p);
}

/* ====================================================================
** Planner state
** ==================================================================== */

typedef struct Planner {
  const ks_schema *s;
  PlanInt *p;
  int rc;      /* WCS_OK or WCS_NOMEM */
  wcs_buf tmp; /* scratch for building keys */
} Planner;

static int setAdd(Planner *P, IvlSet *S, const Ivl *v) {
  if (P->rc) return P->rc;
  if (ivlEmpty(v)) return WCS_OK;
  if (S->n == S->nAlloc) {
    int nNew = S->nAlloc ? S->nAlloc * 2 : 4;
    Ivl *aNew = arenaAlloc(P->p, sizeof(Ivl) * (size_t)nNew);
    if (aNew == NULL) return P->rc = WCS_NOMEM;
    if (S->n) memcpy(aNew, S->a, sizeof(Ivl) * (size_t)S->n);
    S->a = aNew;
    S->nAlloc = nNew;
  }
  S->a[S->n++] = *v;
  return WCS_OK;
}

static Bnd bndBytes(Planner *P, const void *a, int n, int bIncl) {
  Bnd b;
  b.p = arenaDup(P->p, a, n);
  if (b.p == NULL) P->rc = WCS_NOMEM;
  b.n = n;
  b.bIncl = (uint8_t)bIncl;
  b.bInf = 0;
  return b;
}

static Bnd bndInf(void) {
  Bnd b;
  memset(&b, 0, sizeof b);
  b.bInf = 1;
  return b;
}

/* A ∩ B into *pOut (which may be A). */
static void setIntersect(Planner *P, const IvlSet *A, const IvlSet *B,
                         IvlSet *pOut) {
  IvlSet r;
  int i = 0, j = 0;
  if (A->bFull) {
    *pOut = *B;
    return;
  }
  if (B->bFull) {
    *pOut = *A;
    return;
  }
  memset(&r, 0, sizeof r);
  while (i < A->n && j < B->n && P->rc == WCS_OK) {
    Ivl v;
    v.lo = cmpLo(&A->a[i].lo, &B->a[j].lo) >= 0 ? A->a[i].lo : B->a[j].lo;
    v.hi = cmpHi(&A->a[i].hi, &B->a[j].hi) <= 0 ? A->a[i].hi : B->a[j].hi;
    setAdd(P, &r, &v);
    if (cmpHi(&A->a[i].hi, &B->a[j].hi) <= 0)
      i++;
    else
      j++;
  }
  *pOut = r;
}

static int setIsPoints(const IvlSet *S) {
  int i;
  if (S->bFull) return 0;
  for (i = 0; i < S->n; i++) {
    if (!ivlIsPoint(&S->a[i])) return 0;
  }
  return 1;
}

/* One interval from the first start to the last end. */
static IvlSet setCover(Planner *P, const IvlSet *S) {
  IvlSet r;
  Ivl v;
  memset(&r, 0, sizeof r);
  if (S->bFull || S->n == 0) return *S;
  v.lo = S->a[0].lo;
  v.hi = S->a[S->n - 1].hi;
  setAdd(P, &r, &v);
  return r;
}

/* ====================================================================
** Constraints → sets of field bytes
** ==================================================================== */

/* How a constraint turned out. */
#define USE_NO    0 /* not usable: value of another class, or unsupported */
#define USE_EXACT 1 /* the set is exactly the values satisfying it */
#define USE_COVER 2 /* the set covers them; SQLite must re-check */

typedef struct FieldCtx {
  const ks_field *f; /* NULL for _key */
  int d;             /* DELIMITED: bytes must be above d; else -1 */
  int bUtf8;         /* STRING: a point must be valid UTF-8 */
} FieldCtx;

/* Lower bound x (string) moved up to the first string a key can hold. */
static Bnd normLo(Planner *P, const FieldCtx *fc, Bnd b) {
  int j;
  if (b.bInf || fc->d < 0) return b;
  for (j = 0; j < b.n && b.p[j] > fc->d; j++) {
  }
  if (j < b.n) {
    uint8_t *z = arenaAlloc(P->p, (size_t)j + 1);
    if (z == NULL) {
      P->rc = WCS_NOMEM;
      return b;
    }
    memcpy(z, b.p, (size_t)j);
    z[j] = (uint8_t)(fc->d + 1);
    b.p = z;
    b.n = j + 1;
    b.bIncl = 1;
  }
  return b;
}

/* Upper bound moved down to the last string a key can hold. */
static Bnd normHi(const FieldCtx *fc, Bnd b) {
  int j;
  if (b.bInf || fc->d < 0) return b;
  for (j = 0; j < b.n && b.p[j] > fc->d; j++) {
  }
  if (j < b.n) {
    b.n = j;
    b.bIncl = 1;
  }
  return b;
}

/* 1 if the string can be a field value. */
static int bytesValid(const FieldCtx *fc, const uint8_t *p, int n) {
  int i;
  if (fc->d >= 0) {
    for (i = 0; i < n; i++) {
      if (p[i] <= fc->d) return 0;
    }
  }
  return !fc->bUtf8 || ks_utf8_valid(p, n, NULL);
}

static int cmpView(const void *a, const void *b) {
  const ks_view *x = a, *y = b;
  return cmpBytes(x->p, x->n, y->p, y->n);
}

/* Interval of strings starting with p (succ: prefix successor). */
static Ivl prefixIvl(Planner *P, const uint8_t *p, int n) {
  Ivl v;
  uint8_t *z;
  int m;
  v.lo = bndBytes(P, p, n, 1);
  z = (uint8_t *)arenaDup(P->p, p, n);
  if (z == NULL) {
    P->rc = WCS_NOMEM;
    v.hi = bndInf();
    return v;
  }
  m = ksPrefixSuccessor(z, n);
  if (m == 0) {
    v.hi = bndInf();
  } else {
    v.hi.p = z;
    v.hi.n = m;
    v.hi.bIncl = 0;
    v.hi.bInf = 0;
  }
  return v;
}

/* The length of the character at p (n bytes left) when SQLite's pattern
** matcher reads it as exactly these bytes and reads no other bytes as the
** same character; else 0. The matcher (sqlite3Utf8Read) takes a lead byte
** and any continuation bytes after it, and reads a sequence that is not
** UTF-8 (an overlong form of ASCII, a surrogate), U+FFFE and U+FFFF all
** as U+FFFD; a continuation byte alone as itself (0x80 as U+0080), and
** an overlong form of other characters as the character. So in a STRING
** field (its values valid UTF-8) a character of the pattern stands for
** its own bytes unless it is one of those or U+FFFD; in BYTES and _key,
** which may hold any bytes, only ASCII does. */
static int plainCharLen(const uint8_t *p, int n, int bUtf8) {
  int k;
  if (p[0] < 0x80) return 1;
  if (!bUtf8) return 0;
  k = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : 2;
  if (n < k || !ks_utf8_valid(p, k, NULL)) return 0;
  /* U+FFFD to U+FFFF are EF BF BD to EF BF BF */
  if (p[0] == 0xEF && p[1] == 0xBF && p[2] >= 0xBD) return 0;
  /* the matcher goes on over continuation bytes after the character */
  if (n > k && (p[k] & 0xC0) == 0x80) return 0;
  return k;
}

/* The literal prefix of a GLOB or LIKE pattern and how the rest looks:
** *pbTail is 1 if the rest is exactly one "match anything" wildcard,
** *pbNoWild 1 if the pattern has no wildcard at all. The prefix also
** ends before a character that the matcher does not read as its own
** bytes alone (plainCharLen; bUtf8: the field holds only UTF-8), as if a
** wildcard were there. */
static int patternPrefix(const uint8_t *p, int n, int bLike, int bUtf8,
                         int *pbTail, int *pbNoWild) {
  int j = 0;
  while (j < n) {
    uint8_t c = p[j];
    int k;
    if (bLike ? (c == '%' || c == '_') : (c == '*' || c == '?' || c == '[')) {
      break;
    }
    k = plainCharLen(p + j, n - j, bUtf8);
    if (k == 0) break; /* (a byte that is not '%' or '*': no tail) */
    j += k;
  }
  *pbNoWild = j == n;
  *pbTail = j == n - 1 && p[j] == (bLike ? '%' : '*');
  return j;
}

static int hasAsciiLetter(const uint8_t *p, int n) {
  int i;
  for (i = 0; i < n; i++) {
    if ((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z')) {
      return 1;
    }
  }
  return 0;
}

/* Byte-string constraint (STRING/BYTES fields, _key). */
/* Whether prefix p holds a byte no delimited field can hold (at or below
** the delimiter's first byte): then nothing starts with it. UTF-8
** validity is not checked: a prefix may end inside a character. */
static int belowDelimiter(const FieldCtx *fc, const uint8_t *p, int n) {
  int j;
  if (fc->d < 0) return 0;
  for (j = 0; j < n && p[j] > fc->d; j++) {
  }
  return j < n;
}

static int bytesCons(Planner *P, const FieldCtx *fc, const ks_constraint *c,
                     IvlSet *S) {
  const ks_value *v = c->aVal;
  Ivl iv;
  int i;
  memset(S, 0, sizeof(*S));
  switch (c->op) {
  case KS_OP_ISNULL:
    return USE_EXACT; /* empty */
  case KS_OP_ISNOTNULL:
    S->bFull = 1;
    return USE_EXACT;
  case KS_OP_IN:
  case KS_OP_EQ: {
    int n = c->op == KS_OP_IN ? c->nVal : 1, m = 0;
    ks_view *a;
    if (c->op == KS_OP_EQ && c->nVal < 1) return USE_NO;
    for (i = 0; i < n; i++) {
      if (v[i].eType != KS_VAL_BYTES && v[i].eType != KS_VAL_NULL) {
        return USE_NO;
      }
    }
    a = n ? arenaAlloc(P->p, sizeof(ks_view) * (size_t)n) : NULL;
    if (n && a == NULL) return P->rc = WCS_NOMEM, USE_NO;
    for (i = 0; i < n; i++) {
      if (v[i].eType != KS_VAL_BYTES) continue;      /* = NULL: never true */
      if (!bytesValid(fc, v[i].p, v[i].n)) continue; /* no key holds it */
      a[m].p = v[i].n ? v[i].p : (const uint8_t *)"";
      a[m].n = v[i].n;
      m++;
    }
    if (m > 1) qsort(a, (size_t)m, sizeof(ks_view), cmpView);
    for (i = 0; i < m && P->rc == WCS_OK; i++) {
      if (i > 0 && cmpView(&a[i - 1], &a[i]) == 0) continue;
      iv.lo = bndBytes(P, a[i].p, a[i].n, 1);
      iv.hi = iv.lo;
      setAdd(P, S, &iv);
    }
    return USE_EXACT;
  }
  case KS_OP_LT:
  case KS_OP_LE:
  case KS_OP_GT:
  case KS_OP_GE: {
    Bnd b;
    if (c->nVal < 1) return USE_NO;
    if (v[0].eType == KS_VAL_NULL) return USE_EXACT; /* empty */
    if (v[0].eType != KS_VAL_BYTES) return USE_NO;
    b = bndBytes(P, v[0].p, v[0].n, c->op == KS_OP_LE || c->op == KS_OP_GE);
    if (c->op == KS_OP_LT || c->op == KS_OP_LE) {
      iv.lo = bndInf();
      iv.hi = normHi(fc, b);
    } else {
      iv.lo = normLo(P, fc, b);
      iv.hi = bndInf();
    }
    if (iv.lo.bInf && iv.hi.bInf) {
      S->bFull = 1;
    } else {
      setAdd(P, S, &iv);
    }
    return USE_EXACT;
  }
  case KS_OP_PREFIX:
  case KS_OP_GLOB_PREFIX:
  case KS_OP_LIKE_PREFIX: {
    int bTail = 1, bNoWild = 0, nPre, bLetters = 0, eUse = USE_EXACT;
    const uint8_t *p;
    if (c->nVal < 1) return USE_NO;
    if (v[0].eType == KS_VAL_NULL) return USE_EXACT; /* empty */
    if (v[0].eType != KS_VAL_BYTES) return USE_NO;
    p = v[0].n ? v[0].p : (const uint8_t *)"";
    nPre = v[0].n;
    if (c->op != KS_OP_PREFIX) {
      int bLike = c->op == KS_OP_LIKE_PREFIX;
      nPre = patternPrefix(p, v[0].n, bLike, fc->bUtf8, &bTail, &bNoWild);
      if (bLike) bLetters = hasAsciiLetter(p, nPre);
      if (!bTail && !bNoWild) eUse = USE_COVER;
      if (bLetters) eUse = USE_COVER;
    }
    if (bNoWild && !bLetters) {
      /* no wildcard: plain equality */
      if (bytesValid(fc, p, nPre)) {
        iv.lo = bndBytes(P, p, nPre, 1);
        iv.hi = iv.lo;
        setAdd(P, S, &iv);
      }
      if (c->op != KS_OP_PREFIX) {
        /* GLOB and LIKE read the value up to its first 00 byte, so p, a
        ** 00, then anything, matches too, where the field can hold it */
        uint8_t *z = arenaAlloc(P->p, (size_t)nPre + 1);
        if (z == NULL) return P->rc = WCS_NOMEM, USE_NO;
        if (nPre) memcpy(z, p, (size_t)nPre);
        z[nPre] = 0;
        if (bytesValid(fc, z, nPre + 1)) {
          Ivl v0 = prefixIvl(P, z, nPre + 1);
          v0.lo = normLo(P, fc, v0.lo);
          v0.hi = normHi(fc, v0.hi);
          setAdd(P, S, &v0);
          eUse = USE_COVER;
        }
      }
      return eUse;
    }
    if (bLetters) {
      /* the prefix with its letters in upper case and in lower case,
      ** whose bytes make its case variants */
      uint8_t *zUp = arenaAlloc(P->p, (size_t)nPre + 1);
      uint8_t *zLow = arenaAlloc(P->p, (size_t)nPre + 1);
      if (zUp == NULL || zLow == NULL) return P->rc = WCS_NOMEM, USE_NO;
      for (i = 0; i < nPre; i++) {
        uint8_t ch = p[i];
        zUp[i] = (ch >= 'a' && ch <= 'z') ? (uint8_t)(ch - 32) : ch;
        zLow[i] = (ch >= 'A' && ch <= 'Z') ? (uint8_t)(ch + 32) : ch;
      }
      zLow[nPre] = 0;
      {
        /* The prefix's case variants, each a range of its own, the prefix
        ** cut before its sixth letter: at most 32, where one range from
        ** upper(p) to lower(p) would take in every key between (LIKE
        ** 'd05#%' read every key from 'D' to 'd05#'). Without a wildcard
        ** and not cut, each variant is a value of its own (LIKE 'phone'
        ** reads the keys of 'phone', 'Phone', ..., not those of 'laptop'
        ** between 'PHONE' and 'phone'), and so is each followed by a 00
        ** byte and anything, as above. */
        int aLet[LIKE_VARIANT_LETTERS], nLet = 0, nCut = nPre, m, j, k;
        int bValues;
        ks_view *a;
        for (i = 0; i < nPre; i++) {
          uint8_t ch = p[i];
          if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
            if (nLet == LIKE_VARIANT_LETTERS) {
              nCut = i;
              break;
            }
            aLet[nLet++] = i;
          }
        }
        bValues = bNoWild && nCut == nPre;
        a = arenaAlloc(P->p, sizeof(ks_view) << nLet);
        if (a == NULL) return P->rc = WCS_NOMEM, USE_NO;
        for (m = k = 0; m < (1 << nLet); m++) {
          uint8_t *z = arenaAlloc(P->p, (size_t)nCut + 1);
          if (z == NULL) return P->rc = WCS_NOMEM, USE_NO;
          memcpy(z, zLow, (size_t)nCut + 1);
          for (j = 0; j < nLet; j++) {
            if ((m >> j) & 1) z[aLet[j]] = zUp[aLet[j]];
          }
          if (belowDelimiter(fc, z, nCut)) continue;
          a[k].p = z;
          a[k].n = nCut;
          k++;
        }
        qsort(a, (size_t)k, sizeof(ks_view), cmpView);
        for (m = 0; m < k && P->rc == WCS_OK; m++) {
          if (!bValues) {
            iv = prefixIvl(P, a[m].p, a[m].n);
            iv.lo = normLo(P, fc, iv.lo);
            iv.hi = normHi(fc, iv.hi);
            setAdd(P, S, &iv);
            continue;
          }
          if (bytesValid(fc, a[m].p, a[m].n)) {
            iv.lo = bndBytes(P, a[m].p, a[m].n, 1);
            iv.hi = iv.lo;
            setAdd(P, S, &iv);
          }
          if (c->op != KS_OP_PREFIX && bytesValid(fc, a[m].p, a[m].n + 1)) {
            /* (a[m].p[n] is the 00 byte zLow ends with) */
            iv = prefixIvl(P, a[m].p, a[m].n + 1);
            iv.lo = normLo(P, fc, iv.lo);
            iv.hi = normHi(fc, iv.hi);
            setAdd(P, S, &iv);
          }
        }
        return USE_COVER;
      }
    }
    if (nPre == 0) {
      S->bFull = 1;
      return eUse;
    }
    if (belowDelimiter(fc, p, nPre)) return eUse;
    iv = prefixIvl(P, p, nPre);
    setAdd(P, S, &iv);
    return eUse;
  }
  }
  return USE_NO;
}

/* A constraint value seen as a number (numOf returns 0 for text or blobs,
** which an integer field cannot be compared with here). */
typedef struct NumVal {
  int bNull;     /* SQL NULL */
  int bIntegral; /* an integer value (v is exact) */
  double r;      /* the value as a real */
  int64_t v;     /* the integer value when bIntegral */
} NumVal;

static int numOf(const ks_value *x, NumVal *o) {
  memset(o, 0, sizeof(*o));
  if (x->eType == KS_VAL_NULL) {
    o->bNull = 1;
    return 1;
  }
  if (x->eType == KS_VAL_INT) {
    o->bIntegral = 1;
    o->v = x->i;
    o->r = (double)x->i;
    return 1;
  }
  if (x->eType == KS_VAL_REAL && !isnan(x->r)) {
    o->r = x->r;
    if (x->r >= -9223372036854775808.0 && x->r < 9223372036854775808.0 &&
        (double)(int64_t)x->r == x->r) {
      o->bIntegral = 1;
      o->v = (int64_t)x->r;
    }
    return 1;
  }
  return 0;
}

static int cmpU64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Integer constraint (INT64/TIMESTAMP fields). */
static int intCons(Planner *P, const ks_field *f, const ks_constraint *c,
                   IvlSet *S) {
  int64_t vMin, vMax, a, b;
  uint8_t aLo[KS_FIELD_INT_MAX], aHi[KS_FIELD_INT_MAX];
  Ivl iv;
  int i;
  memset(S, 0, sizeof(*S));
  ksIntDomain(f, &vMin, &vMax);
  switch (c->op) {
  case KS_OP_ISNULL:
    return USE_EXACT;
  case KS_OP_ISNOTNULL:
    S->bFull = 1;
    return USE_EXACT;
  case KS_OP_EQ:
  case KS_OP_IN: {
    int n = c->op == KS_OP_IN ? c->nVal : 1, m = 0;
    uint64_t *aU;
    NumVal x;
    if (c->op == KS_OP_EQ && c->nVal < 1) return USE_NO;
    for (i = 0; i < n; i++) {
      if (!numOf(&c->aVal[i], &x)) return USE_NO;
    }
    aU = n ? arenaAlloc(P->p, sizeof(uint64_t) * (size_t)n) : NULL;
    if (n && aU == NULL) return P->rc = WCS_NOMEM, USE_NO;
    for (i = 0; i < n; i++) {
      numOf(&c->aVal[i], &x);
      if (x.bNull || !x.bIntegral || x.v < vMin || x.v > vMax) continue;
      aU[m++] = ksIntToU(f, x.v);
    }
    if (m > 1) qsort(aU, (size_t)m, sizeof(uint64_t), cmpU64);
    for (i = 0; i < m && P->rc == WCS_OK; i++) {
      if (i > 0 && aU[i] == aU[i - 1]) continue;
      iv.lo = bndBytes(P, aLo, ksIntFieldBytes(f, aU[i], aLo), 1);
      iv.hi = iv.lo;
      setAdd(P, S, &iv);
    }
    return USE_EXACT;
  }
  case KS_OP_LT:
  case KS_OP_LE:
  case KS_OP_GT:
  case KS_OP_GE: {
    NumVal x;
    const double TWO63 = 9223372036854775808.0;
    if (c->nVal < 1 || !numOf(&c->aVal[0], &x)) return USE_NO;
    if (x.bNull) return USE_EXACT; /* empty */
    a = INT64_MIN;
    b = INT64_MAX;
    if (c->op == KS_OP_LT || c->op == KS_OP_LE) {
      /* v < x  <=>  v <= ceil(x)-1 ;  v <= x  <=>  v <= floor(x) */
      if (x.bIntegral) {
        if (c->op == KS_OP_LT) {
          if (x.v == INT64_MIN) return USE_EXACT; /* empty */
          b = x.v - 1;
        } else {
          b = x.v;
        }
      } else if (x.r >= TWO63) {
        b = INT64_MAX;
      } else if (x.r < -TWO63) {
        return USE_EXACT; /* empty */
      } else {
        b = (int64_t)floor(x.r); /* not integral: < and <= agree */
      }
    } else {
      if (x.bIntegral) {
        if (c->op == KS_OP_GT) {
          if (x.v == INT64_MAX) return USE_EXACT; /* empty */
          a = x.v + 1;
        } else {
          a = x.v;
        }
      } else if (x.r >= TWO63) {
        return USE_EXACT; /* empty */
      } else if (x.r < -TWO63) {
        a = INT64_MIN;
      } else {
        a = (int64_t)ceil(x.r);
      }
    }
    if (a < vMin) a = vMin;
    if (b > vMax) b = vMax;
    if (a > b) return USE_EXACT; /* empty: beyond what the field holds */
    if (a == vMin && b == vMax) {
      S->bFull = 1;
      return USE_EXACT;
    }
    {
      /* in order space; a bound at the edge of the domain is no bound */
      uint64_t uA = ksIntToU(f, a), uB = ksIntToU(f, b), uMin, uMax;
      if (uA > uB) {
        uint64_t t = uA;
        uA = uB;
        uB = t;
      }
      ksIntURange(f, &uMin, &uMax);
      iv.lo = uA == uMin ? bndInf()
                         : bndBytes(P, aLo, ksIntFieldBytes(f, uA, aLo), 1);
      iv.hi = uB == uMax ? bndInf()
                         : bndBytes(P, aHi, ksIntFieldBytes(f, uB, aHi), 1);
      setAdd(P, S, &iv);
    }
    return USE_EXACT;
  }
  default:
    return USE_NO; /* text patterns on integers: SQLite decides */
  }
}

/* ====================================================================
** Building the ranges
** ==================================================================== */

static int addRange(Planner *P, const Bnd *pLo, const Bnd *pHi, int iBucket) {
  ks_plan *pl = &P->p->base;
  ks_range *r;
  Ivl v;
  v.lo = *pLo;
  v.hi = *pHi;
  if (P->rc) return P->rc;
  if (ivlEmpty(&v)) return WCS_OK;
  if (pl->nRange == P->p->nRangeAlloc) {
    int nNew = P->p->nRangeAlloc ? P->p->nRangeAlloc * 2 : 8;
    ks_range *aNew = realloc(pl->aRange, sizeof(ks_range) * (size_t)nNew);
    if (aNew == NULL) return P->rc = WCS_NOMEM;
    pl->aRange = aNew;
    P->p->nRangeAlloc = nNew;
  }
  r = &pl->aRange[pl->nRange++];
  memset(r, 0, sizeof(*r));
  r->pStart = pLo->p;
  r->nStart = pLo->n;
  r->bStartIncl = pLo->bIncl;
  r->bStartUnbounded = pLo->bInf;
  r->pEnd = pHi->p;
  r->nEnd = pHi->n;
  r->bEndIncl = pHi->bIncl;
  r->bEndUnbounded = pHi->bInf;
  r->iBucket = iBucket;
  return WCS_OK;
}

static Bnd rangeLo(const ks_range *r) {
  Bnd b;
  b.p = r->pStart;
  b.n = r->nStart;
  b.bIncl = (uint8_t)r->bStartIncl;
  b.bInf = (uint8_t)r->bStartUnbounded;
  return b;
}

static Bnd rangeHi(const ks_range *r) {
  Bnd b;
  b.p = r->pEnd;
  b.n = r->nEnd;
  b.bIncl = (uint8_t)r->bEndIncl;
  b.bInf = (uint8_t)r->bEndUnbounded;
  return b;
}

/* A bound from ksJoin(views[0..m-1], mode), with bucket byte b (or -1). */
static Bnd joinBnd(Planner *P, const ks_view *aView, int m, int eMode,
                   int iBucket, int bIncl) {
  P->tmp.n = 0;
  if (iBucket >= 0) {
    uint8_t c = (uint8_t)iBucket;
    if (wcs_buf_append(&P->tmp, &c, 1)) P->rc = WCS_NOMEM;
  }
  if (P->rc == WCS_OK && ksJoin(P->s, aView, m, eMode, &P->tmp)) {
    P->rc = WCS_NOMEM;
  }
  if (P->rc) return bndInf();
  return bndBytes(P, P->tmp.a, (int)P->tmp.n, bIncl);
}

/* Logical ranges for one combination of leading points aView[0..e-1] and
** the intervals of field e (pIvl NULL: field e unconstrained). Physical
** bucket -1 for unsalted; else emitted once per bucket by the caller. */
static void emitCombo(Planner *P, ks_view *aView, int e, const IvlSet *pIvl,
                      int iBucket) {
  const ks_schema *s = P->s;
  const int n = s->nField;
  Bnd lo, hi;
  int i;
  Bnd bucketLo, bucketHi;
  if (iBucket >= 0) {
    uint8_t c = (uint8_t)iBucket, c1 = (uint8_t)(iBucket + 1);
    bucketLo = bndBytes(P, &c, 1, 1);
    bucketHi = iBucket + 1 < 256 ? bndBytes(P, &c1, 1, 0) : bndInf();
  } else {
    bucketLo = bndInf();
    bucketHi = bndInf();
  }
  if (e == n) {
    /* a point; with salt its own bucket */
    if (s->nSalt > 0) {
      int b;
      P->tmp.n = 0;
      if (wcs_buf_append(&P->tmp, "", 1) ||
          ksJoin(s, aView, n, KS_JOIN_FULL, &P->tmp)) {
        P->rc = WCS_NOMEM;
        return;
      }
      b = ks_salt_bucket(s, P->tmp.a + 1, (int)P->tmp.n - 1);
      P->tmp.a[0] = (uint8_t)b;
      lo = bndBytes(P, P->tmp.a, (int)P->tmp.n, 1);
      addRange(P, &lo, &lo, b);
    } else {
      lo = joinBnd(P, aView, n, KS_JOIN_FULL, -1, 1);
      addRange(P, &lo, &lo, -1);
    }
    return;
  }
  if (pIvl == NULL || pIvl->bFull) {
    lo = e == 0 ? bucketLo : joinBnd(P, aView, e, KS_JOIN_LOW, iBucket, 1);
    hi = e == 0 ? bucketHi : joinBnd(P, aView, e, KS_JOIN_HIGH, iBucket, 0);
    addRange(P, &lo, &hi, iBucket);
    return;
  }
  for (i = 0; i < pIvl->n && P->rc == WCS_OK; i++) {
    const Ivl *v = &pIvl->a[i];
    int bLast = e + 1 == n;
    if (v->lo.bInf) {
      lo = e == 0 ? bucketLo : joinBnd(P, aView, e, KS_JOIN_LOW, iBucket, 1);
    } else {
      aView[e].p = v->lo.p;
      aView[e].n = v->lo.n;
      if (bLast) {
        lo = joinBnd(P, aView, n, KS_JOIN_FULL, iBucket, v->lo.bIncl);
      } else {
        lo = joinBnd(P, aView, e + 1, v->lo.bIncl ? KS_JOIN_LOW : KS_JOIN_HIGH,
                     iBucket, 1);
      }
    }
    if (v->hi.bInf) {
      hi = e == 0 ? bucketHi : joinBnd(P, aView, e, KS_JOIN_HIGH, iBucket, 0);
    } else {
      aView[e].p = v->hi.p;
      aView[e].n = v->hi.n;
      if (bLast) {
        hi = joinBnd(P, aView, n, KS_JOIN_FULL, iBucket, v->hi.bIncl);
      } else {
        hi = joinBnd(P, aView, e + 1, v->hi.bIncl ? KS_JOIN_HIGH : KS_JOIN_LOW,
                     iBucket, 0);
      }
    }
    addRange(P, &lo, &hi, iBucket);
  }
}

static int cmpRangeStart(const void *pa, const void *pb) {
  const ks_range *a = pa, *b = pb;
  Bnd x = rangeLo(a), y = rangeLo(b);
  return cmpLo(&x, &y);
}

/* Sort the ranges and merge overlapping or touching ones. */
static void normalizeRanges(Planner *P) {
  ks_plan *pl = &P->p->base;
  int i, j = 0;
  if (pl->nRange <= 1) return;
  for (i = 1; i < pl->nRange; i++) {
    if (cmpRangeStart(&pl->aRange[i - 1], &pl->aRange[i]) > 0) break;
  }
  if (i < pl->nRange) {
    /* ranges are built in order; sort only if they are not */
    qsort(pl->aRange, (size_t)pl->nRange, sizeof(ks_range), cmpRangeStart);
  }
  for (i = 1; i < pl->nRange; i++) {
    ks_range *a = &pl->aRange[j], *b = &pl->aRange[i];
    Bnd aHi = rangeHi(a), bLo = rangeLo(b), bHi = rangeHi(b);
    int bOverlap;
    if (aHi.bInf) {
      bOverlap = 1;
    } else if (bLo.bInf) {
      bOverlap = 1;
    } else {
      int c = cmpBytes(bLo.p, bLo.n, aHi.p, aHi.n);
      bOverlap = c < 0 || (c == 0 && (aHi.bIncl || bLo.bIncl));
    }
    if (bOverlap && a->iBucket == b->iBucket) {
      if (cmpHi(&bHi, &aHi) > 0) {
        a->pEnd = b->pEnd;
        a->nEnd = b->nEnd;
        a->bEndIncl = b->bEndIncl;
        a->bEndUnbounded = b->bEndUnbounded;
      }
    } else {
      pl->aRange[++j] = *b;
    }
  }
  pl->nRange = j + 1;
}

/* Intersect the plan's ranges with a set of physical key intervals. */
static void intersectKeySet(Planner *P, const IvlSet *K) {
  ks_plan *pl = &P->p->base;
  ks_range *aOld = pl->aRange;
  int nOld = pl->nRange, i = 0, j = 0;
  if (K->bFull) return;
  pl->aRange = NULL;
  pl->nRange = 0;
  P->p->nRangeAlloc = 0;
  while (i < nOld && j < K->n && P->rc == WCS_OK) {
    Bnd rLo = rangeLo(&aOld[i]), rHi = rangeHi(&aOld[i]);
    Bnd lo = cmpLo(&rLo, &K->a[j].lo) >= 0 ? rLo : K->a[j].lo;
    Bnd hi = cmpHi(&rHi, &K->a[j].hi) <= 0 ? rHi : K->a[j].hi;
    addRange(P, &lo, &hi, aOld[i].iBucket);
    if (cmpHi(&rHi, &K->a[j].hi) <= 0)
      i++;
    else
      j++;
  }
  free(aOld);
}

/* ====================================================================
** ks_plan_make
** ==================================================================== */

static const char *kindWord(ks_plan_kind e) {
  switch (e) {
  case KS_PLAN_EMPTY:
    return "EMPTY";
  case KS_PLAN_POINT:
    return "POINT LOOKUP";
  case KS_PLAN_MULTI_POINT:
    return "MULTI-POINT";
  case KS_PLAN_PREFIX:
    return "PREFIX SCAN";
  case KS_PLAN_RANGE:
    return "RANGE SCAN";
  case KS_PLAN_MULTI_RANGE:
    return "MULTI-RANGE SCAN";
  case KS_PLAN_SKIP:
    return "SKIP SCAN";
  case KS_PLAN_FULL:
    return "FULL SCAN";
  }
  return "?";
}

static int describe(PlanInt *p) {
  ks_plan *pl = &p->base;
  const ks_schema *s = pl->pSchema;
  wcs_buf b = {0};
  char z[96];
  int i,
      rc = wcs_buf_append(&b, kindWord(pl->eKind), strlen(kindWord(pl->eKind)));
  if (pl->eKind == KS_PLAN_MULTI_POINT) {
    snprintf(z, sizeof z, " (%d keys)", pl->nPoint);
    if (rc == WCS_OK) rc = wcs_buf_append(&b, z, strlen(z));
  } else if (pl->eKind == KS_PLAN_SKIP) {
    const char *zF = s->aField[pl->iSkipField].zName;
    if (rc == WCS_OK) rc = wcs_buf_append(&b, " on ", 4);
    if (rc == WCS_OK) rc = wcs_buf_append(&b, zF, strlen(zF));
  } else if (pl->eKind == KS_PLAN_PREFIX || pl->eKind == KS_PLAN_RANGE ||
             pl->eKind == KS_PLAN_MULTI_RANGE) {
    if (pl->eKind == KS_PLAN_MULTI_RANGE) {
      snprintf(z, sizeof z, " (%d ranges on ", pl->nRange);
    } else {
      snprintf(z, sizeof z, " (");
    }
    if (rc == WCS_OK) rc = wcs_buf_append(&b, z, strlen(z));
    for (i = 0; i < pl->nKeyField && rc == WCS_OK; i++) {
      const char *zF = s->aField[i].zName;
      if (i > 0) rc = wcs_buf_append(&b, ",", 1);
      if (rc == WCS_OK) rc = wcs_buf_append(&b, zF, strlen(zF));
    }
    if (rc == WCS_OK && pl->bKeyColumn) {
      rc = wcs_buf_append(&b, pl->nKeyField ? ",_key" : "_key",
                          pl->nKeyField ? 5 : 4);
    }
    if (rc == WCS_OK) rc = wcs_buf_append(&b, ")", 1);
  }
  if (rc == WCS_OK && pl->nBucket > 0 && pl->eKind != KS_PLAN_EMPTY &&
      pl->eKind != KS_PLAN_POINT && pl->eKind != KS_PLAN_MULTI_POINT) {
    snprintf(z, sizeof z, " OVER %d BUCKETS", pl->nBucket);
    rc = wcs_buf_append(&b, z, strlen(z));
  }
  if (rc == WCS_OK) rc = wcs_buf_append(&b, "", 1);
  if (rc != WCS_OK) {
    wcs_buf_free(&b);
    return WCS_NOMEM;
  }
  pl->zDesc = (char *)b.a;
  return WCS_OK;
}

/* Streams: one per bucket for salted plans, else one. */
static int makeStreams(PlanInt *p) {
  ks_plan *pl = &p->base;
  int i, k;
  p->nStream = pl->nBucket > 0 ? pl->nBucket : 1;
  if (pl->nBucket == 0) {
    p->aStream = p->aOne;
    p->aStream[0] = 0;
    p->aStream[1] = pl->nRange;
    return WCS_OK;
  }
  p->aStream = calloc((size_t)p->nStream + 1, sizeof(int));
  if (p->aStream == NULL) return WCS_NOMEM;
  /* ranges are sorted, so grouped by bucket in increasing order */
  for (k = 0, i = 0; k < p->nStream; k++) {
    p->aStream[k] = i;
    while (i < pl->nRange && pl->aRange[i].iBucket <= k)
      i++;
  }
  p->aStream[p->nStream] = pl->nRange;
  return WCS_OK;
}

int ks_plan_make(const ks_schema *s, ks_constraint *aCons, int nCons,
                 const ks_plan_opts *pOpts, ks_plan **ppPlan, char **pzErr) {
  Planner P;
  PlanInt *p;
  ks_plan *pl;
  IvlSet aSet[KS_MAX_FIELDS];
  IvlSet keySet;
  uint8_t aUse[256];
  uint8_t *aUseBig = NULL, *use = aUse;
  const int n = s->nField;
  int64_t nCap = pOpts && pOpts->nMaxPoints > 0 ? pOpts->nMaxPoints
                                                : KS_DEFAULT_MAX_POINTS;
  int bAllowSkip = pOpts ? pOpts->bAllowSkip : 0;
  int i, f, e, bEmpty = 0, bCoverE = 0, iLast = -1, bSkip = 0;
  int64_t nProd = 1;
  int nCapture; /* fields 0..nCapture-1 are captured exactly (if exact) */

  *ppPlan = NULL;
  for (i = 0; i < nCons; i++) {
    aCons[i].bExact = 0;
    if (aCons[i].iField != KS_FIELD_KEY &&
        (aCons[i].iField < 0 || aCons[i].iField >= n)) {
      return wcs_seterr(pzErr, WCS_MISUSE,
                        "constraint on field %d of a key "
                        "with %d fields",
                        aCons[i].iField, n);
    }
  }
  p = malloc(sizeof(PlanInt) + sizeof(ArenaBlk) + KS_ARENA_FIRST);
  if (p == NULL) return WCS_NOMEM;
  memset(p, 0, sizeof(PlanInt));
  p->pArena = arenaFirst(p);
  p->pArena->pNext = NULL;
  p->pArena->nUsed = 0;
  p->pArena->nAlloc = KS_ARENA_FIRST;
  pl = &p->base;
  pl->pSchema = s;
  pl->nBucket = s->nSalt;
  memset(&P, 0, sizeof P);
  P.s = s;
  P.p = p;
  if (nCons > (int)sizeof(aUse)) {
    aUseBig = malloc((size_t)nCons);
    if (aUseBig == NULL) {
      ks_plan_free(pl);
      return WCS_NOMEM;
    }
    use = aUseBig;
  }

  /* 1. per-field sets */
  for (f = 0; f < n; f++) {
    memset(&aSet[f], 0, sizeof(IvlSet));
    aSet[f].bFull = 1;
  }
  memset(&keySet, 0, sizeof keySet);
  keySet.bFull = 1;
  for (i = 0; i < nCons && P.rc == WCS_OK; i++) {
    const ks_constraint *c = &aCons[i];
    IvlSet S;
    FieldCtx fc;
    memset(&fc, 0, sizeof fc);
    fc.d = -1;
    if (c->iField == KS_FIELD_KEY) {
      use[i] = (uint8_t)bytesCons(&P, &fc, c, &S);
      if (use[i] != USE_NO) setIntersect(&P, &keySet, &S, &keySet);
      if (use[i] != USE_NO) pl->bKeyColumn = 1;
      continue;
    }
    fc.f = &s->aField[c->iField];
    if (fc.f->eType == KS_STRING || fc.f->eType == KS_BYTES) {
      fc.d = ksDelimByte(s);
      fc.bUtf8 = fc.f->eType == KS_STRING;
      use[i] = (uint8_t)bytesCons(&P, &fc, c, &S);
    } else {
      use[i] = (uint8_t)intCons(&P, fc.f, c, &S);
    }
    if (use[i] != USE_NO)
      setIntersect(&P, &aSet[c->iField], &S, &aSet[c->iField]);
  }
  for (f = 0; f < n; f++) {
    if (!aSet[f].bFull && aSet[f].n == 0) bEmpty = 1;
    if (!aSet[f].bFull) iLast = f;
  }
  if (!keySet.bFull && keySet.n == 0) bEmpty = 1;

  /* 2. the leading point fields, capped */
  e = 0;
  while (!bEmpty && e < n && setIsPoints(&aSet[e])) {
    if (nProd * aSet[e].n > nCap) {
      bCoverE = 1;
      break;
    }
    nProd *= aSet[e].n;
    e++;
  }
  if (!bEmpty && e < n) {
    /* ranges: the product times the intervals of field e, times the
    ** buckets (which no cap can avoid: every range is in every bucket) */
    int64_t nFan = s->nSalt > 0 ? s->nSalt : 1;
    int64_t nAllowed = nCap / nFan > 0 ? nCap / nFan : 1;
    if (!aSet[e].bFull && nProd * aSet[e].n > nAllowed) bCoverE = 1;
    while (e > 0 && nProd > nAllowed) {
      e--;
      nProd /= aSet[e].n;
      bCoverE = 1;
    }
  }
  nCapture = e < n && !aSet[e].bFull && !bCoverE ? e + 1 : e;
  if (!bEmpty && bAllowSkip && (bCoverE || iLast >= nCapture)) {
    bSkip = 1;
    nCapture = iLast + 1;
  }

  /* 3. ranges */
  if (!bEmpty) {
    ks_view aView[KS_MAX_FIELDS];
    int aIdx[KS_MAX_FIELDS];
    IvlSet cover;
    const IvlSet *pIvl = NULL;
    int64_t k;
    if (e < n && !aSet[e].bFull) {
      cover = bCoverE ? setCover(&P, &aSet[e]) : aSet[e];
      pIvl = &cover;
    }
    memset(aIdx, 0, sizeof aIdx);
    if (n == 0) {
      /* no key schema: everything, narrowed by _key below */
      Bnd lo = bndInf(), hi = bndInf();
      addRange(&P, &lo, &hi, -1);
      nProd = 0;
    }
    for (k = 0; k < nProd && P.rc == WCS_OK; k++) {
      for (f = 0; f < e; f++) {
        aView[f].p = aSet[f].a[aIdx[f]].lo.p;
        aView[f].n = aSet[f].a[aIdx[f]].lo.n;
      }
      if (e == n || s->nSalt == 0) {
        emitCombo(&P, aView, e, pIvl, -1);
      } else {
        int b;
        for (b = 0; b < s->nSalt && P.rc == WCS_OK; b++) {
          emitCombo(&P, aView, e, pIvl, b);
        }
      }
      /* odometer: the last field turns fastest, so keys come in order */
      for (f = e - 1; f >= 0; f--) {
        if (++aIdx[f] < aSet[f].n) break;
        aIdx[f] = 0;
      }
    }
    if (P.rc == WCS_OK && s->nSalt > 0) normalizeRanges(&P);
    if (P.rc == WCS_OK) intersectKeySet(&P, &keySet);
    if (P.rc == WCS_OK) normalizeRanges(&P);
  }

  /* 4. the kind */
  if (P.rc == WCS_OK) {
    int bAllPoints = pl->nRange > 0;
    for (i = 0; i < pl->nRange; i++) {
      ks_range *r = &pl->aRange[i];
      if (r->bStartUnbounded || r->bEndUnbounded || !r->bStartIncl ||
          !r->bEndIncl ||
          cmpBytes(r->pStart, r->nStart, r->pEnd, r->nEnd) != 0) {
        bAllPoints = 0;
      }
    }
    pl->nEqField = e;
    pl->nKeyField = bSkip ? nCapture : (e < n && !aSet[e].bFull ? e + 1 : e);
    if (pl->nRange == 0) {
      pl->eKind = KS_PLAN_EMPTY;
    } else if (bSkip) {
      pl->eKind = KS_PLAN_SKIP;
      pl->iSkipField = e;
      for (f = e + 1; f < n; f++) {
        if (!aSet[f].bFull) {
          pl->iSkipField = f;
          break;
        }
      }
      pl->nSkipDepth = pl->iSkipField;
    } else if (bAllPoints && (e == n || pl->bKeyColumn)) {
      pl->nPoint = pl->nRange;
      pl->eKind = pl->nRange == 1 ? KS_PLAN_POINT : KS_PLAN_MULTI_POINT;
    } else if (pl->nKeyField == 0 && !pl->bKeyColumn) {
      pl->eKind = KS_PLAN_FULL;
    } else {
      int nLogical =
          s->nSalt > 0 ? (pl->nRange + s->nSalt - 1) / s->nSalt : pl->nRange;
      if (nLogical > 1) {
        pl->eKind = KS_PLAN_MULTI_RANGE;
      } else if (pl->nKeyField > 0 && pl->nKeyField == e && !pl->bKeyColumn) {
        pl->eKind = KS_PLAN_PREFIX;
      } else if (pl->nKeyField == 0 && pl->nRange == 1 &&
                 pl->aRange[0].bStartIncl && !pl->aRange[0].bEndIncl &&
                 !pl->aRange[0].bStartUnbounded &&
                 !pl->aRange[0].bEndUnbounded) {
        /* _key only: a prefix range is [p, successor(p)) */
        ks_range *r = &pl->aRange[0];
        uint8_t *z = (uint8_t *)arenaDup(p, r->pStart, r->nStart);
        int m = z ? ksPrefixSuccessor(z, r->nStart) : -1;
        pl->eKind = (m > 0 && cmpBytes(z, m, r->pEnd, r->nEnd) == 0)
                        ? KS_PLAN_PREFIX
                        : KS_PLAN_RANGE;
      } else {
        pl->eKind = KS_PLAN_RANGE;
      }
    }
  }

  /* 5. slots for skip scans */
  if (P.rc == WCS_OK && pl->eKind == KS_PLAN_SKIP) {
    p->skip.nSlot = nCapture;
    p->skip.aSlot = arenaAlloc(p, sizeof(IvlSet) * (size_t)nCapture);
    if (p->skip.aSlot == NULL) {
      P.rc = WCS_NOMEM;
    } else {
      for (f = 0; f < nCapture; f++)
        p->skip.aSlot[f] = aSet[f];
      pl->pSkip = &p->skip;
    }
  }

  /* 6. exactness */
  if (P.rc == WCS_OK) {
    int bAll = 1;
    for (i = 0; i < nCons; i++) {
      ks_constraint *c = &aCons[i];
      if (pl->eKind == KS_PLAN_EMPTY) {
        c->bExact = 1; /* no row is returned, nothing to re-check */
      } else if (use[i] != USE_EXACT) {
        c->bExact = 0;
      } else if (c->iField == KS_FIELD_KEY) {
        c->bExact = 1;
      } else if (bSkip) {
        c->bExact = c->iField < nCapture;
      } else {
        c->bExact = c->iField < e || (c->iField == e && !bCoverE);
      }
      if (!c->bExact) bAll = 0;
    }
    pl->bExactAll = bAll;
  }
  if (P.rc == WCS_OK) P.rc = makeStreams(p);
  wcs_buf_free(&P.tmp);
  free(aUseBig);
  if (P.rc != WCS_OK) {
    ks_plan_free(pl);
    return P.rc;
  }
  *ppPlan = pl;
  return WCS_OK;
}

/* ====================================================================
** Describing
** ==================================================================== */

const char *ks_plan_describe(const ks_plan *pPlan) {
  /* made on first use: a plan made to be run is seldom described */
  if (pPlan->zDesc == NULL && describe((PlanInt *)pPlan) != WCS_OK) return "";
  return pPlan->zDesc;
}

int ks_plan_explain(const ks_plan *pPlan, int nMax, char **pz) {
  wcs_buf b = {0};
  int i, rc;
  const char *zDesc = ks_plan_describe(pPlan);
  *pz = NULL;
  rc = wcs_buf_append(&b, zDesc, strlen(zDesc));
  for (i = 0; rc == WCS_OK && i < pPlan->nRange; i++) {
    const ks_range *r = &pPlan->aRange[i];
    char *zS = NULL, *zE = NULL;
    char *zLine;
    size_t nLine;
    if (nMax > 0 && i >= nMax) {
      char zMore[48];
      snprintf(zMore, sizeof zMore, "\n... %d more", pPlan->nRange - i);
      rc = wcs_buf_append(&b, zMore, strlen(zMore));
      break;
    }
    if (!r->bStartUnbounded) zS = wcs_escape(r->pStart, (size_t)r->nStart, 200);
    if (!r->bEndUnbounded) zE = wcs_escape(r->pEnd, (size_t)r->nEnd, 200);
    if ((!r->bStartUnbounded && !zS) || (!r->bEndUnbounded && !zE)) {
      free(zS);
      free(zE);
      rc = WCS_NOMEM;
      break;
    }
    nLine = (zS ? strlen(zS) : 4) + (zE ? strlen(zE) : 4) + 16;
    zLine = malloc(nLine);
    if (zLine == NULL) {
      free(zS);
      free(zE);
      rc = WCS_NOMEM;
      break;
    }
    snprintf(zLine, nLine, "\n%c%s, %s%c",
             r->bStartUnbounded ? '(' : (r->bStartIncl ? '[' : '('),
             zS ? zS : "-inf", zE ? zE : "+inf",
             r->bEndUnbounded ? ')' : (r->bEndIncl ? ']' : ')'));
    rc = wcs_buf_append(&b, zLine, strlen(zLine));
    free(zLine);
    free(zS);
    free(zE);
  }
  if (rc == WCS_OK) rc = wcs_buf_append(&b, "", 1);
  if (rc != WCS_OK) {
    wcs_buf_free(&b);
    return WCS_NOMEM;
  }
  *pz = (char *)b.a;
  return WCS_OK;
}

/* ====================================================================
** Executing: start, check
** ==================================================================== */

int ks_plan_streams(const ks_plan *pPlan) {
  return ((const PlanInt *)pPlan)->nStream;
}

static void streamBounds(const PlanInt *p, int iStream, int *piFirst,
                         int *piEnd) {
  if (iStream < 0 || iStream >= p->nStream) {
    *piFirst = 0;
    *piEnd = p->base.nRange;
  } else {
    *piFirst = p->aStream[iStream];
    *piEnd = p->aStream[iStream + 1];
  }
}

static int setSeek(wcs_buf *pSeek, const uint8_t *a, int n, int bAddZero) {
  pSeek->n = 0;
  if (n && wcs_buf_append(pSeek, a, (size_t)n)) return WCS_NOMEM;
  if (bAddZero && wcs_buf_append(pSeek, "", 1)) return WCS_NOMEM;
  return KS_SEEK;
}

/* Seek forward to the start of range r. */
static int seekStart(const ks_range *r, wcs_buf *pSeek) {
  if (r->bStartUnbounded) return setSeek(pSeek, NULL, 0, 0);
  return setSeek(pSeek, r->pStart, r->nStart, !r->bStartIncl);
}

/* Seek backward to the end of range r: the last key < target. */
static int seekEnd(const ks_range *r, wcs_buf *pSeek) {
  if (r->bEndUnbounded) return setSeek(pSeek, NULL, 0, 0);
  return setSeek(pSeek, r->pEnd, r->nEnd, r->bEndIncl);
}

int ks_plan_start(const ks_plan *pPlan, int iStream, int bReverse,
                  wcs_buf *pSeek) {
  const PlanInt *p = (const PlanInt *)pPlan;
  int iFirst, iEnd;
  streamBounds(p, iStream, &iFirst, &iEnd);
  if (iFirst >= iEnd) return KS_DONE;
  if (bReverse) return seekEnd(&pPlan->aRange[iEnd - 1], pSeek);
  return seekStart(&pPlan->aRange[iFirst], pSeek);
}

/* Index of the first range in [iFirst,iEnd) whose end is not below key
** (forward), or iEnd. */
static int firstNotBelow(const ks_plan *pl, int iFirst, int iEnd,
                         const uint8_t *k, int n) {
  int lo = iFirst, hi = iEnd;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    Bnd e = rangeHi(&pl->aRange[mid]);
    if (vsHi(k, n, &e) > 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Index of the last range in [iFirst,iEnd) whose start is not above key,
** or iFirst-1. */
static int lastNotAbove(const ks_plan *pl, int iFirst, int iEnd,
                        const uint8_t *k, int n) {
  int lo = iFirst, hi = iEnd;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    Bnd s = rangeLo(&pl->aRange[mid]);
    if (vsLo(k, n, &s) >= 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo - 1;
}

/* Forward: seek to the first plan key >= target (target in pSeek). */
static int clampForward(const ks_plan *pl, int iFirst, int iEnd, wcs_buf *pSeek,
                        int bInf) {
  int r;
  Bnd s;
  if (bInf) return KS_DONE;
  r = firstNotBelow(pl, iFirst, iEnd, pSeek->a, (int)pSeek->n);
  if (r >= iEnd) return KS_DONE;
  s = rangeLo(&pl->aRange[r]);
  if (vsLo(pSeek->a, (int)pSeek->n, &s) >= 0) return KS_SEEK;
  return seekStart(&pl->aRange[r], pSeek);
}

/* Reverse: seek to the last plan key < target (target in pSeek; bInf:
** minus infinity). */
static int clampReverse(const ks_plan *pl, int iFirst, int iEnd, wcs_buf *pSeek,
                        int bInf) {
  int lo = iFirst, hi = iEnd, r;
  Bnd e;
  if (bInf || pSeek->n == 0) return KS_DONE; /* nothing is below "" */
  /* last range whose start is below the target */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    Bnd s = rangeLo(&pl->aRange[mid]);
    int c = s.bInf ? -1 : cmpBytes(s.p, s.n, pSeek->a, (int)pSeek->n);
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  r = lo - 1;
  if (r < iFirst) return KS_DONE;
  e = rangeHi(&pl->aRange[r]);
  if (!e.bInf) {
    int c = cmpBytes(e.p, e.n, pSeek->a, (int)pSeek->n);
    if (c < 0 || (c == 0 && !e.bIncl)) return seekEnd(&pl->aRange[r], pSeek);
  }
  return KS_SEEK;
}

/* The skip-scan walk over the slots for a key inside range iRange. */
static int navigate(const PlanInt *p, int iFirst, int iEnd, const uint8_t *pKey,
                    int nKey, int bReverse, wcs_buf *pSeek) {
  const ks_schema *s = p->base.pSchema;
  const struct ks_plan_skip *sk = &p->skip;
  ks_view aView[KS_MAX_FIELDS];
  uint8_t aScratch[KS_MAX_KEY];
  wcs_buf scratch;
  const char *zWhy;
  int iField, f, nSalt = s->nSalt > 0 ? 1 : 0;
  const uint8_t *pLog = pKey + nSalt;
  int nLog = nKey - nSalt;
  int iBucket = nSalt ? pKey[0] : -1;

  if (nKey > KS_MAX_KEY || nLog < 0) return KS_MATCH;
  scratch.a = aScratch;
  scratch.n = 0;
  scratch.nAlloc = sizeof aScratch;
  if (ksSplitKey(s, pLog, nLog, aView, &scratch, &zWhy, &iField) != WCS_OK) {
    return KS_MATCH; /* let the caller's decode report the key */
  }
  for (f = 0; f < sk->nSlot; f++) {
    const IvlSet *S = &sk->aSlot[f];
    const uint8_t *x = aView[f].p;
    int nx = aView[f].n, lo, hi, eMode = -1, m = f, bIncl;
    ks_view aT[KS_MAX_FIELDS];
    if (S->bFull) continue;
    memcpy(aT, aView, sizeof(ks_view) * (size_t)f);
    if (!bReverse) {
      /* first interval whose upper end is not below x */
      lo = 0;
      hi = S->n;
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (vsHi(x, nx, &S->a[mid].hi) > 0)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (lo == S->n) {
        /* past the last interval: the next distinct prefix of f fields */
        if (f == 0) {
          if (iBucket < 0 || iBucket + 1 >= 256) {
            return clampForward(&p->base, iFirst, iEnd, pSeek, 1);
          }
          pSeek->n = 0;
          if (wcs_buf_append(pSeek, "", 1)) return WCS_NOMEM;
          pSeek->a[0] = (uint8_t)(iBucket + 1);
          return clampForward(&p->base, iFirst, iEnd, pSeek, 0);
        }
        eMode = KS_JOIN_HIGH;
      } else if (vsLo(x, nx, &S->a[lo].lo) < 0) {
        const Bnd *b = &S->a[lo].lo;
        aT[f].p = b->p;
        aT[f].n = b->n;
        m = f + 1;
        eMode = b->bIncl ? KS_JOIN_LOW : KS_JOIN_HIGH;
        if (m == s->nField && eMode == KS_JOIN_LOW) eMode = KS_JOIN_FULL;
      } else {
        continue; /* inside: next field */
      }
      pSeek->n = 0;
      if (nSalt && wcs_buf_append(pSeek, pKey, 1)) return WCS_NOMEM;
      if (ksJoin(s, aT, m, eMode, pSeek)) return WCS_NOMEM;
      return clampForward(&p->base, iFirst, iEnd, pSeek, 0);
    } else {
      /* last interval whose lower end is not above x */
      lo = 0;
      hi = S->n;
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (vsLo(x, nx, &S->a[mid].lo) >= 0)
          lo = mid + 1;
        else
          hi = mid;
      }
      lo--;
      if (lo < 0) {
        /* below the first interval: before this prefix of f fields */
        if (f == 0) {
          if (iBucket < 0) {
            return clampReverse(&p->base, iFirst, iEnd, pSeek, 1);
          }
          pSeek->n = 0;
          if (wcs_buf_append(pSeek, pKey, 1)) return WCS_NOMEM;
          return clampReverse(&p->base, iFirst, iEnd, pSeek, 0);
        }
        eMode = KS_JOIN_LOW;
      } else if (vsHi(x, nx, &S->a[lo].hi) > 0) {
        const Bnd *b = &S->a[lo].hi;
        aT[f].p = b->p;
        aT[f].n = b->n;
        m = f + 1;
        bIncl = b->bIncl;
        eMode = bIncl ? KS_JOIN_HIGH : KS_JOIN_LOW;
        if (m == s->nField && eMode == KS_JOIN_LOW) eMode = KS_JOIN_FULL;
      } else {
        continue;
      }
      pSeek->n = 0;
      if (nSalt && wcs_buf_append(pSeek, pKey, 1)) return WCS_NOMEM;
      if (ksJoin(s, aT, m, eMode, pSeek)) return WCS_NOMEM;
      return clampReverse(&p->base, iFirst, iEnd, pSeek, 0);
    }
  }
  return KS_MATCH;
}

int ks_plan_check_stream(const ks_plan *pPlan, int iStream, const uint8_t *pKey,
                         int nKey, int bReverse, wcs_buf *pSeek) {
  const PlanInt *p = (const PlanInt *)pPlan;
  int iFirst, iEnd, r;
  streamBounds(p, iStream, &iFirst, &iEnd);
  if (iFirst >= iEnd) return KS_DONE;
  if (!bReverse) {
    Bnd s;
    r = firstNotBelow(pPlan, iFirst, iEnd, pKey, nKey);
    if (r >= iEnd) return KS_DONE;
    s = rangeLo(&pPlan->aRange[r]);
    if (vsLo(pKey, nKey, &s) < 0) return seekStart(&pPlan->aRange[r], pSeek);
  } else {
    Bnd e;
    r = lastNotAbove(pPlan, iFirst, iEnd, pKey, nKey);
    if (r < iFirst) return KS_DONE;
    e = rangeHi(&pPlan->aRange[r]);
    if (vsHi(pKey, nKey, &e) > 0) return seekEnd(&pPlan->aRange[r], pSeek);
  }
  if (pPlan->pSkip == NULL) return KS_MATCH;
  return navigate(p, iFirst, iEnd, pKey, nKey, bReverse, pSeek);
}

int ks_plan_check(const ks_plan *pPlan, const uint8_t *pKey, int nKey,
                  int bReverse, wcs_buf *pSeek) {
  return ks_plan_check_stream(pPlan, -1, pKey, nKey, bReverse, pSeek);
}

/* A skip plan decides by the fields it navigates (nSlot of them) and by
** its ranges: every key that starts with the same bytes as pKey up to and
** including the delimiter after field nSlot - 1 has the same first nSlot
** fields, so navigate() says the same of it; the ranges are the caller's
** to keep. Only for delimited keys without salt: there those fields end
** where their bytes do. */
int ks_plan_match_prefix(const ks_plan *pPlan, const uint8_t *pKey, int nKey) {
  const ks_schema *s = pPlan->pSchema;
  const struct ks_plan_skip *sk = pPlan->pSkip;
  ks_view aView[KS_MAX_FIELDS];
  const char *zWhy;
  int iField, n;
  if (sk == NULL || sk->nSlot < 1 || sk->nSlot >= s->nField ||
      s->eStruct != KS_STRUCT_DELIMITED || s->nSalt > 0 || nKey > KS_MAX_KEY ||
      ksSplitKey(s, pKey, nKey, aView, NULL, &zWhy, &iField) != WCS_OK) {
    return 0;
  }
  n = (int)(aView[sk->nSlot - 1].p - pKey) + aView[sk->nSlot - 1].n + s->nDelim;
  return n <= nKey ? n : 0;
}
