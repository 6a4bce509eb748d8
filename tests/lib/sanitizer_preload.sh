# sanitizer_preload.sh — sourced by the client tests (sql_cli.sh,
# sql_python.sh, sql_node.sh) before they start an uninstrumented program
# (sqlite3, python3, node) that loads the extension.
#
# An extension built with AddressSanitizer expects its runtime to be in the
# process before it is loaded. gcc links the shared runtime (libasan.so,
# named in the extension's NEEDED entries); clang links none into a shared
# object and leaves its __asan_* symbols undefined, to be found in the
# program. Either way the runtime goes first in LD_PRELOAD. Leak checks are
# off: the programs are not ours, and what they keep at exit is not a leak
# of the extension.
#
# Usage: . tests/lib/sanitizer_preload.sh EXTENSION.so
wcs_preload_runtime() {
  local so=$1 rt=""
  if readelf -d "$so" 2>/dev/null | grep -q 'libasan'; then
    rt=$(gcc -print-file-name=libasan.so 2>/dev/null)
  elif readelf -Ws --dyn-syms "$so" 2>/dev/null | grep -q ' UND __asan_init'; then
    rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
  fi
  [ -n "$rt" ] || return 0
  if [ ! -f "$rt" ]; then
    echo "FAIL: $so needs the AddressSanitizer runtime, not found ($rt)"
    exit 1
  fi
  export LD_PRELOAD="$rt${LD_PRELOAD:+:$LD_PRELOAD}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
}
wcs_preload_runtime "$1"
