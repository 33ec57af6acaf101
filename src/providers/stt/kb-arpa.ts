/**
 * Reading an ARPA back-off model back: for the tests of the builder (does every context sum to
 * one?) and for checking a built model before a recognizer loads it.
 */

export interface ArpaModel {
  /** Declared counts of each order, from `\data\`. */
  declared: number[];
  /** Each order's n-grams ("w1 w2 w3") with log10 probability and log10 back-off weight. */
  orders: Map<string, { logProb: number; logBackOff: number }>[];
}

export function parseArpa(text: string): ArpaModel {
  const declared: number[] = [];
  const orders: ArpaModel['orders'] = [];
  let order = 0;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    const count = /^ngram (\d+)=(\d+)$/.exec(trimmed);
    if (count) {
      declared[Number(count[1]) - 1] = Number(count[2]);
      continue;
    }
    const header = /^\\(\d+)-grams:$/.exec(trimmed);
    if (header) {
      order = Number(header[1]);
      orders[order - 1] = new Map();
      continue;
    }
    if (order === 0 || trimmed === '' || trimmed.startsWith('\\')) continue;
    const fields = trimmed.split('\t');
    const words = fields[1];
    if (fields.length < 2 || words?.split(' ').length !== order) {
      throw new Error(`bad ${order}-gram line: ${trimmed}`);
    }
    orders[order - 1]?.set(words, {
      logProb: Number(fields[0]),
      logBackOff: fields[2] === undefined ? 0 : Number(fields[2]),
    });
  }
  return { declared, orders };
}

/** log10 p(word | history) under back-off, history's last words last. */
export function logProbability(model: ArpaModel, history: readonly string[], word: string): number {
  const order = Math.min(history.length + 1, model.orders.length);
  const context = history.slice(history.length - (order - 1));
  const found = model.orders[order - 1]?.get([...context, word].join(' '));
  if (found) return found.logProb;
  if (context.length === 0) return -Infinity;
  const backOff = model.orders[order - 2]?.get(context.join(' '))?.logBackOff ?? 0;
  return backOff + logProbability(model, context.slice(1), word);
}

/** The words of the model's unigrams. */
export function vocabulary(model: ArpaModel): string[] {
  return [...(model.orders[0]?.keys() ?? [])];
}
