/**
 * The voice pipeline's states (spec 3.4, DECISIONS 5) as a pure transition function: the session
 * feeds it what happened and sends every change as `voice.state`; it decides nothing else.
 *
 *   IDLE -> LISTENING (speech starts) -> PROCESSING (end of utterance) -> SPEAKING (first audio)
 *   -> IDLE (response done). Speech while PROCESSING or SPEAKING with barge-in on: CANCELLED, then
 *   LISTENING. A provider failure: ERROR, then IDLE.
 */

export const VOICE_STATES = [
  'IDLE',
  'LISTENING',
  'PROCESSING',
  'SPEAKING',
  'CANCELLED',
  'ERROR',
] as const;
export type VoiceState = (typeof VOICE_STATES)[number];

export type VoiceEvent =
  /** The detector confirmed `min_speech_ms` of speech. */
  | { type: 'speech_start'; bargeIn: boolean }
  /** The detector's silence ended the utterance, or the client sent `audio.commit`. */
  | { type: 'utterance_end'; reason: 'silence' | 'commit' }
  /** `text.input`: a typed question skips recognition. */
  | { type: 'text_input' }
  /** The recognizer found no words: nothing to answer. */
  | { type: 'no_speech' }
  | { type: 'first_audio' }
  /** The response is complete and stored (its audio played, as far as the server can tell). */
  | { type: 'response_done' }
  | { type: 'response_cancel' }
  /** The cancelled response is stored; `listening`: the user is speaking now (barge-in). */
  | { type: 'cancel_done'; listening: boolean }
  | { type: 'failure' }
  | { type: 'recovered' };

export type VoiceEventType = VoiceEvent['type'];

export const VOICE_EVENTS: readonly VoiceEventType[] = [
  'speech_start',
  'utterance_end',
  'text_input',
  'no_speech',
  'first_audio',
  'response_done',
  'response_cancel',
  'cancel_done',
  'failure',
  'recovered',
];

export interface Transition {
  state: VoiceState;
  /** Sent as `voice.state.reason`: the event, or its more specific cause. */
  reason: string;
}

const answering = (s: VoiceState) => s === 'PROCESSING' || s === 'SPEAKING';

/** The next state, or null when the event changes nothing in this state. */
export function transition(state: VoiceState, event: VoiceEvent): Transition | null {
  switch (event.type) {
    case 'speech_start':
      if (state === 'IDLE') return { state: 'LISTENING', reason: 'speech_started' };
      if (answering(state) && event.bargeIn) return { state: 'CANCELLED', reason: 'barge_in' };
      return null;
    case 'utterance_end':
      return state === 'LISTENING' || (state === 'IDLE' && event.reason === 'commit')
        ? { state: 'PROCESSING', reason: event.reason === 'commit' ? 'commit' : 'end_of_speech' }
        : null;
    case 'text_input':
      if (state === 'IDLE' || state === 'LISTENING') {
        return { state: 'PROCESSING', reason: 'text_input' };
      }
      return answering(state) ? { state: 'CANCELLED', reason: 'text_input' } : null;
    case 'no_speech':
      return state === 'PROCESSING' ? { state: 'IDLE', reason: 'no_speech' } : null;
    case 'first_audio':
      return state === 'PROCESSING' ? { state: 'SPEAKING', reason: 'first_audio' } : null;
    case 'response_done':
      return answering(state) ? { state: 'IDLE', reason: 'response_done' } : null;
    case 'response_cancel':
      return answering(state) ? { state: 'CANCELLED', reason: 'response_cancel' } : null;
    case 'cancel_done':
      if (state !== 'CANCELLED') return null;
      return event.listening
        ? { state: 'LISTENING', reason: 'barge_in' }
        : { state: 'IDLE', reason: 'cancelled' };
    case 'failure':
      return state === 'IDLE' || state === 'ERROR' ? null : { state: 'ERROR', reason: 'failure' };
    case 'recovered':
      return state === 'ERROR' ? { state: 'IDLE', reason: 'recovered' } : null;
  }
}
