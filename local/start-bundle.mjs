// @ts-check
// How `npm start` gets the stack into memory quickly: `local/start.ts` and everything it imports, bundled into one
// file by build/bundle.mjs (which explains why, and when a bundle is rebuilt).

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as bundles from '../build/bundle.mjs';

export { describeBuildError, trackedFile } from '../build/bundle.mjs';

/** @typedef {import('../build/bundle.mjs').BundleLocation} BundleLocation */

/** @type {import('../build/bundle.mjs').BundleTarget} */
const START = {
  name: 'start',
  layout: 'file',
  entry: 'start.mjs',
  builders: [fileURLToPath(import.meta.url)],
  options: async (at) => ({
    esbuild: {
      stdin: {
        contents: "export { main, prepareStart } from './local/start.ts';\n",
        resolveDir: at.root,
        loader: 'ts',
        sourcefile: '<npm start>',
      },
    },
  }),
};

/** @param {BundleLocation} at */
export function bundleFile(at) {
  return join(at.cacheDir, 'start.mjs');
}

/** @param {BundleLocation} at */
export function bundleIsFresh(at) {
  return bundles.bundleIsFresh(at, START);
}

/** @param {BundleLocation} at */
export function buildBundle(at) {
  return bundles.buildBundle(at, START);
}
