import { describe, expect, it } from 'vitest';
import { DEMO_NAMESPACES, DEMO_SNAPSHOT } from '../../local/demo/index.js';
import { createClusterReader } from '../../src/cluster/reader.js';
import { loadSnapshotFiles, snapshotNow } from '../../src/cluster/snapshot.js';
import { evidenceFromEnvelope, evidenceFromMemorySearch } from '../../src/diagnosis/evidence-sources.js';
import { transitionRules } from '../../src/diagnosis/state-machine.js';
import { advance } from '../../src/diagnosis/transitions.js';
import { kubeconfigYaml } from '../../src/snapshot-api/kubeconfig.js';
import { startSnapshotServer } from '../../src/snapshot-api/server.js';
import { SessionRecordSchema } from '../../src/store/sessions.js';
import { WorkflowRecordSchema } from '../../src/store/workflow-records.js';
import type { TriageEnvelope } from '../../src/triage/envelope/envelope.js';
import { silentLogger, triage } from '../../src/triage/index.js';
import { type Decision, decide } from '../../src/workflow/diagnostic/route/decide.js';
import { hypothesesFromCauses } from '../../src/workflow/reads.js';
import { corpusCases, corpusRuns } from './corpus-runs.js';

/**
 * Every prompt an envelope suggests is answered with substance, across the demo incidents and the incident corpus:
 * each is triaged for real (snapshot API server, the real reader and engine), and each suggestion, typed verbatim,
 * is decided as the route step decides it. Substance is a read aimed at the incident, what the triage found, an
 * explanation, a memory search, a hypothesis or a handoff; a refusal or "name one" is none.
 */

const CAN_READ = /Name one, e\.g\./;

function isSubstantive(decision: Decision): boolean {
  switch (decision.kind) {
    case 'read':
    case 'memory':
    case 'handoff':
    case 'hypothesis':
      return true;
    case 'read-refused':
      return decision.facts.length > 0;
    case 'answer':
      return decision.lines.length > 0 && !decision.lines.some((l) => CAN_READ.test(l));
    default:
      return false;
  }
}

/** The session right after its triage and memory search, as the route sees it. */
function decideSuggestion(envelope: TriageEnvelope, text: string): Decision {
  const at = '2026-01-01T00:00:01.000Z';
  const namespace = envelope.routing.namespace;
  const evidence = [...evidenceFromEnvelope(envelope, at), ...evidenceFromMemorySearch([], at)];
  const { snapshot } = advance({ state: 'GATHERING', evidence, stateEnteredAt: '2026-01-01T00:00:00.000Z' }, at);
  const session = SessionRecordSchema.parse({
    id: 'S1',
    state: snapshot.state,
    status: 'open',
    intent: envelope.routing.intent,
    namespace,
    channelId: 'C1',
    threadTs: '1700000000.000100',
    requester: 'U1',
    version: 2,
    createdAt: at,
    updatedAt: at,
  });
  const workflow = WorkflowRecordSchema.parse({
    sessionId: 'S1',
    version: 2,
    stateEnteredAt: at,
    evidence,
    hypotheses: hypothesesFromCauses(envelope.rootCause, namespace),
  });
  return decide(
    session,
    workflow,
    { id: '01J00000000000000000000001', sessionId: 'S1', receivedAt: at, kind: 'message', userId: 'U1', text },
    {
      now: new Date('2026-01-01T00:01:00.000Z'),
      rules: transitionRules(0),
      envelope,
      readScope: { namespace, extraNamespaces: [] },
      maxHandoffs: 3,
    },
  );
}

async function demoEnvelopes(): Promise<Array<[string, TriageEnvelope]>> {
  const snapshot = await loadSnapshotFiles(DEMO_SNAPSHOT, DEMO_SNAPSHOT.replace(/\.yaml$/, '.logs.json'));
  const server = await startSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs, port: 0 });
  try {
    const reader = createClusterReader({ kubeconfig: { yaml: kubeconfigYaml({ server: server.url }) } });
    const out: Array<[string, TriageEnvelope]> = [];
    for (const demo of DEMO_NAMESPACES) {
      const envelope = await triage(
        { text: demo.try.replace(/^\/triage\s+/, ''), now: snapshotNow(snapshot.objects) },
        { reader, logger: silentLogger },
      );
      out.push([`demo ${demo.namespace}`, envelope]);
    }
    return out;
  } finally {
    await server.close();
  }
}

/** Defines the checks, for the file that replays the corpus once for every check on it. */
export function defineCorpusSuggestionChecks(): void {
  describe('prompt suggestions, typed verbatim', () => {
    it('get a substantive answer in every demo incident and every incident of the corpus', async () => {
      const corpus = corpusCases();
      const envelopes = await demoEnvelopes();
      for (const r of await corpusRuns('namespace')) if (r.envelope) envelopes.push([r.slug, r.envelope]);
      expect(envelopes.length).toBe(DEMO_NAMESPACES.length + corpus.length);
      let offered = 0;
      const unanswered: string[] = [];
      for (const [name, envelope] of envelopes) {
        for (const text of envelope.promptSuggestions) {
          offered += 1;
          const decision = decideSuggestion(envelope, text);
          if (!isSubstantive(decision)) unanswered.push(`${name}: "${text}" → ${decision.kind}`);
        }
      }
      expect(offered).toBeGreaterThan(envelopes.length * 3);
      expect(unanswered).toEqual([]);
    }, 240_000);
  });
}
