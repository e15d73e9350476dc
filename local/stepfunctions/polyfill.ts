/**
 * aws-local-stepfunctions 3.x calls `Promise.withResolvers` (ES2024) when it runs a Task state. Node 20 lacks it,
 * so this module installs a spec-equivalent version. Import it before the library.
 */
interface PromiseWithResolversShape {
  withResolvers?: unknown;
}

const promiseStatics = Promise as unknown as PromiseWithResolversShape;

if (typeof promiseStatics.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(this: PromiseConstructor) {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new this<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

export {};
