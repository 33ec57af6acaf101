import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/**
 * Repeats, as the run's very last lines, which test files and tests failed and why (first line of
 * each error), and which never finished. The default reporter names them far above its summary;
 * a CI record that keeps only the tail of the output (a worker that died, say) would otherwise
 * not say which file it was.
 */
export default class FailuresLastReporter implements Reporter {
  onTestRunEnd(modules: readonly TestModule[], unhandled: readonly SerializedError[]): void {
    const lines: string[] = [];
    for (const mod of modules) {
      const state = mod.state();
      if (state === 'passed' || state === 'skipped') continue;
      // A file whose worker died never reports: it is left queued or pending.
      lines.push(`${state === 'failed' ? 'FAILED' : 'UNFINISHED'} FILE ${mod.relativeModuleId}`);
      for (const error of mod.errors()) lines.push(`  file error: ${firstLine(error)}`);
      for (const test of mod.children.allTests()) {
        const result = test.result();
        if (result.state === 'failed')
          lines.push(`  FAILED TEST ${test.fullName}: ${firstLine(result.errors[0])}`);
        else if (result.state === 'pending') lines.push(`  UNFINISHED TEST ${test.fullName}`);
      }
    }
    for (const error of unhandled) lines.push(`UNHANDLED ${firstLine(error)}`);
    if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n`);
  }
}

const firstLine = (error: SerializedError | undefined): string => {
  if (error === undefined) return '(no error recorded)';
  const text = `${error.name ?? 'Error'}: ${error.message}`;
  const cause = error.cause?.message;
  return (text.split('\n')[0] ?? text) + (cause === undefined ? '' : ` (cause: ${cause})`);
};
