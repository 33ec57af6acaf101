import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory holding package.json, whether running from src (tsx) or dist (tsc output). */
export function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the project root (package.json)');
    dir = parent;
  }
}

/** The service version from package.json (the interface version, 2.0.x). */
export function serviceVersion(): string {
  const pkg = JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}
