#!/usr/bin/env bash
# sql_node.sh — the wcs extension from Node's better-sqlite3 (npm):
# tests/node/client.js, with better-sqlite3 installed from the committed
# tests/node/package.json and package-lock.json by `npm ci` into
# BUILD_DIR/node-client (reused while the lock file is unchanged).
# better-sqlite3 compiles its native addon with node-gyp against the local
# Node headers (/usr/include/node) when no prebuilt binary can be fetched;
# it bundles its own SQLite (the test checks it is >= 3.38).
#
# Usage: bash tests/sql_node.sh BUILD_DIR    (ctest runs it as sh_sql_node)
# Prints "SKIP: ..." and exits 0 only when node or npm is missing, or when
# better-sqlite3 cannot be installed (no npm registry, no compiler).
set -u

build=${1:?usage: sql_node.sh BUILD_DIR}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work="$build/node-client"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "SKIP: node and npm are not installed"
  exit 0
fi
if [ ! -f "$build/wcs.so" ]; then
  echo "FAIL: $build/wcs.so was not built"
  exit 1
fi

mkdir -p "$work"
addon="$work/node_modules/better-sqlite3/build/Release/better_sqlite3.node"
if [ ! -f "$addon" ] || ! cmp -s "$here/node/package-lock.json" "$work/package-lock.json"; then
  cp "$here/node/package.json" "$here/node/package-lock.json" "$work/"
  # node-gyp needs Node's headers; use the installed ones instead of a download
  if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node.h ]; then
    export npm_config_nodedir=/usr
  fi
  # no prebuilt binary download: build the addon here
  export npm_config_build_from_source=true
  echo "installing better-sqlite3 into $work (npm ci)"
  if ! (cd "$work" && npm ci --no-audit --no-fund --loglevel=error) >"$work/npm.log" 2>&1 ||
     [ ! -f "$addon" ]; then
    tail -20 "$work/npm.log"
    rm -rf "$work/node_modules"
    echo "SKIP: better-sqlite3 could not be installed from the npm registry (log: $work/npm.log)"
    exit 0
  fi
fi
cp "$here/node/client.js" "$work/client.js"

# An extension built with AddressSanitizer (gcc or clang) needs its
# runtime loaded first into an uninstrumented program.
. "$here/lib/sanitizer_preload.sh" "$build/wcs.so"

cd "$work" && exec node client.js "$build"
