/**
 * Bench server "upstream": the service every proxy fronts. Plain node:http on loopback, answering
 * every GET with the same ~600-byte JSON (UPSTREAM_BODY), keep-alive. Its own row in the table
 * ("direct") is the ceiling of the relay scenario.
 */
import { createServer } from "node:http";
import { listenAndAnnounce, UPSTREAM_BODY } from "./common.ts";

const body = Buffer.from(UPSTREAM_BODY);
const headers = { "content-type": "application/json", "content-length": String(body.length) };

const server = createServer((req, res) => {
  req.resume();
  res.writeHead(req.method === "GET" ? 200 : 405, headers);
  res.end(body);
});
listenAndAnnounce(server, "upstream");
