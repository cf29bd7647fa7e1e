#!/usr/bin/env bash
# bench/size.sh — code size of the library and of a static example.
#
# Builds (a) the full library in $BUILD (default build), (b) a minimal one
# (WITH_TLS=0 WITH_CURL=0 WITH_ZSTD=0 WITH_SNAPPY=0) in $MIN_BUILD (default
# build-min), (c) the same built for size (-Os, no unwind tables, packed
# relative relocations when the linker has them) in $SMALL_BUILD, with and
# without the connector library (WITH_CONNECTOR=0: the client alone; the
# connector is libpulsarc-connector, beside libpulsarc, and has rows of its own),
# (d) examples/produce_consume.c linked -static against the minimal
# libpulsarc.a and Debian's static protobuf-c, lz4 and zlib archives, with
# glibc and, when musl-gcc is installed (Debian musl-tools), with musl, and
# prints text/data/bss (`size`) beside the dynamic dependencies (`ldd`)
# and the goals: full <= 600 KB text, minimal <= 250 KB, static example
# <= 1 MB. Then the largest symbols of the minimal library and the share of
# each archive in the static example, to show what dominates.
#
# Environment: BUILD (build), MIN_BUILD (build-min), SMALL_BUILD
# (build-small), TOP (15 symbols), SIZE_RUN_URL (a broker: the static
# examples then also produce and consume 200 messages there, to show they
# work; `make bench` sets it to its scripted broker).
# Figures only; no size is asserted.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
MIN_BUILD=${MIN_BUILD:-build-min}
SMALL_BUILD=${SMALL_BUILD:-build-small}
TOP=${TOP:-15}
MIN_OPTS=(WITH_TLS=0 WITH_CURL=0 WITH_ZSTD=0 WITH_SNAPPY=0)
SMALL_OPT="-Os -g -fno-asynchronous-unwind-tables"
SMALL_LDFLAGS=
if ld --help 2>/dev/null | grep pack-relative-relocs >/dev/null; then # no -q: an early exit would SIGPIPE ld and, under pipefail, fail the test
    SMALL_LDFLAGS="-Wl,-z,pack-relative-relocs" # DT_RELR: glibc >= 2.36 loads it
fi
OUT=$MIN_BUILD/size
mkdir -p "$OUT"

echo "building full ($BUILD) and minimal ($MIN_BUILD: ${MIN_OPTS[*]}) libraries ..."
make -j"$(nproc)" BUILD="$BUILD" lib >"$OUT/build-full.log" 2>&1 || { tail -20 "$OUT/build-full.log"; exit 1; }
make -j"$(nproc)" BUILD="$MIN_BUILD" "${MIN_OPTS[@]}" lib >"$OUT/build-min.log" 2>&1 || { tail -20 "$OUT/build-min.log"; exit 1; }
echo "building for size ($SMALL_BUILD: -Os, no unwind tables${SMALL_LDFLAGS:+, packed relocations}; with and without the connector) ..."
small() { # build-dir extra-make-args...
    local dir=$1
    shift
    make -j"$(nproc)" BUILD="$dir" OPT="$SMALL_OPT" LDFLAGS="$SMALL_LDFLAGS" "${MIN_OPTS[@]}" "$@" lib \
        >"$OUT/build-$(basename "$dir").log" 2>&1 || { tail -20 "$OUT/build-$(basename "$dir").log"; exit 1; }
}
small "$SMALL_BUILD"
small "$SMALL_BUILD-client" WITH_CONNECTOR=0

# (c) static example: needs the .a of every required dependency.
STATIC_EX=$OUT/produce_consume-static
DEP_LIBS=(-lprotobuf-c -llz4 -lz -lpthread -lm)
static_note=
missing=
for a in libprotobuf-c.a liblz4.a libz.a; do
    ${CC:-cc} -print-file-name="$a" | grep -q / || missing="$missing $a"
done
if [ -n "$missing" ]; then
    static_note="not built: missing static archives:$missing"
else
    # -static with glibc: pthread and the resolver are in libc.a; getaddrinfo
    # still wants the shared NSS modules at run time (the linker warns).
    if ${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -pthread -Iinclude examples/produce_consume.c \
        -o "$STATIC_EX" -static "$MIN_BUILD/libpulsarc.a" "${DEP_LIBS[@]}" \
        -Wl,-Map,"$OUT/produce_consume-static.map" >"$OUT/link-static.log" 2>&1; then
        w=$(grep -c 'warning' "$OUT/link-static.log" || true)
        [ "$w" = 0 ] || static_note="linked with $w warning(s), see $OUT/link-static.log"
    else
        static_note="static link failed, see $OUT/link-static.log"
        tail -5 "$OUT/link-static.log" >&2
    fi
fi
# (d') the same example with musl: its static libc is a fraction of glibc's.
# musl-gcc sees only musl's headers, so the three dependencies' headers are
# offered through a directory of links; their Debian archives need nothing
# from libc that musl lacks.
MUSL_EX=$OUT/produce_consume-static-musl
musl_note=
if command -v musl-gcc >/dev/null && [ -z "$missing" ]; then
    shim=$OUT/musl-include
    mkdir -p "$shim/protobuf-c"
    for h in lz4.h lz4frame.h lz4hc.h zlib.h zconf.h; do ln -sf "/usr/include/$h" "$shim/$h"; done
    ln -sf /usr/include/protobuf-c/protobuf-c.h "$shim/protobuf-c/protobuf-c.h"
    MUSL_CC="musl-gcc -isystem $shim"
    if make -j"$(nproc)" CC="$MUSL_CC" BUILD="$SMALL_BUILD-musl" OPT="$SMALL_OPT" "${MIN_OPTS[@]}" \
        WITH_CONNECTOR=0 "$SMALL_BUILD-musl/libpulsarc.a" >"$OUT/build-musl.log" 2>&1 &&
        $MUSL_CC -std=c11 -D_GNU_SOURCE -Os -pthread -Iinclude examples/produce_consume.c -o "$MUSL_EX" \
            -static -Wl,--gc-sections "$SMALL_BUILD-musl/libpulsarc.a" \
            "$(${CC:-cc} -print-file-name=libprotobuf-c.a)" "$(${CC:-cc} -print-file-name=liblz4.a)" \
            "$(${CC:-cc} -print-file-name=libz.a)" >"$OUT/link-musl.log" 2>&1; then
        musl_note=ok
    else
        musl_note="musl build failed, see $OUT/build-musl.log and $OUT/link-musl.log"
    fi
else
    musl_note="not built: musl-gcc (Debian musl-tools) not installed"
fi

# a dynamic build of the same example against the minimal library, for contrast
DYN_EX=$OUT/produce_consume-dynamic
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -pthread -Iinclude examples/produce_consume.c \
    -o "$DYN_EX" "$MIN_BUILD/libpulsarc.a" "${DEP_LIBS[@]}"

deps() { # file -> direct NEEDED sonames (+ how many ldd resolves), or "statically linked"
    local l direct
    l=$(ldd "$1" 2>&1 || true)
    if echo "$l" | grep -q 'not a dynamic executable\|statically linked'; then
        echo "statically linked"
        return
    fi
    direct=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' ' -)
    echo "$direct (ldd: $(echo "$l" | grep -vc 'linux-vdso\|ld-linux') shared objects in all)"
}

kb() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1024 }'; }

# sums the per-member rows of `size` on an archive
size_row() { # label file goal_kb
    local label=$1 f=$2 goal=$3 t d b
    if [ ! -f "$f" ]; then
        printf '| %s | - | - | - | %s | missing |\n' "$label" "$goal"
        return
    fi
    read -r t d b < <(size "$f" | awk 'NR > 1 { t += $1; d += $2; b += $3 } END { print t, d, b }')
    local verdict=-
    [ "$goal" = - ] || verdict=$(awk -v t="$t" -v g="$goal" 'BEGIN { print (t <= g * 1024 ? "within" : sprintf("over by %.0f KB", t / 1024 - g)) }')
    printf '| %s | %s KB (%s) | %s | %s | %s | %s |\n' "$label" "$(kb "$t")" "$t" "$d" "$b" \
        "$(if [ "$goal" = - ]; then echo -; else echo "<= $goal KB text"; fi)" "$verdict"
    case $f in
        *.a) ;;
        *) printf '|   deps: %s | | | | | |\n' "$(deps "$f")" ;;
    esac
}

echo
echo "## Code size ($(${CC:-cc} --version | head -1); OPT = the Makefile's -O2 -g unless the row says -Os; size counts no debug info)"
echo
echo "| object | text | data | bss | goal | verdict |"
echo "|---|---|---|---|---|---|"
size_row "full $BUILD/libpulsarc.so" "$BUILD/libpulsarc.so" 600
size_row "full $BUILD/libpulsarc.a" "$BUILD/libpulsarc.a" -
size_row "full $BUILD/libpulsarc-connector.so" "$BUILD/libpulsarc-connector.so" -
size_row "full $BUILD/libpulsarc-connector.a" "$BUILD/libpulsarc-connector.a" -
size_row "minimal $MIN_BUILD/libpulsarc.so" "$MIN_BUILD/libpulsarc.so" 250
size_row "minimal $MIN_BUILD/libpulsarc.a" "$MIN_BUILD/libpulsarc.a" -
size_row "minimal $MIN_BUILD/libpulsarc-connector.so" "$MIN_BUILD/libpulsarc-connector.so" -
size_row "minimal -Os $SMALL_BUILD/libpulsarc.so" "$SMALL_BUILD/libpulsarc.so" 250
size_row "minimal -Os $SMALL_BUILD/libpulsarc-connector.so" "$SMALL_BUILD/libpulsarc-connector.so" -
size_row "minimal -Os, client only (WITH_CONNECTOR=0) $SMALL_BUILD-client/libpulsarc.so" "$SMALL_BUILD-client/libpulsarc.so" 250
size_row "static produce_consume (glibc)" "$STATIC_EX" 1024
if [ "$musl_note" = ok ]; then
    size_row "static produce_consume (musl, -Os client-only .a)" "$MUSL_EX" 1024
else
    echo "static produce_consume (musl): $musl_note"
fi
size_row "dynamic produce_consume (minimal .a)" "$DYN_EX" -
[ -z "$static_note" ] || echo "static example: $static_note"
if [ -f "$OUT/link-static.log" ] && grep -q warning "$OUT/link-static.log"; then
    grep warning "$OUT/link-static.log" | sed 's/^.*: warning: /  linker warning: /' | sort -u
fi

echo
echo "## What Berkeley 'text' holds (size -A; alloc, read-only sections, bytes)"
echo
sections() { # file
    size -A "$1" | awk '$1 ~ /^\.(text|rodata|eh_frame|eh_frame_hdr|rela\.dyn|rela\.plt|dynsym|dynstr|gcc_except_table|plt|plt\.got|plt\.sec)$/ { printf "%s=%d ", $1, $2 }'
    echo
}
for f in "$BUILD/libpulsarc.so" "$BUILD/libpulsarc-connector.so" "$MIN_BUILD/libpulsarc.so" "$SMALL_BUILD-client/libpulsarc.so" "$STATIC_EX" "$MUSL_EX"; do
    [ -f "$f" ] && printf '  %-40s %s\n' "$f" "$(sections "$f")"
done

echo
echo "## Largest symbols in the minimal libpulsarc.so (nm --size-sort, text and rodata)"
echo
nm --size-sort -r -S -C -t d "$MIN_BUILD/libpulsarc.so" | awk -v n="$TOP" '$3 ~ /^[tTrRdD]$/ && c++ < n { printf "  %6d  %s %s\n", $2, $3, $4 }'

echo
echo "## Text per source file, minimal build (top $TOP)"
echo
find "$MIN_BUILD/lib" "$MIN_BUILD/gen" -name '*.o' -print0 | xargs -0 size | awk 'NR > 1 { print $1, $6 }' |
    sort -rn | head -"$TOP" | awk '{ printf "  %6d  %s\n", $1, $2 }'

if [ -f "$OUT/produce_consume-static.map" ]; then
    echo
    echo "## Static example: .text by archive (from the link map)"
    echo
    perl -ne 'if (/^ \.text\S*\s*$/) { $p = 1; next }
              if (/^ \.text\S*\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+(\S+)/ || ($p && /^\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+(\S+)/)) {
                  my ($z, $f) = (hex $1, $2); $f =~ s/\(.*//; $f =~ s{.*/}{}; $a{$f} += $z }
              $p = 0;
              END { printf "  %8d  %s\n", $a{$_}, $_ for keys %a }' "$OUT/produce_consume-static.map" | sort -rn | head -10
fi

if [ -n "${SIZE_RUN_URL:-}" ]; then
    echo
    echo "## The static examples against $SIZE_RUN_URL (200 messages of 100 bytes)"
    echo
    for ex in "$STATIC_EX" "$MUSL_EX"; do
        [ -x "$ex" ] || continue
        if out=$(timeout 120 "$ex" "$SIZE_RUN_URL" 200 100 2>&1); then
            printf '  %-34s %s\n' "$(basename "$ex")" "$(echo "$out" | grep '^consumed' | tr -s ' ')"
        else
            printf '  %-34s FAILED: %s\n' "$(basename "$ex")" "$(echo "$out" | tail -1)"
        fi
    done
fi
