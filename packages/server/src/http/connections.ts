import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { defaults } from '../config/defaults.js';

/**
 * What node:http keeps on a connection's socket: `destroySoon`, called to close it once a
 * `Connection: close` answer is written, and `_httpMessage`, the answer being written
 * until it is flushed (node:http's own field, which graceful-shutdown libraries such as
 * http-terminator read).
 */
type HttpSocket = Socket & { destroySoon(): void; _httpMessage?: ServerResponse | null };

const { maxMs, maxBytes } = defaults.lingeringClose;

/**
 * Closes a connection in stages once its `Connection: close` answer is written (RFC 9112
 * section 9.6): node:http would destroy the socket at once, and the kernel resets a
 * connection with unread data, so a client still sending (a body over the limit, a
 * pipelined request) would see EPIPE or ECONNRESET, and maybe lose the answer. Here the
 * server half-closes and reads on, discarding what arrives unparsed (nothing after the last
 * answer is a request), until the client closes its side, or for `maxMs`, or `maxBytes`
 * more: nginx's lingering close.
 */
function lingerOnClose(socket: HttpSocket | null): void {
  if (!socket || socket.destroyed || Object.hasOwn(socket, 'destroySoon')) return;
  socket.destroySoon = () => {
    socket.end();
    const limit = socket.bytesRead + maxBytes;
    const timer = setTimeout(() => socket.destroy(), maxMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    // node:http's parser stops here: a 'data' listener of our own takes the socket back
    // from it, and its own listener goes, so nothing read from now on runs as a request.
    socket.removeAllListeners('data');
    socket.on('data', () => {
      if (socket.bytesRead > limit) socket.destroy();
    });
    socket.resume();
  };
}

/** For an answer refused before its request's body was read (a 413, say). */
export function lingerIfUnread(request: IncomingMessage): void {
  if (!request.complete) lingerOnClose(request.socket as HttpSocket);
}

/** Turns of the event loop (each with a poll phase) without a new connection: none queued. */
const QUIET_TURNS = 5;

/** An answer is being made or written (node:http detaches it once flushed). */
const inFlight = (socket: HttpSocket) => !!socket._httpMessage;
/** Neither an answer nor a request yet: a connection just made, whose request may be coming. */
const unused = (socket: HttpSocket) => !socket._httpMessage && socket.bytesRead === 0;
/** Closing in stages already (its last answer is written). */
const closing = (socket: HttpSocket) => socket.writableEnded;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
  const some = (test: (socket: HttpSocket) => boolean) => [...sockets].some(test);
  /** This answer is the connection's last: it says so, and the connection closes in stages. */
  const lastAnswer = (answer: ServerResponse) => {
    if (!answer.headersSent) answer.setHeader('connection', 'close');
    // A pipelined answer waiting for its turn has no socket yet: its connection's current
    // answer closes it.
    lingerOnClose(answer.socket as HttpSocket | null);
  };
  return {
    lastAnswer,
    /**
     * Makes every answer in flight the last of its connection. By `deadline` every
     * connection is closed (server.close() then has nothing to wait for):
     * 1. until nothing is in flight and no more connections come out of the kernel's queue
     *    (node:http takes a few per turn of the event loop, so one made before the signal
     *    may be taken only now; each such request is answered 503);
     * 2. a connection taken but with no request yet gets `firstRequestMs` to send one;
     * 3. kept-alive idle connections close; those closing in stages may finish.
     */
    async drain(deadline: number, firstRequestMs: number): Promise<void> {
      for (const socket of sockets) if (socket._httpMessage) lastAnswer(socket._httpMessage);
      let quiet = 0;
      let seen = accepted;
      while (quiet < QUIET_TURNS && Date.now() < deadline) {
        if (some(inFlight)) {
          quiet = 0;
          await sleep(10);
        } else {
          await new Promise((resolve) => setImmediate(resolve));
          quiet = accepted === seen ? quiet + 1 : 0;
        }
        seen = accepted;
      }
      const firstRequestBy = Math.min(deadline, Date.now() + firstRequestMs);
      while ((some(inFlight) || some(unused)) && Date.now() < firstRequestBy) await sleep(10);
      for (const socket of sockets) if (!inFlight(socket) && !closing(socket)) socket.destroy();
      while (sockets.size > 0 && Date.now() < deadline) await sleep(10);
      for (const socket of sockets) socket.destroy();
    },
  };
}
