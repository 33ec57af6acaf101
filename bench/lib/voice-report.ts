import { percentile, table } from './sections.js';
import type { BargeTrial, ConcurrentSession, DirectTurn, PipelineTurn } from './voice-parts.js';

/** The "Voice pipeline" section of BENCHMARKS.md from bench/voice.ts's figures. */

export interface VoiceReport {
  date: string;
  code: { commit: string; changed: string[] };
  load: Record<string, number>;
  machine: {
    cpu: string;
    cores: number;
    memGiB: number;
    node: string;
    postgres: string;
    redis: string;
  };
  settings: Record<string, unknown>;
  env: Record<string, string>;
  warm: PipelineTurn;
  pipeline: PipelineTurn[];
  direct: DirectTurn[];
  barge: BargeTrial[];
  detector: { decidedMs: number[]; onsetMs: number[] };
  rtf: { audioMs: number; decodeMs: number }[];
  concurrent: { spoken: boolean; n: number; sessions: ConcurrentSession[] }[];
  idleBase: { cpuMs: number; wallMs: number };
  idle: {
    m: number;
    cpuMs: number;
    wallMs: number;
    frames: number;
    states: number;
    errors: number;
    clientCpuMs: number;
  }[];
}

const sorted = (xs: number[]) => Float64Array.from(xs.filter((x) => Number.isFinite(x))).sort();
export const p = (xs: number[], q: number) => percentile(sorted(xs), q);
const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '–');
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '–');

/** A stage of every turn: null metrics left out. */
const metric = (turns: PipelineTurn[], k: string) =>
  turns.map((t) => t.metrics[k]).filter((v): v is number => typeof v === 'number');

export function figures(r: VoiceReport) {
  const turns = r.pipeline;
  const e2e = metric(turns, 'end_to_end_ms');
  const eou = metric(turns, 'eou_delay_ms');
  const afterDecision = turns.map((t) => t.afterDecisionClientMs);
  const valid = r.barge.filter((b) => b.valid);
  const rtfs = r.rtf.map((x) => x.decodeMs / x.audioMs);
  const overall =
    r.rtf.reduce((s, x) => s + x.decodeMs, 0) / r.rtf.reduce((s, x) => s + x.audioMs, 0);
  const levels = (spoken: boolean) => r.concurrent.filter((c) => c.spoken === spoken);
  const largest = (spoken: boolean) => {
    let best = 0;
    for (const c of levels(spoken)) {
      if (c.sessions.every((s) => s.realTime)) best = Math.max(best, c.n);
      else break;
    }
    return best;
  };
  const pairs = turns.map((t, i) => t.afterDecisionClientMs - (r.direct[i]?.totalMs ?? Number.NaN));
  const idleRates = r.idle.map((x) => {
    const base = r.idleBase.cpuMs / (r.idleBase.wallMs / 1000);
    const rate = x.cpuMs / (x.wallMs / 1000);
    return { ...x, base, rate, perSession: (rate - base) / x.m };
  });
  return { e2e, eou, afterDecision, valid, rtfs, overall, largest, levels, pairs, idleRates };
}

export function render(r: VoiceReport): string {
  const fig = figures(r);
  const turns = r.pipeline;
  const out: string[] = [];
  const date = r.date.slice(0, 16).replace('T', ' ');
  out.push(
    '## Voice pipeline',
    '',
    'Written by `bench/voice.ts`; edit the script, not this section.',
    '',
    '- Command: `make bench-voice` (`npx tsx bench/voice.ts`)',
    `- Date: ${date} UTC; commit \`${r.code.commit}\`${r.code.changed.length > 0 ? ` with uncommitted changes in ${r.code.changed.map((c) => `\`${c}\``).join(', ')}` : ''}`,
    `- Machine: ${r.machine.cpu}, ${String(r.machine.cores)} cores, ${r.machine.memGiB.toFixed(1)} GiB; ` +
      `Node ${r.machine.node}; PostgreSQL ${r.machine.postgres} and Redis ${r.machine.redis} on the same machine. ` +
      `Load average ${Object.entries(r.load)
        .map(([k, v]) => `${v.toFixed(2)} (${k})`)
        .join(
          ', ',
        )}. Other work shared the machine during the run; the baselines were measured in the same run for that reason.`,
    "- Service: `createTestApp` (test/helpers/app.ts) listening on a local port in the benchmark's process, PostgreSQL and Redis as the tests use them, the offline providers (Silero VAD, PocketSphinx with the knowledge-base language model, the extractive model, Flite `slt` through the `local` TTS provider), a knowledge base of two short guidelines (metformin, hypertension) uploaded through the admin route. Settings: the defaults, except " +
      Object.entries(r.env)
        .map(([k, v]) => `\`${k}=${v}\``)
        .join(', ') +
      '. The clients (`ws`) run in the same process and event loop as the service, except in part 6.',
    `- Audio: ${String(turns.length)} questions spoken by Flite \`slt\` (16 kHz PCM16), streamed as \`audio.input\` in 100 ms frames at real time as a microphone would (frame k leaves when its last sample is "captured"), silence between utterances.`,
    '',
  );

  // Part 1
  const stage = (k: string) => metric(turns, k);
  const rows: (string | number)[][] = [
    [
      'eou_delay_ms (end of speech → end-of-utterance decision)',
      ...[0.5, 0.95].map((q) => f0(p(stage('eou_delay_ms'), q))),
    ],
    ['stt_ms (decision → final transcript)', ...[0.5, 0.95].map((q) => f0(p(stage('stt_ms'), q)))],
    [
      'llm_first_token_ms (question stored → first chunk: history, retrieval, model)',
      ...[0.5, 0.95].map((q) => f0(p(stage('llm_first_token_ms'), q))),
    ],
    [
      'tts_first_audio_ms (question stored → first audio sent; includes llm_first_token_ms)',
      ...[0.5, 0.95].map((q) => f0(p(stage('tts_first_audio_ms'), q))),
    ],
    [
      'end_to_end_ms (decision → first audio sent)',
      ...[0.5, 0.95].map((q) => f0(p(stage('end_to_end_ms'), q))),
    ],
    [
      "end_to_end_ms − eou_delay_ms (the brief's formula)",
      ...[0.5, 0.95].map((q) =>
        f0(
          p(
            turns.map((t) => (t.metrics.end_to_end_ms ?? NaN) - (t.metrics.eou_delay_ms ?? NaN)),
            q,
          ),
        ),
      ),
    ],
    [
      'client: voice.state PROCESSING → first audio.output received',
      ...[0.5, 0.95].map((q) => f0(p(fig.afterDecision, q))),
    ],
    [
      '**client: end of speech → first audio.output received**',
      ...[0.5, 0.95].map(
        (q) =>
          `**${f0(
            p(
              turns.map((t) => t.clientMs),
              q,
            ),
          )}**`,
      ),
    ],
  ];
  const decisionP50 = p(fig.e2e, 0.5);
  out.push(
    '### 1. End of speech to the first audio',
    '',
    `${String(turns.length)} turns on one socket, after one warm-up turn that is not counted (its figures: client ${f0(r.warm.clientMs)} ms, end_to_end ${String(r.warm.metrics.end_to_end_ms)} ms). Each turn is cut with \`response.truncate\` as soon as its first audio arrives (its \`turn.metrics\` are complete by then); the whole answer is not waited for. "End of speech": the last sample of the spoken question louder than 500/32768, at the time the microphone "captured" it.`,
    '',
    table(['stage (ms)', 'p50', 'p95'], rows),
    '',
  );
  const notIncluded = p(
    turns.map(
      (t) => t.clientMs - (t.metrics.eou_delay_ms ?? NaN) - (t.metrics.end_to_end_ms ?? NaN),
    ),
    0.5,
  );
  out.push(
    `\`end_to_end_ms\` is measured from the end-of-utterance decision (\`Utterance.finish\`, src/modules/voice/session.ts), not from the end of speech: it does not contain \`eou_delay_ms\` (the client's end of speech to first audio minus both is p50 ${f0(notIncluded)} ms, the wait for the 100 ms frame and the detector's 32 ms frames). So the time after the decision is \`end_to_end_ms\` itself; subtracting \`eou_delay_ms\` again, as the goal's wording does, would count the detector's delay twice.`,
    '',
    `**Goal p50 ≤ 250 ms after the end-of-utterance decision: ${decisionP50 <= 250 ? 'met' : 'not met'}** (end_to_end_ms p50 ${f0(decisionP50)} ms, p95 ${f0(p(fig.e2e, 0.95))} ms; seen by the client, PROCESSING → first audio p50 ${f0(p(fig.afterDecision, 0.5))} ms).`,
    '',
  );

  // Part 2
  const valid = fig.valid;
  const stop95 = p(
    valid.map((b) => b.stopMs),
    0.95,
  );
  out.push(
    '### 2. Barge-in: speech onset to the last audio of the interrupted answer',
    '',
    `${String(valid.length)} trials (${String(r.barge.length - valid.length)} more where the answer ended before the speech was heard, not counted): a typed question (\`${BARGE_QUESTION_TEXT}\`), then 300 to 1200 ms after its first \`audio.output\` the microphone says "${INTERRUPTION_TEXT}" (Flite \`slt\`) at real time. Onset: the time the client sent the first frame holding the speech (first sample above 500/32768). Default turn detection (\`min_speech_ms\` 200, \`silence_ms\` 500).`,
    '',
    table(
      ['ms from the onset frame sent', 'p50', 'p95', 'max'],
      [
        [
          'last audio.output of the interrupted answer received',
          f0(
            p(
              valid.map((b) => b.stopMs),
              0.5,
            ),
          ),
          `**${f0(stop95)}**`,
          f0(Math.max(...valid.map((b) => b.stopMs))),
        ],
        [
          'voice.state CANCELLED received',
          f0(
            p(
              valid.map((b) => b.cancelledMs),
              0.5,
            ),
          ),
          f0(
            p(
              valid.map((b) => b.cancelledMs),
              0.95,
            ),
          ),
          f0(Math.max(...valid.map((b) => b.cancelledMs))),
        ],
      ],
    ),
    '',
    `The detector alone (Silero and the segmenter, called directly on the same audio in 100 ms frames, 10 phases of its 32 ms frames against them): \`speech_start\` comes out with the frame that ends p50 ${f0(p(r.detector.decidedMs, 0.5))} ms (max ${f0(Math.max(...r.detector.decidedMs))} ms) after the amplitude onset; the detector's own onset lies ${f0(p(r.detector.onsetMs, 0.5))} ms from it. That part is the floor of the barge-in time whatever the server does; the rest (received − floor) is the way from the socket through the session to the last frame.`,
    '',
    `Audio frames of the interrupted answer received after the onset frame: p50 ${f0(
      p(
        valid.map((b) => b.framesAfterOnset),
        0.5,
      ),
    )}, max ${f0(Math.max(...valid.map((b) => b.framesAfterOnset)))}. **Goal p95 ≤ 300 ms (min_speech_ms 200 + 100): ${stop95 <= 300 ? 'met' : 'not met'}.**`,
    '',
  );

  // Part 3
  out.push(
    '### 3. Recognizer real-time factor',
    '',
    `The service's speech-to-text provider (PocketSphinx, its pool of decoder threads, knowledge-base model) called directly with each of the ${String(r.rtf.length)} questions' audio in one buffer, one at a time, after one warm-up: decode time (call to \`final\`) / audio duration.`,
    '',
    table(
      ['audio s (total)', 'decode s (total)', 'RTF overall', 'RTF p50', 'RTF p95', 'RTF max'],
      [
        [
          f1(r.rtf.reduce((s, x) => s + x.audioMs, 0) / 1000),
          f2(r.rtf.reduce((s, x) => s + x.decodeMs, 0) / 1000),
          f2(fig.overall),
          f2(p(fig.rtfs, 0.5)),
          f2(p(fig.rtfs, 0.95)),
          f2(Math.max(...fig.rtfs)),
        ],
      ],
    ),
    '',
  );

  // Part 4
  const d = r.direct;
  const overhead = p(fig.pairs, 0.5);
  out.push(
    '### 4. The pipeline against the providers called directly',
    '',
    "The same audio, turn by turn alternating with part 1's turns, through the providers chained in this process without the socket: 100 ms frames at real time into a Silero detector (default settings), the utterance fed to the recognizer while it arrives, then from the end-of-utterance decision: the final transcript, `ChatService.generate` (history, retrieval, extractive model) up to its first sentence (`SentenceSplitter`), and that sentence through the TTS provider to its first audio chunk. The direct chain stores the question too (`MessageService.append`, `generate` needs it) but that time is left out of its total, so it counts as pipeline overhead.",
    '',
    table(
      ['from the decision (ms)', 'pipeline p50', 'direct p50', 'pipeline p95', 'direct p95'],
      [
        [
          'final transcript',
          f0(p(stage('stt_ms'), 0.5)),
          f0(
            p(
              d.map((x) => x.sttMs),
              0.5,
            ),
          ),
          f0(p(stage('stt_ms'), 0.95)),
          f0(
            p(
              d.map((x) => x.sttMs),
              0.95,
            ),
          ),
        ],
        [
          'storing the question',
          '–',
          f1(
            p(
              d.map((x) => x.storeMs),
              0.5,
            ),
          ),
          '–',
          f1(
            p(
              d.map((x) => x.storeMs),
              0.95,
            ),
          ),
        ],
        [
          'first chunk (from the stored question)',
          f0(p(stage('llm_first_token_ms'), 0.5)),
          f0(
            p(
              d.map((x) => x.firstTokenMs),
              0.5,
            ),
          ),
          f0(p(stage('llm_first_token_ms'), 0.95)),
          f0(
            p(
              d.map((x) => x.firstTokenMs),
              0.95,
            ),
          ),
        ],
        [
          'first audio (from the stored question)',
          f0(p(stage('tts_first_audio_ms'), 0.5)),
          f0(
            p(
              d.map((x) => x.firstAudioMs),
              0.5,
            ),
          ),
          f0(p(stage('tts_first_audio_ms'), 0.95)),
          f0(
            p(
              d.map((x) => x.firstAudioMs),
              0.95,
            ),
          ),
        ],
        [
          '**decision → first audio** (pipeline: PROCESSING → first audio.output at the client)',
          f0(p(fig.afterDecision, 0.5)),
          f0(
            p(
              d.map((x) => x.totalMs),
              0.5,
            ),
          ),
          f0(p(fig.afterDecision, 0.95)),
          f0(
            p(
              d.map((x) => x.totalMs),
              0.95,
            ),
          ),
        ],
      ],
    ),
    '',
    `Overhead per turn (pipeline − direct, paired turn by turn on the same audio): p50 **${f0(overhead)} ms**, p95 ${f0(p(fig.pairs, 0.95))} ms. **Goal ≤ 50 ms: ${overhead <= 50 ? 'met' : 'not met'}** (judged on the p50).`,
    '',
  );

  // Part 5
  out.push(
    '### 5. Sessions speaking at once',
    '',
    "N clients, each a user of its own, connect, stream silence at real time, then all ask at the same moment and receive the whole answer's audio (until `response.complete`). A session is in real time when each `audio.output` frame arrives before the audio received before it has played, playback starting at the first frame's arrival (margin: the smallest lead over all frames; negative is a gap the listener hears). Spoken: the questions of part 1 streamed at real time (VAD, recognizer, model, TTS). Typed: `text.input` (model and TTS only), to tell the recognizer's share from the speaking's. A series stops after its second level that is not all in real time.",
    '',
  );
  const concurrentRows = r.concurrent.map((c) => {
    const s = c.sessions;
    const errors = s.flatMap((x) => x.errors);
    const counts = [...new Set(errors)]
      .map((e) => `${String(errors.filter((x) => x === e).length)} ${e}`)
      .join(', ');
    return [
      c.spoken ? 'spoken' : 'typed',
      c.n,
      `${String(s.filter((x) => x.realTime).length)}/${String(c.n)}`,
      `${String(s.filter((x) => x.ok).length)}/${String(c.n)}`,
      f0(Math.min(...s.map((x) => x.minMarginMs).filter(Number.isFinite))),
      f0(
        p(
          s.map((x) => x.firstAudioMs),
          0.5,
        ),
      ),
      f0(Math.max(...s.map((x) => x.firstAudioMs).filter(Number.isFinite))),
      f0(
        p(
          s.map((x) => x.sttMs ?? NaN),
          0.5,
        ),
      ),
      f1(
        p(
          s.map((x) => x.audioMs),
          0.5,
        ) / 1000,
      ),
      counts === '' ? 'none' : counts,
    ];
  });
  out.push(
    table(
      [
        'questions',
        'N',
        'in real time',
        'answered',
        'min margin ms',
        'first audio p50 ms',
        'first audio max ms',
        'stt_ms p50',
        'answer audio s p50',
        'errors',
      ],
      concurrentRows,
    ),
    '',
    `Largest N with every session in real time: spoken **${String(fig.largest(true))}**, typed **${String(fig.largest(false))}**. **Goal ≥ 8 (spoken, the whole pipeline): ${fig.largest(true) >= 8 ? 'met' : 'not met'}.**`,
    '',
  );

  // Part 6
  const base = fig.idleRates[0]?.base ?? Number.NaN;
  out.push(
    '### 6. CPU of idle listening sessions',
    '',
    `M sockets (one user each) stream pink noise at 1% of full scale in 100 ms frames at real time for ${String(r.settings.idleSeconds)} s; the clients run in a child process, so \`process.cpuUsage()\` of the benchmark's process is the service's (main thread, PocketSphinx worker threads, the pino and PostgreSQL/Redis clients). The same process idle (no sockets) for as long: ${f1(base)} ms of CPU a second.`,
    '',
    table(
      [
        'M',
        'process CPU ms/s',
        'idle process ms/s',
        'per session ms CPU/s',
        'per session % of a core',
        'frames sent',
        'state changes',
        'errors',
      ],
      fig.idleRates.map((x) => [
        x.m,
        f1(x.rate),
        f1(x.base),
        f2(x.perSession),
        f2(x.perSession / 10),
        x.frames,
        x.states,
        x.errors,
      ]),
    ),
    '',
  );
  out.push(...findings(r));
  return out.join('\n');
}

/** Where the time goes, from the figures; and what would change it (nothing in src/ was changed). */
function findings(r: VoiceReport): string[] {
  const fig = figures(r);
  const t = r.pipeline;
  const m = (k: string, x: PipelineTurn) => x.metrics[k] ?? Number.NaN;
  const split = {
    stt: t.map((x) => m('stt_ms', x)),
    store: t.map((x) => m('end_to_end_ms', x) - m('stt_ms', x) - m('tts_first_audio_ms', x)),
    llm: t.map((x) => m('llm_first_token_ms', x)),
    tts: t.map((x) => m('tts_first_audio_ms', x) - m('llm_first_token_ms', x)),
  };
  const e2e = p(fig.e2e, 0.5);
  const share = (xs: number[]) => `${f0(p(xs, 0.5))} ms (${f0((100 * p(xs, 0.5)) / e2e)}%)`;
  const d = r.direct;
  const valid = fig.valid;
  const floor = p(r.detector.decidedMs, 0.5);
  return [
    '### What the figures say, and what to change',
    '',
    `- **Decision to first audio** (end_to_end_ms p50 ${f0(e2e)} ms), turn by turn split into: the recognizer's final transcript after the decision ${share(split.stt)}; storing the question and the session's own steps ${share(split.store)}; the chat engine to its first chunk ${share(split.llm)}; the speech engine from the first chunk to the first audio sent (the first clause or sentence complete, then Flite speaking it before its first chunk) ${share(split.tts)}. The recognizer and the speech engine are ${f0((100 * (p(split.stt, 0.5) + p(split.tts, 0.5))) / e2e)}% of it; the same providers called directly take about as long (recognizer p50 ${f0(
      p(
        d.map((x) => x.sttMs),
        0.5,
      ),
    )} ms, first audio from the stored question ${f0(
      p(
        d.map((x) => x.firstAudioMs),
        0.5,
      ),
    )} ms), so what is left is theirs, not the socket's. What would shorten it further: PocketSphinx's final pass (at the decision the decoder has heard all the audio but \`final\` still runs the end-of-utterance search and rescoring: taking the last partial when it has been stable through the silence would save most of it), and Flite speaking from a library call rather than a process per sentence. As the user hears it, end of speech → first audio also holds the 512 ms of \`eou_delay_ms\` (\`silence_ms\` 500, a session setting), the largest single part.`,
    `- **Barge-in**: p95 ${f0(
      p(
        valid.map((b) => b.stopMs),
        0.95,
      ),
    )} ms, from the onset frame sent to the last \`audio.output\` of the interrupted answer received. The answer's audio is held from the first frame the detector hears as speech (src/modules/voice/gate.ts), and the turn is aborted once \`min_speech_ms\` of speech confirms it: CANCELLED arrived ${f0(Math.min(...valid.map((b) => b.cancelledMs)))} to ${f0(Math.max(...valid.map((b) => b.cancelledMs)))} ms after the onset frame (${String(valid.filter((b) => b.cancelledMs < 600).length)} trials near 400 ms, ${String(valid.filter((b) => b.cancelledMs >= 600).length)} near 800 ms: when the quiet /s/ and the stop of "stop" leave fewer than \`min_speech_ms\` of frames Silero scores as speech before the gap inside "stop please", the candidate is dropped and "please" confirms it). The detector alone needs p50 ${f0(floor)} ms (max ${f0(Math.max(...r.detector.decidedMs))} ms) of this utterance after its first loud sample before \`speech_start\`; holding the audio at the first speech frame is what keeps the stop under the goal. What is left: audio sent ahead of playback (\`playbackLeadMs\` 1000 ms) is already at the client, which must drop its buffer on CANCELLED.`,
    `- **Overhead** of the pipeline over the providers chained directly: p50 ${f0(p(fig.pairs, 0.5))} ms a turn (storing the question alone p50 ${f1(
      p(
        d.map((x) => x.storeMs),
        0.5,
      ),
    )} ms in the direct chain); the per-turn figures vary by ±100 ms with the answers' first sentences and the machine, so this is a difference of medians of noisy figures.`,
    `- **Sessions at once**: see the table of part 5. The spoken series is bounded by the recognizer's pool (\`STT_POOL_SIZE\`, 4 decoder threads, each held for a whole utterance while it is spoken); an utterance past the pool's size waits with its audio queued (up to the longest utterance plus 5 s, at most 4 waiting per decoder), so a burst makes answers late (stt_ms grows with N) before any fails. The typed series is bounded by what the 2 cores can synthesise and send in real time.`,
    `- **Idle sessions**: the Silero detector runs on the main thread for every 32 ms of audio of every socket (~0.15 ms a frame by the module's note); the per-session cost above is that, the base64 and JSON of 10 frames a second, and the socket. Nothing to change at these sizes; hundreds of listening sessions a process would want the detector on a worker thread.`,
    '',
  ];
}

export const BARGE_QUESTION_TEXT =
  'How should metformin be started and reviewed, and what are its side effects?';
export const INTERRUPTION_TEXT = 'stop please, that is enough';
