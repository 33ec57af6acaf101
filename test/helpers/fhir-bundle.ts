import type { Bundle, BundleLink, CapabilityStatement, Resource } from '@medplum/fhirtypes';

/**
 * FHIR R4 search-result behaviour that MemoryRepository leaves out, done in the HTTP layer:
 * paging (`_count` default/cap, Bundle.link self/next/previous on this server's base URL),
 * `entry.fullUrl`, and `_elements` (http://hl7.org/fhir/R4/search.html#elements).
 */

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
const SUBSETTED = {
  system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue',
  code: 'SUBSETTED',
};
/** Elements _elements always keeps (mandatory for a resource to be one). */
const MANDATORY = new Set(['resourceType', 'id', 'meta']);

/** Applies the server's page size: `_count` defaults to 50 and is capped at 100. */
export function pageQuery(query: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams(query);
  const count = Number(out.get('_count') ?? DEFAULT_PAGE_SIZE);
  out.set(
    '_count',
    String(
      Number.isInteger(count) && count >= 0 ? Math.min(count, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE,
    ),
  );
  return out;
}

/** Adds paging links and fullUrls to a searchset produced for `resourceType?query`. */
export function finishSearchset(
  bundle: Bundle,
  baseUrl: string,
  resourceType: string,
  query: URLSearchParams,
): void {
  const count = Number(query.get('_count'));
  const offset = Number(query.get('_offset') ?? 0);
  const total = bundle.total ?? 0;
  const at = (o: number): string => {
    const q = new URLSearchParams(query);
    if (o > 0) q.set('_offset', String(o));
    else q.delete('_offset');
    return `${baseUrl}/${resourceType}?${q.toString()}`;
  };
  const link: BundleLink[] = [{ relation: 'self', url: at(offset) }];
  if (count > 0 && offset + count < total) link.push({ relation: 'next', url: at(offset + count) });
  if (count > 0 && offset > 0)
    link.push({ relation: 'previous', url: at(Math.max(0, offset - count)) });
  bundle.link = link;
  for (const entry of bundle.entry ?? []) {
    if (entry.resource?.id !== undefined)
      entry.fullUrl = `${baseUrl}/${entry.resource.resourceType}/${entry.resource.id}`;
  }
  const elements = query.get('_elements');
  if (elements !== null) {
    for (const entry of bundle.entry ?? []) {
      if (entry.resource !== undefined && entry.search?.mode !== 'include') {
        entry.resource = subset(entry.resource, elements);
      }
    }
  }
}

/**
 * Keeps only the listed top-level elements (plus resourceType, id, meta) and tags the result
 * SUBSETTED. Names may be written `Observation.code` or `code`; a choice element is named by its
 * stem (`value` keeps `valueQuantity`).
 */
export function subset<T extends Resource>(resource: T, elements: string): T {
  const names = elements
    .split(',')
    .map((n) =>
      n
        .trim()
        .replace(/^[A-Z][A-Za-z]+\./, '')
        .replace(/\[x\]$/, ''),
    )
    .filter((n) => n !== '');
  const keep = (key: string): boolean =>
    MANDATORY.has(key) ||
    names.some((n) => key === n || (key.startsWith(n) && /^[A-Z]/.test(key.slice(n.length))));
  const out = Object.fromEntries(Object.entries(resource).filter(([key]) => keep(key))) as T;
  out.meta = { ...out.meta, tag: [...(out.meta?.tag ?? []), SUBSETTED] };
  return out;
}

/** A small CapabilityStatement for `GET [base]/metadata`, announcing SMART when configured. */
export function capabilityStatement(
  tokenUrl: string | undefined,
  types: string[],
): CapabilityStatement {
  const security: NonNullable<CapabilityStatement['rest']>[number]['security'] =
    tokenUrl === undefined
      ? undefined
      : {
          service: [
            {
              coding: [
                {
                  system: 'http://terminology.hl7.org/CodeSystem/restful-security-service',
                  code: 'SMART-on-FHIR',
                },
              ],
            },
          ],
          extension: [
            {
              url: 'http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris',
              extension: [{ url: 'token', valueUri: tokenUrl }],
            },
          ],
        };
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: '2026-01-01',
    kind: 'instance',
    fhirVersion: '4.0.1',
    format: ['json'],
    rest: [
      {
        mode: 'server',
        ...(security === undefined ? {} : { security }),
        resource: types.map((type) => ({
          type,
          interaction: [{ code: 'read' }, { code: 'search-type' }, { code: 'create' }],
          conditionalCreate: true,
        })),
      },
    ],
  } as CapabilityStatement;
}

/** A 200 body that is not a valid resource: truncated JSON, or objects without resourceType. */
export function malformedBody(resource: Resource, shape: 'truncated' | 'not-a-resource'): string {
  const text = JSON.stringify(resource);
  if (shape === 'truncated') return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
  const notResource = { id: 'not-a-resource', note: 'this object has no resourceType' };
  if (resource.resourceType !== 'Bundle') return JSON.stringify(notResource);
  const entry = [
    ...(resource.entry ?? []).map(() => ({ resource: notResource })),
    { resource: notResource },
  ];
  return JSON.stringify({ ...resource, entry });
}
