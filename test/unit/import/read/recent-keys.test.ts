import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { int64Halves } from '../../../../lib/import/formats/row-keys.ts';
import { RecentEmails, RecentIds } from '../../../../lib/import/read/recent-keys.ts';
import { retainedMb } from '../../../support/retained-heap.ts';

const scratch = new Int32Array(2);
const seenId = (recent: RecentIds, id: bigint): boolean => {
  int64Halves(String(id), scratch);
  return recent.repeat(scratch[0]!, scratch[1]!);
};

describe('RecentIds', () => {
  it('calls an id a repeat only when it was seen before, and remembers the last few', () => {
    const recent = new RecentIds(4);
    expect(seenId(recent, 42n)).toBe(false);
    expect(seenId(recent, 42n)).toBe(true);
    expect(seenId(recent, -42n)).toBe(false);
    expect(seenId(recent, 42n + 2n ** 32n)).toBe(false); // same low half, other high half
    expect(seenId(recent, 0n)).toBe(false);
    expect(seenId(recent, 0n)).toBe(true);
  });

  it('never calls an unseen id a repeat, however small its table (it may forget a seen one)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: -20n, max: 20n })), { maxLength: 300 }),
        (ids) => {
          const recent = new RecentIds(3);
          const seen = new Set<bigint>();
          for (const id of ids) {
            if (seenId(recent, id)) expect(seen.has(id)).toBe(true);
            seen.add(id);
          }
        },
      ),
    );
  });
});

describe('RecentEmails', () => {
  it('calls an email a repeat only after the same text', () => {
    const recent = new RecentEmails(4);
    const row = 'x,ana@example.com,y';
    expect(recent.repeat(row.slice(2, 17))).toBe(false);
    expect(recent.repeat('ana@example.com')).toBe(true);
    expect(recent.repeat('ana@example.co')).toBe(false);
    expect(recent.repeat('Ana@example.com'.toLowerCase())).toBe(true);
  });

  it('keeps no view of the larger string an email was cut from (a row must not stay pinned)', () => {
    const recent = new RecentEmails();
    const emails = (parent: (n: number) => string): string[] => Array.from({ length: 32 }, (_, n) => parent(n).slice(0, 20));
    expect(retainedMb((parent) => emails(parent).map((email) => recent.repeat(email)))).toBeLessThan(8);
    expect(recent.repeat('00000007@example.com')).toBe(true);
  });

  it('never calls an unseen email a repeat, even when many share a slot', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.emailAddress(), fc.constantFrom('a@b', 'b@a', 'a@bb', 'ab@b')), { maxLength: 300 }), (emails) => {
        const recent = new RecentEmails(2);
        const seen = new Set<string>();
        for (const email of emails) {
          if (recent.repeat(email)) expect(seen.has(email)).toBe(true);
          seen.add(email);
        }
      }),
    );
  });

  it('remembers emails that do not collide (a repeat is recognised after others came between)', () => {
    const recent = new RecentEmails(12);
    const emails = Array.from({ length: 50 }, (_, index) => `user${index}@example.com`);
    for (const email of emails) recent.repeat(email);
    const remembered = emails.filter((email) => recent.repeat(email)).length;
    expect(remembered).toBeGreaterThan(45);
  });
});
