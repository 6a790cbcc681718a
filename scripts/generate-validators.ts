import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VALIDATOR_MODULES, validatorSource } from './validators.ts';

/** `npm run generate:validators`: rewrites lib/validators/*.generated.ts from the schemas. */
const root = fileURLToPath(new URL('..', import.meta.url));
for (const module of VALIDATOR_MODULES) {
  await writeFile(join(root, module.file), validatorSource(module));
  process.stdout.write(`wrote ${module.file}\n`);
}
