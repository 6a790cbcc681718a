/** Sets each variable to its value, or removes it where the value is undefined. */
export const setEnvironment = (values: Readonly<Record<string, string | undefined>>): void => {
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
};

/** Notes the values `names` have now; the function returned puts them back (unset ones unset). */
export const saveEnvironment = (names: readonly string[]): (() => void) => {
  const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
  return () => setEnvironment(saved);
};

/** Removes `names` from the environment. */
export const clearEnvironment = (names: readonly string[]): void => {
  for (const name of names) delete process.env[name];
};
