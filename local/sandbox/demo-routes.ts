import { type DemoClusterControl, DemoClusterError, type DemoClusterView } from '../demo/control.js';

/**
 * `/_sandbox/demo`: the sandbox's stand-in for the person who runs the approved plan on the demo cluster.
 *
 *   GET  /_sandbox/demo                      the demo namespaces with their status (or why there are none)
 *   POST /_sandbox/demo/<namespace>/fix      run that namespace's fix on the served cluster
 *   POST /_sandbox/demo/<namespace>/restore  bring its fault back
 *
 * The sandbox checks Host and Origin before these run (local/request-guard.ts).
 */

/** What the sandbox was started with: the demo cluster it may change, or why there is none. */
export type SandboxDemoCluster = { control: DemoClusterControl } | { unavailable: string };

export interface DemoRouteAnswer {
  status: number;
  body: unknown;
  /** The served cluster changed: the page's state moves on. */
  changed: boolean;
}

const DEMO_ROUTE_PREFIX = '/_sandbox/demo';

const NO_DEMO = 'No demo cluster is served with this sandbox.';
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function isDemoRoute(path: string): boolean {
  return path === DEMO_ROUTE_PREFIX || path.startsWith(`${DEMO_ROUTE_PREFIX}/`);
}

export function demoClusterView(demo: SandboxDemoCluster | undefined): DemoClusterView {
  if (demo === undefined) return { available: false, reason: NO_DEMO };
  return 'control' in demo ? demo.control.view() : { available: false, reason: demo.unavailable };
}

export function answerDemoRoute(method: string, path: string, demo: SandboxDemoCluster | undefined): DemoRouteAnswer {
  const rest = path.slice(DEMO_ROUTE_PREFIX.length).replace(/\/+$/, '');
  if (rest === '') {
    if (method !== 'GET') return refuse(405, `${method} is not allowed on ${DEMO_ROUTE_PREFIX}; use GET`);
    return { status: 200, body: demoClusterView(demo), changed: false };
  }
  const match = /^\/([^/]+)\/(fix|restore)$/.exec(rest);
  if (match === null) {
    return refuse(404, `no such demo route ${path}; use ${DEMO_ROUTE_PREFIX}/<namespace>/fix or …/restore`);
  }
  const namespace = decodeURIComponent(match[1] ?? '');
  const verb = match[2] as 'fix' | 'restore';
  if (method !== 'POST') return refuse(405, `${method} is not allowed on ${path}; use POST`);
  if (!NAMESPACE.test(namespace)) return refuse(400, `"${namespace}" is not a namespace name`);
  if (demo === undefined || !('control' in demo)) return refuse(409, demo?.unavailable ?? NO_DEMO);
  try {
    const result = verb === 'fix' ? demo.control.fix(namespace) : demo.control.restore(namespace);
    return { status: 200, body: { ...result, demoCluster: demo.control.view() }, changed: result.changed };
  } catch (error) {
    if (error instanceof DemoClusterError) return refuse(error.reason === 'unknown' ? 404 : 409, error.message);
    throw error;
  }
}

function refuse(status: number, error: string): DemoRouteAnswer {
  return { status, body: { error }, changed: false };
}
