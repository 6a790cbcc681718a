import { describe, expect, it } from 'vitest';
import { parseUsersPage } from '../../../lib/ticketing/users-page.ts';

describe('parseUsersPage', () => {
  it('reads a cursor page (Zendesk shape), ids above 2^53 exact', () => {
    const page = parseUsersPage(
      '{"users":[{"id":9223372036854775807,"email":"a@example.com"},{"id":9007199254740993,"email":null}],' +
        '"meta":{"has_more":true,"after_cursor":"eyJvIjoiaWQifQ==","before_cursor":"eyJvIjoiaWQiLCJ2IjoxfQ=="},' +
        '"links":{"next":"https://x.example/api/v1/users.json?page%5Bafter%5D=eyJvIjoiaWQifQ%3D%3D&page%5Bsize%5D=100","prev":null}}',
    );
    expect(page).toEqual({
      users: [
        { id: '9223372036854775807', email: 'a@example.com' },
        { id: '9007199254740993', email: null },
      ],
      count: undefined,
      nextPage: null,
      cursor: {
        hasMore: true,
        afterCursor: 'eyJvIjoiaWQifQ==',
        next: 'https://x.example/api/v1/users.json?page%5Bafter%5D=eyJvIjoiaWQifQ%3D%3D&page%5Bsize%5D=100',
      },
    });
  });

  it('reads the last cursor page of an empty listing, and a page-number page without cursor links', () => {
    expect(
      parseUsersPage('{"users":[],"meta":{"has_more":false,"after_cursor":null,"before_cursor":null},"links":{"next":null,"prev":null}}'),
    ).toMatchObject({
      users: [],
      cursor: { hasMore: false, afterCursor: null, next: null },
    });
    expect(parseUsersPage('{"users":[],"next_page":null,"previous_page":null,"count":0}')).toEqual({
      users: [],
      count: 0,
      nextPage: null,
      cursor: undefined,
    });
  });

  it('says what is wrong with cursor links it cannot follow', () => {
    expect(parseUsersPage('{"users":[],"meta":{"has_more":"yes"}}')).toBe('"meta.has_more" is not true or false');
    expect(parseUsersPage('{"users":[],"meta":{"has_more":true,"after_cursor":7}}')).toBe('"meta.after_cursor" is not text');
    expect(parseUsersPage('{"users":[],"meta":{"has_more":true},"links":{"next":["a"]}}')).toBe('"links.next" is not a URL or null');
  });
});
