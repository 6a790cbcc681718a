/**
 * The CSV itself cannot be imported (missing required columns, no header, a quoted field that never
 * closes). The message is meant for the operator as is; it never holds cell contents.
 */
export class ImportInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportInputError';
  }
}
