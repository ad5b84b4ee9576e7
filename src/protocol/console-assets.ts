import { z } from 'zod';

/** The console page (`GET /console`): the HTML shell that loads console.js and console.css. */
export const ConsolePageSchema = z.string().meta({
  id: 'ConsolePage',
  description: 'The console HTML page; it loads /console/console.js and /console/console.css from this origin only.',
});

/** A built console file (`GET /console/:asset`). */
export const ConsoleAssetSchema = z
  .string()
  .meta({ id: 'ConsoleAsset', description: 'A file of the built console (JavaScript, CSS, source map).' });

/** Path parameters of `GET /console/:asset`. */
export const ConsoleAssetParamsSchema = z.object({ asset: z.string().max(128) }).strict();
