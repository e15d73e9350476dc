import { describe, expect, it } from 'vitest';
import {
  classifyRequest,
  extractCommandLines,
  redactCredentials,
  tokenizeCommandLine,
} from '../../../src/diagnosis/commands/index.js';

type Row = [
  text: string,
  expected: {
    kind: string;
    toolClass?: string;
    verb?: string;
    kindOf?: string;
    name?: string;
    namespace?: string;
    domain?: string;
    reason?: RegExp;
    escalation?: boolean;
  },
];

const rows: Row[] = [
  // reads
  [
    'kubectl get pods -n payments',
    { kind: 'read', verb: 'get', kindOf: 'pods', namespace: 'payments', domain: 'compute' },
  ],
  ['kubectl get po web-1 -o yaml', { kind: 'read', verb: 'get', kindOf: 'pods', name: 'web-1' }],
  [
    'kubectl describe pvc data-db-0 --namespace=shop',
    {
      kind: 'read',
      verb: 'describe',
      kindOf: 'persistentvolumeclaims',
      name: 'data-db-0',
      namespace: 'shop',
      domain: 'storage',
    },
  ],
  ['kubectl describe pod/web-1 -npayments', { kind: 'read', kindOf: 'pods', name: 'web-1', namespace: 'payments' }],
  [
    'kubectl logs -p web-1 -c app -n payments',
    { kind: 'read', verb: 'logs', kindOf: 'pods', name: 'web-1', namespace: 'payments' },
  ],
  ['kubectl logs deploy/web -f --tail 100', { kind: 'read', verb: 'logs', kindOf: 'deployments', name: 'web' }],
  ['oc logs web-1', { kind: 'read', verb: 'logs', name: 'web-1' }],
  ['kubectl get events -A --sort-by=.lastTimestamp', { kind: 'read', verb: 'get', kindOf: 'events' }],
  ['kubectl events -n payments', { kind: 'read', verb: 'events', namespace: 'payments' }],
  ['kubectl top pods -n shop', { kind: 'read', verb: 'top', kindOf: 'pods' }],
  ['kubectl top node worker-1', { kind: 'read', verb: 'top', kindOf: 'nodes', name: 'worker-1' }],
  ['kubectl explain pod.spec.tolerations', { kind: 'read', verb: 'explain' }],
  ['kubectl api-resources', { kind: 'read', verb: 'api-resources' }],
  [
    'kubectl auth can-i delete pods --as system:serviceaccount:shop:web',
    { kind: 'read', verb: 'auth can-i', escalation: false },
  ],
  [
    'kubectl rollout status deployment/web -n shop',
    { kind: 'read', verb: 'rollout status', kindOf: 'deployments', name: 'web' },
  ],
  ['kubectl rollout history deploy web', { kind: 'read', verb: 'rollout history', name: 'web' }],
  [
    'oc get route shop -o jsonpath="{.spec.host}"',
    { kind: 'read', kindOf: 'routes', name: 'shop', domain: 'networking' },
  ],
  ['oc status', { kind: 'read', verb: 'status' }],
  ['oc adm top nodes', { kind: 'read', verb: 'adm top', kindOf: 'nodes' }],
  ['oc get co', { kind: 'read', kindOf: 'clusteroperators', domain: 'platform' }],
  ['kubectl get sc', { kind: 'read', kindOf: 'storageclasses', domain: 'storage' }],
  ['kubectl -n shop get svc web', { kind: 'read', kindOf: 'services', name: 'web', namespace: 'shop' }],
  ['KUBECONFIG=/tmp/kc kubectl get nodes', { kind: 'read', kindOf: 'nodes' }],
  ['watch -n 5 kubectl get pods', { kind: 'read', kindOf: 'pods' }],
  ['kubectl apply -f fix.yaml --dry-run=server', { kind: 'read', verb: 'apply', reason: /dry-run/ }],
  ['helm status web -n shop', { kind: 'read', verb: 'helm status' }],
  ['ceph osd tree', { kind: 'read', verb: 'ceph osd', domain: 'storage' }],
  ['dig web.shop.svc.cluster.local', { kind: 'read', domain: 'networking' }],
  // writes
  [
    'kubectl rollout restart deployment/web -n shop',
    { kind: 'write', verb: 'rollout restart', kindOf: 'deployments', name: 'web', namespace: 'shop' },
  ],
  ['kubectl rollout undo deploy/web --to-revision=3', { kind: 'write', verb: 'rollout undo', name: 'web' }],
  ['kubectl scale deploy/web --replicas=3', { kind: 'write', verb: 'scale', name: 'web' }],
  [
    'kubectl patch deployment web -p \'{"spec":{"replicas":2}}\'',
    { kind: 'write', verb: 'patch', kindOf: 'deployments', name: 'web' },
  ],
  ['kubectl apply -f "my fix.yaml"', { kind: 'write', verb: 'apply' }],
  ['kubectl set image deployment/web app=quay.io/acme/web:1.2', { kind: 'write', verb: 'set image', name: 'web' }],
  ['kubectl set resources deploy web --limits=memory=512Mi', { kind: 'write', verb: 'set resources', name: 'web' }],
  ['kubectl edit svc web', { kind: 'write', verb: 'edit', kindOf: 'services' }],
  ['kubectl label pod web-1 tier=debug --overwrite', { kind: 'write', verb: 'label' }],
  ['kubectl annotate pvc data note="checked by oncall"', { kind: 'write', verb: 'annotate' }],
  ['kubectl create deployment web --image=nginx', { kind: 'write', kindOf: 'deployments', name: 'web' }],
  ['kubectl autoscale deployment web --min=2 --max=5', { kind: 'write', verb: 'autoscale' }],
  ['kubectl expose deployment web --port=80', { kind: 'write', verb: 'expose' }],
  ['oc rollout latest dc/web', { kind: 'write', verb: 'rollout latest', kindOf: 'deploymentconfigs' }],
  ['oc set env deployment/web LOG_LEVEL=debug', { kind: 'write', verb: 'set env' }],
  ['oc adm uncordon worker-2', { kind: 'write', verb: 'adm uncordon', kindOf: 'nodes', name: 'worker-2' }],
  ['helm upgrade web ./chart -n shop', { kind: 'write', verb: 'helm upgrade' }],
  // dangerous
  [
    'kubectl delete pod web-1',
    { kind: 'dangerous', toolClass: 'destructive', verb: 'delete', kindOf: 'pods', name: 'web-1' },
  ],
  ['kubectl delete pod web-1 --grace-period=0 --force', { kind: 'dangerous', reason: /--force/ }],
  ['kubectl delete pods --all -n shop', { kind: 'dangerous', reason: /--all/ }],
  ['kubectl scale deploy/web --replicas=0 -n shop', { kind: 'dangerous', verb: 'scale', reason: /zero replicas/ }],
  [
    'oc adm drain worker-1 --ignore-daemonsets --delete-emptydir-data',
    { kind: 'dangerous', verb: 'adm drain', kindOf: 'nodes', name: 'worker-1' },
  ],
  ['kubectl drain worker-1', { kind: 'dangerous', verb: 'drain', kindOf: 'nodes' }],
  ['kubectl cordon worker-1', { kind: 'dangerous', verb: 'cordon' }],
  [
    'kubectl taint nodes worker-1 key=value:NoSchedule',
    { kind: 'dangerous', verb: 'taint', kindOf: 'nodes', name: 'worker-1' },
  ],
  [
    'kubectl exec -it web-1 -- sh',
    { kind: 'dangerous', toolClass: 'inspect', verb: 'exec', kindOf: 'pods', name: 'web-1' },
  ],
  ['oc rsh web-1', { kind: 'dangerous', toolClass: 'inspect', verb: 'rsh' }],
  [
    'oc debug node/worker-1',
    { kind: 'dangerous', toolClass: 'inspect', verb: 'debug', kindOf: 'nodes', name: 'worker-1' },
  ],
  [
    'kubectl port-forward svc/web 8080:80',
    { kind: 'dangerous', toolClass: 'inspect', kindOf: 'services', name: 'web' },
  ],
  ['kubectl cp web-1:/tmp/dump ./dump', { kind: 'dangerous', toolClass: 'destructive', verb: 'cp' }],
  ['oc delete project shop', { kind: 'dangerous', verb: 'delete', kindOf: 'projects' }],
  ['kubectl replace --force -f web.yaml', { kind: 'dangerous', reason: /--force/ }],
  ['kubectl apply -f dir/ --prune -l app=web', { kind: 'dangerous', reason: /--prune/ }],
  ['kubectl get pods --as=admin', { kind: 'dangerous', escalation: true, reason: /impersonates/ }],
  ['kubectl create token default', { kind: 'dangerous', escalation: true }],
  ['oc adm policy add-cluster-role-to-user cluster-admin alice', { kind: 'dangerous', escalation: true }],
  ['kubectl frobnicate pods', { kind: 'dangerous', reason: /unknown kubectl command/ }],
  ['helm uninstall web -n shop', { kind: 'dangerous', verb: 'helm uninstall' }],
  ['sudo reboot', { kind: 'dangerous', escalation: true }],
  ['rm -rf /var/lib/etcd', { kind: 'dangerous', verb: 'rm' }],
  // compound commands and substitutions
  [
    'kubectl get pods; kubectl delete pod web-1',
    { kind: 'dangerous', verb: 'delete', reason: /compound command \(;\)/ },
  ],
  ['kubectl get pods && kubectl get events', { kind: 'dangerous', reason: /compound command \(&&\)/ }],
  ['kubectl get pods || true', { kind: 'dangerous', reason: /\|\|/ }],
  ['kubectl logs web-1 | grep error', { kind: 'read', verb: 'logs', reason: /piped into grep/ }],
  ["kubectl describe nodes | grep -A 8 'Allocated resources'", { kind: 'read', verb: 'describe' }],
  ['kubectl get pods -o name | jq .', { kind: 'read', verb: 'get', reason: /piped into jq/ }],
  ['kubectl get pods -o name | xargs kubectl delete', { kind: 'dangerous', reason: /compound command \(\|\)/ }],
  ['kubectl get pods | sh', { kind: 'dangerous' }],
  ['kubectl delete pod web-1 | grep deleted', { kind: 'dangerous', toolClass: 'destructive' }],
  [
    'kubectl get pod $(kubectl get pods -o name | head -1)',
    { kind: 'dangerous', reason: /command substitution \(\$\(…\)\)/ },
  ],
  ['kubectl get pod "$(whoami)"', { kind: 'dangerous', reason: /command substitution/ }],
  ['kubectl get pod `whoami`', { kind: 'dangerous', reason: /backticks/ }],
  ['kubectl get pods > pods.txt', { kind: 'dangerous', reason: /compound command \(>\)/ }],
  ['kubectl get pods &amp;&amp; rm -rf /', { kind: 'dangerous', reason: /&&/ }],
  ['```\nkubectl get pods\nkubectl get events\n```', { kind: 'dangerous', reason: /2 command lines/ }],
  // quoting keeps operators and substitutions literal
  ["kubectl get pods -l 'app in (web,api)'", { kind: 'read', kindOf: 'pods' }],
  ["kubectl annotate pod web-1 note='a; b && c'", { kind: 'write', verb: 'annotate' }],
  ["kubectl get pods -o jsonpath='{.items[*].metadata.name}'", { kind: 'read' }],
  ["kubectl get pod 'a$(b)'", { kind: 'read' }],
  ['kubectl get pod web\\ 1', { kind: 'read', name: 'web 1' }],
  [
    'Could you run `kubectl describe pvc data-db-0 -n payments` please?',
    { kind: 'read', verb: 'describe', name: 'data-db-0', namespace: 'payments' },
  ],
  ['$ kubectl get nodes', { kind: 'read', kindOf: 'nodes' }],
  // natural language
  [
    'restart the deployment web in namespace shop',
    { kind: 'write', verb: 'rollout restart', kindOf: 'deployments', name: 'web', namespace: 'shop' },
  ],
  ['can you restart it?', { kind: 'write', verb: 'rollout restart' }],
  ['just delete the pod', { kind: 'dangerous', verb: 'delete', kindOf: 'pods' }],
  ['force delete pod web-1', { kind: 'dangerous', verb: 'delete', name: 'web-1', reason: /forced/ }],
  ['scale it to 0', { kind: 'dangerous', verb: 'scale', reason: /zero/ }],
  ['scale web to 3 replicas', { kind: 'write', verb: 'scale' }],
  ['drain node worker-3', { kind: 'dangerous', verb: 'drain', kindOf: 'nodes', name: 'worker-3' }],
  ["let's exec into the pod", { kind: 'dangerous', toolClass: 'inspect', verb: 'exec' }],
  ['roll back the deployment', { kind: 'write', verb: 'rollout undo' }],
  ['show me the logs', { kind: 'read', verb: 'logs' }],
  [
    'show me the events for pvc data-db-0',
    { kind: 'read', verb: 'events', kindOf: 'persistentvolumeclaims', name: 'data-db-0' },
  ],
  ['have we seen this before?', { kind: 'read', verb: 'search-memory' }],
  ['why did the pod get deleted?', { kind: 'read' }],
  ["don't delete the pod, show me the events", { kind: 'read', verb: 'events' }],
  ['the pod keeps restarting', { kind: 'chat' }],
  ['break glass', { kind: 'break-glass', escalation: true }],
  ['we need to skip the diagnostics, prod is down', { kind: 'break-glass' }],
  ['resolved', { kind: 'resolved' }],
  ['the fix is applied, all good now', { kind: 'resolved' }],
  ['is it resolved?', { kind: 'chat' }],
  ['still not fixed', { kind: 'chat' }],
  ['hypothesis 2', { kind: 'hypothesis' }],
  ["let's go with the second one", { kind: 'hypothesis' }],
  ['I think the storage class is missing', { kind: 'hypothesis', kindOf: 'storageclasses' }],
  ['confirm the root cause', { kind: 'confirm-root-cause' }],
  ['consult the storage specialist', { kind: 'handoff', domain: 'storage' }],
  ['approve', { kind: 'chat', verb: 'approve' }],
  ['yes', { kind: 'chat', verb: 'affirm' }],
  ['any update?', { kind: 'chat' }],
];

describe('classifyRequest', () => {
  it('has a table of at least 50 cases', () => {
    expect(rows.length).toBeGreaterThanOrEqual(50);
  });

  it.each(rows)('%s', (text, want) => {
    const got = classifyRequest(text);
    expect(got.kind).toBe(want.kind);
    if (want.toolClass) expect(got.toolClass).toBe(want.toolClass);
    if (want.verb) expect(got.verb).toBe(want.verb);
    if (want.kindOf) expect(got.resource?.kind).toBe(want.kindOf);
    if (want.name) expect(got.resource?.name).toBe(want.name);
    if (want.namespace) expect(got.namespace).toBe(want.namespace);
    if (want.domain) expect(got.domain).toBe(want.domain);
    if (want.reason) expect(got.reasons.join(' | ')).toMatch(want.reason);
    if (want.escalation !== undefined) expect(got.escalation).toBe(want.escalation);
  });

  it('hands back the hypothesis rank', () => {
    expect(classifyRequest('hypothesis 2').hypothesisRank).toBe(2);
    expect(classifyRequest("let's go with the second one").hypothesisRank).toBe(2);
  });

  it('marks unbalanced quotes as malformed but still classifies the verb', () => {
    const read = classifyRequest("kubectl get pods -l 'app=web");
    expect(read.kind).toBe('read');
    expect(read.malformed).toBe(true);
    expect(classifyRequest('kubectl delete pod "web-1').kind).toBe('dangerous');
  });

  it('keeps the parts of a compound command', () => {
    const got = classifyRequest('kubectl get pods && kubectl rollout restart deploy/web');
    expect(got.parts?.map((p) => p.kind)).toEqual(['read', 'write']);
  });

  it('never keeps credentials', () => {
    for (const text of [
      'kubectl --token=abc123secret get pods',
      'kubectl --token abc123secret get pods',
      'oc login -u admin -p hunter2secret https://api.example:6443',
      'curl -H "Authorization: Bearer eyJhbGciOi.abc.def" https://api',
      'oc login --token=sha256~AbCdEf123 https://api',
    ]) {
      const got = classifyRequest(text);
      const serialized = JSON.stringify(got);
      expect(serialized).not.toMatch(/abc123secret|hunter2secret|eyJhbGciOi|AbCdEf123/);
    }
    expect(redactCredentials('--password=xyz')).toBe('--password=[REDACTED]');
  });

  it('reads Slack formatting: entities, mentions and curly quotes', () => {
    const got = classifyRequest('<@U123ABC> kubectl get pods -l \u2018app=web\u2019 -n shop');
    expect(got).toMatchObject({ kind: 'read', namespace: 'shop', malformed: false });
  });
});

describe('tokenizer', () => {
  it('splits at operators and keeps quoted text whole', () => {
    const t = tokenizeCommandLine(`kubectl get pods -l "a b" ; echo 'x && y'`);
    expect(t.commands).toEqual([
      ['kubectl', 'get', 'pods', '-l', 'a b'],
      ['echo', 'x && y'],
    ]);
    expect(t.operators).toEqual([';']);
  });

  it('finds commands in code spans only when the message is not itself a command', () => {
    expect(extractCommandLines('try `kubectl get pods` and `kubectl get events`')).toEqual([
      'kubectl get pods',
      'kubectl get events',
    ]);
    expect(extractCommandLines('please look at the pods')).toEqual([]);
  });
});
