#!/bin/sh
# Stands in for gpusage-bench in the golden tests (GPUSAGE_BENCH_BINARY): writes the recorded result named by
# GPUSAGE_GOLDEN_BENCH_RESULT to the --out file gpusage bench asks for, so the table is rendered without LibTorch.
out=
while [ $# -gt 0 ]; do
  if [ "$1" = "--out" ]; then out="$2"; shift; fi
  shift
done
[ -n "$out" ] || { echo "gpusage-bench: no --out given" >&2; exit 2; }
cp "$GPUSAGE_GOLDEN_BENCH_RESULT" "$out"
