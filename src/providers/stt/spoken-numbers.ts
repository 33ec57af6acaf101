/**
 * Numbers as people say them, in the words of the recognizer's (American English) dictionary:
 * "140" is "one hundred forty", "2.5" is "two point five", "99th" is "ninety ninth".
 */

const ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const one = (digit: number) => ONES[digit] ?? '';
const digits = (text: string) => Array.from(text, (d) => one(Number(d)));
const SCALES: [number, string][] = [
  [1_000_000_000, 'billion'],
  [1_000_000, 'million'],
  [1_000, 'thousand'],
];

function belowThousand(n: number): string[] {
  const words: string[] = [];
  if (n >= 100) {
    words.push(one(Math.floor(n / 100)), 'hundred');
    n %= 100;
  }
  if (n >= 20) {
    words.push(TENS[Math.floor(n / 10)] ?? '');
    n %= 10;
    if (n > 0) words.push(one(n));
  } else if (n > 0) {
    words.push(one(n));
  }
  return words;
}

/** A whole number below a trillion in words; larger ones digit by digit. */
export function integerWords(n: number): string[] {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a whole number: ${n}`);
  if (n === 0) return ['zero'];
  if (n >= 1e12) return digits(String(n));
  const words: string[] = [];
  for (const [scale, name] of SCALES) {
    if (n >= scale) {
      words.push(...belowThousand(Math.floor(n / scale)), name);
      n %= scale;
    }
  }
  return [...words, ...belowThousand(n)];
}

/** "2,000" -> two thousand, "7.35" -> seven point three five, "0.5" -> zero point five. */
export function numberWords(written: string): string[] {
  const [whole = '', fraction] = written.replaceAll(',', '').split('.');
  const words = whole.length > 15 ? digits(whole) : integerWords(+whole);
  if (fraction === undefined || fraction === '') return words;
  return [...words, 'point', ...digits(fraction)];
}

const IRREGULAR_ORDINALS: Readonly<Record<string, string>> = {
  one: 'first',
  two: 'second',
  three: 'third',
  five: 'fifth',
  eight: 'eighth',
  nine: 'ninth',
  twelve: 'twelfth',
};

/** "1st" -> first, "99th" -> ninety ninth, "100th" -> one hundredth. */
export function ordinalWords(n: number): string[] {
  const words = integerWords(n);
  const last = words.pop() ?? '';
  const ordinal =
    IRREGULAR_ORDINALS[last] ?? (last.endsWith('y') ? `${last.slice(0, -1)}ieth` : `${last}th`);
  return [...words, ordinal];
}
