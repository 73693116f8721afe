// Proven's Scout Intent Sense stage behind the module shape Meterless's Scout eval harness
// loads (SCOUT_IMPL): `decide` goes to `proven conformance-serve --engine scout-intent`, one
// process per call, with the registry the harness names.

import { serve } from "./serve.ts";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const state = fs.mkdtempSync(path.join(os.tmpdir(), "proven-scout-"));

export class Scout {
  private intentRegistry: string;

  constructor(opts: { intentRegistry: string; policyPack?: string[] }) {
    this.intentRegistry = opts.intentRegistry;
  }

  async decide(input: { prompt: string; user?: { role?: string }; surface?: string }) {
    return serve("scout-intent", state, "decide", {
      intentRegistry: this.intentRegistry,
      prompt: input.prompt,
    });
  }
}
