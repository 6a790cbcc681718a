/** A logger with `warn` and `info` that keeps its lines, for code that takes such a logger (the cache tiers). */
export const recordingLogger = () => {
  const lines: { level: 'warn' | 'info'; message: string; fields: Record<string, unknown> }[] = [];
  return {
    lines,
    warn: (message: string, fields: Record<string, unknown>) => void lines.push({ level: 'warn', message, fields }),
    info: (message: string, fields: Record<string, unknown>) => void lines.push({ level: 'info', message, fields }),
  };
};
