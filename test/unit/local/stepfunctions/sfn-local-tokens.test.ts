import { describe, expect, it } from 'vitest';
import { TaskTokenRegistry } from '../../../../local/stepfunctions/tokens.js';

function codeOf(action: () => void): string | undefined {
  try {
    action();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

describe('task token registry', () => {
  const executionArn = 'arn:aws:states:us-east-1:000000000000:execution:m:e';

  it('completes a task once and answers later uses with TaskTimedOut', () => {
    const registry = new TaskTokenRegistry();
    const outputs: unknown[] = [];
    const token = registry.issue(executionArn, 'Wait', { succeed: (output) => outputs.push(output), fail: () => {} });
    registry.heartbeat(token);
    registry.succeed(token, { ok: 1 });
    expect(outputs).toEqual([{ ok: 1 }]);
    expect(registry.status(token)).toBe('succeeded');
    expect(codeOf(() => registry.succeed(token, { ok: 2 }))).toBe('TaskTimedOut');
    expect(codeOf(() => registry.fail(token, 'E', 'c'))).toBe('TaskTimedOut');
    expect(codeOf(() => registry.heartbeat(token))).toBe('TaskTimedOut');
    expect(outputs).toHaveLength(1);
  });

  it('reports malformed, unknown, oversized and forgotten tokens with their own codes', () => {
    const registry = new TaskTokenRegistry();
    expect(codeOf(() => registry.heartbeat('short'))).toBe('InvalidToken');
    expect(codeOf(() => registry.heartbeat(`AQ${'B'.repeat(64)}`))).toBe('TaskDoesNotExist');
    expect(codeOf(() => registry.heartbeat('x'.repeat(1025)))).toBe('ValidationException');

    const token = registry.issue(executionArn, 'Wait', { succeed: () => {}, fail: () => {} });
    registry.forgetExecution(executionArn);
    expect(codeOf(() => registry.heartbeat(token))).toBe('TaskDoesNotExist');
  });

  it('closes every open token of an execution and passes failures through', () => {
    const registry = new TaskTokenRegistry();
    const failures: unknown[] = [];
    const failing = registry.issue(executionArn, 'A', {
      succeed: () => {},
      fail: (error, cause) => failures.push({ error, cause }),
    });
    const open = registry.issue(executionArn, 'B', { succeed: () => {}, fail: () => {} });
    registry.fail(failing, 'Denied', 'no');
    expect(failures).toEqual([{ error: 'Denied', cause: 'no' }]);
    registry.closeExecution(executionArn);
    expect(registry.status(open)).toBe('stopped');
    expect(registry.status(failing)).toBe('failed');
    expect(codeOf(() => registry.succeed(open, {}))).toBe('TaskTimedOut');
  });
});
