#!/usr/bin/env bash
# Build step: puts one folder of an npm package into a module's generated resources.
#   bin/fetch-npm.sh PACKAGE VERSION SHA256 PACKAGE-FOLDER OUTDIR DEST
# e.g. Fauxton's package/dist/release into OUTDIR/fauxton (server/pom.xml), or coffee-script's
# package/lib/coffee-script into the views' resources (views/pom.xml). The package comes from the
# npm registry through npm itself, once: it is kept in ~/.cache/chaise (CHAISE_CACHE) and checked
# against the pinned SHA-256 every build, so a changed or corrupted package fails the build. Its
# LICENSE goes beside the files. Nothing of it is committed.
set -euo pipefail
name="$1"
version="$2"
sha="$3"
folder="$4"
out="$5"
dest="$6"
cache="${CHAISE_CACHE:-$HOME/.cache/chaise}/$name-$version.tgz"
stamp="$out/.$name-$version-$sha"

[ -f "$stamp" ] && [ -f "$out/$dest/LICENSE" ] && exit 0

ok() { [ -f "$cache" ] && echo "$sha  $cache" | sha256sum -c --quiet - >/dev/null 2>&1; }

if ! ok; then
  if ! command -v npm >/dev/null; then
    echo "fetch-npm: npm is needed once to fetch $name $version (see the skip property in the pom that asks for it)" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$cache")"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$name@$version" >/dev/null)
  mv "$tmp/$name-$version.tgz" "$cache"
  if ! ok; then
    echo "fetch-npm: $name-$version.tgz does not have the pinned SHA-256 $sha; not using it" >&2
    rm -f "$cache"
    exit 1
  fi
fi

rm -rf "${out:?}/$dest"
mkdir -p "$out/$dest"
depth=$(( $(tr -cd '/' <<< "$folder" | wc -c) + 1 ))
tar xzf "$cache" -C "$out/$dest" --strip-components="$depth" "$folder"
tar xzf "$cache" -O package/LICENSE > "$out/$dest/LICENSE"
touch "$stamp"
echo "fetch-npm: $name $version in $out/$dest"
