#!/usr/bin/env bash
# Runs naslab's whole test suite on a fresh Debian machine: installs what the tests
# use (when root and missing), then formatting, lints and every test.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for tool in strace:strace zstd:zstd fio:fio; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "installing: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing tools for the tests: ${need[*]} (run as root, or: sudo apt-get install ${need[*]})" >&2
    exit 1
  fi
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "note: not root, so the tests that mount file systems report themselves skipped" >&2
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
cargo test --workspace
