/* guestnic.h — the guest's side of the net_queues and guest_mtu factors.
 *
 * The host worker sets both in the domain's XML (act_xml.c): the virtio
 * NIC then offers N queue pairs and an MTU, but the guest's kernel still
 * uses one queue and its own MTU until it is told. A guest's worker, when
 * a job's configuration has either level, sets its own NIC before the
 * engine runs: the MTU by writing /sys/class/net/IF/mtu, the queues with
 * the SIOCETHTOOL ioctl (ETHTOOL_SCHANNELS, combined channels); no program
 * is run. Both are read back (the mtu file; ETHTOOL_GCHANNELS, or the
 * count of /sys/class/net/IF/queues/rx-* where the driver has no channel
 * calls) into the job's observed.settings, and read again when the job
 * ends: a level that moved fails the job.
 *
 * The NIC is the one the worker's --nic names, else the first interface
 * other than lo with a default route (/proc/net/route). Files are read and
 * written under a root ("/", or the worker's --sysfs-root in tests); the
 * ioctls act on the running kernel only, so under another root a queue
 * count that differs from the level cannot be set. */
#ifndef HV_WORKER_VIRT_GUESTNIC_H
#define HV_WORKER_VIRT_GUESTNIC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/** Whether levels (factor → level) has net_queues or guest_mtu. */
bool hv_guest_nic_wanted(const json_t *levels);

/** The NIC to act on: named (checked under root's sys/class/net) when not
 *  NULL, else the first non-loopback interface with a default route in
 *  root's proc/net/route. Returns 0 with its name in ifname, or -1 with
 *  err. */
int hv_guest_nic_find(const char *root, const char *named, char *ifname, size_t n, char *err,
                      size_t len);

/** Reads factor ("net_queues" or "guest_mtu") of ifname: its value into
 *  value and where it came from into source. Returns 0 or -1 with err. */
int hv_guest_nic_read(const char *root, const char *ifname, const char *factor, char *value,
                      size_t vn, char *source, size_t sn, char *err, size_t len);

/** Sets every guest NIC level of levels on the NIC (see
 *  hv_guest_nic_find()) and reads each back: *settings gets a new object
 *  factor → {"level", "read_back", "source"} (what could be read, also on
 *  failure). A level the NIC already reads is not written. Returns 0, or
 *  -1 with err naming each factor, its level and what is missing (root,
 *  a driver that refuses, too few queues), separated by "; ". */
int hv_guest_nic_apply(const json_t *levels, const char *root, const char *named, json_t **settings,
                       char *err, size_t len);

/** Reads the levels of settings (from hv_guest_nic_apply()) again, adding
 *  "start" (the first reading) and "end" (this one, also the new
 *  "read_back") to each. Returns 0, or -1 with err naming each level that
 *  no longer reads back ("guest_mtu=9000: reads back 1500 (SOURCE)"). */
int hv_guest_nic_check(const char *root, const char *named, json_t *settings, char *err,
                       size_t len);

#endif
