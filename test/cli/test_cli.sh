#!/usr/bin/env bash
# Live tests of the `pulsarc` command-line tool against a real broker.
#
#   test/broker/run-with-broker.sh bash test/cli/test_cli.sh
#
# Needs PULSAR_SERVICE_URL (and PULSAR_ADMIN_URL for the admin verbs), as
# run-with-broker.sh exports them. Builds first with `make` unless
# PULSARC_CLI_SKIP_BUILD=1; PULSARC_CLI names another binary. Uses only
# bash, grep and sed (the tool's JSON has a fixed field order), so it runs
# on a bare Debian. Prints "N passed, N failed" last; exits 1 on failure.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

passed=0
failed=0
ok() { passed=$((passed + 1)); printf 'ok    %s\n' "$1"; }
bad() { failed=$((failed + 1)); printf 'FAIL  %s\n' "$1"; [[ -n "${2:-}" ]] && printf '      %s\n' "$2"; }
# check NAME CMD...: passes when CMD succeeds.
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
finish() { echo; echo "$passed passed, $failed failed"; [[ $failed == 0 ]]; exit $?; }

if [[ -z "${PULSAR_SERVICE_URL:-}" ]]; then
    echo "PULSAR_SERVICE_URL is not set: run under test/broker/run-with-broker.sh"
    bad "broker available"
    finish
fi
if [[ "${PULSARC_CLI_SKIP_BUILD:-0}" != 1 ]]; then
    if make -s all >/tmp/pulsarc-cli-build.$$ 2>&1; then ok "make builds the CLI"; else
        bad "make builds the CLI" "$(tail -5 /tmp/pulsarc-cli-build.$$)"; fi
    rm -f /tmp/pulsarc-cli-build.$$
fi
CLI=${PULSARC_CLI:-build/pulsarc}
[[ -x "$CLI" ]] || { bad "binary $CLI exists"; finish; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run_id="$$-$(date +%s)"
topic() { echo "cli-$1-$run_id"; }
# run NAME: runs the rest with stdout in $work/NAME.out, stderr in $work/NAME.err; sets $rc.
run() { local n=$1; shift; "$@" >"$work/$n.out" 2>"$work/$n.err"; rc=$?; }
out() { cat "$work/$1.out"; }
err() { cat "$work/$1.err"; }

# --- help ------------------------------------------------------------------
run help "$CLI" --help
check "--help exits 0" test "$rc" = 0
for v in produce consume read perf admin table tableview; do
    check "--help lists $v" grep -q "^  $v " "$work/help.out"
done
check "--help documents the precedence" grep -q "environment: PULSAR_SERVICE_URL" "$work/help.out"
for v in produce consume read "perf produce" "perf consume" "admin topics create"; do
    # shellcheck disable=SC2086
    run vhelp "$CLI" $v --help
    check "$v --help exits 0 and documents --service-url" \
        bash -c "[[ $rc == 0 ]] && grep -q -- '--service-url' '$work/vhelp.out'"
done
run phelp "$CLI" perf produce --help
check "perf produce --help documents -r and -time" \
    bash -c "grep -q -- '-r, --rate' '$work/phelp.out' && grep -q -- '-time, --test-duration' '$work/phelp.out'"

# --- usage errors name the flag and the value ------------------------------
usage_error() { # NAME EXPECTED-TEXT ARGS...
    local name=$1 want=$2; shift 2
    run usage "$CLI" "$@"
    if [[ $rc == 2 ]] && grep -qF -- "$want" "$work/usage.err"; then ok "$name"; else
        bad "$name" "exit $rc, stderr: $(err usage | head -2)"; fi
}
usage_error "bad --rate value" "-r 'fast'" produce t -m x -r fast
usage_error "bad --count value" "--count '0'" produce t -m x --count 0
usage_error "unknown flag" "unknown flag '--nope'" consume t -s s --nope
usage_error "missing value" "--subscription needs a value" consume t --subscription
usage_error "bad format" "--format 'yaml'" consume t -s s -o yaml
usage_error "bad start id" "--start-message-id 'soon'" read t -m soon
usage_error "missing subscription" "missing --subscription" consume t
usage_error "tableview takes raw or json only" "--format 'hex'" tableview t -o hex
usage_error "missing topic" "missing TOPIC" produce -m x
usage_error "bad enum through a flag" "-t Sometimes: subscriptionType" consume t -s s -t Sometimes
usage_error "unknown key through --conf" "-C nosuchKey=1: unknown configuration key" produce t -m x -C nosuchKey=1
usage_error "bad URL names its flag" "from -u notaurl" produce t -m x -u notaurl
usage_error "unknown verb" "unknown verb 'frobnicate'" frobnicate
usage_error "zero queue says why the loop cannot use it" "--receiver-queue-size 0 (zero queue)" \
    consume "$(topic zq)" -s s -n 1 --receiver-queue-size 0
printf 'serviceUrl=%s\n\nbrokerServiceURL=oops\n' "$PULSAR_SERVICE_URL" >"$work/typo.conf"
usage_error "client.conf unknown key names file:line" "$work/typo.conf:3: unknown key 'brokerServiceURL'" \
    produce t -m x --client-conf "$work/typo.conf"

# --- produce, then consume as JSON ------------------------------------------
T1=$(topic kv)
N=10
msgs=()
for i in $(seq 0 $((N - 1))); do msgs+=(-m "msg-$i"); done
run produce "$CLI" produce "$T1" "${msgs[@]}" -k key-1 -p color=blue -p "note=a b=c"
check "produce exits 0" test "$rc" = 0
check "produce prints $N ids" test "$(out produce | grep -cE '^[0-9]+:[0-9]+:-?[0-9]+(:[0-9]+)?$')" = $N
check "produce summary on stderr" grep -q "$N message(s) sent to persistent://public/default/$T1" "$work/produce.err"

run consume "$CLI" consume "$T1" -s sub-1 -p Earliest -n $N -o json --timeout 30
check "consume exits 0" test "$rc" = 0
check "consume prints $N JSON lines" test "$(out consume | grep -c '^{"id":')" = $N
for i in 0 4 9; do
    check "payload msg-$i received in order" \
        bash -c "sed -n $((i + 1))p '$work/consume.out' | grep -q '\"payload\":\"msg-$i\"'"
done
check "every message has the key" test "$(out consume | grep -c '"key":"key-1"')" = $N
check "every message has both properties" \
    test "$(out consume | grep -c '"properties":{"color":"blue","note":"a b=c"}')" = $N
check "topic in full form" grep -q "\"topic\":\"persistent://public/default/$T1\"" "$work/consume.out"
out consume | sed -E 's/^\{"id":"([^"]*)".*/\1/' >"$work/consumed.ids"
check "consumed ids equal the produced ids" diff -q "$work/produce.out" "$work/consumed.ids"
check "consume summary on stderr" grep -q "$N message(s) received" "$work/consume.err"

run again "$CLI" consume "$T1" -s sub-1 -n 1 --timeout 2
check "acknowledged messages are not redelivered" \
    bash -c "[[ $rc == 0 ]] && [[ ! -s '$work/again.out' ]] && grep -q '0 message(s)' '$work/again.err'"

# --- read --------------------------------------------------------------------
run rd "$CLI" read "$T1" -m earliest -n 0 -e
check "read from earliest exits 0" test "$rc" = 0
check "read from earliest gives every payload in order" \
    diff -q <(printf 'msg-%d\n' $(seq 0 $((N - 1)))) "$work/rd.out"
id5=$(sed -n 5p "$work/produce.out")
run read5 "$CLI" read "$T1" -m "$id5" -n 0 -e
check "read after an id starts at the next message" \
    diff -q <(printf 'msg-%d\n' $(seq 5 $((N - 1)))) "$work/read5.out"
run read5i "$CLI" read "$T1" -m "$id5" -i -n 2 -o raw
check "read --inclusive starts at the id" diff -q <(printf 'msg-4\nmsg-5\n') "$work/read5i.out"
run readl "$CLI" read "$T1" -m latest -n 0 -e
check "read from latest with --until-end stops at once" \
    bash -c "[[ $rc == 0 ]] && [[ ! -s '$work/readl.out' ]]"

# --- tableview -----------------------------------------------------------------
T7=$(topic tv)
for kv in b=one a=two b=three c=four c=; do # c= : an empty value deletes c
    "$CLI" produce "$T7" -k "${kv%%=*}" -m "${kv#*=}" -q 2>>"$work/tvp.err"
done
run tv "$CLI" tableview "$T7"
check "tableview prints the latest value of each key, sorted, deleted keys left out" \
    bash -c "[[ $rc == 0 ]] && diff -q <(printf 'a\ttwo\nb\tthree\n') '$work/tv.out'"
check "tableview counts the keys on stderr" grep -q "2 key(s)" "$work/tv.err"
run tvj "$CLI" tableview "$T7" -o json
check "tableview -o json" \
    diff -q <(printf '{"key":"a","value":"two"}\n{"key":"b","value":"three"}\n') "$work/tvj.out"

# --- stdin, files, binary payloads ---------------------------------------------
T2=$(topic src)
printf 'line one\nline "two"\ttab\n' | "$CLI" produce "$T2" -q 2>"$work/stdin.err"
check "produce from stdin lines" grep -q "2 message(s) sent" "$work/stdin.err"
printf '\x00\x01\xfe\xff' >"$work/bin"
run file "$CLI" produce "$T2" -f "$work/bin" --disable-batching -z LZ4
check "produce a binary file" test "$rc" = 0
run cons2 "$CLI" consume "$T2" -s s -p Earliest -n 3 -o json --timeout 30
check "line payloads are JSON-escaped" grep -qF '"payload":"line \"two\"\ttab"' "$work/cons2.out"
check "a binary payload comes as base64" grep -qF '"payload_base64":"AAH+/w=="' "$work/cons2.out"
run hex "$CLI" read "$T2" -m earliest -n 3 -o hex
check "hex format dumps bytes" grep -q '^00000000  00 01 fe ff' "$work/hex.out"

# --- configuration precedence, live --------------------------------------------
printf 'brokerServiceUrl=%s\nwebServiceUrl=%s\n' "$PULSAR_SERVICE_URL" "${PULSAR_ADMIN_URL:-}" >"$work/good.conf"
printf 'brokerServiceUrl=pulsar://127.0.0.1:1\n' >"$work/dead.conf"
run cf env -u PULSAR_SERVICE_URL "$CLI" produce "$T2" -m conf -q --client-conf "$work/good.conf"
check "client.conf alone supplies the URL" test "$rc" = 0
run cfenv env -u PULSAR_SERVICE_URL PULSAR_CLIENT_CONF="$work/good.conf" "$CLI" produce "$T2" -m conf -q
check "\$PULSAR_CLIENT_CONF names the file" test "$rc" = 0
run envwins "$CLI" produce "$T2" -m conf -q --client-conf "$work/dead.conf"
check "environment beats client.conf" test "$rc" = 0
run flagwins env PULSAR_SERVICE_URL=pulsar://127.0.0.1:1 "$CLI" produce "$T2" -m conf -q -u "$PULSAR_SERVICE_URL"
check "flag beats environment" test "$rc" = 0
run dead env PULSAR_SERVICE_URL=pulsar://127.0.0.1:1 "$CLI" produce "$T2" -m conf -q -C operationTimeoutMs=3000
check "an unreachable broker is a runtime error (exit 1)" test "$rc" = 1

# --- perf ------------------------------------------------------------------------
T3=$(topic perf)
run perf "$CLI" perf produce "$T3" -r 300 -s 64 -time 3 --warmup-time 0
check "perf produce exits 0" test "$rc" = 0
check "perf produce prints a rate line per second" \
    test "$(out perf | grep -cE '^pulsarc perf produce \[ *[0-9.]+ s\] +[0-9.]+ msg/s')" -ge 2
check "perf produce prints percentiles" grep -qE 'percentiles \(ms\):  p50 [0-9.]+ .* p99 [0-9.]+  p99.9 ' "$work/perf.out"
check "perf produce prints a histogram" grep -qE '^  \[ *[0-9.]+, *[0-9.]+\) +[0-9]+ ' "$work/perf.out"
total=$(out perf | sed -nE 's/^pulsarc perf produce: ([0-9]+) messages in.*/\1/p')
# The rate is a ceiling (300/s for 3 s, ~900); how close a loaded machine
# comes to it is a figure, printed, not a check.
echo "note  perf produce sent ${total:-none} messages in 3 s at -r 300"
check "perf produce stays under the rate (at most ~900 in 3 s, got ${total:-none})" \
    bash -c "[[ -n '$total' ]] && (( $total >= 1 && $total <= 960 ))"
run perfc "$CLI" perf consume "$T3" -sp Earliest -m "${total:-1}" -time 30
check "perf consume receives everything" \
    bash -c "[[ $rc == 0 ]] && grep -q '^pulsarc perf consume: ${total:-x} messages' '$work/perfc.out'"
check "perf consume prints an end-to-end histogram" grep -qE '^end-to-end.* latency \(ms\)' "$work/perfc.out"

# --- admin -----------------------------------------------------------------------
if [[ -z "${PULSAR_ADMIN_URL:-}" ]] || "$CLI" admin topics list public/default 2>&1 | grep -q 'WITH_CURL=0'; then
    echo "skip  admin (no PULSAR_ADMIN_URL or no admin client in this build)"
else
    T4=$(topic adm)
    run a1 "$CLI" admin topics create "$T4" -p 3
    check "admin topics create -p 3" test "$rc" = 0
    run a2 "$CLI" admin topics partitions "$T4"
    check "admin topics partitions prints 3" test "$(out a2)" = 3
    run a3 "$CLI" admin topics list public/default --partitioned
    check "admin topics list --partitioned shows it" grep -qx "persistent://public/default/$T4" "$work/a3.out"
    run a4 "$CLI" admin topics create "$T4"
    check "creating it again is a runtime error naming HTTP 409" \
        bash -c "[[ $rc == 1 ]] && grep -q '409' '$work/a4.err'"
    # Unbatched: the broker counts a backlog in entries until a consumer has read them.
    T5=$(topic sub)
    "$CLI" produce "$T5" -q --disable-batching -m 1 -m 2 -m 3 -m 4 -m 5 2>/dev/null
    "$CLI" consume "$T5" -s sub-1 -n 1 --timeout 1 >/dev/null 2>&1
    run a5 "$CLI" admin subscriptions create "$T5" audit --position earliest
    check "admin subscriptions create" test "$rc" = 0
    run a6 "$CLI" admin subscriptions list "$T5"
    check "admin subscriptions list" bash -c "grep -qx audit '$work/a6.out' && grep -qx sub-1 '$work/a6.out'"
    run a7 "$CLI" admin subscriptions backlog "$T5" audit
    check "admin subscriptions backlog counts the 5 messages" test "$(out a7)" = 5
    run a8 "$CLI" admin topics stats "$T5"
    check "admin topics stats is JSON with the subscriptions" \
        grep -q '"msgInCounter":5,.*"audit":{"msgBacklog":5,' "$work/a8.out"
    run a9 "$CLI" admin subscriptions reset-cursor "$T5" audit --to-id earliest
    check "admin subscriptions reset-cursor" test "$rc" = 0
    run a9 "$CLI" admin subscriptions delete "$T5" audit
    check "admin subscriptions delete" test "$rc" = 0
    run a10 "$CLI" admin topics delete "$T4"
    check "admin topics delete (partitioned)" test "$rc" = 0
    run a11 "$CLI" admin topics partitions "$T4"
    check "a deleted topic is gone (exit 1, NOT_FOUND)" \
        bash -c "[[ $rc == 1 ]] && grep -q 'NOT_FOUND' '$work/a11.err'"
    usage_error "admin flag that does not apply" "unknown flag '--force'" admin topics create x --force
fi

# --- table: SQL table options through a sink and a source ----------------------
T6=$(topic tbl)
# service-url comes from $PULSAR_SERVICE_URL (the usual precedence), the rest from --option.
topts=(-O connector=pulsar -O "topics=$T6" -O value.format=json -O key.format=json -O key.fields=id)
tcols=(--column id:INT --column name:STRING --column score:DOUBLE --column ok:BOOLEAN)
for i in 1 2 3 4 5; do
    printf '{"id":%d,"name":"row-%d","score":%d.5,"ok":%s}\n' "$i" "$i" "$i" "$([[ $((i % 2)) == 1 ]] && echo true || echo false)"
done >"$work/rows.json"
run tw "$CLI" table write "${topts[@]}" "${tcols[@]}" <"$work/rows.json"
check "table write exits 0" test "$rc" = 0
check "table write reports 5 rows" grep -q "5 row(s) written" "$work/tw.err"
run tkey "$CLI" read "$T6" -m earliest -n 1 -o json
check "key.fields become the message key (base64 of {\"id\":1})" grep -qF '"key":"eyJpZCI6MX0="' "$work/tkey.out"
check "the value holds the non-key columns only" \
    grep -qF '"payload":"{\"name\":\"row-1\",\"score\":1.5,\"ok\":true}"' "$work/tkey.out"
run tr timeout 60 "$CLI" table read "${topts[@]}" "${tcols[@]}" -O source.stop.at-message-id=latest \
    -O source.subscription-name=cli-tbl-sub --metadata topic
check "table read with source.stop.at-message-id=latest ends by itself (exit 0)" test "$rc" = 0
sed -E "s/\\}\$/,\"topic\":\"persistent:\\/\\/public\\/default\\/$T6\"}/" "$work/rows.json" >"$work/rows.want"
check "table read gives the 5 rows back, with the topic metadata column" diff "$work/rows.want" "$work/tr.out"
check "table read reports 5 rows" grep -q "5 row(s) read" "$work/tr.err"
run tc "$CLI" table read "${topts[@]}" "${tcols[@]}" -O source.subscription-name=cli-tbl-sub2 --count 2 --timeout 30
check "table read --count 2 stops after 2 rows" \
    bash -c "[[ $rc == 0 ]] && diff <(head -2 '$work/rows.json') '$work/tc.out' >/dev/null"
run tpt "$CLI" table read "${topts[@]}" "${tcols[@]}" -O source.stop.at-message-id=latest \
    -O source.subscription-name=cli-tbl-sub3 --metadata publish_time --metadata message_id --timeout 30
check "publish_time and message_id metadata columns are printed" \
    test "$(grep -cE '"publish_time":[0-9]{13},"message_id":"[A-Za-z0-9+/=]+"\}$' "$work/tpt.out")" = 5
T7=$(topic tblraw)
printf 'plain one\nplain "two"\n' >"$work/rows.raw"
run trw "$CLI" table write -O connector=pulsar -O "topics=$T7" -O value.format=raw <"$work/rows.raw"
run trr "$CLI" table read -O connector=pulsar -O "topics=$T7" -O value.format=raw \
    -O source.stop.at-message-id=latest --timeout 30
check "raw format with the default value column round-trips" \
    diff <(printf '{"value":"plain one"}\n{"value":"plain \\"two\\""}\n') "$work/trr.out"
T8=$(topic tblev)
echo '{"id":7,"name":"e","event_time":1700000000123}' >"$work/ev.json"
run tev "$CLI" table write -O connector=pulsar -O "topics=$T8" -O value.format=json \
    --column id:INT --column name:STRING --metadata event_time <"$work/ev.json"
run tevr "$CLI" read "$T8" -m earliest -n 1 -o json
check "a writable event_time metadata column sets the event time" \
    bash -c "[[ $rc == 0 ]] && grep -q '\"event_time\":1700000000123' '$work/tevr.out'"
echo 'not json' >"$work/bad.json"
run tbad "$CLI" table write "${topts[@]}" "${tcols[@]}" <"$work/bad.json"
check "a malformed input line is a runtime error naming stdin:1" \
    bash -c "[[ $rc == 1 ]] && grep -q 'stdin:1: json' '$work/tbad.err' && grep -q '0 row(s) written' '$work/tbad.err'"
usage_error "table: key.fields without key.format is refused (exit 2)" \
    "The option 'key.fields' can only be declared if a key format is defined using 'key.format'." \
    table write -O connector=pulsar -O "topics=$T6" -O value.format=json -O key.fields=id --column id:INT
usage_error "table: two stop options are refused (exit 2)" "Only one of" \
    table read -O connector=pulsar -O "topics=$T6" -O value.format=json \
    -O source.stop.at-message-id=latest -O source.stop.at-publish-time=1
usage_error "table: a malformed --option" "--option 'topics': expected KEY=VALUE" \
    table read -O topics

# --- --metrics-port: consume serves Prometheus text on 127.0.0.1 ---------------
T7=$(topic metrics)
"$CLI" consume "$T7" -s msub -n 4 --timeout 60 --metrics-port 0 >"$work/mcons.out" 2>"$work/mcons.err" &
mpid=$!
mport=""
for _ in $(seq 1 200); do # bounded: 20 s to subscribe and listen
    mport=$(sed -n 's#.*metrics on http://127\.0\.0\.1:\([0-9]*\)/metrics#\1#p' "$work/mcons.err")
    [[ -n $mport ]] && break
    sleep 0.1
done
check "consume --metrics-port 0 announces a loopback port" test -n "$mport"
run mprod "$CLI" produce "$T7" -m a -m b -m c
mline="pulsar_client_consumer_message_received_count_total{pulsar_tenant=\"public\",pulsar_namespace=\"default\",pulsar_topic=\"persistent://public/default/$T7\",pulsar_subscription=\"msub\"} 3"
for _ in $(seq 1 100); do # bounded: 10 s for the 3 messages to arrive
    curl -s --max-time 5 "http://127.0.0.1:$mport/metrics" >"$work/scrape.out" || true
    grep -qF -- "$mline" "$work/scrape.out" && break
    sleep 0.1
done
check "a scrape counts the 3 messages received for the topic and subscription" \
    grep -qF -- "$mline" "$work/scrape.out"
check "the scrape has HELP and TYPE lines" \
    grep -q '^# TYPE pulsar_client_consumer_message_ack_total counter$' "$work/scrape.out"
check "a POST gets 405" \
    test "$(curl -s --max-time 5 -X POST -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/metrics")" = 405
run mprod2 "$CLI" produce "$T7" -m d # the fourth ends the consumer
wait "$mpid"
check "consume with --metrics-port exits 0 after its 4 messages" test "$?" = 0
usage_error "--metrics-port out of range" "--metrics-port '70000'" consume t -s s --metrics-port 70000

finish
