/**
 * The demo business's owner, seeded at start in demo configs only (`demo: true`), so a first look
 * at the dashboard needs no invitation: a fixed e-mail, password and TOTP secret that the startup
 * banner and the README print. Never present outside a demo config. The demo business is the one
 * that owns the demo's invoice host and has collections keys ("demo" in config/demo.json).
 */
import type { Config } from "../../config/schema.ts";
import { describeError, type Logger } from "../../core/log.ts";
import type { Worker } from "../../core/plugin.ts";
import type { PasswordHash } from "./passwords.ts";
import type { UserStore } from "./users.ts";

export const DEMO_OWNER = {
  id: "usr_demo_owner",
  email: "owner@demo.gatehouse.test",
  password: "demo-owner-password",
  /** Base32; authenticator apps accept it typed in, or from the enrolment page's QR code. */
  totpSecret: "GATEHOUSEDEMOOWNERTOTPSECRET2345",
  name: "Demo Owner",
} as const;

/**
 * The demo password's scrypt hash, computed once (salt: the first 16 bytes of sha256("gatehouse-demo-owner")),
 * so starting a demo gateway costs no scrypt work; test/plugins/dashboard/skeleton.test.ts checks it.
 */
export const DEMO_OWNER_PASSWORD_HASH: PasswordHash = {
  alg: "scrypt",
  N: 16384,
  r: 8,
  p: 1,
  salt: "di0X6uI6FM5jgDc/2c9gEA==",
  hash: "Fc85CJNxPYSjThZl8gnYAGH06uRP4NliHq9ag8gZVTU=",
};

/** The business the demo owner belongs to: the first with both invoice domains and collections keys. */
export function demoOwnerBusiness(config: Config): string | null {
  if (!config.demo) return null;
  const b = config.businesses.find((x) => (x.gateway?.domains.length ?? 0) > 0 && (x.collections?.apiKeys.length ?? 0) > 0);
  return b?.id ?? null;
}

/** A start-up step (as a worker with nothing to stop): writes the demo owner when missing or changed. */
export function demoOwnerSeed(config: Config, users: UserStore, log: Logger): Worker {
  return {
    name: "dashboard-demo-owner",
    async start() {
      const businessId = demoOwnerBusiness(config);
      if (!businessId) return;
      try {
        await seedDemoOwner(users, businessId);
      } catch (e) {
        log.warn("dashboard_demo_owner_not_seeded", { error: describeError(e) });
      }
    },
    stop: async () => {},
  };
}

export async function seedDemoOwner(users: UserStore, businessId: string): Promise<void> {
  const d = DEMO_OWNER;
  const existing = await users.get(d.id);
  if (!existing) {
    await users.create({ id: d.id, businessId, email: d.email, name: d.name, role: "owner", status: "active", password: DEMO_OWNER_PASSWORD_HASH, invitedBy: null, totpSecret: d.totpSecret });
    return;
  }
  // Keep what the banner advertises true after a demo user changed it.
  const same =
    existing.status === "active" && existing.role === "owner" && existing.totp?.secret === d.totpSecret && existing.password?.hash === DEMO_OWNER_PASSWORD_HASH.hash && existing.password.salt === DEMO_OWNER_PASSWORD_HASH.salt;
  if (same) return;
  await users.update(d.id, {
    businessId,
    email: d.email,
    role: "owner",
    status: "active",
    password: DEMO_OWNER_PASSWORD_HASH,
    totp: { secret: d.totpSecret, enabledAt: new Date().toISOString(), lastStep: existing.totp?.lastStep ?? 0 },
    lockedUntil: null,
  });
}
