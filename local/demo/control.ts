import { DEMO_FIXES, type DemoCluster, type DemoFix, demoFixFor } from './fixes.js';
import { DEMO_NAMESPACES } from './index.js';

/**
 * Which demo namespaces have had their fix run, and the cluster that follows from it. calmops itself never changes
 * a cluster; in the sandbox this plays the person who runs the approved plan, so that "resolved" can be validated
 * against a cluster where the fault is really gone. The served cluster is always derived from the broken demo and
 * the set of fixed namespaces, so a restore brings back exactly the original fault.
 */

type DemoNamespaceStatus = 'broken' | 'fixed' | 'healthy';

export interface DemoNamespaceView {
  namespace: string;
  /** What is wrong there, in a few words (the healthy one says so). */
  problem: string;
  /** A slash command that triages it. */
  try: string;
  status: DemoNamespaceStatus;
  /** What running the fix does; absent for the healthy namespace. */
  fix?: { summary: string; steps: readonly string[]; rootCause: string };
  /** When the fix was run or the fault restored (wall clock), if it was. */
  changedAt?: string;
}

/** What the sandbox shows about the demo cluster: the namespaces, or why there is nothing to fix here. */
export type DemoClusterView =
  | { available: true; namespaces: DemoNamespaceView[] }
  | { available: false; reason: string };

export interface DemoClusterChange {
  /** False when the namespace already was in the asked state. */
  changed: boolean;
  namespace: DemoNamespaceView;
}

export interface DemoClusterControl {
  view(): DemoClusterView & { available: true };
  /** Runs the namespace's fix on the served cluster. */
  fix(namespace: string): DemoClusterChange;
  /** Brings the namespace's fault back. */
  restore(namespace: string): DemoClusterChange;
}

export class DemoClusterError extends Error {
  override readonly name = 'DemoClusterError';
  constructor(
    message: string,
    /** `unknown`: no such demo namespace; `healthy`: nothing to fix there. */
    readonly reason: 'unknown' | 'healthy',
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface DemoClusterControlOptions {
  /** The demo cluster as loaded, with every fault in place. */
  broken: DemoCluster;
  /** Serves a cluster from now on (the snapshot server's `setObjects`). */
  serve: (cluster: DemoCluster) => void;
  /** The wall clock for `changedAt`. */
  clock?: () => Date;
}

export function createDemoClusterControl(options: DemoClusterControlOptions): DemoClusterControl {
  const clock = options.clock ?? (() => new Date());
  const fixed = new Set<string>();
  const changedAt = new Map<string, string>();

  const fixOf = (namespace: string): DemoFix => {
    const fix = demoFixFor(namespace);
    if (fix !== undefined) return fix;
    if (DEMO_NAMESPACES.some((d) => d.namespace === namespace)) {
      throw new DemoClusterError(`${namespace} is healthy: there is no fault to fix or restore there`, 'healthy');
    }
    const known = DEMO_FIXES.map((f) => f.namespace).join(', ');
    throw new DemoClusterError(`${namespace} is not a demo namespace with a fault (those are: ${known})`, 'unknown');
  };

  const serve = () => {
    // Applied in a fixed order, each fix touches only its own namespace and the cluster-scoped objects it creates.
    let cluster = options.broken;
    for (const fix of DEMO_FIXES) if (fixed.has(fix.namespace)) cluster = fix.apply(cluster);
    options.serve(cluster);
  };

  const namespaceView = (namespace: string): DemoNamespaceView => {
    const demo = DEMO_NAMESPACES.find((d) => d.namespace === namespace);
    const fix = demoFixFor(namespace);
    const at = changedAt.get(namespace);
    return {
      namespace,
      problem: demo?.problem ?? '',
      try: demo?.try ?? '',
      status: fix === undefined ? 'healthy' : fixed.has(namespace) ? 'fixed' : 'broken',
      ...(fix === undefined ? {} : { fix: { summary: fix.summary, steps: [...fix.steps], rootCause: fix.rootCause } }),
      ...(at === undefined ? {} : { changedAt: at }),
    };
  };

  const change = (namespace: string, toFixed: boolean): DemoClusterChange => {
    fixOf(namespace);
    if (fixed.has(namespace) === toFixed) return { changed: false, namespace: namespaceView(namespace) };
    if (toFixed) fixed.add(namespace);
    else fixed.delete(namespace);
    try {
      serve();
    } catch (error) {
      // Serve what was served before rather than a half-changed state.
      if (toFixed) fixed.delete(namespace);
      else fixed.add(namespace);
      throw error;
    }
    changedAt.set(namespace, clock().toISOString());
    return { changed: true, namespace: namespaceView(namespace) };
  };

  return {
    view: () => ({ available: true, namespaces: DEMO_NAMESPACES.map((d) => namespaceView(d.namespace)) }),
    fix: (namespace) => change(namespace, true),
    restore: (namespace) => change(namespace, false),
  };
}
