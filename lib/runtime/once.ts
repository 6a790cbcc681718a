/** Runs `load` once and remembers the result (or the error, so every request answers the same). */
export const once = <T>(load: () => T): (() => T) => {
  let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
  return () => {
    outcome ??= (() => {
      try {
        return { ok: true as const, value: load() };
      } catch (error) {
        return { ok: false as const, error };
      }
    })();
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  };
};
