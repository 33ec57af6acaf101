import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import type { Chaos } from '../../platform/chaos.js';
import type { Metrics } from '../../platform/metrics.js';
import type { LlmProvider } from '../../providers/llm/types.js';
import type { StatusService } from '../admin/status-service.js';
import type { AuditService } from '../audit/service.js';
import type { EhrService } from '../ehr/service.js';
import type { FlagsService } from '../flags/service.js';
import type { VoiceHub } from '../voice/hub.js';
import type { LlmHealthProbe } from './llm-health.js';
import type { VoiceHealthProbe } from './voice-health.js';

/** What the operator endpoints read and change. */
export interface OpsDeps {
  config: Config;
  db: Db;
  ehr: EhrService;
  flags: FlagsService;
  audit: AuditService;
  status: StatusService;
  chaos: Chaos;
  llm: LlmProvider;
  /** The model's probe: at most one per 30 s on this instance. */
  llmHealth: LlmHealthProbe;
  voiceHub: VoiceHub;
  voiceProbe: VoiceHealthProbe;
  metrics: Metrics;
  startedAt: number;
  now: () => Date;
}

export const opsTags = {
  health: ['operations: health'],
  providers: ['operations: providers'],
  features: ['operations: features'],
  audit: ['operations: audit'],
  voice: ['operations: voice'],
};

/** The subsystems spec 4.11 names that this service does not have: they say so. */
export const NOT_BUILT = (what: string) => ({
  status: 'disabled' as const,
  fallback_active: false,
  detail: `This service has no ${what} subsystem`,
});
