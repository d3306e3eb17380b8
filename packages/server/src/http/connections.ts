import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { defaults } from '../config/defaults.js';

/**
 * What node:http keeps on a connection's socket: `destroySoon`, called to close it once a
 * `Connection: close` answer is written, and `_httpMessage`, the answer being written
 * (node:http's own field, which graceful-shutdown libraries such as http-terminator read).
 */
type HttpSocket = Socket & { destroySoon(): void; _httpMessage?: ServerResponse | null };

const { maxMs, maxBytes } = defaults.lingeringClose;

/**
 * Closes a connection in stages once its `Connection: close` answer is written (RFC 9112
 * section 9.6): node:http would destroy the socket at once, and the kernel resets a
 * connection with unread data, so a client still sending (a body over the limit, a
 * pipelined request) would see EPIPE or ECONNRESET, and maybe lose the answer. Here the
 * server half-closes and reads on, discarding, until the client closes its side (after
 * reading the answer), or for `maxMs`, or `maxBytes` more: nginx's lingering close.
 */
function lingerOnClose(socket: HttpSocket): void {
  if (socket.destroyed || Object.hasOwn(socket, 'destroySoon')) return;
  socket.destroySoon = () => {
    // node:http has dumped the request: what the client still sends is parsed and dropped.
    socket.end();
    const limit = socket.bytesRead + maxBytes;
    const timer = setTimeout(() => socket.destroy(), maxMs);
    timer.unref();
    socket.on('data', () => {
      if (socket.bytesRead > limit) socket.destroy();
    });
    socket.once('close', () => clearTimeout(timer));
  };
}

/** For an answer refused before its request's body was read (a 413, say). */
export function lingerIfUnread(request: IncomingMessage): void {
  if (!request.complete) lingerOnClose(request.socket as HttpSocket);
}

/** Turns of the event loop (each with a poll phase) without a new connection: none queued. */
const QUIET_TURNS = 5;

const inFlight = (socket: HttpSocket) => !!socket._httpMessage && !socket._httpMessage.finished;

/**
 * The connections of a server, for a shutdown that answers everything in flight: each
 * answer still to come says `Connection: close`, and its connection closes in stages after
 * it.
 */
export function trackConnections(server: Server) {
  const sockets = new Set<HttpSocket>();
  let accepted = 0;
  server.on('connection', (socket: HttpSocket) => {
    accepted++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  /** This answer is the connection's last: it says so, and the connection closes in stages. */
  const lastAnswer = (answer: ServerResponse) => {
    if (!answer.headersSent) answer.setHeader('connection', 'close');
    lingerOnClose(answer.socket as HttpSocket);
  };
  return {
    lastAnswer,
    /**
     * Makes every answer in flight the last of its connection and waits until none is in
     * flight and the kernel holds no more queued connections (or `deadline`); then closes
     * the idle connections: they carry nothing, and those closing in stages finish on their
     * own (server.close() waits for them).
     */
    async drain(deadline: number): Promise<void> {
      for (const socket of sockets) if (socket._httpMessage) lastAnswer(socket._httpMessage);
      // node:http takes queued connections a few per turn of the event loop: a connection
      // made before the signal may be taken only now. Each is answered (503 once it is
      // read), so the listener stays open until a few turns pass with nothing new.
      let quiet = 0;
      let seen = accepted;
      while (quiet < QUIET_TURNS && Date.now() < deadline) {
        if ([...sockets].some(inFlight)) {
          quiet = 0;
          await new Promise((resolve) => setTimeout(resolve, 10));
        } else {
          await new Promise((resolve) => setImmediate(resolve));
          quiet = accepted === seen ? quiet + 1 : 0;
        }
        seen = accepted;
      }
      for (const socket of sockets)
        if (!inFlight(socket) && !socket.writableEnded) socket.destroy();
    },
  };
}
