import { describe, expect, it } from 'vitest';
import { PlaybackGate } from './gate.js';

describe('PlaybackGate', () => {
  it('lets audio through when open', async () => {
    await expect(new PlaybackGate().pass(new AbortController().signal)).resolves.toBeUndefined();
  });

  it('holds until released', async () => {
    const gate = new PlaybackGate();
    gate.hold();
    let passed = false;
    const waiting = gate.pass(new AbortController().signal).then(() => {
      passed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(passed).toBe(false);
    gate.release();
    await waiting;
    expect(passed).toBe(true);
    expect(gate.isHeld).toBe(false);
  });

  it('ends a wait when the turn is aborted, and refuses to wait on an aborted turn', async () => {
    const gate = new PlaybackGate();
    gate.hold();
    const turn = new AbortController();
    const waiting = gate.pass(turn.signal);
    turn.abort(new Error('barge-in'));
    await expect(waiting).rejects.toThrow('barge-in');
    await expect(gate.pass(turn.signal)).rejects.toThrow('barge-in');
  });
});
