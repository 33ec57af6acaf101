import { ExtractiveProvider } from '../../src/providers/llm/extractive.js';
import {
  bestScore,
  DEFAULT_TUNING,
  type ExtractiveTuning,
} from '../../src/providers/llm/extractive-answer.js';
import { scoreSentences } from '../../src/providers/llm/extractive-score.js';
import type { Passage } from '../../src/providers/llm/types.js';
import type { AnswerQuestion } from './answers.js';

/**
 * The extractive model's knobs swept on the tuning split only (`tune`, eval/lib/answers.ts). For
 * each setting of the weights, each question's answer (threshold 0) and best sentence score are
 * computed once; an answer under a threshold t is that answer when the best score reaches t, else
 * a refusal. A question is right when an answerable one carries its fact and an off-topic one is
 * refused. Only thresholds refusing every off-topic question of the split are considered (that
 * goal is 100%, not traded for facts); the threshold reported for a setting is the middle of its
 * widest run of such thresholds (step 0.01) with the most right.
 */

interface Case {
  q: AnswerQuestion;
  passages: Passage[];
}

interface Outcome {
  label: string;
  tuning: Partial<ExtractiveTuning>;
  right: number;
  /** The widest run of thresholds with `right` questions right, and its middle. */
  from: number;
  to: number;
  falseRefusals: number;
  offTopicAnswered: number;
}

const THRESHOLDS = Array.from({ length: 101 }, (_, i) => i / 100);

function evaluate(cases: readonly Case[], tuning: ExtractiveTuning): Omit<Outcome, 'label'> {
  const provider = new ExtractiveProvider({ tuning: { ...tuning, threshold: 0 } });
  const scored = cases.map(({ q, passages }) => {
    const request = {
      messages: [{ role: 'user' as const, content: q.question }],
      passages,
      tools: [],
    };
    // A question naming what no passage holds is declined whatever the threshold.
    const { quotes, unheld } = scoreSentences(q.question, passages, tuning);
    const best = unheld.length > 0 ? 0 : bestScore(quotes);
    const fact =
      q.answer_contains !== undefined && provider.answer(request).includes(q.answer_contains);
    return { offTopic: q.off_topic !== undefined, best, fact };
  });
  const rightAt = (t: number) =>
    scored.filter((s) => (s.offTopic ? s.best < t : s.best >= t && s.fact)).length;
  // Only thresholds that refuse every off-topic question count: that goal is not traded away.
  const refusesAll = (t: number) => scored.every((s) => !s.offTopic || s.best < t);
  const counts = THRESHOLDS.map((t) => (refusesAll(t) ? rightAt(t) : -1));
  const right = Math.max(...counts);
  let [from, to, runStart] = [0, -1, -1];
  counts.forEach((c, i) => {
    if (c !== right) return void (runStart = -1);
    if (runStart < 0) runStart = i;
    if (i - runStart > to - from) [from, to] = [runStart, i];
  });
  const threshold = Math.round((from + to) / 2) / 100;
  return {
    tuning: { ...tuning, threshold },
    right,
    from: from / 100,
    to: to / 100,
    falseRefusals: scored.filter((s) => !s.offTopic && s.best < threshold).length,
    offTopicAnswered: scored.filter((s) => s.offTopic && s.best >= threshold).length,
  };
}

const KNOBS = [
  'retrievalWeight',
  'contextWeight',
  'idfPower',
  'absentWeight',
  'plainAbsentWeight',
  'focusWeight',
  'followRatio',
  'kindWeight',
] as const;

const VALUES: Record<(typeof KNOBS)[number], number[]> = {
  retrievalWeight: [0.1, 0.2],
  contextWeight: [0.5],
  idfPower: [0],
  absentWeight: [6, 8, 12],
  plainAbsentWeight: [0.5, 1, 1.5, 2, 3],
  focusWeight: [0.5, 0.75, 1],
  followRatio: [0.7],
  kindWeight: [0.5, 1],
};

/** Every combination of the knobs' values. */
function grid(): ExtractiveTuning[] {
  let settings: ExtractiveTuning[] = [{ ...DEFAULT_TUNING }];
  for (const knob of KNOBS) {
    settings = settings.flatMap((s) => VALUES[knob].map((v) => ({ ...s, [knob]: v })));
  }
  return settings;
}

export function sweep(cases: readonly Case[]): void {
  const outcomes: Outcome[] = [];
  for (const tuning of grid()) {
    const label = KNOBS.map((k) => `${k}=${tuning[k]}`).join(' ');
    outcomes.push({ label, ...evaluate(cases, tuning) });
  }
  // Within the goals first: no off-topic question answered, false refusals at most 5%.
  const answerable = cases.filter((c) => c.q.off_topic === undefined).length;
  const within = (o: Outcome) => o.offTopicAnswered === 0 && o.falseRefusals <= 0.05 * answerable;
  outcomes.sort(
    (a, b) =>
      Number(within(b)) - Number(within(a)) || b.right - a.right || b.to - b.from - (a.to - a.from),
  );
  console.log(`tune: ${cases.length} questions; right = fact carried or off-topic refused`);
  console.log('first the settings within the goals (no off-topic answered, false refusals <= 5%)');
  for (const o of outcomes.slice(0, 10)) print(o);
  console.log('\nbest per value of each knob (the others free)');
  for (const knob of KNOBS) {
    for (const value of VALUES[knob]) {
      const best = outcomes.find((o) => o.tuning[knob] === value);
      if (best !== undefined) print(best, `${knob}=${value}: `);
    }
  }
}

function print(o: Outcome, prefix = ''): void {
  const threshold = o.tuning.threshold?.toFixed(2) ?? '-';
  const band = `threshold ${threshold} (${o.from.toFixed(2)}–${o.to.toFixed(2)})`;
  console.log(
    `${prefix}${String(o.right).padStart(3)}  ${band}  false refusals ${o.falseRefusals}, ` +
      `off-topic answered ${o.offTopicAnswered}  ${o.label}`,
  );
}
