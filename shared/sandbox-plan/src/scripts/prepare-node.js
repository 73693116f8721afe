// Proven: prepares a Node project's test environment inside a preparation container.
//
// Runs as the sandbox user with no secrets and no host configuration; the only way out is
// the runner's egress proxy (the operator's registries). The project's manifests are
// copied into /deps/work; `npm ci --ignore-scripts` (install scripts never run) fills
// /deps/work/node_modules, which moves to /deps/node_modules (linked into each run's tree).
// A package the registry does not serve (E404) is dropped, named, and the rest installed:
// one missing dev tool never blocks the tests. Without a lock file, npm resolves one here,
// and the record says the versions were resolved, not pinned by the project.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const plan = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const out = '/deps';
const work = '/deps/work';
const report = { node: process.version, resolved: false, not_prepared: [], refused: plan.refused || [], notes: [] };

function npm(args) {
  const r = spawnSync('npm', args.concat(['--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error']), {
    cwd: work, encoding: 'utf8', timeout: (plan.call_timeout || 900) * 1000,
    env: Object.assign({}, process.env, { npm_config_cache: '/tmp/npm-cache', npm_config_update_notifier: 'false' }),
  });
  return { code: r.status === null ? 124 : r.status, text: (r.stdout || '') + (r.stderr || '') };
}

function tail(text, n) {
  return text.trim().split('\n').filter((l) => l.trim()).slice(-(n || 6)).join('\n');
}

// The package a 404 names: `404 Not Found - GET https://registry.npmjs.org/@scope%2fname`
function missing(text) {
  const m = /404[^\n]*GET \S+\/((?:@[^\s/]+(?:\/|%2[fF]))?[^\s/@]+)(?:\s|$|\/-\/)/.exec(text)
    || /'((?:@[^@'\s]+\/)?[^@'\s]+)@[^']*' is not in (?:this|the npm) registry/.exec(text);
  return m ? decodeURIComponent(m[1]) : null;
}

function drop(name) {
  const manifest = path.join(work, 'package.json');
  const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  let found = false;
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
    if (pkg[field] && Object.prototype.hasOwnProperty.call(pkg[field], name)) {
      delete pkg[field][name];
      found = true;
    }
  }
  fs.writeFileSync(manifest, JSON.stringify(pkg, null, 2));
  return found;
}

fs.mkdirSync(work, { recursive: true });
for (const f of plan.files) {
  const to = path.join(work, f);
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(path.join('/src', f), to);
}
// Dependencies Proven refused (git, URLs, files): dropped before anything is fetched.
for (const r of report.refused) drop(r.what);
const locked = fs.existsSync(path.join(work, 'package-lock.json')) || fs.existsSync(path.join(work, 'npm-shrinkwrap.json'));
if (!locked || report.refused.length > 0) {
  for (const f of ['package-lock.json', 'npm-shrinkwrap.json']) fs.rmSync(path.join(work, f), { force: true });
  report.resolved = true;
  report.notes.push(locked ? 'the lock file was resolved again without the refused dependencies'
    : 'no package-lock.json: versions resolved now, not pinned by the project');
}
let done = false;
for (let attempt = 0; attempt < 8 && !done; attempt++) {
  if (report.resolved) {
    const r = npm(['install', '--package-lock-only']);
    if (r.code !== 0) {
      const name = missing(r.text);
      if (name && drop(name)) {
        report.not_prepared.push({ what: name, source: 'package.json', reason: 'the registry does not serve it (E404)' });
        continue;
      }
      console.error('npm could not resolve the dependencies: ' + tail(r.text));
      process.exit(3);
    }
  }
  const r = npm(['ci']);
  if (r.code === 0) {
    done = true;
    break;
  }
  const name = missing(r.text);
  if (name && drop(name)) {
    report.not_prepared.push({ what: name, source: 'package.json', reason: 'the registry does not serve it (E404)' });
    for (const f of ['package-lock.json', 'npm-shrinkwrap.json']) fs.rmSync(path.join(work, f), { force: true });
    report.resolved = true;
    continue;
  }
  console.error('npm ci failed: ' + tail(r.text));
  process.exit(3);
}
if (!done) {
  console.error('npm could not install the dependencies after dropping ' + report.not_prepared.length + ' packages');
  process.exit(3);
}
const modules = path.join(work, 'node_modules');
// What was installed, by name (top-level packages, scoped ones as @scope/name): with what
// was dropped, the record says how much of the project's environment there is.
report.installed = [];
if (fs.existsSync(modules)) {
  for (const name of fs.readdirSync(modules)) {
    if (name.startsWith('.')) continue;
    if (name.startsWith('@')) {
      for (const inner of fs.readdirSync(path.join(modules, name))) report.installed.push(name + '/' + inner);
    } else {
      report.installed.push(name);
    }
  }
}
fs.renameSync(fs.existsSync(modules) ? modules : fs.mkdirSync(modules) || modules, path.join(out, 'node_modules'));
fs.writeFileSync(path.join(out, 'report.json'), JSON.stringify(report, null, 1));
