#!/usr/bin/env bash
# The wheel as a pip user gets it: scripts/build-wheel from this build tree's portable binary, run with PYTHON
# (the machine's default python3: the build needs the standard library alone), checked by
# scripts/check-portable (manylinux tag, RECORD, entry points, the binary's libraries and symbol versions),
# installed offline into a fresh venv (no system packages, so no PyTorch): `gpusage --version`, an LLM plan
# from the venv's `gpusage`, `import gpusage`, gpusage.plan() through the bundled binary, gpusage-trace and
# `python -m gpusage.trace` telling in one line that they need PyTorch. Then, where TORCH_PYTHON has PyTorch
# and torchvision (Debian's python3-torch), a venv on it with its system packages: `python -m gpusage.trace`
# traces torchvision's ResNet-18 and the venv's gpusage plans the workload it wrote.
# Skipped (exit 77) without venv and ensurepip.
#   wheel_install_test.sh SOURCE_DIR BUILD_DIR PYTHON GLIBC_FLOOR [TORCH_PYTHON]
set -euo pipefail
source_dir="$1"
build_dir="$2"
python="$3"
floor="$4"
torch_python="${5:-}"
work="$(mktemp -d "${TMPDIR:-/tmp}/gpusage-wheel-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
"$python" -c "import ensurepip, venv" 2>/dev/null || { echo "skipped: no venv/ensurepip in $python"; exit 77; }

# A relative OUT_DIR from another folder: the wheel lands where it was asked to (it once landed in the build's
# temporary folder and was deleted with it).
mkdir "$work/elsewhere"
wheel="$(cd "$work/elsewhere" && "$python" "$source_dir/scripts/build-wheel" "$build_dir" dist)"
[[ $wheel == "$work/elsewhere/dist/"*.whl && -f $wheel ]] || fail "build-wheel printed '$wheel'"
echo "wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"
[[ $(basename "$wheel") =~ ^gpusage-[0-9]+\.[0-9]+\.[0-9]+-py3-none-manylinux_2_([0-9]+)_x86_64\.whl$ ]] ||
  fail "unexpected wheel name $wheel"
((BASH_REMATCH[1] <= ${floor#2.})) || fail "the wheel's tag is newer than glibc $floor"
"$python" "$source_dir/scripts/check-portable" --glibc "$floor" --wheel "$wheel" || fail "check-portable rejected the wheel"

"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --no-index --quiet "$wheel" || fail "pip install --no-index failed"

cd "$work"  # not the source tree: the package must come from the venv
version="$("$work/venv/bin/gpusage" --version)"
[[ $version == "gpusage "*"needs glibc $floor or newer"* ]] || fail "gpusage --version printed '$version'"
plan="$("$work/venv/bin/gpusage" plan llama3-8b --qlora --gpu rtx4090 --seq-len 2048 --precision bf16 \
  --checkpointing)" || fail "gpusage plan from the venv failed: $plan"
[[ $plan == *"Llama 3 8B"*"GeForce RTX 4090"* ]] || fail "the venv's gpusage plan printed: $plan"
"$work/venv/bin/python" - <<'PY' || fail "import gpusage / gpusage.plan failed"
import gpusage, os
assert gpusage.binary_path().startswith(os.path.dirname(gpusage.__file__)), gpusage.binary_path()
result = gpusage.plan("resnet18", gpu="rtx4090", batch=[32, 64])
assert result["model"]["params"] == 11689512, result["model"]
assert [r["batch"] for r in result["results"]] == [32, 64]
try:
    gpusage.plan("resnet5000", gpu="rtx4090")
    raise SystemExit("no error for an unknown model")
except gpusage.GpusageError as e:
    assert e.exit_code == 2 and "resnet5000" in str(e), (e.exit_code, str(e))
print("import gpusage: ok,", gpusage.__version__)
PY
expected="gpusage-trace: PyTorch is not installed in this Python: gpusage-trace needs torch"
for trace in "$work/venv/bin/gpusage-trace" "$work/venv/bin/python -m gpusage.trace"; do
  set +e
  $trace torchvision:resnet18 --input 3x224 2>"$work/err"
  code=$?
  set -e
  [[ $code == 2 ]] || fail "$trace without PyTorch exited $code (expected 2)"
  [[ $(cat "$work/err") == "$expected" ]] || fail "$trace without PyTorch said: $(cat "$work/err")"
done

if [[ -n $torch_python ]] && "$torch_python" -c "import torch, torchvision" 2>/dev/null; then
  "$torch_python" -m venv --system-site-packages "$work/torch-venv"
  "$work/torch-venv/bin/pip" install --no-index --quiet "$wheel" || fail "pip install into the torch venv failed"
  "$work/torch-venv/bin/python" -m gpusage.trace torchvision:resnet18 --input 3x224 -o "$work/resnet18.json" \
    >"$work/trace.out" 2>&1 || fail "python -m gpusage.trace with PyTorch failed: $(cat "$work/trace.out")"
  traced="$("$work/torch-venv/bin/gpusage" plan --workload "$work/resnet18.json" --gpu rtx4090 --format json)" ||
    fail "plan of the traced workload failed"
  grep -q '"params": 11689512' <<<"$traced" || fail "the traced ResNet-18 has not 11,689,512 parameters: $traced"
  echo "python -m gpusage.trace with PyTorch: ok"
else
  echo "no Python with PyTorch and torchvision: the traced-workload part is not run"
fi
echo "wheel install: ok"
