import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Kysely } from 'kysely';
import type nodemailer from 'nodemailer';
import type { MailRow, Schema } from '../../storage/index.js';

export interface Mail {
  tenantId: string | null;
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

export interface MailerOptions {
  /** SMTP_URL; without it mail goes to the dev outbox. */
  smtpUrl: string | undefined;
  from: string;
  db: Kysely<Schema>;
  /** Told of each outbox mail (recipient and subject only: the body holds a one-time link). */
  log: (message: string, fields: Record<string, unknown>) => void;
}

/** nodemailer over SMTP_URL, or the dev outbox (a table the admin area and tests read). */
export function createMailer(options: MailerOptions): Mailer {
  if (options.smtpUrl) {
    // Loaded only when mail goes over SMTP: it is a fifth of an idle server's heap.
    const { createTransport } = createRequire(import.meta.url)('nodemailer') as typeof nodemailer;
    const transport = createTransport(options.smtpUrl);
    return {
      async send(mail) {
        await transport.sendMail({
          from: options.from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
        });
      },
    };
  }
  return {
    async send(mail) {
      await options.db
        .insertInto('mail_outbox')
        .values({
          id: randomUUID(),
          tenant_id: mail.tenantId,
          recipient: mail.to,
          subject: mail.subject,
          body: mail.text,
          created_at: Date.now(),
        })
        .execute();
      options.log('mail kept in the dev outbox (no SMTP_URL)', {
        to: mail.to,
        subject: mail.subject,
      });
    },
  };
}

/** The dev outbox, newest first. */
export async function readOutbox(
  db: Kysely<Schema>,
  options: { to?: string; limit?: number; tenantIds?: string[] } = {},
): Promise<MailRow[]> {
  if (options.tenantIds?.length === 0) return [];
  let query = db
    .selectFrom('mail_outbox')
    .selectAll()
    .orderBy('created_at', 'desc')
    .limit(options.limit ?? 50);
  if (options.to) query = query.where('recipient', '=', options.to);
  if (options.tenantIds) query = query.where('tenant_id', 'in', options.tenantIds);
  return query.execute();
}
