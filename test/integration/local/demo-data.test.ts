import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { chatCsvChunks, DEMO_CHAT_EXPORT } from '../../../demo/chat-export.ts';

describe('the committed demo chat export', () => {
  it('is what the generator makes of its options (regenerate with node demo/chat-export.ts 250 demo/chat-export.csv 7)', async () => {
    const generated = [...chatCsvChunks({ rows: DEMO_CHAT_EXPORT.rows, seed: DEMO_CHAT_EXPORT.seed })].join('');
    expect(await readFile(DEMO_CHAT_EXPORT.file, 'utf8')).toBe(generated);
  });
});
