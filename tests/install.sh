#!/usr/bin/env bash
# install.sh — what `make install` puts under a prefix, used as a user of
# the installed tree would use it (README, "Installing"): `cmake --install`
# of the build into a scratch prefix, then
#   - every file in its place: lib/wcs.so, lib/libwcs.a, lib/libwcscore.a,
#     include/wcs.h, bin/wcs, lib/pkgconfig/wcs.pc;
#   - `.load wcs` by name alone in the sqlite3 CLI, and load_extension("wcs")
#     in Debian's Python, from another directory, the loader finding wcs.so through
#     LD_LIBRARY_PATH (as it finds it in the system's library directory
#     after `make install PREFIX=/usr`);
#   - a C program built with `pkg-config --cflags --libs wcs` alone, which
#     registers the module on a connection with wcs_register() and reads
#     back a row through a prefix scan;
#   - the installed shell running one statement.
#
# Usage: bash tests/install.sh BUILD_DIR    (ctest runs it as sh_install)
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/data/shell-lib.bash" "${1:?usage: install.sh BUILD_DIR}"
build=$BUILD
tmp=$WORK
prefix="$tmp/prefix"

if ! out=$(cmake --install "$build" --prefix "$prefix" 2>&1); then
  echo "FAIL cmake --install $build --prefix $prefix"
  printf '%s\n' "$out"
  exit 1
fi

# The library directory is lib/ for this prefix (lib/<multiarch> is for
# the prefix /usr only): find it through the pkg-config file.
pc=$(find "$prefix" -name wcs.pc -path '*/pkgconfig/*' | head -n 1)
if [ -z "$pc" ]; then
  echo "FAIL no wcs.pc under $prefix"
  exit 1
fi
libdir=$(dirname "$(dirname "$pc")")

missing=""
for f in "$libdir/wcs.so" "$libdir/libwcs.a" "$libdir/libwcscore.a" \
         "$prefix/include/wcs.h" "$prefix/bin/wcs"; do
  [ -f "$f" ] || missing="$missing ${f#"$prefix"/}"
done
if [ -z "$missing" ]; then
  ok "installed files"
else
  not_ok "installed files" "missing:$missing"
fi

ddl="CREATE VIRTUAL TABLE m USING wcs(KEY (device STRING, id STRING) DELIMITED BY '#', FAMILY s (cpu INT64));
INSERT INTO m(device, id, cpu) VALUES ('phone', 'a1', 7), ('phone', 'b2', 9), ('watch', 'a1', 1);"
want="phone|a1|7
phone|b2|9"

# An extension built with a sanitizer needs its runtime in the process.
. "$here/lib/sanitizer_preload.sh" "$libdir/wcs.so"

mkdir -p "$tmp/elsewhere"
if command -v sqlite3 >/dev/null 2>&1; then
  got=$(cd "$tmp/elsewhere" &&
        printf '.load wcs\n%s\nSELECT device, id, cpu FROM m WHERE device = %s;\n' \
          "$ddl" "'phone'" |
        LD_LIBRARY_PATH="$libdir" sqlite3 -batch -bail :memory: 2>&1)
  check_eq "sqlite3: .load wcs finds the installed module" "$got" "$want"
else
  echo "SKIP sqlite3 CLI: not installed"
fi

# Debian's python3 (a Python built elsewhere may lack load_extension)
if [ -x /usr/bin/python3 ]; then
  got=$(cd "$tmp/elsewhere" && DDL="$ddl" LD_LIBRARY_PATH="$libdir" /usr/bin/python3 -c '
import os, sqlite3
con = sqlite3.connect(":memory:")
con.enable_load_extension(True)
con.load_extension("wcs")
con.executescript(os.environ["DDL"])
for r in con.execute("SELECT device, id, cpu FROM m WHERE device = ?", ("phone",)):
    print("|".join(str(x) for x in r))
' 2>&1)
  check_eq "python3: load_extension(\"wcs\") finds the installed module" \
    "$got" "$want"
else
  echo "SKIP python3: /usr/bin/python3 is not installed"
fi

# A C program linked against the installed static libraries. A sanitized
# build's archives need the same compiler and flags at link time.
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
[ -n "$cc" ] || cc=cc
san=""
if grep -q '^WCS_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
  san="-fsanitize=address,undefined"
fi
cat >"$tmp/embed.c" <<'EOF'
#include <sqlite3.h>
#include <stdio.h>
#include <wcs.h>

int main(int argc, char **argv) {
  sqlite3 *db;
  sqlite3_stmt *st;
  int rc;
  if (argc < 2 || sqlite3_open(":memory:", &db) != SQLITE_OK) return 2;
  if (wcs_register(db) != SQLITE_OK) return 3;
  if (sqlite3_exec(db, argv[1], NULL, NULL, NULL) != SQLITE_OK) {
    fprintf(stderr, "%s\n", sqlite3_errmsg(db));
    return 4;
  }
  rc = sqlite3_prepare_v2(db,
                          "SELECT device, id, cpu FROM m WHERE device = 'phone'",
                          -1, &st, NULL);
  if (rc != SQLITE_OK) return 5;
  while (sqlite3_step(st) == SQLITE_ROW) {
    printf("%s|%s|%lld\n", sqlite3_column_text(st, 0),
           sqlite3_column_text(st, 1), sqlite3_column_int64(st, 2));
  }
  sqlite3_finalize(st);
  return sqlite3_close(db) == SQLITE_OK ? 0 : 6;
}
EOF
if flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs wcs 2>&1) &&
   cerr=$($cc $san -o "$tmp/embed" "$tmp/embed.c" $flags 2>&1); then
  got=$(env -u LD_PRELOAD "$tmp/embed" "$ddl" 2>&1)
  check_eq "C: built with pkg-config wcs, wcs_register()" "$got" "$want"
else
  not_ok "C: built with pkg-config wcs" "pkg-config: $flags" "cc: ${cerr:-}"
fi

got=$(cd "$tmp/elsewhere" && env -u LD_PRELOAD "$prefix/bin/wcs" db.db \
        "$ddl SELECT device, id, cpu FROM m WHERE device = 'watch';" 2>&1)
case "$got" in
  *watch*a1*1*) ok "the installed shell runs a statement" ;;
  *) not_ok "the installed shell runs a statement" "got: $got" ;;
esac

finish
