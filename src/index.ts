/** The library: provider signing and verification, fixtures, and the sender behind `hookdrill send`. */
export { providers, providerNames, getProvider, getProfile, SignatureError } from './providers/index.js';
export type {
  Provider,
  ProviderName,
  TimingProfile,
  SignContext,
  VerifyOptions,
  SignatureFailure,
  RetryReason,
  IncomingHeaders,
  OutgoingHeaders,
} from './providers/index.js';
export { run as send } from './commands/send.js';
export type { SendOptions, SendResult, SendSummary } from './commands/send.js';
export type { DeliveryRecord, AttemptRecord, DeliveryOutcome } from './delivery/deliver.js';
export { UsageError, ExpectationError } from './errors.js';
