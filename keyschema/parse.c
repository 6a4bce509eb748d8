/*
** parse.c — the DDL front end: a hand-written tokenizer, the driver that
** feeds the lemon parser generated from ddl.y, and the builder the grammar
** actions call to check each clause and fill a ks_schema.
**
** How it works. ks_parse_args() tokenizes each module argument (one clause
** each) and feeds the tokens to one parser, with a comma between
** arguments, so a list of arguments and the canonical text (clauses joined
** by commas) go through the same grammar. The tokenizer knows SQL's
** lexical habits: keywords case-insensitive, names bare or "quoted" or
** `quoted` or [quoted], strings 'quoted' with '' for a quote, X'hex'
** literals, -- and C comments. The builder decodes token text itself, so
** every error can point at the token it is about:
**   near "INT46": unknown type; expected STRING, BYTES, INT64 or TIMESTAMP
** The first error wins; the driver stops feeding tokens after it.
**
** The checks (what "cannot work") are listed in doc/keyschema.md,
** "Grammar"; the notable ones: names unique across key fields, families
** and qualifier columns (ASCII case-insensitively, as SQL names are);
** _key and _timestamp reserved (and family/qualifier/value under HISTORY);
** family names per Bigtable's rule; DECIMAL widths 1..19; under DELIMITED
** BY, field encodings that can produce a byte at or below the delimiter's
** first byte (ORDERED CODE, BIG ENDIAN, DECIMAL with a delimiter >= '0')
** are rejected.
*/
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddl.h"
#include "keyschema/ksint.h"

/* ====================================================================
** Errors
** ==================================================================== */

static void setErrV(ks_pctx *p, int rc, const ks_token *t, const char *zFmt,
                    va_list ap) {
  char zMsg[600];
  if (p->rc != WCS_OK) return;
  p->rc = rc;
  vsnprintf(zMsg, sizeof zMsg, zFmt, ap);
  if (t == NULL) {
    p->zErr = ksStrDup(zMsg);
  } else if (t->z == NULL) {
    char *z = malloc(strlen(zMsg) + 40);
    if (z) sprintf(z, "near the end of a clause: %s", zMsg);
    p->zErr = z;
  } else {
    char *zTok = wcs_escape(t->z, (size_t)t->n, 40);
    char *z = zTok ? malloc(strlen(zTok) + strlen(zMsg) + 16) : NULL;
    if (z) sprintf(z, "near \"%s\": %s", zTok, zMsg);
    free(zTok);
    p->zErr = z;
  }
}

void ksErrNear(ks_pctx *p, int rc, const ks_token *t, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  setErrV(p, rc, t, zFmt, ap);
  va_end(ap);
}

void ksErr(ks_pctx *p, int rc, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  setErrV(p, rc, NULL, zFmt, ap);
  va_end(ap);
}

static void oom(ks_pctx *p) {
  if (p->rc == WCS_OK) p->rc = WCS_NOMEM;
}

void ksSyntaxError(ks_pctx *p, const ks_token *t, const char *zExpect) {
  if (zExpect && zExpect[0]) {
    ksErrNear(p, WCS_ERROR, t, "syntax error; expected %s", zExpect);
  } else {
    ksErrNear(p, WCS_ERROR, t, "syntax error");
  }
}

const char *ksTokenDisplay(int iTok) {
  switch (iTok) {
  case 0:
    return "the end of the clause";
  case TK_COMMA:
    return "\",\"";
  case TK_LP:
    return "\"(\"";
  case TK_RP:
    return "\")\"";
  case TK_ID:
    return "a name";
  case TK_LITERAL:
    return "a 'quoted' string";
  case TK_BLOB:
    return "a 'quoted' string";
  case TK_INTEGER:
    return "a number";
  case TK_KEY:
    return "KEY";
  case TK_FAMILY:
    return "FAMILY";
  case TK_STORE:
    return "STORE";
  case TK_TABLE:
    return "TABLE";
  case TK_SYNC:
    return "SYNC";
  case TK_HISTORY:
    return "HISTORY";
  case TK_COMPRESSION:
    return "COMPRESSION";
  case TK_DELIMITED:
    return "DELIMITED BY";
  case TK_BY:
    return "BY";
  case TK_ORDERED:
    return "ORDERED CODE";
  case TK_CODE:
    return "CODE";
  case TK_SALT:
    return "SALT";
  case TK_MAX:
    return "MAX";
  case TK_VERSIONS:
    return "VERSIONS";
  case TK_AGE:
    return "AGE";
  case TK_UNION:
    return "UNION";
  case TK_INTERSECTION:
    return "INTERSECTION";
  case TK_AGGREGATE:
    return "AGGREGATE";
  case TK_CACHE:
    return "CACHE";
  }
  return NULL;
}

/* ====================================================================
** Tokenizer
** ==================================================================== */

static const struct {
  const char *z;
  int iTok;
} aKw[] = {
    {"KEY", TK_KEY},
    {"FAMILY", TK_FAMILY},
    {"STORE", TK_STORE},
    {"TABLE", TK_TABLE},
    {"SYNC", TK_SYNC},
    {"HISTORY", TK_HISTORY},
    {"COMPRESSION", TK_COMPRESSION},
    {"DELIMITED", TK_DELIMITED},
    {"BY", TK_BY},
    {"ORDERED", TK_ORDERED},
    {"CODE", TK_CODE},
    {"SALT", TK_SALT},
    {"MAX", TK_MAX},
    {"VERSIONS", TK_VERSIONS},
    {"AGE", TK_AGE},
    {"UNION", TK_UNION},
    {"INTERSECTION", TK_INTERSECTION},
    {"AGGREGATE", TK_AGGREGATE},
    {"CACHE", TK_CACHE},
};

static int keywordCode(const char *z, int n) {
  size_t i;
  for (i = 0; i < sizeof(aKw) / sizeof(aKw[0]); i++) {
    const char *k = aKw[i].z;
    int j;
    for (j = 0; j < n && k[j]; j++) {
      if (toupper((unsigned char)z[j]) != k[j]) break;
    }
    if (j == n && k[j] == 0) return aKw[i].iTok;
  }
  return TK_ID;
}

static int isIdStart(int c) {
  return isalpha(c) || c == '_' || c >= 0x80;
}
static int isIdChar(int c) {
  return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

#define TOK_SPACE   (-1) /* whitespace or a comment: skipped */
#define TOK_ILLEGAL (-2) /* not a token */
#define TOK_UNTERM  (-3) /* an unterminated string or quoted name */
#define TOK_BADHEX  (-4) /* X'...' with an odd count or a non-hex digit */

/* Length of the token at z (z[0] != 0) and its code in *piTok. */
static int nextToken(const unsigned char *z, int *piTok) {
  int i, c;
  switch (z[0]) {
  case ' ':
  case '\t':
  case '\n':
  case '\r':
  case '\f':
  case '\v':
    for (i = 1; isspace(z[i]); i++) {
    }
    *piTok = TOK_SPACE;
    return i;
  case '-':
    if (z[1] == '-') {
      for (i = 2; z[i] && z[i] != '\n'; i++) {
      }
      *piTok = TOK_SPACE;
      return i;
    }
    break;
  case '/':
    if (z[1] == '*') {
      for (i = 2; z[i] && !(z[i] == '*' && z[i + 1] == '/'); i++) {
      }
      if (z[i] == 0) {
        *piTok = TOK_UNTERM;
        return i;
      }
      *piTok = TOK_SPACE;
      return i + 2;
    }
    break;
  case '(':
    *piTok = TK_LP;
    return 1;
  case ')':
    *piTok = TK_RP;
    return 1;
  case ',':
    *piTok = TK_COMMA;
    return 1;
  case '\'':
  case '"':
  case '`':
  case '[': {
    int cEnd = z[0] == '[' ? ']' : z[0];
    for (i = 1;; i++) {
      if (z[i] == 0) {
        *piTok = TOK_UNTERM;
        return i;
      }
      if (z[i] == cEnd) {
        if (cEnd != ']' && z[i + 1] == cEnd) {
          i++;
          continue;
        }
        break;
      }
    }
    *piTok = z[0] == '\'' ? TK_LITERAL : TK_ID;
    return i + 1;
  }
  case 'x':
  case 'X':
    if (z[1] == '\'') {
      for (i = 2; isxdigit(z[i]); i++) {
      }
      if (z[i] != '\'' || (i - 2) % 2 != 0) {
        while (z[i] && z[i] != '\'')
          i++;
        *piTok = z[i] ? TOK_BADHEX : TOK_UNTERM;
        return z[i] ? i + 1 : i;
      }
      *piTok = TK_BLOB;
      return i + 1;
    }
    break;
  default:
    break;
  }
  c = z[0];
  if (isdigit(c)) {
    for (i = 1; isdigit(z[i]); i++) {
    }
    if (isIdChar(z[i])) {
      while (isIdChar(z[i]))
        i++;
      *piTok = TOK_ILLEGAL;
      return i;
    }
    *piTok = TK_INTEGER;
    return i;
  }
  if (isIdStart(c)) {
    for (i = 1; isIdChar(z[i]); i++) {
    }
    *piTok = keywordCode((const char *)z, i);
    return i;
  }
  /* one (UTF-8) character that is not a token */
  for (i = 1; (z[i] & 0xC0) == 0x80; i++) {
  }
  *piTok = TOK_ILLEGAL;
  return i;
}

/* ====================================================================
** Token values
** ==================================================================== */

/* The name a token spells: a bare word as written, a quoted one without
** its quotes and with doubled quotes undoubled. malloc'd; NULL on OOM. */
static char *tokenName(ks_pctx *p, const ks_token *t) {
  char *z = malloc((size_t)t->n + 1);
  int i, j = 0;
  if (z == NULL) {
    oom(p);
    return NULL;
  }
  if (t->n >= 2 && (t->z[0] == '"' || t->z[0] == '`' || t->z[0] == '[')) {
    char q = t->z[0] == '[' ? ']' : t->z[0];
    for (i = 1; i < t->n - 1; i++) {
      z[j++] = t->z[i];
      if (t->z[i] == q && q != ']') i++;
    }
  } else {
    memcpy(z, t->z, (size_t)t->n);
    j = t->n;
  }
  z[j] = 0;
  return z;
}

/* The bytes of a 'literal' or X'hex' token: malloc'd (NUL-terminated for
** convenience) with the length in *pn. NULL on OOM. */
static char *tokenBytes(ks_pctx *p, const ks_token *t, int *pn) {
  char *z = malloc((size_t)t->n + 1);
  int i, j = 0;
  if (z == NULL) {
    oom(p);
    return NULL;
  }
  if (t->z[0] == 'x' || t->z[0] == 'X') {
    for (i = 2; i + 1 < t->n - 1; i += 2) {
      char h[3] = {t->z[i], t->z[i + 1], 0};
      z[j++] = (char)strtol(h, NULL, 16);
    }
  } else {
    for (i = 1; i < t->n - 1; i++) {
      z[j++] = t->z[i];
      if (t->z[i] == '\'') i++;
    }
  }
  z[j] = 0;
  *pn = j;
  return z;
}

/* The value of an INTEGER token, checked against [iMin, iMax]; on error
** the message says "<zWhat> must be <iMin> to <iMax><zWhy>". */
static int tokenInt(ks_pctx *p, const ks_token *t, int64_t iMin, int64_t iMax,
                    const char *zWhat, const char *zWhy, int64_t *pv) {
  int64_t v = 0;
  int i, bBig = 0;
  for (i = 0; i < t->n; i++) {
    int d = t->z[i] - '0';
    if (v > (INT64_MAX - d) / 10) {
      bBig = 1;
      break;
    }
    v = v * 10 + d;
  }
  if (bBig || v < iMin || v > iMax) {
    ksErrNear(p, WCS_SCHEMA, t, "%s must be %lld to %lld%s", zWhat,
              (long long)iMin, (long long)iMax, zWhy ? zWhy : "");
    return 0;
  }
  *pv = v;
  return 1;
}

static int tokenIs(const ks_token *t, const char *zWord) {
  int n = (int)strlen(zWord), i;
  if (t->z == NULL || t->n != n) return 0;
  for (i = 0; i < n; i++) {
    if (toupper((unsigned char)t->z[i]) != zWord[i]) return 0;
  }
  return 1;
}

/* ====================================================================
** MAX AGE durations
** ==================================================================== */

static const struct {
  const char *z;
  int64_t nMicros;
} aUnit[] = {
    {"d", 86400000000LL}, {"h", 3600000000LL}, {"m", 60000000LL},
    {"s", 1000000LL},     {"ms", 1000LL},      {"us", 1LL},
};

int64_t ksParseAge(const char *z, int n) {
  int64_t v = 0;
  int i = 0, j, bBig = 0;
  size_t k;
  while (i < n && z[i] == ' ')
    i++;
  if (i == n || !isdigit((unsigned char)z[i])) return 0;
  for (; i < n && isdigit((unsigned char)z[i]); i++) {
    if (v > (INT64_MAX - (z[i] - '0')) / 10) bBig = 1;
    if (!bBig) v = v * 10 + (z[i] - '0');
  }
  while (i < n && z[i] == ' ')
    i++;
  for (j = i; j < n && isalpha((unsigned char)z[j]); j++) {
  }
  for (k = 0; k < sizeof(aUnit) / sizeof(aUnit[0]); k++) {
    int m = (int)strlen(aUnit[k].z);
    if (j - i == m && strncasecmp(z + i, aUnit[k].z, (size_t)m) == 0) break;
  }
  if (k == sizeof(aUnit) / sizeof(aUnit[0])) return 0;
  while (j < n && z[j] == ' ')
    j++;
  if (j != n || v <= 0) return 0;
  if (bBig || v > INT64_MAX / aUnit[k].nMicros) return -1;
  return v * aUnit[k].nMicros;
}

void ksFormatAge(int64_t nMicros, char *zOut) {
  size_t k;
  for (k = 0; k < sizeof(aUnit) / sizeof(aUnit[0]); k++) {
    if (nMicros % aUnit[k].nMicros == 0) break;
  }
  snprintf(zOut, 32, "%lld%s", (long long)(nMicros / aUnit[k].nMicros),
           aUnit[k].z);
}

/* ====================================================================
** Name checks
** ==================================================================== */

/* If zName cannot be a new column name (key field, family or qualifier
** column: all are SQL columns), record an error near t and return 1. */
static int nameClash(ks_pctx *p, const ks_token *t, const char *zName) {
  const ks_schema *s = p->pSchema;
  int i;
  if (zName[0] == 0) {
    ksErrNear(p, WCS_SCHEMA, t, "a name may not be empty");
    return 1;
  }
  if (strlen(zName) > KS_MAX_NAME) {
    ksErrNear(p, WCS_SCHEMA, t, "a name may have at most %d bytes",
              KS_MAX_NAME);
    return 1;
  }
  if (ksStrICmp(zName, "_key") == 0) {
    ksErrNear(p, WCS_SCHEMA, t, "\"_key\" is reserved for the raw row key");
    return 1;
  }
  if (ksStrICmp(zName, "_timestamp") == 0) {
    ksErrNear(p, WCS_SCHEMA, t,
              "\"_timestamp\" is reserved for the cell timestamp");
    return 1;
  }
  if (s->bHistory &&
      (ksStrICmp(zName, "family") == 0 || ksStrICmp(zName, "qualifier") == 0 ||
       ksStrICmp(zName, "value") == 0)) {
    ksErrNear(p, WCS_SCHEMA, t,
              "\"%s\" is a column of HISTORY tables (family, qualifier, "
              "_timestamp, value)",
              zName);
    return 1;
  }
  for (i = 0; i < s->nField; i++) {
    if (ksStrICmp(zName, s->aField[i].zName) == 0) {
      ksErrNear(p, WCS_SCHEMA, t,
                "the name \"%s\" is already used by key "
                "field \"%s\"",
                zName, s->aField[i].zName);
      return 1;
    }
  }
  for (i = 0; i < s->nFamily; i++) {
    if (ksStrICmp(zName, s->aFamily[i].zName) == 0) {
      ksErrNear(p, WCS_SCHEMA, t,
                "the name \"%s\" is already used by "
                "family \"%s\"",
                zName, s->aFamily[i].zName);
      return 1;
    }
  }
  for (i = 0; i < s->nQual; i++) {
    if (ksStrICmp(zName, s->aQual[i].zName) == 0) {
      ksErrNear(p, WCS_SCHEMA, t,
                "the name \"%s\" is already used by "
                "column \"%s\" of family \"%s\"",
                zName, s->aQual[i].zName,
                s->aFamily[s->aQual[i].iFamily].zName);
      return 1;
    }
  }
  return 0;
}

/* Bigtable: [_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 64 bytes. */
static int familyNameOk(const char *z) {
  int i;
  if (!(isalnum((unsigned char)z[0]) || z[0] == '_')) return 0;
  for (i = 1; z[i]; i++) {
    unsigned char c = (unsigned char)z[i];
    if (!(isalnum(c) || c == '_' || c == '-' || c == '.')) return 0;
  }
  return i <= KS_MAX_FAMILY_NAME;
}

/* ====================================================================
** Encodings
** ==================================================================== */

void ksEncNone(ks_encspec *e) {
  memset(e, 0, sizeof(*e));
}

void ksEncWord(ks_encspec *e, const ks_token *t) {
  if (e->nWord < 3) e->aWord[e->nWord] = *t;
  e->nWord++;
}

void ksEncWidth(ks_encspec *e, const ks_token *t) {
  e->tWidth = *t;
  e->bWidth = 1;
}

/* Which encoding the words spell: a ks_enc, or -1. */
static int encOf(const ks_encspec *e) {
  if (e->nWord == 1) {
    if (tokenIs(&e->aWord[0], "DECIMAL")) return KS_ENC_DECIMAL;
    if (tokenIs(&e->aWord[0], "UTF8")) return KS_ENC_UTF8;
    if (tokenIs(&e->aWord[0], "RAW")) return KS_ENC_RAW;
  } else if (e->nWord == 2) {
    if (tokenIs(&e->aWord[0], "BIG") && tokenIs(&e->aWord[1], "ENDIAN")) {
      return KS_ENC_BIG_ENDIAN;
    }
    if (tokenIs(&e->aWord[0], "ORDERED") && tokenIs(&e->aWord[1], "CODE")) {
      return KS_ENC_ORDERED_CODE;
    }
    if (tokenIs(&e->aWord[0], "REVERSED") && tokenIs(&e->aWord[1], "DECIMAL")) {
      return KS_ENC_REVERSED_DECIMAL;
    }
  }
  return -1;
}

/* The token an encoding error should point at: the first word that is not
** part of an allowed spelling. */
static const ks_token *encBadToken(const ks_encspec *e) {
  static const char *const azFirst[] = {"BIG",     "ORDERED", "REVERSED",
                                        "DECIMAL", "UTF8",    "RAW"};
  size_t i;
  for (i = 0; i < sizeof(azFirst) / sizeof(azFirst[0]); i++) {
    if (tokenIs(&e->aWord[0], azFirst[i])) {
      return e->nWord >= 2 ? &e->aWord[e->nWord >= 3 ? 2 : 1] : &e->aWord[0];
    }
  }
  return &e->aWord[0];
}

/* ====================================================================
** Growing the schema arrays
** ==================================================================== */

static int grow(ks_pctx *p, void **pa, int *pnAlloc, int nUsed, size_t sz) {
  if (nUsed < *pnAlloc) return 1;
  {
    int nNew = *pnAlloc ? *pnAlloc * 2 : 4;
    void *aNew = realloc(*pa, (size_t)nNew * sz);
    if (aNew == NULL) {
      oom(p);
      return 0;
    }
    *pa = aNew;
    *pnAlloc = nNew;
  }
  return 1;
}

/* ====================================================================
** KEY clause
** ==================================================================== */

void ksKeyBegin(ks_pctx *p, const ks_token *tKey) {
  if (p->rc) return;
  if (p->bKeySeen) {
    ksErrNear(p, WCS_SCHEMA, tKey, "a table has one KEY clause");
    return;
  }
  p->bKeySeen = 1;
  p->pSchema->bKeyClause = 1;
}

void ksKeyField(ks_pctx *p, const ks_token *tName, const ks_token *tType,
                const ks_encspec *pEnc) {
  ks_schema *s = p->pSchema;
  ks_field f;
  int eEnc;
  char *zName;
  if (p->rc) return;
  if (s->nField >= KS_MAX_FIELDS) {
    ksErrNear(p, WCS_SCHEMA, tName, "a key has at most %d fields",
              KS_MAX_FIELDS);
    return;
  }
  memset(&f, 0, sizeof f);
  if (tokenIs(tType, "STRING"))
    f.eType = KS_STRING;
  else if (tokenIs(tType, "BYTES"))
    f.eType = KS_BYTES;
  else if (tokenIs(tType, "INT64"))
    f.eType = KS_INT64;
  else if (tokenIs(tType, "TIMESTAMP"))
    f.eType = KS_TIMESTAMP;
  else {
    ksErrNear(p, WCS_SCHEMA, tType,
              "unknown type; expected STRING, BYTES, INT64 or TIMESTAMP");
    return;
  }
  eEnc = pEnc->nWord == 0 ? -2 : encOf(pEnc);
  if (f.eType == KS_STRING || f.eType == KS_BYTES) {
    ks_enc eOnly = f.eType == KS_STRING ? KS_ENC_UTF8 : KS_ENC_RAW;
    if (eEnc != -2 && eEnc != (int)eOnly) {
      ksErrNear(p, WCS_SCHEMA, &pEnc->aWord[0],
                "a %s key field takes no encoding (it is stored as %s)",
                ks_type_name(f.eType),
                f.eType == KS_STRING ? "UTF-8" : "raw bytes");
      return;
    }
    f.eEnc = eOnly;
  } else {
    if (eEnc == -2) eEnc = KS_ENC_ORDERED_CODE;
    if (eEnc != KS_ENC_BIG_ENDIAN && eEnc != KS_ENC_ORDERED_CODE &&
        eEnc != KS_ENC_DECIMAL && eEnc != KS_ENC_REVERSED_DECIMAL) {
      ksErrNear(p, WCS_SCHEMA, encBadToken(pEnc),
                "unknown encoding; expected BIG ENDIAN, ORDERED CODE, "
                "DECIMAL(n) or REVERSED DECIMAL(n)");
      return;
    }
    f.eEnc = (ks_enc)eEnc;
  }
  if (f.eEnc == KS_ENC_DECIMAL || f.eEnc == KS_ENC_REVERSED_DECIMAL) {
    int64_t w;
    if (!pEnc->bWidth) {
      ksErrNear(p, WCS_SCHEMA, &pEnc->aWord[pEnc->nWord - 1],
                "%s needs a width in digits, e.g. %s(8)", ks_enc_name(f.eEnc),
                ks_enc_name(f.eEnc));
      return;
    }
    if (!tokenInt(p, &pEnc->tWidth, 1, KS_MAX_DECIMAL, "a DECIMAL width",
                  " (INT64 values have at most 19 digits)", &w)) {
      return;
    }
    f.nWidth = (int)w;
  } else if (pEnc->bWidth) {
    ksErrNear(p, WCS_SCHEMA, &pEnc->tWidth,
              "only DECIMAL and REVERSED DECIMAL take a width");
    return;
  }
  zName = tokenName(p, tName);
  if (zName == NULL) return;
  if (nameClash(p, tName, zName)) {
    free(zName);
    return;
  }
  if (!grow(p, (void **)&s->aField, &p->nFieldAlloc, s->nField,
            sizeof(ks_field))) {
    free(zName);
    return;
  }
  f.zName = zName;
  p->aFieldTok[s->nField] = *tName;
  p->aEncTok[s->nField] = pEnc->nWord ? pEnc->aWord[0] : *tType;
  p->aEncDefault[s->nField] = pEnc->nWord == 0;
  s->aField[s->nField++] = f;
}

void ksKeyDelimited(ks_pctx *p, const ks_token *tKw, const ks_token *tLit) {
  ks_schema *s = p->pSchema;
  char *z;
  int n;
  if (p->rc) return;
  if (p->tStruct.z) {
    ksErrNear(p, WCS_SCHEMA, tKw,
              "give one of DELIMITED BY and ORDERED CODE, once");
    return;
  }
  z = tokenBytes(p, tLit, &n);
  if (z == NULL) return;
  if (n < 1 || n > KS_MAX_DELIM) {
    ksErrNear(p, WCS_SCHEMA, tLit, "a delimiter has 1 to %d bytes",
              KS_MAX_DELIM);
    free(z);
    return;
  }
  memcpy(s->aDelim, z, (size_t)n);
  s->nDelim = n;
  free(z);
  p->tStruct = *tKw;
  p->tDelim = *tLit;
  s->eStruct = KS_STRUCT_DELIMITED;
}

void ksKeyOrderedCode(ks_pctx *p, const ks_token *tKw) {
  if (p->rc) return;
  if (p->tStruct.z) {
    ksErrNear(p, WCS_SCHEMA, tKw,
              "give one of DELIMITED BY and ORDERED CODE, once");
    return;
  }
  p->tStruct = *tKw;
  p->pSchema->eStruct = KS_STRUCT_ORDERED_CODE;
}

void ksKeySalt(ks_pctx *p, const ks_token *tKw, const ks_token *tNum) {
  int64_t v;
  if (p->rc) return;
  if (p->bSaltSeen) {
    ksErrNear(p, WCS_SCHEMA, tKw, "SALT is given twice");
    return;
  }
  p->bSaltSeen = 1;
  if (tokenInt(p, tNum, 1, KS_MAX_SALT, "SALT", " buckets", &v)) {
    p->pSchema->nSalt = (int)v;
  }
}

void ksKeyEnd(ks_pctx *p) {
  ks_schema *s = p->pSchema;
  int i;
  if (p->rc) return;
  if (s->eStruct == KS_STRUCT_NONE) {
    if (s->nField == 1) {
      s->eStruct = KS_STRUCT_SINGLETON;
    } else {
      s->eStruct = KS_STRUCT_DELIMITED;
      s->aDelim[0] = KS_DEFAULT_DELIM;
      s->nDelim = 1;
    }
  }
  if (s->eStruct != KS_STRUCT_DELIMITED) return;
  if (s->aDelim[0] == 0xFF) {
    ksErrNear(p, WCS_SCHEMA, p->tDelim.z ? &p->tDelim : &p->tStruct,
              "no byte sorts above a delimiter starting with 0xFF; fields "
              "could hold nothing");
    return;
  }
  for (i = 0; i < s->nField; i++) {
    const ks_field *f = &s->aField[i];
    const ks_token *t = &p->aEncTok[i];
    if (f->eEnc == KS_ENC_BIG_ENDIAN || f->eEnc == KS_ENC_ORDERED_CODE) {
      ksErrNear(p, WCS_SCHEMA, t,
                "key field \"%s\" is %s %s%s, whose bytes can be at or "
                "below the delimiter, breaking the key order; use DECIMAL(n) "
                "or REVERSED DECIMAL(n), or KEY (...) ORDERED CODE",
                f->zName, ks_type_name(f->eType), ks_enc_name(f->eEnc),
                p->aEncDefault[i] ? " (the default encoding)" : "");
      return;
    }
    if ((f->eEnc == KS_ENC_DECIMAL || f->eEnc == KS_ENC_REVERSED_DECIMAL) &&
        s->aDelim[0] >= '0') {
      ksErrNear(p, WCS_SCHEMA, p->tDelim.z ? &p->tDelim : t,
                "the delimiter must sort below the digits of DECIMAL key "
                "field \"%s\": its first byte must be below '0' (0x30)",
                f->zName);
      return;
    }
  }
}

/* ====================================================================
** FAMILY clause
** ==================================================================== */

void ksFamilyBegin(ks_pctx *p, const ks_token *tName) {
  ks_schema *s = p->pSchema;
  ks_family *f;
  char *zName;
  if (p->rc) return;
  if (s->nFamily >= KS_MAX_FAMILIES) {
    ksErrNear(p, WCS_SCHEMA, tName, "a table has at most %d families",
              KS_MAX_FAMILIES);
    return;
  }
  zName = tokenName(p, tName);
  if (zName == NULL) return;
  if (!familyNameOk(zName)) {
    ksErrNear(p, WCS_SCHEMA, tName,
              "family names have 1 to 64 characters from [-_.a-zA-Z0-9] and "
              "do not start with '-' or '.'");
    free(zName);
    return;
  }
  if (nameClash(p, tName, zName) ||
      !grow(p, (void **)&s->aFamily, &p->nFamAlloc, s->nFamily,
            sizeof(ks_family))) {
    free(zName);
    return;
  }
  f = &s->aFamily[s->nFamily];
  memset(f, 0, sizeof(*f));
  f->zName = zName;
  f->iFirstQual = s->nQual;
  p->iFam = s->nFamily++;
  p->bVersionsSeen = p->bAgeSeen = p->bGcSeen = p->bAggSeen = 0;
  p->tGc.z = NULL;
}

void ksQualifier(ks_pctx *p, const ks_token *tName, const ks_token *tType,
                 const ks_encspec *pEnc) {
  ks_schema *s = p->pSchema;
  ks_qualifier q;
  int eEnc;
  char *zName;
  if (p->rc || p->iFam < 0) return;
  if (s->nQual >= KS_MAX_QUALIFIERS) {
    ksErrNear(p, WCS_SCHEMA, tName,
              "a table has at most %d declared "
              "qualifier columns",
              KS_MAX_QUALIFIERS);
    return;
  }
  memset(&q, 0, sizeof q);
  q.iFamily = p->iFam;
  if (tokenIs(tType, "INT64"))
    q.eVType = KS_V_INT64;
  else if (tokenIs(tType, "FLOAT64"))
    q.eVType = KS_V_FLOAT64;
  else if (tokenIs(tType, "STRING"))
    q.eVType = KS_V_STRING;
  else if (tokenIs(tType, "BYTES"))
    q.eVType = KS_V_BYTES;
  else if (tokenIs(tType, "JSON"))
    q.eVType = KS_V_JSON;
  else {
    ksErrNear(p, WCS_SCHEMA, tType,
              "unknown type; expected INT64, FLOAT64, "
              "STRING, BYTES or JSON");
    return;
  }
  eEnc = pEnc->nWord == 0 ? -2 : encOf(pEnc);
  switch (q.eVType) {
  case KS_V_INT64:
    if (eEnc == -2) eEnc = KS_ENC_BIG_ENDIAN;
    if (eEnc != KS_ENC_BIG_ENDIAN && eEnc != KS_ENC_DECIMAL) {
      ksErrNear(p, WCS_SCHEMA, encBadToken(pEnc),
                "unknown encoding for an "
                "INT64 column; expected BIG ENDIAN or DECIMAL");
      return;
    }
    break;
  case KS_V_FLOAT64:
    if (eEnc == -2) eEnc = KS_ENC_BIG_ENDIAN;
    if (eEnc != KS_ENC_BIG_ENDIAN) {
      ksErrNear(p, WCS_SCHEMA, encBadToken(pEnc),
                "unknown encoding for a "
                "FLOAT64 column; expected BIG ENDIAN");
      return;
    }
    break;
  case KS_V_BYTES:
    if (eEnc == -2) eEnc = KS_ENC_RAW;
    if (eEnc != KS_ENC_RAW) {
      ksErrNear(p, WCS_SCHEMA, &pEnc->aWord[0],
                "a BYTES column takes no encoding");
      return;
    }
    break;
  default:
    if (eEnc == -2) eEnc = KS_ENC_UTF8;
    if (eEnc != KS_ENC_UTF8) {
      ksErrNear(p, WCS_SCHEMA, &pEnc->aWord[0],
                "a STRING or JSON column takes no encoding (UTF-8)");
      return;
    }
    break;
  }
  q.eEnc = (ks_enc)eEnc;
  if (pEnc->bWidth) {
    int64_t w;
    if (q.eEnc != KS_ENC_DECIMAL) {
      ksErrNear(p, WCS_SCHEMA, &pEnc->tWidth, "only DECIMAL takes a width");
      return;
    }
    if (!tokenInt(p, &pEnc->tWidth, 1, KS_MAX_DECIMAL, "a DECIMAL width",
                  " (INT64 values have at most 19 digits)", &w)) {
      return;
    }
    q.nWidth = (int)w;
  }
  zName = tokenName(p, tName);
  if (zName == NULL) return;
  if (strlen(zName) > KS_MAX_QUALIFIER) {
    free(zName);
    ksErrNear(p, WCS_SCHEMA, tName, "qualifiers have at most %d bytes",
              KS_MAX_QUALIFIER);
    return;
  }
  if (nameClash(p, tName, zName) || !grow(p, (void **)&s->aQual, &p->nQualAlloc,
                                          s->nQual, sizeof(ks_qualifier))) {
    free(zName);
    return;
  }
  q.zName = zName;
  s->aQual[s->nQual++] = q;
  s->aFamily[p->iFam].nQual++;
}

void ksFamilyMaxVersions(ks_pctx *p, const ks_token *tKw,
                         const ks_token *tNum) {
  int64_t v;
  if (p->rc || p->iFam < 0) return;
  if (p->bVersionsSeen) {
    ksErrNear(p, WCS_SCHEMA, tKw, "MAX VERSIONS is given twice");
    return;
  }
  p->bVersionsSeen = 1;
  if (tokenInt(p, tNum, 1, 2147483647, "MAX VERSIONS", NULL, &v)) {
    p->pSchema->aFamily[p->iFam].nMaxVersions = v;
  }
}

void ksFamilyMaxAge(ks_pctx *p, const ks_token *tKw, const ks_token *tLit) {
  char *z;
  int n;
  int64_t v;
  if (p->rc || p->iFam < 0) return;
  if (p->bAgeSeen) {
    ksErrNear(p, WCS_SCHEMA, tKw, "MAX AGE is given twice");
    return;
  }
  p->bAgeSeen = 1;
  z = tokenBytes(p, tLit, &n);
  if (z == NULL) return;
  v = ksParseAge(z, n);
  free(z);
  if (v < 0) {
    ksErrNear(p, WCS_SCHEMA, tLit,
              "MAX AGE is too long: at most 106751991 days (2^63 microseconds; "
              "for no age limit, leave MAX AGE out)");
    return;
  }
  if (v == 0) {
    ksErrNear(p, WCS_SCHEMA, tLit,
              "MAX AGE is a positive whole number and "
              "a unit: d, h, m, s, ms or us (e.g. '30d', '500ms')");
    return;
  }
  p->pSchema->aFamily[p->iFam].nMaxAgeMicros = v;
}

void ksFamilyGc(ks_pctx *p, const ks_token *tKw, ks_gc eGc) {
  if (p->rc || p->iFam < 0) return;
  if (p->bGcSeen) {
    ksErrNear(p, WCS_SCHEMA, tKw, "give one of UNION and INTERSECTION, once");
    return;
  }
  p->bGcSeen = 1;
  p->tGc = *tKw;
  p->pSchema->aFamily[p->iFam].eGc = eGc;
}

void ksFamilyAggregate(ks_pctx *p, const ks_token *tKw, const ks_token *tKind) {
  ks_family *f;
  if (p->rc || p->iFam < 0) return;
  f = &p->pSchema->aFamily[p->iFam];
  if (p->bAggSeen) {
    ksErrNear(p, WCS_SCHEMA, tKw, "AGGREGATE is given twice");
    return;
  }
  p->bAggSeen = 1;
  p->tAgg = *tKind;
  if (tokenIs(tKind, "SUM"))
    f->eAgg = KS_AGG_SUM;
  else if (tokenIs(tKind, "MIN"))
    f->eAgg = KS_AGG_MIN;
  else if (tokenIs(tKind, "MAX"))
    f->eAgg = KS_AGG_MAX;
  else if (tokenIs(tKind, "HLL"))
    f->eAgg = KS_AGG_HLL;
  else {
    ksErrNear(p, WCS_SCHEMA, tKind,
              "unknown aggregate; expected SUM, MIN, MAX or HLL");
  }
}

void ksFamilyEnd(ks_pctx *p) {
  ks_schema *s = p->pSchema;
  ks_family *f;
  int i;
  if (p->rc || p->iFam < 0) return;
  f = &s->aFamily[p->iFam];
  p->iFam = -1;
  if (f->eGc == KS_GC_INTERSECTION &&
      (f->nMaxVersions == 0 || f->nMaxAgeMicros == 0)) {
    ksErrNear(p, WCS_SCHEMA, &p->tGc,
              "INTERSECTION combines two rules; give "
              "both MAX VERSIONS and MAX AGE");
    return;
  }
  for (i = 0; f->eAgg != KS_AGG_NONE && i < f->nQual; i++) {
    const ks_qualifier *q = &s->aQual[f->iFirstQual + i];
    int bOk = q->eVType == KS_V_INT64 && q->eEnc == KS_ENC_BIG_ENDIAN;
    if (f->eAgg == KS_AGG_HLL) bOk = bOk || q->eVType == KS_V_BYTES;
    if (!bOk) {
      ksErrNear(p, WCS_SCHEMA, &p->tAgg,
                "column \"%s\" of aggregate family "
                "\"%s\" must be %s",
                q->zName, f->zName,
                f->eAgg == KS_AGG_HLL
                    ? "INT64 (integer elements) or BYTES (any elements)"
                    : "INT64 (BIG ENDIAN, the aggregate's format)");
      return;
    }
  }
}

/* ====================================================================
** Options
** ==================================================================== */

static char *optionString(ks_pctx *p, const ks_token *tLit, const char *zWhat) {
  int n;
  char *z = tokenBytes(p, tLit, &n);
  if (z == NULL) return NULL;
  if (n == 0 || (int)strlen(z) != n) {
    ksErrNear(p, WCS_SCHEMA, tLit,
              "%s must be a non-empty string without "
              "NUL bytes",
              zWhat);
    free(z);
    return NULL;
  }
  return z;
}

void ksOptStore(ks_pctx *p, const ks_token *tKw, const ks_token *tLit) {
  if (p->rc) return;
  if (p->bStoreSeen) {
    ksErrNear(p, WCS_SCHEMA, tKw, "STORE is given twice");
    return;
  }
  p->bStoreSeen = 1;
  p->pSchema->zStore = optionString(p, tLit, "the STORE path");
}

void ksOptTable(ks_pctx *p, const ks_token *tKw, const ks_token *tLit) {
  if (p->rc) return;
  if (p->bTableSeen) {
    ksErrNear(p, WCS_SCHEMA, tKw, "TABLE is given twice");
    return;
  }
  p->bTableSeen = 1;
  p->pSchema->zTable = optionString(p, tLit, "the TABLE name");
}

void ksOptSync(ks_pctx *p, const ks_token *tKw, const ks_token *tMode) {
  ks_schema *s = p->pSchema;
  if (p->rc) return;
  if (p->bSyncSeen) {
    ksErrNear(p, WCS_SCHEMA, tKw, "SYNC is given twice");
    return;
  }
  p->bSyncSeen = 1;
  if (tokenIs(tMode, "FULL"))
    s->iSync = WCS_SYNC_FULL;
  else if (tokenIs(tMode, "NORMAL"))
    s->iSync = WCS_SYNC_NORMAL;
  else if (tokenIs(tMode, "OFF"))
    s->iSync = WCS_SYNC_OFF;
  else {
    ksErrNear(p, WCS_SCHEMA, tMode,
              "unknown sync mode; expected FULL, NORMAL or OFF");
  }
}

void ksOptHistory(ks_pctx *p, const ks_token *tKw) {
  ks_schema *s = p->pSchema;
  int i;
  if (p->rc) return;
  if (s->bHistory) {
    ksErrNear(p, WCS_SCHEMA, tKw, "HISTORY is given twice");
    return;
  }
  for (i = 0; i < s->nField; i++) {
    const char *z = s->aField[i].zName;
    if (ksStrICmp(z, "family") == 0 || ksStrICmp(z, "qualifier") == 0 ||
        ksStrICmp(z, "value") == 0) {
      ksErrNear(p, WCS_SCHEMA, tKw,
                "key field \"%s\" clashes with a column "
                "of HISTORY tables (family, qualifier, _timestamp, value)",
                z);
      return;
    }
  }
  s->bHistory = 1;
}

void ksOptCompression(ks_pctx *p, const ks_token *tKw, const ks_token *tNum) {
  int64_t v;
  if (p->rc) return;
  if (p->bCompressionSeen) {
    ksErrNear(p, WCS_SCHEMA, tKw, "COMPRESSION is given twice");
    return;
  }
  p->bCompressionSeen = 1;
  if (tokenInt(p, tNum, 0, 19, "the COMPRESSION level",
               " (zstd levels; 0 = none)", &v)) {
    p->pSchema->iZstdLevel = (int)v;
  }
}

/* CACHE 'n[unit]': the block cache budget of the store this table opens.
** Units are binary multiples: B (or none), KiB, MiB, GiB (K, M, G and
** KB, MB, GB mean the same). At least 1 MiB, at most 1 TiB. */
void ksOptCache(ks_pctx *p, const ks_token *tKw, const ks_token *tLit) {
  static const struct {
    const char *z;
    int iShift;
  } aCacheUnit[] = {{"", 0},   {"B", 0},   {"K", 10},   {"KB", 10}, {"KIB", 10},
               {"M", 20}, {"MB", 20}, {"MIB", 20}, {"G", 30},  {"GB", 30},
               {"GIB", 30}};
  char *z;
  const char *zUnit;
  uint64_t v = 0;
  int i, nDigit = 0, iShift = -1;
  if (p->rc) return;
  if (p->bCacheSeen) {
    ksErrNear(p, WCS_SCHEMA, tKw, "CACHE is given twice");
    return;
  }
  p->bCacheSeen = 1;
  z = optionString(p, tLit, "the CACHE size");
  if (z == NULL) return;
  for (zUnit = z; *zUnit >= '0' && *zUnit <= '9' && v < (1ULL << 50);
       zUnit++, nDigit++) {
    v = v * 10 + (uint64_t)(*zUnit - '0');
  }
  while (*zUnit == ' ')
    zUnit++;
  for (i = 0; nDigit > 0 && i < (int)(sizeof aCacheUnit / sizeof *aCacheUnit);
       i++) {
    const char *a = aCacheUnit[i].z, *b = zUnit;
    while (*a && *b && (*b == *a || *b == *a + ('a' - 'A')))
      a++, b++;
    if (*a == 0 && *b == 0) iShift = aCacheUnit[i].iShift;
  }
  if (iShift < 0) {
    ksErrNear(p, WCS_SCHEMA, tLit,
              "bad CACHE size '%s'; expected a number of bytes with an "
              "optional unit, e.g. '256MiB' (units B, KiB, MiB, GiB)",
              z);
  } else if (v > (1ULL << 40) >> iShift || (v << iShift) < (1ULL << 20)) {
    ksErrNear(p, WCS_SCHEMA, tLit,
              "CACHE size '%s' is out of range; give 1MiB to 1024GiB", z);
  } else {
    p->pSchema->nCacheBytes = (int64_t)(v << iShift);
  }
  free(z);
}

void ksClauseDone(ks_pctx *p) {
  if (p->rc == WCS_OK) p->pSchema->nClause++;
}

/* ====================================================================
** The driver
** ==================================================================== */

/* Feed the tokens of z to the parser. Returns 0 once an error is set. */
static int feedText(ks_pctx *p, void *pParser, const char *z) {
  const unsigned char *u = (const unsigned char *)z;
  int i = 0;
  while (u[i] && p->rc == WCS_OK) {
    int iTok = 0;
    int n = nextToken(u + i, &iTok);
    ks_token t;
    t.z = z + i;
    t.n = n;
    if (iTok == TOK_SPACE) {
      /* skip */
    } else if (iTok == TOK_ILLEGAL && (u[i] == '-' || u[i] == '.') && i > 0 &&
               isIdChar(u[i - 1]) && isIdChar(u[i + 1])) {
      /* a name with '-' or '.' in it, not quoted: say the whole name */
      int a = i, b = i;
      while (a > 0 && isIdChar(u[a - 1]))
        a--;
      while (isIdChar(u[b]) || u[b] == '-' || u[b] == '.')
        b++;
      ksErrNear(p, WCS_ERROR, &t,
                "unrecognized token; a name with '-' or '.' must be "
                "quoted: \"%.*s\"",
                b - a, z + a);
    } else if (iTok == TOK_ILLEGAL && (u[i] == '-' || u[i] == '+') &&
               u[i + 1] >= '0' && u[i + 1] <= '9') {
      ksErrNear(p, WCS_ERROR, &t,
                "unrecognized token; the numbers of these clauses are "
                "whole numbers without a sign");
    } else if (iTok == TOK_ILLEGAL) {
      ksErrNear(p, WCS_ERROR, &t, "unrecognized token");
    } else if (iTok == TOK_BADHEX) {
      ksErrNear(p, WCS_ERROR, &t,
                "an X'...' literal needs an even number "
                "of hex digits");
    } else if (iTok == TOK_UNTERM) {
      ksErrNear(p, WCS_ERROR, &t, "unterminated string, name or comment");
    } else {
      ksDdlParser(pParser, iTok, t, p);
    }
    i += n;
  }
  return p->rc == WCS_OK;
}

static int parseClauses(int nArg, const char *const *azArg,
                        ks_schema **ppSchema, char **pzErr) {
  ks_pctx ctx;
  void *pParser;
  int i;
  ks_token tEnd = {NULL, 0};
  *ppSchema = NULL;
  memset(&ctx, 0, sizeof ctx);
  ctx.iFam = -1;
  ctx.pSchema = calloc(1, sizeof(ks_schema));
  pParser = ksDdlParserAlloc(malloc);
  if (ctx.pSchema == NULL || pParser == NULL) {
    free(ctx.pSchema);
    if (pParser) ksDdlParserFree(pParser, free);
    return WCS_NOMEM;
  }
  ctx.pSchema->iSync = -1;
  ctx.pSchema->iZstdLevel = -1;
  ctx.pSchema->nCacheBytes = -1;
  for (i = 0; i < nArg && ctx.rc == WCS_OK; i++) {
    if (i > 0) ksDdlParser(pParser, TK_COMMA, tEnd, &ctx);
    if (ctx.rc == WCS_OK && azArg[i]) feedText(&ctx, pParser, azArg[i]);
  }
  if (ctx.rc == WCS_OK) ksDdlParser(pParser, 0, tEnd, &ctx);
  ksDdlParserFree(pParser, free);
  if (ctx.rc != WCS_OK) {
    ks_schema_free(ctx.pSchema);
    if (pzErr && *pzErr == NULL) {
      *pzErr = ctx.zErr;
      ctx.zErr = NULL;
    }
    free(ctx.zErr);
    return ctx.rc;
  }
  free(ctx.zErr);
  *ppSchema = ctx.pSchema;
  return WCS_OK;
}

int ks_parse_args(int nArg, const char *const *azArg, ks_schema **ppSchema,
                  char **pzErr) {
  return parseClauses(nArg, azArg, ppSchema, pzErr);
}

int ks_parse_text(const char *zText, ks_schema **ppSchema, char **pzErr) {
  const char *az[1];
  az[0] = zText ? zText : "";
  return parseClauses(1, az, ppSchema, pzErr);
}
