import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DescribeExecutionCommand, type DescribeExecutionCommandOutput, SFNClient } from '@aws-sdk/client-sfn';

const ASL_DIR = fileURLToPath(new URL('../fixtures/asl/', import.meta.url));

export function loadAsl(name: string): string {
  return readFileSync(`${ASL_DIR}${name}.asl.json`, 'utf8');
}

export function sfnClient(endpoint: string): SFNClient {
  return new SFNClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    maxAttempts: 1,
  });
}

/** Polls until `probe` returns a value other than undefined, failing after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

/** Waits until the execution is closed and returns its description. */
export function waitForClosed(client: SFNClient, executionArn: string): Promise<DescribeExecutionCommandOutput> {
  return waitFor(async () => {
    const description = await client.send(new DescribeExecutionCommand({ executionArn }));
    return description.status === 'RUNNING' ? undefined : description;
  }, `execution ${executionArn} to close`);
}

/** Calls `send` and returns the error name it rejects with. */
export async function errorNameOf(send: () => Promise<unknown>): Promise<string> {
  try {
    await send();
  } catch (error) {
    return (error as Error).name;
  }
  throw new Error('Expected the call to fail');
}

/** Records what a task handler received so a test can wait for a particular call. */
export class Inbox<T> {
  readonly items: T[] = [];

  push(item: T): void {
    this.items.push(item);
  }

  find(predicate: (item: T) => boolean, what: string): Promise<T> {
    return waitFor(() => this.items.find(predicate), what);
  }

  count(predicate: (item: T) => boolean): number {
    return this.items.filter(predicate).length;
  }
}
