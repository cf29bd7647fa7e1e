/*
 * LatencyJava: the Java client's side of bench/latency_compare.sh. Sends at
 * a fixed rate with the same producer settings as bench/latency and
 * measures each send's latency from the message's intended send time
 * (t0 + i / rate) to its callback, so a stall of the sender counts against
 * every message it delayed. One warm-up second at the same rate first, not
 * counted. With --e2e 1 the latency is to a consumer of the same process
 * receiving the message (its index + 1 travels as the event time), as
 * bench/latency does. Prints one `latency: key=value ...` line. Figures only.
 */
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;

public final class LatencyJava {
    private static String arg(String[] args, String name, String def) {
        for (int i = 0; i + 1 < args.length; i++)
            if (args[i].equals(name))
                return args[i + 1];
        return def;
    }

    private static void sleepUntil(long dueNanos) {
        long left;
        while ((left = dueNanos - System.nanoTime()) > 0)
            LockSupport.parkNanos(left);
    }

    private static double pct(double[] v, int n, double q) {
        int k = (int) Math.round(q * (n - 1));
        return v[Math.min(k, n - 1)] * 1e3;
    }

    public static void main(String[] args) throws Exception {
        String url = arg(args, "--url", "pulsar://127.0.0.1:6650");
        String topic = arg(args, "--topic", "persistent://public/default/latency-bench");
        int rate = Integer.parseInt(arg(args, "--rate", "1000"));
        int seconds = Integer.parseInt(arg(args, "--seconds", "10"));
        int size = Integer.parseInt(arg(args, "--size", "1024"));
        boolean batch = !arg(args, "--batch", "1").equals("0");
        String label = arg(args, "--label", "java");
        boolean e2e = arg(args, "--e2e", "0").equals("1");
        int warm = rate, n = rate * seconds;
        double[] lat = new double[n];
        AtomicLong failures = new AtomicLong();
        CountDownLatch done = new CountDownLatch(warm + n);
        byte[] value = new byte[size];
        long[] dueOf = new long[warm + n];
        long lateMax = 0; // how far the paced loop itself fell behind, at worst
        try (PulsarClient client = PulsarClient.builder().serviceUrl(url).build();
             Consumer<byte[]> consumer = e2e ? client.newConsumer().topic(topic).subscriptionName("latency-e2e")
                     .receiverQueueSize(10000).subscribe() : null;
             Producer<byte[]> producer = client.newProducer().topic(topic).blockIfQueueFull(true)
                     .maxPendingMessages(100000).enableBatching(batch)
                     .batchingMaxPublishDelay(1, TimeUnit.MILLISECONDS).batchingMaxMessages(1000)
                     .batchingMaxBytes(128 * 1024).create()) {
            long t0 = System.nanoTime() + 10_000_000L;
            for (int i = 0; i < warm + n; i++)
                dueOf[i] = t0 + (long) (i * 1e9 / rate);
            Thread rx = new Thread(() -> {
                try {
                    for (int seen = 0; seen < warm + n; seen++) {
                        Message<byte[]> m = consumer.receive(30, TimeUnit.SECONDS);
                        if (m == null)
                            break;
                        long now = System.nanoTime();
                        int idx = (int) (m.getEventTime() - 1);
                        if (idx >= warm && idx < warm + n)
                            lat[idx - warm] = (now - dueOf[idx]) / 1e9;
                    }
                } catch (Exception ex) {
                    failures.incrementAndGet();
                }
            });
            if (e2e)
                rx.start();
            for (int i = 0; i < warm + n; i++) {
                long due = dueOf[i];
                sleepUntil(due);
                lateMax = Math.max(lateMax, System.nanoTime() - due);
                final int slot = i - warm;
                producer.newMessage().value(value).eventTime(i + 1).sendAsync().whenComplete((id, e) -> {
                    double l = (System.nanoTime() - due) / 1e9;
                    if (e != null)
                        failures.incrementAndGet();
                    if (slot >= 0 && !e2e)
                        lat[slot] = e == null ? l : -1;
                    done.countDown();
                });
            }
            done.await(120, TimeUnit.SECONDS);
            if (e2e)
                rx.join();
        }
        double[] ok = Arrays.stream(lat).filter(x -> x > 0).sorted().toArray();
        int m = ok.length;
        String status = failures.get() > 0 ? "errors" : m == n ? "ok" : "short";
        System.out.printf("latency: label=%s status=%s mode=%s rate=%d size=%d batch=%d msgs=%d p50_ms=%.3f "
                + "p99_ms=%.3f p999_ms=%.3f max_ms=%.3f sender_late_ms=%.3f%n", label, status, e2e ? "e2e" : "send", rate, size,
                batch ? 1 : 0, m,
                m > 0 ? pct(ok, m, 0.5) : 0, m > 0 ? pct(ok, m, 0.99) : 0, m > 0 ? pct(ok, m, 0.999) : 0,
                m > 0 ? ok[m - 1] * 1e3 : 0, lateMax / 1e6);
    }
}
