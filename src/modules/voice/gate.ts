/**
 * Holds an answer's audio while speech may be starting over it: the detector hears something that
 * is not yet long enough to count as a barge-in. Released, the audio goes on where it stopped (a
 * cough, a click); a confirmed barge-in aborts the turn instead, which ends every wait.
 */
export class PlaybackGate {
  private held = false;
  private waiters: (() => void)[] = [];

  get isHeld(): boolean {
    return this.held;
  }

  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves at once when open, else when released; rejects with the reason when `signal` aborts. */
  async pass(signal: AbortSignal): Promise<void> {
    if (!this.held) return;
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }
}
