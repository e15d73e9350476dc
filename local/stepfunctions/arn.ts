import { SfnServiceError } from './errors.js';

export interface AccountScope {
  region: string;
  accountId: string;
}

const NAME_MAX = 80;
// Characters the Step Functions API refuses in state machine and execution names.
const FORBIDDEN_NAME_CHARS = /[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/u;

/** Throws InvalidName unless `name` is a valid state machine or execution name. */
export function assertValidName(name: string, what: 'execution' | 'state machine'): void {
  if (name.length < 1 || name.length > NAME_MAX) {
    throw new SfnServiceError('InvalidName', `Invalid Name: '${name}' (${what} names are 1 to ${NAME_MAX} characters)`);
  }
  if (FORBIDDEN_NAME_CHARS.test(name)) {
    throw new SfnServiceError(
      'InvalidName',
      `Invalid Name: '${name}' (no whitespace, brackets, wildcards, control or special characters " # % \\ ^ | ~ \` $ & , ; : /)`,
    );
  }
}

export function stateMachineArnOf(scope: AccountScope, name: string): string {
  return `arn:aws:states:${scope.region}:${scope.accountId}:stateMachine:${name}`;
}

export function executionArnOf(scope: AccountScope, stateMachineName: string, executionName: string): string {
  return `arn:aws:states:${scope.region}:${scope.accountId}:execution:${stateMachineName}:${executionName}`;
}

const STATE_MACHINE_ARN = /^arn:aws[a-z-]*:states:([a-z0-9-]+):(\d{12}):stateMachine:([^:]+)$/;
const EXECUTION_ARN = /^arn:aws[a-z-]*:states:([a-z0-9-]+):(\d{12}):execution:([^:]+):([^:]+)$/;

/** The state machine name of a state machine ARN; InvalidArn when the text is not one. */
export function parseStateMachineArn(arn: string): { name: string } {
  const match = STATE_MACHINE_ARN.exec(arn);
  if (!match?.[3]) {
    throw new SfnServiceError('InvalidArn', `Invalid Arn: 'Resource type not valid in this context: ${arn}'`);
  }
  return { name: match[3] };
}

/** The state machine and execution names of an execution ARN; InvalidArn when the text is not one. */
export function parseExecutionArn(arn: string): { stateMachineName: string; executionName: string } {
  const match = EXECUTION_ARN.exec(arn);
  if (!match?.[3] || !match[4]) {
    throw new SfnServiceError('InvalidArn', `Invalid Arn: 'Resource type not valid in this context: ${arn}'`);
  }
  return { stateMachineName: match[3], executionName: match[4] };
}
