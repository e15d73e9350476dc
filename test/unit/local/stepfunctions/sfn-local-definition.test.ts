import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { assertValidName, parseExecutionArn, parseStateMachineArn } from '../../../../local/stepfunctions/arn.js';
import {
  applySubstitutions,
  LOCAL_WAIT_RESOURCE,
  prepareDefinition,
  type TaskStateInfo,
} from '../../../../local/stepfunctions/definition.js';
import { SfnServiceError, StateMachineDefinitionError } from '../../../../local/stepfunctions/errors.js';
import { classifyResource, lambdaFunctionName } from '../../../../local/stepfunctions/resources.js';

const STATEMACHINES_DIR = fileURLToPath(new URL('../../../../statemachines/', import.meta.url));

function runtimeStates(definition: object, substitutions?: Record<string, string>) {
  const prepared = prepareDefinition(definition, { substitutions });
  // The rewritten definition is what the engine runs; it is reachable for inspection through the machine.
  const runtime = (prepared.machine as unknown as { definition: { States: Record<string, Record<string, unknown>> } })
    .definition;
  return { prepared, states: runtime.States };
}

describe('definition preparation', () => {
  it('replaces placeholders as JSON string content and refuses leftovers', () => {
    const placeholder = (key: string) => `\${${key}}`;
    expect(applySubstitutions(`{"a":"${placeholder('X')}"}`, { X: 'say "hi"' })).toBe('{"a":"say \\"hi\\""}');
    expect(() => applySubstitutions(`{"a":"${placeholder('Missing')}"}`, {})).toThrow(/Missing/);
  });

  it('moves TimeoutSecondsPath into Parameters so it is read from the state input', () => {
    const { prepared, states } = runtimeStates({
      StartAt: 'Wait',
      States: {
        Wait: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
          Parameters: { FunctionName: 'notifier', Payload: { 'token.$': '$$.Task.Token' } },
          TimeoutSecondsPath: '$.idle',
          HeartbeatSeconds: 30,
          End: true,
        },
      },
    });
    expect(states.Wait?.Parameters).toEqual({
      p: { FunctionName: 'notifier', Payload: { 'token.$': '$$.Task.Token' } },
      't.$': '$.idle',
    });
    expect(states.Wait?.TimeoutSecondsPath).toBeUndefined();
    expect(states.Wait?.HeartbeatSeconds).toBeUndefined();
    const info = prepared.runnable.get('Wait') as TaskStateInfo;
    expect(info.timeoutSecondsPath).toBe('$.idle');
    expect(info.spec.callback).toBe(true);
    expect(info.spec.integration).toEqual({ kind: 'lambda-invoke' });
  });

  it('runs Wait states as local tasks that keep their paths, and collects nested states', () => {
    const { prepared, states } = runtimeStates({
      StartAt: 'Hold',
      States: {
        Hold: { Type: 'Wait', SecondsPath: '$.seconds', OutputPath: '$.keep', Next: 'Fan' },
        Fan: {
          Type: 'Parallel',
          Branches: [{ StartAt: 'Inner', States: { Inner: { Type: 'Wait', Seconds: 5, End: true } } }],
          End: true,
        },
      },
    });
    expect(states.Hold).toMatchObject({
      Type: 'Task',
      Resource: LOCAL_WAIT_RESOURCE,
      Parameters: { 'p.$': '$', 'seconds.$': '$.seconds' },
      OutputPath: '$.keep',
      Next: 'Fan',
    });
    expect(prepared.stateTypes.get('Hold')).toBe('Wait');
    expect(prepared.stateTypes.get('Inner')).toBe('Wait');
    expect(prepared.runnable.get('Inner')).toEqual({ kind: 'wait', stateName: 'Inner' });
  });

  it('scales Retry intervals when asked', () => {
    const prepared = prepareDefinition(
      {
        StartAt: 'T',
        States: {
          T: {
            Type: 'Task',
            Resource: 'arn:aws:lambda:us-east-1:000000000000:function:f',
            Retry: [{ ErrorEquals: ['States.ALL'], IntervalSeconds: 4, MaxDelaySeconds: 10 }, { ErrorEquals: ['X'] }],
            End: true,
          },
        },
      },
      { retryIntervalScale: 0.5 },
    );
    const retry = (prepared.machine as unknown as { definition: { States: { T: { Retry: unknown } } } }).definition
      .States.T.Retry;
    expect(retry).toEqual([
      { ErrorEquals: ['States.ALL'], IntervalSeconds: 2, MaxDelaySeconds: 5 },
      { ErrorEquals: ['X'], IntervalSeconds: 0.5 },
    ]);
  });

  it('refuses invalid ASL, JSONata, variables and duplicate state names', () => {
    expect(() => prepareDefinition('{"StartAt": "A"')).toThrow(StateMachineDefinitionError);
    expect(() => prepareDefinition({ StartAt: 'Nope', States: { A: { Type: 'Pass', End: true } } })).toThrow(
      StateMachineDefinitionError,
    );
    expect(() =>
      prepareDefinition({ QueryLanguage: 'JSONata', StartAt: 'A', States: { A: { Type: 'Pass', End: true } } }),
    ).toThrow(/JSONata/);
    expect(() =>
      prepareDefinition({ StartAt: 'A', States: { A: { Type: 'Pass', Assign: { x: 1 }, End: true } } }),
    ).toThrow(/Assign/);
    expect(() =>
      prepareDefinition({
        StartAt: 'A',
        States: {
          A: {
            Type: 'Parallel',
            Branches: [{ StartAt: 'A', States: { A: { Type: 'Pass', End: true } } }],
            End: true,
          },
        },
      }),
    ).toThrow(/DUPLICATE_STATE_NAMES|used more than once/);
  });

  it('accepts every state machine of the product once its placeholders are filled', () => {
    const files = readdirSync(STATEMACHINES_DIR).filter((file) => file.endsWith('.asl.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(`${STATEMACHINES_DIR}${file}`, 'utf8');
      const substitutions: Record<string, string> = {};
      for (const [, key] of text.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)) {
        substitutions[key as string] = key?.endsWith('StateMachineArn')
          ? `arn:aws:states:us-east-1:000000000000:stateMachine:${key}`
          : `arn:aws:lambda:us-east-1:000000000000:function:${key}`;
      }
      const prepared = prepareDefinition(text, { substitutions });
      expect(prepared.runnable.size, file).toBeGreaterThan(0);
    }
  });
});

describe('resource classification', () => {
  it('recognises Lambda, startExecution, callback and custom resources', () => {
    expect(classifyResource('arn:aws:lambda:us-east-1:000000000000:function:reader').integration).toEqual({
      kind: 'lambda-function',
      functionRef: 'arn:aws:lambda:us-east-1:000000000000:function:reader',
    });
    expect(classifyResource('arn:aws:states:::lambda:invoke')).toMatchObject({
      integration: { kind: 'lambda-invoke' },
      callback: false,
      historyType: 'lambda',
      historyResource: 'invoke',
    });
    expect(classifyResource('arn:aws:states:::states:startExecution.sync:2')).toMatchObject({
      integration: { kind: 'start-execution', mode: 'sync2' },
      callback: false,
    });
    expect(classifyResource('arn:aws:states:::states:startExecution.waitForTaskToken')).toMatchObject({
      integration: { kind: 'start-execution', mode: 'async' },
      callback: true,
    });
    expect(classifyResource('arn:aws:states:::sqs:sendMessage.waitForTaskToken')).toMatchObject({
      integration: { kind: 'custom', key: 'arn:aws:states:::sqs:sendMessage' },
      callback: true,
    });
  });

  it('extracts the function name from every FunctionName form', () => {
    expect(lambdaFunctionName('workflow')).toBe('workflow');
    expect(lambdaFunctionName('workflow:live')).toBe('workflow');
    expect(lambdaFunctionName('000000000000:function:workflow')).toBe('workflow');
    expect(lambdaFunctionName('arn:aws:lambda:us-east-1:000000000000:function:workflow:7')).toBe('workflow');
  });
});

describe('names and ARNs', () => {
  it('refuses names Step Functions refuses', () => {
    for (const bad of ['', 'a b', 'x'.repeat(81), 'a/b', 'a:b', 'a$b', 'tab\there']) {
      expect(() => assertValidName(bad, 'execution'), JSON.stringify(bad)).toThrow(SfnServiceError);
    }
    expect(() => assertValidName('session-01HZX-resume-2', 'execution')).not.toThrow();
  });

  it('parses state machine and execution ARNs', () => {
    expect(parseStateMachineArn('arn:aws:states:eu-west-1:123456789012:stateMachine:review')).toEqual({
      name: 'review',
    });
    expect(parseExecutionArn('arn:aws:states:eu-west-1:123456789012:execution:review:run-1')).toEqual({
      stateMachineName: 'review',
      executionName: 'run-1',
    });
    expect(() => parseExecutionArn('arn:aws:states:eu-west-1:123456789012:stateMachine:review')).toThrow(
      expect.objectContaining({ code: 'InvalidArn' }),
    );
  });
});
