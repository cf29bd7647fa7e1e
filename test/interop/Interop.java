/*
 * The Java side of pulsarc's producer interop test, run as a single-file
 * program with the broker's classpath (pulsar-client-original 4.0.7):
 *
 *   java -cp "$(cat $PULSARC_BROKER_CLASSPATH_FILE)" Interop.java consume URL N TOPIC...
 *       reads N messages from each TOPIC and checks every byte, key, property
 *       and event time against the shared pattern; a topic whose name
 *       contains "chunk" holds one large message instead.
 *   java ... Interop.java produce URL N TOPIC...
 *       writes N messages per TOPIC in the shared pattern; the codec and
 *       batching come from the topic name ("-lz4-batch", "-zstd-single", ...).
 *   java ... Interop.java keys URL SCHEME TOPIC KEY...
 *       sends one message per KEY to a partitioned TOPIC with hashingScheme
 *       SCHEME (JavaStringHash | Murmur3_32Hash); a KEY "b64:xx" is sent as
 *       keyBytes of the hex bytes xx.
 * Exit status 0 when every check passed; mismatches are printed.
 *
 * The pattern (mirrored in test/integration/test_producer_interop.c):
 * payload of message i = 20 + (i % 50) * 13 bytes, byte k = "pulsarc interop "[(k + i) % 16];
 * key "key-" + (i % 7); property "i" = i; event time 1700000000000 + i.
 * Large message: 2,600,000 bytes, byte k = (byte) ((k * 2654435761L) >>> 13).
 */
import java.util.concurrent.TimeUnit;
import java.util.Arrays;
import java.util.HexFormat;
import org.apache.pulsar.client.api.*;

public class Interop {
    static final byte[] TEXT = "pulsarc interop ".getBytes();
    static final int LARGE = 2_600_000;

    static byte[] payload(int i) {
        byte[] b = new byte[20 + (i % 50) * 13];
        for (int k = 0; k < b.length; k++) b[k] = TEXT[(k + i) % 16];
        return b;
    }

    static byte[] large() {
        byte[] b = new byte[LARGE];
        for (int k = 0; k < LARGE; k++) b[k] = (byte) ((k * 2654435761L) >>> 13);
        return b;
    }

    static int failures = 0;

    static void fail(String topic, String what) {
        System.out.println("MISMATCH " + topic + ": " + what);
        failures++;
    }

    static void checkOne(String topic, Message<byte[]> m, int i) {
        if (!Arrays.equals(m.getData(), payload(i))) fail(topic, "payload of #" + i);
        if (!("key-" + (i % 7)).equals(m.getKey())) fail(topic, "key of #" + i + ": " + m.getKey());
        if (!String.valueOf(i).equals(m.getProperty("i"))) fail(topic, "property i of #" + i);
        if (m.getEventTime() != 1700000000000L + i) fail(topic, "event time of #" + i);
        if (m.getSequenceId() != i) fail(topic, "sequence id of #" + i + ": " + m.getSequenceId());
    }

    static void consume(PulsarClient client, String topic, int n) throws Exception {
        try (Consumer<byte[]> c = client.newConsumer().topic(topic).subscriptionName("interop")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe()) {
            int count = topic.contains("chunk") ? 1 : n;
            for (int i = 0; i < count; i++) {
                Message<byte[]> m = c.receive(30, TimeUnit.SECONDS);
                if (m == null) { fail(topic, "only " + i + " messages"); return; }
                if (topic.contains("chunk")) {
                    if (!Arrays.equals(m.getData(), large())) fail(topic, "large payload, " + m.getData().length + " bytes");
                } else {
                    checkOne(topic, m, i);
                }
                c.acknowledge(m);
            }
            System.out.println("checked " + topic + ": " + count);
        }
    }

    static CompressionType codecOf(String topic) {
        for (CompressionType t : CompressionType.values())
            if (topic.contains("-" + t.name().toLowerCase() + "-")) return t;
        return CompressionType.NONE;
    }

    static void produce(PulsarClient client, String topic, int n) throws Exception {
        if (topic.contains("chunk")) { /* one large message, chunked by the Java client */
            try (Producer<byte[]> p = client.newProducer().topic(topic).enableBatching(false)
                    .enableChunking(true).compressionType(CompressionType.LZ4).create()) {
                p.send(large());
                System.out.println("produced " + topic + ": 1 chunked");
            }
            return;
        }
        boolean batch = topic.contains("-batch");
        try (Producer<byte[]> p = client.newProducer().topic(topic).compressionType(codecOf(topic))
                .enableBatching(batch).batchingMaxMessages(25)
                .batchingMaxPublishDelay(10, TimeUnit.SECONDS).create()) {
            for (int i = 0; i < n; i++)
                p.newMessage().value(payload(i)).key("key-" + (i % 7)).property("i", String.valueOf(i))
                        .eventTime(1700000000000L + i).sendAsync();
            p.flush();
            System.out.println("produced " + topic + ": " + n);
        }
    }

    static void keys(PulsarClient client, String scheme, String topic, String[] keys) throws Exception {
        try (Producer<byte[]> p = client.newProducer().topic(topic).enableBatching(false)
                .messageRoutingMode(MessageRoutingMode.RoundRobinPartition)
                .hashingScheme(HashingScheme.valueOf(scheme)).create()) {
            for (String k : keys) {
                TypedMessageBuilder<byte[]> b = p.newMessage().value(k.getBytes()).property("key", k);
                if (k.startsWith("b64:")) b.keyBytes(HexFormat.of().parseHex(k.substring(4)));
                else b.key(k);
                b.send();
            }
        }
    }

    public static void main(String[] a) throws Exception {
        try (PulsarClient client = PulsarClient.builder().serviceUrl(a[1]).build()) {
            if (a[0].equals("keys")) {
                keys(client, a[2], a[3], Arrays.copyOfRange(a, 4, a.length));
            } else {
                int n = Integer.parseInt(a[2]);
                for (int t = 3; t < a.length; t++) {
                    if (a[0].equals("consume")) consume(client, a[t], n);
                    else produce(client, a[t], n);
                }
            }
        }
        System.exit(failures == 0 ? 0 : 1);
    }
}
