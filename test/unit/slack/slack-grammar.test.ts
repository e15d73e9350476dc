import { describe, expect, it } from 'vitest';
import { GRAMMAR_LIMITS, parseTriageCommand } from '../../../src/slack/grammar.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';

const registry = loadTemplates();
const parse = (text: string) => parseTriageCommand(text, registry);

function problemOf(text: string) {
  const result = parse(text);
  if (result.ok)
    throw new Error(`expected a problem for ${JSON.stringify(text)}, got ${JSON.stringify(result.command)}`);
  return result.problem;
}

function commandOf(text: string) {
  const result = parse(text);
  if (!result.ok) throw new Error(`expected a command for ${JSON.stringify(text)}, got ${result.problem.message}`);
  return result.command;
}

describe('/triage grammar', () => {
  it('reads free text, namespace and note', () => {
    expect(commandOf('pods stuck pending in payments since the 14:00 deploy')).toMatchObject({
      kind: 'start',
      intent: 'scheduling-failures',
      namespace: 'payments',
      text: 'pods stuck pending in payments',
      note: 'since the 14:00 deploy',
      triggerMode: 'replace',
    });
  });

  it('takes an intent typed by id, with -n and with in', () => {
    expect(commandOf('pvc-binding -n checkout')).toMatchObject({
      intent: 'pvc-binding',
      namespace: 'checkout',
      confidence: 1,
    });
    expect(commandOf('oom-killed in batch-jobs')).toMatchObject({ intent: 'oom-killed', namespace: 'batch-jobs' });
    expect(commandOf('crash loop -n api, started after the rollout')).toMatchObject({
      intent: 'crashloop-analysis',
      namespace: 'api',
      note: 'started after the rollout',
    });
  });

  it('recognises the subcommands only when they stand alone', () => {
    expect(commandOf('help')).toEqual({ kind: 'help' });
    expect(commandOf('INTENTS')).toEqual({ kind: 'intents' });
    expect(commandOf('list')).toEqual({ kind: 'list' });
    expect(commandOf('stats')).toEqual({ kind: 'stats' });
    expect(commandOf('status')).toEqual({ kind: 'status' });
    expect(commandOf('status 01JD3Q7K8M2N4P6R8T0V2X4Z6B')).toEqual({
      kind: 'status',
      sessionId: '01JD3Q7K8M2N4P6R8T0V2X4Z6B',
    });
    expect(commandOf('breakglass')).toEqual({ kind: 'breakglass' });
    expect(commandOf('break-glass abc123')).toEqual({ kind: 'breakglass', sessionId: 'abc123' });
    expect(problemOf('status ../../etc').code).toBe('bad-session-id');
  });

  it('names the problem with empty input', () => {
    expect(problemOf('').code).toBe('empty');
    expect(problemOf(' \t ').message).toMatch(/Tell me what is wrong and where/);
  });

  it('refuses input over the length limit, saying how long it was', () => {
    const problem = problemOf('x'.repeat(4000));
    expect(problem.code).toBe('too-long');
    expect(problem.message).toContain(
      `4,000 characters; a triage request is at most ${GRAMMAR_LIMITS.maxLength.toLocaleString('en-US')}`,
    );
  });

  it('refuses control characters', () => {
    expect(problemOf('pods pending in payments\u0007').code).toBe('control-characters');
  });

  it.each([
    ['crashloop in payments; rm -rf /', '`;`'],
    ['crashloop in payments | sh', '`|`'],
    ['crashloop in payments && reboot', '`&&`'],
    ['crashloop in payments `id`', '`ˋ`'],
    ['oom in $(whoami)', '`$(`'],
    ['oom in \u0024{HOME}', '`${`'],
    ['oom in payments > /tmp/x', '`>`'],
    ['oom in $NAMESPACE', '`$`'],
    ['crashloop in payments &amp;&amp; reboot', '`&&`'],
  ])('refuses shell metacharacters in %j', (text, shown) => {
    const problem = problemOf(text);
    expect(problem.code).toBe('shell-metacharacters');
    expect(problem.message).toContain(shown);
  });

  it('does not mistake Slack mentions and links for shell syntax', () => {
    expect(commandOf('<@UREQUESTER> pods stuck pending in payments')).toMatchObject({ namespace: 'payments' });
    expect(commandOf('pvc-binding -n checkout see <https://example.com/runbook|runbook>')).toMatchObject({
      namespace: 'checkout',
    });
  });

  it.each([
    ['pods stuck pending in pаyments', 'Cyrillic "а" (U+0430)', 'payments'],
    ['pods stuck pending -n pаymеnts', 'Cyrillic', 'payments'],
    ['oom -n ｃｈｅｃｋｏｕｔ', 'look-alike characters', 'checkout'],
    ['oom -n pay\u200bments', 'invisible character (U+200B)', 'payments'],
    ['oom -n αpi', 'Greek', 'api'],
  ])('names the homoglyph in %j and suggests the ASCII name', (text, described, ascii) => {
    const problem = problemOf(text);
    expect(problem.code).toBe('homoglyph');
    expect(problem.message).toContain(described);
    expect(problem.message).toContain(`-n ${ascii}`);
  });

  it('refuses namespaces with other non-ASCII characters', () => {
    const problem = problemOf('oom -n zahlungsverkehr-🙂');
    expect(problem.code).toBe('non-ascii-namespace');
    expect(problem.message).toContain('"🙂"');
  });

  it.each([
    ['pods stuck pending -n Payments', /upper-case letters \(did you mean "payments"\?\)/],
    ['pods stuck pending -n pay_ments', /"_"/],
    ['pods stuck pending -n -payments', /needs a namespace name after it/],
    ['pods stuck pending -n payments- ', /must end with a letter or digit/],
    [`pods stuck pending -n ${'a'.repeat(64)}`, /64 characters long \(at most 63\)/],
    ['pods stuck pending -n a -n b', /more than one namespace/],
  ])('explains the invalid namespace in %j', (text, expected) => {
    const problem = problemOf(text);
    expect(problem.code).toBe('invalid-namespace');
    expect(problem.message).toMatch(expected);
  });

  it('starts without a namespace when the request names none, so the triage can locate it', () => {
    const command = commandOf('crash loop');
    expect(command).toMatchObject({ kind: 'start', intent: 'crashloop-analysis', text: 'crash loop' });
    expect(command).not.toHaveProperty('namespace');
    // Without a namespace phrase there is nothing to split a note from: the whole text is the request.
    expect(commandOf('the orders page times out since 19:30')).toMatchObject({
      text: 'the orders page times out since 19:30',
    });
    expect(commandOf('the orders page times out since 19:30')).not.toHaveProperty('note');
  });

  it('runs the namespace sweep when the words name no single intent, keeping the suggestions', () => {
    expect(commandOf('🔥🔥🔥 alles kaputt')).toMatchObject({
      intent: 'namespace-sweep',
      triggerMode: 'observe',
      suggestions: [],
    });
    const ambiguous = commandOf('pod broken in payments');
    expect(ambiguous).toMatchObject({ intent: 'namespace-sweep', namespace: 'payments', triggerMode: 'observe' });
    expect(ambiguous.kind === 'start' && ambiguous.suggestions.length).toBeGreaterThan(1);
    expect(commandOf('anything wrong in billing?')).toMatchObject({ intent: 'namespace-sweep', namespace: 'billing' });
    // Words that name an intent keep it; the sweep is for words that do not.
    expect(commandOf('is shop healthy?')).toMatchObject({ intent: 'namespace-sweep' });
    expect(commandOf('pvc-binding -n checkout')).toMatchObject({ intent: 'pvc-binding' });
  });

  it('still refuses a namespace that cannot exist, with or without an intent', () => {
    expect(problemOf('anything wrong -n Billing').code).toBe('invalid-namespace');
  });

  it('uses the invocation in its examples', () => {
    expect(parseTriageCommand('', registry, { invocation: '@calmops' })).toMatchObject({
      ok: false,
      problem: { message: expect.stringContaining('`@calmops pods stuck pending -n payments`') },
    });
  });
});
