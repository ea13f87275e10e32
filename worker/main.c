/* main.c — hvbench-worker: options, facts, then the worker loop. */
#include "httpc.h"
#include "log.h"
#include "optfile.h"
#include "worker/config.h"
#include "worker/engines/custom.h"
#include "worker/facts.h"
#include "worker/job.h"
#include "worker/loop.h"
#include "worker/state.h"
#include "worker/client.h"
#include "worker/virt/actuator.h"
#include "worker/virt/restored.h"
#include "worker/virt.h"
#include "worker/virt/step.h"
#include "worker/wake.h"

#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_USAGE 2

static const char usage_text[] =
    "Usage: hvbench-worker --server URL --token TOKEN [options]\n"
    "       hvbench-worker --restore [--name NAME] [--libvirt URI] [--state-dir DIR]\n"
    "                      [--server URL]\n"
    "\n"
    "Registers this machine with an hvbench server, then claims and runs its\n"
    "benchmark jobs and uploads the results. On a host it also applies the\n"
    "tuning of each block of a plan and restores it when the plan ends; what it\n"
    "changed is kept in a journal in the state folder until it is put back.\n"
    "\n"
    "  --server URL      server base URL (default: $HVBENCH_SERVER)\n"
    "  --token TOKEN     token with the worker role (default: $HVBENCH_TOKEN)\n"
    "  --name NAME       target name (default: $HVBENCH_WORKER_NAME, else the hostname)\n"
    "  --kind host|guest what this machine is (default: guessed from its facts)\n"
    "  --host NAME       a guest's host, as its host worker registered it (guests\n"
    "                    are told apart by host and name; default: the host whose\n"
    "                    worker lists a libvirt domain of this guest's DMI UUID)\n"
    "  --once            run one job, then exit (waits for a job if none is queued)\n"
    "  --wait SECONDS    long-poll claims: the server holds an empty claim up to\n"
    "                    this long (default 25, 0..60; 0: claim every --poll seconds)\n"
    "  --poll SECONDS    wait after finding no work when claims are not held\n"
    "                    (default 2, at least 1)\n"
    "  --label KEY=VALUE a label of this target, repeatable (plans pick guests by\n"
    "                    label: \"guests\": {\"label\": \"pool=bench\"})\n"
    "  --libvirt URI     report this libvirt connection's hypervisor and domains\n"
    "                    (e.g. qemu:///system); failing to connect is fatal; and\n"
    "                    sample the host while its guests run jobs (host.* samples)\n"
    "  --config FILE     the worker's configuration (e.g. /etc/hvbench/worker.json;\n"
    "                    env HVBENCH_WORKER_CONFIG): these options by name, and the\n"
    "                    site benchmarks, site factors (\"site.NAME\") and drain\n"
    "                    hooks (\"hooks\") plans may name; checked at start. Every\n"
    "                    option is also HVBENCH_WORKER_NAME (upper case, - as _),\n"
    "                    which overrides the file; the command line overrides both\n"
    "  --check-config    print the settings, check the file and the server's\n"
    "                    /healthz, and exit (0 ok, 1 a problem, 2 a usage error)\n"
    "  --state-dir DIR   where the worker keeps its credential and results not yet\n"
    "                    delivered, in DIR/NAME/ (default: $STATE_DIRECTORY, else\n"
    "                    /var/lib/hvbench-worker as root, else ~/.local/state/hvbench-worker)\n"
    "  --advertise ADDR  the address other members of a group connect to when this\n"
    "                    worker serves a net workload (default: the local address\n"
    "                    of its route to the server)\n"
    "  --restore         put back every tuning setting the journal holds (left by a\n"
    "                    worker that stopped mid-plan), then exit: 0 when nothing\n"
    "                    is left; needs no server (a normal start does this too,\n"
    "                    before its first claim). What it put back is reported to\n"
    "                    --server when the state folder holds a credential of it,\n"
    "                    else at the next start\n"
    "  --guest-wait SECONDS  on a host, how long an apply step that restarted a\n"
    "                    guest waits for its worker to register again (from a new\n"
    "                    boot) before it fails, and for a guest it started that\n"
    "                    still boots before powering it off (default 300, 1..86400)\n"
    "  --run-slack SECONDS  how long an engine may run beyond 3 times its\n"
    "                    parameters' time (warmup + seconds) before its job fails\n"
    "                    (default 300, 1..86400)\n"
    "  --nic IFACE       in a guest, the NIC it sets for the net_queues and guest_mtu\n"
    "                    factors (default: the first one but lo with a default route)\n"
    "  --settings-every SECONDS  on a host, report the host settings of the\n"
    "                    catalogue it reads (thp, ksm, ...) with each registration\n"
    "                    and then every SECONDS (default 3600; 0: only at\n"
    "                    registration, 0..604800)\n"
    "  --sysfs-root DIR  read and write host settings (/sys/...) under DIR instead\n"
    "                    of / (tests)\n"
    "  --kvm-probe FILE  on a host, the answer of deploy/guest-image/probe-kvm.sh\n"
    "                    (whether guests boot with KVM here) for the facts\n"
    "                    (default: $HVBENCH_GUEST_CACHE/kvm-probe.json, else\n"
    "                    var/guest-image/kvm-probe.json, when it exists; none: leave\n"
    "                    it out)\n"
    "  --help            show this help\n"
    "\n"
    "SIGTERM/SIGINT: stop claiming, stop and release a running job, exit 0;\n"
    "a second signal exits at once. HVBENCH_LOG=debug|info|warn|error sets the\n"
    "log level. HVBENCH_TEST_FACTS=FILE (tests only) merges FILE's JSON object over\n"
    "the probed facts, HVBENCH_TEST_BOOT_ID=ID (tests only) stands for the machine's\n"
    "boot id. Exit status: 0 after a shutdown or a --once job, 1 on a refused\n"
    "token or another failure, 2 on a usage error.\n";

/* An address or host name as clients will resolve it: letters, digits,
 * '.', '-', ':' (IPv6), at most 255 bytes. */
static bool host_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 255)
        return false;
    for (const char *p = s; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '-' || *p == ':'))
            return false;
    return true;
}

/* A network interface's name as the kernel takes it: 1 to 15 printable
 * characters, no '/', ':' or space, not "." or "..". */
static bool nic_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 15 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return false;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~' || *s == '/' || *s == ':')
            return false;
    return true;
}

struct options {
    const char *server, *token, *name, *kind, *libvirt, *config, *advertise, *state_dir;
    const char *sysfs_root;
    const char *host;      /* --host: a guest's host, or NULL */
    const char *nic;       /* --nic: a guest's own NIC, or NULL */
    const char *kvm_probe; /* NULL: the default, when it exists */
    json_t *labels;        /* NULL without --label */
    double poll, wait, guest_wait, run_slack, settings_every;
    bool once, restore, check_config;
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints a usage problem and returns the usage exit status. */
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hvbench-worker: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'hvbench-worker --help'.\n");
    va_end(ap);
    return EXIT_USAGE;
}

/* The long options' codes. */
enum {
    OPT_SERVER = 256,
    OPT_TOKEN,
    OPT_NAME,
    OPT_KIND,
    OPT_ONCE,
    OPT_POLL,
    OPT_WAIT,
    OPT_LIBVIRT,
    OPT_LABEL,
    OPT_CONFIG,
    OPT_GUEST_WAIT,
    OPT_ADVERTISE,
    OPT_STATE_DIR,
    OPT_RESTORE,
    OPT_SYSFS_ROOT,
    OPT_KVM_PROBE,
    OPT_NIC,
    OPT_HOST,
    OPT_CHECK_CONFIG,
    OPT_RUN_SLACK,
    OPT_SETTINGS_EVERY
};

/* Reads optarg as a number of seconds into *v. Returns false when it is
 * not a number. */
static bool seconds_arg(double *v)
{
    char *end;
    errno = 0;
    *v = strtod(optarg, &end);
    return errno == 0 && end != optarg && *end == '\0' && *v == *v;
}

/* Takes one option into *o. Returns -1 to go on, or an exit status. */
static int take_option(int opt, char **argv, struct options *o)
{
    switch (opt) {
    case OPT_SERVER:
        o->server = optarg;
        break;
    case OPT_TOKEN:
        o->token = optarg;
        break;
    case OPT_NAME:
        o->name = optarg;
        break;
    case OPT_KIND:
        o->kind = optarg;
        break;
    case OPT_HOST:
        if (*optarg == '\0' || strchr(optarg, '/') != NULL)
            return usage_error("--host needs the name of the guest's host (no '/'), not '%s'",
                               optarg);
        o->host = optarg;
        break;
    case OPT_ONCE:
        o->once = true;
        break;
    case OPT_POLL:
        if (!seconds_arg(&o->poll))
            return usage_error("--poll needs a number of seconds, not '%s'", optarg);
        break;
    case OPT_WAIT:
        if (!seconds_arg(&o->wait) || !(o->wait >= 0 && o->wait <= 60))
            return usage_error("--wait needs a number of seconds from 0 to 60, not '%s'", optarg);
        break;
    case OPT_LIBVIRT:
        if (*optarg == '\0')
            return usage_error("--libvirt needs a connection URI, e.g. qemu:///system");
        o->libvirt = optarg;
        break;
    case OPT_LABEL: {
        const char *eq = strchr(optarg, '=');
        if (eq == NULL || eq == optarg || eq - optarg > 64)
            return usage_error("--label needs KEY=VALUE, not '%s'", optarg);
        if (o->labels == NULL)
            o->labels = json_object();
        char key[65];
        memcpy(key, optarg, (size_t)(eq - optarg));
        key[eq - optarg] = '\0';
        json_object_set_new(o->labels, key, json_string(eq + 1));
        break;
    }
    case OPT_CONFIG:
        if (*optarg == '\0')
            return usage_error("--config needs a file name");
        o->config = optarg;
        break;
    case OPT_ADVERTISE:
        if (!host_name_ok(optarg))
            return usage_error("--advertise needs an IP address or a host name, not '%s'", optarg);
        o->advertise = optarg;
        break;
    case OPT_STATE_DIR:
        if (*optarg == '\0')
            return usage_error("--state-dir needs a folder");
        o->state_dir = optarg;
        break;
    case OPT_RESTORE:
        o->restore = true;
        break;
    case OPT_CHECK_CONFIG:
        o->check_config = true;
        break;
    case OPT_NIC:
        if (!nic_name_ok(optarg))
            return usage_error("--nic needs a network interface's name (1 to 15 characters, no "
                               "'/', ':' or spaces), not '%s'",
                               optarg);
        o->nic = optarg;
        break;
    case OPT_SYSFS_ROOT:
        if (optarg[0] != '/')
            return usage_error("--sysfs-root needs an absolute folder, not '%s'", optarg);
        o->sysfs_root = optarg;
        break;
    case OPT_GUEST_WAIT:
        if (!seconds_arg(&o->guest_wait) || !(o->guest_wait >= 1 && o->guest_wait <= 86400))
            return usage_error("--guest-wait needs a number of seconds from 1 to 86400, not '%s'",
                               optarg);
        break;
    case OPT_RUN_SLACK:
        if (!seconds_arg(&o->run_slack) || !(o->run_slack >= 1 && o->run_slack <= 86400))
            return usage_error("--run-slack needs a number of seconds from 1 to 86400, not '%s'",
                               optarg);
        break;
    case OPT_SETTINGS_EVERY:
        if (!seconds_arg(&o->settings_every) ||
            !(o->settings_every >= 0 && o->settings_every <= 604800))
            return usage_error(
                "--settings-every needs a number of seconds from 0 to 604800, not '%s'", optarg);
        break;
    case OPT_KVM_PROBE:
        if (*optarg == '\0')
            return usage_error("--kvm-probe needs a file name, or none");
        o->kvm_probe = optarg;
        break;
    case 'h':
        fputs(usage_text, stdout);
        return EXIT_SUCCESS;
    default:
        return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
    }
    return -1;
}

/* The worker's settings as one argument vector (lib/optfile.h): those of
 * the configuration file (--config FILE or $HVBENCH_WORKER_CONFIG; its
 * "benchmarks", "factors" and "hooks" sections are config.h's), then the
 * HVBENCH_WORKER_* variables, then the command line. NULL after printing
 * the file's problems. */
static char **settings_argv(const struct option *longopts, int argc, char **argv, int *n)
{
    static const char *const cli_only[] = {"config",  "check-config", "help",
                                           "restore", "once",         NULL};
    static const char *const lists[] = {"label", NULL};
    static const char *const sections[] = {"benchmarks", "factors", "hooks", NULL};
    const char *path = hv_optfile_find(argc, argv, "config");
    if (path == NULL)
        path = getenv("HVBENCH_WORKER_CONFIG");
    json_t *errors = json_array();
    json_t *doc = path != NULL && *path != '\0' ? hv_optfile_load(path, errors) : NULL;
    const struct hv_optfile_spec spec = {longopts, "HVBENCH_WORKER_", cli_only, lists};
    char **v = hv_optfile_argv(&spec, doc, sections, argc, argv, n, errors);
    json_decref(doc);
    hv_optfile_print_errors("hvbench-worker", path, errors);
    if (json_array_size(errors) > 0 || v == NULL) {
        if (v == NULL && json_array_size(errors) == 0)
            fprintf(stderr, "hvbench-worker: out of memory\n");
        json_decref(errors);
        hv_optfile_free(v);
        return NULL;
    }
    json_decref(errors);
    return v;
}

/* Fills *o from the configuration file, the environment, then the command
 * line. Returns -1 to go on, or an exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"server", required_argument, NULL, OPT_SERVER},
        {"token", required_argument, NULL, OPT_TOKEN},
        {"name", required_argument, NULL, OPT_NAME},
        {"kind", required_argument, NULL, OPT_KIND},
        {"host", required_argument, NULL, OPT_HOST},
        {"once", no_argument, NULL, OPT_ONCE},
        {"poll", required_argument, NULL, OPT_POLL},
        {"wait", required_argument, NULL, OPT_WAIT},
        {"libvirt", required_argument, NULL, OPT_LIBVIRT},
        {"label", required_argument, NULL, OPT_LABEL},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"advertise", required_argument, NULL, OPT_ADVERTISE},
        {"state-dir", required_argument, NULL, OPT_STATE_DIR},
        {"restore", no_argument, NULL, OPT_RESTORE},
        {"sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT},
        {"kvm-probe", required_argument, NULL, OPT_KVM_PROBE},
        {"nic", required_argument, NULL, OPT_NIC},
        {"check-config", no_argument, NULL, OPT_CHECK_CONFIG},
        {"guest-wait", required_argument, NULL, OPT_GUEST_WAIT},
        {"run-slack", required_argument, NULL, OPT_RUN_SLACK},
        {"settings-every", required_argument, NULL, OPT_SETTINGS_EVERY},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    *o = (struct options){.server = getenv("HVBENCH_SERVER"),
                          .token = getenv("HVBENCH_TOKEN"),
                          .name = getenv("HVBENCH_WORKER_NAME"),
                          .sysfs_root = "/",
                          .poll = 2,
                          .wait = 25,
                          .guest_wait = 300,
                          .run_slack = HV_JOB_RUN_SLACK,
                          .settings_every = 3600};
    int n = 0;
    char **v = settings_argv(longopts, argc, argv, &n);
    if (v == NULL)
        return EXIT_USAGE;
    /* Kept: optarg points into it for the life of the process. */
    static char **volatile kept;
    kept = v;
    argc = n;
    argv = kept;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int status = take_option(opt, argv, o);
        if (status >= 0)
            return status;
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (o->config == NULL && getenv("HVBENCH_WORKER_CONFIG") != NULL &&
        *getenv("HVBENCH_WORKER_CONFIG") != '\0')
        o->config = getenv("HVBENCH_WORKER_CONFIG");
    if (o->restore)
        return -1; /* no server needed */
    if (o->server == NULL || *o->server == '\0')
        return usage_error("no server: give --server URL or set HVBENCH_SERVER");
    if (o->token == NULL || *o->token == '\0')
        return usage_error("no token: give --token TOKEN or set HVBENCH_TOKEN");
    if (o->kind != NULL && strcmp(o->kind, "host") != 0 && strcmp(o->kind, "guest") != 0)
        return usage_error("--kind must be host or guest, not '%s'", o->kind);
    if (o->host != NULL && o->kind != NULL && strcmp(o->kind, "guest") != 0)
        return usage_error("--host names a guest's host: it needs --kind guest");
    return -1;
}

/* The state folder: --state-dir or the default. */
static void state_dir_of(const struct options *o, char *buf, size_t len)
{
    if (o->state_dir != NULL)
        snprintf(buf, len, "%s", o->state_dir);
    else
        hv_state_default_dir(buf, len);
}

/* Puts back what the journal of a worker (that stopped mid-plan) holds,
 * at its start or for --restore (how: restored.h), noting what it put
 * back for the server. Returns the number of settings left. */
static size_t restore_journal(const struct options *o, const char *how)
{
    char dir[1200], noted[1200];
    hv_step_journal_dir(dir, sizeof dir);
    hv_restored_path(noted, sizeof noted);
    struct hv_step_env env = {.root = o->sysfs_root,
                              .libvirt_uri = o->libvirt,
                              .journal_dir = dir,
                              .restored_file = noted};
    return hv_step_restore_all(&env, how);
}

/* --restore: reports what was restored (this run's and any earlier not
 * yet reported) when a server is named and this worker holds a credential
 * of it; otherwise, or when the server cannot take it, the next
 * registration does. */
static void restore_report(const struct options *o)
{
    char noted[1200], err[1300], token[80];
    hv_restored_path(noted, sizeof noted);
    json_t *list = hv_restored_load(noted, err, sizeof err);
    size_t n = json_array_size(list);
    json_decref(list);
    if (n == 0)
        return;
    long long worker_id = 0;
    if (o->server == NULL || *o->server == '\0' ||
        hv_state_credential_load(o->server, token, sizeof token, &worker_id) != 0) {
        hv_info("%zu restored setting%s will be reported to the server at the worker's next "
                "registration (%s)",
                n, n == 1 ? "" : "s",
                o->server == NULL || *o->server == '\0' ? "no --server"
                                                        : "no worker credential of this server");
        return;
    }
    struct hv_client *c = hv_client_new(o->server, token, 0, NULL);
    if (c == NULL || hv_restored_report(c, noted) != 0)
        hv_info("what was not reported now is reported at the worker's next registration");
    hv_client_free(c);
}

/* hvbench-worker --restore: restores and exits, 0 when nothing is left. */
static int restore_only(const struct options *o)
{
    char host[256] = "", state_dir[1024], err[1200];
    gethostname(host, sizeof host - 1);
    const char *name = o->name != NULL && *o->name != '\0' ? o->name : host;
    state_dir_of(o, state_dir, sizeof state_dir);
    if (name[0] == '\0') {
        hv_error("no hostname to name this worker by; give --name");
        return EXIT_USAGE;
    }
    if (hv_state_open(state_dir, name, err, sizeof err) != 0) {
        hv_error("%s (give --state-dir)", err);
        return EXIT_FAILURE;
    }
    size_t left = restore_journal(o, HV_RESTORED_RESTORE_COMMAND);
    restore_report(o);
    if (left > 0) {
        hv_error("%zu setting%s could not be restored; they stay in %s/journal", left,
                 left == 1 ? "" : "s", hv_state_path());
        return EXIT_FAILURE;
    }
    hv_info("nothing left to restore in %s/journal", hv_state_path());
    return EXIT_SUCCESS;
}

/* Adds the KVM probe's answer to a host's facts: the file named, else the
 * probe's cache when there is one. A file that cannot be used is logged
 * and left out: the worker runs without it. */
static void add_kvm_probe(const struct options *o, json_t *facts)
{
    char buf[1024], err[1200];
    const char *path = o->kvm_probe;
    if (path != NULL && strcmp(path, "none") == 0)
        return;
    if (path == NULL) {
        path = hv_facts_kvm_probe_default(buf, sizeof buf);
        if (access(path, F_OK) != 0)
            return;
    }
    if (hv_facts_add_kvm_probe(facts, path, err, sizeof err) != 0) {
        hv_warn("%s; the facts say nothing of it", err);
        return;
    }
    const json_t *p = json_object_get(facts, "kvm_probe");
    hv_info("KVM probe (%s): %s: %s%s", path, json_string_value(json_object_get(p, "answer")),
            json_string_value(json_object_get(p, "why")),
            json_is_true(json_object_get(p, "current"))
                ? ""
                : " (probed on another kernel or /dev/kvm)");
}

/* Adds a host's block devices and mounts (facts.storage), so a plan
 * tuning the disk that holds / or this worker's state is warned of at
 * submission. Under --sysfs-root DIR the mounts are DIR/proc/self/mountinfo
 * (absent: none), to match the devices of DIR/sys/block. */
static void add_storage(const struct options *o, json_t *facts)
{
    char state[1024], mountinfo[1200];
    state_dir_of(o, state, sizeof state);
    bool real = strcmp(o->sysfs_root, "/") == 0;
    snprintf(mountinfo, sizeof mountinfo, "%s/proc/self/mountinfo", real ? "" : o->sysfs_root);
    hv_facts_add_storage(facts, o->sysfs_root, mountinfo, state);
}

/* Tests only: $HVBENCH_TEST_FACTS names a JSON object merged over the
 * probed facts, so workers on one machine register as machines that
 * differ (tests/integration/test_fleet.sh). Read only when set. Returns
 * facts, or NULL after a message. */
static json_t *test_facts(json_t *facts)
{
    const char *path = getenv("HVBENCH_TEST_FACTS");
    if (facts == NULL || path == NULL || path[0] == '\0')
        return facts;
    json_error_t err;
    json_t *over = json_load_file(path, 0, &err);
    if (!json_is_object(over) || json_object_update(facts, over) != 0) {
        hv_error("HVBENCH_TEST_FACTS=%s: not a JSON object (%s)", path, err.text);
        json_decref(over);
        json_decref(facts);
        return NULL;
    }
    hv_warn("facts overridden from %s (HVBENCH_TEST_FACTS: for tests only)", path);
    json_decref(over);
    return facts;
}

/* The facts this worker registers with: the machine's, its site
 * benchmarks, libvirt's view with --libvirt, and on a host what each
 * actuator can do here (so a plan the host cannot run is refused at
 * submission). Returns them, or NULL after a message. */
static json_t *collect_facts(const struct options *o, const struct hv_conf *conf)
{
    json_t *facts = hv_facts_collect();
    if (facts == NULL ||
        (conf != NULL &&
         (json_object_set_new(facts, "benchmarks", hv_conf_benchmarks_json(conf)) != 0 ||
          json_object_set_new(facts, "site_factors", hv_conf_factors_json(conf)) != 0 ||
          json_object_set_new(facts, "hooks", hv_conf_hooks_json(conf)) != 0))) {
        hv_error("cannot collect the machine's facts: out of memory");
        json_decref(facts);
        return NULL;
    }
    if (o->libvirt != NULL) {
        char err[512];
        if (hv_facts_add_libvirt(facts, o->libvirt, err, sizeof err) != 0) {
            hv_error("%s", err);
            json_decref(facts);
            return NULL;
        }
        json_t *lv = json_object_get(facts, "libvirt");
        hv_info("libvirt %s: %s %s, %zu domain%s", json_string_value(json_object_get(lv, "uri")),
                json_string_value(json_object_get(lv, "hypervisor")),
                json_string_value(json_object_get(lv, "hypervisor_version")),
                json_array_size(json_object_get(lv, "domains")),
                json_array_size(json_object_get(lv, "domains")) == 1 ? "" : "s");
    }
    const char *kind =
        o->kind != NULL ? o->kind : json_string_value(json_object_get(facts, "kind"));
    if (kind != NULL && strcmp(kind, "host") == 0) {
        struct hv_act_ctx probe = {.root = o->sysfs_root, .libvirt_uri = o->libvirt};
        json_t *acts = hv_actuators_probe(&probe);
        if (acts != NULL)
            json_object_set_new(facts, "actuators", acts);
        add_kvm_probe(o, facts);
        add_storage(o, facts);
    }
    return test_facts(facts);
}

/* libvirt's test driver (test:///default) keeps what was done to its
 * domains only while a connection of the process is open: once the last
 * one closes, the next starts from the driver's defaults again. The
 * worker opens a connection per task (facts, a step, a telemetry pass), so
 * a setting a step made could read back as the default in the next task.
 * Holding one connection for the worker's life keeps the driver's state as
 * a hypervisor keeps its own. NULL for any other URI. */
static virConnectPtr hold_test_driver(const char *uri)
{
    if (uri == NULL || strncmp(uri, "test:", 5) != 0)
        return NULL;
    char err[256];
    const struct hv_virt *lv = hv_virt_load(err, sizeof err);
    return lv != NULL ? lv->ConnectOpen(uri) : NULL;
}

/* --check-config: prints the settings the worker would run with, checks
 * its configuration file's sections and asks the server's /healthz.
 * Returns 0 when all is well, else 1 after naming each problem. */
static int check_config(const struct options *o)
{
    char state[4096];
    state_dir_of(o, state, sizeof state);
    char *labels = o->labels != NULL ? json_dumps(o->labels, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    printf("server = %s\nname = %s\nkind = %s\nlibvirt = %s\nconfig = %s\nstate-dir = %s\n"
           "sysfs-root = %s\npoll = %g\nwait = %g\nlabels = %s\nhost = %s\n",
           o->server, o->name != NULL ? o->name : "(the host name)",
           o->kind != NULL ? o->kind : "(from the facts)", o->libvirt ? o->libvirt : "(none)",
           o->config ? o->config : "(none)", state, o->sysfs_root, o->poll, o->wait,
           labels != NULL ? labels : "{}", o->host != NULL ? o->host : "(by DMI UUID)");
    free(labels);
    int problems = 0;
    if (o->config != NULL) {
        char err[4096];
        struct hv_conf *conf = hv_conf_load(o->config, err, sizeof err);
        if (conf == NULL) {
            fprintf(stderr, "hvbench-worker: invalid configuration %s\n", err);
            problems++;
        } else {
            printf("site benchmarks: %zu\nsite factors: %zu\n", conf->n_benchmarks,
                   conf->n_factors);
        }
        hv_conf_free(conf);
    }
    struct hv_httpc *c = hv_httpc_new(o->server, NULL, 10);
    struct hv_http_response resp = {0};
    if (c == NULL || hv_httpc_request(c, "GET", "/healthz", NULL, &resp) != 0 ||
        resp.status != 200) {
        char why[512] = "out of memory";
        if (c != NULL)
            hv_http_response_describe(&resp, why, sizeof why);
        fprintf(stderr, "hvbench-worker: server %s: /healthz: %s\n", o->server, why);
        problems++;
    } else {
        printf("server: /healthz answered 200\n");
    }
    hv_http_response_clear(&resp);
    hv_httpc_free(c);
    if (problems == 0)
        printf("configuration ok\n");
    return problems == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct options o;
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    hv_log_init("hvbench-worker", HV_LOG_INFO);
    if (o.check_config) {
        int rc = check_config(&o);
        json_decref(o.labels);
        return rc;
    }
    if (o.restore)
        return restore_only(&o);
    if (o.poll < 1) {
        hv_warn("--poll %g is below 1 s; using 1 s", o.poll);
        o.poll = 1;
    }
    if (hv_wake_init() != 0) {
        hv_error("cannot set up signal handling: %s", strerror(errno));
        return EXIT_FAILURE;
    }
    struct hv_conf *conf = NULL;
    if (o.config != NULL) {
        char err[4096];
        conf = hv_conf_load(o.config, err, sizeof err);
        if (conf == NULL) {
            hv_error("invalid configuration %s", err);
            return EXIT_USAGE;
        }
        hv_custom_use(conf);
        hv_actuators_use_conf(conf);
        hv_info("configuration %s: %zu site benchmark%s, %zu site factor%s", o.config,
                conf->n_benchmarks, conf->n_benchmarks == 1 ? "" : "s", conf->n_factors,
                conf->n_factors == 1 ? "" : "s");
    }
    json_t *facts = collect_facts(&o, conf);
    if (facts == NULL) {
        hv_conf_free(conf);
        return EXIT_FAILURE;
    }
    const char *kind = o.kind != NULL ? o.kind : json_string_value(json_object_get(facts, "kind"));
    char *fingerprint = hv_facts_fingerprint(facts);
    if (fingerprint == NULL) {
        hv_error("cannot collect the machine's facts: out of memory");
        json_decref(facts);
        return EXIT_FAILURE;
    }
    const char *hostname = json_string_value(json_object_get(facts, "hostname"));
    char boot_id[65];
    if (hv_facts_boot_id(boot_id, sizeof boot_id) != 0)
        hv_warn("cannot read this machine's boot id (/proc/sys/kernel/random/boot_id); "
                "registering without one");
    struct hv_worker_config cfg = {
        .server = o.server,
        .token = o.token,
        .name = o.name != NULL && *o.name != '\0' ? o.name : hostname,
        .kind = kind,
        .host = o.host,
        .facts = facts,
        .fingerprint = fingerprint,
        .labels = o.labels,
        .poll_seconds = o.poll,
        .wait_seconds = o.wait,
        .once = o.once,
        .advertise = o.advertise,
        .libvirt = o.libvirt,
        .sysfs_root = o.sysfs_root,
        .guest_wait = o.guest_wait,
        .nic = o.nic,
        .boot_id = boot_id[0] != '\0' ? boot_id : NULL,
        .settings_every = o.settings_every,
        .run_slack = o.run_slack,
    };
    char state_dir[1024], err[1200];
    state_dir_of(&o, state_dir, sizeof state_dir);
    if (cfg.name == NULL) {
        hv_error("no hostname to name this worker by; give --name");
        status = EXIT_USAGE;
    } else if (hv_state_open(state_dir, cfg.name, err, sizeof err) != 0) {
        hv_error("%s (give --state-dir)", err);
        status = EXIT_FAILURE;
    } else {
        hv_info("starting: server %s, name \"%s\", kind %s, %lld CPUs, claims %s%s", cfg.server,
                cfg.name, cfg.kind, (long long)json_integer_value(json_object_get(facts, "cpus")),
                cfg.wait_seconds > 0 ? "long-poll" : "poll", cfg.once ? ", one job" : "");
        size_t left = restore_journal(&o, HV_RESTORED_WORKER_START);
        if (left > 0)
            hv_warn("%zu tuning setting%s of an earlier run could not be restored; they stay in "
                    "%s/journal for the plan's restore step or --restore",
                    left, left == 1 ? "" : "s", hv_state_path());
        virConnectPtr held = hold_test_driver(o.libvirt);
        status = hv_worker_loop(&cfg);
        if (held != NULL)
            hv_virt_load(NULL, 0)->ConnectClose(held);
    }
    free(fingerprint);
    json_decref(facts);
    json_decref(o.labels);
    hv_custom_use(NULL);
    hv_actuators_use_conf(NULL);
    hv_conf_free(conf);
    return status;
}
