/** Runs `work` with stdout discarded: the handlers' access lines would drown the figures. */
export const quietly = async <T>(work: () => Promise<T>): Promise<T> => {
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    return await work();
  } finally {
    process.stdout.write = write;
  }
};
