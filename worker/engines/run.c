/* run.c — the process runner; see run.h. */
#include "worker/engines/run.h"

#include "timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* How often the stop flag is looked at, in milliseconds (engine.h promises
 * a stop within about 50 ms). */
#define TICK_MS 50

/* One captured stream. */
struct capture {
    int fd;     /* -1 once at end of file */
    char *data; /* NUL-terminated, at most cap bytes */
    size_t len, cap, total;
};

struct hv_proc {
    pid_t pid;
    struct capture out, err;
    double start, deadline, grace; /* deadline 0: none */
    /* The leader has exited: waitid(WNOWAIT) saw it, but it stays a zombie
     * until the end so its pid, the group's id, cannot be reused while
     * kill(-pid) may still be sent. */
    bool exited;
    siginfo_t info;
    bool timed_out, stopped;
    char path[4096];
};

int hv_run_find(const char *name, const char *display, char *out, size_t outlen, char *err,
                size_t errlen)
{
    if (display == NULL)
        display = name;
    struct stat st;
    if (name == NULL || name[0] == '\0') {
        snprintf(err, errlen, "no program to run");
        return -1;
    }
    if (strchr(name, '/') != NULL) {
        if (stat(name, &st) != 0) {
            snprintf(err, errlen, "%s: %s", name, strerror(errno));
            return -1;
        }
        if (!S_ISREG(st.st_mode) || access(name, X_OK) != 0) {
            snprintf(err, errlen, "%s: not an executable file", name);
            return -1;
        }
        if ((size_t)snprintf(out, outlen, "%s", name) >= outlen) {
            snprintf(err, errlen, "%s: path too long", name);
            return -1;
        }
        return 0;
    }
    const char *path = getenv("PATH");
    if (path == NULL || path[0] == '\0')
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p != '\0';) {
        size_t n = strcspn(p, ":");
        char cand[4096];
        /* An empty PATH element means the current directory: never for a
         * worker, which runs tools by name only from real directories. */
        if (n > 0 &&
            (size_t)snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, name) < sizeof cand &&
            stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
            if ((size_t)snprintf(out, outlen, "%s", cand) >= outlen)
                break;
            return 0;
        }
        p += n;
        if (*p == ':')
            p++;
    }
    snprintf(err, errlen, "%s is not installed on this worker (not found in PATH)", display);
    return -1;
}

/* Reads what is available on c's pipe into its buffer; marks the end of
 * file. */
static void capture_read(struct capture *c)
{
    char chunk[65536];
    for (;;) {
        ssize_t n = read(c->fd, chunk, sizeof chunk);
        if (n > 0) {
            size_t keep = c->len < c->cap ? c->cap - c->len : 0;
            if (keep > (size_t)n)
                keep = (size_t)n;
            memcpy(c->data + c->len, chunk, keep);
            c->len += keep;
            c->data[c->len] = '\0';
            c->total += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        close(c->fd); /* end of file, or an error that will not go away */
        c->fd = -1;
        return;
    }
}

/* Notes the leader's exit without reaping it. */
static void check_exit(struct hv_proc *p)
{
    if (p->exited)
        return;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == p->pid) {
        p->exited = true;
        p->info = si;
    }
}

/* Reads output for up to ms milliseconds (less when both pipes end), then
 * checks whether the leader exited. */
static void step(struct hv_proc *p, int ms)
{
    struct pollfd fds[2];
    struct capture *caps[2];
    nfds_t n = 0;
    if (p->out.fd >= 0) {
        fds[n] = (struct pollfd){.fd = p->out.fd, .events = POLLIN};
        caps[n++] = &p->out;
    }
    if (p->err.fd >= 0) {
        fds[n] = (struct pollfd){.fd = p->err.fd, .events = POLLIN};
        caps[n++] = &p->err;
    }
    if (ms < 0)
        ms = 0;
    int rc = poll(n ? fds : NULL, n, ms);
    if (rc > 0)
        for (nfds_t i = 0; i < n; i++)
            if (fds[i].revents != 0)
                capture_read(caps[i]);
    check_exit(p);
}

static bool stop_set(volatile sig_atomic_t *stop)
{
    return stop != NULL && __atomic_load_n(stop, __ATOMIC_RELAXED) != 0;
}

static int capture_init(struct capture *c, int fd, size_t cap)
{
    c->fd = fd;
    c->cap = cap;
    c->len = c->total = 0;
    c->data = malloc(cap + 1);
    if (c->data == NULL)
        return -1;
    c->data[0] = '\0';
    return 0;
}

static void proc_free(struct hv_proc *p)
{
    if (p->out.fd >= 0)
        close(p->out.fd);
    if (p->err.fd >= 0)
        close(p->err.fd);
    free(p->out.data);
    free(p->err.data);
    free(p);
}

struct hv_proc *hv_proc_start(const struct hv_run_spec *spec, char *err, size_t errlen)
{
    const char *display = spec->display ? spec->display : spec->argv[0];
    struct hv_proc *p = calloc(1, sizeof *p);
    if (p == NULL) {
        snprintf(err, errlen, "cannot run %s: out of memory", display);
        return NULL;
    }
    p->out.fd = p->err.fd = -1;
    if (hv_run_find(spec->argv[0], display, p->path, sizeof p->path, err, errlen) != 0) {
        free(p);
        return NULL;
    }
    int outp[2] = {-1, -1}, errp[2] = {-1, -1};
    if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "cannot run %s: pipe: %s", display, strerror(errno));
        goto fail;
    }
    if (capture_init(&p->out, outp[0], spec->out_cap ? spec->out_cap : HV_RUN_OUT_CAP) != 0 ||
        capture_init(&p->err, errp[0], spec->err_cap ? spec->err_cap : HV_RUN_ERR_CAP) != 0) {
        snprintf(err, errlen, "cannot run %s: out of memory", display);
        goto fail;
    }
    fcntl(outp[0], F_SETFL, O_NONBLOCK);
    fcntl(errp[0], F_SETFL, O_NONBLOCK);

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, outp[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, errp[1], STDERR_FILENO);
    if (spec->cwd != NULL)
        posix_spawn_file_actions_addchdir_np(&fa, spec->cwd);
    /* The engine thread blocks SIGTERM and SIGINT and the worker handles
     * them: the tool must get neither the mask nor the handlers. */
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    static const int reset[] = {SIGTERM, SIGINT,  SIGHUP,  SIGQUIT, SIGPIPE,
                                SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++)
        sigaddset(&dfl, reset[i]);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &dfl);
    /* Its own process group, so a timeout kills its helpers too. */
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETPGROUP);
    p->start = hv_monotonic();
    int rc = posix_spawn(&p->pid, p->path, &fa, &attr, (char *const *)spec->argv,
                         spec->envp != NULL ? (char *const *)spec->envp : environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        snprintf(err, errlen, "cannot run %s (%s): %s", display, p->path, strerror(rc));
        goto fail;
    }
    close(outp[1]);
    close(errp[1]);
    p->deadline = spec->timeout > 0 ? p->start + spec->timeout : 0;
    p->grace = spec->grace > 0 ? spec->grace : HV_RUN_GRACE;
    return p;
fail:
    for (int i = 0; i < 2; i++) {
        if (outp[i] >= 0)
            close(outp[i]);
        if (errp[i] >= 0)
            close(errp[i]);
    }
    p->out.fd = p->err.fd = -1;
    proc_free(p);
    return NULL;
}

pid_t hv_proc_pid(const struct hv_proc *p)
{
    return p->pid;
}

void hv_proc_set_timeout(struct hv_proc *p, double seconds)
{
    p->deadline = seconds > 0 ? hv_monotonic() + seconds : 0;
}

bool hv_proc_poll(struct hv_proc *p, double seconds)
{
    double end = hv_monotonic() + seconds;
    do {
        double left = end - hv_monotonic();
        step(p, left > 0 ? (int)(left * 1000 + 0.5) : 0);
    } while (!p->exited && hv_monotonic() < end);
    return !p->exited;
}

/* SIGTERM to the group, the grace period, then SIGKILL. The leader is
 * still unreaped, so its pid still names this group. */
static void terminate(struct hv_proc *p)
{
    kill(-p->pid, SIGTERM);
    double end = hv_monotonic() + p->grace;
    while (!p->exited && hv_monotonic() < end)
        step(p, TICK_MS);
    kill(-p->pid, SIGKILL);
}

/* Reaps the leader and closes the pipes: once the leader has exited, what
 * is left of its group (a helper holding the pipes open) is killed after
 * the grace period. */
static void finish(struct hv_proc *p)
{
    double end = hv_monotonic() + p->grace;
    while ((p->out.fd >= 0 || p->err.fd >= 0) && hv_monotonic() < end)
        step(p, TICK_MS);
    kill(-p->pid, SIGKILL); /* leftovers of the group, if any */
    int status;
    while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!p->exited) {
        p->exited = true;
        p->info.si_code = WIFSIGNALED(status) ? CLD_KILLED : CLD_EXITED;
        p->info.si_status = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
    }
}

int hv_proc_wait(struct hv_proc *p, volatile sig_atomic_t *stop, struct hv_run_result *r)
{
    memset(r, 0, sizeof *r);
    while (!p->exited) {
        if (stop_set(stop)) {
            p->stopped = true;
            terminate(p);
            break;
        }
        double left = p->deadline > 0 ? p->deadline - hv_monotonic() : TICK_MS / 1000.0;
        if (left <= 0) {
            p->timed_out = true;
            terminate(p);
            break;
        }
        step(p, left * 1000 < TICK_MS ? (int)(left * 1000) + 1 : TICK_MS);
    }
    double end = hv_monotonic();
    finish(p);
    r->seconds = end - p->start;
    r->exit_code = p->info.si_code == CLD_EXITED ? p->info.si_status : -1;
    r->signal = p->info.si_code == CLD_EXITED ? 0 : p->info.si_status;
    r->timed_out = p->timed_out;
    r->stopped = p->stopped;
    snprintf(r->path, sizeof r->path, "%s", p->path);
    r->out = p->out.data;
    r->out_len = p->out.len;
    r->out_total = p->out.total;
    r->out_truncated = p->out.total > p->out.len;
    r->err = p->err.data;
    r->err_len = p->err.len;
    p->out.data = p->err.data = NULL;
    proc_free(p);
    return 0;
}

void hv_proc_kill(struct hv_proc *p)
{
    if (p == NULL)
        return;
    if (!p->exited)
        terminate(p);
    finish(p);
    proc_free(p);
}

int hv_run(const struct hv_run_spec *spec, volatile sig_atomic_t *stop, struct hv_run_result *r,
           char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    struct hv_proc *p = hv_proc_start(spec, err, errlen);
    if (p == NULL)
        return -1;
    return hv_proc_wait(p, stop, r);
}

bool hv_run_ok(const struct hv_run_result *r)
{
    return !r->timed_out && !r->stopped && r->signal == 0 && r->exit_code == 0;
}

/* The last non-empty line of text, without its end: *len bytes at the
 * returned pointer, or NULL. */
static const char *last_line(const char *text, size_t n, size_t *len)
{
    if (text == NULL)
        return NULL;
    while (n > 0 && strchr(" \t\r\n", text[n - 1]) != NULL)
        n--;
    if (n == 0)
        return NULL;
    size_t start = n;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    *len = n - start;
    return text + start;
}

void hv_run_describe(const struct hv_run_result *r, const char *display, char *buf, size_t len)
{
    int n;
    if (r->stopped)
        n = snprintf(buf, len, "%s was stopped", display);
    else if (r->timed_out)
        n = snprintf(buf, len, "%s timed out after %.0f s and was killed", display, r->seconds);
    else if (r->signal != 0)
        n = snprintf(buf, len, "%s was killed by signal %d (%s)", display, r->signal,
                     strsignal(r->signal));
    else if (r->exit_code != 0)
        n = snprintf(buf, len, "%s exited with status %d", display, r->exit_code);
    else
        n = snprintf(buf, len, "%s succeeded", display);
    if (n < 0 || (size_t)n >= len || r->stopped)
        return;
    size_t ll = 0;
    const char *line = last_line(r->err, r->err_len, &ll);
    if (line == NULL)
        line = last_line(r->out, r->out_len, &ll);
    if (line != NULL)
        snprintf(buf + n, len - (size_t)n, ": %.*s", ll > 300 ? 300 : (int)ll, line);
}

void hv_run_result_clear(struct hv_run_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
    r->out_len = r->err_len = 0;
}
