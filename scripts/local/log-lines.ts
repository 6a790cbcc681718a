/**
 * Handler log lines belong on stdout locally, whatever their level: Powertools' logger writes INFO
 * through `console.info` (stdout) but WARN and ERROR through `console.warn`/`console.error`
 * (stderr). In Lambda both streams reach the same log group; locally a developer piping `npm start`
 * or `npm run invoke` into `jq` would lose the very lines that say what went wrong.
 *
 * A router takes a stream's output as it comes and sends each whole line that is a structured log
 * line (a JSON object with a `level`) to `logs`, anything else to `rest`, in order. A partial line
 * waits for its end (or for `flush`).
 */
export interface LineRouter {
  push: (chunk: string | Uint8Array) => void;
  flush: () => void;
}

const LOG_LINE = /^\{"level":"[A-Z]+"/;

export const makeLogLineRouter = (logs: (text: string) => void, rest: (text: string) => void): LineRouter => {
  const decoder = new TextDecoder();
  let pending = '';
  const route = (line: string): void => (LOG_LINE.test(line) ? logs : rest)(line);
  return {
    push: (chunk) => {
      // A string ends any character a previous byte chunk left open, so order is kept.
      pending += typeof chunk === 'string' ? decoder.decode() + chunk : decoder.decode(chunk, { stream: true });
      let end = pending.indexOf('\n');
      while (end !== -1) {
        route(pending.slice(0, end + 1));
        pending = pending.slice(end + 1);
        end = pending.indexOf('\n');
      }
    },
    flush: () => {
      pending += decoder.decode();
      if (pending !== '') route(pending);
      pending = '';
    },
  };
};
