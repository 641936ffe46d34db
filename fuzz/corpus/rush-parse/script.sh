#!/bin/sh
set -eu
for f in "$@"; do
  case $f in
    *.c|*.h) echo "C: ${f%.*}" ;;
    -*) shift; continue ;;
    *) printf '%s\n' "$f" >>"${TMPDIR:-/tmp}/list" 2>&1 ;;
  esac
done
while read -r line; do [ -n "$line" ] && echo "$line"; done <<EOT
a $(date) `uname`
EOT
f() { local x=$((1 + 2 * 3)); echo "${x:-none}" | tr a-z A-Z; }
if f && ! false || true; then (cd / && pwd); fi
