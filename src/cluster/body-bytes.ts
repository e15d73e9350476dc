import { isAscii } from 'node:buffer';

/**
 * The bytes of one answer from the API server, gathered into one buffer as they arrive and decoded into text once,
 * at the end. Buffers are taken from a few kept from earlier answers and given back once decoded: a triage reads
 * megabytes of lists, and memory a process touches for the first time costs more than copying into it (each fresh
 * page is a page fault), so a replay's reads go through the same few megabytes instead of new ones per answer.
 */

/** Spare buffers kept for the next answers, in bytes at most, and the largest one kept. */
const SPARE_BYTES = 8 * 1024 * 1024;
const LARGEST_KEPT = 4 * 1024 * 1024;
const SMALLEST = 64 * 1024;

const spare: Buffer[] = [];
let spareBytes = 0;

/** A buffer of at least `size` bytes: the smallest spare one that fits, else a new one (a power of two). */
function take(size: number): Buffer {
  let best = -1;
  for (let i = 0; i < spare.length; i++) {
    const length = (spare[i] as Buffer).length;
    if (length >= size && (best < 0 || length < (spare[best] as Buffer).length)) best = i;
  }
  if (best >= 0) {
    const [buffer] = spare.splice(best, 1) as [Buffer];
    spareBytes -= buffer.length;
    return buffer;
  }
  let capacity = SMALLEST;
  while (capacity < size) capacity *= 2;
  // Not from Node's shared pool: the buffer is handed back whole, and outlives the answer.
  return Buffer.allocUnsafeSlow(capacity);
}

function giveBack(buffer: Buffer): void {
  if (buffer.length > LARGEST_KEPT) return;
  // The smaller spares go first when the largest would not fit: large answers are the ones worth keeping room for.
  spare.sort((a, b) => a.length - b.length);
  while (spare.length > 0 && spareBytes + buffer.length > SPARE_BYTES) spareBytes -= (spare.shift() as Buffer).length;
  if (spareBytes + buffer.length > SPARE_BYTES) return;
  spare.push(buffer);
  spareBytes += buffer.length;
}

export class BodyBytes {
  #buffer: Buffer | undefined;
  #length = 0;

  /** `expected`: the length the server declared, so the buffer is taken at its size once. */
  constructor(expected?: number) {
    if (expected !== undefined && Number.isSafeInteger(expected) && expected > 0) this.#buffer = take(expected);
  }

  get length(): number {
    return this.#length;
  }

  append(chunk: Buffer): void {
    const needed = this.#length + chunk.length;
    const current = this.#buffer;
    if (current === undefined || current.length < needed) {
      // A server that declared less than it sends, or declared nothing: move to a buffer twice the size.
      const next = take(Math.max(needed, (current?.length ?? 0) * 2));
      if (current !== undefined) {
        current.copy(next, 0, 0, this.#length);
        giveBack(current);
      }
      this.#buffer = next;
    }
    chunk.copy(this.#buffer as Buffer, this.#length);
    this.#length = needed;
  }

  /**
   * The text, after which the buffer is given back. JSON from an API server is nearly always plain ASCII (it escapes
   * nothing else, but keeps non-ASCII text as it is), and ASCII is read as Latin-1, a plain copy, rather than decoded.
   */
  text(): string {
    const buffer = this.#buffer;
    if (buffer === undefined) return '';
    const bytes = buffer.subarray(0, this.#length);
    const text = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
    this.release();
    return text;
  }

  /** Gives the buffer back without decoding it (an answer cut off or refused). */
  release(): void {
    if (this.#buffer !== undefined) giveBack(this.#buffer);
    this.#buffer = undefined;
    this.#length = 0;
  }
}
