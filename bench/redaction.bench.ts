import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { redactText } from '../src/redact/index.js';
import { adversarialInputs } from './support/adversarial-lines.js';
import { median } from './support/stats.js';

/**
 * What redaction costs on the worst inputs it can be handed: every adversarial 1 MiB line (bench/support/
 * adversarial-lines.ts: each unit repeated, and random mixes), 1 MiB of many short adversarial lines, and 1 MiB of
 * ordinary log lines. Each input runs RUNS times after a warm-up; the median is its time, and the worst median is
 * the figure to hold under 100 ms for one line. The reader accepts log lines up to 1 MiB.
 */

const MiB = 1024 * 1024;
const RUNS = 3;
const ordinaryLog = fileURLToPath(new URL('../test/fixtures/redaction/ordinary.log', import.meta.url));

function medianMs(text: string): number {
  redactText(text);
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    redactText(text);
    samples.push(performance.now() - started);
  }
  return median(samples);
}

interface Worst {
  input: string;
  medianMs: number;
}

function worstOf(inputs: { name: string; text: string }[]): { worst: Worst; inputs: number } {
  let worst: Worst = { input: '', medianMs: 0 };
  for (const { name, text } of inputs) {
    const ms = medianMs(text);
    if (ms > worst.medianMs) worst = { input: name, medianMs: Math.round(ms * 10) / 10 };
  }
  return { worst, inputs: inputs.length };
}

export default async function run(): Promise<object> {
  const adversarial = adversarialInputs(MiB);
  const oneLine = worstOf(adversarial.filter((input) => !input.text.includes('\n')));
  // The same units as lines of 80 characters: the cap on a line's length does not help here.
  const manyLines = worstOf(
    adversarial.map(({ name, text }) => ({
      name,
      text: (text.replace(/\n/g, ' ').match(/.{1,80}/gs) ?? []).join('\n'),
    })),
  );
  const ordinaryText = readFileSync(ordinaryLog, 'utf8');
  const ordinary = ordinaryText.repeat(Math.ceil(MiB / ordinaryText.length)).slice(0, MiB);
  const ordinaryMs = Math.round(medianMs(ordinary) * 10) / 10;

  const rows = [
    ['1 MiB line, worst adversarial', oneLine.worst.input, oneLine.worst.medianMs],
    ['1 MiB of 80-char lines, worst adversarial', manyLines.worst.input, manyLines.worst.medianMs],
    ['1 MiB of ordinary log lines', '', ordinaryMs],
  ] as const;
  for (const [what, input, ms] of rows) {
    process.stdout.write(`${what.padEnd(44)} ${String(ms).padStart(8)} ms  ${input}\n`);
  }
  return {
    runsPerInput: RUNS,
    oneMiBLine: { ...oneLine.worst, inputs: oneLine.inputs, targetMs: 100 },
    oneMiBOfShortLines: { ...manyLines.worst, inputs: manyLines.inputs },
    oneMiBOfOrdinaryLines: { medianMs: ordinaryMs },
  };
}
