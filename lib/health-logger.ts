/**
 * Where a dependency's changes of health are written: one warning when it stops serving, one line
 * when it serves again, never one per request (the cluster tier, the latest-OS feed). The function's
 * Powertools logger fits.
 */
export interface HealthLogger {
  warn: (message: string, fields: Record<string, unknown>) => void;
  info: (message: string, fields: Record<string, unknown>) => void;
}
