#!/usr/bin/env bash
# A private PostgreSQL 15 cluster for development, the tests and the demo:
# its own data directory, a unix socket only (no TCP), trust authentication
# for the superuser "hvbench", and a database "hvbench".
#
#   deploy/pg.sh start|stop|status|conninfo|destroy [DIR]
#   deploy/pg.sh psql [DIR] [--] [psql arguments...]
#   deploy/pg.sh standby DIR STANDBY_DIR [NAME]
#   deploy/pg.sh promote STANDBY_DIR
#
# DIR defaults to var/pg under the repository. Inside it: data/ (PGDATA),
# run/ (the socket), log/postgres.log. `conninfo` prints the libpq connection
# string; `destroy` stops the cluster and deletes it.
#
# `standby` ships a standby of the running cluster in DIR: a second private
# cluster in STANDBY_DIR (same layout, its own socket) copied by
# pg_basebackup -R over DIR's socket and streaming from it, under the
# application_name NAME (default hvbench_standby). Replication is
# synchronous: DIR's cluster gets synchronous_standby_names = NAME (ALTER
# SYSTEM), so a COMMIT it acknowledges is on both, and waits while the
# standby is away. It prints the multi-host connection string of the pair
# (target_session_attrs=read-write: libpq takes whichever is the primary).
# `promote` makes the standby in STANDBY_DIR a primary (pg_ctl promote) once
# DIR's cluster is gone; it keeps no standby of its own, so its commits
# wait for none. Neither command fences the old primary: do not start it
# again as a primary (destroy it, or ship it anew as a standby).
#
# HVBENCH_PG_FAST=1 trades durability for speed (initdb --no-sync, fsync=off);
# the tests set it. HVBENCH_PG_SHARED_BUFFERS (e.g. 1GB) sets shared_buffers
# (PostgreSQL's default is 128MB); the claims benchmark sets it.
#
# initdb and postgres refuse to run as root, so as root they run as the
# "postgres" system user, which then must own data/ and be able to reach DIR.
set -euo pipefail
umask 022 # parents we create must stay traversable for the postgres user

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PORT=5432
DB_USER=hvbench
DB_NAME=hvbench
FAST=${HVBENCH_PG_FAST:-0}

die() {
    echo "pg.sh: $*" >&2
    exit 1
}

usage() {
    cat >&2 <<'EOF'
usage: deploy/pg.sh start|stop|status|conninfo|destroy [DIR]
       deploy/pg.sh psql [DIR] [--] [psql arguments...]
       deploy/pg.sh standby DIR STANDBY_DIR [NAME]
       deploy/pg.sh promote STANDBY_DIR
EOF
    exit 2
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
DIR=$ROOT/var/pg
if [[ $# -gt 0 && $1 != -* ]]; then
    DIR=$1
    shift
fi
[[ ${1:-} == -- ]] && shift
# Absolute and normalised, but symlinks kept: DIR itself may be one (below).
DIR=$(realpath -m -s -- "$DIR")

BINDIR=/usr/lib/postgresql/15/bin
if [[ ! -x $BINDIR/pg_ctl ]] && command -v pg_config >/dev/null 2>&1; then
    BINDIR=$(pg_config --bindir)
fi
PSQL=$BINDIR/psql
[[ -x $PSQL ]] || PSQL=psql

need_server_bins() {
    [[ -x $BINDIR/initdb && -x $BINDIR/pg_ctl && -x $BINDIR/postgres ]] ||
        die "PostgreSQL server binaries not found in $BINDIR; run deploy/deps.sh"
    if [[ $OWNER == postgres ]] && ! id -u postgres >/dev/null 2>&1; then
        die "no postgres user to run the server as; run deploy/deps.sh"
    fi
}

# Who runs the server, and how we run commands as that user.
if [[ $(id -u) -eq 0 ]]; then
    OWNER=postgres
    # cd / first: the caller's directory (e.g. under /root) may be closed to postgres.
    as_owner() { (cd / && runuser -u postgres -- "$@"); }
else
    OWNER=$(id -un)
    as_owner() { "$@"; }
fi

# Where the cluster really lives (REAL). Normally REAL is DIR. When the
# postgres user cannot reach DIR (the repository is cloned under /root, mode
# 700, as in CI) or the socket path would exceed the 107-byte unix socket
# limit, the cluster lives in /tmp/hvbench-pg-<hash of DIR> (mode 700, owned
# by the server's user) and DIR is a symlink to it.
fallback_of() { echo "/tmp/hvbench-pg-$(printf '%s' "$1" | sha256sum | cut -c1-12)"; }
FALLBACK=$(fallback_of "$DIR")

needs_fallback() {
    local sock=/run/.s.PGSQL.$PORT p
    ((${#DIR} + ${#sock} > 107)) && return 0
    [[ $OWNER == postgres ]] || return 1
    p=$(dirname "$DIR")
    while [[ ! -e $p ]]; do p=$(dirname "$p"); done
    ! as_owner test -x "$p"
}

resolve() {
    if [[ -L $DIR ]]; then
        REAL=$(readlink -m -- "$DIR")
    elif [[ -d $DIR/data ]]; then
        REAL=$DIR
    elif needs_fallback; then
        REAL=$FALLBACK
    else
        REAL=$DIR
    fi
    DATA=$REAL/data
    RUN=$REAL/run
    LOG=$REAL/log/postgres.log
    CONNINFO="host=$RUN port=$PORT dbname=$DB_NAME user=$DB_USER"
}

# Create REAL (and the DIR symlink when it is elsewhere) with data/ run/ log/.
make_layout() {
    if [[ $REAL != "$DIR" ]]; then
        if [[ ! -e $REAL ]]; then
            mkdir -m 700 -- "$REAL"
            if [[ $OWNER == postgres ]]; then chown postgres: -- "$REAL"; fi
        fi
        # A predictable name in /tmp: accept it only if it is really ours.
        if [[ $REAL == "$FALLBACK" ]] &&
            ! [[ -d $REAL && ! -L $REAL && $(stat -c %U -- "$REAL") == "$OWNER" ]]; then
            die "$REAL exists but is not a directory owned by $OWNER"
        fi
        if [[ ! -L $DIR ]]; then
            if [[ -d $DIR ]]; then
                rmdir -- "$DIR" 2>/dev/null || die "$DIR is not empty; cannot replace it by a symlink to $REAL"
            fi
            mkdir -p -- "$(dirname "$DIR")"
            ln -s -- "$REAL" "$DIR"
        fi
    fi
    mkdir -p -- "$REAL/log" "$RUN" "$DATA"
    chmod 700 -- "$DATA"
    if [[ $OWNER == postgres ]]; then chown postgres: -- "$REAL/log" "$RUN" "$DATA"; fi
}

# Serialise start/stop/destroy on the same cluster.
lock() {
    exec 9>>"$REAL/.lock"
    flock -w 120 9 || die "timed out waiting for the lock on $REAL"
}

# Running = the pid in postmaster.pid is alive (not a zombie) and its working
# directory is our data directory. A bare "kill -0" is not enough: after a
# crash the pid may have been reused by an unrelated process, and a killed
# postmaster stays a zombie where nothing reaps orphans (containers).
server_pid() {
    local pid cwd stat
    pid=$(head -n1 -- "$DATA/postmaster.pid" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    stat=$(cat -- "/proc/$pid/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat%% *} != Z ]] || return 1
    if cwd=$(readlink -- "/proc/$pid/cwd" 2>/dev/null); then
        [[ $cwd == "$(readlink -f -- "$DATA")" ]] || return 1
    fi
    echo "$pid"
}

is_running() { server_pid >/dev/null; }

# Leftovers of a server that died without cleaning up would block a start.
clean_stale() {
    is_running && return 0
    rm -f -- "$DATA/postmaster.pid" "$RUN/.s.PGSQL.$PORT" "$RUN/.s.PGSQL.$PORT.lock"
}

wait_ready() {
    local i
    for ((i = 0; i < 60; i++)); do
        "$BINDIR/pg_isready" -q -h "$RUN" -p "$PORT" -d postgres -U "$DB_USER" && return 0
        sleep 0.5
    done
    tail -n 20 -- "$LOG" >&2 || true
    die "server at $RUN did not become ready"
}

psql_admin() {
    "$PSQL" -X -qAt -v ON_ERROR_STOP=1 "host=$RUN port=$PORT dbname=postgres user=$DB_USER" "$@"
}

ensure_db() {
    local found
    found=$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")
    [[ $found == 1 ]] || psql_admin -c "CREATE DATABASE $DB_NAME" >/dev/null
}

init_cluster() {
    local args=(-D "$DATA" -U "$DB_USER" --auth=trust -E UTF8 --locale=C.UTF-8)
    if [[ $FAST == 1 ]]; then args+=(--no-sync); fi
    # An interrupted initdb leaves a partial directory that initdb will not reuse.
    find "$DATA" -mindepth 1 -delete
    if ! as_owner "$BINDIR/initdb" "${args[@]}" >"$REAL/log/initdb.log" 2>&1; then
        tail -n 20 -- "$REAL/log/initdb.log" >&2
        die "initdb failed (log: $REAL/log/initdb.log)"
    fi
}

cmd_start() {
    need_server_bins
    mkdir -p -- "$(dirname "$DIR")"
    resolve
    make_layout
    lock
    if ! is_running; then
        if [[ ! -f $DATA/PG_VERSION ]]; then
            init_cluster
        elif [[ $(<"$DATA/PG_VERSION") != 15 ]]; then
            die "$DATA holds a PostgreSQL $(<"$DATA/PG_VERSION") cluster, not 15"
        fi
        start_server
    fi
    wait_ready
    ensure_db
    echo "$CONNINFO"
}

# Starts the cluster in DATA (not running, the lock held).
start_server() {
    clean_stale
    local opts="-c listen_addresses='' -c unix_socket_directories='$RUN' -c port=$PORT"
    if [[ $FAST == 1 ]]; then
        opts+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    else
        opts+=" -c fsync=on"
    fi
    if [[ -n ${HVBENCH_PG_SHARED_BUFFERS:-} ]]; then
        [[ $HVBENCH_PG_SHARED_BUFFERS =~ ^[0-9]+[kMG]B$ ]] ||
            die "HVBENCH_PG_SHARED_BUFFERS: a size such as 1GB or 512MB"
        opts+=" -c shared_buffers=$HVBENCH_PG_SHARED_BUFFERS"
    fi
    # 9>&-: the server must not inherit (and so hold forever) our lock.
    if ! as_owner "$BINDIR/pg_ctl" start -D "$DATA" -l "$LOG" -w -t 60 -s -o "$opts" 9>&-; then
        tail -n 20 -- "$LOG" >&2 || true
        die "could not start the server (log: $LOG)"
    fi
}

cmd_stop() {
    resolve
    [[ -d $DATA ]] || return 0
    lock
    if ! is_running; then
        clean_stale
        return 0
    fi
    as_owner "$BINDIR/pg_ctl" stop -D "$DATA" -m fast -w -t 60 -s ||
        as_owner "$BINDIR/pg_ctl" stop -D "$DATA" -m immediate -w -t 30 -s
}

cmd_status() {
    resolve
    local pid
    if pid=$(server_pid); then
        echo "running (pid $pid): $CONNINFO"
        return 0
    fi
    echo "not running ($DIR)"
    return 3
}

# Only the directories this script made are removed, never REAL wholesale.
cmd_destroy() {
    cmd_stop
    rm -rf -- "$REAL/data" "$REAL/run" "$REAL/log" "$REAL/.lock"
    rmdir -- "$REAL" 2>/dev/null || true
    if [[ -L $DIR ]]; then rm -f -- "$DIR"; fi
}

# Points DIR (and what resolve() derives from it) at another cluster.
use_dir() {
    DIR=$(realpath -m -s -- "$1")
    FALLBACK=$(fallback_of "$DIR")
    resolve
}

# The standby of the running cluster in DIR, in $1 (see the header).
cmd_standby() {
    local sdir=${1:-} name=${2:-hvbench_standby} primary_run i state=''
    [[ -n $sdir ]] || usage
    [[ $name =~ ^[a-z_][a-z0-9_]*$ ]] || die "standby name: lower-case letters, digits and _"
    need_server_bins
    resolve
    is_running || die "no cluster runs in $DIR to ship a standby of"
    primary_run=$RUN
    use_dir "$sdir"
    mkdir -p -- "$(dirname "$DIR")"
    make_layout
    lock
    is_running && die "a cluster runs in $DIR already"
    [[ -f $DATA/PG_VERSION ]] && die "$DIR holds a cluster already (destroy it first)"
    find "$DATA" -mindepth 1 -delete
    # -R writes primary_conninfo (with this application_name, which the
    # primary's synchronous_standby_names names) and standby.signal.
    local args=(-D "$DATA" -R -X stream -c fast
        -d "host=$primary_run port=$PORT user=$DB_USER application_name=$name")
    if [[ $FAST == 1 ]]; then args+=(--no-sync); fi
    if ! as_owner "$BINDIR/pg_basebackup" "${args[@]}" >"$REAL/log/basebackup.log" 2>&1; then
        tail -n 20 -- "$REAL/log/basebackup.log" >&2
        die "pg_basebackup failed (log: $REAL/log/basebackup.log)"
    fi
    # The copy carries the primary's ALTER SYSTEM settings; a promoted
    # standby with synchronous_standby_names would wait for a standby of
    # its own forever.
    sed -i '/^synchronous_standby_names/d' -- "$DATA/postgresql.auto.conf"
    start_server
    wait_ready
    # Synchronous from now on. The fast mode's synchronous_commit=off
    # (a command-line setting) would acknowledge a COMMIT before the
    # standby has it: the database's own setting outranks it.
    "$PSQL" -X -qAt -v ON_ERROR_STOP=1 "host=$primary_run port=$PORT dbname=postgres user=$DB_USER" \
        -c "ALTER SYSTEM SET synchronous_standby_names = '\"$name\"'" -c "SELECT pg_reload_conf()" \
        -c "ALTER DATABASE $DB_NAME SET synchronous_commit = on" >/dev/null
    for ((i = 0; i < 60; i++)); do
        state=$("$PSQL" -X -qAt "host=$primary_run port=$PORT dbname=postgres user=$DB_USER" \
            -c "SELECT sync_state FROM pg_stat_replication WHERE application_name = '$name'")
        # "potential": another standby of the same name is the synchronous
        # one, and this one takes over when that one goes.
        [[ $state == sync || $state == potential ]] && break
        sleep 0.5
    done
    [[ $state == sync || $state == potential ]] ||
        die "the standby in $DIR is not a synchronous standby (state '$state')"
    echo "host=$primary_run,$RUN port=$PORT dbname=$DB_NAME user=$DB_USER target_session_attrs=read-write"
}

# The standby in DIR becomes a primary; pg_ctl waits until it takes writes.
cmd_promote() {
    need_server_bins
    resolve
    is_running || die "no cluster runs in $DIR"
    [[ -f $DATA/standby.signal ]] || die "the cluster in $DIR is not a standby"
    as_owner "$BINDIR/pg_ctl" promote -D "$DATA" -w -t 60 -s || die "could not promote $DIR (log: $LOG)"
    echo "$CONNINFO"
}

case $cmd in
start) cmd_start ;;
standby) cmd_standby "$@" ;;
promote) cmd_promote ;;
stop) cmd_stop ;;
status) cmd_status ;;
conninfo)
    resolve
    echo "$CONNINFO"
    ;;
psql)
    resolve
    exec "$PSQL" "$CONNINFO" "$@"
    ;;
destroy) cmd_destroy ;;
*) usage ;;
esac
