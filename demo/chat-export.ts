import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';

/**
 * Realistic chat exports for the import benchmark: conversations interleave (a few dozen open at
 * once, each with its requester and a run of comments by the requester and agents), bodies are HTML
 * with quotes, commas and newlines, and a few per cent of rows carry faults (blank or unparsable
 * cells, bad emails, repeated comment ids). Deterministic for a given seed.
 *
 * CLI: `node demo/chat-export.ts <rows> <file> [seed]`.
 */
export interface GenerateChatCsvOptions {
  rows: number;
  path: string;
  seed?: number;
  /** Share of rows with one injected fault (default 0.03). */
  faultRate?: number;
}

const COLUMNS = [
  'CONVERSATION_ID',
  'TICKET_CREATED_AT',
  'TICKET_REQUESTER_ID',
  'COMMENT_PART_ID',
  'COMMENT_CREATED_AT',
  'COMMENT_PUBLIC',
  'AUTHOR_ID',
  'NAME',
  'EMAIL',
  'BODY',
  'CHANNEL',
] as const;

/** mulberry32: tiny, fast, seedable. */
const makeRandom = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
};

const WORDS = [
  'order',
  'refund',
  'thanks',
  'please',
  'account',
  'shipping',
  'invoice',
  'the',
  'is',
  'not',
  'working',
  'again',
  'today',
  'help',
  'password',
  'reset',
  'a',
  'we',
  'you',
  'can',
];
const FIRST = ['Ann', 'Bob', 'Chloé', 'Dmitri', 'Eve', 'Fatima', 'Gabriel', 'Hana', 'Ivan', 'José', 'Kai', 'Lena'];
const LAST = ['Smith', "O'Neil", 'Müller', 'García', 'Kowalski', 'Nguyen', 'Rossi', 'Tanaka'];

const quote = (cell: string): string => (/[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

interface Person {
  id: string;
  name: string;
  email: string;
}

interface Conversation {
  id: string;
  requester: Person;
  createdAt: number;
  lastAt: number;
  remaining: number;
}

/** Yields the CSV text in pieces of about 1 MB (header first). */
export function* chatCsvChunks(options: Omit<GenerateChatCsvOptions, 'path'>): Generator<string> {
  const random = makeRandom(options.seed ?? 42);
  const faultRate = options.faultRate ?? 0.03;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const customerCount = Math.max(10, Math.floor(options.rows / 15));
  const person = (index: number, domain: string): Person => {
    const first = FIRST[index % FIRST.length]!;
    const last = LAST[Math.floor(index / FIRST.length) % LAST.length]!;
    return {
      id: String(7_000_000_000_000_000_000n + BigInt(index)),
      name: `${first} ${last}`,
      email: `${first}.${last}.${index}@${domain}`.replace("'", ''),
    };
  };
  const agents = Array.from({ length: 40 }, (_, index) => person(customerCount + index, 'support.example.com'));
  const open: Conversation[] = [];
  let nextConversation = 9_100_000_000;
  let nextComment = 42_000_000_000;
  let clock = Date.UTC(2025, 0, 1);
  const body = (): string => {
    const paragraphs = 1 + Math.floor(random() * 2);
    const parts: string[] = [];
    for (let p = 0; p < paragraphs; p += 1) {
      const words = 6 + Math.floor(random() * 28);
      const text: string[] = [];
      for (let w = 0; w < words; w += 1) text.push(pick(WORDS));
      parts.push(`<p class="msg">${text.join(' ')}, "really"</p>`);
    }
    return parts.join('\n');
  };

  let out = `${COLUMNS.join(',')}\r\n`;
  for (let row = 0; row < options.rows; row += 1) {
    clock += Math.floor(random() * 20_000);
    if (open.length < 40 || random() < 0.1) {
      const requester = person(Math.floor(random() * customerCount), pick(['example.com', 'mail.example.org', 'EXAMPLE.net']));
      open.push({ id: String(nextConversation++), requester, createdAt: clock, lastAt: clock, remaining: 2 + Math.floor(random() * 20) });
    }
    const slot = Math.floor(random() * open.length);
    const conversation = open[slot]!;
    conversation.lastAt = Math.max(conversation.lastAt, clock);
    conversation.remaining -= 1;
    if (conversation.remaining <= 0) open.splice(slot, 1);
    const author = random() < 0.5 ? conversation.requester : pick(agents);
    const cells: Record<(typeof COLUMNS)[number], string> = {
      CONVERSATION_ID: conversation.id,
      TICKET_CREATED_AT: iso(conversation.createdAt),
      TICKET_REQUESTER_ID: conversation.requester.id,
      COMMENT_PART_ID: String(nextComment++),
      COMMENT_CREATED_AT: random() < 0.5 ? iso(conversation.lastAt) : `${iso(conversation.lastAt).slice(0, 19).replace('T', ' ')}`,
      COMMENT_PUBLIC: random() < 0.8 ? 'true' : 'false',
      AUTHOR_ID: author.id,
      NAME: author.name,
      EMAIL: random() < 0.1 ? author.email.toUpperCase() : author.email,
      BODY: body(),
      CHANNEL: pick(['chat', 'email', 'web']),
    };
    if (random() < faultRate) {
      switch (Math.floor(random() * 5)) {
        case 0:
          cells.EMAIL = 'not-an-email';
          break;
        case 1:
          cells.COMMENT_CREATED_AT = '2025-02-30 10:00:00';
          break;
        case 2:
          cells.AUTHOR_ID = '';
          break;
        case 3:
          cells.COMMENT_PART_ID = String(nextComment - 2);
          break;
        default:
          cells.COMMENT_PUBLIC = 'maybe';
      }
    }
    out += `${COLUMNS.map((column) => quote(cells[column])).join(',')}\r\n`;
    if (out.length >= 1 << 20) {
      yield out;
      out = '';
    }
  }
  if (out.length > 0) yield out;
}

/**
 * The demo export committed beside this file (`npm run import -- demo/chat-export.csv …`, and the
 * local S3's `incoming/chat.csv`): this generator's output for these options, which a test keeps true.
 */
export const DEMO_CHAT_EXPORT = { file: new URL('./chat-export.csv', import.meta.url), rows: 250, seed: 7 } as const;

/** Writes the CSV to `path`; resolves with its size in bytes. */
export const generateChatCsv = async (options: GenerateChatCsvOptions): Promise<{ bytes: number }> => {
  const file = createWriteStream(options.path);
  let bytes = 0;
  for (const chunk of chatCsvChunks(options)) {
    bytes += Buffer.byteLength(chunk);
    if (!file.write(chunk)) await once(file, 'drain');
  }
  file.end();
  await finished(file);
  return { bytes };
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [rows, path, seed] = process.argv.slice(2);
  if (rows === undefined || path === undefined || !/^\d+$/.test(rows)) {
    process.stderr.write('usage: node demo/chat-export.ts <rows> <file> [seed]\n');
    process.exitCode = 2;
  } else {
    const { bytes } = await generateChatCsv({ rows: Number(rows), path, ...(seed === undefined ? {} : { seed: Number(seed) }) });
    process.stdout.write(`${rows} rows, ${(bytes / 1024 / 1024).toFixed(1)} MB → ${path}\n`);
  }
}
