/**
 * Assertions the test suites share: the gateway's problem+json contract on a fetch Response and on
 * a response read off a raw socket, and a bounded wait for what the server side reaches
 * asynchronously.
 */
import * as assert from "uvu/assert";
import type { RawResponse } from "./raw-http.ts";

/** A version-4 UUID, as the gateway's invoice ids are. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A version-7 UUID (its first 48 bits the time it was made), as the gateway's request ids are. */
export const REQUEST_ID_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A version-7 UUID, as the gateway's operation ids are (core/ids.ts). */
export const UUID_V7 = REQUEST_ID_UUID;

/**
 * A problem+json response: status, content type, Cache-Control no-store, body code and status,
 * retry strategy, and X-Request-ID equal to the body's requestId. Returns the body.
 */
export async function expectProblem(res: Response, status: number, code: string, strategy: string): Promise<Record<string, any>> {
  assert.is(res.status, status, `status (${code})`);
  assert.is(res.headers.get("content-type"), "application/problem+json");
  assert.is(res.headers.get("cache-control"), "no-store");
  const body = (await res.json()) as Record<string, any>;
  assert.is(body.code, code);
  assert.is(body.status, status);
  assert.is(body.retry?.strategy, strategy);
  assert.is(res.headers.get("x-request-id"), body.requestId, "X-Request-ID equals body requestId");
  if (strategy === "BACKOFF") {
    // Every BACKOFF answer names its wait, in the header and the body alike (spec §7.2).
    const after = Number(res.headers.get("retry-after"));
    assert.ok(Number.isInteger(after) && after >= 1, `Retry-After on a BACKOFF ${code}`);
    assert.is(body.retry.afterSeconds, after, "retry.afterSeconds equals Retry-After");
  }
  return body;
}

/** A problem+json response read off a raw socket: content type, and X-Request-ID equal to the body's requestId. Returns the body. */
export function rawProblem(res: RawResponse): Record<string, any> {
  assert.is(res.headers["content-type"], "application/problem+json");
  const body = JSON.parse(res.body) as Record<string, any>;
  assert.is(res.headers["x-request-id"], body.requestId);
  return body;
}

/** `rawProblem` plus the status, body code and retry strategy. Returns the body. */
export function expectRawProblem(res: RawResponse, status: number, code: string, strategy: string): Record<string, any> {
  assert.is(res.status, status, `status (${code})`);
  const body = rawProblem(res);
  assert.is(body.code, code);
  assert.is(body.retry?.strategy, strategy);
  return body;
}

/** Waits (bounded) for a condition that the server side reaches asynchronously. */
export async function until(condition: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * The contract's shape of an answer read off a raw socket, for the service the host answers in:
 * the gateway's problem+json (every §2.4 field) or the collections envelope (DECISIONS.md), with
 * an X-Request-ID that is a gateway UUID equal to the body's requestId. Returns the body.
 */
export function expectContractShape(res: RawResponse, service: "gateway" | "collections", status?: number): Record<string, any> {
  if (status !== undefined) assert.is(res.status, status, "status");
  assert.match(res.headers["x-request-id"] ?? "", REQUEST_ID_UUID, "X-Request-ID is a gateway request id");
  const body = JSON.parse(res.body) as Record<string, any>;
  assert.is(body.requestId, res.headers["x-request-id"], "body requestId equals X-Request-ID");
  if (service === "gateway") {
    assert.is(res.headers["content-type"], "application/problem+json");
    assert.is(res.headers["cache-control"], "no-store");
    for (const field of ["type", "title", "status", "statusCode", "detail", "message", "instance", "code", "timestamp", "action", "retry", "path"])
      assert.ok(field in body, `problem+json field ${field}`);
    assert.is(body.status, res.status);
    assert.match(body.code, /^GW_[A-Z_]+$/);
    assert.ok(typeof body.retry?.strategy === "string", "retry.strategy");
  } else {
    assert.is(res.headers["content-type"], "application/json");
    assert.is(body.statusCode, res.status);
    assert.type(body.message, "string");
    assert.match(body.requestTimestamp, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{3})?$/);
    assert.ok(Array.isArray(body.errors), "errors is an array");
    assert.not.ok("code" in body, "not problem+json");
  }
  return body;
}
