import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { messageBlockProblems } from '../../../local/slack/block-rules.js';
import type { ClusterReader, LogQuery } from '../../../src/cluster/types.js';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import type { TriageEnvelope } from '../../../src/triage/envelope/envelope.js';
import { breakGlassOutcomeView } from '../../../src/views/break-glass.js';
import { decidedView } from '../../../src/views/decided.js';
import { envelopeView } from '../../../src/views/envelope.js';
import { failureView } from '../../../src/views/failure.js';
import { context, fitMessage, section, type ThreadMessage } from '../../../src/views/limits.js';
import { readResultView } from '../../../src/views/read-result.js';
import { readSpecFromRequest, runRead } from '../../../src/workflow/reads.js';
import { fill, leakedPart, REDACTION_FIXTURES, SecretFactory } from '../../support/redaction-support.js';

/**
 * What the cluster and people write reaches Slack as text: credentials redacted, and Slack's markup (`<!channel>`,
 * `<@U…>`, `<url|label>`) escaped so it cannot ping, mention or disguise a link, in the blocks and in the
 * notification text Slack notifies from. The bot's own mentions still work.
 */

const HOSTILE = ['<!channel>', '<!here>', '<@U024BE7LH>', '<https://evil.example|Click here>'];

/** Every text a message carries: the notification text and every text object of its blocks. */
function textsOf(message: ThreadMessage): string[] {
  const texts = [message.text];
  JSON.stringify(message.blocks, (key, value: unknown) => {
    if (key === 'text' && typeof value === 'string') texts.push(value);
    return value;
  });
  return texts;
}

function expectInert(message: ThreadMessage): void {
  for (const text of textsOf(message)) {
    for (const markup of HOSTILE) expect(text, text).not.toContain(markup);
    expect(text).not.toMatch(/<!(?:channel|here|everyone)/);
  }
}

/** A pod whose previous container wrote credentials and Slack markup before it crashed. */
function previousLogs() {
  const template = readFileSync(join(REDACTION_FIXTURES, 'previous-logs.txt'), 'utf8');
  return fill(template, new SecretFactory(99));
}

function readerServing(text: string, seen: LogQuery[]): ClusterReader {
  return {
    async list() {
      return [];
    },
    async get() {
      throw new Error('not used');
    },
    async logs(query) {
      seen.push(query);
      return text;
    },
  };
}

describe('a thread read of `kubectl logs … --previous`', () => {
  it('posts the log without a credential and with the markup inert, notification text included', async () => {
    const { text, secrets } = previousLogs();
    const seen: LogQuery[] = [];
    // The path a person takes: their message, classified; the read it asks for; the read; the thread view.
    const request = classifyRequest('kubectl logs orders-7d9f8c6b5-x2x9k -n shop --previous');
    const spec = readSpecFromRequest(request, 'shop');
    expect(spec).toMatchObject({ verb: 'logs', name: 'orders-7d9f8c6b5-x2x9k', previous: true });
    const result = await runRead(readerServing(text, seen), spec!);
    expect(seen).toEqual([expect.objectContaining({ pod: 'orders-7d9f8c6b5-x2x9k', previous: true })]);
    const message = readResultView({ sessionId: 'S1', ...result });

    const posted = JSON.stringify(message);
    for (const secret of secrets) expect(leakedPart(posted, secret), secret).toBeUndefined();
    expectInert(message);
    // The evidence is still there, escaped rather than dropped.
    expect(posted).toContain('ERROR tls: private key does not match certificate');
    expect(posted).toContain(
      '&lt;!channel&gt; &lt;!here&gt; &lt;@U024BE7LH&gt; &lt;https://evil.example|Click here&gt;',
    );
    expect(posted).toContain('&amp; friends');
    expect(posted).not.toContain('&amp;lt;');
    expect(messageBlockProblems(message.blocks)).toEqual([]);
  });

  it('escapes the title and summary in the notification text too', () => {
    const message = readResultView({
      sessionId: 'S1',
      title: 'kubectl logs <!here> -n shop',
      outcome: 'failed',
      summary: 'not-found: pod "<@U024BE7LH>" not found',
      lines: [],
    });
    expectInert(message);
    expect(message.text).toBe('kubectl logs &lt;!here&gt; -n shop: not-found: pod "&lt;@U024BE7LH&gt;" not found');
  });
});

const envelope: TriageEnvelope = {
  schemaVersion: 1,
  routing: {
    intent: 'crashloop-analysis',
    templateId: 'crashloop-analysis@v1',
    domain: 'compute',
    namespace: 'shop',
    bounded: true,
    stepBudget: 3,
    triggerMode: 'replace',
    intentConfidence: 1,
    why: 'explicit',
  },
  rubrics: { safety: 'ALLOW', priority: 'P2', confidence: 'High' },
  summary: 'orders crashes: <!channel> <https://evil.example|Click here> & restart it',
  evidence: { completeness: 1, threshold: 0.8, present: ['pods', 'logs'], missing: [], gaps: [] },
  findings: [
    {
      code: 'CONTAINER_CRASHLOOP',
      analyzer: 'pods',
      domain: 'compute',
      severity: 'high',
      resource: { kind: 'Pod', name: 'orders-7d9f8c6b5-x2x9k', namespace: 'shop' },
      message: 'last words: <@U024BE7LH> please look',
      evidence: [],
      confidence: 0.9,
      related: [],
      remediation: [],
    },
  ],
  rootCause: [],
  nextActions: [
    {
      command: 'kubectl logs orders-7d9f8c6b5-x2x9k -n shop --previous | grep "<!here>"',
      type: 'read-only',
      safety: 'SAFE',
      description: 'read the crash',
    },
  ],
  promptSuggestions: [],
  execution: {
    stepsExecuted: 1,
    stepBudget: 3,
    requests: 2,
    durationMs: 10,
    timedOut: false,
    now: '2025-01-01T00:00:00.000Z',
  },
};

describe('thread views with foreign text', () => {
  it('escape the envelope, including the notification text Slack notifies from', () => {
    const message = envelopeView({ sessionId: 'S1', envelope, hypotheses: [] });
    expectInert(message);
    expect(message.text).toBe(
      'Triage crashloop-analysis in shop: orders crashes: &lt;!channel&gt; &lt;https://evil.example|Click here&gt; &amp; restart it',
    );
    expect(JSON.stringify(message.blocks)).toContain('grep \\"&lt;!here&gt;\\"');
  });

  it('escape a failure and a reviewer note, and keep the bot’s own mention of the decider', () => {
    expectInert(failureView({ sessionId: 'S1', step: 'read <!here>', error: '<@U024BE7LH>' }));
    const decided = decidedView({
      outcome: 'changes-requested',
      by: 'USENIOR1',
      at: '2025-01-01T10:00:00.000Z',
      note: 'ask <!channel> first',
      sessionId: 'S1',
      title: 'Remediation plan',
    });
    expectInert(decided);
    expect(decided.text).toBe(':pencil2: Changes requested by <@USENIOR1>');
    expect(JSON.stringify(decided.blocks)).toContain(
      'by <@USENIOR1> at 2025-01-01 10:00 UTC — “ask &lt;!channel&gt; first”',
    );
  });

  it('mention the approver who denied a break-glass, not an escaped copy of the mention', () => {
    const message = breakGlassOutcomeView('S1', 'denied', 'denied the override.', 'USENIOR1');
    const json = JSON.stringify(message);
    expect(json).toContain('<@USENIOR1> denied the override.');
    expect(json).not.toContain('&lt;@USENIOR1&gt;');
    expect(message.text).toBe(':no_entry_sign: Break-glass denied: <@USENIOR1> denied the override.');
  });

  it('make a broadcast inert as a last resort when a view forgot to escape', () => {
    const message = fitMessage(
      { text: 'ping <!channel|channel>', blocks: [section('hey <!here>'), context('and <!everyone>')] },
      'Full report: `/triage status S1`',
    );
    expectInert(message);
    expect(message.text).toBe('ping &lt;!channel|channel&gt;');
  });
});
