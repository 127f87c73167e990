/**
 * One reader's shell for one document: a bash process in the repository root that runs the
 * document's runnable blocks one after the other, so variables a block sets (GW, KEY, an invoice
 * id) serve the next ones, as in a terminal. `curl` is wrapped to record each answer's status and
 * body (the output stays what the reader sees); `npx gatehouse` and `npx tsx` run the repository's
 * own programs, as npx does from the repository, without asking the registry.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedAnswer } from "./markdown-examples.ts";

export interface BlockRun {
  answers: RecordedAnswer[];
  output: string;
  exit: number;
  timedOut: boolean;
}

export interface ShellSession {
  run(code: string, lang: "sh" | "ts", timeoutMs: number): Promise<BlockRun>;
  close(): void;
}

export function openShellSession(o: { root: string; workDir: string; env: NodeJS.ProcessEnv }): ShellSession {
  const prelude = join(o.workDir, "prelude.sh");
  writeFileSync(prelude, _prelude(o.root));
  const child = spawn("bash", ["--noprofile", "--norc", "-s"], { cwd: o.root, env: o.env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  // One stream, in order: a block's stderr must arrive before the end marker that follows it.
  child.stdin.write(`exec 2>&1; source ${_q(prelude)}\n`);
  let n = 0;
  return {
    run: async (code, lang, timeoutMs) => {
      n++;
      const records = join(o.workDir, `records-${n}`);
      mkdirSync(records);
      // A TypeScript block imports as the docs do, from the repository root (`.tmp-*` is ignored by git).
      const file = lang === "ts" ? join(o.root, `.tmp-doc-example-${process.pid}-${n}.ts`) : join(o.workDir, `block-${n}.sh`);
      writeFileSync(file, code);
      const token = `@@END-${randomUUID()}`;
      const command = lang === "ts" ? `${_q(join(o.root, "node_modules/.bin/tsx"))} ${_q(file)}` : `source ${_q(file)}`;
      const start = out.length;
      child.stdin.write(`export EXAMPLE_RECORDS=${_q(records)}; ${command} </dev/null; echo "${token} $?"\n`);
      const ended = await _waitFor(child, () => new RegExp(`${token} (\\d+)`).exec(out.slice(start)), timeoutMs);
      const output = out.slice(start).replace(new RegExp(`${token} \\d+\\n?`), "");
      if (lang === "ts") rmSync(file, { force: true });
      return { answers: _answers(records), output, exit: ended ? Number(ended[1]) : -1, timedOut: !ended };
    },
    close: () => {
      child.stdin.end();
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}

// --- Internal helpers ---

function _prelude(root: string): string {
  return `
curl() {
  local f code rc
  f="$EXAMPLE_RECORDS/$(date +%s%N)"
  code=$(command curl "$@" -o "$f.body" -w '%{http_code}'); rc=$?
  printf '%s' "$code" > "$f.status"
  [ -f "$f.body" ] && cat "$f.body"
  return $rc
}
npx() {
  case "$1" in
    gatehouse) shift; node ${_q(join(root, "bin/gatehouse.js"))} "$@" ;;
    tsx) shift; ${_q(join(root, "node_modules/.bin/tsx"))} "$@" ;;
    *) command npx "$@" ;;
  esac
}
export -f curl npx
`;
}

function _answers(dir: string): RecordedAnswer[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".status"))
    .sort()
    .map((f) => {
      const base = join(dir, f.slice(0, -".status".length));
      let body = "";
      try {
        body = readFileSync(`${base}.body`, "utf8");
      } catch {
        // no body (connection refused)
      }
      // `curl -i`: the body follows the last header block.
      while (/^HTTP\/[\d.]+ \d{3}/.test(body) && body.includes("\r\n\r\n")) body = body.slice(body.indexOf("\r\n\r\n") + 4);
      return { status: Number(readFileSync(join(dir, f), "utf8")) || 0, body };
    });
}

async function _waitFor(child: ChildProcessWithoutNullStreams, found: () => RegExpExecArray | null, timeoutMs: number): Promise<RegExpExecArray | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = found();
    if (m || Date.now() > deadline || child.exitCode !== null) return m;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function _q(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}
