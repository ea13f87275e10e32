/* virt.c — loads libvirt at run time; see virt.h. */
#include "worker/virt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The soname, not "libvirt.so": that name is only in the -dev package. */
#define LIBVIRT_SONAME "libvirt.so.0"

static struct hv_virt table;
static const struct hv_virt *loaded;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *h = dlopen(LIBVIRT_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        snprintf(load_error, sizeof load_error,
                 "libvirt is not installed on this machine (cannot load %s: %s)", LIBVIRT_SONAME,
                 dlerror());
        return;
    }
    /* dlsym returns void *; POSIX guarantees it converts to a function
     * pointer, C does not, hence the memcpy. */
#define HV_VIRT_RESOLVE(name)                                                                      \
    {                                                                                              \
        void *sym = dlsym(h, "vir" #name);                                                         \
        if (sym == NULL) {                                                                         \
            snprintf(load_error, sizeof load_error,                                                \
                     "the installed libvirt lacks vir" #name " (too old?)");                       \
            dlclose(h);                                                                            \
            return;                                                                                \
        }                                                                                          \
        memcpy(&table.name, &sym, sizeof sym);                                                     \
    }
    HV_VIRT_FUNCTIONS(HV_VIRT_RESOLVE)
#undef HV_VIRT_RESOLVE
    if (table.Initialize() != 0) {
        snprintf(load_error, sizeof load_error, "cannot initialise libvirt");
        return; /* the library stays loaded: libvirt cannot be unloaded safely */
    }
    loaded = &table;
}

const struct hv_virt *hv_virt_load(char *err, size_t errlen)
{
    pthread_once(&once, load);
    if (loaded == NULL && err != NULL)
        snprintf(err, errlen, "%s", load_error);
    return loaded;
}
