import { describe, expect, it } from 'vitest';
import { AssetDeduper, type RowAssets } from '../../../lib/import/asset-rules.ts';
import { columnMapFromHeader, REQUIRED_COLUMNS } from '../../../lib/import/chat-columns.ts';

const columns = columnMapFromHeader(REQUIRED_COLUMNS);
type Cells = Partial<Record<(typeof REQUIRED_COLUMNS)[number], string>>;

const row = (cells: Cells): string[] => REQUIRED_COLUMNS.map((column) => cells[column] ?? '');

type Asset = keyof RowAssets;
const DROPPED_KEY = { ticket: 'tickets', comment: 'comments', user: 'users' } as const;

/**
 * What a fresh deduper (no key seen yet) makes of one row for one asset: the record, or the one
 * reason it counted the refusal under.
 */
const decide = <A extends Asset>(asset: A, cells: readonly string[]): { ok: true; value: NonNullable<RowAssets[A]> } | { ok: false; reason: string } => {
  const deduper = new AssetDeduper();
  const value = deduper.takeRow(cells, columns)[asset];
  if (value !== null) return { ok: true, value: value as NonNullable<RowAssets[A]> };
  const counted = Object.entries(deduper.dropped[DROPPED_KEY[asset]]).filter(([, count]) => count > 0);
  expect(counted).toHaveLength(1);
  return { ok: false, reason: counted[0]![0] };
};

const complete: Cells = {
  TICKET_CREATED_AT: '2024-05-01 12:00:00+02:00',
  TICKET_REQUESTER_ID: ' 9223372036854775807 ',
  COMMENT_PART_ID: '11',
  CONVERSATION_ID: '22',
  COMMENT_PUBLIC: 'FALSE',
  BODY: ' <b>hi</b> ',
  COMMENT_CREATED_AT: '2024-05-01T12:00:00.25Z',
  AUTHOR_ID: '33',
  NAME: ' Ann ',
  EMAIL: ' Ann@Example.com ',
};

describe('building assets from one row', () => {
  it('builds the ticket, comment and user of a complete row with canonical values', () => {
    expect(decide('ticket', row(complete))).toEqual({
      ok: true,
      value: { id: '22', requester_id: '9223372036854775807', created_at: '2024-05-01T10:00:00Z' },
    });
    expect(decide('comment', row(complete))).toEqual({
      ok: true,
      value: {
        id: '11',
        ticket_id: '22',
        author_id: '33',
        public: false,
        html_body: ' <b>hi</b> ',
        created_at: '2024-05-01T12:00:00.25Z',
      },
    });
    expect(decide('user', row(complete))).toEqual({
      ok: true,
      value: { author_id: '33', name: 'Ann', email: 'Ann@Example.com' },
    });
  });

  it('considers each asset independently: a row without NAME still makes its ticket and comment', () => {
    const cells = row({ ...complete, NAME: '' });
    expect(decide('ticket', cells).ok).toBe(true);
    expect(decide('comment', cells).ok).toBe(true);
    expect(decide('user', cells)).toEqual({ ok: false, reason: 'missing_field' });
  });

  it.each([
    ['CONVERSATION_ID', '', 'missing_field'],
    ['CONVERSATION_ID', '9223372036854775808', 'invalid_field'],
    ['TICKET_REQUESTER_ID', '  ', 'missing_field'],
    ['TICKET_REQUESTER_ID', 'abc', 'invalid_field'],
    ['TICKET_CREATED_AT', '2023-02-29 10:00:00', 'invalid_field'],
  ] as const)('refuses the ticket when %s is %j (%s)', (column, value, reason) => {
    expect(decide('ticket', row({ ...complete, [column]: value }))).toEqual({ ok: false, reason });
  });

  it.each([
    ['COMMENT_PART_ID', '', 'missing_field'],
    ['COMMENT_PART_ID', '1.0', 'invalid_field'],
    ['CONVERSATION_ID', 'x', 'invalid_field'],
    ['AUTHOR_ID', '', 'missing_field'],
    ['COMMENT_PUBLIC', 'yes', 'invalid_field'],
    ['COMMENT_PUBLIC', '', 'missing_field'],
    ['BODY', '', 'missing_field'],
    ['COMMENT_CREATED_AT', '2024-05-01', 'invalid_field'],
  ] as const)('refuses the comment when %s is %j (%s)', (column, value, reason) => {
    expect(decide('comment', row({ ...complete, [column]: value }))).toEqual({ ok: false, reason });
  });

  it.each([
    ['EMAIL', '', 'missing_field'],
    ['EMAIL', 'no-at-sign', 'bad_email'],
    ['EMAIL', 'a@b@c', 'bad_email'],
    ['NAME', '  ', 'missing_field'],
    ['AUTHOR_ID', '', 'missing_field'],
    ['AUTHOR_ID', 'abc', 'invalid_field'],
  ] as const)('refuses the user when %s is %j (%s)', (column, value, reason) => {
    expect(decide('user', row({ ...complete, [column]: value }))).toEqual({ ok: false, reason });
  });

  it('counts a row with both a blank and an unparsable field as missing_field', () => {
    expect(decide('ticket', row({ ...complete, CONVERSATION_ID: '', TICKET_CREATED_AT: 'never' }))).toEqual({
      ok: false,
      reason: 'missing_field',
    });
  });

  it('treats the cells a short row lacks as missing', () => {
    expect(decide('comment', ['2024-05-01 12:00:00', '1', '2'])).toEqual({ ok: false, reason: 'missing_field' });
  });
});

describe('AssetDeduper', () => {
  const take = (deduper: AssetDeduper, cells: string[]) => deduper.takeRow(cells, columns);

  it('lets the first complete row per key win, after an earlier incomplete one', () => {
    const deduper = new AssetDeduper();
    const incomplete = row({ ...complete, TICKET_CREATED_AT: '', COMMENT_PUBLIC: 'maybe', EMAIL: 'broken' });
    const first = row({ ...complete, TICKET_REQUESTER_ID: '1', BODY: 'first', NAME: 'First' });
    const second = row({ ...complete, TICKET_REQUESTER_ID: '2', BODY: 'second', NAME: 'Second' });
    expect(take(deduper, incomplete)).toEqual({ ticket: null, comment: null, user: null });
    const won = take(deduper, first);
    expect(won.ticket?.requester_id).toBe('1');
    expect(won.comment?.html_body).toBe('first');
    expect(won.user?.name).toBe('First');
    expect(take(deduper, second)).toEqual({ ticket: null, comment: null, user: null });
    expect(deduper.dropped).toEqual({
      tickets: { missing_field: 1, invalid_field: 0, duplicate: 1 },
      comments: { missing_field: 0, invalid_field: 1, duplicate: 1 },
      users: { missing_field: 0, bad_email: 1, invalid_field: 0, duplicate: 1 },
    });
  });

  it('compares emails case-insensitively but keeps the winning spelling', () => {
    const deduper = new AssetDeduper();
    expect(take(deduper, row({ ...complete, EMAIL: 'Ann@Example.com' })).user?.email).toBe('Ann@Example.com');
    expect(take(deduper, row({ ...complete, EMAIL: 'ann@EXAMPLE.COM', AUTHOR_ID: '99' })).user).toBeNull();
    expect(deduper.dropped.users.duplicate).toBe(1);
  });

  it('keys tickets by canonical id, so 007 and 7 are the same ticket', () => {
    const deduper = new AssetDeduper();
    expect(take(deduper, row({ ...complete, CONVERSATION_ID: '007' })).ticket?.id).toBe('7');
    expect(take(deduper, row({ ...complete, CONVERSATION_ID: '7', COMMENT_PART_ID: '12' })).ticket).toBeNull();
  });

  it('takes an asset from a row that the other assets refuse', () => {
    const deduper = new AssetDeduper();
    const taken = take(deduper, row({ ...complete, CONVERSATION_ID: '', EMAIL: 'x' }));
    expect(taken.ticket).toBeNull();
    expect(taken.comment).toBeNull();
    expect(taken.user).toBeNull();
    const onlyUser = take(deduper, row({ ...complete, CONVERSATION_ID: '', EMAIL: 'ok@x.io' }));
    expect(onlyUser.user?.email).toBe('ok@x.io');
    expect(onlyUser.ticket).toBeNull();
  });
});
