/**
 * The share of a CPU profile's busy time spent under functions matching a pattern, counting every
 * sample whose stack passes through one (inclusive time, each sample once): what one part of a
 * server costs, read off the server's own profile rather than off the difference of two noisy load
 * runs (docs/bench.md "Request log").
 *
 *   npm run bench -- --only ping --profile /tmp/p
 *   npx tsx bench/profile-share.ts /tmp/p/gateway/<file>.cpuprofile 'request-log/|insertMany'
 *
 * The pattern is a regular expression tested on "<function> <script url>" of each frame.
 */
import { readFileSync } from "node:fs";

interface _Node {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

const [file, pattern] = process.argv.slice(2);
if (!file || !pattern) {
  process.stderr.write("usage: npx tsx bench/profile-share.ts <file.cpuprofile> <pattern>\n");
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: _Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const match = new RegExp(pattern);
const matches = new Map<number, boolean>();
const underPattern = (id: number): boolean => {
  const known = matches.get(id);
  if (known !== undefined) return known;
  const n = byId.get(id)!;
  const up = parent.get(id);
  const hit = match.test(`${n.callFrame.functionName} ${n.callFrame.url}`) || (up !== undefined && underPattern(up));
  matches.set(id, hit);
  return hit;
};
let busyUs = 0;
let matchedUs = 0;
profile.samples.forEach((id, i) => {
  if (byId.get(id)!.callFrame.functionName === "(idle)") return;
  const us = profile.timeDeltas[i] ?? 0;
  busyUs += us;
  if (underPattern(id)) matchedUs += us;
});
process.stdout.write(`${(matchedUs / 1000).toFixed(0)} ms of ${(busyUs / 1000).toFixed(0)} ms busy (${((100 * matchedUs) / busyUs).toFixed(2)} %) under /${pattern}/\n`);
