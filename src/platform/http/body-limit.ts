import type { IncomingMessage } from 'node:http';

export interface BodyGuard {
  dispose(): void;
}

/**
 * Counts the bytes of a request body as they arrive, alongside whatever parser is reading it, and
 * once more than `maxBytes` have come stops the reading and fails the parser with `tooLarge()` (as
 * an error of the request stream, which stream parsers such as @fastify/multipart listen for). A
 * parser that skips what it does not keep would otherwise read an oversize body to its end.
 *
 * Attach it in the same turn as the parser starts reading: the stream starts flowing on the next
 * tick, so both then see the body from its first byte.
 */
export function guardBodySize(
  raw: IncomingMessage,
  maxBytes: number,
  tooLarge: () => Error,
): BodyGuard {
  let received = 0;
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received <= maxBytes) return;
    raw.off('data', onData);
    raw.unpipe();
    raw.pause();
    raw.emit('error', tooLarge());
  };
  raw.on('data', onData);
  return {
    dispose: () => {
      raw.off('data', onData);
    },
  };
}
