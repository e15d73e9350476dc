import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KubeconfigError, loadKubeconfig, resolveKubeconfigSource } from '../../../src/cluster/kubeconfig.js';
import { kubeconfigFor } from '../../support/cluster-fake-api.js';

const dir = mkdtempSync(join(tmpdir(), 'calmops-kubeconfig-'));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const config = (cluster: string, server: string, context: string, current = true) => `
apiVersion: v1
kind: Config
clusters:
- name: ${cluster}
  cluster: { server: '${server}', insecure-skip-tls-verify: true }
users:
- name: u-${cluster}
  user: { token: t }
contexts:
- name: ${context}
  context: { cluster: ${cluster}, user: u-${cluster} }
${current ? `current-context: ${context}` : ''}
`;

describe('loadKubeconfig', () => {
  it('loads YAML text and reports the server and context', () => {
    const loaded = loadKubeconfig({ yaml: kubeconfigFor('http://127.0.0.1:1234/') });
    expect(loaded.server).toBe('http://127.0.0.1:1234');
    expect(loaded.context).toBe('fake');
  });

  it('selects another context and lists the known ones when it does not exist', () => {
    const yaml = kubeconfigFor('http://127.0.0.1:1', { contexts: ['one', 'two'] });
    expect(loadKubeconfig({ yaml }, 'two').context).toBe('two');
    expect(() => loadKubeconfig({ yaml }, 'three')).toThrow(/context 'three' .*contexts: one, two/);
  });

  it('merges a list of files with the first file winning', () => {
    const a = file('a.yaml', config('a', 'http://127.0.0.1:1', 'ctx-a'));
    const b = file('b.yaml', config('b', 'http://127.0.0.1:2', 'ctx-b'));
    const merged = loadKubeconfig({ file: [a, b] });
    expect(merged.context).toBe('ctx-a');
    expect(loadKubeconfig({ file: [a, b] }, 'ctx-b').server).toBe('http://127.0.0.1:2');
  });

  it('hides URL credentials from the printable server', () => {
    const loaded = loadKubeconfig({ yaml: kubeconfigFor('http://admin:pa55@127.0.0.1:9') });
    expect(loaded.displayServer).toBe('http://127.0.0.1:9');
  });

  it('gives clear errors', () => {
    expect(() => loadKubeconfig({})).toThrow(KubeconfigError);
    expect(() => loadKubeconfig({ yaml: 'x', inCluster: true })).toThrow(/exactly one/);
    expect(() => loadKubeconfig({ file: join(dir, 'missing.yaml') })).toThrow(/cannot load kubeconfig/);
    expect(() => loadKubeconfig({ yaml: config('a', 'http://127.0.0.1:1', 'c', false) })).toThrow(/no current context/);
    const plainHttp = config('a', 'http://127.0.0.1:1', 'c').replace('insecure-skip-tls-verify: true', 'x: 1');
    expect(() => loadKubeconfig({ yaml: plainHttp })).toThrow(/plain http/);
    expect(() => loadKubeconfig({ yaml: config('a', 'ftp://h', 'c') })).toThrow(/http\(s\)/);
  });

  it('refuses in-cluster outside a pod', () => {
    const saved = process.env.KUBERNETES_SERVICE_HOST;
    delete process.env.KUBERNETES_SERVICE_HOST;
    try {
      expect(() => loadKubeconfig({ inCluster: true })).toThrow(/not running in a cluster/);
    } finally {
      if (saved !== undefined) process.env.KUBERNETES_SERVICE_HOST = saved;
    }
  });
});

describe('resolveKubeconfigSource', () => {
  const a = file('env-a.yaml', config('a', 'http://127.0.0.1:1', 'ctx-a'));
  const b = file('env-b.yaml', config('b', 'http://127.0.0.1:2', 'ctx-b'));
  const home = join(dir, 'home');
  mkdirSync(join(home, '.kube'), { recursive: true });
  const homeConfig = join(home, '.kube', 'config');
  writeFileSync(homeConfig, config('h', 'http://127.0.0.1:3', 'ctx-h'));

  it('follows kubectl order: flag, KUBECONFIG, ~/.kube/config, in-cluster', () => {
    expect(resolveKubeconfigSource(a, { KUBECONFIG: b, HOME: home })).toEqual({ file: a });
    expect(resolveKubeconfigSource(undefined, { KUBECONFIG: `${a}${delimiter}${b}`, HOME: home })).toEqual({
      file: [a, b],
    });
    expect(resolveKubeconfigSource(undefined, { KUBECONFIG: b })).toEqual({ file: b });
    expect(resolveKubeconfigSource(undefined, { HOME: home })).toEqual({ file: homeConfig });
    expect(resolveKubeconfigSource(undefined, { HOME: dir, KUBERNETES_SERVICE_HOST: '10.0.0.1' })).toEqual({
      inCluster: true,
    });
  });

  it('says what is missing', () => {
    expect(() => resolveKubeconfigSource(join(dir, 'nope'), {})).toThrow(/does not exist/);
    expect(() => resolveKubeconfigSource(undefined, { KUBECONFIG: join(dir, 'nope') })).toThrow(
      /no file in KUBECONFIG/,
    );
    expect(() => resolveKubeconfigSource(undefined, { HOME: dir })).toThrow(/--kubeconfig/);
  });
});
