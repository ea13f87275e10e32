/* facts.c — see facts.h.
 *
 * Each fact has one reader; the string facts and the KVM parameters are
 * tables, so adding one is one row. Readers return nonzero when their
 * source is missing, and the fact is then left out. */
#include "worker/facts.h"

#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define SYS_CPU "/sys/devices/system/cpu"
#define DMI_DIR "/sys/class/dmi/id"

/* Reads the first line of a small file into buf without the trailing
 * whitespace. Returns 0 on success, -1 when the file cannot be read or is
 * empty. */
static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    char *ok = fgets(buf, (int)len, f);
    fclose(f);
    if (ok == NULL)
        return -1;
    size_t n = strlen(buf);
    while (n > 0 && isspace((unsigned char)buf[n - 1]))
        buf[--n] = '\0';
    return n > 0 ? 0 : -1;
}

/* Finds the first "key : value" line of /proc/cpuinfo whose key is exactly
 * key, and copies the value. */
static int cpuinfo_value(const char *key, char *buf, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (f == NULL)
        return -1;
    char line[4096];
    int rc = -1;
    size_t klen = strlen(key);
    while (rc != 0 && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *p = line + klen;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ':')
            continue;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, "\n");
        while (n > 0 && isspace((unsigned char)p[n - 1]))
            n--;
        if (n == 0)
            continue;
        snprintf(buf, len, "%.*s", (int)n, p);
        rc = 0;
    }
    fclose(f);
    return rc;
}

static int read_cpu_model(char *buf, size_t len)
{
    /* "model name" on x86, "Processor"/"cpu model" on some other ports. */
    static const char *const keys[] = {"model name", "cpu model", "Processor", "cpu"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (cpuinfo_value(keys[i], buf, len) == 0)
            return 0;
    return -1;
}

static int read_microcode(char *buf, size_t len)
{
    return cpuinfo_value("microcode", buf, len);
}

/* PRETTY_NAME of os-release, unquoted. */
static int read_distro(char *buf, size_t len)
{
    static const char *const paths[] = {"/etc/os-release", "/usr/lib/os-release"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        FILE *f = fopen(paths[i], "re");
        if (f == NULL)
            continue;
        char line[512];
        int rc = -1;
        while (rc != 0 && fgets(line, sizeof line, f) != NULL) {
            if (strncmp(line, "PRETTY_NAME=", 12) != 0)
                continue;
            char *v = line + 12;
            v[strcspn(v, "\n")] = '\0';
            size_t n = strlen(v);
            if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
                v[n - 1] = '\0';
                v++;
            }
            /* Shell-style escapes: drop the backslash. */
            size_t o = 0;
            for (size_t j = 0; v[j] != '\0' && o + 1 < len; j++) {
                if (v[j] == '\\' && v[j + 1] != '\0')
                    j++;
                buf[o++] = v[j];
            }
            buf[o] = '\0';
            rc = o > 0 ? 0 : -1;
        }
        fclose(f);
        if (rc == 0)
            return 0;
    }
    return -1;
}

/* The bracketed choice of transparent_hugepage/enabled: "always [madvise]
 * never" gives "madvise". */
static int read_thp(char *buf, size_t len)
{
    char line[256];
    if (read_line("/sys/kernel/mm/transparent_hugepage/enabled", line, sizeof line) != 0)
        return -1;
    char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
    if (close == NULL || close == open + 1)
        return -1;
    snprintf(buf, len, "%.*s", (int)(close - open - 1), open + 1);
    return 0;
}

static int read_hostname(char *buf, size_t len)
{
    if (gethostname(buf, len) != 0)
        return -1;
    buf[len - 1] = '\0';
    return buf[0] != '\0' ? 0 : -1;
}

static int read_dmi_uuid(char *buf, size_t len)
{
    if (read_line(DMI_DIR "/product_uuid", buf, len) != 0)
        return -1;
    for (char *p = buf; *p != '\0'; p++)
        *p = (char)tolower((unsigned char)*p);
    return 0;
}

int hv_facts_boot_id(char *buf, size_t len)
{
    const char *test = getenv("HVBENCH_TEST_BOOT_ID");
    if (test != NULL && *test != '\0') {
        snprintf(buf, len, "%s", test);
        return 0;
    }
    if (read_line("/proc/sys/kernel/random/boot_id", buf, len) != 0) {
        buf[0] = '\0';
        return -1;
    }
    for (char *p = buf; *p != '\0'; p++)
        *p = (char)tolower((unsigned char)*p);
    return 0;
}

/* Facts that are one string each. */
static const struct string_fact {
    const char *key;
    int (*read)(char *buf, size_t len);
} string_facts[] = {
    {"hostname", read_hostname},
    {"cpu_model", read_cpu_model},
    {"microcode", read_microcode},
    {"distro", read_distro},
    {"thp", read_thp},
    {"dmi_product_uuid", read_dmi_uuid},
};

static void add_string_facts(json_t *facts)
{
    for (size_t i = 0; i < sizeof string_facts / sizeof string_facts[0]; i++) {
        char buf[512];
        if (string_facts[i].read(buf, sizeof buf) == 0)
            json_object_set_new(facts, string_facts[i].key, json_string(buf));
    }
}

static void add_uname(json_t *facts)
{
    struct utsname u;
    if (uname(&u) != 0)
        return;
    json_object_set_new(facts, "kernel", json_string(u.release));
    json_object_set_new(facts, "kernel_version", json_string(u.version));
    json_object_set_new(facts, "arch", json_string(u.machine));
}

static void add_memory(json_t *facts)
{
    FILE *f = fopen("/proc/meminfo", "re");
    if (f == NULL)
        return;
    char line[256];
    long long kb;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "MemTotal: %lld kB", &kb) == 1) {
            json_object_set_new(facts, "mem_total_kb", json_integer(kb));
            break;
        }
    fclose(f);
}

/* One online CPU's place in the topology. */
struct cpu_place {
    long package, core;
};

static int place_cmp(const void *a, const void *b)
{
    const struct cpu_place *x = a, *y = b;
    if (x->package != y->package)
        return x->package < y->package ? -1 : 1;
    return x->core < y->core ? -1 : x->core > y->core;
}

static int read_long(const char *path, long *out)
{
    char buf[64];
    char *end;
    if (read_line(path, buf, sizeof buf) != 0)
        return -1;
    *out = strtol(buf, &end, 10);
    return *end == '\0' ? 0 : -1;
}

/* Counts sockets and physical cores over the online CPUs. Leaves the
 * fields out when any online CPU lacks its topology (some containers and
 * architectures hide it), since a partial count would mislead. */
static void add_topology(json_t *facts, long cpus)
{
    DIR *d = opendir(SYS_CPU);
    if (d == NULL)
        return;
    size_t n = 0, cap = 64;
    struct cpu_place *places = malloc(cap * sizeof *places);
    bool complete = places != NULL;
    struct dirent *e;
    while (complete && (e = readdir(d)) != NULL) {
        unsigned idx;
        char tail;
        if (sscanf(e->d_name, "cpu%u%c", &idx, &tail) != 1)
            continue;
        char path[128];
        long v;
        snprintf(path, sizeof path, SYS_CPU "/cpu%u/online", idx);
        if (read_long(path, &v) == 0 && v == 0)
            continue; /* offline; cpu0 often has no "online" file at all */
        if (n == cap) {
            struct cpu_place *p = realloc(places, 2 * cap * sizeof *places);
            if (p == NULL) {
                complete = false;
                break;
            }
            places = p;
            cap *= 2;
        }
        snprintf(path, sizeof path, SYS_CPU "/cpu%u/topology/physical_package_id", idx);
        complete = read_long(path, &places[n].package) == 0;
        snprintf(path, sizeof path, SYS_CPU "/cpu%u/topology/core_id", idx);
        complete = complete && read_long(path, &places[n].core) == 0;
        n++;
    }
    closedir(d);
    if (complete && n > 0) {
        qsort(places, n, sizeof *places, place_cmp);
        long sockets = 1, cores = 1;
        for (size_t i = 1; i < n; i++) {
            sockets += places[i].package != places[i - 1].package;
            cores += place_cmp(&places[i], &places[i - 1]) != 0;
        }
        json_object_set_new(facts, "sockets", json_integer(sockets));
        json_object_set_new(facts, "cores", json_integer(cores));
        if (cpus > 0 && cpus % cores == 0)
            json_object_set_new(facts, "threads_per_core", json_integer(cpus / cores));
    }
    free(places);
}

/* True when the "flags" line of /proc/cpuinfo has the word "hypervisor"
 * (x86: CPUID.1:ECX[31], set by every mainstream hypervisor). */
static bool cpuinfo_has_hypervisor_flag(void)
{
    char flags[4096];
    if (cpuinfo_value("flags", flags, sizeof flags) != 0)
        return false;
    char *save = NULL;
    for (char *tok = strtok_r(flags, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save))
        if (strcmp(tok, "hypervisor") == 0)
            return true;
    return false;
}

/* The hypervisor vendor signature of CPUID leaf 0x40000000, valid only
 * when the hypervisor bit is set. */
static int read_cpuid_vendor(char *buf, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    __cpuid(1, a, b, c, d);
    if (!(c & (1u << 31)))
        return -1;
    __cpuid(0x40000000, a, b, c, d);
    char sig[13];
    memcpy(sig, &b, 4);
    memcpy(sig + 4, &c, 4);
    memcpy(sig + 8, &d, 4);
    sig[12] = '\0';
    if (sig[0] == '\0')
        return -1;
    snprintf(buf, len, "%s", sig);
    return 0;
#else
    (void)buf;
    (void)len;
    return -1;
#endif
}

/* Known CPUID hypervisor signatures. */
static const struct {
    const char *signature, *name;
} cpuid_vendors[] = {
    {"KVMKVMKVM", "kvm"},       {"XenVMMXenVMM", "xen"},       {"Microsoft Hv", "hyperv"},
    {"VMwareVMware", "vmware"}, {"TCGTCGTCGTCG", "qemu"},      {"bhyve bhyve ", "bhyve"},
    {"ACRNACRNACRN", "acrn"},   {" lrpepyh  vr", "parallels"}, {"VBoxVBoxVBox", "virtualbox"},
};

/* DMI strings that name a virtual machine. Bare-metal clouds share vendor
 * strings with their VMs, so only strings specific to VMs are listed. */
static const struct {
    const char *file, *substring, *name;
} dmi_vms[] = {
    {"product_name", "KVM", "kvm"},
    {"sys_vendor", "QEMU", "qemu"},
    {"sys_vendor", "Xen", "xen"},
    {"product_name", "HVM domU", "xen"},
    {"sys_vendor", "VMware", "vmware"},
    {"product_name", "VirtualBox", "virtualbox"},
    {"sys_vendor", "innotek", "virtualbox"},
    {"product_name", "Virtual Machine", "hyperv"},
    {"sys_vendor", "bhyve", "bhyve"},
    {"product_name", "Google Compute Engine", "kvm"},
    {"sys_vendor", "Parallels", "parallels"},
};

static void add_virtualization(json_t *facts)
{
    json_t *v = json_object();
    const char *hypervisor = NULL;
    bool vm = cpuinfo_has_hypervisor_flag();
    char buf[256];
    if (read_cpuid_vendor(buf, sizeof buf) == 0) {
        vm = true;
        json_object_set_new(v, "cpuid_vendor", json_string(buf));
        for (size_t i = 0; i < sizeof cpuid_vendors / sizeof cpuid_vendors[0]; i++)
            if (strcmp(buf, cpuid_vendors[i].signature) == 0)
                hypervisor = cpuid_vendors[i].name;
    }
    /* Xen PV guests have no CPUID signature but do have /sys/hypervisor. */
    if (read_line("/sys/hypervisor/type", buf, sizeof buf) == 0) {
        vm = true;
        if (hypervisor == NULL && strcmp(buf, "xen") == 0)
            hypervisor = "xen";
    }
    static const char *const dmi_keys[] = {"sys_vendor", "product_name"};
    for (size_t k = 0; k < sizeof dmi_keys / sizeof dmi_keys[0]; k++) {
        char path[128];
        snprintf(path, sizeof path, DMI_DIR "/%s", dmi_keys[k]);
        if (read_line(path, buf, sizeof buf) != 0)
            continue;
        json_object_set_new(v, dmi_keys[k], json_string(buf));
        for (size_t i = 0; i < sizeof dmi_vms / sizeof dmi_vms[0]; i++)
            if (strcmp(dmi_vms[i].file, dmi_keys[k]) == 0 && strstr(buf, dmi_vms[i].substring)) {
                vm = true;
                if (hypervisor == NULL)
                    hypervisor = dmi_vms[i].name;
            }
    }
    json_object_set_new(v, "vm", json_boolean(vm));
    if (vm)
        json_object_set_new(v, "hypervisor", json_string(hypervisor ? hypervisor : "unknown"));
    json_object_set_new(facts, "virtualization", v);
    json_object_set_new(facts, "kind", json_string(vm ? "guest" : "host"));
}

enum param_type { PARAM_BOOL, PARAM_INT, PARAM_STRING };

/* KVM module parameters that change guest performance. */
static const struct {
    const char *path, *key;
    enum param_type type;
} kvm_params[] = {
    {"/sys/module/kvm_intel/parameters/ept", "ept", PARAM_BOOL},
    {"/sys/module/kvm_amd/parameters/npt", "npt", PARAM_BOOL},
    {"/sys/module/kvm/parameters/halt_poll_ns", "halt_poll_ns", PARAM_INT},
    {"/sys/module/kvm/parameters/tdp_mmu", "tdp_mmu", PARAM_BOOL},
    {"/sys/module/kvm/parameters/nx_huge_pages", "nx_huge_pages", PARAM_STRING},
};

static json_t *param_value(const char *s, enum param_type type)
{
    char *end;
    switch (type) {
    case PARAM_BOOL:
        /* Y/N, or 1/0 on older kernels. */
        if (strcmp(s, "Y") == 0 || strcmp(s, "1") == 0)
            return json_true();
        if (strcmp(s, "N") == 0 || strcmp(s, "0") == 0)
            return json_false();
        return json_string(s);
    case PARAM_INT: {
        long long v = strtoll(s, &end, 10);
        return *end == '\0' ? json_integer(v) : json_string(s);
    }
    case PARAM_STRING:
        break;
    }
    return json_string(s);
}

static void add_kvm(json_t *facts)
{
    json_t *kvm = json_object();
    for (size_t i = 0; i < sizeof kvm_params / sizeof kvm_params[0]; i++) {
        char buf[128];
        if (read_line(kvm_params[i].path, buf, sizeof buf) == 0)
            json_object_set_new(kvm, kvm_params[i].key, param_value(buf, kvm_params[i].type));
    }
    if (json_object_size(kvm) > 0)
        json_object_set_new(facts, "kvm", kvm);
    else
        json_decref(kvm);
}

/* One CPU power fact from root + rel: its first line, or NULL. */
static const char *power_line(const char *root, const char *rel, char *buf, size_t len)
{
    char path[1200];
    snprintf(path, sizeof path, "%s%s", root, rel);
    return read_line(path, buf, len) == 0 ? buf : NULL;
}

void hv_facts_add_cpu_power(json_t *facts, const char *root)
{
    if (root == NULL || strcmp(root, "/") == 0)
        root = "";
    json_t *p = json_object();
    if (p == NULL)
        return;
    /* The governor of every CPU that has one: one value when they agree,
     * "mixed" (with the list) when they do not. */
    json_t *govs = json_array();
    char buf[128], rel[128];
    for (int cpu = 0; cpu < 4096; cpu++) {
        snprintf(rel, sizeof rel, SYS_CPU "/cpu%d/cpufreq/scaling_governor", cpu);
        if (power_line(root, rel, buf, sizeof buf) != NULL) {
            json_array_append_new(govs, json_string(buf));
            continue;
        }
        snprintf(rel, sizeof rel, SYS_CPU "/cpu%d", cpu);
        char dir[1200];
        snprintf(dir, sizeof dir, "%s%s", root, rel);
        if (access(dir, F_OK) != 0)
            break;
    }
    const char *first = json_string_value(json_array_get(govs, 0));
    bool same = first != NULL;
    for (size_t i = 1; same && i < json_array_size(govs); i++)
        same = strcmp(first, json_string_value(json_array_get(govs, i))) == 0;
    if (first == NULL) {
        json_object_set_new(p, "governor", json_null());
        json_object_set_new(p, "governor_note",
                            json_string("no cpufreq driver: scaling_governor "
                                        "is absent (a VM or a fixed clock)"));
    } else if (same) {
        json_object_set_new(p, "governor", json_string(first));
    } else {
        json_object_set_new(p, "governor", json_string("mixed"));
        json_object_set(p, "governors", govs);
    }
    json_decref(govs);
    /* Turbo: intel_pstate says "no_turbo" (1: off), acpi-cpufreq and
     * amd-pstate say "boost" (1: on). */
    if (power_line(root, SYS_CPU "/intel_pstate/no_turbo", buf, sizeof buf) != NULL) {
        json_object_set_new(p, "turbo", json_boolean(strcmp(buf, "0") == 0));
        json_object_set_new(p, "turbo_source", json_string("intel_pstate/no_turbo"));
    } else if (power_line(root, SYS_CPU "/cpufreq/boost", buf, sizeof buf) != NULL) {
        json_object_set_new(p, "turbo", json_boolean(strcmp(buf, "1") == 0));
        json_object_set_new(p, "turbo_source", json_string("cpufreq/boost"));
    } else {
        json_object_set_new(p, "turbo", json_null());
    }
    /* SMT: active (1/0) and the control ("on", "off", "forceoff",
     * "notsupported", "notimplemented"). */
    if (power_line(root, SYS_CPU "/smt/active", buf, sizeof buf) != NULL)
        json_object_set_new(p, "smt", json_boolean(strcmp(buf, "1") == 0));
    else
        json_object_set_new(p, "smt", json_null());
    if (power_line(root, SYS_CPU "/smt/control", buf, sizeof buf) != NULL)
        json_object_set_new(p, "smt_control", json_string(buf));
    json_object_set_new(facts, "cpu_power", p);
}

json_t *hv_facts_collect(void)
{
    json_t *facts = json_object();
    if (facts == NULL)
        return NULL;
    add_string_facts(facts);
    add_uname(facts);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0)
        json_object_set_new(facts, "cpus", json_integer(cpus));
    add_topology(facts, cpus);
    add_memory(facts);
    add_virtualization(facts);
    add_kvm(facts);
    hv_facts_add_cpu_power(facts, "/");
    return facts;
}

/* The members that define "the same machine" for comparing results. */
static const char *const fingerprint_keys[] = {
    "cpu_model",      "microcode", "cpus", "mem_total_kb", "kernel",
    "virtualization", "kvm",       "thp",  "libvirt",
};

/* Members of facts.libvirt that say nothing about the machine's speed. */
static const char *const libvirt_unfingerprinted[] = {"uri", "domains"};

char *hv_facts_fingerprint(const json_t *facts)
{
    if (!json_is_object(facts))
        return NULL;
    json_t *subset = json_object();
    if (subset == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof fingerprint_keys / sizeof fingerprint_keys[0]; i++) {
        json_t *v = json_object_get(facts, fingerprint_keys[i]);
        if (v == NULL)
            continue;
        if (strcmp(fingerprint_keys[i], "libvirt") == 0 && json_is_object(v)) {
            json_t *lv = json_copy(v);
            for (size_t j = 0; j < sizeof libvirt_unfingerprinted / sizeof *libvirt_unfingerprinted;
                 j++)
                json_object_del(lv, libvirt_unfingerprinted[j]);
            json_object_set_new(subset, fingerprint_keys[i], lv);
        } else {
            json_object_set(subset, fingerprint_keys[i], v);
        }
    }
    char *text = json_dumps(subset, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(subset);
    if (text == NULL)
        return NULL;
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 offset basis */
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL; /* FNV-1a 64 prime */
    }
    free(text);
    char *hex = malloc(17);
    if (hex != NULL)
        snprintf(hex, 17, "%016" PRIx64, h);
    return hex;
}
