/*
** demo.c — `wcs demo [DB]` (what `make demo` runs): builds an embedded
** store from the row-key examples of Bigtable's schema-design guide and
** the DynamoDB migration guide, then walks through queries showing each
** plan (as .explain prints it) and result. Afterwards the prompt, on a
** terminal; otherwise the program exits (status 0 when every step worked).
**
** Without DB the demo lives in a fresh temporary directory that is removed
** at exit; with DB it is kept there (and an existing demo database is
** reused: the tables are only built once, and the tenant the tour
** removes is written again).
**
** The tables:
**   telemetry  device#id#yyyymmdd      phone#4c410523#20200501
**   products   category#sub#brand      hats#fedoras#brandA
**   tenants    tenant#device#id        altostrat#phone#4c410523
**   domains    reversed domain names   com.google.drive
**   readings   sensor#(max - micros)   newest reading first
*/
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/shell.h"

/* The tenants' rows: built with the tables, and written again when a kept
** demo database is reused, since the tour removes a tenant. */
static const char zTenantRows[] =
    "WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i\n"
    "                        WHERE k < 24)\n"
    "INSERT INTO tenants(tenant, device, id, pings)\n"
    "SELECT t.name, CASE k % 3 WHEN 0 THEN 'phone' WHEN 1 THEN 'tablet'\n"
    "                          ELSE 'watch' END,\n"
    "       CASE WHEN t.name = 'altostrat' AND k = 0 THEN '4c410523'\n"
    "            ELSE printf('%08x', (k + 7) * 48271 * length(t.name)) END,\n"
    "       k * 10 + length(t.name)\n"
    "FROM (SELECT 'altostrat' AS name UNION ALL SELECT 'cymbal'\n"
    "      UNION ALL SELECT 'examplepetstore') AS t JOIN i";

/* Build steps: run quietly, in order. */
static const char *const azBuild[] = {
    /* Device telemetry (schema guide: "mobile-time-series"). */
    "CREATE VIRTUAL TABLE telemetry USING wcs(\n"
    "  KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#',\n"
    "  FAMILY stats_summary (connected_cell INT64, connected_wifi INT64,\n"
    "                        os_build STRING),\n"
    "  FAMILY cell_plan MAX VERSIONS 1\n"
    ")",
    /* 3 device types x 12 ids x 31 days of May 2020. */
    "WITH RECURSIVE\n"
    "  d(device, n) AS (VALUES('phone', 6), ('tablet', 4), ('watch', 2)),\n"
    "  i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k < 5),\n"
    "  dd(day) AS (SELECT 20200501 UNION ALL SELECT day + 1 FROM dd\n"
    "              WHERE day < 20200531)\n"
    "INSERT INTO telemetry(device, id, day, connected_cell, connected_wifi,\n"
    "                      os_build)\n"
    "SELECT device,\n"
    "       CASE WHEN device = 'phone' AND k = 0 THEN '4c410523'\n"
    "            ELSE printf('%08x', abs((k + 1) * 2654435761 + length(device)"
    " * 40503) % 4294967296) END,\n"
    "       day, (day + k) % 2, (day + k + 1) % 2,\n"
    "       printf('PQ2A.%06d.%03d', 190801 + k, day % 100)\n"
    "FROM d JOIN i ON k < n JOIN dd",
    /* Product catalog (schema guide: hats#fedoras#brandA). */
    "CREATE VIRTUAL TABLE products USING wcs(\n"
    "  KEY (category STRING, subcategory STRING, brand STRING)\n"
    "      DELIMITED BY '#',\n"
    "  FAMILY info (price INT64, color STRING)\n"
    ")",
    "INSERT INTO products(category, subcategory, brand, price, color) VALUES\n"
    "  ('hats', 'fedoras', 'brandA', 120, 'black'),\n"
    "  ('hats', 'fedoras', 'brandB', 95, 'grey'),\n"
    "  ('hats', 'baseball', 'brandA', 25, 'red'),\n"
    "  ('hats', 'baseball', 'brandC', 30, 'blue'),\n"
    "  ('hats', 'beanies', 'brandB', 18, 'green'),\n"
    "  ('shirts', 'tshirts', 'brandA', 15, 'white'),\n"
    "  ('shirts', 'polos', 'brandC', 40, 'navy'),\n"
    "  ('shoes', 'sneakers', 'brandB', 85, 'white')",
    /* Multi-tenant keys (schema guide: tenant prefix first). */
    "CREATE VIRTUAL TABLE tenants USING wcs(\n"
    "  KEY (tenant STRING, device STRING, id STRING) DELIMITED BY '#',\n"
    "  FAMILY stats (pings INT64)\n"
    ")",
    zTenantRows,
    /* Reversed domain names (schema guide: com.google.drive). */
    "CREATE VIRTUAL TABLE domains USING wcs(\n"
    "  KEY (domain STRING),\n"
    "  FAMILY page (title STRING, visits INT64)\n"
    ")",
    "INSERT INTO domains(domain, title, visits) VALUES\n"
    "  ('com.google.drive', 'Google Drive', 9100),\n"
    "  ('com.google.maps', 'Google Maps', 8700),\n"
    "  ('com.google.mail', 'Gmail', 9900),\n"
    "  ('com.google.www', 'Google', 12000),\n"
    "  ('com.example.www', 'Example Domain', 300),\n"
    "  ('org.wikipedia.en', 'Wikipedia', 7600),\n"
    "  ('org.wikipedia.fr', 'Wikipedia (fr)', 2100)",
    /* Time series, newest first: the timestamp reversed in the key. */
    "CREATE VIRTUAL TABLE readings USING wcs(\n"
    "  KEY (sensor STRING, ts TIMESTAMP REVERSED DECIMAL(16))\n"
    "      DELIMITED BY '#',\n"
    "  FAMILY m (celsius FLOAT64)\n"
    ")",
    "WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i\n"
    "                        WHERE k < 47)\n"
    "INSERT INTO readings(sensor, ts, celsius)\n"
    "SELECT s.name, 1588291200000000 + k * 1800000000,\n"
    "       round(s.base + 4 * sin(k / 7.6), 2)\n"
    "FROM (SELECT 'boiler-1' AS name, 71.5 AS base UNION ALL\n"
    "      SELECT 'boiler-2', 68.0 UNION ALL SELECT 'chiller-1', 6.5) AS s\n"
    "JOIN i",
};

typedef struct TourStep {
  const char *zTitle; /* what the step shows */
  const char *zSql;   /* the query */
  int bExplain;       /* show its plan first */
} TourStep;

static const TourStep aTour[] = {
    {"Device telemetry: one row by its full key phone#4c410523#20200501 "
     "(point lookup)",
     "SELECT device, id, day, connected_cell, connected_wifi, os_build\n"
     "FROM telemetry\n"
     "WHERE device = 'phone' AND id = '4c410523' AND day = 20200501",
     1},
    {"Device telemetry: one device's first week (range scan after an equal "
     "prefix)",
     "SELECT day, connected_cell, connected_wifi, os_build FROM telemetry\n"
     "WHERE device = 'phone' AND id = '4c410523'\n"
     "  AND day BETWEEN 20200501 AND 20200507",
     1},
    {"Device telemetry: one id without its device (skip scan over the "
     "device prefixes)",
     "SELECT device, id, count(*) AS days FROM telemetry\n"
     "WHERE id = '4c410523' GROUP BY device, id",
     1},
    {"Device telemetry: rows per device type (full scan, aggregated)",
     "SELECT device, count(DISTINCT id) AS devices, count(*) AS rows\n"
     "FROM telemetry GROUP BY device",
     1},
    {"Product catalog: every fedora (prefix scan hats#fedoras#)",
     "SELECT brand, price, color FROM products\n"
     "WHERE category = 'hats' AND subcategory = 'fedoras'",
     1},
    {"Product catalog: all hats, cheapest first (prefix scan hats#, sorted "
     "by SQLite)",
     "SELECT subcategory, brand, price FROM products\n"
     "WHERE category = 'hats' ORDER BY price",
     1},
    {"Multi-tenant keys: rows per tenant before the removal",
     "SELECT tenant, count(*) AS rows FROM tenants GROUP BY tenant", 0},
    {"Multi-tenant keys: remove tenant examplepetstore by its key prefix "
     "(one range tombstone, whatever the tenant's size)",
     "SELECT wcs_delete_prefix('tenants', 'examplepetstore#') AS removed", 0},
    {"Multi-tenant keys: rows per tenant after the removal",
     "SELECT tenant, count(*) AS rows FROM tenants GROUP BY tenant", 0},
    {"Multi-tenant keys: one tenant's phones (prefix scan altostrat#phone#)",
     "SELECT id, pings FROM tenants\n"
     "WHERE tenant = 'altostrat' AND device = 'phone' LIMIT 4",
     1},
    {"Reversed domains: every google.com site (prefix scan com.google.)",
     "SELECT domain, title, visits FROM domains\n"
     "WHERE domain GLOB 'com.google.*'",
     1},
    {"Time series: newest three readings of boiler-1, no ORDER BY needed "
     "(the key holds the reversed timestamp)",
     "SELECT sensor, datetime(ts / 1000000, 'unixepoch') AS time, celsius\n"
     "FROM readings WHERE sensor = 'boiler-1' LIMIT 3",
     1},
    {"Raw keys: _key is the row key the schema decodes",
     "SELECT _key, device, id, day FROM telemetry\n"
     "WHERE device = 'tablet' LIMIT 3",
     1},
};

static int rm_entry(const char *zPath, const struct stat *st, int eFlag,
                    struct FTW *ftw) {
  (void)st;
  (void)eFlag;
  (void)ftw;
  return remove(zPath);
}

void shell_rmrf(const char *zPath) {
  nftw(zPath, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int demo_exists(Shell *p) {
  sqlite3_stmt *pStmt = 0;
  int bFound = 0;
  if (sqlite3_prepare_v2(p->db,
                         "SELECT 1 FROM sqlite_schema WHERE name='telemetry'",
                         -1, &pStmt, 0) == SQLITE_OK) {
    bFound = sqlite3_step(pStmt) == SQLITE_ROW;
  }
  sqlite3_finalize(pStmt);
  return bFound;
}

/* Run build statement zSql quietly; 1 (said) if it failed. */
static int build_step(Shell *p, const char *zSql) {
  char *zErr = 0;
  if (sqlite3_exec(p->db, zSql, 0, 0, &zErr) == SQLITE_OK) return 0;
  shell_error(p, "demo step failed: %s\n%s", zErr ? zErr : "", zSql);
  sqlite3_free(zErr);
  return 1;
}

static void rule(Shell *p) {
  fprintf(p->out, "\n");
}

int shell_demo(Shell *p) {
  char *zPath = 0;
  int i, nFail = 0;
  size_t n;

  if (!p->zDbPath) {
    const char *zTmp = getenv("TMPDIR");
    char *zDir = malloc(strlen(zTmp && zTmp[0] ? zTmp : "/tmp") + 20);
    if (!zDir) return shell_error(p, "out of memory");
    sprintf(zDir, "%s/wcs-demo-XXXXXX", zTmp && zTmp[0] ? zTmp : "/tmp");
    if (!mkdtemp(zDir)) {
      free(zDir);
      return shell_error(p, "cannot make a temporary directory");
    }
    p->zTempDir = zDir;
    zPath = malloc(strlen(zDir) + 10);
    if (!zPath) return shell_error(p, "out of memory");
    sprintf(zPath, "%s/demo.db", zDir);
  } else {
    zPath = p->zDbPath;
    p->zDbPath = 0;
  }
  if (shell_open(p, zPath)) {
    free(zPath);
    return 1;
  }
  free(zPath);

  fprintf(p->out,
          "wcs demo: Bigtable-style tables in SQLite, from the row-key "
          "examples of\n"
          "Bigtable's schema design guide. The store is %s.\n",
          p->zStore ? p->zStore : "in memory");
  if (!demo_exists(p)) {
    fprintf(p->out, "Building the tables telemetry, products, tenants, "
                    "domains and readings...\n");
    for (i = 0; i < (int)(sizeof(azBuild) / sizeof(azBuild[0])); i++) {
      if (build_step(p, azBuild[i])) return 1;
    }
  } else if (build_step(p, zTenantRows)) {
    return 1;
  }
  fprintf(p->out, "\n");
  shell_exec_mode(p,
                  "SELECT 'telemetry' AS \"table\", count(*) AS rows, "
                  "'device#id#yyyymmdd' AS \"row key\" FROM telemetry "
                  "UNION ALL SELECT 'products', count(*), "
                  "'category#subcategory#brand' FROM products "
                  "UNION ALL SELECT 'tenants', count(*), "
                  "'tenant#device#id' FROM tenants "
                  "UNION ALL SELECT 'domains', count(*), "
                  "'reversed domain name' FROM domains "
                  "UNION ALL SELECT 'readings', count(*), "
                  "'sensor#reversed timestamp' FROM readings",
                  SHELL_MODE_TABLE);

  n = sizeof(aTour) / sizeof(aTour[0]);
  for (i = 0; i < (int)n; i++) {
    const TourStep *t = &aTour[i];
    rule(p);
    fprintf(p->out, "-- %d. %s\n%s;\n", i + 1, t->zTitle, t->zSql);
    if (t->bExplain && shell_explain(p, t->zSql)) nFail++;
    if (shell_exec_mode(p, t->zSql, SHELL_MODE_TABLE)) nFail++;
    fflush(p->out);
  }
  rule(p);
  fprintf(p->out,
          "Try: .schema telemetry   .explain SELECT * FROM telemetry WHERE "
          "device = 'watch'\n"
          "     .stats   .keyviz telemetry telemetry.svg   .help\n");
  if (nFail) {
    return shell_error(p, "%d demo step%s failed", nFail, nFail > 1 ? "s" : "");
  }
  return 0;
}

void shell_demo_cleanup(Shell *p) {
  if (p->zTempDir) {
    shell_rmrf(p->zTempDir);
    free(p->zTempDir);
    p->zTempDir = 0;
  }
}
