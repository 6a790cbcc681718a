import { availableParallelism } from 'node:os';
import { setImmediate } from 'node:timers/promises';
import { isMainThread, parentPort, Worker, workerData, type MessagePort } from 'node:worker_threads';
import { asError } from '../errors.ts';
import { ImportInputError } from './import-input-error.ts';
import { CsvRowError, type CsvShape, type CsvStart } from './read-csv.ts';
import { makeReadSide, type OnBatch, type ReadSideOptions } from './read-side.ts';
import { cutsApplyTo, RowCuts } from './row-cuts.ts';
import { VerdictWriter, type VerdictBatch } from './row-verdicts.ts';
import { DEFAULT_ENCODING } from './source-encoding.ts';

/**
 * Pass 1's read side (read-side.ts) in worker threads, so parsing and judging rows run on other
 * cores while the main thread takes the batches (dedupe, spills, rejects) in file order.
 *
 * The main thread keeps the source stream. With more than one reading thread it cuts the source into
 * segments of about `segmentBytes`, each at a newline outside quotes by quote parity (row-cuts.ts),
 * and hands them to the threads in turn (with one, the whole source is one segment); each thread reads
 * its segments in order with one read side per segment (starting after the header, on a known line
 * and byte), and the main thread takes the segments' batches in file order, numbering rows on. A
 * cut is known to fall between rows only once the segment before it has been parsed to its end and
 * nothing was left over; until then the bytes after it are kept. Should a segment end inside a row
 * (a stray quote threw the quote parity off), everything after it is dropped and its thread reads
 * on through the kept bytes and the rest of the source, without further cuts: the same rows as one
 * thread, only slower. Errors of a segment are raised only when its turn comes, so the run fails
 * with the error one thread would have met first, in the same words.
 *
 * Bytes go to a thread, and batches come back, as transferred buffers (no copies), each way with a
 * few in flight at most, so memory stays bounded and a slow side holds the other back; batches may
 * wait for their segment's turn, up to about a segment's worth. Each buffer goes back to the side
 * that filled it once the other is done with it, and is filled again: the same few megabytes go
 * round, where fresh ones would each cost page faults and garbage collection.
 *
 * The worker's script is this module itself, found by `import.meta.url`: the TypeScript file when
 * run from source, the function's one bundle when deployed (the same bundle re-entered; the check
 * at the bottom starts the worker's part only in a thread started with this role).
 */
const ROLE = 'ticket-import-read-side';

/**
 * By default one reading thread per core beside the main thread's, at least one and at most three.
 * Measured on two cores, a second reading thread (three threads sharing two cores) was no faster at
 * 250,000 rows and about a tenth faster at 1,000,000, for 40–80 MB more memory (a thread's own heaps
 * and buffers), so a Lambda with two vCPUs reads in one; from four vCPUs (7,076 MB) three share the
 * reading. The main thread's own work (taking rows, the spills, following the quotes for the cuts)
 * was profiled at a fifth to two fifths of a reading thread's, so it keeps up with two reading
 * threads, and with three at the lower figure (docs/import.md, threads).
 */
const defaultReadThreads = (): number => Math.min(3, Math.max(1, availableParallelism() - 1));
/** The source is cut about this often (bigger: fewer cuts; smaller: less waiting for a segment's turn). */
const DEFAULT_SEGMENT_BYTES = 2 * 1024 * 1024;
/** Source bytes are handed over in pieces of this much (S3 bodies arrive in 16–64 KiB), less at a cut. */
const HANDOVER_BYTES = 1024 * 1024;
/** Source pieces a thread may hold before it has parsed them. */
const PIECES_IN_FLIGHT = 4;
/**
 * Batches a thread may have handed over untaken: with several threads a segment's worth, waiting for
 * its turn; a lone thread's batches are taken as they come.
 */
const batchesInFlight = (threads: number): number => (threads > 1 ? 8 : 3);

/** What a row's error says, crossing threads as plain data. */
type RowFault = Pick<CsvRowError, 'dataRow' | 'line' | 'problem'>;

/** An error as it crosses threads; a row count is numbered on when it is raised. */
interface Failure {
  name: string;
  message: string;
  rowFault?: RowFault | undefined;
}

type ToWorker =
  | { type: 'segment'; segment: number; start: CsvStart | undefined }
  | { type: 'bytes'; segment: number; data: Uint8Array }
  | { type: 'end'; segment: number; last: boolean }
  | { type: 'drop'; after: number }
  | { type: 'taken'; buffers: ArrayBuffer[] };
type FromWorker =
  | { type: 'header'; shape: CsvShape }
  | { type: 'consumed'; buffer: ArrayBuffer }
  | { type: 'batch'; segment: number; batch: VerdictBatch }
  | { type: 'done'; segment: number }
  | { type: 'open'; segment: number }
  | { type: 'failed'; segment: number; failure: Failure };

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

const failureOf = (error: unknown): Failure => {
  const { name, message } = asError(error);
  if (error instanceof CsvRowError)
    return { name, message, rowFault: { dataRow: error.dataRow, line: error.line, problem: error.problem } };
  return { name, message };
};

/** The same error on this side, its data row counted from the file's first (`rowsBefore` precede the segment). */
const rebuild = (failure: Failure, rowsBefore: number): Error => {
  const { rowFault } = failure;
  // Its line is the file's already: a segment's reader counts lines from the segment's first.
  if (rowFault !== undefined) return new CsvRowError(rowsBefore + rowFault.dataRow, rowFault.line, rowFault.problem);
  if (failure.name === ImportInputError.name) return new ImportInputError(failure.message);
  const error = new Error(failure.message);
  error.name = failure.name;
  return error;
};

interface Thread {
  worker: Worker;
  piecesInFlight: number;
}

interface Segment {
  index: number;
  thread: Thread;
  /** Bytes routed to it. */
  bytes: number;
  /** Its bytes as handed over, kept while a segment before it may still turn out to end inside a row. */
  held: Buffer[] | undefined;
  /** Batches arrived, waiting for the segment's turn. */
  batches: VerdictBatch[];
  /** Its thread read it to its end, which was the end of a row. */
  done: boolean;
  failure: Failure | undefined;
}

/**
 * Runs the read side over `input` in worker threads, calling `onBatch` here for each batch in file
 * order. Rejects with the read side's own error (the same class and message as in one thread), or
 * with the source's; the threads are always stopped before this settles.
 */
export const readSideInWorkers = async (
  input: AsyncIterable<Buffer | string>,
  options: ReadSideOptions,
  onBatch: OnBatch,
): Promise<void> => {
  const news = makeNews();
  const segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
  const requested = Math.max(1, options.threads ?? defaultReadThreads());
  // Cutting needs more than one thread, and bytes that are the quotes and line feeds they look like;
  // a source that cannot be cut is read by one thread, the others would only wait.
  let cutting = requested > 1 && cutsApplyTo(options.encoding ?? DEFAULT_ENCODING);
  const threadCount = cutting ? requested : 1;
  const cuts = new RowCuts();
  let shape: CsvShape | undefined;
  const segments = new Map<number, Segment>();
  // Every segment up to this one starts at the start of a row.
  let confirmed = 0;
  let lastSegment: number | undefined;
  let finished = false;
  let failure: Error | undefined;
  const fail = (error: Error): void => {
    failure ??= error;
    news.tell();
  };
  // Handover memory the threads gave back, to be filled again.
  const spareMemory: ArrayBuffer[] = [];

  const send = (thread: Thread, message: ToWorker, transfer: ArrayBuffer[] = []): void => thread.worker.postMessage(message, transfer);
  const giveBack = (thread: Thread, batch: VerdictBatch): void => {
    const buffers = batchMemory(batch);
    send(thread, { type: 'taken', buffers }, buffers);
  };

  /** A copy of `pieces` in memory of its own, sent to the segment's thread (source buffers may share a pool). */
  const sendBytes = (segment: Segment, pieces: readonly Buffer[]): void => {
    let size = 0;
    for (const piece of pieces) size += piece.length;
    let memory = spareMemory.pop();
    if (memory === undefined || memory.byteLength < size) memory = new ArrayBuffer(Math.max(size, HANDOVER_BYTES));
    const data = new Uint8Array(memory, 0, size);
    let at = 0;
    for (const piece of pieces) {
      data.set(piece, at);
      at += piece.length;
    }
    segment.thread.piecesInFlight += 1;
    send(segment.thread, { type: 'bytes', segment: segment.index, data }, [memory]);
    // One by one: a megabyte of tiny chunks would be too many arguments for one push.
    if (segment.held !== undefined) for (const piece of pieces) segment.held.push(piece);
  };

  /** A segment whose end was not the end of a row, and everything after it, becomes one segment again. */
  const join = (index: number): void => {
    const segment = segments.get(index);
    if (segment === undefined) return;
    cutting = false;
    for (const thread of threads) send(thread, { type: 'drop', after: index });
    const replay: Buffer[] = [];
    for (const [later, dropped] of segments) {
      if (later <= index) continue;
      for (const batch of dropped.batches) giveBack(dropped.thread, batch);
      for (const piece of dropped.held ?? []) replay.push(piece);
      segments.delete(later);
    }
    filling = segment;
    for (let from = 0; from < replay.length;) {
      let size = 0;
      let to = from;
      while (to < replay.length && size < HANDOVER_BYTES) size += replay[to++]!.length;
      sendBytes(segment, replay.slice(from, to));
      from = to;
    }
    if (lastSegment !== undefined) {
      lastSegment = index;
      send(segment.thread, { type: 'end', segment: index, last: true });
    }
  };

  /** Segments that ended at a row's end confirm the start of the next: its kept bytes can go. */
  const confirm = (): void => {
    while (segments.get(confirmed)?.done === true) {
      confirmed += 1;
      const next = segments.get(confirmed);
      if (next !== undefined) next.held = undefined;
    }
  };

  const listen = (thread: Thread) => (message: FromWorker) => {
    if (message.type === 'header') shape = message.shape;
    else if (message.type === 'consumed') {
      thread.piecesInFlight -= 1;
      spareMemory.push(message.buffer);
    } else if (message.type === 'open') join(message.segment);
    else {
      const segment = segments.get(message.segment);
      if (message.type === 'batch') {
        const { batch } = message;
        const arrived = {
          ...batch,
          verdicts: asBuffer(batch.verdicts),
          tickets: asBuffer(batch.tickets),
          comments: asBuffer(batch.comments),
          users: asBuffer(batch.users),
        };
        // A dropped segment's batch only goes back.
        if (segment === undefined) giveBack(thread, arrived);
        else segment.batches.push(arrived);
      } else if (segment !== undefined) {
        if (message.type === 'done') {
          segment.done = true;
          confirm();
        } else segment.failure = message.failure;
      }
    }
    news.tell();
  };

  const startThread = (): Thread => {
    // No inherited command-line options: a parent started with `-e` or `--input-type` (a test, a bench)
    // would hand the worker options that refuse a file entry; V8 flags such as the young generation's
    // size apply to the whole process anyway.
    const worker = new Worker(new URL(import.meta.url), {
      workerData: { role: ROLE, options, maxBatches: batchesInFlight(threadCount) },
      execArgv: [],
    });
    const thread: Thread = { worker, piecesInFlight: 0 };
    worker.on('message', listen(thread));
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (!finished) fail(new Error(`The import's reading thread stopped (exit code ${code})`));
    });
    return thread;
  };
  const threads: Thread[] = [];
  try {
    while (threads.length < threadCount) threads.push(startThread());
  } catch (error) {
    finished = true;
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
    throw error;
  }

  let nextIndex = 0;
  const openSegment = (thread: Thread, start: CsvStart | undefined): Segment => {
    const index = nextIndex++;
    const segment: Segment = {
      index,
      thread,
      bytes: 0,
      held: index <= confirmed ? undefined : [],
      batches: [],
      done: false,
      failure: undefined,
    };
    segments.set(index, segment);
    send(thread, { type: 'segment', segment: index, start });
    return segment;
  };
  // The segment source bytes go to now.
  let filling = openSegment(threads[0]!, undefined);

  const pump = (async () => {
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let routed = 0;
    const handOver = async (): Promise<void> => {
      while (filling.thread.piecesInFlight >= PIECES_IN_FLIGHT && failure === undefined) await news.wait();
      if (failure !== undefined || pendingBytes === 0) return;
      const pieces = pending;
      pending = [];
      pendingBytes = 0;
      sendBytes(filling, pieces);
      // A source already in memory never waits for I/O: let the threads' messages (the header, batches
      // for the taker, memory coming back) in between pieces.
      await setImmediate();
    };
    try {
      for await (const chunk of input) {
        let rest = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        while (rest.length > 0) {
          if (cutting && shape === undefined && filling.bytes >= segmentBytes) {
            // The first cut waits for the header's shape (its newline, its columns for the other
            // threads): until the first thread read the bytes it has, or a header that long is no header.
            await handOver();
            while (cutting && shape === undefined && filling.thread.piecesInFlight > 0 && failure === undefined) await news.wait();
          }
          // What fills the pending piece up to a handover's worth: a big chunk is cut too, and no
          // piece outgrows the memory that goes round.
          const window = rest.subarray(0, HANDOVER_BYTES - pendingBytes);
          let cut = -1;
          if (cutting) {
            if (shape !== undefined && filling.bytes >= segmentBytes) cut = cuts.cut(window, shape.newline);
            else cuts.follow(window);
          }
          const part = cut === -1 ? window : window.subarray(0, cut);
          rest = rest.subarray(part.length);
          pending.push(part);
          pendingBytes += part.length;
          filling.bytes += part.length;
          routed += part.length;
          if (cut === -1) {
            if (pendingBytes >= HANDOVER_BYTES) await handOver();
          } else {
            await handOver();
            // A join meanwhile ended the cutting: the rest goes on to the segment the bytes so far went to.
            if (cutting && failure === undefined) {
              send(filling.thread, { type: 'end', segment: filling.index, last: false });
              const next = threads[(threads.indexOf(filling.thread) + 1) % threads.length]!;
              filling = openSegment(next, { byte: routed, line: cuts.lineFeeds + 1, shape: shape! });
            }
          }
          if (failure !== undefined) return;
        }
      }
      await handOver();
      if (failure !== undefined) return;
      lastSegment = filling.index;
      send(filling.thread, { type: 'end', segment: filling.index, last: true });
    } catch (error) {
      fail(asError(error));
    }
  })();

  try {
    let current = 0;
    let rowsTaken = 0;
    // Rows taken before the current segment: its rows are numbered on from there.
    let rowsBefore = 0;
    for (;;) {
      if (failure !== undefined) throw failure;
      const segment = segments.get(current);
      const batch = segment?.batches.shift();
      if (segment !== undefined && batch !== undefined) {
        await onBatch({ ...batch, firstRow: rowsBefore + batch.firstRow });
        rowsTaken += batch.rows;
        giveBack(segment.thread, batch);
      } else if (segment?.failure !== undefined) {
        throw rebuild(segment.failure, rowsBefore);
      } else if (segment?.done === true && current === lastSegment) {
        break;
      } else if (segment?.done === true) {
        segments.delete(current);
        current += 1;
        rowsBefore = rowsTaken;
      } else {
        await news.wait();
      }
    }
  } catch (error) {
    failure ??= error as Error;
    throw error;
  } finally {
    finished = true;
    news.tell();
    // After a failure the source may be stalled (a pipe nobody writes to): the caller destroys it,
    // which ends the pump; only a finished run waits for it (it has ended by then).
    if (failure === undefined) await pump;
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
  }
};

/** A segment as its thread holds it. */
interface Part {
  index: number;
  start: CsvStart | undefined;
  pieces: Buffer[];
  /** Its bytes end after the pieces there are (`last`: the source's end). */
  end: 'end' | 'last' | undefined;
  dropped: boolean;
}

/** The worker's part: segments' bytes in, their batches out, each segment then `done`, `open` or `failed`. */
const serve = (port: MessagePort, options: ReadSideOptions, maxBatches: number): void => {
  const news = makeNews();
  // One writer for all of this thread's segments: what it saw earlier (recent keys) comes earlier in the file.
  const writer = new VerdictWriter(options.destinationUsers);
  let parts: Part[] = [];
  let batchesInFlight = 0;
  const post = (message: FromWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);
  const consumed = (piece: Buffer): void => post({ type: 'consumed', buffer: piece.buffer as ArrayBuffer }, [piece.buffer as ArrayBuffer]);
  const partOf = (index: number): Part | undefined => parts.find((part) => part.index === index);
  port.on('message', (message: ToWorker) => {
    if (message.type === 'segment')
      parts.push({ index: message.segment, start: message.start, pieces: [], end: undefined, dropped: false });
    else if (message.type === 'bytes') partOf(message.segment)?.pieces.push(asBuffer(message.data));
    else if (message.type === 'end') {
      const part = partOf(message.segment);
      if (part !== undefined) part.end = message.last ? 'last' : 'end';
    } else if (message.type === 'drop') {
      for (const part of parts) {
        if (part.index <= message.after) continue;
        part.dropped = true;
        for (const piece of part.pieces.splice(0)) consumed(piece);
      }
      parts = parts.filter((part) => !part.dropped);
    } else {
      batchesInFlight -= 1;
      const [verdicts, tickets, comments, users] = message.buffers.map((memory) => Buffer.from(memory));
      writer.recycle({ verdicts: verdicts!, tickets: tickets!, comments: comments!, users: users! });
    }
    news.tell();
  });

  const readPart = async (part: Part): Promise<void> => {
    writer.restartRows();
    const side = makeReadSide({
      options,
      start: part.start,
      writer,
      onHeader: (shape) => post({ type: 'header', shape }),
      onBatch: async (batch) => {
        while (batchesInFlight >= maxBatches && !part.dropped) await news.wait();
        if (part.dropped) {
          writer.recycle(batch);
          return;
        }
        batchesInFlight += 1;
        post({ type: 'batch', segment: part.index, batch }, batchMemory(batch));
      },
    });
    while (!part.dropped) {
      const piece = part.pieces.shift();
      if (piece !== undefined) {
        await side.push(piece);
        // The reader keeps no view of a piece once it is pushed: its memory goes back.
        consumed(piece);
      } else if (part.end === 'last' || (part.end === 'end' && (await side.atRowStart()))) {
        await side.end();
        post({ type: 'done', segment: part.index });
        return;
      } else if (part.end === 'end') {
        // Cut inside a row: the main thread joins what follows on to this segment.
        part.end = undefined;
        post({ type: 'open', segment: part.index });
      } else {
        await news.wait();
      }
    }
  };

  void (async () => {
    for (;;) {
      const part = parts[0];
      if (part === undefined) {
        await news.wait();
        continue;
      }
      try {
        await readPart(part);
      } catch (error) {
        // The main thread raises it when the segment's turn comes; this thread reads no further.
        post({ type: 'failed', segment: part.index, failure: failureOf(error) });
        return;
      }
      parts = parts.filter((other) => other !== part);
    }
  })();
};

if (!isMainThread && parentPort !== null && (workerData as { role?: unknown } | null)?.role === ROLE) {
  const { options, maxBatches } = workerData as { options: ReadSideOptions; maxBatches: number };
  serve(parentPort, options, maxBatches);
}
