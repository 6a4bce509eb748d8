/*
** upper.c — the sources above a compaction's input, and the question the
** compaction filter asks about them: could a delete there hide a key of
** [lo, hi)? See upper.h, and doc/storage.md ("Compaction filter").
**
** A source set is memtables (referenced) plus a version (referenced) of
** which only the files above the input count: every file of the levels
** above the input level, and the files of the input level that are not
** inputs. The latter matter at every level: a level-0 file left out is
** newer than the inputs, and a file of level i >= 1 left out, though
** disjoint from the inputs of level i, may overlap the inputs taken from
** the level below, whose keys it holds newer data for. A
** probe seeks a merged iterator over their point entries to lo and scans
** [lo, hi) for a delete, then looks for a range tombstone overlapping
** [lo, hi) among the memtables' tombstones and the files' fragments.
** With iMinSeq set (the recheck), only deletes and tombstones newer than
** it count, and files holding nothing newer are left out.
**
** The probe is conservative throughout: an error while building or
** scanning, or no memory to remember the answer, makes it "covered".
** Every delete counts, even one that covers a whole column and could not
** hurt (see doc/engine.md): telling them apart needs the key format,
** which the store does not know.
*/
#include "storage/upper.h"

#include <stdlib.h>
#include <string.h>

#include "storage/ikey.h"
#include "storage/merge.h"
#include "wcs.h"

#define UPPER_MAX_MEM   8   /* memtables of a store: active + immutables */
#define UPPER_MAX_SPANS 512 /* remembered spans before pairs are merged */

/* Memtables, and the files of a version above a compaction's input. */
typedef struct Src {
  wcs_memtable *apMem[UPPER_MAX_MEM]; /* referenced */
  int nMem;
  wcs_version *pV;  /* referenced */
  int iLevel;       /* the input level: files of levels above it count,
                    ** and its own files that are not inputs */
  uint64_t *aSkip;  /* file numbers of the inputs of level iLevel */
  int nSkip;        /* shared with the owning wcs_upper, not freed here */
  uint64_t iMinSeq; /* only newer deletes count (0: all) */
  wcs_iiter *pIt;   /* merged point entries; built on first probe */
  int bBuilt;       /* pIt built (NULL when there are no entries) */
  int bPartial;     /* more memtables than apMem holds: always covered */
} Src;

/* A range answered "not covered": [lo, hi) as offsets into aKey. */
typedef struct Span {
  size_t oLo, nLo, oHi, nHi;
  int bHiInf; /* unbounded above */
} Span;

struct wcs_upper {
  Src src;         /* as of the pick */
  uint64_t *aSkip; /* input file numbers of the input level */
  int nSkip;
  uint64_t iPickSeq; /* the store's last seq at the pick */
  int bNoCount;      /* every probe answers covered */
  wcs_buf first;     /* first user key offered in this run */
  int bFirst;        /* first is set */
  Span *aSpan;       /* ascending, disjoint */
  int nSpan;
  wcs_buf spanKeys; /* keys of aSpan */
};

/* Key bytes at offset o of the span keys ("" while there are none). */
static const uint8_t *spanKey(const wcs_upper *p, size_t o) {
  return p->spanKeys.a ? p->spanKeys.a + o : (const uint8_t *)"";
}

/* The compaction running on this thread, if it has upper sources. */
static _Thread_local wcs_upper *tlsUpper;

static void srcClear(Src *s) {
  int i;
  if (s->pIt) s->pIt->pMethods->xClose(s->pIt);
  s->pIt = NULL;
  s->bBuilt = 0;
  for (i = 0; i < s->nMem; i++)
    memtable_unref(s->apMem[i]);
  s->nMem = 0;
  if (s->pV) version_unref(s->pV);
  s->pV = NULL;
}

static void srcInit(Src *s, wcs_memtable *pMem, wcs_memtable *const *apImm,
                    int nImm, wcs_version *v, int iLevel, uint64_t *aSkip,
                    int nSkip, uint64_t iMinSeq) {
  int i;
  memset(s, 0, sizeof *s);
  if (pMem) {
    s->apMem[s->nMem++] = pMem;
    memtable_ref(pMem);
  }
  for (i = 0; i < nImm; i++) {
    if (s->nMem == UPPER_MAX_MEM) {
      s->bPartial = 1;
      break;
    }
    s->apMem[s->nMem++] = apImm[i];
    memtable_ref(apImm[i]);
  }
  s->pV = v;
  version_ref(v);
  s->iLevel = iLevel;
  s->aSkip = aSkip;
  s->nSkip = nSkip;
  s->iMinSeq = iMinSeq;
}

/* Does file f of level iLvl lie above the input? */
static int srcHasFile(const Src *s, int iLvl, const wcs_fmeta *f) {
  int i;
  if (iLvl > s->iLevel) return 0;
  if (s->iMinSeq && f->maxSeq <= s->iMinSeq) return 0;
  if (iLvl == s->iLevel) {
    for (i = 0; i < s->nSkip; i++) {
      if (s->aSkip[i] == f->iFile) return 0;
    }
  }
  return 1;
}

static int pushIt(wcs_iiter ***pa, int *pn, int *pnAlloc, wcs_iiter *it) {
  if (*pn == *pnAlloc) {
    int n = *pnAlloc ? 2 * *pnAlloc : 8;
    wcs_iiter **a = realloc(*pa, sizeof(wcs_iiter *) * (size_t)n);
    if (a == NULL) {
      it->pMethods->xClose(it);
      return WCS_NOMEM;
    }
    *pa = a;
    *pnAlloc = n;
  }
  (*pa)[(*pn)++] = it;
  return WCS_OK;
}

/* Build the merged iterator over the point entries of s. */
static int srcBuild(Src *s) {
  wcs_iiter **a = NULL, *it;
  wcs_fmeta **aSel = NULL;
  int n = 0, nAlloc = 0, rc = WCS_OK, i, j, k;
  char *zErr = NULL;
  s->bBuilt = 1;
  for (i = 0; rc == WCS_OK && i < s->nMem; i++) {
    /* even an empty memtable: the probe sees what is added later */
    rc = memtable_iter(s->apMem[i], &it);
    if (rc == WCS_OK) rc = pushIt(&a, &n, &nAlloc, it);
  }
  for (i = 0; rc == WCS_OK && i < WCS_NLEVEL && i <= s->iLevel; i++) {
    int nF = s->pV->anFile[i];
    if (nF == 0) continue;
    free(aSel);
    aSel = malloc(sizeof(wcs_fmeta *) * (size_t)nF);
    if (aSel == NULL) {
      rc = WCS_NOMEM;
      break;
    }
    for (j = k = 0; j < nF; j++) {
      if (srcHasFile(s, i, s->pV->aaFile[i][j]))
        aSel[k++] = s->pV->aaFile[i][j];
    }
    if (k == 0) continue;
    if (i == 0) {
      for (j = 0; rc == WCS_OK && j < k; j++) {
        rc = sst_reader_iter(aSel[j]->pReader, 0, &it, &zErr);
        if (rc == WCS_OK) rc = pushIt(&a, &n, &nAlloc, it);
      }
    } else {
      rc = level_iter_new(aSel, k, 0, &it);
      if (rc == WCS_OK) rc = pushIt(&a, &n, &nAlloc, it);
    }
  }
  free(aSel);
  free(zErr);
  if (rc == WCS_OK && n > 0) {
    rc = merge_iter_new(a, n, &s->pIt);
    n = 0;
  }
  for (i = 0; i < n; i++)
    a[i]->pMethods->xClose(a[i]);
  free(a);
  return rc;
}

/* memtable_rangedels callback: stop at a tombstone newer than iMinSeq. */
static int delHit(void *pCtx, const sst_rangedel *d) {
  const Src *s = pCtx;
  return d->seq > s->iMinSeq ? 1 : 0;
}

/* Does a fragment of f newer than iMinSeq overlap [lo, hi)? */
static int fragsOverlap(const wcs_frags *fr, const uint8_t *pLo, size_t nLo,
                        const uint8_t *pHi, size_t nHi, uint64_t iMinSeq) {
  int k;
  for (k = frags_first_after(fr, pLo, nLo); k < fr->n; k++) {
    const wcs_frag *m = &fr->a[k];
    if (pHi && wcs_ukey_cmp(m->pStart, m->nStart, pHi, nHi) >= 0) break;
    if (m->aSeq[0] > iMinSeq) return 1; /* aSeq is descending */
  }
  return 0;
}

/* Could a delete of s (newer than s->iMinSeq) hide a key of [lo, hi)?
** hi NULL: unbounded. Sets *pb; an error sets it to 1 and is returned. */
static int srcProbe(Src *s, const uint8_t *pLo, size_t nLo, const uint8_t *pHi,
                    size_t nHi, int *pb) {
  wcs_buf seek = {0};
  int i, j, rc = WCS_OK;
  *pb = 1;
  if (s->bPartial) return WCS_OK;
  if (!s->bBuilt) {
    rc = srcBuild(s);
    if (rc) return rc;
  }
  /* point deletes */
  if (s->pIt) {
    wcs_iiter *it = s->pIt;
    if (wcs_buf_append(&seek, pLo, nLo) ||
        wcs_buf_append64(&seek, WCS_IKEY_SENTINEL)) {
      wcs_buf_free(&seek);
      return WCS_NOMEM;
    }
    it->pMethods->xSeek(it, seek.a, seek.n);
    wcs_buf_free(&seek);
    while (it->pMethods->xValid(it)) {
      size_t nK;
      const uint8_t *k = it->pMethods->xKey(it, &nK);
      if (nK < WCS_IKEY_TRAILER) return WCS_CORRUPT;
      if (pHi && wcs_ukey_cmp(k, nK - WCS_IKEY_TRAILER, pHi, nHi) >= 0) break;
      if (wcs_ikey_type(k, nK) != WCS_KT_PUT &&
          wcs_ikey_seq(k, nK) > s->iMinSeq) {
        return WCS_OK; /* covered */
      }
      it->pMethods->xNext(it);
    }
    if (!it->pMethods->xValid(it)) {
      char *zErr = NULL;
      rc = it->pMethods->xStatus(it, &zErr);
      free(zErr);
      if (rc) {
        /* the iterator is spent: build a new one at the next probe */
        it->pMethods->xClose(it);
        s->pIt = NULL;
        s->bBuilt = 0;
        return rc;
      }
    }
  }
  /* range tombstones */
  for (i = 0; i < s->nMem; i++) {
    if (memtable_rangedel_count(s->apMem[i]) &&
        memtable_rangedels(s->apMem[i], WCS_SEQ_MAX, pLo, nLo, pHi, nHi, s,
                           delHit)) {
      return WCS_OK;
    }
  }
  for (i = 0; i < WCS_NLEVEL && i <= s->iLevel; i++) {
    for (j = 0; j < s->pV->anFile[i]; j++) {
      wcs_fmeta *f = s->pV->aaFile[i][j];
      if (f->frags.n == 0 || !srcHasFile(s, i, f)) continue;
      if (!fmeta_overlaps(f, pLo, nLo, pHi, nHi)) continue;
      if (fragsOverlap(&f->frags, pLo, nLo, pHi, nHi, s->iMinSeq)) {
        return WCS_OK;
      }
    }
  }
  *pb = 0;
  return WCS_OK;
}

int upper_new(wcs_memtable *pMem, wcs_memtable *const *apImm, int nImm,
              const wcs_compaction *c, uint64_t iPickSeq, wcs_upper **pp) {
  wcs_upper *p = calloc(1, sizeof *p);
  int i;
  *pp = NULL;
  if (p == NULL) return WCS_NOMEM;
  if (c->anIn[0] > 0) {
    p->aSkip = malloc(sizeof(uint64_t) * (size_t)c->anIn[0]);
    if (p->aSkip == NULL) {
      free(p);
      return WCS_NOMEM;
    }
    for (i = 0; i < c->anIn[0]; i++)
      p->aSkip[i] = c->aaIn[0][i]->iFile;
    p->nSkip = c->anIn[0];
  }
  p->iPickSeq = iPickSeq;
  srcInit(&p->src, pMem, apImm, nImm, c->pVersion, c->iLevel, p->aSkip,
          p->nSkip, 0);
  *pp = p;
  return WCS_OK;
}

void upper_free(wcs_upper *p) {
  if (p == NULL) return;
  if (tlsUpper == p) tlsUpper = NULL;
  srcClear(&p->src);
  free(p->aSkip);
  free(p->aSpan);
  wcs_buf_free(&p->first);
  wcs_buf_free(&p->spanKeys);
  free(p);
}

void upper_set_nocount(wcs_upper *p) {
  if (p) p->bNoCount = 1;
}

void upper_enter(wcs_upper *p) {
  tlsUpper = p;
  if (p) p->bFirst = 0;
}

int upper_offered(wcs_upper *p, const uint8_t *k, size_t n) {
  if (p == NULL || p->bFirst) return WCS_OK;
  p->first.n = 0;
  if (wcs_buf_append(&p->first, k, n)) return WCS_NOMEM;
  p->bFirst = 1;
  return WCS_OK;
}

/* Merge the spans pairwise (each pair becomes the range from the first's
** start to the second's end), copying the keys still used. */
static int spansHalve(wcs_upper *p) {
  wcs_buf nb = {0};
  int i, w = 0;
  for (i = 0; i < p->nSpan; i += 2) {
    const Span *a = &p->aSpan[i];
    const Span *b = i + 1 < p->nSpan ? &p->aSpan[i + 1] : a;
    Span s;
    s.oLo = nb.n;
    s.nLo = a->nLo;
    if (wcs_buf_append(&nb, spanKey(p, a->oLo), a->nLo)) goto nomem;
    s.oHi = nb.n;
    s.nHi = b->nHi;
    s.bHiInf = b->bHiInf;
    if (wcs_buf_append(&nb, spanKey(p, b->oHi), b->nHi)) {
      goto nomem;
    }
    p->aSpan[w++] = s;
  }
  wcs_buf_free(&p->spanKeys);
  p->spanKeys = nb;
  p->nSpan = w;
  return WCS_OK;
nomem:
  wcs_buf_free(&nb);
  return WCS_NOMEM;
}

/* Remember [lo, hi) as answered "not covered". */
static int spanAdd(wcs_upper *p, const uint8_t *pLo, size_t nLo,
                   const uint8_t *pHi, size_t nHi) {
  Span s;
  if (p->nSpan == UPPER_MAX_SPANS && spansHalve(p)) return WCS_NOMEM;
  if (p->aSpan == NULL) {
    p->aSpan = malloc(sizeof(Span) * UPPER_MAX_SPANS);
    if (p->aSpan == NULL) return WCS_NOMEM;
  }
  s.oLo = p->spanKeys.n;
  s.nLo = nLo;
  if (wcs_buf_append(&p->spanKeys, pLo, nLo)) return WCS_NOMEM;
  s.oHi = p->spanKeys.n;
  s.nHi = pHi ? nHi : 0;
  s.bHiInf = pHi == NULL;
  if (pHi && wcs_buf_append(&p->spanKeys, pHi, nHi)) return WCS_NOMEM;
  p->aSpan[p->nSpan++] = s;
  return WCS_OK;
}

int wcs_compaction_covered(const void *pLo, size_t nLo, const void *pHi,
                           size_t nHi, int *pbCovered) {
  wcs_upper *p = tlsUpper;
  int rc, b;
  if (pbCovered == NULL) return WCS_MISUSE;
  *pbCovered = 1;
  if (p == NULL || pLo == NULL) return WCS_MISUSE;
  /* a range reaching before this run's first offered key holds keys the
  ** run did not offer (an earlier compaction's): never vouch for those */
  if (p->bNoCount || !p->bFirst ||
      wcs_ukey_cmp(pLo, nLo, p->first.a, p->first.n) < 0) {
    return WCS_OK;
  }
  if (pHi && wcs_ukey_cmp(pLo, nLo, pHi, nHi) >= 0) {
    *pbCovered = 0; /* empty */
    return WCS_OK;
  }
  rc = srcProbe(&p->src, pLo, nLo, pHi, nHi, &b);
  if (rc) return rc;
  if (!b && spanAdd(p, pLo, nLo, pHi, nHi)) return WCS_NOMEM;
  *pbCovered = b;
  return WCS_OK;
}

int upper_counted(const wcs_upper *p) {
  return p && !p->bNoCount && p->nSpan > 0;
}

int upper_recheck(wcs_upper *p, wcs_memtable *pMem, wcs_memtable *const *apImm,
                  int nImm, wcs_version *vNow) {
  Src s;
  int i, b = 0;
  if (p == NULL || p->nSpan == 0) return 0;
  srcInit(&s, pMem, apImm, nImm, vNow, p->src.iLevel, p->aSkip, p->nSkip,
          p->iPickSeq);
  for (i = 0; i < p->nSpan && !b; i++) {
    const Span *sp = &p->aSpan[i];
    const uint8_t *pHi = sp->bHiInf ? NULL : spanKey(p, sp->oHi);
    if (srcProbe(&s, spanKey(p, sp->oLo), sp->nLo, pHi, sp->nHi, &b)) {
      b = 1;
    }
  }
  srcClear(&s);
  return b;
}
