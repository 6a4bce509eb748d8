#!/usr/bin/env bash
# sql_python.sh — runs tests/sql_python.py (the wcs extension from Python's
# stdlib sqlite3 with load_extension) under the system /usr/bin/python3.
#
# Usage: bash tests/sql_python.sh BUILD_DIR    (ctest runs it as sh_sql_python)
# Prints "SKIP: ..." and exits 0 only when /usr/bin/python3 is missing or its
# sqlite3 module cannot load extensions.
set -u

build=${1:?usage: sql_python.sh BUILD_DIR}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3

if [ ! -x "$py" ]; then
  echo "SKIP: $py is not installed (apt-get install python3)"
  exit 0
fi
if ! "$py" -c 'import sqlite3' 2>/dev/null; then
  echo "SKIP: $py has no sqlite3 module"
  exit 0
fi

# An extension built with AddressSanitizer (gcc or clang) needs its
# runtime loaded first into an uninstrumented program.
. "$here/lib/sanitizer_preload.sh" "$build/wcs.so"

TMPDIR=${TMPDIR:-/tmp} exec "$py" "$here/sql_python.py" "$build"
