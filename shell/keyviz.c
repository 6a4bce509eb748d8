/*
** keyviz.c — the key-distribution and hotspot picture (.keyviz TABLE
** FILE.svg, `wcs keyviz DB TABLE FILE.svg`), in the manner of Bigtable's
** Key Visualizer: the key space top to bottom in key order, time left to
** right, one heat map of writes and one of reads, and the rows and bytes
** held in each key bucket. Described for users in doc/shell.md.
**
** How it works:
**   1. Key buckets (the vertical axis). A scan of the table's row keys
**      counts, for each leading number of key fields, how many distinct
**      prefixes there are. When the table has a key schema and some prefix
**      level has at most `buckets` distinct values, each bucket is one
**      prefix (the deepest such level), labelled with it, e.g.
**      "phone#4c410523#". Otherwise the buckets are quantiles: equal
**      numbers of rows, labelled with their first key. Fields that do not
**      read as text in the key (ORDERED CODE, BIG ENDIAN, REVERSED
**      DECIMAL) are labelled with their decoded values (label_bytes).
**   2. Rows and bytes per bucket come from a second scan (bytes = key,
**      qualifier and value bytes of every live cell).
**   3. Reads and writes come from the engine's counters
**      (wcs_table_heatmap): per time slot, counts in the slot's own key
**      buckets. A slot bucket's count is spread evenly over the axis
**      buckets its key range overlaps.
**   4. The SVG is written with every label XML-escaped (bytes that are not
**      printable ASCII appear as \xNN). Heat cells are <rect class="heat-w">
**      and <rect class="heat-r"> with a <title> tooltip; bucket labels are
**      <text class="bucket-label">; the file is 1200x800.
*/
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keyschema/schema.h"
#include "shell/shell.h"

#define KV_DEFAULT_BUCKETS 32
#define KV_MAX_BUCKETS     200
#define KV_LABEL_MAX       30 /* characters of a label before "..." */

/* SVG geometry (pixels). */
#define KV_W       1200
#define KV_H       800
#define KV_TOP     96
#define KV_BOTTOM  712
#define KV_LABEL_X 250
#define KV_WRITE_X 262
#define KV_READ_X  598
#define KV_HEAT_W  324
#define KV_DIST_X  934
#define KV_DIST_W  250

typedef struct KvBucket {
  uint8_t *pStart; /* first key of the bucket (NULL for the first) */
  size_t nStart;
  char *zLabel; /* printable label (malloc'd) */
  uint64_t nRows;
  uint64_t nBytes;
} KvBucket;

typedef struct KeyViz {
  Shell *p;
  wcs_table *pTab;
  const ks_schema *pSchema;
  int nMax; /* bucket limit */
  KvBucket *aB;
  int nB;
  int nLevel; /* prefix mode: key fields per bucket; 0 = quantiles */
  uint64_t nRows;
  uint64_t nBytes;
  wcs_buf scratch;
} KeyViz;

static int keycmp(const void *pA, size_t nA, const void *pB, size_t nB) {
  int c = memcmp(pA, pB, nA < nB ? nA : nB);
  if (c) return c;
  return nA < nB ? -1 : nA > nB ? 1 : 0;
}

/* Printable label: escaped, cut to KV_LABEL_MAX characters. */
static char *make_label(const void *p, size_t n) {
  char *z = wcs_escape(p, n, KV_LABEL_MAX);
  return z ? z : strdup("?");
}

/* Length of the prefix of key p holding its first nLevel fields (the
** delimiter after them included), or 0 if it does not decode. */
static size_t prefix_len(KeyViz *kv, const uint8_t *p, size_t n, int nLevel) {
  ks_value aVal[KS_MAX_FIELDS];
  wcs_buf out = {0, 0, 0};
  char *zErr = 0;
  size_t nPrefix = 0;
  if (ks_key_decode(kv->pSchema, p, (int)n, aVal, &kv->scratch, &zErr) ==
          WCS_OK &&
      ks_key_prefix(kv->pSchema, aVal, nLevel, &out, &zErr) == WCS_OK) {
    nPrefix = out.n;
    if (kv->pSchema->nSalt > 0) nPrefix++; /* the bucket byte comes first */
  }
  free(zErr);
  wcs_buf_free(&out);
  return nPrefix <= n ? nPrefix : 0;
}

/* The bytes that label a bucket starting at row key p (its label is
** these, escaped): the first nLevel key fields (0: all of them) as the key
** shows them where they read as text there (the fields of a delimited key
** that are STRING, BYTES or DECIMAL, each followed by the delimiter in a
** prefix), and otherwise as values, joined by ", " (ORDERED CODE, BIG
** ENDIAN and REVERSED DECIMAL fields show -2, not the bytes that encode
** it); a salt byte first, as it is. A key that does not decode under the
** schema, or a table without one, shows its bytes. */
static int label_bytes(KeyViz *kv, const uint8_t *p, size_t n, int nLevel,
                       wcs_buf *pOut) {
  const ks_schema *s = kv->pSchema;
  ks_value aVal[KS_MAX_FIELDS];
  char *zErr = 0;
  int i, nField, bDelim, rc = WCS_OK;
  pOut->n = 0;
  if (!s || ks_key_decode(s, p, (int)n, aVal, &kv->scratch, &zErr) != WCS_OK) {
    free(zErr);
    return wcs_buf_append(pOut, p, n);
  }
  nField = nLevel > 0 ? nLevel : s->nField;
  bDelim = s->eStruct == KS_STRUCT_DELIMITED;
  if (s->nSalt > 0) rc = wcs_buf_append(pOut, p, 1);
  for (i = 0; rc == WCS_OK && i < nField; i++) {
    const ks_field *f = &s->aField[i];
    if (i > 0 && !bDelim) rc = wcs_buf_append(pOut, ", ", 2);
    if (rc == WCS_OK && aVal[i].eType == KS_VAL_INT) {
      char z[32];
      snprintf(z, sizeof(z), "%0*" PRId64,
               bDelim && f->eEnc == KS_ENC_DECIMAL ? f->nWidth : 0, aVal[i].i);
      rc = wcs_buf_append(pOut, z, strlen(z));
    } else if (rc == WCS_OK) {
      rc = wcs_buf_append(pOut, aVal[i].p, (size_t)aVal[i].n);
    }
    if (rc == WCS_OK && bDelim && (nLevel > 0 || i + 1 < nField)) {
      rc = wcs_buf_append(pOut, s->aDelim, (size_t)s->nDelim);
    }
  }
  return rc;
}

static int open_cursor(KeyViz *kv, int bKeysOnly, wcs_cursor **ppCur) {
  wcs_read_options ro;
  wcs_read_options_init(&ro);
  ro.bKeysOnly = bKeysOnly;
  ro.nVersions = bKeysOnly ? 1 : 0;
  ro.bNoHeat = 1; /* the picture shows the table's reads, not its own */
  return wcs_cursor_open(ppCur, kv->pTab, 0, &ro);
}

/* Pass 1: rows, and distinct prefixes per level; choose the buckets. */
static int choose_buckets(KeyViz *kv) {
  wcs_cursor *pCur = 0;
  int nField = kv->pSchema ? kv->pSchema->nField : 0;
  uint64_t anDistinct[KS_MAX_FIELDS + 1];
  wcs_buf prev = {0, 0, 0};
  size_t anPrev[KS_MAX_FIELDS + 1];
  int rc, L;

  memset(anDistinct, 0, sizeof(anDistinct));
  memset(anPrev, 0, sizeof(anPrev));
  rc = open_cursor(kv, 1, &pCur);
  while (rc == WCS_OK && !wcs_cursor_eof(pCur)) {
    size_t nRow;
    const uint8_t *pRow = wcs_cursor_row(pCur, &nRow);
    kv->nRows++;
    for (L = 1; L < nField && L <= KS_MAX_FIELDS; L++) {
      size_t n = prefix_len(kv, pRow, nRow, L);
      if (prev.n == 0 || n != anPrev[L] || n > prev.n ||
          memcmp(prev.a, pRow, n) != 0) {
        anDistinct[L]++;
      }
      anPrev[L] = n;
    }
    prev.n = 0;
    if (wcs_buf_append(&prev, pRow, nRow)) rc = WCS_NOMEM;
    if (rc == WCS_OK) rc = wcs_cursor_next(pCur);
    if (rc == WCS_OK && shell_interrupted) rc = WCS_INTERRUPT; /* Ctrl-C */
  }
  wcs_cursor_close(pCur);
  wcs_buf_free(&prev);
  if (rc != WCS_OK) return rc;
  kv->nLevel = 0;
  for (L = nField - 1; L >= 1; L--) {
    if (anDistinct[L] >= 2 && anDistinct[L] <= (uint64_t)kv->nMax) {
      kv->nLevel = L;
      break;
    }
  }
  return WCS_OK;
}

static int add_bucket(KeyViz *kv, const uint8_t *pStart, size_t nStart,
                      const void *zLabelBytes, size_t nLabel) {
  KvBucket *a = realloc(kv->aB, sizeof(KvBucket) * (size_t)(kv->nB + 1));
  KvBucket *b;
  if (!a) return WCS_NOMEM;
  kv->aB = a;
  b = &a[kv->nB];
  memset(b, 0, sizeof(*b));
  if (pStart) {
    b->pStart = malloc(nStart ? nStart : 1);
    if (!b->pStart) return WCS_NOMEM;
    memcpy(b->pStart, pStart, nStart);
    b->nStart = nStart;
  }
  b->zLabel = make_label(zLabelBytes, nLabel);
  kv->nB++;
  return b->zLabel ? WCS_OK : WCS_NOMEM;
}

/* Pass 2: make the buckets and count rows and bytes in them. */
static int fill_buckets(KeyViz *kv) {
  wcs_cursor *pCur = 0;
  wcs_buf label = {0, 0, 0};
  uint64_t nPer = 0, iRow = 0;
  int rc;
  int nQuant = kv->nMax;
  if (kv->nLevel == 0) {
    if ((uint64_t)nQuant > kv->nRows) nQuant = (int)kv->nRows;
    if (nQuant < 1) nQuant = 1;
    nPer = (kv->nRows + (uint64_t)nQuant - 1) / (uint64_t)nQuant;
    if (nPer == 0) nPer = 1;
  }
  rc = open_cursor(kv, 0, &pCur);
  while (rc == WCS_OK && !wcs_cursor_eof(pCur)) {
    size_t nRow;
    const uint8_t *pRow = wcs_cursor_row(pCur, &nRow);
    int nCell, i;
    const wcs_cell *aCell = wcs_cursor_cells(pCur, &nCell);
    uint64_t nBytes = 0;
    KvBucket *b;
    if (kv->nLevel > 0) {
      size_t n = prefix_len(kv, pRow, nRow, kv->nLevel);
      if (n == 0) n = nRow; /* a key that does not decode: its own label */
      if (kv->nB == 0 || n != kv->aB[kv->nB - 1].nStart ||
          memcmp(kv->aB[kv->nB - 1].pStart, pRow, n) != 0) {
        rc = label_bytes(kv, pRow, nRow, kv->nLevel, &label);
        if (rc == WCS_OK) rc = add_bucket(kv, pRow, n, label.a, label.n);
      }
    } else if (iRow % nPer == 0) {
      rc = label_bytes(kv, pRow, nRow, 0, &label);
      if (rc == WCS_OK) rc = add_bucket(kv, pRow, nRow, label.a, label.n);
    }
    if (rc != WCS_OK) break;
    for (i = 0; i < nCell; i++) {
      nBytes += nRow + aCell[i].nQual + aCell[i].nVal;
    }
    b = &kv->aB[kv->nB - 1];
    b->nRows++;
    b->nBytes += nBytes;
    kv->nBytes += nBytes;
    iRow++;
    rc = wcs_cursor_next(pCur);
    if (rc == WCS_OK && shell_interrupted) rc = WCS_INTERRUPT;
  }
  wcs_cursor_close(pCur);
  wcs_buf_free(&label);
  return rc;
}

/* Axis bucket a holds keys k with start(a) <= k < start(a+1); the first
** starts at the beginning of the key space. */
static int overlaps(KeyViz *kv, int a, const void *pLo, size_t nLo, int bLo,
                    const void *pHi, size_t nHi, int bHi) {
  /* [lo, hi) meets [start(a), start(a+1)) */
  if (bHi && a > 0 && keycmp(kv->aB[a].pStart, kv->aB[a].nStart, pHi, nHi) >= 0)
    return 0;
  if (bLo && a + 1 < kv->nB &&
      keycmp(pLo, nLo, kv->aB[a + 1].pStart, kv->aB[a + 1].nStart) >= 0)
    return 0;
  return 1;
}

/* Spread one slot's counts over the axis buckets: aW/aR[nB]. */
static void spread_slot(KeyViz *kv, const wcs_heatmap *m,
                        const wcs_heat_slot *s, double *aW, double *aR) {
  int b, a;
  int bNoBounds = m->nBucket < 2 || s->anBound[0] == 0;
  for (b = 0; b < m->nBucket; b++) {
    uint64_t w = s->aWrite[b], r = s->aRead[b];
    int nHit = 0;
    const void *pLo = 0, *pHi = 0;
    size_t nLo = 0, nHi = 0;
    int bLo = 0, bHi = 0;
    if (w == 0 && r == 0) continue;
    if (!bNoBounds) {
      if (b > 0) {
        pLo = s->apBound[b - 1];
        nLo = s->anBound[b - 1];
        bLo = 1;
      }
      if (b < m->nBucket - 1) {
        pHi = s->apBound[b];
        nHi = s->anBound[b];
        bHi = 1;
      }
    }
    for (a = 0; a < kv->nB; a++) {
      if (overlaps(kv, a, pLo, nLo, bLo, pHi, nHi, bHi)) nHit++;
    }
    if (nHit == 0) continue;
    for (a = 0; a < kv->nB; a++) {
      if (overlaps(kv, a, pLo, nLo, bLo, pHi, nHi, bHi)) {
        aW[a] += (double)w / nHit;
        aR[a] += (double)r / nHit;
      }
    }
  }
}

/* ---- SVG writing */

static void xml_text(FILE *f, const char *z) {
  for (; *z; z++) {
    switch (*z) {
    case '&':
      fputs("&amp;", f);
      break;
    case '<':
      fputs("&lt;", f);
      break;
    case '>':
      fputs("&gt;", f);
      break;
    case '"':
      fputs("&quot;", f);
      break;
    case '\'':
      fputs("&apos;", f);
      break;
    default:
      if ((unsigned char)*z < 0x20)
        fprintf(f, "\\x%02x", (unsigned char)*z);
      else
        fputc(*z, f);
    }
  }
}

/* Heat colour: 0 → near black, then purple, red, yellow (sqrt scale). */
static void heat_color(double v, double vMax, char *zOut) {
  static const double stops[4][3] = {
      {16, 20, 31}, {91, 26, 139}, {224, 69, 43}, {255, 240, 106}};
  double t, f;
  int i;
  if (vMax <= 0 || v <= 0) {
    strcpy(zOut, "#10141f");
    return;
  }
  t = sqrt(v / vMax);
  if (t > 1) t = 1;
  t *= 3;
  i = (int)t;
  if (i >= 3) i = 2;
  f = t - i;
  sprintf(zOut, "#%02x%02x%02x",
          (int)(stops[i][0] + (stops[i + 1][0] - stops[i][0]) * f),
          (int)(stops[i][1] + (stops[i + 1][1] - stops[i][1]) * f),
          (int)(stops[i][2] + (stops[i + 1][2] - stops[i][2]) * f));
}

static void fmt_time(int64_t iMicros, char *zOut, size_t n) {
  time_t t = (time_t)(iMicros / 1000000);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(zOut, n, "%H:%M", &tm);
}

static void fmt_count(double v, char *zOut, size_t n) {
  if (v >= 1e9)
    snprintf(zOut, n, "%.1fG", v / 1e9);
  else if (v >= 1e6)
    snprintf(zOut, n, "%.1fM", v / 1e6);
  else if (v >= 1e4)
    snprintf(zOut, n, "%.1fk", v / 1e3);
  else
    snprintf(zOut, n, "%.0f", v);
}

static void fmt_bytes(double v, char *zOut, size_t n) {
  if (v >= 1 << 30)
    snprintf(zOut, n, "%.1f GiB", v / (1 << 30));
  else if (v >= 1 << 20)
    snprintf(zOut, n, "%.1f MiB", v / (1 << 20));
  else if (v >= 1 << 10)
    snprintf(zOut, n, "%.1f KiB", v / (1 << 10));
  else
    snprintf(zOut, n, "%.0f B", v);
}

static void heat_panel(FILE *f, KeyViz *kv, const wcs_heatmap *m, double *aGrid,
                       double vMax, int x0, const char *zClass,
                       const char *zTitle, const char *zUnit) {
  double rowH = (double)(KV_BOTTOM - KV_TOP) / kv->nB;
  int s, a;
  char zMax[32];
  fmt_count(vMax, zMax, sizeof(zMax));
  fprintf(f, "<text class=\"panel-title\" x=\"%d\" y=\"%d\">", x0, KV_TOP - 12);
  xml_text(f, zTitle);
  fprintf(f, "</text>\n");
  fprintf(f,
          "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
          "fill=\"#10141f\"/>\n",
          x0, KV_TOP, KV_HEAT_W, KV_BOTTOM - KV_TOP);
  if (m->nSlot == 0) {
    fprintf(f,
            "<text class=\"note\" x=\"%d\" y=\"%d\" fill=\"#c8c8d0\" "
            "text-anchor=\"middle\">no %s recorded yet</text>\n",
            x0 + KV_HEAT_W / 2, (KV_TOP + KV_BOTTOM) / 2, zUnit);
    return;
  }
  {
    double colW = (double)KV_HEAT_W / m->nSlot;
    for (s = 0; s < m->nSlot; s++) {
      char zT[16];
      fmt_time(m->aSlot[s].iStart, zT, sizeof(zT));
      for (a = 0; a < kv->nB; a++) {
        double v = aGrid[(size_t)s * kv->nB + a];
        char zC[8], zV[32];
        heat_color(v, vMax, zC);
        fmt_count(v, zV, sizeof(zV));
        fprintf(f,
                "<rect class=\"%s\" data-slot=\"%d\" data-bucket=\"%d\" "
                "x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                "fill=\"%s\"><title>",
                zClass, s, a, x0 + s * colW, KV_TOP + a * rowH, colW + 0.3,
                rowH + 0.3, zC);
        xml_text(f, kv->aB[a].zLabel);
        fprintf(f, " at %s UTC: %s %s</title></rect>\n", zT, zV, zUnit);
      }
    }
  }
  /* time axis */
  {
    char zA[16], zB[16];
    fmt_time(m->aSlot[0].iStart, zA, sizeof(zA));
    fmt_time(m->aSlot[m->nSlot - 1].iStart + m->iSlotMicros, zB, sizeof(zB));
    fprintf(f,
            "<text class=\"axis\" x=\"%d\" y=\"%d\">%s</text>\n"
            "<text class=\"axis\" x=\"%d\" y=\"%d\" "
            "text-anchor=\"end\">%s UTC</text>\n",
            x0, KV_BOTTOM + 16, zA, x0 + KV_HEAT_W, KV_BOTTOM + 16, zB);
  }
  /* legend: a gradient bar, 0 .. max */
  {
    int i, nStep = 24;
    double w = 160.0 / nStep;
    for (i = 0; i < nStep; i++) {
      char zC[8];
      heat_color(vMax * (i + 1) / nStep, vMax, zC);
      fprintf(f,
              "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"10\" "
              "fill=\"%s\"/>\n",
              x0 + i * w, KV_BOTTOM + 34, w + 0.3, zC);
    }
    fprintf(f,
            "<text class=\"axis\" x=\"%d\" y=\"%d\">0</text>\n"
            "<text class=\"axis\" x=\"%d\" y=\"%d\">%s %s per %d s</text>\n",
            x0, KV_BOTTOM + 58, x0 + 166, KV_BOTTOM + 43, zMax, zUnit,
            (int)(m->iSlotMicros / 1000000));
  }
}

static int write_svg(KeyViz *kv, const wcs_heatmap *m, const char *zFile,
                     const char *zTable) {
  FILE *f = fopen(zFile, "wb");
  double *aW = 0, *aR = 0;
  double wMax = 0, rMax = 0, wSum = 0, rSum = 0;
  uint64_t nRowMax = 1, nByteMax = 1;
  double rowH = (double)(KV_BOTTOM - KV_TOP) / kv->nB;
  int s, a, nEvery;
  char zA[32], zB[32];

  if (!f) {
    return shell_error(kv->p, "cannot create %s: %s", zFile, strerror(errno));
  }
  if (m->nSlot > 0) {
    aW = calloc((size_t)m->nSlot * kv->nB, sizeof(double));
    aR = calloc((size_t)m->nSlot * kv->nB, sizeof(double));
    if (!aW || !aR) {
      free(aW);
      free(aR);
      fclose(f);
      return shell_error(kv->p, "out of memory");
    }
    for (s = 0; s < m->nSlot; s++) {
      spread_slot(kv, m, &m->aSlot[s], aW + (size_t)s * kv->nB,
                  aR + (size_t)s * kv->nB);
    }
    for (s = 0; s < m->nSlot * kv->nB; s++) {
      if (aW[s] > wMax) wMax = aW[s];
      if (aR[s] > rMax) rMax = aR[s];
      wSum += aW[s];
      rSum += aR[s];
    }
  }
  for (a = 0; a < kv->nB; a++) {
    if (kv->aB[a].nRows > nRowMax) nRowMax = kv->aB[a].nRows;
    if (kv->aB[a].nBytes > nByteMax) nByteMax = kv->aB[a].nBytes;
  }

  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
          "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, "
          "Helvetica, Arial, sans-serif\">\n"
          "<style>\n"
          "text { fill: #20232a; font-size: 12px; }\n"
          ".title { font-size: 20px; font-weight: bold; }\n"
          ".subtitle { font-size: 13px; fill: #555a66; }\n"
          ".panel-title { font-size: 14px; font-weight: bold; }\n"
          ".axis { font-size: 11px; fill: #555a66; }\n"
          ".bucket-label { font-family: DejaVu Sans Mono, monospace; "
          "font-size: %dpx; }\n"
          "</style>\n"
          "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
          KV_W, KV_H, KV_W, KV_H,
          rowH >= 13  ? 12
          : rowH >= 9 ? 9
                      : 8,
          KV_W, KV_H);
  fprintf(f, "<text class=\"title\" x=\"16\" y=\"32\">Key Visualizer: ");
  xml_text(f, zTable);
  fprintf(f, "</text>\n");
  fmt_bytes((double)kv->nBytes, zA, sizeof(zA));
  fprintf(f,
          "<text class=\"subtitle\" x=\"16\" y=\"54\">%" PRIu64
          " rows, %s in %d key buckets ",
          kv->nRows, zA, kv->nB);
  if (kv->nLevel > 0) {
    int i;
    fprintf(f, "by prefix (");
    for (i = 0; i < kv->nLevel; i++) {
      fprintf(f, "%s", i ? "," : "");
      xml_text(f, kv->pSchema->aField[i].zName);
    }
    fprintf(f, ")");
  } else {
    fprintf(f, "of equal row counts");
  }
  fmt_count(wSum, zA, sizeof(zA));
  fmt_count(rSum, zB, sizeof(zB));
  fprintf(f,
          "; %s cells written, %s rows read in %d one-minute slots; "
          "key order top to bottom, time left to right</text>\n",
          zA, zB, m->nSlot);

  /* bucket labels (thinned when rows are too short for every one) */
  nEvery = rowH >= 8 ? 1 : (int)ceil(8.0 / rowH);
  for (a = 0; a < kv->nB; a++) {
    if (a % nEvery) continue;
    fprintf(f,
            "<text class=\"bucket-label\" data-bucket=\"%d\" x=\"%d\" "
            "y=\"%.2f\" text-anchor=\"end\" dominant-baseline=\"middle\">",
            a, KV_LABEL_X, KV_TOP + (a + 0.5) * rowH);
    xml_text(f, kv->aB[a].zLabel);
    fprintf(f, "</text>\n");
  }
  fprintf(f,
          "<text class=\"panel-title\" x=\"%d\" y=\"%d\" "
          "text-anchor=\"end\">row key</text>\n",
          KV_LABEL_X, KV_TOP - 12);

  heat_panel(f, kv, m, aW, wMax, KV_WRITE_X, "heat-w", "Writes",
             "cells written");
  heat_panel(f, kv, m, aR, rMax, KV_READ_X, "heat-r", "Reads", "rows read");

  /* distribution: rows (blue, upper half) and bytes (green, lower half) */
  fprintf(f,
          "<text class=\"panel-title\" x=\"%d\" y=\"%d\">Rows and bytes "
          "per bucket</text>\n",
          KV_DIST_X, KV_TOP - 12);
  for (a = 0; a < kv->nB; a++) {
    double y = KV_TOP + a * rowH;
    double wRows = (double)kv->aB[a].nRows / nRowMax * KV_DIST_W;
    double wBytes = (double)kv->aB[a].nBytes / nByteMax * KV_DIST_W;
    fmt_bytes((double)kv->aB[a].nBytes, zA, sizeof(zA));
    fprintf(f,
            "<rect class=\"dist-rows\" data-bucket=\"%d\" x=\"%d\" y=\"%.2f\" "
            "width=\"%.2f\" height=\"%.2f\" fill=\"#3b78d8\"><title>",
            a, KV_DIST_X, y + rowH * 0.08, wRows, rowH * 0.42);
    xml_text(f, kv->aB[a].zLabel);
    fprintf(f, ": %" PRIu64 " rows</title></rect>\n", kv->aB[a].nRows);
    fprintf(f,
            "<rect class=\"dist-bytes\" data-bucket=\"%d\" x=\"%d\" "
            "y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#34a853\">"
            "<title>",
            a, KV_DIST_X, y + rowH * 0.5, wBytes, rowH * 0.42);
    xml_text(f, kv->aB[a].zLabel);
    fprintf(f, ": %s</title></rect>\n", zA);
  }
  fmt_bytes((double)nByteMax, zA, sizeof(zA));
  fprintf(f,
          "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
          "fill=\"#3b78d8\"/>\n"
          "<text class=\"axis\" x=\"%d\" y=\"%d\">rows (max %" PRIu64
          ")</text>\n"
          "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
          "fill=\"#34a853\"/>\n"
          "<text class=\"axis\" x=\"%d\" y=\"%d\">bytes (max %s)</text>\n",
          KV_DIST_X, KV_BOTTOM + 10, KV_DIST_X + 14, KV_BOTTOM + 19, nRowMax,
          KV_DIST_X, KV_BOTTOM + 28, KV_DIST_X + 14, KV_BOTTOM + 37, zA);
  fprintf(f, "</svg>\n");
  free(aW);
  free(aR);
  if (fclose(f) != 0) {
    return shell_error(kv->p, "cannot write %s: %s", zFile, strerror(errno));
  }
  return 0;
}

int shell_keyviz(Shell *p, const char *zTable, const char *zFile, int nOpt,
                 char **azOpt) {
  KeyViz kv;
  wcs_heatmap *m = 0;
  int i, rc = 0;

  memset(&kv, 0, sizeof(kv));
  kv.p = p;
  kv.nMax = KV_DEFAULT_BUCKETS;
  for (i = 0; i < nOpt; i++) {
    const char *z = azOpt[i];
    while (*z == '-')
      z++;
    if (strncmp(z, "buckets=", 8) == 0 && atoi(z + 8) >= 1 &&
        atoi(z + 8) <= KV_MAX_BUCKETS) {
      kv.nMax = atoi(z + 8);
    } else {
      return shell_error(p, "option \"%s\": expected buckets=1..%d", azOpt[i],
                         KV_MAX_BUCKETS);
    }
  }
  if (shell_open_table(p, zTable, &kv.pTab)) return 1;
  kv.pSchema = wcs_table_schema(kv.pTab);
  if (kv.pSchema && kv.pSchema->nField == 0) kv.pSchema = 0;
  /* Ctrl-C stops the two passes over the table between rows, and so
  ** before the picture is written */
  shell_interrupted = 0;
  shell_busy++;
  rc = choose_buckets(&kv);
  if (rc == WCS_OK) rc = fill_buckets(&kv);
  if (rc == WCS_OK && kv.nB == 0) rc = add_bucket(&kv, 0, 0, "(empty)", 7);
  if (rc == WCS_OK) rc = wcs_table_heatmap(kv.pTab, &m);
  if (rc == WCS_OK && shell_interrupted) rc = WCS_INTERRUPT;
  if (rc == WCS_INTERRUPT) {
    shell_error(p, "interrupted: %s is not written", zFile);
    rc = 1;
  } else if (rc != WCS_OK) {
    shell_error(p, "cannot read table %s: %s", zTable,
                p->pEng ? wcs_engine_errmsg(p->pEng) : wcs_errstr(rc));
    rc = 1;
  } else {
    rc = write_svg(&kv, m, zFile, zTable);
    if (rc == 0) {
      fprintf(p->out, "wrote %s: %d key buckets x %d time slots\n", zFile,
              kv.nB, m->nSlot);
    }
  }
  shell_busy--;
  wcs_heatmap_free(m);
  for (i = 0; i < kv.nB; i++) {
    free(kv.aB[i].pStart);
    free(kv.aB[i].zLabel);
  }
  free(kv.aB);
  wcs_buf_free(&kv.scratch);
  wcs_table_close(kv.pTab);
  return rc;
}
