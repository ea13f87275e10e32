/* virt.h — libvirt, loaded when a worker first needs it.
 *
 * Only a host worker started with --libvirt talks to libvirt; guests and
 * bare-metal workers do not, and they often have no libvirt installed at
 * all. So the worker is not linked against libvirt: hv_virt_load() opens
 * libvirt.so.0 at run time and resolves the functions below. That also
 * keeps libvirt's own dependencies (GLib, libxml2, GnuTLS, ICU, a second
 * libcurl) out of an idle worker's memory.
 *
 * The table holds libvirt's own functions with their own types (taken
 * from <libvirt/libvirt.h> with __typeof__), named without the "vir"
 * prefix: lv->ConnectOpenReadOnly(uri). Using another function is one
 * more X() row in HV_VIRT_FUNCTIONS. The facts need the read-only rows;
 * the tuning actuators (worker/virt/) the read-write connection, pinning,
 * block I/O tuning and domain definition rows; guest templates
 * (worker/virt/clone.c) the storage pool and volume rows. Every row is in libvirt
 * 4.5 (virGetLastErrorCode is the newest). */
#ifndef HV_WORKER_VIRT_H
#define HV_WORKER_VIRT_H

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stddef.h>

#define HV_VIRT_FUNCTIONS(X)                                                                       \
    X(Initialize)                                                                                  \
    X(SetErrorFunc)                                                                                \
    X(ConnSetErrorFunc)                                                                            \
    X(GetLastErrorMessage)                                                                         \
    X(ConnectOpenReadOnly)                                                                         \
    X(ConnectClose)                                                                                \
    X(ConnectGetLibVersion)                                                                        \
    X(ConnectGetType)                                                                              \
    X(ConnectGetVersion)                                                                           \
    X(ConnectListAllDomains)                                                                       \
    X(DomainFree)                                                                                  \
    X(DomainGetName)                                                                               \
    X(DomainGetState)                                                                              \
    X(DomainGetUUIDString)                                                                         \
    X(GetLastErrorCode)                                                                            \
    X(ConnectOpen)                                                                                 \
    X(NodeGetCPUMap)                                                                               \
    X(NodeGetInfo)                                                                                 \
    X(DomainLookupByName)                                                                          \
    X(DomainGetID)                                                                                 \
    X(DomainGetInfo)                                                                               \
    X(DomainIsActive)                                                                              \
    X(DomainIsPersistent)                                                                          \
    X(DomainGetXMLDesc)                                                                            \
    X(DomainDefineXML)                                                                             \
    X(DomainCreate)                                                                                \
    X(DomainShutdown)                                                                              \
    X(DomainDestroy)                                                                               \
    X(DomainPinVcpu)                                                                               \
    X(DomainPinVcpuFlags)                                                                          \
    X(DomainGetVcpuPinInfo)                                                                        \
    X(DomainGetVcpus)                                                                              \
    X(DomainPinEmulator)                                                                           \
    X(DomainGetEmulatorPinInfo)                                                                    \
    X(DomainPinIOThread)                                                                           \
    X(DomainGetIOThreadInfo)                                                                       \
    X(DomainIOThreadInfoFree)                                                                      \
    X(DomainSetBlockIoTune)                                                                        \
    X(DomainGetBlockIoTune)                                                                        \
    X(TypedParamsAddULLong)                                                                        \
    X(TypedParamsGetULLong)                                                                        \
    X(TypedParamsClear)                                                                            \
    X(TypedParamsFree)                                                                             \
    X(ConnectGetAllDomainStats)                                                                    \
    X(DomainStatsRecordListFree)                                                                   \
    X(DomainUndefine)                                                                              \
    X(StoragePoolLookupByName)                                                                     \
    X(StoragePoolCreateXML)                                                                        \
    X(StoragePoolRefresh)                                                                          \
    X(StoragePoolNumOfVolumes)                                                                     \
    X(StoragePoolDestroy)                                                                          \
    X(StoragePoolFree)                                                                             \
    X(StorageVolCreateXML)                                                                         \
    X(StorageVolLookupByPath)                                                                      \
    X(StorageVolGetPath)                                                                           \
    X(StorageVolDelete)                                                                            \
    X(StorageVolFree)

/** libvirt's functions, resolved. */
struct hv_virt {
#define HV_VIRT_FIELD(name) __typeof__(vir##name) *name;
    HV_VIRT_FUNCTIONS(HV_VIRT_FIELD)
#undef HV_VIRT_FIELD
};

/** Loads libvirt (once per process; later calls return the same table)
 *  and calls virInitialize(). Returns the table, valid until the process
 *  ends, or NULL with err saying why (libvirt not installed, a function
 *  missing from an older libvirt). Thread safe. */
const struct hv_virt *hv_virt_load(char *err, size_t errlen);

#endif
