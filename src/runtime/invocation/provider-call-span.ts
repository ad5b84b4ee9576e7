import type { LlmStreamEvent } from '../llm/llm-provider.js';
import type { TraceSpan } from '../ports/telemetry.js';
import type { InvocationContext } from './invocation-context.js';

/**
 * The span of one provider call (`chat <model>`, a child of the run's span) with the GenAI semantic conventions:
 * `gen_ai.system`, `gen_ai.provider.name`, `gen_ai.request.model`, the request's max tokens and temperature, the
 * usage the provider reported (`gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`) and its finish reasons.
 * The messages and the output only with `telemetry.capture_content` (`gen_ai.input.messages`,
 * `gen_ai.output.messages`, redacted); never the tools.
 */
export class ProviderCallSpan {
  private inputTokens = 0;
  private outputTokens = 0;
  private readonly finishReasons: string[] = [];
  /** The answer's text and tool calls, kept only when content is captured. */
  private output: { text: string; toolCalls: Array<{ id: string; name: string; arguments: string }> } | undefined;

  private constructor(private readonly span: TraceSpan) {
    if (span.capturesContent) this.output = { text: '', toolCalls: [] };
  }

  /** The call's span when the run is traced; undefined otherwise (nothing is allocated). */
  static start(
    ctx: InvocationContext,
    model: { providerName: string; modelName: string; maxTokens?: number; temperature?: number },
    messages: readonly unknown[],
  ): ProviderCallSpan | undefined {
    if (ctx.trace === undefined) return undefined;
    const span = ctx.trace.child(
      `chat ${model.modelName}`,
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.provider.name': model.providerName,
        'gen_ai.request.model': model.modelName,
        'gen_ai.request.max_tokens': model.maxTokens,
        'gen_ai.request.temperature': model.temperature,
      },
      'client',
    );
    span.setContent({ 'gen_ai.input.messages': messages });
    return new ProviderCallSpan(span);
  }

  /** Take what the span records from a stream event (the response's model and id, usage, finish reasons). */
  observe(event: LlmStreamEvent): void {
    if (event.type === 'response')
      this.span.setAttributes({ 'gen_ai.response.model': event.responseModel, 'gen_ai.response.id': event.responseId });
    else if (event.type === 'usage') {
      this.inputTokens += event.promptTokens;
      this.outputTokens += event.completionTokens;
    } else if (event.type === 'finish') this.finishReasons.push(event.finishReason);
    const output = this.output;
    if (output === undefined) return;
    if (event.type === 'text_delta') output.text += event.text;
    else if (event.type === 'tool_call_start')
      output.toolCalls[event.index] = { id: event.id, name: event.name, arguments: '' };
    else if (event.type === 'tool_call_delta') {
      const call = output.toolCalls[event.index];
      if (call !== undefined) call.arguments += event.argumentsDelta;
    }
  }

  /** End the span; a failed call is marked with its error's code (never its message: it may quote the request). */
  end(error: unknown): void {
    this.span.setAttributes({
      'gen_ai.usage.input_tokens': this.inputTokens,
      'gen_ai.usage.output_tokens': this.outputTokens,
      'gen_ai.response.finish_reasons': this.finishReasons,
    });
    if (this.output !== undefined) {
      const { text, toolCalls } = this.output;
      this.span.setContent({
        'gen_ai.output.messages': [{ role: 'assistant', content: text, tool_calls: toolCalls.filter(Boolean) }],
      });
    }
    if (error !== undefined) {
      const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'error';
      this.span.setAttributes({ 'error.type': code });
      this.span.fail(code);
    }
    this.span.end();
  }
}
