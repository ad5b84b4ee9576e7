import { defineConfig } from 'vitest/config';

/** Test configuration: integration tests run real servers, so allow generous timeouts. */
export const config = defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One throwaway redis-server for the whole run (tests read its URL with inject('redisUrl')).
    globalSetup: ['test/support/global-setup.ts'],
  },
});

// vitest loads the default export of its config file.
// eslint-disable-next-line no-restricted-syntax
export default config;
