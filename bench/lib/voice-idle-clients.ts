import { noise } from '../../test/helpers/speech-audio.js';
import { FRAME_BYTES, socketMic, VoiceClient } from './voice-client.js';

/**
 * Part 6 of bench/voice.ts, in a process of its own so that the clients' CPU is not counted as
 * the service's: opens one voice socket per token (env VOICE_IDLE_TOKENS, JSON array) on port
 * argv[2], prints `streaming` once every socket streams low noise at real time, streams for
 * argv[3] seconds, then prints one JSON line (frames sent, state changes seen, errors) and exits.
 */

const port = Number(process.argv[2]);
const seconds = Number(process.argv[3]);
const tokens = JSON.parse(process.env.VOICE_IDLE_TOKENS ?? '[]') as string[];
const bed = await noise('pink', 10, 0.01);
let offset = 0;
const filler = () => {
  if (offset + FRAME_BYTES > bed.length) offset = 0;
  const out = Buffer.from(bed.subarray(offset, offset + FRAME_BYTES));
  offset += FRAME_BYTES;
  return out;
};
const clients = await Promise.all(tokens.map((t) => VoiceClient.connect(port, t)));
const mics = clients.map((c) => socketMic(c, filler));
for (const m of mics) m.start();
console.log('streaming');
const cpu = process.cpuUsage();
await new Promise((r) => setTimeout(r, seconds * 1000));
const used = process.cpuUsage(cpu);
await Promise.all(mics.map((m) => m.stop()));
const frames = mics.reduce((n, m) => n + m.sentAt.length, 0);
const states = clients.reduce(
  (n, c) => n + c.frames.filter((r) => r.f.type === 'voice.state').length,
  0,
);
const errors = clients.reduce((n, c) => n + c.frames.filter((r) => r.f.type === 'error').length, 0);
await Promise.all(clients.map((c) => c.close()));
console.log(
  JSON.stringify({ frames, states, errors, clientCpuMs: (used.user + used.system) / 1000 }),
);
process.exit(0);
