/**
 * Dashboard test helpers: a browser-like client over the gateway's in-process fetch (a cookie jar
 * per client, forms sent url-encoded with the page's own Origin unless told otherwise, on one host),
 * the demo owner's sign-in (password, then a TOTP code computed with otpauth), and readers for
 * hidden fields and e-mails the folder adapter wrote.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Secret, TOTP } from "otpauth";
import { DEMO_OWNER } from "../../../plugins/dashboard/demo-owner.ts";
import type { TestGateway } from "../../support/gateway.ts";

export const BUSINESS_HOST = "passthrough.demo.localhost";
export const COLLECTIONS_HOST = "localhost";

export interface DashboardClient {
  readonly host: string;
  readonly cookies: Map<string, string>;
  get(path: string): Promise<Response>;
  /** POST a form; `origin: null` sends none, a string sends that one. */
  post(path: string, form: Record<string, string>, init?: { origin?: string | null }): Promise<Response>;
  html(path: string): Promise<string>;
  /** Password step, then the code step when asked; answers the last response. */
  signIn(email: string, password: string, totpSecret?: string): Promise<Response>;
}

export function dashboardClient(tg: TestGateway, host: string = BUSINESS_HOST): DashboardClient {
  const cookies = new Map<string, string>();
  const send = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await tg.call(path, { method, host, headers: { ...headers, ...(cookie ? { cookie } : {}) }, body });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      if (attrs.some((a) => a.trim() === "Max-Age=0")) cookies.delete(name);
      else cookies.set(name, pair!.slice(eq + 1));
    }
    return res;
  };
  const client: DashboardClient = {
    host,
    cookies,
    get: (path) => send("GET", path, {}),
    post(path, form, init = {}) {
      const origin = init.origin === undefined ? `http://${host}` : init.origin;
      return send("POST", path, { "content-type": "application/x-www-form-urlencoded", ...(origin === null ? {} : { origin }) }, new URLSearchParams(form).toString());
    },
    html: async (path) => (await client.get(path)).text(),
    async signIn(email, password, totpSecret) {
      const res = await client.post("/dashboard/sign-in", { email, password, next: "/dashboard" });
      if (res.status !== 303 || res.headers.get("location") !== "/dashboard/sign-in/code" || !totpSecret) return res;
      return client.post("/dashboard/sign-in/code", { code: totpCode(totpSecret) });
    },
  };
  return client;
}

/** The demo owner signed in (password and code) on `host`. */
export async function demoOwner(tg: TestGateway, host: string = BUSINESS_HOST): Promise<DashboardClient> {
  const c = dashboardClient(tg, host);
  const res = await c.signIn(DEMO_OWNER.email, DEMO_OWNER.password, DEMO_OWNER.totpSecret);
  if (res.status !== 303 || res.headers.get("location") !== "/dashboard") throw new Error(`demo owner sign-in answered ${res.status} ${res.headers.get("location")}`);
  return c;
}

/** The current code for a base32 secret, at `timestamp` (default now). */
export function totpCode(secret: string, timestamp = Date.now()): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp });
}

/** The value of the first hidden input named `name` in `html`. */
export function hiddenField(html: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`no ${name} field in the page`);
  return m[1]!;
}

/** The e-mails the folder adapter wrote (oldest first), as their raw text. */
export function mailbox(tg: TestGateway): string[] {
  const e = tg.config.email;
  if (e.driver !== "folder") return [];
  let names: string[];
  try {
    names = readdirSync(e.dir).sort();
  } catch {
    return [];
  }
  return names.map((n) => readFileSync(join(e.dir, n), "utf8"));
}

/** The body of a raw .eml with quoted-printable soft breaks and escapes decoded. */
export function decodeMail(raw: string): string {
  return raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** The path (from /dashboard) of the newest link to `kind` e-mailed to `to`; throws when there is none. */
export function mailedLink(tg: TestGateway, to: string, kind: "invitations" | "password-reset"): string {
  const mails = mailbox(tg).map(decodeMail).filter((m) => m.toLowerCase().includes(to.toLowerCase()));
  for (const m of mails.reverse()) {
    const match = new RegExp(`https?://[^\\s/]+(/dashboard/${kind}/[A-Za-z0-9_-]+)`).exec(m);
    if (match) return match[1]!;
  }
  throw new Error(`no ${kind} link e-mailed to ${to}`);
}

export const MEMBER_PASSWORD = "member-password-0001";

/** The owner invites `email` as `role`; the member accepts from the e-mailed link and is signed in (no two-factor yet). */
export async function inviteMember(tg: TestGateway, owner: DashboardClient, email: string, role: "viewer" | "developer" | "owner", name = "A Member"): Promise<DashboardClient> {
  const team = await owner.html("/dashboard/team");
  const res = await owner.post("/dashboard/team/invitations", { _csrf: hiddenField(team, "_csrf"), email, role });
  if (res.status !== 303) throw new Error(`invite answered ${res.status}`);
  const member = dashboardClient(tg, owner.host);
  const accepted = await member.post(mailedLink(tg, email, "invitations"), { name, password: MEMBER_PASSWORD, password2: MEMBER_PASSWORD });
  if (accepted.status !== 303) throw new Error(`accept answered ${accepted.status}: ${await accepted.text()}`);
  return member;
}

/** The CSRF token of the page at `path` (for forms posted by hand). */
export async function csrfOf(c: DashboardClient, path: string): Promise<string> {
  return hiddenField(await c.html(path), "_csrf");
}
