import * as z from 'zod';
import { ID_MAX, RecordId } from '../../../limits.js';
import type { SlackAppDeps } from '../../deps.js';
import { type ClickContext, clickMessageKey, sessionOfClick, tell } from './click.js';

const HypothesisValueSchema = z.object({ s: z.string().min(1).max(ID_MAX), h: RecordId });

/** A hypothesis button: the session tests the chosen hypothesis next. */
export async function chooseHypothesis(deps: SlackAppDeps, click: ClickContext): Promise<void> {
  let value: z.infer<typeof HypothesisValueSchema>;
  try {
    value = HypothesisValueSchema.parse(JSON.parse(click.value));
  } catch {
    await tell(deps, click, 'That button is malformed; choose the hypothesis by replying in the thread instead.');
    return;
  }
  const session = await sessionOfClick(deps, click, value.s, 'hypothesis.choose');
  if (session === undefined) return;
  await deps.workflow.deliverInput({
    sessionId: session.id,
    userId: click.userId,
    text: `test hypothesis ${value.h}`,
    source: 'button',
    action: { type: 'hypothesis', hypothesisId: value.h },
    messageKey: clickMessageKey(click),
  });
}
