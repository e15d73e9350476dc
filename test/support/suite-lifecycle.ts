import { afterAll, beforeAll } from 'vitest';

/**
 * Starts something for the enclosing `describe` and closes it after its tests. The object is returned at once and
 * filled in by `beforeAll`, so a test file can hold it from the start and read its fields as it would a started one's.
 */
export function startedForSuite<T extends { close(): Promise<void> }>(start: () => Promise<T>, timeoutMs?: number): T {
  const filled = {} as T;
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
    Object.assign(filled, started);
  }, timeoutMs);
  afterAll(async () => {
    await started?.close();
  });
  return filled;
}
