// autocannon setupRequest of the "stored" bench scenario (CommonJS: autocannon's worker threads
// require it by path). Each request gets its own x-idempotency-key and invoice reference (so its
// own IRN): every request is a new intake, never a replay.
"use strict";
const { randomBytes } = require("node:crypto");

const PREFIX = "B" + randomBytes(4).toString("hex").toUpperCase();
let next = 0;

module.exports = function setupRequest(request) {
  const id = PREFIX + (next++).toString(36).toUpperCase();
  return {
    ...request,
    headers: { ...request.headers, "x-idempotency-key": "bench-" + id },
    body: request.body.replace("BENCHREF", id),
  };
};
