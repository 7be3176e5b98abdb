/**
 * Reads an A2A `message` (a send's params) into what the server acts on: the task it continues,
 * the skill and inputs its metadata names, and its text and data parts. One reader for both wire
 * versions: a part is read by its content member (`text`, `data`), so 1.0 parts (no `kind`) and
 * 0.3 parts (`kind: "text"`) read alike. Everything here is caller input: every refusal is a
 * -32602 naming the field, and nothing is echoed back longer than a short key.
 */
import { isRecord } from '../../protocol/index.js';
import { shortKey } from '../../runs/index.js';
import { A2A_ERROR_CODES, A2aError, invalidParams } from './errors.js';

/** A message's parts past this count are refused: no workflow input needs more. */
const MAX_PARTS = 64;

/** One content part of a message. */
export type MessagePart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'data'; readonly data: unknown };

/** What a send carries, read and checked. */
export interface IncomingMessage {
  /** The task (run) this message continues, when it names one. */
  readonly taskId?: string;
  /** `message.metadata.skill`, else `params.metadata.skill`. */
  readonly skill?: string;
  /** `message.metadata.input`, else `params.metadata.input`. */
  readonly input?: Readonly<Record<string, unknown>>;
  readonly parts: readonly MessagePart[];
}

/** Reads `params.message`; throws `A2aError` (-32602, or -32005 for a file part). */
export function readMessage(params: Record<string, unknown>): IncomingMessage {
  const message = params['message'];
  if (!isRecord(message)) throw invalidParams('message', 'params.message must be an object');
  const outer = optionalRecord(params['metadata'], 'metadata');
  const inner = optionalRecord(message['metadata'], 'message.metadata');
  const skill = inner?.['skill'] ?? outer?.['skill'];
  if (skill !== undefined && typeof skill !== 'string')
    throw invalidParams('message.metadata.skill', 'metadata.skill must be a string (a skill id)');
  const input = inner?.['input'] ?? outer?.['input'];
  if (input !== undefined && !isRecord(input))
    throw invalidParams(
      'message.metadata.input',
      'metadata.input must be an object of the skill inputs',
    );
  const taskId = message['taskId'];
  if (taskId !== undefined && typeof taskId !== 'string')
    throw invalidParams('message.taskId', 'message.taskId must be a string');
  return {
    ...(taskId !== undefined && taskId !== '' ? { taskId } : {}),
    ...(skill !== undefined ? { skill } : {}),
    ...(input !== undefined ? { input } : {}),
    parts: readParts(message['parts']),
  };
}

function optionalRecord(value: unknown, field: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw invalidParams(field, `${field} must be an object`);
  return value;
}

function readParts(value: unknown): MessagePart[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidParams('message.parts', 'message.parts must be an array');
  if (value.length > MAX_PARTS)
    throw invalidParams('message.parts', `a message holds at most ${MAX_PARTS} parts`);
  return value.map((part, index) => readPart(part, `message.parts[${index}]`));
}

function readPart(part: unknown, field: string): MessagePart {
  if (!isRecord(part)) throw invalidParams(field, `${field} must be an object`);
  if (typeof part['text'] === 'string') return { kind: 'text', text: part['text'] };
  if (Object.hasOwn(part, 'data')) return { kind: 'data', data: part['data'] };
  if (Object.hasOwn(part, 'file') || Object.hasOwn(part, 'url') || Object.hasOwn(part, 'raw')) {
    throw new A2aError(
      A2A_ERROR_CODES.CONTENT_TYPE_NOT_SUPPORTED,
      'file parts are not supported: send inputs as metadata.input, a data part or a text part',
      { field },
    );
  }
  const kind = typeof part['kind'] === 'string' ? shortKey(part['kind']) : undefined;
  throw invalidParams(
    field,
    `${field} has no text or data${kind !== undefined ? ` (kind ${JSON.stringify(kind)})` : ''}`,
  );
}
