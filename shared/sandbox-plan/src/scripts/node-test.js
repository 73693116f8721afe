// Proven: `node --test` for a Node that has none (before 18): Proven's own tests are written
// for node:test (`require('node:test')`, `test`, `describe`/`it`, hooks, `t.test`), and a
// project of 2016 runs on the Node of its era. The sandbox images of such a Node start this
// script for `node --test …` (their `node` is a wrapper that sends it here; every other
// command goes to the real node). It takes node's own options (`--test-name-pattern`,
// `--test-reporter`, which is TAP either way), runs the files named (or, with none, the
// ones node's runner would find), one after the other in this process, and prints what
// node's TAP reporter prints: a test point per test, nested ones indented, and the closing
// `# tests`, `# pass`, `# fail` summary that Proven's tally reads. Exit 1 when a test failed.
// Written for Node 4 and newer (no async/await, destructuring, spread or default params).
'use strict';
const fs = require('fs');
const path = require('path');
const Module = require('module');

function out(text) {
  fs.writeSync(1, text + '\n');
}

// --- what node:test gives a test file ------------------------------------------------------
function makeNode(kind, name, fn, options, parent) {
  return {
    kind: kind, name: String(name), fn: fn, parent: parent,
    skip: !!(options && options.skip), todo: !!(options && options.todo),
    children: [], hooks: { before: [], after: [], beforeEach: [], afterEach: [] },
  };
}
const root = makeNode('suite', '', null, null, null);
let current = root;

function args3(name, options, fn) {
  if (typeof name === 'function') return { name: name.name || '<anonymous>', options: {}, fn: name };
  if (typeof options === 'function') return { name: name, options: {}, fn: options };
  return { name: name === undefined ? '<anonymous>' : name, options: options || {}, fn: fn };
}

function declare(kind, extra) {
  return function (name, options, fn) {
    const a = args3(name, options, fn);
    const node = makeNode(kind, a.name, a.fn, Object.assign({}, a.options, extra || {}), current);
    current.children.push(node);
    if (kind === 'suite' && typeof a.fn === 'function') {
      const saved = current;
      current = node;
      try {
        a.fn.call(node);
      } finally {
        current = saved;
      }
    }
    return Promise.resolve();
  };
}

function hook(which) {
  return function (fn) {
    current.hooks[which].push(fn);
  };
}

const test = declare('test');
test.skip = declare('test', { skip: true });
test.todo = declare('test', { todo: true });
test.only = declare('test');
const describe = declare('suite');
describe.skip = declare('suite', { skip: true });
describe.todo = declare('suite', { todo: true });
describe.only = declare('suite');
test.test = test;
test.it = test;
test.describe = describe;
test.suite = describe;
test.before = hook('before');
test.after = hook('after');
test.beforeEach = hook('beforeEach');
test.afterEach = hook('afterEach');
test.mock = { fn: function (impl) { return impl || function () {}; } };
module.exports = test;

// `node:X` is X for require before Node 16; `node:test` is this file, and `assert/strict`
// (Node 15) is assert's strict mode.
const resolve = Module._resolveFilename;
let strictAssert = null;
Module._resolveFilename = function (request, parent, isMain, options) {
  if (request === 'node:test') return __filename;
  if (typeof request === 'string' && request.indexOf('node:') === 0) request = request.slice(5);
  if (request === 'assert/strict') {
    try {
      return resolve.call(this, request, parent, isMain, options);
    } catch (e) {
      if (!strictAssert) {
        strictAssert = '/tmp/proven-assert-strict.js';
        fs.writeFileSync(strictAssert, "module.exports = require('assert').strict || require('assert');\n");
      }
      return strictAssert;
    }
  }
  return resolve.call(this, request, parent, isMain, options);
};

// Loaded by another runner (mocha loading every file of test/, Proven's among them, finds
// `node:test` through NODE_PATH): the functions only, nothing runs.
if (require.main === module) main();

function main() {
  // A file that does not parse: node's own crash names it (`FILE:LINE` above the
  // SyntaxError); caught here, the error alone would not, so the file is kept on the error.
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    try {
      return compile.apply(this, arguments);
    } catch (e) {
      if (e instanceof SyntaxError && !e.provenFile) e.provenFile = filename;
      throw e;
    }
  };

  // --- which tests run -----------------------------------------------------------------------
  const patterns = [];
  const files = [];
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.indexOf('--test-name-pattern=') === 0) patterns.push(a.slice('--test-name-pattern='.length));
    else if (a === '--test-name-pattern') patterns.push(argv[++i]);
    else if (a === '--test-reporter' || a === '--test-reporter-destination') i++;
    else if (a === '-r' || a === '--require') require(path.resolve(argv[++i]));
    else if (a[0] !== '-') files.push(a);
  }
  const regexps = patterns.map((p) => {
    const m = /^\/(.*)\/([a-z]*)$/.exec(p);
    return m ? new RegExp(m[1], m[2]) : new RegExp(p);
  });

  function title(node) {
    const names = [];
    for (let n = node; n && n !== root; n = n.parent) names.unshift(n.name);
    return names;
  }

  // A test runs when a pattern matches its name, a suite's around it, or the names joined.
  function selected(node) {
    if (regexps.length === 0 || node.loadFailure) return true;
    const names = title(node);
    const own = names.concat([names.join(' ')]);
    if (regexps.some((r) => own.some((n) => r.test(n)))) return true;
    return node.children.some(selected);
  }

  // Node 18's discovery with no file named: test.js, test-*.js, *.test.js, *-test.js,
  // *_test.js, and every .js or .cjs file under a directory named test; never node_modules.
  function discover(dir, underTest, found) {
    let names;
    try {
      names = fs.readdirSync(dir).sort();
    } catch (e) {
      return found;
    }
    for (const name of names) {
      if (name === 'node_modules' || name[0] === '.') continue;
      const p = path.join(dir, name);
      const stat = fs.statSync(p);
      if (stat.isDirectory()) discover(p, underTest || name === 'test', found);
      else if (/\.c?js$/.test(name) && (underTest || /^test(-.+)?\.c?js$|[.\-_]test\.c?js$/.test(name))) found.push(path.relative(process.cwd(), p));
    }
    return found;
  }

  // --- running them --------------------------------------------------------------------------
  const counts = { tests: 0, suites: 0, pass: 0, fail: 0, skipped: 0, todo: 0 };
  let running = null;

  function call(fn, self, ctx) {
    return new Promise((resolveRun, reject) => {
      running = reject;
      try {
        if (fn.length >= 2) {
          fn.call(self, ctx, (err) => (err ? reject(err) : resolveRun()));
        } else {
          const r = fn.call(self, ctx);
          if (r && typeof r.then === 'function') r.then(() => resolveRun(), reject);
          else resolveRun();
        }
      } catch (e) {
        reject(e);
      }
    });
  }

  function yamlError(e, indent) {
    const pad = ' '.repeat(indent + 2);
    const message = String(e).replace(/\n/g, ' ');
    const lines = [pad + '---', pad + "failureType: 'testCodeFailure'", pad + 'error: ' + JSON.stringify(message)];
    if (e && e.stack) {
      lines.push(pad + 'stack: |-');
      for (const l of String(e.stack).split('\n').slice(1, 8)) lines.push(pad + '  ' + l.trim());
    }
    lines.push(pad + '...');
    return lines.join('\n');
  }

  function hooksOf(node, which) {
    const list = [];
    for (let n = node.parent; n; n = n.parent) list.unshift.apply(list, n.hooks[which]);
    return which === 'afterEach' ? list.reverse() : list;
  }

  function sequence(items, step) {
    return items.reduce((p, item, i) => p.then(() => step(item, i)), Promise.resolve());
  }

  // Runs `node` (a test or a suite) as point `number` at `indent`; resolves to nothing.
  function runNode(node, number, indent) {
    const pad = ' '.repeat(indent);
    const started = Date.now();
    const point = (ok, directive, error) => {
      out(pad + (ok ? 'ok ' : 'not ok ') + number + ' - ' + node.name + (directive ? ' # ' + directive : ''));
      out(error ? yamlError(error, indent) : pad + '  ---\n' + pad + '  duration_ms: ' + (Date.now() - started) + '\n' + pad + '  ...');
    };
    out(pad + '# Subtest: ' + node.name);
    if (node.kind === 'suite') counts.suites++;
    else counts.tests++;
    if (node.skip || node.todo) {
      if (node.skip) counts.skipped++;
      else counts.todo++;
      point(true, node.skip ? 'SKIP' : 'TODO');
      return Promise.resolve();
    }
    if (node.kind === 'suite') {
      let failed = null;
      return runChildren(node, indent + 4)
        .catch((e) => { failed = e; })
        .then(() => point(!failed, null, failed));
    }
    const subtests = [];
    const ctx = {
      name: node.name,
      skip: () => { node.skipped = true; },
      todo: () => { node.todo = true; },
      diagnostic: (m) => out(pad + '    # ' + m),
      test: function (name, options, fn) {
        const a = args3(name, options, fn);
        const child = makeNode('test', a.name, a.fn, a.options, node);
        subtests.push(child);
        return runNode(child, subtests.length, indent + 4);
      },
    };
    const each = (which) => sequence(hooksOf(node, which), (h) => call(h, null, ctx));
    let error = null;
    return each('beforeEach')
      .then(() => call(node.fn || (() => {}), null, ctx))
      .catch((e) => { error = e; })
      .then(() => each('afterEach'))
      .catch((e) => { error = error || e; })
      .then(() => {
        if (subtests.length > 0) out(' '.repeat(indent + 4) + '1..' + subtests.length);
        const failedChild = subtests.some((c) => c.failed);
        if (error || failedChild) {
          node.failed = true;
          counts.fail++;
          point(false, null, error || new Error('subtest failed'));
        } else if (node.skipped || node.todo) {
          counts[node.skipped ? 'skipped' : 'todo']++;
          point(true, node.skipped ? 'SKIP' : 'TODO');
        } else {
          counts.pass++;
          point(true);
        }
      });
  }

  function runChildren(suite, indent) {
    const chosen = suite.children.filter(selected);
    if (chosen.length === 0) return Promise.resolve();
    const hooks = (which) => sequence(suite.hooks[which], (h) => call(h, suite, {}));
    let failed = false;
    return hooks('before')
      .then(() => sequence(chosen, (child, i) => runNode(child, i + 1, indent).then(() => {
        if (child.failed) failed = true;
      })))
      .then(() => hooks('after'))
      .then(() => {
        if (indent > 0) out(' '.repeat(indent) + '1..' + chosen.length);
        if (failed && suite !== root) {
          suite.failed = true;
          throw new Error('a test of the suite failed');
        }
      });
  }

  process.on('uncaughtException', (e) => {
    if (running) running(e);
    else throw e;
  });

  const started = Date.now();
  const list = files.length > 0 ? files : discover(process.cwd(), false, []);
  out('TAP version 13');
  for (const f of list) {
    current = makeNode('suite', f, null, null, root);
    const before = root.children.length;
    try {
      require(path.resolve(f));
    } catch (e) {
      // As node's runner: a file that cannot load fails under its own name, whatever the
      // patterns, with the error that stopped it.
      const failure = makeNode('test', f, () => { throw e; }, null, root);
      failure.loadFailure = true;
      root.children.push(failure);
      fs.writeSync(2, (e && e.provenFile ? e.provenFile + '\n\n' : '') + String((e && e.stack) || e) + '\n');
    }
    // A file's top-level tests join the root, in the order it declared them.
    root.children.splice.apply(root.children, [before, 0].concat(current.children.map((c) => {
      c.parent = root;
      return c;
    })));
    root.hooks.before = root.hooks.before.concat(current.hooks.before);
    root.hooks.after = root.hooks.after.concat(current.hooks.after);
    root.hooks.beforeEach = root.hooks.beforeEach.concat(current.hooks.beforeEach);
    root.hooks.afterEach = root.hooks.afterEach.concat(current.hooks.afterEach);
  }
  current = root;
  runChildren(root, 0)
    .catch(() => {})
    .then(() => {
      const run = root.children.filter(selected).length;
      out('1..' + run);
      out('# tests ' + counts.tests);
      out('# suites ' + counts.suites);
      out('# pass ' + counts.pass);
      out('# fail ' + counts.fail);
      out('# cancelled 0');
      out('# skipped ' + counts.skipped);
      out('# todo ' + counts.todo);
      out('# duration_ms ' + (Date.now() - started));
      process.exit(counts.fail > 0 ? 1 : 0);
    });
}
