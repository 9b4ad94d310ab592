#!/usr/bin/env bash
# Builds gpusage-bench against a CUDA LibTorch and runs a short CUDA bench sweep, in one go, on a machine
# with an NVIDIA GPU. Results (JSON and logs) go to $OUT (default ./device-check-out).
#   LIBTORCH=/opt/libtorch scripts/device-check.sh      # a LibTorch 2.x CUDA archive
#   scripts/device-check.sh                              # else the pip torch's CMake prefix, if any
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/device-check-out}"
mkdir -p "$out"
build="${BUILD_DIR:-build/device-check}"
jobs="$(nproc)"

prefix="${LIBTORCH:-}"
if [[ -z "$prefix" ]]; then
  prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)"
fi
[[ -n "$prefix" ]] || { echo "device-check: set LIBTORCH to a CUDA LibTorch (no python torch found)" >&2; exit 2; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/nvidia-smi.csv"

catalog=()
[[ -f data/gpus.toml ]] || catalog=(-DGPUSAGE_CATALOG_FILE="$PWD/tests/fixtures/catalog/mini.toml")
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" -DGPUSAGE_BUILD_BENCHMARKS=OFF \
  -DGPUSAGE_BUILD_TESTS=OFF "${catalog[@]}" 2>&1 | tee "$out/configure.log" | grep -E "gpusage-bench|Torch" || true
grep -q "CUDA paths 1" "$out/configure.log" || { echo "device-check: LibTorch at $prefix has no CUDA" >&2; exit 1; }
cmake --build "$build" -j "$jobs" --target gpusage gpusage-bench 2>&1 | tail -3

gpusage="$build/src/cli/gpusage"
bench=(timeout 300 "$gpusage" bench --device cuda --steps 20 --warmup 10)
status=0
run() {  # name, then gpusage bench arguments
  local name="$1"; shift
  echo "== $name: $*"
  if "${bench[@]}" "$@" --format json --out "$out/$name.json" 2> >(tee "$out/$name.log" >&2); then
    python3 - "$out/$name.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
e = j["environment"]
print(f"   {e['device_name']} driver {e['driver_version']} CUDA {e['cuda_version']} LibTorch {e['libtorch_version']}")
for r in j["runs"]:
    s = r["step_time_s"] or {}
    mem = r["peak_memory_bytes"]
    print(f"   batch {r['batch']:>4} {r['status']:>6} {r['throughput'] or 0:10.1f} samples/s  p50 {s.get('p50', 0)*1e3:7.2f} ms"
          f"  cv {s.get('cv', 0)*100:5.1f}%  peak {(mem or 0)/2**30:6.2f} GiB  {r['reason'] or ''}")
if j.get("batch_search"):
    print(f"   --batch auto: max_batch {j['batch_search']['max_batch']}")
PY
  else
    echo "   FAILED (exit $?)"; status=1
  fi
}
run resnet50-fp32 resnet50 --batch 32,64 --precision fp32
run resnet50-tf32 resnet50 --batch 64 --precision tf32
run resnet50-bf16 resnet50 --batch 64,128 --precision bf16
run resnet50-fp16 resnet50 --batch 128 --precision fp16
run vit_b_16-bf16 vit_b_16 --batch 64 --precision bf16
run gpt2-bf16 gpt2 --seq-len 512 --batch 8 --precision bf16 --optimizer adamw --clip 1.0
run resnet18-accumulate resnet18 --batch 64 --accumulate 4 --precision bf16
run resnet18-auto resnet18 --resolution 128 --batch auto --memory-limit 8000000000 --steps 5 --warmup 3
if python3 -c 'import torch, torchvision; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "== compare-pytorch resnet50 bf16 batch 64"
  timeout 300 bench/compare-pytorch --bench "$build/src/bench/gpusage-bench" resnet50 --device cuda --batch 64 \
    --precision bf16 --steps 20 --warmup 10 --repeats 2 | tee "$out/compare-pytorch.txt" || status=1
fi
exit "$status"
