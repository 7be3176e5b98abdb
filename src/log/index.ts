/**
 * Logging, usable by every layer: JSON lines on stderr (pino), level from `MHL_LOG_LEVEL`.
 * Nothing here knows what is logged; callers redact secrets before they log.
 */
export { createLogger, type Logger } from './logger.js';
