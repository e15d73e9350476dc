import { describe, expect, it } from 'vitest';
import { parseSnapshotText, SnapshotFormatError, snapshotNow } from '../../../src/cluster/snapshot.js';

/**
 * How the snapshot parser reads YAML: the YAML 1.2 core schema as kubectl's output means it, documents counted as
 * a person counts them, every failure placed by document, line and column in the whole file, and aliases bounded.
 */

const configMap = (name: string, data = '') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: shop\n${data}`;

function failure(text: string): SnapshotFormatError {
  try {
    parseSnapshotText(text, 'cluster.yaml');
  } catch (error) {
    if (error instanceof SnapshotFormatError) return error;
    throw error;
  }
  throw new Error('parsed without a failure');
}

describe('snapshot YAML', () => {
  it('reads scalars by the YAML 1.2 core schema: timestamps and underscored digits stay strings', () => {
    const [object] = parseSnapshotText(
      configMap(
        'scalars',
        [
          'data:',
          '  when: 2024-05-14T10:15:00Z',
          '  underscored: 1_000',
          '  binary: 0b101',
          '  yes: yes',
          '  quoted: "42"',
          'spec:',
          '  decimal: 012',
          '  octal: 0o17',
          '  hex: 0x1F',
          '  float: 1.5e3',
          '  infinite: -.inf',
          '  flag: True',
          '  nothing: ~',
          '  empty:',
          '',
        ].join('\n'),
      ),
    ).objects;
    expect(object?.['data']).toEqual({
      when: '2024-05-14T10:15:00Z',
      underscored: '1_000',
      binary: '0b101',
      yes: 'yes',
      quoted: '42',
    });
    expect(object?.['spec']).toEqual({
      decimal: 12,
      octal: 15,
      hex: 31,
      float: 1500,
      infinite: Number.NEGATIVE_INFINITY,
      flag: true,
      nothing: null,
      empty: null,
    });
  });

  it('counts documents as a person does: leading comments and directives are not one, an empty one is', () => {
    const text = ['# captured at 10:15', '%YAML 1.2', '---', configMap('a'), '---', '---', 'not: kubernetes', ''].join(
      '\n',
    );
    expect(failure(text).message).toMatch(/^cluster\.yaml: document 3 is not a Kubernetes object/);
    // A `---` inside a block scalar is content, not a document start.
    const scalar = configMap('b', 'data:\n  script: |\n    ---\n    echo hi\n');
    expect(parseSnapshotText(scalar).objects[0]?.['data']).toEqual({ script: '---\necho hi\n' });
  });

  it('places a syntax error by document, and by line and column in the whole file, with the line shown', () => {
    // Lines 1-6 and 8-13 are the first two documents; the third starts at line 15.
    const text = [configMap('a'), '---', configMap('b'), '---', 'kind: Pod\nmetadata:\n  name: a\n  name: b\n'].join(
      '\n',
    );
    const error = failure(text);
    expect(error.message).toBe(
      'cluster.yaml: document 3 is not valid YAML: duplicated mapping key at line 18, column 3:\n\n  name: a\n  name: b\n  ^\n',
    );
  });

  it('stops an alias bomb and an anchor that contains itself, naming the document', () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    let previous = 'a';
    for (const name of 'bcdefghi') {
      lines.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(',')}]`);
      previous = name;
    }
    expect(failure([configMap('ok'), '---', lines.join('\n'), ''].join('\n')).message).toBe(
      'cluster.yaml: document 2 cannot be read: Excessive alias count indicates a resource exhaustion attack',
    );
    expect(failure(configMap('loop', 'data: &loop\n  self: *loop\n')).message).toMatch(/document 1 cannot be read/);
    // Ordinary reuse of an anchor is fine.
    const reuse = configMap('reuse', 'data: &d\n  k: v\nbinaryData: *d\n');
    expect(parseSnapshotText(reuse).objects[0]?.['binaryData']).toEqual({ k: 'v' });
  });

  it('finds the moment the snapshot was taken while parsing, from observed times of kept objects only', () => {
    const text = [
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: shop\n  creationTimestamp: 2025-01-02T03:04:05Z\n',
      '---',
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  creationTimestamp: 2030-01-01T00:00:00Z\n',
      '---',
      // A condition's transition is observed; a certificate's expiry is a future on purpose, and data is data.
      'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: c\n  namespace: ns\nstatus:\n  notAfter: 2026-01-01T00:00:00Z\n  conditions:\n  - type: Ready\n    status: "True"\n    lastTransitionTime: 2025-01-02T03:04:06.5Z\n',
      '---',
      configMap('b', 'data:\n  at: 2025-01-02T03:04:08Z\n'),
    ].join('\n');
    const parsed = parseSnapshotText(text);
    expect(parsed.secretsSkipped).toBe(1);
    expect(parsed.taken?.toISOString()).toBe('2025-01-02T03:04:06.500Z');
    expect(parsed.taken).toEqual(snapshotNow(parsed.objects));
    expect(parseSnapshotText(configMap('timeless')).taken).toBeUndefined();
  });
});
