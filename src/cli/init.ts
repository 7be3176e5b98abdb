/**
 * `mhl init [dir]`: writes a small workflow folder that `mhl lint`, `mhl test`, `mhl run` and
 * `mhl serve mcp` accept as is: a workflow with an input and a step that renders a prompt file,
 * a test of it, and a README line on how to serve it. It never overwrites: when any file it
 * would write exists, it writes nothing and names the file (exit 1). A folder that holds other
 * files is fine. Needs no AI CLI: the step only renders the prompt; the README shows where an
 * agent call goes.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { displayPath } from './files.js';
import type { Output } from './lint.js';

const MAIN = `// A workflow served as an MCP tool named Greet (mhl serve mcp .). Its step renders the prompt
// in prompts/greet.prompt.md; hand the text to an agent (see README.md) to make it act.
prompt GreetPrompt(name: string, tone: string) from "prompts/greet.prompt.md"

workflow Greet {
    description: "Write a greeting for someone"
    input name: string
    input tone: string = "warm"
    var greeting = ""
    output: { greeting: greeting }

    step Compose {
        greeting = GreetPrompt(name: name, tone: tone)
        log("composed a \${tone} greeting for \${name}")
    }
}

test GreetTests {
    describe renders_the_prompt_with_the_inputs {
        var run = Greet.run(inputs: {name: "Ada"})
        is_true(run.ok)
        are_equal(run.executed, ["Compose"])
        includes(run.output.greeting, "Ada")
        includes(run.output.greeting, "warm")
    }

    describe requires_a_name {
        var message = ""
        try {
            Greet.run(inputs: {})
        } catch (e) {
            message = e
        }
        includes(message, "name")
    }
}
`;

const PROMPT = `---
description: "A greeting in a chosen tone"
---

Write a short, \${tone} greeting for \${name}.
`;

const README = `# Greet

A workflow folder scaffolded by \`mhl init\`.

- \`mhl lint\` checks every \`.mh\` file here; \`mhl test\` runs the \`test\` blocks (see \`main.mh\`).
- \`mhl run main.mh --input name=Ada\` runs the workflow once.
- Serve it to an MCP host (Claude Code, an IDE) over stdio: \`mhl serve mcp .\`; over HTTP:
  \`mhl serve mcp . --http --port 8787\`. Each workflow becomes a tool named after it (\`Greet\`).

To have an AI CLI answer, declare an agent and send it the prompt in the step:

\`\`\`mhl
agent Writer {
    command: "claude"
    args: ["-p", "\${prompt}"]
}
// in step Compose:
greeting = Writer.run(prompt: GreetPrompt(name: name, tone: tone))
\`\`\`

Run state lives in \`.mhl/\` (and an agent cache in \`.mhl-cache/\`): keep both out of version control.
`;

/** The files `mhl init` writes, by path relative to the folder. */
export const SCAFFOLD: Readonly<Record<string, string>> = {
  'main.mh': MAIN,
  'prompts/greet.prompt.md': PROMPT,
  'README.md': README,
};

/** Writes the scaffold into `dir`; resolves to the exit code. */
export function runInit(dir: string, io: Output): number {
  const root = resolve(dir);
  const notDir = existingNonDirectory(root);
  if (notDir) {
    io.err(`mhl init: ${displayPath(root)} exists and is not a folder`);
    return 1;
  }
  const paths = Object.keys(SCAFFOLD).map((rel) => join(root, rel));
  const clashes = paths.filter((p) => exists(p));
  if (clashes.length > 0) {
    for (const p of clashes)
      io.err(`mhl init: ${displayPath(p)} already exists; nothing was written`);
    io.err('mhl init: move it away or choose another folder (mhl init DIR)');
    return 1;
  }
  try {
    for (const [rel, text] of Object.entries(SCAFFOLD)) {
      const path = join(root, rel);
      mkdirSync(dirname(path), { recursive: true });
      // `wx`: fail rather than overwrite a file that appeared since the check.
      writeFileSync(path, text, { flag: 'wx' });
      io.out(`created ${displayPath(path)}`);
    }
  } catch (e) {
    io.err(`mhl init: ${(e as NodeJS.ErrnoException).code ?? 'error'}: ${(e as Error).message}`);
    return 1;
  }
  const cd = displayPath(root) === '' ? '' : `cd ${displayPath(root)} && `;
  io.out(`next: ${cd}mhl test && mhl serve mcp .`);
  return 0;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    // Absent (or unreadable, which writing will then report).
    return false;
  }
}

function existingNonDirectory(path: string): boolean {
  try {
    return !statSync(path).isDirectory();
  } catch {
    // Absent: it will be created.
    return false;
  }
}
