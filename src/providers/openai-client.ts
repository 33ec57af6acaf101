import OpenAI from 'openai';

export interface OpenAiClientOptions {
  baseUrl: string;
  /** '' or undefined: no Authorization header at all (local servers without keys). */
  apiKey: string | undefined;
  timeoutMs: number;
  fetch?: typeof fetch | undefined;
}

/**
 * The `openai` SDK client every OpenAI-compatible adapter uses: everything explicit, so the SDK
 * reads nothing from the environment (config.ts does that); no retries of its own (the callers'
 * policies see `retryable` on their errors); no logging.
 */
export function openAiClient(options: OpenAiClientOptions): OpenAI {
  const key = options.apiKey ?? '';
  return new OpenAI({
    baseURL: options.baseUrl,
    // The SDK insists on a key; without one the header is removed below.
    apiKey: key === '' ? 'unused' : key,
    organization: null,
    project: null,
    logLevel: 'off',
    maxRetries: 0,
    timeout: options.timeoutMs,
    ...(key === '' ? { defaultHeaders: { Authorization: null } } : {}),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
}
