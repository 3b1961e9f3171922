#!/bin/sh
# The main job: two files of the same size, one incompressible, one all zeros,
# what `testdata analyze` says about them, and how a compressing link
# (gzip -1 in a pipe) flatters the second one.  See docs/walkthrough.md.
set -eu
TD=${TESTDATA:-testdata}
case $TD in */*) TD=$(cd "$(dirname "$TD")" && pwd)/$(basename "$TD") ;; esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$TD" gen random 100M --seed 7 -o "$dir/file1"
"$TD" gen zero 100M -o "$dir/file2"
(cd "$dir" && "$TD" analyze file1 file2)
echo
for f in file1 file2; do
  start=$(date +%s.%N)
  bytes=$(gzip -1 -c "$dir/$f" | wc -c)
  end=$(date +%s.%N)
  echo "$f: 104857600 bytes -> $bytes bytes on a gzip -1 'link' ($(echo "$start $end" | awk '{printf "%.2f", $2-$1}') s)"
done
echo "file1 measures the link; file2 measures the compressor."
