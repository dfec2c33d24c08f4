#!/usr/bin/env bash
# A throwaway PostgreSQL + pgvector server for tests and benchmarks.
#
#   scripts/postgres.sh install        install PostgreSQL and pgvector if missing (idempotent)
#   scripts/postgres.sh [start]        install, then initdb a temporary cluster, start it on a
#                                      free loopback port; prints `PGDATA=<dir>` and, as the
#                                      last stdout line, the URL postgresql://postgres@127.0.0.1:PORT/postgres
#   scripts/postgres.sh stop PGDATA    stop that server and remove its folder
#   scripts/postgres.sh pause|resume PGDATA   stop it / start it again on the same port (fault tests)
#
# Debian 12 (bookworm) ships PostgreSQL 15 but no pgvector package, so pgvector is built
# from Debian's own source package of the next release (trixie), fetched with
# `apt-get source` through a temporary apt configuration (its own sources list and lists
# folder, on the same mirror as the system's), and compiled with PGXS against
# /usr/lib/postgresql/15/bin/pg_config. Debian 13 (trixie) ships PostgreSQL 17 with
# `postgresql-17-pgvector` as a plain package. PG_MAJOR overrides the version.
#
# Environment: PG_FAST=1 starts the server with fsync off (tests only: faster CREATE
# DATABASE, no durability); PG_OWNER_PID=<pid> stops and removes the server when that
# process exits; PG_SOURCE_SUITE overrides the suite pgvector's source comes from.
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; fi
fi

debian_major() {
    local v
    v="$(cut -d. -f1 /etc/debian_version 2>/dev/null || true)"
    case "$v" in
        [0-9]*) echo "$v" ;;
        trixie*) echo 13 ;;
        bookworm*) echo 12 ;;
        *) echo 0 ;;
    esac
}

DEBIAN="$(debian_major)"
if [ -z "${PG_MAJOR:-}" ]; then
    if [ "$DEBIAN" -ge 13 ]; then PG_MAJOR=17; else PG_MAJOR=15; fi
fi
PG_BIN="/usr/lib/postgresql/$PG_MAJOR/bin"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif [ -n "$SUDO" ]; then $SUDO "$@"
    else die "need root (or passwordless sudo) to run: $*"
    fi
}

apt_install() {
    log "installing $*"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

APT_UPDATED=0
apt_update() {
    if [ "$APT_UPDATED" -eq 0 ]; then
        as_root apt-get update -qq >&2
        APT_UPDATED=1
    fi
}

vector_installed() {
    [ -x "$PG_BIN/pg_config" ] || return 1
    [ -f "$("$PG_BIN/pg_config" --sharedir)/extension/vector.control" ]
}

# The main Debian mirror the system already uses (deb822 .sources or one-line .list files).
debian_mirror() {
    local files=() f uri
    [ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
    for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] && files+=("$f")
    done
    for f in "${files[@]}"; do
        uri="$(grep -hoE '(URIs:[[:space:]]*|^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?)[a-z]+://[^[:space:]]+' "$f" 2>/dev/null \
            | grep -oE '[a-z]+://[^[:space:]]+' | grep -v -- '-security' | grep -E '/debian/?$' | head -n1 || true)"
        if [ -n "$uri" ]; then echo "${uri%/}"; return; fi
    done
    echo "http://deb.debian.org/debian"
}

build_pgvector_from_source() {
    local suite="${PG_SOURCE_SUITE:-trixie}" mirror work
    mirror="$(debian_mirror)"
    command -v dpkg-source >/dev/null || apt_install dpkg-dev
    command -v make >/dev/null || apt_install make
    command -v gcc >/dev/null || apt_install gcc
    work="$(mktemp -d /tmp/palimpsest-pgvector.XXXXXX)"
    mkdir -p "$work/lists/partial" "$work/src"
    echo "deb-src $mirror $suite main" >"$work/sources.list"
    local opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
        -o "Dir::State::Lists=$work/lists" -o "APT::Sandbox::User=root")
    log "fetching Debian's pgvector source package from $mirror $suite"
    as_root apt-get "${opts[@]}" update -qq >&2
    (cd "$work/src" && as_root apt-get "${opts[@]}" source -qq pgvector >&2)
    local dir
    dir="$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n1)"
    [ -n "$dir" ] || die "apt-get source pgvector produced no source folder"
    log "building $(basename "$dir") against $PG_BIN/pg_config"
    # with_llvm=no: skip the JIT bitcode, which needs clang and is not used by pgvector's speed.
    as_root make -s -C "$dir" PG_CONFIG="$PG_BIN/pg_config" with_llvm=no >&2
    as_root make -s -C "$dir" PG_CONFIG="$PG_BIN/pg_config" with_llvm=no install >&2
    rm -rf "$work"
}

install() {
    if [ ! -x "$PG_BIN/postgres" ] || [ ! -x "$PG_BIN/initdb" ]; then
        apt_update
        apt_install postgresql "postgresql-$PG_MAJOR" postgresql-contrib
    fi
    if vector_installed; then
        log "PostgreSQL $PG_MAJOR with pgvector is installed"
        return
    fi
    apt_update
    if apt-cache show "postgresql-$PG_MAJOR-pgvector" >/dev/null 2>&1; then
        apt_install "postgresql-$PG_MAJOR-pgvector"
    else
        [ -x "$PG_BIN/pg_config" ] && [ -d "$("$PG_BIN/pg_config" --includedir-server)" ] \
            || apt_install "postgresql-server-dev-$PG_MAJOR"
        build_pgvector_from_source
    fi
    vector_installed || die "pgvector did not install into $PG_BIN/pg_config --sharedir"
    log "PostgreSQL $PG_MAJOR with pgvector is installed"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Run a command as the `postgres` user when root (the server refuses to run as root).
as_pg() {
    if [ "$(id -u)" -eq 0 ]; then
        id postgres >/dev/null 2>&1 || useradd --system --home /var/lib/postgresql --shell /bin/bash postgres
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

start() {
    install
    local data port opts
    data="$(mktemp -d /tmp/palimpsest-pg.XXXXXX)"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$data" && chmod 700 "$data"
    as_pg "$PG_BIN/initdb" -D "$data/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$data/initdb.log" 2>&1 \
        || { cat "$data/initdb.log" >&2; die "initdb failed"; }
    for _ in 1 2 3 4 5; do
        port="$(free_port)"
        opts="-c listen_addresses=127.0.0.1 -p $port -k $data -c max_connections=300"
        if [ "${PG_FAST:-0}" = "1" ]; then
            opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        fi
        if as_pg "$PG_BIN/pg_ctl" -D "$data/data" -l "$data/server.log" -o "$opts" -w -t 30 start >&2; then
            echo "$opts" >"$data/opts"
            watch_owner "$data"
            echo "PGDATA=$data"
            echo "postgresql://postgres@127.0.0.1:$port/postgres"
            return
        fi
        log "start on port $port failed; retrying"
    done
    cat "$data/server.log" >&2 || true
    die "could not start PostgreSQL"
}

# With PG_OWNER_PID set, a detached watcher stops and removes the server once that
# process is gone, so a test run that is killed does not leave a server behind.
watch_owner() {
    local data="$1" owner="${PG_OWNER_PID:-}"
    [ -n "$owner" ] || return 0
    nohup bash -c 'while kill -0 "$1" 2>/dev/null && [ -d "$3" ]; do sleep 5; done; [ -d "$3" ] && bash "$2" stop "$3"' \
        watcher "$owner" "$(readlink -f "$0")" "$data" >/dev/null 2>&1 &
}

stop() {
    local data="${1:?usage: postgres.sh stop PGDATA}"
    case "$data" in /tmp/palimpsest-pg.*) ;; *) die "refusing to stop a server outside /tmp/palimpsest-pg.*: $data" ;; esac
    if [ -d "$data/data" ]; then
        as_pg "$PG_BIN/pg_ctl" -D "$data/data" -m immediate -w stop >&2 || true
    fi
    rm -rf "$data"
}

# Stop the server without removing it, and start it again on the same port (fault tests).
pause() {
    local data="${1:?usage: postgres.sh pause PGDATA}"
    as_pg "$PG_BIN/pg_ctl" -D "$data/data" -m fast -w stop >&2
}

resume() {
    local data="${1:?usage: postgres.sh resume PGDATA}"
    as_pg "$PG_BIN/pg_ctl" -D "$data/data" -l "$data/server.log" -o "$(cat "$data/opts")" -w -t 30 start >&2
}

case "${1:-start}" in
    install) install ;;
    start) start ;;
    stop) stop "${2:-}" ;;
    pause) pause "${2:-}" ;;
    resume) resume "${2:-}" ;;
    *) die "usage: postgres.sh [install|start|stop PGDATA|pause PGDATA|resume PGDATA]" ;;
esac
