import { describe, expect, it } from 'vitest';
import {
  transition,
  VOICE_EVENTS,
  VOICE_STATES,
  type VoiceEvent,
  type VoiceEventType,
  type VoiceState,
} from './state.js';

/** One event of each type (variants below); `null` in the table: the event changes nothing. */
const EVENTS: Record<VoiceEventType, VoiceEvent> = {
  speech_start: { type: 'speech_start', bargeIn: true },
  utterance_end: { type: 'utterance_end', reason: 'silence' },
  text_input: { type: 'text_input' },
  no_speech: { type: 'no_speech' },
  first_audio: { type: 'first_audio' },
  response_done: { type: 'response_done' },
  response_cancel: { type: 'response_cancel' },
  cancel_done: { type: 'cancel_done', listening: true },
  failure: { type: 'failure' },
  recovered: { type: 'recovered' },
};

type Row = Record<VoiceEventType, VoiceState | null>;

const EXPECTED: Record<VoiceState, Row> = {
  IDLE: {
    speech_start: 'LISTENING',
    utterance_end: null,
    text_input: 'PROCESSING',
    no_speech: null,
    first_audio: null,
    response_done: null,
    response_cancel: null,
    cancel_done: null,
    failure: null,
    recovered: null,
  },
  LISTENING: {
    speech_start: null,
    utterance_end: 'PROCESSING',
    text_input: 'PROCESSING',
    no_speech: null,
    first_audio: null,
    response_done: null,
    response_cancel: null,
    cancel_done: null,
    failure: 'ERROR',
    recovered: null,
  },
  PROCESSING: {
    speech_start: 'CANCELLED',
    utterance_end: null,
    text_input: 'CANCELLED',
    no_speech: 'IDLE',
    first_audio: 'SPEAKING',
    response_done: 'IDLE',
    response_cancel: 'CANCELLED',
    cancel_done: null,
    failure: 'ERROR',
    recovered: null,
  },
  SPEAKING: {
    speech_start: 'CANCELLED',
    utterance_end: null,
    text_input: 'CANCELLED',
    no_speech: null,
    first_audio: null,
    response_done: 'IDLE',
    response_cancel: 'CANCELLED',
    cancel_done: null,
    failure: 'ERROR',
    recovered: null,
  },
  CANCELLED: {
    speech_start: null,
    utterance_end: null,
    text_input: null,
    no_speech: null,
    first_audio: null,
    response_done: null,
    response_cancel: null,
    cancel_done: 'LISTENING',
    failure: 'ERROR',
    recovered: null,
  },
  ERROR: {
    speech_start: null,
    utterance_end: null,
    text_input: null,
    no_speech: null,
    first_audio: null,
    response_done: null,
    response_cancel: null,
    cancel_done: null,
    failure: null,
    recovered: 'IDLE',
  },
};

describe('voice state machine', () => {
  for (const state of VOICE_STATES) {
    for (const type of VOICE_EVENTS) {
      const want = EXPECTED[state][type];
      it(`${state} + ${type} -> ${want ?? 'unchanged'}`, () => {
        expect(transition(state, EVENTS[type])?.state ?? null).toBe(want);
      });
    }
  }

  it('ignores speech while answering when barge-in is off', () => {
    expect(transition('PROCESSING', { type: 'speech_start', bargeIn: false })).toBeNull();
    expect(transition('SPEAKING', { type: 'speech_start', bargeIn: false })).toBeNull();
    expect(transition('IDLE', { type: 'speech_start', bargeIn: false })?.state).toBe('LISTENING');
  });

  it('lets audio.commit end an utterance the detector did not hear start (push to talk)', () => {
    expect(transition('IDLE', { type: 'utterance_end', reason: 'commit' })).toEqual({
      state: 'PROCESSING',
      reason: 'commit',
    });
    expect(transition('IDLE', { type: 'utterance_end', reason: 'silence' })).toBeNull();
    expect(transition('LISTENING', { type: 'utterance_end', reason: 'silence' })?.reason).toBe(
      'end_of_speech',
    );
  });

  it('goes back to IDLE after a cancel nobody spoke into', () => {
    expect(transition('CANCELLED', { type: 'cancel_done', listening: false })).toEqual({
      state: 'IDLE',
      reason: 'cancelled',
    });
  });

  it('gives barge-in as the reason of CANCELLED and of the LISTENING after it', () => {
    expect(transition('SPEAKING', EVENTS.speech_start)?.reason).toBe('barge_in');
    expect(transition('CANCELLED', EVENTS.cancel_done)?.reason).toBe('barge_in');
  });

  it('covers every event type', () => {
    expect(new Set(VOICE_EVENTS).size).toBe(Object.keys(EVENTS).length);
  });
});
