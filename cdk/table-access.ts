/**
 * Which DynamoDB actions each function may send to the table, kept apart from the stack (no CDK imports) so tests
 * that run a function's real code can check its calls against the grant.
 */

const GET = 'dynamodb:GetItem';
export const QUERY = 'dynamodb:Query';
const PUT = 'dynamodb:PutItem';
const UPDATE = 'dynamodb:UpdateItem';
export const DELETE = 'dynamodb:DeleteItem';

/**
 * The table actions each function's code sends, traced from its entry point through the store calls it makes. No
 * function uses Scan, transactions, ConditionCheckItem or streams; only the workflow uses batches.
 */
export const TABLE_ACCESS = {
  /**
   * Sessions, threads, dedupe marks, modal records, timeline and inbox appends, approval decisions, waits claimed
   * on delivery (src/slack, src/workflow/session-lifecycle.ts and deliver-input.ts). Deleting only the index entries a
   * decision leaves behind (`APPROVAL#<id>` / `DECIDER#<user>` and `SESSION`) and the event marks an attempt that
   * failed gives back (`DEDUPE#<key>`); the GSI1 lists for `/triage list`, stats and App
   * Home.
   */
  slack: { table: [GET, QUERY, PUT, UPDATE], deleteUnder: ['APPROVAL#', 'DEDUPE#'], index: true },
  /**
   * The `await` step only (src/workflow/notifier.ts): wait and approval items, pending-approval artifacts, timeline
   * appends, the inbox peek and wait claim on delivery. Nothing is deleted and no index is listed.
   */
  notifier: { table: [GET, QUERY, PUT, UPDATE], deleteUnder: [], index: false },
  /**
   * Every other step: inbox claims, cleared waits and pending approvals, session status changes, and operational
   * memory, whose token index is written and read in batches (src/store/memory.ts).
   */
  workflow: {
    table: [GET, 'dynamodb:BatchGetItem', QUERY, PUT, UPDATE, DELETE, 'dynamodb:BatchWriteItem'],
    deleteUnder: [],
    index: true,
  },
} as const satisfies Record<
  'slack' | 'notifier' | 'workflow',
  { table: readonly string[]; deleteUnder: readonly string[]; index: boolean }
>;
