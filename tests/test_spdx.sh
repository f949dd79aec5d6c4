#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every source file of the project carries an SPDX licence line in its first
# three lines: C and headers, CMake files and templates, shell scripts
# (by ending or by a #! line), Python, JavaScript, HTML, CSS and man page
# sources. Data (corpora,
# golden maps, JSON) is left out: it has no comment syntax or is not code.
# The file list is git's when this is a checkout, every file otherwise (a
# source tarball), so the test holds in a package build too.
# Usage: test_spdx.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-${DCH_SOURCE_DIR:?}}"
tag='SPDX-License-Identifier: MIT'

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files)
else
    mapfile -t files < <(find . -type f -not -path './build*' -not -path './.git/*' \
        -not -path '*/node_modules/*' -not -path './debian/*' | sed 's|^\./||' | sort)
fi

is_source() {
    local f=$1
    case "$f" in
        */corpus_*/*|tests/golden/*.dchmap|tests/golden/*.expect) return 1 ;;
        *.c|*.h|*.h.in|*.css|*.js|*.mjs|*.html|*.sh|*.py|*.cmake|*.cmake.in|*.pc.in|*.scd) return 0 ;;
        */CMakeLists.txt|CMakeLists.txt) return 0 ;;
    esac
    case "${f##*/}" in *.*) return 1 ;; esac
    [ -f "$f" ] && head -c 2 "$f" | grep -q '^#!'
}

checked=0 missing=()
for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    is_source "$f" || continue
    checked=$((checked + 1))
    head -n 3 "$f" | grep -F "$tag" >/dev/null || missing+=("$f")
done
[ "$checked" -gt 100 ] || { echo "only $checked source files found: wrong folder?"; exit 1; }
if [ ${#missing[@]} -gt 0 ]; then
    printf 'no "%s" in the first three lines of:\n' "$tag"
    printf '  %s\n' "${missing[@]}"
    exit 1
fi
[ -f LICENSE ] || { echo "no LICENSE file at the top"; exit 1; }
echo "spdx: $checked source files, each with its licence line"
