/**
 * Extensions as values a run can call: `extension mcp` (an MCP server, over stdio or HTTP) and
 * `extension a2a` (an A2A agent). A declaration's properties are bound on its first call and
 * kept for the run; every call is otherwise independent. Other kinds answer `UNSUPPORTED`.
 */
import type { DeclOf } from '../../lang/index.js';
import { LangError } from '../../lang/index.js';
import { type CallArgs, FunctionValue, Reference, type Value } from '../interpreter/values.js';
import { a2aConfig } from './a2a-config.js';
import { A2A_METHODS, a2aMethod } from './a2a-methods.js';
import { bindSettings, type Settings, type SettingsHost } from './extension-settings.js';
import type { McpHost } from './mcp-client.js';
import { mcpConfig } from './mcp-config.js';
import { MCP_METHODS, mcpMethod } from './mcp-methods.js';

/** What calling an extension needs from its run. */
export type ExtensionHost = SettingsHost & McpHost;

type Method = (args: CallArgs, signal: AbortSignal) => Promise<Value>;

/**
 * The value of `extension <kind> Name`: a reference whose members are the kind's methods.
 * Returns undefined for a kind this runtime does not call (the caller refuses it).
 */
export function extensionReference(
  decl: DeclOf<'Extension'>,
  host: ExtensionHost,
): Reference | undefined {
  if (decl.extKind !== 'mcp' && decl.extKind !== 'a2a') return undefined;
  let settings: Promise<Settings> | undefined;
  const bound = (signal: AbortSignal) => {
    if (settings) return settings;
    const binding = bindSettings(decl, host, signal);
    settings = binding;
    // A binding that failed (an unset variable, a cancelled step) is tried again by the next call.
    binding.catch(() => {
      if (settings === binding) settings = undefined;
    });
    return binding;
  };
  const method = (name: string): Method | undefined => {
    if (decl.extKind === 'mcp') {
      const impl = mcpMethod(name);
      return (
        impl &&
        (async (args, signal) =>
          impl(mcpConfig(decl.name, await bound(signal)), host, args, signal))
      );
    }
    const impl = a2aMethod(name);
    return (
      impl &&
      (async (args, signal) => impl(a2aConfig(decl.name, await bound(signal)), args, signal))
    );
  };
  const known: readonly string[] = decl.extKind === 'mcp' ? MCP_METHODS : A2A_METHODS;
  return new Reference('extension', decl.name, (name) => {
    const impl = method(name);
    if (!impl)
      return new FunctionValue(`${decl.name}.${name}`, async () => {
        throw new LangError(
          'CALL',
          `extension ${decl.extKind} '${decl.name}' has no method '${name}'; it has ${known.join(', ')}`,
        );
      });
    return new FunctionValue(`${decl.name}.${name}`, impl);
  });
}
