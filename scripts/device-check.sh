#!/usr/bin/env bash
# Every GPU path of gpusage, run once on a real NVIDIA GPU, in one go (issue 29; docs/DEVICE.md has the last
# run's tables). Results go to $OUT (default ./device-check-out): summary.md (the tables), probe-rows.csv
# (published.csv rows), steps.tsv (each step's status and seconds) and raw.tar.gz (every log and JSON).
#
#   scripts/device-check.sh             on a machine with an NVIDIA GPU and PyTorch (python3 -c 'import torch')
#   scripts/device-check.sh --dry-run   the same steps on a machine without a GPU: the CPU LibTorch bench, the
#                                       probe's tiny CPU grid, the NVML stub (GPUSAGE_NVML_LIBRARY), a
#                                       simulated OOM; CTest runs it (tests/device/CMakeLists.txt)
#
# Steps (each logged to raw/STEP.log; a failed step is recorded and the rest still run):
#   facts        nvidia-smi -q, compilers, Python packages
#   build        gpusage-bench against the device's PyTorch (torch.utils.cmake_prefix_path), in the background
#   monitor      `gpusage monitor --once --format json` beside nvidia-smi in the same second: idle, then under load
#   doctor       `gpusage doctor --format json` on the real driver, CUDA and PyTorch
#   probe        tests/device/train_probe.py: the PyTorch training grid, measured
#   profile      tests/device/kernel_profile.py: ResNet-50's step time by kernel class, NCHW and channels_last
#   run          `gpusage run` around one probe configuration: its peak memory and throughput against the probe's
#   oom          a batch plan says cannot fit, under `gpusage run`; then the fix it prints, applied
#   bench        gpusage-bench on CUDA (once the build is done) and bench/compare-pytorch
#   summary      scripts/device/check.py summary: every table, plan's prediction beside each measurement
#
# Environment: GPUSAGE (the gpusage binary; default .devkit/bin/gpusage, else build/dev/src/cli/gpusage),
# GPUSAGE_BENCH (a built gpusage-bench: skips the build), PYTHON (default: the python3 that imports torch),
# OUT, GPUSAGE_COMMIT (the commit named in the rows). .devkit/ (scripts/device-kit.sh) carries what a machine
# without Debian's packages lacks: the prebuilt gpusage, its libraries, and the headers gpusage-bench needs.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
dry=0
case "${1:-}" in
  --dry-run) dry=1 ;;
  "") ;;
  -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "device-check: unknown argument '$1' (accepted: --dry-run, --help)" >&2; exit 2 ;;
esac
out="${OUT:-$root/device-check-out}"
raw="$out/raw"
rm -rf "$raw" && mkdir -p "$raw" || exit 1
start_s=$SECONDS
kit="$root/.devkit"
[[ -d "$kit/bin" ]] && export PATH="$kit/bin:$PATH"  # its binaries find their libraries by RPATH
gpusage="${GPUSAGE:-}"
[[ -n "$gpusage" ]] || for g in "$kit/bin/gpusage" "$root/build/dev/src/cli/gpusage"; do
  [[ -x "$g" ]] && { gpusage="$g"; break; }
done
[[ -x "$gpusage" ]] || { echo "device-check: no gpusage binary (set GPUSAGE, or run scripts/device-kit.sh)" >&2; exit 2; }
python="${PYTHON:-}"
[[ -n "$python" ]] || for p in python3 /usr/bin/python3; do
  "$p" -c 'import torch' 2>/dev/null && { python="$p"; break; }
done
[[ -n "$python" ]] || { echo "device-check: no python3 with torch (set PYTHON)" >&2; exit 2; }
commit="${GPUSAGE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
export GPUSAGE_COMMIT="$commit"
check=("$python" "$root/scripts/device/check.py")
probe=("$python" "$root/tests/device/train_probe.py")
if ((dry)); then
  grid=cpu; gpu_id="${DRY_RUN_GPU:-rtx4090}"; device=cpu
  run_config=resnet18-bf16-nhwc-r64-b4
else
  grid=gpu; gpu_id="${GPU_ID:-h200-sxm-141gb}"; device=cuda
  run_config=resnet50-bf16-nhwc-b256
fi
printf 'step\tstatus\tseconds\n' >"$raw/steps.tsv"
failed=0
# step NAME COMMAND...: runs it, logs stdout and stderr to raw/NAME.log, records the status and seconds.
step() {
  local name="$1"; shift
  local t0=$SECONDS rc=0
  echo "== $name ($((SECONDS - start_s)) s)"
  "$@" >"$raw/$name.log" 2>&1 || rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" >>"$raw/steps.tsv"
  if ((rc != 0)); then
    failed=1
    echo "   $name failed (exit $rc):"
    tail -5 "$raw/$name.log" | sed 's/^/   | /'
  fi
  return 0
}

facts() {
  echo "gpusage: $gpusage ($("$gpusage" --version 2>&1 | head -1)); commit $commit; dry run $dry"
  uname -a; ldd --version 2>&1 | head -1; "${CXX:-c++}" --version 2>&1 | head -1; cmake --version | head -1
  command -v nvcc >/dev/null && nvcc --version | tail -2
  "$python" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())'
  for m in torchvision transformers peft timm; do
    "$python" -c "import $m; print('$m', $m.__version__)" 2>/dev/null || echo "$m: not installed"
  done
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi
    nvidia-smi -q -d CLOCK,POWER,MEMORY,PERFORMANCE,TEMPERATURE | grep -v '^$' | head -150
  else
    echo "nvidia-smi: not installed"
  fi
}
step facts facts

# gpusage-bench: built in the background (the probe meanwhile uses the GPU, not the cores), at low priority.
bench_bin="${GPUSAGE_BENCH:-}"
build_pid=""
if [[ -z "$bench_bin" ]]; then
  build_bench() {
    local prefix build="build/device-check" kitcmake=()
    prefix="$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')" || return 1
    if [[ -d "$kit/root" ]]; then
      export PKG_CONFIG_SYSROOT_DIR="$kit/root"
      export PKG_CONFIG_LIBDIR="$kit/root/usr/lib/x86_64-linux-gnu/pkgconfig:$kit/root/usr/share/pkgconfig"
      kitcmake=(-DCMAKE_PREFIX_PATH="$prefix;$kit/root/usr" -DCMAKE_CXX_FLAGS="-isystem $kit/root/usr/include")
    else
      kitcmake=(-DCMAKE_PREFIX_PATH="$prefix")
    fi
    # Without c10d (--distributed): one GPU here, and the pip wheel's Gloo headers may not match its c10d.
    nice -n 10 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${kitcmake[@]}" \
      -DGPUSAGE_GLOO_INCLUDE_DIR=GPUSAGE_GLOO_INCLUDE_DIR-NOTFOUND \
      -DGPUSAGE_BUILD_CLI=OFF -DGPUSAGE_BUILD_TESTS=OFF -DGPUSAGE_BUILD_BENCHMARKS=OFF \
      -DGPUSAGE_UNITY_BUILD=ON -DCUDAToolkit_ROOT=/usr/local/cuda || return 1
    nice -n 10 cmake --build "$build" -j "$(($(nproc) > 4 ? $(nproc) - 2 : $(nproc)))" --target gpusage-bench || return 1
    echo "built $build/src/bench/gpusage-bench"
  }
  if ((dry)); then
    echo "device-check: set GPUSAGE_BENCH for the dry run (a CPU gpusage-bench)" >&2; exit 2
  fi
  (step build build_bench) &
  build_pid=$!
  bench_bin="$root/build/device-check/src/bench/gpusage-bench"
fi

step monitor-idle "${check[@]}" monitor-vs-smi --gpusage "$gpusage" --label idle --out "$raw"
step doctor "${check[@]}" doctor --gpusage "$gpusage" --out "$raw"

# The probe grid; 25 s in (past the first models' warm-up), monitor and nvidia-smi are read under load.
(sleep "$( ((dry)) && echo 3 || echo 25)"; step monitor-load "${check[@]}" monitor-vs-smi --gpusage "$gpusage" \
  --label load --out "$raw") &
load_pid=$!
step probe "${probe[@]}" --grid "$grid" --device "$device" --jsonl "$raw/probe.jsonl" --csv "$out/probe-rows.csv" \
  --gpu-id "$gpu_id" --hf-config-dir "$raw/hf" --commit "$commit" --ceilings "$raw/ceilings.json"
wait "$load_pid"

# Where ResNet-50's step time goes, kernel by kernel, in NCHW and channels_last (issue 28: which memory-bound
# kernels plan gets wrong on GeForce cards); on the CPU, ResNet-18's operators stand in.
step profile "$python" "$root/tests/device/kernel_profile.py" --out "$raw/profile.json" --device "$device" \
  $( ((dry)) && echo "--configs resnet18-fp32-nchw-r64-b4,resnet18-bf16-nhwc-r64-b4 --steps 2" \
    || echo "--configs resnet50-bf16-nchw-b256,resnet50-bf16-nhwc-b256,resnet50-tf32-nchw-b128 --steps 5")

# gpusage run around one configuration: 0.2 s samples, rates printed every 5 steps.
step run "$gpusage" run --log-dir "$raw/run" --interval 0.2 -- "${probe[@]}" --config "$run_config" --device "$device" \
  --seconds "$( ((dry)) && echo 1 || echo 8)" --print-every 5 --jsonl "$raw/run-probe.jsonl"

# A real OOM (the dry run simulates PyTorch's message), then the fix that gpusage prints, applied.
# The card is an RTX 4090 (24 GB): on the GPU, PyTorch's allocator is capped at its memory.
step oom "${check[@]}" oom --gpusage "$gpusage" --gpu rtx4090 --device "$device" --out "$raw" \
  $( ((dry)) && echo --simulate)

if [[ -n "$build_pid" ]]; then
  wait "$build_pid"
  grep -q $'^build\t0\t' "$raw/steps.tsv" || failed=1
fi
# What is left of the check's budget (DEVICE_CHECK_BUDGET_S, default 480 s: the device allows 8 minutes) goes
# to the bench runs, in order; compare-pytorch runs if 100 s remain.
budget="${DEVICE_CHECK_BUDGET_S:-480}"
if [[ -x "$bench_bin" ]]; then
  step bench "${check[@]}" bench --gpusage "$gpusage" --bench "$bench_bin" --gpu "$gpu_id" --device "$device" \
    --out "$raw" --seconds-left "$((budget - (SECONDS - start_s) - 110))" $( ((dry)) && echo --quick)
  if ((dry || budget - (SECONDS - start_s) >= 100)); then
    step compare-pytorch timeout 200 "$python" bench/compare-pytorch --bench "$bench_bin" \
      $( ((dry)) && echo "resnet18 --device cpu --batch 4 --resolution 64 --steps 2 --warmup 1 --repeats 1" \
        || echo "resnet50 --device cuda --batch 128 --precision bf16 --channels-last --steps 20 --warmup 10 --repeats 2")
  else
    printf 'compare-pytorch\tskipped\t0\n' >>"$raw/steps.tsv"
  fi
else
  printf 'bench\tskipped\t0\n' >>"$raw/steps.tsv"
fi

step summary "${check[@]}" summary --gpusage "$gpusage" --gpu "$gpu_id" --raw "$raw" --out "$out/summary.md"
cp "$raw/steps.tsv" "$out/steps.tsv"
tar -czf "$out/raw.tar.gz.tmp" -C "$out" raw && mv "$out/raw.tar.gz.tmp" "$out/raw.tar.gz"
((dry)) || rm -rf "$raw"
echo "device-check: done in $((SECONDS - start_s)) s; $out/summary.md"
cat "$out/steps.tsv"
exit "$failed"
