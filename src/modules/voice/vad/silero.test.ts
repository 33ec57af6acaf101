import { describe, expect, it } from 'vitest';
import { SILERO_FRAME_SAMPLES, SileroStream, sileroModelOwner } from './silero.js';

describe('the Silero model held by an instance', () => {
  it('is released only after the inferences under way, and refuses runs afterwards', async () => {
    const owner = sileroModelOwner();
    const stream = new SileroStream(await owner.load());
    const frame = new Float32Array(SILERO_FRAME_SAMPLES);
    // Started, not yet run (onnxruntime runs it after a setImmediate), when the release comes.
    const running = stream.probability(frame);
    const released = owner.release();
    const probability = await running;
    expect(probability).toBeGreaterThanOrEqual(0);
    expect(probability).toBeLessThan(0.5);
    await released;
    await expect(stream.probability(frame)).rejects.toThrow('the Silero model was released');
  });
});
