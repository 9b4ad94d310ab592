#!/usr/bin/env bash
# The wheel as a pip user gets it: scripts/build-wheel from this build tree, installed offline into a fresh venv
# (no system packages, so no PyTorch), then `gpusage --version`, `import gpusage`, gpusage.plan() through the
# bundled binary, and gpusage-trace telling in one line that it needs PyTorch. Skipped (exit 77) without
# python3-venv, pip, setuptools or wheel (scripts/install-deps --test installs them).
#   wheel_install_test.sh SOURCE_DIR BUILD_DIR PYTHON
set -euo pipefail
source_dir="$1"
build_dir="$2"
python="$3"
work="$(mktemp -d "${TMPDIR:-/tmp}/gpusage-wheel-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
"$python" -c "import ensurepip, setuptools, wheel, pip" 2>/dev/null || { echo "skipped: no venv/pip/setuptools/wheel"; exit 77; }

wheel="$(GPUSAGE_PYTHON="$python" "$source_dir/scripts/build-wheel" "$build_dir" "$work/dist")"
echo "wheel: $(basename "$wheel")"
[[ $(basename "$wheel") == gpusage-*-py3-none-linux_*.whl ]] || fail "unexpected wheel name $wheel"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --no-index --quiet "$wheel" || fail "pip install --no-index failed"

cd "$work"  # not the source tree: the package must come from the venv
version="$("$work/venv/bin/gpusage" --version)"
[[ $version == "gpusage "* ]] || fail "gpusage --version printed '$version'"
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
set +e
"$work/venv/bin/gpusage-trace" torchvision:resnet18 --input 3x224 2>"$work/err"
code=$?
set -e
[[ $code == 2 ]] || fail "gpusage-trace without PyTorch exited $code (expected 2)"
[[ $(cat "$work/err") == "gpusage-trace: PyTorch is not installed in this Python: gpusage-trace needs torch" ]] ||
  fail "gpusage-trace without PyTorch said: $(cat "$work/err")"
echo "wheel install: ok"
