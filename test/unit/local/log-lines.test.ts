import { describe, expect, it } from 'vitest';
import { makeLogLineRouter } from '../../../scripts/local/log-lines.ts';

const route = () => {
  const logs: string[] = [];
  const rest: string[] = [];
  const router = makeLogLineRouter(
    (line) => logs.push(line),
    (text) => rest.push(text),
  );
  return { router, logs, rest };
};

describe('the log line router of the local scripts', () => {
  it('sends structured log lines to the log stream and anything else to the other, line by line, in order', () => {
    const { router, logs, rest } = route();
    router.push('{"level":"WARN","message":"cache tier degraded"}\nstart: bundling failed\n{"level":"ERROR","message":"x"}\n');
    expect(logs).toEqual(['{"level":"WARN","message":"cache tier degraded"}\n', '{"level":"ERROR","message":"x"}\n']);
    expect(rest).toEqual(['start: bundling failed\n']);
  });

  it('joins a line split across chunks (a multi-byte character too) before deciding where it goes', () => {
    const { router, logs, rest } = route();
    const line = Buffer.from('{"level":"ERROR","message":"é"}\n');
    const cut = line.indexOf(0xa9); // inside "é"
    router.push(line.subarray(0, cut));
    expect(logs).toEqual([]);
    router.push(line.subarray(cut));
    expect(logs).toEqual(['{"level":"ERROR","message":"é"}\n']);
    expect(rest).toEqual([]);
  });

  it('keeps the order when a string follows bytes that left a character open', () => {
    const { router, rest } = route();
    const e = Buffer.from('é\n');
    router.push(e.subarray(0, 1));
    router.push('x\n');
    router.push(e.subarray(1));
    router.flush();
    expect(rest.join('')).toBe('\ufffdx\n\ufffd\n');
  });

  it('keeps JSON that is not a log line, and a last line without its newline, on the other stream', () => {
    const { router, logs, rest } = route();
    router.push('{"statusCode":200}\n{"level":"INFO"');
    expect(rest).toEqual(['{"statusCode":200}\n']);
    router.flush();
    expect(logs).toEqual(['{"level":"INFO"']);
    router.push('warning: left\n');
    router.push('tail');
    router.flush();
    expect(rest).toEqual(['{"statusCode":200}\n', 'warning: left\n', 'tail']);
  });
});
