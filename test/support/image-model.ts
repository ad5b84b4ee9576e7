import type { FakeProvider } from './fake-provider.js';

/**
 * The `providers` config of a server whose `test-model` takes images (a model block without modalities takes
 * text only), on the fake provider; with `textModel`, also a `text-model` that takes text only.
 */
export function imageModelProviders(fake: Pick<FakeProvider, 'baseUrl'>, options: { textModel?: boolean } = {}) {
  return {
    openai: {
      apiKey: 'sk-test',
      baseUrl: fake.baseUrl,
      maxRetries: 0,
      models: {
        'test-model': { modalities: { input: ['text', 'image'] } },
        ...(options.textModel ? { 'text-model': {} } : {}),
      },
    },
  };
}
