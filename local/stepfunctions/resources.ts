/**
 * What a Task state's `Resource` asks for, and how the local engine serves it. Lambda resources and custom
 * resources run in-process handlers; `states:startExecution` starts a nested execution on the same endpoint.
 */
type TaskIntegration =
  | { kind: 'lambda-function'; functionRef: string }
  | { kind: 'lambda-invoke' }
  | { kind: 'start-execution'; mode: 'async' | 'sync' | 'sync2' }
  | { kind: 'custom'; key: string };

export interface ResourceSpec {
  resource: string;
  integration: TaskIntegration;
  /** `.waitForTaskToken`: the state completes only on SendTaskSuccess / SendTaskFailure. */
  callback: boolean;
  /** `resourceType` and `resource` as Step Functions writes them into Task history events. */
  historyType: string;
  historyResource: string;
  /** Plain Lambda function ARNs appear as LambdaFunction* events in the history; integrations as Task* events. */
  lambdaEvents: boolean;
}

const CALLBACK_SUFFIX = '.waitForTaskToken';
const LAMBDA_FUNCTION_ARN = /^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:[^:]+(?::[^:]+)?$/;
const SERVICE_INTEGRATION = /^arn:aws[a-z-]*:states:::([a-z0-9-]+):(.+)$/;

export function classifyResource(resource: string): ResourceSpec {
  if (LAMBDA_FUNCTION_ARN.test(resource)) {
    return {
      resource,
      integration: { kind: 'lambda-function', functionRef: resource },
      callback: false,
      historyType: 'lambda',
      historyResource: resource,
      lambdaEvents: true,
    };
  }
  const service = SERVICE_INTEGRATION.exec(resource);
  if (service?.[1] && service[2]) {
    const [, serviceName, action] = service;
    const callback = action.endsWith(CALLBACK_SUFFIX);
    const baseAction = callback ? action.slice(0, -CALLBACK_SUFFIX.length) : action;
    const base = { resource, callback, historyType: serviceName, historyResource: action, lambdaEvents: false };
    if (serviceName === 'lambda' && baseAction === 'invoke') {
      return { ...base, integration: { kind: 'lambda-invoke' } };
    }
    if (serviceName === 'states' && baseAction === 'startExecution') {
      return { ...base, integration: { kind: 'start-execution', mode: 'async' } };
    }
    if (serviceName === 'states' && baseAction === 'startExecution.sync' && !callback) {
      return { ...base, integration: { kind: 'start-execution', mode: 'sync' } };
    }
    if (serviceName === 'states' && baseAction === 'startExecution.sync:2' && !callback) {
      return { ...base, integration: { kind: 'start-execution', mode: 'sync2' } };
    }
    return {
      ...base,
      integration: { kind: 'custom', key: callback ? resource.slice(0, -CALLBACK_SUFFIX.length) : resource },
    };
  }
  const arnService = /^arn:aws[a-z-]*:([a-z0-9-]+):/.exec(resource)?.[1] ?? 'custom';
  return {
    resource,
    integration: { kind: 'custom', key: resource },
    callback: false,
    historyType: arnService,
    historyResource: resource,
    lambdaEvents: false,
  };
}

/**
 * The function name inside any form Lambda accepts as FunctionName: a name, `name:qualifier`, a partial ARN
 * `123456789012:function:name`, or a full function ARN with or without a qualifier.
 */
export function lambdaFunctionName(functionRef: string): string {
  const parts = functionRef.split(':');
  const functionIndex = parts.indexOf('function');
  if (functionIndex >= 0 && parts[functionIndex + 1]) {
    return parts[functionIndex + 1] as string;
  }
  return parts[0] ?? functionRef;
}
