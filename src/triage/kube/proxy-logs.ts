import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import { scrubText } from '../scrub.js';
import { clip, MINUTE } from './events.js';
import { type ContainerView, containers } from './pods.js';

/**
 * The data plane's own account of a failing request: the OpenShift router's HAProxy log and the ingress-nginx
 * controller's access and controller logs, parsed from their real formats. An access line says which backend
 * a request went to, which server answered (or `<NOSRV>`: none), how long each phase took and how the session
 * ended; that is what an engineer reads first when a Route or an Ingress answers 5xx.
 */

/** Only lines this close to "now" describe the current incident; older ones are history. */
const TRAFFIC_WINDOW_MS = 30 * MINUTE;

const MONTHS: Readonly<Record<string, number>> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11,
};

/** `17/Feb/2026:14:22:47.356` (HAProxy) or `12/Mar/2026:09:48:44 +0000` (nginx `$time_local`). */
function parseClfDate(text: string): Date | undefined {
  const m =
    /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?: ([+-])(\d{2})(\d{2}))?$/.exec(
      text.trim(),
    );
  if (!m) return undefined;
  const month = MONTHS[m[2] as string];
  if (month === undefined) return undefined;
  const ms = m[7] ? Number(m[7].padEnd(3, '0').slice(0, 3)) : 0;
  let t = Date.UTC(Number(m[3]), month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]), ms);
  if (m[8]) t -= (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10])) * 60_000;
  return new Date(t);
}

/** klog's `W0312 09:49:24.220953`: no year, so the year of "now" (or the one before, for a date after "now"). */
export function parseKlogDate(text: string, now: Date): Date | undefined {
  const m = /^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?/.exec(text);
  if (!m) return undefined;
  const at = (year: number) =>
    Date.UTC(year, Number(m[1]) - 1, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), 0);
  let t = at(now.getUTCFullYear());
  if (t > now.getTime() + 24 * 60 * MINUTE) t = at(now.getUTCFullYear() - 1);
  return new Date(t);
}

// --- HAProxy (OpenShift router) -------------------------------------------------------------------------------

export interface HaproxyAccess {
  kind: 'access';
  at?: Date;
  backend: string;
  /** The server that took the request; undefined for `<NOSRV>` (no server was available). */
  server?: string;
  /** Milliseconds: time to receive the request, in queue, to connect, to the response headers, in total. -1: never. */
  timers: { request: number; queue: number; connect: number; response: number; total: number };
  status: number;
  /** The four-character session state at disconnection, e.g. `SC--`, `sH--`, `--VN`. */
  termination: string;
  request?: string;
  /** The line as quoted in evidence: from the accept date on (client addresses say nothing about the fault). */
  quote: string;
}

interface HaproxyServerDown {
  kind: 'server-down';
  at?: Date;
  backend: string;
  server: string;
  /** `Layer4 connection problem`, `Layer6 invalid response`, `Layer7 wrong status`… */
  reason: string;
  info?: string;
  quote: string;
}

interface HaproxyNoServer {
  kind: 'no-server';
  at?: Date;
  backend: string;
  quote: string;
}

interface HaproxyServerUp {
  kind: 'server-up';
  at?: Date;
  backend: string;
  server: string;
  quote: string;
}

export type HaproxyEntry = HaproxyAccess | HaproxyServerDown | HaproxyServerUp | HaproxyNoServer;

/** `<ISO time> <host> <tag> haproxy[pid]: ` in front of every line a router writes to its log sidecar or syslog. */
const SYSLOG_PREFIX =
  /^(?:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))\s+)?(?:\S+\s+)*?haproxy\[\d+\]:\s*/;

/** HAProxy's `option httplog` line (the router's default when access logging is on). */
const HTTPLOG =
  /^(?:\S+:\d+ )?\[([^\]]+)\] (\S+) (\S+)\/(\S+) (-?\d+)\/(-?\d+)\/(-?\d+)\/(-?\d+)\/\+?(-?\d+) (\d{3}) \+?\d+ \S+ \S+ ([A-Za-z-]{4}) \S+ \S+(?: \{[^}]*\})*(?: "([^"]*)")?\s*$/;
const SERVER_DOWN =
  /^(?:Health check for )?(?:backup )?[Ss]erver (\S+)\/(\S+) is DOWN, reason: ([^,]+)(?:, info: "([^"]*)")?/;
const SERVER_UP = /^(?:Health check for )?(?:backup )?[Ss]erver (\S+)\/(\S+) is UP\b/;
const NO_SERVER = /^backend (\S+) has no server available!/;

export function parseHaproxyLine(raw: string): HaproxyEntry | undefined {
  const line = raw.trim();
  const prefix = SYSLOG_PREFIX.exec(line);
  const body = prefix ? line.slice(prefix[0].length) : line;
  const stamped = prefix?.[1] ? new Date(prefix[1]) : undefined;
  const stamp = stamped && !Number.isNaN(stamped.getTime()) ? stamped : undefined;
  const access = HTTPLOG.exec(body);
  if (access) {
    const at = stamp ?? parseClfDate(access[1] as string);
    const server = access[4] as string;
    return {
      kind: 'access',
      ...(at ? { at } : {}),
      backend: access[3] as string,
      ...(server === '<NOSRV>' ? {} : { server }),
      timers: {
        request: Number(access[5]),
        queue: Number(access[6]),
        connect: Number(access[7]),
        response: Number(access[8]),
        total: Number(access[9]),
      },
      status: Number(access[10]),
      termination: access[11] as string,
      ...(access[12] ? { request: access[12] } : {}),
      quote: body.slice(body.indexOf('[')),
    };
  }
  const down = SERVER_DOWN.exec(body);
  if (down) {
    return {
      kind: 'server-down',
      ...(stamp ? { at: stamp } : {}),
      backend: down[1] as string,
      server: down[2] as string,
      reason: (down[3] as string).trim(),
      ...(down[4] ? { info: down[4] } : {}),
      quote: body,
    };
  }
  const up = SERVER_UP.exec(body);
  if (up) {
    return {
      kind: 'server-up',
      ...(stamp ? { at: stamp } : {}),
      backend: up[1] as string,
      server: up[2] as string,
      quote: body,
    };
  }
  const none = NO_SERVER.exec(body);
  if (none) return { kind: 'no-server', ...(stamp ? { at: stamp } : {}), backend: none[1] as string, quote: body };
  return undefined;
}

export type RouteTermination = 'none' | 'edge' | 'reencrypt' | 'passthrough';

/** The router names each Route's backend `be_http:<ns>:<route>` (plain), `be_edge_http:`, `be_secure:` or `be_tcp:`. */
export function routeOfBackend(
  backend: string,
): { namespace: string; name: string; termination: RouteTermination } | undefined {
  const m = /^be_(http|edge_http|secure|tcp):([^:]+):(.+)$/.exec(backend);
  if (!m) return undefined;
  const termination: Record<string, RouteTermination> = {
    http: 'none',
    edge_http: 'edge',
    secure: 'reencrypt',
    tcp: 'passthrough',
  };
  return { namespace: m[2] as string, name: m[3] as string, termination: termination[m[1] as string] ?? 'none' };
}

function routeBackendNames(namespace: string, route: string): string[] {
  return ['http', 'edge_http', 'secure', 'tcp'].map((p) => `be_${p}:${namespace}:${route}`);
}

/** The router's server names are `pod:<pod>:<service>:<port name>:<ip>:<port>`. */
export function serverPod(server: string | undefined): string | undefined {
  return server?.startsWith('pod:') ? server.split(':')[1] : undefined;
}

/**
 * What the first two characters of a termination state mean, per HAProxy's "Session state at disconnection".
 * Only the server-side and proxy-side endings matter here: client aborts (`C`, `c`) are not the backend's fault.
 */
export function describeTermination(state: string, noServer: boolean): string | undefined {
  const cause = state[0];
  const phase = state[1];
  if (cause === 'S' && phase === 'C')
    return noServer ? 'no server was available' : 'the server refused or reset the connection';
  if (cause === 's' && phase === 'C') return 'connecting to the server timed out';
  if (cause === 's' && phase === 'H') return 'the server sent no response headers before the timeout';
  if (cause === 's' && phase === 'D') return 'the server stopped sending data before the timeout';
  if (cause === 'S' && phase === 'H')
    return 'the server closed the connection or sent an invalid response before its headers';
  if (cause === 'S' && phase === 'D') return 'the server aborted while sending data';
  if (cause === 'P' && phase === 'H') return 'the router rejected the server response';
  if (cause === 's' && phase === 'Q') return 'the request timed out waiting in the queue for a server';
  if (cause === 'D') return 'the server went down during the request';
  return undefined;
}

/** A client-side ending: the client aborted or timed out; says nothing about the backend. */
export function clientSide(state: string): boolean {
  return state[0] === 'C' || state[0] === 'c';
}

// --- ingress-nginx --------------------------------------------------------------------------------------------

export interface NginxAccess {
  kind: 'access';
  at?: Date;
  status: number;
  request: string;
  /** `$proxy_upstream_name`: `<namespace>-<service>-<port>`. */
  upstream: string;
  /** `$upstream_addr`: `-` when no upstream was tried. */
  upstreamAddr: string;
  upstreamStatus: string;
  quote: string;
}

export interface NginxNoEndpoints {
  kind: 'no-endpoints';
  at?: Date;
  namespace: string;
  service: string;
  quote: string;
}

export interface NginxIgnored {
  kind: 'ignored';
  at?: Date;
  namespace: string;
  ingress: string;
  error: string;
  quote: string;
}

/** nginx's error log: connecting to an upstream server timed out (`upstream timed out (110: …) while connecting`). */
export interface NginxConnectTimeout {
  kind: 'connect-timeout';
  at?: Date;
  /** The upstream server tried, as nginx's `upstream: "http://10.244.1.19:3000/"` names it. */
  address: string;
  port: number;
  quote: string;
}

export type NginxEntry = NginxAccess | NginxNoEndpoints | NginxIgnored | NginxConnectTimeout;

/** ingress-nginx's default `log-format-upstream`. */
const NGINX_ACCESS =
  /^\S+ - \S+ \[([^\]]+)\] "([^"]*)" (\d{3}) \d+ "[^"]*" "[^"]*" \d+ [\d.]+ \[([^\]]*)\] \[[^\]]*\] (\S+(?:, \S+)*) (\S+(?:, \S+)*) (\S+(?:, \S+)*) (\S+(?:, \S+)*) \S+\s*$/;
const NGINX_NO_ENDPOINTS = [
  /Service "([^"/]+)\/([^"]+)" does not have any active Endpoint/,
  /service ([^\s/]+)\/(\S+) does not have any active endpoints/i,
];
const NGINX_CONNECT_TIMEOUT =
  /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2}) \[error\] .*?upstream timed out \(\d+: [^)]*\) while connecting to upstream.*?upstream: "[a-z]+:\/\/(\[[^\]]+\]|[^":/]+):(\d+)/;
const NGINX_IGNORED = /"Ignoring ingress[^"]*" ingress="([^"/]+)\/([^"]+)"(?:.*? error="((?:[^"\\]|\\.)*)")?/;

export function parseNginxLine(raw: string, now: Date): NginxEntry | undefined {
  const line = raw.trim();
  const access = NGINX_ACCESS.exec(line);
  if (access) {
    const at = parseClfDate(access[1] as string);
    return {
      kind: 'access',
      ...(at ? { at } : {}),
      status: Number(access[3]),
      request: access[2] as string,
      upstream: access[4] as string,
      upstreamAddr: access[5] as string,
      upstreamStatus: access[8] as string,
      quote: `[${access[1]}] "${access[2]}" ${access[3]} [${access[4]}] upstream ${access[5]} status ${access[8]}`,
    };
  }
  const timeout = NGINX_CONNECT_TIMEOUT.exec(line);
  if (timeout) {
    // nginx writes its error log in the container's local time, UTC in the controller's image.
    const [y, mo, d, h, mi, sec] = timeout.slice(1, 7).map(Number) as [number, number, number, number, number, number];
    return {
      kind: 'connect-timeout',
      at: new Date(Date.UTC(y, mo - 1, d, h, mi, sec)),
      address: (timeout[7] as string).replace(/^\[|\]$/g, ''),
      port: Number(timeout[8]),
      quote: line,
    };
  }
  const at = parseKlogDate(line, now);
  for (const pattern of NGINX_NO_ENDPOINTS) {
    const m = pattern.exec(line);
    if (m) {
      return {
        kind: 'no-endpoints',
        ...(at ? { at } : {}),
        namespace: m[1] as string,
        service: m[2] as string,
        quote: line,
      };
    }
  }
  const ignored = NGINX_IGNORED.exec(line);
  if (ignored) {
    return {
      kind: 'ignored',
      ...(at ? { at } : {}),
      namespace: ignored[1] as string,
      ingress: ignored[2] as string,
      error: (ignored[3] ?? '').replace(/\\"/g, '"'),
      quote: line,
    };
  }
  return undefined;
}

/** `$proxy_upstream_name` for an Ingress backend: `<namespace>-<service>-<port number or name>`. */
export function nginxUpstreamName(namespace: string, service: string, port: string): string {
  return `${namespace}-${service}-${port}`;
}

// --- where the data plane runs --------------------------------------------------------------------------------

/** OpenShift router pods, labelled by the ingress operator with the IngressController they serve. */
function routerPods(ctx: AnalyzerContext, routerName?: string): KubeObject[] {
  const label = 'ingresscontroller.operator.openshift.io/deployment-ingresscontroller';
  const all = ctx.objects('pods').filter((p) => p.metadata.labels?.[label] !== undefined);
  const named = routerName === undefined ? [] : all.filter((p) => p.metadata.labels?.[label] === routerName);
  return named.length > 0 ? named : all;
}

/** Whether a pod runs the ingress-nginx controller binary (the image or its entry point says so). */
export function isNginxController(pod: KubeObject): boolean {
  const views = containers(pod);
  for (let i = 0; i < views.length; i++) {
    const c = views[i] as ContainerView;
    if (c.init) continue;
    if (String(c.spec?.image ?? '').includes('ingress-nginx/controller')) return true;
    const command = c.spec?.command;
    const args = c.spec?.args;
    if ((command != null && runsNginx(command)) || (args != null && runsNginx(args))) return true;
  }
  return false;
}

/** Asked of every pod read: a list is walked by index, anything else iterable as it is. */
function runsNginx(argv: Iterable<unknown>): boolean {
  if (Array.isArray(argv)) {
    for (let i = 0; i < argv.length; i++) if (String(argv[i]).endsWith('/nginx-ingress-controller')) return true;
    return false;
  }
  for (const a of argv) if (String(a).endsWith('/nginx-ingress-controller')) return true;
  return false;
}

/** Every log line read for a pod, current and previous, each container. */
export function podLogLines(ctx: AnalyzerContext, pod: KubeObject): string[] {
  const ns = pod.metadata.namespace;
  return containers(pod)
    .flatMap((c) => [ctx.log(pod.metadata.name, c.name, true, ns), ctx.log(pod.metadata.name, c.name, false, ns)])
    .filter((t): t is string => t !== undefined)
    .flatMap((t) => t.split(/\r?\n/));
}

/** Lines in the traffic window (undated lines count: a tail read is recent by construction). */
export function inWindow(at: Date | undefined, now: Date): boolean {
  if (at === undefined) return true;
  const age = now.getTime() - at.getTime();
  return age <= TRAFFIC_WINDOW_MS && age >= -5 * MINUTE;
}

export function quoteLog(pod: KubeObject, text: string, label = 'log'): string {
  return clip(scrubText(`${label} ${pod.metadata.name}: ${text}`));
}

/** `14:22:47Z` for a time inside the day of "now", else the ISO instant. */
export function shortTime(at: Date | undefined, now: Date): string {
  if (at === undefined) return '?';
  const iso = at.toISOString();
  return iso.slice(0, 10) === now.toISOString().slice(0, 10) ? `${iso.slice(11, 19)}Z` : iso.replace('.000Z', 'Z');
}

// --- one Route as the router sees it ----------------------------------------------------------------------------

export interface RouterView {
  /** The router pod whose log says most about the Route. */
  router: KubeObject;
  backend: string;
  /** Access lines for the Route in the traffic window, oldest first. */
  access: HaproxyAccess[];
  /** Servers whose latest health-check state is DOWN, with the line that took them down. */
  down: HaproxyServerDown[];
  /** "backend … has no server available!" lines in the traffic window. */
  noServer: HaproxyNoServer[];
}

/** What the routers' logs say about one Route; undefined when no router log mentions it. */
export function routerView(
  ctx: AnalyzerContext,
  namespace: string,
  route: string,
  routerName?: string,
): RouterView | undefined {
  const names = new Set(routeBackendNames(namespace, route));
  let best: { view: RouterView; weight: number } | undefined;
  for (const router of routerPods(ctx, routerName)) {
    const entries = podLogLines(ctx, router)
      .map(parseHaproxyLine)
      .filter((e): e is HaproxyEntry => e !== undefined && names.has(e.backend))
      .sort((a, b) => (a.at?.getTime() ?? 0) - (b.at?.getTime() ?? 0));
    if (entries.length === 0) continue;
    const state = new Map<string, HaproxyServerDown | undefined>();
    for (const e of entries) {
      if (e.kind === 'server-down') state.set(e.server, e);
      else if (e.kind === 'server-up') state.set(e.server, undefined);
    }
    const access = entries.filter((e): e is HaproxyAccess => e.kind === 'access' && inWindow(e.at, ctx.now));
    const down = [...state.values()].filter((d): d is HaproxyServerDown => d !== undefined);
    const noServer = entries.filter((e): e is HaproxyNoServer => e.kind === 'no-server' && inWindow(e.at, ctx.now));
    const weight = access.filter((a) => a.status >= 500).length + down.length * 5 + noServer.length;
    const backend = (access[0] ?? entries[0])?.backend as string;
    if (best === undefined || weight > best.weight)
      best = { view: { router, backend, access, down, noServer }, weight };
  }
  return best?.view;
}

/** `haproxy.router.openshift.io/timeout` and friends: HAProxy time specs, milliseconds when no unit is given. */
export function parseTimeSpec(spec: string | undefined): number | undefined {
  const m = /^\s*(\d+)(us|ms|s|m|h|d)?\s*$/.exec(spec ?? '');
  if (!m) return undefined;
  const unit: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  return Number(m[1]) * (unit[m[2] ?? 'ms'] ?? 1);
}

/** The router's server timeout when a Route sets none (`ROUTER_DEFAULT_SERVER_TIMEOUT`). */
export const ROUTER_DEFAULT_SERVER_TIMEOUT_MS = 30_000;
