import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../local/free-port.js';

/**
 * The port a child is told up front lies below the ephemeral range, where no outgoing connection on the machine can
 * take it between the choice and the child's listen, or while the child is started again on it.
 */

function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return 32_768;
  }
}

function listen(port: number): Promise<() => Promise<void>> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(() => new Promise((done) => server.close(() => done()))));
  });
}

describe('freePort', () => {
  it('gives ports below the ephemeral range that can be listened on, again after a stop', async () => {
    const low = Math.min(ephemeralLow(), 32_768);
    const ports = await Promise.all(Array.from({ length: 8 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(low);
      const stop = await listen(port);
      await stop();
      await (await listen(port))();
    }
  });
});
