/*
 * FetchJava: the Java client's side of bench/compare.sh. Drains N messages with org.apache.pulsar.client (the jar the
 * test broker's classpath already holds, so nothing more is fetched):
 * Exclusive subscription at Earliest, receiverQueueSize as bench/fetch, a
 * plain receive() loop touching each message's id (and, with --data, its
 * payload), no acks, like fetch without --ack.
 *
 * Window: from subscribe() having returned to the N-th message; CPU is the
 * whole process's (OperatingSystemMXBean.getProcessCpuTime: io, listener,
 * JIT and GC threads), as getrusage(RUSAGE_SELF) for the C programs.
 * Prints one `java: key=value ...` line for the script. Figures only.
 */
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;

public final class FetchJava {
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

    public static void main(String[] args) throws Exception {
        String url = arg(args, "--url", "pulsar://127.0.0.1:6655");
        String topic = arg(args, "--topic", "persistent://public/default/replay-bench");
        String sub = arg(args, "--sub", "bench-java");
        long want = Long.parseLong(arg(args, "--messages", "1000000"));
        int queue = Integer.parseInt(arg(args, "--queue", "10000"));
        boolean data = java.util.Arrays.asList(args).contains("--data");
        String label = arg(args, "--label", data ? "java-data" : "java");
        try (PulsarClient client = PulsarClient.builder().serviceUrl(url).build();
             Consumer<byte[]> consumer = client.newConsumer().topic(topic).subscriptionName(sub)
                     .subscriptionType(SubscriptionType.Exclusive)
                     .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                     .receiverQueueSize(queue).subscribe()) {
            long t0 = System.nanoTime(), c0 = cpuNanos(), got = 0, bytes = 0, ids = 0;
            while (got < want) {
                Message<byte[]> m = consumer.receive(30, TimeUnit.SECONDS);
                if (m == null)
                    break;
                ids += m.getMessageId().hashCode() & 1; /* keep the id lookup */
                if (data)
                    bytes += m.getData().length;
                got++;
            }
            double secs = (System.nanoTime() - t0) / 1e9, cpu = (cpuNanos() - c0) / 1e9;
            String status = got == want ? "ok" : "short";
            System.out.printf("java: status=%s label=%s msgs=%d secs=%.3f msgs_per_s=%.0f cpu_s=%.3f "
                    + "cpu_s_per_M=%.3f bytes=%d ids=%d%n", status, label, got, secs, got / secs, cpu,
                    cpu / (got / 1e6), bytes, ids);
        }
    }
}
