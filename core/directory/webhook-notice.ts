/**
 * The notice of an endpoint the gateway disabled after failing for too long: an e-mail to the
 * business's `contactEmail` (config) through the e-mail port when both exist, and always a warn log
 * line `webhook_endpoint_auto_disabled` (never the URL or a secret). The dashboard shows the same
 * fact from the endpoint (`disabled.reason` "failing").
 */
import type { EmailSender } from "../../adapters/ports.ts";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../log.ts";
import type { WebhookDisableNotice } from "./webhook-context.ts";

export function webhookNotice(config: Config, email: EmailSender | undefined, log: Logger): (n: WebhookDisableNotice) => Promise<void> {
  return async (n) => {
    const to = config.businesses.find((b) => b.id === n.businessId)?.contactEmail;
    const mailed = Boolean(to && email);
    log.warn("webhook_endpoint_auto_disabled", { businessId: n.businessId, endpointId: n.endpointId, failingSinceMs: n.failingSinceMs, lastError: n.lastError, mailed });
    if (!to || !email) return;
    const since = new Date(n.failingSinceMs).toISOString();
    await email.send({
      to: [to],
      subject: "A webhook endpoint was disabled",
      text: [
        `Every delivery to your webhook endpoint ${n.url} (${n.endpointId}) has failed since ${since}`,
        `(last error: ${n.lastError ?? "unknown"}), so Gatehouse disabled it on ${new Date(n.disabledAtMs).toISOString()}.`,
        "",
        "Fix the receiver, enable the endpoint again in the dashboard (Webhooks), and resend the deliveries you need from its delivery log.",
      ].join("\n"),
    });
  };
}
