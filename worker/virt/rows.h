/* rows.h — the actuator tables of each module and what actuators.c needs
 * from them to run a step. Internal to worker/virt/.
 *
 * Each table lists its rows in the order they are applied: host rows
 * (act_host.c), restart-class guest rows (act_xml.c: edits of the domain
 * XML, disk bus before iothreads so I/O threads go only to disks that can
 * take them), live guest rows (act_live.c). */
#ifndef HV_WORKER_VIRT_ROWS_H
#define HV_WORKER_VIRT_ROWS_H

#include "worker/virt/actuator.h"
#include "worker/virt/domain.h"
#include "worker/virt/xml.h"

extern const struct hv_actuator hv_host_rows[];
extern const size_t hv_host_nrows;
extern const struct hv_actuator hv_xml_rows[];
extern const size_t hv_xml_nrows;
extern const struct hv_actuator hv_live_rows[];
extern const size_t hv_live_nrows;

/** Whether host row a can work on this host at all, checked cheaply and
 *  without changing anything: a knob's file exists and may be written, a
 *  module parameter's module is loaded. Rows that need the step's disk or
 *  NIC are not checked (0). Returns 0, or -1 with why naming what is
 *  missing. */
int hv_host_row_probe(const struct hv_actuator *a, const struct hv_act_ctx *ctx, char *why,
                      size_t len);

/** Applies the restart-class levels of levels (normalised: factor →
 *  level string) to domain d: one edit of its persistent XML, checked,
 *  journalled, defined, and the domain restarted when it runs and a
 *  restart is allowed. Returns 0 or -1 with err. */
int hv_xml_apply_domain(struct hv_act_ctx *ctx, struct hv_act_domain *d, const json_t *levels,
                        char *err, size_t len);

/** Loads the definition restart rows read back from into d->xml: the live
 *  XML of a running domain, else the persistent one. Returns 0 or -1 with
 *  err. */
int hv_xml_load_for_read(struct hv_act_ctx *ctx, struct hv_act_domain *d, char *err, size_t len);

/** The target device (e.g. "vdb") of d's benchmark disk, its second disk,
 *  from the live XML, into dev. Returns 0 or -1 with err. */
int hv_xml_bench_disk_dev(struct hv_act_ctx *ctx, struct hv_act_domain *d, char *dev, size_t n,
                          char *err, size_t len);

/** The benchmark disk of a domain definition (root: <domain>): its second
 *  <disk device='disk'>, or NULL. */
xmlNodePtr hv_domxml_bench_disk(xmlNodePtr root);

/** The revert of every restart row: defines the journalled XML again and
 *  restarts the domain when the plan restarted it. */
int hv_xml_revert_domain(const struct hv_actuator *a, struct hv_act_ctx *ctx, const json_t *entry,
                         char *err, size_t len);

/** The journal kind of site factors (act_site.c). */
#define HV_SITE_KIND "site_factor"

/** The row every site factor shares: it reverts any site_factor entry
 *  from the entry alone. hv_site_row_of() gives the row of one factor
 *  (its name, its declaration as data, NULL when undeclared). */
struct hv_site_factor;
extern const struct hv_actuator hv_site_row;
struct hv_actuator hv_site_row_of(const char *factor);

/** Adds to out the value each declared site factor's read program prints
 *  now, as "site.NAME": level (a factor whose program fails, or prints
 *  what is no level, is left out). */
void hv_site_settings(struct hv_act_ctx *ctx, json_t *out);

/** The declaration of a plan's site factor ("site.zfs_sync") in the
 *  configuration hv_actuators_use_conf() set, or NULL. */
const struct hv_site_factor *hv_site_find(const char *factor);

/** Checks level v of a site factor against its declaration: writes it
 *  into out and returns 0, or -1 with why (undeclared, not a level). */
int hv_site_level(const char *factor, const json_t *v, char *out, size_t n, char *why, size_t len);

/** The model `cpu_mode=custom` names: QEMU's own default CPU model. */
#define HV_CUSTOM_CPU_MODEL "qemu64"

#endif
