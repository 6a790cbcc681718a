/**
 * Waiters woken whenever something changed, each then looking at the state again: the one way a
 * loop waits for another part of its run (a message from a thread, a batch taken) without a queue.
 */
export interface ChangeSignal {
  /** Resolves at the next `notify`. */
  next(): Promise<void>;
  /** Wakes every waiter. */
  notify(): void;
}

export const makeChangeSignal = (): ChangeSignal => {
  const waiters = new Set<() => void>();
  return {
    next: () => new Promise<void>((resolve) => waiters.add(resolve)),
    notify: () => {
      for (const resolve of waiters) resolve();
      waiters.clear();
    },
  };
};
