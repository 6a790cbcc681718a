import { Worker } from 'node:worker_threads';
import type { VerdictBatch } from '../formats/verdict-batch.ts';
import { READ_WORKER_SCRIPT } from './read-worker.ts';
import { batchMemory, READ_WORKER_ROLE, type FromWorker, type ReadWorkerData, type ToWorker } from './worker-protocol.ts';

/** What the main thread hears from a reading thread. */
interface ReadThreadListener {
  message(message: FromWorker): void;
  error(error: Error): void;
  exit(code: number): void;
}

/** A reading thread as the main thread sees it: started, told things, given memory back, stopped. */
export class ReadThread {
  /** Source pieces handed over and not yet given back parsed. */
  piecesInFlight = 0;
  private readonly worker: Worker;

  constructor(data: ReadWorkerData, listener: ReadThreadListener) {
    // No inherited command-line options: a parent started with `-e` or `--input-type` (a test, a bench)
    // would hand the worker options that refuse a file entry; V8 flags such as the young generation's
    // size apply to the whole process anyway.
    this.worker = new Worker(READ_WORKER_SCRIPT, { workerData: { role: READ_WORKER_ROLE, ...data }, execArgv: [] });
    this.worker.on('message', (message: FromWorker) => listener.message(message));
    this.worker.on('error', (error: Error) => listener.error(error));
    this.worker.on('exit', (code: number) => listener.exit(code));
  }

  send(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  /** Gives a taken batch's memory back to the thread that filled it, to fill again. */
  giveBack(batch: VerdictBatch): void {
    const buffers = batchMemory(batch);
    this.send({ type: 'taken', buffers }, buffers);
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}
