/* test_facts.c — the facts are this machine's, the fingerprint is
 * stable, canonical and sensitive to what it covers, and the libvirt facts
 * come from a real libvirt connection (the test driver, which needs no
 * daemon). */
#include "worker/facts.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "tests/unit/check.h"
#include "tests/unit/tree.h"

/* The first line of a file, or "" when it cannot be read. */
static void first_line(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fgets(buf, (int)len, f) == NULL)
        buf[0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

static void test_real_values(const json_t *facts)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    CHECK_SAY(json_integer_value(json_object_get(facts, "cpus")) == cpus, "cpus == %ld (sysconf)",
              cpus);

    struct utsname u;
    uname(&u);
    const char *kernel = json_string_value(json_object_get(facts, "kernel"));
    CHECK_SAY(kernel && strcmp(kernel, u.release) == 0, "kernel == uname release \"%s\"",
              u.release);
    const char *arch = json_string_value(json_object_get(facts, "arch"));
    CHECK_SAY(arch && strcmp(arch, u.machine) == 0, "arch == uname machine \"%s\"", u.machine);

    char host[256] = "";
    gethostname(host, sizeof host);
    const char *hn = json_string_value(json_object_get(facts, "hostname"));
    CHECK_SAY(hn && strcmp(hn, host) == 0, "hostname == gethostname \"%s\"", host);

    json_int_t mem = json_integer_value(json_object_get(facts, "mem_total_kb"));
    CHECK_SAY(mem > 0, "mem_total_kb > 0 (%lld)", (long long)mem);

    const char *model = json_string_value(json_object_get(facts, "cpu_model"));
    CHECK_SAY(model == NULL || model[0] != '\0', "cpu_model absent or non-empty (%s)",
              model ? model : "absent");

    /* Topology, when present, must multiply back to the CPU count. */
    json_t *cores = json_object_get(facts, "cores");
    json_t *tpc = json_object_get(facts, "threads_per_core");
    json_t *sockets = json_object_get(facts, "sockets");
    if (cores != NULL && tpc != NULL) {
        CHECK_SAY(json_integer_value(cores) * json_integer_value(tpc) == cpus,
                  "cores %lld x threads_per_core %lld == cpus",
                  (long long)json_integer_value(cores), (long long)json_integer_value(tpc));
        CHECK_SAY(json_integer_value(sockets) >= 1 &&
                      json_integer_value(sockets) <= json_integer_value(cores),
                  "1 <= sockets (%lld) <= cores", (long long)json_integer_value(sockets));
    } else {
        printf("skip  topology not readable here\n");
    }

    /* THP: the bracketed choice of the real file. */
    char line[256];
    first_line("/sys/kernel/mm/transparent_hugepage/enabled", line, sizeof line);
    const char *thp = json_string_value(json_object_get(facts, "thp"));
    if (line[0] != '\0') {
        char want[64] = "";
        char *open = strchr(line, '[');
        if (open != NULL)
            sscanf(open + 1, "%63[^]]", want);
        CHECK_SAY(thp && strcmp(thp, want) == 0, "thp == \"%s\" from \"%s\"", want, line);
    } else {
        CHECK_SAY(thp == NULL, "thp absent without the sysfs file");
    }

    /* KVM parameters mirror sysfs. */
    first_line("/sys/module/kvm/parameters/halt_poll_ns", line, sizeof line);
    json_t *hp = json_object_get(json_object_get(facts, "kvm"), "halt_poll_ns");
    if (line[0] != '\0')
        CHECK_SAY(hp && json_integer_value(hp) == atoll(line), "kvm.halt_poll_ns == %s", line);
    else
        CHECK_SAY(hp == NULL, "kvm.halt_poll_ns absent without the kvm module");

    /* virtualization.vm agrees with the hypervisor CPU flag when there is one. */
    FILE *f = fopen("/proc/cpuinfo", "r");
    int flag = 0;
    char buf[8192];
    while (f && fgets(buf, sizeof buf, f))
        if (strncmp(buf, "flags", 5) == 0) {
            flag = strstr(buf, " hypervisor") != NULL;
            break;
        }
    if (f)
        fclose(f);
    json_t *virt = json_object_get(facts, "virtualization");
    CHECK_SAY(json_is_boolean(json_object_get(virt, "vm")), "virtualization.vm is a boolean");
    if (flag)
        CHECK_SAY(json_is_true(json_object_get(virt, "vm")),
                  "hypervisor CPU flag set -> virtualization.vm true (hypervisor %s)",
                  json_string_value(json_object_get(virt, "hypervisor")));
    const char *kind = json_string_value(json_object_get(facts, "kind"));
    CHECK_SAY(kind &&
                  strcmp(kind, json_is_true(json_object_get(virt, "vm")) ? "guest" : "host") == 0,
              "kind \"%s\" follows virtualization.vm", kind ? kind : "(none)");

    char uuid[128];
    first_line("/sys/class/dmi/id/product_uuid", uuid, sizeof uuid);
    const char *fu = json_string_value(json_object_get(facts, "dmi_product_uuid"));
    if (uuid[0] != '\0') {
        for (char *p = uuid; *p; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        CHECK_SAY(fu && strcmp(fu, uuid) == 0, "dmi_product_uuid == lowercased sysfs value");
    } else {
        CHECK_SAY(fu == NULL, "dmi_product_uuid absent when unreadable");
    }
}

static void test_fingerprint(const json_t *facts)
{
    char *a = hv_facts_fingerprint(facts);
    json_t *again = hv_facts_collect();
    char *b = hv_facts_fingerprint(again);
    CHECK_SAY(a && strlen(a) == 16 && strspn(a, "0123456789abcdef") == 16,
              "fingerprint is 16 hex digits (%s)", a ? a : "NULL");
    CHECK_SAY(a && b && strcmp(a, b) == 0, "fingerprint stable across two collections");

    json_t *copy = json_deep_copy(facts);
    json_object_set_new(copy, "hostname", json_string("some-other-name"));
    char *c = hv_facts_fingerprint(copy);
    CHECK_SAY(c && strcmp(a, c) == 0, "hostname does not change the fingerprint");

    json_object_set_new(copy, "cpus",
                        json_integer(json_integer_value(json_object_get(facts, "cpus")) + 1));
    char *d = hv_facts_fingerprint(copy);
    CHECK_SAY(d && strcmp(a, d) != 0, "cpus + 1 changes the fingerprint (%s)", d ? d : "NULL");

    json_t *copy2 = json_deep_copy(facts);
    json_object_set_new(copy2, "thp", json_string("never-seen"));
    char *e = hv_facts_fingerprint(copy2);
    CHECK_SAY(e && strcmp(a, e) != 0, "thp changes the fingerprint");

    /* The canonical form, pinned so the server can recompute it: FNV-1a
     * 64 of {"cpus":2,"kernel":"6.1.0","thp":"madvise"} (keys sorted,
     * compact; hostname left out). Reference value from an independent
     * implementation (Python). */
    json_t *known = json_pack("{s:s, s:s, s:i, s:s}", "thp", "madvise", "kernel", "6.1.0", "cpus",
                              2, "hostname", "x");
    char *k = hv_facts_fingerprint(known);
    CHECK_SAY(k && strcmp(k, "01564834317b5ea3") == 0,
              "known facts give fingerprint 01564834317b5ea3 (got %s)", k ? k : "NULL");

    free(a);
    free(b);
    free(c);
    free(d);
    free(e);
    free(k);
    json_decref(again);
    json_decref(copy);
    json_decref(copy2);
    json_decref(known);
}

/* Reads what was written to fd since offset 0 into buf. */
static void read_back(int fd, char *buf, size_t len)
{
    ssize_t n = pread(fd, buf, len - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
}

static void test_libvirt(void)
{
    json_t *facts = json_object();
    char err[512] = "";
    int rc = hv_facts_add_libvirt(facts, "test:///default", err, sizeof err);
    CHECK_SAY(rc == 0, "test:///default connects (%s)", err);
    json_t *lv = json_object_get(facts, "libvirt");
    char *dump = json_dumps(lv, JSON_SORT_KEYS | JSON_INDENT(2));
    printf("libvirt facts from test:///default:\n%s\n", dump ? dump : "(none)");
    free(dump);
    const char *uri = json_string_value(json_object_get(lv, "uri"));
    CHECK_SAY(uri && strcmp(uri, "test:///default") == 0, "libvirt.uri is the URI given");
    const char *version = json_string_value(json_object_get(lv, "version"));
    unsigned a, b, c;
    char tail;
    CHECK_SAY(version && version[0] != '\0' &&
                  sscanf(version, "%u.%u.%u%c", &a, &b, &c, &tail) == 3,
              "libvirt.version is x.y.z (%s)", version ? version : "absent");
    const char *hv = json_string_value(json_object_get(lv, "hypervisor"));
    CHECK_SAY(hv && strcmp(hv, "TEST") == 0, "libvirt.hypervisor is the driver type (%s)",
              hv ? hv : "absent");
    const char *hvv = json_string_value(json_object_get(lv, "hypervisor_version"));
    CHECK_SAY(hvv && sscanf(hvv, "%u.%u.%u%c", &a, &b, &c, &tail) == 3,
              "libvirt.hypervisor_version is x.y.z (%s)", hvv ? hvv : "absent");

    json_t *domains = json_object_get(lv, "domains");
    CHECK_SAY(json_array_size(domains) == 1, "test:///default has one domain (%zu)",
              json_array_size(domains));
    json_t *d = json_array_get(domains, 0);
    const char *name = json_string_value(json_object_get(d, "name"));
    const char *uuid = json_string_value(json_object_get(d, "uuid"));
    const char *state = json_string_value(json_object_get(d, "state"));
    CHECK_SAY(name && strcmp(name, "test") == 0, "domain name \"test\" (%s)",
              name ? name : "absent");
    CHECK_SAY(uuid && strlen(uuid) == 36 && strspn(uuid, "0123456789abcdef-") == 36 &&
                  uuid[8] == '-' && uuid[13] == '-' && uuid[18] == '-' && uuid[23] == '-',
              "domain uuid: 36 characters, lowercase (%s)", uuid ? uuid : "absent");
    CHECK_SAY(state && strcmp(state, "running") == 0, "domain state running (%s)",
              state ? state : "absent");

    /* The fingerprint covers the hypervisor and its version, not the
     * domains or the URI. */
    char *f0 = hv_facts_fingerprint(facts);
    json_t *copy = json_deep_copy(facts);
    json_t *lvc = json_object_get(copy, "libvirt");
    json_array_append_new(json_object_get(lvc, "domains"),
                          json_pack("{s:s, s:s, s:s}", "name", "vm1", "uuid",
                                    "00000000-0000-0000-0000-000000000001", "state", "shut off"));
    json_object_set_new(lvc, "uri", json_string("test:///elsewhere"));
    char *f1 = hv_facts_fingerprint(copy);
    CHECK_SAY(f0 && f1 && strcmp(f0, f1) == 0, "domains and uri do not change the fingerprint");
    json_object_set_new(lvc, "hypervisor_version", json_string("99.0.0"));
    char *f2 = hv_facts_fingerprint(copy);
    CHECK_SAY(f0 && f2 && strcmp(f0, f2) != 0, "the hypervisor version changes the fingerprint");
    json_t *without = json_deep_copy(facts);
    json_object_del(without, "libvirt");
    char *f3 = hv_facts_fingerprint(without);
    CHECK_SAY(f0 && f3 && strcmp(f0, f3) != 0, "a libvirt host differs from the same host without");
    free(f0);
    free(f1);
    free(f2);
    free(f3);
    json_decref(copy);
    json_decref(without);
    json_decref(facts);

    /* A connection that fails: a clear error naming the URI, no facts,
     * and libvirt itself prints nothing (stderr captured meanwhile). */
    facts = json_object();
    char tmpl[] = "/tmp/test_facts_stderr.XXXXXX";
    int fd = mkstemp(tmpl);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    rc = hv_facts_add_libvirt(facts, "nosuchdriver:///nowhere", err, sizeof err);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    char printed[1024];
    read_back(fd, printed, sizeof printed);
    close(fd);
    unlink(tmpl);
    CHECK_SAY(rc == -1, "nosuchdriver:///nowhere fails");
    CHECK_SAY(strstr(err, "nosuchdriver:///nowhere") != NULL && strlen(err) > 40,
              "the error names the URI and libvirt's reason: \"%s\"", err);
    CHECK_SAY(json_object_get(facts, "libvirt") == NULL, "no libvirt facts after a failure");
    CHECK_SAY(printed[0] == '\0', "libvirt printed nothing to stderr (\"%s\")", printed);
    json_decref(facts);
}

#define CPU "/sys/devices/system/cpu"

/* Governor, turbo and SMT from a temporary sysfs tree: agreeing and
 * differing governors, both turbo sources, and a tree with none of them. */
static void test_cpu_power(void)
{
    char root[] = "/tmp/hv-facts-XXXXXX";
    if (mkdtemp(root) == NULL) {
        CHECK_SAY(0, "mkdtemp");
        return;
    }
    tree_put(root, CPU "/cpu0/cpufreq/scaling_governor", "performance\n");
    tree_put(root, CPU "/cpu1/cpufreq/scaling_governor", "performance\n");
    tree_put(root, CPU "/intel_pstate/no_turbo", "1\n");
    tree_put(root, CPU "/smt/active", "1\n");
    tree_put(root, CPU "/smt/control", "on\n");
    json_t *f = json_object();
    hv_facts_add_cpu_power(f, root);
    json_t *p = json_object_get(f, "cpu_power");
    const char *gov = json_string_value(json_object_get(p, "governor"));
    CHECK_SAY(gov && strcmp(gov, "performance") == 0, "governor performance (%s)", gov);
    CHECK_SAY(json_is_false(json_object_get(p, "turbo")), "no_turbo 1: turbo false");
    const char *src = json_string_value(json_object_get(p, "turbo_source"));
    CHECK_SAY(src && strcmp(src, "intel_pstate/no_turbo") == 0, "turbo_source (%s)", src);
    CHECK_SAY(json_is_true(json_object_get(p, "smt")), "smt active");
    const char *ctl = json_string_value(json_object_get(p, "smt_control"));
    CHECK_SAY(ctl && strcmp(ctl, "on") == 0, "smt_control on (%s)", ctl);
    json_decref(f);

    tree_put(root, CPU "/cpu1/cpufreq/scaling_governor", "powersave\n");
    tree_put(root, CPU "/cpufreq/boost", "1\n");
    char nt[512];
    snprintf(nt, sizeof nt, "%s" CPU "/intel_pstate/no_turbo", root);
    unlink(nt);
    tree_put(root, CPU "/smt/active", "0\n");
    f = json_object();
    hv_facts_add_cpu_power(f, root);
    p = json_object_get(f, "cpu_power");
    gov = json_string_value(json_object_get(p, "governor"));
    CHECK_SAY(gov && strcmp(gov, "mixed") == 0, "differing governors: mixed (%s)", gov);
    CHECK_SAY(json_array_size(json_object_get(p, "governors")) == 2, "both governors listed");
    CHECK_SAY(json_is_true(json_object_get(p, "turbo")), "boost 1: turbo true");
    CHECK_SAY(json_is_false(json_object_get(p, "smt")), "smt inactive");
    json_decref(f);

    char empty[600];
    snprintf(empty, sizeof empty, "%s/none", root);
    mkdir(empty, 0755);
    f = json_object();
    hv_facts_add_cpu_power(f, empty);
    p = json_object_get(f, "cpu_power");
    CHECK_SAY(json_is_null(json_object_get(p, "governor")) &&
                  json_string_value(json_object_get(p, "governor_note")) != NULL,
              "no cpufreq: governor null with a note");
    CHECK_SAY(json_is_null(json_object_get(p, "turbo")) && json_is_null(json_object_get(p, "smt")),
              "no turbo or smt files: null");
    json_decref(f);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK_SAY(system(cmd) == 0, "temporary tree removed");
}

int main(void)
{
    json_t *facts = hv_facts_collect();
    if (facts == NULL) {
        printf("FAIL  hv_facts_collect returned NULL\n");
        return 1;
    }
    char *dump = json_dumps(facts, JSON_SORT_KEYS | JSON_INDENT(2));
    printf("facts of this machine:\n%s\n", dump);
    free(dump);
    test_real_values(facts);
    test_fingerprint(facts);
    CHECK_SAY(json_object_get(facts, "cpu_power") != NULL, "this machine's facts have cpu_power");
    json_decref(facts);
    test_libvirt();
    test_cpu_power();
    return check_summary("facts");
}
