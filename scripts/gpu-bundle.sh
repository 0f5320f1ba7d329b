#!/usr/bin/env bash
# gpu-bundle.sh - build, on a machine without a GPU, what scripts/gpu-check.sh
# needs on a GPU machine that cannot build (no compilers' libraries, no
# network): a Release build with CUDA, stripped, with the shared libraries
# the binaries use beyond glibc and the C++ runtime in lib/.
#
#   scripts/gpu-bundle.sh [DIR]      (default build/gpu-bundle)
#
# Then, on the GPU machine: scripts/gpu-check.sh --prebuilt DIR
set -eu
here="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:-$here/build/gpu-bundle}"
b="$here/build/gpu-release"
cmake -S "$here" -B "$b" -DCMAKE_BUILD_TYPE=Release -DPISTA_CUDA=ON > "$b.configure.log" 2>&1 ||
    { tail -20 "$b.configure.log"; exit 1; }
targets="pista test_device_conformance test_kn_dispatch"
for t in "$here"/tests/unit/test_kconf_*.c; do
    targets="$targets $(basename "$t" .c)"
done
# shellcheck disable=SC2086
cmake --build "$b" -j "$(nproc)" --target $targets > "$b.build.log" 2>&1 || { tail -30 "$b.build.log"; exit 1; }
rm -rf "$dest"
mkdir -p "$dest/tests" "$dest/lib"
cp "$b/pista" "$dest/"
for t in $targets; do
    [ "$t" = pista ] || cp "$b/tests/$t" "$dest/tests/"
done
strip "$dest/pista" "$dest"/tests/*
# Shared libraries beyond glibc, libgcc and libstdc++ (which the GPU
# machine's newer system has).
ldd "$dest/pista" "$dest"/tests/* | awk '/=> \//{print $3}' | while read -r so; do
    case "$(basename "$so")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libgcc_s.so*|libstdc++.so*|ld-linux*) ;;
    *) cp -L "$so" "$dest/lib/" 2>/dev/null || true ;;
    esac
done
du -sh "$dest"
