#!/usr/bin/env bash
# bench/run.sh — what `make bench` runs, from inside the build directory
# (build-bench/). It runs every benchmark program once with defaults sized so
# that the whole of `make bench` stays under about 20 minutes on a 2-core
# machine, and keeps each program's output in bench-results/:
#
#   bench-results/<program>-<UTC time>.txt   the full output of one run
#   bench-results/<program>-latest.txt       a copy of the newest one
#
# bench_storage (wcs vs RocksDB) gets the settings of BENCHMARKS.md; every
# other bench/bench_<name>.c program is run with no arguments. Environment
# overrides for bench_storage, e.g. for a quick look:
#
#   WCS_BENCH_KEYS=1000000 WCS_BENCH_RUNS=1 make bench
#   WCS_BENCH_READS=1000000 WCS_BENCH_SEEKS=100000 make bench
#   WCS_BENCH_ARGS="-w readrandom,seekrandom" make bench   (extra arguments)
#   WCS_BENCH_ONLY=bench_storage make bench                (one program)
#
# The stores are made under bench-data/ here and removed after each run.
# Exit status: nonzero if any program failed (the others still run).
set -u

here=$(pwd)
bin="$here/bench"
out="$here/bench-results"
data="$here/bench-data"
stamp=$(date -u +%Y%m%d-%H%M%S)
# bench_storage at 5M keys x 3 runs takes roughly 6-8 minutes on 2 idle
# cores (both stores, all five workloads), leaving room for the other
# programs; BENCHMARKS.md's numbers use 10M keys (WCS_BENCH_KEYS=10000000,
# about twice as long). Point reads and seeks per run are half of
# bench_storage's own defaults.
keys=${WCS_BENCH_KEYS:-5000000}
runs=${WCS_BENCH_RUNS:-3}
reads=${WCS_BENCH_READS:-500000}
seeks=${WCS_BENCH_SEEKS:-50000}
extra=${WCS_BENCH_ARGS:-}
only=${WCS_BENCH_ONLY:-}

if [ ! -d "$bin" ]; then
  echo "run.sh: no $bin; run me from the build directory (make bench)" >&2
  exit 2
fi
mkdir -p "$out" "$data"

status=0
ran=0
for prog in "$bin"/bench_*; do
  [ -f "$prog" ] && [ -x "$prog" ] || continue
  name=$(basename "$prog")
  if [ -n "$only" ] && [ "$name" != "$only" ]; then
    continue
  fi
  log="$out/$name-$stamp.txt"
  case "$name" in
    bench_storage)
      # shellcheck disable=SC2086 # $extra is a list of arguments
      set -- -n "$keys" -r "$runs" -R "$reads" -S "$seeks" -d "$data/storage" \
        -o "$out/storage-lines.txt" $extra
      ;;
    *)
      set --
      ;;
  esac
  echo "== $name $* (output: $log)"
  start=$(date +%s)
  "$prog" "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  end=$(date +%s)
  cp "$log" "$out/$name-latest.txt"
  echo "== $name finished in $((end - start)) s, exit status $rc"
  if [ "$rc" -ne 0 ]; then
    status=1
  fi
  ran=$((ran + 1))
done
rmdir "$data" 2>/dev/null || true

if [ "$ran" -eq 0 ]; then
  echo "run.sh: no benchmark programs found in $bin" >&2
  exit 2
fi
echo
echo "Results are in $out/ (one file per program and run, *-latest.txt is"
echo "the newest; storage-lines.txt collects bench_storage's machine-readable"
echo "lines across runs). BENCHMARKS.md explains how to read them."
exit "$status"
