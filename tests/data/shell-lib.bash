# shell-lib.bash — helpers shared by the shell's script tests
# (tests/shell_*.sh). Sourced, not run; not named *.sh so that ctest does
# not pick it up as a test. Usage: source it with the build directory as $1.
#
# Gives: $WCS (the program), $DATA (this folder), a fresh temporary working
# directory (removed at exit), and check helpers that count passes and
# failures; `finish` prints "N passed, N failed" and sets the exit status.

BUILD=${1:?usage: bash tests/shell_X.sh BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
WCS=$BUILD/bin/wcs
DATA=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ ! -x "$WCS" ] && ! ls "$DATA"/../../vtab/*.c >/dev/null 2>&1; then
  # CMake builds the shell only together with the SQLite module (vtab/).
  echo "SKIP: the wcs shell is not built (no vtab/ sources yet)"
  echo "0 passed, 0 failed"
  exit 0
fi
if [ ! -x "$WCS" ]; then
  echo "not ok - $WCS was not built"
  echo "0 passed, 1 failed"
  exit 1
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wcs-shell-test.XXXXXX")
CLEANUP_PIDS=""   # processes the test started: killed by PID at exit
CLEANUP_CMDS=""   # commands to run at exit (e.g. stop a tmux server)
cleanup() {
  local pid
  [ -n "$CLEANUP_CMDS" ] && eval "$CLEANUP_CMDS"
  for pid in $CLEANUP_PIDS; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"
export HOME=$WORK   # history and settings stay inside the test
export TZ=UTC
npass=0
nfail=0

ok() { npass=$((npass + 1)); echo "ok - $1"; }
not_ok() {
  nfail=$((nfail + 1))
  echo "not ok - $1"
  shift
  [ $# -gt 0 ] && printf '  %s\n' "$@"
  return 0
}

# check_eq NAME ACTUAL EXPECTED
check_eq() {
  if [ "$2" == "$3" ]; then
    ok "$1"
  else
    not_ok "$1" "expected: $(printf '%q' "$3")" "     got: $(printf '%q' "$2")"
  fi
}

# check_has NAME HAYSTACK NEEDLE
check_has() {
  if [[ "$2" == *"$3"* ]]; then
    ok "$1"
  else
    not_ok "$1" "expected to find: $3" "in: $2"
  fi
}

# check_not NAME HAYSTACK NEEDLE
check_not() {
  if [[ "$2" != *"$3"* ]]; then
    ok "$1"
  else
    not_ok "$1" "did not expect: $3" "in: $2"
  fi
}

# check_rc NAME EXPECTED_STATUS COMMAND...
check_rc() {
  local name=$1 want=$2 got
  shift 2
  "$@" >/dev/null 2>&1
  got=$?
  if [ "$got" == "$want" ]; then ok "$name"; else
    not_ok "$name" "exit status $got, expected $want"
  fi
}

finish() {
  echo "$npass passed, $nfail failed"
  [ "$nfail" -eq 0 ]
}
