// Proven's Scout Intent Sense stage behind the module shape Meterless's Scout eval harness
// loads (SCOUT_IMPL): `decide` goes to `proven conformance-serve --engine scout-intent`, one
// process per call, with the registry the harness names.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const BIN = process.env.CONFORMANCE_PROVEN ?? "proven";
const state = fs.mkdtempSync(path.join(os.tmpdir(), "proven-scout-"));

export class Scout {
  private intentRegistry: string;

  constructor(opts: { intentRegistry: string; policyPack?: string[] }) {
    this.intentRegistry = opts.intentRegistry;
  }

  async decide(input: { prompt: string; user?: { role?: string }; surface?: string }) {
    const run = spawnSync(BIN, ["conformance-serve", "--engine", "scout-intent", "--state", state], {
      input:
        JSON.stringify({ op: "decide", args: { intentRegistry: this.intentRegistry, prompt: input.prompt } }) +
        "\n",
      encoding: "utf-8",
    });
    if (run.status !== 0) {
      throw new Error(`proven conformance-serve exited ${run.status}: ${run.stderr || run.error}`);
    }
    const reply = JSON.parse(run.stdout.trim().split("\n").pop() ?? "{}");
    if ("error" in reply) throw new Error(reply.error);
    return reply.ok;
  }
}
