/*
 * The Java client's own OAuth2 plugin against the test authorisation
 * server (test/oauth2/server.py): proves the server is one a real client
 * works with, and that pulsarc's authParams mean the same to Java.
 *
 *   java OAuth2Interop.java SERVICE_URL TOPIC COUNT CA_PEM AUTH_PARAMS_JSON
 *
 * Produces COUNT messages "java-oauth2-<i>" to TOPIC, authenticated with
 * AuthenticationOAuth2 and AUTH_PARAMS_JSON exactly as given, then prints
 * "produced COUNT". The issuer's certificate is verified against CA_PEM,
 * made the JVM's trust store for this run (the 4.0 plugin has no CA
 * setting of its own).
 */
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;

public class OAuth2Interop {
    static void trust(String caPem) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        try (FileInputStream in = new FileInputStream(caPem)) {
            ks.setCertificateEntry("pulsarc-test-ca",
                    CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        Path store = Files.createTempFile("pulsarc-oauth2-trust", ".p12");
        store.toFile().deleteOnExit();
        char[] pass = "pulsarc-test".toCharArray();
        try (FileOutputStream out = new FileOutputStream(store.toFile())) {
            ks.store(out, pass);
        }
        System.setProperty("javax.net.ssl.trustStore", store.toString());
        System.setProperty("javax.net.ssl.trustStorePassword", new String(pass));
        System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: OAuth2Interop SERVICE_URL TOPIC COUNT CA_PEM AUTH_PARAMS_JSON");
            System.exit(2);
        }
        trust(args[3]);
        int n = Integer.parseInt(args[2]);
        try (PulsarClient client = PulsarClient.builder()
                .serviceUrl(args[0])
                .authentication("org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2", args[4])
                .operationTimeout(30, TimeUnit.SECONDS)
                .build();
             Producer<String> p = client.newProducer(Schema.STRING).topic(args[1]).create()) {
            for (int i = 0; i < n; i++)
                p.send("java-oauth2-" + i);
        }
        System.out.println("produced " + n);
    }
}
