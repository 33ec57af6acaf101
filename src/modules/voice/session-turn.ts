import { setTimeout as sleep } from 'node:timers/promises';
import { MAIN_BRANCH } from '../conversations/messages.js';
import type { AuthUser } from '../auth/service.js';
import type { VoiceDeps } from './deps.js';
import type { PlaybackGate } from './gate.js';
import type { TurnMetrics, VoiceErrorCode, VoiceServerFrame } from './protocol.js';
import type { VoiceSettings } from './sessions.js';
import type { VoiceEvent } from './state.js';
import { runVoiceTurn, type VoiceTurnOutcome } from './turn.js';

/** The response a session is generating or speaking. */
export interface ActiveTurn {
  responseId: string;
  /** Barge-in, `response.cancel`, `response.truncate` and a closed socket abort it. */
  controller: AbortController;
  /** The client's `response.truncate`: how much of the audio it played. */
  truncateMs: number | undefined;
  /** Held while the detector hears what may become a barge-in. */
  gate: PlaybackGate;
  done: Promise<void>;
}

/** When the question became complete, and how long recognising it took. */
export interface TurnTiming {
  /** `performance.now()` at the end of the user's speech (or when the typed question arrived). */
  since: number | undefined;
  sttMs?: number;
  eouDelayMs?: number | undefined;
}

/** What a turn needs of its session. */
export interface TurnContext {
  user: AuthUser;
  sessionId: string;
  settings: VoiceSettings;
  setConversation(id: string): void;
  send(frame: VoiceServerFrame): void;
  fire(event: VoiceEvent): boolean;
  /** Whether the user is speaking now (a barge-in's new utterance). */
  listening(): boolean;
  error(code: VoiceErrorCode, message: string): void;
}

/**
 * Stores the question, speaks the answer, stores what was heard of it, and reports: the
 * transcript, `response.complete` (its text equals the stored text), `turn.metrics`, the stage
 * histograms and the state changes that end the turn.
 */
export async function answerTurn(
  deps: VoiceDeps,
  ctx: TurnContext,
  turn: ActiveTurn,
  text: string,
  utteranceId: string,
  timing: TurnTiming,
): Promise<void> {
  const { messages, limits } = deps;
  // Shed before anything is stored, as a chat turn is: refused now, with when to try again,
  // rather than answered without its passages (and the gate counts this turn's search).
  deps.chat.admitSearch();
  const conversationId = await conversationOf(deps, ctx);
  // Turns on a branch are sequential (DECISIONS 4): a chat answer generating there goes first.
  const place = await deps.chat.turns.take(
    conversationId,
    MAIN_BRANCH,
    turn.responseId,
    turn.controller.signal,
  );
  if (place === undefined) {
    // Cancelled (barge-in, response.cancel) before its turn came: nothing was stored.
    ctx.fire({ type: 'cancel_done', listening: ctx.listening() });
    return;
  }
  try {
    const question = await messages.append(ctx.user.id, conversationId, {
      branchId: MAIN_BRANCH,
      role: 'user',
      content: text,
      namesConversation: true,
    });
    ctx.send({
      type: 'transcript.complete',
      utterance_id: utteranceId,
      text,
      message_id: question.message.id,
    });
    const started = performance.now();
    const outcome = await runVoiceTurn(deps.chat, deps.tts, {
      userId: ctx.user.id,
      question: question.message,
      responseId: turn.responseId,
      signal: turn.controller.signal,
      sampleRate: limits.outputSampleRate,
      voice: ctx.settings.voice ?? undefined,
      language: ctx.settings.language,
      leadMs: limits.playbackLeadMs,
      gate: turn.gate,
      send: (frame) => {
        ctx.send(frame);
      },
      onFirstAudio: () => ctx.fire({ type: 'first_audio' }),
      truncated: async (played) => {
        if (turn.truncateMs === undefined && played) {
          await waitFor(() => turn.truncateMs !== undefined, limits.truncateGraceMs);
        }
        return turn.truncateMs;
      },
    });
    const stored = await messages.appendAnswer(ctx.user.id, question.message, turn.responseId, {
      ...outcome,
      content: outcome.text,
    });
    ctx.send({
      type: 'response.complete',
      response_id: turn.responseId,
      message_id: stored.message.id,
      text: outcome.text,
      citations: outcome.citations,
      interrupted: outcome.interrupted,
    });
    report(deps, ctx, turn, outcome, timing, started);
  } finally {
    await place.release();
  }
}

async function conversationOf(deps: VoiceDeps, ctx: TurnContext): Promise<string> {
  const known = ctx.settings.conversationId;
  if (known !== null) return known;
  const created = await deps.conversations.create(ctx.user.id, { title: '' });
  ctx.setConversation(created.id);
  return created.id;
}

function report(
  deps: VoiceDeps,
  ctx: TurnContext,
  turn: ActiveTurn,
  outcome: VoiceTurnOutcome,
  timing: TurnTiming,
  started: number,
): void {
  const ms = (v: number | undefined) => (v === undefined ? null : Math.round(v));
  const firstAudioAt =
    outcome.firstAudioMs === undefined ? undefined : started + outcome.firstAudioMs;
  const metrics: TurnMetrics = {
    response_id: turn.responseId,
    stt_ms: ms(timing.sttMs),
    llm_first_token_ms: ms(outcome.firstTokenMs),
    tts_first_audio_ms: ms(outcome.firstAudioMs),
    end_to_end_ms:
      firstAudioAt === undefined || timing.since === undefined
        ? null
        : ms(firstAudioAt - timing.since),
    eou_delay_ms: ms(timing.eouDelayMs),
    interrupted: outcome.interrupted,
  };
  ctx.send({ type: 'turn.metrics', ...metrics });
  const stage = deps.metrics.voiceStage;
  const observe = (name: string, v: number | null) => {
    if (v !== null) stage.observe({ stage: name }, v / 1000);
  };
  observe('stt', metrics.stt_ms);
  observe('llm_first_token', metrics.llm_first_token_ms);
  observe('tts_first_audio', metrics.tts_first_audio_ms);
  observe('end_to_end', metrics.end_to_end_ms);
  observe('eou_delay', metrics.eou_delay_ms);
  finish(deps, ctx, turn, outcome);
}

/** The state changes that end the turn. */
function finish(deps: VoiceDeps, ctx: TurnContext, turn: ActiveTurn, outcome: VoiceTurnOutcome) {
  if (turn.controller.signal.aborted) {
    ctx.fire({ type: 'cancel_done', listening: ctx.listening() });
    return;
  }
  const failure = outcome.failure;
  if (failure !== undefined) {
    deps.log.warn(
      { err: failure.error, sessionId: ctx.sessionId, stage: failure.stage },
      'voice turn failed',
    );
    // A speech failure was reported as it happened (TTS_ERROR); the model's is reported here.
    if (failure.stage === 'llm') {
      ctx.error('LLM_ERROR', 'The language model failed; the answer is incomplete');
    }
    ctx.fire({ type: 'failure' });
    ctx.fire({ type: 'recovered' });
    return;
  }
  ctx.fire({ type: 'response_done' });
}

/** Resolves when `ready()` holds or after `ms`, whichever is first. */
async function waitFor(ready: () => boolean, ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (!ready() && performance.now() < until) await sleep(20);
}
