import { describe, expect, it } from 'vitest';
import { DEMO_IDS } from '../../../local/slack/index.js';
import { collectMetricsFromStore } from '../../../src/memory/collect.js';
import { panicSignalEvent } from '../../../src/memory/metrics.js';
import { eventBody, openSession, send, slashBody, useSlackHarness } from '../../support/slack-harness.js';

/**
 * One computation of the ADR-005 metrics: `/triage stats`, the App Home and `calmops stats` (collectMetricsFromStore
 * with its defaults) show the same figures at the same moment, whatever is open in which channel.
 */

describe('the metrics on every surface', () => {
  const h = useSlackHarness();

  it('are the same in /triage stats, the App Home and calmops stats', async () => {
    // Two resolved incidents, one with a blocked intervention, and open sessions with interventions of their own.
    for (let i = 0; i < 2; i += 1) {
      const { session } = await openSession(h);
      const event = panicSignalEvent(
        { type: 'rapid_fire_commands', severity: 'high', at: new Date().toISOString(), description: 'x', evidence: {} },
        true,
      );
      await h.store.timeline.append(session.id, {
        type: event.type,
        actor: event.actor,
        summary: event.summary,
        data: event.data,
      });
      await h.store.sessions.update(session.id, session.version, { status: 'resolved' });
    }
    for (let i = 0; i < 3; i += 1) {
      const { session } = await openSession(h);
      const event = panicSignalEvent(
        {
          type: 'bypassing_diagnostics',
          severity: 'critical',
          at: new Date().toISOString(),
          description: 'y',
          evidence: {},
        },
        true,
      );
      await h.store.timeline.append(session.id, {
        type: event.type,
        actor: event.actor,
        summary: event.summary,
        data: event.data,
      });
    }

    const slash = JSON.parse((await send(h.handle, slashBody('stats'))).body) as { blocks: unknown[] };
    await send(
      h.handle,
      eventBody({ type: 'app_home_opened', user: DEMO_IDS.requester, channel: DEMO_IDS.dm, tab: 'home' }),
      {
        contentType: 'application/json',
      },
    );
    const home = JSON.stringify(h.slack.callsFor('views.publish').at(-1)?.args['view']);
    const cli = await collectMetricsFromStore({ sessions: h.store.sessions, timeline: h.store.timeline });

    const slashText = JSON.stringify(slash.blocks);
    // The same blocks: the App Home embeds exactly what /triage stats answers.
    for (const block of slash.blocks) expect(home).toContain(JSON.stringify(block));
    expect(cli.window.resolvedSessions).toBe(2);
    expect(cli.metrics.interventions.total).toBe(2);
    expect(cli.metrics.sessions.total).toBe(2);
    expect(slashText).toContain('The last 2 resolved incidents');
  });
});
