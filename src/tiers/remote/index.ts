/** Public surface of the remote tier (re-exported from the package root). */
export { createRemoteScorer, type RemoteScorer, type RemoteScorerStats } from './remote-scorer.js';
export {
  type RemoteProtocol,
  type RemoteScorerOptions,
  DEFAULT_MAX_BATCH as REMOTE_DEFAULT_MAX_BATCH,
  REMOTE_TIER,
} from './options.js';
export { RemoteBatchRefusedError, RemoteConfigError, RemoteEndpointError, RemoteResponseError } from './errors.js';
