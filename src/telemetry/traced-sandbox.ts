import type { PreparedCommand, Sandbox } from '../runtime/sandbox/sandbox.js';
import type { Telemetry, TraceSpan } from '../runtime/ports/telemetry.js';

/**
 * The server's sandbox with a span per contained command of a traced run (docs/operations.md "Traces"):
 * `sandbox.exec` from its preparation to its release (the process and its pipes gone), a child of the active
 * tool call's (or run's, for change capture's git) span, with the sandbox kind, the network and whether the
 * server itself runs it. Never the command line, its environment or output: a model-chosen command is content.
 */
export function traceSandbox(sandbox: Sandbox, telemetry: Telemetry): Sandbox {
  const traced = async (
    serverCommand: boolean,
    network: string,
    prepare: () => Promise<PreparedCommand>,
  ): Promise<PreparedCommand> => {
    const active = telemetry.active();
    if (active === undefined) return prepare();
    const span = active.child('sandbox.exec', {
      'a3s.sandbox.kind': sandbox.kind,
      'a3s.sandbox.network': network,
      'a3s.sandbox.server_command': serverCommand,
    });
    let prepared: PreparedCommand;
    try {
      prepared = await prepare();
    } catch (error) {
      failed(span, error);
      throw error;
    }
    return {
      ...prepared,
      release: () =>
        prepared.release().then(
          () => span.end(),
          (error: unknown) => {
            failed(span, error);
            throw error;
          },
        ),
    };
  };
  const prepareServerCommand = sandbox.prepareServerCommand?.bind(sandbox);
  return {
    kind: sandbox.kind,
    prepare: (spec) => traced(false, spec.network, () => sandbox.prepare(spec)),
    ...(prepareServerCommand
      ? { prepareServerCommand: (spec) => traced(true, 'none', () => prepareServerCommand(spec)) }
      : {}),
    ...(sandbox.homeOf ? { homeOf: sandbox.homeOf.bind(sandbox) } : {}),
    ...(sandbox.removeHome ? { removeHome: sandbox.removeHome.bind(sandbox) } : {}),
  };
}

function failed(span: TraceSpan, error: unknown): void {
  span.fail(error instanceof Error ? error.name : 'error');
  span.end();
}
