#!/usr/bin/env bash
# Builds the eBPF program `naslab capture` loads (crates/capture/bpf/capture.bpf.c) into
# the object committed next to it, so that building naslab needs no clang.
#
# usage: scripts/build-bpf.sh          rebuild the committed object
#        scripts/build-bpf.sh --check  rebuild into a temporary file and fail unless it is
#                                      byte for byte the committed one
# needs: clang, llvm (llvm-strip), libbpf-dev (bpf/bpf_helpers.h): apt-get install clang llvm libbpf-dev
#
# The object is reproducible: no debug information (only BTF, which names the source
# relative to its directory), and the same clang gives the same bytes. It was built with
# Debian 12's clang 14 (the version is recorded in capture.bpf.o.clang).
set -euo pipefail
cd "$(dirname "$0")/../crates/capture/bpf"
for tool in clang llvm-strip; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed: apt-get install clang llvm libbpf-dev" >&2; exit 1; }
done
[ -e /usr/include/bpf/bpf_helpers.h ] || { echo "bpf/bpf_helpers.h is missing: apt-get install libbpf-dev" >&2; exit 1; }
out=capture.bpf.o
check=0
if [ "${1:-}" = "--check" ]; then
  check=1
  out=$(mktemp --suffix=.bpf.o)
  trap 'rm -f "$out"' EXIT
fi
# The multiarch include directory holds asm/types.h, which linux/bpf.h includes.
arch_inc=/usr/include/$(uname -m)-linux-gnu
clang -O2 -g -fdebug-prefix-map="$PWD"=. -target bpf -I"$arch_inc" -c capture.bpf.c -o "$out"
llvm-strip -g "$out"
version=$(clang --version | head -n 1)
if [ "$check" = 1 ]; then
  if ! cmp -s "$out" capture.bpf.o; then
    echo "crates/capture/bpf/capture.bpf.o is not what capture.bpf.c gives with $version" >&2
    echo "(committed with: $(cat capture.bpf.o.clang)); run scripts/build-bpf.sh and commit the object" >&2
    exit 1
  fi
  echo "crates/capture/bpf/capture.bpf.o is what capture.bpf.c gives ($version)"
else
  echo "$version" > capture.bpf.o.clang
  echo "built crates/capture/bpf/capture.bpf.o ($version)"
fi
