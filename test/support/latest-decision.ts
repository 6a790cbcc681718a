import type { DeviceFacts, LatestReference } from '../../lib/latest-os/latest-reference.ts';

/** A device's `os_is_latest` against `reference`, from its version and response level (and, for a feed, its board or model). */
export const isLatest = (
  reference: LatestReference,
  osVersion: string | undefined,
  response: string | undefined,
  device: Partial<DeviceFacts> = {},
): boolean => reference.decide({ osVersion, response, boardId: undefined, modelIdentifier: undefined, ...device }).latest;
