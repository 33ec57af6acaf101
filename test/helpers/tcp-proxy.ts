import net from 'node:net';

/**
 * A TCP proxy in front of a local server that a test can cut (every connection through it drops,
 * and connecting is refused, as when the server is down) and restore: one client loses the server
 * while the others keep it.
 */
export class TcpProxy {
  private readonly open = new Set<net.Socket>();
  private readonly server: net.Server;
  private cutOff = false;
  port = 0;

  private constructor(private readonly target: { host: string; port: number }) {
    this.server = net.createServer((client) => {
      this.accept(client);
    });
  }

  /** A proxy to `target` (a port on 127.0.0.1, or a host and port) on a free local port. */
  static async start(target: number | { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(
      typeof target === 'number' ? { host: '127.0.0.1', port: target } : target,
    );
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    proxy.port = (proxy.server.address() as net.AddressInfo).port;
    return proxy;
  }

  private accept(client: net.Socket): void {
    if (this.cutOff) {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.target.port, this.target.host);
    const both = [client, upstream];
    for (const s of both) {
      this.open.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        this.open.delete(s);
        for (const other of both) other.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Drops every connection and stops listening (connecting is refused) until `restore`. */
  async cut(): Promise<void> {
    if (this.cutOff) return;
    this.cutOff = true;
    const closed = new Promise((resolve) => this.server.close(resolve));
    for (const s of this.open) s.destroy();
    await closed;
  }

  /** Listens again on the same port. */
  async restore(): Promise<void> {
    if (!this.cutOff) return;
    await new Promise<void>((resolve) => this.server.listen(this.port, '127.0.0.1', resolve));
    this.cutOff = false;
  }

  /** `url` with its host and port replaced by the proxy's. */
  url(url: string): string {
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(this.port);
    return proxied.toString();
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
