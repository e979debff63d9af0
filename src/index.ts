/** The library: provider signing and verification, the sender behind `hookdrill send`, and the reference receiver, inbox and worker. */
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
export { run as send } from './commands/send/run.js';
export type { SendOptions, SendResult, SendSummary } from './commands/send/run.js';
export type { DeliveryRecord, AttemptRecord, DeliveryOutcome } from './delivery/deliver.js';
export { UsageError, ExpectationError } from './errors.js';
export { openInbox, InboxOpenError, InboxUnavailableError, STATUSES } from './inbox/index.js';
export type { OpenInboxOptions } from './inbox/index.js';
export { openSqliteInbox, SqliteInbox } from './inbox/sqlite/index.js';
export type {
  Inbox,
  NewDelivery,
  StoredDelivery,
  Claimed,
  DeliveryKey,
  DeliveryStatus,
  InboxStats,
  FailOutcome,
  Settlement,
  Selector,
} from './inbox/index.js';
export { createReceiver, DEFAULT_MAX_BYTES } from './receiver/index.js';
export type { ReceiverOptions, ReceiverEvent } from './receiver/index.js';
export { createReceiverServer } from './receiver/server.js';
export { Worker, PermanentError, backoffDelay, DEFAULT_BACKOFF } from './worker/index.js';
export type { WorkerOptions, WorkItem, Handler, WorkOutcome, BackoffOptions } from './worker/index.js';
