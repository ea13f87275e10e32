/* domain.h — what the guest actuators share: the libvirt connection, the
 * plan's domains, host CPU sets, and the threads of a QEMU process seen
 * from this machine.
 *
 * Internal to worker/virt/. Read-back prefers the kernel: on a local QEMU
 * (qemu:///system as root, qemu:///session as the same user, an embedded
 * driver qemu:///embed?root=DIR) the QEMU
 * process of a domain is found from libvirt's pid file and checked against
 * its command line (-name guest=NAME), and its threads are told apart by
 * the names QEMU gives them with debug-threads=on, which libvirt always
 * asks for: "CPU 0/KVM" (or "CPU 0/TCG"), "IO iothread1"; the main thread
 * is the emulator. Elsewhere (a remote URI, Xen, the test driver) libvirt's
 * own answer is all there is, and the reading says so. */
#ifndef HV_WORKER_VIRT_DOMAIN_H
#define HV_WORKER_VIRT_DOMAIN_H

#include "worker/virt.h"
#include "worker/virt/actuator.h"

#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

/** A set of host CPUs as libvirt passes them: a bitmap of maplen bytes. */
#define HV_CPUMAP_MAX 1024 /* CPUs; 128 bytes */

/** The libvirt side of a step. */
struct hv_act_virt {
    const struct hv_virt *lv;
    virConnectPtr conn;
    char type[32];             /**< the driver: "QEMU", "Test", "Xen" ... */
    int ncpus;                 /**< host CPUs libvirt knows (the width of every map) */
    int maplen;                /**< bytes of a CPU map: VIR_CPU_MAPLEN(ncpus) */
    int online[HV_CPUMAP_MAX]; /**< the online host CPUs, ascending */
    int n_online;
    int nodes; /**< host NUMA nodes (at least 1) */
    /** Where libvirt keeps a running domain's pid file (NAME.pid) when
     *  QEMU runs on this machine: /run/libvirt/qemu (qemu:///system),
     *  $XDG_RUNTIME_DIR/libvirt/qemu/run (qemu:///session), ROOT/run/qemu
     *  (qemu:///embed?root=ROOT); "" otherwise. */
    char pid_dir[512];
};

/** One guest domain of the step. */
struct hv_act_domain {
    const char *name; /**< borrowed from ctx->domains */
    virDomainPtr dom;
    int first_vcpu; /**< the number of the plan's vCPUs before this domain's */
    int plan_vcpus; /**< the vCPUs of all the step's domains */
    int nvcpus;     /**< its vCPUs now */
    bool active;
    pid_t pid;          /**< its QEMU process when visible here, else 0 */
    struct hv_xml *xml; /**< restart rows: the definition being edited or read */
    /** Which definition xml is, for readings: "live domain XML",
     *  "persistent domain XML" ... */
    char xml_what[64];
};

/** Opens ctx->virt (once per context): connects read-write to
 *  ctx->libvirt_uri and learns the host's CPUs and NUMA nodes. Returns 0
 *  or -1 with err. */
int hv_act_virt_open(struct hv_act_ctx *ctx, char *err, size_t len);

/** libvirt's last error message ("unknown error" when it has none). */
const char *hv_act_virt_error(const struct hv_act_ctx *ctx);

/** Looks the step's domains up (ctx->domains, in order) and numbers their
 *  vCPUs. With ctx->journal set (the domains are to be changed) each must
 *  pass hv_act_domain_owner_ok() (owner.h). Fills *out with n domains
 *  (free with hv_act_domains_free()). Returns 0 or -1 with err naming each
 *  missing or refused domain. */
int hv_act_domains_open(struct hv_act_ctx *ctx, struct hv_act_domain **out, size_t *n, char *err,
                        size_t len);

/** Releases what hv_act_domains_open() returned. */
void hv_act_domains_free(struct hv_act_ctx *ctx, struct hv_act_domain *d, size_t n);

/** Refreshes d's state after a change: active, vCPUs, QEMU pid. */
void hv_act_domain_refresh(struct hv_act_ctx *ctx, struct hv_act_domain *d);

/** The host CPU `vcpu_pin=on` gives to the plan's vCPU number k (counted
 *  over the step's domains in order): the k-th online CPU, modulo their
 *  number. */
int hv_act_pin_cpu(const struct hv_act_virt *v, int k);

/** Fills map (v->maplen bytes) with every online host CPU. */
void hv_act_map_online(const struct hv_act_virt *v, unsigned char *map);

/** Fills map with the host CPUs `vcpu_pin=on` leaves free of the plan's
 *  total_vcpus vCPUs; when they take every CPU, the last online CPU. */
void hv_act_map_free(const struct hv_act_virt *v, int total_vcpus, unsigned char *map);

/** Writes map as a CPU list ("0-3,6") into buf; "" for an empty map. */
void hv_act_map_string(const unsigned char *map, int maplen, char *buf, size_t len);

/** Parses a CPU list into map (maplen bytes, cleared first). Returns 0, or
 *  -1 when it is not a list of CPUs below maplen * 8. */
int hv_act_map_parse(const char *s, unsigned char *map, int maplen);

/** Notes in ctx->started that domain d (named name) is about to be started
 *  or restarted, with its UUID and its worker's newest registration now
 *  and that registration's boot (ctx->registration), so a step can wait
 *  for one from the next boot. */
void hv_act_note_start(struct hv_act_ctx *ctx, const char *name, virDomainPtr d);

/** Copies a kernel CPU set into map (maplen bytes). */
void hv_act_map_from_set(const cpu_set_t *set, unsigned char *map, int maplen);

/** The threads of QEMU process pid whose name begins with prefix ("CPU ",
 *  "IO "): fills tids and names (up to max) and returns how many, or -1
 *  when /proc/PID/task cannot be read. */
int hv_act_qemu_threads(pid_t pid, const char *prefix, pid_t *tids, char (*names)[16], int max);

#endif
