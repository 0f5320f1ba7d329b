#!/usr/bin/env bash
# run.sh - the main job on a fresh machine: install what is missing, build,
# and run it. Today that is `pista bench device` (the hardware ceilings every
# later query report is measured against).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
bash scripts/deps.sh
cmake -S . -B build/normal -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/normal -j"$JOBS" >/dev/null
./build/normal/pista devices
echo
./build/normal/pista bench device "$@"
