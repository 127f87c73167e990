/**
 * What the edge knows of one connection, so answers leave in request order (RFC 9112 §9.3.2): its
 * dispatched requests whose responses are not done, the last one dispatched, and what waits for
 * them. Counted with public events only: the server's `request` and each response's `close`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";

export interface Connection {
  inFlight: number;
  /** The request dispatched last (its body may still be arriving). */
  last: IncomingMessage | null;
  /** Runs once no response is in flight (an answer waiting its turn, or closing). */
  onIdle: (() => void) | null;
  /** A parse failure was handled; later ones on this connection are not answered again. */
  failed: boolean;
}

/** A socket (or response) that may carry its connection's record. */
export type TrackedSocket = Socket & { [CONNECTION]?: Connection };

/** The connection record of `socket`, if a request or a failure was seen on it. */
export function connectionOf(socket: TrackedSocket): Connection | undefined {
  return socket[CONNECTION];
}

/** The connection record of `socket`, created when it has none. */
export function openConnection(socket: TrackedSocket): Connection {
  return (socket[CONNECTION] ??= _newConnection());
}

/** Counts a dispatched request on its connection until its response closes. */
export function trackRequest(req: IncomingMessage, res: ServerResponse): Connection {
  const conn = openConnection(req.socket as TrackedSocket);
  conn.inFlight++;
  conn.last = req;
  (res as ServerResponse & _Tracked)[CONNECTION] = conn;
  res.on("close", _responseClosed);
  return conn;
}

/** Runs `run` now if nothing is in flight on `conn`, else once its last response is done. */
export function whenIdle(conn: Connection, run: () => void): void {
  if (conn.inFlight === 0) run();
  else conn.onIdle = run;
}

// --- Internal helpers ---

const CONNECTION = Symbol("gatehouse.connection");
type _Tracked = { [CONNECTION]?: Connection };

function _newConnection(): Connection {
  return { inFlight: 0, last: null, onIdle: null, failed: false };
}

/** A response is done (sent, or its connection gone): one fewer in flight. Shared, no closure per request. */
function _responseClosed(this: ServerResponse & _Tracked): void {
  const conn = this[CONNECTION]!;
  conn.inFlight--;
  if (conn.inFlight === 0 && conn.onIdle) {
    const run = conn.onIdle;
    conn.onIdle = null;
    run();
  }
}
