/**
 * Setup file of the unit project: unit tests need no network. A connection to anything but
 * loopback (a test's own server) fails the test that makes it, with a message that says where
 * the test belongs.
 */
import net from 'node:net';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

// Unit files share a worker (isolate: false) and this file runs before each of them: guard once.
const GUARDED = Symbol.for('pdf-service.no-network');

if (!Object.hasOwn(net.Socket.prototype, GUARDED)) {
  Object.defineProperty(net.Socket.prototype, GUARDED, { value: true });
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    const [first, second] = args;
    const options =
      typeof first === 'object' && first !== null ? (first as { host?: string; path?: string }) : undefined;
    // An IPC path (a string, or options with `path`) is not the network.
    const isTcp = options ? options.path === undefined : typeof first === 'number';
    const host = options ? (options.host ?? 'localhost') : typeof second === 'string' ? second : 'localhost';
    if (isTcp && !LOOPBACK.has(host)) {
      throw new Error(
        `unit tests need no network (a connection to ${host}): move this test to test/integration`,
      );
    }
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect;
}
