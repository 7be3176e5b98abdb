/**
 * Checks `extension mcp` and `extension a2a` declarations (and the legacy `mcp_server` /
 * `a2a_agent` forms): which properties each transport takes and needs, the literal values the
 * runtime accepts (transport, protocol), and that every value is a literal or reads `env()` /
 * `vault()`: an extension is bound before any step runs, so its settings cannot depend on one.
 * Other kinds (`store`, external adapters) are not checked here.
 */
import type { DeclOf, Expr, Property } from './ast.js';
import { DIAGNOSTIC_CODES, type Diagnostic, type Span } from './diagnostics.js';

type Report = (code: Diagnostic['code'], message: string, span: Span) => void;

/** The `protocol` values of `extension mcp` (language §5.6). */
export const MCP_PROTOCOLS = ['auto', '2026-07-28', '2025-11-25', '2025-06-18'] as const;

/** The MCP transports and the properties each takes; `protocol` goes with both. */
const MCP_TRANSPORTS: Readonly<Record<string, readonly string[]>> = {
  stdio: ['transport', 'command', 'args', 'protocol'],
  http: ['transport', 'url', 'headers', 'protocol'],
};

const A2A_PROPERTIES = ['url', 'headers', 'poll_interval', 'poll_timeout'] as const;

/** Reports every problem of one extension declaration; kinds other than mcp/a2a pass. */
export function checkExtension(decl: DeclOf<'Extension'>, report: Report): void {
  if (decl.extKind !== 'mcp' && decl.extKind !== 'a2a') return;
  const owner = `extension ${decl.extKind} '${decl.name}'`;
  for (const p of decl.props) checkValue(p.value, owner, p.name, report);
  if (decl.extKind === 'mcp') checkMcp(decl, owner, report);
  else checkA2a(decl, owner, report);
}

function checkMcp(decl: DeclOf<'Extension'>, owner: string, report: Report): void {
  const prop = (name: string) => decl.props.find((p) => p.name === name);
  const transportProp = prop('transport');
  // A transport read from env() is known only at run time: then any transport's properties go.
  const dynamic = transportProp !== undefined && isSecretRead(transportProp.value);
  let transport = transportProp ? stringLiteral(transportProp.value) : undefined;
  if (transportProp && !dynamic && (transport === undefined || !(transport in MCP_TRANSPORTS))) {
    report(
      DIAGNOSTIC_CODES.EXTENSION_CONFIG,
      `${owner}: transport is "stdio" or "http"`,
      transportProp.value.span,
    );
    return;
  }
  if (dynamic) {
    const all = [...new Set(Object.values(MCP_TRANSPORTS).flat())];
    unknownProperties(decl.props, all, owner, report);
  } else {
    // Without `transport`, the runtime goes by what is there (as it does for legacy mcp_server).
    transport ??= prop('url') && !prop('command') ? 'http' : 'stdio';
    const known = MCP_TRANSPORTS[transport] ?? [];
    unknownProperties(decl.props, known, `${owner} (transport "${transport}")`, report);
    const needed = transport === 'stdio' ? 'command' : 'url';
    if (!prop(needed))
      report(
        DIAGNOSTIC_CODES.EXTENSION_CONFIG,
        `${owner} over ${transport} needs ${needed}: ${transport === 'stdio' ? '"<server command>"' : '"https://…/mcp"'}`,
        decl.nameSpan,
      );
  }
  expectString(prop('command'), owner, report);
  expectString(prop('url'), owner, report);
  expectStrings(prop('args'), owner, report);
  expectObject(prop('headers'), owner, report);
  const protocol = prop('protocol');
  const text = protocol ? stringLiteral(protocol.value) : undefined;
  if (
    protocol &&
    !isSecretRead(protocol.value) &&
    !(MCP_PROTOCOLS as readonly (string | undefined)[]).includes(text)
  )
    report(
      DIAGNOSTIC_CODES.EXTENSION_CONFIG,
      `${owner}: protocol is one of ${MCP_PROTOCOLS.map((p) => `"${p}"`).join(', ')}`,
      protocol.value.span,
    );
}

function checkA2a(decl: DeclOf<'Extension'>, owner: string, report: Report): void {
  const prop = (name: string) => decl.props.find((p) => p.name === name);
  unknownProperties(decl.props, A2A_PROPERTIES, owner, report);
  if (!prop('url'))
    report(
      DIAGNOSTIC_CODES.EXTENSION_CONFIG,
      `${owner} needs url: "https://…" (where its Agent Card is served)`,
      decl.nameSpan,
    );
  expectString(prop('url'), owner, report);
  expectObject(prop('headers'), owner, report);
  for (const name of ['poll_interval', 'poll_timeout']) {
    const p = prop(name);
    const v = p?.value;
    if (p && v && v.kind !== 'Duration' && !(v.kind === 'Number' && v.value > 0))
      report(
        DIAGNOSTIC_CODES.EXTENSION_CONFIG,
        `${owner}: ${name} is a duration such as 2s (or a number of milliseconds)`,
        v.span,
      );
  }
}

function unknownProperties(
  props: readonly Property[],
  known: readonly string[],
  owner: string,
  report: Report,
): void {
  for (const p of props)
    if (!known.includes(p.name))
      report(
        DIAGNOSTIC_CODES.UNKNOWN_PROPERTY,
        `${owner} has no property '${p.name}'; known: ${known.join(', ')}`,
        p.span,
      );
}

/**
 * Values are literals (strings may interpolate `env()`), arrays and objects of them, and
 * `env("NAME")` / `vault("NAME")` calls with a literal name.
 */
function checkValue(e: Expr, owner: string, prop: string, report: Report): void {
  switch (e.kind) {
    case 'Null':
    case 'Bool':
    case 'Number':
    case 'Duration':
      return;
    case 'String':
      for (const seg of e.segments)
        if (typeof seg !== 'string') checkValue(seg, owner, prop, report);
      return;
    case 'Array':
      for (const item of e.items) checkValue(item, owner, prop, report);
      return;
    case 'Object':
      for (const f of e.fields) checkValue(f.value, owner, prop, report);
      return;
    case 'Call':
      if (isSecretRead(e)) return;
      break;
  }
  report(
    DIAGNOSTIC_CODES.EXTENSION_CONFIG,
    `${owner}: ${prop} may hold only literals and env("NAME") (or vault("NAME")); compute values in a step instead`,
    e.span,
  );
}

/** `env("NAME")` or `vault("NAME")` with a literal name. */
function isSecretRead(e: Expr): boolean {
  if (e.kind !== 'Call' || e.callee.kind !== 'Ident') return false;
  if (e.callee.name !== 'env' && e.callee.name !== 'vault') return false;
  const [arg, extra] = e.args;
  return arg !== undefined && extra === undefined && stringLiteral(arg.value) !== undefined;
}

function stringLiteral(e: Expr): string | undefined {
  if (e.kind !== 'String' || e.segments.length !== 1) return undefined;
  return typeof e.segments[0] === 'string' ? e.segments[0] : undefined;
}

/** Whether `e` is a string; a value `checkValue` already refused counts as one (one report each). */
const isText = (e: Expr) => e.kind === 'String' || isSecretRead(e) || !isLiteral(e);

/** `checkValue` without the reports. */
function isLiteral(e: Expr): boolean {
  switch (e.kind) {
    case 'Null':
    case 'Bool':
    case 'Number':
    case 'Duration':
      return true;
    case 'String':
      return e.segments.every((seg) => typeof seg === 'string' || isLiteral(seg));
    case 'Array':
      return e.items.every(isLiteral);
    case 'Object':
      return e.fields.every((f) => isLiteral(f.value));
    default:
      return isSecretRead(e);
  }
}

function expectString(p: Property | undefined, owner: string, report: Report): void {
  if (p && !isText(p.value))
    report(DIAGNOSTIC_CODES.EXTENSION_CONFIG, `${owner}: ${p.name} is a string`, p.value.span);
}

function expectStrings(p: Property | undefined, owner: string, report: Report): void {
  if (!p) return;
  const v = p.value;
  if (v.kind !== 'Array') {
    if (!isLiteral(v)) return;
    report(DIAGNOSTIC_CODES.EXTENSION_CONFIG, `${owner}: ${p.name} is a list of strings`, v.span);
    return;
  }
  for (const item of v.items)
    if (!isText(item))
      report(
        DIAGNOSTIC_CODES.EXTENSION_CONFIG,
        `${owner}: ${p.name} holds strings only`,
        item.span,
      );
}

function expectObject(p: Property | undefined, owner: string, report: Report): void {
  if (!p) return;
  if (p.value.kind !== 'Object') {
    if (!isLiteral(p.value)) return;
    report(
      DIAGNOSTIC_CODES.EXTENSION_CONFIG,
      `${owner}: ${p.name} is an object of header names to strings`,
      p.value.span,
    );
    return;
  }
  for (const f of p.value.fields)
    if (!isText(f.value))
      report(
        DIAGNOSTIC_CODES.EXTENSION_CONFIG,
        `${owner}: ${p.name}.${f.key} is a string`,
        f.value.span,
      );
}
