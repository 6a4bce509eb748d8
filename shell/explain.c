/*
** explain.c — the .explain command: the plan of a statement in words,
** with the key ranges a wcs table scan will read.
**
** How it works:
**   1. EXPLAIN QUERY PLAN gives the steps as a tree (id, parent, detail).
**      A wcs scan reads "SCAN t VIRTUAL TABLE INDEX n:<plan in words>",
**      the words being the module's idxStr ("PREFIX SCAN (device,id)").
**      Each step is printed indented under its parent; a wcs step as
**      "t: <words>".
**   2. Key ranges. The words are made when the values of the constraints
**      may not be known yet, so the ranges are worked out here: for a
**      statement that reads one table, the WHERE clause is split at its
**      top-level ANDs, and each term of the form `field op literal`
**      (=, ==, IS, <, <=, >, >=, BETWEEN, IN (...), GLOB, LIKE,
**      starts_with(field, literal)) on a key field or _key becomes a
**      ks_constraint. The keyschema planner (ks_plan_make, the planner the
**      module uses) turns them into ranges, printed as ks_plan_explain
**      gives them: "[phone#4c410523#, phone#4c410523$)". Terms it cannot
**      read (expressions, parameters, OR) are left out, which can only
**      widen the ranges shown, never hide a key the scan reads; when a
**      statement reads several tables no ranges are shown.
*/
#include <stdlib.h>
#include <string.h>

#include "keyschema/schema.h"
#include "shell/shell.h"

#define MAX_RANGES_SHOWN 8
#define MAX_TERMS        32 /* WHERE terms read */
#define MAX_IN           64 /* values of one IN list (a longer list is skipped) */

/* ---- a small SQL tokenizer, enough to find WHERE terms */

#define T_EOF   0
#define T_ID    1 /* identifier or keyword (bare or quoted) */
#define T_STR   2 /* 'string' */
#define T_NUM   3 /* number */
#define T_BLOB  4 /* x'hex' */
#define T_OP    5 /* = == < <= > >= <> != */
#define T_LP    6
#define T_RP    7
#define T_COMMA 8
#define T_DOT   9
#define T_OTHER 10 /* anything else (operators, parameters, ;) */

typedef struct Tok {
  int e;
  const char *z;
  int n;
} Tok;

static int tokenize(const char *z, Tok **paTok) {
  Tok *a = 0;
  int n = 0, nAlloc = 0;
  for (;;) {
    Tok t;
    while (*z == ' ' || *z == '\t' || *z == '\n' || *z == '\r')
      z++;
    if (z[0] == '-' && z[1] == '-') {
      while (*z && *z != '\n')
        z++;
      continue;
    }
    if (z[0] == '/' && z[1] == '*') {
      const char *zEnd = strstr(z + 2, "*/");
      z = zEnd ? zEnd + 2 : z + strlen(z);
      continue;
    }
    t.z = z;
    if (*z == 0) {
      t.e = T_EOF;
    } else if ((z[0] == 'x' || z[0] == 'X') && z[1] == '\'') {
      z += 2;
      while (*z && *z != '\'')
        z++;
      if (*z) z++;
      t.e = T_BLOB;
    } else if (*z == '\'') {
      z++;
      while (*z) {
        if (*z == '\'' && z[1] == '\'')
          z += 2;
        else if (*z == '\'')
          break;
        else
          z++;
      }
      if (*z) z++;
      t.e = T_STR;
    } else if (*z == '"' || *z == '`' || *z == '[') {
      char q = *z == '[' ? ']' : *z;
      z++;
      while (*z && *z != q)
        z++;
      if (*z) z++;
      t.e = T_ID;
    } else if ((*z >= '0' && *z <= '9') ||
               (*z == '.' && z[1] >= '0' && z[1] <= '9')) {
      while ((*z >= '0' && *z <= '9') || *z == '.' || *z == 'e' || *z == 'E' ||
             ((*z == '+' || *z == '-') && (z[-1] == 'e' || z[-1] == 'E'))) {
        z++;
      }
      t.e = T_NUM;
    } else if ((*z >= 'a' && *z <= 'z') || (*z >= 'A' && *z <= 'Z') ||
               *z == '_' || (unsigned char)*z >= 0x80) {
      while ((*z >= 'a' && *z <= 'z') || (*z >= 'A' && *z <= 'Z') ||
             (*z >= '0' && *z <= '9') || *z == '_' || *z == '$' ||
             (unsigned char)*z >= 0x80) {
        z++;
      }
      t.e = T_ID;
    } else if (*z == '=' || *z == '<' || *z == '>' || *z == '!') {
      z++;
      if (*z == '=' || (t.z[0] == '<' && *z == '>')) z++;
      t.e = T_OP;
    } else if (*z == '(') {
      z++;
      t.e = T_LP;
    } else if (*z == ')') {
      z++;
      t.e = T_RP;
    } else if (*z == ',') {
      z++;
      t.e = T_COMMA;
    } else if (*z == '.') {
      z++;
      t.e = T_DOT;
    } else {
      z++;
      t.e = T_OTHER;
    }
    t.n = (int)(z - t.z);
    if (n == nAlloc) {
      Tok *aNew = realloc(a, sizeof(Tok) * (size_t)(nAlloc ? nAlloc * 2 : 64));
      if (!aNew) {
        free(a);
        *paTok = 0;
        return 0;
      }
      a = aNew;
      nAlloc = nAlloc ? nAlloc * 2 : 64;
    }
    a[n++] = t;
    if (t.e == T_EOF) break;
  }
  *paTok = a;
  return n;
}

static int is_kw(const Tok *t, const char *zKw) {
  return t->e == T_ID && (int)strlen(zKw) == t->n &&
         sqlite3_strnicmp(t->z, zKw, t->n) == 0;
}

/* The identifier's text without quotes (malloc'd). */
static char *ident(const Tok *t) {
  if (t->n >= 2 && (t->z[0] == '"' || t->z[0] == '`' || t->z[0] == '[')) {
    return strndup(t->z + 1, (size_t)t->n - 2);
  }
  return strndup(t->z, (size_t)t->n);
}

/* ---- constraints */

typedef struct Cons {
  ks_constraint c;
  int bBlob; /* every value was a BLOB literal */
  ks_value aVal[MAX_IN];
  char *azOwned[MAX_IN]; /* decoded string/blob bytes */
} Cons;

/* Read a literal at a[*pi] into v (strings and blobs decoded into a
** malloc'd buffer kept in *pzOwn). 0 if it is not a literal, 2 for a
** BLOB (x'..' or CAST('..' AS BLOB)), 1 for others. */
static int literal(const Tok *a, int *pi, ks_value *v, char **pzOwn) {
  const Tok *t = &a[*pi];
  int bNeg = 0;
  *pzOwn = 0;
  memset(v, 0, sizeof(*v));
  if (t->e == T_OTHER && (t->z[0] == '-' || t->z[0] == '+') &&
      a[*pi + 1].e == T_NUM) {
    bNeg = t->z[0] == '-';
    (*pi)++;
    t = &a[*pi];
  }
  if (t->e == T_NUM) {
    char zNum[64];
    char *zEnd;
    if (t->n >= (int)sizeof(zNum)) return 0;
    memcpy(zNum, t->z, (size_t)t->n);
    zNum[t->n] = 0;
    if (!strpbrk(zNum, ".eE")) {
      long long i = strtoll(zNum, &zEnd, 10);
      if (*zEnd) return 0;
      v->eType = KS_VAL_INT;
      v->i = bNeg ? -i : i;
    } else {
      double r = strtod(zNum, &zEnd);
      if (*zEnd) return 0;
      v->eType = KS_VAL_REAL;
      v->r = bNeg ? -r : r;
    }
    (*pi)++;
    return 1;
  }
  if (bNeg) return 0;
  if (is_kw(t, "CAST") && a[*pi + 1].e == T_LP && a[*pi + 2].e == T_STR &&
      is_kw(&a[*pi + 3], "AS") && is_kw(&a[*pi + 4], "BLOB") &&
      a[*pi + 5].e == T_RP) {
    int k = *pi + 2;
    if (!literal(a, &k, v, pzOwn)) return 0;
    *pi += 6;
    return 2;
  }
  if (t->e == T_STR) {
    char *z = malloc((size_t)t->n);
    int i, n = 0;
    if (!z) return 0;
    for (i = 1; i < t->n - 1; i++) {
      z[n++] = t->z[i];
      if (t->z[i] == '\'') i++; /* '' is one quote */
    }
    v->eType = KS_VAL_BYTES;
    v->p = (const uint8_t *)z;
    v->n = n;
    *pzOwn = z;
    (*pi)++;
    return 1;
  }
  if (t->e == T_BLOB) {
    int nHex = t->n - 3, i;
    char *z = malloc((size_t)(nHex / 2 + 1));
    if (!z || nHex % 2) {
      free(z);
      return 0;
    }
    for (i = 0; i < nHex / 2; i++) {
      char h[3] = {t->z[2 + 2 * i], t->z[3 + 2 * i], 0};
      z[i] = (char)strtol(h, 0, 16);
    }
    v->eType = KS_VAL_BYTES;
    v->p = (const uint8_t *)z;
    v->n = nHex / 2;
    *pzOwn = z;
    (*pi)++;
    return 2;
  }
  return 0;
}

/* A column reference at a[*pi] (name or qualifier.name) → key field
** index, KS_FIELD_KEY for _key, or -2 if it is not a key column. */
static int column(const ks_schema *s, const Tok *a, int *pi) {
  char *zName;
  int iField;
  if (a[*pi].e != T_ID) return -2;
  if (a[*pi + 1].e == T_DOT && a[*pi + 2].e == T_ID) *pi += 2;
  zName = ident(&a[*pi]);
  if (!zName) return -2;
  (*pi)++;
  if (sqlite3_stricmp(zName, "_key") == 0)
    iField = KS_FIELD_KEY;
  else
    iField = s->nField > 0 ? ks_schema_field(s, zName) : -1;
  free(zName);
  return iField >= 0 || iField == KS_FIELD_KEY ? iField : -2;
}

static int lit_note(int r, int *pbAllBlob) {
  if (r == 1) *pbAllBlob = 0;
  return r;
}

static int flip(int op) {
  switch (op) {
  case KS_OP_LT:
    return KS_OP_GT;
  case KS_OP_LE:
    return KS_OP_GE;
  case KS_OP_GT:
    return KS_OP_LT;
  case KS_OP_GE:
    return KS_OP_LE;
  default:
    return op;
  }
}

static int op_of(const Tok *t) {
  if (t->e == T_OP) {
    if ((t->n == 1 && t->z[0] == '=') || (t->n == 2 && t->z[0] == '=')) {
      return KS_OP_EQ;
    }
    if (t->z[0] == '<' && t->n == 1) return KS_OP_LT;
    if (t->z[0] == '<' && t->z[1] == '=') return KS_OP_LE;
    if (t->z[0] == '>' && t->n == 1) return KS_OP_GT;
    if (t->z[0] == '>' && t->z[1] == '=') return KS_OP_GE;
    return -1;
  }
  if (is_kw(t, "IS")) return KS_OP_EQ;
  return -1;
}

/* Parse the term a[i..iEnd) into 0, 1 or 2 constraints appended to aCons.
** Unreadable terms add nothing. */
static int parse_term(const ks_schema *s, const Tok *a, int i, int iEnd,
                      Cons *aCons, int nCons, int nMax) {
  int j = i, iField, op, bAllBlob = 1;
  Cons *c;
/* a literal into v/zOwn, noting whether it was a BLOB */
#define LIT(pj, v, pz) lit_note(literal(a, pj, v, pz), &bAllBlob)
  if (nCons + 2 > nMax) return nCons;
  c = &aCons[nCons];
  /* starts_with(col, 'x') */
  if (is_kw(&a[j], "starts_with") && a[j + 1].e == T_LP) {
    j += 2;
    iField = column(s, a, &j);
    if (iField == -2 || a[j].e != T_COMMA) return nCons;
    j++;
    if (!LIT(&j, &c->aVal[0], &c->azOwned[0])) return nCons;
    if (a[j].e != T_RP || j + 1 != iEnd) return nCons;
    c->c.iField = iField;
    c->c.op = KS_OP_PREFIX;
    c->c.aVal = c->aVal;
    c->c.nVal = 1;
    c->bBlob = bAllBlob;
    return nCons + 1;
  }
  /* literal op col */
  {
    int k = j;
    ks_value v;
    char *zOwn = 0;
    if (LIT(&k, &v, &zOwn)) {
      op = op_of(&a[k]);
      if (op >= 0) {
        int m = k + 1;
        iField = column(s, a, &m);
        if (iField != -2 && m == iEnd) {
          c->aVal[0] = v;
          c->azOwned[0] = zOwn;
          c->c.iField = iField;
          c->c.op = (ks_op)flip(op);
          c->c.aVal = c->aVal;
          c->c.nVal = 1;
          c->bBlob = bAllBlob;
          return nCons + 1;
        }
      }
      free(zOwn);
      return nCons;
    }
  }
  iField = column(s, a, &j);
  if (iField == -2) return nCons;
  c->c.iField = iField;
  c->c.aVal = c->aVal;
  if (is_kw(&a[j], "BETWEEN")) {
    Cons *c2 = &aCons[nCons + 1];
    j++;
    if (!LIT(&j, &c->aVal[0], &c->azOwned[0])) return nCons;
    if (!is_kw(&a[j], "AND")) goto fail;
    j++;
    if (!LIT(&j, &c2->aVal[0], &c2->azOwned[0]) || j != iEnd) {
      free(c2->azOwned[0]);
      c2->azOwned[0] = 0;
      goto fail;
    }
    c->c.op = KS_OP_GE;
    c->c.nVal = 1;
    c2->c.iField = iField;
    c2->c.op = KS_OP_LE;
    c2->c.aVal = c2->aVal;
    c2->c.nVal = 1;
    c->bBlob = c2->bBlob = bAllBlob;
    return nCons + 2;
  }
  if (is_kw(&a[j], "IN") && a[j + 1].e == T_LP) {
    int n = 0;
    j += 2;
    while (a[j].e != T_RP) {
      if (n == MAX_IN || !LIT(&j, &c->aVal[n], &c->azOwned[n])) {
        goto fail;
      }
      n++;
      if (a[j].e == T_COMMA)
        j++;
      else if (a[j].e != T_RP)
        goto fail;
    }
    if (j + 1 != iEnd) goto fail;
    c->c.op = KS_OP_IN;
    c->c.nVal = n;
    c->bBlob = bAllBlob;
    return nCons + 1;
  }
  if (is_kw(&a[j], "GLOB") || is_kw(&a[j], "LIKE")) {
    c->c.op = is_kw(&a[j], "GLOB") ? KS_OP_GLOB_PREFIX : KS_OP_LIKE_PREFIX;
    j++;
    if (!LIT(&j, &c->aVal[0], &c->azOwned[0]) || j != iEnd) goto fail;
    c->c.nVal = 1;
    c->bBlob = bAllBlob;
    return nCons + 1;
  }
  op = op_of(&a[j]);
  if (op < 0) return nCons;
  if (is_kw(&a[j], "IS") && is_kw(&a[j + 1], "NOT")) return nCons;
  j++;
  if (!LIT(&j, &c->aVal[0], &c->azOwned[0]) || j != iEnd) goto fail;
  c->c.op = (ks_op)op;
  c->c.nVal = 1;
  c->bBlob = bAllBlob;
  return nCons + 1;
fail : {
  int k;
  for (k = 0; k < MAX_IN; k++) {
    free(c->azOwned[k]);
    c->azOwned[k] = 0;
  }
  return nCons;
}
#undef LIT
}

/* The single table a statement reads (named zTable or aliased so, as
** EXPLAIN QUERY PLAN names it), malloc'd, and its WHERE constraints
** (when s is not NULL); NULL if the statement is not a plain one-table
** SELECT/UPDATE/DELETE. */
static char *where_constraints(const ks_schema *s, const char *zSql,
                               const char *zTable, Cons *aCons, int *pnCons) {
  Tok *a = 0;
  int n = tokenize(zSql, &a), i, depth = 0, iFrom = -1, iWhere = -1, iEnd;
  int nCons = 0;
  char *zFound = 0;
  *pnCons = 0;
  if (n == 0) return 0;
  for (i = 0; i < n && a[i].e != T_EOF; i++) {
    if (a[i].e == T_LP)
      depth++;
    else if (a[i].e == T_RP)
      depth--;
    else if (depth == 0 && iFrom < 0 &&
             (is_kw(&a[i], "FROM") || is_kw(&a[i], "UPDATE"))) {
      iFrom = i;
    } else if (depth == 0 && iFrom >= 0 && iWhere < 0 &&
               is_kw(&a[i], "WHERE")) {
      iWhere = i;
    } else if (depth > 0 && (is_kw(&a[i], "SELECT"))) {
      goto done; /* subqueries: not a one-table statement */
    } else if (depth == 0 &&
               (is_kw(&a[i], "JOIN") || is_kw(&a[i], "UNION") ||
                is_kw(&a[i], "INTERSECT") || is_kw(&a[i], "EXCEPT"))) {
      goto done;
    }
  }
  if (iFrom < 0 || a[iFrom + 1].e != T_ID) goto done;
  zFound = ident(&a[iFrom + 1]);
  if (zFound && sqlite3_stricmp(zFound, zTable) != 0) {
    /* EXPLAIN QUERY PLAN names a scan by its alias: FROM t [AS] alias */
    int k = iFrom + 2;
    char *zAlias;
    if (is_kw(&a[k], "AS")) k++;
    zAlias = a[k].e == T_ID && !is_kw(&a[k], "WHERE") ? ident(&a[k]) : 0;
    if (!zAlias || sqlite3_stricmp(zAlias, zTable) != 0) {
      free(zFound);
      zFound = 0;
    }
    free(zAlias);
  }
  if (!zFound) goto done;
  /* FROM t [AS] [alias] then WHERE, or a comma (several tables) */
  for (i = iFrom + 2; i < n && (iWhere < 0 || i < iWhere); i++) {
    if (a[i].e == T_COMMA && depth == 0 && !is_kw(&a[iFrom], "UPDATE")) {
      free(zFound);
      zFound = 0;
      goto done;
    }
  }
  if (iWhere < 0) goto done;
  iEnd = iWhere + 1;
  depth = 0;
  for (i = iWhere + 1; i < n; i++) {
    int bStop =
        a[i].e == T_EOF ||
        (depth == 0 && (is_kw(&a[i], "GROUP") || is_kw(&a[i], "ORDER") ||
                        is_kw(&a[i], "LIMIT") || is_kw(&a[i], "HAVING") ||
                        is_kw(&a[i], "WINDOW") || is_kw(&a[i], "RETURNING") ||
                        (a[i].e == T_OTHER && a[i].z[0] == ';')));
    int bAnd = depth == 0 && is_kw(&a[i], "AND");
    if (a[i].e == T_LP) depth++;
    if (a[i].e == T_RP) depth--;
    if (depth == 0 && is_kw(&a[i], "OR")) { /* an OR of terms: give up */
      nCons = 0;
      break;
    }
    /* BETWEEN x AND y: that AND belongs to the term */
    if (bAnd) {
      int k, bBetween = 0;
      for (k = iEnd; k < i; k++) {
        if (is_kw(&a[k], "BETWEEN")) bBetween = !bBetween;
        if (is_kw(&a[k], "AND") && k > iEnd) bBetween = 0;
      }
      if (bBetween) continue;
    }
    if (bStop || bAnd) {
      if (i > iEnd && s) {
        nCons = parse_term(s, a, iEnd, i, aCons, nCons, MAX_TERMS);
      }
      iEnd = i + 1;
      if (bStop) break;
    }
  }
  *pnCons = nCons;
done:
  free(a);
  return zFound;
}

/* Key ranges for a scan of wcs table zTable by zSql: malloc'd lines, or
** NULL when they cannot be worked out. *pnKeyField: the key fields the
** plan bounds (ks_plan.nKeyField). */
static char *key_ranges(Shell *p, const char *zTable, const char *zSql,
                        int bSkip, int *pnKeyField) {
  static Cons aCons[MAX_TERMS];
  ks_constraint aC[MAX_TERMS];
  wcs_table *pTab = 0;
  const ks_schema *s;
  ks_plan *pPlan = 0;
  ks_plan_opts opts;
  char *zOut = 0, *zErr = 0, *zFound;
  int nCons = 0, i, nSaveErr = p->nErr;

  /* Which table: the scan may be named by an alias. */
  memset(aCons, 0, sizeof(aCons));
  zFound = where_constraints(0, zSql, zTable, aCons, &nCons);
  if (!zFound) return 0;
  {
    wcs_engine *pEng = 0;
    char *zStoreName = 0;
    int bHistory = 0;
    if (shell_table_store(p, zFound, 0, &pEng, &zStoreName, &bHistory) ||
        !pEng || !zStoreName ||
        wcs_table_open(pEng, zStoreName, &pTab) != WCS_OK || !pTab) {
      p->nErr = nSaveErr; /* no ranges is not an error of .explain's */
      free(zStoreName);
      free(zFound);
      return 0;
    }
    free(zStoreName);
  }
  s = wcs_table_schema(pTab);
  free(zFound);
  zFound = where_constraints(s, zSql, zTable, aCons, &nCons);
  if (zFound) {
    int nKeep = 0;
    for (i = 0; i < nCons; i++) {
      /* _key compared with text is not a key range in SQLite's eyes (a
      ** BLOB never equals TEXT): only x'..' and CAST(.. AS BLOB) count. */
      if (aCons[i].c.iField == KS_FIELD_KEY && !aCons[i].bBlob) continue;
      aC[nKeep++] = aCons[i].c;
    }
    nCons = nKeep;
    memset(&opts, 0, sizeof(opts));
    opts.bAllowSkip = bSkip;
    if (ks_plan_make(s, aC, nCons, &opts, &pPlan, &zErr) == WCS_OK) {
      ks_plan_explain(pPlan, MAX_RANGES_SHOWN, &zOut);
      *pnKeyField = pPlan->nKeyField;
      if (zOut && pPlan->eKind == KS_PLAN_SKIP && pPlan->nSkipDepth > 0 &&
          pPlan->nSkipDepth <= s->nField) {
        /* say how the skip scan moves: "~" marks a note, not a range */
        char *zNote = sqlite3_mprintf("%s\n~within it, seeks from one (", zOut);
        int k;
        for (k = 0; zNote && k < pPlan->nSkipDepth; k++) {
          char *z2 = sqlite3_mprintf("%s%s%s", zNote, k ? "," : "",
                                     s->aField[k].zName);
          sqlite3_free(zNote);
          zNote = z2;
        }
        if (zNote) {
          char *z2 = sqlite3_mprintf("%s) prefix to the next", zNote);
          sqlite3_free(zNote);
          zNote = z2;
        }
        if (zNote) {
          free(zOut);
          zOut = strdup(zNote);
          sqlite3_free(zNote);
        }
      }
    }
    ks_plan_free(pPlan);
    free(zErr);
    free(zFound);
  }
  for (i = 0; i < MAX_TERMS; i++) {
    int k;
    for (k = 0; k < MAX_IN; k++)
      free(aCons[i].azOwned[k]);
  }
  wcs_table_close(pTab);
  return zOut;
}

/* ---- the plan tree */

typedef struct PlanRow {
  int id;
  int parent;
  char *zDetail;
} PlanRow;

/* Whether the module's words after a plan's kind (" (device,id) LIMIT",
** " (2 ranges on device,id)") name nKeyField key fields; words without
** fields (a point, a skip or full scan) name any number. */
static int same_field_count(const char *zAfter, int nKeyField) {
  const char *zOpen, *zClose, *zOn, *z;
  int n = 1;
  if (zAfter[0] != ' ' || zAfter[1] != '(') return 1;
  zOpen = zAfter + 2;
  zClose = strchr(zOpen, ')');
  if (zClose == 0) return 1;
  if (strncmp(zOpen, "_key)", 5) == 0) return nKeyField == 0;
  zOn = strstr(zOpen, " on ");
  if (zOn && zOn < zClose) zOpen = zOn + 4;
  for (z = zOpen; z < zClose; z++) {
    if (*z == ',') n++;
  }
  return strstr(zAfter, "IN list") != 0 || strstr(zAfter, "keys)") != 0 ||
         n == nKeyField;
}

/* Say an EXPLAIN QUERY PLAN detail in words. */
static void say_detail(Shell *p, const char *zDetail, int nIndent,
                       const char *zSql) {
  const char *zV = strstr(zDetail, " VIRTUAL TABLE INDEX ");
  /* SQLite says SEARCH where it reads a table for one value (min(), max(),
  ** a subquery), SCAN elsewhere: the same plan of the module either way */
  int nVerb = strncmp(zDetail, "SCAN ", 5) == 0     ? 5
              : strncmp(zDetail, "SEARCH ", 7) == 0 ? 7
                                                    : 0;
  fprintf(p->out, "%*s", nIndent, "");
  if (zV && nVerb > 0 && zV > zDetail + nVerb) {
    const char *zPlan = strchr(zV + 21, ':');
    int nTab = (int)(zV - zDetail) - nVerb;
    char *zTab = strndup(zDetail + nVerb, (size_t)nTab);
    char *zRanges;
    int nKeyField = -1;
    zPlan = zPlan ? zPlan + 1 : "";
    fprintf(p->out, "%.*s: %s\n", nTab, zDetail + nVerb,
            zPlan[0] ? zPlan : "(no plan text)");
    /* "SCAN t AS alias": the table is the first word */
    if (zTab && strchr(zTab, ' ')) *strchr(zTab, ' ') = 0;
    zRanges =
        zTab && strncmp(zPlan, "FULL SCAN", 9) != 0 &&
                strncmp(zPlan, "EMPTY", 5) != 0
            ? key_ranges(p, zTab, zSql, strstr(zPlan, "SKIP") != 0, &nKeyField)
            : 0;
    /* Shown only when the planner, given the terms read here, makes the
    ** plan the module reports, on as many key fields (so the ranges are
    ** the module's): its words begin with the kind ("PREFIX SCAN"), and
    ** the fields are those in its parentheses, after any "... on ". */
    if (zRanges) {
      const char *z = strchr(zRanges, '\n');
      size_t nKind = strcspn(zRanges, "(\n"); /* "PREFIX SCAN " */
      int bFirst = 1;
      while (nKind > 0 && zRanges[nKind - 1] == ' ')
        nKind--;
      if (strncmp(zPlan, zRanges, nKind) != 0 ||
          (zPlan[nKind] != 0 && zPlan[nKind] != ' ') ||
          !same_field_count(zPlan + nKind, nKeyField)) {
        z = 0; /* the same plan, or nothing */
      }
      while (z) {
        const char *zNext = strchr(z + 1, '\n');
        int n = zNext ? (int)(zNext - z - 1) : (int)strlen(z + 1);
        if (z[1] == '~') {
          fprintf(p->out, "%*s  %.*s\n", nIndent, "", n - 1, z + 2);
        } else {
          fprintf(p->out, "%*s  %s %.*s\n", nIndent, "",
                  bFirst ? "key range:" : "          ", n, z + 1);
        }
        bFirst = 0;
        z = zNext;
      }
    }
    free(zRanges);
    free(zTab);
  } else if (strncmp(zDetail, "SCAN ", 5) == 0 && !strchr(zDetail + 5, ' ')) {
    fprintf(p->out, "%s: FULL SCAN (native SQLite table)\n", zDetail + 5);
  } else {
    fprintf(p->out, "%s\n", zDetail);
  }
}

static void explain_tree(Shell *p, PlanRow *a, int n, int iParent, int nIndent,
                         const char *zSql) {
  int i;
  for (i = 0; i < n; i++) {
    if (a[i].parent != iParent) continue;
    say_detail(p, a[i].zDetail, nIndent, zSql);
    explain_tree(p, a, n, a[i].id, nIndent + 2, zSql);
  }
}

int shell_explain(Shell *p, const char *zSql) {
  sqlite3_stmt *pStmt = 0;
  char *zEqp;
  PlanRow *a = 0;
  int n = 0, nAlloc = 0, rc, i;

  while (*zSql == ' ' || *zSql == '\t' || *zSql == '\n')
    zSql++;
  if (*zSql == 0) return shell_error(p, "usage: .explain SQL");
  zEqp = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", zSql);
  if (!zEqp) return shell_error(p, "out of memory");
  rc = sqlite3_prepare_v2(p->db, zEqp, -1, &pStmt, 0);
  sqlite3_free(zEqp);
  if (rc != SQLITE_OK) return shell_error(p, "%s", sqlite3_errmsg(p->db));
  if (!pStmt) return shell_error(p, "usage: .explain SQL");
  while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
    const char *z = (const char *)sqlite3_column_text(pStmt, 3);
    if (n == nAlloc) {
      PlanRow *aNew = realloc(a, sizeof(PlanRow) * (nAlloc ? nAlloc * 2 : 16));
      if (!aNew) break;
      a = aNew;
      nAlloc = nAlloc ? nAlloc * 2 : 16;
    }
    a[n].id = sqlite3_column_int(pStmt, 0);
    a[n].parent = sqlite3_column_int(pStmt, 1);
    a[n].zDetail = strdup(z ? z : "");
    if (!a[n].zDetail) break;
    n++;
  }
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    shell_error(p, "%s", sqlite3_errmsg(p->db));
  }
  sqlite3_finalize(pStmt);
  if (rc == SQLITE_DONE && n == 0) {
    fprintf(p->out, "plan: none (the statement reads no table)\n");
  } else if (rc == SQLITE_DONE) {
    fprintf(p->out, "plan:\n");
    explain_tree(p, a, n, 0, 2, zSql);
  }
  for (i = 0; i < n; i++)
    free(a[i].zDetail);
  free(a);
  fflush(p->out);
  return rc == SQLITE_DONE ? 0 : 1;
}
