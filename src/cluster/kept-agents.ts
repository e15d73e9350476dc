import { createHash } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

/**
 * The connections a reader keeps open between its requests. @kubernetes/client-node hands every request a new agent
 * built from the kubeconfig's TLS material, so every read opened a new connection: a TCP handshake, and against a
 * real API server a TLS one too, for each page of each list. A reader keeps one keep-alive agent per distinct set of
 * that material instead (it changes only when a credential plugin hands out a new client certificate), and the
 * client's fresh agent goes unused. Proxy agents are used as they come: their options are not plain TLS material.
 *
 * An idle connection is closed after FREE_SOCKET_MS, before the servers' own idle timeouts (Node's HTTP server: 5 s;
 * the API server's: longer), so a request seldom meets a connection the server has just closed; one that does is
 * sent again on a new connection (bounded-get.ts).
 */

const FREE_SOCKET_MS = 4_000;
/**
 * Reads in flight at once to one server; more wait for a free connection. A triage round starts all its reads
 * together, dozens on a large namespace, and a connection each cost more than the wait: kubectl sends all of its
 * reads over one HTTP/2 connection.
 */
const MAX_SOCKETS = 8;
/** A credential plugin rotating client certificates replaces entries; a reader never needs many. */
const MAX_KEPT = 4;
/** What decides whom a connection talks to and as whom; everything else in an agent's options is Node's default. */
const IDENTITY = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

export class KeptAgents {
  private readonly kept = new Map<string, HttpAgent>();

  /** The kept agent with the same identity as `fresh`; `fresh` itself when it is not a plain HTTP(S) agent. */
  for(fresh: HttpAgent | undefined): HttpAgent | undefined {
    if (fresh === undefined) return undefined;
    const Kind =
      fresh.constructor === HttpsAgent ? HttpsAgent : fresh.constructor === HttpAgent ? HttpAgent : undefined;
    if (Kind === undefined) return fresh;
    const options = (fresh as HttpAgent & { options: Record<string, unknown> }).options;
    const key = identityOf(Kind.name, options);
    const found = this.kept.get(key);
    if (found) return found;
    const agent = new Kind({ ...options, keepAlive: true, timeout: FREE_SOCKET_MS, maxSockets: MAX_SOCKETS });
    if (this.kept.size >= MAX_KEPT) {
      const [oldest, retired] = this.kept.entries().next().value as [string, HttpAgent];
      this.kept.delete(oldest);
      retired.destroy();
    }
    this.kept.set(key, agent);
    return agent;
  }
}

/** A digest, so key material is not kept twice in memory as a map key. */
function identityOf(kind: string, options: Record<string, unknown>): string {
  const hash = createHash('sha256').update(kind);
  for (const name of IDENTITY) {
    const value = options[name];
    hash.update(`\0${name}=`);
    for (const part of Array.isArray(value) ? value : [value]) {
      if (part === undefined) hash.update('\0u');
      else if (typeof part === 'string' || Buffer.isBuffer(part)) hash.update('\0v').update(part);
      else hash.update(`\0j${JSON.stringify(part)}`);
    }
  }
  return hash.digest('base64');
}
