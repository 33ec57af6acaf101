import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db } from '../../db/client.js';
import type { Logger } from '../../platform/logger.js';
import type { OutageNotice } from '../../platform/outages.js';
import { startThread } from '../../platform/threads.js';
import { EN_US_DICTIONARY } from '../../providers/stt/kb-dictionary.js';
import type { AdaptableSttProvider } from '../../providers/stt/index.js';
import type { KbModelResult, KbModelTask } from './kb-model-thread.js';
import { kbModelRepo } from './kb-model-repo.js';

export interface KbModelOptions {
  db: Db;
  stt: AdaptableSttProvider;
  log: Logger;
  /** Where the ARPA files go. */
  dir: string;
  /** The knowledge-base model's share in the interpolation (bench/voice-wer.ts chose it). */
  weight: number;
  /** How often the knowledge base is checked for change. */
  pollMs: number;
  /** Characters of chunk text read at most; the model is built from the first ones (by chunk id). */
  maxChars: number;
  /** Told of a failed check first: a lost database is logged there once, not per poll. */
  outages?: OutageNotice;
}

/**
 * Keeps the recognizer's language model adapted to the knowledge base (issue 11 item 3): built from
 * the current chunks' text, interpolated with the generic en-us model by the recognizer, and built
 * again when documents are indexed, replaced or deleted, whichever process indexed them (the
 * knowledge base is polled for a fingerprint of its indexed documents). The build runs on a thread
 * of its own; a failed one leaves the model in use as it was.
 */
/** The model in use: what it was built from, and when. */
export interface KbModelStatus {
  builtAt: Date;
  chunks: number;
  /** 1-, 2- and 3-grams; null when the knowledge base had no words to build from. */
  ngrams: [number, number, number] | null;
  /** Words added to the recognizer's dictionary (with Flite's pronunciations). */
  addedWords: number;
}

export class KnowledgeLanguageModel {
  status: KbModelStatus | undefined;
  private seen: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private generation = 0;
  /**
   * The ARPA file of the model the recognizer uses. It is kept while that model is current: a
   * decoder thread started later (one replacing a crashed or stalled one) loads it from there.
   */
  private currentArpa: string | undefined;

  constructor(private readonly options: KbModelOptions) {}

  start(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.pollMs);
    this.timer.unref();
  }

  /** Builds the model again if the knowledge base changed since the last build. */
  refresh(): Promise<void> {
    this.running ??= this.check().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await this.replaceArpa(undefined);
  }

  /** Makes `next` the current model's file and removes the one it replaces. */
  private async replaceArpa(next: string | undefined): Promise<void> {
    const previous = this.currentArpa;
    this.currentArpa = next;
    if (previous !== undefined && previous !== next) await rm(previous, { force: true });
  }

  private async check(): Promise<void> {
    const { db, log } = this.options;
    try {
      const fingerprint = await kbModelRepo.fingerprint(db);
      if (fingerprint === this.seen) return;
      await this.rebuild();
      this.seen = fingerprint;
    } catch (err) {
      if (this.options.outages?.noticed(err) === true) return;
      log.warn(
        { err },
        'knowledge-base language model not rebuilt; the recognizer keeps its model',
      );
    }
  }

  private async rebuild(): Promise<void> {
    const { stt, dir, weight, log } = this.options;
    const started = performance.now();
    const texts = await this.texts();
    await mkdir(dir, { recursive: true });
    const arpaPath = join(dir, `kb-${String(process.pid)}-${String(++this.generation)}.arpa`);
    const result = await build({ texts, dictionaryPath: EN_US_DICTIONARY, arpaPath });
    if (result.ngrams[0] <= 2) {
      await stt.setAdaptedModel(null);
      await this.replaceArpa(undefined);
      this.status = { builtAt: new Date(), chunks: texts.length, ngrams: null, addedWords: 0 };
      log.info({ chunks: texts.length }, 'knowledge base has no words to adapt the recognizer to');
      return;
    }
    try {
      await stt.setAdaptedModel({ arpaPath, weight, words: result.words });
    } catch (err) {
      // The recognizer went back to its generic model: no decoder will read either file again.
      await this.replaceArpa(undefined);
      await rm(arpaPath, { force: true });
      throw err;
    }
    await this.replaceArpa(arpaPath);
    this.status = {
      builtAt: new Date(),
      chunks: texts.length,
      ngrams: result.ngrams,
      addedWords: result.words.length,
    };
    const ms = Math.round(performance.now() - started);
    log.info(
      { chunks: texts.length, ngrams: result.ngrams, ms },
      'recognizer adapted to the knowledge base',
    );
  }

  private async texts(): Promise<string[]> {
    const { db, maxChars } = this.options;
    const texts: string[] = [];
    let chars = 0;
    let after: string | null = null;
    for (;;) {
      const page = await kbModelRepo.texts(db, after, 2000);
      for (const row of page) {
        if (chars + row.text.length > maxChars) return texts;
        texts.push(row.text);
        chars += row.text.length;
      }
      const last = page.at(-1);
      if (last === undefined || page.length < 2000) return texts;
      after = last.id;
    }
  }
}

function build(task: KbModelTask): Promise<KbModelResult> {
  return new Promise((resolve, reject) => {
    const thread = startThread(import.meta.url, 'kb-model-thread', {
      workerData: task,
      resourceLimits: { maxOldGenerationSizeMb: 1024 },
    });
    thread.once('message', (result: KbModelResult) => {
      resolve(result);
    });
    thread.once('error', reject);
    thread.once('exit', (code) => {
      if (code !== 0) reject(new Error(`language model thread exited with ${String(code)}`));
    });
  });
}
