// Proven's Markovian engine behind the module shape Meterless's Markovian conformance
// runner loads (MARKOVIAN_IMPL): the engine runs in `proven conformance-serve --engine
// markovian`, one process per call, waited for; the run travels with each call, and this
// module only hands the engine's prompts to the runner's generator and its answers back.

import { serve } from "./serve.ts";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const state = fs.mkdtempSync(path.join(os.tmpdir(), "proven-markovian-"));

function call(op: string, args: Record<string, unknown>): any {
  return serve("markovian", state, op, args);
}

export function modelTotals(n: number) {
  return call("modelTotals", { n });
}

export function runEfficiency(chunks: { tokens: number }[], config: Record<string, unknown>) {
  return call("runEfficiency", { chunks, config });
}

type Generator = (prompt: string) => Promise<{ text: string }>;

export class Markovian {
  private chunkConfig: Record<string, unknown>;

  constructor(opts: { chunkConfig?: Record<string, unknown>; clock?: () => number }) {
    // A configuration out of bounds is refused here, by name (never clamped).
    this.chunkConfig = call("check", { chunkConfig: opts.chunkConfig ?? {} });
  }

  async run(input: { goal: string; generator: Generator; reflect?: boolean }) {
    let run = call("start", {
      goal: input.goal,
      chunkConfig: this.chunkConfig,
      reflect: input.reflect ?? true,
    });
    while (run.nextPrompt) {
      let text: string;
      try {
        text = (await input.generator(run.nextPrompt)).text;
      } catch (err) {
        run = call("failed", { run, error: (err as Error).message });
        continue;
      }
      run = call("answer", { run, text });
    }
    return run;
  }
}
