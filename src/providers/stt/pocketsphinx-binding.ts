import koffi, { type LibraryHandle } from 'koffi';
import { checkedArpaCopy } from './arpa-check.js';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';

/**
 * The parts of PocketSphinx 5prealpha's C API (Debian's libpocketsphinx.so.3 and
 * libsphinxbase.so.3) one decoder needs, bound with koffi. Loaded only inside a decoder thread:
 * every call here blocks the thread that makes it.
 *
 * Signatures (5prealpha headers, checked against the libraries' exported symbols):
 *   cmd_ln_t *cmd_ln_parse_r(cmd_ln_t *, arg_t const *defn, int32 argc, char **argv, int32 strict)
 *   arg_t const *ps_args(void); ps_decoder_t *ps_init(cmd_ln_t *); int ps_free(ps_decoder_t *)
 *   int ps_start_utt(ps_decoder_t *); int ps_end_utt(ps_decoder_t *)
 *   int ps_process_raw(ps_decoder_t *, int16 const *, size_t n, int no_search, int full_utt)
 *   char const *ps_get_hyp(ps_decoder_t *, int32 *out_best_score)
 *   logmath_t *ps_get_logmath(ps_decoder_t *); ngram_model_t *ps_get_lm(ps_decoder_t *, name)
 *   int ps_set_lm(ps_decoder_t *, name, ngram_model_t *) (wraps the model in its own set, retained)
 *   int ps_load_dict(ps_decoder_t *, dictfile, fdictfile, format) (replaces the dictionary)
 *   int ps_set_search(ps_decoder_t *, name); int ps_unset_search(ps_decoder_t *, name)
 *   ngram_model_t *ngram_model_read(cmd_ln_t *, path, ngram_file_type_t, logmath_t *)
 *   int ngram_model_apply_weights(ngram_model_t *, float32 lw, float32 wip)
 *   double cmd_ln_float_r(cmd_ln_t *, const char *name)
 *   ngram_model_t *ngram_model_set_init(cmd_ln_t *, ngram_model_t **, char **names,
 *                                       const float32 *weights, int32 n) (retains the models)
 *   ngram_model_set_iter(_model, _free); int ngram_model_free(ngram_model_t *)
 * This version has no ps_update_lm: a changed model is a new search, made current by name.
 */

/** An opaque C pointer as koffi hands it over (null for NULL). */
type Ptr = object | null;

/** `ngram_file_type_t`: NGRAM_INVALID = -1, NGRAM_AUTO, NGRAM_ARPA, NGRAM_BIN. */
const NGRAM_ARPA = 1;
/** The name 5prealpha gives the search built from `-lm` (PS_DEFAULT_SEARCH). */
const DEFAULT_SEARCH = '_default';
const ADAPTED_SEARCH = 'kb_adapted';

interface Api {
  parseArgs: (cfg: Ptr, defn: Ptr, argc: number, argv: string[], strict: number) => Ptr;
  psArgs: () => Ptr;
  init: (cfg: Ptr) => Ptr;
  free: (ps: Ptr) => number;
  configFree: (cfg: Ptr) => number;
  startUtt: (ps: Ptr) => number;
  endUtt: (ps: Ptr) => number;
  processRaw: (ps: Ptr, data: Int16Array, n: number, noSearch: number, fullUtt: number) => number;
  getHyp: (ps: Ptr, score: number[]) => string | null;
  getLogmath: (ps: Ptr) => Ptr;
  getLm: (ps: Ptr, name: string) => Ptr;
  setLm: (ps: Ptr, name: string, lm: Ptr) => number;
  loadDict: (ps: Ptr, dict: string, fillerDict: string | null, format: string | null) => number;
  setSearch: (ps: Ptr, name: string) => number;
  unsetSearch: (ps: Ptr, name: string) => number;
  lmRead: (cfg: Ptr, path: string, type: number, lmath: Ptr) => Ptr;
  lmFree: (lm: Ptr) => number;
  applyWeights: (lm: Ptr, lw: number, wip: number) => number;
  configFloat: (cfg: Ptr, name: string) => number;
  setInit: (cfg: Ptr, models: Ptr[], names: string[], weights: Float32Array, n: number) => Ptr;
  iterInit: (set: Ptr) => Ptr;
  iterModel: (iter: Ptr, name: (string | null)[]) => Ptr;
  iterFree: (iter: Ptr) => void;
}

let api: Api | undefined;

function bind(): Api {
  if (api !== undefined) return api;
  const base = koffi.load('libsphinxbase.so.3');
  const ps = koffi.load('libpocketsphinx.so.3');
  // Typed by the Api interface above: koffi's own type for a bound function is any.
  const f = (lib: LibraryHandle, definition: string) => lib.func(definition) as never;
  api = {
    parseArgs: f(base, 'void *cmd_ln_parse_r(void *, void *, int, const char **, int)'),
    psArgs: f(ps, 'void *ps_args(void)'),
    init: f(ps, 'void *ps_init(void *)'),
    free: f(ps, 'int ps_free(void *)'),
    configFree: f(base, 'int cmd_ln_free_r(void *)'),
    startUtt: f(ps, 'int ps_start_utt(void *)'),
    endUtt: f(ps, 'int ps_end_utt(void *)'),
    processRaw: f(ps, 'int ps_process_raw(void *, const int16_t *, size_t, int, int)'),
    getHyp: f(ps, 'const char *ps_get_hyp(void *, _Out_ int32_t *)'),
    getLogmath: f(ps, 'void *ps_get_logmath(void *)'),
    getLm: f(ps, 'void *ps_get_lm(void *, const char *)'),
    setLm: f(ps, 'int ps_set_lm(void *, const char *, void *)'),
    loadDict: f(ps, 'int ps_load_dict(void *, const char *, const char *, const char *)'),
    setSearch: f(ps, 'int ps_set_search(void *, const char *)'),
    unsetSearch: f(ps, 'int ps_unset_search(void *, const char *)'),
    lmRead: f(base, 'void *ngram_model_read(void *, const char *, int, void *)'),
    lmFree: f(base, 'int ngram_model_free(void *)'),
    applyWeights: f(base, 'int ngram_model_apply_weights(void *, float, float)'),
    configFloat: f(base, 'double cmd_ln_float_r(void *, const char *)'),
    setInit: f(
      base,
      'void *ngram_model_set_init(void *, void **, const char **, const float *, int)',
    ),
    iterInit: f(base, 'void *ngram_model_set_iter(void *)'),
    iterModel: f(base, 'void *ngram_model_set_iter_model(void *, _Out_ const char **)'),
    iterFree: f(base, 'void ngram_model_set_iter_free(void *)'),
  };
  return api;
}

/** Where the generic en-us model lives (Debian's pocketsphinx-en-us). */
export interface ModelPaths {
  acousticModel: string;
  languageModel: string;
  dictionary: string;
}

/** A knowledge-base language model, interpolated with the generic one with this weight (0..1). */
export interface AdaptedModel {
  arpaPath: string;
  weight: number;
  /**
   * Pronunciations of the model's words the dictionary lacks (drug names, say), CMU phones
   * separated by spaces; added to the decoder's dictionary before the model is loaded.
   */
  words?: readonly { word: string; phones: string }[];
}

/** One PocketSphinx decoder: created once, then used for one utterance after another. */
export class Decoder {
  readonly #api: Api;
  readonly #config: Ptr;
  #ps: Ptr;
  /** The generic model, owned by the default search; borrowed to build interpolated sets. */
  readonly #generic: Ptr;
  #inUtterance = false;
  readonly #paths: ModelPaths;
  /** The words added to the generic dictionary now (none: ''). */
  #wordsKey = '';

  constructor(paths: ModelPaths) {
    this.#api = bind();
    this.#paths = paths;
    const argv = [
      '-hmm',
      paths.acousticModel,
      '-lm',
      paths.languageModel,
      '-dict',
      paths.dictionary,
      // The library logs every step to stderr otherwise (sphinxbase's logging is process-wide).
      '-logfn',
      '/dev/null',
    ];
    this.#config = this.#api.parseArgs(null, this.#api.psArgs(), argv.length, argv, 1);
    if (this.#config === null) throw new Error('PocketSphinx rejected its configuration');
    this.#ps = this.#api.init(this.#config);
    if (this.#ps === null) {
      this.#api.configFree(this.#config);
      throw new Error('PocketSphinx could not load its models');
    }
    this.#generic = this.#genericModel();
  }

  #genericModel(): Ptr {
    const set = this.#api.getLm(this.#ps, DEFAULT_SEARCH);
    const iter = this.#api.iterInit(set);
    if (iter === null) throw new Error('PocketSphinx has no default language model');
    const model = this.#api.iterModel(iter, [null]);
    this.#api.iterFree(iter);
    return model;
  }

  /**
   * Interpolates `model` with the generic language model (weights `weight` and `1 - weight`) and
   * makes the result current; `null` goes back to the generic model alone. Between utterances
   * only. When it throws, the generic model alone is current.
   */
  setAdaptedModel(model: AdaptedModel | null): void {
    if (this.#inUtterance) throw new Error('cannot change the language model during an utterance');
    const a = this.#api;
    // Back to the generic model first: replacing the current search by name would leave the
    // decoder pointing at the freed one, and a failure below leaves the generic model in use.
    a.setSearch(this.#ps, DEFAULT_SEARCH);
    a.unsetSearch(this.#ps, ADAPTED_SEARCH);
    if (model === null) {
      this.#useWords([]);
      return;
    }
    // Words first: the search built for the model looks each of its words up in the dictionary.
    this.#useWords(model.words ?? []);
    // sphinxbase's ARPA reader brings the process down on a file it cannot parse or finds
    // missing: it reads a private copy of what was checked.
    const copy = checkedArpaCopy(model.arpaPath);
    let adapted: Ptr;
    try {
      // Without a configuration: with one, ngram_model_read dereferences a model it failed to
      // read. The weights it would apply from the configuration are applied here instead.
      adapted = a.lmRead(null, copy, NGRAM_ARPA, a.getLogmath(this.#ps));
    } finally {
      rmSync(copy, { force: true });
    }
    if (adapted === null) throw new Error('the adapted language model could not be read');
    a.applyWeights(
      adapted,
      a.configFloat(this.#config, '-lw'),
      a.configFloat(this.#config, '-wip'),
    );
    const weights = new Float32Array([1 - model.weight, model.weight]);
    const set = a.setInit(this.#config, [this.#generic, adapted], ['generic', 'kb'], weights, 2);
    a.lmFree(adapted); // the set holds its own reference
    if (set === null) throw new Error('the language models could not be interpolated');
    const added = a.setLm(this.#ps, ADAPTED_SEARCH, set);
    a.lmFree(set); // the search holds its own reference
    if (added !== 0 || a.setSearch(this.#ps, ADAPTED_SEARCH) !== 0) {
      a.setSearch(this.#ps, DEFAULT_SEARCH);
      a.unsetSearch(this.#ps, ADAPTED_SEARCH);
      throw new Error('the adapted language model could not be made current');
    }
  }

  /**
   * The generic dictionary plus `words`, loaded whole (ps_load_dict) when they changed: adding
   * hundreds of words one by one (ps_add_word) to a decoder whose language model is shared by
   * two searches crashed this library version.
   */
  #useWords(words: readonly { word: string; phones: string }[]): void {
    const key = words.map((w) => `${w.word} ${w.phones}`).join('\n');
    if (key === this.#wordsKey) return;
    const file = words.length === 0 ? this.#paths.dictionary : extendedDictionary(this.#paths, key);
    try {
      if (this.#api.loadDict(this.#ps, file, null, null) < 0) {
        throw new Error('the dictionary could not be loaded');
      }
      this.#wordsKey = key;
    } finally {
      if (file !== this.#paths.dictionary) rmSync(file, { force: true });
    }
  }

  start(): void {
    if (this.#api.startUtt(this.#ps) < 0) throw new Error('ps_start_utt failed');
    this.#inUtterance = true;
  }

  process(samples: Int16Array): void {
    if (samples.length === 0) return;
    if (this.#api.processRaw(this.#ps, samples, samples.length, 0, 0) < 0) {
      throw new Error('ps_process_raw failed');
    }
  }

  /** The best hypothesis so far (during the utterance) or of the whole one (after `end`). */
  hypothesis(): string {
    return (this.#api.getHyp(this.#ps, [0]) ?? '').trim();
  }

  /** Ends the utterance (second pass and best path run here) and answers its transcript. */
  end(): string {
    if (!this.#inUtterance) return '';
    this.#inUtterance = false;
    if (this.#api.endUtt(this.#ps) < 0) throw new Error('ps_end_utt failed');
    return this.hypothesis();
  }

  get inUtterance(): boolean {
    return this.#inUtterance;
  }

  free(): void {
    if (this.#ps === null) return;
    this.#api.free(this.#ps);
    this.#api.configFree(this.#config);
    this.#ps = null;
  }
}

/** A temporary dictionary file: the generic one and `lines` ("word PH ONES" each). */
function extendedDictionary(paths: ModelPaths, lines: string): string {
  const file = join(
    tmpdir(),
    `ps-dict-${String(process.pid)}-${String(threadId)}-${randomUUID()}.dict`,
  );
  writeFileSync(file, `${readFileSync(paths.dictionary, 'utf8')}${lines}\n`, { mode: 0o600 });
  return file;
}
