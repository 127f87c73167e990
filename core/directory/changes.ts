/**
 * Change notifications between processes: every write to the directory's store is announced on one
 * channel of the coordination port's publish/subscribe (Redis on the scale-out profile), so each
 * process's cached records go stale at once rather than when their time is up.
 */
import type { CoordinationStore } from "../../adapters/ports.ts";
import type { DirectoryChange } from "./types.ts";

export const DIRECTORY_CHANNEL = "directory";

/** A change as received: `origin` names the announcing directory (which skips its own). */
export type ReceivedChange = DirectoryChange & { origin?: string };

/** Announces a change to every process's directory (`origin`: the announcing directory, which skips its own). */
export function announceChange(coordination: CoordinationStore, change: DirectoryChange, origin = ""): Promise<void> {
  return coordination.publish(DIRECTORY_CHANNEL, JSON.stringify({ ...change, origin }));
}

/** The change a message carries, or null when the message is not one. */
export function parseChange(text: string): ReceivedChange | null {
  try {
    const c = JSON.parse(text) as ReceivedChange;
    return (c.kind === "domain" || c.kind === "business" || c.kind === "credential" || c.kind === "webhook") && typeof c.id === "string" ? c : null;
  } catch {
    return null;
  }
}
