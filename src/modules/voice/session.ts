import { randomUUID } from 'node:crypto';
import type { AuthUser } from '../auth/service.js';
import type { VoiceDeps } from './deps.js';
import type { VoiceClientFrame, VoiceErrorCode, VoiceServerFrame } from './protocol.js';
import { PlaybackGate } from './gate.js';
import { RecentAudio } from './recent-audio.js';
import { sessionView, type VoiceSettings } from './sessions.js';
import { transition, type VoiceEvent, type VoiceState } from './state.js';
import { answerTurn, type ActiveTurn, type TurnTiming } from './session-turn.js';
import { Utterance } from './utterance.js';
import type { VadEvent, VoiceActivityDetector } from './vad/types.js';

/**
 * One voice socket's pipeline (DECISIONS 5): audio through the voice activity detector into the
 * recognizer, each utterance's transcript into a spoken answer, barge-in, and the state machine,
 * whose every change is sent as `voice.state`. Frames are handled one after another, in order;
 * a turn runs beside them, so that speech or a cancel can cut it short.
 */
export class VoiceSession {
  state: VoiceState = 'IDLE';
  private vad: VoiceActivityDetector;
  private utterance: Utterance | undefined;
  private turn: ActiveTurn | undefined;
  private readonly recent: RecentAudio;
  private inbox: Promise<void> = Promise.resolve();
  /** Bytes of audio received and not yet through the detector (the hub bounds it). */
  pendingAudioBytes = 0;
  /** Utterances whose audio ended and which wait for the turn before them to finish. */
  private waiting = 0;
  /**
   * The server ended the last utterance (silence, or its length limit) and no `audio.commit` or
   * new utterance came since: the client's next commit ends that same utterance, already ended.
   */
  private endedByServer = false;
  private closed = false;

  /** An answer is being prepared or spoken. */
  get answering(): boolean {
    return this.state === 'PROCESSING' || this.state === 'SPEAKING';
  }

  /** The server still has work of this socket: audio not yet heard, or an answer under way. */
  get busy(): boolean {
    return this.pendingAudioBytes > 0 || this.answering;
  }

  constructor(
    private readonly deps: VoiceDeps,
    readonly user: AuthUser,
    readonly id: string,
    private settings: VoiceSettings,
    private readonly send: (frame: VoiceServerFrame) => void,
  ) {
    this.vad = deps.createVad(settings.turnDetection);
    this.recent = new RecentAudio(deps.limits.commitWindowMs);
  }

  /** Takes a checked frame (audio already decoded); frames are handled in arrival order. */
  receive(frame: VoiceClientFrame, audio?: Buffer): void {
    const bytes = audio?.length ?? 0;
    this.pendingAudioBytes += bytes;
    // The played position is taken on arrival: after a barge-in the turn waits only a short grace
    // for it, and under load the frame could sit behind the audio frames queued before it.
    if (frame.type === 'response.truncate') this.notePlayed(frame.response_id, frame.audio_end_ms);
    this.inbox = this.inbox
      .then(() => this.handle(frame, audio))
      .finally(() => {
        this.pendingAudioBytes -= bytes;
      })
      .catch((err: unknown) => {
        const told = this.failure(err, 'voice frame failed', 'The frame could not be handled');
        this.error(told.code as VoiceErrorCode, told.message, true, frame.request_ref);
      });
  }

  /** What the client is told of a failure (SERVICE_UNAVAILABLE for a lost dependency). */
  private failure(err: unknown, what: string, message: string) {
    const log = this.deps.log.child({ sessionId: this.id });
    return this.deps.outages.failure(err, log, what, message);
  }

  error(code: VoiceErrorCode, message: string, recoverable: boolean, requestRef?: string): void {
    this.send({
      type: 'error',
      code,
      message,
      recoverable,
      ...(requestRef === undefined ? {} : { request_ref: requestRef }),
    });
  }

  /** The socket closed: nobody hears the answer any more, so it stops (stored as heard). */
  async close(): Promise<void> {
    this.closed = true;
    this.utterance?.abandon();
    this.turn?.controller.abort();
    await this.turn?.done;
    await this.vad.close();
  }

  private async handle(frame: VoiceClientFrame, audio: Buffer | undefined): Promise<void> {
    switch (frame.type) {
      case 'audio.input':
        if (audio !== undefined) await this.hear(audio);
        return;
      case 'audio.commit':
        this.commit();
        return;
      case 'text.input':
        return this.typed(frame.text);
      case 'response.cancel': {
        this.cancel(frame.response_id, undefined, frame.request_ref);
        return;
      }
      case 'response.truncate': {
        this.cancel(frame.response_id, frame.audio_end_ms, frame.request_ref);
        return;
      }
      case 'session.update':
        return this.update(frame);
      case 'ping':
        this.send({ type: 'pong', ts: frame.ts ?? null });
        return;
    }
  }

  /** Sends the state change an event makes, if any; true when the state changed. */
  private fire(event: VoiceEvent): boolean {
    const next = transition(this.state, event);
    if (next === null) return false;
    const previous = this.state;
    this.state = next.state;
    this.send({ type: 'voice.state', state: next.state, previous, reason: next.reason });
    return true;
  }

  private async hear(pcm: Buffer): Promise<void> {
    if (this.utterance === undefined) this.recent.push(pcm);
    for (const event of await this.vad.push(pcm)) this.onVad(event);
    // Speech over an answer: its audio waits until the speech is long enough to interrupt (then
    // the turn is aborted) or stops short of it (then the audio goes on).
    const gate = this.turn?.gate;
    if (gate === undefined) return;
    if (this.answering && this.settings.bargeIn && this.vad.hearing) gate.hold();
    else if (gate.isHeld) gate.release();
  }

  private onVad(event: VadEvent): void {
    if (event.type === 'speech_start') {
      const answering = this.answering; // before the event moves the state on
      if (!this.fire({ type: 'speech_start', bargeIn: this.settings.bargeIn })) return;
      if (answering) this.turn?.controller.abort();
      this.listen(event.audio);
    } else if (event.type === 'speech_audio') {
      if (this.utterance?.push(event.audio) === false) {
        this.endedByServer = true;
        this.endUtterance('commit');
      }
    } else if (this.utterance !== undefined) {
      this.endedByServer = true;
      this.endUtterance('silence', Math.max(0, event.decidedMs - event.endMs));
    }
  }

  private listen(audio: Buffer): void {
    this.recent.clear();
    this.endedByServer = false;
    const { stt, limits } = this.deps;
    const u = new Utterance(stt, this.settings.language, limits.maxUtteranceMs, (text) => {
      this.send({ type: 'transcript.delta', utterance_id: u.id, text });
    });
    u.push(audio);
    this.utterance = u;
  }

  /**
   * `audio.commit`: the utterance ends now. With none open, the audio heard since the last end of
   * utterance (at least 100 ms, while IDLE) is the utterance: speech the detector did not hear
   * start. Nothing to commit (the server's detector ended the utterance first, a second commit, a
   * commit before any audio, a commit while an answer is prepared or spoken) is acknowledged
   * silently (DECISIONS 5): no frame, no turn, no state change; the audio before it is dropped.
   */
  private commit(): void {
    this.vad.reset();
    if (this.utterance === undefined) {
      const absorbed = this.endedByServer || this.state !== 'IDLE' || this.recent.ms < 100;
      this.endedByServer = false;
      if (absorbed) {
        this.recent.clear();
        // Speech that may have been starting over an answer ended with the commit: the audio goes on.
        this.turn?.gate.release();
        return;
      }
      this.listen(this.recent.take());
    }
    this.endUtterance('commit');
  }

  /** The utterance's audio is complete: recognise it, then answer it. */
  private endUtterance(reason: 'silence' | 'commit', eouDelayMs?: number): void {
    const u = this.utterance;
    if (u === undefined) return;
    this.utterance = undefined;
    u.finish();
    const previous = this.turn?.done ?? Promise.resolve();
    const turn = this.newTurn();
    this.waiting += 1;
    turn.done = previous.then(async () => {
      this.waiting -= 1;
      if (this.closed || !this.fire({ type: 'utterance_end', reason })) return;
      const text = await u.final;
      if (text === null || text === '') {
        this.unheard(u);
        return;
      }
      const sttMs = performance.now() - (u.endedAt ?? performance.now());
      await this.answer(turn, text, u.id, { sttMs, eouDelayMs, since: u.endedAt });
    });
  }

  private unheard(u: Utterance): void {
    if (u.error !== undefined) {
      this.deps.log.warn({ err: u.error, sessionId: this.id }, 'speech recognition failed');
      this.error('STT_ERROR', 'Speech recognition failed', true);
      this.fire({ type: 'failure' });
      this.fire({ type: 'recovered' });
      return;
    }
    this.send({ type: 'transcript.complete', utterance_id: u.id, text: '', message_id: null });
    this.fire({ type: 'no_speech' });
  }

  private async typed(text: string): Promise<void> {
    if (this.answering) {
      this.fire({ type: 'text_input' });
      this.turn?.controller.abort();
    }
    await this.turn?.done;
    this.utterance?.abandon();
    this.utterance = undefined;
    this.endedByServer = false;
    if (!this.fire({ type: 'text_input' })) return;
    const turn = this.newTurn();
    turn.done = this.answer(turn, text, randomUUID(), { since: performance.now() });
  }

  private newTurn(): ActiveTurn {
    const turn: ActiveTurn = {
      responseId: randomUUID(),
      controller: new AbortController(),
      truncateMs: undefined,
      gate: new PlaybackGate(),
      done: Promise.resolve(),
    };
    this.turn = turn;
    return turn;
  }

  /** Never rejects: a turn that fails (the database away, say) is reported and the session goes on. */
  private async answer(turn: ActiveTurn, text: string, utteranceId: string, timing: TurnTiming) {
    try {
      await answerTurn(this.deps, this.context(), turn, text, utteranceId, timing);
    } catch (err) {
      turn.controller.abort();
      const told = this.failure(
        err,
        'voice turn could not be completed',
        'The turn could not be completed',
      );
      this.error(told.code as VoiceErrorCode, told.message, true);
      if (this.state === 'CANCELLED') {
        this.fire({ type: 'cancel_done', listening: this.utterance !== undefined });
      } else if (this.answering) {
        this.fire({ type: 'failure' });
        this.fire({ type: 'recovered' });
      }
    } finally {
      if (this.turn === turn) this.turn = undefined;
    }
  }

  private context() {
    return {
      user: this.user,
      sessionId: this.id,
      settings: this.settings,
      setConversation: (id: string) => {
        this.settings = { ...this.settings, conversationId: id };
      },
      send: this.send,
      fire: (event: VoiceEvent) => this.fire(event),
      listening: () => this.utterance !== undefined || this.waiting > 0,
      error: (code: VoiceErrorCode, message: string) => {
        this.error(code, message, true);
      },
    };
  }

  private cancel(responseId: string | undefined, audioEndMs: number | undefined, ref?: string) {
    const turn = this.turn;
    if (turn === undefined || (responseId !== undefined && responseId !== turn.responseId)) {
      this.error('NOT_FOUND', 'No such response is in progress', true, ref);
      return;
    }
    if (audioEndMs !== undefined) this.notePlayed(turn.responseId, audioEndMs);
    if (this.fire({ type: 'response_cancel' })) turn.controller.abort();
  }

  /** The client's `response.truncate` position for the response in progress (the first one counts). */
  private notePlayed(responseId: string, audioEndMs: number): void {
    const turn = this.turn;
    if (turn?.responseId === responseId) turn.truncateMs ??= audioEndMs;
  }

  private async update(frame: Extract<VoiceClientFrame, { type: 'session.update' }>) {
    this.settings = await this.deps.sessions.apply(this.user.id, this.settings, frame);
    if (frame.turn_detection !== undefined) {
      this.utterance?.abandon();
      this.utterance = undefined;
      await this.vad.close();
      this.vad = this.deps.createVad(this.settings.turnDetection);
    }
    this.send({ type: 'session.updated', session: sessionView(this.id, this.settings) });
  }
}
