import { defineConfig } from 'vitest/config';
import { SummaryReporter } from './test/support/summary-reporter.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Integration suites start real servers (redis-server, dynalite, fauxqs, fake upstreams) on
    // loopback; two cores are plenty for forked files run side by side.
    pool: 'forks',
    maxWorkers: 2,
    // `node_modules/.bin/node` (Node 24, from the `node` devDependency) runs everything.
    reporters: ['default', new SummaryReporter()],
  },
});
