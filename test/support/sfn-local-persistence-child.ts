import { StartExecutionCommand } from '@aws-sdk/client-sfn';
import { startLocalStepFunctions } from '../../local/stepfunctions/index.js';
import { loadAsl, sfnClient } from './sfn-local-harness.js';

/**
 * A process for sfn-local-persistence.test.ts to kill: starts the endpoint on the state directory given as the
 * first argument, starts an approval execution named after the second argument, prints the task token its
 * notifier receives as one JSON line, and then waits to be killed. With `hang` the notifier never returns;
 * otherwise the line is printed only after the notifier returned.
 */

const [stateDir, request] = process.argv.slice(2);
if (!stateDir || !request) {
  throw new TypeError('usage: sfn-local-persistence-child.ts <stateDir> <request>');
}

const sfn = await startLocalStepFunctions({
  stateDir,
  stateMachines: [
    {
      name: 'approval',
      definition: loadAsl('approval'),
      substitutions: { NotifierFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:notifier' },
    },
  ],
  taskHandlers: {
    notifier: async (_payload, context) => {
      const line = `${JSON.stringify({ taskToken: context.taskToken, executionArn: context.executionArn })}\n`;
      if (request === 'hang') {
        process.stdout.write(line);
        return new Promise(() => {});
      }
      // Printed once the engine has recorded that the notifier returned (that happens before the next macrotask).
      setImmediate(() => process.stdout.write(line));
      return { posted: true };
    },
  },
});

const client = sfnClient(sfn.endpoint);
await client.send(
  new StartExecutionCommand({
    stateMachineArn: sfn.stateMachineArn('approval'),
    name: request,
    input: JSON.stringify({ request, timeoutSeconds: 600 }),
  }),
);
setInterval(() => {}, 60_000);
