import { describe, expect, it } from 'vitest';
import { applyPipeline, parsePipeStage } from '../../../src/diagnosis/commands/pipeline.js';
import { goSort } from '../../../src/kubectl/go-sort.js';
import { executeTemplate } from '../../../src/kubectl/jsonpath.js';
import { parseTypedRead } from '../../../src/kubectl/parse.js';
import { formatQuantity } from '../../../src/kubectl/quantity.js';
import { formatTabbed } from '../../../src/kubectl/tabwriter.js';
import { planTypedRead } from '../../../src/workflow/typed-read.js';

const LIST = {
  kind: 'List',
  items: [
    {
      metadata: { name: 'web-1', labels: { 'app.kubernetes.io/name': 'web' } },
      status: {
        conditions: [{ type: 'Ready', status: 'False' }],
        containerStatuses: [{ name: 'web', restartCount: 3 }],
      },
      spec: { containers: [{ name: 'web', resources: { limits: { memory: '256Mi', cpu: '1' } } }] },
    },
    { metadata: { name: 'web-2' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } },
  ],
};

describe('kubectl JSONPath templates', () => {
  it.each([
    ['{.items[*].metadata.name}', 'web-1 web-2'],
    [
      '{range .items[*]}{.metadata.name}{"\\t"}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
      'web-1\tFalse\nweb-2\tTrue\n',
    ],
    ['{.items[0].metadata.labels.app\\.kubernetes\\.io/name}', 'web'],
    ["{.items[0].metadata.labels['app.kubernetes.io/name']}", 'web'],
    ['{.items[0].spec.containers[0].resources}', '{"limits":{"cpu":"1","memory":"256Mi"}}'],
    ['{.items[0].status.containerStatuses[0].restartCount}', '3'],
    ['{.nothing.here}', ''],
    ['names: {.items[-1:].metadata.name}.', 'names: web-2.'],
  ])('%s', (template, expected) => {
    expect(executeTemplate(template, LIST)).toBe(expected);
  });

  it('refuses an unclosed range, as kubectl does', () => {
    expect(() => executeTemplate('{range .items[*]}{.metadata.name}', LIST)).toThrow(/unclosed range/);
  });
});

describe('pipes of a read', () => {
  const text = 'NAME READY STATUS\nweb-1 0/1 CrashLoopBackOff\nweb-2 1/1 Running\ndb-0 1/1 Running\n';
  const run = (...stages: string[][]) =>
    applyPipeline(
      text,
      stages.map((s) => {
        const parsed = parsePipeStage(s);
        if (parsed.kind !== 'stage') throw new Error(`not a stage: ${s.join(' ')}`);
        return parsed.stage;
      }),
    );

  it('filters, counts, cuts and sorts as the tools do', () => {
    expect(run(['grep', '-i', 'running'])).toBe('web-2 1/1 Running\ndb-0 1/1 Running\n');
    expect(run(['grep', '-v', 'Running'])).toBe('NAME READY STATUS\nweb-1 0/1 CrashLoopBackOff\n');
    expect(run(['grep', '-A', '1', 'web-1'])).toBe('web-1 0/1 CrashLoopBackOff\nweb-2 1/1 Running\n');
    expect(run(['grep', '-E', 'web-(1|2)'], ['wc', '-l'])).toBe('2\n');
    expect(run(['tail', '-n', '+2'], ['sort'])).toBe(
      'db-0 1/1 Running\nweb-1 0/1 CrashLoopBackOff\nweb-2 1/1 Running\n',
    );
    expect(run(['awk', '{print $1}'], ['head', '-2'])).toBe('NAME\nweb-1\n');
    expect(run(['awk', '{print $3}'], ['sort'], ['uniq', '-c'])).toBe(
      '      1 CrashLoopBackOff\n      2 Running\n      1 STATUS\n',
    );
  });

  it('leaves out text tools it does not run, and refuses what could run or change something', () => {
    expect(parsePipeStage(['jq', '.items'])).toEqual({ kind: 'skipped', tool: 'jq' });
    expect(parsePipeStage(['xargs', 'kubectl', 'delete'])).toMatchObject({ kind: 'refused' });
    expect(parsePipeStage(['sed', '-i', 's/a/b/', 'f'])).toMatchObject({ kind: 'refused' });
    expect(parsePipeStage(['tee', 'out.txt'])).toMatchObject({ kind: 'refused' });
  });
});

describe('typed reads calmops runs, and the ones it refuses', () => {
  it.each([
    ['kubectl get pods -w', /watching/],
    ['kubectl logs -f web-1', /following a log/],
    ['kubectl get secrets', /Secrets are never read/],
    ['kubectl get pods -f pods.yaml', /file/],
    ['kubectl get pods --raw /api', /raw API paths/],
    ['kubectl get pods -o go-template={{.x}}', /printer/],
    ['kubectl exec web-1 -- ls', /not one of the reads/],
    ['kubectl get pods && kubectl delete pod x', /runs more than a read/],
    ['kubectl get pods | xargs kubectl delete pod', /can run or change things/],
  ])('%s', (line, reason) => {
    const parsed = parseTypedRead(line);
    expect(parsed?.ok).toBe(false);
    if (parsed && !parsed.ok) expect(parsed.refusal).toMatch(reason);
  });

  it('reads selectors, output and label options as kubectl does', () => {
    const parsed = parseTypedRead(
      "kubectl get pods -n shop -l 'app in (web)' --field-selector status.phase!=Running -o wide --sort-by=.metadata.name -L app --show-labels | grep web",
    );
    expect(parsed?.ok).toBe(true);
    if (!parsed?.ok) return;
    expect(parsed.read).toMatchObject({
      namespace: 'shop',
      labelSelector: 'app in (web)',
      fieldSelector: 'status.phase!=Running',
      output: { format: 'wide' },
      sortBy: '.metadata.name',
      labelColumns: ['app'],
      showLabels: true,
    });
    expect(parsed.read.pipeline.map((s) => s.tool)).toEqual(['grep']);
  });

  it('keeps a read inside the session: other namespaces and -A are refused with the reason', () => {
    const scope = { namespace: 'shop', extraNamespaces: [] };
    expect(planTypedRead('kubectl get pods -n kube-system', { namespace: 'shop', scope })).toMatchObject({
      kind: 'refused',
      scope: { code: 'namespace-not-allowed' },
    });
    expect(planTypedRead('kubectl get pods -A', { namespace: 'shop', scope })).toMatchObject({
      kind: 'refused',
      scope: { code: 'all-namespaces' },
    });
    expect(planTypedRead('kubectl get nodes -o wide', { namespace: 'shop', scope })).toMatchObject({ kind: 'read' });
    expect(planTypedRead('helm list', { namespace: 'shop', scope })).toBeUndefined();
  });
});

describe("kubectl's printing machinery", () => {
  it("aligns columns as Go's tabwriter does, block by block", () => {
    expect(
      formatTabbed('Name:\tweb\nConditions:\n  Type\tStatus\n  Ready \tTrue \n', { minWidth: 0, padding: 2 }),
    ).toBe('Name:  web\nConditions:\n  Type    Status\n  Ready   True \n');
  });

  it('prints quantities in their canonical form', () => {
    expect(['0.5', '1000m', '1500m', '1Gi', '1024Mi', '128974848', '0'].map(formatQuantity)).toEqual([
      '500m',
      '1',
      '1500m',
      '1Gi',
      '1Gi',
      '128974848',
      '0',
    ]);
  });

  it("sorts as Go's sort.Sort does, equal keys included", () => {
    const keys = [5, 3, 5, 1, 4, 2, 5, 3, 1, 0, 2, 4, 3, 5].map((k, i) => ({ k, i }));
    const sorted = goSort([...keys], (a, b) => a.k < b.k);
    expect(sorted.map((x) => x.k)).toEqual([...keys].map((x) => x.k).sort((a, b) => a - b));
  });
});
