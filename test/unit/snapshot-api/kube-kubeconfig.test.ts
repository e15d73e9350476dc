import { describe, expect, it } from 'vitest';
import { loadKubeconfig } from '../../../src/cluster/kubeconfig.js';
import { kubeconfigDocument, kubeconfigJson, kubeconfigYaml } from '../../../src/snapshot-api/kubeconfig.js';
import { readYaml } from '../../../src/yaml-text.js';

describe('snapshot server kubeconfig', () => {
  const options = { server: 'http://127.0.0.1:38017', context: 'lab', namespace: 'shop' };

  it('writes the same kubeconfig as YAML and as JSON', () => {
    expect(readYaml(kubeconfigYaml(options))).toEqual(kubeconfigDocument(options));
    expect(JSON.parse(kubeconfigJson(options))).toEqual(kubeconfigDocument(options));
    expect(kubeconfigYaml(options)).not.toMatch(/^\{/);
  });

  it('loads the JSON text as the client loads the YAML file', () => {
    for (const given of [options, { server: 'http://127.0.0.1:40000' }]) {
      const fromJson = loadKubeconfig({ yaml: kubeconfigJson(given) });
      const fromYaml = loadKubeconfig({ yaml: kubeconfigYaml(given) });
      expect(fromJson.server).toBe(given.server);
      expect({ context: fromJson.context, server: fromJson.server }).toEqual({
        context: fromYaml.context,
        server: fromYaml.server,
      });
      expect(fromJson.kc.getContextObject(fromJson.context)?.namespace).toBe(
        fromYaml.kc.getContextObject(fromYaml.context)?.namespace,
      );
    }
    expect(loadKubeconfig({ yaml: kubeconfigJson(options) }).context).toBe('lab');
  });
});
