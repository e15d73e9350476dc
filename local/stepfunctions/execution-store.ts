import { parseExecutionArn } from './arn.js';
import { SfnServiceError } from './errors.js';
import type {
  ExecutionRecord,
  ExecutionRuntime,
  ExecutionStatus,
  RegisteredStateMachine,
} from './execution-runtime.js';

/**
 * The executions the endpoint knows, by ARN and by name within their state machine. Insertion order is start
 * order, which ListExecutions reverses and eviction follows (oldest closed first).
 */
export class ExecutionStore {
  private readonly executions = new Map<string, ExecutionRuntime>();
  private readonly executionNames = new Map<string, Map<string, ExecutionRuntime>>();

  /** Execution names are unique per state machine, so each registered machine gets its own name table. */
  addStateMachine(stateMachineArn: string): void {
    this.executionNames.set(stateMachineArn, new Map());
  }

  add(runtime: ExecutionRuntime): void {
    const { record } = runtime;
    this.executionNames.get(record.stateMachine.arn)?.set(record.name, runtime);
    this.executions.set(record.arn, runtime);
  }

  has(executionArn: string): boolean {
    return this.executions.has(executionArn);
  }

  get(executionArn: string): ExecutionRuntime | undefined {
    return this.executions.get(executionArn);
  }

  named(stateMachineArn: string, name: string): ExecutionRuntime | undefined {
    return this.executionNames.get(stateMachineArn)?.get(name);
  }

  values(): IterableIterator<ExecutionRuntime> {
    return this.executions.values();
  }

  runtimeOf(executionArn: string): ExecutionRuntime {
    parseExecutionArn(executionArn);
    const runtime = this.executions.get(executionArn);
    if (!runtime) {
      throw new SfnServiceError('ExecutionDoesNotExist', `Execution Does Not Exist: '${executionArn}'`);
    }
    return runtime;
  }

  /** Executions of a state machine, newest first. */
  listExecutions(machine: RegisteredStateMachine, statusFilter?: ExecutionStatus): ExecutionRecord[] {
    const records: ExecutionRecord[] = [];
    for (const runtime of this.executions.values()) {
      const record = runtime.record;
      if (record.stateMachine !== machine) continue;
      if (statusFilter && record.status !== statusFilter) continue;
      records.push(record);
    }
    return records.reverse();
  }

  /**
   * Drops the oldest closed executions beyond `maxExecutions`, with their journals; running ones are kept whatever
   * their number. `forget` lets the caller drop what else it keeps for an evicted execution.
   */
  evictClosedExecutions(maxExecutions: number, forget: (executionArn: string) => void): void {
    if (this.executions.size <= maxExecutions) return;
    for (const [arn, runtime] of this.executions) {
      if (this.executions.size <= maxExecutions) break;
      if (runtime.record.status === 'RUNNING' || !runtime.finished) continue;
      this.executions.delete(arn);
      this.executionNames.get(runtime.record.stateMachine.arn)?.delete(runtime.record.name);
      forget(arn);
      runtime.journal?.remove();
    }
  }
}
