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
  const loopback = url.hostname === "localhost" || url.hostname === "127.0.0.1" || url.hostname === "[::1]";
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) problems.push("must be https:// (http:// only to a loopback address)");
  if (url.username !== "" || url.password !== "") problems.push("must not carry user:password");
  return problems;
}
