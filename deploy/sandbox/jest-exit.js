// Proven: jest's run ends when jest says it has, as on the project's CI.
//
// jest runs a suite in band (in its own process) when it has one worker or less: on the
// sandbox's CPUs (two: one worker) it does, where a CI runner (four) has three workers.
// A handle a test leaves open (a timer, a file it tails) then keeps jest's own process
// alive after its summary, until the run's timeout kills the whole suite, where on CI
// jest force-exits the worker that holds it ("A worker process has failed to exit
// gracefully") and exits with the run's code (winston's tail-file test).
//
// Every Node process of a run loads this file (the entry puts it in NODE_OPTIONS); it does
// nothing but in jest's CLI. There, once jest prints that it "did not exit one second after
// the test run has completed" (its own word that the run is over and only open handles
// remain: jest-cli's readResultsAndExit), the process exits; the exit code is jest's own,
// which jest sets on 'exit'. Written for Node 8 and newer, in the syntax of Node 4.
'use strict';
(function () {
  var main = process.argv[1] || '';
  // `node_modules/.bin/jest`, `jest/bin/jest.js`, `jest-cli/bin/jest.js`.
  if (!/(^|[\/\\])jest(\.js)?$/.test(main)) {
    return;
  }
  var warn = console.warn;
  console.warn = function () {
    warn.apply(console, arguments);
    var text = Array.prototype.join.call(arguments, ' ');
    if (text.indexOf('Jest did not exit') !== -1 &&
        text.indexOf('after the test run has completed') !== -1) {
      process.stderr.write(
        'proven: jest\'s run is over and what its tests left open keeps it alive; ' +
        'exiting with its code, as the workers of the project\'s CI do\n');
      process.exit();
    }
  };
}());
