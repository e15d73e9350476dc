import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports are chosen below this system's ephemeral range. Every outgoing connection on the machine takes its local port
 * from that range, and a listen on a port some connection holds fails: a port chosen there could be taken between the
 * choice and the child's listen, or while a stopped child is started again on it.
 */
const LOWEST = 10_000;
/** Linux's default start of the range; macOS's and Windows' start higher still. */
const EPHEMERAL_FROM = 32_768;
const TRIES = 50;

class NoFreePortError extends Error {
  override readonly name = 'NoFreePortError';
}

function ephemeralFrom(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return low !== undefined && Number.isInteger(low) ? Math.min(low, EPHEMERAL_FROM) : EPHEMERAL_FROM;
  } catch {
    return EPHEMERAL_FROM;
  }
}

function listenOn(port: number): Promise<number | undefined> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : undefined;
      server.close(() => done(bound));
    });
  });
}

/**
 * A loopback port nothing listens on right now, for a child process that must be told its port up front (and may be
 * started again on it). Where the ephemeral range leaves no room below it, any free port the system gives.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralFrom();
  for (let attempt = 0; below > LOWEST && attempt < TRIES; attempt++) {
    const port = await listenOn(LOWEST + randomInt(below - LOWEST));
    if (port !== undefined) return port;
  }
  const any = await listenOn(0);
  if (any === undefined) throw new NoFreePortError('no loopback port is free to listen on');
  return any;
}
