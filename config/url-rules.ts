/** URL rules the config checks and the adapters apply again when they build a client. */

/** Problems of a webhook URL (empty when usable): https, or http to a loopback host; no credentials in it. */
export function webhookUrlProblems(raw: string): string[] {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return ["is not a valid URL"];
  }
  const problems: string[] = [];
  const loopback = _isLoopback(url);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) problems.push("must be https:// (http:// only to a loopback address)");
  if (url.username !== "" || url.password !== "") problems.push("must not carry user:password");
  return problems;
}

/**
 * Problems of a business's invoice webhook URL (empty when usable): https only; plain http:// only to
 * a loopback address and only while the business is in TEST (a LIVE business's invoice events carry
 * signed invoice data and never travel in clear). No credentials in the URL.
 */
export function invoiceWebhookUrlProblems(raw: string, state: "TEST" | "LIVE"): string[] {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return ["is not a valid URL"];
  }
  const problems: string[] = [];
  if (url.protocol === "http:") {
    if (!_isLoopback(url)) problems.push("must be https:// (plain http:// only to a loopback address, and only while the business is TEST)");
    else if (state !== "TEST") problems.push("must be https:// for a LIVE business (plain http:// to a loopback address only while the business is TEST)");
  } else if (url.protocol !== "https:") problems.push("must be https://");
  if (url.username !== "" || url.password !== "") problems.push("must not carry user:password");
  return problems;
}

// --- Internal helpers ---

function _isLoopback(url: URL): boolean {
  return url.hostname === "localhost" || url.hostname === "127.0.0.1" || url.hostname === "[::1]";
}
