#!/usr/bin/env python3
"""compare_py.py — drain N messages with PyPI's pulsar-client (C++ core).

The Python side of bench/compare.sh: subscribe
(Exclusive, initial position Earliest) to --topic at --url, then loop over
batch_receive() until N messages arrived, touching each one the way
bench/fetch does (message id; payload size only with --data, since data()
copies into a new bytes object). No acks, like fetch without --ack.

Window: from subscribe() having returned to the N-th message received;
CPU from resource.getrusage(RUSAGE_SELF) (all threads: the C++ io and
listener threads plus the interpreter). Prints one human line and one
`compare_py: key=value ...` line for the script. Figures only.
"""
import argparse
import resource
import sys
import time

import pulsar


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="pulsar://127.0.0.1:6655")
    ap.add_argument("--topic", default="persistent://public/default/replay-bench")
    ap.add_argument("--sub", default="bench-py")
    ap.add_argument("--messages", type=int, default=1000000)
    ap.add_argument("--queue", type=int, default=10000, help="receiver_queue_size (fetch's default)")
    ap.add_argument("--batch", type=int, default=1000, help="batch_receive max messages")
    ap.add_argument("--data", action="store_true", help="call data() on every message (a copy)")
    ap.add_argument("--idle-ms", type=int, default=5000)
    ap.add_argument("--label", default="python")
    o = ap.parse_args()

    client = pulsar.Client(o.url, operation_timeout_seconds=10,
                           logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Error))
    status = "ok"
    n = nbytes = 0
    try:
        consumer = client.subscribe(
            o.topic, o.sub,
            consumer_type=pulsar.ConsumerType.Exclusive,
            initial_position=pulsar.InitialPosition.Earliest,
            receiver_queue_size=o.queue,
            batch_receive_policy=pulsar.ConsumerBatchReceivePolicy(o.batch, 64 << 20, 100))
    except Exception as e:  # noqa: BLE001 - report any set-up failure as a status
        print(f"compare_py: label={o.label} status=setup-failed error={e!r}".replace("\n", " "))
        client.close()
        return 1

    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.monotonic()
    last_progress = t0
    while n < o.messages:
        msgs = consumer.batch_receive()
        if not msgs:
            if (time.monotonic() - last_progress) * 1000 > o.idle_ms:
                status = "stalled"
                break
            continue
        last_progress = time.monotonic()
        for m in msgs:
            m.message_id()
            if o.data:
                nbytes += len(m.data())
        n += len(msgs)
    t1 = time.monotonic()
    r1 = resource.getrusage(resource.RUSAGE_SELF)

    wall = t1 - t0
    user = r1.ru_utime - r0.ru_utime
    sys_ = r1.ru_stime - r0.ru_stime
    mm = max(n, 1) / 1e6
    nv = r1.ru_nvcsw - r0.ru_nvcsw
    niv = r1.ru_nivcsw - r0.ru_nivcsw
    print(f"{o.label}: {n} msgs in {wall:.3f} s = {n / wall:.0f} msg/s; CPU {(user + sys_) / mm:.3f} s/M msgs "
          f"(user {user / mm:.3f}, sys {sys_ / mm:.3f}); csw {(nv + niv) / mm:.0f}/M; "
          f"pulsar-client {getattr(pulsar, '__version__', '?')}, data()={'yes' if o.data else 'no'}")
    print(f"compare_py: label={o.label} status={status} msgs={n} bytes={nbytes} wall_s={wall:.3f} "
          f"msgs_per_s={n / wall:.0f} user_s={user:.3f} sys_s={sys_:.3f} cpu_s_per_M={(user + sys_) / mm:.4f} "
          f"user_s_per_M={user / mm:.4f} sys_s_per_M={sys_ / mm:.4f} nvcsw_per_M={nv / mm:.0f} "
          f"nivcsw_per_M={niv / mm:.0f} queue={o.queue} data={int(o.data)}")
    sys.stdout.flush()
    consumer.close()
    client.close()
    return 0 if status == "ok" else 2


if __name__ == "__main__":
    sys.exit(main())
