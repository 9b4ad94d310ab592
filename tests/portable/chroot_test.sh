#!/usr/bin/env bash
# gpusage-portable where nothing but glibc is: a root folder holding the loader, the glibc libraries the
# binary names in NEEDED (copied from this machine), the binary and two input files, and nothing else (no
# /proc, /dev, /etc, no terminfo, no CA certificates, no shell). Under chroot: guide, an LLM QLoRA plan,
# doctor --log (and its environment probe, which finds no driver, no Python and no /proc), report, and
# monitor --once without NVML; bench says how to get gpusage-bench; the interactive monitor on a pseudo-terminal
# with the terminfo entry built in. Then NVML where WSL2 mounts it, /usr/lib/wsl/lib/libnvidia-ml.so.1 (the scripted stub, with
# the C++ runtime it links): monitor lists the stub's GPUs. Needs root (chroot); skipped (exit 77) otherwise.
#   chroot_test.sh BINARY SOURCE_DIR NVML_STUB
set -euo pipefail
binary="$1"
source_dir="$2"
stub="$3"
if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: chroot needs root"
  exit 77
fi
root="$(mktemp -d "${TMPDIR:-/tmp}/gpusage-chroot.XXXXXX")"
trap 'rm -rf "$root"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Copies a shared object (and the libraries it names, recursively) to the same path under the root, as the
# loader of this machine resolves them (ldd), links followed.
copy_with_libraries() {
  local file="$1"
  local lib
  for lib in $(ldd "$file" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
    [[ -e $root$lib ]] && continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}

copy_with_libraries "$binary"
cp "$binary" "$root/gpusage"
cp "$source_dir/tests/fixtures/doctor/logs/oom_pytorch2.log" "$root/train.log"
echo "root: $(cd "$root" && find . -type f | sort | tr '\n' ' ')"
for file in $(cd "$root" && find . -type f); do
  case "$file" in
    ./gpusage | ./train.log | ./lib64/ld-linux-x86-64.so.2 | ./lib/x86_64-linux-gnu/lib[cm].so.6) ;;
    ./lib/x86_64-linux-gnu/lib*.so.*) fail "the binary needs $file, which is not glibc's" ;;
  esac
done

run() {
  chroot "$root" /gpusage "$@" 2>&1
}
guide="$(run guide)" || fail "guide failed: $guide"
[[ $guide == *"RTX 5090"* ]] || fail "guide did not name the RTX 5090: $guide"
plan="$(run plan llama3-8b --qlora --gpu rtx4090 --seq-len 2048 --precision bf16 --checkpointing)" ||
  fail "plan failed: $plan"
[[ $plan == *"Llama 3 8B"*"QLoRA"*"GeForce RTX 4090"* ]] || fail "plan printed: $plan"
doctor="$(run doctor --log /train.log --model resnet50 --gpu rtx4090)" || fail "doctor --log failed: $doctor"
[[ $doctor == *"CUDA out of memory"* && $doctor == *"NVIDIA driver"*"not found"* ]] || fail "doctor printed: $doctor"
run report --out /report.html >/dev/null || fail "report failed: $(run report --out /report.html)"
grep -q "<svg" "$root/report.html" || fail "report.html has no chart"
gpus="$(run monitor --once)" || fail "monitor --once without NVML failed: $gpus"
[[ $gpus == *"no NVIDIA driver found"* ]] || fail "monitor --once without NVML said: $gpus"
set +e
bench="$(run bench resnet18)"
code=$?
set -e
[[ $code == 2 && $bench == *"gpusage-bench"*"make bench"* ]] || fail "bench without gpusage-bench (exit $code): $bench"
echo "glibc-only root: guide, plan, doctor --log, report, monitor --once, bench's pointer to make bench: ok"

# The interactive monitor (ncurses) on a terminal, in a root without a terminfo database: the entry built into
# the binary is written to /tmp/gpusage-terminfo-UID and used. `script` gives the command a pseudo-terminal.
if command -v script >/dev/null; then
  mkdir -m 1777 "$root/tmp"
  TERM=xterm-256color timeout 60 script -qec "chroot '$root' /gpusage monitor --count 2 --interval 0.2" /dev/null \
    >"$root/tty.out" 2>&1 || fail "the interactive monitor failed: $(tail -c 400 "$root/tty.out")"
  grep -q "Alerts: none" "$root/tty.out" || fail "the interactive monitor drew no screen: $(tail -c 400 "$root/tty.out")"
  written="$(ls "$root"/tmp/gpusage-terminfo-*/x/xterm-256color)"
  system_entry=/usr/share/terminfo/x/xterm-256color
  [[ -e $system_entry ]] || system_entry=/lib/terminfo/x/xterm-256color
  cmp -s "$written" "$system_entry" || fail "the terminfo written ($written) is not the system's xterm-256color"
  rm -rf "$root/tmp" "$root/tty.out"
  echo "interactive monitor without a terminfo database: ok (the built-in xterm-256color entry)"
fi

# NVML where WSL2 puts it, not on the loader's path: the loader's own fallback list finds it.
mkdir -p "$root/usr/lib/wsl/lib"
cp "$stub" "$root/usr/lib/wsl/lib/libnvidia-ml.so.1"
copy_with_libraries "$stub"
cp "$source_dir/tests/fixtures/nvml_stub/two_gpus.json" "$root/two_gpus.json"
gpus="$(GPUSAGE_NVML_STUB_SCRIPT=/two_gpus.json run monitor --once)" || fail "monitor with WSL's NVML failed: $gpus"
[[ $gpus == *"RTX 4090"* ]] || fail "monitor --once did not find the GPUs of NVML in /usr/lib/wsl/lib: $gpus"
echo "NVML in /usr/lib/wsl/lib: found"
