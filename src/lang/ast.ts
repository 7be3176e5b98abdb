/**
 * The MHL abstract syntax tree: plain data, discriminated on `kind`, every node with its `span`.
 *
 * The interpreter walks these nodes directly, so they keep what evaluation needs (string parts
 * already parsed into expressions, durations already in milliseconds, pipeline members already
 * sorted into inputs, variables, properties and steps) and nothing the parser needed only
 * for itself.
 */
import type { Span } from './diagnostics.js';

// ── Types ────────────────────────────────────────────────────────────────────────────────────

export type TypeNode =
  | { readonly kind: 'NamedType'; readonly name: string; readonly span: Span }
  | { readonly kind: 'ArrayType'; readonly element: TypeNode; readonly span: Span }
  | { readonly kind: 'ShapeType'; readonly fields: readonly ShapeField[]; readonly span: Span };

export interface ShapeField {
  readonly name: string;
  readonly optional: boolean;
  readonly type: TypeNode;
  readonly span: Span;
}

// ── Expressions ──────────────────────────────────────────────────────────────────────────────

export interface Param {
  readonly name: string;
  readonly type: TypeNode | undefined;
  readonly default: Expr | undefined;
  readonly span: Span;
}

export interface Arg {
  /** The label of a `name: value` argument; undefined for a positional one. */
  readonly name: string | undefined;
  readonly value: Expr;
  readonly span: Span;
}

export interface ObjectField {
  readonly key: string;
  readonly value: Expr;
  readonly span: Span;
}

export interface Property {
  readonly name: string;
  readonly value: Expr;
  readonly span: Span;
}

export interface MatchArm {
  /** Undefined for the `_` wildcard. */
  readonly pattern: Expr | undefined;
  readonly value: Expr;
  readonly span: Span;
}

export type StringSegment = string | Expr;

export type UnaryOp = '!' | '-';
export type BinaryOp =
  | '??'
  | '||'
  | '&&'
  | '=='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | '+'
  | '-'
  | '*'
  | '/'
  | '%';

export type Expr =
  | { readonly kind: 'Null'; readonly span: Span }
  | { readonly kind: 'Bool'; readonly value: boolean; readonly span: Span }
  | { readonly kind: 'Number'; readonly value: number; readonly span: Span }
  | { readonly kind: 'Duration'; readonly ms: number; readonly text: string; readonly span: Span }
  | {
      readonly kind: 'String';
      /** Literal text and interpolated expressions, in order; `[text]` when nothing interpolates. */
      readonly segments: readonly StringSegment[];
      readonly triple: boolean;
      readonly span: Span;
    }
  | { readonly kind: 'Array'; readonly items: readonly Expr[]; readonly span: Span }
  | { readonly kind: 'Object'; readonly fields: readonly ObjectField[]; readonly span: Span }
  | { readonly kind: 'InlineAgent'; readonly props: readonly Property[]; readonly span: Span }
  | {
      readonly kind: 'Lambda';
      readonly params: readonly Param[];
      readonly body: Expr | Block;
      readonly span: Span;
    }
  | {
      readonly kind: 'IfExpr';
      readonly cond: Expr;
      readonly then: Expr;
      readonly else: Expr;
      readonly span: Span;
    }
  | {
      readonly kind: 'Match';
      readonly subject: Expr;
      readonly arms: readonly MatchArm[];
      readonly span: Span;
    }
  | { readonly kind: 'Ident'; readonly name: string; readonly span: Span }
  | { readonly kind: 'Unary'; readonly op: UnaryOp; readonly operand: Expr; readonly span: Span }
  | {
      readonly kind: 'Binary';
      readonly op: BinaryOp;
      readonly left: Expr;
      readonly right: Expr;
      readonly span: Span;
    }
  | {
      readonly kind: 'Member';
      readonly object: Expr;
      readonly name: string;
      readonly optional: boolean;
      readonly span: Span;
    }
  | {
      readonly kind: 'Index';
      readonly object: Expr;
      readonly index: Expr;
      readonly optional: boolean;
      readonly span: Span;
    }
  | {
      readonly kind: 'Slice';
      readonly object: Expr;
      readonly lo: SliceBound | undefined;
      readonly hi: SliceBound | undefined;
      readonly span: Span;
    }
  | {
      readonly kind: 'Call';
      readonly callee: Expr;
      readonly args: readonly Arg[];
      readonly span: Span;
    }
  | {
      readonly kind: 'With';
      readonly object: Expr;
      readonly fields: readonly ObjectField[];
      readonly span: Span;
    }
  | { readonly kind: 'Ref'; readonly fields: readonly ObjectField[]; readonly span: Span };

export interface SliceBound {
  readonly value: Expr;
  /** `^n`: counts from the end. */
  readonly fromEnd: boolean;
}

export type ExprKind = Expr['kind'];
export type ExprOf<K extends ExprKind> = Extract<Expr, { kind: K }>;

// ── Statements ───────────────────────────────────────────────────────────────────────────────

export interface Block {
  readonly kind: 'Block';
  readonly body: readonly Stmt[];
  readonly span: Span;
}

export interface DestructureField {
  /** The object key read. */
  readonly key: string;
  /** The variable bound or assigned (same as key unless `key: name`). */
  readonly name: string;
  readonly span: Span;
}

export type LValue = ExprOf<'Ident'> | ExprOf<'Member'> | ExprOf<'Index'>;

export type WaitMode = 'all' | 'any' | number;

export type Stmt =
  | {
      readonly kind: 'VarDecl';
      readonly name: string;
      readonly isConst: boolean;
      readonly value: Expr;
      readonly span: Span;
      readonly nameSpan: Span;
    }
  | {
      readonly kind: 'Destructure';
      /** `var`/`const` declare new bindings; `assign` writes existing ones; `self` pipeline vars. */
      readonly mode: 'var' | 'const' | 'assign' | 'self';
      readonly fields: readonly DestructureField[];
      readonly value: Expr;
      readonly span: Span;
    }
  | {
      readonly kind: 'Assign';
      readonly target: LValue;
      readonly op: '=' | '+=';
      readonly value: Expr;
      readonly span: Span;
    }
  | {
      readonly kind: 'If';
      readonly cond: Expr;
      readonly then: Block;
      readonly else: Block | undefined;
      readonly span: Span;
    }
  | { readonly kind: 'While'; readonly cond: Expr; readonly body: Block; readonly span: Span }
  | {
      readonly kind: 'ForIn';
      readonly name: string;
      readonly iterable: Expr;
      readonly body: Block;
      readonly span: Span;
    }
  | {
      readonly kind: 'Try';
      readonly body: Block;
      readonly catchName: string | undefined;
      readonly handler: Block;
      readonly finalizer: Block | undefined;
      readonly span: Span;
    }
  | { readonly kind: 'Return'; readonly value: Expr | undefined; readonly span: Span }
  | { readonly kind: 'Break'; readonly value: Expr | undefined; readonly span: Span }
  | {
      readonly kind: 'Goto';
      readonly target: string;
      readonly targetSpan: Span;
      readonly span: Span;
    }
  | {
      readonly kind: 'Spawn';
      readonly name: string;
      readonly call: Expr;
      /** Fan-out: `spawn hs = A.run(…) for item in items`. */
      readonly forName: string | undefined;
      readonly forIterable: Expr | undefined;
      readonly span: Span;
    }
  | {
      readonly kind: 'Wait';
      readonly mode: WaitMode;
      readonly handles: readonly ExprOf<'Ident'>[];
      readonly options: readonly Property[];
      readonly span: Span;
    }
  | { readonly kind: 'ExprStmt'; readonly expr: Expr; readonly span: Span };

export type StmtKind = Stmt['kind'];
export type StmtOf<K extends StmtKind> = Extract<Stmt, { kind: K }>;

// ── Declarations ─────────────────────────────────────────────────────────────────────────────

export interface ImportItem {
  readonly name: string;
  readonly alias: string | undefined;
  readonly span: Span;
}

export interface Step {
  readonly kind: 'Step';
  readonly name: string;
  readonly entry: boolean;
  /** `step X timeout 3m`: milliseconds. */
  readonly timeoutMs: number | undefined;
  readonly body: Block;
  readonly span: Span;
  readonly nameSpan: Span;
}

export interface ParallelGroup {
  readonly kind: 'Parallel';
  readonly name: string;
  readonly timeoutMs: number | undefined;
  readonly steps: readonly Step[];
  readonly span: Span;
  readonly nameSpan: Span;
}

export interface InputDecl {
  readonly name: string;
  readonly type: TypeNode;
  readonly default: Expr | undefined;
  readonly span: Span;
}

/** A pipeline-level `var`, `const` or `mem`, in declaration order. */
export interface PipelineVar {
  readonly name: string;
  readonly storage: 'var' | 'const' | 'mem';
  readonly value: Expr;
  readonly span: Span;
}

export interface ToolMethod {
  readonly kind: 'Method';
  readonly name: string;
  readonly params: readonly Param[];
  readonly returnType: TypeNode | undefined;
  readonly body: Expr | Block;
  readonly span: Span;
}

export interface DescribeCase {
  readonly name: string;
  readonly body: Block;
  readonly span: Span;
}

export type Decl =
  | {
      readonly kind: 'Import';
      /** `import {…} from`, legacy `use {…} from`, bare whole-file `import "f"`, legacy `import "f" as ns`. */
      readonly form: 'named' | 'use' | 'file' | 'namespace';
      readonly items: readonly ImportItem[];
      readonly path: string;
      readonly pathSpan: Span;
      readonly namespace: string | undefined;
      readonly span: Span;
    }
  | DeclBase<'Agent', { readonly props: readonly Property[] }>
  | DeclBase<
      'Prompt',
      {
        readonly params: readonly Param[];
        readonly body: Expr | undefined;
        readonly from: string | undefined;
        readonly fromSpan: Span | undefined;
      }
    >
  | DeclBase<
      'Skill',
      {
        readonly from: string | undefined;
        readonly fromSpan: Span | undefined;
        /** The legacy `skill X { … }` block form: parsed and kept, never executed. */
        readonly props: readonly Property[];
      }
    >
  | DeclBase<'Schema', { readonly from: string; readonly fromSpan: Span }>
  | DeclBase<'Memory', { readonly props: readonly Property[] }>
  | DeclBase<
      'Tool',
      { readonly methods: readonly ToolMethod[]; readonly vars: readonly StmtOf<'VarDecl'>[] }
    >
  | DeclBase<
      'Extension',
      {
        readonly extKind: string;
        readonly props: readonly Property[];
        /** Declared with the pre-1.0 `mcp_server Name { … }` form. */
        readonly legacy: boolean;
      }
    >
  | DeclBase<
      'Extensible',
      {
        readonly extKind: string;
        readonly props: readonly Property[];
        readonly methods: readonly ToolMethod[];
      }
    >
  | DeclBase<'Router', { readonly props: readonly Property[] }>
  | DeclBase<'TypeAlias', { readonly type: TypeNode }>
  | DeclBase<'Enum', { readonly variants: readonly { name: string; span: Span }[] }>
  | PipelineDecl
  | DeclBase<'Test', { readonly cases: readonly DescribeCase[] }>;

type DeclBase<K extends string, Extra> = {
  readonly kind: K;
  readonly name: string;
  readonly exported: boolean;
  readonly span: Span;
  readonly nameSpan: Span;
} & Extra;

export type PipelineDecl = DeclBase<
  'Pipeline',
  {
    /** `pipeline` steps run in order; `workflow` may also `goto`. */
    readonly flavor: 'pipeline' | 'workflow';
    readonly loop: boolean;
    readonly partial: boolean;
    /**
     * Typed signature `pipeline P(x: T, y: U = d): R`. Its parameters are also the first
     * entries of `inputs` (the same objects); `span` runs from `(` to `)`.
     */
    readonly signature:
      | {
          readonly params: readonly InputDecl[];
          readonly returns: TypeNode | undefined;
          readonly span: Span;
        }
      | undefined;
    /** `loop pipeline P max 5`. */
    readonly maxIterations: number | undefined;
    readonly inputs: readonly InputDecl[];
    readonly vars: readonly PipelineVar[];
    readonly props: readonly Property[];
    readonly steps: readonly (Step | ParallelGroup)[];
  }
>;

export type DeclKind = Decl['kind'];
export type DeclOf<K extends DeclKind> = Extract<Decl, { kind: K }>;
export type NamedDecl = Exclude<Decl, DeclOf<'Import'>>;

/** One parsed `.mh` file. */
export interface Program {
  readonly file: string;
  readonly decls: readonly Decl[];
}
