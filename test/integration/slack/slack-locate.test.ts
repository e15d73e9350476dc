import { readFileSync } from 'node:fs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DEMO_IDS, type StandInMessage } from '../../../local/slack/index.js';
import { parseSnapshot, parseSnapshotLogs, type SnapshotLogs } from '../../../src/cluster/snapshot.js';
import type { KubeObject } from '../../../src/cluster/types.js';
import { useSlackOnStack } from '../../support/slack-local-stack.js';
import { buttonsOf, renderMessage, type SlackButton } from '../../support/slack-messages.js';
import { waitFor } from '../../support/workflow-harness.js';

/**
 * Requests that are vague or name no namespace, through signed Slack requests on the local stack (dynalite, the
 * real state machines on the local Step Functions endpoint, the snapshot API server serving incident snapshots, the
 * Slack stand-in). The Slack function never reads the cluster: the workflow's triage sweeps, locates, or asks.
 */

const { requester, engineer } = DEMO_IDS;
const channel = DEMO_IDS.incidents;

interface Snapshot {
  objects: KubeObject[];
  logs?: SnapshotLogs;
}

function incident(name: string): Snapshot {
  const dir = new URL(`../../fixtures/incidents/${name}/`, import.meta.url);
  const objects = parseSnapshot(readFileSync(new URL('snapshot.yaml', dir), 'utf8'));
  try {
    return { objects, logs: parseSnapshotLogs(readFileSync(new URL('logs.json', dir), 'utf8')) };
  } catch {
    return { objects };
  }
}

/** Two clusters' worth of applications in one: both run a Deployment, Service and pods called `checkout`. */
function merged(...snapshots: Snapshot[]): Snapshot {
  const seen = new Set<string>();
  const objects: KubeObject[] = [];
  for (const s of snapshots) {
    for (const o of s.objects) {
      const key = `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      objects.push(o);
    }
  }
  return { objects, logs: Object.assign({}, ...snapshots.map((s) => s.logs ?? {})) };
}

describe('vague and namespace-less requests through Slack', () => {
  const { stack, slack, triage, event, click } = useSlackOnStack(
    { snapshot: incident('m-healthy-shop') },
    { label: 'locate', startTimeoutMs: 60_000 },
  );
  const serve = (snapshot: Snapshot) => stack().kube?.setObjects(snapshot.objects, snapshot.logs);

  const thread = (threadTs: string) =>
    slack()
      .messages(channel)
      .filter((m) => m.thread_ts === threadTs && m.ephemeral_to === undefined);
  const waitForText = (threadTs: string, pattern: RegExp, timeoutMs = 45_000) =>
    waitFor(
      `a thread message matching ${pattern}`,
      async () => thread(threadTs).find((m) => pattern.test(renderMessage(m))),
      timeoutMs,
    ).catch((error: Error) => {
      // The thread says what happened instead (a failure notice, another question): show it.
      const shown = thread(threadTs).map((m) => m.text.slice(0, 300));
      throw new Error(`${error.message}; the thread has:\n${shown.join('\n')}`, { cause: error });
    });
  const envelopes = (threadTs: string) => thread(threadTs).filter((m) => /^Triage \S+ in \S+:/.test(m.text));
  const ephemeralsTo = (user: string) =>
    slack()
      .callsFor('chat.postEphemeral')
      .filter((c) => c.args['user'] === user)
      .map((c) => String(c.args['text']));
  const waitForEphemeral = (user: string, pattern: RegExp, after: number) =>
    waitFor(`an ephemeral answer matching ${pattern}`, async () =>
      ephemeralsTo(user)
        .slice(after)
        .find((t) => pattern.test(t)),
    );

  async function session(sessionId: string) {
    const out = await stack().docClient.send(
      new GetCommand({ TableName: 'calmops', Key: { PK: `SESSION#${sessionId}`, SK: 'META' } }),
    );
    return out.Item as { namespace: string; intent: string; status: string };
  }

  async function timeline(sessionId: string): Promise<string[]> {
    const store = (await import('../../../src/store/index.js')).createStore({
      client: stack().docClient,
      tableName: 'calmops',
    });
    return (await store.timeline.list(sessionId)).map((e) => e.type);
  }

  it('sweeps a namespace for vague words instead of refusing them', async () => {
    serve(incident('m-healthy-shop'));
    const storefront = await triage('something is wrong with the storefront in shop');
    const swept = await waitForText(storefront.threadTs, /^Triage \S+ in shop:/);
    expect(renderMessage(swept)).toContain('namespace-sweep@v1');
    expect(renderMessage(swept)).toMatch(/the whole namespace is read and the evidence decides/);
    const all = thread(storefront.threadTs).map(renderMessage).join('\n');
    expect(all).not.toMatch(/more than one thing|could not tell what is wrong/);
    expect(await session(storefront.sessionId)).toMatchObject({ namespace: 'shop', status: 'open' });

    // No namespace phrase at all: "shop" is a namespace in the cluster, so the triage finds it there.
    const healthy = await triage('is shop healthy?');
    const located = await waitForText(healthy.threadTs, /^Triage \S+ in shop:/);
    expect(renderMessage(located)).toContain('namespace-sweep@v1');
    expect(renderMessage(located)).toMatch(/namespace \\"shop\\" from the cluster: \\"shop\\" is a namespace/);
    // The session follows the envelope: where it was located, and the intent its evidence points to.
    const intent = /^Triage (\S+) in shop:/.exec(located.text)?.[1];
    await waitFor('the session to follow the envelope', async () => {
      const s = await session(healthy.sessionId);
      return s.namespace === 'shop' && s.intent === intent;
    });
  }, 120_000);

  it('sweeps for a vague mention, and the session takes the intent the evidence points to', async () => {
    serve(incident('c-vague-billing'));
    const mention = await event('app_mention', requester, `<@${DEMO_IDS.botUser}> anything wrong in billing?`);
    const envelope = await waitForText(mention.ts, /^Triage \S+ in billing:/);
    expect(renderMessage(envelope)).toContain('namespace-sweep@v1');
    expect(renderMessage(envelope)).toMatch(/STRIPE_API_KEY/);
    const sessionId = /Session `([^`]+)`/.exec(renderMessage(envelope))?.[1] ?? '';
    // The sweep started the session; its top cause gives it its intent.
    await waitFor('the session to adopt the envelope intent', async () => {
      const s = await session(sessionId);
      return s.intent === 'crashloop-analysis' ? s : undefined;
    });
    expect(/^Triage (\S+) in billing:/.exec(envelope.text)?.[1]).toBe('crashloop-analysis');
    expect(await timeline(sessionId)).toContain('intent.adopted');
  }, 120_000);

  it('locates the namespace from the words when the request names none, and shows why', async () => {
    serve(incident('m-orders-netpol-db'));
    const { sessionId, threadTs } = await triage('the orders page times out');
    const envelope = await waitForText(threadTs, /^Triage \S+ in eats:/);
    expect(renderMessage(envelope)).toMatch(
      /namespace \\"eats\\" from the cluster: \\"orders\\" is a Deployment there/,
    );
    expect(renderMessage(envelope)).toContain('SERVICE_NO_ENDPOINTS');
    expect(await session(sessionId)).toMatchObject({ namespace: 'eats' });
    expect(await timeline(sessionId)).toContain('namespace.located');
    // The session reads where it was located: a read in its thread runs in eats.
    await event('message', requester, 'kubectl get pods', threadTs);
    await waitForText(threadTs, /kubectl get pods[\s\S]*orders-/);
  }, 120_000);

  it('offers one button per matching namespace, continues where the click says, and takes the first answer only', async () => {
    serve(merged(incident('m-healthy-shop'), incident('m-cart-quota')));
    const { sessionId, threadTs } = await triage('checkout is failing');
    const question = await waitForText(threadTs, /Which namespace\?/);
    const offered = buttonsOf(question);
    expect(offered.map((b) => b.action_id)).toEqual(['namespace_choose:1', 'namespace_choose:2']);
    expect(offered.map((b) => JSON.parse(b.value))).toEqual([
      { s: sessionId, n: 'atelier' },
      { s: sessionId, n: 'shop' },
    ]);
    // Each candidate comes with what matched there; the value never carries a task token.
    expect(renderMessage(question)).toMatch(/`atelier`: \\"checkout\\" is a Deployment there/);
    expect(renderMessage(question)).toMatch(/`shop`: \\"checkout\\" is a Deployment there/);
    expect(offered.every((b) => b.value.length < 200)).toBe(true);
    expect(envelopes(threadTs)).toEqual([]);
    expect((await session(sessionId)).namespace).toBe('');

    // A value calmops did not write is refused before anything reaches the session.
    let seen = ephemeralsTo(requester).length;
    await click(requester, question, { action_id: 'namespace_choose:1', value: 'not json' });
    await waitForEphemeral(requester, /malformed; nothing was changed/, seen);
    // A well-formed value naming a namespace that was not offered changes nothing either.
    await click(requester, question, {
      action_id: 'namespace_choose:1',
      value: JSON.stringify({ s: sessionId, n: 'kube-system' }),
    });
    await waitForText(threadTs, /`kube-system` is not among the namespaces offered/);
    expect((await session(sessionId)).namespace).toBe('');

    // Two people answer at once: the first answer wins, the second is told, and one envelope is posted.
    const [atelier, shop] = offered as [SlackButton, SlackButton];
    await click(requester, question, shop);
    await click(engineer, question, atelier);
    const envelope = await waitForText(threadTs, /^Triage \S+ in shop:/);
    expect(renderMessage(envelope)).toMatch(/namespace \\"shop\\" given explicitly/);
    // The envelope may propose a specialist first; the buffered second answer is read once that is decided.
    let declined = false;
    await waitFor('the second answer to be turned down', async () => {
      const handoff = thread(threadTs).find((m) => buttonsOf(m).some((b) => b.action_id === 'approval_deny'));
      const deny = handoff && buttonsOf(handoff).find((b) => b.action_id === 'approval_deny');
      if (!declined && handoff && deny) {
        declined = true;
        await click(requester, handoff, deny);
      }
      const told = [...ephemeralsTo(engineer), ...thread(threadTs).map((m) => m.text)];
      return told.find((t) => /already continues in `shop`, so `atelier` was not taken/.test(t));
    }).catch((error: Error) => {
      throw new Error(
        `${error.message}: ${thread(threadTs)
          .map((m) => renderMessage(m).slice(0, 400))
          .join('\n')}`,
      );
    });
    expect(await session(sessionId)).toMatchObject({ namespace: 'shop' });
    const edited = thread(threadTs).find((m) => m.ts === question.ts) as StandInMessage;
    expect(edited.edited).toBeDefined();
    expect(buttonsOf(edited)).toEqual([]);
    expect(renderMessage(edited)).toMatch(
      /Continuing in `shop`, chosen by <@UREQUESTER> \(\\"checkout\\" is a Deployment/,
    );

    // A repeat of the same click (Slack's retry: same action_ts, same person) is dropped before any work.
    const aboutNamespace = () =>
      thread(threadTs).filter((m) => /Continuing in|already continues|not among the namespaces/.test(m.text)).length;
    const posts = aboutNamespace();
    seen = ephemeralsTo(requester).length;
    await click(requester, question, shop, { actionTs: '1700000000.424242' });
    await waitForEphemeral(requester, /already continues in `shop`; nothing was changed/, seen);
    const afterFirst = ephemeralsTo(requester).length;
    await click(requester, question, shop, { actionTs: '1700000000.424242' });
    expect(ephemeralsTo(requester).length).toBe(afterFirst);
    // A click on the stale question, from its own channel or from another, starts nothing.
    seen = ephemeralsTo(engineer).length;
    await click(engineer, question, atelier);
    await waitForEphemeral(engineer, /already continues in `shop`, so `atelier` was not taken/, seen);
    await click(engineer, question, atelier, { channel: 'COTHER01' });
    await waitForEphemeral(engineer, /belongs to another channel; nothing was changed/, seen);
    // Two clicks answered since: the repeated one got no late answer either.
    expect(ephemeralsTo(requester).length).toBe(afterFirst);
    expect(envelopes(threadTs)).toHaveLength(1);
    expect(aboutNamespace()).toBe(posts);
    const events = await timeline(sessionId);
    expect(events.filter((t) => t === 'namespace.chosen')).toHaveLength(1);
    expect(events).toContain('namespace.unlocated');
  }, 150_000);

  it('sweeps the cluster when nothing matches, and settles in the namespace that is in trouble', async () => {
    serve(incident('c-vague-billing'));
    const { sessionId, threadTs } = await triage('the flux capacitor is broken');
    const envelope = await waitForText(threadTs, /^Triage \S+ in billing:/);
    expect(renderMessage(envelope)).toContain('STRIPE_API_KEY');
    expect(renderMessage(envelope)).toMatch(/cluster sweep/);
    expect(await session(sessionId)).toMatchObject({ namespace: 'billing' });
  }, 120_000);
});
