/**
 * Console test helpers: a browser-like client over the gateway's in-process fetch (a cookie jar,
 * forms sent url-encoded with the page's own Origin unless told otherwise), and readers for the
 * hidden fields of a page's forms.
 */
import type { TestGateway } from "../../support/gateway.ts";

export const CONSOLE_HOST = "localhost";
export const ORIGIN = `http://${CONSOLE_HOST}`;
export const OPERATOR_KEY = "admin_demo_key_0001";
export const VIEWER_KEY = "viewer_test_key_0001";
/** A config patch adding the console viewer credential VIEWER_KEY (the demo config has none). */
export const VIEWER_PATCH = { console: { viewers: [{ id: "demo-viewer", key: VIEWER_KEY, demoOnly: true }] } };

export interface ConsoleClient {
  get(path: string): Promise<Response>;
  /** POST a form; `origin: null` sends none, a string sends that one. */
  post(path: string, form: Record<string, string>, init?: { origin?: string | null }): Promise<Response>;
  signIn(key: string): Promise<Response>;
  /** The page's HTML (asserts nothing). */
  html(path: string): Promise<string>;
  readonly cookies: Map<string, string>;
}

export function consoleClient(tg: TestGateway): ConsoleClient {
  const cookies = new Map<string, string>();
  const send = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await tg.call(path, { method, host: CONSOLE_HOST, headers: { ...headers, ...(cookie ? { cookie } : {}) }, body });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      if (attrs.some((a) => a.trim() === "Max-Age=0")) cookies.delete(name);
      else cookies.set(name, pair!.slice(eq + 1));
    }
    return res;
  };
  const client: ConsoleClient = {
    cookies,
    get: (path) => send("GET", path, {}),
    post(path, form, init = {}) {
      const origin = init.origin === undefined ? ORIGIN : init.origin;
      return send("POST", path, { "content-type": "application/x-www-form-urlencoded", ...(origin === null ? {} : { origin }) }, new URLSearchParams(form).toString());
    },
    signIn: (key) => client.post("/console/sign-in", { key, next: "/console" }),
    html: async (path) => (await client.get(path)).text(),
  };
  return client;
}

/** The value of the first hidden input named `name` in `html`. */
export function hiddenField(html: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`no ${name} field in the page`);
  return m[1]!;
}
