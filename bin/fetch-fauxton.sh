#!/usr/bin/env bash
# Build step (server/pom.xml, generate-resources): puts npm's Fauxton release into the jar's resources.
#   bin/fetch-fauxton.sh VERSION SHA256 OUTDIR
# The package comes from the npm registry through npm itself, once: it is kept in
# ~/.cache/chaise (CHAISE_CACHE) and checked against the pinned SHA-256 every build, so a changed
# or corrupted package fails the build. Nothing of it is committed.
set -euo pipefail
version="$1"
sha="$2"
out="$3"
cache="${CHAISE_CACHE:-$HOME/.cache/chaise}/fauxton-$version.tgz"
stamp="$out/.fauxton-$version-$sha"

[ -f "$stamp" ] && [ -f "$out/fauxton/index.html" ] && exit 0

ok() { [ -f "$cache" ] && echo "$sha  $cache" | sha256sum -c --quiet - >/dev/null 2>&1; }

if ! ok; then
  if ! command -v npm >/dev/null; then
    echo "fetch-fauxton: npm is needed once to fetch Fauxton $version (or build with -Dchaise.fauxton.skip=true: no /_utils)" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$cache")"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "fauxton@$version" >/dev/null)
  mv "$tmp/fauxton-$version.tgz" "$cache"
  if ! ok; then
    echo "fetch-fauxton: fauxton-$version.tgz does not have the pinned SHA-256 $sha; not using it" >&2
    rm -f "$cache"
    exit 1
  fi
fi

rm -rf "$out"
mkdir -p "$out/fauxton"
tar xzf "$cache" -C "$out/fauxton" --strip-components=3 package/dist/release
tar xzf "$cache" -O package/LICENSE > "$out/fauxton/LICENSE"
touch "$stamp"
echo "fetch-fauxton: Fauxton $version in $out/fauxton"
