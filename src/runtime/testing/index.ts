/**
 * `mhl test`'s engine: runs a file's `test` blocks and reports each case. The CLI formats the
 * results; this folder never prints.
 */
export {
  type CaseFailure,
  type CaseResult,
  type CaseStatus,
  type FileResult,
  runTestFile,
  type TestRunOptions,
} from './run-tests.js';
