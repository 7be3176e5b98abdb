#!/usr/bin/env node
/**
 * The `mhl` command line: wires each command's flags (commander) to its module. Exit status is
 * 0 on success, 1 on failure, 2 on a usage error; every command prints its own `--help`.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { PathNotFoundError } from './files.js';
import { type Output, runLint } from './lint.js';

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
    .description('Lint, run and serve MHL workflows')
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
    .action((paths: string[], options: { format: 'text' | 'json' }) => {
      process.exitCode = runLint(paths, options, io);
    });

  return program;
}

function main(argv: readonly string[]): void {
  const program = buildProgram();
  try {
    program.parse(argv as string[]);
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode = e.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    if (e instanceof PathNotFoundError) {
      io.err(`mhl: ${e.message}`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    throw e;
  }
}

main(process.argv);
