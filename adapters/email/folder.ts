/**
 * The development EmailSender: every message becomes one RFC 5322 `.eml` file in a folder, which a
 * developer opens with any mail client. The message is composed by nodemailer (the same composer the
 * SMTP sender uses), so headers are encoded and folded correctly: From, To, Subject, Date, Message-ID,
 * MIME-Version, and a text/plain part (plus a text/html alternative when `html` is given). CRLF line ends.
 */
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createTransport } from "nodemailer";
import { DependencyUnavailableError, type EmailMessage, type EmailSender } from "../ports.ts";
import { validateEmailMessage } from "./message.ts";

export interface FolderEmailSenderOptions {
  /** Folder the `.eml` files are written to; created when missing. */
  dir: string;
  /** Sender address. Default "Gatehouse <no-reply@gatehouse.local>". */
  from?: string;
  /** Epoch milliseconds, for the Date header and file names. Default Date.now. */
  clock?: () => number;
}

export interface FolderEmailSender extends EmailSender {
  readonly kind: "folder";
  readonly dir: string;
}

export function createFolderEmailSender(options: FolderEmailSenderOptions): FolderEmailSender {
  const dir = options.dir;
  const from = options.from ?? "Gatehouse <no-reply@gatehouse.local>";
  const clock = options.clock ?? Date.now;
  const composer = createTransport({ streamTransport: true, buffer: true, newline: "windows" });
  let ready: Promise<unknown> | null = null;

  return {
    kind: "folder",
    dir,
    async send(message: EmailMessage): Promise<{ messageId: string }> {
      validateEmailMessage(message);
      const now = clock();
      const info = await composer.sendMail({
        from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.html !== undefined ? { html: message.html } : {}),
        date: new Date(now),
      });
      const raw = info.message;
      if (!Buffer.isBuffer(raw)) throw new Error("the mail composer returned no buffer");
      const file = join(dir, `${new Date(now).toISOString().replace(/[:.]/g, "-")}-${randomBytes(4).toString("hex")}.eml`);
      try {
        ready ??= mkdir(dir, { recursive: true }).catch((e: unknown) => {
          ready = null;
          throw e;
        });
        await ready;
        await writeFile(file, raw, { flag: "wx" });
      } catch (e) {
        throw new DependencyUnavailableError("email", `writing the .eml file failed (${_code(e)})`, "transport");
      }
      return { messageId: info.messageId };
    },
  };
}

// --- Internal helpers ---

function _code(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Z0-9_]{1,40}$/.test(code) ? code : e instanceof Error ? e.name : "error";
}
