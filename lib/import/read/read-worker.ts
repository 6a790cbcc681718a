import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { makeChangeSignal } from '../../async/change-signal.ts';
import type { CsvStart } from './csv-state.ts';
import { makeReadSide } from './read-side.ts';
import { VerdictWriter } from './row-verdicts.ts';
import {
  asBuffer,
  batchMemory,
  failureOf,
  READ_WORKER_ROLE,
  type FromWorker,
  type ReadWorkerData,
  type ToWorker,
} from './worker-protocol.ts';

// The reading thread's side, and only that: segments' bytes in, their batches out (docs/architecture.md,
// "The import's threads"). The main thread's side is read-thread.ts and read-dispatcher.ts.

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
const serve = (port: MessagePort, { options, maxBatches }: ReadWorkerData): void => {
  const changed = makeChangeSignal();
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
      const [verdicts, tickets, comments, users] = message.buffers;
      writer.recycle({ verdicts: verdicts!, tickets: tickets!, comments: comments!, users: users! });
    }
    changed.notify();
  });

  const readPart = async (part: Part): Promise<void> => {
    writer.restartRows();
    const side = makeReadSide({
      options,
      start: part.start,
      writer,
      onHeader: (shape) => post({ type: 'header', shape }),
      onBatch: async (batch) => {
        while (batchesInFlight >= maxBatches && !part.dropped) await changed.next();
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
        await changed.next();
      }
    }
  };

  void (async () => {
    for (;;) {
      const part = parts[0];
      if (part === undefined) {
        await changed.next();
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

/**
 * This module's own address, which a reading thread is started on: the TypeScript file when run from
 * source, the function's one bundle when deployed (re-entered; the check below starts the worker's
 * part only in a thread started with its role).
 */
export const READ_WORKER_SCRIPT = new URL(import.meta.url);

if (!isMainThread && parentPort !== null && (workerData as { role?: unknown } | null)?.role === READ_WORKER_ROLE) {
  serve(parentPort, workerData as ReadWorkerData);
}
