/**
 * A small file system for disk-full tests: a tmpfs of a given size mounted on a fresh folder (this
 * needs the right to mount, e.g. root). `fill()` leaves it with no free space (a ballast file
 * written until ENOSPC); `free()` deletes the ballast, as an operator freeing space would.
 * Resolves `{ skip }` where mounting is refused.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./temp.ts";

export interface SmallDisk {
  dir: string;
  fill(): void;
  free(): void;
  unmount(): void;
}

export function mountSmallDisk(name: string, megabytes: number): SmallDisk | { skip: string } {
  const dir = join(tempDir(name), "mnt");
  mkdirSync(dir);
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${megabytes}m,mode=0777`, "tmpfs", dir], { encoding: "utf8" });
  if (mounted.status !== 0) return { skip: `cannot mount a tmpfs here (${(mounted.stderr || mounted.error?.message || "").trim()})` };
  const ballast = join(dir, "ballast");
  let unmounted = false;
  const unmount = (): void => {
    if (unmounted) return;
    unmounted = true;
    spawnSync("umount", ["-l", dir]);
  };
  process.on("exit", unmount);
  return {
    dir,
    fill() {
      const fd = openSync(ballast, "a");
      const chunk = Buffer.alloc(64 * 1024);
      try {
        for (let size = chunk.length; size >= 512; ) {
          try {
            writeSync(fd, chunk, 0, size);
          } catch {
            size = size / 2; // the last bytes, in smaller writes
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(ballast, { force: true });
    },
    unmount,
  };
}

export function isDiskSkip(d: SmallDisk | { skip: string }): d is { skip: string } {
  return "skip" in d;
}
