#!/usr/bin/env bash
# Installs the Debian 12 packages Cilkprof builds, tests and benchmarks with.
# Idempotent: installs only what is missing. Needs root (or sudo).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git python3
  libunwind-dev            # nongnu libunwind (replaces LLVM's libunwind-14-dev)
  libprotobuf-dev protobuf-compiler
  libboost-dev libboost-context-dev
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libdw-dev libelf-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-14 libclang-rt-14-dev libomp-14-dev libtbb-dev   # peers for the runtime benchmarks
  libgoogle-perftools-dev google-perftools linux-perf hyperfine  # profiler peers
  groff-base man-db bash-completion   # tests of the man pages and the shell completion
  golang-go chromium zlib1g-dev       # exports read by the real tools: go tool pprof, headless Chromium; gzip
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
