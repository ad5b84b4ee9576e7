import path from 'node:path';
import { commandEnvironment } from './command-env.js';
import type { CommandSpec, PreparedCommand, Sandbox } from './sandbox.js';

/**
 * No containment: the command runs on the host as the server's user, in the workspace, with an
 * environment still built from scratch (the server's own PATH and HOME, so its toolchain and caches keep working).
 * Used only where config or the caller's host_direct scope allows it.
 */
export class NoneSandbox implements Sandbox {
  readonly kind = 'none' as const;

  prepare(spec: CommandSpec): Promise<PreparedCommand> {
    const [file, ...args] = spec.argv;
    if (file === undefined) return Promise.reject(new Error('empty argv'));
    return Promise.resolve({
      kind: 'none',
      file,
      args,
      env: commandEnvironment(
        process.env.HOME ?? '/tmp',
        process.env.TMPDIR ?? '/tmp',
        spec.env,
        process.env.PATH ?? undefined,
      ),
      // Entered through the held descriptor (the child gets it as fd 3 before it changes directory), not by name.
      cwd:
        spec.cwd === spec.workspace ? '/proc/self/fd/3' : `/proc/self/fd/3/${path.relative(spec.workspace, spec.cwd)}`,
      inheritFds: [spec.workspaceFd],
      release: () => Promise.resolve(),
    });
  }
}
