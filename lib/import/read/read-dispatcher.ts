import { setImmediate } from 'node:timers/promises';
import { makeChangeSignal } from '../../async/change-signal.ts';
import { BufferPool } from '../../bytes/buffer-pool.ts';
import { asError } from '../../errors.ts';
import type { CsvShape, CsvStart } from './csv-state.ts';
import type { OnBatch, ReadSideOptions } from './read-side.ts';
import { ReadThread } from './read-thread.ts';
import { RowCuts } from './row-cuts.ts';
import type { VerdictBatch } from '../formats/verdict-batch.ts';
import { arrivedBatch, rebuild, type Failure, type FromWorker } from './worker-protocol.ts';

// Pass 1's read side in worker threads, the source cut between rows (docs/architecture.md, "The import's threads").

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

/** How the read side runs in worker threads (the run's plan). */
export interface ReadThreads {
  options: ReadSideOptions;
  /** How many threads read: one reads the whole source; more share it, cut between rows. */
  threads: number;
  /** With more than one thread: the source is cut between rows about this often. */
  segmentBytes?: number | undefined;
}

interface Segment {
  index: number;
  thread: ReadThread;
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

/** The main thread's side (with read-thread.ts): routes the source to the threads in segments and takes their batches back in file order. */
class ReadDispatcher {
  private readonly changed = makeChangeSignal();
  private readonly options: ReadSideOptions;
  private readonly threadCount: number;
  private readonly segmentBytes: number;
  private readonly threads: ReadThread[] = [];
  /** Cutting needs more than one thread; a join (a segment that ended inside a row) ends it. */
  private cutting: boolean;
  private readonly cuts = new RowCuts();
  private shape: CsvShape | undefined;
  private readonly segments = new Map<number, Segment>();
  /** Every segment up to this one starts at the start of a row. */
  private confirmed = 0;
  private lastSegment: number | undefined;
  private nextIndex = 0;
  /** The segment source bytes go to now. */
  private filling!: Segment;
  private finished = false;
  private failure: Error | undefined;
  /** Handover memory the threads gave back, to be filled again. */
  private readonly handover = new BufferPool(HANDOVER_BYTES);

  constructor({ options, threads, segmentBytes }: ReadThreads) {
    this.options = options;
    this.threadCount = Math.max(1, threads);
    this.segmentBytes = segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    this.cutting = this.threadCount > 1;
  }

  /** Reads `input` in the threads, calling `onBatch` for each batch in file order; the threads are stopped before it settles. */
  async run(input: AsyncIterable<Buffer | string>, onBatch: OnBatch): Promise<void> {
    try {
      while (this.threads.length < this.threadCount) this.threads.push(this.startThread());
    } catch (error) {
      this.finished = true;
      await Promise.all(this.threads.map((thread) => thread.stop()));
      throw error;
    }
    this.filling = this.openSegment(this.threads[0]!, undefined);
    const pump = this.pump(input);
    try {
      await this.takeInOrder(onBatch);
    } catch (error) {
      this.failure ??= error as Error;
      throw error;
    } finally {
      this.finished = true;
      this.changed.notify();
      // After a failure the source may be stalled (a pipe nobody writes to): the caller destroys it,
      // which ends the pump; only a finished run waits for it (it has ended by then).
      if (this.failure === undefined) await pump;
      await Promise.all(this.threads.map((thread) => thread.stop()));
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.changed.notify();
  }

  private startThread(): ReadThread {
    const thread: ReadThread = new ReadThread(
      { options: this.options, maxBatches: batchesInFlight(this.threadCount) },
      {
        message: (message) => this.listen(thread, message),
        error: (error) => this.fail(error),
        exit: (code) => {
          if (!this.finished) this.fail(new Error(`The import's reading thread stopped (exit code ${code})`));
        },
      },
    );
    return thread;
  }

  private openSegment(thread: ReadThread, start: CsvStart | undefined): Segment {
    const index = this.nextIndex++;
    const segment: Segment = {
      index,
      thread,
      bytes: 0,
      held: index <= this.confirmed ? undefined : [],
      batches: [],
      done: false,
      failure: undefined,
    };
    this.segments.set(index, segment);
    thread.send({ type: 'segment', segment: index, start });
    return segment;
  }

  /** A copy of `pieces` in memory of its own, sent to the segment's thread (source buffers may share a pool). */
  private sendBytes(segment: Segment, pieces: readonly Buffer[]): void {
    let size = 0;
    for (const piece of pieces) size += piece.length;
    const data = this.handover.take(size).subarray(0, size);
    let at = 0;
    for (const piece of pieces) {
      data.set(piece, at);
      at += piece.length;
    }
    segment.thread.piecesInFlight += 1;
    segment.thread.send({ type: 'bytes', segment: segment.index, data }, [data.buffer as ArrayBuffer]);
    // One by one: a megabyte of tiny chunks would be too many arguments for one push.
    if (segment.held !== undefined) for (const piece of pieces) segment.held.push(piece);
  }

  /** A segment whose end was not the end of a row, and everything after it, becomes one segment again. */
  private join(index: number): void {
    const segment = this.segments.get(index);
    if (segment === undefined) return;
    this.cutting = false;
    for (const thread of this.threads) thread.send({ type: 'drop', after: index });
    const replay: Buffer[] = [];
    for (const [later, dropped] of this.segments) {
      if (later <= index) continue;
      for (const batch of dropped.batches) dropped.thread.giveBack(batch);
      for (const piece of dropped.held ?? []) replay.push(piece);
      this.segments.delete(later);
    }
    this.filling = segment;
    for (let from = 0; from < replay.length;) {
      let size = 0;
      let to = from;
      while (to < replay.length && size < HANDOVER_BYTES) size += replay[to++]!.length;
      this.sendBytes(segment, replay.slice(from, to));
      from = to;
    }
    if (this.lastSegment !== undefined) {
      this.lastSegment = index;
      segment.thread.send({ type: 'end', segment: index, last: true });
    }
  }

  /** Segments that ended at a row's end confirm the start of the next: its kept bytes can go. */
  private confirm(): void {
    while (this.segments.get(this.confirmed)?.done === true) {
      this.confirmed += 1;
      const next = this.segments.get(this.confirmed);
      if (next !== undefined) next.held = undefined;
    }
  }

  private listen(thread: ReadThread, message: FromWorker): void {
    if (message.type === 'header') this.shape = message.shape;
    else if (message.type === 'consumed') {
      thread.piecesInFlight -= 1;
      this.handover.give(message.buffer);
    } else if (message.type === 'open') this.join(message.segment);
    else {
      const segment = this.segments.get(message.segment);
      if (message.type === 'batch') {
        const arrived = arrivedBatch(message.batch);
        // A dropped segment's batch only goes back.
        if (segment === undefined) thread.giveBack(arrived);
        else segment.batches.push(arrived);
      } else if (segment !== undefined) {
        if (message.type === 'done') {
          segment.done = true;
          this.confirm();
        } else segment.failure = message.failure;
      }
    }
    this.changed.notify();
  }

  /** Routes the source's bytes to the segments, cutting a new one about every `segmentBytes`. */
  private async pump(input: AsyncIterable<Buffer | string>): Promise<void> {
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let routed = 0;
    const handOver = async (): Promise<void> => {
      while (this.filling.thread.piecesInFlight >= PIECES_IN_FLIGHT && this.failure === undefined) await this.changed.next();
      if (this.failure !== undefined || pendingBytes === 0) return;
      const pieces = pending;
      pending = [];
      pendingBytes = 0;
      this.sendBytes(this.filling, pieces);
      // A source already in memory never waits for I/O: let the threads' messages (the header, batches
      // for the taker, memory coming back) in between pieces.
      await setImmediate();
    };
    try {
      for await (const chunk of input) {
        let rest = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        while (rest.length > 0) {
          if (this.cutting && this.shape === undefined && this.filling.bytes >= this.segmentBytes) {
            // The first cut waits for the header's shape (its newline, its columns for the other
            // threads): until the first thread read the bytes it has, or a header that long is no header.
            await handOver();
            while (this.cutting && this.shape === undefined && this.filling.thread.piecesInFlight > 0 && this.failure === undefined)
              await this.changed.next();
          }
          // What fills the pending piece up to a handover's worth: a big chunk is cut too, and no
          // piece outgrows the memory that goes round.
          const window = rest.subarray(0, HANDOVER_BYTES - pendingBytes);
          let cut = -1;
          if (this.cutting) {
            if (this.shape !== undefined && this.filling.bytes >= this.segmentBytes) cut = this.cuts.cut(window, this.shape.newline);
            else this.cuts.follow(window);
          }
          const part = cut === -1 ? window : window.subarray(0, cut);
          rest = rest.subarray(part.length);
          pending.push(part);
          pendingBytes += part.length;
          this.filling.bytes += part.length;
          routed += part.length;
          if (cut === -1) {
            if (pendingBytes >= HANDOVER_BYTES) await handOver();
          } else {
            await handOver();
            // A join meanwhile ended the cutting: the rest goes on to the segment the bytes so far went to.
            if (this.cutting && this.failure === undefined) {
              this.filling.thread.send({ type: 'end', segment: this.filling.index, last: false });
              const next = this.threads[(this.threads.indexOf(this.filling.thread) + 1) % this.threads.length]!;
              this.filling = this.openSegment(next, { byte: routed, line: this.cuts.line, shape: this.shape! });
            }
          }
          if (this.failure !== undefined) return;
        }
      }
      await handOver();
      if (this.failure !== undefined) return;
      this.lastSegment = this.filling.index;
      this.filling.thread.send({ type: 'end', segment: this.filling.index, last: true });
    } catch (error) {
      this.fail(asError(error));
    }
  }

  /** Takes the segments' batches in file order, numbering rows on; raises a segment's error when its turn comes. */
  private async takeInOrder(onBatch: OnBatch): Promise<void> {
    let current = 0;
    let rowsTaken = 0;
    // Rows taken before the current segment: its rows are numbered on from there.
    let rowsBefore = 0;
    for (;;) {
      if (this.failure !== undefined) throw this.failure;
      const segment = this.segments.get(current);
      const batch = segment?.batches.shift();
      if (segment !== undefined && batch !== undefined) {
        await onBatch({ ...batch, firstRow: rowsBefore + batch.firstRow });
        rowsTaken += batch.rows;
        segment.thread.giveBack(batch);
      } else if (segment?.failure !== undefined) {
        throw rebuild(segment.failure, rowsBefore);
      } else if (segment?.done === true && current === this.lastSegment) {
        return;
      } else if (segment?.done === true) {
        this.segments.delete(current);
        current += 1;
        rowsBefore = rowsTaken;
      } else {
        await this.changed.next();
      }
    }
  }
}

/**
 * Runs the read side over `input` in worker threads, calling `onBatch` here for each batch in file
 * order. Rejects with the read side's own error (the same class and message as in one thread), or
 * with the source's; the threads are always stopped before this settles.
 */
export const readSideInWorkers = (input: AsyncIterable<Buffer | string>, threads: ReadThreads, onBatch: OnBatch): Promise<void> =>
  new ReadDispatcher(threads).run(input, onBatch);
