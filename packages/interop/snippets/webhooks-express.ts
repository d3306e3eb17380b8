import express from 'express';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

// LATCHKEY_WEBHOOK_SECRET: the whsec_… that `latchkey webhook create` printed
const webhook = new Webhook(process.env.LATCHKEY_WEBHOOK_SECRET ?? '');

interface LatchkeyEvent {
  type: string; // user.created, session.ended, …
  timestamp: string;
  data: Record<string, unknown>;
}

// Delivery is at least once: remember the webhook-ids you handled (in your database).
const handled = new Set<string>();
export const events: LatchkeyEvent[] = [];

export const app = express();

// The raw body: the signature covers the exact bytes sent, not a re-serialized object.
app.post('/webhooks/latchkey', express.raw({ type: 'application/json' }), (req, res) => {
  let event: LatchkeyEvent;
  try {
    event = webhook.verify(req.body, req.headers as Record<string, string>) as LatchkeyEvent;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return res.status(400).end();
    throw error;
  }
  const id = req.header('webhook-id') as string;
  if (!handled.has(id)) {
    handled.add(id);
    events.push(event); // your work here: update your users table, CRM, search index…
  }
  res.status(204).end(); // any 2xx within 15 s; anything else is retried with the same id
});
