#!/usr/bin/env bash
# deps.sh - install the Debian packages Pista needs to build and test, only
# those missing. Safe to run again. Needs root (or sudo) when something is missing.
set -euo pipefail

PKGS=(build-essential g++ cmake pkg-config git   # g++: the SIMT emulation compiles *.cu as C++
      libcmocka-dev libzstd-dev liblz4-dev libsnappy-dev zlib1g-dev libbrotli-dev liburing-dev
      libpg-query-dev libprotobuf-c-dev libedit-dev gnuplot-nox
      clang libclang-rt-14-dev
      libopenmpi-dev openmpi-bin)   # src/net: the MPI backend and mpirun for its tests

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
# Node.js and npm run the DuckDB oracle in tests; keep an existing install.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "deps: all Debian packages present"
fi
