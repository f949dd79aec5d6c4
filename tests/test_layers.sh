#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The files of src/ stand in layers: a file calls functions of the files
# below it only, so that each can be read, tested and changed with nothing
# above it in mind. This test reads the objects of the static libraries it
# is given (libdch.a, and libdch-etcd.a when it is built: every object in
# them, one per .c file of src/), builds the graph "file A calls a function
# that file B defines" from their symbols (nm: an undefined symbol of A that
# B defines as a global, a function or any other object) and fails, naming
# each loop file by file with the symbol behind every step, when the graph
# has a cycle of two files or more.
#
# Before it reads the libraries it checks itself, so that a pass means
# something: three objects that call each other in a ring a -> b -> c -> a
# must fail with that loop named, and the same three with the call back to
# a cut must pass.
#
# Usage: test_layers.sh LIBRARY.a...
# Environment: CC (a C compiler, for the self-check), AR and NM (default ar
# and nm), DCH_SOURCE_DIR (to name src/ files by their path; object names
# otherwise).
set -euo pipefail

cc=${CC:-cc}
ar=${AR:-ar}
nm=${NM:-nm}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The edges "A B symbol" (A's undefined symbol that B defines) among the
# objects of the archives given, one line each, sorted.
edges() {
    local n=0 lib dir obj
    : >"$work/defs"
    : >"$work/uses"
    for lib in "$@"; do
        n=$((n + 1))
        dir="$work/objects/$n"
        mkdir -p "$dir"
        # Two members of one name would be one node: refuse rather than
        # merge two files into one.
        local twice
        twice=$("$ar" t "$lib" | sort | uniq -d)
        if [ -n "$twice" ]; then
            echo "FAIL: $lib holds two objects named $twice; rename one source file" >&2
            return 2
        fi
        lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
        (cd "$dir" && "$ar" x "$lib")
        for obj in $("$ar" t "$lib"); do
            # -P: "symbol type value size" a line, the same in GNU and LLVM nm.
            "$nm" -P "$dir/$obj" | awk -v o="$obj" '
                $2 == "U" { print o, $1 >> "'"$work/uses"'"; next }
                $2 ~ /^[A-TV-Z]$/ { print $1, o >> "'"$work/defs"'" }'
        done
    done
    awk 'NR == FNR { def[$1] = $2; next }
         ($2 in def) && def[$2] != $1 { print $1, def[$2], $2 }' \
        "$work/defs" "$work/uses" | sort -k1,1 -k2,2 -k3,3
}

# Reads edges on stdin; prints every loop (one per strongly connected
# component of two files or more: its shortest cycle through its first
# file, and the component's other files if the cycle misses some) and exits
# 1 if there is one.
loops() {
    awk '
    function strong(v,    i, w) { # Tarjan: the components, in a fixed order
        ix[v] = low[v] = ++count
        stack[++sp] = v
        on[v] = 1
        for (i = 1; i <= deg[v]; i++) {
            w = adj[v, i]
            if (!(w in ix)) {
                strong(w)
                if (low[w] < low[v])
                    low[v] = low[w]
            } else if (on[w] && ix[w] < low[v])
                low[v] = ix[w]
        }
        if (low[v] == ix[v]) {
            ncomp++
            do {
                w = stack[sp--]
                on[w] = 0
                comp[w] = ncomp
                size[ncomp]++
                member[ncomp, size[ncomp]] = w
            } while (w != v)
        }
    }
    function cycle(v,    q, head, tail, u, w, i, path, seen, from) {
        # Breadth first from v over the edges inside its component, back to v.
        head = tail = 0
        q[tail++] = v
        while (head < tail) {
            u = q[head++]
            for (i = 1; i <= deg[u]; i++) {
                w = adj[u, i]
                if (comp[w] != comp[v])
                    continue
                if (w == v) {
                    path = ""
                    for (; u != v; u = from[u])
                        path = u " " path
                    return v " " path v
                }
                if (!(w in seen)) {
                    seen[w] = 1
                    from[w] = u
                    q[tail++] = w
                }
            }
        }
        return ""
    }
    {
        if (!(($1, $2) in sym)) {
            sym[$1, $2] = $3
            adj[$1, ++deg[$1]] = $2
        }
        for (i = 1; i <= 2; i++)
            if (!($i in known)) {
                known[$i] = 1
                node[++nnode] = $i
            }
    }
    END {
        for (i = 1; i <= nnode; i++)
            if (!(node[i] in ix))
                strong(node[i])
        bad = 0
        for (c = 1; c <= ncomp; c++) {
            if (size[c] < 2)
                continue
            first = member[c, 1]
            for (i = 2; i <= size[c]; i++)
                if (member[c, i] < first)
                    first = member[c, i]
            n = split(cycle(first), p, " ")
            line = p[1]
            for (i = 2; i <= n; i++)
                line = line " -> " p[i]
            printf "loop: %s\n", line
            for (i = 1; i < n; i++)
                printf "    %s calls %s (%s)\n", p[i], sym[p[i], p[i + 1]], p[i + 1]
            if (size[c] > n - 1) {
                rest = ""
                for (i = 1; i <= size[c]; i++) {
                    on_path = 0
                    for (j = 1; j < n; j++)
                        if (p[j] == member[c, i])
                            on_path = 1
                    if (!on_path)
                        rest = rest " " member[c, i]
                }
                printf "    the same loop also takes in:%s\n", rest
            }
            bad = 1
        }
        exit bad
    }'
}

# Object names as src/ paths, where the source tree is known.
names() {
    if [ -z "${DCH_SOURCE_DIR:-}" ]; then
        cat
        return
    fi
    local map="$work/names" obj base path
    : >"$map"
    while read -r obj; do
        base=${obj%.o}
        path=$(cd "$DCH_SOURCE_DIR" && find src -name "$base" -type f)
        [ "$(printf '%s\n' "$path" | wc -l)" = 1 ] && [ -n "$path" ] || path=$obj
        printf '%s %s\n' "$obj" "$path" >>"$map"
    done
    cat "$map"
}

rename() { # edges on stdin, the object -> path map in $1
    awk 'NR == FNR { path[$1] = $2; next }
         { print ($1 in path ? path[$1] : $1), ($2 in path ? path[$2] : $2), $3 }' "$1" -
}

# ---- The self-check: a loop of three must be found, a chain must pass ----
selfcheck() {
    local d="$work/self" out
    mkdir -p "$d/loop" "$d/chain"
    printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' >"$d/a.c"
    printf 'int c(int);\nint b(int x) { return c(x) + 1; }\n' >"$d/b.c"
    printf 'int a(int);\nint c(int x) { return x > 1 ? a(x - 2) : x; }\n' >"$d/c_loop.c"
    printf 'int c(int x) { return x; }\n' >"$d/c_chain.c"
    local kind
    for kind in loop chain; do
        "$cc" -c -o "$d/$kind/a.o" "$d/a.c"
        "$cc" -c -o "$d/$kind/b.o" "$d/b.c"
        "$cc" -c -o "$d/$kind/c.o" "$d/c_$kind.c"
        (cd "$d/$kind" && "$ar" rc libself.a a.o b.o c.o)
    done
    if out=$(edges "$d/loop/libself.a" | loops); then
        echo "FAIL: the self-check's loop a -> b -> c -> a was not found" >&2
        exit 1
    fi
    if ! grep -qx 'loop: a.o -> b.o -> c.o -> a.o' <<<"$out"; then
        printf 'FAIL: the self-check named its loop wrongly:\n%s\n' "$out" >&2
        exit 1
    fi
    if ! out=$(edges "$d/chain/libself.a" | loops); then
        printf 'FAIL: the self-check found a loop in a chain a -> b -> c:\n%s\n' "$out" >&2
        exit 1
    fi
    echo "self-check: a loop of three objects is found and named, a chain passes"
}

[ "$#" -ge 1 ] || { echo "usage: $0 LIBRARY.a..." >&2; exit 2; }
selfcheck

edges "$@" >"$work/edges"
awk '{ print $1; print $2 }' "$work/edges" | sort -u | names >"$work/paths"
rename "$work/paths" <"$work/edges" >"$work/graph"
nfiles=$(for lib in "$@"; do "$ar" t "$lib"; done | wc -l)
echo "read: $* ($nfiles objects; $(wc -l <"$work/graph") functions a file calls in another)"
if out=$(loops <"$work/graph"); then
    echo "no loops: every file calls only files below it"
    exit 0
fi
printf '%s\n' "$out"
echo "FAIL: the files above call each other in a loop; re-cut them so that each uses only files below it"
exit 1
