import type { z } from 'zod';
import type { TraceResponseSchema } from '../protocol/http.js';
import type { A3sError } from './a3s-error.js';
import { toAgentEvent } from './agent-event.js';
import { EventStream } from './event-stream.js';
import { seg, type HttpTransport } from './http-transport.js';

/** Events per page (the route's maximum). */
const PAGE = 1000;

/**
 * The session's retained events after a cursor, read page by page from GET /v1/sessions/:id/trace
 * (`events({follow: false})`): it ends after the newest retained event. Pages are fetched as the reader
 * asks, one ahead at most.
 */
export class PagedEventStream extends EventStream {
  private cursor: number;
  private fetching = false;
  private stopped = false;

  constructor(
    private readonly transport: HttpTransport,
    private readonly sessionId: string,
    after: number,
    runId: string | undefined,
    private readonly tenantId?: string,
  ) {
    super(runId);
    this.cursor = after;
    void this.fetchPage();
  }

  protected stop(): void {
    this.stopped = true;
  }

  protected override afterRead(): void {
    if (this.buffered === 0) void this.fetchPage();
  }

  private async fetchPage(): Promise<void> {
    if (this.fetching || this.stopped || this.ended) return;
    this.fetching = true;
    try {
      for (;;) {
        const page = await this.transport.get<z.infer<typeof TraceResponseSchema>>(
          `/v1/sessions/${seg(this.sessionId)}/trace`,
          { after: this.cursor, limit: PAGE, tenantId: this.tenantId },
        );
        if (this.stopped) return;
        if (page.events.length === 0) {
          this.finish();
          return;
        }
        let delivered = 0;
        for (const envelope of page.events) {
          this.cursor = Math.max(this.cursor, envelope.metadata.session_sequence);
          if (this.runId !== undefined && envelope.metadata.run_id !== this.runId) continue;
          this.push(toAgentEvent(envelope));
          delivered += 1;
        }
        if (page.events.length < PAGE) {
          this.finish();
          return;
        }
        // A page with nothing for the reader: read on; otherwise wait until it is read.
        if (delivered > 0) return;
      }
    } catch (error) {
      this.fail(error as A3sError);
    } finally {
      this.fetching = false;
    }
  }
}
