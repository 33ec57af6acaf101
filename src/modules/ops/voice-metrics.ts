import type { Metrics } from '../../platform/metrics.js';
import { histogramQuantile, type Bucket } from '../admin/http-window.js';

export interface StageFigures {
  count: number;
  p50_ms: number | null;
  p95_ms: number | null;
  mean_ms: number | null;
}

/** The stages every answer lists (0 observations included), in pipeline order. */
export const VOICE_STAGES = [
  'stt',
  'llm_first_token',
  'tts_first_audio',
  'end_to_end',
  'eou_delay',
];

const ms = (seconds: number | null) =>
  seconds === null ? null : Math.round(seconds * 10_000) / 10;

/**
 * Each voice stage's count, mean and estimated quantiles since the process started, read from
 * its own `voice_stage_seconds` histogram (quantiles interpolated within buckets, as Prometheus's
 * `histogram_quantile` does).
 */
export async function voiceStageFigures(metrics: Metrics): Promise<Record<string, StageFigures>> {
  const { values } = await metrics.voiceStage.get();
  const buckets = new Map<string, Bucket[]>();
  const sums = new Map<string, number>();
  const counts = new Map<string, number>();
  for (const v of values) {
    const labels = v.labels as Partial<Record<'stage' | 'le', string | number>>;
    const stage = String(labels.stage ?? '');
    if (v.metricName === 'voice_stage_seconds_bucket') {
      const le = labels.le === '+Inf' ? Infinity : Number(labels.le);
      const list = buckets.get(stage) ?? [];
      list.push({ le, count: v.value });
      buckets.set(stage, list);
    } else if (v.metricName === 'voice_stage_seconds_sum') sums.set(stage, v.value);
    else if (v.metricName === 'voice_stage_seconds_count') counts.set(stage, v.value);
  }
  const figures: Record<string, StageFigures> = {};
  for (const stage of new Set([...VOICE_STAGES, ...counts.keys()])) {
    const count = counts.get(stage) ?? 0;
    const list = buckets.get(stage) ?? [];
    figures[stage] = {
      count,
      p50_ms: ms(histogramQuantile(0.5, list)),
      p95_ms: ms(histogramQuantile(0.95, list)),
      mean_ms: count === 0 ? null : ms((sums.get(stage) ?? 0) / count),
    };
  }
  return figures;
}
