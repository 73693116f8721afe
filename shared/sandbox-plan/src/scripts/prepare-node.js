// Proven: prepares a Node project's test environment inside a preparation container.
//
// Runs as the sandbox user with no secrets and no host configuration; the only way out is
// the runner's egress proxy (the operator's registries). The project's manifests and lock
// file are copied into /deps at their places in the tree, and installed there with the
// package manager its CI uses (the plan's `manager`, chosen from package.json's
// `packageManager` or the lock file: npm, pnpm, yarn 1 or yarn berry), itself installed
// from the registry like a dev tool into /tmp. Install scripts never run. The lock file's
// pins are kept (`npm ci`, `pnpm install --frozen-lockfile`, `yarn install
// --frozen-lockfile` / `--immutable`); only when that fails is the install done without
// it, and the record says so. So /deps/node_modules (linked at /work/node_modules) and each
// workspace package's /deps/PKG/node_modules (linked at /work/PKG/node_modules by the run)
// keep the layout the manager made: pnpm's links into node_modules/.pnpm are relative and
// stay within /deps; a link to a workspace package's own folder is made to point at the
// tree (/work/PKG), where the run has it.
// A package the registry does not serve (a 404) is dropped, named, and the rest installed:
// one missing dev tool never blocks the tests; so is a direct dependency whose locked tree
// holds a package from git or a URL (the sandbox cannot fetch it). Where the manager itself cannot be
// installed, npm prepares the project after pnpm's `catalog:` and `workspace:` ranges are
// translated (the catalog's range; the local package, as an npm workspace).
'use strict';
const fs = require('fs');
const path = require('path');
const spawnSync = require('child_process').spawnSync;

// This script runs on the image's own Node, down to Node 4 (a 2015 project's): so it uses
// only what Node 4 has (no destructuring, Object.entries, fs.rmSync, recursive mkdirSync,
// copyFileSync, readdirSync's withFileTypes or Array.prototype.includes).

const plan = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const work = '/deps';
const tools = '/tmp/proven-pm';
const registry = process.env.npm_config_registry || '';
const choice = plan.manager || { manager: 'npm', install: null, because: 'the image' };
const report = {
  node: process.version, resolved: false, not_prepared: [], refused: plan.refused || [], notes: [],
  package_manager: { name: choice.manager === 'yarn_berry' ? 'yarn' : choice.manager, version: null, because: choice.because },
};
const FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'];
const manifests = plan.files.filter((f) => path.basename(f) === 'package.json');

function run(cmd, args, env, seconds) {
  const r = spawnSync(cmd, args, {
    cwd: work, encoding: 'utf8', timeout: (seconds || plan.call_timeout || 900) * 1000,
    env: Object.assign({}, process.env, {
      npm_config_cache: '/tmp/npm-cache', npm_config_update_notifier: 'false',
      PATH: tools + '/bin:' + process.env.PATH,
    }, env || {}),
  });
  return { code: r.status === null ? 124 : r.status, out: r.stdout || '', text: (r.stdout || '') + (r.stderr || '') + (r.error ? String(r.error) : '') };
}

// npm 7 and newer refuse a tree whose peer ranges conflict (ERESOLVE), which npm 6 and
// older, the npm of most projects' era, installed with a warning: once npm says so, every
// later call resolves peers as npm 6 did, and the record says why.
let legacyPeers = false;

function npm(args, env) {
  const extra = legacyPeers ? ['--legacy-peer-deps'] : [];
  return run('npm', args.concat(extra, ['--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error']), env);
}

// The views of the registry (npm-dated.py, beside this script), each started once, by
// their date: for a registry whose publish times do not reach back to the date (a mirror
// stamps what it copied with its own day), the releases' times read from their own
// tarballs; with `-`, the registry's own times. Both serve a registry package's
// dependency from off the registry as the registry's release of its name. An entry of
// { port: null }: tried, not running. `dated`: the one the resolution used last.
const views = {};
let dated = null;

function datedView(before) {
  if (views[before]) return views[before].port ? views[before] : null;
  const n = Object.keys(views).length;
  const view = views[before] = { port: null, child: null, stats: '/tmp/npm-view-' + n + '.json', before: before };
  const script = path.join(path.dirname(process.argv[1]), 'npm-dated.py');
  if (!fs.existsSync(script) || run('python3', ['-c', 'pass'], null, 30).code !== 0) return null;
  const portFile = '/tmp/npm-view-' + n + '.port';
  view.child = require('child_process').spawn('python3',
    [script, registry || 'https://registry.npmjs.org/', before, portFile, view.stats], { stdio: 'ignore' });
  // It never keeps this script waiting: the script ends when its work does, and kills it.
  view.child.unref();
  for (let i = 0; i < 150 && !fs.existsSync(portFile); i++) spawnSync('sleep', ['0.1']);
  if (!fs.existsSync(portFile)) return null;
  view.port = fs.readFileSync(portFile, 'utf8').trim();
  return view;
}

// Whether the registry's publish times are a mirror's copy days: every release of the
// project's own direct dependencies (up to three with a registry range) dated after the
// base's date, when the project, of that date, already depended on them. npm 6 and newer
// then find no release "before" it (ETARGET); npm 5 used none of its dates and resolved
// today's releases without a word (Hexo-2, 2015, on Node 4). A real registry dates some
// release of each before it.
function timesAreCopies(before) {
  const root = readJson('package.json');
  const names = [];
  for (const field of ['dependencies', 'devDependencies']) {
    for (const name of Object.keys(root[field] || {})) {
      const spec = root[field][name];
      if (names.length < 3 && typeof spec === 'string' && !fromElsewhere(spec) && !/^(npm:|workspace:|catalog:|link:)/.test(spec)) names.push(name);
    }
  }
  let checked = 0;
  for (const name of names) {
    const r = npm(['view', name, 'time', '--json']);
    let times;
    try {
      times = JSON.parse(r.out);
    } catch (e) {
      continue;
    }
    const days = Object.keys(times || {}).filter((k) => k !== 'created' && k !== 'modified').map((k) => String(times[k]));
    if (days.length === 0) continue;
    if (days.some((d) => d.slice(0, 19) <= before.slice(0, 19))) return false;
    checked += 1;
  }
  return checked > 0;
}

// npm's arguments and environment to resolve through the dated view: the view's address
// as the registry, reached directly (not through the egress proxy: it is this container's
// own), and the tarballs fetched from where the registry's documents say.
function throughView(args, view) {
  if (!view) return { args: args, env: null };
  return {
    args: args.concat(['--registry=http://127.0.0.1:' + view.port + '/', '--replace-registry-host=never', '--noproxy=127.0.0.1']),
    env: { NO_PROXY: '127.0.0.1', no_proxy: '127.0.0.1' },
  };
}

function viewStats(view) {
  try {
    return JSON.parse(fs.readFileSync(view.stats, 'utf8'));
  } catch (e) {
    // No stats written: the notes say less.
    return {};
  }
}

// What the view did, for the record: the releases it dated, the dependencies from off
// the registry it served as registry releases.
function viewNotes(view) {
  const stats = viewStats(view);
  const notes = [];
  if (view.before !== '-') notes.push(datedNote(view.before, stats));
  if ((stats.later || []).length > 0) {
    notes.push('ranges with no release out by ' + view.before + ' resolved to the first release of their line after it (the rest stays as of the date): ' + stats.later.join('; '));
  }
  if ((stats.replaced || []).length > 0) {
    notes.push('dependencies of the registry\'s packages on sources off it, which the sandbox cannot fetch: the registry\'s releases of those names stand in for them (they may differ from those sources): ' + stats.replaced.join('; '));
  }
  return notes;
}

function datedNote(before, stats) {
  return 'the registry\'s publish times do not reach back to ' + before + ' (a mirror\'s copy days): versions resolved as of it by the releases\' own file times, read from their tarballs (packages dated: ' +
    (stats.packages || 0) + ', tarballs read: ' + (stats.tarballs || 0) + '; a tarball packed by npm 5 or later, from 2017-05-25 on, counts as ' + (before >= '2017-05-25' ? 'before the date' : 'after it') + ')';
}

process.on('exit', () => {
  for (const key of Object.keys(views)) {
    try {
      if (views[key].child) views[key].child.kill();
    } catch (e) {
      // Already gone.
    }
  }
});

// Whether `r` failed for conflicting peer ranges; if so, peers are resolved as npm 6 did
// from now on (said once).
function peersAsNpm6(r) {
  if (r.code === 0 || legacyPeers || !/ERESOLVE/.test(r.text)) return false;
  legacyPeers = true;
  const conflict = (/Could not resolve dependency:[^\n]*\n[^\n]*peer [^\n]+/.exec(r.text) || /While resolving: [^\n]+/.exec(r.text) || ['conflicting peer ranges'])[0].replace(/npm (error|ERR!) ?/g, '').replace(/\s+/g, ' ').trim();
  report.notes.push('peer dependencies resolved as npm 6 and older did (--legacy-peer-deps): npm ' + run('npm', ['--version']).text.trim() + ' refuses the project\'s conflicting peer ranges (' + conflict + ')');
  return true;
}

function tail(text, n) {
  return text.trim().split('\n').filter((l) => l.trim()).slice(-(n || 6)).join('\n');
}

// The package a 404 names: npm's `404 Not Found - GET https://registry.npmjs.org/@scope%2fname`
// (npm 5 and 6: `404 Not Found: name@^0.1.9`),
// pnpm's `ERR_PNPM_FETCH_404 … GET https://…/name: Not Found - 404`, yarn's
// `"https://…/name: Not found"` and `Couldn't find package "name" on the "npm" registry`, berry's `YN0035: … name@npm:…: Package not found`.
function missing(text) {
  const m = /404[^\n]*GET \S+?\/((?:@[^\s/:]+(?:\/|%2[fF]))?[^\s/@:]+)(?::?\s|$|\/-\/)/.exec(text)
    || /'((?:@[^@'\s]+\/)?[^@'\s]+)@[^']*' is not in (?:this|the npm) registry/.exec(text)
    || /404 Not Found\s*:\s*((?:@[^@\s\/]+\/)?[^@\s]+)@/.exec(text)
    || /"https?:\/\/[^"\s]+?\/((?:@[^\s/"]+(?:\/|%2[fF]))?[^\s/"@]+): Not found"/i.exec(text)
    || /Couldn't find package "((?:@[^"\s/]+\/)?[^"\s@]+)" on the "npm" registry/.exec(text)
    || /^((?:@[^\s/]+\/)?[^\s@]+) is not in the npm registry/m.exec(text)
    || /YN0035[^\n]*?((?:@[^\s/@]+\/)?[^\s/@]+)@npm:[^\n]*(?:not found|404)/i.exec(text);
  return m ? decodeURIComponent(m[1]) : null;
}

function removeFile(p) {
  try {
    fs.unlinkSync(p);
  } catch (e) {
    // Not there: nothing to remove.
  }
}

function makeDirs(dir) {
  if (fs.existsSync(dir)) return;
  makeDirs(path.dirname(dir));
  fs.mkdirSync(dir);
}

// A directory's entries as readdirSync's withFileTypes gives them (Node 10.10 and newer).
function entriesOf(dir) {
  return fs.readdirSync(dir).map((name) => {
    const stat = fs.lstatSync(path.join(dir, name));
    return { name: name, isDirectory: () => stat.isDirectory(), isSymbolicLink: () => stat.isSymbolicLink() };
  });
}

function readJson(f) {
  const text = fs.readFileSync(path.join(work, f), 'utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(f + ' is not valid JSON: ' + e.message);
  }
}

function writeJson(f, value) {
  fs.writeFileSync(path.join(work, f), JSON.stringify(value, null, 2));
}

// Drops `name` from every manifest that declares it; those that did (none: '').
function drop(name) {
  const found = [];
  for (const f of manifests) {
    const pkg = readJson(f);
    let here = false;
    for (const field of FIELDS) {
      if (pkg[field] && Object.prototype.hasOwnProperty.call(pkg[field], name)) {
        delete pkg[field][name];
        here = true;
      }
    }
    if (here) {
      writeJson(f, pkg);
      found.push(f);
    }
  }
  return found.join('; ');
}

function notServed(name, where) {
  report.not_prepared.push({ what: name, source: where, reason: 'the registry does not serve it (E404)' });
}

// A source no registry serves: git (`github:`, `git+ssh:`), a URL or a file. The registry's
// own tarballs (npm's, yarn's mirror of it, the operator's) are not.
function fromElsewhere(spec) {
  if (typeof spec !== 'string') return false;
  if (/^https?:\/\/registry\.(npmjs\.org|yarnpkg\.com)\//.test(spec)) return false;
  if (registry && spec.indexOf(registry.replace(/\/+$/, '')) === 0) return false;
  return /^(git\+|git:|github:|gitlab:|bitbucket:|https?:|file:)/.test(spec);
}

// Whether npm's failure names a source from off the registry it could not fetch: a spec
// (npm 6: `403 Forbidden: xmlhttprequest@https://github.com/…`), an address it got
// (npm 11: `403 Forbidden - GET https://github.com/…`), a repository git could not list.
function offRegistry(text) {
  const re = /(?:@|GET |ls-remote[^\n]*? )((?:git\+|git:|github:|https?:|ssh:)[^\s'"]+)/g;
  let m;
  while ((m = re.exec(text)) !== null) {
    if (fromElsewhere(m[1])) return true;
  }
  return false;
}

// The project's direct dependencies whose locked tree holds a package from elsewhere (a
// dev tool of 2018 requiring `vm2` from `github:patriksimek/vm2#7e82f90`): npm ci would
// fetch it, and the sandbox cannot, so the whole install would fail. Each is dropped and
// named with the package and its source; the rest is resolved again without them. Read
// from package-lock.json, version 1 (nested `dependencies`, `requires`) or 2 and 3
// (`packages`), by name: what a name requires anywhere in the tree counts for it.
function lockedFromElsewhere() {
  let lock;
  try {
    lock = readJson('package-lock.json');
  } catch (e) {
    return;
  }
  const requires = {};
  const elsewhere = {};
  const note = (name, entry, needs) => {
    requires[name] = (requires[name] || []).concat(Object.keys(needs || {}));
    const spec = [entry.version, entry.resolved].filter(fromElsewhere)[0];
    if (spec) elsewhere[name] = spec;
  };
  const walk = (deps) => Object.keys(deps || {}).forEach((name) => {
    note(name, deps[name], deps[name].requires);
    walk(deps[name].dependencies);
  });
  walk(lock.dependencies);
  const packages = lock.packages || {};
  Object.keys(packages).forEach((key) => {
    const at = key.lastIndexOf('node_modules/');
    if (at < 0) return;
    const entry = packages[key];
    note(key.slice(at + 'node_modules/'.length), entry, Object.assign({}, entry.dependencies, entry.optionalDependencies));
  });
  if (Object.keys(elsewhere).length === 0) return;
  const root = readJson('package.json');
  const direct = [];
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) direct.push.apply(direct, Object.keys(root[field] || {}));
  let dropped = 0;
  for (const name of direct) {
    const seen = {};
    const queue = [name];
    let found = null;
    while (queue.length > 0 && !found) {
      const n = queue.shift();
      if (seen[n]) continue;
      seen[n] = true;
      if (elsewhere[n] && n !== name) found = n;
      else queue.push.apply(queue, requires[n] || []);
    }
    if (!found) continue;
    const where = drop(name);
    if (!where) continue;
    dropped += 1;
    report.not_prepared.push({ what: name, source: where, reason: 'its dependency ' + found + ' comes from ' + elsewhere[found] + ' (package-lock.json), which the sandbox cannot fetch' });
  }
  if (dropped > 0) report.resolved = true;
}

// pnpm's protocols, for npm: `catalog:` and `catalog:NAME` become the catalog's range (from
// pnpm-workspace.yaml), `workspace:…` the local package (the workspace's packages become npm
// workspaces of the root). A catalog entry that is not there is dropped by name.
function translate() {
  const catalogs = plan.catalogs || {};
  let changed = false;
  let linked = false;
  for (const f of manifests) {
    const pkg = readJson(f);
    for (const field of FIELDS) {
      const deps = pkg[field] || {};
      for (const name of Object.keys(deps)) {
        const value = deps[name];
        if (typeof value !== 'string') continue;
        if (value.startsWith('catalog:')) {
          const which = value.slice('catalog:'.length).trim() || 'default';
          const range = (catalogs[which] || {})[name];
          if (range) {
            pkg[field][name] = range;
          } else {
            delete pkg[field][name];
            report.not_prepared.push({ what: name, source: f + ' ' + field, reason: 'pnpm-workspace.yaml has no range for it in catalog ' + which });
          }
          changed = true;
        } else if (value.startsWith('workspace:')) {
          pkg[field][name] = '*';
          changed = true;
          linked = true;
        }
      }
    }
    writeJson(f, pkg);
  }
  // Workspaces only where a `workspace:` range asked for one: an npm project's nested
  // package.json files (axios' test fixtures, three of one name) are no packages of it.
  const members = manifests.filter((f) => f !== 'package.json').map((f) => path.dirname(f));
  if (linked && members.length > 0) {
    const root = readJson('package.json');
    if (!root.workspaces) {
      root.workspaces = members;
      writeJson('package.json', root);
      changed = true;
    }
  }
  return changed;
}

// npm: `npm ci` from the lock file; resolved here first when there is none (or it was made
// stale by what was dropped).
function installWithNpm() {
  const locked = fs.existsSync(path.join(work, 'package-lock.json')) || fs.existsSync(path.join(work, 'npm-shrinkwrap.json'));
  if (!locked || report.refused.length > 0 || report.resolved) {
    for (const f of ['package-lock.json', 'npm-shrinkwrap.json']) removeFile(path.join(work, f));
    if (locked) report.notes.push('the lock file was resolved again without the dependencies it could not install');
    else if (!report.resolved) report.notes.push('no package-lock.json: versions resolved ' + (plan.before ? 'as of ' + plan.before : 'now') + ', not pinned by the project');
    report.resolved = true;
  }
  let before = plan.before;
  let view = null;
  // npm 5 and older use no publish time at all (npm 5 takes `--before` and resolves
  // today's releases beside it without a word: bower's tmp ~0.0.23 of 2014 came as 0.0.33,
  // whose callback's third argument broke its tests): through the view whenever there is
  // a date. npm 6 and newer use the registry's times, through the view where those are a
  // mirror's copy days.
  const npmMajor = parseInt(run('npm', ['--version']).text, 10) || 0;
  if (before && report.resolved && (npmMajor < 6 || timesAreCopies(before))) view = datedView(before);
  for (let attempt = 0; attempt < 8; attempt++) {
    if (report.resolved) {
      // As of the base's date when the review gives one (npm 6 and newer: npm 5 has no
      // --before), the releases the project's code was written against.
      const args = ['install', '--package-lock-only'];
      // Through a dated view the date is the view's: it serves only what was out by then
      // (and the first release of a line with none, which npm's `--before` would refuse:
      // eslint-release `^0.10.0` in a tree of 2016 failed the whole tree back to today's).
      if (before && !(view && view.before === before)) args.push('--before=' + before);
      const call = throughView(args, view);
      const r = npm(call.args, call.env);
      // A registry whose publish times do not reach back to the date (a mirror stamps
      // what it copied with its own day) has no release "before" it (npm 6-10: ETARGET;
      // npm 11, when none of a package's releases is: ENOVERSIONS): resolved through the
      // dated view (the releases' own times); where that cannot run or finds none
      // either, resolved now; said so.
      if (r.code !== 0 && before && /Enjoy By date|ETARGET|notarget|ENOVERSIONS/.test(r.text)) {
        const why = (/No matching version found for \S+|No versions available for \S+/.exec(r.text) || [tail(r.text, 1)])[0];
        if (!view) {
          view = datedView(before);
          if (view) continue;
        }
        report.notes.push('versions could not be resolved as of ' + before + ' (' + why + ' before it' + (view ? ', by the releases\' own file times too' : ': the registry\'s publish times do not reach back to that date') + '): resolved now');
        // Now, still through a view where one ran: what it serves of off-registry
        // dependencies the tree needs either way.
        view = view ? datedView('-') : null;
        before = null;
        continue;
      }
      if (r.code === 0 && view) {
        report.notes.push.apply(report.notes, viewNotes(view));
        dated = view;
      }
      if (peersAsNpm6(r)) continue;
      if (r.code !== 0) {
        const name = missing(r.text);
        const where = name && drop(name);
        if (where) {
          notServed(name, where);
          continue;
        }
        // A package of the registry depends on one from off it (a GitHub tarball): the
        // tree resolves through the view, which serves that dependency as the
        // registry's release of its name.
        if (!view && offRegistry(r.text)) {
          view = datedView(before || '-');
          if (view) continue;
        }
        fail('npm could not resolve the dependencies: ' + tail(r.text));
      }
    }
    const r = npm(['ci']);
    if (r.code === 0) return;
    if (peersAsNpm6(r)) continue;
    const name = missing(r.text);
    const where = name && drop(name);
    if (where) {
      notServed(name, where);
      for (const f of ['package-lock.json', 'npm-shrinkwrap.json']) removeFile(path.join(work, f));
      report.resolved = true;
      continue;
    }
    fail('npm ci failed: ' + tail(r.text));
  }
  fail('npm could not install the dependencies after dropping ' + report.not_prepared.length + ' packages');
}

// npm's own semver (every npm bundles it), or null.
function npmSemver() {
  try {
    const cli = fs.realpathSync(run('sh', ['-c', 'command -v npm']).out.trim());
    return require(path.join(path.dirname(cli), '..', 'node_modules', 'semver'));
  } catch (e) {
    return null;
  }
}

// Every package.json the install placed (nested node_modules too), with its directory.
function installedManifests() {
  const found = [];
  const visit = (modules, depth) => {
    let names;
    try {
      names = fs.readdirSync(modules);
    } catch (e) {
      return;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const dirs = name.startsWith('@') ? fs.readdirSync(path.join(modules, name)).map((n) => path.join(name, n)) : [name];
      for (const d of dirs) {
        const dir = path.join(modules, d);
        try {
          found.push({ dir: dir, pkg: JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) });
        } catch (e) {
          continue;
        }
        if (depth < 12) visit(path.join(dir, 'node_modules'), depth + 1);
      }
    }
  };
  visit(path.join(work, 'node_modules'), 0);
  return found;
}

// Releases resolved now whose engines.node this Node does not meet (a 2014 project's open
// `"tough-cookie": ">=0.12.0"` resolves to a release of today that needs Node 16) give way to
// the newest release every dependent's range allows that runs here: pinned at the top of the
// project, where npm hoists it and each dependent finds it, and installed again. Resolving
// as of the base's date does this where the registry's publish times reach back; this is
// for where they do not (or npm has no --before). At most 3 rounds.
function releasesForThisNode() {
  const semver = npmSemver();
  if (!semver) return;
  for (let round = 0; round < 3; round++) {
    const installed = installedManifests();
    const ranges = {};
    const want = (deps) => Object.keys(deps || {}).forEach((n) => {
      const r = deps[n];
      if (typeof r === 'string' && semver.validRange(r)) (ranges[n] = ranges[n] || []).push(r);
    });
    for (const f of manifests) {
      const pkg = readJson(f);
      want(pkg.dependencies);
      want(pkg.devDependencies);
      want(pkg.optionalDependencies);
    }
    for (const i of installed) {
      want(i.pkg.dependencies);
      want(i.pkg.optionalDependencies);
    }
    const misfits = {};
    for (const i of installed) {
      const e = i.pkg.engines && i.pkg.engines.node;
      if (typeof e === 'string' && semver.validRange(e) && !semver.satisfies(process.version, e) && i.pkg.name) misfits[i.pkg.name] = i.pkg.version + ' (engines ' + e + ')';
    }
    const root = readJson('package.json');
    root.dependencies = root.dependencies || {};
    const pinned = [];
    for (const name of Object.keys(misfits).slice(0, 30)) {
      const asked = ranges[name] || ['*'];
      const r = run('npm', ['view', name + '@' + asked[0], 'version', 'engines', '--json', '--loglevel=error']);
      let list;
      try {
        list = JSON.parse(r.out);
      } catch (e) {
        continue;
      }
      list = (Array.isArray(list) ? list : [list]).filter((v) => v && typeof v.version === 'string'
        && asked.every((rg) => semver.satisfies(v.version, rg))
        && !(v.engines && typeof v.engines.node === 'string' && semver.validRange(v.engines.node) && !semver.satisfies(process.version, v.engines.node)));
      list.sort((a, b) => semver.rcompare(a.version, b.version));
      if (list.length === 0 || root.dependencies[name] === list[0].version) continue;
      root.dependencies[name] = list[0].version;
      pinned.push(name + ' ' + list[0].version + ' for ' + misfits[name]);
    }
    if (pinned.length === 0) return;
    // The install that worked, kept: a replacement npm cannot install (a local package of
    // the tree npm then looks for in the registry: ESLint's packages/eslint-config-eslint)
    // never costs the environment that was there.
    const lockPath = path.join(work, 'package-lock.json');
    const before = { pkg: fs.readFileSync(path.join(work, 'package.json')), lock: fs.existsSync(lockPath) ? fs.readFileSync(lockPath) : null };
    writeJson('package.json', root);
    removeFile(path.join(work, 'package-lock.json'));
    let r = npm(['install', '--package-lock-only']);
    if (r.code === 0) r = npm(['ci']);
    if (r.code !== 0) {
      fs.writeFileSync(path.join(work, 'package.json'), before.pkg);
      if (before.lock) fs.writeFileSync(lockPath, before.lock);
      const again = npm(before.lock ? ['ci'] : ['install']);
      if (again.code !== 0) fail('npm ci failed after replacing releases that do not run on Node ' + process.version + ', and again without the replacement: ' + tail(again.text));
      report.notes.push('releases that do not run on Node ' + process.version + ' (' + pinned.join('; ') + ') kept as resolved: npm could not install the replacements (' + (/npm (?:ERR!|error) (?:code|404)[^\n]*/.exec(r.text) || [tail(r.text, 1)])[0] + ')');
      return;
    }
    report.notes.push('releases that do not run on Node ' + process.version + ' replaced by the newest the ranges allow that do: ' + pinned.join('; '));
  }
}

function fail(message) {
  console.error(message);
  process.exit(3);
}

// The manager itself, from the registry (the operator's, through the egress), into /tmp:
// `spec` (`pnpm@9.15.0`), its version once it runs on this Node, or null with why not.
function installManager(spec) {
  spawnSync('rm', ['-rf', tools]);
  const args = ['install', '-g', '--prefix', tools, spec, '--no-audit', '--no-fund', '--loglevel=error'];
  if (plan.before && !/@\d+\./.test(spec)) args.push('--before=' + plan.before);
  const r = run('npm', args);
  if (r.code !== 0) return { version: null, why: tail(r.text, 3) };
  const v = run(bin(), ['--version'], managerEnv());
  return v.code === 0 ? { version: v.text.trim().split('\n').pop() } : { version: null, runs: false, why: tail(v.text, 3) };
}

function bin() {
  return choice.manager === 'pnpm' ? 'pnpm' : 'yarn';
}

function managerEnv() {
  if (choice.manager !== 'yarn_berry') return {};
  const env = {
    YARN_NODE_LINKER: 'node-modules', YARN_ENABLE_SCRIPTS: 'false', YARN_ENABLE_TELEMETRY: '0',
    YARN_ENABLE_GLOBAL_CACHE: 'false', YARN_CACHE_FOLDER: '/tmp/yarn-cache', YARN_IGNORE_PATH: '1',
    YARN_ENABLE_PROGRESS_BARS: 'false', YARN_ENABLE_COLORS: 'false',
  };
  // Berry's own default is registry.yarnpkg.com (the same packages, not an allowed host).
  env.YARN_NPM_REGISTRY_SERVER = (registry || 'https://registry.npmjs.org').replace(/\/$/, '');
  if (process.env.HTTPS_PROXY) {
    env.YARN_HTTPS_PROXY = process.env.HTTPS_PROXY;
    env.YARN_HTTP_PROXY = process.env.HTTPS_PROXY;
  }
  return env;
}

// The manager's install command, with the lock file's pins (`frozen`) or without.
function managerArgs(frozen) {
  if (choice.manager === 'pnpm') {
    const args = ['install', frozen ? '--frozen-lockfile' : '--no-frozen-lockfile', '--ignore-scripts',
      '--reporter=append-only', '--store-dir=/tmp/pnpm-store', '--config.package-import-method=copy',
      '--config.confirm-modules-purge=false', '--config.manage-package-manager-versions=false',
      '--config.package-manager-strict=false', '--config.engine-strict=false'];
    if (registry) args.push('--registry=' + registry);
    return args;
  }
  if (choice.manager === 'yarn') {
    const args = ['install', '--ignore-scripts', '--non-interactive', '--no-progress', '--ignore-engines',
      '--production=false', '--cache-folder', '/tmp/yarn-cache'];
    if (frozen) args.push('--frozen-lockfile');
    if (registry) args.push('--registry', registry);
    return args;
  }
  return ['install', frozen ? '--immutable' : '--no-immutable'];
}

// yarn 1 fetches what yarn.lock's `resolved` URLs name: those of npm's own registry (under
// either of its names) are fetched from the operator's registry, the same packages checked
// by the same integrity.
function yarnLockToRegistry() {
  const lock = path.join(work, 'yarn.lock');
  if (!fs.existsSync(lock)) return;
  const to = (registry || 'https://registry.npmjs.org/').replace(/\/?$/, '/');
  const text = fs.readFileSync(lock, 'utf8');
  const moved = text.replace(/https?:\/\/registry\.(?:yarnpkg\.com|npmjs\.org)\//g, to);
  if (moved !== text) {
    fs.writeFileSync(lock, moved);
    report.notes.push('yarn.lock: packages of registry.yarnpkg.com and registry.npmjs.org fetched from ' + to + ' (same integrity)');
  }
}

function installWithManager() {
  const lock = path.join(work, choice.manager === 'pnpm' ? 'pnpm-lock.yaml' : 'yarn.lock');
  let frozen = fs.existsSync(lock) && report.refused.length === 0;
  if (!fs.existsSync(lock)) {
    report.resolved = true;
    report.notes.push('no ' + path.basename(lock) + ': versions resolved now, not pinned by the project');
  } else if (!frozen) {
    report.resolved = true;
    report.notes.push(path.basename(lock) + ' was resolved again without the refused dependencies');
  }
  if (choice.manager === 'yarn') yarnLockToRegistry();
  const name = choice.manager === 'pnpm' ? 'pnpm' : 'yarn';
  for (let attempt = 0; attempt < 8; attempt++) {
    const r = run(name, managerArgs(frozen), managerEnv());
    if (r.code === 0) return;
    const gone = missing(r.text);
    const where = gone && drop(gone);
    if (where) {
      notServed(gone, where);
      frozen = false;
      report.resolved = true;
      continue;
    }
    if (frozen) {
      frozen = false;
      report.resolved = true;
      report.notes.push(name + ' install with the lock file frozen failed (' + tail(r.text, 2).replace(/\n/g, ' ') + '): installed without --' + (choice.manager === 'yarn_berry' ? 'immutable' : 'frozen-lockfile') + ', the lock file\'s pins kept where they still hold');
      continue;
    }
    fail(name + ' install failed: ' + failure(r.text));
  }
  fail(name + ' could not install the dependencies after dropping ' + report.not_prepared.length + ' packages');
}

// Every node_modules the install made (the root's and the workspace packages'), relative.
function modulesDirs() {
  const found = [];
  const walk = (rel, depth) => {
    let entries;
    try {
      entries = entriesOf(path.join(work, rel));
    } catch (e) {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const sub = rel ? rel + '/' + e.name : e.name;
      if (e.name === 'node_modules') found.push(sub);
      else if (depth < 12 && !e.name.startsWith('.')) walk(sub, depth + 1);
    }
  };
  walk('', 0);
  return found;
}

// A link to a workspace package's folder (made by every manager for `workspace:` and npm
// workspaces) points at /deps/PKG, which holds its manifest alone: pointed at the tree.
function linkToTree(link) {
  let target;
  try {
    target = path.resolve(path.dirname(link), fs.readlinkSync(link));
  } catch (e) {
    return;
  }
  const rel = path.relative(work, target);
  if (rel.startsWith('..') || path.isAbsolute(rel) || rel.split(path.sep).indexOf('node_modules') >= 0) return;
  fs.unlinkSync(link);
  fs.symlinkSync(path.join('/work', rel), link);
}

function linksToTree(dir) {
  const visit = (d, depth) => {
    let entries;
    try {
      entries = entriesOf(d);
    } catch (e) {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isSymbolicLink()) linkToTree(p);
      else if (e.isDirectory() && depth === 0 && e.name.startsWith('@')) visit(p, 1);
      else if (e.isDirectory() && depth === 0 && e.name === '.pnpm') {
        for (const inner of fs.readdirSync(p)) visit(path.join(p, inner, 'node_modules'), 0);
      }
    }
  };
  visit(path.join(work, dir), 0);
}

// The registry's packages whose install builds what they need at run time (hexo-util's
// postinstall writes the highlight_alias.json its code requires; a native addon's
// binding.gyp is built by `node-gyp rebuild`, npm's default install), by name: real
// folders only, nested ones included (npm 2's trees). A link is a workspace package, the
// tree's own code, and is never looked into; nor is the root, no dependency of itself.
// (pnpm keeps every package under node_modules/.pnpm, behind links: not looked into yet.)
// Whether a package's `os` and `cpu` fields (npm's: a list, `!name` excluding) allow this
// machine.
function forThisPlatform(pkg) {
  const allows = (list, here) => {
    if (!Array.isArray(list) || list.length === 0) return true;
    if (list.indexOf('!' + here) >= 0) return false;
    const positive = list.filter((x) => typeof x === 'string' && x.charAt(0) !== '!');
    return positive.length === 0 || positive.indexOf(here) >= 0;
  };
  return allows(pkg.os, process.platform) && allows(pkg.cpu, process.arch);
}

function withInstallScripts(dirs) {
  const names = [];
  const visit = (modules, depth) => {
    let entries;
    try {
      entries = entriesOf(modules);
    } catch (e) {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory() || e.name.startsWith('.')) continue;
      const dir = path.join(modules, e.name);
      if (e.name.startsWith('@')) {
        visit(dir, depth);
        continue;
      }
      let pkg;
      try {
        pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
      } catch (err) {
        continue;
      }
      const scripts = pkg.scripts || {};
      const builds = scripts.preinstall || scripts.install || scripts.postinstall ||
        fs.existsSync(path.join(dir, 'binding.gyp'));
      // A package for another platform (fsevents: `"os": ["darwin"]`), which an older npm
      // installs anyway: its script is never run (npm would not on Linux), never named.
      if (builds && pkg.name && names.indexOf(pkg.name) < 0 && forThisPlatform(pkg)) names.push(pkg.name);
      if (depth < 6) visit(path.join(dir, 'node_modules'), depth + 1);
    }
  };
  for (const d of dirs) visit(path.join(work, d), 0);
  return names;
}

// Why a command failed, in one line: its first error line (a compiler's `error:`, pnpm's
// ERR_PNPM_ code, npm's ERR!; node-gyp's own last words are only "not ok") with its output's
// last lines, stack frames left out (pnpm's last lines are `at async …`).
function failure(text) {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !/^at /.test(l));
  const first = lines.filter((l) => /ERR_PNPM_|^ERROR|ERR!|(^|: )(fatal )?error: |^Error: |YN0001/.test(l))[0];
  const end = lines.slice(-2).join(' ');
  return first && end.indexOf(first) < 0 ? first + ' … ' + end : lines.slice(-3).join(' ');
}

// The install left every script off; the registry's packages' own install scripts (never
// the tree's: see withInstallScripts) run now, one package at a time with a share of the
// time, and with the proxy's settings removed: nothing the tree wrote runs, and a script
// that fetches (node-gyp's headers, a prebuilt binary from GitHub) fails instead. A
// package whose script fails is named, and the rest of the environment stands.
function installScripts(dirs) {
  const names = withInstallScripts(dirs);
  if (names.length === 0) return;
  const offline = {
    HTTPS_PROXY: '', HTTP_PROXY: '', https_proxy: '', http_proxy: '', npm_config_proxy: '',
    npm_config_https_proxy: '', npm_config_ignore_scripts: 'false', npm_config_offline: 'true',
  };
  const ran = [];
  for (const name of names) {
    const r = run('npm', ['rebuild', name], offline, Math.max(30, Math.min(300, (plan.call_timeout || 900) / 4)));
    if (r.code === 0) {
      ran.push(name);
    } else {
      report.not_prepared.push({
        what: name, source: 'its install script (run with no network)',
        reason: (r.code === 124 ? 'out of its time: ' : 'it failed: ') + failure(r.text),
      });
    }
  }
  if (ran.length > 0) report.notes.push('install scripts of the registry\'s packages run with no network: ' + ran.join(', '));
}

// Playwright's own browsers are downloaded from a CDN (no registry serves them), so a
// suite that launches one (vitest's browser mode, @playwright/test) found none: "Executable
// doesn't exist at …/ms-playwright/chromium_headless_shell-1223/…". Where the image has a
// Chromium (the images of Node 18 and later), each Chromium build the project's
// playwright-core names (its browsers.json: name and revision) is the image's, linked at
// the paths Playwright looks for under /deps/ms-playwright (PLAYWRIGHT_BROWSERS_PATH in
// the run). Firefox and WebKit are not had.
function playwrightChromium(dirs) {
  const chromium = '/usr/bin/chromium';
  if (!fs.existsSync(chromium)) return;
  const manifests = [];
  for (const d of dirs) {
    const modules = path.join(work, d);
    manifests.push(path.join(modules, 'playwright-core', 'browsers.json'));
    let pnpm = [];
    try {
      pnpm = fs.readdirSync(path.join(modules, '.pnpm'));
    } catch (e) {
      // not pnpm's layout
    }
    for (const entry of pnpm) {
      if (entry.indexOf('playwright-core@') === 0) {
        manifests.push(path.join(modules, '.pnpm', entry, 'node_modules', 'playwright-core', 'browsers.json'));
      }
    }
  }
  const linked = [];
  for (const manifest of manifests) {
    let browsers;
    try {
      browsers = JSON.parse(fs.readFileSync(manifest, 'utf8')).browsers || [];
    } catch (e) {
      continue;
    }
    for (const b of browsers) {
      if (typeof b.name !== 'string' || b.name.indexOf('chromium') !== 0 || !/^[0-9]+$/.test(String(b.revision))) continue;
      const dir = path.join(work, 'ms-playwright', b.name.replace(/-/g, '_') + '-' + b.revision);
      if (linked.indexOf(path.basename(dir)) >= 0) continue;
      // Where each Playwright release has looked for its Chromium and headless shell.
      for (const rel of ['chrome-linux/chrome', 'chrome-linux64/chrome', 'chrome-linux/headless_shell',
        'chrome-headless-shell-linux64/chrome-headless-shell', 'chrome-headless-shell-linux/chrome-headless-shell']) {
        makeDirs(path.dirname(path.join(dir, rel)));
        fs.symlinkSync(chromium, path.join(dir, rel));
      }
      for (const marker of ['INSTALLATION_COMPLETE', 'DEPENDENCIES_VALIDATED']) fs.writeFileSync(path.join(dir, marker), '');
      linked.push(path.basename(dir));
    }
  }
  if (linked.length > 0) report.notes.push('Playwright\'s Chromium builds are the image\'s Chromium: ' + linked.join(', '));
}

// A `file:` dependency on a folder of the tree: pnpm copies the folder into its store (here
// only the folder's manifest was there to copy), npm links it. Where pnpm put a copy, the
// run makes one of the tree's folder in its own writable node_modules
// (/work/node_modules/.proven-file/KEY/node_modules/NAME, beside links to the copy's own
// dependencies as pnpm's store has them), and pnpm's copy here becomes a link to it: every
// package that depends on the folder (an importer, another copied folder: vite's license
// fixtures nest them) reaches the run's copy, whose real path is inside node_modules, as on
// the project's CI (a bundler takes a path outside node_modules for the project's own
// source). Listed in /deps/.proven-file-copies (KEY, the folder, NAME, the store folder),
// which the run reads. Elsewhere the dependent's link is to the tree's folder.
function insideWork(p) {
  const rel = path.relative(work, p);
  return rel !== '' && rel.indexOf('..') !== 0 && !path.isAbsolute(rel);
}

function fileFoldersToTree() {
  // The `file:` folders a manifest at `dir` names, each with its place in `modules` (the
  // dependent's node_modules: an importer's, or the store folder of a copied folder).
  function named(manifest, dir, modules) {
    let pkg;
    try {
      pkg = JSON.parse(fs.readFileSync(manifest, 'utf8'));
    } catch (e) {
      return [];
    }
    const out = [];
    for (const field of FIELDS) {
      const deps = pkg[field] || {};
      for (const name of Object.keys(deps)) {
        const spec = deps[name];
        if (typeof spec !== 'string' || spec.indexOf('file:') !== 0 || /\.(tgz|tar\.gz|tar)$/.test(spec)) continue;
        const rel = path.relative(work, path.resolve(dir, spec.slice(5)));
        if (!rel || rel.indexOf('..') === 0 || path.isAbsolute(rel)) continue;
        out.push({ at: path.join(modules, name), rel: rel, name: name, dir: dir });
      }
    }
    return out;
  }
  const todo = [];
  for (const m of manifests) {
    const dir = path.dirname(path.join(work, m));
    for (const f of named(path.join(work, m), dir, path.join(dir, 'node_modules'))) todo.push(f);
  }
  // The folder the dependent lives in (`file:..`), or a name or path the run's shell could
  // not carry: linked to the tree.
  const plain = /^[\w@.+\/-]+$/;
  const copied = {};
  const copies = [];
  while (todo.length > 0 && copies.length < 500) {
    const f = todo.shift();
    // Only places inside the layer are ever replaced (a dependency's name is the manifest's
    // text: `../..` in it must not reach out of /deps).
    if (!insideWork(f.at)) continue;
    let there;
    try {
      there = fs.lstatSync(f.at);
    } catch (e) {
      continue;
    }
    // pnpm's copy: NAME inside its store folder's node_modules (.pnpm/X/node_modules), one
    // link away (the link itself is never followed further: it may already lead to the run).
    const real = there.isSymbolicLink() ? path.resolve(path.dirname(f.at), fs.readlinkSync(f.at)) : null;
    if (real !== null && (copied[real] || !insideWork(real))) continue;
    const pnpm = real !== null && path.relative(work, real).split(path.sep).indexOf('.pnpm') >= 0;
    const store = pnpm ? path.relative(work, path.dirname(f.name.indexOf('@') === 0 ? path.dirname(real) : real)) : null;
    const inside = path.relative(path.join(work, f.rel), f.dir).indexOf('..') !== 0;
    if (!store || inside || !plain.test(f.rel) || !plain.test(f.name) || !plain.test(store)) {
      if (there.isDirectory()) spawnSync('rm', ['-rf', f.at]);
      else fs.unlinkSync(f.at);
      fs.symlinkSync(path.join('/work', f.rel), f.at);
      continue;
    }
    const key = copies.length + '-' + f.rel.replace(/[^A-Za-z0-9._-]/g, '_');
    copied[real] = key;
    copies.push([key, f.rel, f.name, store].join('\t'));
    // The folders it names in turn (vite's license fixtures nest them), beside it in the store.
    const more = named(path.join(real, 'package.json'), path.join(work, f.rel), path.join(work, store));
    spawnSync('rm', ['-rf', real]);
    fs.symlinkSync(path.join('/work/node_modules/.proven-file', key, 'node_modules', f.name), real);
    for (const g of more) todo.push(g);
  }
  if (copies.length > 0) {
    fs.writeFileSync(path.join(work, '.proven-file-copies'), copies.join('\n') + '\n');
    report.notes.push('file: folders pnpm copies are copied from the tree into the run\'s node_modules: ' + copies.map((c) => c.split('\t')[1]).join(', '));
  }
}

// What was installed at the top of the root's node_modules, by name (scoped ones as
// @scope/name): with what was dropped, the record says how much of the environment there is.
// The packages the project's scripts install at test time (`"pretest":
// "optional-dev-dependency hiredis"`), where the run has no network: installed here beside
// the rest, as of the same date, without saving them to the manifest. One call for all (a
// later call of npm 7 and newer would prune what an earlier one added, as extraneous); a
// package the registry lacks is named and the call made again without it. Their install
// scripts run with the others' after.
// A test install bound to an installed package as its peer (a tap plugin, whose
// `@tapjs/core` peer is one exact release): the newest release in its range whose peer range
// the installed package meets, as tap's own `selectVersion` picks; null (said) for none.
function peerPinned(w) {
  let peer;
  try {
    peer = readJson(path.join('node_modules', w.peer_of, 'package.json')).version;
  } catch (e) {
    report.not_prepared.push({ what: w.name, source: w.source, reason: w.peer_of + ', its peer, is not installed' });
    return null;
  }
  const semver = npmSemver();
  const r = run('npm', ['view', w.name + '@' + w.range, 'version', 'peerDependencies', '--json'], null, 120);
  let found = [];
  try {
    found = [].concat(JSON.parse(r.out));
  } catch (e) {
    found = [];
  }
  let best = null;
  for (const f of found) {
    const wants = f && f.peerDependencies && f.peerDependencies[w.peer_of];
    if (!f || !semver || typeof wants !== 'string' || !semver.satisfies(peer, wants)) continue;
    if (best === null || semver.gt(f.version, best)) best = f.version;
  }
  if (best === null) {
    report.not_prepared.push({
      what: w.name, source: w.source,
      reason: r.code === 0 ? 'no release the registry serves has ' + w.peer_of + ' ' + peer + ' as its peer' : 'the registry did not list its releases: ' + failure(r.text),
    });
  }
  return best;
}

function testInstalls() {
  let wanted = [];
  for (const w of plan.test_installs || []) {
    if (!w.peer_of || choice.manager !== 'npm') {
      wanted.push(w);
      continue;
    }
    const version = peerPinned(w);
    if (version !== null) wanted.push(Object.assign({}, w, { range: version }));
  }
  if (wanted.length > 0 && choice.manager !== 'npm') {
    for (const w of wanted) report.not_prepared.push({ what: w.name, source: w.source, reason: 'a test-time install in a ' + report.package_manager.name + ' project is not prepared' });
    return;
  }
  let before = plan.before;
  while (wanted.length > 0) {
    const args = ['install', '--no-save', '--no-package-lock'].concat(wanted.map((w) => w.name + '@' + w.range));
    const call = throughView(before ? args.concat(['--before=' + before]) : args, before && dated && dated.before === before ? dated : null);
    const r = npm(call.args, call.env);
    if (r.code === 0) {
      for (const w of wanted) report.notes.push('installed for the tests, which install it at test time with no network here: ' + w.name + '@' + w.range + ' (' + w.source + ')');
      return;
    }
    // No release that old (a registry's publish times): the newest, said so.
    if (before && /Enjoy By date|ETARGET|notarget|ENOVERSIONS/.test(r.text)) {
      report.notes.push('test-time installs resolved now (no release before ' + before + ')');
      before = null;
      continue;
    }
    const name = missing(r.text);
    const gone = wanted.filter((w) => w.name === name);
    if (gone.length === 0) {
      for (const w of wanted) report.not_prepared.push({ what: w.name, source: w.source, reason: 'a test-time install that failed here too: ' + failure(r.text) });
      return;
    }
    notServed(name, gone[0].source);
    wanted = wanted.filter((w) => w.name !== name);
  }
}

// tap 18 and later builds its Test class for the project's plugin set (`plugin` in .taprc
// or package.json's `tap`) into its own package the first time it runs with that set, which
// in a run is a read-only layer: built here, by tap's own builder, with the set tap's config
// makes (its defaults, less those left out with `!`, and the others). A plugin that is a
// path of the tree is not built (the tree is not here): named.
function tapBuild() {
  const configured = plan.tap_plugins || [];
  if (configured.length === 0) return;
  const where = findPackage('@tapjs/test', 'tap');
  if (!where) return;
  const paths = configured.filter((p) => /^[.\/~]/.test(p.replace(/^!/, '')));
  if (paths.length > 0) {
    report.not_prepared.push({ what: 'tap\'s Test class', source: 'tap\'s plugin setting', reason: 'the plugins are built from the tree, which the preparation has not: ' + paths.join(', ') });
    return;
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(where, 'package.json'), 'utf8'));
  const builder = pkg.bin && (typeof pkg.bin === 'string' ? pkg.bin : pkg.bin['generate-tap-test-class']);
  // The defaults, read from the installed @tapjs/test itself (an ES module), found from
  // the folder that holds it; @tapjs/core first, as tap's own code loads them (the two
  // import each other).
  const defaults = spawnSync('node', ['--input-type=module', '-e', 'import "@tapjs/core"; import { defaultPlugins } from "@tapjs/test"; console.log(JSON.stringify(defaultPlugins))'], { cwd: path.dirname(path.dirname(path.dirname(where))), encoding: 'utf8' });
  let list = null;
  try {
    list = JSON.parse(defaults.stdout);
  } catch (e) {
    list = null;
  }
  if (!builder || !Array.isArray(list)) {
    report.not_prepared.push({ what: 'tap\'s Test class', source: 'tap\'s plugin setting', reason: '@tapjs/test ' + pkg.version + ' gave no builder or defaults: ' + failure((defaults.stderr || '') + (defaults.stdout || '')) });
    return;
  }
  for (const p of configured) {
    if (p.startsWith('!')) list = list.filter((d) => d !== p.slice(1));
    else if (list.indexOf(p) < 0) list.push(p);
  }
  const r = run('node', [path.join(where, builder)].concat(list), null, 600);
  if (r.code === 0) {
    report.notes.push('tap\'s Test class built for the project\'s plugins (' + configured.join(', ') + '), as tap builds it when it starts');
  } else {
    report.not_prepared.push({ what: 'tap\'s Test class', source: 'tap\'s plugin setting', reason: 'tap build failed: ' + failure(r.text) });
  }
}

// The folder of package `name` as `from` (a package at the top of node_modules) finds it:
// beside it, or in its own node_modules (real paths, so pnpm's store too); null for none.
function findPackage(name, from) {
  let dir;
  try {
    dir = fs.realpathSync(path.join(work, 'node_modules', from));
  } catch (e) {
    return null;
  }
  for (let d = dir; d !== path.dirname(d); d = path.dirname(d)) {
    const here = path.join(d, 'node_modules', name);
    if (fs.existsSync(path.join(here, 'package.json'))) return fs.realpathSync(here);
  }
  return null;
}

function installed() {
  const modules = path.join(work, 'node_modules');
  const names = [];
  if (!fs.existsSync(modules)) return names;
  for (const name of fs.readdirSync(modules)) {
    if (name.startsWith('.')) continue;
    if (name.startsWith('@')) {
      for (const inner of fs.readdirSync(path.join(modules, name))) names.push(name + '/' + inner);
    } else {
      names.push(name);
    }
  }
  return names;
}

// grunt before 1.0 has no command of its own: its CI installed grunt-cli globally (`npm
// install -g grunt-cli` in .travis.yml), which finds the project's grunt and calls its
// `cli()`. Where the project's grunt has no `bin`, the layer's node_modules/.bin gets a
// `grunt` that does what grunt-cli does, so `grunt test` in a script or a CI step runs.
function gruntCommand() {
  const command = path.join(work, 'node_modules', '.bin', 'grunt');
  let grunt;
  try {
    grunt = readJson('node_modules/grunt/package.json');
  } catch (e) {
    return;
  }
  if (grunt.bin || fs.existsSync(command)) return;
  makeDirs(path.dirname(command));
  fs.writeFileSync(command, '#!/bin/sh\n# grunt-cli\'s part: the project\'s own grunt, called through its cli()\n' +
    'exec node -e "process.argv.splice(1, 0, \'grunt\'); require(\'grunt\').cli()" "$@"\n');
  fs.chmodSync(command, 0o755);
  report.notes.push('grunt ' + grunt.version + ' has no command of its own (its CI installed grunt-cli): a `grunt` that calls its cli() is on the run\'s PATH');
}

for (const f of plan.files) {
  const to = path.join(work, f);
  makeDirs(path.dirname(to));
  fs.writeFileSync(to, fs.readFileSync(path.join('/src', f)));
}
// Dependencies Proven refused (git, URLs, files): dropped before anything is fetched.
for (const r of report.refused) drop(r.what);
if (choice.manager === 'npm') {
  report.package_manager.version = run('npm', ['--version']).text.trim();
  if (translate()) {
    report.resolved = true;
    report.notes.push('pnpm\'s catalog: and workspace: ranges translated for npm (the catalog\'s range; the local package as an npm workspace)');
  }
  lockedFromElsewhere();
  installWithNpm();
  if (report.resolved) releasesForThisNode();
} else {
  let got = installManager(choice.install);
  // Installed but not running on this Node (pnpm 11 needs Node 22): the major of the lock
  // file's format, which reads the same pins. (A registry that refuses the manager: npm.)
  if (got.runs === false && choice.fallback) {
    const why = (got.why || '').replace(/\n/g, ' ');
    got = installManager(choice.fallback);
    if (got.version) {
      report.package_manager.because += '; ' + choice.install + ' does not run on Node ' + process.version + ' (' + why + '): ' + choice.fallback + ', the major of its lock file';
    }
  }
  if (got.version) {
    report.package_manager.version = got.version;
    installWithManager();
  } else {
    report.package_manager = { name: 'npm', version: run('npm', ['--version']).text.trim(), because: choice.because + '; ' + choice.install + ' could not be installed (' + (got.why || '').replace(/\n/g, ' ') + '): npm instead' };
    for (const f of ['pnpm-lock.yaml', 'yarn.lock']) removeFile(path.join(work, f));
    report.resolved = true;
    report.notes.push(choice.install + ' could not be installed: npm prepared the project, versions resolved now' + (translate() ? ' (pnpm\'s catalog: and workspace: ranges translated)' : ''));
    installWithNpm();
  }
}
testInstalls();
tapBuild();
gruntCommand();
if (choice.manager !== 'yarn_berry') installScripts(modulesDirs());
playwrightChromium(modulesDirs());
const dirs = modulesDirs();
for (const d of dirs) linksToTree(d);
fileFoldersToTree();
if (dirs.indexOf('node_modules') < 0) fs.mkdirSync(path.join(work, 'node_modules'));
report.installed = installed();
// The project's scripts call its manager (`pnpm run build`, `yarn test:unit`), which the
// run's image has not: the one installed here is kept in the layer (/deps/.proven-pm, on
// the run's PATH by proven-entry), never switching versions there (no network).
if (report.package_manager.name !== 'npm' && fs.existsSync(path.join(tools, 'bin'))) {
  const kept = spawnSync('cp', ['-a', tools, path.join(work, '.proven-pm')]);
  if (kept.status === 0) report.notes.push(report.package_manager.name + ' ' + report.package_manager.version + ' is on the run\'s PATH for the project\'s scripts');
}
report.workspace_modules = dirs.filter((d) => d !== 'node_modules').map((d) => path.dirname(d));
// The manifests were copied for the install only: the run reads the tree's own.
for (const f of plan.files) removeFile(path.join(work, f));
fs.writeFileSync(path.join(work, 'report.json'), JSON.stringify(report, null, 1));
