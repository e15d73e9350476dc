import { MAX_TIMER_MS, type WaitStateInfo } from './definition.js';
import type { EngineErrorClasses } from './engine-errors.js';
import { type ExecutionRuntime, elapsedMs, takeResume } from './execution-runtime.js';

export interface WaitOptions {
  clock: () => Date;
  waitTimeScale: number;
  errors: EngineErrorClasses;
}

/**
 * Runs a Wait state, which runs as a local Task (see definition.ts) so that `waitTimeScale` and the endpoint's clock
 * apply and a stopped execution stops waiting. A resumed Wait waits only for what is left of its duration since the
 * state was entered.
 */
export async function runWait(
  options: WaitOptions,
  runtime: ExecutionRuntime,
  info: WaitStateInfo,
  raw: unknown,
): Promise<unknown> {
  const { errors } = options;
  const { p: input, seconds, timestamp } = (raw ?? {}) as { p?: unknown; seconds?: unknown; timestamp?: unknown };
  const resumed = takeResume(runtime, info.stateName);
  let ms = 0;
  if (seconds !== undefined) {
    if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 0) {
      throw errors.createRuntime(`Wait seconds must be a non-negative integer, got ${JSON.stringify(seconds)}`);
    }
    ms = seconds * 1000 * options.waitTimeScale;
    if (resumed) ms -= elapsedMs(options.clock, resumed.enteredAt);
  } else if (timestamp !== undefined) {
    const at = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
    if (Number.isNaN(at)) {
      throw errors.createRuntime(`Wait timestamp must be an RFC 3339 timestamp, got ${JSON.stringify(timestamp)}`);
    }
    ms = (at - options.clock().getTime()) * options.waitTimeScale;
  }
  ms = Math.min(Math.max(0, ms), MAX_TIMER_MS);
  const signal = runtime.controller.signal;
  await new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(errors.createRuntime('The execution is no longer running'));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(errors.createRuntime('The execution is no longer running'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return input;
}
