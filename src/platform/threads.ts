import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts the worker thread whose entry is `name` (without extension) next to `base` (the caller's
 * `import.meta.url`). The compiled thread (dist/) runs as it is. From the sources (tsx, vitest)
 * the thread registers tsx's loader itself first: Node 20 does not apply an `--import tsx` in a
 * worker's execArgv to the worker's entry file.
 */
export function startThread(base: string, name: string, options: WorkerOptions = {}): Worker {
  const fromSource = base.endsWith('.ts');
  const entry = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, base);
  if (!fromSource) return new Worker(entry, options);
  const code =
    `import(${JSON.stringify(tsxLoaderUrl())}).then((tsx) => { tsx.register(); ` +
    `return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(code, { ...options, eval: true });
}

/** tsx's ESM API (its `register()`), found through its package.json's exports. */
function tsxLoaderUrl(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('tsx/package.json');
  const pkg = require(manifest) as { exports: Record<string, { import: { default: string } }> };
  const entry = pkg.exports['./esm/api']?.import.default ?? './dist/esm/api/index.mjs';
  return new URL(entry, pathToFileURL(manifest)).href;
}
