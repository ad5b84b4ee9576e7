import { CommandAnswerSchema, DEFAULT_COMMAND_TIMEOUT_MS, type CommandContext } from '../../protocol/commands.js';
import { askHost, type HostEndpoint } from '../policy/host-bridge/ask-host.js';
import { describeHostFailure } from '../policy/host-bridge/host-bridge-error.js';
import type { WebSocketHostRegistry } from '../policy/host-bridge/websocket-host-registry.js';
import { CommandFailure } from './command-failure.js';
import type { SlashCommand } from './slash-command.js';

/** Where a websocket command without a connection id goes: the session's registered host connections. */
export interface RemoteCommandHosts {
  readonly registry: WebSocketHostRegistry;
  readonly tenantId: string;
  readonly sessionId: string;
}

function endpointOf(command: SlashCommand, hosts: RemoteCommandHosts): HostEndpoint {
  if (command.kind === 'webhook')
    return {
      kind: 'webhook',
      url: command.url ?? '',
      ...(command.headers ? { headers: command.headers } : {}),
      allowPrivateNetworks: command.allowPrivateNetworks,
    };
  const connectionId = command.connectionId ?? hosts.registry.hostsOf(hosts.tenantId, hosts.sessionId).at(-1);
  if (connectionId === undefined)
    throw new CommandFailure(
      'COMMAND_FAILED',
      `/${command.name}: no WebSocket host is connected to this session (send {"type":"host_register"} on an events WebSocket of the session)`,
    );
  return { kind: 'websocket', connectionId };
}

/**
 * Run a webhook or websocket command through the host bridge: a webhook gets the context as JSON (POST,
 * with `kind: "command"` and `request_id`), a WebSocket host a `command_request` frame; both answer
 * `{text}`. A timeout (timeoutMs, default 10 s), an HTTP error, a bad answer or a missing host throws
 * CommandFailure naming the command; aborting `signal` (the run's) aborts the request.
 */
export async function runRemoteCommand(
  command: SlashCommand,
  ctx: CommandContext,
  hosts: RemoteCommandHosts,
  signal: AbortSignal,
): Promise<string> {
  const endpoint = endpointOf(command, hosts);
  const timeoutMs = command.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  let answer: unknown;
  try {
    answer = await askHost(
      endpoint,
      'command',
      { ...ctx },
      { timeoutMs, signal, registry: hosts.registry, frame: 'command_request' },
    );
  } catch (error) {
    if (signal.aborted) throw error;
    const { failure, message } = describeHostFailure(error);
    throw new CommandFailure(
      'COMMAND_FAILED',
      `/${command.name}: the ${command.kind} command failed (${failure}): ${message}`,
    );
  }
  const parsed = CommandAnswerSchema.safeParse(answer);
  if (!parsed.success)
    throw new CommandFailure(
      'COMMAND_FAILED',
      `/${command.name}: the ${command.kind} command gave a bad answer: expected {"text": "..."}`,
    );
  return parsed.data.text;
}
