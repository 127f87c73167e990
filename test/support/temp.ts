/**
 * Temporary folders of tests and benches. `tempDir("mail")` makes `<tmp>/gatehouse-mail-XXXXXX`
 * and removes it, with everything in it, when this process exits (passed, failed or thrown; an
 * interrupted run exits through the signal handlers of test/support/processes.ts). One place, so
 * no test or bench leaves folders behind (a CI run used to leave ~600).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const created: string[] = [];
let hooked = false;

export function tempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-${name}-`));
  created.push(dir);
  if (!hooked) {
    hooked = true;
    process.on("exit", removeTempDirs);
  }
  return dir;
}

/** Removes every folder `tempDir` made so far (also run at exit). */
export function removeTempDirs(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}
