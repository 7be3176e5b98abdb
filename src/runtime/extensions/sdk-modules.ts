/**
 * The protocol SDKs, loaded on first use: only a run that calls an extension pays for them (the
 * bundle keeps them outside, as it does Ajv), and `createRequire` keeps loading synchronous.
 */
import { createRequire } from 'node:module';
import type * as A2aTypes from '@a2a-js/sdk';
import type * as A2aClient from '@a2a-js/sdk/client';
import type * as McpClient from '@modelcontextprotocol/client';

const require = createRequire(import.meta.url);

/** The official MCP client SDK (v2: both protocol eras). */
export function mcpSdk(): typeof McpClient {
  return require('@modelcontextprotocol/client') as typeof McpClient;
}

/** The official A2A JS SDK's client side (1.0, with its 0.3 compatibility layer). */
export function a2aSdk(): typeof A2aClient {
  return require('@a2a-js/sdk/client') as typeof A2aClient;
}

/** The A2A JS SDK's wire types (their ProtoJSON codecs). */
export function a2aTypes(): typeof A2aTypes {
  return require('@a2a-js/sdk') as typeof A2aTypes;
}
