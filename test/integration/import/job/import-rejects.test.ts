import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chatCsv, fullRow, importCsv, nonZero, parseRejects, rejectCounts, type ChatRow } from '../../../support/chat-import.ts';

/** The rejects file's header line (docs/import.md, "Rejects"). */
const REJECTS_HEADER = 'row,line,asset,reason,column,value\n';

let tmpDir: string;
beforeEach(async () => {
  tmpDir = await mkdtemp(join(tmpdir(), 'import-rejects-'));
});
afterEach(async () => {
  await rm(tmpDir, { recursive: true, force: true });
});

/** Hand-made rows, each at fault in one column (comments give the line each row starts on). */
const ROWS: ChatRow[] = [
  fullRow(1, { BODY: 'line1\nline2\nline3' }), // row 1, line 2: complete, three lines long
  fullRow(2, { TICKET_CREATED_AT: '' }), // row 2, line 5
  fullRow(3, { TICKET_REQUESTER_ID: 'abc' }), // row 3, line 6
  fullRow(4, { CONVERSATION_ID: ' 12x ' }), // row 4, line 7
  fullRow(5, { COMMENT_PART_ID: '' }), // row 5, line 8
  fullRow(6, { COMMENT_PUBLIC: 'maybe' }), // row 6, line 9
  fullRow(7, { BODY: '' }), // row 7, line 10
  fullRow(8, { COMMENT_CREATED_AT: '2024-02-30 10:00:00' }), // row 8, line 11
  fullRow(9, { AUTHOR_ID: 'x,"y"' }), // row 9, line 12
  fullRow(10, { NAME: '  ' }), // row 10, line 13
  fullRow(11, { EMAIL: 'no-at' }), // row 11, line 14
  fullRow(12, { EMAIL: '' }), // row 12, line 15
  fullRow(1, { EMAIL: 'USER1@Example.com', BODY: 'again' }), // row 13, line 16: duplicates of row 1
  fullRow(14, { COMMENT_PUBLIC: 'ye\r\ns' }), // row 14, line 17: two lines long
  fullRow(15), // row 15, line 19: complete
  { CONVERSATION_ID: '77', NAME: 'Only', EMAIL: 'only@x.io' }, // row 16, line 20
];

const EXPECTED = [
  'row,line,asset,reason,column,value',
  '2,5,ticket,missing_field,TICKET_CREATED_AT,',
  '3,6,ticket,invalid_field,TICKET_REQUESTER_ID,abc',
  '4,7,ticket,invalid_field,CONVERSATION_ID, 12x ',
  '4,7,comment,invalid_field,CONVERSATION_ID, 12x ',
  '5,8,comment,missing_field,COMMENT_PART_ID,',
  '6,9,comment,invalid_field,COMMENT_PUBLIC,maybe',
  '7,10,comment,missing_field,BODY,',
  '8,11,comment,invalid_field,COMMENT_CREATED_AT,2024-02-30 10:00:00',
  '9,12,comment,invalid_field,AUTHOR_ID,"x,""y"""',
  '9,12,user,invalid_field,AUTHOR_ID,"x,""y"""',
  '10,13,user,missing_field,NAME,  ',
  '11,14,user,bad_email,EMAIL,no-at',
  '12,15,user,missing_field,EMAIL,',
  '13,16,ticket,duplicate,,501',
  '13,16,comment,duplicate,,1',
  '13,16,user,duplicate,,user1@example.com',
  '14,17,comment,invalid_field,COMMENT_PUBLIC,"ye\r\ns"',
  '16,20,ticket,missing_field,TICKET_REQUESTER_ID,',
  '16,20,comment,missing_field,COMMENT_PART_ID,',
  '16,20,user,missing_field,AUTHOR_ID,',
];

describe.each([
  ['in one thread', false],
  ['with a worker thread', true],
])('the rejects file %s', (_label, worker) => {
  it('has one line per (row, asset) not taken: row number, starting line, asset, reason, column and value as given', async () => {
    const { summary, rejectsCsv } = await importCsv(chatCsv(ROWS), { tmpDir, rejects: true, worker });
    expect(rejectsCsv).toBe(`${EXPECTED.join('\n')}\n`);
    const lines = parseRejects(rejectsCsv);
    // Every reason and every column appears.
    expect(new Set(lines.map((line) => line.reason))).toEqual(new Set(['missing_field', 'invalid_field', 'bad_email', 'duplicate']));
    expect(new Set(lines.map((line) => line.column)).size).toBe(11); // ten columns and the empty one of duplicates
    expect(lines.find((line) => line.row === '14')?.value).toBe('ye\r\ns');
    expect(rejectCounts(lines)).toEqual(nonZero(summary.dropped));
  });

  it('counts lines of a CRLF file the same way, and numbers rows after blank lines', async () => {
    const csv = chatCsv([fullRow(1, { BODY: 'a\r\nb' }), fullRow(2, { NAME: '' })], { newline: '\r\n' }).replace(/\r\n$/, '\r\n\r\n\r\n');
    const { rejectsCsv } = await importCsv(
      `${csv}${chatCsv([fullRow(3, { EMAIL: 'x' })], { newline: '\r\n' })
        .split('\r\n')
        .slice(1)
        .join('\r\n')}`,
      {
        tmpDir,
        rejects: true,
        worker,
      },
    );
    expect(rejectsCsv).toBe(`${REJECTS_HEADER}2,4,user,missing_field,NAME,\n3,7,user,bad_email,EMAIL,x\n`);
  });

  it('writes only its header when every row was taken, and nothing when none was asked for', async () => {
    expect((await importCsv(chatCsv([fullRow(1)]), { tmpDir, rejects: true, worker })).rejectsCsv).toBe(REJECTS_HEADER);
    expect((await importCsv(chatCsv([fullRow(1), fullRow(1)]), { tmpDir, worker })).rejectsCsv).toBe('');
    expect(await readdir(tmpDir)).toEqual([]);
  });
});
