import { randomUUID } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import {
  describeCalculation,
  parseCalculatorRequest,
} from '../../modules/chat/tools/calculator/index.js';
import { chooseSentences, DEFAULT_TUNING, type ExtractiveTuning } from './extractive-answer.js';
import { ehrAnswer, ehrAsks } from './extractive-ehr.js';
import { loadGeneralWords } from '../embeddings/general-english.js';
import { notNouns } from './question-pos.js';
import {
  ProviderError,
  type LlmEvent,
  type LlmMessage,
  type LlmProbeResult,
  type LlmProvider,
  type LlmRequest,
  type LlmStreamOptions,
  type LlmToolCall,
} from './types.js';

export const CALCULATOR_TOOL = 'medical_calculator';
export const NO_ANSWER = 'I could not find an answer to that in the knowledge base.';

/** What the model needs of the calculator tool (injected in tests). */
export interface CalculatorText {
  parseCalculatorRequest(text: string): Record<string, unknown> | null;
  describeCalculation(result: Record<string, unknown>): string;
}

export interface ExtractiveOptions {
  tuning?: Partial<ExtractiveTuning>;
  calculator?: CalculatorText;
}

/**
 * The health probe's question and passage: a healthy model quotes the passage with its `[1]`.
 * Nothing of the knowledge base is read; the probe measures this model's own code and how promptly
 * the event loop lets it stream.
 */
const PROBE_REQUEST: LlmRequest = {
  messages: [{ role: 'user', content: 'What dose should metformin start at?' }],
  passages: [
    {
      n: 1,
      chunkId: 'probe',
      documentId: 'probe',
      docKey: 'probe',
      title: 'Probe',
      version: 1,
      page: null,
      heading: null,
      text: 'Start metformin at 500 mg once daily with the evening meal.',
      score: 1,
    },
  ],
  tools: [],
};

/** Words per `text_delta` event. */
const WORDS_PER_DELTA = 6;

/**
 * The offline default model. It writes nothing of its own about medicine: an answer is a few
 * sentences quoted verbatim from the turn's passages, each followed by `[n]`, the number of the
 * passage it is quoted from; when no sentence answers the question well enough it says so and
 * cites nothing. A plain calculator request ("BMI for 80 kg and 1.80 m") becomes a call of the
 * `medical_calculator` tool, and the tool's answer a sentence stating its result; a clinician's
 * question about a patient ("medications of patient pat-1", "record heart rate 72 for patient
 * pat-1") calls the EHR tools, and their answers become sentences stating what they returned
 * (extractive-ehr.ts). Deterministic, apart from tool call ids. It emits no `usage`: it has no
 * tokenizer and spends no tokens of a paid model, and a word count passed off as tokens would be
 * an invented figure in the stored answers and `llm_tokens_total` (issue 22 item 6).
 */
export class ExtractiveProvider implements LlmProvider {
  readonly name = 'extractive';
  readonly model = 'extractive-1';
  private readonly tuning: ExtractiveTuning;
  private readonly calculator: CalculatorText;

  constructor(options: ExtractiveOptions = {}) {
    this.tuning = { ...DEFAULT_TUNING, ...options.tuning };
    this.calculator = options.calculator ?? { parseCalculatorRequest, describeCalculation };
    // At start (about 50 ms and 40 ms, once), not in the first user's turn.
    loadGeneralWords();
    notNouns('Warm the tagger up.');
  }

  /**
   * The events, each after a turn of the event loop (so a cancel arriving on a socket can land
   * between two of them) and only while the signal has not aborted.
   */
  async *stream(request: LlmRequest, options: LlmStreamOptions): AsyncIterable<LlmEvent> {
    const { signal } = options;
    signal.throwIfAborted();
    for (const event of this.events(request)) {
      await setImmediate();
      signal.throwIfAborted();
      yield event;
    }
  }

  /** Answers a fixed question from a fixed passage, streamed like any answer. */
  async probe(options: LlmStreamOptions): Promise<LlmProbeResult> {
    let text = '';
    for await (const event of this.stream(PROBE_REQUEST, options)) {
      if (event.type === 'text_delta') text += event.text;
    }
    if (!text.includes('[1]')) {
      throw new ProviderError(this.name, 'the in-process model did not answer its fixed question', {
        retryable: false,
      });
    }
    return { kind: 'in_process', probe: 'a fixed question answered from a fixed passage' };
  }

  private events(request: LlmRequest): LlmEvent[] {
    const calls = this.toolCalls(request);
    if (calls.length > 0) {
      return [
        ...calls.map((call) => ({ type: 'tool_call' as const, call })),
        { type: 'done', finishReason: 'tool_calls' },
      ];
    }
    return [
      ...deltas(this.answer(request)).map((text) => ({ type: 'text_delta' as const, text })),
      { type: 'done', finishReason: 'stop' },
    ];
  }

  /** The whole answer text for a request that calls no tool. */
  answer(request: LlmRequest): string {
    const last = request.messages.at(-1);
    if (last?.role === 'tool' && last.name === CALCULATOR_TOOL) return this.toolAnswer(last);
    const ehr = ehrAnswer(request.messages);
    if (ehr !== undefined) return ehr;
    const quotes = chooseSentences(
      lastQuestion(request.messages),
      request.passages,
      this.tuning,
      request.glossary,
    );
    if (quotes.length === 0) return NO_ANSWER;
    return quotes.map((q) => `${q.text} [${q.passage.n}]`).join(' ');
  }

  /** A request to record a measurement, else a calculation, else reads of the EHR. */
  private toolCalls(request: LlmRequest): LlmToolCall[] {
    const ehr = ehrAsks(request);
    if (ehr.writes.length > 0) return ehr.writes.map((a) => toolCall(a.name, a.arguments));
    const calculation = this.calculatorCall(request);
    if (calculation !== null) return [calculation];
    return ehr.reads.map((a) => toolCall(a.name, a.arguments));
  }

  private calculatorCall(request: LlmRequest): LlmToolCall | null {
    const last = request.messages.at(-1);
    if (last?.role !== 'user') return null;
    if (!request.tools.some((t) => t.name === CALCULATOR_TOOL)) return null;
    const args = this.calculator.parseCalculatorRequest(last.content);
    return args === null ? null : toolCall(CALCULATOR_TOOL, args);
  }

  private toolAnswer(message: Extract<LlmMessage, { role: 'tool' }>): string {
    const result = parseObject(message.content);
    if (result === null) return 'The calculation could not be done: the calculator gave no result.';
    const error = result.error;
    if (typeof error === 'object' && error !== null) {
      const reason = (error as { message?: unknown }).message;
      return typeof reason === 'string' && reason.trim() !== ''
        ? `The calculation could not be done: ${reason.trim()}`
        : 'The calculation could not be done.';
    }
    return this.calculator.describeCalculation(result);
  }
}

const toolCall = (name: string, args: Record<string, unknown>): LlmToolCall => ({
  id: `call_${randomUUID().replaceAll('-', '')}`,
  name,
  arguments: args,
});

function parseObject(json: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The user's last question: what the passages were retrieved for. */
function lastQuestion(messages: readonly LlmMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const m = messages[i];
    if (m?.role === 'user') return m.content;
  }
  return '';
}

/** The answer in pieces of a few words, each but the last with its trailing space. */
export function deltas(text: string): string[] {
  const parts = text.split(/(?<=\s)/);
  const pieces: string[] = [];
  for (let i = 0; i < parts.length; i += WORDS_PER_DELTA) {
    pieces.push(parts.slice(i, i + WORDS_PER_DELTA).join(''));
  }
  return pieces;
}
