#!/usr/bin/env bash
# Makes sure the services the tests talk to are running: starts an installed one that is
# stopped, installs a missing one from Debian's packages where it can (as on a fresh
# machine), and otherwise fails naming what to install. Sourced by scripts/test.
set -euo pipefail

log() { printf 'services: %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        log "need root to run: $*"; return 1; fi
}

apt_install() {
    log "installing $* from Debian's packages"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

wait_for() { # name, tries, command...
    local name=$1 tries=$2; shift 2
    for _ in $(seq "$tries"); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.5
    done
    log "$name did not become ready"; return 1
}

ensure_postgres() {
    local url=${PROVEN_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}
    if command -v pg_isready >/dev/null && pg_isready -q -d "$url"; then return 0; fi
    if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
        apt_install postgresql || { log "PostgreSQL is missing: install the Debian package 'postgresql'"; return 1; }
    fi
    local version
    version=$(ls /etc/postgresql | sort -V | tail -n 1)
    log "starting PostgreSQL $version"
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    wait_for PostgreSQL 60 pg_isready -q -d "$url" || {
        log "PostgreSQL is not reachable at $url (trust auth for user postgres is expected)"; return 1; }
}

ensure_redis() {
    if command -v redis-cli >/dev/null && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then return 0; fi
    command -v redis-server >/dev/null || apt_install redis-server ||
        { log "Redis is missing: install the Debian package 'redis-server'"; return 1; }
    log "starting Redis"
    mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
        --dir /var/lib/redis --logfile /var/log/redis/ci.log
    wait_for Redis 40 redis-cli -h 127.0.0.1 -p 6379 ping
}

# python3 with venv and pip: the API fuzz test (tests/e2e/service_schema.rs) installs its
# pinned Schemathesis from PyPI into a virtual environment under ~/.cache/proven once.
ensure_python_venv() {
    if command -v python3 >/dev/null && python3 -m venv --help >/dev/null 2>&1 &&
        python3 -c 'import ensurepip' >/dev/null 2>&1; then return 0; fi
    apt_install python3 python3-venv ||
        { log "python3 with venv is missing: install the Debian packages 'python3' and 'python3-venv'"; return 1; }
}

# Debian's Chromium and its ChromeDriver: the /ui test (tests/e2e/ui.rs) drives the pages in
# headless Chromium through WebDriver and saves screenshots under target/ui-screenshots.
ensure_chromium() {
    if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then return 0; fi
    log "installing Debian's chromium and chromium-driver (the /ui test)"
    apt_install --no-install-recommends chromium chromium-driver ||
        { log "Chromium is missing: install the Debian packages 'chromium' and 'chromium-driver'"; return 1; }
}

# The README's service commands (tests/e2e/readme.rs runs them) send the review with curl
# and read its answers with jq.
ensure_curl_jq() {
    command -v curl >/dev/null && command -v jq >/dev/null && return 0
    apt_install --no-install-recommends curl jq ||
        { log "curl and jq are missing: install the Debian packages 'curl' and 'jq'"; return 1; }
}

# kubectl's own kustomize builds deploy/k8s for cli/tests/deploy.rs (offline, no cluster).
ensure_kubectl() {
    command -v kubectl >/dev/null && return 0
    apt_install kubectl || true
    # Debian does not package kubectl: when it cannot be had, the suite still runs and the
    # deploy tests that build with it fail naming it (one test, not the whole run).
    command -v kubectl >/dev/null || log "kubectl is missing: the deploy tests that build deploy/k8s will fail naming it (install kubectl)"
    return 0
}

# Drops the test databases (`proven_t_<UUIDv7>`) that a crashed run left: only those no
# session is connected to and whose name's timestamp (a UUIDv7 starts with its creation time in
# milliseconds) is older than PROVEN_TEST_DB_STALE_HOURS (default 6). Another run's databases
# on the same Postgres, in use or freshly made, are never touched (and never forced).
sweep_test_databases() {
    local url=${PROVEN_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}
    local hours=${PROVEN_TEST_DB_STALE_HOURS:-6}
    psql -q -At "$url" -v hours="$hours" 2>/dev/null <<'SQL' |
SELECT d.datname FROM pg_database d
 WHERE d.datname ~ '^proven_t_[0-9a-f]{32}$'
   AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)
   AND to_timestamp(('x' || lpad(substr(d.datname, 10, 12), 16, '0'))::bit(64)::bigint / 1000.0)
       < now() - make_interval(hours => :hours)
SQL
        while read -r db; do psql -q "$url" -c "DROP DATABASE IF EXISTS \"$db\"" >/dev/null 2>&1 || true; done
}
