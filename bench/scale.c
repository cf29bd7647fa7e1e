/*
 * scale — many producers and consumers in one process: what they cost to
 * create and to keep.
 *
 * Design notes
 *  - For each count N of --counts (default 1,100,1000,10000): one client,
 *    N producers and N consumers over N topics (producer i and consumer i
 *    share topic i, fresh names per run), created one after the other
 *    through the public API. Printed: the time to create them all, then,
 *    after --idle seconds with nothing sent (keep-alives only), the
 *    resident set, the thread count, open descriptors and the CPU the
 *    process used while idle, as a percentage of one core.
 *  - --namespace (default public/default): a namespace with many bundles
 *    spreads the broker's lookups and topic loads at 10,000.
 *  - The client CPU spent creating is printed beside the wall time, so a
 *    slow create can be told apart: broker (topic load, ledger) or client.
 *  - Threads and descriptors are counted from /proc/self; RSS is VmRSS.
 *  - A failed create stops that count's run and is reported, with the
 *    number created before it (a broker may refuse 10,000 topics on a
 *    small machine; that is a figure too).
 *  - Output: one human line and one `scale: key=value ...` line per count.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "pulsarc.h"

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static int count_dir(const char *path) {
    DIR *d = opendir(path);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

typedef struct run {
    pulsarc_client_t *client;
    pulsarc_producer_t **prods;
    pulsarc_consumer_t **cons;
    int made;
} run_t;

/* Creates producer and consumer i; 0 on success, the error text in err. */
static int make_pair(run_t *r, const char *prefix, int i, char *err, size_t el) {
    char topic[256];
    snprintf(topic, sizeof topic, "%s-%d", prefix, i);
    if (pulsarc_producer_new(r->client, topic, NULL, &r->prods[i], err, el))
        return -1;
    return pulsarc_consumer_new(r->client, topic, "scale", NULL, &r->cons[i], err, el) ? -1 : 0;
}

static void teardown(run_t *r, int n) {
    for (int i = 0; i < n; i++) {
        pulsarc_producer_destroy(r->prods[i]);
        pulsarc_consumer_destroy(r->cons[i]);
    }
    pulsarc_client_destroy(r->client);
    free(r->prods);
    free(r->cons);
}

static void one_count(const char *url, const char *ns, int n, int idle_s) {
    run_t r = {.prods = calloc((size_t)n, sizeof *r.prods), .cons = calloc((size_t)n, sizeof *r.cons)};
    char err[512] = "", prefix[128];
    pulsarc_conf_t *conf = pulsarc_conf_new();
    snprintf(prefix, sizeof prefix, "persistent://%s/scale-%d-%ld-%d", ns, n, (long)time(NULL),
             (int)getpid());
    if (pulsarc_conf_set(conf, "serviceUrl", url, err, sizeof err) ||
        pulsarc_client_new(conf, &r.client, err, sizeof err)) {
        printf("scale: n=%d status=setup-failed (%s)\n", n, err);
        pulsarc_conf_destroy(conf);
        return;
    }
    pulsarc_conf_destroy(conf);
    double t0 = now_s(), cpu0 = cpu_s();
    while (r.made < n && make_pair(&r, prefix, r.made, err, sizeof err) == 0)
        r.made++;
    double create_s = now_s() - t0, create_cpu_s = cpu_s() - cpu0;
    double c0 = cpu_s(), w0 = now_s();
    sleep((unsigned)idle_s);
    double idle_pct = 100.0 * (cpu_s() - c0) / (now_s() - w0);
    int threads = count_dir("/proc/self/task"), fds = count_dir("/proc/self/fd");
    const char *status = r.made == n ? "ok" : "create-failed";
    printf("%d producers + %d consumers: created in %.2f s (client CPU %.2f s); after %d s idle: RSS %.1f "
           "MB, %d threads, %d fds, idle CPU %.2f%% of a core%s%s\n",
           r.made, r.made, create_s, create_cpu_s, idle_s, proc_status_mb("VmRSS:"), threads, fds, idle_pct,
           r.made == n ? "" : "; stopped by: ", r.made == n ? "" : err);
    printf("scale: n=%d status=%s made=%d create_s=%.2f create_cpu_s=%.2f rss_mb=%.1f threads=%d fds=%d "
           "idle_cpu_pct=%.2f\n",
           n, status, r.made, create_s, create_cpu_s, proc_status_mb("VmRSS:"), threads, fds, idle_pct);
    fflush(stdout);
    teardown(&r, r.made + (r.made < n)); /* the half-made pair too */
}

int main(int argc, char **argv) {
    const char *url = getenv("PULSAR_SERVICE_URL"), *counts = "1,100,1000,10000", *ns = "public/default";
    int idle = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--url")) url = argv[i + 1];
        else if (!strcmp(argv[i], "--counts")) counts = argv[i + 1];
        else if (!strcmp(argv[i], "--idle")) idle = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--namespace")) ns = argv[i + 1];
    }
    if (!url) {
        fprintf(stderr, "usage: %s --url URL [--counts 1,100,1000,10000] [--idle SECONDS] [--namespace TENANT/NS]\n", argv[0]);
        return 2;
    }
    for (const char *p = counts; *p;) {
        int n = atoi(p);
        if (n > 0)
            one_count(url, ns, n, idle);
        p += strcspn(p, ",");
        p += *p == ',';
    }
    return 0;
}
