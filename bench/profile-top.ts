/**
 * The leaders of a V8 CPU profile (`node --cpu-prof`): self time per function, as a share of the
 * process's busy CPU (every sample except `(idle)`) and of all samples.
 *
 *   npx tsx bench/profile-top.ts <file.cpuprofile> [rows=25]
 *
 * Functions are keyed by name + file + line, so two functions of the same name stay apart.
 * `(garbage collector)` and `(program)` (V8 and native work outside JavaScript) are listed as the
 * profile names them.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

export interface ProfileRow {
  name: string;
  where: string;
  selfMs: number;
  /** Share of the busy (non-idle) samples. */
  busyShare: number;
  /** Share of all samples. */
  totalShare: number;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  rows: ProfileRow[];
  /** Self time per source file (node internals and natives grouped as `node:` / `(native)`). */
  files: Array<{ file: string; selfMs: number; busyShare: number }>;
}

interface _Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}

interface _Profile {
  nodes: _Node[];
  samples: number[];
  timeDeltas: number[];
}

export function summarizeProfile(profile: _Profile): ProfileSummary {
  const byId = new Map<number, _Node>();
  for (const n of profile.nodes) byId.set(n.id, n);
  const self = new Map<string, { name: string; where: string; us: number }>();
  let total = 0;
  let idle = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = Math.max(0, profile.timeDeltas[i] ?? 0);
    const node = byId.get(profile.samples[i]!);
    if (!node) continue;
    total += dt;
    const cf = node.callFrame;
    if (cf.functionName === "(idle)") {
      idle += dt;
      continue;
    }
    const where = cf.url ? `${_short(cf.url)}:${cf.lineNumber + 1}` : "";
    const key = `${cf.functionName}|${where}`;
    const row = self.get(key) ?? { name: cf.functionName || "(anonymous)", where, us: 0 };
    row.us += dt;
    self.set(key, row);
  }
  const busy = total - idle;
  const byFile = new Map<string, number>();
  for (const r of self.values()) {
    const file = r.where === "" ? "(native)" : r.where.startsWith("node:") ? "node:" + r.where.slice(5).split(/[/:]/)[1] : r.where.replace(/:\d+$/, "");
    byFile.set(file, (byFile.get(file) ?? 0) + r.us);
  }
  const files = [...byFile].sort((a, b) => b[1] - a[1]).map(([file, us]) => ({ file, selfMs: us / 1000, busyShare: us / busy }));
  const rows = [...self.values()]
    .sort((a, b) => b.us - a.us)
    .map((r) => ({ name: r.name, where: r.where, selfMs: r.us / 1000, busyShare: r.us / busy, totalShare: r.us / total }));
  return { totalMs: total / 1000, idleMs: idle / 1000, rows, files };
}

export function formatProfile(summary: ProfileSummary, limit = 25): string {
  const lines = [
    `samples: ${(summary.totalMs / 1000).toFixed(1)} s, idle ${((summary.idleMs / summary.totalMs) * 100).toFixed(1)} %, busy ${((summary.totalMs - summary.idleMs) / 1000).toFixed(1)} s`,
    "self % of busy   self % of all   self ms   function",
  ];
  for (const r of summary.rows.slice(0, limit)) {
    lines.push(
      `${(r.busyShare * 100).toFixed(1).padStart(13)} %  ${(r.totalShare * 100).toFixed(1).padStart(12)} %  ${r.selfMs.toFixed(0).padStart(8)}   ${r.name} ${r.where}`,
    );
  }
  lines.push("", "self % of busy   file");
  for (const f of summary.files.slice(0, limit)) lines.push(`${(f.busyShare * 100).toFixed(1).padStart(13)} %   ${f.file}`);
  return lines.join("\n");
}

// --- Internal helpers ---

/** A file URL shortened to the part after node_modules/ or the repository root. */
function _short(url: string): string {
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) return url.slice(nm + "node_modules/".length);
  const root = new URL("../", import.meta.url).href;
  return url.startsWith(root) ? url.slice(root.length) : url;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write("usage: npx tsx bench/profile-top.ts <file.cpuprofile> [rows]\n");
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, "utf8")) as _Profile;
  process.stdout.write(formatProfile(summarizeProfile(profile), Number(process.argv[3] ?? 25)) + "\n");
}
