// @ts-check
// Runs a bundled CommonJS file with V8's code cache kept beside it.
//
// Compiling the command line's bundle is a large part of what every short command spends: V8 parses a megabyte of
// source and then compiles each function the first time it is called. A code cache made at the end of a successful
// run holds the compiled form of every function that run used, so later runs of the same command skip both. Node
// 22.1 can keep such a cache for modules by itself (`module.enableCompileCache`), but not Node 20, and not for a file
// compiled here; this works the same on every version.
//
// The cache is V8's own format: V8 refuses one made by another V8 version, with other flags or for another source,
// and then the file is compiled as if there were none and the cache is written again. It lives in the bundle's own
// folder, which a new build replaces, and is written under a temporary name and renamed, so a run reads a whole cache
// or none. A folder that cannot be written to (a read-only install) only means no cache.

import { isAscii } from 'node:buffer';
import { closeSync, fstatSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import vm from 'node:vm';

/**
 * The file's cache: one per V8 version and architecture, so that switching Node versions does not make each run
 * rewrite the cache the other wrote.
 * @param {string} file
 */
export function codeCacheFile(file) {
  return `${file}.${process.versions.v8}-${process.arch}.v8cache`;
}

/**
 * `require(file)` for a self-contained CommonJS bundle, with its code cache: the file's `module.exports`. The file
 * may not use `import()`, which Node offers a script compiled this way only behind an experimental flag; the
 * command line's bundle has each turned into `require` (cli-bundle.mjs).
 * @param {string} file an absolute path
 * @returns {unknown}
 */
export function requireCompiled(file) {
  const source = wrappedSource(file);
  const cacheFile = codeCacheFile(file);
  /** @type {Buffer | undefined} */
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(source, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
  if (cachedData === undefined || script.cachedDataRejected === true) keepCodeAtExit(script, cacheFile);
  const module = new Module(file);
  module.filename = file;
  const wrapper = script.runInThisContext();
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  module.loaded = true;
  return module.exports;
}

const [WRAP_OPEN, WRAP_CLOSE] = /** @type {[string, string]} */ (Module.wrap('\u0000').split('\u0000'));

/**
 * The file's text inside the CommonJS wrapper, made in one go. A bundle is plain ASCII (cli-bundle's tests hold it
 * so), which is read as Latin-1, a copy, rather than decoded as UTF-8; and the wrapper joined to the text after
 * reading would be copied again, a megabyte, when V8 flattens the joined string to compile it. Memory touched for
 * the first time is dear: this reads the bundle through half as much of it.
 * @param {string} file
 */
function wrappedSource(file) {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const bytes = Buffer.allocUnsafeSlow(WRAP_OPEN.length + size + WRAP_CLOSE.length);
    let at = bytes.write(WRAP_OPEN, 0, 'latin1');
    const end = at + size;
    while (at < end) {
      const read = readSync(fd, bytes, at, end - at, null);
      if (read === 0) break;
      at += read;
    }
    at += bytes.write(WRAP_CLOSE, at, 'latin1');
    const text = bytes.subarray(0, at);
    return isAscii(text) ? text.toString('latin1') : text.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes the cache when the process ends well: by then it holds every function the command ran. A failed run may
 * have stopped before most of them, and its cache would be kept for good.
 * @param {vm.Script} script @param {string} cacheFile
 */
function keepCodeAtExit(script, cacheFile) {
  process.once('exit', (code) => {
    if (code !== 0) return;
    const temporary = `${cacheFile}.${process.pid}.tmp`;
    try {
      writeFileSync(temporary, script.createCachedData());
      renameSync(temporary, cacheFile);
    } catch {
      rmSync(temporary, { force: true });
    }
  });
}
