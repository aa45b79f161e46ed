#!/usr/bin/env bash
# Runs naslab's whole test suite on a fresh Debian machine: installs what the tests
# use (when root and missing), then formatting, lints and every test.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
# mkfs.*, filefrag and losetup live in the sbin directories.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
for tool in strace:strace zstd:zstd fio:fio filefrag:e2fsprogs mkfs.xfs:xfsprogs mkfs.btrfs:btrfs-progs losetup:mount smbd:samba smbclient:smbclient ganesha.nfsd:nfs-ganesha rpcbind:rpcbind chromium:chromium node:nodejs npm:npm; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
# Multi-client runs (the `mpi` feature): OpenMPI, its headers, and libclang for bindings.
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
dpkg -s libopenmpi-dev >/dev/null 2>&1 || need+=(libopenmpi-dev)
dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
# The lab's NFS server loads its VFS back end as a plug-in of its own package.
if ! ls /usr/lib/*/ganesha/libfsalvfs.so /usr/lib/ganesha/libfsalvfs.so >/dev/null 2>&1; then
  need+=(nfs-ganesha-vfs)
fi
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
  echo "note: not root, so the tests that mount file systems or start servers (the lab) report themselves skipped" >&2
fi

# The report UI's packages (esbuild, TypeScript, uPlot, playwright-core), pinned by its
# package-lock.json; then its type check.
(cd crates/report/ui && npm ci --no-audit --no-fund --loglevel=error)
(cd crates/report/ui && node node_modules/typescript/bin/tsc --noEmit -p .)

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
NASLAB_REQUIRE_UI=1 cargo test --workspace

# --- Multi-client runs: naslab built with the `mpi` feature, its tests under mpirun. ---
cargo clippy -p naslab --features mpi --all-targets --quiet -- -D warnings
cargo test -p naslab --features mpi --test mpi
# --- end of multi-client runs ---

# Browser tests: generated reports opened in headless Chromium (screenshots are left in
# $TMPDIR/naslab-report-screenshots).
cargo build --quiet -p naslab
(cd crates/report/ui && NASLAB_BIN="$PWD/../../../target/debug/naslab" node --test tests/)
