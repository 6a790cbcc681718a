import type { CacheTier } from '../cache/provenance.ts';

/** The device list as the HTTP response body (already serialized once) and the tier that answered. */
export interface DeviceListResult {
  json: string;
  tier: CacheTier;
}

export interface DeviceListRequest {
  /** Milliseconds left in the Lambda invocation; upstream reads must finish before this runs out. */
  remainingTimeMs: () => number;
}

/** What the GET /devices handler calls: the uncached upstream read, or the tiered cache in front of it. */
export type DeviceListSource = (request: DeviceListRequest) => Promise<DeviceListResult>;
