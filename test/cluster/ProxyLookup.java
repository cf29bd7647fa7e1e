// Readiness probe of the test cluster's proxy, run by start.sh as a Java
// single-file program on the cluster's classpath: a binary-protocol lookup
// through the proxy (the Java client's own, proxy-through-service-URL and
// all), printed as "TOPIC -> BROKER". Exits non-zero if the lookup fails.
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.impl.PulsarClientImpl;
import org.apache.pulsar.common.naming.TopicName;

public class ProxyLookup {
    public static void main(String[] args) throws Exception {
        String url = args[0], topic = args[1];
        try (PulsarClient client = PulsarClient.builder().serviceUrl(url)
                .operationTimeout(20, TimeUnit.SECONDS).build()) {
            var lookup = ((PulsarClientImpl) client).getLookup();
            var answer = lookup.getBroker(TopicName.get(topic)).get(30, TimeUnit.SECONDS);
            System.out.println(topic + " -> logical " + answer.getLogicalAddress()
                    + ", physical " + answer.getPhysicalAddress());
        }
    }
}
