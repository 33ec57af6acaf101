/**
 * Voice activity detection on the server (DECISIONS 5 `turn_detection`, issue 11 item 2), so a
 * client may simply stream its microphone. The detector reads PCM16 mono 16 kHz buffers of any
 * length and reports utterances. A sound shorter than `minSpeechMs` (a cough, a click) neither
 * starts an utterance nor counts as barge-in; steady background noise starts nothing.
 */

export interface TurnDetection {
  /** Silence that ends an utterance (default 500). */
  silenceMs: number;
  /** Speech needed before an utterance starts (default 200). */
  minSpeechMs: number;
  /** Speech probability (0..1) above which a frame is speech (default 0.5). */
  threshold: number;
  /** Audio kept from before the detected onset so the first syllable is heard (300). */
  prerollMs: number;
}

export type VadEvent =
  /**
   * `minSpeechMs` of speech confirmed. `onsetMs` is where the speech began (stream time: ms of
   * audio pushed since the detector was created or reset); `audio` holds the pre-roll and all
   * speech since the onset, to be fed to the recognizer first.
   */
  | { type: 'speech_start'; onsetMs: number; audio: Buffer }
  /** More audio of the current utterance (speech and the silence inside it). */
  | { type: 'speech_audio'; audio: Buffer }
  /**
   * The utterance ended: `endMs` is where the speech stopped, `decidedMs` the stream time at
   * which `silenceMs` of silence confirmed it (their difference is the end-of-utterance delay).
   */
  | { type: 'speech_end'; endMs: number; decidedMs: number };

export interface VoiceActivityDetector {
  /** Reads more audio; events in stream order. */
  push(pcm: Buffer): Promise<VadEvent[]>;
  /**
   * Whether speech is being heard after the audio pushed so far: a candidate not yet long enough
   * to start an utterance, or an utterance. While an answer plays, the pipeline holds its audio
   * as soon as this turns true (a barge-in may be coming) and goes on if it turns false again
   * before `speech_start` (a cough, a click).
   */
  readonly hearing: boolean;
  /** Ends any utterance in progress without an event and forgets all state (after audio.commit). */
  reset(): void;
  close(): Promise<void>;
}
