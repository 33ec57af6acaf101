import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { usersRepo } from '../src/modules/users/repo.js';
import { createTestApp, type TestApp } from '../test/helpers/app.js';
import { speak } from '../test/helpers/speech-audio.js';
import { listenLocal } from '../test/helpers/ws-client.js';
import {
  ADMIN_DATABASE_URL,
  createDatabase,
  deleteRedisPrefix,
  serverVersions,
} from './lib/fixtures.js';
import { num, prng, runBenchmark, writeSection } from './lib/sections.js';
import { socketMic, VoiceClient } from './lib/voice-client.js';
import {
  bargeTrial,
  detectorOnset,
  concurrentRound,
  directTurn,
  pipelineTurn,
  sleep,
  type BargeTrial,
  type ConcurrentSession,
  type DirectTurn,
  type PipelineTurn,
} from './lib/voice-parts.js';
import {
  BARGE_QUESTION_TEXT,
  INTERRUPTION_TEXT,
  render,
  type VoiceReport,
} from './lib/voice-report.js';

/**
 * `make bench-voice`: the streaming voice pipeline (DECISIONS 5) with the offline providers
 * (Silero, PocketSphinx, the extractive model, Flite), the service in this process
 * (createTestApp: PostgreSQL and Redis as the tests use them, a small knowledge base), driven by
 * real WebSocket clients streaming Flite `slt` speech in 100 ms frames at real time:
 *   1. end of speech to the first audio.output, with the stages of `turn.metrics`;
 *   2. barge-in: speech onset to the last audio.output of the interrupted answer;
 *   3. the recognizer's real-time factor, called directly;
 *   4. the pipeline against the same providers chained in-process (turns alternate);
 *   5. sessions answering at once that all stay in real time;
 *   6. process CPU of idle listening sessions (clients in a child process).
 * Knobs: BENCH_VOICE_TURNS (20), BENCH_VOICE_BARGE (15), BENCH_VOICE_LEVELS (1,2,4,8,12,16,24),
 * BENCH_VOICE_IDLE (8,32), BENCH_VOICE_IDLE_S (20), BENCH_WRITE=0, BENCH_RENDER=<json>.
 */

const settings = {
  turns: num('BENCH_VOICE_TURNS', 20),
  barge: num('BENCH_VOICE_BARGE', 15),
  levels: (process.env.BENCH_VOICE_LEVELS ?? '1,2,4,8,12,16,24').split(',').map(Number),
  idle: (process.env.BENCH_VOICE_IDLE ?? '8,32').split(',').map(Number),
  idleSeconds: num('BENCH_VOICE_IDLE_S', 20),
  write: process.env.BENCH_WRITE !== '0',
};
const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
/** Only the instance limit is raised; each client of parts 5 and 6 is a user of its own. */
const ENV = { VOICE_MAX_SESSIONS: '200', VOICE_IDLE_TIMEOUT_MS: '600000' };

const GUIDES = [
  {
    title: 'Metformin',
    text: [
      'Metformin in type 2 diabetes',
      '',
      'Offer metformin as the first drug treatment for adults with type 2 diabetes. Start metformin',
      'at 500 mg once daily with the evening meal and increase the dose slowly as tolerated. Do not',
      'start metformin when the eGFR is below 30. Review the dose of metformin when the eGFR falls',
      'below 45. Explain that metformin can cause stomach upset and diarrhoea, which usually settle',
      'within weeks.',
    ].join('\n'),
  },
  {
    title: 'Hypertension',
    text: [
      'Hypertension in adults',
      '',
      'Offer an ACE inhibitor as the first drug treatment for adults under 55 with high blood',
      'pressure. Offer a calcium channel blocker to adults aged 55 or over. Aim for a clinic blood',
      'pressure below 140 over 90 in adults under 80. Check the blood pressure at least once a year',
      'once it is controlled. Advise patients to eat less salt, drink less alcohol and stay active.',
    ].join('\n'),
  },
];
const QUESTIONS = [
  'what is the first drug treatment for type two diabetes',
  'how should metformin be started',
  'when should metformin not be started',
  'when should the dose of metformin be reviewed',
  'what dose of metformin should be started',
  'can metformin cause stomach upset',
  'what side effects does metformin have',
  'when does the diarrhoea from metformin settle',
  'should metformin be taken with the evening meal',
  'how fast should the dose of metformin be increased',
  'what is the first drug treatment for high blood pressure',
  'what blood pressure should adults aim for',
  'when should a calcium channel blocker be offered',
  'how often should the blood pressure be checked',
  'what advice helps patients with high blood pressure',
  'who should be offered an ace inhibitor',
  'is metformin safe when the kidney function is low',
  'what should patients with high blood pressure drink less of',
  'what treatment do adults over fifty five get for blood pressure',
  'what is the blood pressure target for adults under eighty',
];
const BARGE_QUESTION = BARGE_QUESTION_TEXT;
const INTERRUPTION = INTERRUPTION_TEXT;

const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) {
    await fn().catch((err: unknown) => {
      console.error('clean-up step failed:', err);
    });
  }
}

async function newUser(t: TestApp, tag: string, admin = false) {
  const email = `voice-bench-${tag}.${String(process.pid)}@example.test`;
  const password = 'voice bench correct horse battery';
  const reg = await t.app.inject({
    method: 'POST',
    url: '/api/auth/register',
    payload: { email, password, full_name: 'Voice Bench' },
  });
  if (reg.statusCode !== 201) throw new Error(`register: ${reg.body}`);
  const id = reg.json<{ data: { id: string } }>().data.id;
  if (admin) await usersRepo.update(t.deps.database.db, id, { adminRole: 'admin' });
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { email, password },
  });
  if (res.statusCode !== 200) throw new Error(`login: ${res.body}`);
  return { id, access: res.json<{ data: { access_token: string } }>().data.access_token };
}

async function uploadGuide(t: TestApp, token: string, title: string, text: string) {
  const boundary = `bench${String(Date.now())}`;
  const part = (name: string, value: string, file?: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"` +
    (file === undefined ? '' : `; filename="${file}"\r\nContent-Type: text/plain`) +
    `\r\n\r\n${value}\r\n`;
  const payload =
    part('title', title) +
    part('category', 'guidelines') +
    part('file', text, 'guide.txt') +
    `--${boundary}--\r\n`;
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/admin/kb/documents',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
    },
    payload,
  });
  if (res.statusCode !== 202) throw new Error(`upload: ${res.body}`);
  const jobId = res.json<{ data: { job: { id: string } } }>().data.job.id;
  for (;;) {
    const job = await t.app.inject({
      method: 'GET',
      url: `/api/admin/kb/jobs/${jobId}`,
      headers: { authorization: `Bearer ${token}` },
    });
    const state = job.json<{ data: { state: string } }>().data.state;
    if (state === 'completed') return;
    if (state === 'failed') throw new Error('indexing failed');
    await sleep(200);
  }
}

function codeVersion() {
  const git = (args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return {
    commit: git(['rev-parse', '--short=10', 'HEAD']).trim(),
    changed: git(['status', '--porcelain', '--', 'src'])
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => l.slice(3)),
  };
}

/** Part 6: process CPU over `seconds` with `tokens.length` sockets streaming low noise. */
async function idleCpu(port: number, tokens: string[], seconds: number) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'bench/lib/voice-idle-clients.ts'),
      String(port),
      String(seconds),
    ],
    {
      cwd: ROOT,
      env: { ...process.env, VOICE_IDLE_TOKENS: JSON.stringify(tokens) },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout });
  const it = lines[Symbol.asyncIterator]();
  for (;;) {
    const line = await it.next();
    if (line.done === true) throw new Error('idle clients exited early');
    if (line.value === 'streaming') break;
  }
  const cpu = process.cpuUsage();
  const wall = performance.now();
  await sleep(seconds * 1000 - 500);
  const used = process.cpuUsage(cpu);
  const ms = performance.now() - wall;
  const last = await it.next();
  const child_ = JSON.parse(String(last.value)) as {
    frames: number;
    states: number;
    errors: number;
    clientCpuMs: number;
  };
  return { cpuMs: (used.user + used.system) / 1000, wallMs: ms, ...child_ };
}

async function processIdle(seconds: number) {
  const cpu = process.cpuUsage();
  const wall = performance.now();
  await sleep(seconds * 1000 - 500);
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - wall };
}

async function run(): Promise<VoiceReport> {
  const date = new Date().toISOString();
  const code = codeVersion();
  const load: Record<string, number> = { start: loadavg()[0] ?? 0 };
  // createTestApp's own database comes from vitest's template: a scratch one of this run instead.
  const db = await createDatabase();
  cleanups.push(() => db.drop());
  const redisPrefix = `mas_bench_voice_${randomBytes(5).toString('hex')}:`;
  cleanups.push(() => deleteRedisPrefix(redisPrefix));
  const t = await createTestApp({ env: ENV, shared: { databaseUrl: db.url, redisPrefix } });
  cleanups.push(() => t.close());
  const admin = await newUser(t, 'admin', true);
  for (const g of GUIDES) await uploadGuide(t, admin.access, g.title, g.text);
  const port = await listenLocal(t.app);
  console.log('making the spoken questions with Flite slt');
  const questions = await Promise.all(
    QUESTIONS.map(async (text) => ({ text, pcm: await speak(text, { voice: 'slt' }) })),
  );
  const interruption = await speak(INTERRUPTION, { voice: 'slt' });
  const speaker = await newUser(t, 'speaker');
  const baseline = await newUser(t, 'direct');
  const conv = await t.deps.conversations.create(baseline.id, { title: 'direct' });

  // Parts 1 and 4: pipeline turns and direct turns alternate, on the same audio.
  load.turns = loadavg()[0] ?? 0;
  const client = await VoiceClient.connect(port, speaker.access);
  const mic = socketMic(client);
  mic.start();
  await sleep(600);
  console.log('warm-up turn (not counted)');
  const warm = await pipelineTurn(client, mic, questions[0]!);
  await directTurn(t.deps, baseline.id, conv.id, questions[0]!.pcm);
  const pipeline: PipelineTurn[] = [];
  const direct: DirectTurn[] = [];
  for (let i = 0; i < settings.turns; i++) {
    const q = questions[i % questions.length]!;
    await sleep(400);
    pipeline.push(await pipelineTurn(client, mic, q));
    direct.push(await directTurn(t.deps, baseline.id, conv.id, q.pcm));
    const p = pipeline.at(-1)!;
    console.log(
      `turn ${String(i + 1)}: client ${p.clientMs.toFixed(0)} ms, metrics ${JSON.stringify(p.metrics)}, direct ${direct.at(-1)!.totalMs.toFixed(0)} ms, "${p.transcript}"`,
    );
  }

  // Part 2: barge-in.
  load.barge = loadavg()[0] ?? 0;
  const random = prng(7);
  const barge: BargeTrial[] = [];
  for (
    let i = 0;
    barge.filter((b) => b.valid).length < settings.barge && i < settings.barge * 2;
    i++
  ) {
    await sleep(300);
    const trial = await bargeTrial(client, mic, BARGE_QUESTION, interruption, 300 + random() * 900);
    barge.push(trial);
    console.log(`barge-in ${String(i + 1)}: ${JSON.stringify(trial)}`);
  }
  await mic.stop();
  await client.close();
  const detector = await detectorOnset(interruption);

  // Part 3: real-time factor of the recognizer, called directly, one utterance at a time.
  const stt = t.deps.voice.deps.stt;
  const rtf: { audioMs: number; decodeMs: number }[] = [];
  for (const q of [questions[0]!, ...questions]) {
    const started = performance.now();
    const audio = (async function* () {
      await Promise.resolve();
      yield q.pcm;
    })();
    for await (const ev of stt.transcribe(audio, {
      signal: new AbortController().signal,
      language: 'en',
    })) {
      if (ev.type === 'final') break;
    }
    rtf.push({ audioMs: q.pcm.length / 32, decodeMs: performance.now() - started });
  }
  rtf.shift();

  // Part 5: sessions at once, spoken and typed questions.
  load.concurrent = loadavg()[0] ?? 0;
  const maxLevel = Math.max(...settings.levels, ...settings.idle);
  const users = [];
  for (let i = 0; i < maxLevel; i++) users.push(await newUser(t, `u${String(i)}`));
  const concurrent: { spoken: boolean; n: number; sessions: ConcurrentSession[] }[] = [];
  for (const spoken of [true, false]) {
    let failures = 0;
    for (const n of settings.levels) {
      const sessions = await concurrentRound(
        port,
        users.slice(0, n).map((u) => u.access),
        questions,
        spoken,
      );
      concurrent.push({ spoken, n, sessions });
      const rt = sessions.filter((s) => s.realTime).length;
      console.log(
        `${spoken ? 'spoken' : 'typed'} N=${String(n)}: ${String(rt)}/${String(n)} in real time, min margin ${Math.min(...sessions.map((s) => s.minMarginMs)).toFixed(0)} ms, errors ${sessions.flatMap((s) => s.errors).join(',')}`,
      );
      if (rt < n && ++failures >= 2) break;
      await sleep(1000);
    }
  }

  // Part 6: idle listening sessions.
  load.idle = loadavg()[0] ?? 0;
  await sleep(2000);
  const idleBase = await processIdle(settings.idleSeconds);
  const idle = [];
  for (const m of settings.idle) {
    const r = await idleCpu(
      port,
      users.slice(0, m).map((u) => u.access),
      settings.idleSeconds,
    );
    idle.push({ m, ...r });
    console.log(`idle M=${String(m)}: ${JSON.stringify(r)}`);
    await sleep(2000);
  }
  load.end = loadavg()[0] ?? 0;
  const cpu = cpus();
  return {
    date,
    code,
    load,
    machine: {
      cpu: cpu[0]?.model ?? 'unknown',
      cores: cpu.length,
      memGiB: totalmem() / 2 ** 30,
      node: process.version,
      ...(await serverVersions()),
    },
    settings,
    env: ENV,
    warm,
    pipeline,
    direct,
    barge,
    detector,
    rtf,
    concurrent,
    idleBase,
    idle,
  };
}

async function main(): Promise<void> {
  const saved = process.env.BENCH_RENDER;
  let report: VoiceReport;
  if (saved !== undefined) {
    report = JSON.parse(readFileSync(saved, 'utf8')) as VoiceReport;
  } else {
    report = await run();
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(path.join(RESULTS, 'voice.json'), JSON.stringify(report));
  }
  await writeSection('voice', render(report), settings.write);
}

await runBenchmark(ADMIN_DATABASE_URL, main, cleanUp);
