import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { parseComplaint } from '../../../../src/triage/kube/config-files.js';
import { crashing, makePod, NS, run } from '../../../support/analyzers/units.js';

const configMap = (name: string, data: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: NS },
  data,
});

const deploy = { kind: 'ReplicaSet', name: 'api-7d9' };

function crashingPod(container: Record<string, unknown>, volumes: Record<string, unknown>[]): KubeObject {
  return makePod('api-7d9-x1', {
    owner: deploy,
    containers: [{ name: 'api', image: 'r/api:1', ...container }],
    volumes,
    statuses: [crashing('api')],
    node: 'n1',
  });
}

const v8 =
  '/app/lib/flags.js:14\n    const flags = JSON.parse(raw);\n\nSyntaxError: Expected double-quoted property name in JSON at position 52 (line 4 column 1)\n    at JSON.parse (<anonymous>)\n\nNode.js v20.18.1\n';

describe('crashloop follows a parse error to the ConfigMap value that does not parse', () => {
  const flags = configMap('feature-flags', { 'flags.json': '{\n  "checkout.v2": true,\n  "search": false,\n}\n' });
  const settings = configMap('api-settings', { 'settings.json': '{"timeout_ms": 2500}', LOG_LEVEL: 'info' });
  const pod = crashingPod(
    {
      volumeMounts: [
        { name: 'flags', mountPath: '/etc/flags' },
        { name: 'settings', mountPath: '/etc/api' },
      ],
      env: [{ name: 'LOG_LEVEL', valueFrom: { configMapKeyRef: { name: 'api-settings', key: 'LOG_LEVEL' } } }],
    },
    [
      { name: 'flags', configMap: { name: 'feature-flags' } },
      { name: 'settings', configMap: { name: 'api-settings' } },
    ],
  );

  it('names the mounted ConfigMap whose JSON is invalid as the owner, with the parser error as evidence', () => {
    const [f] = run(['crashloop'], [pod, flags, settings], { 'demo/api-7d9-x1/api:previous': v8 });
    expect(f).toMatchObject({
      code: 'CONTAINER_CRASHLOOP_CONFIG_ERROR',
      owner: { kind: 'ConfigMap', name: 'feature-flags', namespace: NS },
    });
    expect(f?.related).toContainEqual({ kind: 'ConfigMap', name: 'feature-flags', namespace: NS });
    expect(f?.message).toContain('/etc/flags/flags.json (ConfigMap feature-flags key flags.json)');
    expect(f?.evidence.join('\n')).toMatch(
      /ConfigMap feature-flags key flags.json \(\/etc\/flags\/flags.json\) is not valid JSON: /,
    );
    expect(f?.change).toContain('make ConfigMap feature-flags key flags.json valid JSON again');
  });

  it('keeps the workload as the owner when every ConfigMap value the container reads parses', () => {
    const fixed = configMap('feature-flags', { 'flags.json': '{"checkout.v2": true}' });
    const [f] = run(['crashloop'], [pod, fixed, settings], { 'demo/api-7d9-x1/api:previous': v8 });
    expect(f?.code).toBe('CONTAINER_CRASHLOOP');
    expect(f?.owner).toBeUndefined();
  });

  it('says nothing of ConfigMaps when the log holds no parser error', () => {
    const log = { 'demo/api-7d9-x1/api:previous': 'Error: connect ECONNREFUSED 10.0.0.7:5432' };
    const [f] = run(['crashloop'], [pod, flags, settings], log);
    expect(f?.owner).toBeUndefined();
  });

  it('blames no one of two broken values when the log names neither path', () => {
    const alsoBroken = configMap('api-settings', { 'settings.json': '{"timeout_ms": }' });
    const [f] = run(['crashloop'], [pod, flags, alsoBroken], { 'demo/api-7d9-x1/api:previous': v8 });
    expect(f?.owner).toBeUndefined();
  });

  it('picks the broken value at the path the log names, through a subPath mount, for CPython', () => {
    const rules = configMap('pricing-rules', {
      'rules.json': '{\n  "rules": [\n    {"sku": "basic"}\n    {"sku": "pro"}\n  ]\n}\n',
    });
    const other = configMap('api-settings', { 'settings.json': '{"timeout_ms": }' });
    const python = crashingPod(
      {
        volumeMounts: [
          { name: 'rules', mountPath: '/etc/pricing/rules.json', subPath: 'rules.json' },
          { name: 'settings', mountPath: '/etc/api' },
        ],
      },
      [
        { name: 'rules', configMap: { name: 'pricing-rules' } },
        { name: 'settings', configMap: { name: 'api-settings' } },
      ],
    );
    const log = {
      'demo/api-7d9-x1/api:previous':
        'INFO loading /etc/pricing/rules.json\nTraceback (most recent call last):\n  File "/app/rules.py", line 9, in load\n    return json.load(fh)\njson.decoder.JSONDecodeError: Expecting \',\' delimiter: line 4 column 5 (char 48)\n',
    };
    const [f] = run(['crashloop'], [python, rules, other], log);
    expect(f).toMatchObject({ owner: { kind: 'ConfigMap', name: 'pricing-rules' } });
    expect(f?.message).toContain("JSONDecodeError: Expecting ',' delimiter");
  });

  it('reads YAML complaints against the .yaml keys of a ConfigMap, items renamed by path', () => {
    const app = configMap('app-config', { 'app.yaml': 'server:\n  port: 8080\n   host: x\n', 'extra.yaml': 'a: 1\n' });
    const goApp = crashingPod({ volumeMounts: [{ name: 'cfg', mountPath: '/config' }] }, [
      { name: 'cfg', configMap: { name: 'app-config', items: [{ key: 'app.yaml', path: 'config.yaml' }] } },
    ]);
    const log = {
      'demo/api-7d9-x1/api:previous':
        'panic: load /config/config.yaml: yaml: line 3: mapping values are not allowed in this context\n\ngoroutine 1 [running]:\nmain.main()\n',
    };
    const [f] = run(['crashloop'], [goApp, app], log);
    expect(f).toMatchObject({ owner: { kind: 'ConfigMap', name: 'app-config' } });
    expect(f?.message).toContain('/config/config.yaml (ConfigMap app-config key app.yaml)');
  });
});

describe('parseComplaint', () => {
  it.each([
    ['SyntaxError: Unexpected end of JSON input', 'JSON'],
    [
      'json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 4 column 1 (char 52)',
      'JSON',
    ],
    ["error: invalid character '}' looking for beginning of object key string", 'JSON'],
    ["com.fasterxml.jackson.core.JsonParseException: Unexpected character ('}' (code 125))", 'JSON'],
    ['yaml: line 4: did not find expected key', 'YAML'],
    ['yaml.scanner.ScannerError: mapping values are not allowed here', 'YAML'],
  ])('reads %s as a %s syntax error', (line, format) => {
    expect(parseComplaint(`starting\n${line}\n`)?.format).toBe(format);
  });

  it('does not take a type error on a well-formed YAML document for a syntax error', () => {
    expect(parseComplaint('yaml: unmarshal errors:\n  line 3: cannot unmarshal !!str `abc` into int')).toBeUndefined();
  });
});
