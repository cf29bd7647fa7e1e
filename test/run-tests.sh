#!/usr/bin/env bash
# Runs Check test binaries one after another and sums their results.
# VALGRIND=1 runs each under valgrind (leaks and errors fail the run).
# TESTS=substring keeps only binaries whose name contains it.
set -u
passed=0; failed=0; bad_bins=(); why=$(mktemp)
trap 'rm -f "$why"' EXIT
for bin in "$@"; do
  case "$bin" in *"${TESTS:-}"*) ;; *) continue ;; esac
  echo "=== $(basename "$bin")"
  log=$(mktemp)
  if [ "${VALGRIND:-0}" = 1 ]; then
    # valgrind runs one thread at a time; without --fair-sched a thread that
    # takes a lock in a loop (a metrics scraper) can keep the event-loop
    # thread from running for seconds and time out a connect.
    CK_FORK=no valgrind -q --fair-sched=yes --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
      "$bin" 2>&1 | tee "$log"
  else
    "$bin" 2>&1 | tee "$log"
  fi
  rc=${PIPESTATUS[0]}
  line=$(grep -E 'Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" | tail -n 1)
  if [ -n "$line" ]; then
    n=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
    f=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
    e=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
    passed=$((passed + n - f - e)); failed=$((failed + f + e))
  fi
  if [ "$rc" != 0 ] || [ -z "$line" ]; then
    bad_bins+=("$(basename "$bin") (exit $rc)")
    [ -z "$line" ] && failed=$((failed + 1))
    # Check's failure lines (file:line:F|E:case:test:...) and the output's
    # tail, repeated at the end where a CI log's tail shows them.
    { echo "--- $(basename "$bin") (exit $rc):"
      grep -E '^[^ :]+:[0-9]+:[EF]:' "$log" | head -n 6
      echo "    last lines:"; tail -n 8 "$log" | sed 's/^/    /'; } >> "$why"
  fi
  rm -f "$log"
done
echo
[ ${#bad_bins[@]} -gt 0 ] && { cat "$why"; echo "failing: ${bad_bins[*]}"; }
echo "tests: $passed passed, $failed failed"
# Callers that run several suites (.ci/run) collect the counts here.
if [ -n "${PULSARC_TEST_TOTALS:-}" ]; then echo "$passed $failed" >> "$PULSARC_TEST_TOTALS"; fi
[ "$failed" = 0 ] && [ ${#bad_bins[@]} = 0 ]
