import { fileURLToPath } from 'node:url';

/** The curated demo cluster `npm start` serves when neither KUBECONFIG nor CALMOPS_SNAPSHOT is set. */
export const DEMO_SNAPSHOT = fileURLToPath(new URL('./demo-cluster.yaml', import.meta.url));

export interface DemoNamespace {
  namespace: string;
  /** What is wrong there, in a few words. */
  problem: string;
  /** A slash command that triages it. */
  try: string;
  /** The fixture it was composed from (`test/fixtures/snapshots/<fixture>.yaml`). */
  fixture: string;
  /** The root cause triage must find; none for the healthy namespace. */
  expectedRootCause?: string;
}

/** Every namespace of the demo cluster, one incident each plus a healthy one. */
export const DEMO_NAMESPACES: readonly DemoNamespace[] = [
  {
    namespace: 'ml-team',
    problem: 'a PVC that never binds',
    try: '/triage pvc stuck pending in ml-team',
    fixture: 'pvc-binding--storageclass-not-found',
    expectedRootCause: 'PVC_STORAGECLASS_NOT_FOUND',
  },
  {
    namespace: 'payments',
    problem: 'pods that cannot schedule',
    try: '/triage pods stuck pending in payments',
    fixture: 'scheduling-failures--insufficient-cpu',
    expectedRootCause: 'POD_INSUFFICIENT_CPU',
  },
  {
    namespace: 'orders',
    problem: 'a crash loop with a decisive log line',
    try: '/triage crashloop in orders',
    fixture: 'crashloop-analysis--missing-env',
    expectedRootCause: 'CONTAINER_CRASHLOOP_CONFIG_ERROR',
  },
  {
    namespace: 'inventory',
    problem: 'a route returning 503',
    try: '/triage route returns 503 in inventory',
    fixture: 'route-5xx--pods-not-ready',
    expectedRootCause: 'ROUTE_PODS_NOT_READY',
  },
  { namespace: 'wiki', problem: 'healthy', try: '/triage route returns 503 in wiki', fixture: 'healthy' },
];
