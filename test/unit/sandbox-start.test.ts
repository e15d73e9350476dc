import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_SNAPSHOT } from '../../local/demo/index.js';
import { banner, clusterSource, type RunningCalmops } from '../../local/start.js';

describe('npm start configuration', () => {
  it('reads a real cluster from KUBECONFIG (its first file), else CALMOPS_SNAPSHOT, else the demo', () => {
    expect(clusterSource({ KUBECONFIG: '/k/a.yaml:/k/b.yaml', CALMOPS_SNAPSHOT: 'x.yaml' })).toEqual({
      kind: 'kubeconfig',
      file: '/k/a.yaml',
    });
    expect(clusterSource({ CALMOPS_SNAPSHOT: 'incident.yaml' })).toEqual({
      kind: 'snapshot',
      file: resolve('incident.yaml'),
    });
    expect(clusterSource({ KUBECONFIG: ' ', CALMOPS_SNAPSHOT: '' })).toEqual({ kind: 'demo', file: DEMO_SNAPSHOT });
  });

  it('prints one block: the sandbox URL, the namespaces, and how to use a real cluster', () => {
    const running = {
      mode: 'sandbox',
      origin: 'http://127.0.0.1:3000',
      sandboxUrl: 'http://127.0.0.1:3000/sandbox/',
      cluster: { kind: 'demo', file: DEMO_SNAPSHOT },
      namespaces: [
        { namespace: 'ml-team', problem: 'a PVC that never binds', try: '/triage pvc stuck pending in ml-team' },
        { namespace: 'wiki', problem: 'healthy', try: '/triage route returns 503 in wiki' },
      ],
    } as unknown as RunningCalmops;
    const text = banner(running);
    expect(text.split('\n')[0]).toBe('calmops is running: open http://127.0.0.1:3000/sandbox/');
    expect(text).toContain('  ml-team  a PVC that never binds  /triage pvc stuck pending in ml-team');
    expect(text).toContain('  wiki     healthy                 /triage route returns 503 in wiki');
    expect(text).toContain('KUBECONFIG=');
    expect(text).toContain('http://127.0.0.1:3000/healthz');
    const live = banner({ ...running, cluster: { kind: 'kubeconfig', file: '/k/a.yaml' }, namespaces: [] });
    expect(live).toContain('Reading your cluster (/k/a.yaml).');
    expect(live).not.toContain('KUBECONFIG=');
  });
});
