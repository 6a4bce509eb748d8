/*
** schema.c — the ks_schema object: freeing, copying, comparing, lookups by
** name, and the canonical text form.
**
** Canonical text is what the catalog stores and `.schema` shows. It is the
** DDL clauses separated by ", " in a fixed order — KEY, the FAMILY clauses
** in declaration order, STORE, TABLE, SYNC, COMPRESSION, CACHE, HISTORY —
** with every non-default choice spelled out: INT64/TIMESTAMP key encodings,
** DELIMITED BY for multi-field keys, INT64 value encodings, INTERSECTION.
** Names are written bare when they are plain identifiers that are not
** keywords, otherwise "double-quoted". ks_parse_text() of the text gives a
** schema that ks_schema_equal() finds equal; tests/check_keyschema_ddl.c
** and tests/fuzz_ddl.c hold that property.
*/
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyschema/ksint.h"

/* ---- small string helpers */

int ksStrICmp(const char *zA, const char *zB) {
  const unsigned char *a = (const unsigned char *)zA;
  const unsigned char *b = (const unsigned char *)zB;
  for (;; a++, b++) {
    int ca = tolower(*a), cb = tolower(*b);
    if (ca != cb || ca == 0) return ca - cb;
  }
}

char *ksStrDup(const char *z) {
  size_t n;
  char *zOut;
  if (z == NULL) return NULL;
  n = strlen(z);
  zOut = malloc(n + 1);
  if (zOut) memcpy(zOut, z, n + 1);
  return zOut;
}

static const char *const azKeyword[] = {
    "KEY",         "FAMILY",    "STORE", "TABLE",   "SYNC",         "HISTORY",
    "COMPRESSION", "DELIMITED", "BY",    "ORDERED", "CODE",         "SALT",
    "MAX",         "VERSIONS",  "AGE",   "UNION",   "INTERSECTION", "AGGREGATE",
    "CACHE",
};

int ksIsKeyword(const char *z, int n) {
  size_t i;
  for (i = 0; i < sizeof(azKeyword) / sizeof(azKeyword[0]); i++) {
    const char *k = azKeyword[i];
    int j;
    for (j = 0; j < n && k[j]; j++) {
      if (toupper((unsigned char)z[j]) != k[j]) break;
    }
    if (j == n && k[j] == 0) return 1;
  }
  return 0;
}

int ksIsBareName(const char *z) {
  int i;
  if (!(isalpha((unsigned char)z[0]) || z[0] == '_')) return 0;
  for (i = 1; z[i]; i++) {
    if (!(isalnum((unsigned char)z[i]) || z[i] == '_')) return 0;
  }
  return !ksIsKeyword(z, i);
}

/* ---- names of types and encodings */

const char *ks_type_name(ks_type eType) {
  switch (eType) {
  case KS_STRING:
    return "STRING";
  case KS_BYTES:
    return "BYTES";
  case KS_INT64:
    return "INT64";
  case KS_TIMESTAMP:
    return "TIMESTAMP";
  }
  return "?";
}

const char *ks_enc_name(ks_enc eEnc) {
  switch (eEnc) {
  case KS_ENC_UTF8:
    return "UTF8";
  case KS_ENC_RAW:
    return "RAW";
  case KS_ENC_BIG_ENDIAN:
    return "BIG ENDIAN";
  case KS_ENC_ORDERED_CODE:
    return "ORDERED CODE";
  case KS_ENC_DECIMAL:
    return "DECIMAL";
  case KS_ENC_REVERSED_DECIMAL:
    return "REVERSED DECIMAL";
  }
  return "?";
}

const char *ks_vtype_name(ks_vtype e) {
  switch (e) {
  case KS_V_INT64:
    return "INT64";
  case KS_V_FLOAT64:
    return "FLOAT64";
  case KS_V_STRING:
    return "STRING";
  case KS_V_BYTES:
    return "BYTES";
  case KS_V_JSON:
    return "JSON";
  }
  return "?";
}

static const char *aggName(ks_agg e) {
  switch (e) {
  case KS_AGG_NONE:
    return "";
  case KS_AGG_SUM:
    return "SUM";
  case KS_AGG_MIN:
    return "MIN";
  case KS_AGG_MAX:
    return "MAX";
  case KS_AGG_HLL:
    return "HLL";
  }
  return "?";
}

/* ---- lifetime */

void ks_schema_free(ks_schema *s) {
  int i;
  if (s == NULL) return;
  for (i = 0; i < s->nField; i++)
    free(s->aField[i].zName);
  for (i = 0; i < s->nFamily; i++)
    free(s->aFamily[i].zName);
  for (i = 0; i < s->nQual; i++)
    free(s->aQual[i].zName);
  free(s->aField);
  free(s->aFamily);
  free(s->aQual);
  free(s->zStore);
  free(s->zTable);
  free(s);
}

int ks_schema_dup(const ks_schema *s, ks_schema **ppOut) {
  ks_schema *d;
  int i, bOom = 0;
  *ppOut = NULL;
  d = calloc(1, sizeof(*d));
  if (d == NULL) return WCS_NOMEM;
  *d = *s;
  d->aField = NULL;
  d->aFamily = NULL;
  d->aQual = NULL;
  d->nField = d->nFamily = d->nQual = 0;
  d->zStore = ksStrDup(s->zStore);
  d->zTable = ksStrDup(s->zTable);
  if ((s->zStore && !d->zStore) || (s->zTable && !d->zTable)) bOom = 1;
  if (!bOom && s->nField) {
    d->aField = calloc((size_t)s->nField, sizeof(ks_field));
    if (d->aField == NULL) bOom = 1;
    for (i = 0; !bOom && i < s->nField; i++) {
      d->aField[i] = s->aField[i];
      d->aField[i].zName = ksStrDup(s->aField[i].zName);
      d->nField++;
      if (d->aField[i].zName == NULL) bOom = 1;
    }
  }
  if (!bOom && s->nFamily) {
    d->aFamily = calloc((size_t)s->nFamily, sizeof(ks_family));
    if (d->aFamily == NULL) bOom = 1;
    for (i = 0; !bOom && i < s->nFamily; i++) {
      d->aFamily[i] = s->aFamily[i];
      d->aFamily[i].zName = ksStrDup(s->aFamily[i].zName);
      d->nFamily++;
      if (d->aFamily[i].zName == NULL) bOom = 1;
    }
  }
  if (!bOom && s->nQual) {
    d->aQual = calloc((size_t)s->nQual, sizeof(ks_qualifier));
    if (d->aQual == NULL) bOom = 1;
    for (i = 0; !bOom && i < s->nQual; i++) {
      d->aQual[i] = s->aQual[i];
      d->aQual[i].zName = ksStrDup(s->aQual[i].zName);
      d->nQual++;
      if (d->aQual[i].zName == NULL) bOom = 1;
    }
  }
  if (bOom) {
    ks_schema_free(d);
    return WCS_NOMEM;
  }
  *ppOut = d;
  return WCS_OK;
}

static int strEq(const char *a, const char *b) {
  if (a == NULL || b == NULL) return a == b;
  return strcmp(a, b) == 0;
}

int ks_schema_equal(const ks_schema *a, const ks_schema *b) {
  int i;
  if (a->nField != b->nField || a->eStruct != b->eStruct ||
      a->nDelim != b->nDelim || a->nSalt != b->nSalt ||
      a->nFamily != b->nFamily || a->nQual != b->nQual ||
      a->iSync != b->iSync || a->bHistory != b->bHistory ||
      a->iZstdLevel != b->iZstdLevel || a->bKeyClause != b->bKeyClause ||
      a->nCacheBytes != b->nCacheBytes) {
    return 0;
  }
  if (memcmp(a->aDelim, b->aDelim, (size_t)a->nDelim) != 0) return 0;
  if (!strEq(a->zStore, b->zStore) || !strEq(a->zTable, b->zTable)) return 0;
  for (i = 0; i < a->nField; i++) {
    const ks_field *x = &a->aField[i], *y = &b->aField[i];
    if (!strEq(x->zName, y->zName) || x->eType != y->eType ||
        x->eEnc != y->eEnc || x->nWidth != y->nWidth) {
      return 0;
    }
  }
  for (i = 0; i < a->nFamily; i++) {
    const ks_family *x = &a->aFamily[i], *y = &b->aFamily[i];
    if (!strEq(x->zName, y->zName) || x->eAgg != y->eAgg ||
        x->nMaxVersions != y->nMaxVersions ||
        x->nMaxAgeMicros != y->nMaxAgeMicros || x->eGc != y->eGc ||
        x->iFirstQual != y->iFirstQual || x->nQual != y->nQual) {
      return 0;
    }
  }
  for (i = 0; i < a->nQual; i++) {
    const ks_qualifier *x = &a->aQual[i], *y = &b->aQual[i];
    if (x->iFamily != y->iFamily || !strEq(x->zName, y->zName) ||
        x->eVType != y->eVType || x->eEnc != y->eEnc ||
        x->nWidth != y->nWidth) {
      return 0;
    }
  }
  return 1;
}

/* ---- lookups */

int ks_schema_field(const ks_schema *s, const char *zName) {
  int i;
  for (i = 0; i < s->nField; i++) {
    if (ksStrICmp(s->aField[i].zName, zName) == 0) return i;
  }
  return -1;
}

int ks_schema_family(const ks_schema *s, const char *zName) {
  int i;
  for (i = 0; i < s->nFamily; i++) {
    if (ksStrICmp(s->aFamily[i].zName, zName) == 0) return i;
  }
  return -1;
}

int ks_schema_qualifier(const ks_schema *s, const char *zName) {
  int i;
  for (i = 0; i < s->nQual; i++) {
    if (ksStrICmp(s->aQual[i].zName, zName) == 0) return i;
  }
  return -1;
}

/* ---- canonical text */

static int putStr(wcs_buf *b, const char *z) {
  return wcs_buf_append(b, z, strlen(z));
}

static int putName(wcs_buf *b, const char *z) {
  int rc = WCS_OK;
  if (ksIsBareName(z)) return putStr(b, z);
  rc = wcs_buf_append(b, "\"", 1);
  for (; rc == WCS_OK && *z; z++) {
    rc = wcs_buf_append(b, z, 1);
    if (rc == WCS_OK && *z == '"') rc = wcs_buf_append(b, "\"", 1);
  }
  if (rc == WCS_OK) rc = wcs_buf_append(b, "\"", 1);
  return rc;
}

static int putLiteral(wcs_buf *b, const char *z, int n) {
  int rc = wcs_buf_append(b, "'", 1);
  int i;
  for (i = 0; rc == WCS_OK && i < n; i++) {
    rc = wcs_buf_append(b, &z[i], 1);
    if (rc == WCS_OK && z[i] == '\'') rc = wcs_buf_append(b, "'", 1);
  }
  if (rc == WCS_OK) rc = wcs_buf_append(b, "'", 1);
  return rc;
}

static int putBytesLiteral(wcs_buf *b, const uint8_t *a, int n) {
  int i, bPrintable = 1;
  char zHex[4];
  int rc;
  for (i = 0; i < n; i++) {
    if (a[i] < 0x20 || a[i] > 0x7e) bPrintable = 0;
  }
  if (bPrintable) return putLiteral(b, (const char *)a, n);
  rc = putStr(b, "X'");
  for (i = 0; rc == WCS_OK && i < n; i++) {
    snprintf(zHex, sizeof zHex, "%02X", a[i]);
    rc = putStr(b, zHex);
  }
  if (rc == WCS_OK) rc = putStr(b, "'");
  return rc;
}

static int putf(wcs_buf *b, const char *zFmt, long long v) {
  char z[64];
  snprintf(z, sizeof z, zFmt, v);
  return putStr(b, z);
}

static int putKey(wcs_buf *b, const ks_schema *s) {
  int rc = putStr(b, "KEY (");
  int i;
  for (i = 0; rc == WCS_OK && i < s->nField; i++) {
    const ks_field *f = &s->aField[i];
    if (i > 0) rc = putStr(b, ", ");
    if (rc == WCS_OK) rc = putName(b, f->zName);
    if (rc == WCS_OK) rc = putStr(b, " ");
    if (rc == WCS_OK) rc = putStr(b, ks_type_name(f->eType));
    if (rc == WCS_OK && (f->eType == KS_INT64 || f->eType == KS_TIMESTAMP)) {
      rc = putStr(b, " ");
      if (rc == WCS_OK) rc = putStr(b, ks_enc_name(f->eEnc));
      if (rc == WCS_OK &&
          (f->eEnc == KS_ENC_DECIMAL || f->eEnc == KS_ENC_REVERSED_DECIMAL)) {
        rc = putf(b, "(%lld)", f->nWidth);
      }
    }
  }
  if (rc == WCS_OK) rc = putStr(b, ")");
  if (rc == WCS_OK && s->eStruct == KS_STRUCT_DELIMITED) {
    rc = putStr(b, " DELIMITED BY ");
    if (rc == WCS_OK) rc = putBytesLiteral(b, s->aDelim, s->nDelim);
  } else if (rc == WCS_OK && s->eStruct == KS_STRUCT_ORDERED_CODE) {
    rc = putStr(b, " ORDERED CODE");
  }
  if (rc == WCS_OK && s->nSalt > 0) rc = putf(b, " SALT %lld", s->nSalt);
  return rc;
}

/* FAMILY clause of family iFam of s, named zName (NULL: its own name). */
static int putFamily(wcs_buf *b, const ks_schema *s, int iFam,
                     const char *zName) {
  const ks_family *f = &s->aFamily[iFam];
  int rc = putStr(b, "FAMILY ");
  int i;
  if (rc == WCS_OK) rc = putName(b, zName ? zName : f->zName);
  if (rc == WCS_OK && f->nQual > 0) {
    rc = putStr(b, " (");
    for (i = 0; rc == WCS_OK && i < f->nQual; i++) {
      const ks_qualifier *q = &s->aQual[f->iFirstQual + i];
      if (i > 0) rc = putStr(b, ", ");
      if (rc == WCS_OK) rc = putName(b, q->zName);
      if (rc == WCS_OK) rc = putStr(b, " ");
      if (rc == WCS_OK) rc = putStr(b, ks_vtype_name(q->eVType));
      if (rc == WCS_OK && q->eVType == KS_V_INT64) {
        rc = putStr(b, q->eEnc == KS_ENC_DECIMAL ? " DECIMAL" : " BIG ENDIAN");
        if (rc == WCS_OK && q->eEnc == KS_ENC_DECIMAL && q->nWidth > 0) {
          rc = putf(b, "(%lld)", q->nWidth);
        }
      }
    }
    if (rc == WCS_OK) rc = putStr(b, ")");
  }
  if (rc == WCS_OK && f->nMaxVersions > 0) {
    rc = putf(b, " MAX VERSIONS %lld", (long long)f->nMaxVersions);
  }
  if (rc == WCS_OK && f->nMaxAgeMicros > 0) {
    char zAge[40];
    ksFormatAge(f->nMaxAgeMicros, zAge);
    rc = putStr(b, " MAX AGE ");
    if (rc == WCS_OK) rc = putLiteral(b, zAge, (int)strlen(zAge));
  }
  if (rc == WCS_OK && f->eGc == KS_GC_INTERSECTION) {
    rc = putStr(b, " INTERSECTION");
  }
  if (rc == WCS_OK && f->eAgg != KS_AGG_NONE) {
    rc = putStr(b, " AGGREGATE ");
    if (rc == WCS_OK) rc = putStr(b, aggName(f->eAgg));
  }
  return rc;
}

/* End text b of a schema: on success (rc WCS_OK) NUL-terminate it and
** hand it over as *pzText; otherwise free it. */
static int textDone(wcs_buf *b, int rc, char **pzText) {
  if (rc == WCS_OK) rc = wcs_buf_append(b, "", 1);
  if (rc != WCS_OK) {
    wcs_buf_free(b);
    return rc;
  }
  *pzText = (char *)b->a;
  return WCS_OK;
}

int ks_schema_merge_text(const ks_schema *pCur, const ks_schema *pAdd,
                         const char *zDrop, char **pzText) {
  wcs_buf b = {0};
  int rc = WCS_OK, i, nClause = 0;
  *pzText = NULL;
#define SEP() (nClause++ > 0 ? putStr(&b, ", ") : WCS_OK)
  if (pCur->nField > 0) {
    rc = SEP();
    if (rc == WCS_OK) rc = putKey(&b, pCur);
  }
  for (i = 0; rc == WCS_OK && i < pCur->nFamily; i++) {
    const char *zName = pCur->aFamily[i].zName;
    int iNew = pAdd ? ks_schema_family(pAdd, zName) : -1;
    if (zDrop && ksStrICmp(zName, zDrop) == 0) continue;
    rc = SEP();
    if (rc == WCS_OK) {
      rc = iNew >= 0 ? putFamily(&b, pAdd, iNew, zName)
                     : putFamily(&b, pCur, i, NULL);
    }
  }
  for (i = 0; rc == WCS_OK && pAdd && i < pAdd->nFamily; i++) {
    if (ks_schema_family(pCur, pAdd->aFamily[i].zName) >= 0) continue;
    rc = SEP();
    if (rc == WCS_OK) rc = putFamily(&b, pAdd, i, NULL);
  }
#undef SEP
  return textDone(&b, rc, pzText);
}

/* The clauses after KEY and FAMILY, each led by ", " unless it is the
** first of the text (*pnClause counts them): STORE, TABLE, SYNC,
** COMPRESSION, CACHE, HISTORY; with bSettings only the connection's
** settings, STORE, SYNC and CACHE. */
static int putTail(wcs_buf *b, const ks_schema *s, int *pnClause,
                   int bSettings) {
  int rc = WCS_OK;
#define SEP() ((*pnClause)++ > 0 ? putStr(b, ", ") : WCS_OK)
  if (rc == WCS_OK && s->zStore) {
    rc = SEP();
    if (rc == WCS_OK) rc = putStr(b, "STORE ");
    if (rc == WCS_OK) rc = putLiteral(b, s->zStore, (int)strlen(s->zStore));
  }
  if (rc == WCS_OK && s->zTable && !bSettings) {
    rc = SEP();
    if (rc == WCS_OK) rc = putStr(b, "TABLE ");
    if (rc == WCS_OK) rc = putLiteral(b, s->zTable, (int)strlen(s->zTable));
  }
  if (rc == WCS_OK && s->iSync >= 0) {
    rc = SEP();
    if (rc == WCS_OK) {
      rc = putStr(b, s->iSync == WCS_SYNC_FULL     ? "SYNC FULL"
                     : s->iSync == WCS_SYNC_NORMAL ? "SYNC NORMAL"
                                                   : "SYNC OFF");
    }
  }
  if (rc == WCS_OK && s->iZstdLevel >= 0 && !bSettings) {
    rc = SEP();
    if (rc == WCS_OK) rc = putf(b, "COMPRESSION %lld", s->iZstdLevel);
  }
  if (rc == WCS_OK && s->nCacheBytes >= 0) {
    /* in the largest unit that divides it */
    static const char *const azUnit[] = {"B", "KiB", "MiB", "GiB"};
    int64_t v = s->nCacheBytes;
    int iUnit = 0;
    char z[64];
    while (iUnit < 3 && v > 0 && v % 1024 == 0) {
      v /= 1024;
      iUnit++;
    }
    snprintf(z, sizeof z, "CACHE '%lld%s'", (long long)v, azUnit[iUnit]);
    rc = SEP();
    if (rc == WCS_OK) rc = putStr(b, z);
  }
  if (rc == WCS_OK && s->bHistory && !bSettings) {
    rc = SEP();
    if (rc == WCS_OK) rc = putStr(b, "HISTORY");
  }
#undef SEP
  return rc;
}

int ks_schema_text(const ks_schema *s, char **pzText) {
  wcs_buf b = {0};
  int rc = WCS_OK;
  int i, nClause = 0;
  *pzText = NULL;
#define SEP() (nClause++ > 0 ? putStr(&b, ", ") : WCS_OK)
  if (s->nField > 0) {
    rc = SEP();
    if (rc == WCS_OK) rc = putKey(&b, s);
  }
  for (i = 0; rc == WCS_OK && i < s->nFamily; i++) {
    rc = SEP();
    if (rc == WCS_OK) rc = putFamily(&b, s, i, NULL);
  }
#undef SEP
  if (rc == WCS_OK) rc = putTail(&b, s, &nClause, 0);
  return textDone(&b, rc, pzText);
}

int ks_schema_settings_text(const ks_schema *s, char **pzText) {
  wcs_buf b = {0};
  int nClause = 0;
  *pzText = NULL;
  return textDone(&b, putTail(&b, s, &nClause, 1), pzText);
}
