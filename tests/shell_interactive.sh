#!/usr/bin/env bash
# shell_interactive.sh — the wcs shell on a real terminal, driven through
# tmux: a multi-line statement with the continuation prompt, Ctrl-C
# cancelling a long query (a recursive CTE) without ending the shell,
# Ctrl-C at the prompt dropping an unfinished statement, readline history
# saved to ~/.wcs_history, the progress bar of a long import. Skips (with a
# SKIP line) when tmux is missing.
# Run: bash tests/shell_interactive.sh BUILD
source "$(dirname "$0")/data/shell-lib.bash" "$1"

if ! command -v tmux >/dev/null 2>&1; then
  echo "SKIP: tmux is not installed (add tmux to the Makefile's PKGS)"
  echo "0 passed, 0 failed"
  exit 0
fi

SOCK="wcs-test-$$"
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
CLEANUP_CMDS="tmux -L $SOCK kill-server 2>/dev/null; sleep 0.3"
# The windows stay open after the program ends (remain-on-exit), so the
# screen can still be read; the server is stopped at exit.
tm new-session -d -s s -x 110 -y 45 \
  "env HOME=$WORK TERM=xterm $WCS $WORK/i.db; echo SHELL-EXITED; sleep 600"
screen() { tm capture-pane -p -t "${1:-s:0}" -S -300; }

# wait_for TEXT [SECONDS] [PANE]: until the screen shows TEXT
wait_for() {
  local i
  for i in $(seq 1 $((${2:-10} * 10))); do
    if screen "${3:-s:0}" | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  return 1
}
send() { tm send-keys -t s:0 "$@"; }
# type a line literally (tmux would take a trailing ";" as its own
# command separator), then Enter
type_line() {
  tm send-keys -t s:0 -l "${1%;}"
  [[ "$1" == *";" ]] && tm send-keys -t s:0 '\;'
  tm send-keys -t s:0 Enter
}

if wait_for "wcs>"; then ok "the prompt appears"; else
  not_ok "the prompt appears" "$(screen)"
  finish
  exit 1
fi

# a multi-line statement
type_line "SELECT 40 +"
if wait_for "...>"; then ok "an unfinished statement gets the continuation prompt"; else
  not_ok "continuation prompt" "$(screen)"
fi
type_line "  2 AS answer;"
if wait_for "| answer |" && wait_for "|     42 |"; then
  ok "the multi-line statement runs and prints a table"
else
  not_ok "multi-line statement result" "$(screen)"
fi

# Ctrl-C cancels a long statement, not the shell
type_line "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;"
sleep 1.5
send C-c
if wait_for "Error: interrupted" 5; then
  ok "Ctrl-C interrupts the running statement"
else
  not_ok "Ctrl-C interrupts the running statement" "$(screen)"
fi
type_line "SELECT 'still here' AS alive;"
if wait_for "| still here |" 5; then ok "the shell goes on after Ctrl-C"; else
  not_ok "the shell goes on after Ctrl-C" "$(screen)"
fi

# Ctrl-C at the prompt drops an unfinished statement
type_line "SELECT 'dropped' AS never,"
wait_for "...>" >/dev/null
send C-c
sleep 0.3
type_line "SELECT 'fresh' AS after;"
if wait_for "| fresh |" 5; then
  ok "Ctrl-C at the prompt drops the unfinished statement"
else
  not_ok "Ctrl-C at the prompt drops the unfinished statement" "$(screen)"
fi
if screen | grep -q "| never"; then
  not_ok "the dropped statement never ran" "$(screen)"
else
  ok "the dropped statement never ran"
fi

# a dot-command, then leave
type_line ".mode csv"
type_line "SELECT 1 AS one;"
if wait_for "one" 5; then ok "dot-commands work at the prompt"; else
  not_ok "dot-commands at the prompt" "$(screen)"
fi
type_line ".quit"
if wait_for "SHELL-EXITED" 5; then ok ".quit leaves the shell"; else
  not_ok ".quit leaves the shell" "$(screen)"
fi
if grep -qF "SELECT 'fresh' AS after;" "$WORK/.wcs_history" 2>/dev/null; then
  ok "history is saved in ~/.wcs_history"
else
  not_ok "history is saved in ~/.wcs_history"
fi

# the progress bar of a long import, on a terminal
python3 - big.cbt.csv <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write(",f,,\n,a,b,c\n")
    for i in range(600000):
        f.write("row%08d,%d,value-%d,%s\n" % (i, i, i * 7, "x" * 20))
PY
tm new-window -t s:1 \
  "env HOME=$WORK TERM=xterm $WCS $WORK/p.db '.import $WORK/big.cbt.csv big batch=20000'; echo IMPORT-DONE; sleep 600"
found=""
for i in $(seq 1 1200); do
  s=$(screen s:1)
  if [[ "$s" == *"["*"%"*"rows/s"* ]]; then found=1; fi
  [[ "$s" == *IMPORT-DONE* ]] && break
  sleep 0.1
done
s=$(screen s:1)
check_has "the import reports rows/s at the end" "$s" "imported 600000 rows"
secs=$(echo "$s" | sed -n 's/.* in \([0-9.]*\) s,.*/\1/p')
if [ -n "$found" ]; then
  ok "a long import shows a progress bar"
elif [ -n "$secs" ] && awk "BEGIN { exit !($secs < 1.5) }"; then
  echo "SKIP: the import took $secs s, too short for the progress bar"
else
  not_ok "a long import shows a progress bar" "$s"
fi

finish
