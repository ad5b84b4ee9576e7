import type { A3sError } from './a3s-error.js';
import type { AgentEvent } from './agent-event.js';

/**
 * A stream of AgentEvents, read as the seed's SDK reads it: `const {value, done} = await stream.next()`
 * (done once it has ended), or `for await (const e of stream)`, or `nextEvent()` (null once it has ended).
 * Events are buffered from the moment the stream exists, so nothing is lost between creating it and reading.
 * A failure (an unrecoverable close code, reconnect attempts exhausted) rejects the next read after the
 * events already received. `close()` ends it at once.
 */
export abstract class EventStream implements AsyncIterable<AgentEvent> {
  /** The run this stream follows (set for `session.stream()` and `events({runId})`). */
  readonly runId: string | undefined;
  private readonly queue: AgentEvent[] = [];
  private head = 0;
  private waiter: { resolve(event: AgentEvent | null): void; reject(error: unknown): void } | undefined;
  private done = false;
  private failure: A3sError | undefined;

  protected constructor(runId: string | undefined) {
    this.runId = runId;
  }

  /** Events received but not read yet. */
  get buffered(): number {
    return this.queue.length - this.head;
  }

  /** True once the stream has ended (after its last event is read, next() answers `{done: true}`). */
  get ended(): boolean {
    return this.done;
  }

  /** The seed's iterator read: `{value: event, done: false}`, then `{value: undefined, done: true}` once ended; rejects with the stream's failure. */
  async next(): Promise<IteratorResult<AgentEvent, undefined>> {
    const event = await this.nextEvent();
    return event === null ? { done: true, value: undefined } : { done: false, value: event };
  }

  /** The next event, or null when the stream has ended; rejects with the stream's failure. */
  nextEvent(): Promise<AgentEvent | null> {
    if (this.head < this.queue.length) {
      const event = this.queue[this.head];
      this.head += 1;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue.splice(0, this.head);
        this.head = 0;
      }
      this.afterRead();
      return Promise.resolve(event);
    }
    if (this.failure) return Promise.reject(this.failure);
    if (this.done) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** Every remaining event, until the stream ends. */
  async collect(): Promise<AgentEvent[]> {
    const all: AgentEvent[] = [];
    for (let event = await this.nextEvent(); event !== null; event = await this.nextEvent()) all.push(event);
    return all;
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    return {
      next: () => this.next(),
      return: async () => {
        this.close();
        return { done: true, value: undefined };
      },
    };
  }

  /** Stop receiving: the stream ends (events already buffered are dropped). Idempotent. */
  close(): void {
    this.queue.length = 0;
    this.head = 0;
    this.finish();
    this.stop();
  }

  /** Release the source (socket, timers). */
  protected abstract stop(): void;

  /** Called after each read (a source may resume once the buffer drained). */
  protected afterRead(): void {}

  /** Hand an event to the reader. */
  protected push(event: AgentEvent): void {
    if (this.done) return;
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter.resolve(event);
      return;
    }
    this.queue.push(event);
  }

  /** End the stream after the buffered events. */
  protected finish(): void {
    if (this.done) return;
    this.done = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve(null);
  }

  /** End the stream with a failure (read after the buffered events). */
  protected fail(error: A3sError): void {
    if (this.done) return;
    this.done = true;
    this.failure = error;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(error);
  }
}
