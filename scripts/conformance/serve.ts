// The one call every bridge makes: a request to `proven conformance-serve --engine ENGINE
// --state DIR`, one process per call, waited for (the runners call some methods
// synchronously); the answer's `ok`, or its `error` thrown.

import { spawnSync } from "node:child_process";

const BIN = process.env.CONFORMANCE_PROVEN ?? "proven";

export function serve(engine: string, state: string, op: string, args: Record<string, unknown>): any {
  const run = spawnSync(BIN, ["conformance-serve", "--engine", engine, "--state", state], {
    input: JSON.stringify({ op, args }) + "\n",
    encoding: "utf-8",
    maxBuffer: 64 << 20,
  });
  if (run.status !== 0) {
    throw new Error(`proven conformance-serve exited ${run.status}: ${run.stderr || run.error}`);
  }
  const reply = JSON.parse(run.stdout.trim().split("\n").pop() ?? "{}");
  if ("error" in reply) throw new Error(reply.error);
  return reply.ok;
}
