import { z } from 'zod';

/** The body of `GET /metrics`: Prometheus text exposition format 0.0.4. */
export const MetricsTextSchema = z.string().meta({
  id: 'MetricsText',
  description:
    'Prometheus text exposition format 0.0.4 (`# HELP`, `# TYPE` and one `name{labels} value` line per series).',
});
