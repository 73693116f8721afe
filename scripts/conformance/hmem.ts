// Proven's H-MEM record model behind the module shape Meterless's H-MEM conformance runner
// loads (HMEM_IMPL): each call goes to `proven conformance-serve --engine hmem`, one process
// per call, waited for (the runner's calls are synchronous); the state lives in a directory
// of each HMEM's own. A record handed out is a live view: setting its supersededBy (the
// runner does) is a write to the engine, as it is to a record of the reference's store.

import { serve } from "./serve.ts";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export class HMEM {
  private state: string;
  private clock: () => number;
  store: { get: (id: string) => any; all: () => any[] };
  sleep: { preview: () => any; execute: (preview: any) => any };
  conflicts: { scan: () => any[]; autoResolve: (c: any) => string };
  ledger: { history: (id: string) => any[] };
  dreaming: { dream: () => any[]; approve: (id: string) => any };

  constructor(opts: { clock?: () => number } = {}) {
    this.state = fs.mkdtempSync(path.join(os.tmpdir(), "proven-hmem-"));
    this.clock = opts.clock ?? (() => Date.now());
    this.store = {
      get: (id) => this.live(this.call("get", { id }) ?? undefined),
      all: () => (this.call("all") as any[]).map((r) => this.live(r)),
    };
    this.sleep = {
      preview: () => this.call("sleepPreview"),
      execute: (preview) => this.call("sleepExecute", { preview }),
    };
    this.conflicts = {
      scan: () => this.call("conflictsScan"),
      autoResolve: (conflict) => this.call("autoResolve", { conflict }),
    };
    this.ledger = { history: (id) => this.call("history", { id }) };
    this.dreaming = {
      dream: () => this.call("dream"),
      approve: (id) => this.live(this.call("approve", { id })),
    };
  }

  private call(op: string, args: Record<string, unknown> = {}): any {
    return serve("hmem", this.state, op, { now: this.clock(), ...args });
  }

  private live(record: any): any {
    if (record === undefined || record === null) return undefined;
    return new Proxy(record, {
      set: (target, key, value) => {
        if (key === "supersededBy") this.call("supersede", { id: target.id, by: value });
        target[key as string] = value;
        return true;
      },
    });
  }

  add(record: Record<string, unknown>): any {
    return this.live(this.call("add", { record }));
  }

  feedback(id: string, kind: string): any {
    return this.live(this.call("feedback", { id, kind }));
  }

  query(query: string, opts: { threshold?: number; topN?: number } = {}): any {
    return this.call("query", { query, threshold: opts.threshold, topN: opts.topN });
  }
}
