/* disk.c — the built-in disk engine; see disk.h.
 *
 * Queue depth: Linux native AIO (io_setup/io_submit/io_getevents), called
 * through syscall(2) with <linux/aio_abi.h> rather than through libaio.
 *  - Native AIO works on every Linux a guest may run (2.6 on), and with
 *    O_DIRECT it is truly asynchronous on every block filesystem; io_uring
 *    needs 5.1+ (5.6+ for what a benchmark wants), is turned off by
 *    kernel.io_uring_disabled or seccomp on many hardened hosts and
 *    container runtimes, and its performance varies with kernel version,
 *    so an engine that must run in old and locked-down guests alike cannot
 *    depend on it.
 *  - libaio is a thin wrapper of those four system calls; calling them
 *    directly gives the same I/O path as fio --ioengine=libaio with no
 *    library to install in a bare guest (the worker's promise) and nothing
 *    to add to the link line.
 *  - Without O_DIRECT, native AIO submits synchronously (io_submit
 *    returns after the copy into the page cache), as it does under fio;
 *    observed.io says "linux-aio (buffered: submitted synchronously)".
 *  - Each I/O is submitted on its own (one io_submit, as fio does by
 *    default) as soon as its slot is free, so on a virtual disk every I/O
 *    pays its own queue notification, a cost of virtualization this engine
 *    exists to measure; batching submissions would hide it. Completions
 *    are reaped all at once (one io_getevents for every event ready), so
 *    the engine's own system calls stay near one per I/O; fio by default
 *    reaps one per call (iodepth_batch_complete_max=1), which on a
 *    CPU-bound guest costs it IOPS (BENCHMARKS.md, "Disk engine vs fio").
 * qd 1 uses plain pread/pwrite (fio --ioengine=psync).
 *
 * Design:
 *  - A phase starts one thread per `threads`; each opens its file, lays
 *    out its region untimed when the phase needs data that is not there
 *    yet, warms up untimed, then waits at a gate. The main thread drops the
 *    caches (read phases, drop_caches) or truncates the file again (a
 *    seq-write after a warmup), opens the gate, takes the per-second
 *    samples from counters the threads publish atomically (waiting on a
 *    condition variable with a deadline: nothing sleeps), and joins.
 *  - A phase's time runs from the gate to the last thread's close(2), so
 *    MB/s and IOPS are the same bytes over the same time: MB/s = IOPS x
 *    block / 10^6 exactly.
 *  - Written blocks carry pseudo-random 7-bit bytes (not zeros, which
 *    hypervisors and thin provisioning may skip; no byte that could form a
 *    partition or filesystem signature) and their own offset in their first
 *    8 bytes; reads of data this run wrote check that offset, so storage
 *    that returns the wrong block fails the run instead of scoring.
 */
#include "worker/engines/disk.h"

#include "rng.h"
#include "timeutil.h"
#include "worker/engines/disk_run.h"
#include "worker/engines/hist.h"
#include "grow.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Buffer alignment for O_DIRECT: a page, which every device accepts. */
#define BUF_ALIGN 4096
/* Samples per phase before the interval doubles (bounds the upload). */
#define SAMPLES_PER_DOUBLING 600
#define SEED                 0x5D15CB10C0FFEE11ULL
/* Laying out a file writes about this much at a time. */
#define LAYOUT_CHUNK (1ULL << 20)

/* ---------------------------------------------------------------------
 * The phases. */

const struct hv_disk_op_def hv_disk_op_defs[HV_DISK_N_OPS] = {
    [HV_DISK_SEQ_WRITE] = {"seq-write", "seq_write", true, false, true},
    [HV_DISK_REWRITE] = {"rewrite", "rewrite", true, false, false},
    [HV_DISK_SEQ_READ] = {"seq-read", "seq_read", false, false, false},
    [HV_DISK_REREAD] = {"reread", "reread", false, false, false},
    [HV_DISK_RAND_READ] = {"rand-read", "rand_read", false, true, false},
    [HV_DISK_RAND_WRITE] = {"rand-write", "rand_write", true, true, false},
};

static const char *const sync_names[] = {"none", "fsync", "osync"};

/* ---------------------------------------------------------------------
 * Settings, from the params lib/params.c checked. */

/* params.ops (normalised: known, unique, in the catalogue's order, which
 * is enum hv_disk_op's) into s. */
static void settings_ops(const json_t *p, struct hv_disk_settings *s)
{
    const struct hv_param_def *row = hv_engine_def_param(&hv_engine_def_disk_builtin, "ops");
    size_t i;
    const json_t *v;
    s->n_ops = 0;
    json_array_foreach(json_object_get(p, "ops"), i, v)
    {
        for (int op = 0; op < HV_DISK_N_OPS && row->choices[op] != NULL; op++)
            if (s->n_ops < HV_DISK_N_OPS && strcmp(row->choices[op], json_string_value(v)) == 0)
                s->ops[s->n_ops++] = (enum hv_disk_op)op;
    }
}

int hv_disk_settings(const json_t *params, long cpus, struct hv_disk_settings *s, char *err,
                     size_t len)
{
    const struct hv_engine_def *def = &hv_engine_def_disk_builtin;
    json_t *p = hv_engine_params_check(def, params, cpus, err, len);
    if (p == NULL)
        return -1;
    *s = (struct hv_disk_settings){
        .block = (uint64_t)hv_params_int(p, "block"),
        .size = (uint64_t)hv_params_int(p, "size"),
        .direct = hv_params_bool(p, "direct"),
        .sync = (enum hv_disk_sync)hv_params_choice(def, p, "sync"),
        .qd = (long)hv_params_int(p, "qd"),
        .threads = hv_params_count(def, p, "threads", cpus),
        .seconds = hv_params_num(p, "seconds"),
        .drop_caches = hv_params_bool(p, "drop_caches"),
        .warmup = hv_params_num(p, "warmup"),
    };
    settings_ops(p, s);
    /* Whole blocks only, as iozone does. */
    s->size -= s->size % s->block;
    const char *path = hv_params_str(p, "path");
    snprintf(s->path, sizeof s->path, "%s", path != NULL ? path : "");
    json_decref(p);
    return 0;
}

/* ---------------------------------------------------------------------
 * Native AIO through syscall(2); see the top of the file. */

static long aio_setup(unsigned n, aio_context_t *ctx)
{
    return syscall(SYS_io_setup, n, ctx);
}

static long aio_destroy(aio_context_t ctx)
{
    return syscall(SYS_io_destroy, ctx);
}

static long aio_submit(aio_context_t ctx, long n, struct iocb **list)
{
    return syscall(SYS_io_submit, ctx, n, list);
}

static long aio_getevents(aio_context_t ctx, long min_nr, long max_nr, struct io_event *events)
{
    return syscall(SYS_io_getevents, ctx, min_nr, max_nr, events, NULL);
}

/* ---------------------------------------------------------------------
 * The run. */

static bool run_stopping(struct hv_disk_run *run)
{
    return __atomic_load_n(&run->abort, __ATOMIC_RELAXED) || hv_engine_stopping(run->ctx);
}

/* Records why a job failed and makes every job stop. */
static void job_fail(struct hv_disk_job *j, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void job_fail(struct hv_disk_job *j, const char *fmt, ...)
{
    if (!j->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(j->error, sizeof j->error, fmt, ap);
        va_end(ap);
        j->failed = true;
    }
    __atomic_store_n(&j->run->abort, 1, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------
 * I/O. */

/* Opens the job's file for a phase (or, with layout, for laying it out). */
static int job_open(struct hv_disk_job *j, bool write, bool osync)
{
    const struct hv_disk_settings *p = &j->run->p;
    /* Every path is resolved: no symlink is expected, none is followed. */
    int flags = (write ? O_WRONLY : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC;
    if (p->direct)
        flags |= O_DIRECT;
    if (osync)
        flags |= O_SYNC;
    int fd = open(j->path, flags);
    if (fd < 0)
        job_fail(j, "cannot open %s: %s", j->path, strerror(errno));
    return fd;
}

/* Prepares buffer `slot` for a write at offset: its own offset and a
 * counter, so no two writes carry the same block. */
static unsigned char *slot_buf(struct hv_disk_job *j, long slot)
{
    return j->buf + (size_t)slot * j->run->p.block;
}

static void stamp(struct hv_disk_job *j, long slot, uint64_t offset)
{
    uint64_t words[2] = {offset, ++j->stamp};
    memcpy(slot_buf(j, slot), words, sizeof words);
}

/* Checks that a block read at offset is the one this run wrote there. */
static int verify(struct hv_disk_job *j, long slot, uint64_t offset)
{
    uint64_t got;
    memcpy(&got, slot_buf(j, slot), sizeof got);
    if (got == offset)
        return 0;
    job_fail(j,
             "%s: the block read at offset %llu holds the data written at offset %llu: the "
             "storage returned the wrong data",
             j->path, (unsigned long long)offset, (unsigned long long)got);
    return -1;
}

/* How a pass over the region runs. */
struct pass {
    enum hv_disk_op op;
    bool timed;        /* counts bytes and latencies */
    uint64_t limit;    /* I/Os to issue; UINT64_MAX: until the deadline */
    uint64_t deadline; /* ns; UINT64_MAX: none */
};

/* The offset of the i-th I/O of the pass. */
static uint64_t pass_offset(struct hv_disk_job *j, const struct pass *ps, uint64_t i)
{
    uint64_t n = j->run->nblocks, b;
    if (hv_disk_op_defs[ps->op].random)
        b = (uint64_t)(((unsigned __int128)hv_rng_xorshift(&j->rng) * n) >> 64);
    else
        b = i % n;
    return j->base + b * j->run->p.block;
}

static void account(struct hv_disk_job *j, const struct pass *ps, uint64_t latency)
{
    if (!ps->timed)
        return;
    hv_hist_add(j->hist, latency);
    j->ios++;
    __atomic_store_n(&j->bytes, j->bytes + j->run->p.block, __ATOMIC_RELAXED);
}

static int io_error(struct hv_disk_job *j, const struct pass *ps, uint64_t offset, long res)
{
    const char *what = hv_disk_op_defs[ps->op].write ? "write" : "read";
    if (res >= 0)
        job_fail(j, "%s: %s: short %s at offset %llu (%ld of %llu bytes)",
                 hv_disk_op_defs[ps->op].param, j->path, what, (unsigned long long)offset, res,
                 (unsigned long long)j->run->p.block);
    else if (res == -EINVAL && j->run->p.direct)
        job_fail(j,
                 "%s: %s: O_DIRECT %s at offset %llu refused (EINVAL): block must be a "
                 "multiple of the device's logical block size",
                 hv_disk_op_defs[ps->op].param, j->path, what, (unsigned long long)offset);
    else
        job_fail(j, "%s: %s: %s at offset %llu: %s", hv_disk_op_defs[ps->op].param, j->path, what,
                 (unsigned long long)offset, strerror((int)-res));
    return -1;
}

/* qd 1: pread/pwrite, one at a time. */
static int pass_sync(struct hv_disk_job *j, const struct pass *ps)
{
    const bool write = hv_disk_op_defs[ps->op].write, check = !write && j->ours;
    const size_t block = j->run->p.block;
    for (uint64_t i = 0; i < ps->limit; i++) {
        if (run_stopping(j->run))
            return -1;
        uint64_t off = pass_offset(j, ps, i);
        if (write)
            stamp(j, 0, off);
        uint64_t t1 = hv_monotonic_ns();
        ssize_t n;
        do
            n = write ? pwrite(j->fd, j->buf, block, (off_t)off)
                      : pread(j->fd, j->buf, block, (off_t)off);
        while (n < 0 && errno == EINTR);
        uint64_t t2 = hv_monotonic_ns();
        if (n != (ssize_t)block)
            return io_error(j, ps, off, n < 0 ? -errno : n);
        if (check && verify(j, 0, off) != 0)
            return -1;
        account(j, ps, t2 - t1);
        if (t2 >= ps->deadline)
            break;
    }
    return 0;
}

/* An AIO context for qd I/Os in flight. Returns 0, or -1 with the job
 * failed (saying which limit when the system's is the reason). */
static int aio_open(struct hv_disk_job *j, long qd, aio_context_t *ctx)
{
    if (aio_setup((unsigned)qd, ctx) == 0)
        return 0;
    if (errno == EAGAIN) {
        char max[32] = "?";
        hv_disk_read_line("/proc/sys/fs/aio-max-nr", max, sizeof max);
        job_fail(j,
                 "io_setup(%ld): EAGAIN: the system's AIO limit fs.aio-max-nr (%s) is below "
                 "what threads x qd need",
                 qd, max);
    } else {
        job_fail(j, "io_setup(%ld): %s", qd, strerror(errno));
    }
    return -1;
}

/* qd > 1: native AIO, qd I/Os in flight; latency from submission to
 * completion. On a stop or an error it stops submitting and drains. */
static int pass_aio(struct hv_disk_job *j, const struct pass *ps)
{
    const long qd = j->run->p.qd;
    const bool write = hv_disk_op_defs[ps->op].write, check = !write && j->ours;
    const size_t block = j->run->p.block;
    aio_context_t ctx = 0;
    if (aio_open(j, qd, &ctx) != 0)
        return -1;
    struct iocb *cbs = calloc((size_t)qd, sizeof *cbs);
    struct iocb **list = calloc((size_t)qd, sizeof *list);
    struct io_event *events = calloc((size_t)qd, sizeof *events);
    long *free_slots = calloc((size_t)qd, sizeof *free_slots);
    uint64_t *submitted_at = calloc((size_t)qd, sizeof *submitted_at);
    int rc = 0;
    if (!cbs || !list || !events || !free_slots || !submitted_at) {
        job_fail(j, "out of memory");
        rc = -1;
        goto out;
    }
    long n_free = qd, inflight = 0;
    for (long s = 0; s < qd; s++)
        free_slots[s] = qd - 1 - s;
    uint64_t issued = 0, now = hv_monotonic_ns();
    for (;;) {
        bool more = rc == 0 && !run_stopping(j->run) && issued < ps->limit && now < ps->deadline;
        long n = 0;
        while (more && n_free > 0 && issued + (uint64_t)n < ps->limit) {
            long s = free_slots[--n_free];
            uint64_t off = pass_offset(j, ps, issued + (uint64_t)n);
            if (write)
                stamp(j, s, off);
            cbs[s] = (struct iocb){.aio_data = (uint64_t)s,
                                   .aio_lio_opcode = write ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD,
                                   .aio_fildes = (uint32_t)j->fd,
                                   .aio_buf = (uint64_t)(uintptr_t)slot_buf(j, s),
                                   .aio_nbytes = block,
                                   .aio_offset = (int64_t)off};
            list[n++] = &cbs[s];
        }
        if (n > 0) {
            /* One io_submit per I/O; see the top of the file. */
            long r = 0;
            while (r < n) {
                submitted_at[list[r]->aio_data] = hv_monotonic_ns();
                if (aio_submit(ctx, 1, &list[r]) != 1) {
                    job_fail(j, "%s: %s: io_submit: %s", hv_disk_op_defs[ps->op].param, j->path,
                             strerror(errno));
                    rc = -1;
                    break;
                }
                r++;
            }
            /* The ones not submitted go back to the free list. */
            for (long k = n - 1; k >= r; k--)
                free_slots[n_free++] = (long)list[k]->aio_data;
            inflight += r;
            issued += (uint64_t)r;
        }
        if (inflight == 0)
            break; /* nothing more to issue, or an error */
        long got = aio_getevents(ctx, 1, qd, events);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            job_fail(j, "io_getevents: %s", strerror(errno));
            rc = -1;
            break; /* io_destroy below waits for what is in flight */
        }
        now = hv_monotonic_ns();
        for (long k = 0; k < got; k++) {
            long s = (long)events[k].data;
            struct iocb *cb = &cbs[s];
            inflight--;
            free_slots[n_free++] = s;
            if (rc != 0)
                continue;
            if (events[k].res != (int64_t)block)
                rc = io_error(j, ps, (uint64_t)cb->aio_offset, (long)events[k].res);
            else if (check && verify(j, s, (uint64_t)cb->aio_offset) != 0)
                rc = -1;
            else
                account(j, ps, now - submitted_at[s]);
        }
    }
    if (rc == 0 && run_stopping(j->run))
        rc = -1;
out:
    aio_destroy(ctx); /* waits for I/Os still in flight */
    free(cbs);
    free(list);
    free(events);
    free(free_slots);
    free(submitted_at);
    return rc;
}

static int do_pass(struct hv_disk_job *j, const struct pass *ps)
{
    return j->run->p.qd > 1 ? pass_aio(j, ps) : pass_sync(j, ps);
}

/* Writes the job's region once, untimed, so a phase that needs data has
 * it (a rewrite or read without a seq-write before it). In chunks of about
 * LAYOUT_CHUNK whatever the block, so a 4 KiB random phase on a large file
 * does not spend minutes preparing it; each block still carries its offset
 * for the reads to check. */
static int layout(struct hv_disk_job *j)
{
    const uint64_t block = j->run->p.block;
    const uint64_t per = block >= LAYOUT_CHUNK ? 1 : LAYOUT_CHUNK / block;
    unsigned char *chunk = NULL;
    if (posix_memalign((void **)&chunk, BUF_ALIGN, per * block) != 0) {
        job_fail(j, "cannot allocate %llu bytes to lay out %s", (unsigned long long)(per * block),
                 j->path);
        return -1;
    }
    for (uint64_t k = 0; k < per; k++)
        memcpy(chunk + k * block, j->buf, block);
    j->fd = job_open(j, true, false);
    int rc = j->fd < 0 ? -1 : 0;
    for (uint64_t b = 0; rc == 0 && b < j->run->nblocks; b += per) {
        if (run_stopping(j->run)) {
            rc = -1;
            break;
        }
        uint64_t n = j->run->nblocks - b < per ? j->run->nblocks - b : per;
        uint64_t off = j->base + b * block;
        for (uint64_t k = 0; k < n; k++) {
            uint64_t words[2] = {off + k * block, ++j->stamp};
            memcpy(chunk + k * block, words, sizeof words);
        }
        ssize_t w;
        do
            w = pwrite(j->fd, chunk, n * block, (off_t)off);
        while (w < 0 && errno == EINTR);
        if (w != (ssize_t)(n * block)) {
            job_fail(j, "laying out %s: write at offset %llu: %s", j->path, (unsigned long long)off,
                     w < 0 ? strerror(errno) : "short write");
            rc = -1;
        }
    }
    if (rc == 0 && fsync(j->fd) != 0) {
        job_fail(j, "fsync %s: %s", j->path, strerror(errno));
        rc = -1;
    }
    if (j->fd >= 0)
        close(j->fd);
    j->fd = -1;
    free(chunk);
    if (rc == 0)
        j->has_data = j->ours = true;
    return rc;
}

/* The job's part of a phase, in its own thread. */
static void *job_main(void *arg)
{
    struct hv_disk_job *j = arg;
    hv_engine_thread_name("hv-disk");
    struct hv_disk_run *run = j->run;
    const struct hv_disk_op_def *def = &hv_disk_op_defs[run->op];
    const struct hv_disk_settings *p = &run->p;
    if (!def->extends && !j->has_data && !run_stopping(run))
        layout(j);
    if (!run_stopping(run)) {
        j->fd = job_open(j, def->write, def->write && p->sync == HV_DISK_SYNC_OSYNC);
        if (j->fd >= 0 && p->warmup > 0) {
            struct pass warm = {.op = run->op,
                                .limit = UINT64_MAX,
                                .deadline = hv_monotonic_ns() + (uint64_t)(p->warmup * 1e9)};
            do_pass(j, &warm);
        }
    }
    pthread_mutex_lock(&run->mu);
    run->arrived++;
    pthread_cond_broadcast(&run->cv);
    while (!run->open)
        pthread_cond_wait(&run->cv, &run->mu);
    pthread_mutex_unlock(&run->mu);

    if (j->fd >= 0 && !run_stopping(run)) {
        struct pass ps = {
            .op = run->op, .timed = true, .limit = run->nblocks, .deadline = UINT64_MAX};
        if (def->random && p->seconds > 0)
            ps.deadline = run->gate + (uint64_t)(p->seconds * 1e9);
        if (do_pass(j, &ps) == 0 && def->write && p->sync == HV_DISK_SYNC_FSYNC &&
            fsync(j->fd) != 0)
            job_fail(j, "%s: fsync %s: %s", def->param, j->path, strerror(errno));
    }
    if (j->fd >= 0 && close(j->fd) != 0 && def->write)
        job_fail(j, "%s: close %s: %s", def->param, j->path, strerror(errno));
    j->fd = -1;
    j->t_end = hv_monotonic_ns();
    if (def->write && !j->failed && !run_stopping(run)) {
        j->has_data = j->has_data || def->extends;
        j->ours = j->ours || def->extends;
    }
    pthread_mutex_lock(&run->mu);
    run->done++;
    pthread_cond_broadcast(&run->cv);
    pthread_mutex_unlock(&run->mu);
    return NULL;
}

/* ---------------------------------------------------------------------
 * Phases. */

static int drop_caches(struct hv_disk_run *run)
{
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "3\n", 2) != 2) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return hv_engine_fail(run->out, "cannot drop the page cache: %s", strerror(e));
    }
    close(fd);
    return 0;
}

/* After a seq-write's warmup the files are emptied again, so the timed
 * pass creates and extends them as it would have without one. */
static int truncate_files(struct hv_disk_run *run)
{
    for (long i = 0; i < run->p.threads; i++) {
        if (run->p.path[0] != '\0' && i > 0)
            break; /* one file shared by every job */
        if (truncate(run->jobs[i].path, 0) != 0)
            return hv_engine_fail(run->out, "cannot truncate %s: %s", run->jobs[i].path,
                                  strerror(errno));
    }
    return 0;
}

static uint64_t bytes_done(struct hv_disk_run *run)
{
    uint64_t sum = 0;
    for (long i = 0; i < run->p.threads; i++)
        sum += __atomic_load_n(&run->jobs[i].bytes, __ATOMIC_RELAXED);
    return sum;
}

/* Samples of one phase, kept for the steady-state test. */
struct series {
    double *v; /* whole-interval samples, for the steady-state test */
    size_t n, cap;
    size_t emitted; /* all samples, the last partial one included */
};

static void emit(struct hv_disk_run *run, const char *metric, struct series *full, uint64_t from,
                 uint64_t to, uint64_t bytes, bool whole)
{
    double value = (double)bytes / ((double)(to - from) * 1e-9) / 1e6;
    hv_engine_emit_sample(run->ctx, run->out, metric, (double)(to - run->t0) * 1e-9, value);
    full->emitted++;
    if (!whole)
        return;
    if (hv_grow(&full->v, &full->cap, full->n, sizeof *full->v, 64) == 0)
        full->v[full->n++] = value;
}

/* Waits for the jobs to end, emitting a disk.<op>.mbps sample every
 * interval. Called with run->mu held. */
static void sample_until_done(struct hv_disk_run *run, const char *metric, struct series *full)
{
    uint64_t every = 1000000000u, prev_t = run->gate, prev_b = 0, next = run->gate + every;
    size_t taken = 0;
    while (run->done < run->p.threads) {
        struct timespec ts = {.tv_sec = (time_t)(next / 1000000000u),
                              .tv_nsec = (long)(next % 1000000000u)};
        pthread_cond_timedwait(&run->cv, &run->mu, &ts);
        uint64_t now = hv_monotonic_ns();
        if (now < next || run->done == run->p.threads)
            continue;
        uint64_t b = bytes_done(run);
        emit(run, metric, full, prev_t, now, b - prev_b, true);
        prev_t = now;
        prev_b = b;
        if (++taken % SAMPLES_PER_DOUBLING == 0)
            every *= 2;
        while (next <= now)
            next += every;
    }
    /* The remainder: always for a phase shorter than one interval, else
     * when it is at least half of one. */
    uint64_t end = run->gate;
    for (long i = 0; i < run->p.threads; i++)
        end = run->jobs[i].t_end > end ? run->jobs[i].t_end : end;
    if (end > prev_t && (taken == 0 || end - prev_t >= every / 2))
        emit(run, metric, full, prev_t, end, bytes_done(run) - prev_b, false);
}

static int report_phase(struct hv_disk_run *run, const struct series *full, uint64_t end)
{
    const struct hv_disk_op_def *def = &hv_disk_op_defs[run->op];
    struct hv_hist *h = run->jobs[0].hist;
    uint64_t bytes = 0, ios = 0;
    for (long i = 0; i < run->p.threads; i++) {
        bytes += run->jobs[i].bytes;
        ios += run->jobs[i].ios;
        if (i > 0)
            hv_hist_merge(h, run->jobs[i].hist);
    }
    double secs = (double)(end - run->gate) * 1e-9;
    if (ios == 0 || !(secs > 0))
        return hv_engine_fail(run->out, "%s: no I/O completed", def->param);
    char name[64];
    int rc = 0;
#define METRIC(suffix, value, unit, hib)                                                           \
    (snprintf(name, sizeof name, "disk.%s.%s", def->metric, suffix),                               \
     rc |= hv_engine_add_metric(run->out, name, value, unit, hib))
    METRIC("mbps", (double)bytes / secs / 1e6, "MB/s", true);
    METRIC("iops", (double)ios / secs, "IO/s", true);
    METRIC("lat_p50_us", (double)hv_hist_percentile(h, 50) / 1e3, "us", false);
    METRIC("lat_p95_us", (double)hv_hist_percentile(h, 95) / 1e3, "us", false);
    METRIC("lat_p99_us", (double)hv_hist_percentile(h, 99) / 1e3, "us", false);
    METRIC("lat_max_us", (double)h->max / 1e3, "us", false);
#undef METRIC
    if (rc != 0)
        return hv_engine_fail(run->out, "cannot record the metrics of %s", def->param);
    struct hv_steady st;
    hv_steady_state(full->v, full->n, &st);
    json_t *o = json_pack("{s:I, s:I, s:f, s:i}", "bytes", (json_int_t)bytes, "ios",
                          (json_int_t)ios, "seconds", secs, "samples", (int)full->emitted);
    if (o == NULL || hv_steady_observe(o, &st) != 0) {
        json_decref(o);
        return hv_engine_fail(run->out, "out of memory");
    }
    if (def->random && run->p.seconds > 0 && ios < run->nblocks * (uint64_t)run->p.threads)
        json_object_set_new(o, "bounded_by", json_string("seconds"));
    json_object_set_new(json_object_get(run->out->observed, "ops"), def->metric, o);
    return 0;
}

static int run_phase(struct hv_disk_run *run, enum hv_disk_op op)
{
    const struct hv_disk_settings *p = &run->p;
    run->op = op;
    run->arrived = run->done = 0;
    run->open = false;
    for (long i = 0; i < p->threads; i++) {
        struct hv_disk_job *j = &run->jobs[i];
        j->bytes = j->ios = j->t_end = 0;
        j->fd = -1;
        j->rng = SEED ^ ((uint64_t)(i + 1) * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)op << 56);
        hv_hist_reset(j->hist);
    }
    if (hv_disk_op_defs[op].extends) {
        /* A fresh file, as iozone's write test makes (a device is simply
         * overwritten). */
        if (!run->device && truncate_files(run) != 0)
            return -1;
        for (long i = 0; i < p->threads; i++)
            run->jobs[i].ours = false;
    }
    int rc = 0;
    long started = 0;
    for (; started < p->threads; started++) {
        struct hv_disk_job *j = &run->jobs[started];
        int e = pthread_create(&j->thread, NULL, job_main, j);
        if (e != 0) {
            hv_engine_fail(run->out, "cannot start thread %ld: %s", started, strerror(e));
            __atomic_store_n(&run->abort, 1, __ATOMIC_RELAXED);
            rc = -1;
            break;
        }
    }
    pthread_mutex_lock(&run->mu);
    while (rc == 0 && run->arrived < started)
        pthread_cond_wait(&run->cv, &run->mu);
    /* Every job waits at the gate: nothing does I/O now. */
    if (rc == 0 && !run_stopping(run)) {
        if (hv_disk_op_defs[op].extends && p->warmup > 0 && !run->device)
            rc = truncate_files(run);
        if (rc == 0 && !hv_disk_op_defs[op].write && p->drop_caches)
            rc = drop_caches(run);
        if (rc != 0)
            __atomic_store_n(&run->abort, 1, __ATOMIC_RELAXED);
    }
    run->gate = hv_monotonic_ns();
    run->open = true;
    pthread_cond_broadcast(&run->cv);
    char metric[64];
    snprintf(metric, sizeof metric, "disk.%s.mbps", hv_disk_op_defs[op].metric);
    struct series full = {0};
    if (rc == 0)
        sample_until_done(run, metric, &full);
    pthread_mutex_unlock(&run->mu);
    uint64_t end = run->gate;
    for (long i = 0; i < started; i++) {
        pthread_join(run->jobs[i].thread, NULL);
        end = run->jobs[i].t_end > end ? run->jobs[i].t_end : end;
    }
    for (long i = 0; i < started && rc == 0; i++)
        if (run->jobs[i].failed) {
            hv_engine_fail(run->out, "thread %ld: %s", i, run->jobs[i].error);
            rc = -1;
        }
    if (rc == 0 && hv_engine_stopping(run->ctx))
        rc = hv_engine_fail(run->out, "stopped during %s after %.1f s", hv_disk_op_defs[op].param,
                            (double)(hv_monotonic_ns() - run->t0) * 1e-9);
    if (rc == 0)
        rc = report_phase(run, &full, end);
    free(full.v);
    return rc;
}

/* ---------------------------------------------------------------------
 * Entry point. */

static void add_observed(struct hv_disk_run *run)
{
    const struct hv_disk_settings *p = &run->p;
    json_t *obs = run->out->observed;
    json_t *ops = json_array();
    for (size_t i = 0; i < p->n_ops; i++)
        json_array_append_new(ops, json_string(hv_disk_op_defs[p->ops[i]].param));
    json_object_set_new(obs, "phases", ops);
    json_object_set_new(obs, "size", json_integer((json_int_t)p->size));
    json_object_set_new(obs, "block", json_integer((json_int_t)p->block));
    json_object_set_new(obs, "direct", json_boolean(p->direct));
    json_object_set_new(obs, "sync", json_string(sync_names[p->sync]));
    json_object_set_new(obs, "qd", json_integer(p->qd));
    json_object_set_new(obs, "threads", json_integer(p->threads));
    json_object_set_new(obs, "io",
                        json_string(p->qd == 1  ? "pread/pwrite"
                                    : p->direct ? "linux-aio"
                                                : "linux-aio (buffered: submitted "
                                                  "synchronously)"));
    if (p->seconds > 0)
        json_object_set_new(obs, "seconds_bound", json_real(p->seconds));
    json_object_set_new(obs, "warmup", json_real(p->warmup));
    json_object_set_new(obs, "drop_caches", json_boolean(p->drop_caches));
    const char *method = p->direct ? "direct" : p->drop_caches ? "drop_caches" : "none";
    json_object_set_new(obs, "cache_method", json_string(method));
    if (!p->direct && !p->drop_caches) {
        double ram = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
        double total = (double)p->size * (double)p->threads;
        if (total < ram) {
            char w[256];
            snprintf(w, sizeof w,
                     "reads may come from the page cache: threads x size (%.0f MiB) is below "
                     "the RAM (%.0f MiB) and neither direct nor drop_caches is set",
                     total / 1048576.0, ram / 1048576.0);
            json_object_set_new(obs, "cache_warning", json_string(w));
        }
    }
    json_object_set_new(obs, "ops", json_object());
}

int hv_engine_disk_run(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                       struct hv_engine_result *out)
{
    (void)e;
    struct hv_disk_run run = {.ctx = ctx, .out = out, .claim = -1};
    if (hv_disk_settings(ctx->params, hv_engine_cpus(), &run.p, out->error, sizeof out->error) != 0)
        return -1;
    if (hv_engine_stopping(ctx))
        return hv_engine_fail(out, "stopped before the start");
    const struct hv_disk_settings *p = &run.p;
    run.nblocks = p->size / p->block;
    if (hv_disk_target_scratch(&run) != 0)
        return -1;
    run.jobs = calloc((size_t)p->threads, sizeof *run.jobs);
    if (run.jobs == NULL)
        return hv_engine_fail(out, "out of memory");
    int rc = -1;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&run.cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&run.mu, NULL);
    for (long i = 0; i < p->threads; i++)
        run.jobs[i] = (struct hv_disk_job){.run = &run, .fd = -1};
    if (hv_disk_target_setup(&run) != 0)
        goto done;
    uint64_t lbs = hv_disk_target_describe(&run);
    add_observed(&run);
    if (hv_disk_target_check(&run, lbs) != 0)
        goto done;
    for (long i = 0; i < p->threads; i++) {
        struct hv_disk_job *j = &run.jobs[i];
        size_t bytes = (size_t)p->qd * p->block;
        if (posix_memalign((void **)&j->buf, BUF_ALIGN, bytes) != 0 ||
            (j->hist = malloc(sizeof *j->hist)) == NULL) {
            hv_engine_fail(out, "cannot allocate %zu bytes of I/O buffers", bytes);
            goto done;
        }
        /* 7-bit pseudo-random bytes; see the top of the file. */
        uint64_t s = SEED + (uint64_t)i;
        for (size_t k = 0; k < bytes; k += 8) {
            uint64_t r = hv_rng_xorshift(&s) & 0x7F7F7F7F7F7F7F7FULL;
            memcpy(j->buf + k, &r, bytes - k < 8 ? bytes - k : 8);
        }
    }
    run.t0 = hv_monotonic_ns();
    rc = 0;
    for (size_t i = 0; i < p->n_ops && rc == 0; i++)
        rc = run_phase(&run, p->ops[i]);
    json_object_set_new(out->observed, "seconds",
                        json_real((double)(hv_monotonic_ns() - run.t0) * 1e-9));
done:
    for (long i = 0; i < p->threads; i++) {
        struct hv_disk_job *j = &run.jobs[i];
        if (j->created && unlink(j->path) != 0 && rc == 0)
            rc = hv_engine_fail(out, "cannot remove %s: %s", j->path, strerror(errno));
        free(j->buf);
        free(j->hist);
    }
    free(run.jobs);
    if (run.claim >= 0)
        close(run.claim);
    pthread_cond_destroy(&run.cv);
    pthread_mutex_destroy(&run.mu);
    return rc;
}
