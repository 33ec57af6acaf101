import { AsyncQueue } from '../../platform/async-queue.js';
import { encodeWav } from '../../platform/audio/wav.js';
import { bufferToInt16 } from '../../platform/audio/pcm.js';
import type { AuthUser } from '../auth/service.js';
import { MAIN_BRANCH } from '../conversations/messages.js';
import type { CitationDto } from '../conversations/schema.js';
import type { VoiceDeps } from './deps.js';
import { speechSplitter } from './sentences.js';
import type { VoiceSettings } from './sessions.js';

/** The answer of `POST /api/voice/audio`. */
export interface AudioTurnResult {
  conversation_id: string;
  transcript: string;
  user_message_id: string | null;
  message_id: string | null;
  response_text: string;
  citations: CitationDto[];
  /** The spoken answer: base64 of a WAV file (PCM16 mono), or null when nothing was said. */
  audio: { format: 'wav'; sample_rate: number; data: string } | null;
}

/**
 * One voice turn over HTTP: the whole utterance is recognised, answered by the chat engine
 * (stored on the conversation like a socket turn) and spoken; the answer carries it all at once.
 */
export async function answerAudio(
  deps: VoiceDeps,
  user: AuthUser,
  pcm: Buffer,
  settings: VoiceSettings,
  signal: AbortSignal,
): Promise<AudioTurnResult> {
  const transcript = await recognise(deps, pcm, settings.language, signal);
  const conversationId =
    settings.conversationId ?? (await deps.conversations.create(user.id, { title: '' })).id;
  const empty = {
    conversation_id: conversationId,
    transcript,
    user_message_id: null,
    message_id: null,
    response_text: '',
    citations: [],
    audio: null,
  };
  if (transcript === '') return empty;
  const turn = await storeTurn(deps, user, conversationId, transcript, signal);
  // The client went away before its turn came: nothing is stored, nobody reads the answer.
  if (turn === undefined) return empty;
  const { question, answer, outcome } = turn;
  const rate = deps.limits.outputSampleRate;
  const speech = await speak(deps, outcome.content, settings, rate, signal);
  return {
    ...empty,
    user_message_id: question.id,
    message_id: answer.id,
    response_text: outcome.content,
    citations: outcome.citations,
    audio:
      speech.length === 0
        ? null
        : { format: 'wav', sample_rate: rate, data: speech.toString('base64') },
  };
}

/**
 * Stores the question and the chat engine's answer to it in the branch's turn (DECISIONS 4: a
 * chat answer generating there goes first); undefined when `signal` ended the wait for it.
 */
async function storeTurn(
  deps: VoiceDeps,
  user: AuthUser,
  conversationId: string,
  text: string,
  signal: AbortSignal,
) {
  const id = crypto.randomUUID();
  const place = await deps.chat.turns.take(conversationId, MAIN_BRANCH, id, signal);
  if (place === undefined) return undefined;
  try {
    const question = await deps.messages.append(user.id, conversationId, {
      branchId: MAIN_BRANCH,
      role: 'user',
      content: text,
      namesConversation: true,
    });
    const outcome = await deps.chat.generate(
      user.id,
      question.message,
      id,
      signal,
      () => undefined,
    );
    const answer = await deps.messages.appendAnswer(user.id, question.message, id, outcome);
    return { question: question.message, answer: answer.message, outcome };
  } finally {
    await place.release();
  }
}

async function recognise(deps: VoiceDeps, pcm: Buffer, language: string, signal: AbortSignal) {
  const audio = new AsyncQueue<Buffer>();
  // 100 ms pieces, as a socket would send them: the recognizer streams either way.
  for (let at = 0; at < pcm.length; at += 3200) audio.push(pcm.subarray(at, at + 3200));
  audio.end();
  for await (const event of deps.stt.transcribe(audio, { signal, language })) {
    if (event.type === 'final') return event.text.trim();
  }
  return '';
}

async function speak(
  deps: VoiceDeps,
  text: string,
  settings: VoiceSettings,
  sampleRate: number,
  signal: AbortSignal,
): Promise<Buffer> {
  const splitter = speechSplitter();
  const sentences = new AsyncQueue<string>();
  for (const s of [...splitter.push(text), ...splitter.flush()]) sentences.push(s);
  sentences.end();
  const options = { signal, sampleRate, language: settings.language };
  const parts: Buffer[] = [];
  const voice = settings.voice ?? undefined;
  for await (const chunk of deps.tts.synthesize(
    sentences,
    voice === undefined ? options : { ...options, voice },
  )) {
    parts.push(chunk.pcm);
  }
  if (parts.length === 0) return Buffer.alloc(0);
  return encodeWav(bufferToInt16(Buffer.concat(parts)), sampleRate);
}
