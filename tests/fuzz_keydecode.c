/*
** fuzz_keydecode.c — fuzz target for the row key decoder and the plan
** stepping function (keyschema/codec.c, plan.c). The first input byte picks
** one of a few schemas, the rest is a row key. A key that decodes must
** encode back to the same bytes (decoding is strict); a key that does not
** must get a message naming it. Each key is also checked against a skip
** plan forward and in reverse: a seek must move strictly past the key.
** Where a key splits and its schema lets a split resume at a field
** boundary, the key with one byte after each boundary dropped must split
** from that boundary exactly as it splits whole (ks_key_split_from), and
** its last field, taken from its offset, must decode as an integer
** (ks_key_last_int) exactly when the field decodes, to the same value
** (an ORDERED CODE field holding a 00 byte is left to the general path).
** Seeds in tests/corpus/keydecode/.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyschema/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const azSchema[] = {
    "KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#'",
    "KEY (a STRING, n INT64, t TIMESTAMP BIG ENDIAN, b BYTES) ORDERED CODE",
    "KEY (n INT64 ORDERED CODE)",
    "KEY (a STRING, t TIMESTAMP REVERSED DECIMAL(4)) DELIMITED BY '#|' SALT 4",
    "KEY (a BYTES, b STRING) ORDERED CODE SALT 3",
    "KEY (a BYTES, b BYTES) DELIMITED BY X'00'",
};
#define NSCHEMA (int)(sizeof(azSchema) / sizeof(azSchema[0]))

static ks_schema *aSchema[NSCHEMA];
static ks_plan *aPlan[NSCHEMA];
static ks_value aSkipVal[NSCHEMA];

static void setup(void) {
  int i;
  for (i = 0; i < NSCHEMA; i++) {
    ks_constraint c;
    ks_plan_opts o = {0, 1};
    if (ks_parse_text(azSchema[i], &aSchema[i], NULL) != WCS_OK) abort();
    /* a constraint on the last field: a skip plan */
    memset(&c, 0, sizeof c);
    memset(&aSkipVal[i], 0, sizeof(ks_value));
    c.iField = aSchema[i]->nField - 1;
    c.op = KS_OP_GE;
    c.aVal = &aSkipVal[i];
    c.nVal = 1;
    if (aSchema[i]->aField[c.iField].eType == KS_STRING ||
        aSchema[i]->aField[c.iField].eType == KS_BYTES) {
      aSkipVal[i].eType = KS_VAL_BYTES;
      aSkipVal[i].p = (const uint8_t *)"b";
      aSkipVal[i].n = 1;
    } else {
      aSkipVal[i].eType = KS_VAL_INT;
      aSkipVal[i].i = 5;
    }
    if (ks_plan_make(aSchema[i], &c, 1, &o, &aPlan[i], NULL) != WCS_OK) {
      abort();
    }
  }
}

/* Field views of two splits of one key agree: the same place in the key,
** or the same bytes where a field was unescaped into a scratch buffer. */
static int sameView(const ks_value *a, const ks_value *b, const uint8_t *pKey,
                    int nKey) {
  if (a->n != b->n) return 0;
  if (b->p >= pKey && b->p <= pKey + nKey) return a->p == b->p;
  return a->n == 0 || memcmp(a->p, b->p, (size_t)a->n) == 0;
}

/* ks_key_split_from against a whole split (see the file comment). */
static void checkSplitFrom(const ks_schema *s, const uint8_t *pKey, int nKey) {
  static wcs_buf scratchK, scratchW, scratchW2, scratchF;
  ks_value aW[KS_MAX_FIELDS], aW2[KS_MAX_FIELDS], aF[KS_MAX_FIELDS];
  ks_value aK[KS_MAX_FIELDS];
  int aOffK[KS_MAX_FIELDS], aOffW[KS_MAX_FIELDS], aOffF[KS_MAX_FIELDS];
  static uint8_t aNew[KS_MAX_KEY + 1];
  int k, i, nKeep;
  if (!ks_key_split_resumes(s) || nKey > KS_MAX_KEY ||
      ks_key_split_from(s, pKey, nKey, 0, 0, aK, aOffK, &scratchK, NULL) !=
          WCS_OK) {
    return;
  }
  /* a split may start at a field the key holds, the views before it in
  ** the key */
  for (nKeep = 0; nKeep < s->nField && aOffK[nKeep] >= 0; nKeep++) {
    if (aK[nKeep].p != pKey + aOffK[nKeep]) {
      nKeep++;
      break;
    }
  }
  for (k = 1; k < nKeep; k++) {
    int iOff = aOffK[k], nNew = nKey, rcW, rcF;
    memcpy(aNew, pKey, (size_t)nKey);
    if (iOff < nKey) {
      memmove(aNew + iOff, aNew + iOff + 1, (size_t)(nKey - iOff - 1));
      nNew--;
    }
    for (i = 0; i < k; i++) {
      aF[i] = aK[i];
      aF[i].p = aNew + (aK[i].p - pKey);
    }
    rcW = ks_key_split_from(s, aNew, nNew, 0, 0, aW, aOffW, &scratchW, NULL);
    if (rcW != ks_key_split(s, aNew, nNew, aW2, &scratchW2, NULL)) abort();
    rcF = ks_key_split_from(s, aNew, nNew, k, iOff, aF, aOffF, &scratchF, NULL);
    if (rcW != rcF) abort();
    for (i = 0; rcW == WCS_OK && i < s->nField; i++) {
      if (!sameView(&aF[i], &aW[i], aNew, nNew)) abort();
      if (i >= k && aOffF[i] != aOffW[i]) abort();
    }
  }
  if (aOffK[s->nField - 1] >= 0) {
    /* the last field from its offset (the key split above) */
    const ks_field *f = &s->aField[s->nField - 1];
    int iOff = aOffK[s->nField - 1], bInt, rcD, bZero = 0;
    int64_t v = 0;
    for (i = iOff; i < nKey; i++)
      bZero |= pKey[i] == 0;
    bInt = (f->eType == KS_INT64 || f->eType == KS_TIMESTAMP) &&
           (s->eStruct == KS_STRUCT_ORDERED_CODE
                ? !bZero
                : (f->eEnc == KS_ENC_DECIMAL ||
                   f->eEnc == KS_ENC_REVERSED_DECIMAL) &&
                      s->nDelim == 1);
    rcD = ks_key_field_decode(s, s->nField - 1, &aK[s->nField - 1], pKey, nKey,
                              NULL);
    if (ks_key_last_int(s, pKey, nKey, iOff, &v) == WCS_OK) {
      if (!bInt || rcD != WCS_OK || aK[s->nField - 1].i != v) abort();
    } else if (bInt && rcD == WCS_OK) {
      abort();
    }
  }
}

static int cmpKey(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
  size_t n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, n) : 0;
  if (c) return c;
  return na < nb ? -1 : na > nb;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int bInit = 0;
  static wcs_buf scratch, out, seek;
  ks_value aOut[KS_MAX_FIELDS];
  const ks_schema *s;
  const uint8_t *pKey;
  int nKey, rc, bRev;
  char *zErr = NULL;
  if (!bInit) {
    setup();
    bInit = 1;
  }
  if (size < 1) return 0;
  s = aSchema[data[0] % NSCHEMA];
  pKey = data + 1;
  nKey = (int)(size - 1);
  rc = ks_key_decode(s, pKey, nKey, aOut, &scratch, &zErr);
  if (rc == WCS_OK) {
    out.n = 0;
    if (ks_key_encode(s, aOut, &out, NULL) != WCS_OK) abort();
    if (out.n != (size_t)nKey || (nKey && memcmp(out.a, pKey, out.n) != 0)) {
      abort();
    }
  } else {
    if (rc != WCS_MISMATCH || zErr == NULL) abort();
    if (strncmp(zErr, "row key '", 9) != 0) abort();
  }
  free(zErr);
  checkSplitFrom(s, pKey, nKey);
  for (bRev = 0; bRev < 2; bRev++) {
    const ks_plan *p = aPlan[data[0] % NSCHEMA];
    rc = ks_plan_check(p, pKey, nKey, bRev, &seek);
    if (rc == KS_SEEK) {
      int c = cmpKey(seek.a, seek.n, pKey, (size_t)nKey);
      if (bRev ? (seek.n == 0 || c > 0) : c <= 0) abort();
    } else if (rc != KS_MATCH && rc != KS_DONE) {
      abort();
    }
  }
  return 0;
}
