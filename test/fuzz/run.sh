#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of test/fuzz/ for a bounded time.
#
#   bash test/fuzz/run.sh [--seeds] [target ...]
#
# FUZZ_SECONDS  seconds per target (default 30; 0: no time limit)
# FUZZ_RUNS     inputs per target (default: no limit; `make fuzz-long` sets 10000000)
# FUZZ_OUT      build and work directory (default /tmp/pulsarc-fuzz)
# FUZZ_CC       compiler (default clang, else clang-14)
# FUZZ_JOBS     parallel compiles (default 2)
# --seeds       (re)write the seed corpora in test/fuzz/corpus/ with gen_seeds
#
# The library sources are compiled here with -fsanitize=fuzzer-no-link,
# address,undefined (build/libpulsarc.a is not used). Each target runs with
# -rss_limit_mb=512 -malloc_limit_mb=256: a hostile size that makes the
# library allocate more than that is a finding, like a crash. New inputs
# go to $FUZZ_OUT/corpus/<target>, never into the repository; crashes to
# $FUZZ_OUT/artifacts/. Prints execs per target; exits 1 on any finding.
# Needs clang 14 and libclang-rt-14-dev (apt-get install clang-14 libclang-rt-14-dev).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
OUT="${FUZZ_OUT:-/tmp/pulsarc-fuzz}"
SECS="${FUZZ_SECONDS:-30}"
JOBS="${FUZZ_JOBS:-2}"
CC="${FUZZ_CC:-$(command -v clang || command -v clang-14 || true)}"
[[ -n "$CC" ]] || { echo "fuzz: clang not found (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 2; }

seeds=0
targets=()
for a in "$@"; do
  case "$a" in
    --seeds) seeds=1 ;;
    *) targets+=("$a") ;;
  esac
done

# Optional parts, as the Makefile decides them.
pkgs="libprotobuf-c zlib liblz4"
defs="-DPULSARC_VERSION_STR=\"fuzz\""
skip_re='^$'
have() { pkg-config --exists "$1" 2>/dev/null; }
if have openssl; then pkgs+=" openssl"; defs+=" -DPULSARC_WITH_TLS=1"; else skip_re+='|transport_tls|auth_tls|crypto/(keys|wrap|gcm|encryptor|decryptor|setup)'; fi
if have libcurl && have json-c && [[ -d "$root/lib/admin" ]]; then
  pkgs+=" libcurl json-c"; defs+=" -DPULSARC_WITH_CURL=1"
else skip_re+='|lib/admin/|auth_oauth2'; fi
if have libzstd; then pkgs+=" libzstd"; defs+=" -DPULSARC_WITH_ZSTD=1"; else skip_re+='|codec_zstd'; fi
snappy=""
if [[ -f /usr/include/snappy-c.h ]]; then defs+=" -DPULSARC_WITH_SNAPPY=1"; snappy="-lsnappy"; else skip_re+='|codec_snappy'; fi
libs="$(pkg-config --libs $pkgs) $snappy -lpthread -lm"
# shellcheck disable=SC2086
cflags="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror \
  -fsanitize=address,undefined -fno-sanitize-recover=undefined -pthread \
  -I$root/include -I$root/lib -I$root/test/common -I$OUT/gen $defs $(pkg-config --cflags $pkgs)"

mkdir -p "$OUT/gen" "$OUT/obj" "$OUT/bin" "$OUT/logs" "$OUT/artifacts"
if [[ ! -f "$OUT/gen/PulsarApi.pb-c.c" || "$root/proto/PulsarApi.proto" -nt "$OUT/gen/PulsarApi.pb-c.c" ]]; then
  protoc-c --c_out="$OUT/gen" -I"$root/proto" "$root/proto/PulsarApi.proto"
fi

# Library objects, rebuilt when their source (or a header) is newer.
srcs=("$OUT/gen/PulsarApi.pb-c.c")
while IFS= read -r f; do srcs+=("$f"); done < <(cd "$root" && ls lib/*/*.c lib/*/*/*.c | grep -Ev "$skip_re" | sed "s|^|$root/|")
newest_h=$(find "$root/lib" "$root/include" -name '*.h' -printf '%T@\n' | sort -n | tail -1)
compile_one() {
  local src="$1" obj="$OUT/obj/$(echo "${1#"$root"/}" | tr '/' '_').o"
  if [[ ! -f "$obj" || "$src" -nt "$obj" ]] || \
     (( $(printf '%.0f' "$newest_h") > $(stat -c %Y "$obj") )); then
    # shellcheck disable=SC2086
    if ! $CC $cflags -fsanitize=fuzzer-no-link -c "$src" -o "$obj" 2>"$obj.err"; then
      # A file that does not build (work in progress elsewhere) is left out;
      # a target that needs it then fails to link, the others still run.
      echo "fuzz: skipping ${src#"$root"/} (does not build, see $obj.err)" >&2
      rm -f "$obj"
      return 0
    fi
  fi
  echo "$obj"
}
export -f compile_one; export OUT root CC cflags newest_h
objs=$(printf '%s\n' "${srcs[@]}" | xargs -P "$JOBS" -I{} bash -c 'compile_one "$@"' _ {})
rm -f "$OUT/libpulsarc-fuzz.a"
# shellcheck disable=SC2086
ar rcs "$OUT/libpulsarc-fuzz.a" $objs

if (( seeds )); then
  # shellcheck disable=SC2086
  $CC $cflags -fsanitize=fuzzer-no-link "$here/gen_seeds.c" "$OUT/libpulsarc-fuzz.a" $libs -o "$OUT/bin/gen_seeds"
  "$OUT/bin/gen_seeds" "$here/corpus"
  echo "fuzz: seeds written to $here/corpus"
fi

if (( ${#targets[@]} == 0 )); then
  for f in "$here"/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi

status=0
printf '%-20s %12s %10s %8s  %s\n' target execs exec/s cov result
for t in "${targets[@]}"; do
  if [[ "$t" == fuzz_admin_json ]] && [[ "$defs" != *PULSARC_WITH_CURL* ]]; then
    printf '%-20s %12s %10s %8s  %s\n' "$t" - - - "skipped (no admin module)"; continue
  fi
  # shellcheck disable=SC2086
  if ! $CC $cflags -fsanitize=fuzzer "$here/$t.c" "$OUT/libpulsarc-fuzz.a" $libs -o "$OUT/bin/$t" 2>"$OUT/logs/$t.build"; then
    printf '%-20s %12s %10s %8s  %s\n' "$t" - - - "BUILD FAILED (see $OUT/logs/$t.build)"; status=1; continue
  fi
  mkdir -p "$OUT/corpus/$t" "$here/corpus/$t"
  log="$OUT/logs/$t.log"
  rc=0
  runs=()
  [[ -n "${FUZZ_RUNS:-}" ]] && runs=(-runs="$FUZZ_RUNS")
  "$OUT/bin/$t" -max_total_time="$SECS" "${runs[@]}" -rss_limit_mb=512 -malloc_limit_mb=256 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$t-" \
    "$OUT/corpus/$t" "$here/corpus/$t" >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  if (( rc == 0 )); then res=ok; else res="FINDING (exit $rc, see $log)"; status=1; fi
  printf '%-20s %12s %10s %8s  %s\n' "$t" "$execs" "$eps" "$cov" "$res"
done
exit $status
