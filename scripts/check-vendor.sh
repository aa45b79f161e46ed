#!/usr/bin/env bash
# Rebuilds every vendored crate from its published source plus the patches in
# vendor/patches/series, and fails if the result differs from what is in vendor/.
# The .crate files come from crates.io (checked against the registry index's
# SHA-256); set NASLAB_CRATES_DIR to a folder of .crate files to work offline.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

index_path() { # the sparse index's path for a crate name (lower case)
  local n="${1,,}"
  case ${#n} in
    1) echo "1/$n" ;;
    2) echo "2/$n" ;;
    3) echo "3/${n:0:1}/$n" ;;
    *) echo "${n:0:2}/${n:2:2}/$n" ;;
  esac
}

fetch_crate() { # name version -> path of the verified .crate file
  local name="$1" version="$2" file="$work/$1-$2.crate"
  if [ -n "${NASLAB_CRATES_DIR:-}" ] && [ -f "$NASLAB_CRATES_DIR/$name-$version.crate" ]; then
    cp "$NASLAB_CRATES_DIR/$name-$version.crate" "$file"
  else
    curl -fsS --retry 3 -o "$file" "https://static.crates.io/crates/$name/$name-$version.crate" || {
      echo "check-vendor: could not download $name $version from crates.io (set NASLAB_CRATES_DIR to a folder holding $name-$version.crate)" >&2
      exit 1
    }
  fi
  local want got
  want="$(curl -fsS --retry 3 "https://index.crates.io/$(index_path "$name")" |
    python3 -c 'import json,sys; v=sys.argv[1]; print(next(json.loads(l)["cksum"] for l in sys.stdin if json.loads(l)["vers"]==v))' "$version")"
  got="$(sha256sum "$file" | cut -d' ' -f1)"
  if [ "$want" != "$got" ]; then
    echo "check-vendor: $name $version: checksum $got is not the registry's $want" >&2
    exit 1
  fi
  echo "$file"
}

failed=0
check_crate() { # name version patches...
  local name="$1" version="$2"
  shift 2
  local crate
  crate="$(fetch_crate "$name" "$version")"
  mkdir -p "$work/tree/vendor"
  tar xzf "$crate" -C "$work/tree/vendor"
  mv "$work/tree/vendor/$name-$version" "$work/tree/vendor/$name"
  for patch in "$@"; do
    if ! (cd "$work/tree" && git apply --whitespace=nowarn "$root/vendor/patches/$patch"); then
      echo "check-vendor: $patch does not apply over $name $version and the patches before it" >&2
      failed=1
      return
    fi
  done
  if diff -r "$work/tree/vendor/$name" "vendor/$name" >"$work/diff" 2>&1; then
    local plural=patches
    [ "$#" -eq 1 ] && plural=patch
    echo "vendor/$name = $name $version from crates.io + $# $plural"
  else
    head -n 40 "$work/diff" >&2
    echo "check-vendor: vendor/$name differs from $name $version plus its $# patches (above); make the change a patch in vendor/patches and list it in vendor/patches/series" >&2
    failed=1
  fi
}

# Read the series: a `crate NAME VERSION` line, then that crate's patches in order.
name="" version="" patches=()
while read -r first rest; do
  case "$first" in
    "" | "#"*) continue ;;
    crate)
      [ -n "$name" ] && check_crate "$name" "$version" "${patches[@]}"
      read -r name version <<<"$rest"
      patches=()
      ;;
    *) patches+=("$first") ;;
  esac
done <vendor/patches/series
[ -n "$name" ] && check_crate "$name" "$version" "${patches[@]}"

# Every patch file is in the series, so none is forgotten when refreshing.
for patch in vendor/patches/*.patch; do
  if ! grep -qx "$(basename "$patch")" vendor/patches/series; then
    echo "check-vendor: $(basename "$patch") is not listed in vendor/patches/series" >&2
    failed=1
  fi
done
exit "$failed"
