#!/usr/bin/env bash
# The packages as a user gets them: `cpack` from this build tree (cmake/Install.cmake) writes the .deb and the
# tarball. The tarball: its layout, and its gpusage run from the unpacked folder. The .deb: Depends, then
# installed with dpkg, used from `/` (gpusage guide, gpusage plan, validate against the installed data), its
# man page and completions in place, then removed. Installing needs root (CI is root); skipped (exit 77)
# otherwise, or when a gpusage is already installed on this machine that the test did not put there.
#   deb_install_test.sh BUILD_DIR GLIBC_FLOOR PORTABLE(ON|OFF)
set -euo pipefail
build_dir="$1"
floor="$2"
portable="$3"
work="$(mktemp -d "${TMPDIR:-/tmp}/gpusage-deb-test.XXXXXX")"
installed=0
cleanup() {
  if ((installed)); then dpkg -r gpusage >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

(cd "$build_dir" && cpack -B "$work" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack failed"; }
deb="$(ls "$work"/gpusage_*.deb)"
echo "package: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
version="$(dpkg-deb -f "$deb" Version)"
tarball="$work/gpusage-$version-linux-x86_64.tar.gz"
[[ -f $tarball ]] || fail "no $(basename "$tarball") beside the .deb: $(ls "$work")"
echo "tarball: $(basename "$tarball") ($(du -k "$tarball" | cut -f1) KiB)"

# The tarball: bin/ and share/ under one folder; its gpusage runs from there, with no install step.
listing="$(tar tzf "$tarball")"
top="gpusage-$version-linux-x86_64"
for path in bin/gpusage share/man/man1/gpusage.1.gz share/bash-completion/completions/gpusage \
  share/zsh/vendor-completions/_gpusage share/doc/gpusage/README.md share/gpusage/gpus.toml; do
  grep -qx "$top/$path" <<<"$listing" || fail "the tarball lacks $top/$path"
done
! grep -v "^$top/" <<<"$listing" || fail "the tarball has files outside $top/"
mkdir "$work/unpacked"
tar xzf "$tarball" -C "$work/unpacked"
plan="$(cd / && "$work/unpacked/$top/bin/gpusage" plan llama3-8b --qlora --gpu rtx4090 --seq-len 2048 \
  --precision bf16 --checkpointing 2>&1)" || fail "the tarball's gpusage plan failed: $plan"
[[ $plan == *"GeForce RTX 4090"* ]] || fail "the tarball's gpusage plan printed: $plan"

# Depends from dpkg-shlibdeps. gpusage-portable needs glibc alone: libc6 at the floor, nothing else.
# Without it (no static archives), the shared-library gpusage: the C++ runtime, fmt and ncurses too.
# Never NVML (loaded at run time) and never LibTorch (gpusage-bench is not in the package).
depends="$(dpkg-deb -f "$deb" Depends)"
echo "Depends: $depends"
if [[ $portable == ON ]]; then
  [[ $depends == "libc6 (>= $floor)" ]] || fail "Depends is '$depends', expected 'libc6 (>= $floor)'"
else
  for lib in libc6 libstdc++6 libfmt9 libncurses; do
    [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib"
  done
fi
[[ $depends != *nvidia* && $depends != *torch* ]] || fail "Depends names NVML or LibTorch: $depends"
contents="$(dpkg-deb -c "$deb")"
for path in ./usr/bin/gpusage ./usr/share/man/man1/gpusage.1.gz ./usr/share/bash-completion/completions/gpusage \
  ./usr/share/zsh/vendor-completions/_gpusage ./usr/share/gpusage/gpus.toml ./usr/share/gpusage/doctor/rules.toml \
  ./usr/share/gpusage/validation/published.csv; do
  grep -q " $path\$" <<<"$contents" || fail "the package lacks $path"
done
[[ $contents != *nvidia-ml-stub* ]] || fail "the package holds the tests' NVML stub"
[[ $contents != *gpusage-bench* ]] || fail "the package holds gpusage-bench (it links LibTorch)"

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: installing the package needs root"
  exit 77
fi
if [[ -e /usr/bin/gpusage ]]; then
  echo "SKIP: /usr/bin/gpusage exists already; not replacing it"
  exit 77
fi

dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i failed"; }
installed=1
cd /
guide="$(/usr/bin/gpusage guide 2>&1)" || fail "gpusage guide failed from /: $guide"
[[ $guide == *"RTX 5090"* ]] || fail "gpusage guide did not name the RTX 5090: $guide"
plan="$(/usr/bin/gpusage plan resnet50 --gpu rtx5090 2>&1)" || fail "gpusage plan failed from /: $plan"
[[ $plan == *"RTX 5090"* ]] || fail "gpusage plan did not name the RTX 5090: $plan"
/usr/bin/gpusage validate /usr/share/gpusage/validation/published.csv >/dev/null 2>"$work/validate.err" ||
  fail "gpusage validate on the installed published.csv failed: $(cat "$work/validate.err")"

# The man page renders and documents every command; the completions load and complete.
[[ $(man -w gpusage) == /usr/share/man/man1/gpusage.1.gz ]] || fail "man -w gpusage: $(man -w gpusage 2>&1)"
page="$(MANWIDTH=100 man gpusage 2>/dev/null)"
for command in guide gpus plan validate monitor doctor bench report; do
  grep -q "^   gpusage $command\$" <<<"$page" || fail "the man page has no section for gpusage $command"
done
words="$(bash -c 'source /usr/share/bash-completion/completions/gpusage
  COMP_WORDS=(gpusage pl); COMP_CWORD=1; _gpusage; echo "${COMPREPLY[*]}"
  COMP_WORDS=(gpusage plan --ba); COMP_CWORD=2; _gpusage; echo "${COMPREPLY[*]}"')"
[[ $words == $'plan\n--batch' ]] || fail "bash completion gave '$words', expected plan and --batch"
grep -q '^#compdef gpusage' /usr/share/zsh/vendor-completions/_gpusage || fail "the zsh completion has no #compdef"

dpkg -r gpusage >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -r failed"; }
installed=0
[[ ! -e /usr/bin/gpusage && ! -e /usr/share/man/man1/gpusage.1.gz ]] || fail "dpkg -r left files behind"
echo "deb install test: installed, used from /, removed"
