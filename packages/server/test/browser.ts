/**
 * Browser-test support: the machine's Chromium (never a downloaded one), a real SMTP
 * receiver, and a "caller app" on another origin. Under CI=true a missing Chromium fails
 * the run; elsewhere the browser suites skip with a one-line notice.
 */
import { createHash, randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { SMTPServer } from 'smtp-server';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CI = process.env.CI === 'true';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function chromiumPresent(): boolean {
  if (executable(CHROMIUM_PATH)) return true;
  if (CI) throw new Error(`Chromium is missing at ${CHROMIUM_PATH}, and CI=true requires it`);
  console.warn(
    `notice: Chromium not found at ${CHROMIUM_PATH}; skipping the browser suites (CI=true makes this a failure)`,
  );
  return false;
}

export const HAVE_CHROMIUM = chromiumPresent();

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** An RFC 7636 S256 pair: a 43-character base64url verifier and its challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface ReceivedMail {
  to: string;
  subject: string;
  /** The decoded body. */
  text: string;
}

function decodeQuotedPrintable(body: string): string {
  const bytes = Buffer.from(body.replace(/=\r?\n/g, ''), 'latin1');
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const hex = bytes.toString('latin1', i + 1, i + 3);
    if (bytes[i] === 0x3d && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      out.push(Number.parseInt(hex, 16));
      i += 2;
    } else out.push(bytes[i] as number);
  }
  return Buffer.from(out).toString('utf8');
}

/** A single-part text mail as nodemailer writes it: 7bit, quoted-printable or base64. */
export function parseMail(to: string, raw: string): ReceivedMail {
  const split = raw.search(/\r?\n\r?\n/);
  const head = raw.slice(0, split).replace(/\r?\n[ \t]+/g, ' ');
  const body = raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const header = (name: string) =>
    new RegExp(`^${name}:[ \\t]*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const text =
    encoding === 'quoted-printable'
      ? decodeQuotedPrintable(body)
      : encoding === 'base64'
        ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
        : body;
  return { to, subject: header('Subject'), text };
}

/** A real SMTP server on loopback that keeps every message it receives. */
export class MailCatcher {
  readonly mails: ReceivedMail[] = [];
  readonly #waiters = new Set<() => void>();
  readonly #server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData: (stream, session, callback) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('latin1');
        for (const rcpt of session.envelope.rcptTo) this.mails.push(parseMail(rcpt.address, raw));
        for (const wake of this.#waiters) wake();
        callback();
      });
    },
  });
  port = 0;

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** The first mail to `to` received after `skip` earlier ones to that address. */
  async waitFor(to: string, skip = 0, timeoutMs = 10_000): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.mails.filter((m) => m.to === to)[skip];
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no mail to ${to} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.#waiters.add(wake);
      });
    }
  }

  count(to: string): number {
    return this.mails.filter((m) => m.to === to).length;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** The one `{base}/{path}?token=…` link in a mail. */
export function linkIn(mail: ReceivedMail, base: string, path: string): string {
  const escaped = `${base}/${path}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const links = mail.text.match(new RegExp(`${escaped}\\?token=[A-Za-z0-9_-]+`, 'g')) ?? [];
  if (links.length !== 1) throw new Error(`expected one ${path} link in:\n${mail.text}`);
  return links[0] as string;
}

/**
 * The caller's own site on another origin: `http://localhost:<port>`, while the auth
 * server is `http://127.0.0.1:<port>`. It records the paths and queries it was asked for.
 */
export interface CallerApp {
  origin: string;
  /** Every request line the caller's server saw (a fragment never reaches a server). */
  requests: string[];
  close(): Promise<void>;
}

export async function startCallerApp(): Promise<CallerApp> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url?.split('?')[0] === '/callback') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><html lang="en"><title>Caller</title><h1>Signed in</h1></html>');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface AxeViolation {
  id: string;
  impact?: string | null;
  help: string;
  nodes: { target: string[] }[];
}
declare const window: { axe: { run(): Promise<{ violations: AxeViolation[] }> } };

/** Runs axe-core (its source in `axe`) on each page visited; lists serious and critical violations. */
export async function seriousViolations(
  page: Page,
  visits: [string, () => Promise<unknown>][],
  axe: string,
): Promise<string[]> {
  const found: string[] = [];
  for (const [name, visit] of visits) {
    await visit();
    await page.addScriptTag({ content: axe });
    const violations = await page.evaluate(() => window.axe.run().then((r) => r.violations));
    for (const v of violations) {
      if (v.impact === 'serious' || v.impact === 'critical') {
        found.push(
          `${name}: [${v.impact}] ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
        );
      }
    }
  }
  return found;
}
