// @ts-check
// Preloaded (`node --import`) into a command a test runs as a process, to show which files it opened: every path
// opened or read through node:fs is appended, one a line, to the file OPENED_FILES_LOG names. A test asserts on
// what a command never opened without timing it.

import { appendFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const log = process.env['OPENED_FILES_LOG'];
if (log !== undefined && log !== '') {
  const require = createRequire(import.meta.url);
  /** @type {Record<string, unknown>} */
  const fs = require('node:fs');
  /** @type {Record<string, unknown>} */
  const promises = require('node:fs/promises');
  // Writing the log opens it, through the same functions.
  let recording = false;
  const record = (/** @type {unknown} */ path) => {
    if (recording || !(typeof path === 'string' || path instanceof URL || Buffer.isBuffer(path))) return;
    recording = true;
    try {
      appendFileSync(log, `${path instanceof URL ? path.pathname : String(path)}\n`);
    } finally {
      recording = false;
    }
  };
  /**
   * @param {Record<string, unknown>} target
   * @param {string[]} names
   */
  const wrap = (target, names) => {
    for (const name of names) {
      const original = /** @type {(...args: unknown[]) => unknown} */ (target[name]);
      target[name] = function opened(/** @type {unknown[]} */ ...args) {
        record(args[0]);
        return original.apply(this, args);
      };
    }
  };
  wrap(fs, ['open', 'openSync', 'readFile', 'readFileSync', 'createReadStream', 'openAsBlob']);
  wrap(promises, ['open', 'readFile']);
  syncBuiltinESMExports();
}
