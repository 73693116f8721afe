#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine, for the sandbox tests: starts an
# installed `dockerd` that is stopped, installs Debian's `docker.io` where none is
# installed (as on a fresh CI machine), and otherwise fails naming what to install.
# Sourced by scripts/test (ensure_docker, ensure_sandbox_images); run it directly to do
# both: `scripts/docker.sh`.
#
# The client on PATH may be newer than the daemon (a Docker 28 client beside Debian's
# 20.10 engine): the API version is pinned to what the daemon speaks, so every `docker`
# call below and in scripts/sandbox-images works against either.

docker_log() { printf 'docker: %s\n' "$*" >&2; }

docker_as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        docker_log "need root to run: $*"; return 1; fi
}

docker_answers() { docker version --format '{{.Server.APIVersion}}' >/dev/null 2>&1; }

# Pins DOCKER_API_VERSION to the daemon's version (the CLI refuses a newer one).
docker_pin_api_version() {
    local api
    api=$(env -u DOCKER_API_VERSION docker version --format '{{.Server.APIVersion}}' 2>/dev/null) || return 0
    [ -n "$api" ] && export DOCKER_API_VERSION="$api"
    return 0
}

ensure_docker() {
    if ! command -v docker >/dev/null; then
        docker_log "no docker client: installing Debian's docker.io"
    elif docker_answers; then
        docker_pin_api_version
        return 0
    fi
    if ! command -v dockerd >/dev/null && [ ! -x /usr/sbin/dockerd ]; then
        docker_log "installing docker.io from Debian's packages (dockerd is missing)"
        docker_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
            docker_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                --no-install-recommends docker.io >/dev/null ||
            { docker_log "Docker is missing: install the Debian package 'docker.io' (or Docker Engine) and start dockerd"; return 1; }
    fi
    local dockerd log=${PROVEN_DOCKERD_LOG:-/var/log/proven-dockerd.log}
    dockerd=$(command -v dockerd || echo /usr/sbin/dockerd)
    if [ -S /var/run/docker.sock ] && pgrep -x dockerd >/dev/null; then
        docker_log "dockerd is running but does not answer yet; waiting"
    else
        docker_log "starting dockerd (log: $log)"
        # setsid: the daemon outlives this script and the test run, like a service would.
        docker_as_root setsid "$dockerd" >>"$log" 2>&1 </dev/null &
    fi
    local deadline=$((SECONDS + 60))
    until docker_answers; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            docker_log "dockerd did not answer within 60 s; the end of $log:"
            tail -n 20 "$log" >&2 || true
            docker_log "Docker is needed by the sandbox tests: install 'docker.io' and make 'dockerd' start"
            return 1
        fi
        sleep 0.3
    done
    docker_pin_api_version
}

# The Go toolchain the Go image is assembled from (and that prepares Go modules): Debian's
# golang-go, installed when missing, as on a fresh CI machine.
ensure_go() {
    if ! command -v go >/dev/null; then
        docker_log "no Go toolchain: installing Debian's golang-go"
        docker_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
            docker_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                --no-install-recommends golang-go >/dev/null ||
            { docker_log "Go is missing: install the Debian package 'golang-go'"; return 1; }
    fi
    ensure_newer_go || docker_log "no newer Go from Debian's backports: the Go image keeps $(go version)"
}

# The sandbox's Go image is built from the newest Go Debian ships: bookworm's golang-go is
# 1.19, which refuses go.mod files with a toolchain line and builds nothing needing 1.21+.
# trixie-backports carries golang-1.26 (statically linked: it needs nothing of trixie but
# its own source package, and backports are never taken unless asked for by name, so
# nothing else of the host moves); bookworm-backports golang-1.23 is the fallback. Modules
# declare `go 1.25` and newer (gin-gonic/gin), and a toolchain cannot be downloaded in the
# sandbox. Best effort: without either, the older Go is used.
ensure_newer_go() {
    ls -d /usr/lib/go-1.2[6-9] >/dev/null 2>&1 && return 0
    grep -q 'VERSION_CODENAME=bookworm' /etc/os-release 2>/dev/null || return 1
    local list=/etc/apt/sources.list.d/proven-trixie-backports.list
    if ! grep -rqs 'trixie-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        docker_log "adding Debian's trixie-backports (for golang-1.26)"
        echo "deb http://deb.debian.org/debian trixie-backports main" | docker_as_root tee "$list" >/dev/null || return 1
    fi
    docker_log "installing golang-1.26-go from trixie-backports"
    if docker_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
        docker_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends -t trixie-backports golang-1.26-go >/dev/null; then
        return 0
    fi
    ls -d /usr/lib/go-1.2[1-9] >/dev/null 2>&1 && return 0
    list=/etc/apt/sources.list.d/proven-bookworm-backports.list
    if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        docker_log "adding Debian's bookworm-backports (for golang-1.23)"
        echo "deb http://deb.debian.org/debian bookworm-backports main" | docker_as_root tee "$list" >/dev/null || return 1
    fi
    docker_log "installing golang-1.23-go from bookworm-backports"
    docker_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
        docker_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends -t bookworm-backports golang-1.23-go >/dev/null
}

# Builds the sandbox images (python, rust, node, go) unless they are current: a no-op
# taking well under a second when nothing changed (scripts/sandbox-images compares
# fingerprints).
ensure_sandbox_images() {
    ensure_go
    # Debian packages the images carry that a minimal host may lack.
    local p missing=()
    for p in $("$(dirname "${BASH_SOURCE[0]}")/sandbox-images" --host-packages); do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        docker_log "installing Debian's ${missing[*]} (the sandbox images carry them)"
        { docker_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
            docker_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                --no-install-recommends "${missing[@]}" >/dev/null; } ||
            { docker_log "missing: install the Debian packages ${missing[*]}"; return 1; }
    fi
    # The four languages, and Node 22 (a project whose engines ask for it runs there when
    # PROVEN_SANDBOX_IMAGES names it; the sandbox tests use it).
    "$(dirname "${BASH_SOURCE[0]}")/sandbox-images" python rust node go node22 node8 node4
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    ensure_docker
    ensure_sandbox_images
fi
