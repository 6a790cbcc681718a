import type { ImportFence } from '../../config.ts';
import { formatLocation, LocationError, quoteLocation, type Location } from '../../storage/location.ts';

/** A location outside what a deployed import may use (IMPORT_BUCKET and its prefixes). */
export class FencedLocationError extends LocationError {}

type Role = 'source' | 'destination' | 'rejects';

/** Whether `key` lies in the folder `prefix` (which ends in "/") with no `.` or `..` part on the way. */
const inFolder = (key: string, prefix: string): boolean =>
  key.startsWith(prefix) && key.length > prefix.length && !key.split('/').some((segment) => segment === '.' || segment === '..');

const check = (fence: ImportFence, role: Role, location: Location | undefined): void => {
  if (location === undefined) return;
  const shown = quoteLocation(formatLocation(location));
  if (location.kind !== 's3')
    throw new FencedLocationError(`The ${role} ${shown} is not in S3; an import here reads and writes s3://${fence.bucket} only`);
  if (location.bucket !== fence.bucket) {
    throw new FencedLocationError(
      `The ${role} ${shown} names bucket ${location.bucket}; an import here may use bucket ${fence.bucket} only`,
    );
  }
  const [prefix, what] = role === 'source' ? [fence.inputPrefix, 'sources'] : [fence.archivePrefix, 'archives and rejects'];
  if (!inFolder(location.key, prefix)) {
    throw new FencedLocationError(
      `The ${role} ${shown} is outside ${prefix}, where ${what} of an import here must be (no "." or ".." parts)`,
    );
  }
};

/**
 * Refuses, before anything is opened, a run whose source, destination or rejects lies outside the
 * fence: the first such location named, and why. The destination of a dry run is checked too, when given.
 */
export const checkImportFence = (
  fence: ImportFence,
  locations: { source: Location; destination?: Location | undefined; rejects?: Location | undefined },
): void => {
  check(fence, 'source', locations.source);
  check(fence, 'destination', locations.destination);
  check(fence, 'rejects', locations.rejects);
};
