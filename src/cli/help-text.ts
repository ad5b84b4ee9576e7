// The --help text of every command (what `a3s <command> --help` prints).

const CONNECTION = `Connection (flags > environment > ~/.config/a3s/cli.json {"url", "token"}; before or after the command):
  --url URL       the server (A3S_URL; default http://127.0.0.1:8080)
  --token TOKEN   bearer token (A3S_TOKEN); required unless the server is on a loopback address
  --no-forward    ask cluster nodes not to forward (A3S_ROUTE=no-forward): a 421 is followed once to the
                  owner URL it names, which must be reachable from here
  -h, --help      this help`;

const EXIT_CODES = `Exit codes: 0 completed and verification passed or skipped; 1 failed, cancelled or verification failed;
  2 usage or config error; 3 a confirmation is needed and --approve was not given, or the agent asks a question
  and stdin is not a terminal (answer it with the printed "a3s answer" command); 4 verification needs review;
  5 (run --patch-out) the run completed but changed no file: nothing written.`;

/** The help text of each command, and of `a3s` itself (key ''). */
export const HELP: Readonly<Record<string, string>> = {
  '': `a3s: drive an A3S Code Server from a shell or a CI job

Usage: a3s <command> [flags]

Commands:
  run "prompt"                 run a prompt in a new or existing session; answer on stdout, tool activity on stderr
  verify --subject S --cmd C   run verification commands in a session; exit code from the report
  sessions [ls|show ID|close ID]
                               list, show or close sessions
  events SESSION               print a session's events as NDJSON (--after N, --follow)
  approve SESSION TOOL_ID      answer a pending confirmation (--reject, --reason R)
  answer SESSION QUESTION_ID (--option TEXT | --decline | TEXT)
                               answer a question the agent asked (ask_user)
  steer SESSION TEXT           append input to the session's active run at its next safe point
  interrupt SESSION            stop the session's active run at its next safe point (--force: now)
  resume SESSION RUN_ID        resume a run from its checkpoint and follow it like run
  fork SESSION                 a new session with SESSION's transcript up to a run (--at-run) or message
  diff SESSION (RUN | --from R1 --to R2)
                               the patch a run (or a range of runs) made (--stat: the files with +/-)
  revert SESSION RUN           undo a run: its files and every later run's back, its messages hidden (--force)
  unrevert SESSION             redo what the last revert undid (--force)
  webhooks SESSION             the session's run webhook deliveries (status, attempts, last error)
  acp                          stdio bridge to the server's ACP endpoint, for editors (Zed agent_servers)
  token new                    make an API token and the api_token {} block (its hash) for the server config

Run "a3s <command> --help" for a command's flags. "a3s --version" prints the version.

${CONNECTION}

${EXIT_CODES}`,
  run: `Usage: a3s run [flags] "prompt"

Creates a session (or, with --session, resumes that one: created with that id when no such session exists),
runs the prompt, streams the answer text to stdout and tool activity to stderr, and exits with the run's outcome.
The prompt "-" reads the prompt from stdin; put "--" before a prompt that starts with "-".
When the agent asks a question (ask_user): on a terminal it is asked there (a number picks an option, other text
answers in your own words when the question allows it); otherwise it is printed with the "a3s answer" command to
run, and a3s exits 3 while the run waits on the server until the question's timeout.

Flags:
  --workspace DIR        the session's workspace (default: the server's default workspace); new sessions only
  --session ID           resume session ID instead of creating one (created with this id when it does not exist)
  --model M              "provider/model" for a new session
  --policy FILE          JSON {"permissionPolicy": {...}, "confirmationPolicy"?: {...}} for a new session
  --approve              approve tool confirmations as they come instead of exiting 3
  --json                 print the AgentResult as JSON on stdout instead of the answer text
  --wait-verification    require a verification report: a run without one exits 4
  --multitask STRATEGY   while the session runs another run: reject (default: exit 1, SESSION_BUSY), enqueue
                         (wait in its run queue), interrupt or rollback the active run (docs/runs.md)
  --patch-out FILE       once the run ended, write its patch (git unified diff, binary included: "git apply
                         --binary FILE" applies it) to FILE; nothing written when it changed no file (exit 5
                         instead of 0) or its patch was too large for the server to keep (exit 1 instead of 0)
  --keep                 keep the session this command creates (default: closed once the run ended, unless it
                         exits 3 with a question or confirmation waiting); --session sessions are always kept
  --attach FILE          send FILE with the prompt (repeatable): a png, jpeg, gif or webp image (by its magic
                         bytes) or UTF-8 text (text/plain, named by its base name); anything else exits 2.
                         Each is uploaded to the session first (docs/attachments.md)

${CONNECTION}

${EXIT_CODES}`,
  verify: `Usage: a3s verify --subject S --cmd COMMAND [--cmd COMMAND ...] [flags]

Runs the commands in order (each a required check, ids cmd-1, cmd-2, ...) through the server's verification
(host-direct: the token needs the host_direct scope), prints one line per check and the report's status.
Without --session a session is created in --workspace for the verification and closed afterwards.

Flags:
  --subject S        what is verified (the report's subject)
  --cmd COMMAND      a shell command that must exit 0 (repeatable, at least one)
  --session ID       verify in this existing session (its workspace; the report stays in it)
  --workspace DIR    the workspace of the session created for the verification
  --timeout-ms N     per-command timeout (default 300000)
  --json             print the VerificationReport as JSON

${CONNECTION}

Exit codes: 0 passed (or skipped), 1 failed, 2 usage or config error, 4 needs review.`,
  sessions: `Usage: a3s sessions [ls] [--json]
       a3s sessions show ID
       a3s sessions close ID

ls (the default) lists the caller's live sessions (one per line: id, state, workspace, model, messages);
show prints one session as JSON; close closes it (exit 1 when there is no such session).

Flags:
  --json     ls: print the list as JSON

${CONNECTION}`,
  webhooks: `Usage: a3s webhooks SESSION [--json]

Prints the session's run webhook deliveries (docs/webhooks.md), newest first, one a line: delivery id (the
A3S-Delivery-Id header), event, status (pending, delivered or failed), attempts, run id, and the last error
("-" when none; JSON-quoted when it holds a control character).

Flags:
  --json     print the list as JSON

${CONNECTION}`,
  events: `Usage: a3s events SESSION [--after N] [--follow]

Prints the session's retained events as NDJSON, one EventEnvelopeV1 {version, type, payload, metadata} a line,
oldest first. --after N starts after session_sequence N (the resume cursor); --follow keeps printing new events
until the session is closed or Ctrl-C.

Flags:
  --after N     only events with session_sequence > N
  --follow      keep following

${CONNECTION}`,
  approve: `Usage: a3s approve SESSION TOOL_ID [--reject] [--reason R]

Answers the pending confirmation of tool call TOOL_ID (the id "a3s run" printed when it exited 3) in SESSION:
approves it, or rejects it with --reject. Exit 1 when no such confirmation is pending (or it is already settled).

Flags:
  --reject      reject instead of approve
  --reason R    the reason recorded with the answer

${CONNECTION}`,
  answer: `Usage: a3s answer SESSION QUESTION_ID (--option TEXT | --decline | TEXT...)

Answers the question QUESTION_ID the agent asked in SESSION (the ask_user tool; the ids "a3s run" printed when it
exited 3): --option picks one of its options (exactly as offered), --decline says the user will not answer (the
agent goes on without it), other words are a free-text answer. Exit 1 when
no such question is pending (it was answered, timed out or its run ended); 2 for an option not offered, or free
text to a question that takes options only.

Flags:
  --option TEXT   one of the question's options
  --decline       the user will not answer

${CONNECTION}`,
  steer: `Usage: a3s steer SESSION TEXT... [--run RUN_ID] [--request-id ID]

Queues TEXT for the session's active run (or RUN_ID): it is appended as a user message at the run's next safe
point (before its next provider call). Prints the receipt (accepted, applied, settled or rejected). Exit 1 when
the run is not running or the steer was rejected. The same --request-id again answers the same receipt.

Flags:
  --run RUN_ID       the run to steer (default: the session's active run)
  --request-id ID    the idempotency key (default: a new random one)

${CONNECTION}`,
  interrupt: `Usage: a3s interrupt SESSION [--force] [--reason R] [--run RUN_ID]

Stops the session's active run (or RUN_ID) at its next safe point, keeping what it did (status cancelled); with
--force it stops now, like a cancel. Prints the receipt. Exit 1 when the run is not running.

Flags:
  --force        stop now instead of at the next safe point
  --reason R     the reason recorded (the run's error message)
  --run RUN_ID   the run to interrupt (default: the session's active run)

${CONNECTION}`,
  diff: `Usage: a3s diff SESSION RUN [--stat | --json]
       a3s diff SESSION --from RUN1 --to RUN2 [--stat | --json]

Prints the patch run RUN of SESSION made (its change set: the git unified diff from the workspace before the run's
first call that could change files to the workspace after its last round, binary included; "git apply --binary"
applies it), or with --from/--to one diff from RUN1's start to RUN2's end. The session must be open (a closed one
answers SESSION_CLOSED: "a3s run" closes the session it created unless --keep; --patch-out writes the patch
before). What the capture left out is noted on stderr. Exit 1 when the run is still running (CHANGES_CAPTURING), has no change set (NO_CHANGE_SET,
e.g. it made no call that could change files), its patch was too large to keep (--stat still lists the files), or
there is no such run or session (docs/changes.md).

Flags:
  --from RUN1   the run whose start begins the range
  --to RUN2     the run whose end ends the range
  --stat        one line per file: A|M|D|R, +added, -removed ("bin" for a binary file), the path; then a total
  --json        print the change set (or range) as JSON

${CONNECTION}`,
  revert: `Usage: a3s revert SESSION RUN [--force] [--json]

Reverts run RUN of SESSION: each file it or a later run changed goes back to how it was before RUN (files they
added are removed), and the transcript from RUN on is hidden from the model (its events stay). Prints one line per
path written or removed ("restored" or "deleted", a tab, the path) and what was reverted on stderr. Needs the runs'
change sets ("a3s diff" shows them) and no active run. "a3s unrevert" undoes it until the session's next run,
which drops the reverted messages for good.

Exit 1 when the server refuses, naming the code on stderr: REVERT_CONFLICT (a file was changed since the last
run, by a person or another session; the paths are listed, --force overwrites them), REVERT_UNAVAILABLE (the run
was compacted into a summary since, or is already reverted), NO_CHANGE_SET, SESSION_BUSY, RUN_NOT_FOUND.
Exit 2 for usage errors (docs/changes.md).

Flags:
  --force   write the files changed since the last capture too
  --json    print the server's answer {run_id, reverted_run_ids, files, messages, tree} as JSON

${CONNECTION}`,
  unrevert: `Usage: a3s unrevert SESSION [--force] [--json]

Undoes SESSION's revert: the reverted runs' files back to how the last of them left them, and their messages
visible to the model again. The same output as "a3s revert". Exit 1 when the server refuses: NOTHING_REVERTED
(nothing is reverted, or a run started since the revert), REVERT_CONFLICT (a file was changed since the revert;
the paths are listed, --force overwrites them), SESSION_BUSY. Exit 2 for usage errors.

Flags:
  --force   write the files changed since the revert too
  --json    print the server's answer as JSON

${CONNECTION}`,
  acp: `Usage: a3s acp [--url URL] [--token T]

A stdio bridge for editors that launch local agents (Zed "agent_servers", JetBrains, Neovim): reads ACP
JSON-RPC messages, one a line, on stdin, sends them to the server's /acp WebSocket, and prints every message
the server sends as one line on stdout. The token goes in the Authorization header. Ends when stdin ends or
the server closes the connection (exit 1 with the close code on stderr unless it was a normal close).

${CONNECTION}`,
  resume: `Usage: a3s resume SESSION RUN_ID [--approve] [--json] [--wait-verification]

Resumes run RUN_ID of SESSION from its last loop checkpoint (a new run) and follows it like "a3s run": answer text
on stdout, tool activity on stderr, the same exit codes. Needs a durable session store on the server.

Flags:
  --approve              approve tool confirmations as they come instead of exiting 3
  --json                 print the AgentResult as JSON
  --wait-verification    require a verification report: a run without one exits 4

${CONNECTION}

${EXIT_CODES}`,
  fork: `Usage: a3s fork SESSION [--at-run RUN_ID | --at-message N] [--id NEW] [--json]

Forks SESSION: a new session of your tenant with its transcript up to just before run RUN_ID, its first N
messages (indexes of its history), or all of it, on the same workspace and with its options checked again with
your token's scopes. Grants, hooks, hosts and pending confirmations or questions are not copied. Prints the new
session's id on stdout (where it came from on stderr). A refused fork prints the error on stderr: exit 2 for a
bad or forbidden request (400, 403), 1 otherwise (409: the id is taken, the run was compacted since).

Flags:
  --at-run RUN_ID    fork from just before this run (the transcript as the run found it)
  --at-message N     keep the first N messages
  --id NEW           the new session's id (default: generated)
  --json             print the new session's info as JSON instead of its id

${CONNECTION}`,
  token: `Usage: a3s token new [--principal P] [--tenant T] [--scope S]... [--json]

Makes a new API token (32 random bytes, "a3s_" and base64url) on this machine, without asking a server, and prints
it once with the api_token {} block for the server's config, which holds only the token's SHA-256: keep the token
for the client (A3S_TOKEN, --token, ~/.config/a3s/cli.json) and put the block in the server's config.

Flags:
  --principal P   who the token speaks for (default "local")
  --tenant T      its tenant (default "default")
  --scope S       sessions, host_direct or admin; repeat for more (default sessions)
  --json          print {token, tokenSha256, principal, tenantId, scopes} as one JSON line`,
};
