/*
 * ProduceJava: the Java client's side of bench/produce_compare.sh. Publishes
 * N messages with org.apache.pulsar.client (the jar the test broker's
 * classpath already holds) under the same settings as bench/produce:
 * sendAsync in a loop, blockIfQueueFull with maxPendingMessages = --pending,
 * batched (1 ms, 1,000 messages, 128 KiB) or not, one byte[] reused as the
 * value of every message.
 *
 * Window: from create() having returned to the N-th send callback; CPU is
 * the whole process's (OperatingSystemMXBean.getProcessCpuTime: io, JIT and
 * GC threads), as getrusage(RUSAGE_SELF) for the C program; RSS is VmHWM.
 * Prints one `produce: key=value ...` line for the script. Figures only.
 */
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;

public final class ProduceJava {
    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static String arg(String[] args, String name, String def) {
        for (int i = 0; i + 1 < args.length; i++)
            if (args[i].equals(name))
                return args[i + 1];
        return def;
    }

    private static double peakRssMb() {
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/self/status")))
                if (line.startsWith("VmHWM:"))
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
        } catch (Exception e) {
            /* no /proc: report 0 */
        }
        return 0;
    }

    public static void main(String[] args) throws Exception {
        String url = arg(args, "--url", "pulsar://127.0.0.1:6650");
        String topic = arg(args, "--topic", "persistent://public/default/produce-bench");
        long n = Long.parseLong(arg(args, "--messages", "1000000"));
        int size = Integer.parseInt(arg(args, "--size", "100"));
        boolean batch = !arg(args, "--batch", "1").equals("0");
        int pending = Integer.parseInt(arg(args, "--pending", "1000"));
        String label = arg(args, "--label", "java");
        byte[] value = new byte[size];
        java.util.Arrays.fill(value, (byte) 'x');
        AtomicLong ok = new AtomicLong(), bad = new AtomicLong();
        CountDownLatch all = new CountDownLatch(1);
        try (PulsarClient client = PulsarClient.builder().serviceUrl(url).build();
             Producer<byte[]> producer = client.newProducer().topic(topic).blockIfQueueFull(true)
                     .maxPendingMessages(pending).enableBatching(batch)
                     .batchingMaxPublishDelay(1, TimeUnit.MILLISECONDS).batchingMaxMessages(1000)
                     .batchingMaxBytes(128 * 1024).create()) {
            long t0 = System.nanoTime(), c0 = cpuNanos();
            for (long i = 0; i < n; i++) {
                producer.sendAsync(value).whenComplete((id, e) -> {
                    if (e == null)
                        ok.incrementAndGet();
                    else
                        bad.incrementAndGet();
                    if (ok.get() + bad.get() >= n)
                        all.countDown();
                });
            }
            producer.flush();
            all.await(120, TimeUnit.SECONDS);
            double secs = (System.nanoTime() - t0) / 1e9, cpu = (cpuNanos() - c0) / 1e9;
            long got = ok.get();
            String status = bad.get() > 0 ? "errors" : got == n ? "ok" : "short";
            System.out.printf("produce: label=%s status=%s msgs=%d errors=%d size=%d batch=%d wall_s=%.3f "
                    + "msgs_per_s=%.0f cpu_s=%.3f cpu_s_per_M=%.3f rss_mb=%.1f%n", label, status, got,
                    bad.get(), size, batch ? 1 : 0, secs, got / secs, cpu, cpu / (got / 1e6), peakRssMb());
        }
    }
}
