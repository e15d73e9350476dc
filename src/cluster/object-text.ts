/**
 * The JSON text of an object, when it is already at hand: the parsed-snapshot cache writes and reads every object
 * as a text of its own, and the snapshot API server answers with that text instead of serializing thousands of
 * objects again for every list. The text is `JSON.stringify` of the object exactly.
 *
 * Only objects that are never changed in place are recorded: a snapshot's objects are not (a demo fix works on
 * copies, and the server is handed the new objects). Anything not recorded is serialized as usual.
 */

const texts = new WeakMap<object, string>();

/** Record `text` as the JSON of `object`; the caller vouches that `JSON.stringify(object) === text`. */
export function recordObjectText(object: object, text: string): void {
  texts.set(object, text);
}

/** The recorded text, or undefined. */
export function recordedObjectText(object: object): string | undefined {
  return texts.get(object);
}
