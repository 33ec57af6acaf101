import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { lazyChildLoggerFactory } from './request-logger.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(
    { logLevel: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { logger, lines };
}

describe('lazyChildLoggerFactory', () => {
  it('logs exactly as the real child would: bindings, level and redaction', () => {
    const lazy = capture();
    const real = capture();
    const rawRequest = undefined as unknown as Parameters<typeof lazyChildLoggerFactory>[3];
    const child = lazyChildLoggerFactory.call(
      undefined as never,
      lazy.logger,
      { reqId: 'r-1' },
      {},
      rawRequest,
    );
    const direct = real.logger.child({ reqId: 'r-1' }, {});
    for (const log of [child, direct]) {
      log.debug('not at info level');
      log.info({ user: { token: 'abc.def.ghi', id: 7 } }, 'hello');
      log.child({ step: 2 }).warn('nested');
    }
    const strip = (lines: Record<string, unknown>[]) => lines.map(({ time: _t, ...rest }) => rest);
    expect(strip(lazy.lines)).toEqual(strip(real.lines));
    expect(lazy.lines[0]).toMatchObject({
      reqId: 'r-1',
      msg: 'hello',
      user: { token: '[redacted]', id: 7 },
    });
    expect(lazy.lines).toHaveLength(2);
    expect(child.level).toBe('info');
  });
});
