// Proven's World Model behind the module shape Meterless's World Model conformance runner
// loads (WORLD_MODEL_IMPL): every call goes to `proven conformance-serve --engine world-model`,
// one process per call, waited for (the runner calls some methods synchronously); the
// engine's state lives in a directory of each WorldModel's own.

import { serve } from "./serve.ts";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

function call(state: string, op: string, args: Record<string, unknown>): any {
  return serve("world-model", state, op, args);
}

const stateless = fs.mkdtempSync(path.join(os.tmpdir(), "proven-world-"));

export function normalizeName(name: string): string {
  return call(stateless, "normalizeName", { name });
}

export function entityIdFromName(type: string, name: string): string {
  return call(stateless, "entityIdFromName", { type, name });
}

export function decide(similarity: number): string {
  return call(stateless, "decide", { similarity });
}

export class WorldModel {
  private state: string;
  private namespace: string;
  private clock: () => Date;

  constructor(opts: { namespace: string; storage?: string; clock?: () => Date }) {
    if (!opts.namespace) throw new Error("WorldModel: namespace is required");
    this.namespace = opts.namespace;
    this.clock = opts.clock ?? (() => new Date());
    this.state = fs.mkdtempSync(path.join(os.tmpdir(), "proven-world-"));
  }

  private call(op: string, args: Record<string, unknown> = {}): any {
    return call(this.state, op, { namespace: this.namespace, ...args });
  }

  async upsertEntity(input: Record<string, unknown>): Promise<{ id: string }> {
    return this.call("upsertEntity", input);
  }

  async relate(input: Record<string, unknown>): Promise<unknown> {
    return this.call("relate", input);
  }

  async ingest(observations: unknown[]): Promise<{ changed: boolean }> {
    return this.call("ingest", { observations, now: this.clock().toISOString() });
  }

  stateShapeCanonical(): string {
    return this.call("stateShapeCanonical");
  }

  view(name: string) {
    if (name !== "graph") throw new Error(`WorldModel: no view ${name}`);
    return {
      neighborsOf: (id: string, opts: { via: string; at?: string }) =>
        this.call("neighborsOf", { id, via: opts.via, at: opts.at }),
    };
  }

  audit(): { seq: number; action: string; subject: string }[] {
    return this.call("audit");
  }
}
