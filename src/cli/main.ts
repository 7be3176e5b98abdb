/**
 * The `mhl` command line: wires each command's flags (commander) to its module. Exit status is
 * 0 on success, 1 on failure, 2 on a usage error; every command prints its own `--help`.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import type { Output } from './lint.js';
import type { PackCliOptions } from './pack.js';
import type { RunCliOptions } from './run.js';
import type { SecretsAction, SecretsCliOptions } from './secrets.js';
import type { ServeOptions } from './serve.js';
import type { ServiceCliOptions, ServiceCommand } from './service.js';
import type { TestCliOptions } from './test.js';

// Each command's module is imported when the command runs, so `mhl --version` and a stdio
// server do not pay for loading what they never use.

const EXIT_USAGE = 2;

const io: Output = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

function buildProgram(): Command {
  const program = new Command('mhl')
    .description('Lint, test, run and serve MHL workflows')
    .version(version(), '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)');

  program
    .command('lint')
    .description('statically check .mh files (folders are searched recursively)')
    .argument('[paths...]', 'files or folders to check', [])
    .addOption(
      new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'),
    )
    .action(async (paths: string[], options: { format: 'text' | 'json' }) => {
      const { runLint } = await import('./lint.js');
      process.exitCode = runLint(paths, options, io);
    });

  program
    .command('run')
    .description('run a pipeline or workflow, checkpointing after every step')
    .argument('<file>', 'the .mh file to run')
    .option(
      '--input <key=value>',
      'an input value (repeatable); numbers, bools and JSON are coerced by declared type',
      collect,
      [],
    )
    .option('--pipeline <name>', 'which pipeline to run when the file declares several')
    .option('--resume', 'continue the latest (or --session) run from its last checkpoint', false)
    .option(
      '--force',
      'with --resume: resume even if the pipeline changed since the checkpoint',
      false,
    )
    .option('--session <id>', 'the session to start or resume')
    .option('--state-dir <dir>', 'where .mhl/ state lives (default: the current directory)')
    .addOption(
      new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'),
    )
    .option('--dry-run', 'check the file and print the plan without running anything', false)
    .action(async (file: string, options: RunCliOptions & { input: string[] }) => {
      const { runRun } = await import('./run.js');
      process.exitCode = await withInterrupts((signal) => runRun(file, options, io, signal));
    });

  program
    .command('test')
    .description('run the test blocks of .mh files (folders are searched recursively)')
    .argument('[paths...]', 'files or folders to test (default: the current folder)')
    .addOption(
      new Option('--format <format>', 'output format')
        .choices(['text', 'json', 'tap'])
        .default('text'),
    )
    .option('--timeout-ms <ms>', 'bounds each describe case', '300000')
    .option('--filter <text>', 'run only the cases whose "Test › case" name contains this text')
    .action(async (paths: string[], options: TestCliOptions) => {
      const { runTest } = await import('./test.js');
      process.exitCode = await withInterrupts((signal) => runTest(paths, options, io, signal));
    });

  program
    .command('init')
    .description('scaffold a runnable workflow folder (never overwrites a file)')
    .argument('[dir]', 'where to write it (created if missing)', '.')
    .action(async (dir: string) => {
      const { runInit } = await import('./init.js');
      process.exitCode = runInit(dir, io);
    });

  const serve = program
    .command('serve')
    .description('serve a folder of workflows to AI agents and their hosts');
  serve
    .command('mcp')
    .description('serve every workflow under DIR as an MCP tool (stdio or Streamable HTTP)')
    .argument('[dir]', 'the folder of .mh workflows', '.')
    .addOption(new Option('--transport <transport>', 'the transport').choices(['stdio', 'http']))
    .option('--http', 'serve over Streamable HTTP (same as --transport http)')
    .option('--addr <host>', 'HTTP: the address to bind (default 127.0.0.1)')
    .option('--port <port>', 'HTTP: the port to bind, 0 for any free one (default 8787)')
    .option('--token <token>', 'HTTP: require Authorization: Bearer <token> (env MHL_SERVE_TOKEN)')
    .option(
      '--principal-header <name>',
      'HTTP: read the caller identity from this header; needs a token (env MHL_SERVE_PRINCIPAL_HEADER)',
    )
    .option(
      '--public-url <url>',
      'HTTP: the base URL clients reach the server at, for the Agent Card (env MHL_SERVE_PUBLIC_URL)',
    )
    .option(
      '--workflows-pack <file>',
      'HTTP: read every workflow file from this DMPK pack, not DIR (key in env MHL_SERVE_WORKFLOWS_KEY)',
    )
    .option(
      '--profile <name>',
      'which surfaces to serve: pipelines (the default), workflow-engine (DIR is a release), sessions (DIR holds workflow-server folders)',
    )
    .option(
      '--migration-target <release-dir>',
      'workflow-engine: a newer release checkpoints may migrate to',
    )
    .option('--cwd <dir>', 'working directory for calls without context.cwd (default: here)')
    .option(
      '--require-cwd',
      'refuse calls without an absolute context.cwd (a host shared by several repositories)',
    )
    .option(
      '--no-catalog-cache',
      'check every workflow afresh rather than reuse the last start of an unchanged folder',
    )
    .option('--json', 'not supported: serve logs JSON lines on stderr already')
    .option('--default-timeout-ms <ms>', 'bounds every call', '300000')
    .option(
      '--max-active <n>',
      'execution slots shared by direct calls, jobs and async runs (default 32)',
    )
    .option(
      '--max-runs-per-caller <n>',
      'async runs one caller may hold, finished ones included (default 1000; its oldest finished goes first)',
    )
    .option(
      '--max-queued-per-caller <n>',
      'async runs of one caller that may wait for an execution slot (default 250)',
    )
    .option(
      '--state-dir <dir>',
      'HTTP: keep async runs here so a later process can resume them (env MHL_SERVE_STATE_DIR)',
    )
    .option(
      '--store <url>',
      'keep runs and sessions in this store: postgres://… shared by replicas, or file:///dir (env MHL_SERVE_STORE)',
    )
    .option(
      '--single-replica',
      'acknowledge one writer, so a store without compare-and-swap may be used (env MHL_SERVE_SINGLE_REPLICA)',
    )
    .option(
      '--drain-timeout <duration>',
      'on shutdown, let working async runs finish for up to this long (e.g. 30s; default 0)',
    )
    .option(
      '--max-sessions <n>',
      'HTTP: legacy sessions held at once; past it a new initialize is refused (default 10000)',
    )
    .option(
      '--max-sessions-per-client <n>',
      'HTTP: legacy sessions one client (principal, else address) holds at once (default 100)',
    )
    .option('--headers-timeout <duration>', "HTTP: deadline for a request's headers (default 10s)")
    .option(
      '--body-timeout <duration>',
      "HTTP: deadline for a request's body once its headers are in (default 10s)",
    )
    .option(
      '--request-timeout <duration>',
      'HTTP: deadline for a whole request, headers and body; not its answer (default 30s)',
    )
    .option('--max-connections <n>', 'HTTP: connections open at once (default 512)')
    .option(
      '--max-connections-per-address <n>',
      'HTTP: connections open at once from one address (default 256)',
    )
    .option(
      '--body-buffer-mib <n>',
      'HTTP: MiB of request bodies held in memory at once, all connections together (default 8)',
    )
    .addOption(new Option('--max-queued <n>').hideHelp())
    // Written by `mhl service install` into its unit; readiness reports it (docs/service.md).
    .addOption(new Option('--configuration-id <id>').hideHelp())
    .action(async (dir: string, options: ServeOptions) => {
      const { runServe } = await import('./serve.js');
      // Exit at once: once serving has ended, whatever still holds the event loop is work that
      // ignored cancellation past the shutdown budget (MCP_SHUTDOWN_TIMEOUT), not ours to wait for.
      process.exit(await runServe(dir, options, io, version()));
    });

  serve
    .command('a2a')
    .description('serve every workflow under DIR as an A2A skill (HTTP, A2A 1.0 and 0.3)')
    .argument('[dir]', 'the folder of .mh workflows', '.')
    .option('--addr <host>', 'the address to bind (default 127.0.0.1)')
    .option('--port <port>', 'the port to bind, 0 for any free one (default 8710)')
    .option('--token <token>', 'require Authorization: Bearer <token> (env MHL_SERVE_TOKEN)')
    .option(
      '--principal-header <name>',
      'read the caller identity from this header; needs a token (env MHL_SERVE_PRINCIPAL_HEADER)',
    )
    .option(
      '--public-url <url>',
      'the base URL clients reach the server at, for the Agent Card (env MHL_SERVE_PUBLIC_URL)',
    )
    .option(
      '--workflows-pack <file>',
      'read every workflow file from this DMPK pack, not DIR (key in env MHL_SERVE_WORKFLOWS_KEY)',
    )
    .option('--cwd <dir>', 'working directory for tasks without context.cwd (default: here)')
    .option('--require-cwd', 'refuse tasks whose input has no absolute context.cwd')
    .option(
      '--no-catalog-cache',
      'check every workflow afresh rather than reuse the last start of an unchanged folder',
    )
    .option('--max-active <n>', 'execution slots shared by all tasks (default 32)')
    .option('--max-runs-per-caller <n>', 'tasks one caller may hold, finished ones included')
    .option('--max-queued-per-caller <n>', 'tasks of one caller that may wait for a slot')
    .option('--state-dir <dir>', 'keep tasks here so a later process can serve them')
    .option('--drain-timeout <duration>', 'on shutdown, let working tasks finish this long')
    .option('--headers-timeout <duration>', "deadline for a request's headers (default 10s)")
    .option('--body-timeout <duration>', "deadline for a request's body (default 10s)")
    .option('--request-timeout <duration>', 'deadline for a whole request (default 30s)')
    .option('--max-connections <n>', 'connections open at once (default 512)')
    .option('--max-connections-per-address <n>', 'connections from one address (default 256)')
    .option('--body-buffer-mib <n>', 'MiB of request bodies held at once (default 8)')
    .action(async (dir: string, options: ServeOptions) => {
      const { runServe } = await import('./serve.js');
      process.exit(await runServe(dir, options, io, version(), 'a2a'));
    });

  program
    .command('pack')
    .description('encrypt a folder of workflows into a DMPK pack for serve --workflows-pack')
    .argument('<dir>', 'the folder to pack (every non-hidden file)')
    .requiredOption('-o, --output <file>', 'where to write the pack (mode 0600)')
    .option(
      '--new-key',
      'make a new key and print only it on stdout (else env MHL_SERVE_WORKFLOWS_KEY)',
      false,
    )
    .action(async (dir: string, options: PackCliOptions) => {
      const { runPack } = await import('./pack.js');
      // SIGINT and SIGTERM stop the write and remove its temp file.
      process.exitCode = await withInterrupts((signal) =>
        runPack(dir, options, io, process.env, signal),
      );
    });

  const secrets = program
    .command('secrets')
    .description('manage the local secret vault that vault("NAME") reads (docs/secrets.md)');
  const secretAction = (action: SecretsAction, description: string) =>
    secrets
      .command(action)
      .description(description)
      .option('--json', 'print one JSON object', false);
  const withValue = (action: 'add' | 'edit', description: string) =>
    secretAction(action, description)
      .argument('<name>', 'the secret name vault("NAME") uses')
      .addOption(
        new Option(
          '--kind <kind>',
          'its kind (generic, password, token, api_key, basic, private_key)',
        ),
      )
      .option('--label <text>', 'a description for people')
      .option('--stdin', 'read the value from standard input even on a terminal', false)
      .option(
        '--open',
        'print a single-use link to the running local server’s setup page instead',
        false,
      )
      .option('--port <port>', 'with --open: the local server’s port (default 8787)')
      .action(async (name: string, options: SecretsCliOptions) => {
        const { runSecrets } = await import('./secrets.js');
        process.exitCode = await runSecrets(action, name, options, io);
      });
  withValue('add', 'add a secret; the value comes from standard input (or --open: a setup page)');
  withValue('edit', 'change a secret’s value (and kind or label); the value as for add');
  secretAction('list', 'list the secrets: id, name, kind, label, created, updated; never a value')
    .addOption(new Option('--kind <kind>', 'only this kind'))
    .action(async (options: SecretsCliOptions) => {
      const { runSecrets } = await import('./secrets.js');
      process.exitCode = await runSecrets('list', undefined, options, io);
    });
  secretAction('remove', 'remove a secret')
    .argument('<name>', 'the secret name')
    .action(async (name: string, options: SecretsCliOptions) => {
      const { runSecrets } = await import('./secrets.js');
      process.exitCode = await runSecrets('remove', name, options, io);
    });

  addServiceCommands(program);

  program
    .command('lsp')
    .description('serve the Language Server Protocol on stdio, for editors (see docs/editors.md)')
    .option('--stdio', 'use stdin/stdout (the default and only transport; editors often pass it)')
    // Node-based clients pass the editor's pid; vscode-languageserver reads it from argv and
    // exits when that process is gone.
    .addOption(new Option('--clientProcessId <pid>').hideHelp())
    .action(async () => {
      const { runLsp } = await import('./lsp.js');
      runLsp(version());
    });

  return program;
}

/** `mhl service …`: the managed per-user service (docs/service.md). */
function addServiceCommands(program: Command): void {
  const service = program
    .command('service')
    .description('run `mhl serve mcp --http` as a per-user systemd service (docs/service.md)');
  const action =
    (command: ServiceCommand) =>
    async (...args: unknown[]): Promise<void> => {
      const { runService } = await import('./service.js');
      const dir = command === 'install' ? (args[0] as string | undefined) : undefined;
      const options = (command === 'install' ? args[1] : args[0]) as ServiceCliOptions;
      process.exitCode = await runService(command, dir, options, io, version(), process.env);
    };
  const output = (cmd: Command) =>
    cmd
      .option('--json', 'print the schema-version-1 JSON result')
      .option('--quiet', 'print nothing on success (diagnostics still go to stderr)');
  output(
    service
      .command('install')
      .description('register the service (and start it, unless --no-start)')
      .argument('[dir]', 'the folder of .mh workflows to serve', '.')
      .option('--cwd <dir>', 'working directory for calls without context.cwd (default: here)')
      .option('--port <port>', 'the loopback port (default 8787)')
      .option('--max-active <n>', 'execution slots (default 32)')
      .option('--default-timeout-ms <ms>', 'bounds every call (default 300000)')
      .option('--no-start', 'register or reconcile only; start or stop nothing'),
  ).action(action('install'));
  const verbs: [ServiceCommand, string][] = [
    ['start', 'start the registered service and wait for its readiness (15 s)'],
    ['stop', 'stop exactly the registered service (5 s graceful, 15 s in all)'],
    ['restart', 'stop, then start the service and wait for a new instance'],
    ['uninstall', 'stop and remove the service and its state; user files stay'],
    ['status', 'report every layer of the service; repairs and starts nothing'],
  ];
  for (const [verb, description] of verbs) {
    output(service.command(verb).description(description)).action(action(verb));
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * Runs `task` with a signal that SIGINT and SIGTERM abort, so a run stops at a safe point with
 * its last checkpoint kept. A second signal exits at once.
 */
async function withInterrupts(task: (signal: AbortSignal) => Promise<number>): Promise<number> {
  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(1);
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await task(controller.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function main(argv: readonly string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv as string[]);
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode = e.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    throw e;
  }
}

// Not a top-level await: the bundle runs as a script (launch.ts); a rejection still exits 1.
void main(process.argv);
