/**
 * The bench's servers as compiled JavaScript: each bench/servers/<name>.ts bundled by esbuild into
 * bench/.build/<name>.mjs (gitignored; dependencies stay in node_modules), then started with plain
 * `node`. A deployment runs compiled code; under the tsx loader a process carries ~35 MiB more RSS
 * (Node 20 runs loader hooks on a thread of their own) and that would be measured instead of the
 * server. Every server — the peers and bare h3 too — runs the same way, so comparisons stay fair.
 * `BENCH_TSX=1` (and `--profile`, whose profiles should name the source files) runs them under tsx.
 *
 * The adapters the embedded default never loads (MongoDB, Redis, SMTP) stay out of the bundle:
 * they are imported only when configured, and a bundle would load their drivers at start-up.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { ROOT } from "./processes.ts";

export const BUILD_DIR = join(ROOT, "bench", ".build");

/**
 * The node flags every load server runs with (`BENCH_NODE_FLAGS` replaces them, space-separated):
 * V8's young generation capped at 8 MiB per semi-space (Node 20's default: 16). Request garbage dies
 * young either way; the cap keeps ~15–20 MiB of RSS that a burst of load would otherwise leave
 * committed, at no CPU cost we could measure (docs/bench.md "Memory"). A deployment sets the same
 * with NODE_OPTIONS.
 */
export function serverNodeFlags(env: Record<string, string | undefined> = process.env): string[] {
  return (env.BENCH_NODE_FLAGS ?? "--max-semi-space-size=8").split(" ").filter(Boolean);
}

/** Bundles the named servers; returns each one's entry file. */
export async function buildServers(names: readonly string[]): Promise<Record<string, string>> {
  mkdirSync(BUILD_DIR, { recursive: true });
  const out: Record<string, string> = {};
  await Promise.all(
    names.map(async (name) => {
      const outfile = join(BUILD_DIR, `${name}.mjs`);
      await build({
        entryPoints: [join(ROOT, "bench", "servers", `${name}.ts`)],
        outfile,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        packages: "external",
        external: ["*/document-store/mongodb.ts", "*/coordination/redis.ts", "*/email/smtp.ts"],
        logLevel: "warning",
      });
      out[name] = outfile;
    }),
  );
  return out;
}
