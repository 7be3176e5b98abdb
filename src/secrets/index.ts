/**
 * The local secret vault and its setup page (issue 16, seed 002 "secret setup"): the vault file
 * format and key, records, the lock, setup capabilities, the setup rows of the HTTP route
 * table, the `secrets.list` surface and the lookup `vault()` resolves through.
 */
export {
  CAPABILITY_SHAPE,
  CAPABILITY_TTL_MS,
  CapabilityStore,
  type SetupGrant,
} from './capabilities.js';
export { SECRETS_ERROR_CODES, SecretsError, type SecretsErrorCode } from './errors.js';
export { controlProof, readVaultKey } from './key.js';
export { type Credentials, vaultLookup } from './lookup.js';
export { type VaultPaths, vaultPaths } from './paths.js';
export {
  checkKind,
  checkName,
  MAX_VALUE_BYTES,
  RECORD_ID,
  SECRET_KINDS,
  SECRET_NAME,
  type SecretKind,
  type SecretMetadata,
} from './records.js';
export {
  acceptSetupUrl,
  type MintRequest,
  requestSetupUrl,
  SETUP_CLIENT_CODES,
  SetupClientError,
  setupOrigin,
} from './setup-client.js';
export { MINT_PATH, SETUP_PATH } from './setup-routes.js';
export { SECRETS_LIST_TOOL, type SecretsSurfaceOptions, secretsSurface } from './surface.js';
export { type NewSecret, type SecretChange, Vault } from './vault.js';
