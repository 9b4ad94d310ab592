#!/usr/bin/env bash
# Fills .devkit/ (ignored by git) with what scripts/device-check.sh needs on a GPU machine that has a LibTorch,
# CUDA and a compiler but not Debian 12's packages: the gpusage binary built here with the shared libraries it
# links beyond glibc and libstdc++, Debian's pkgconf, and the headers, libraries and CMake files that
# gpusage-bench's build finds there (CLI11, nlohmann-json, fmt, toml++, yaml-cpp, libjpeg-turbo, libpng, zlib).
# Needs Debian's patchelf (apt-get install patchelf).
# The device tool carries the folder: `run` with carry [".devkit"].
#   scripts/device-kit.sh [GPUSAGE_BINARY]      default build/dev/src/cli/gpusage
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-build/dev/src/cli/gpusage}"
[[ -x "$binary" ]] || { echo "device-kit: no gpusage binary at $binary (build it first: make build)" >&2; exit 2; }
kit=.devkit
packages=(libcli11-dev nlohmann-json3-dev libfmt-dev libfmt9 libtomlplusplus-dev libtomlplusplus3 libyaml-cpp-dev libyaml-cpp0.7
  libturbojpeg0-dev libturbojpeg0 libjpeg62-turbo-dev libjpeg62-turbo libpng-dev libpng16-16 zlib1g-dev zlib1g
  pkgconf pkgconf-bin libpkgconf3)
rm -rf "$kit/root" "$kit/bin" "$kit/lib"
mkdir -p "$kit/debs" "$kit/root" "$kit/bin" "$kit/lib"
(cd "$kit/debs" && apt-get download "${packages[@]}" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
for deb in "$kit"/debs/*.deb; do dpkg-deb -x "$deb" "$kit/root"; done
# Debian's zlib lives in /lib: link it where the -dev symlink expects it.
if [[ -d "$kit/root/lib/x86_64-linux-gnu" ]]; then
  cp -a "$kit/root/lib/x86_64-linux-gnu/." "$kit/root/usr/lib/x86_64-linux-gnu/"
fi
cp "$binary" "$kit/bin/gpusage"
strip "$kit/bin/gpusage"
# The libraries gpusage links that a non-Debian machine may lack (glibc, libstdc++ and libgcc are the system's).
ldd "$binary" | awk '/=> \// {print $3}' |
  grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libpthread|libdl|librt)\.so' |
  while read -r lib; do cp -L "$lib" "$kit/lib/"; done
cp -L "$kit/root/usr/lib/x86_64-linux-gnu/libpkgconf.so.3" "$kit/lib/"
cp "$kit/root/usr/bin/pkgconf" "$kit/bin/pkg-config"
# Each binary finds its libraries through its own RPATH (transitive, unlike RUNPATH: libcpp-httplib's libssl
# too), not LD_LIBRARY_PATH, which would reach the programs that `gpusage run` starts.
for b in "$kit/bin/gpusage" "$kit/bin/pkg-config"; do patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$b"; done
echo "device-kit: $(du -sh "$kit" | cut -f1) in $kit: bin/ $(ls "$kit/bin" | tr '\n' ' '), lib/ $(ls "$kit/lib" | tr '\n' ' ')"
