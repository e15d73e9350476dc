import { AlertGroupRepository } from './alert-groups.js';
import { type ApprovalOptions, ApprovalRepository } from './approvals.js';
import { BlackboardRepository } from './blackboard.js';
import type { StoreContext } from './client.js';
import { DedupeRepository } from './dedupe.js';
import { type InboxOptions, InboxRepository } from './inbox.js';
import { ModalRepository } from './modals.js';
import { SessionRepository } from './sessions.js';
import { ThreadRepository } from './threads.js';
import { TimelineRepository } from './timeline.js';
import { WaitRepository } from './waits.js';

export * from './alert-groups.js';
export * from './approvals.js';
export * from './blackboard.js';
export * from './client.js';
export * from './create-table.js';
export * from './dedupe.js';
export {
  assertItemSize,
  conditional,
  getItem,
  isConditionalCheckFailed,
  MAX_ITEM_BYTES,
  parseInput,
  parseRecord,
  queryItems,
  request,
} from './dynamo.js';
export * from './errors.js';
export * from './inbox.js';
export * from './keys.js';
export * from './modals.js';
export * from './sessions.js';
export * from './table.js';
export * from './threads.js';
export * from './timeline.js';
export * from './waits.js';

/** Every repository over one client and table. */
export interface Store {
  sessions: SessionRepository;
  timeline: TimelineRepository;
  inbox: InboxRepository;
  waits: WaitRepository;
  approvals: ApprovalRepository;
  threads: ThreadRepository;
  dedupe: DedupeRepository;
  modals: ModalRepository;
  blackboard: BlackboardRepository;
  alertGroups: AlertGroupRepository;
}

export function createStore(
  ctx: StoreContext,
  options: { inbox?: InboxOptions; approvals?: ApprovalOptions } = {},
): Store {
  return {
    sessions: new SessionRepository(ctx),
    timeline: new TimelineRepository(ctx),
    inbox: new InboxRepository(ctx, options.inbox),
    waits: new WaitRepository(ctx),
    approvals: new ApprovalRepository(ctx, options.approvals),
    threads: new ThreadRepository(ctx),
    dedupe: new DedupeRepository(ctx),
    modals: new ModalRepository(ctx),
    blackboard: new BlackboardRepository(ctx),
    alertGroups: new AlertGroupRepository(ctx),
  };
}
