import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  type SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import type { ExecutionStatus, StartResult, TaskAnswer, WorkflowEngine } from '../workflow/engine.js';

const CLOSED_TOKEN = new Set(['TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken']);

/** What Step Functions answers for a token nobody waits on any more (used, timed out, or of a lost run). */
function isClosedTokenError(error: unknown): boolean {
  return error instanceof Error && CLOSED_TOKEN.has(error.name);
}

/** The workflow engine on AWS Step Functions (or any endpoint speaking its API, such as the local one). */
export function stepFunctionsEngine(sfn: SFNClient): WorkflowEngine {
  const answer = async (send: () => Promise<unknown>): Promise<TaskAnswer> => {
    try {
      await send();
      return 'sent';
    } catch (error) {
      if (isClosedTokenError(error)) return 'closed';
      throw error;
    }
  };
  return {
    async start(stateMachineArn, name, input): Promise<StartResult> {
      try {
        const out = await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }));
        return { started: true, executionArn: out.executionArn ?? '' };
      } catch (error) {
        if (error instanceof ExecutionAlreadyExists) return { started: false, reason: 'name-taken' };
        throw error;
      }
    },
    async status(executionArn): Promise<ExecutionStatus> {
      try {
        const out = await sfn.send(new DescribeExecutionCommand({ executionArn }));
        return (out.status ?? 'UNKNOWN') as ExecutionStatus;
      } catch (error) {
        if (error instanceof Error && error.name === 'ExecutionDoesNotExist') return 'UNKNOWN';
        throw error;
      }
    },
    succeed: (taskToken, output) =>
      answer(() => sfn.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) }))),
    // A heartbeat changes nothing for a task that waits without HeartbeatSeconds; it only says whether it waits.
    heartbeat: (taskToken) => answer(() => sfn.send(new SendTaskHeartbeatCommand({ taskToken }))),
  };
}
