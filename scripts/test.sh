#!/usr/bin/env bash
# Runs naslab's whole test suite on a fresh Debian machine: installs what the tests
# use (when root and missing), then formatting, lints and every test.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
# mkfs.*, filefrag and losetup live in the sbin directories.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
for tool in strace:strace git:git zstd:zstd fio:fio python3:python3 tar:tar dbench:dbench filefrag:e2fsprogs mkfs.xfs:xfsprogs mkfs.btrfs:btrfs-progs losetup:mount smbd:samba smbclient:smbclient ganesha.nfsd:nfs-ganesha rpcbind:rpcbind nfs-cp:libnfs-utils chromium:chromium node:nodejs npm:npm; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
# The eBPF capture (docs/capture.md): its program is rebuilt from source and checked
# against the committed object; the capture tests compare it with strace on sqlite3 too.
for tool in clang:clang llvm-strip:llvm sqlite3:sqlite3; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
dpkg -s libbpf-dev >/dev/null 2>&1 || need+=(libbpf-dev)
# The Windows build (docs/windows.md): MinGW-w64 and NASM to cross-build naslab.exe, Wine
# to run it.
for tool in x86_64-w64-mingw32-gcc:gcc-mingw-w64-x86-64 nasm:nasm wine:wine wineboot:wine; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
dpkg -s wine64 >/dev/null 2>&1 || need+=(wine64)
# Multi-client runs (the `mpi` feature): OpenMPI, its headers, and libclang for bindings.
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
dpkg -s libopenmpi-dev >/dev/null 2>&1 || need+=(libopenmpi-dev)
dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
# The lab's NFS server loads its VFS back end as a plug-in of its own package.
if ! compgen -G '/usr/lib/*/ganesha/libfsalvfs.so' >/dev/null && [ ! -e /usr/lib/ganesha/libfsalvfs.so ]; then
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
# The lab's link emulator: Toxiproxy's server, built with Go from the Go module proxy
# into /usr/local/lib/naslab/bin (where naslab looks for it; docs/network.md). Go 1.23 or
# newer is needed: /usr/local/go/bin/go or the one on PATH, else Debian's golang-go
# (whose go fetches a newer toolchain itself when it is 1.21 or newer).
TOXIPROXY_VERSION=v2.12.0
TOXIPROXY_DIR=/usr/local/lib/naslab/bin
if [ ! -x "$TOXIPROXY_DIR/toxiproxy-server" ] ||
   ! "$TOXIPROXY_DIR/toxiproxy-server" -version 2>/dev/null | grep -q "$TOXIPROXY_VERSION"; then
  if [ "$(id -u)" -eq 0 ]; then
    go=/usr/local/go/bin/go
    [ -x "$go" ] || go="$(command -v go || true)"
    if [ -z "$go" ]; then
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq golang-go >/dev/null
      go="$(command -v go)"
    fi
    echo "installing toxiproxy-server $TOXIPROXY_VERSION into $TOXIPROXY_DIR"
    gobin="$(mktemp -d)"
    GOBIN="$gobin" GOTOOLCHAIN=auto "$go" install \
      -ldflags "-X github.com/Shopify/toxiproxy/v2.Version=$TOXIPROXY_VERSION" \
      "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION"
    mkdir -p "$TOXIPROXY_DIR"
    install -m 0755 "$gobin/server" "$TOXIPROXY_DIR/toxiproxy-server"
    rm -rf "$gobin"
  else
    echo "note: toxiproxy-server $TOXIPROXY_VERSION is not in $TOXIPROXY_DIR: the lab's link tests report themselves skipped (run as root to install it)" >&2
  fi
fi
# Under CI every test must run: one that needs root or a missing tool then fails.
if [ "${CI:-}" = "true" ]; then
  export NASLAB_REQUIRE_ROOT=1
fi
if [ "$(id -u)" -ne 0 ]; then
  if [ "${NASLAB_REQUIRE_ROOT:-}" = "1" ]; then
    echo "NASLAB_REQUIRE_ROOT=1 but not root: the tests that mount file systems or start servers will fail" >&2
  else
    echo "note: not root, so the tests that mount file systems or start servers (the lab) report themselves skipped" >&2
  fi
fi

# The report UI's packages (esbuild, TypeScript, uPlot, playwright-core), pinned by its
# package-lock.json; then its type check.
(cd crates/report/ui && npm ci --no-audit --no-fund --loglevel=error)
(cd crates/report/ui && node node_modules/typescript/bin/tsc --noEmit -p .)

cargo fmt --all -- --check
# The eBPF object naslab embeds is what its source gives (scripts/build-bpf.sh).
./scripts/build-bpf.sh --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
NASLAB_REQUIRE_UI=1 cargo test --workspace
# The vendored crates are their published source plus the patches in vendor/patches/series.
./scripts/check-vendor.sh
# The vendored nfs3_client's own tests, with the one its patch adds (vendor/README.md).
(cd vendor/nfs3_client && cargo test --quiet --all-features --target-dir ../../target/vendor)
# The vendored smb2's cryptography tests, built as naslab builds it (the `aws-lc`
# feature): aws-lc's GCM and GMAC against the pure-Rust computation (vendor/README.md).
(cd vendor/smb2 && cargo test --quiet --features aws-lc --lib --target-dir ../../target/vendor crypto::)

# --- Multi-client runs: naslab built with the `mpi` feature, its tests under mpirun. ---
cargo clippy -p naslab --features mpi --all-targets --quiet -- -D warnings
cargo test -p naslab --features mpi --test mpi
cargo test -p naslab --features mpi --test mpi_sweep
# --- end of multi-client runs ---

# Browser tests: generated reports opened in headless Chromium (screenshots are left in
# $TMPDIR/naslab-report-screenshots). The binary has the `mpi` feature (it behaves as
# without it unless started by mpirun), so a multi-client run's report is tested too.
cargo build --quiet -p naslab --features mpi
(cd crates/report/ui && NASLAB_BIN="$PWD/../../../target/debug/naslab" node --test tests/)

# ---- Fuzzing smoke test -------------------------------------------------------------
# Each cargo-fuzz target (fuzz/README.md) runs for 25 s from its seed corpus; a crash
# fails the script. cargo-fuzz is installed from crates.io when root and missing. It
# uses a nightly toolchain when there is one, else the stable one with RUSTC_BOOTSTRAP=1
# and no sanitizer.
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    cargo install cargo-fuzz --locked --quiet
  else
    echo "cargo-fuzz is missing: cargo install cargo-fuzz --locked" >&2
    exit 1
  fi
fi
# A nightly toolchain gives the fuzzers AddressSanitizer; as root, fetch one if missing.
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly' && [ "$(id -u)" -eq 0 ]; then
  rustup toolchain install nightly --profile minimal >/dev/null 2>&1 ||
    echo "note: no nightly toolchain could be installed; fuzzing without a sanitizer" >&2
fi
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  fuzz=(cargo +nightly fuzz)
  sanitizer=address
else
  fuzz=(env RUSTC_BOOTSTRAP=1 cargo fuzz)
  sanitizer=none
fi
for target in trace_compile run_json target_url import_strace import_dbench import_fio import_procmon; do
  mkdir -p "fuzz/corpus/$target"
  log="$(mktemp)"
  if ! (cd fuzz && "${fuzz[@]}" run -O -s "$sanitizer" "$target" "corpus/$target" "seeds/$target" -- \
      -max_total_time=25 -rss_limit_mb=2048 -print_final_stats=1) >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzzing $target failed or found a crash (its input is in fuzz/artifacts/$target)" >&2
    exit 1
  fi
  echo "fuzz $target: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs, no crash"
  rm -f "$log"
done
# ---- end of fuzzing smoke test ------------------------------------------------------

# ---- The Windows build ---------------------------------------------------------------
# naslab.exe cross-built, its unit tests and the NAS suite under Wine, the suite's work
# checked against the Linux build's (docs/windows.md).
rustup target list --installed | grep -qx x86_64-pc-windows-gnu || rustup target add x86_64-pc-windows-gnu
cargo clippy --target x86_64-pc-windows-gnu --workspace --quiet -- -D warnings
# Tests too: a test that builds for Windows says so by not being gated to Unix.
cargo clippy --target x86_64-pc-windows-gnu --workspace --tests --quiet -- -D warnings
./scripts/test-windows.sh
# ---- end of the Windows build --------------------------------------------------------
