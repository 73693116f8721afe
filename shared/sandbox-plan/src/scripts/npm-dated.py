#!/usr/bin/env python3
# Proven: a dated view of an npm registry whose publish times are not the packages' own.
#
# A registry mirror may stamp every release with the day it copied it (this workplace's
# mirror dates redis-parser 2.0.0, of 2016, to 2025), so `npm install --before=DATE` finds
# no release of an earlier year and the preparation would resolve today's. The packages
# keep their own dates: a tarball packed by npm 4 and older holds its files' times (npm 5,
# out on 2017-05-25, packs every file at 1985-10-26 08:15 UTC instead). This server, on
# the loopback of the preparation container, serves the registry's documents with each
# release's `time` read from its tarball: it reads the first 16 KiB of a few tarballs per
# package (a binary search over the first releases of its minor lines for the lines begun
# by the date, then one within each of those lines, at once: semver order is publish order
# but for backports to older lines), and marks the versions up to the last one packed
# before the date as published then, the rest as after it. A tarball packed by npm 5 or later says only
# "after 2017-05-25": before that day it is after the date; from that day on it is
# counted as before it (today's release, as without this view). Only the releases out by
# the date are served (npm 5 has no `--before`), `latest` the newest of them. Everything
# else (tarballs, other paths) is passed through unchanged. A release the registry itself
# dates by the date is out by then whatever its tarball says (a copy day is never before
# the publish day): its tarball is not read.
#
#
# It also serves a release's dependency on a package from off the registry (engine.io-client
# 1.x requires `xmlhttprequest` from a GitHub tarball, which the sandbox cannot fetch, so
# an unlocked tree holding it did not resolve at all) as that package's registry release
# (`*`, as of the date when one is given), and keeps what it changed for the record.
#
# Usage: npm-dated.py UPSTREAM BEFORE PORTFILE STATSFILE
#   UPSTREAM   the registry's address (https://registry.npmjs.org/)
#   BEFORE     the date, RFC 3339 (2015-01-30T17:44:52Z), or `-`: the registry's own
#              times are kept (only off-registry dependencies are changed)
#   PORTFILE   where the port it listens on is written once it listens
#   STATSFILE  where it keeps what it read (packages dated, tarballs read), as JSON
# The upstream is reached as the preparation's other calls are (HTTPS_PROXY).
# Python 3.5+ (the images' python3): no f-strings.
import datetime
import json
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from http.server import BaseHTTPRequestHandler, HTTPServer
from socketserver import ThreadingMixIn

UPSTREAM = sys.argv[1].rstrip("/")
BEFORE = None if sys.argv[2] == "-" else sys.argv[2][:19]
PORTFILE = sys.argv[3]
STATSFILE = sys.argv[4]
# npm 5's release day: from it on, npm packs every file at NORMALIZED.
NPM5 = "2017-05-25T00:00:00"
NORMALIZED = 499162500
# Before npm existed: a time this old is no publish time.
EARLIEST = datetime.datetime(2009, 9, 1).timestamp()
HEAD_BYTES = 16384
# A tarball whose files carry no time (packed at 1970): neither before nor after the date.
UNKNOWN = "unknown"

LOCK = threading.Lock()
TARBALL_TIMES = {}
DOCUMENTS = {}
STATS = {"packages": 0, "tarballs": 0, "unread": 0, "replaced": [], "later": []}
# A source no registry serves: git, a URL, a file (the registry's own tarballs are not).
ELSEWHERE = re.compile(r"^(git\+|git:|github:|gitlab:|bitbucket:|https?:|file:)|^[\w.-]+/[\w.-]+(#.*)?$")
FIELDS = ("dependencies", "optionalDependencies")

SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


def semver_key(version):
    """Semver's precedence as a sort key; None for what is no semver."""
    m = SEMVER.match(version)
    if not m:
        return None
    pre = m.group(4)
    parts = []
    for p in (pre.split(".") if pre else []):
        parts.append((0, int(p), "") if p.isdigit() else (1, 0, p))
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), 0 if pre else 1, parts)


def fetch(url, headers=None, limit=None):
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=60) as r:
        return r.status, r.headers, (r.read(limit) if limit else r.read())


def read_head(url):
    """A tarball's first HEAD_BYTES, asked again twice when the way there fails (a busy
    proxy drops a connection now and then; an unread tarball counts as packed after the
    date)."""
    for attempt in range(3):
        try:
            with READS:
                return fetch(url, {"Range": "bytes=0-%d" % (HEAD_BYTES - 1)}, HEAD_BYTES)[2]
        except urllib.error.HTTPError:
            raise
        except OSError:
            if attempt == 2:
                raise
            time.sleep(0.5 * (attempt + 1))


def tarball_time(url):
    """The newest file time of a tarball's first entries (ISO, UTC), or None when the
    tarball was packed by npm 5 or later (every time normalized) or could not be read."""
    with LOCK:
        if url in TARBALL_TIMES:
            return TARBALL_TIMES[url]
    found = None
    try:
        head = read_head(url)
        data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head)
        at = 0
        newest = None
        normalized = False
        while at + 512 <= len(data):
            header = data[at:at + 512]
            if header.strip(b"\0") == b"":
                break
            try:
                size = int(header[124:136].strip(b"\0 ") or b"0", 8)
                mtime = int(header[136:148].strip(b"\0 ") or b"0", 8)
            except ValueError:
                break
            if mtime == NORMALIZED:
                normalized = True
            elif mtime >= EARLIEST:
                newest = mtime if newest is None else max(newest, mtime)
            at += 512 + ((size + 511) // 512) * 512
        if newest is not None:
            found = datetime.datetime.utcfromtimestamp(newest).strftime("%Y-%m-%dT%H:%M:%S")
        elif not normalized and at > 0:
            # Files packed with no time at all (JSONStream 0.8.0's, at 1970): says nothing.
            found = UNKNOWN
        with LOCK:
            STATS["tarballs"] += 1
    except (OSError, urllib.error.URLError, zlib.error, ValueError):
        with LOCK:
            STATS["unread"] += 1
    with LOCK:
        TARBALL_TIMES[url] = found
    return found


# Tarball reads in flight at once, over every document being dated.
READS = threading.BoundedSemaphore(16)


def map_at_once(fn, items):
    """`fn` of each item, in order, each in a thread of its own (a handful per document)."""
    results = [None] * len(items)

    def one(i):
        results[i] = fn(items[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(items))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def last_where(holds, items, lo, hi):
    """The last index in lo..hi whose item `holds`, by binary search (the items that hold
    come first), or lo - 1 when none does."""
    found = lo - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if holds(items[mid]):
            found = mid
            lo = mid + 1
        else:
            hi = mid - 1
    return found


def line_of(version):
    """The release line a caret range of `version` stays in: its major, its minor below
    1.0.0, its patch below 0.1.0."""
    key = semver_key(version)
    major, minor, patch = key[0], key[1], key[2]
    if major > 0:
        return (major,)
    if minor > 0:
        return (0, minor)
    return (0, 0, patch)


def before_the_date(doc, version):
    """Whether `version` was published before the date, by the registry's time or its
    tarball (None: its tarball says nothing either way), and its time when one says."""
    # A release the registry dates by the date was out by then: a mirror's copy day is
    # never before the day it was published. Its tarball is not read (a tree of 2026 read
    # a tarball head per release line of every package, through the registry's copy days
    # of 2024 and 2025: pino's preparation ran out of its 900 s).
    listed = str((doc.get("time") or {}).get(version) or "")[:19]
    if len(listed) == 19 and listed <= BEFORE:
        return True, listed
    url = ((doc["versions"].get(version) or {}).get("dist") or {}).get("tarball")
    when = tarball_time(url) if url else None
    if when == UNKNOWN:
        return None, None
    if when is None:
        # Packed by npm 5 or later: after the date when the date is older than npm 5.
        return BEFORE >= NPM5, None
    return when <= BEFORE, when


def on_the_registry(doc):
    """The document with each release's dependencies on packages from off the registry
    made the registry's releases of those names."""
    for version, manifest in (doc.get("versions") or {}).items():
        for field in FIELDS:
            deps = manifest.get(field) or {}
            for name, spec in list(deps.items()):
                if isinstance(spec, str) and ELSEWHERE.search(spec) and not spec.startswith(UPSTREAM):
                    deps[name] = "*"
                    with LOCK:
                        seen = "%s (%s, required by %s)" % (name, spec, doc.get("name", "?"))
                        if seen not in STATS["replaced"] and len(STATS["replaced"]) < 50:
                            STATS["replaced"].append(seen)
    return doc


def dated(doc):
    """The document with each version's time read from the packages themselves."""
    if BEFORE is None:
        return doc
    versions = [v for v in doc.get("versions", {}) if semver_key(v) is not None]
    versions.sort(key=semver_key)
    # Every version, prereleases too: a package whose line of the date was prereleases
    # only (double-ended-queue's `^2.1.0-0`, 2014) is served them.
    measured = {}

    def probe(v):
        ok, when = before_the_date(doc, v)
        if when:
            with LOCK:
                measured[v] = when
        return ok

    def out(v):
        # Within a line a release whose tarball says nothing is not counted as out.
        return probe(v) is True

    # The last version of each minor line published before the date, by binary search
    # within the line (probing its last version, then its first, before searching): a
    # backport to an older line (minimist 0.2.1 of 2020, below 1.2.0 of 2015 in semver
    # order; readable-stream's 1.0.x of 2015 below its 1.1.x of 2014) is out of publish
    # order across lines. A package whose every version was searched as one line found
    # minimist 0.2.0 its last release of the date, and `minimist@1.2.0` then failed the
    # whole tree back to today's releases.
    majors = {}
    for v in versions:
        majors.setdefault(semver_key(v)[:2], []).append(v)
    lines = [majors[k] for k in sorted(majors)]
    # A line's first release is in publish order (a backport is a later release of an older
    # line, never its first), so the lines begun by the date are found by a binary search
    # over their first releases, and no later line is read at all (lodash's 4.x lines in a
    # tree of 2015). Where a package broke that order, a line passed over here is one with
    # no release served, which gets its first release below, as any such line does.
    def begun_by_the_date(group):
        # The line's first release that says when (JSONStream 0.8.0's files carry no time,
        # and taking it for after the date passed over the 0.9 to 1.x lines of 2014–2015):
        # a later one out by the date means the first was too. A line none of whose first
        # releases says is counted as begun; the search within it decides.
        for v in group[:4]:
            ok = probe(v)
            if ok is not None:
                return ok
        return True

    begun = last_where(begun_by_the_date, lines, 0, len(lines) - 1) + 1

    def cut_of(group):
        if out(group[-1]):
            return len(group) - 1
        if not out(group[0]):
            return None
        return max(0, last_where(out, group, 1, len(group) - 2))

    # The lines are searched at once, each read a network round trip (a tree of 2016 read
    # some 6,600 tarball heads one after another, ten minutes and more).
    cuts = map_at_once(cut_of, lines[:begun])
    kept_names = []
    cut_times = {}
    for group, cut in zip(lines, cuts):
        if cut is None:
            continue
        for v in group[:cut + 1]:
            kept_names.append(v)
            cut_times[v] = measured.get(group[cut])
    times = dict(doc.get("time") or {})
    after = (datetime.datetime.strptime(BEFORE, "%Y-%m-%dT%H:%M:%S")
             + datetime.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    kept_set = set(kept_names)
    for v in versions:
        if v in kept_set:
            times[v] = (measured.get(v) or cut_times.get(v) or BEFORE) + ".000Z"
        else:
            upstream = str(times.get(v) or "")
            times[v] = upstream if upstream[:19] > BEFORE else after
    doc["time"] = times
    # Only the releases out by the date are served (npm 5 and older take no `--before`,
    # and resolved today's releases beside it), their `latest` the newest of them; a
    # package with none out by then is served whole, as the registry has it.
    if kept_names:
        full = dict(doc["versions"])
        kept = {v: full[v] for v in kept_names}
        doc["versions"] = kept
        tags = {t: v for t, v in (doc.get("dist-tags") or {}).items() if v in kept}
        released = [v for v in kept if semver_key(v)[3] == 1]
        tags["latest"] = max(released or kept_names, key=semver_key)
        # A tag whose release came after the date (resolve's `typescript@next`) is its
        # nearest of then: the newest prerelease out by the date, else the newest release.
        # Dropped, npm failed the whole tree (ETARGET).
        pre = [v for v in kept if semver_key(v)[3] == 0]
        for t in (doc.get("dist-tags") or {}):
            if t not in tags:
                tags[t] = max(pre or kept_names, key=semver_key)
        doc["dist-tags"] = tags
        # A line of releases with none out by the date (eslint-release `^0.10.0` in a tree
        # of 2016, its first 0.10 a year later) is served its first release, as of the
        # nearest later day a range of that line resolves at, rather than failing the whole
        # tree back to today's releases; `latest` stays the date's, which npm takes for
        # any range it satisfies (`*`, `>=1`), so only a range of that line reaches it.
        have = set(line_of(v) for v in kept)
        first = {}
        for v in versions:
            line = line_of(v)
            if line in have or v in kept:
                continue
            # Its lowest release, else (a line of prereleases only) its lowest prerelease.
            best = first.get(line)
            if best is None or (semver_key(best)[3] == 0 and semver_key(v)[3] == 1):
                first[line] = v
        for line, v in sorted(first.items(), key=lambda item: semver_key(item[1])):
            doc["versions"][v] = full[v]
            with LOCK:
                seen = "%s@%s" % (doc.get("name", "?"), v)
                if seen not in STATS["later"] and len(STATS["later"]) < 50:
                    STATS["later"].append(seen)
    with LOCK:
        STATS["packages"] += 1
    return doc


class Registry(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("?")[0]
        url = UPSTREAM + path
        name = urllib.parse.unquote(path.lstrip("/"))
        # A package's document: `/name` or `/@scope/name` (npm sends `@scope%2fname`).
        if re.match(r"^(@[^/]+/)?[^/@][^/]*$", name) and "/-/" not in path:
            self.document(name, url)
        else:
            self.passthrough(url)

    def document(self, name, url):
        with LOCK:
            body = DOCUMENTS.get(name)
        if body is None:
            try:
                _, _, raw = fetch(url, {"Accept": "application/json"})
                doc = on_the_registry(dated(json.loads(raw.decode("utf-8"))))
                body = json.dumps(doc).encode("utf-8")
            except urllib.error.HTTPError as e:
                self.send_error(e.code)
                return
            except (OSError, ValueError, KeyError) as e:
                self.send_error(502, str(e)[:200])
                return
            with LOCK:
                DOCUMENTS[name] = body
            save_stats()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def passthrough(self, url):
        try:
            status, headers, body = fetch(url)
        except urllib.error.HTTPError as e:
            self.send_error(e.code)
            return
        except OSError as e:
            self.send_error(502, str(e)[:200])
            return
        self.send_response(status)
        self.send_header("Content-Type", headers.get("Content-Type", "application/octet-stream"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(ThreadingMixIn, HTTPServer):
    daemon_threads = True


SAVING = threading.Lock()


def save_stats():
    # One writer at a time: two requests' threads once raced on the same `.part` file, and
    # the one that lost failed its request (npm then found no version of that package).
    with SAVING:
        with LOCK:
            text = json.dumps(STATS)
        with open(STATSFILE + ".part", "w") as f:
            f.write(text)
        os.replace(STATSFILE + ".part", STATSFILE)


def main():
    server = Server(("127.0.0.1", 0), Registry)
    save_stats()
    with open(PORTFILE + ".part", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(PORTFILE + ".part", PORTFILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
