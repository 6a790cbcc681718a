// The words every stage uses of an asset and of a refusal: the read side encodes them in verdicts,
// the take side counts them and writes them to the rejects (docs/import.md, assets and rejects).

/** The three assets, as the summary names them. */
export type Asset = 'tickets' | 'comments' | 'users';

/** The columns every chat CSV must have (any order, extra columns ignored); a verdict names one by its index here. */
export const REQUIRED_COLUMNS = [
  'TICKET_CREATED_AT',
  'TICKET_REQUESTER_ID',
  'COMMENT_PART_ID',
  'CONVERSATION_ID',
  'COMMENT_PUBLIC',
  'BODY',
  'COMMENT_CREATED_AT',
  'AUTHOR_ID',
  'NAME',
  'EMAIL',
] as const;

export type RequiredColumn = (typeof REQUIRED_COLUMNS)[number];

/** The reasons a row's asset was refused other than `duplicate`, in their order of precedence. */
export const FAULT_REASONS = ['missing_field', 'bad_email', 'invalid_field'] as const;
export type FaultReason = (typeof FAULT_REASONS)[number];
export type DropReason = FaultReason | 'duplicate';
