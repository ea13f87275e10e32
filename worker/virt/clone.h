/* clone.h — a plan's guests made from a template domain
 * (targets.guests.template, docs/virt.md "Guest templates").
 *
 * A clone is a new persistent domain defined from the template's
 * persistent XML with:
 *   - its own name (the plan's guest target name, which carries the plan
 *     id), also put into the kernel command line's hvbench.name= when the
 *     template has one, so the guest's worker registers under it;
 *   - no <uuid> and no <mac address>: libvirt gives fresh ones (the UUID
 *     becomes the guest's DMI product UUID, which links its worker to the
 *     domain);
 *   - <metadata><hvbench:plan xmlns:hvbench="urn:hvbench:plan">PLAN
 *     </hvbench:plan></metadata>, the mark act_restart.c reads: the plan
 *     may restart it;
 *   - for every file-backed writable disk, a qcow2 overlay whose backing
 *     file is the template's disk (raw or qcow2, as the template has it);
 *   - for every file serial or console, a log file of its own.
 * Overlays and logs go into DIR/hvbench-clones/ where DIR is the folder of
 * the template's file (a libvirt dir storage pool, named
 * hvbench-clones-HASH, created with mode 0755 when missing so the QEMU user
 * can read it), named CLONE-FILE (CLONE-vda.qcow2, CLONE-serial.log).
 *
 * The journal entry (kind "clone", object the clone's name, with
 * "template", "overlays", "files", "pools", "dirs") is written before
 * anything is created, so a restore after a crash removes whatever part
 * was made. Every libvirt call goes through the dlopen-ed table
 * (worker/virt.h); nothing is run through a shell, and the pool's and
 * volumes' XML is built with libxml2 (xml.h), never printed. */
#ifndef HV_WORKER_VIRT_CLONE_H
#define HV_WORKER_VIRT_CLONE_H

#include "worker/virt/actuator.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/** The journal kind of a clone. */
#define HV_CLONE_KIND "clone"

/** The folder, under the template file's folder, holding the clones'
 *  overlays and logs. */
#define HV_CLONE_DIR "hvbench-clones"

/** Makes clone name of the domain tmpl for ctx->plan_id (journalled
 *  first, then overlays created, then defined; not started). A domain
 *  called name that this plan created already is kept (a retried step).
 *  Returns 1 when it created the clone, 0 when it was there, -1 with err
 *  (also when a domain of that name exists that the plan did not create:
 *  it is left alone; and when tmpl or name is not a host-safe name,
 *  names.h: nothing is looked up or made). */
int hv_clone_create(struct hv_act_ctx *ctx, const char *tmpl, const char *name, char *err,
                    size_t len);

/** Starts clone name unless it runs. Returns 0 or -1 with err. */
int hv_clone_start(struct hv_act_ctx *ctx, const char *name, char *err, size_t len);

/** Removes what a clone entry of the journal names: the domain (destroyed
 *  when running, then undefined; only when it carries the plan's mark),
 *  its overlays and files, and the pools and folders it left empty.
 *  Appends the change to ctx->changes. Returns 0, or -1 with err when
 *  something is left. */
int hv_clone_revert(struct hv_act_ctx *ctx, const json_t *entry, char *err, size_t len);

/** Whether the journal holds a clone entry for domain name. */
bool hv_clone_journalled(const struct hv_journal *j, const char *name);

#endif
