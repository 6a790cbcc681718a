import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Loads `.env` (or the file named by LOCAL_ENV_FILE; an empty LOCAL_ENV_FILE loads none) into
 * process.env. Variables already set in the environment win over the file, as with `node --env-file`.
 */
export const loadLocalEnvFile = (projectRoot: string): string | undefined => {
  const configured = process.env.LOCAL_ENV_FILE;
  if (configured !== undefined && configured.trim() === '') return undefined;
  const path = resolve(projectRoot, configured ?? '.env');
  if (!existsSync(path)) {
    if (configured !== undefined) throw new Error(`LOCAL_ENV_FILE names ${path}, which does not exist`);
    return undefined;
  }
  process.loadEnvFile(path);
  return path;
};
