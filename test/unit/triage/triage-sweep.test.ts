import { describe, expect, it } from 'vitest';
import { type Finding, FindingSchema } from '../../../src/triage/envelope/findings.js';
import { followTemplate, foreignNamespaces, MAX_FOLLOWED_NAMESPACES } from '../../../src/triage/route/follow.js';
import { actionCatalogue, intentOfFinding, SWEEP_INTENT, withSweep } from '../../../src/triage/route/sweep.js';
import { loadTemplates, type TemplateRegistry } from '../../../src/triage/templates/template-registry.js';
import { TemplateSchema, type TriageTemplate } from '../../../src/triage/templates/template-schema.js';

const shipped = loadTemplates();

/** A valid template: what is not given is filled with the least the schema accepts. */
function template(partial: { id: string } & Record<string, unknown>): TriageTemplate {
  return TemplateSchema.parse({
    version: 1,
    title: partial.id,
    domain: 'compute',
    description: `${partial.id} template`,
    synonyms: ['a', 'b', 'c'],
    examples: ['x'],
    rounds: [{ name: 'one', reads: [{ id: 'pods', kind: 'pods', evidence: 'pods' }] }],
    evidence: { required: ['pods'] },
    analyzers: ['crashloop'],
    nextActions: [],
    ...partial,
  });
}

function registry(...templates: TriageTemplate[]): TemplateRegistry {
  const list = [...templates].sort((a, b) => a.id.localeCompare(b.id));
  return { get: (id) => list.find((t) => t.id === id), list: () => list, ids: () => list.map((t) => t.id) };
}

const action = (when: string, command = `kubectl get pods # ${when}`) => ({
  when,
  command,
  type: 'read-only',
  safety: 'SAFE',
  description: `look at ${when}`,
});

// --- withSweep ---------------------------------------------------------------------------------------------------

describe('withSweep', () => {
  const focused = template({
    id: 'crash',
    rounds: [
      {
        name: 'crashing pods',
        reads: [
          { id: 'all-pods', kind: 'pods', evidence: 'pods' },
          { id: 'pod-events', kind: 'events', fieldSelector: 'involvedObject.kind=Pod', evidence: 'events' },
        ],
      },
      {
        name: 'their logs',
        reads: [
          {
            id: 'crash-logs',
            kind: 'logs',
            container: '{{container}}',
            previous: true,
            forEach: { read: 'all-pods', where: 'restarting', each: 'container', max: 5 },
            evidence: 'logs',
          },
        ],
      },
    ],
    evidence: { required: ['pods', 'logs'], threshold: 0.5 },
    analyzers: ['crashloop', 'oom-killed'],
    nextActions: [action('always', 'kubectl get pods -n {{namespace}}'), action('CONTAINER_CRASHLOOP')],
  });
  const sweep = template({
    id: SWEEP_INTENT,
    domain: 'platform',
    rounds: [
      {
        name: 'the namespace',
        reads: [
          // The same list under another id: sent once.
          { id: 'pods', kind: 'pods', maxItems: 5000, evidence: 'pods' },
          { id: 'events', kind: 'events', evidence: 'events' },
          { id: 'nodes', kind: 'nodes', scope: 'cluster', evidence: 'nodes' },
        ],
      },
      {
        name: 'logs and nodes',
        reads: [
          {
            id: 'previous-logs',
            kind: 'logs',
            container: '{{container}}',
            previous: true,
            forEach: { read: 'pods', where: 'restarting', each: 'container', max: 3 },
            evidence: 'logs',
          },
          {
            id: 'waiting-logs',
            kind: 'logs',
            container: '{{container}}',
            forEach: { read: 'pods', where: 'waiting', each: 'container' },
            evidence: 'logs',
          },
          {
            id: 'node-pods',
            kind: 'pods',
            scope: 'cluster',
            fieldSelector: 'spec.nodeName={{item.metadata.name}}',
            forEach: { read: 'nodes', where: 'not-ready' },
            evidence: 'node-pods',
          },
        ],
      },
      {
        name: 'a third round',
        reads: [{ id: 'leases', kind: 'leases', namespace: 'kube-node-lease', evidence: 'leases' }],
      },
    ],
    evidence: { required: ['pods', 'events', 'nodes'] },
    analyzers: ['crashloop', 'node-health', 'dependencies'],
    nextActions: [action('always', 'kubectl get all -n {{namespace}}')],
  });
  const merged = withSweep(focused, sweep);
  const reads = merged.rounds.flatMap((r) => r.reads);
  const byId = new Map(reads.map((r) => [r.id, r]));

  it('sends a read both templates make once, under the focused template\u2019s id', () => {
    expect(merged.rounds[0]?.reads.map((r) => r.id)).toEqual(['all-pods', 'pod-events', 'sweep-events', 'sweep-nodes']);
    expect(reads.filter((r) => r.kind === 'pods' && r.scope === 'namespace' && !r.fieldSelector)).toHaveLength(1);
  });

  it('drops a follow-up read that, rewired, is one the focused template already makes', () => {
    // previous-logs of `pods` is crash-logs of `all-pods`: the same logs.
    expect(byId.has('sweep-previous-logs')).toBe(false);
    expect(merged.rounds[1]?.reads.map((r) => r.id)).toEqual(['crash-logs', 'sweep-waiting-logs', 'sweep-node-pods']);
  });

  it('points the sweep\u2019s follow-up reads at the read that survived', () => {
    expect(byId.get('sweep-waiting-logs')?.forEach?.read).toBe('all-pods');
    expect(byId.get('sweep-node-pods')?.forEach?.read).toBe('sweep-nodes');
    for (const r of reads) if (r.forEach) expect(byId.has(r.forEach.read)).toBe(true);
  });

  it('keeps reads that differ in a selector or a flag apart', () => {
    // Events of pods only, and all events: both are read.
    expect(byId.get('pod-events')?.fieldSelector).toBe('involvedObject.kind=Pod');
    expect(byId.get('sweep-events')?.fieldSelector).toBeUndefined();
  });

  it('runs as many rounds as the longer template, naming them from the focused one first', () => {
    expect(merged.rounds.map((r) => r.name)).toEqual(['crashing pods', 'their logs', 'a third round']);
    expect(merged.rounds[2]?.reads.map((r) => r.id)).toEqual(['sweep-leases']);
  });

  it('keeps the focused template\u2019s id, evidence and next actions, and runs both templates\u2019 analyzers', () => {
    expect(merged.id).toBe('crash');
    expect(merged.evidence).toEqual(focused.evidence);
    expect(merged.nextActions).toEqual(focused.nextActions);
    expect(merged.analyzers).toEqual(['crashloop', 'oom-killed', 'node-health', 'dependencies']);
  });

  it('leaves both templates as they were', () => {
    expect(focused.rounds[0]?.reads.map((r) => r.id)).toEqual(['all-pods', 'pod-events']);
    expect(sweep.rounds[1]?.reads[1]?.forEach?.read).toBe('pods');
    expect(sweep.rounds[1]?.reads[1]?.id).toBe('waiting-logs');
  });

  it('combines the shipped templates into a plan whose every follow-up names an earlier read', () => {
    const sweepTemplate = shipped.get(SWEEP_INTENT) as TriageTemplate;
    for (const t of shipped.list()) {
      if (t.id === SWEEP_INTENT) continue;
      const plan = withSweep(t, sweepTemplate);
      const seen = new Set<string>();
      for (const round of plan.rounds) {
        const ids = round.reads.map((r) => r.id);
        expect(new Set(ids).size, `${t.id}: duplicate read ids`).toBe(ids.length);
        for (const r of round.reads) if (r.forEach) expect(seen.has(r.forEach.read), `${t.id}: ${r.id}`).toBe(true);
        for (const id of ids) seen.add(id);
      }
      expect(plan.rounds.length).toBeLessThanOrEqual(Math.max(t.rounds.length, sweepTemplate.rounds.length));
    }
  });
});

// --- intentOfFinding ---------------------------------------------------------------------------------------------

describe('intentOfFinding', () => {
  it('keeps the intent that was asked for when its template runs the finding\u2019s analyzer', () => {
    const f = { code: 'CONTAINER_CRASHLOOP', analyzer: 'crashloop' };
    expect(intentOfFinding(shipped, f, 'workload-rollout')?.id).toBe('workload-rollout');
    expect(intentOfFinding(shipped, f, 'service-connectivity')?.id).toBe('service-connectivity');
  });

  it('does not keep an asked intent whose template does not run the analyzer, nor the sweep', () => {
    const f = { code: 'CONTAINER_CRASHLOOP', analyzer: 'crashloop' };
    expect(intentOfFinding(shipped, f, 'pvc-binding')?.id).toBe('crashloop-analysis');
    expect(intentOfFinding(shipped, f, SWEEP_INTENT)?.id).toBe('crashloop-analysis');
    expect(intentOfFinding(shipped, f, 'no-such-intent')?.id).toBe('crashloop-analysis');
  });

  it.each([
    ['oom-killed', 'CONTAINER_OOMKILLED', 'oom-killed'],
    ['node-health', 'POD_EVICTED', 'node-not-ready'],
    ['workload-rollout', 'WORKLOAD_QUOTA_EXCEEDED', 'workload-rollout'],
    ['dependencies', 'NETWORK_POLICY_BLOCKS', 'service-connectivity'],
    ['dns', 'DNS_LOOKUP_FAILURES', 'dns-failure'],
    ['pvc-binding', 'PVC_NO_MATCHING_PV', 'pvc-binding'],
  ])('gives a %s finding (%s) to the template that leads with its analyzer: %s', (analyzer, code, intent) => {
    expect(intentOfFinding(shipped, { analyzer, code })?.id).toBe(intent);
  });

  it('gives a finding of an analyzer no template leads with to the template that knows its code', () => {
    const ingress = template({ id: 'aaa-ingress', analyzers: ['ingress', 'service-endpoints'] });
    const route = template({
      id: 'bbb-route',
      analyzers: ['route', 'service-endpoints'],
      nextActions: [action('SERVICE_NO_ENDPOINTS')],
    });
    const registered = registry(ingress, route);
    expect(intentOfFinding(registered, { analyzer: 'service-endpoints', code: 'SERVICE_NO_ENDPOINTS' })?.id).toBe(
      'bbb-route',
    );
    // A code no template acts on goes to the first template that runs the analyzer.
    expect(intentOfFinding(registered, { analyzer: 'service-endpoints', code: 'SERVICE_PORT_MISMATCH' })?.id).toBe(
      'aaa-ingress',
    );
  });

  it('among templates that lead with the analyzer, takes the one that knows the code', () => {
    const first = template({ id: 'aaa-first', analyzers: ['dns'], nextActions: [action('DNS_COREDNS_ERRORS')] });
    const knowing = template({ id: 'bbb-knowing', analyzers: ['dns'], nextActions: [action('DNS_LOOKUP_FAILURES')] });
    const remedy = template({
      id: 'ccc-remedy',
      analyzers: ['dns'],
      remediation: [
        {
          when: 'DNS_NXDOMAIN',
          title: 'fix the name',
          steps: [{ command: 'kubectl get svc', mode: 'read', description: 'x' }],
        },
      ],
    });
    const registered = registry(first, knowing, remedy);
    expect(intentOfFinding(registered, { analyzer: 'dns', code: 'DNS_LOOKUP_FAILURES' })?.id).toBe('bbb-knowing');
    expect(intentOfFinding(registered, { analyzer: 'dns', code: 'DNS_NXDOMAIN' })?.id).toBe('ccc-remedy');
    expect(intentOfFinding(registered, { analyzer: 'dns', code: 'DNS_SOMETHING_ELSE' })?.id).toBe('aaa-first');
  });

  it('falls back to any template that runs the analyzer, and to none', () => {
    const runs = template({ id: 'runs-it', analyzers: ['crashloop', 'dependencies'] });
    const registered = registry(runs, template({ id: SWEEP_INTENT, analyzers: ['dependencies', 'dns'] }));
    expect(intentOfFinding(registered, { analyzer: 'dependencies', code: 'DEPENDENCY_ERRORS' })?.id).toBe('runs-it');
    // The sweep is never an intent a finding belongs to.
    expect(intentOfFinding(registered, { analyzer: 'dns', code: 'DNS_LOOKUP_FAILURES' })).toBeUndefined();
  });
});

// --- actionCatalogue ---------------------------------------------------------------------------------------------

describe('actionCatalogue', () => {
  const crash = template({
    id: 'crash',
    nextActions: [action('always', 'kubectl get pods -n {{namespace}}'), action('CONTAINER_CRASHLOOP')],
  });
  const storage = template({
    id: 'storage',
    analyzers: ['pvc-binding'],
    nextActions: [action('always', 'kubectl get pvc -n {{namespace}}'), action('PVC_NO_MATCHING_PV')],
  });
  const sweep = template({ id: SWEEP_INTENT, nextActions: [action('always', 'kubectl get all -n {{namespace}}')] });
  const registered = registry(crash, storage, sweep);
  const commands = (actions: TriageTemplate['nextActions']) => actions.map((a) => a.command);

  it('leads with the focused template\u2019s actions, then every intent\u2019s finding-specific ones', () => {
    const catalogue = actionCatalogue(registered, crash, false);
    expect(catalogue.slice(0, crash.nextActions.length)).toEqual(crash.nextActions);
    const rest = catalogue.slice(crash.nextActions.length);
    expect(commands(rest)).toContain('kubectl get pods # PVC_NO_MATCHING_PV');
    // Other intents' standing reads, and the sweep's, are not offered.
    for (const a of rest) expect(a.when).not.toBe('always');
  });

  it('after a sweep, offers the finding-specific actions first and the sweep\u2019s standing reads last', () => {
    const catalogue = actionCatalogue(registered, sweep, true);
    expect(commands(catalogue)).toEqual([
      'kubectl get pods # CONTAINER_CRASHLOOP',
      'kubectl get pods # PVC_NO_MATCHING_PV',
      'kubectl get all -n {{namespace}}',
    ]);
    // Other intents' standing reads are not offered.
    expect(commands(catalogue)).not.toContain('kubectl get pvc -n {{namespace}}');
  });

  it('holds an action for every code the shipped templates act on', () => {
    const catalogue = actionCatalogue(shipped, shipped.get(SWEEP_INTENT) as TriageTemplate, true);
    const codes = new Set(catalogue.map((a) => a.when));
    for (const code of [
      'PVC_NO_MATCHING_PV',
      'CONTAINER_CRASHLOOP',
      'NETWORK_POLICY_BLOCKS',
      'WORKLOAD_QUOTA_EXCEEDED',
    ])
      expect(codes.has(code), code).toBe(true);
    const always = catalogue.filter((a) => a.when === 'always');
    expect(always).toEqual(
      (shipped.get(SWEEP_INTENT) as TriageTemplate).nextActions.filter((a) => a.when === 'always'),
    );
  });
});

// --- following a dependency into another namespace -----------------------------------------------------------------

function finding(code: string, related: Finding['related']): Finding {
  return FindingSchema.parse({
    code,
    analyzer: 'dependencies',
    domain: 'networking',
    severity: 'medium',
    resource: { kind: 'Pod', name: 'orders-7c9f8b6d5-x2x7k', namespace: 'shop' },
    message: 'Deployment orders cannot reach postgres.db.svc:5432.',
    evidence: ['dial tcp 10.96.0.20:5432: connect: connection refused'],
    confidence: 0.55,
    related,
  });
}

describe('foreignNamespaces', () => {
  const svc = (name: string, namespace?: string) => ({ kind: 'Service', name, ...(namespace ? { namespace } : {}) });

  it('names the namespaces of unreachable Services elsewhere that were not read, once each and sorted', () => {
    const findings = [
      finding('DEPENDENCY_UNREACHABLE', [svc('postgres', 'db')]),
      finding('DEPENDENCY_UNREACHABLE', [svc('redis', 'cache')]),
      finding('DEPENDENCY_UNREACHABLE', [svc('postgres-replica', 'db')]),
    ];
    expect(foreignNamespaces(findings, 'shop', new Set(['shop']))).toEqual(['cache', 'db']);
  });

  it('follows any current finding into the namespace of a Service it calls, and ignores other kinds, the namespace itself and namespaces already read', () => {
    expect(foreignNamespaces([finding('DEPENDENCY_UNAVAILABLE', [svc('postgres', 'db')])], 'shop', new Set())).toEqual([
      'db',
    ]);
    const findings = [
      finding('DEPENDENCY_UNREACHABLE', [{ kind: 'Deployment', name: 'postgres', namespace: 'db' }]),
      finding('DEPENDENCY_UNREACHABLE', [svc('orders', 'shop')]),
      finding('DEPENDENCY_UNREACHABLE', [svc('ledger', 'payments')]),
      finding('DEPENDENCY_UNREACHABLE', [svc('nameless')]),
    ];
    expect(foreignNamespaces(findings, 'shop', new Set(['shop', 'payments']))).toEqual([]);
  });

  it(`follows at most ${MAX_FOLLOWED_NAMESPACES} namespaces`, () => {
    const findings = ['ns-c', 'ns-a', 'ns-d', 'ns-b'].map((ns) => finding('DEPENDENCY_UNREACHABLE', [svc('x', ns)]));
    expect(foreignNamespaces(findings, 'shop', new Set())).toEqual(['ns-a', 'ns-b'].slice(0, MAX_FOLLOWED_NAMESPACES));
  });
});

describe('followTemplate', () => {
  const sweep = shipped.get(SWEEP_INTENT) as TriageTemplate;
  const follow = followTemplate(sweep);
  const first = follow.rounds[0]?.reads ?? [];
  const second = follow.rounds[1]?.reads ?? [];

  it('is the sweep under its own id, with at most two rounds', () => {
    expect(follow.id).toBe(`${SWEEP_INTENT}-follow`);
    expect(follow.analyzers).toEqual(sweep.analyzers);
    expect(follow.rounds).toHaveLength(2);
    for (const round of follow.rounds) expect(round.name).toMatch(/\(followed namespace\)$/);
  });

  it('lists only what lives in the followed namespace', () => {
    const ids = first.map((r) => r.id);
    expect(ids).toEqual(
      expect.arrayContaining(['pods', 'events', 'deployments', 'services', 'endpoints', 'networkpolicies']),
    );
    for (const r of first) {
      expect(r.scope).toBe('namespace');
      expect(r.namespace).toBeUndefined();
    }
    // Cluster-wide reads and fixed namespaces were read with the first namespace already.
    for (const id of ['nodes', 'namespaces', 'coredns-pods', 'system-deployments', 'persistentvolumes'])
      expect(ids).not.toContain(id);
  });

  it('reads the logs of the followed namespace\u2019s own pods and nothing else in the second round', () => {
    const ids = second.map((r) => r.id);
    expect(ids).toEqual(expect.arrayContaining(['previous-logs', 'waiting-logs', 'unready-logs']));
    for (const r of second) {
      expect(r.kind).toBe('logs');
      expect(first.map((f) => f.id)).toContain(r.forEach?.read);
    }
    for (const id of ['coredns-logs', 'router-logs', 'node-leases', 'node-pods']) expect(ids).not.toContain(id);
  });

  it('drops a round that keeps no read', () => {
    const noLogs = template({
      id: SWEEP_INTENT,
      rounds: [
        { name: 'lists', reads: [{ id: 'pods', kind: 'pods', evidence: 'pods' }] },
        {
          name: 'nodes',
          reads: [{ id: 'node-pods', kind: 'pods', scope: 'cluster', forEach: { read: 'pods' }, evidence: 'pods' }],
        },
        { name: 'third', reads: [{ id: 'more-logs', kind: 'logs', forEach: { read: 'pods' }, evidence: 'logs' }] },
      ],
    });
    const cut = followTemplate(noLogs);
    expect(cut.rounds.map((r) => r.name)).toEqual(['lists (followed namespace)']);
  });
});
