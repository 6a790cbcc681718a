/**
 * True while any process of the process group led by `pid` is alive (signal 0 to the group), for
 * tests and benchmarks that check what a stack left behind (no vitest imports). The same probe as
 * scripts/local/process-group.ts uses on purpose, kept apart: a test of what that module stopped
 * should not ask that module.
 */
export const groupAlive = (pid: number): boolean => {
  // A group id read from output that lacked it is NaN, which `process.kill` rejects with a TypeError:
  // caught below, that would say "gone" and let a check of what was left running pass unseen.
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`not a process group id: ${pid}`);
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};
