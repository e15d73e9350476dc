/** The host (and port) a failure line names, as Go, Node, Python, Java and PostgreSQL clients write them. */
export const TARGET_PATTERNS: readonly RegExp[] = [
  /dial tcp: lookup ([a-z0-9][a-z0-9.-]*)(?: on [^:]+:53)?: (?:no such host|server misbehaving|i\/o timeout)/i,
  /dial tcp ([0-9.]+|[a-z0-9][a-z0-9.-]*):(\d+): (?:connect: )?(?:connection refused|i\/o timeout|no route to host|connection reset)/i,
  /getaddrinfo (?:EAI_AGAIN|ENOTFOUND) ([a-z0-9][a-z0-9.-]*)/i,
  /connect (?:ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH) ([0-9.]+|[a-z0-9][a-z0-9.-]*):(\d+)/i,
  /could not translate host name "([^"]+)"/i,
  /UnknownHostException: ([a-z0-9][a-z0-9.-]*)/i,
  // libpq 14 and later (psql, psycopg, pg_isready): `connection to server at "db" (10.96.0.20), port 5432 failed: …`.
  /connection to server at "([a-z0-9][a-z0-9.-]*)"(?: \([^)]*\))?, port (\d+) failed/i,
  // Python requests / urllib3: `HTTPConnectionPool(host='orders', port=8080): Max retries exceeded …`.
  /HTTPS?ConnectionPool\(host='([a-z0-9][a-z0-9.-]*)', port=(\d+)\)/i,
  // …and StackExchange.Redis: `UnableToConnect on redis-cart:6379/Interactive`.
  /(?:connect to|connecting to|reach|Failed to connect to|Connection to|UnableToConnect on) ([a-z0-9][a-z0-9.-]*):(\d+)/i,
  /https?:\/\/([a-z0-9][a-z0-9.-]*)(?::(\d+))?\S*[^a-z0-9]+(?:.*\b(?:refused|timeout|timed out|503|502|504|unavailable|reset)\b)/i,
];

export interface DependencyFailure {
  host: string;
  port?: number;
  line: string;
  kind: 'dns' | 'connect';
}

export function parseDependencyFailure(line: string): DependencyFailure | undefined {
  for (const pattern of TARGET_PATTERNS) {
    const m = pattern.exec(line);
    if (!m?.[1]) continue;
    const host = m[1].toLowerCase().replace(/\.$/, '');
    const port = m[2] ? Number(m[2]) : undefined;
    const dns =
      /no such host|EAI_AGAIN|ENOTFOUND|could not translate|UnknownHost|server misbehaving|lookup |name or service not known|temporary failure in name resolution|failed to resolve|NameResolutionError/i.test(
        line,
      );
    return { host, ...(port ? { port } : {}), line, kind: dns ? 'dns' : 'connect' };
  }
  return undefined;
}
