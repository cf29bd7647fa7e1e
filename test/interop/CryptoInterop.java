/*
 * The Java side of pulsarc's end-to-end encryption interop test, run as a
 * single-file program with the broker's classpath (the Java client and its
 * Bouncy Castle message crypto):
 *
 *   java -cp "$(cat $PULSARC_BROKER_CLASSPATH_FILE)" CryptoInterop.java produce URL N KEYS TOPIC...
 *       encrypts for every name=pem-path of KEYS (comma-separated public
 *       keys) and writes N messages per TOPIC in the shared pattern; the
 *       codec and batching come from the topic name ("-lz4-batch", ...); a
 *       topic whose name contains "chunk" gets one large chunked message.
 *   java ... CryptoInterop.java consume URL N KEYS TOPIC...
 *       decrypts with the name=pem-path private keys of KEYS (crypto
 *       failure action FAIL: a message it cannot decrypt never arrives)
 *       and checks every payload byte and the property "i".
 * Exit status 0 when every check passed; mismatches are printed.
 *
 * The pattern (mirrored in test/integration/test_crypto_interop.c):
 * payload of message i = 1 + (i * 37) % 700 bytes, byte k = (k * 31 + i * 7) & 0xff;
 * property "i" = i. Large message: 1,500,000 bytes of a 64-bit mix of k (incompressible,
 * so that it is chunked: the test broker's maxMessageSize is 1 MB).
 */
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.*;

public class CryptoInterop {
    static final int LARGE = 1_500_000;

    static byte[] payload(int i) {
        byte[] b = new byte[1 + (i * 37) % 700];
        for (int k = 0; k < b.length; k++) b[k] = (byte) ((k * 31 + i * 7) & 0xff);
        return b;
    }

    static byte[] large() {
        byte[] b = new byte[LARGE];
        for (int k = 0; k < LARGE; k++) { /* incompressible: really chunked */
            long v = k * 0x9E3779B97F4A7C15L;
            v ^= v >>> 29;
            v *= 0xBF58476D1CE4E5B9L;
            v ^= v >>> 32;
            b[k] = (byte) v;
        }
        return b;
    }

    /* Reads PEM files named by key name; no metadata. */
    static class FileKeys implements CryptoKeyReader {
        final Map<String, String> paths = new HashMap<>();

        FileKeys(String spec) {
            for (String kv : spec.split(",")) {
                String[] p = kv.split("=", 2);
                paths.put(p[0], p[1]);
            }
        }

        EncryptionKeyInfo read(String name) {
            if (!paths.containsKey(name)) return null; /* not ours: the client tries the next key */
            try {
                return new EncryptionKeyInfo(Files.readAllBytes(Paths.get(paths.get(name))), null);
            } catch (Exception e) {
                System.out.println("MISMATCH key " + name + ": " + e);
                return null;
            }
        }

        public EncryptionKeyInfo getPublicKey(String name, Map<String, String> meta) { return read(name); }

        public EncryptionKeyInfo getPrivateKey(String name, Map<String, String> meta) { return read(name); }
    }

    static int failures = 0;

    static void fail(String topic, String what) {
        System.out.println("MISMATCH " + topic + ": " + what);
        failures++;
    }

    static CompressionType codecOf(String topic) {
        for (CompressionType t : CompressionType.values())
            if (topic.contains("-" + t.name().toLowerCase() + "-")) return t;
        return CompressionType.NONE;
    }

    static void produce(PulsarClient client, String topic, int n, String keys) throws Exception {
        ProducerBuilder<byte[]> b = client.newProducer().topic(topic).cryptoKeyReader(new FileKeys(keys))
                .cryptoFailureAction(ProducerCryptoFailureAction.FAIL);
        for (String kv : keys.split(",")) b.addEncryptionKey(kv.split("=", 2)[0]);
        if (topic.contains("chunk")) {
            try (Producer<byte[]> p = b.enableBatching(false).enableChunking(true)
                    .compressionType(CompressionType.LZ4).create()) {
                p.newMessage().value(large()).property("i", "0").send();
                System.out.println("produced " + topic + ": 1 chunked");
            }
            return;
        }
        boolean batch = topic.contains("-batch");
        try (Producer<byte[]> p = b.compressionType(codecOf(topic)).enableBatching(batch)
                .batchingMaxMessages(25).batchingMaxPublishDelay(10, TimeUnit.SECONDS).create()) {
            for (int i = 0; i < n; i++)
                p.newMessage().value(payload(i)).property("i", String.valueOf(i)).sendAsync();
            p.flush();
            System.out.println("produced " + topic + ": " + n);
        }
    }

    static void consume(PulsarClient client, String topic, int n, String keys) throws Exception {
        try (Consumer<byte[]> c = client.newConsumer().topic(topic).subscriptionName("crypto-interop-" + keys.split("=")[0])
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .cryptoKeyReader(new FileKeys(keys)).cryptoFailureAction(ConsumerCryptoFailureAction.FAIL)
                .subscribe()) {
            int count = topic.contains("chunk") ? 1 : n;
            for (int i = 0; i < count; i++) {
                Message<byte[]> m = c.receive(30, TimeUnit.SECONDS);
                if (m == null) { fail(topic, "only " + i + " messages"); return; }
                byte[] want = topic.contains("chunk") ? large() : payload(i);
                if (!Arrays.equals(m.getData(), want))
                    fail(topic, "payload of #" + i + " (" + m.getData().length + " bytes)");
                if (!String.valueOf(topic.contains("chunk") ? 0 : i).equals(m.getProperty("i")))
                    fail(topic, "property i of #" + i);
                if (m.getEncryptionCtx().isEmpty() || m.getEncryptionCtx().get().getKeys().isEmpty())
                    fail(topic, "#" + i + " did not arrive encrypted");
                c.acknowledge(m);
            }
            System.out.println("checked " + topic + ": " + count);
        }
    }

    public static void main(String[] a) throws Exception {
        try (PulsarClient client = PulsarClient.builder().serviceUrl(a[1]).build()) {
            int n = Integer.parseInt(a[2]);
            for (int t = 4; t < a.length; t++) {
                if (a[0].equals("consume")) consume(client, a[t], n, a[3]);
                else produce(client, a[t], n, a[3]);
            }
        }
        System.exit(failures == 0 ? 0 : 1);
    }
}
