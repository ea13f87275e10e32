/* main.c — hvbench-server: serve the API, migrate the schema, manage
 * tokens. One subcommand table; each subcommand parses its own options. */
#include "auth.h"
#include "config.h"
#include "conns.h"
#include "db.h"
#include "batch.h"
#include "db_jobs.h"
#include "db_migrate.h"
#include "db_tokens.h"
#include "fileio.h"
#include "hooks.h"
#include "http.h"
#include "log.h"
#include "optfile.h"
#include "static.h"
#include "sweeper.h"
#include "waiters.h"
#include "webhooks.h"

#include "hv_build.h"

#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* The folder holding name ("web", "migrations"): the installed copy, or
 * the one in the current folder when running from a source tree. */
static const char *default_dir(const char *name)
{
    static char buf[2][4096];
    static int k;
    char *out = buf[k++ % 2];
    struct stat st;
    snprintf(out, sizeof buf[0], "%s/%s", HVBENCH_DATADIR, name);
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
        return out;
    snprintf(out, sizeof buf[0], "%s", name);
    return out;
}

static const char *db_option(const char *given)
{
    if (given != NULL)
        return given;
    const char *env = getenv("HVBENCH_DB");
    return env != NULL ? env : "dbname=hvbench";
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: hvbench-server COMMAND [OPTIONS]\n\n"
        "commands:\n"
        "  serve    run the HTTP API and the web front end\n"
        "  migrate  apply the database migrations not yet applied\n"
        "  token    create, list or revoke API tokens\n"
        "  version  print the version\n\n"
        "common option:\n"
        "  --db CONNINFO   libpq connection string (env HVBENCH_DB, default dbname=hvbench)\n\n"
        "serve options (also from a file and the environment: docs/operations.md):\n"
        "  --config FILE             settings from FILE, a JSON object of these options'\n"
        "                            names (env HVBENCH_SERVER_CONFIG); HVBENCH_SERVER_NAME\n"
        "                            variables override it, options override both\n"
        "  --check-config            print the settings, check the folders, the database and\n"
        "                            its schema, and exit (0: ok, 1: a problem, 2: a usage error)\n"
        "  --listen ADDR:PORT        address to listen on (default 127.0.0.1:8080)\n"
        "  --threads N               thread pool size (default: number of CPUs, at least 2)\n"
        "  --web-dir DIR             static front end (default %s/web or ./web)\n"
        "  --migrations-dir DIR      migrations (default %s/migrations or ./migrations)\n"
        "  --max-body BYTES          largest request body (default 1048576)\n"
        "  --max-result-body BYTES   largest job result upload (default 33554432)\n"
        "  --max-connections N       concurrent connections (default 4096; each long-polling\n"
        "                            worker holds one; past it: 503 server_busy)\n"
        "  --connection-timeout S    idle connection timeout (default 90)\n"
        "  --header-timeout S        time a request's head (request line and headers) may take\n"
        "                            to arrive (default 10); later requests on a kept-alive\n"
        "                            connection: S from their request line\n"
        "  --body-timeout S          time a request's body may take to arrive, from the end of\n"
        "                            its head (default 30); past it: 408 and the connection\n"
        "                            is closed\n"
        "  --trusted CIDR            an address or IPv4 network exempt from --max-per-address,\n"
        "                            with room kept for it: health checks, workers, their NAT\n"
        "                            or load balancer; repeatable; the first replaces the\n"
        "                            default 127.0.0.1/32; 'none' trusts no address\n"
        "  --trusted-reserve N       of --max-connections, kept for trusted addresses\n"
        "                            (default an eighth of --max-connections)\n"
        "  --max-per-address N       connections one untrusted address may hold (default 256;\n"
        "                            0: no cap); past it, connections are closed at once\n"
        "  --max-bodies-per-address N  request bodies one untrusted address may be sending at\n"
        "                            once (default 16; 0: no cap); past it: 503 server_busy\n"
        "  --lease S                 job lease length in seconds (default 60)\n"
        "  --stale-after S           a target whose worker was not seen for S seconds is shown\n"
        "                            stale, not online, in the targets list (default 180:\n"
        "                            three times the longest claim wait)\n"
        "  --worker-live S           a worker seen this recently keeps its target against a\n"
        "                            new registration under the same name (default 90)\n"
        "  --read-auth open|token    whether GET endpoints need a token (default open)\n"
        "  --noise-default repeat|keep  what plans that do not say `noise` do with a job run\n"
        "                            beside other work (default repeat: set aside, run again)\n"
        "  --hook-secret-file FILE   the key url drain hooks are signed with (plans' hooks;\n"
        "                            without it, plans with url hooks are refused)\n"
        "  --hook-addresses public|any  whether url hooks may call addresses that are not\n"
        "                            public: loopback, private, link-local, multicast,\n"
        "                            reserved, ... (default public; docs/operations.md)\n"
        "  --plan-cache-ms N         GET /api/v1/plans/{id} answers kept up to N ms (0-1000,\n"
        "                            default 1000; 0: none kept); changes made through this\n"
        "                            server show at once, others within N ms\n"
        "  --batch N                 most workers' claims taken in one statement, and most\n"
        "                            results stored in one transaction (1-64, default 64;\n"
        "                            1: each alone)\n"
        "  --batch-linger-us N       how long a batch waits for as many requests as the last\n"
        "                            one took (0-100000 microseconds, default 2000; 0: none)\n"
        "  --result-lanes N          threads storing results' batches, each on a database\n"
        "                            connection of its own (1-8, default 2); with two or more\n"
        "                            each also claims the next jobs its results ask for\n\n"
        "token commands:\n"
        "  token create --role admin|submit|worker|read --name NAME   prints the token once\n"
        "  token list\n"
        "  token revoke --name NAME\n",
        HVBENCH_DATADIR, HVBENCH_DATADIR);
}

static int parse_listen(const char *s)
{
    static char host[64];
    const char *colon = strrchr(s, ':');
    if (colon == NULL || colon == s || (size_t)(colon - s) >= sizeof host)
        return -1;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || port < 0 || port > 65535)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    hv_cfg.listen_host = host;
    hv_cfg.listen_port = (unsigned)port;
    return 0;
}

/* Parses an integer option between min and max or exits with a usage
 * error. */
static long int_option(const char *opt, const char *v, long min, long max)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || n < min || n > max) {
        fprintf(stderr, "hvbench-server: %s must be an integer between %ld and %ld\n", opt, min,
                max);
        exit(2);
    }
    return n;
}

/* Adds a --trusted network; the first one given replaces the default.
 * Exits with a usage error on a bad one. */
static void add_trusted(const char *v)
{
    static bool given;
    if (!given)
        hv_cfg.n_trusted = 0;
    given = true;
    if (strcmp(v, "none") == 0)
        return;
    if (hv_cfg.n_trusted == HV_MAX_TRUSTED) {
        fprintf(stderr, "hvbench-server: at most %d --trusted networks\n", HV_MAX_TRUSTED);
        exit(2);
    }
    if (hv_cidr_parse(v, &hv_cfg.trusted[hv_cfg.n_trusted]) != 0) {
        fprintf(stderr,
                "hvbench-server: --trusted wants an IPv4 address or network such as 10.0.0.0/8, "
                "not '%s'\n",
                v);
        exit(2);
    }
    hv_cfg.n_trusted++;
}

/* The options of serve that set a number of hv_cfg: each row names the
 * option, the member (CFG) and the bounds. */
struct number_option {
    const char *name;
    void *to;
    enum { N_INT, N_UNSIGNED, N_SIZE } type;
    long min, max;
};

#define CFG(member)                                                                                \
    &hv_cfg.member, _Generic(hv_cfg.member, int : N_INT, unsigned : N_UNSIGNED, size_t : N_SIZE)

static const struct number_option serve_numbers[] = {
    {"threads", CFG(threads), 1, 256},
    {"max-body", CFG(max_body), 1, 1L << 30},
    {"max-result-body", CFG(max_result_body), 1, 1L << 30},
    {"worker-live", CFG(worker_live_seconds), 1, 86400},
    {"max-connections", CFG(max_connections), 1, 100000},
    {"connection-timeout", CFG(conn_timeout), 1, 3600},
    {"header-timeout", CFG(header_timeout), 1, 3600},
    {"body-timeout", CFG(body_timeout), 1, 86400},
    {"max-per-address", CFG(max_per_address), 0, 100000},
    {"max-bodies-per-address", CFG(max_bodies_per_address), 0, 100000},
    {"lease", CFG(lease_seconds), 1, 86400},
    {"stale-after", CFG(stale_after_seconds), 1, 86400 * 30},
    /* At most a second: a change made elsewhere shows within it. */
    {"plan-cache-ms", CFG(plan_cache_ms), 0, 1000},
    {"batch", CFG(batch), 1, HV_CLAIM_MANY_MAX},
    {"batch-linger-us", CFG(batch_linger_us), 0, 100000},
    {"result-lanes", CFG(result_lanes), 1, HV_BATCH_LANES_MAX},
};

#define N_NUMBERS (sizeof serve_numbers / sizeof serve_numbers[0])

/* Sets row o's member to v, or exits with a usage error. */
static void set_number(const struct number_option *o, const char *v)
{
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", o->name);
    long n = int_option(opt, v, o->min, o->max);
    if (o->type == N_INT)
        *(int *)o->to = (int)n;
    else if (o->type == N_UNSIGNED)
        *(unsigned *)o->to = (unsigned)n;
    else
        *(size_t *)o->to = (size_t)n;
}

/* The other options of serve; a number option's value is SO_NUMBER plus
 * its row. */
enum {
    SO_DB = 1,
    SO_LISTEN,
    SO_WEB,
    SO_MIGR,
    SO_TRUSTED,
    SO_RESERVE,
    SO_READ,
    SO_CONFIG,
    SO_CHECK,
    SO_HOOK_SECRET,
    SO_HOOK_ADDR,
    SO_NOISE,
    SO_NUMBER = 0x100
};
static const struct option serve_opts[] = {
    {"config", required_argument, NULL, SO_CONFIG},
    {"check-config", no_argument, NULL, SO_CHECK},
    {"db", required_argument, NULL, SO_DB},
    {"listen", required_argument, NULL, SO_LISTEN},
    {"web-dir", required_argument, NULL, SO_WEB},
    {"migrations-dir", required_argument, NULL, SO_MIGR},
    {"trusted", required_argument, NULL, SO_TRUSTED},
    {"trusted-reserve", required_argument, NULL, SO_RESERVE},
    {"read-auth", required_argument, NULL, SO_READ},
    {"noise-default", required_argument, NULL, SO_NOISE},
    {"hook-secret-file", required_argument, NULL, SO_HOOK_SECRET},
    {"hook-addresses", required_argument, NULL, SO_HOOK_ADDR},
    {"help", no_argument, NULL, 'h'},
};

#define N_OPTS (sizeof serve_opts / sizeof serve_opts[0])

/* Parses the options of serve (opts, the whole table) into hv_cfg and
 * *db; *check is set by --check-config. Returns -1 to go on, or the exit
 * status: 0 after --help, 2 on a usage error. */
static int parse_serve(const struct option *opts, int argc, char **argv, const char **db,
                       bool *check)
{
    long reserve = -1;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c >= SO_NUMBER && c < SO_NUMBER + (int)N_NUMBERS) {
            set_number(&serve_numbers[c - SO_NUMBER], optarg);
            continue;
        }
        switch (c) {
        case SO_DB:
            *db = optarg;
            break;
        case SO_LISTEN:
            if (parse_listen(optarg) != 0) {
                fprintf(stderr, "hvbench-server: --listen wants ADDR:PORT, e.g. 127.0.0.1:8080\n");
                return 2;
            }
            break;
        case SO_WEB:
            hv_cfg.web_dir = optarg;
            break;
        case SO_MIGR:
            hv_cfg.migrations_dir = optarg;
            break;
        case SO_TRUSTED:
            add_trusted(optarg);
            break;
        case SO_RESERVE:
            reserve = int_option("--trusted-reserve", optarg, 0, 100000);
            break;
        case SO_CONFIG:
            break; /* read before the others: serve_options() */
        case SO_CHECK:
            *check = true;
            break;
        case SO_READ:
            if (strcmp(optarg, "open") != 0 && strcmp(optarg, "token") != 0) {
                fprintf(stderr, "hvbench-server: --read-auth is open or token\n");
                return 2;
            }
            hv_cfg.read_needs_token = strcmp(optarg, "token") == 0;
            break;
        case SO_NOISE:
            if (strcmp(optarg, "repeat") != 0 && strcmp(optarg, "keep") != 0) {
                fprintf(stderr, "hvbench-server: --noise-default is repeat or keep\n");
                return 2;
            }
            hv_cfg.noise_default = strcmp(optarg, "keep") == 0 ? "keep" : "repeat";
            break;
        case SO_HOOK_SECRET:
            hv_cfg.hook_secret_file = optarg;
            break;
        case SO_HOOK_ADDR:
            if (strcmp(optarg, "public") != 0 && strcmp(optarg, "any") != 0) {
                fprintf(stderr, "hvbench-server: --hook-addresses is public or any\n");
                return 2;
            }
            hv_cfg.hook_private = strcmp(optarg, "any") == 0;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (reserve > (long)hv_cfg.max_connections) {
        fprintf(stderr, "hvbench-server: --trusted-reserve %ld is more than --max-connections %u\n",
                reserve, hv_cfg.max_connections);
        return 2;
    }
    hv_cfg.trusted_reserve = reserve >= 0 ? (unsigned)reserve : hv_cfg.max_connections / 8;
    return -1;
}

/* The names of serve's settings read from the command line only, and
 * those an environment variable may list. */
static const char *const serve_cli_only[] = {"config", "check-config", "help", NULL};
static const char *const serve_lists[] = {"trusted", NULL};

/* Parses serve's settings: the configuration file (--config FILE, or
 * $HVBENCH_SERVER_CONFIG), then HVBENCH_SERVER_* variables, then the
 * command line (optfile.h). Returns as parse_serve() does; a file's
 * problems are each printed with their JSON Pointer. */
static int serve_options(int argc, char **argv, const char **db, bool *check)
{
    hv_cfg.web_dir = default_dir("web");
    hv_cfg.migrations_dir = default_dir("migrations");
    static struct option opts[N_OPTS + N_NUMBERS + 1];
    memcpy(opts, serve_opts, sizeof serve_opts);
    for (size_t i = 0; i < N_NUMBERS; i++)
        opts[N_OPTS + i] =
            (struct option){serve_numbers[i].name, required_argument, NULL, SO_NUMBER + (int)i};
    const char *path = hv_optfile_find(argc, argv, "config");
    if (path == NULL)
        path = getenv("HVBENCH_SERVER_CONFIG");
    json_t *errors = json_array();
    json_t *doc = path != NULL && path[0] != '\0' ? hv_optfile_load(path, errors) : NULL;
    const struct hv_optfile_spec spec = {opts, "HVBENCH_SERVER_", serve_cli_only, serve_lists};
    int n = 0;
    char **v = hv_optfile_argv(&spec, doc, NULL, argc, argv, &n, errors);
    json_decref(doc);
    int rc = hv_optfile_print_errors("hvbench-server", path, errors) > 0 ? 2 : -1;
    json_decref(errors);
    if (v == NULL) {
        fprintf(stderr, "hvbench-server: out of memory\n");
        return 1;
    }
    /* hv_cfg keeps pointers into v for the life of the process. */
    static char **volatile kept;
    kept = v;
    if (rc < 0)
        rc = parse_serve(opts, n, kept, db, check);
    return rc;
}

/* --check-config: prints the settings serve would run with and checks
 * what it needs beyond their syntax (the folders, the database and its
 * schema). Returns 0 when all is well, else 1 after naming each problem. */
static int check_config(void)
{
    char trusted[HV_MAX_TRUSTED * 20] = "";
    size_t pos = 0;
    for (unsigned i = 0; i < hv_cfg.n_trusted && pos < sizeof trusted; i++) {
        uint32_t a = hv_cfg.trusted[i].net, m = hv_cfg.trusted[i].mask;
        int bits = __builtin_popcount(m);
        pos +=
            (size_t)snprintf(trusted + pos, sizeof trusted - pos, "%s%u.%u.%u.%u/%d", i ? "," : "",
                             a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255, bits);
    }
    printf("db = %s\nlisten = %s:%u\nthreads = %u\nweb-dir = %s\nmigrations-dir = %s\n"
           "max-body = %zu\nmax-result-body = %zu\nmax-connections = %u\n"
           "connection-timeout = %u\nheader-timeout = %u\nbody-timeout = %u\ntrusted = "
           "%s\ntrusted-reserve = %u\n"
           "max-per-address = %u\nmax-bodies-per-address = %u\nlease = %d\nstale-after = "
           "%d\nworker-live = "
           "%d\nread-auth = %s\nnoise-default = %s\n"
           "plan-cache-ms = %d\nbatch = %u\nbatch-linger-us = %d\nresult-lanes = %d\n",
           hv_cfg.db, hv_cfg.listen_host, hv_cfg.listen_port, hv_cfg.threads, hv_cfg.web_dir,
           hv_cfg.migrations_dir, hv_cfg.max_body, hv_cfg.max_result_body, hv_cfg.max_connections,
           hv_cfg.conn_timeout, hv_cfg.header_timeout, hv_cfg.body_timeout,
           trusted[0] ? trusted : "none", hv_cfg.trusted_reserve, hv_cfg.max_per_address,
           hv_cfg.max_bodies_per_address, hv_cfg.lease_seconds, hv_cfg.stale_after_seconds,
           hv_cfg.worker_live_seconds, hv_cfg.read_needs_token ? "token" : "open",
           hv_cfg.noise_default != NULL ? hv_cfg.noise_default : "repeat", hv_cfg.plan_cache_ms,
           hv_cfg.batch, hv_cfg.batch_linger_us, hv_cfg.result_lanes);
    int problems = 0;
    char index[4096];
    snprintf(index, sizeof index, "%s/index.html", hv_cfg.web_dir);
    if (access(index, R_OK) != 0) {
        fprintf(stderr, "hvbench-server: web-dir: cannot read %s: %s\n", index, strerror(errno));
        problems++;
    }
    int latest = hv_migrations_latest(hv_cfg.migrations_dir);
    if (latest < 0) {
        fprintf(stderr, "hvbench-server: migrations-dir: cannot read migrations in %s\n",
                hv_cfg.migrations_dir);
        problems++;
    }
    hv_db_configure(hv_cfg.db);
    int schema = hv_schema_version();
    if (schema < 0) {
        fprintf(stderr, "hvbench-server: db: cannot connect with '%s' (see the log line above)\n",
                hv_cfg.db);
        problems++;
    } else if (latest >= 0 && schema < latest) {
        fprintf(stderr,
                "hvbench-server: db: schema %d, the migrations go to %d: run hvbench-server "
                "migrate\n",
                schema, latest);
        problems++;
    } else {
        printf("database: reachable, schema %d\n", schema);
    }
    if (problems == 0)
        printf("configuration ok\n");
    return problems == 0 ? 0 : 1;
}

static int cmd_serve(int argc, char **argv)
{
    const char *db = NULL;
    bool check = false;
    int rc = serve_options(argc, argv, &db, &check);
    if (rc >= 0)
        return rc;
    if (hv_cfg.threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        hv_cfg.threads = n < 2 ? 2 : (unsigned)n;
    }
    if (check) {
        hv_cfg.db = db_option(db);
        return check_config();
    }
    /* Every long-polling worker holds a connection: allow as many open
     * files as the hard limit lets us. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
        nofile.rlim_cur < (rlim_t)hv_cfg.max_connections + 64)
        hv_warn("open files are limited to %llu; fewer than --max-connections %u can connect",
                (unsigned long long)nofile.rlim_cur, hv_cfg.max_connections);
    hv_cfg.db = db_option(db);
    hv_db_configure(hv_cfg.db);
    hv_cfg.expected_schema = hv_migrations_latest(hv_cfg.migrations_dir);
    if (hv_cfg.expected_schema < 0) {
        hv_error("cannot read migrations in %s (use --migrations-dir)", hv_cfg.migrations_dir);
        return 1;
    }
    hv_static_load(hv_cfg.web_dir);
    if (hv_cfg.hook_secret_file != NULL) {
        size_t len = 0;
        hv_cfg.hook_secret = hv_read_file(hv_cfg.hook_secret_file, 4096, 0, &len);
        if (hv_cfg.hook_secret == NULL || len == 0) {
            hv_error("--hook-secret-file %s: cannot read a key from it", hv_cfg.hook_secret_file);
            return 1;
        }
        hv_cfg.hook_secret[strcspn(hv_cfg.hook_secret, "\r\n")] = '\0';
    }

    /* Block the stop signals in every thread; this one waits for them. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    hv_waiters_on_webhooks(hv_webhooks_wake);
    if (hv_waiters_start(hv_cfg.db) != 0 || hv_batch_start() != 0 || hv_webhooks_start() != 0 ||
        hv_hooks_start() != 0 || hv_sweeper_start(hv_cfg.lease_seconds) != 0 ||
        hv_http_start() != 0)
        return 1;
    hv_info("listening on http://%s:%u (%u threads, schema %d, web %s)", hv_cfg.listen_host,
            hv_cfg.listen_port, hv_cfg.threads, hv_cfg.expected_schema, hv_cfg.web_dir);
    int sig = 0;
    sigwait(&set, &sig);
    hv_info("signal %d: draining requests in flight", sig);
    hv_http_stop(10);
    hv_sweeper_stop();
    hv_webhooks_stop();
    hv_hooks_stop();
    hv_info("stopped");
    return 0;
}

/* Parses --db (and nothing else) for the simple subcommands. */
static int db_only_opts(int argc, char **argv, const char **dir, const char **name,
                        const char **role)
{
    enum { O_DB = 1, O_MIGR, O_NAME, O_ROLE };
    static const struct option opts[] = {
        {"db", required_argument, NULL, O_DB},
        {"migrations-dir", required_argument, NULL, O_MIGR},
        {"name", required_argument, NULL, O_NAME},
        {"role", required_argument, NULL, O_ROLE},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    const char *db = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_DB:
            db = optarg;
            break;
        case O_MIGR:
            if (dir == NULL)
                goto bad;
            *dir = optarg;
            break;
        case O_NAME:
            if (name == NULL)
                goto bad;
            *name = optarg;
            break;
        case O_ROLE:
            if (role == NULL)
                goto bad;
            *role = optarg;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            goto bad;
        }
    }
    hv_db_configure(db_option(db));
    return 0;
bad:
    usage(stderr);
    return -1;
}

static int cmd_migrate(int argc, char **argv)
{
    const char *dir = default_dir("migrations");
    if (db_only_opts(argc, argv, &dir, NULL, NULL) != 0)
        return 2;
    if (hv_db_thread() == NULL)
        return 1;
    int n = hv_migrate(dir);
    if (n < 0)
        return 1;
    printf("schema at version %d (%d migration%s applied)\n", hv_schema_version(), n,
           n == 1 ? "" : "s");
    return 0;
}

static int cmd_token(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "hvbench-server token: create, list or revoke\n");
        return 2;
    }
    const char *sub = argv[1];
    const char *name = NULL, *role = NULL;
    if (db_only_opts(argc - 1, argv + 1, NULL, &name, &role) != 0)
        return 2;
    if (hv_db_thread() == NULL)
        return 1;
    if (strcmp(sub, "create") == 0) {
        if (name == NULL || *name == '\0' || hv_role_parse(role) == HV_ROLE_NONE) {
            fprintf(stderr, "hvbench-server token create: --name NAME and --role "
                            "admin|submit|worker|read are required\n");
            return 2;
        }
        char token[HV_TOKEN_LEN + 1], hash[67];
        if (hv_token_generate(token) != 0) {
            fprintf(stderr, "hvbench-server: no randomness available\n");
            return 1;
        }
        hv_token_hash_hex(token, hash);
        enum hv_db_status s = hv_db_token_create(name, role, hash, NULL);
        if (s == HV_DB_CONFLICT) {
            fprintf(stderr, "hvbench-server: a token called '%s' exists already\n", name);
            return 1;
        }
        if (s != HV_DB_OK)
            return 1;
        printf("%s\n", token);
        return 0;
    }
    if (strcmp(sub, "list") == 0) {
        json_t *list = NULL;
        if (hv_db_token_list(&list) != HV_DB_OK)
            return 1;
        size_t i;
        json_t *t;
        printf("%-24s %-8s %-34s %s\n", "NAME", "ROLE", "CREATED", "REVOKED");
        json_array_foreach(list, i, t)
        {
            const char *rev = json_string_value(json_object_get(t, "revoked_at"));
            printf("%-24s %-8s %-34s %s\n", json_string_value(json_object_get(t, "name")),
                   json_string_value(json_object_get(t, "role")),
                   json_string_value(json_object_get(t, "created_at")), rev ? rev : "-");
        }
        json_decref(list);
        return 0;
    }
    if (strcmp(sub, "revoke") == 0) {
        if (name == NULL) {
            fprintf(stderr, "hvbench-server token revoke: --name NAME is required\n");
            return 2;
        }
        enum hv_db_status s = hv_db_token_revoke(name);
        if (s == HV_DB_NONE) {
            fprintf(stderr, "hvbench-server: no live token called '%s'\n", name);
            return 1;
        }
        return s == HV_DB_OK ? 0 : 1;
    }
    fprintf(stderr, "hvbench-server token: unknown subcommand '%s'\n", sub);
    return 2;
}

static int cmd_version(int argc, char **argv)
{
    printf("hvbench-server %s\n", HVBENCH_VERSION);
    return 0;
}

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
    {"serve", cmd_serve},
    {"migrate", cmd_migrate},
    {"token", cmd_token},
    {"version", cmd_version},
};

int main(int argc, char **argv)
{
    hv_log_init("hvbench-server", HV_LOG_INFO);
    gsl_set_error_handler_off(); /* lib/stats.c checks arguments; GSL must not abort */
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "hvbench-server: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
