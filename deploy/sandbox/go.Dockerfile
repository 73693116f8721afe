# The Go sandbox image, for production (see python.Dockerfile for the shared contract).
# Not yet wired into the runner: `Language` has no Go variant, because the machines this
# is built and tested on have no Go toolchain to assemble a local image from. The layout
# is the one the runner would use: modules downloaded before the run (`go mod download`
# with GOMODCACHE in the dependency cache, keyed by go.sum) and mounted read-only at
# /deps/gomodcache; the run is offline (GOPROXY=off, GOFLAGS=-mod=mod).
FROM golang:1.22-bookworm
RUN groupadd -g 10001 sandbox \
 && useradd -u 10001 -g 10001 -d /tmp -s /bin/sh -M sandbox \
 && mkdir -p /src /work /deps
COPY proven-entry /usr/local/bin/proven-entry
ENV HOME=/tmp LANG=C.UTF-8 GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local \
    GOMODCACHE=/deps/gomodcache GOCACHE=/tmp/go-build GOTMPDIR=/tmp CGO_ENABLED=0
USER 10001:10001
WORKDIR /work
CMD ["/bin/sh"]
