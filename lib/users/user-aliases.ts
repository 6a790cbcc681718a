import type { ErrorDetail } from '../errors.ts';
import { isPlainObject } from '../values/plain-object.ts';

/** snake_case aliases accepted for the camelCase fields (docs/api.md). */
const USER_ALIASES = [
  { alias: 'first_name', field: 'firstName' },
  { alias: 'last_name', field: 'lastName' },
] as const;

export interface FoldedAliases {
  /** The body with every alias moved onto its camelCase field; anything not a plain object is untouched. */
  body: unknown;
  /** One detail per alias whose camelCase twin holds a different value. */
  conflicts: ErrorDetail[];
}

/**
 * Folds aliases before validation, so the schema sees (and type-checks) whatever the alias carried:
 * an alias can never carry a non-string past the `firstName`/`lastName` rules.
 */
export const foldUserAliases = (body: unknown): FoldedAliases => {
  if (!isPlainObject(body)) return { body, conflicts: [] };
  const folded: Record<string, unknown> = { ...body };
  const conflicts: ErrorDetail[] = [];
  for (const { alias, field } of USER_ALIASES) {
    if (!Object.hasOwn(folded, alias)) continue;
    const aliasValue = folded[alias];
    delete folded[alias];
    if (!Object.hasOwn(folded, field)) {
      folded[field] = aliasValue;
    } else if (folded[field] !== aliasValue) {
      conflicts.push({ path: `/${field}`, message: `must equal ${alias} when both ${field} and ${alias} are given` });
    }
  }
  return { body: folded, conflicts };
};
