/**
 * A TCP proxy on loopback in front of a real PostgreSQL or Redis that can be frozen: it
 * keeps every connection open but stops forwarding bytes, as a stopped process or a
 * frozen network does. Thawed, it delivers what it held back.
 */
import { type AddressInfo, createConnection, createServer, type Socket } from 'node:net';

export interface FrozenProxy {
  port: number;
  /** `target` with its host and port replaced by the proxy's. */
  url(target: string): string;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function frozenProxy(targetHost: string, targetPort: number): Promise<FrozenProxy> {
  let frozen = false;
  const held: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const forward = (from: Socket, to: Socket) =>
    from.on('data', (chunk) => {
      const send = () => to.write(chunk);
      if (frozen) held.push(send);
      else send();
    });
  const server = createServer((client) => {
    const upstream = createConnection(targetPort, targetHost);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url(target) {
      const url = new URL(target);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      for (const send of held.splice(0)) send();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
