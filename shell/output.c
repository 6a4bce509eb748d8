/*
** output.c — running SQL text and printing the rows in the shell's output
** modes (doc/shell.md, "Output modes").
**
** Streaming modes (list, csv, json, line) print each row as it is stepped;
** table and box need every row to size their columns, so they buffer the
** rendered cells of the whole result first. Widths are terminal columns:
** wide characters count two, combining marks none.
**
** How values appear: integers and reals as SQLite prints them; text as is
** (in table and box, control characters and bytes that are not UTF-8 are
** shown as \n, \t, \xNN so a frame never breaks; in json, text that is
** not UTF-8 is shown as x'hex', as JSON text must be UTF-8); a BLOB that is valid UTF-8 text is shown as text
** (row keys and cell values are BLOBs in wcs, and mostly readable), any
** other BLOB as x'hex'. NULL is "NULL" in table, box and line, empty in
** list and csv, null in json.
*/
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "shell/shell.h"

static const char *const azModeName[] = {"list", "table", "box",
                                         "csv",  "json",  "line"};

int shell_mode_parse(const char *z) {
  int i;
  for (i = 0; i < (int)(sizeof(azModeName) / sizeof(azModeName[0])); i++) {
    if (strcmp(z, azModeName[i]) == 0) return i;
  }
  return -1;
}

const char *shell_mode_name(int eMode) {
  return eMode >= 0 && eMode <= SHELL_MODE_LINE ? azModeName[eMode] : "?";
}

/* Length of the UTF-8 sequence starting at p (1..4), or 0 if invalid. */
static int utf8_len(const uint8_t *p, size_t n) {
  int len, i;
  uint32_t c;
  if (p[0] < 0x80) return 1;
  if (p[0] >= 0xC2 && p[0] <= 0xDF)
    len = 2;
  else if (p[0] >= 0xE0 && p[0] <= 0xEF)
    len = 3;
  else if (p[0] >= 0xF0 && p[0] <= 0xF4)
    len = 4;
  else
    return 0;
  if ((size_t)len > n) return 0;
  c = p[0] & (0x7F >> len);
  for (i = 1; i < len; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    c = c << 6 | (p[i] & 0x3F);
  }
  if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
      (c >= 0xD800 && c <= 0xDFFF)) {
    return 0;
  }
  return len;
}

/* 1 if p[0..n-1] is valid UTF-8 (control characters allowed). */
static int utf8_valid(const uint8_t *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    int len = utf8_len(p + i, n - i);
    if (len == 0) return 0;
    i += (size_t)len;
  }
  return 1;
}

int shell_is_text(const void *pv, size_t n) {
  const uint8_t *p = pv;
  size_t i = 0;
  while (i < n) {
    int len;
    if (p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r') {
      return 0;
    }
    if (p[i] == 0x7F) return 0;
    len = utf8_len(p + i, n - i);
    if (len == 0) return 0;
    i += (size_t)len;
  }
  return 1;
}

void shell_csv_field(FILE *out, const void *pv, size_t n, int bQuoteEmpty) {
  const char *p = pv;
  size_t i;
  int bQuote = n == 0 ? bQuoteEmpty : 0;
  for (i = 0; i < n && !bQuote; i++) {
    if (p[i] == ',' || p[i] == '"' || p[i] == '\n' || p[i] == '\r') {
      bQuote = 1;
    }
  }
  if (n > 0 && (p[0] == ' ' || p[n - 1] == ' ')) bQuote = 1;
  if (!bQuote) {
    fwrite(p, 1, n, out);
    return;
  }
  fputc('"', out);
  for (i = 0; i < n; i++) {
    if (p[i] == '"') fputc('"', out);
    fputc(p[i], out);
  }
  fputc('"', out);
}

int shell_json_string(wcs_buf *pBuf, const void *pv, size_t n) {
  const uint8_t *p = pv;
  size_t i;
  int rc = wcs_buf_append(pBuf, "\"", 1);
  for (i = 0; i < n && rc == WCS_OK; i++) {
    char esc[8];
    uint8_t c = p[i];
    if (c == '"' || c == '\\') {
      esc[0] = '\\';
      esc[1] = (char)c;
      rc = wcs_buf_append(pBuf, esc, 2);
    } else if (c == '\n') {
      rc = wcs_buf_append(pBuf, "\\n", 2);
    } else if (c == '\r') {
      rc = wcs_buf_append(pBuf, "\\r", 2);
    } else if (c == '\t') {
      rc = wcs_buf_append(pBuf, "\\t", 2);
    } else if (c < 0x20 || c == 0x7F) {
      snprintf(esc, sizeof(esc), "\\u%04x", c);
      rc = wcs_buf_append(pBuf, esc, 6);
    } else {
      rc = wcs_buf_append(pBuf, &c, 1);
    }
  }
  if (rc == WCS_OK) rc = wcs_buf_append(pBuf, "\"", 1);
  return rc;
}

static int append_hex_literal(wcs_buf *pBuf, const uint8_t *p, size_t n) {
  static const char hex[] = "0123456789abcdef";
  size_t i;
  int rc = wcs_buf_append(pBuf, "x'", 2);
  for (i = 0; i < n && rc == WCS_OK; i++) {
    char h[2];
    h[0] = hex[p[i] >> 4];
    h[1] = hex[p[i] & 15];
    rc = wcs_buf_append(pBuf, h, 2);
  }
  if (rc == WCS_OK) rc = wcs_buf_append(pBuf, "'", 1);
  return rc;
}

/* Append text with control characters and bytes that are not UTF-8 made
** visible (table, box). */
static int append_visible(wcs_buf *pBuf, const uint8_t *p, size_t n) {
  size_t i;
  int rc = WCS_OK;
  for (i = 0; i < n && rc == WCS_OK; i++) {
    char esc[8];
    int len = p[i] >= 0x80 ? utf8_len(p + i, n - i) : 1;
    if (len > 1) {
      rc = wcs_buf_append(pBuf, p + i, (size_t)len);
      i += (size_t)len - 1;
    } else if (len == 0) {
      snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
      rc = wcs_buf_append(pBuf, esc, 4);
    } else if (p[i] == '\n') {
      rc = wcs_buf_append(pBuf, "\\n", 2);
    } else if (p[i] == '\t') {
      rc = wcs_buf_append(pBuf, "\\t", 2);
    } else if (p[i] == '\r') {
      rc = wcs_buf_append(pBuf, "\\r", 2);
    } else if (p[i] < 0x20 || p[i] == 0x7F) {
      snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
      rc = wcs_buf_append(pBuf, esc, 4);
    } else {
      rc = wcs_buf_append(pBuf, p + i, 1);
    }
  }
  return rc;
}

/* Render column i of the current row as text for mode eMode into pBuf
** (replacing its contents, NUL-terminated). *pbNumber says whether it is a
** number (right-aligned in tables, bare in JSON); *pbNull whether NULL. */
static int render_cell(sqlite3_stmt *pStmt, int i, int eMode, wcs_buf *pBuf,
                       int *pbNumber, int *pbNull) {
  int eType = sqlite3_column_type(pStmt, i);
  int rc = WCS_OK;
  int bTable = eMode == SHELL_MODE_TABLE || eMode == SHELL_MODE_BOX;
  pBuf->n = 0;
  *pbNumber = 0;
  *pbNull = 0;
  switch (eType) {
  case SQLITE_NULL:
    *pbNull = 1;
    if (bTable || eMode == SHELL_MODE_LINE)
      rc = wcs_buf_append(pBuf, "NULL", 4);
    break;
  case SQLITE_INTEGER:
  case SQLITE_FLOAT: {
    const char *z = (const char *)sqlite3_column_text(pStmt, i);
    *pbNumber = 1;
    if (z) rc = wcs_buf_append(pBuf, z, strlen(z));
    break;
  }
  case SQLITE_TEXT: {
    const uint8_t *z = sqlite3_column_text(pStmt, i);
    size_t n = (size_t)sqlite3_column_bytes(pStmt, i);
    if (bTable)
      rc = append_visible(pBuf, z, n);
    else if (eMode == SHELL_MODE_JSON && !utf8_valid(z, n))
      rc = append_hex_literal(pBuf, z, n); /* JSON text must be UTF-8 */
    else if (n)
      rc = wcs_buf_append(pBuf, z, n);
    break;
  }
  default: {
    const uint8_t *z = sqlite3_column_blob(pStmt, i);
    size_t n = (size_t)sqlite3_column_bytes(pStmt, i);
    if (!shell_is_text(z, n))
      rc = append_hex_literal(pBuf, z, n);
    else if (bTable)
      rc = append_visible(pBuf, z, n);
    else if (n)
      rc = wcs_buf_append(pBuf, z, n);
    break;
  }
  }
  if (rc == WCS_OK) rc = wcs_buf_reserve(pBuf, 1);
  if (rc == WCS_OK) pBuf->a[pBuf->n] = 0;
  return rc;
}

/* Terminal columns of code point c: 0 for combining marks, 2 for East
** Asian wide and fullwidth characters and emoji, else 1. The common
** ranges only; what is missed costs alignment, never bytes. */
static int char_width(uint32_t c) {
  if ((c >= 0x300 && c <= 0x36F) || (c >= 0x1AB0 && c <= 0x1AFF) ||
      (c >= 0x1DC0 && c <= 0x1DFF) || (c >= 0x20D0 && c <= 0x20FF) ||
      (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xFE20 && c <= 0xFE2F) ||
      c == 0x200B || c == 0x200C || c == 0x200D) {
    return 0;
  }
  if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) ||
      (c >= 0x3041 && c <= 0x33FF) || (c >= 0x3400 && c <= 0x4DBF) ||
      (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
      (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
      (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
      (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
      (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD)) {
    return 2;
  }
  return 1;
}

/* Display width of UTF-8 text in terminal columns. A byte that is not
** UTF-8 counts one (table cells show it as \xNN anyway). */
int shell_display_width(const char *z, size_t n) {
  const uint8_t *p = (const uint8_t *)z;
  int w = 0;
  size_t i = 0;
  while (i < n) {
    int len = p[i] < 0x80 ? 1 : utf8_len(p + i, n - i);
    uint32_t c = p[i];
    int k;
    if (len == 0) {
      w++;
      i++;
      continue;
    }
    if (len > 1) {
      c = p[i] & (0x7F >> len);
      for (k = 1; k < len; k++)
        c = c << 6 | (p[i + (size_t)k] & 0x3F);
    }
    w += char_width(c);
    i += (size_t)len;
  }
  return w;
}

static void put_repeat(FILE *out, const char *z, int n) {
  while (n-- > 0)
    fputs(z, out);
}

/* The buffered result of a statement, for table and box. */
typedef struct Grid {
  int nCol;
  int nRow;       /* rows buffered */
  int nAlloc;     /* rows allocated */
  char **azCell;  /* nRow*nCol rendered cells (malloc'd) */
  uint8_t *abNum; /* nRow*nCol: 1 if the cell is a number */
  int *aWidth;    /* nCol widths */
} Grid;

static void grid_free(Grid *g) {
  int i;
  for (i = 0; i < g->nRow * g->nCol; i++)
    free(g->azCell[i]);
  free(g->azCell);
  free(g->abNum);
  free(g->aWidth);
}

static void grid_line(Shell *p, Grid *g, int eWhere) {
  /* eWhere: 0 top, 1 under the header, 2 bottom */
  int bBox = p->eMode == SHELL_MODE_BOX;
  const char *zH = bBox ? "─" : "-";
  const char *zL, *zM, *zR;
  int j;
  if (!bBox) {
    zL = zM = zR = "+";
  } else if (eWhere == 0) {
    zL = "┌";
    zM = "┬";
    zR = "┐";
  } else if (eWhere == 1) {
    zL = "├";
    zM = "┼";
    zR = "┤";
  } else {
    zL = "└";
    zM = "┴";
    zR = "┘";
  }
  fputs(zL, p->out);
  for (j = 0; j < g->nCol; j++) {
    put_repeat(p->out, zH, g->aWidth[j] + 2);
    fputs(j + 1 < g->nCol ? zM : zR, p->out);
  }
  fputc('\n', p->out);
}

static void grid_row(Shell *p, Grid *g, char **azText, const uint8_t *abNum) {
  const char *zV = p->eMode == SHELL_MODE_BOX ? "│" : "|";
  int j;
  fputs(zV, p->out);
  for (j = 0; j < g->nCol; j++) {
    const char *z = azText[j];
    int w = shell_display_width(z, strlen(z));
    int pad = g->aWidth[j] - w;
    fputc(' ', p->out);
    if (abNum && abNum[j]) put_repeat(p->out, " ", pad);
    fputs(z, p->out);
    if (!(abNum && abNum[j])) put_repeat(p->out, " ", pad);
    fputc(' ', p->out);
    fputs(zV, p->out);
  }
  fputc('\n', p->out);
}

static void grid_print(Shell *p, Grid *g, sqlite3_stmt *pStmt) {
  int i, j;
  char **azName;
  wcs_buf *aVis; /* the names made visible, as cells are */
  if (g->nRow == 0) return;
  azName = calloc((size_t)g->nCol, sizeof(char *));
  aVis = calloc((size_t)g->nCol, sizeof(wcs_buf));
  if (!azName || !aVis) {
    free(azName);
    free(aVis);
    return;
  }
  for (j = 0; j < g->nCol; j++) {
    const char *z = sqlite3_column_name(pStmt, j);
    if (z == NULL) z = "";
    if (append_visible(&aVis[j], (const uint8_t *)z, strlen(z)) ||
        wcs_buf_append(&aVis[j], "", 1)) {
      azName[j] = (char *)z;
    } else {
      azName[j] = (char *)aVis[j].a;
    }
    if (p->bHeaders) {
      int w = shell_display_width(azName[j], strlen(azName[j]));
      if (w > g->aWidth[j]) g->aWidth[j] = w;
    }
  }
  grid_line(p, g, 0);
  if (p->bHeaders) {
    grid_row(p, g, azName, 0);
    grid_line(p, g, 1);
  }
  for (i = 0; i < g->nRow; i++) {
    grid_row(p, g, g->azCell + (size_t)i * g->nCol,
             g->abNum + (size_t)i * g->nCol);
  }
  grid_line(p, g, 2);
  for (j = 0; j < g->nCol; j++)
    wcs_buf_free(&aVis[j]);
  free(aVis);
  free(azName);
}

static double now_seconds(void) {
  struct timeval tv;
  gettimeofday(&tv, 0);
  return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static double cpu_seconds(int bSys) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  if (bSys) return (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
}

/* Step pStmt to the end, printing its rows in mode eMode. */
static int run_stmt(Shell *p, sqlite3_stmt *pStmt, int eMode, int bHeaders) {
  int nCol = sqlite3_column_count(pStmt);
  int rc, i, nRow = 0;
  wcs_buf cell = {0, 0, 0};
  wcs_buf json = {0, 0, 0};
  Grid g;
  int nNameWidth = 0;
  int eSave = p->eMode;
  int bSaveHeaders = p->bHeaders;

  memset(&g, 0, sizeof(g));
  g.nCol = nCol;
  if (nCol > 0 && (eMode == SHELL_MODE_TABLE || eMode == SHELL_MODE_BOX)) {
    g.aWidth = calloc((size_t)nCol, sizeof(int));
    if (!g.aWidth) return shell_error(p, "out of memory");
  }
  if (eMode == SHELL_MODE_LINE) {
    for (i = 0; i < nCol; i++) {
      const char *z = sqlite3_column_name(pStmt, i);
      int w = z ? shell_display_width(z, strlen(z)) : 0;
      if (w > nNameWidth) nNameWidth = w;
    }
  }

  while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
    int bNum, bNull;
    if (eMode == SHELL_MODE_TABLE || eMode == SHELL_MODE_BOX) {
      if (g.nRow == g.nAlloc) {
        int nNew = g.nAlloc ? g.nAlloc * 2 : 64;
        char **az = realloc(g.azCell, (size_t)nNew * nCol * sizeof(char *));
        uint8_t *ab;
        if (!az) break;
        g.azCell = az;
        ab = realloc(g.abNum, (size_t)nNew * nCol);
        if (!ab) break;
        g.abNum = ab;
        g.nAlloc = nNew;
      }
      for (i = 0; i < nCol; i++) {
        char *z;
        int w;
        if (render_cell(pStmt, i, eMode, &cell, &bNum, &bNull)) break;
        z = strdup((const char *)cell.a);
        if (!z) break;
        g.azCell[(size_t)g.nRow * nCol + i] = z;
        g.abNum[(size_t)g.nRow * nCol + i] = (uint8_t)bNum;
        w = shell_display_width(z, cell.n);
        if (w > g.aWidth[i]) g.aWidth[i] = w;
      }
      if (i < nCol) {
        while (--i >= 0)
          free(g.azCell[(size_t)g.nRow * nCol + i]);
        rc = SQLITE_NOMEM;
        break;
      }
      g.nRow++;
    } else if (eMode == SHELL_MODE_LIST || eMode == SHELL_MODE_CSV) {
      if (nRow == 0 && bHeaders) {
        for (i = 0; i < nCol; i++) {
          const char *z = sqlite3_column_name(pStmt, i);
          if (i) fputc(eMode == SHELL_MODE_CSV ? ',' : '|', p->out);
          if (eMode == SHELL_MODE_CSV)
            shell_csv_field(p->out, z, strlen(z), 0);
          else
            fputs(z, p->out);
        }
        fputs(eMode == SHELL_MODE_CSV ? "\r\n" : "\n", p->out);
      }
      for (i = 0; i < nCol; i++) {
        if (render_cell(pStmt, i, eMode, &cell, &bNum, &bNull)) break;
        if (i) fputc(eMode == SHELL_MODE_CSV ? ',' : '|', p->out);
        if (eMode == SHELL_MODE_CSV)
          shell_csv_field(p->out, cell.a, cell.n, 0);
        else
          fwrite(cell.a, 1, cell.n, p->out);
      }
      fputs(eMode == SHELL_MODE_CSV ? "\r\n" : "\n", p->out);
    } else if (eMode == SHELL_MODE_JSON) {
      json.n = 0;
      wcs_buf_append(&json, nRow == 0 ? "[{" : ",\n{", nRow == 0 ? 2 : 3);
      for (i = 0; i < nCol; i++) {
        const char *z = sqlite3_column_name(pStmt, i);
        size_t nName = z ? strlen(z) : 0;
        if (render_cell(pStmt, i, eMode, &cell, &bNum, &bNull)) break;
        if (i) wcs_buf_append(&json, ",", 1);
        if (utf8_valid((const uint8_t *)z, nName)) {
          shell_json_string(&json, z ? z : "", nName);
        } else {
          /* as a value that is not UTF-8: JSON text must be UTF-8 */
          wcs_buf hex = {0, 0, 0};
          if (append_hex_literal(&hex, (const uint8_t *)z, nName) == WCS_OK) {
            shell_json_string(&json, hex.a, hex.n);
          }
          wcs_buf_free(&hex);
        }
        wcs_buf_append(&json, ":", 1);
        if (bNull) {
          wcs_buf_append(&json, "null", 4);
        } else if (bNum && sqlite3_column_type(pStmt, i) == SQLITE_INTEGER) {
          wcs_buf_append(&json, cell.a, cell.n);
        } else if (bNum) {
          double r = sqlite3_column_double(pStmt, i);
          if (r - r != 0)
            wcs_buf_append(&json, "null", 4); /* inf, nan */
          else
            wcs_buf_append(&json, cell.a, cell.n);
        } else {
          shell_json_string(&json, cell.a, cell.n);
        }
      }
      wcs_buf_append(&json, "}", 1);
      fwrite(json.a, 1, json.n, p->out);
    } else { /* line */
      if (nRow > 0) fputc('\n', p->out);
      for (i = 0; i < nCol; i++) {
        const char *z = sqlite3_column_name(pStmt, i);
        if (render_cell(pStmt, i, eMode, &cell, &bNum, &bNull)) break;
        if (!z) z = "";
        /* padded by display width, as %*s would pad by bytes */
        put_repeat(p->out, " ", nNameWidth - shell_display_width(z, strlen(z)));
        fprintf(p->out, "%s = ", z);
        fwrite(cell.a, 1, cell.n, p->out);
        fputc('\n', p->out);
      }
    }
    nRow++;
  }
  if (eMode == SHELL_MODE_JSON && nRow > 0) fputs("]\n", p->out);
  if (eMode == SHELL_MODE_JSON && nRow == 0 && nCol > 0 && rc == SQLITE_DONE) {
    fputs("[]\n", p->out); /* no rows: still a JSON array */
  }
  if (eMode == SHELL_MODE_TABLE || eMode == SHELL_MODE_BOX) {
    p->eMode = eMode;
    p->bHeaders = bHeaders;
    grid_print(p, &g, pStmt);
    p->eMode = eSave;
    p->bHeaders = bSaveHeaders;
    grid_free(&g);
  }
  wcs_buf_free(&cell);
  wcs_buf_free(&json);
  if (rc != SQLITE_DONE) {
    const char *zMsg = sqlite3_errmsg(sqlite3_db_handle(pStmt));
    if (rc == SQLITE_NOMEM) zMsg = "out of memory";
    return shell_error(p, "%s", zMsg);
  }
  return 0;
}

/* Run every statement of zSql in mode eMode. */
static int exec_in_mode(Shell *p, const char *zSql, int eMode, int bHeaders) {
  const char *zTail = zSql;
  int rc = 0;
  shell_interrupted = 0;
  shell_busy++;
  while (zTail && *zTail && rc == 0) {
    sqlite3_stmt *pStmt = 0;
    const char *zNext = 0;
    double t0 = 0, u0 = 0, s0 = 0;
    if (p->bTimer) {
      t0 = now_seconds();
      u0 = cpu_seconds(0);
      s0 = cpu_seconds(1);
    }
    if (sqlite3_prepare_v2(p->db, zTail, -1, &pStmt, &zNext) != SQLITE_OK) {
      shell_busy--;
      return shell_error(p, "%s", sqlite3_errmsg(p->db));
    }
    if (pStmt) {
      rc = run_stmt(p, pStmt, eMode, bHeaders);
      sqlite3_finalize(pStmt);
      if (p->bTimer) {
        fprintf(p->out, "Run Time: real %.3f user %.3f sys %.3f\n",
                now_seconds() - t0, cpu_seconds(0) - u0, cpu_seconds(1) - s0);
      }
    }
    zTail = zNext;
  }
  shell_busy--;
  fflush(p->out);
  return rc;
}

int shell_exec(Shell *p, const char *zSql) {
  return exec_in_mode(p, zSql, p->eMode, p->bHeaders);
}

int shell_exec_mode(Shell *p, const char *zSql, int eMode) {
  return exec_in_mode(p, zSql, eMode, 1);
}
