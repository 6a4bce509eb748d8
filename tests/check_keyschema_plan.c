/*
** check_keyschema_plan.c — the planner (keyschema/plan.c): a table of
** constraint sets and the plan each must give (kind, words, key ranges,
** which constraints are exact), then a brute-force check over random
** schemas, stored keys and constraints: walking the plan with
** ks_plan_start/ks_plan_check (forward, reverse, and per salt bucket)
** yields, after re-checking the inexact constraints, exactly the keys that
** satisfy all constraints, in key order, and never a key that breaks an
** exact one.
**
** Constraints are written in a small notation: terms separated by ';',
** each `field OP value` with OP one of = < <= > >= (values as written;
** 'quoted' forces text, a value with '.' is a real, \xNN is a byte,
** NULL is NULL), `field in(v,v,...)`, `field like:PATTERN`,
** `field glob:PATTERN`, `field prefix:TEXT`, `field isnull`,
** `field notnull`. The field `_key` is the raw row key; int:N is an
** integer whatever the field.
*/
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyschema/ksint.h"
#include "keyschema/schema.h"
#include "testutil.h"

Suite *keyschema_plan_suite(void);

static ks_schema *mustParse(const char *z) {
  ks_schema *s = NULL;
  char *zErr = NULL;
  int rc = ks_parse_text(z, &s, &zErr);
  ck_assert_msg(rc == WCS_OK, "parse of [%s] failed: %s", z, zErr);
  free(zErr);
  return s;
}

/* ====================================================================
** The constraint notation
** ==================================================================== */

#define MAXC 8
#define MAXV 64

typedef struct Cons {
  ks_constraint a[MAXC];
  int n;
  ks_value aVal[MAXC][MAXV];
  uint8_t aBytes[MAXC][MAXV][64];
} Cons;

/* Parse one value (up to a delimiter in zEnd) into v. */
static const char *parseValue(const char *z, const char *zStop, ks_value *v,
                              uint8_t *aBuf, int bIntField) {
  int n = 0, bQuoted = 0, bReal = 0, bNum = 1;
  const char *zStart;
  memset(v, 0, sizeof(*v));
  while (*z == ' ')
    z++;
  if (*z == '\'') {
    bQuoted = 1;
    z++;
  }
  zStart = z;
  while (*z && !strchr(zStop, *z) && !(bQuoted && *z == '\'')) {
    if (z[0] == '\\' && z[1] == 'x') {
      char h[3] = {z[2], z[3], 0};
      aBuf[n++] = (uint8_t)strtol(h, NULL, 16);
      z += 4;
      bNum = 0;
      continue;
    }
    if (*z == '.') bReal = 1;
    if (!(isdigit((unsigned char)*z) || *z == '-' || *z == '.')) bNum = 0;
    aBuf[n++] = (uint8_t)*z++;
  }
  if (bQuoted && *z == '\'') z++;
  if (!bQuoted && n > 4 && memcmp(zStart, "int:", 4) == 0) {
    aBuf[n] = 0;
    v->eType = KS_VAL_INT;
    v->i = strtoll((const char *)aBuf + 4, NULL, 10);
  } else if (!bQuoted && n == 4 && memcmp(zStart, "NULL", 4) == 0) {
    v->eType = KS_VAL_NULL;
  } else if (!bQuoted && bIntField && bNum && n > 0) {
    aBuf[n] = 0;
    if (bReal) {
      v->eType = KS_VAL_REAL;
      v->r = strtod((const char *)aBuf, NULL);
    } else {
      v->eType = KS_VAL_INT;
      v->i = strtoll((const char *)aBuf, NULL, 10);
    }
  } else {
    v->eType = KS_VAL_BYTES;
    v->p = aBuf;
    v->n = n;
  }
  return z;
}

static void parseCons(const ks_schema *s, const char *zSpec, Cons *c) {
  const char *z = zSpec;
  memset(c, 0, sizeof(*c));
  while (z && *z) {
    char zField[64];
    int n = 0, iField, bInt;
    ks_constraint *k = &c->a[c->n];
    while (*z == ' ' || *z == ';')
      z++;
    if (!*z) break;
    while (isalnum((unsigned char)*z) || *z == '_')
      zField[n++] = *z++;
    zField[n] = 0;
    iField =
        strcmp(zField, "_key") == 0 ? KS_FIELD_KEY : ks_schema_field(s, zField);
    ck_assert_msg(iField != -1 || strcmp(zField, "_key") == 0, "no field %s",
                  zField);
    bInt = iField >= 0 && (s->aField[iField].eType == KS_INT64 ||
                           s->aField[iField].eType == KS_TIMESTAMP);
    k->iField = iField;
    k->aVal = c->aVal[c->n];
    k->nVal = 1;
    while (*z == ' ')
      z++;
    if (strncmp(z, "in(", 3) == 0) {
      k->op = KS_OP_IN;
      k->nVal = 0;
      z += 3;
      while (*z && *z != ')') {
        z = parseValue(z, ",)", &c->aVal[c->n][k->nVal],
                       c->aBytes[c->n][k->nVal], bInt);
        k->nVal++;
        if (*z == ',') z++;
      }
      if (*z == ')') z++;
    } else if (strncmp(z, "like:", 5) == 0 || strncmp(z, "glob:", 5) == 0 ||
               strncmp(z, "prefix:", 7) == 0) {
      k->op = z[0] == 'l'   ? KS_OP_LIKE_PREFIX
              : z[0] == 'g' ? KS_OP_GLOB_PREFIX
                            : KS_OP_PREFIX;
      z = strchr(z, ':') + 1;
      z = parseValue(z, ";", &c->aVal[c->n][0], c->aBytes[c->n][0], 0);
    } else if (strncmp(z, "isnull", 6) == 0) {
      k->op = KS_OP_ISNULL;
      k->nVal = 0;
      z += 6;
    } else if (strncmp(z, "notnull", 7) == 0) {
      k->op = KS_OP_ISNOTNULL;
      k->nVal = 0;
      z += 7;
    } else {
      if (z[0] == '<' && z[1] == '=')
        k->op = KS_OP_LE, z += 2;
      else if (z[0] == '>' && z[1] == '=')
        k->op = KS_OP_GE, z += 2;
      else if (z[0] == '<')
        k->op = KS_OP_LT, z++;
      else if (z[0] == '>')
        k->op = KS_OP_GT, z++;
      else if (z[0] == '=')
        k->op = KS_OP_EQ, z++;
      else
        ck_abort_msg("bad operator at [%s]", z);
      z = parseValue(z, ";", &c->aVal[c->n][0], c->aBytes[c->n][0], bInt);
    }
    c->n++;
  }
}

/* ====================================================================
** The table
** ==================================================================== */

#define M                                                                      \
  "KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#'"

static const struct {
  const char *zSchema;
  const char *zCons;
  int bSkip;          /* ks_plan_opts.bAllowSkip */
  int nCap;           /* ks_plan_opts.nMaxPoints */
  const char *zPlan;  /* ks_plan_explain(nMax 8) */
  const char *zExact; /* bExact of each constraint */
} aCase[] = {
    /* equality on leading fields: the prefix includes the delimiter */
    {M, "device=phone; id=4c41", 0, 0,
     "PREFIX SCAN (device,id)\n[phone#4c41#, phone#4c41$)", "11"},
    {M, "device=phone; id=4c41; day=20200501", 0, 0,
     "POINT LOOKUP\n[phone#4c41#20200501, phone#4c41#20200501]", "111"},
    /* a range after an equality prefix */
    {M, "device=phone; id=4c41; day>=20200501; day<20200531", 0, 0,
     "RANGE SCAN (device,id,day)\n[phone#4c41#20200501, phone#4c41#20200530]",
     "1111"},
    {M, "device=phone; id>4c41; id<=4c50", 0, 0,
     "RANGE SCAN (device,id)\n[phone#4c41$, phone#4c50$)", "111"},
    {M, "device=phone; id=4c41; day<20200531.5", 0, 0,
     "RANGE SCAN (device,id,day)\n[phone#4c41#, phone#4c41#20200531]", "111"},
    /* an empty string field */
    {M, "device=''", 0, 0, "PREFIX SCAN (device)\n[#, $)", "1"},
    {M, "device=''; id=''", 0, 0, "PREFIX SCAN (device,id)\n[##, #$)", "11"},
    /* a later field without skip scans is left to SQLite */
    {M, "device=phone; day>20200501", 0, 0,
     "PREFIX SCAN (device)\n[phone#, phone$)", "10"},
    {M, "device=phone; day>20200501", 1, 0,
     "SKIP SCAN on day\n[phone#, phone$)", "11"},
    {M, "id=4c41", 0, 0, "FULL SCAN\n(-inf, +inf)", "0"},
    {M, "id=4c41", 1, 0, "SKIP SCAN on id\n(-inf, +inf)", "1"},
    {M, "device>m; day=7", 1, 0, "SKIP SCAN on day\n[m$, +inf)", "11"},
    /* IN lists: sorted, deduplicated, cartesian product */
    {M, "device in(tablet,phone,phone)", 0, 0,
     "MULTI-RANGE SCAN (2 ranges on device)\n[phone#, phone$)\n"
     "[tablet#, tablet$)",
     "1"},
    {M, "device in(b,a); id in(y,x); day in(2,1)", 0, 0,
     "MULTI-POINT (8 keys)\n[a#x#00000001, a#x#00000001]\n"
     "[a#x#00000002, a#x#00000002]\n[a#y#00000001, a#y#00000001]\n"
     "[a#y#00000002, a#y#00000002]\n[b#x#00000001, b#x#00000001]\n"
     "[b#x#00000002, b#x#00000002]\n[b#y#00000001, b#y#00000001]\n"
     "[b#y#00000002, b#y#00000002]",
     "111"},
    {M, "device in(a,b); day in(1,2)", 0, 0,
     "MULTI-RANGE SCAN (2 ranges on device)\n[a#, a$)\n[b#, b$)", "10"},
    {M, "device in(a,b); id>x", 0, 0,
     "MULTI-RANGE SCAN (2 ranges on device,id)\n[a#x$, a$)\n[b#x$, b$)", "11"},
    {M, "device in()", 0, 0, "EMPTY", "1"},
    {M, "device in(a,NULL)", 0, 0, "PREFIX SCAN (device)\n[a#, a$)", "1"},
    /* past the cap: one covering range, re-checked by SQLite */
    {M, "device in(a,b,c); id in(x,y,z)", 0, 4,
     "MULTI-RANGE SCAN (3 ranges on device,id)\n[a#x#, a#z$)\n[b#x#, b#z$)\n"
     "[c#x#, c#z$)",
     "10"},
    {M, "device in(a,b,c)", 0, 2, "RANGE SCAN (device)\n[a#, c$)", "0"},
    {M, "device in(a,b,c)", 1, 2, "SKIP SCAN on device\n[a#, c$)", "1"},
    /* DECIMAL(n): bounds wider than n digits or negative */
    {M, "device=p; id=x; day>999999999", 0, 0, "EMPTY", "111"},
    {M, "device=p; id=x; day<-1", 0, 0, "EMPTY", "111"},
    {M, "device=p; id=x; day=123456789", 0, 0, "EMPTY", "111"},
    {M, "device=p; id=x; day<123456789", 0, 0,
     "PREFIX SCAN (device,id)\n[p#x#, p#x$)", "111"},
    {M, "device=p; id=x; day>=-5; day<=99999999", 0, 0,
     "PREFIX SCAN (device,id)\n[p#x#, p#x$)", "1111"},
    /* contradictions: no scan at all */
    {M, "device=a; device=b", 0, 0, "EMPTY", "11"},
    {M, "device=a; id=b; day>5; day<3", 0, 0, "EMPTY", "1111"},
    {M, "device>b; device<a", 0, 0, "EMPTY", "11"},
    {M, "device isnull", 0, 0, "EMPTY", "1"},
    {M, "device notnull", 0, 0, "FULL SCAN\n(-inf, +inf)", "1"},
    {M, "device=NULL", 0, 0, "EMPTY", "1"},
    /* values a delimited field cannot hold */
    {M, "device='a b'", 0, 0, "EMPTY", "1"},
    {M, "device>'a b'", 0, 0, "RANGE SCAN (device)\n[a$#, +inf)", "1"},
    {M, "device<='a b'", 0, 0, "RANGE SCAN (device)\n(-inf, a$)", "1"},
    {M, "device prefix:'a#'", 0, 0, "EMPTY", "1"},
    /* LIKE is case-insensitive in SQLite; GLOB is exact for 'literal*' */
    {M, "device like:ph%", 0, 0,
     "MULTI-RANGE SCAN (4 ranges on device)\n[PH#, PI#)\n[Ph#, Pi#)\n"
     "[pH#, pI#)\n[ph#, pi#)",
     "0"},
    /* past five letters, the variants of the first five (a sixth letter
    ** would make 64 ranges) */
    {M, "device like:abcdefgh%", 0, 0,
     "MULTI-RANGE SCAN (32 ranges on device)\n[ABCDE#, ABCDF#)\n"
     "[ABCDe#, ABCDf#)\n[ABCdE#, ABCdF#)\n[ABCde#, ABCdf#)\n"
     "[ABcDE#, ABcDF#)\n[ABcDe#, ABcDf#)\n[ABcdE#, ABcdF#)\n"
     "[ABcde#, ABcdf#)\n... 24 more",
     "0"},
    {M, "device like:12%", 0, 0, "RANGE SCAN (device)\n[12#, 13#)", "1"},
    {M, "device like:12_4", 0, 0, "RANGE SCAN (device)\n[12#, 13#)", "0"},
    {M, "device like:12", 0, 0, "PREFIX SCAN (device)\n[12#, 12$)", "1"},
    /* no wildcard: each case variant is a value of its own (one range
    ** from AB to ab would take in every key between, 'Zebra' or
    ** 'laptop'), and a value past five letters a range of each variant
    ** of its first five */
    {M, "device like:ab", 0, 0,
     "MULTI-RANGE SCAN (4 ranges on device)\n[AB#, AB$)\n[Ab#, Ab$)\n"
     "[aB#, aB$)\n[ab#, ab$)",
     "0"},
    {M, "device like:a1b", 0, 0,
     "MULTI-RANGE SCAN (4 ranges on device)\n[A1B#, A1B$)\n[A1b#, A1b$)\n"
     "[a1B#, a1B$)\n[a1b#, a1b$)",
     "0"},
    {M, "device like:abcdefg", 0, 0,
     "MULTI-RANGE SCAN (32 ranges on device)\n[ABCDE#, ABCDF#)\n"
     "[ABCDe#, ABCDf#)\n[ABCdE#, ABCdF#)\n[ABCde#, ABCdf#)\n"
     "[ABcDE#, ABcDF#)\n[ABcDe#, ABcDf#)\n[ABcdE#, ABcdF#)\n"
     "[ABcde#, ABcdf#)\n... 24 more",
     "0"},
    /* (LIKE reads a value up to its first 00 byte: 'ab' 00 'x' matches) */
    {"TABLE 't'", "_key like:ab", 0, 0,
     "MULTI-RANGE SCAN (8 ranges on _key)\n[AB, AB]\n[AB\\x00, AB\\x01)\n"
     "[Ab, Ab]\n[Ab\\x00, Ab\\x01)\n[aB, aB]\n[aB\\x00, aB\\x01)\n"
     "[ab, ab]\n[ab\\x00, ab\\x01)",
     "0"},
    {M, "device like:%x", 0, 0, "FULL SCAN\n(-inf, +inf)", "0"},
    {M, "device glob:ph*", 0, 0, "RANGE SCAN (device)\n[ph#, pi#)", "1"},
    {M, "device glob:p?one", 0, 0, "RANGE SCAN (device)\n[p#, q#)", "0"},
    {M, "device glob:phone", 0, 0, "PREFIX SCAN (device)\n[phone#, phone$)",
     "1"},
    {M, "device glob:ph*e", 0, 0, "RANGE SCAN (device)\n[ph#, pi#)", "0"},
    {M, "device prefix:ph", 0, 0, "RANGE SCAN (device)\n[ph#, pi#)", "1"},
    {M, "device prefix:''", 0, 0, "FULL SCAN\n(-inf, +inf)", "1"},
    /* a value of another class is left to SQLite */
    {M, "device=p; id=x; day='20200501'", 0, 0,
     "PREFIX SCAN (device,id)\n[p#x#, p#x$)", "110"},
    {M, "device=int:5", 0, 0, "FULL SCAN\n(-inf, +inf)", "0"},
    {M, "device=5", 0, 0, "PREFIX SCAN (device)\n[5#, 5$)", "1"},
    /* _key itself */
    {M, "_key=phone#x#00000001", 0, 0,
     "POINT LOOKUP\n[phone#x#00000001, phone#x#00000001]", "1"},
    {M, "_key>=b; _key<d", 0, 0, "RANGE SCAN (_key)\n[b, d)", "11"},
    {M, "_key>=b; _key<c", 0, 0, "PREFIX SCAN (_key)\n[b, c)", "11"},
    {M, "_key prefix:ph", 0, 0, "PREFIX SCAN (_key)\n[ph, pi)", "1"},
    {M, "_key glob:ph*", 0, 0, "PREFIX SCAN (_key)\n[ph, pi)", "1"},
    {M, "device=phone; _key<phone#m", 0, 0,
     "RANGE SCAN (device,_key)\n[phone#, phone#m)", "11"},
    {M, "device=phone; _key=zebra", 0, 0, "EMPTY", "11"},
    {"TABLE 't'", "_key in(b,a)", 0, 0, "MULTI-POINT (2 keys)\n[a, a]\n[b, b]",
     "1"},
    {"TABLE 't'", "", 0, 0, "FULL SCAN\n(-inf, +inf)", ""},
    /* REVERSED DECIMAL flips range direction */
    {"KEY (t TIMESTAMP REVERSED DECIMAL(4))", "t>=100; t<=200", 0, 0,
     "RANGE SCAN (t)\n[9799, 9899]", "11"},
    {"KEY (t TIMESTAMP REVERSED DECIMAL(4))", "t>9000", 0, 0,
     "RANGE SCAN (t)\n(-inf, 0998]", "1"},
    {"KEY (t TIMESTAMP REVERSED DECIMAL(4))", "t in(1,9999)", 0, 0,
     "MULTI-POINT (2 keys)\n[0000, 0000]\n[9998, 9998]", "1"},
    /* BIG ENDIAN holds no negatives */
    {"KEY (n INT64 BIG ENDIAN)", "n<0", 0, 0, "EMPTY", "1"},
    {"KEY (n INT64 BIG ENDIAN)", "n>=-10", 0, 0, "FULL SCAN\n(-inf, +inf)",
     "1"},
    {"KEY (n INT64 BIG ENDIAN)", "n<5", 0, 0,
     "RANGE SCAN (n)\n(-inf, \\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x04]", "1"},
    /* ORDERED CODE */
    {"KEY (n INT64)", "n>=-1; n<64", 0, 0, "RANGE SCAN (n)\n[\\x7F, \\xBF]",
     "11"},
    {"KEY (a STRING, n INT64) ORDERED CODE", "a=x; n>=0", 0, 0,
     "RANGE SCAN (a,n)\n[x\\x00\\x01\\x80, x\\x00\\x02)", "11"},
    {"KEY (a STRING, b STRING) ORDERED CODE", "a=x", 0, 0,
     "PREFIX SCAN (a)\n[x, x\\x00\\x02)", "1"},
    {"KEY (a STRING, b STRING) ORDERED CODE", "a=x; b=''", 0, 0,
     "POINT LOOKUP\n[x, x]", "11"},
    /* SALT: ranges fan out over the buckets, points go to their own */
    {"KEY (a STRING, b STRING) SALT 3", "a=x; b=y", 0, 0,
     "POINT LOOKUP\n[\\x00x#y, \\x00x#y]", "11"},
    {"KEY (a STRING, b STRING) SALT 3", "a=x", 0, 0,
     "PREFIX SCAN (a) OVER 3 BUCKETS\n[\\x00x#, \\x00x$)\n[\\x01x#, \\x01x$)\n"
     "[\\x02x#, \\x02x$)",
     "1"},
    {"KEY (a STRING, b STRING) SALT 3", "", 0, 0,
     "FULL SCAN OVER 3 BUCKETS\n[\\x00, \\x01)\n[\\x01, \\x02)\n[\\x02, \\x03)",
     ""},
    {"KEY (k BYTES)", "k>=a", 0, 0, "RANGE SCAN (k)\n[a, +inf)", "1"},
    {"KEY (k BYTES)", "k=a", 0, 0, "POINT LOOKUP\n[a, a]", "1"},
};

START_TEST(test_plan_table_of_constraint_sets) {
  ks_schema *s = mustParse(aCase[_i].zSchema);
  static Cons c;
  ks_plan_opts o;
  ks_plan *p = NULL;
  char *zErr = NULL, *zPlan = NULL;
  char zExact[MAXC + 1];
  int i;
  parseCons(s, aCase[_i].zCons, &c);
  o.bAllowSkip = aCase[_i].bSkip;
  o.nMaxPoints = aCase[_i].nCap;
  ck_assert_int_eq(ks_plan_make(s, c.a, c.n, &o, &p, &zErr), WCS_OK);
  ck_assert_int_eq(ks_plan_explain(p, 8, &zPlan), WCS_OK);
  for (i = 0; i < c.n; i++)
    zExact[i] = c.a[i].bExact ? '1' : '0';
  zExact[c.n] = 0;
  ck_assert_msg(strcmp(zPlan, aCase[_i].zPlan) == 0 &&
                    strcmp(zExact, aCase[_i].zExact) == 0,
                "%s WHERE %s:\n%s\nexact %s; expected\n%s\nexact %s",
                aCase[_i].zSchema, aCase[_i].zCons, zPlan, zExact,
                aCase[_i].zPlan, aCase[_i].zExact);
  free(zPlan);
  ks_plan_free(p);
  ks_schema_free(s);
}
END_TEST

/* ====================================================================
** Named behaviours
** ==================================================================== */

static ks_plan *planOf(const ks_schema *s, const char *zCons, int bSkip,
                       Cons *c) {
  ks_plan *p = NULL;
  ks_plan_opts o = {0, bSkip};
  parseCons(s, zCons, c);
  ck_assert_int_eq(ks_plan_make(s, c->a, c->n, &o, &p, NULL), WCS_OK);
  return p;
}

START_TEST(test_plan_in_list_becomes_points) {
  ks_schema *s = mustParse("KEY (k STRING)");
  static Cons c;
  ks_plan *p = planOf(s, "k in(c,a,b,a)", 0, &c);
  ck_assert_int_eq(p->eKind, KS_PLAN_MULTI_POINT);
  ck_assert_int_eq(p->nPoint, 3);
  ck_assert_int_eq(p->nRange, 3);
  ck_assert_str_eq(ks_plan_describe(p), "MULTI-POINT (3 keys)");
  ck_assert(p->bExactAll);
  ks_plan_free(p);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_plan_skip_scan_reports_depth) {
  ks_schema *s = mustParse(M);
  static Cons c;
  ks_plan *p = planOf(s, "day=5", 1, &c);
  ck_assert_int_eq(p->eKind, KS_PLAN_SKIP);
  ck_assert_int_eq(p->nSkipDepth, 2);
  ck_assert_int_eq(p->iSkipField, 2);
  ck_assert_str_eq(ks_plan_describe(p), "SKIP SCAN on day");
  ks_plan_free(p);
  p = planOf(s, "day=5", 0, &c);
  ck_assert_int_eq(p->eKind, KS_PLAN_FULL);
  ck_assert_int_eq(p->nSkipDepth, 0);
  ck_assert(!p->bExactAll);
  ks_plan_free(p);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_plan_empty_plan_never_scans) {
  ks_schema *s = mustParse(M);
  static Cons c;
  wcs_buf seek = {0};
  ks_plan *p = planOf(s, "device=a; device=b", 0, &c);
  ck_assert_int_eq(p->eKind, KS_PLAN_EMPTY);
  ck_assert_int_eq(p->nRange, 0);
  ck_assert_int_eq(ks_plan_start(p, 0, 0, &seek), KS_DONE);
  ck_assert_int_eq(ks_plan_start(p, 0, 1, &seek), KS_DONE);
  ks_plan_free(p);
  ks_schema_free(s);
  wcs_buf_free(&seek);
}
END_TEST

START_TEST(test_plan_bad_field_is_misuse) {
  ks_schema *s = mustParse("KEY (k STRING)");
  ks_constraint c;
  ks_value v;
  ks_plan *p = NULL;
  char *zErr = NULL;
  memset(&v, 0, sizeof v);
  memset(&c, 0, sizeof c);
  c.iField = 1;
  c.aVal = &v;
  c.nVal = 1;
  ck_assert_int_eq(ks_plan_make(s, &c, 1, NULL, &p, &zErr), WCS_MISUSE);
  ck_assert_ptr_null(p);
  free(zErr);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_plan_explain_caps_the_range_list) {
  ks_schema *s = mustParse("KEY (k STRING)");
  static Cons c;
  char *z = NULL;
  ks_plan *p = planOf(s, "k in(a,b,c,d)", 0, &c);
  ck_assert_int_eq(ks_plan_explain(p, 2, &z), WCS_OK);
  ck_assert_str_eq(z, "MULTI-POINT (4 keys)\n[a, a]\n[b, b]\n... 2 more");
  free(z);
  ks_plan_free(p);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_plan_streams_are_salt_buckets) {
  ks_schema *s = mustParse("KEY (a STRING, b STRING) SALT 4");
  static Cons c;
  wcs_buf seek = {0};
  ks_plan *p = planOf(s, "a=x", 0, &c);
  int i;
  ck_assert_int_eq(ks_plan_streams(p), 4);
  ck_assert_int_eq(p->nBucket, 4);
  for (i = 0; i < 4; i++) {
    ck_assert_int_eq(ks_plan_start(p, i, 0, &seek), KS_SEEK);
    ck_assert_int_eq(seek.a[0], i);
    ck_assert_int_eq(p->aRange[i].iBucket, i);
  }
  ks_plan_free(p);
  ks_schema_free(s);
  wcs_buf_free(&seek);
}
END_TEST

START_TEST(test_plan_large_in_list) {
  ks_schema *s = mustParse("KEY (id INT64, t INT64) ORDERED CODE");
  static ks_value aVal[1000];
  ks_constraint c;
  ks_plan *p = NULL;
  int i;
  for (i = 0; i < 1000; i++) {
    memset(&aVal[i], 0, sizeof(ks_value));
    aVal[i].eType = KS_VAL_INT;
    aVal[i].i = (i * 7919) % 1000 - 500;
  }
  memset(&c, 0, sizeof c);
  c.op = KS_OP_IN;
  c.aVal = aVal;
  c.nVal = 1000;
  ck_assert_int_eq(ks_plan_make(s, &c, 1, NULL, &p, NULL), WCS_OK);
  ck_assert_int_eq(p->eKind, KS_PLAN_MULTI_RANGE);
  ck_assert_int_eq(p->nRange, 1000);
  ck_assert(c.bExact);
  for (i = 1; i < p->nRange; i++) {
    const ks_range *a = &p->aRange[i - 1], *b = &p->aRange[i];
    int n = a->nEnd < b->nStart ? a->nEnd : b->nStart;
    int cmp = memcmp(a->pEnd, b->pStart, (size_t)n);
    ck_assert(cmp < 0 || (cmp == 0 && a->nEnd <= b->nStart));
  }
  ks_plan_free(p);
  ks_schema_free(s);
}
END_TEST

/* ====================================================================
** Brute force: random schemas, keys and constraints
** ==================================================================== */

typedef struct World {
  ks_schema *s;
  char zSchema[400];
  int nPool[3]; /* values per field */
  ks_value aPool[3][8];
  uint8_t aPoolBuf[3][8][16];
  wcs_buf aKey[600];       /* the stored keys, sorted, distinct */
  ks_value aTuple[600][3]; /* their decoded tuples */
  wcs_buf aScratch[600];
  int nKey;
} World;

static int cmpBuf(const void *a, const void *b) {
  const wcs_buf *x = a, *y = b;
  size_t n = x->n < y->n ? x->n : y->n;
  int c = n ? memcmp(x->a, y->a, n) : 0;
  if (c) return c;
  return x->n < y->n ? -1 : x->n > y->n;
}

static void worldMake(World *w) {
  static const char *azDelim[] = {"'#'", "X'00'", "'#|'", "' '"};
  static const char *azStr[] = {"",  "a",        "ab", "b",
                                "B", "\xc3\xa9", "12", "a\x01"};
  int eStruct = (int)tu_rand_range(3);
  int nField = eStruct == 0 ? 1 : 1 + (int)tu_rand_range(3);
  int i, j, n = 0, k;
  memset(w, 0, sizeof(*w));
  n += snprintf(w->zSchema + n, sizeof w->zSchema - (size_t)n, "KEY (");
  for (i = 0; i < nField; i++) {
    static const char *azType[] = {"STRING",
                                   "BYTES",
                                   "INT64 DECIMAL(1)",
                                   "INT64 REVERSED DECIMAL(2)",
                                   "INT64 ORDERED CODE",
                                   "INT64 BIG ENDIAN"};
    int t = (int)tu_rand_range(eStruct == 1 ? 4 : 6);
    n += snprintf(w->zSchema + n, sizeof w->zSchema - (size_t)n, "%sf%d %s",
                  i ? ", " : "", i, azType[t]);
  }
  n += snprintf(w->zSchema + n, sizeof w->zSchema - (size_t)n, ")");
  if (eStruct == 1) {
    n += snprintf(w->zSchema + n, sizeof w->zSchema - (size_t)n,
                  " DELIMITED BY %s", azDelim[tu_rand_range(4)]);
  } else if (eStruct == 2) {
    n += snprintf(w->zSchema + n, sizeof w->zSchema - (size_t)n,
                  " ORDERED CODE");
  }
  if (tu_rand_range(4) == 0) {
    snprintf(w->zSchema + n, sizeof w->zSchema - (size_t)n, " SALT %d",
             1 + (int)tu_rand_range(4));
  }
  w->s = mustParse(w->zSchema);
  /* value pools: small, with neighbours, so constraints hit and miss */
  for (i = 0; i < nField; i++) {
    const ks_field *f = &w->s->aField[i];
    int d = ksDelimByte(w->s);
    w->nPool[i] = 0;
    for (j = 0; j < 8; j++) {
      ks_value *v = &w->aPool[i][w->nPool[i]];
      memset(v, 0, sizeof(*v));
      if (f->eType == KS_STRING || f->eType == KS_BYTES) {
        const char *z = azStr[j];
        int m = (int)strlen(z), bOk = 1;
        for (k = 0; k < m; k++) {
          if ((int)(uint8_t)z[k] <= d) bOk = 0;
        }
        if (!bOk) continue;
        memcpy(w->aPoolBuf[i][w->nPool[i]], z, (size_t)m);
        v->eType = KS_VAL_BYTES;
        v->p = w->aPoolBuf[i][w->nPool[i]];
        v->n = m;
      } else {
        static const int64_t aInt[] = {0, 1, 2, 5, 9, 64, -1, -65};
        int64_t vMin, vMax;
        ksIntDomain(f, &vMin, &vMax);
        if (aInt[j] < vMin || aInt[j] > vMax) continue;
        v->eType = KS_VAL_INT;
        v->i = aInt[j];
      }
      w->nPool[i]++;
    }
  }
  /* stored keys: a random subset of the pool's tuples */
  for (k = 0; k < 300; k++) {
    ks_value t[3];
    wcs_buf *b = &w->aKey[w->nKey];
    for (i = 0; i < nField; i++)
      t[i] = w->aPool[i][tu_rand_range(w->nPool[i])];
    b->n = 0;
    ck_assert_int_eq(ks_key_encode(w->s, t, b, NULL), WCS_OK);
    w->nKey++;
  }
  qsort(w->aKey, (size_t)w->nKey, sizeof(wcs_buf), cmpBuf);
  for (i = 0, j = 0; i < w->nKey; i++) {
    if (j > 0 && cmpBuf(&w->aKey[j - 1], &w->aKey[i]) == 0) continue;
    if (i != j) {
      wcs_buf t = w->aKey[j];
      w->aKey[j] = w->aKey[i];
      w->aKey[i] = t;
    }
    j++;
  }
  for (i = j; i < w->nKey; i++)
    wcs_buf_free(&w->aKey[i]);
  w->nKey = j;
  for (i = 0; i < w->nKey; i++) {
    ck_assert_int_eq(ks_key_decode(w->s, w->aKey[i].a, (int)w->aKey[i].n,
                                   w->aTuple[i], &w->aScratch[i], NULL),
                     WCS_OK);
  }
}

static void worldFree(World *w) {
  int i;
  for (i = 0; i < 600; i++) {
    wcs_buf_free(&w->aKey[i]);
    wcs_buf_free(&w->aScratch[i]);
  }
  ks_schema_free(w->s);
}

/* --- SQLite semantics of the constraints, for the re-check */

static int cmpBytesV(const uint8_t *a, int na, const uint8_t *b, int nb) {
  int n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, (size_t)n) : 0;
  if (c) return c < 0 ? -1 : 1;
  return na < nb ? -1 : na > nb;
}

/* Compare a column value with a constraint value as SQLite would without
** affinity: numbers before text; NULL: no answer (returns 2). */
static int sqlCmp(const ks_value *col, const ks_value *v) {
  if (v->eType == KS_VAL_NULL) return 2;
  if (col->eType == KS_VAL_INT) {
    if (v->eType == KS_VAL_INT) return col->i < v->i ? -1 : col->i > v->i;
    if (v->eType == KS_VAL_REAL) {
      double x = (double)col->i;
      if (x < v->r) return -1;
      if (x > v->r) return 1;
      /* equal as doubles: compare exactly where it matters */
      if (v->r >= 9223372036854775808.0) return -1;
      return col->i < (int64_t)v->r ? -1 : col->i > (int64_t)v->r;
    }
    return -1; /* integer < text */
  }
  if (v->eType != KS_VAL_BYTES) return 1; /* text > numbers */
  return cmpBytesV(col->p, col->n, v->p, v->n);
}

static int utf8Len(uint8_t c) {
  return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

static int globMatch(const uint8_t *p, int np, const uint8_t *s, int ns) {
  if (np == 0) return ns == 0;
  if (p[0] == '*') {
    int i;
    for (i = 0; i <= ns; i++) {
      if (globMatch(p + 1, np - 1, s + i, ns - i)) return 1;
    }
    return 0;
  }
  if (ns == 0) return 0;
  if (p[0] == '?') {
    int k = utf8Len(s[0]);
    return k <= ns && globMatch(p + 1, np - 1, s + k, ns - k);
  }
  return p[0] == s[0] && globMatch(p + 1, np - 1, s + 1, ns - 1);
}

static int likeMatch(const uint8_t *p, int np, const uint8_t *s, int ns) {
  if (np == 0) return ns == 0;
  if (p[0] == '%') {
    int i;
    for (i = 0; i <= ns; i++) {
      if (likeMatch(p + 1, np - 1, s + i, ns - i)) return 1;
    }
    return 0;
  }
  if (ns == 0) return 0;
  if (p[0] == '_') {
    int k = utf8Len(s[0]);
    return k <= ns && likeMatch(p + 1, np - 1, s + k, ns - k);
  }
  return tolower(p[0]) == tolower(s[0]) &&
         likeMatch(p + 1, np - 1, s + 1, ns - 1);
}

static int satisfies(const ks_constraint *c, const ks_value *col) {
  char zNum[32];
  const uint8_t *ps;
  int ns, i, r;
  switch (c->op) {
  case KS_OP_ISNULL:
    return 0;
  case KS_OP_ISNOTNULL:
    return 1;
  case KS_OP_EQ:
    return sqlCmp(col, &c->aVal[0]) == 0;
  case KS_OP_LT:
    r = sqlCmp(col, &c->aVal[0]);
    return r != 2 && r < 0;
  case KS_OP_LE:
    r = sqlCmp(col, &c->aVal[0]);
    return r != 2 && r <= 0;
  case KS_OP_GT:
    r = sqlCmp(col, &c->aVal[0]);
    return r != 2 && r > 0;
  case KS_OP_GE:
    r = sqlCmp(col, &c->aVal[0]);
    return r != 2 && r >= 0;
  case KS_OP_IN:
    for (i = 0; i < c->nVal; i++) {
      if (sqlCmp(col, &c->aVal[i]) == 0) return 1;
    }
    return 0;
  default:
    break;
  }
  if (c->aVal[0].eType != KS_VAL_BYTES) return 0;
  if (col->eType == KS_VAL_INT) {
    ns = snprintf(zNum, sizeof zNum, "%lld", (long long)col->i);
    ps = (const uint8_t *)zNum;
  } else {
    ps = col->p;
    ns = col->n;
  }
  switch (c->op) {
  case KS_OP_GLOB_PREFIX:
    return globMatch(c->aVal[0].p, c->aVal[0].n, ps, ns);
  case KS_OP_LIKE_PREFIX:
    return likeMatch(c->aVal[0].p, c->aVal[0].n, ps, ns);
  default: /* KS_OP_PREFIX */
    return ns >= c->aVal[0].n &&
           (c->aVal[0].n == 0 ||
            memcmp(ps, c->aVal[0].p, (size_t)c->aVal[0].n) == 0);
  }
}

static int keySatisfies(const World *w, int iKey, const ks_constraint *c) {
  ks_value col;
  if (c->iField == KS_FIELD_KEY) {
    memset(&col, 0, sizeof col);
    col.eType = KS_VAL_BYTES;
    col.p = w->aKey[iKey].a;
    col.n = (int)w->aKey[iKey].n;
    return satisfies(c, &col);
  }
  return satisfies(c, &w->aTuple[iKey][c->iField]);
}

/* A random constraint value for field f (or _key). */
static void randomValue(World *w, int iField, ks_value *v, uint8_t *aBuf) {
  static const char *azStr[] = {"",   "a",  "ab",  "abc",      "b",    "B",
                                "c",  "A",  "a b", "\xc3\xa9", "\xc3", "1",
                                "12", "a#", "z",   "\xff"};
  static const int64_t aInt[] = {0,  1,   2,   3,         5,        8,
                                 9,  10,  64,  99,        100,      -1,
                                 -2, -64, -65, INT64_MIN, INT64_MAX};
  int bInt = iField >= 0 && w->s->aField[iField].eType != KS_STRING &&
             w->s->aField[iField].eType != KS_BYTES;
  int k = (int)tu_rand_range(20);
  memset(v, 0, sizeof(*v));
  if (k == 0) return; /* NULL */
  if (k == 1) {
    /* a value of the other class */
    bInt = !bInt;
  }
  if (iField < 0 && k < 8 && w->nKey > 0) {
    /* for _key: a stored key or a prefix of one */
    const wcs_buf *b = &w->aKey[tu_rand_range((uint64_t)w->nKey)];
    int n = (int)tu_rand_range(b->n + 1);
    if (n > 0) memcpy(aBuf, b->a, (size_t)n);
    v->eType = KS_VAL_BYTES;
    v->p = aBuf;
    v->n = n;
    return;
  }
  if (bInt) {
    if (k == 2) {
      v->eType = KS_VAL_REAL;
      v->r = (double)((int)tu_rand_range(21) - 5) + 0.5;
      return;
    }
    v->eType = KS_VAL_INT;
    v->i = aInt[tu_rand_range(sizeof(aInt) / sizeof(aInt[0]))];
  } else {
    const char *z = azStr[tu_rand_range(sizeof(azStr) / sizeof(azStr[0]))];
    memcpy(aBuf, z, strlen(z));
    v->eType = KS_VAL_BYTES;
    v->p = aBuf;
    v->n = (int)strlen(z);
  }
}

static void randomPattern(int op, ks_value *v, uint8_t *aBuf) {
  static const char *azLike[] = {"a%", "A%", "%", "a_",  "ab",  "b%", "%b",
                                 "1%", "12", "_", "a%c", "AB%", ""};
  static const char *azGlob[] = {"a*", "A*", "*", "a?",  "ab",    "b*", "*b",
                                 "1*", "12", "?", "a*c", "[ab]*", ""};
  static const char *azPre[] = {"a", "ab", "", "b", "A", "1", "\xc3", "z"};
  const char *z = op == KS_OP_LIKE_PREFIX   ? azLike[tu_rand_range(13)]
                  : op == KS_OP_GLOB_PREFIX ? azGlob[tu_rand_range(13)]
                                            : azPre[tu_rand_range(8)];
  memset(v, 0, sizeof(*v));
  memcpy(aBuf, z, strlen(z));
  v->eType = KS_VAL_BYTES;
  v->p = aBuf;
  v->n = (int)strlen(z);
}

static void randomCons(World *w, Cons *c) {
  int i, j;
  memset(c, 0, sizeof(*c));
  c->n = 1 + (int)tu_rand_range(3);
  if (c->n == 3 && tu_rand_range(2)) c->n = 1 + (int)tu_rand_range(2);
  for (i = 0; i < c->n; i++) {
    ks_constraint *k = &c->a[i];
    int iField = tu_rand_range(8) == 0
                     ? KS_FIELD_KEY
                     : (int)tu_rand_range((uint64_t)w->s->nField);
    static const ks_op aOp[] = {
        KS_OP_EQ,     KS_OP_EQ,          KS_OP_LT,          KS_OP_LE,
        KS_OP_GT,     KS_OP_GE,          KS_OP_IN,          KS_OP_IN,
        KS_OP_IN,     KS_OP_GLOB_PREFIX, KS_OP_LIKE_PREFIX, KS_OP_PREFIX,
        KS_OP_ISNULL, KS_OP_ISNOTNULL};
    k->iField = iField;
    k->op = aOp[tu_rand_range(sizeof(aOp) / sizeof(aOp[0]))];
    k->aVal = c->aVal[i];
    k->nVal = 1;
    if (k->op == KS_OP_ISNULL || k->op == KS_OP_ISNOTNULL) {
      k->nVal = 0;
      continue;
    }
    if (k->op == KS_OP_IN) {
      k->nVal = (int)tu_rand_range(5);
      for (j = 0; j < k->nVal; j++) {
        if (iField >= 0 && tu_rand_range(4)) {
          c->aVal[i][j] = w->aPool[iField][tu_rand_range(w->nPool[iField])];
        } else {
          randomValue(w, iField, &c->aVal[i][j], c->aBytes[i][j]);
        }
      }
    } else if (k->op == KS_OP_LIKE_PREFIX || k->op == KS_OP_GLOB_PREFIX ||
               k->op == KS_OP_PREFIX) {
      randomPattern(k->op, &c->aVal[i][0], c->aBytes[i][0]);
    } else if (iField >= 0 && tu_rand_range(3)) {
      c->aVal[i][0] = w->aPool[iField][tu_rand_range(w->nPool[iField])];
    } else {
      randomValue(w, iField, &c->aVal[i][0], c->aBytes[i][0]);
    }
  }
}

/* Walk stream iStream of the plan over the stored keys; returns the
** indexes emitted, in walk order. */
static int walk(const World *w, const ks_plan *p, int iStream, int bReverse,
                int *aOut) {
  wcs_buf seek = {0};
  int nOut = 0, pos = -1, nStep = 0;
  int rc = ks_plan_start(p, iStream, bReverse, &seek);
  for (;;) {
    if (rc == KS_DONE) break;
    ck_assert_int_eq(rc, KS_SEEK);
    /* position by the seek target */
    {
      int lo = 0, hi = w->nKey;
      wcs_buf t = seek;
      if (bReverse && seek.n == 0) {
        pos = w->nKey - 1;
      } else {
        while (lo < hi) {
          int mid = (lo + hi) / 2;
          if (cmpBuf(&w->aKey[mid], &t) < 0)
            lo = mid + 1;
          else
            hi = mid;
        }
        pos =
            bReverse ? lo - 1 : lo; /* forward: first >= T; reverse: last < T */
      }
    }
    for (;;) {
      int rcOld;
      ck_assert_msg(++nStep < 20 * w->nKey + 100, "%s: the walk does not end",
                    w->zSchema);
      if (pos < 0 || pos >= w->nKey) {
        rc = KS_DONE;
        break;
      }
      rcOld = ks_plan_check_stream(p, iStream, w->aKey[pos].a,
                                   (int)w->aKey[pos].n, bReverse, &seek);
      if (rcOld == KS_MATCH) {
        aOut[nOut++] = pos;
        pos += bReverse ? -1 : 1;
        continue;
      }
      if (rcOld == KS_SEEK) {
        /* progress: the target lies strictly beyond the key */
        int c = cmpBuf(&seek, &w->aKey[pos]);
        char *zPlan = NULL;
        if (bReverse ? (seek.n == 0 || c > 0) : c <= 0) {
          char *zK = wcs_escape(w->aKey[pos].a, w->aKey[pos].n, 100);
          char *zT = wcs_escape(seek.a, seek.n, 100);
          ks_plan_explain(p, 10, &zPlan);
          ck_abort_msg("%s: %s: from key %s, reverse %d, no progress to %s",
                       w->zSchema, zPlan, zK, bReverse, zT);
        }
      }
      rc = rcOld;
      break;
    }
  }
  wcs_buf_free(&seek);
  return nOut;
}

/* 1 if key k lies inside one of the plan's ranges. */
static int inRanges(const ks_plan *p, const wcs_buf *k) {
  int i;
  for (i = 0; i < p->nRange; i++) {
    const ks_range *r = &p->aRange[i];
    int cLo = r->bStartUnbounded
                  ? 1
                  : cmpBytesV(k->a, (int)k->n, r->pStart, r->nStart);
    int cHi =
        r->bEndUnbounded ? -1 : cmpBytesV(k->a, (int)k->n, r->pEnd, r->nEnd);
    if ((cLo > 0 || (cLo == 0 && r->bStartIncl)) &&
        (cHi < 0 || (cHi == 0 && r->bEndIncl))) {
      return 1;
    }
  }
  return 0;
}

/* Prefixes ks_plan_match_prefix gave, over all rounds (the test checks
** that some were). */
static int nMatchPrefix;

/* For each emitted key (aIn), the prefix ks_plan_match_prefix gives: every
** stored key with that prefix and inside the plan's ranges was emitted. */
static void checkMatchPrefixes(const World *w, const ks_plan *p,
                               const uint8_t *aIn) {
  int i, j;
  for (i = 0; i < w->nKey; i++) {
    int n;
    if (!aIn[i]) continue;
    n = ks_plan_match_prefix(p, w->aKey[i].a, (int)w->aKey[i].n);
    ck_assert_int_le(n, (int)w->aKey[i].n);
    if (n <= 0) continue;
    ck_assert_ptr_nonnull(p->pSkip);
    nMatchPrefix++;
    for (j = 0; j < w->nKey; j++) {
      if (w->aKey[j].n < (size_t)n ||
          memcmp(w->aKey[j].a, w->aKey[i].a, (size_t)n) != 0 ||
          !inRanges(p, &w->aKey[j])) {
        continue;
      }
      ck_assert_msg(aIn[j],
                    "%s: %s: key %d shares the match prefix (%d bytes) of "
                    "key %d but is not emitted",
                    w->zSchema, ks_plan_describe(p), j, n, i);
    }
  }
}

static void bruteForceRound(World *w, Cons *c) {
  ks_plan_opts o;
  ks_plan *p = NULL;
  static int aWant[600], aGot[600], aGot2[600];
  static uint8_t aIn[600];
  int nWant = 0, i, k, bRev;
  o.bAllowSkip = (int)tu_rand_range(2);
  o.nMaxPoints = tu_rand_range(3) == 0 ? 1 + (int)tu_rand_range(12) : 0;
  ck_assert_int_eq(ks_plan_make(w->s, c->a, c->n, &o, &p, NULL), WCS_OK);
  for (i = 0; i < w->nKey; i++) {
    int bAll = 1;
    for (k = 0; k < c->n; k++)
      bAll = bAll && keySatisfies(w, i, &c->a[k]);
    if (bAll) aWant[nWant++] = i;
  }
  for (bRev = 0; bRev < 2; bRev++) {
    int nGot = walk(w, p, -1, bRev, aGot), nKept = 0, iStream;
    memset(aIn, 0, sizeof aIn);
    for (i = 0; i < nGot; i++) {
      int bAll = 1;
      if (i > 0) {
        ck_assert_msg(bRev ? aGot[i] < aGot[i - 1] : aGot[i] > aGot[i - 1],
                      "%s: keys out of order (%s)", w->zSchema,
                      ks_plan_describe(p));
      }
      aIn[aGot[i]] = 1;
      for (k = 0; k < c->n; k++) {
        int bSat = keySatisfies(w, aGot[i], &c->a[k]);
        ck_assert_msg(bSat || !c->a[k].bExact,
                      "%s: plan %s emits key %d that breaks exact "
                      "constraint %d",
                      w->zSchema, ks_plan_describe(p), aGot[i], k);
        bAll = bAll && bSat;
      }
      nKept += bAll;
    }
    for (i = 0; i < nWant; i++) {
      char *zPlan = NULL;
      if (!aIn[aWant[i]]) ks_plan_explain(p, 20, &zPlan);
      ck_assert_msg(aIn[aWant[i]], "%s: plan %s misses key %d (reverse %d)",
                    w->zSchema, zPlan ? zPlan : "", aWant[i], bRev);
    }
    ck_assert_int_eq(nKept, nWant);
    checkMatchPrefixes(w, p, aIn);
    /* per stream: the buckets partition the same keys */
    if (p->nBucket > 0) {
      int nAll = 0;
      for (iStream = 0; iStream < ks_plan_streams(p); iStream++) {
        int n2 = walk(w, p, iStream, bRev, aGot2);
        for (i = 0; i < n2; i++) {
          ck_assert_int_eq(w->aKey[aGot2[i]].a[0], iStream);
          ck_assert(aIn[aGot2[i]]);
        }
        nAll += n2;
      }
      ck_assert_int_eq(nAll, nGot);
    }
  }
  /* the range list is sorted and disjoint */
  for (i = 1; i < p->nRange; i++) {
    const ks_range *a = &p->aRange[i - 1], *b = &p->aRange[i];
    if (!a->bEndUnbounded && !b->bStartUnbounded) {
      int cmp = cmpBytesV(a->pEnd, a->nEnd, b->pStart, b->nStart);
      ck_assert(cmp < 0 || (cmp == 0 && !(a->bEndIncl && b->bStartIncl)));
    } else {
      ck_abort_msg("unbounded range in the middle");
    }
  }
  ks_plan_free(p);
}

START_TEST(test_plan_brute_force_matches_the_constraints) {
  static World w;
  static Cons c;
  int iWorld, iRound;
  tu_seed(0);
  nMatchPrefix = 0;
  for (iWorld = 0; iWorld < 400; iWorld++) {
    worldMake(&w);
    for (iRound = 0; iRound < 60; iRound++) {
      randomCons(&w, &c);
      bruteForceRound(&w, &c);
    }
    worldFree(&w);
  }
  ck_assert_int_gt(nMatchPrefix, 1000);
}
END_TEST

Suite *keyschema_plan_suite(void) {
  Suite *s = suite_create("keyschema_plan");
  TCase *tc = tcase_create("plan");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_plan_table_of_constraint_sets, 0,
                      (int)(sizeof(aCase) / sizeof(aCase[0])));
  tcase_add_test(tc, test_plan_in_list_becomes_points);
  tcase_add_test(tc, test_plan_skip_scan_reports_depth);
  tcase_add_test(tc, test_plan_empty_plan_never_scans);
  tcase_add_test(tc, test_plan_bad_field_is_misuse);
  tcase_add_test(tc, test_plan_explain_caps_the_range_list);
  tcase_add_test(tc, test_plan_streams_are_salt_buckets);
  tcase_add_test(tc, test_plan_large_in_list);
  tcase_add_test(tc, test_plan_brute_force_matches_the_constraints);
  suite_add_tcase(s, tc);
  return s;
}
