/**
 * Who calls a function, read off a V8 CPU profile (`node --cpu-prof`): the busy time spent under
 * the frames matching a pattern (inclusive, each sample once), split by the nearest callers whose
 * frame matches a second pattern (by default any frame outside node_modules and Node's internals).
 * It answers "which of our functions call libsql's `get` (or `postMessage`, JSON, crypto), and how
 * much does each cost", which self time (bench/profile-top.ts) does not show.
 *
 *   npx tsx bench/profile-callers.ts <file.cpuprofile> <target pattern> [caller pattern] [depth=1]
 *   npx tsx bench/profile-callers.ts /tmp/p/CPU.…cpuprofile '^get .*libsql' '' 2
 *
 * Patterns are regular expressions tested on "<function> <script path>:<line>" of each frame.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

export interface CallerRow {
  /** The nearest matching callers, nearest first, joined by " <- "; "(none)" when no frame matched. */
  callers: string;
  ms: number;
  /** Share of the profile's busy (non-idle) time. */
  busyShare: number;
}

export interface CallerSummary {
  busyMs: number;
  /** Busy time under the target frames. */
  targetMs: number;
  rows: CallerRow[];
}

/** Our own frames: anything not in node_modules, not Node's internals, not a native or V8 entry. */
export const OWN_FRAMES = /^\S+ (?!node:|.*node_modules)[^\s:]+\.ts:\d+$/;

export function callersOf(profile: CpuProfile, target: RegExp, caller: RegExp = OWN_FRAMES, depth = 1): CallerSummary {
  const frames = _frames(profile);
  const byCallers = new Map<string, number>();
  let busyMs = 0;
  let targetMs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const leaf = profile.samples[i]!;
    if (frames.label.get(leaf) === "(idle) :-1") continue;
    busyMs += ms;
    const hit = _firstUp(frames, leaf, (l) => target.test(l));
    if (hit === undefined) continue;
    targetMs += ms;
    const chain: string[] = [];
    for (let x = frames.parent.get(hit); x !== undefined && chain.length < depth; x = frames.parent.get(x)) {
      const l = frames.label.get(x)!;
      if (caller.test(l)) chain.push(l);
    }
    const key = chain.join(" <- ") || "(none)";
    byCallers.set(key, (byCallers.get(key) ?? 0) + ms);
  }
  const rows = [...byCallers].map(([callers, ms]) => ({ callers, ms, busyShare: busyMs > 0 ? ms / busyMs : 0 })).sort((a, b) => b.ms - a.ms);
  return { busyMs, targetMs, rows };
}

/** The part of a `.cpuprofile` this reads. */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

// --- Internal helpers ---

interface _Frames {
  label: Map<number, string>;
  parent: Map<number, number>;
}

function _frames(profile: CpuProfile): _Frames {
  const label = new Map<number, string>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    const path = n.callFrame.url.replace(/^file:\/\//, "").replace(`${process.cwd()}/`, "");
    label.set(n.id, `${n.callFrame.functionName || "(anonymous)"} ${path}:${n.callFrame.lineNumber}`);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  return { label, parent };
}

function _firstUp(frames: _Frames, from: number, match: (label: string) => boolean): number | undefined {
  for (let x: number | undefined = from; x !== undefined; x = frames.parent.get(x)) if (match(frames.label.get(x)!)) return x;
  return undefined;
}

function _main(argv: string[]): void {
  const [file, target, caller, depth] = argv;
  if (!file || !target) {
    process.stderr.write("usage: npx tsx bench/profile-callers.ts <file.cpuprofile> <target pattern> [caller pattern] [depth=1]\n");
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const s = callersOf(profile, new RegExp(target), caller ? new RegExp(caller) : OWN_FRAMES, depth ? Number(depth) : 1);
  const pct = (ms: number) => `${((100 * ms) / Math.max(1, s.busyMs)).toFixed(1)} %`;
  process.stdout.write(`busy ${s.busyMs.toFixed(0)} ms; under /${target}/ ${s.targetMs.toFixed(0)} ms (${pct(s.targetMs)} of busy)\n`);
  for (const r of s.rows.slice(0, 30)) process.stdout.write(`${r.ms.toFixed(0).padStart(8)} ms ${pct(r.ms).padStart(7)}  ${r.callers}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) _main(process.argv.slice(2));
