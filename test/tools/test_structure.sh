#!/usr/bin/env bash
# test_structure.sh — tools/structure.py on a tree of known shape.
#
# Design note: builds four small objects in a temporary lib/ (core/a, core/d,
# net/b, client/c) whose calls form the circle a -> b -> c -> a plus a -> d,
# and a struct whose field count (7) is known, then checks the script's counts,
# circle and struct lines; then breaks the circle (c no longer calls a) and
# checks that no circle is left. Needs a C compiler, nm and python3 only;
# runs in a directory of its own and removes it.
set -euo pipefail
cd "$(dirname "$0")/../.."
CC=${CC:-cc}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/lib/core" "$t/lib/net" "$t/lib/client" "$t/build/lib/core" "$t/build/lib/net" "$t/build/lib/client"

cat >"$t/lib/core/a.c" <<'C'
int b(void);
int d(void);
/* a comment holding "x; y;" must not count as fields */
struct big {
    int x, y;                      /* two */
    void (*cb)(int, int);          /* one: the commas are the parameters' */
    union { int u; long v; } n;    /* one */
    struct { int p; int q; } in;   /* one */
    char s[2];                     /* one */
    const char *text;              /* one */
};
typedef struct { int only; } small_t;
static const struct big table[] = {{1, 2, 0, {3}, {4, 5}, "z", "w;"}};   /* not a definition */
int a(void) { struct big g = table[0]; small_t s = {0}; return b() + d() + g.x + s.only; }
C
cat >"$t/lib/core/d.c" <<'C'
int d(void) { return 4; }
C
cat >"$t/lib/net/b.c" <<'C'
int c(void);
int b(void) { return c() + 1; }
C
cat >"$t/lib/client/c.c" <<'C'
int a(void);
int c(void) { static int depth; return depth++ ? 0 : a(); }
C
for f in core/a core/d net/b client/c; do
    "$CC" -c -O0 -o "$t/build/lib/$f.o" "$t/lib/$f.c"
done

fail=0
expect() { # expect LABEL PATTERN FILE
    if grep -qE -- "$2" "$3"; then echo "ok   $1"; else echo "FAIL $1: no line matching '$2'"; fail=1; fi
}

python3 tools/structure.py --build "$t/build" --src "$t" >"$t/out.txt"
expect "counts" '^files=4 edges=4 up_edges=2 up_edges_client_rooms=0 circles=1 files_in_circles=3 largest_circle=3 biggest_struct=big biggest_struct_fields=7$' "$t/out.txt"
expect "the circle" '^circle 1 \(3 files\): client/c.c core/a.c net/b.c$' "$t/out.txt"
expect "up edge a -> b" '^  core/a.c -> net/b.c \(1\) UP$' "$t/out.txt"
expect "down edge c -> a" '^  client/c.c -> core/a.c \(1\)$' "$t/out.txt"
expect "typedef'd struct" '^ +1  small_t  \(core/a.c:12\)$' "$t/out.txt"

# Break the circle: c calls nothing.
cat >"$t/lib/client/c.c" <<'C'
int c(void) { return 3; }
C
"$CC" -c -O0 -o "$t/build/lib/client/c.o" "$t/lib/client/c.c"
python3 tools/structure.py --build "$t/build" --src "$t" >"$t/out2.txt"
expect "no circle once broken" '^files=4 edges=3 up_edges=2 up_edges_client_rooms=0 circles=0 files_in_circles=0 largest_circle=0 ' "$t/out2.txt"

if [ "$fail" != 0 ]; then
    echo "--- structure.py output"; cat "$t/out.txt"; echo "--- after the break"; cat "$t/out2.txt"
    exit 1
fi
echo "test_structure: all checks passed"
