import * as z from 'zod';
import { KeyPart } from '../limits.js';
import type { StoreContext } from './client.js';
import { conditionalPut, getItem, parseInput, parseRecord } from './dynamo.js';
import { ThreadAlreadyBoundError } from './errors.js';
import { IsoTimestampSchema, keys, toIso } from './keys.js';

export const ThreadRecordSchema = z.object({
  channelId: KeyPart,
  threadTs: KeyPart,
  sessionId: KeyPart,
  createdAt: IsoTimestampSchema,
});
export type ThreadRecord = z.infer<typeof ThreadRecordSchema>;

/** Maps a Slack thread to the one session that owns it. */
export class ThreadRepository {
  constructor(private readonly ctx: StoreContext) {}

  /**
   * Binds the thread to the session. Binding again to the same session is a no-op; a thread never moves to another
   * session (ThreadAlreadyBoundError), so a retried Slack event cannot fork an incident.
   */
  async bind(channelId: string, threadTs: string, sessionId: string, now: Date = new Date()): Promise<ThreadRecord> {
    const record = parseInput(
      ThreadRecordSchema,
      { channelId, threadTs, sessionId, createdAt: toIso(now) },
      'thread binding',
    );
    const key = keys.thread(record.channelId, record.threadTs);
    const result = await conditionalPut(this.ctx, key, {
      Item: { ...key, ...record },
      ConditionExpression: 'attribute_not_exists(PK)',
    });
    if (result.ok) return record;
    const existing = await this.lookup(record.channelId, record.threadTs);
    if (existing?.sessionId === record.sessionId) return existing;
    throw new ThreadAlreadyBoundError(record.channelId, record.threadTs, existing?.sessionId ?? 'an unknown session');
  }

  async lookup(channelId: string, threadTs: string): Promise<ThreadRecord | undefined> {
    const channel = parseInput(KeyPart, channelId, 'channel id');
    const ts = parseInput(KeyPart, threadTs, 'thread ts');
    const item = await getItem(this.ctx, keys.thread(channel, ts));
    return item === undefined ? undefined : parseRecord(ThreadRecordSchema, item);
  }

  /** The session id owning the thread, or undefined. */
  async sessionFor(channelId: string, threadTs: string): Promise<string | undefined> {
    return (await this.lookup(channelId, threadTs))?.sessionId;
  }
}
