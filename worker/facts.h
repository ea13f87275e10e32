/* facts.h — what this machine is, as the worker reports it at
 * registration.
 *
 * Facts are read from the running system (/proc, /sys, uname, CPUID), never
 * assumed. A source that is missing or unreadable leaves its field out; it
 * is never an error. */
#ifndef HV_WORKER_FACTS_H
#define HV_WORKER_FACTS_H

#include <jansson.h>
#include <stddef.h>

/** Collects the facts of this machine into a new JSON object (the caller
 *  owns the reference; NULL only when memory runs out). Fields, each
 *  present only when its source could be read:
 *
 *  - hostname, arch (uname machine), kernel (uname release),
 *    kernel_version (uname version), distro (os-release PRETTY_NAME)
 *  - cpu_model, microcode (first "model name"/"microcode" of
 *    /proc/cpuinfo), cpus (online CPUs, sysconf)
 *  - sockets (distinct packages), cores (distinct physical cores over all
 *    sockets), threads_per_core (cpus / cores), from the sysfs topology of
 *    the online CPUs
 *  - mem_total_kb (/proc/meminfo MemTotal)
 *  - virtualization: {"vm": bool, "hypervisor": "kvm"|"xen"|..., "cpuid_vendor",
 *    "sys_vendor", "product_name"} — vm is always present
 *  - dmi_product_uuid (lowercase; usually readable by root only)
 *  - kvm: {"ept"|"npt"|"tdp_mmu": bool, "halt_poll_ns": int,
 *    "nx_huge_pages": string} from /sys/module/kvm* when a KVM module is
 *    loaded
 *  - thp (the selected value of transparent_hugepage/enabled)
 *  - cpu_power: hv_facts_add_cpu_power() below
 *  - kind: "guest" when virtualization.vm, else "host" (a guess: a nested
 *    hypervisor is a host that runs in a VM; --kind overrides it)
 *
 *  Not thread safe against concurrent changes of the process environment
 *  only; otherwise callable from any thread. */
json_t *hv_facts_collect(void);

/** Adds facts.cpu_power, what makes a CPU's numbers move, read under
 *  root ("/" for this machine; a temporary tree in tests):
 *
 *  - governor: the cpufreq scaling_governor of the CPUs ("performance",
 *    "powersave", ...), "mixed" with governors [...] when they differ, or
 *    null with governor_note when no CPU has one (no cpufreq driver, as in
 *    most VMs)
 *  - turbo: true/false from intel_pstate/no_turbo or else cpufreq/boost
 *    (turbo_source names which), null when neither exists
 *  - smt: true/false from smt/active, null when absent; smt_control (the
 *    kernel's "on", "off", "forceoff", "notsupported", ...) when present
 *
 *  Not in the fingerprint: a governor or turbo change is a setting of the
 *  same machine (a tuning factor), not another machine. */
void hv_facts_add_cpu_power(json_t *facts, const char *root);

/** Adds facts.storage, the block devices under root ("/" for this
 *  machine; the worker's --sysfs-root, a temporary tree in tests) and what
 *  is mounted on them, read from the mountinfo file (proc(5) format;
 *  /proc/self/mountinfo for this machine):
 *
 *  - block_devices: [{"name" ("sda"), "dev" ("8:0"), "size_bytes",
 *    "rotational" (true, false or null), "partitions" (["sda1"]),
 *    "holders" (dm devices on the disk or its partitions: ["dm-0"]),
 *    "mounts" (the mount points on the disk, its partitions or holders,
 *    ["/", "/boot"])}] of root/sys/block, by name; a device of size 0
 *    (an unused loop or zram device) is left out
 *  - state_dir (when state_dir is not NULL): {"path": state_dir, "mount"
 *    (the mount point holding it, or null), "device" (the listed disk
 *    holding that mount, or null)}
 *  - databases: [{"path", "mount", "device"}] as state_dir, one per
 *    PostgreSQL data directory running on the machine, by path: the
 *    folder (root/proc/PID/cwd) of each process called postgres or
 *    postmaster (root/proc/PID/stat) whose parent is not (a postmaster)
 *
 *  A file that cannot be read leaves its part empty (another user's
 *  processes, unreadable without privileges, are left out). Bounded: 256
 *  devices, 128 partitions and holders and 64 mount points per device,
 *  4096 mounts, 32 databases among 65536 processes. Not in the
 *  fingerprint. */
void hv_facts_add_storage(json_t *facts, const char *root, const char *mountinfo,
                          const char *state_dir);

/** The entries of mountinfo text (proc(5): "36 35 98:0 /mnt1 /mnt2 rw
 *  master:1 - ext3 /dev/root rw") as a new JSON array of {"dev"
 *  ("MAJOR:MINOR"), "mount", "fstype", "source"}, the octal escapes of
 *  paths undone; lines that are not such entries are skipped, at most 4096
 *  entries. NULL only when memory runs out; text NULL gives []. Pure. */
json_t *hv_facts_parse_mountinfo(const char *text);

/** Adds facts.libvirt from the libvirt connection uri (e.g.
 *  "qemu:///system", "test:///default"), opened read-only:
 *
 *  - uri; version (libvirt's, "9.0.0"); hypervisor (the driver's type,
 *    "QEMU"); hypervisor_version ("7.2.0")
 *  - domains: [{"name", "uuid" (lowercase), "state"}] of every domain,
 *    running or not; state as virsh names it ("running", "shut off",
 *    "paused", "idle", "in shutdown", "crashed", "pmsuspended", "no state")
 *
 *  libvirt prints nothing itself. Returns 0, or -1 with a message naming
 *  the URI and libvirt's reason in err when the connection or the domain
 *  list fails. */
int hv_facts_add_libvirt(json_t *facts, const char *uri, char *err, size_t errlen);

/** Adds facts.kvm_probe from the answer deploy/guest-image/probe-kvm.sh
 *  keeps at path (its kvm-probe.json: {"accel", "reason", "probed_at",
 *  "seconds_to_marker", "host": {"host_kernel", "dev_kvm", ...}}):
 *  {"answer": "kvm"|"tcg", "why", "probed_at", "seconds_to_marker",
 *  "file": path, "current"}, current telling whether the answer was
 *  probed on this kernel with /dev/kvm as it is now. Not in the
 *  fingerprint. Returns 0, or -1 with err when the file cannot be read or
 *  is not such an answer. */
int hv_facts_add_kvm_probe(json_t *facts, const char *path, char *err, size_t errlen);

/** The probe's cache as probe-kvm.sh writes it: $HVBENCH_GUEST_CACHE/
 *  kvm-probe.json, else var/guest-image/kvm-probe.json (of the checkout the
 *  worker runs in). Writes it into buf and returns buf. */
const char *hv_facts_kvm_probe_default(char *buf, size_t len);

/** This machine's boot id into buf: /proc/sys/kernel/random/boot_id (a
 *  UUID, new at every boot) in lower case, or $HVBENCH_TEST_BOOT_ID when
 *  set (tests play a guest's boots with it). Not a fact: facts describe
 *  the target, the boot id the worker's registration (docs/worker.md).
 *  Returns 0, or -1 with buf "" when it cannot be read. */
int hv_facts_boot_id(char *buf, size_t len);

/** The fingerprint of the performance-relevant facts: the members
 *  cpu_model, microcode, cpus, mem_total_kb, kernel, virtualization, kvm,
 *  thp and libvirt (without its uri and domains: the hypervisor and its
 *  version count, which guests exist does not) present in facts, gathered
 *  in one object, serialised with
 *  JSON_SORT_KEYS | JSON_COMPACT, hashed with 64-bit FNV-1a and written as
 *  16 lowercase hex digits. Deterministic, so the server can recompute it.
 *  Returns a malloc'd string (caller frees) or NULL on allocation failure
 *  or when facts is not an object. */
char *hv_facts_fingerprint(const json_t *facts);

#endif
