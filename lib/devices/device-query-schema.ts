import { _, type Ajv, type KeywordCxt } from 'ajv';
import { COMPUTER_QUERY, isInstant, MOBILE_QUERY, type QueryKind } from './device-query.ts';

/** Custom keyword `instant: true`: an ISO 8601 date and time with `Z` or an offset (device-query.ts). */
const INSTANT_KEYWORD = 'instant';

/** The filters of a list (docs/api.md), as typed by `typeQueryOf`: the same on its page and its summary. */
const filterSchemaOf = (kind: QueryKind) => ({
  os_is_latest: { type: 'boolean' },
  os_overdue: { type: 'boolean' },
  os_exploited: { type: 'boolean' },
  managed: { type: 'boolean' },
  supervised: { type: 'boolean' },
  [kind.category]: { type: 'string', minLength: 1, maxLength: 256 },
  model_identifier: { type: 'string', minLength: 1, maxLength: 256 },
  [kind.before]: { type: 'string', maxLength: 64, [INSTANT_KEYWORD]: true },
});

/**
 * The query of GET /devices or GET /mobile-devices: the schema the generated validator checks. Any
 * other parameter is refused (the other route's category and time filters included).
 */
const querySchemaOf = (kind: QueryKind) => ({
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 5000 },
    after: { type: 'string', pattern: '^[0-9]{1,40}$' },
    ...filterSchemaOf(kind),
  },
});

/** The query of a list's summary: its filters; no page (`limit` and `after` are refused by name). */
const summaryQuerySchemaOf = (kind: QueryKind) => ({ type: 'object', additionalProperties: false, properties: filterSchemaOf(kind) });

export const deviceQuerySchema = querySchemaOf(COMPUTER_QUERY);
export const mobileDeviceQuerySchema = querySchemaOf(MOBILE_QUERY);
export const deviceSummaryQuerySchema = summaryQuerySchemaOf(COMPUTER_QUERY);
export const mobileDeviceSummaryQuerySchema = summaryQuerySchemaOf(MOBILE_QUERY);

/** How the generated validator (scripts/validators.ts) reaches the instant check: a module of lib/. */
export const INSTANT_CHECK_MODULE = './device-query.ts';

/** Registers the `instant` keyword; it emits code calling `isInstant`, so it works in generated validators. */
export const addInstantKeyword = (ajv: Ajv): Ajv =>
  ajv.addKeyword({
    keyword: INSTANT_KEYWORD,
    type: 'string',
    schemaType: 'boolean',
    error: { message: 'must be an ISO 8601 date and time with Z or an offset, e.g. 2026-11-01T00:00:00Z' },
    code: (cxt: KeywordCxt) => {
      const check = cxt.gen.scopeValue('func', { ref: isInstant, code: _`require(${INSTANT_CHECK_MODULE}).isInstant` });
      cxt.fail(_`!${check}(${cxt.data})`);
    },
  });
