#!/usr/bin/env bash
# Builds naslab.exe for 64-bit Windows from Linux: target/x86_64-pc-windows-gnu/release/naslab.exe.
# Installs what the cross build needs when it is missing (as root): the Rust target, the
# MinGW-w64 C compiler (zstd's and aws-lc's C code) and NASM (aws-lc's assembly).
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-pc-windows-gnu
if ! rustup target list --installed | grep -qx "$target"; then
  rustup target add "$target"
fi
need=()
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need+=(gcc-mingw-w64-x86-64)
command -v nasm >/dev/null 2>&1 || need+=(nasm)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "installing: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing for the Windows build: ${need[*]} (run as root, or: sudo apt-get install ${need[*]})" >&2
    exit 1
  fi
fi
cargo build --release --target "$target" -p naslab "$@"
exe="target/$target/release/naslab.exe"
echo "built $exe ($(stat -c %s "$exe") bytes)"
