/* facts_kvmprobe.c — the KVM probe's cached answer in the facts; see
 * facts.h. */
#include "worker/facts.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

const char *hv_facts_kvm_probe_default(char *buf, size_t len)
{
    const char *cache = getenv("HVBENCH_GUEST_CACHE");
    if (cache != NULL && cache[0] != '\0')
        snprintf(buf, len, "%s/kvm-probe.json", cache);
    else
        snprintf(buf, len, "var/guest-image/kvm-probe.json");
    return buf;
}

/* Whether the host the answer was probed on is this one as it is now:
 * the same kernel, and /dev/kvm there or not alike. */
static bool probe_current(const json_t *host)
{
    struct utsname u;
    const char *kernel = json_string_value(json_object_get(host, "host_kernel"));
    const char *dev_kvm = json_string_value(json_object_get(host, "dev_kvm"));
    if (kernel == NULL || dev_kvm == NULL || uname(&u) != 0)
        return false;
    bool present = access("/dev/kvm", F_OK) == 0;
    return strcmp(kernel, u.release) == 0 && strcmp(dev_kvm, present ? "present" : "absent") == 0;
}

int hv_facts_add_kvm_probe(json_t *facts, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    if (doc == NULL) {
        snprintf(err, errlen, "cannot read the KVM probe's answer %s: %s", path, je.text);
        return -1;
    }
    const char *accel = json_string_value(json_object_get(doc, "accel"));
    const char *reason = json_string_value(json_object_get(doc, "reason"));
    const char *at = json_string_value(json_object_get(doc, "probed_at"));
    if (accel == NULL || (strcmp(accel, "kvm") != 0 && strcmp(accel, "tcg") != 0) ||
        reason == NULL) {
        snprintf(err, errlen,
                 "%s is not an answer of deploy/guest-image/probe-kvm.sh (accel kvm or tcg, "
                 "reason)",
                 path);
        json_decref(doc);
        return -1;
    }
    const json_t *secs = json_object_get(doc, "seconds_to_marker");
    json_t *probe =
        json_pack("{s:s, s:s, s:s?, s:O, s:s, s:b}", "answer", accel, "why", reason, "probed_at",
                  at, "seconds_to_marker", json_is_number(secs) ? secs : json_null(), "file", path,
                  "current", probe_current(json_object_get(doc, "host")));
    json_decref(doc);
    if (probe == NULL || json_object_set_new(facts, "kvm_probe", probe) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}
