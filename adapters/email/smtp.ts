/**
 * The SMTP EmailSender (nodemailer). One connection per message (no pool): payment-link e-mails are
 * rare and a pooled connection would sit idle. `timeoutMs` bounds connecting, the greeting and every
 * quiet period of the exchange. Failures become DependencyUnavailableError("email", …) whose message
 * names only nodemailer's error code and the SMTP reply code — never credentials, never the server's
 * reply text (which may echo addresses).
 */
import { createTransport } from "nodemailer";
import { DependencyUnavailableError, type EmailMessage, type EmailSender } from "../ports.ts";
import { describeError, type Logger } from "../../core/log.ts";
import { validateEmailMessage } from "./message.ts";

export interface SmtpEmailSenderOptions {
  host: string;
  port: number;
  /** TLS from the first byte (port 465). Default false: STARTTLS when the server offers it. */
  secure?: boolean;
  auth?: { user: string; pass: string };
  /** Sender address, e.g. "Gatehouse <no-reply@example.com>". */
  from: string;
  /** Connect, greeting and socket-inactivity deadline. Default 10 000 ms. */
  timeoutMs?: number;
  log?: Logger;
}

export interface SmtpEmailSender extends EmailSender {
  readonly kind: "smtp";
}

export function createSmtpEmailSender(options: SmtpEmailSenderOptions): SmtpEmailSender {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const transport = createTransport({
    host: options.host,
    port: options.port,
    secure: options.secure ?? false,
    ...(options.auth ? { auth: { user: options.auth.user, pass: options.auth.pass } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    logger: false,
    debug: false,
  });

  return {
    kind: "smtp",
    async send(message: EmailMessage): Promise<{ messageId: string }> {
      validateEmailMessage(message);
      try {
        const info = await transport.sendMail({
          from: options.from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          ...(message.html !== undefined ? { html: message.html } : {}),
        });
        options.log?.event("email_sent", { kind: "smtp", messageId: info.messageId, recipients: message.to.length });
        return { messageId: info.messageId };
      } catch (e) {
        const { code, responseCode } = _details(e);
        options.log?.warn("email_send_failed", { kind: "smtp", code, responseCode, error: describeError(e).name });
        throw new DependencyUnavailableError(
          "email",
          `SMTP delivery failed (${code}${responseCode !== null ? `, reply ${responseCode}` : ""})`,
          _failureClass(code, responseCode),
        );
      }
    },
  };
}

// --- Internal helpers ---

function _details(e: unknown): { code: string; responseCode: number | null } {
  const err = e as { code?: unknown; responseCode?: unknown } | null;
  const code = typeof err?.code === "string" && /^[A-Z0-9_]{1,40}$/.test(err.code) ? err.code : "ESEND";
  const responseCode = typeof err?.responseCode === "number" ? err.responseCode : null;
  return { code, responseCode };
}

function _failureClass(code: string, responseCode: number | null): "timeout" | "transport" | "server_error" {
  if (code === "ETIMEDOUT") return "timeout";
  if (responseCode === null && ["ECONNECTION", "ESOCKET", "EDNS", "ETLS", "ECONNREFUSED", "ECONNRESET"].includes(code)) return "transport";
  return responseCode === null ? "transport" : "server_error";
}
