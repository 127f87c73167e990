/** Checks shared by every EmailSender before anything is composed or sent. */
import type { EmailMessage } from "../ports.ts";

/** Throws TypeError unless the message has at least one non-blank recipient, a subject and a text body. */
export function validateEmailMessage(m: EmailMessage): void {
  if (!Array.isArray(m?.to) || m.to.length === 0 || m.to.some((a) => typeof a !== "string" || a.trim() === "")) {
    throw new TypeError("an e-mail needs at least one recipient");
  }
  if (typeof m.subject !== "string" || typeof m.text !== "string") throw new TypeError("an e-mail needs a subject and a text body");
}
