/**
 * The e-mails the dashboard sends through the e-mail port (invitations, password resets), with
 * links built from `dashboard.linkOrigin` or, without it, the origin the request came to. A send
 * that fails is logged (never with the link: it carries a token) and reported to the caller.
 */
import type { RequestContext } from "../../core/context.ts";
import { describeError } from "../../core/log.ts";
import type { DashboardEnv } from "./env.ts";

/** An absolute link to `sub` under the dashboard's public path. */
export function absoluteLink(env: DashboardEnv, ctx: RequestContext, sub: string): string {
  const origin = env.config.linkOrigin ?? new URL(ctx.req.url).origin;
  return origin + env.paths.href(sub);
}

/** Sends one message; false when there is no e-mail port or it failed (logged). */
export async function sendMail(env: DashboardEnv, ctx: RequestContext, kind: string, to: string, subject: string, text: string): Promise<boolean> {
  if (!env.email) {
    env.kit.log.warn("dashboard_email_failed", { requestId: ctx.requestId, kind, error: "no e-mail port configured" });
    return false;
  }
  try {
    await env.email.send({ to: [to], subject, text });
    env.kit.log.event("dashboard_email_sent", { requestId: ctx.requestId, kind });
    return true;
  } catch (e) {
    env.kit.log.warn("dashboard_email_failed", { requestId: ctx.requestId, kind, error: describeError(e) });
    return false;
  }
}
