import { JobError } from '../../errors.ts';

/**
 * The CSV itself cannot be imported (missing required columns, no header, a quoted field that never
 * closes). The message never holds cell contents.
 */
export class ImportInputError extends JobError {}
