/**
 * The catalog's prompts: every `prompt` declared in a served `.mh` file itself (not one a file
 * merely imports from outside the folder), with the program it renders in and what clients see
 * of it (title and description from a prompt file's frontmatter). Names are unique across the
 * catalog, since they become MCP prompt names. Collects; never renders or evaluates anything.
 */
import { relative } from 'node:path';
import type { DeclOf, LoadedProgram, Module } from '../lang/index.js';

/** One served prompt. */
export interface CatalogPrompt {
  /** The declared name, used verbatim as the MCP prompt name. */
  readonly name: string;
  /** A prompt file's frontmatter `title`, when it is a string. */
  readonly title?: string;
  /** A prompt file's frontmatter `description`, else one naming the declaring file. */
  readonly description: string;
  readonly decl: DeclOf<'Prompt'>;
  /** The module that declares it (its scope, and its prompt file's body). */
  readonly module: Module;
  /** The program rooted at the declaring file: what its body and defaults resolve against. */
  readonly program: LoadedProgram;
}

/** Two files declare a prompt of the same name. */
export interface PromptClash {
  readonly name: string;
  readonly files: readonly [string, string];
  readonly message: string;
}

/**
 * The prompts declared in `programs` (one per served file, in file order), keyed by name;
 * a second prompt of a name already taken is a clash, reported and not served.
 */
export function collectPrompts(
  programs: readonly LoadedProgram[],
  root: string,
): { prompts: Map<string, CatalogPrompt>; clashes: PromptClash[] } {
  const prompts = new Map<string, CatalogPrompt>();
  const clashes: PromptClash[] = [];
  for (const program of programs) {
    const module = program.root;
    for (const decl of module.program.decls) {
      if (decl.kind !== 'Prompt') continue;
      const earlier = prompts.get(decl.name);
      if (earlier) {
        clashes.push(clash(decl.name, earlier.module.path, module.path, root));
        continue;
      }
      prompts.set(decl.name, makePrompt(decl, module, program, root));
    }
  }
  return { prompts, clashes };
}

function makePrompt(
  decl: DeclOf<'Prompt'>,
  module: Module,
  program: LoadedProgram,
  root: string,
): CatalogPrompt {
  const asset = module.assets.get(decl);
  const frontmatter = asset?.kind === 'prompt' ? asset.frontmatter : {};
  const title = frontmatter['title'];
  const description = frontmatter['description'];
  return Object.freeze({
    name: decl.name,
    ...(typeof title === 'string' && title !== '' ? { title } : {}),
    description:
      typeof description === 'string' && description !== ''
        ? description
        : `The mhl prompt "${decl.name}" of ${relative(root, module.path)}.`,
    decl,
    module,
    program,
  });
}

function clash(name: string, first: string, second: string, root: string): PromptClash {
  const a = relative(root, first);
  const b = relative(root, second);
  return {
    name,
    files: [first, second],
    message: `prompt "${name}" is declared in both ${a} and ${b}; names become MCP prompt names and must be unique`,
  };
}
