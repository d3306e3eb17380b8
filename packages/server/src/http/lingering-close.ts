import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { defaults } from '../config/defaults.js';

/** What node:http calls to close a connection once a `Connection: close` answer is sent. */
type ClosingSocket = Socket & { destroySoon(): void };

const { maxMs, maxBytes } = defaults.lingeringClose;

/**
 * Lets an answer refused before its request's body was read (413, a 503 while shutting
 * down) reach a client that is still sending that body. node:http destroys the socket as
 * soon as the answer is written; the kernel then resets a connection with unread data,
 * and a client still writing sees EPIPE or ECONNRESET instead of the answer (RFC 9112
 * section 9.6 asks servers to close in stages for this reason). Here the server half-closes
 * and reads on, discarding, until the client closes its side (after reading the answer),
 * or for `maxMs`, or `maxBytes` more: nginx's lingering close.
 */
export function lingerOnClose(request: IncomingMessage): void {
  if (request.complete) return;
  const socket = request.socket as ClosingSocket;
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
