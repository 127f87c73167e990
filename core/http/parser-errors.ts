/**
 * What Node's HTTP parser decided, in the contract's terms: which failures the edge answers, the
 * catalog error each is answered with, and what can still be read from the raw bytes of a request
 * that could not be parsed (its path and Host, to answer in the host's shape).
 */
import { gwError, type GatewayError } from "../errors/gateway-error.ts";

/** The limits a parser failure's answer quotes (config `server`). */
export interface ParserLimits {
  headerReadTimeoutMs: number;
  maxHeaderBytes: number;
  maxUriLength: number;
}

/** A failure of the request's parse (or its header deadline), as opposed to a socket error. */
export function isParserFailure(err: NodeJS.ErrnoException): boolean {
  return typeof err.code === "string" && (err.code.startsWith("HPE_") || err.code === "ERR_HTTP_REQUEST_TIMEOUT");
}

/** The request's parser error → the catalog error it is answered with. */
export function parserError(err: NodeJS.ErrnoException, raw: string | null, limits: ParserLimits): GatewayError {
  const { headerReadTimeoutMs, maxHeaderBytes, maxUriLength } = limits;
  switch (err.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return gwError("GW_REQUEST_BODY_TIMEOUT", { detail: `The request headers did not arrive within ${headerReadTimeoutMs} ms.` });
    case "HPE_HEADER_OVERFLOW": {
      const lineEnd = raw?.indexOf("\n") ?? -1;
      if (raw !== null && (lineEnd < 0 || lineEnd > maxUriLength))
        return gwError("GW_REQUEST_URI_TOO_LONG", { detail: `Path and query must not exceed ${maxUriLength} characters.` });
      return gwError("GW_REQUEST_HEADER_INVALID", { detail: `The request line and headers must not exceed ${maxHeaderBytes} bytes.` });
    }
    case "HPE_INVALID_CONTENT_LENGTH":
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return _framingError("Content-Length", "Content-Length must be one non-negative integer, and not sent with Transfer-Encoding.");
    case "HPE_INVALID_TRANSFER_ENCODING":
      return _framingError("Transfer-Encoding", "Transfer-Encoding must end in chunked, and not be sent with Content-Length.");
    case "HPE_INVALID_EOF_STATE":
      return gwError("GW_REQUEST_HEADER_INVALID", { detail: "The connection ended before the request was complete." });
    default:
      return gwError("GW_REQUEST_HEADER_INVALID", { detail: "The request could not be read: malformed request line or headers." });
  }
}

/** The first bytes of the packet Node could not parse, as text (headers are Latin-1). */
export function rawHead(packet: Buffer | undefined): string | null {
  return packet ? packet.toString("latin1", 0, Math.min(packet.length, HEAD_SCAN_BYTES)) : null;
}

/** A header's value in the first header block of raw request text, or null. */
export function rawHeaderValue(raw: string | null, name: string): string | null {
  if (raw === null) return null;
  const end = raw.search(/\r?\n\r?\n/);
  const m = new RegExp(`\\n${name}[ \\t]*:[ \\t]*([^\\r\\n]*)`, "i").exec(end < 0 ? raw : raw.slice(0, end));
  return m ? m[1]!.trim() : null;
}

/** The path of a request line that is at least that readable ("GET /x?y HTTP/1.1" → "/x"). */
export function rawRequestPath(raw: string | null): string | null {
  const m = raw === null ? null : /^[!-~]{1,32} (\/[^?\s]{0,2048})/.exec(raw);
  return m ? m[1]! : null;
}

// --- Internal helpers ---

const HEAD_SCAN_BYTES = 64 * 1024;

function _framingError(field: string, detail: string): GatewayError {
  return gwError("GW_REQUEST_HEADER_INVALID", {
    detail: "The request's framing headers are invalid.",
    violations: [{ location: "header", field, code: "FORMAT", detail }],
  });
}
