import { isMainThread, parentPort, Worker, workerData, type MessagePort } from 'node:worker_threads';
import { asError } from '../errors.ts';
import { ImportInputError } from './import-input-error.ts';
import { readSide, type OnBatch, type ReadSideOptions } from './read-side.ts';
import { VerdictWriter, type VerdictBatch } from './row-verdicts.ts';

/**
 * Pass 1's read side (read-side.ts) in a worker thread, so parsing and judging rows run on one core
 * while the main thread takes the batches (dedupe, spills, rejects) on another. The main thread
 * keeps the source stream: it hands the worker the bytes, and the worker hands back batches, both
 * as transferred buffers (no copies), each way with a few in flight at most, so memory stays
 * bounded and a slow side holds the other back. Each buffer goes back to the side that filled it
 * once the other is done with it, and is filled again: the same few megabytes go round, where fresh
 * ones would each cost page faults and garbage collection (in both threads: an arriving buffer
 * counts as new memory to the receiving one, which collects more often the more arrive).
 *
 * The worker's script is this module itself, found by `import.meta.url`: the TypeScript file when
 * run from source, the function's one bundle when deployed (the same bundle re-entered; the
 * check at the bottom starts the worker's part only in a thread started with this role).
 */
const ROLE = 'ticket-import-read-side';

/** Source bytes are handed over in pieces of at least this much (S3 bodies arrive in 16–64 KiB). */
const HANDOVER_BYTES = 1024 * 1024;
/** A piece's memory: room for the chunk that completes it (a file is read 1 MiB at a time, S3 in ≤ 64 KiB). */
const HANDOVER_MEMORY_BYTES = HANDOVER_BYTES + 64 * 1024;
/** Source pieces the worker may hold before it has parsed them. */
const PIECES_IN_FLIGHT = 4;
/** Batches the main thread may hold before it has taken them. */
const BATCHES_IN_FLIGHT = 3;

type ToWorker = { type: 'bytes'; data: Uint8Array } | { type: 'end' } | { type: 'taken'; buffers: ArrayBuffer[] };
type FromWorker =
  | { type: 'consumed'; buffer: ArrayBuffer }
  | { type: 'batch'; batch: VerdictBatch }
  | { type: 'done' }
  | { type: 'failed'; name: string; message: string };

/** Resolves waiters whenever something changed; each waiter then looks at the state again. */
const makeNews = () => {
  const waiters = new Set<() => void>();
  return {
    wait: () => new Promise<void>((resolve) => waiters.add(resolve)),
    tell: () => {
      for (const resolve of waiters) resolve();
      waiters.clear();
    },
  };
};

/** A transferred buffer arrives as a plain Uint8Array. */
const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** The memory of a batch's four buffers (each its own: VerdictWriter.take). */
const batchMemory = (batch: VerdictBatch): ArrayBuffer[] =>
  [batch.verdicts, batch.tickets, batch.comments, batch.users].map((bytes) => bytes.buffer as ArrayBuffer);

/** The same error on this side: the import's own input errors keep their class, so they read the same. */
const rebuild = (name: string, message: string): Error => {
  if (name === ImportInputError.name) return new ImportInputError(message);
  const error = new Error(message);
  error.name = name;
  return error;
};

/**
 * Runs the read side over `input` in a worker thread, calling `onBatch` here for each batch in file
 * order. Rejects with the read side's own error (the same class and message as in one thread), or
 * with the source's; the worker is always stopped before this settles.
 */
export const readSideInWorker = async (input: AsyncIterable<Buffer | string>, options: ReadSideOptions, onBatch: OnBatch): Promise<void> => {
  // No inherited command-line options: a parent started with `-e` or `--input-type` (a test, a bench)
  // would hand the worker options that refuse a file entry; V8 flags such as the young generation's
  // size apply to the whole process anyway.
  const worker = new Worker(new URL(import.meta.url), { workerData: { role: ROLE, options }, execArgv: [] });
  const news = makeNews();
  const batches: VerdictBatch[] = [];
  let piecesInFlight = 0;
  // Handover memory the worker gave back, to be filled again.
  const spareMemory: ArrayBuffer[] = [];
  let done = false;
  let failure: Error | undefined;
  const fail = (error: Error): void => {
    failure ??= error;
    news.tell();
  };
  worker.on('message', (message: FromWorker) => {
    if (message.type === 'consumed') {
      piecesInFlight -= 1;
      spareMemory.push(message.buffer);
    }
    else if (message.type === 'batch') {
      const { batch } = message;
      batches.push({ ...batch, verdicts: asBuffer(batch.verdicts), tickets: asBuffer(batch.tickets), comments: asBuffer(batch.comments), users: asBuffer(batch.users) });
    } else if (message.type === 'done') done = true;
    else failure ??= rebuild(message.name, message.message);
    news.tell();
  });
  worker.on('error', fail);
  worker.on('exit', (code) => {
    if (!done) fail(new Error(`The import's reading thread stopped (exit code ${code})`));
  });

  const send = (message: ToWorker, transfer: ArrayBuffer[] = []): void => worker.postMessage(message, transfer);
  const pump = (async () => {
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const handOver = async (): Promise<void> => {
      while (piecesInFlight >= PIECES_IN_FLIGHT && failure === undefined) await news.wait();
      if (failure !== undefined) return;
      // A copy of its own, so its memory can move to the worker (source buffers may share a pool),
      // into memory the worker gave back where it is big enough (pieces are all about this size).
      let memory = spareMemory.pop();
      if (memory === undefined || memory.byteLength < pendingBytes) memory = new ArrayBuffer(Math.max(pendingBytes, HANDOVER_MEMORY_BYTES));
      const data = new Uint8Array(memory, 0, pendingBytes);
      let at = 0;
      for (const piece of pending) {
        data.set(piece, at);
        at += piece.length;
      }
      pending = [];
      pendingBytes = 0;
      piecesInFlight += 1;
      send({ type: 'bytes', data }, [data.buffer]);
    };
    try {
      for await (const chunk of input) {
        const piece = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        pending.push(piece);
        pendingBytes += piece.length;
        if (pendingBytes >= HANDOVER_BYTES) await handOver();
        if (failure !== undefined) return;
      }
      if (pendingBytes > 0) await handOver();
      send({ type: 'end' });
    } catch (error) {
      fail(asError(error));
    }
  })();

  try {
    for (;;) {
      if (failure !== undefined) throw failure;
      const batch = batches.shift();
      if (batch !== undefined) {
        await onBatch(batch);
        const buffers = batchMemory(batch);
        send({ type: 'taken', buffers }, buffers);
      } else if (done) {
        break;
      } else {
        await news.wait();
      }
    }
  } catch (error) {
    failure ??= error as Error;
    throw error;
  } finally {
    news.tell();
    // After a failure the source may be stalled (a pipe nobody writes to): the caller destroys it,
    // which ends the pump; only a finished run waits for it (it has ended by then).
    if (failure === undefined) await pump;
    await worker.terminate();
  }
};

/** The worker's part: bytes in, batches out, then `done` or the error that stopped it. */
const serve = (port: MessagePort, options: ReadSideOptions): void => {
  const news = makeNews();
  const writer = new VerdictWriter(options.destinationUsers);
  const pieces: Buffer[] = [];
  let ended = false;
  let batchesInFlight = 0;
  port.on('message', (message: ToWorker) => {
    if (message.type === 'bytes') pieces.push(asBuffer(message.data));
    else if (message.type === 'end') ended = true;
    else {
      batchesInFlight -= 1;
      const [verdicts, tickets, comments, users] = message.buffers.map((memory) => Buffer.from(memory));
      writer.recycle({ verdicts: verdicts!, tickets: tickets!, comments: comments!, users: users! });
    }
    news.tell();
  });
  const post = (message: FromWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);
  async function* input(): AsyncGenerator<Buffer> {
    for (;;) {
      const piece = pieces.shift();
      if (piece !== undefined) {
        yield piece;
        // readCsv asks for the next piece only once it is done with this one: its memory goes back.
        post({ type: 'consumed', buffer: piece.buffer as ArrayBuffer }, [piece.buffer as ArrayBuffer]);
      } else if (ended) {
        return;
      } else {
        await news.wait();
      }
    }
  }
  readSide(input(), options, async (batch) => {
    while (batchesInFlight >= BATCHES_IN_FLIGHT) await news.wait();
    batchesInFlight += 1;
    post({ type: 'batch', batch }, batchMemory(batch));
  }, writer).then(
    () => post({ type: 'done' }),
    (error: unknown) => {
      const { name, message } = asError(error);
      post({ type: 'failed', name, message });
    },
  );
};

if (!isMainThread && parentPort !== null && (workerData as { role?: unknown } | null)?.role === ROLE) {
  serve(parentPort, (workerData as { options: ReadSideOptions }).options);
}
