/**
 * The MHL language front end: parse, resolve modules, check. Reads files only through a
 * `SourceHost`; knows nothing of running or serving workflows.
 */
export type { Asset, PromptAsset, SchemaAsset, SkillAsset } from './assets.js';
export type {
  Block,
  Decl,
  DeclOf,
  Expr,
  ExprOf,
  InputDecl,
  NamedDecl,
  ParallelGroup,
  Param,
  PipelineDecl,
  Program,
  Property,
  Step,
  Stmt,
  StmtOf,
  ToolMethod,
  TypeNode,
} from './ast.js';
export {
  BUILTIN_FUNCTIONS,
  BUILTIN_TYPES,
  NATIVE_NAMESPACES,
  TEST_ASSERTIONS,
} from './builtins.js';
export { type CheckResult, checkFiles } from './checker.js';
export {
  type LoadedProgram,
  type PipelineDefinition,
  pipelineDefinition,
} from './definition.js';
export { definitionDigest } from './definition-digest.js';
export {
  compareDiagnostics,
  DIAGNOSTIC_CODES,
  type Diagnostic,
  type DiagnosticCode,
  formatDiagnostic,
  LangError,
  type LangErrorOptions,
  type Severity,
  type Span,
  sourceExcerpt,
} from './diagnostics.js';
export { ajv2020Class, checkerVersions, yaml } from './lazy-modules.js';
export { DEFAULT_LIMITS, type Limits, resolveLimits } from './limits.js';
export {
  type Binding,
  buildNamespace,
  type Module,
  ModuleGraph,
  moduleScope,
  type Namespace,
  type Parser,
} from './modules.js';
export { findName } from './name-spans.js';
export { type ParseResult, parse } from './parser.js';
export {
  indexModule,
  type LocalScope,
  type LocalSymbol,
  localsAt,
  type ModuleIndex,
  type Occurrence,
  occurrenceAt,
  type SymbolTarget,
  sameTarget,
} from './references.js';
export { diskHost, memoryHost, type SourceHost } from './source-host.js';
export {
  BUILTIN_DESCRIPTIONS,
  KEYWORDS,
  NATIVE_METHODS,
  type NativeMethod,
} from './vocabulary.js';
