/**
 * The simulator's few `node:http` operations: write an answer as JSON, tell whether a response can
 * still be written, and read a request body with a size limit.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Answer } from "./views.ts";

const JSON_TYPE = "application/json; charset=utf-8";

/** Write `answer` (JSON, `cache-control: private`), unless the response is already gone. */
export function sendAnswer(res: ServerResponse, answer: Answer): void {
  if (isGone(res)) return;
  const text = answer.raw ?? JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    "content-type": JSON_TYPE,
    "cache-control": "private",
    "content-length": Buffer.byteLength(text),
    ...answer.headers,
  });
  res.end(text);
}

/** True when nothing more can be written: headers sent, or the connection destroyed or ended. */
export function isGone(res: ServerResponse): boolean {
  return res.headersSent || res.destroyed || res.writableEnded;
}

export type BodyRead = { kind: "ok"; text: string } | { kind: "too_large" } | { kind: "aborted" };

/** Read the whole body as UTF-8; over `limit` bytes → too_large, a closed or failed request → aborted. */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (r: BodyRead) => {
      if (done) return;
      done = true;
      resolve(r);
    };
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) finish({ kind: "too_large" });
      else chunks.push(chunk);
    });
    req.on("end", () => finish({ kind: "ok", text: Buffer.concat(chunks, size).toString("utf8") }));
    req.on("error", () => finish({ kind: "aborted" }));
    req.on("close", () => finish({ kind: "aborted" }));
  });
}
