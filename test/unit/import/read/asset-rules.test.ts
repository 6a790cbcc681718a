import { describe, expect, it } from 'vitest';
import { isFault, judgeRow, type RowJudgement } from '../../../../lib/import/read/asset-rules.ts';
import { AssetDeduper } from '../../../../lib/import/take/asset-deduper.ts';
import { REQUIRED_COLUMNS } from '../../../../lib/import/formats/assets.ts';
import { columnMapFromHeader } from '../../../../lib/import/read/chat-columns.ts';
import { int64Halves } from '../../../../lib/import/formats/row-keys.ts';

const columns = columnMapFromHeader(REQUIRED_COLUMNS);
type Cells = Partial<Record<(typeof REQUIRED_COLUMNS)[number], string>>;

const row = (cells: Cells): string[] => REQUIRED_COLUMNS.map((column) => cells[column] ?? '');

type Asset = keyof RowJudgement;

/** What the rules make of one row for one asset: the record, or the reason and column it is refused for. */
const decide = (asset: Asset, cells: readonly string[], holds?: (email: string) => boolean) => {
  const judged = judgeRow(cells, columns, holds)[asset];
  return isFault(judged) ? { ok: false, reason: judged.reason, column: judged.column } : { ok: true, value: judged };
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
    expect(decide('user', cells)).toEqual({ ok: false, reason: 'missing_field', column: 'NAME' });
  });

  it.each([
    ['CONVERSATION_ID', '', 'missing_field'],
    ['CONVERSATION_ID', '9223372036854775808', 'invalid_field'],
    ['TICKET_REQUESTER_ID', '  ', 'missing_field'],
    ['TICKET_REQUESTER_ID', 'abc', 'invalid_field'],
    ['TICKET_CREATED_AT', '2023-02-29 10:00:00', 'invalid_field'],
  ] as const)('refuses the ticket when %s is %j (%s), naming that column', (column, value, reason) => {
    expect(decide('ticket', row({ ...complete, [column]: value }))).toEqual({ ok: false, reason, column });
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
  ] as const)('refuses the comment when %s is %j (%s), naming that column', (column, value, reason) => {
    expect(decide('comment', row({ ...complete, [column]: value }))).toEqual({ ok: false, reason, column });
  });

  it.each([
    ['EMAIL', '', 'missing_field'],
    ['EMAIL', 'no-at-sign', 'bad_email'],
    ['EMAIL', 'a@b@c', 'bad_email'],
    ['NAME', '  ', 'missing_field'],
    ['AUTHOR_ID', '', 'missing_field'],
    ['AUTHOR_ID', 'abc', 'invalid_field'],
  ] as const)('refuses the user when %s is %j (%s), naming that column', (column, value, reason) => {
    expect(decide('user', row({ ...complete, [column]: value }))).toEqual({ ok: false, reason, column });
  });

  it('counts a row with both a blank and an unparsable field as missing_field, naming the blank column', () => {
    expect(decide('ticket', row({ ...complete, TICKET_CREATED_AT: '', CONVERSATION_ID: 'never' }))).toEqual({
      ok: false,
      reason: 'missing_field',
      column: 'TICKET_CREATED_AT',
    });
  });

  it("names the first column at fault in the asset's field order when several share the reason", () => {
    expect(decide('comment', row({ ...complete, BODY: '', COMMENT_PUBLIC: '' }))).toMatchObject({
      reason: 'missing_field',
      column: 'COMMENT_PUBLIC',
    });
    expect(decide('comment', row({ ...complete, COMMENT_CREATED_AT: 'x', COMMENT_PART_ID: 'y' }))).toMatchObject({
      reason: 'invalid_field',
      column: 'COMMENT_PART_ID',
    });
    expect(decide('user', row({ ...complete, AUTHOR_ID: 'x', EMAIL: 'broken' }))).toMatchObject({ reason: 'bad_email', column: 'EMAIL' });
    expect(decide('user', row({ ...complete, AUTHOR_ID: '', EMAIL: 'broken' }))).toMatchObject({
      reason: 'missing_field',
      column: 'AUTHOR_ID',
    });
  });

  it('does not need AUTHOR_ID for a user whose email the destination holds', () => {
    const holds = (email: string) => email === 'ann@example.com';
    expect(decide('user', row({ ...complete, AUTHOR_ID: '' }), holds)).toMatchObject({ ok: true });
    expect(decide('user', row({ ...complete, AUTHOR_ID: '', NAME: '' }), holds)).toEqual({
      ok: false,
      reason: 'missing_field',
      column: 'NAME',
    });
    expect(decide('user', row({ ...complete, AUTHOR_ID: '', EMAIL: 'other@example.com' }), holds)).toEqual({
      ok: false,
      reason: 'missing_field',
      column: 'AUTHOR_ID',
    });
  });

  it('treats the cells a short row lacks as missing', () => {
    expect(decide('comment', ['2024-05-01 12:00:00', '1', '2'])).toEqual({ ok: false, reason: 'missing_field', column: 'CONVERSATION_ID' });
  });
});

describe('AssetDeduper', () => {
  const halves = (id: string): [number, number] => {
    const into = new Int32Array(2);
    int64Halves(id, into);
    return [into[0]!, into[1]!];
  };

  it('lets the first complete record per key win and counts the others as duplicates', () => {
    const deduper = new AssetDeduper();
    expect(deduper.takeTicket(...halves('22'))).toBe(true);
    expect(deduper.takeTicket(...halves('22'))).toBe(false);
    expect(deduper.takeTicket(...halves('-22'))).toBe(true);
    expect(deduper.takeComment(...halves('22'))).toBe(true);
    expect(deduper.takeUser('ann@example.com')).toBe(true);
    expect(deduper.takeUser('ann@example.com')).toBe(false);
    deduper.refuse('users', 'bad_email');
    deduper.refuse('tickets', 'missing_field');
    expect(deduper.dropped).toEqual({
      tickets: { missing_field: 1, invalid_field: 0, duplicate: 1 },
      comments: { missing_field: 0, invalid_field: 0, duplicate: 0 },
      users: { missing_field: 0, bad_email: 1, invalid_field: 0, duplicate: 1 },
    });
  });

  it('keys tickets by canonical id, so 007 and 7 are the same ticket', () => {
    const deduper = new AssetDeduper();
    const first = judgeRow(row({ ...complete, CONVERSATION_ID: '007' }), columns).ticket;
    const second = judgeRow(row({ ...complete, CONVERSATION_ID: '7' }), columns).ticket;
    expect(isFault(first) || isFault(second)).toBe(false);
    expect(deduper.takeTicket(...halves((first as { id: string }).id))).toBe(true);
    expect(deduper.takeTicket(...halves((second as { id: string }).id))).toBe(false);
  });
});
