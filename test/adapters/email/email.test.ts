import { test } from "uvu";
import * as assert from "uvu/assert";
import { once } from "node:events";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import { createFolderEmailSender } from "../../../adapters/email/folder.ts";
import { createSmtpEmailSender } from "../../../adapters/email/smtp.ts";
import { isDependencyUnavailableError } from "../../../adapters/ports.ts";

// --- a small RFC 5322 / MIME reader (enough to check what a mail client would show) ---

interface Part {
  headers: Map<string, string>;
  body: string;
}

function parseMessage(raw: string): Part {
  const text = raw.replace(/\r\n/g, "\n");
  const split = text.indexOf("\n\n");
  const head = split < 0 ? text : text.slice(0, split);
  const body = split < 0 ? "" : text.slice(split + 2);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\n[ \t]+/g, " ").split("\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new Error(`malformed header line: ${line}`);
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?utf-8\?([bq])\?([^?]*)\?=/gi, (_m, enc: string, data: string) =>
      enc.toLowerCase() === "b"
        ? Buffer.from(data, "base64").toString("utf8")
        : _qp(data.replace(/_/g, " ")),
    );
}

function _qp(s: string): string {
  const bytes: number[] = [];
  const src = s.replace(/=\n/g, "");
  for (let i = 0; i < src.length; i++) {
    if (src[i] === "=" && /^[0-9A-F]{2}$/i.test(src.slice(i + 1, i + 3))) {
      bytes.push(parseInt(src.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(src[i]!, "utf8"));
  }
  return Buffer.from(bytes).toString("utf8");
}

function decodedBody(part: Part): string {
  const cte = (part.headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  if (cte === "base64") return Buffer.from(part.body.replace(/\s+/g, ""), "base64").toString("utf8");
  if (cte === "quoted-printable") return _qp(part.body);
  return part.body;
}

/** The text and html a client would show. */
function contents(msg: Part): { text?: string; html?: string } {
  const type = msg.headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!type.toLowerCase().startsWith("multipart/") || !boundary) {
    return type.toLowerCase().startsWith("text/html") ? { html: decodedBody(msg) } : { text: decodedBody(msg) };
  }
  const out: { text?: string; html?: string } = {};
  const sections = msg.body.split(`--${boundary}`).slice(1);
  for (const section of sections) {
    if (section.startsWith("--")) break;
    Object.assign(out, contents(parseMessage(section.replace(/^\n/, ""))));
  }
  return out;
}

const trimEnd = (s: string | undefined): string | undefined => s?.replace(/\s+$/, "");

async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, "127.0.0.1");
  await once(s, "listening");
  const port = (s.address() as AddressInfo).port;
  s.close();
  await once(s, "close");
  return port;
}

interface Received {
  from: string;
  rcpt: string[];
  raw: string;
  user: string | undefined;
}

async function startSmtp(auth?: { user: string; pass: string }): Promise<{ port: number; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(a, _session, cb) {
      if (auth && a.username === auth.user && a.password === auth.pass) return cb(null, { user: a.username });
      return cb(new Error("Invalid username or password"));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          rcpt: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
          user: typeof session.user === "string" ? session.user : undefined,
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const MESSAGE = {
  to: ["ada@example.com", "Grace Hopper <grace@example.org>"],
  subject: "Your payment link — ₦1,500.00 due",
  text: "Hello Ada,\n\nPay here: https://pay.example.com/l/abc123\n\nThanks — Gatehouse",
  html: "<p>Hello Ada,</p><p><a href=\"https://pay.example.com/l/abc123\">Pay ₦1,500.00</a></p>",
};

// --- folder sender ---

test("folder: writes one parseable .eml (headers, text + html alternative) into a new folder", async () => {
  const root = await mkdtemp(join(tmpdir(), "gh-mail-"));
  try {
    const dir = join(root, "nested", "outbox");
    const sender = createFolderEmailSender({ dir, clock: () => Date.UTC(2025, 0, 15, 9, 30, 0) });
    assert.is(sender.kind, "folder");
    const { messageId } = await sender.send(MESSAGE);
    assert.match(messageId, /^<[^<>@\s]+@[^<>\s]+>$/);

    const files = await readdir(dir);
    assert.is(files.length, 1);
    assert.match(files[0]!, /\.eml$/);
    const raw = await readFile(join(dir, files[0]!), "utf8");
    assert.ok(/\r\n/.test(raw) && !/[^\r]\n/.test(raw), "CRLF line ends");
    const msg = parseMessage(raw);
    assert.is(msg.headers.get("from"), "Gatehouse <no-reply@gatehouse.local>");
    assert.is(msg.headers.get("to"), "ada@example.com, Grace Hopper <grace@example.org>");
    assert.is(decodeWords(msg.headers.get("subject")!), MESSAGE.subject);
    assert.is(msg.headers.get("message-id"), messageId);
    assert.is(new Date(msg.headers.get("date")!).getTime(), Date.UTC(2025, 0, 15, 9, 30, 0));
    assert.is(msg.headers.get("mime-version"), "1.0");
    assert.match(msg.headers.get("content-type")!, /^multipart\/alternative;/);
    const body = contents(msg);
    assert.is(trimEnd(body.text), MESSAGE.text);
    assert.is(trimEnd(body.html), MESSAGE.html);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test("folder: text-only message, one file per message, no header injection", async () => {
  const dir = await mkdtemp(join(tmpdir(), "gh-mail-"));
  try {
    const sender = createFolderEmailSender({ dir, from: "Payments <payments@example.com>" });
    const a = await sender.send({ to: ["x@example.com"], subject: "Plain", text: "just text" });
    const b = await sender.send({ to: ["y@example.com"], subject: "Hi\r\nBcc: evil@example.net", text: "second" });
    assert.is.not(a.messageId, b.messageId);
    const files = (await readdir(dir)).sort();
    assert.is(files.length, 2);
    const msgs = await Promise.all(files.map(async (f) => parseMessage(await readFile(join(dir, f), "utf8"))));
    const plain = msgs.find((m) => m.headers.get("message-id") === a.messageId)!;
    assert.match(plain.headers.get("content-type")!, /^text\/plain/);
    assert.is(plain.headers.get("from"), "Payments <payments@example.com>");
    assert.is(trimEnd(contents(plain).text), "just text");
    const injected = msgs.find((m) => m.headers.get("message-id") === b.messageId)!;
    assert.not.ok(injected.headers.has("bcc"), "a newline in the subject does not create a header");
    let refused = false;
    await sender.send({ to: [], subject: "x", text: "y" }).catch((e: unknown) => (refused = e instanceof TypeError));
    assert.ok(refused, "a message without recipients is refused");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("folder: an unwritable folder is DependencyUnavailableError", async () => {
  const root = await mkdtemp(join(tmpdir(), "gh-mail-"));
  try {
    const file = join(root, "not-a-dir");
    await writeFile(file, "x");
    const sender = createFolderEmailSender({ dir: join(file, "sub") });
    try {
      await sender.send({ to: ["x@example.com"], subject: "s", text: "t" });
      assert.unreachable("should fail");
    } catch (e) {
      assert.ok(isDependencyUnavailableError(e));
      assert.is((e as { dependency: string }).dependency, "email");
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

// --- SMTP sender against a real local SMTP server ---

test("smtp: a real SMTP server receives the recipients, subject and body", async () => {
  const smtp = await startSmtp();
  try {
    const sender = createSmtpEmailSender({ host: "127.0.0.1", port: smtp.port, from: "Gatehouse <no-reply@gatehouse.test>", timeoutMs: 3000 });
    assert.is(sender.kind, "smtp");
    const { messageId } = await sender.send(MESSAGE);
    assert.is(smtp.received.length, 1);
    const got = smtp.received[0]!;
    assert.is(got.from, "no-reply@gatehouse.test");
    assert.equal(got.rcpt, ["ada@example.com", "grace@example.org"]);
    const msg = parseMessage(got.raw);
    assert.is(decodeWords(msg.headers.get("subject")!), MESSAGE.subject);
    assert.is(msg.headers.get("message-id"), messageId);
    const body = contents(msg);
    assert.is(trimEnd(body.text), MESSAGE.text);
    assert.is(trimEnd(body.html), MESSAGE.html);
  } finally {
    await smtp.close();
  }
});

test("smtp: authenticates; a rejected login is DependencyUnavailableError without credentials", async () => {
  const smtp = await startSmtp({ user: "mailer-user", pass: "Sup3r-Secret-Pass" });
  try {
    const good = createSmtpEmailSender({
      host: "127.0.0.1",
      port: smtp.port,
      auth: { user: "mailer-user", pass: "Sup3r-Secret-Pass" },
      from: "no-reply@gatehouse.test",
      timeoutMs: 3000,
    });
    await good.send({ to: ["ada@example.com"], subject: "with auth", text: "ok" });
    assert.is(smtp.received.length, 1);
    assert.is(smtp.received[0]!.user, "mailer-user");

    const bad = createSmtpEmailSender({
      host: "127.0.0.1",
      port: smtp.port,
      auth: { user: "mailer-user", pass: "Wrong-Secret-Pass" },
      from: "no-reply@gatehouse.test",
      timeoutMs: 3000,
    });
    try {
      await bad.send({ to: ["ada@example.com"], subject: "s", text: "t" });
      assert.unreachable("should fail");
    } catch (e) {
      assert.ok(isDependencyUnavailableError(e), String(e));
      const err = e as Error & { dependency: string };
      assert.is(err.dependency, "email");
      assert.match(err.message, /EAUTH/);
      for (const needle of ["Wrong-Secret-Pass", "mailer-user", "Invalid username"]) assert.not.ok(err.message.includes(needle), needle);
    }
    assert.is(smtp.received.length, 1);
  } finally {
    await smtp.close();
  }
});

test("smtp: an unreachable port is DependencyUnavailableError (transport)", async () => {
  const port = await freePort();
  const sender = createSmtpEmailSender({
    host: "127.0.0.1",
    port,
    auth: { user: "u", pass: "Pa55-never-shown" },
    from: "no-reply@gatehouse.test",
    timeoutMs: 2000,
  });
  try {
    await sender.send({ to: ["ada@example.com"], subject: "s", text: "t" });
    assert.unreachable("should fail");
  } catch (e) {
    assert.ok(isDependencyUnavailableError(e), String(e));
    const err = e as Error & { dependency: string; failureClass: string };
    assert.is(err.dependency, "email");
    assert.is(err.failureClass, "transport");
    assert.not.ok(err.message.includes("Pa55-never-shown"));
  }
});

test.run();
