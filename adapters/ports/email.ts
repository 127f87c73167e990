/** The e-mail port (re-exported by adapters/ports.ts). */

export interface EmailMessage {
  to: string[];
  subject: string;
  text: string;
  html?: string;
}

export interface EmailSender {
  readonly kind: string;
  send(message: EmailMessage): Promise<{ messageId: string }>;
}
