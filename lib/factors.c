/* factors.c — the catalogue of tuning factors; see factors.h.
 *
 * The apply hints are what an operator types today; the worker's actuators
 * will do the same through libvirt and sysfs and read the result back, so
 * a hint that is wrong here is a bug in the actuator's specification too. */
#include "factors.h"

#include "errors.h"
#include "jspec.h"
#include "names.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const off_on[] = {"off", "on", NULL};
static const char *const on_off[] = {"on", "off", NULL};
static const char *const numa_modes[] = {"off", "strict", "preferred", "interleave", NULL};
static const char *const page_sizes[] = {"off", "2m", "1g", NULL};
static const char *const cpu_modes[] = {"host-passthrough", "host-model", "custom", NULL};
static const char *const disk_buses[] = {"virtio-blk", "virtio-scsi", "sata", NULL};
static const char *const cache_modes[] = {"none",       "writeback", "writethrough",
                                          "directsync", "unsafe",    NULL};
static const char *const io_modes[] = {"native", "threads", "io_uring", NULL};
static const char *const thp_modes[] = {"always", "madvise", "never", NULL};
static const char *const schedulers[] = {"none", "mq-deadline", "bfq", "kyber", NULL};

/* Guest MTUs and NIC MTUs share one warning: a frame larger than any hop
 * of the path is dropped, not fragmented, on most bridges and switches. */
#define MTU_RISK                                                                                   \
    "every hop (guest NIC, bridge, host NIC, switch, peer) must carry the MTU, or large "          \
    "frames are dropped and TCP stalls"

static const struct hv_factor_def catalogue[] = {
    {.name = "vcpu_pin",
     .summary = "pin each vCPU to one host CPU (on: vCPU i runs on host CPU i)",
     .disruption = HV_DISRUPT_LIVE,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_LOW,
     .levels = off_on,
     .system_default = "off",
     .risk = "guests pinned to the same host CPUs compete; leave host CPUs for the host and "
             "the emulator threads",
     .apply_hint = "virsh vcpupin DOMAIN VCPU HOSTCPU --live --config  (XML: <cputune><vcpupin "
                   "vcpu='VCPU' cpuset='HOSTCPU'/></cputune>; API: virDomainPinVcpu)",
     .evidence = "pinning ~3% on HEPSPEC06; CERN 2010 KVM study: pinned beat unpinned with 8 "
                 "single-vCPU guests"},
    {.name = "emulator_pin",
     .summary = "pin QEMU's emulator threads to a host CPU set (on: the host CPUs no pinned vCPU "
                "uses)",
     .disruption = HV_DISRUPT_LIVE,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_LOW,
     .levels = off_on,
     .system_default = "off",
     .risk = "a too small CPU set throttles device emulation and I/O completion",
     .apply_hint = "virsh emulatorpin DOMAIN CPUSET --live --config  (XML: <cputune><emulatorpin "
                   "cpuset='CPUSET'/></cputune>; API: virDomainPinEmulator)"},
    {.name = "iothreads",
     .summary = "number of dedicated I/O threads of the domain; disks are spread over them",
     .disruption = HV_DISRUPT_RESTART,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_NONE,
     .min = 0,
     .max = 16,
     .unit = "threads",
     .system_default = "0",
     .apply_hint = "XML: <iothreads>N</iothreads> and <driver name='qemu' iothread='1'/> in each "
                   "<disk>; virsh edit DOMAIN, then restart"},
    {.name = "iothread_pin",
     .summary = "pin the domain's I/O threads to a host CPU set (on: the host CPUs no pinned "
                "vCPU uses)",
     .disruption = HV_DISRUPT_LIVE,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_NONE,
     .levels = off_on,
     .system_default = "off",
     .risk = "has no effect without iothreads >= 1",
     .apply_hint = "virsh iothreadpin DOMAIN IOTHREAD CPUSET --live --config  (XML: "
                   "<cputune><iothreadpin iothread='IOTHREAD' cpuset='CPUSET'/></cputune>)"},
    {.name = "numa_tune",
     .summary = "NUMA memory policy of the guest's memory on the host",
     .disruption = HV_DISRUPT_RESTART,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_AVAILABILITY,
     .levels = numa_modes,
     .system_default = "off",
     .risk = "strict fails the guest's allocations when the node runs out of memory",
     .apply_hint = "XML: <numatune><memory mode='strict' nodeset='NODESET'/></numatune>  (virsh "
                   "numatune DOMAIN --mode strict --nodeset NODESET --config, then restart)",
     .evidence = "guest NUMA ~9% on HEPSPEC06"},
    {.name = "hugepages",
     .summary = "back the guest's memory with huge pages of the given size",
     .disruption = HV_DISRUPT_RESTART,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_AVAILABILITY,
     .levels = page_sizes,
     .system_default = "off",
     .risk = "the guest does not start unless enough huge pages are reserved on the host; huge "
             "pages are never swapped or shared, so memory cannot be overcommitted; 1g needs "
             "the CPU flag pdpe1gb and usually a boot-time reservation",
     .apply_hint = "echo N > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages; XML: "
                   "<memoryBacking><hugepages><page size='2048' unit='KiB'/></hugepages>"
                   "</memoryBacking> (1g: size='1048576', hugepages-1048576kB)"},
    {.name = "cpu_mode",
     .summary = "the CPU model the guest sees",
     .disruption = HV_DISRUPT_RESTART,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_AVAILABILITY,
     .levels = cpu_modes,
     .system_default = "host-passthrough",
     .risk = "host-passthrough ties the guest to this CPU model: live migration to a different "
             "CPU fails; custom hides CPU features the workload may use",
     .apply_hint = "XML: <cpu mode='host-passthrough'/> | <cpu mode='host-model'/> | <cpu "
                   "mode='custom' match='exact'><model>MODEL</model></cpu>; virsh edit DOMAIN, "
                   "then restart",
     .evidence = "host-model CPU +4-5% on HEPSPEC06"},
    {.name = "disk_bus",
     .summary = "the bus of the guest's benchmark disk",
     .disruption = HV_DISRUPT_RESTART,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_AVAILABILITY,
     .levels = disk_buses,
     .system_default = "virtio-blk",
     .risk = "the disk's name in the guest changes (vda / sda); a guest without the driver "
             "does not see the disk (mount by UUID or label)",
     .apply_hint = "XML: <target dev='vdb' bus='virtio'/> | <controller type='scsi' "
                   "model='virtio-scsi'/> with <target dev='sdb' bus='scsi'/> | <target dev='sdb' "
                   "bus='sata'/>; virsh edit DOMAIN, then restart"},
    {.name = "disk_cache",
     .summary = "host page cache mode of the guest's disk (QEMU uses writeback when the XML "
                "names none)",
     .disruption = HV_DISRUPT_RESTART,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_DATA_LOSS,
     .levels = cache_modes,
     .system_default = "writeback",
     .risk = "writeback and unsafe can lose data on a host crash: writeback loses what the guest "
             "has not flushed, unsafe ignores flushes and can lose anything; none and directsync "
             "need storage that supports O_DIRECT",
     .apply_hint = "XML: <driver name='qemu' type='raw' cache='{level}'/> in the <disk>; virsh "
                   "edit DOMAIN, then restart",
     .evidence = "cache effects point in opposite directions by workload: measure, never assume"},
    {.name = "io_mode",
     .summary = "how QEMU submits the disk's I/O to the host",
     .disruption = HV_DISRUPT_RESTART,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_AVAILABILITY,
     .levels = io_modes,
     .system_default = "threads",
     .risk = "native needs cache none or directsync; io_uring needs QEMU >= 5.0, libvirt >= 6.3 "
             "and host kernel >= 5.1",
     .apply_hint = "XML: <driver name='qemu' type='raw' cache='none' io='{level}'/> in the "
                   "<disk>; virsh edit DOMAIN, then restart"},
    {.name = "vhost_net",
     .summary = "in-kernel virtio-net backend (vhost) instead of QEMU's userspace one",
     .disruption = HV_DISRUPT_RESTART,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_LOW,
     .levels = on_off,
     .system_default = "on",
     .risk = "needs /dev/vhost-net (modprobe vhost_net) and a virtio NIC; off is much slower",
     .apply_hint = "XML: <interface ...><model type='virtio'/><driver name='vhost'/></interface> "
                   "(off: <driver name='qemu'/>); virsh edit DOMAIN, then restart"},
    {.name = "net_queues",
     .summary = "virtio-net multiqueue: queue pairs of the guest's NIC",
     .disruption = HV_DISRUPT_RESTART,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_LOW,
     .min = 1,
     .max = 64,
     .unit = "queues",
     .system_default = "1",
     .risk = "more queues cost host CPU; the guest must enable them (ethtool -L IFACE combined "
             "N); more queues than vCPUs rarely helps",
     .apply_hint = "XML: <driver name='vhost' queues='N'/> in the <interface>; in the guest: "
                   "ethtool -L IFACE combined N"},
    {.name = "guest_mtu",
     .summary = "MTU of the guest's NIC",
     .disruption = HV_DISRUPT_RESTART,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_AVAILABILITY,
     .min = 576,
     .max = 9000,
     .unit = "bytes",
     .system_default = "1500",
     .risk = MTU_RISK,
     .apply_hint = "XML: <mtu size='N'/> in the <interface>; in the guest: ip link set dev IFACE "
                   "mtu N"},
    {.name = "blkio_iops",
     .summary = "I/O operations per second limit of the guest's disk (0 = unlimited)",
     .disruption = HV_DISRUPT_LIVE,
     .scope = HV_SCOPE_GUEST,
     .risk_level = HV_RISK_LOW,
     .min = 0,
     .max = 10000000,
     .unit = "IOPS",
     .system_default = "0",
     .risk = "a limit caps the guest's disk throughput by design",
     .apply_hint = "virsh blkdeviotune DOMAIN DEVICE --total-iops-sec N --live --config  (XML: "
                   "<iotune><total_iops_sec>N</total_iops_sec></iotune>)"},
    {.name = "halt_poll_ns",
     .summary = "how long KVM polls before an idle vCPU gives its host CPU up",
     .disruption = HV_DISRUPT_HOST,
     .scope = HV_SCOPE_HOST,
     .risk_level = HV_RISK_LOW,
     .min = 0,
     .max = 10000000,
     .unit = "ns",
     .system_default = "200000",
     .risk = "higher values burn host CPU while vCPUs are idle; 0 adds wake-up latency",
     .apply_hint = "echo N > /sys/module/kvm/parameters/halt_poll_ns",
     .host_file = "/sys/module/kvm/parameters/halt_poll_ns"},
    {.name = "thp",
     .summary = "transparent huge pages on the host",
     .disruption = HV_DISRUPT_HOST,
     .scope = HV_SCOPE_HOST,
     .risk_level = HV_RISK_LOW,
     .levels = thp_modes,
     .system_default = "always",
     .risk = "always can add latency spikes from compaction (khugepaged)",
     .apply_hint = "echo always > /sys/kernel/mm/transparent_hugepage/enabled",
     .host_file = "/sys/kernel/mm/transparent_hugepage/enabled"},
    {.name = "ksm",
     .summary = "kernel same-page merging of guest memory on the host",
     .disruption = HV_DISRUPT_HOST,
     .scope = HV_SCOPE_HOST,
     .risk_level = HV_RISK_LOW,
     .levels = off_on,
     .system_default = "off",
     .risk = "ksmd costs host CPU; merged pages open a cross-guest timing side channel; the "
             "ksmtuned service may change the setting behind hvbench's back",
     .apply_hint = "echo 1 > /sys/kernel/mm/ksm/run  (off: echo 0; echo 2 also unmerges)",
     .host_file = "/sys/kernel/mm/ksm/run"},
    {.name = "io_scheduler",
     .summary = "block I/O scheduler of the host disk holding the guests' images",
     .disruption = HV_DISRUPT_HOST,
     .scope = HV_SCOPE_HOST,
     .risk_level = HV_RISK_LOW,
     .levels = schedulers,
     .system_default = "mq-deadline",
     .risk = "bfq and kyber need their modules (modprobe bfq, kyber-iosched)",
     .apply_hint = "echo mq-deadline > /sys/block/DEVICE/queue/scheduler",
     .host_file = "/sys/block/DISK/queue/scheduler"},
    {.name = "readahead_kb",
     .summary = "read-ahead of the host disk holding the guests' images",
     .disruption = HV_DISRUPT_HOST,
     .scope = HV_SCOPE_HOST,
     .risk_level = HV_RISK_LOW,
     .min = 0,
     .max = 65536,
     .unit = "KiB",
     .system_default = "128",
     .risk = "large read-ahead wastes bandwidth and page cache on random I/O",
     .apply_hint = "echo N > /sys/block/DEVICE/queue/read_ahead_kb  (or blockdev --setra 2N "
                   "/dev/DEVICE: 512-byte sectors)",
     .host_file = "/sys/block/DISK/queue/read_ahead_kb"},
    {.name = "nic_mtu",
     .summary = "MTU of the host NIC (and bridge) carrying the benchmark traffic",
     .disruption = HV_DISRUPT_HOST,
     .scope = HV_SCOPE_HOST,
     .risk_level = HV_RISK_AVAILABILITY,
     .min = 576,
     .max = 9216,
     .unit = "bytes",
     .system_default = "1500",
     .risk = MTU_RISK "; a bridge takes the smallest MTU of its ports",
     .apply_hint = "ip link set dev IFACE mtu N"},
    {.name = "kvm_ept",
     .summary = "Intel EPT (hardware nested paging) in kvm_intel; off uses shadow page tables",
     .disruption = HV_DISRUPT_REBOOT,
     .scope = HV_SCOPE_HOST,
     .risk_level = HV_RISK_AVAILABILITY,
     .levels = on_off,
     .system_default = "on",
     .risk = "ept=0 also turns off unrestricted guest mode, so guest real-mode code is emulated "
             "and some guests fail to boot; shadow paging slows memory-heavy and fork-heavy "
             "guests; every guest must be stopped to reload the module",
     .apply_hint = "echo 'options kvm_intel ept=0' > /etc/modprobe.d/kvm-ept.conf; stop all "
                   "guests; modprobe -r kvm_intel && modprobe kvm_intel (or reboot); check "
                   "/sys/module/kvm_intel/parameters/ept (kernels of the KVM 83 era: "
                   "enable_ept=0)",
     .evidence = "CERN 2010, KVM 83: ept=0 +6-8% on HEPSPEC06; with pinning ~3% below bare "
                 "metal",
     .host_file = "/sys/module/kvm_intel/parameters/ept"},
    {.name = "kvm_npt",
     .summary = "AMD NPT (hardware nested paging) in kvm_amd; off uses shadow page tables",
     .disruption = HV_DISRUPT_REBOOT,
     .scope = HV_SCOPE_HOST,
     .risk_level = HV_RISK_AVAILABILITY,
     .levels = on_off,
     .system_default = "on",
     .risk = "npt=0 slows memory-heavy and fork-heavy guests; every guest must be stopped to "
             "reload the module",
     .apply_hint = "echo 'options kvm_amd npt=0' > /etc/modprobe.d/kvm-npt.conf; stop all "
                   "guests; modprobe -r kvm_amd && modprobe kvm_amd (or reboot); check "
                   "/sys/module/kvm_amd/parameters/npt",
     .host_file = "/sys/module/kvm_amd/parameters/npt"},
    {.name = "process_pin",
     .summary = "bare metal: pin benchmark process i to host CPU i (sched_setaffinity)",
     .disruption = HV_DISRUPT_HOST,
     .scope = HV_SCOPE_HOST,
     .risk_level = HV_RISK_LOW,
     .levels = off_on,
     .system_default = "off",
     .risk = "pinned processes cannot move away from interrupts or other load on their CPU",
     .apply_hint = "taskset -c HOSTCPU COMMAND  (or taskset -cp HOSTCPU PID; API: "
                   "sched_setaffinity)"},
};

#define N_FACTORS (sizeof catalogue / sizeof catalogue[0])

static const char *const disruption_names[] = {
    [HV_DISRUPT_LIVE] = "live",
    [HV_DISRUPT_RESTART] = "restart",
    [HV_DISRUPT_HOST] = "host",
    [HV_DISRUPT_REBOOT] = "reboot",
};

static const char *const risk_names[] = {
    [HV_RISK_NONE] = "none",
    [HV_RISK_LOW] = "low",
    [HV_RISK_DATA_LOSS] = "data-loss",
    [HV_RISK_AVAILABILITY] = "availability",
};

static const char *const scope_names[] = {
    [HV_SCOPE_GUEST] = "guest",
    [HV_SCOPE_HOST] = "host",
};

const char *hv_disruption_name(enum hv_disruption d)
{
    if ((unsigned)d >= sizeof disruption_names / sizeof disruption_names[0])
        return "unknown";
    return disruption_names[d];
}

const char *hv_risk_level_name(enum hv_risk_level r)
{
    if ((unsigned)r >= sizeof risk_names / sizeof risk_names[0])
        return "unknown";
    return risk_names[r];
}

const char *hv_factor_scope_name(enum hv_factor_scope s)
{
    if ((unsigned)s >= sizeof scope_names / sizeof scope_names[0])
        return "unknown";
    return scope_names[s];
}

const char *hv_factor_host_value(const struct hv_factor_def *f, const char *level)
{
    /* Only the boolean factors (off_on, on_off) write a number. */
    if (f->levels == off_on || f->levels == on_off)
        return strcmp(level, "on") == 0 ? "1" : strcmp(level, "off") == 0 ? "0" : level;
    return level;
}

const struct hv_factor_def *hv_factor_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < N_FACTORS; i++)
        if (strcmp(catalogue[i].name, name) == 0)
            return &catalogue[i];
    return NULL;
}

void hv_factor_settings_check(const json_t *settings, const char *path, json_t *errors)
{
    if (json_object_size(settings) > N_FACTORS + HV_SITE_FACTORS_MAX)
        hv_errors_add(errors, path, "at most %zu settings", N_FACTORS + HV_SITE_FACTORS_MAX);
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)settings, name, v)
    {
        char p[200];
        hv_jpath(p, sizeof p, path, name);
        const struct hv_factor_def *f = hv_factor_find(name);
        if (hv_site_factor_is(name)) {
            const char *bad = hv_site_name_problem(name + strlen(HV_SITE_PREFIX));
            const char *bad_level = json_is_string(v) ? hv_site_level_problem(json_string_value(v))
                                                      : "must be a string: the level read";
            if (bad != NULL)
                hv_errors_add(errors, p, "%s", bad);
            else if (bad_level != NULL)
                hv_errors_add(errors, p, "%s", bad_level);
        } else if (f == NULL || f->scope != HV_SCOPE_HOST)
            hv_errors_add(errors, p, "not a host setting of the catalogue or a site factor");
        else if (!json_is_string(v) || json_string_length(v) < 1 || json_string_length(v) > 128)
            hv_errors_add(errors, p, "must be a string of 1 to 128 bytes: the level read");
    }
}

size_t hv_factor_count(void)
{
    return N_FACTORS;
}

const struct hv_factor_def *hv_factor_at(size_t i)
{
    return i < N_FACTORS ? &catalogue[i] : NULL;
}

/* The suffixes a numeric level written as a string may carry, per unit,
 * and how many of the unit each stands for. A bare number is always in the
 * factor's own unit, so "128" for readahead_kb is 128 KiB, not 128 bytes.
 * Units without a row (MTU bytes, IOPS, counts) take bare numbers only:
 * "9k" for an MTU would be ambiguous between 9000 and 9216. */
struct level_suffix {
    const char *unit;
    const char *suffix;
    double scale;
};

static const struct level_suffix level_suffixes[] = {
    {"ns", "ns", 1.0},         {"ns", "us", 1e3},       {"ns", "ms", 1e6},
    {"ns", "s", 1e9},          {"KiB", "k", 1.0},       {"KiB", "kb", 1.0},
    {"KiB", "kib", 1.0},       {"KiB", "m", 1024.0},    {"KiB", "mb", 1024.0},
    {"KiB", "mib", 1024.0},    {"KiB", "g", 1048576.0}, {"KiB", "gb", 1048576.0},
    {"KiB", "gib", 1048576.0},
};

#define N_SUFFIXES (sizeof level_suffixes / sizeof level_suffixes[0])

/* Lists the suffixes of unit as "ns, us, ms, s" into buf (empty when it
 * has none). */
static void list_suffixes(const char *unit, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_SUFFIXES && n < len; i++)
        if (strcmp(level_suffixes[i].unit, unit) == 0)
            n +=
                (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", level_suffixes[i].suffix);
}

/* Writes printf(fmt) into err when err is not NULL; returns -1 so callers
 * can `return fail(...)`. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The message for a numeric level that is not acceptable: range, unit and
 * the forms accepted. */
static int numeric_fail(const struct hv_factor_def *f, char *err, size_t errlen)
{
    char suffixes[64];
    list_suffixes(f->unit, suffixes, sizeof suffixes);
    if (suffixes[0] != '\0')
        return fail(err, errlen,
                    "must be a whole number of %s between %.0f and %.0f: an integer, or a "
                    "string such as \"%s\" or with a suffix %s",
                    f->unit, f->min, f->max, f->system_default, suffixes);
    return fail(err, errlen,
                "must be a whole number of %s between %.0f and %.0f: an integer, or a string "
                "such as \"%s\"",
                f->unit, f->min, f->max, f->system_default);
}

/* Parses a numeric level written as a string: decimal digits with an
 * optional fraction and a suffix of the factor's unit. Exponents, signs,
 * hex and blanks are refused: levels name configurations and must read the
 * same to every operator. Returns 0 with *value in the factor's unit. */
static int parse_numeric_string(const struct hv_factor_def *f, const char *s, double *value)
{
    if (!isdigit((unsigned char)s[0]))
        return -1;
    const char *p = s;
    while (isdigit((unsigned char)*p) || *p == '.')
        p++;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno != 0 || end != p || !isfinite(v))
        return -1;
    if (*p == '\0') {
        *value = v;
        return 0;
    }
    for (size_t i = 0; i < N_SUFFIXES; i++) {
        if (strcmp(level_suffixes[i].unit, f->unit) == 0 &&
            strcasecmp(level_suffixes[i].suffix, p) == 0) {
            *value = v * level_suffixes[i].scale;
            return 0;
        }
    }
    return -1;
}

static int numeric_level(const struct hv_factor_def *f, const json_t *level, char *out,
                         size_t outlen, char *err, size_t errlen)
{
    double v;
    if (json_is_integer(level))
        v = (double)json_integer_value(level);
    else if (!json_is_string(level) || parse_numeric_string(f, json_string_value(level), &v) != 0)
        return numeric_fail(f, err, errlen);
    if (v != floor(v) || v < f->min || v > f->max)
        return numeric_fail(f, err, errlen);
    if ((size_t)snprintf(out, outlen, "%.0f", v) >= outlen)
        return fail(err, errlen, "is too long");
    return 0;
}

static int enum_level(const struct hv_factor_def *f, const json_t *level, char *out, size_t outlen,
                      char *err, size_t errlen)
{
    char allowed[256];
    size_t n = 0;
    allowed[0] = '\0';
    for (const char *const *l = f->levels; *l != NULL && n < sizeof allowed; l++)
        n += (size_t)snprintf(allowed + n, sizeof allowed - n, "%s%s", n ? ", " : "", *l);
    if (!json_is_string(level))
        return fail(err, errlen, "must be a string, one of: %s", allowed);
    const char *s = json_string_value(level);
    for (const char *const *l = f->levels; *l != NULL; l++) {
        if (strcasecmp(*l, s) == 0) {
            if ((size_t)snprintf(out, outlen, "%s", *l) >= outlen)
                return fail(err, errlen, "is too long");
            return 0;
        }
    }
    return fail(err, errlen, "\"%.64s\" is not a level of %s; must be one of: %s", s, f->name,
                allowed);
}

int hv_factor_level(const struct hv_factor_def *f, const json_t *level, char *out, size_t outlen,
                    char *err, size_t errlen)
{
    if (f->levels != NULL)
        return enum_level(f, level, out, outlen, err, errlen);
    return numeric_level(f, level, out, outlen, err, errlen);
}

/* A JSON string for s, or null when s is NULL. */
static json_t *string_or_null(const char *s)
{
    return s != NULL ? json_string(s) : json_null();
}

static json_t *factor_json(const struct hv_factor_def *f)
{
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:o}", "name", f->name, "summary",
        f->summary, "disruption", hv_disruption_name(f->disruption), "scope",
        hv_factor_scope_name(f->scope), "type", f->levels ? "enum" : "int", "system_default",
        f->system_default, "risk_level", hv_risk_level_name(f->risk_level), "risk",
        string_or_null(f->risk), "apply", f->apply_hint, "evidence", string_or_null(f->evidence));
    if (o == NULL)
        return NULL;
    int rc = 0;
    if (f->levels != NULL) {
        json_t *levels = json_array();
        for (const char *const *l = f->levels; *l != NULL; l++)
            rc |= json_array_append_new(levels, json_string(*l));
        rc |= json_object_set_new(o, "levels", levels);
    } else {
        rc |= json_object_set_new(o, "min", json_integer((json_int_t)f->min));
        rc |= json_object_set_new(o, "max", json_integer((json_int_t)f->max));
        rc |= json_object_set_new(o, "unit", json_string(f->unit));
    }
    if (rc != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *hv_factors_json(void)
{
    json_t *list = json_array();
    if (list == NULL)
        return NULL;
    for (size_t i = 0; i < N_FACTORS; i++) {
        if (json_array_append_new(list, factor_json(&catalogue[i])) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

bool hv_site_factor_is(const char *factor)
{
    return factor != NULL && strncmp(factor, HV_SITE_PREFIX, strlen(HV_SITE_PREFIX)) == 0;
}

const char *hv_site_name_problem(const char *name)
{
    /* The host rule first (its message points to the rule), then the
     * stricter one of site names. */
    if (!hv_name_host_ok(name))
        return HV_NAME_HOST_RULE;
    if (strlen(name) > HV_SITE_NAME_MAX)
        return "is longer than 48 characters";
    if (!(name[0] >= 'a' && name[0] <= 'z'))
        return "must start with a letter a-z";
    for (const char *p = name; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return "must use only a-z, 0-9 and '_'";
    return NULL;
}

const char *hv_site_level_problem(const char *level)
{
    size_t n = strlen(level);
    if (n == 0)
        return "must not be empty";
    if (n > HV_SITE_LEVEL_MAX)
        return "is longer than 63 bytes";
    for (const char *p = level; *p != '\0'; p++)
        if (*p < 0x20 || *p > 0x7e)
            return "must be printable ASCII";
    if (isspace((unsigned char)level[0]) || isspace((unsigned char)level[n - 1]))
        return "must not start or end with a blank (read-back output is trimmed)";
    return NULL;
}
