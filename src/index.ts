/**
 * The library: the engine the CLI runs on — send, check and chaos returning the Results that
 * --json prints (typed errors for bad input, never a process exit, nothing printed), startReceiver,
 * assertion helpers for any test runner, provider signing and verification, and the reference
 * receiver, inbox and worker.
 */
export { providers, providerNames, getProvider, getProfile, declareProvider, SignatureError } from './providers/index.js';
export type { ProviderDeclaration } from './providers/declaration.js';
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
export { run as send } from './delivery/send.js';
export { run as check } from './check/run.js';
export type { CheckOptions, CheckResult, CaseReport } from './check/run.js';
export type { ForwardedRoute } from './check/forwarded.js';
export { CheckPreflightError } from './check/preflight.js';
export { run as verify } from './verify/run.js';
export type { VerifyRequestOptions, VerifyResult } from './verify/run.js';
export { explain as explainSignature } from './verify/explain.js';
export type { VerifyCode } from './verify/explain.js';
export { parseRawHttp } from './verify/request.js';
export type { CapturedRequest } from './verify/request.js';
export { run as chaos } from './chaos/run.js';
export type { ChaosOptions, ChaosResult } from './chaos/run.js';
export { run as inspect } from './incident/inspect.js';
export type { InspectOptions, InspectResult, RowSummary } from './incident/inspect.js';
export { run as requeue } from './incident/requeue.js';
export type { RequeueOptions, RequeueResult } from './incident/requeue.js';
export { run as replay, NothingToReplay } from './incident/replay.js';
export type { ReplayOptions, ReplayResult } from './incident/replay.js';
export { run as scenario } from './scenario/run.js';
export type { ScenarioOptions, ScenarioResult } from './scenario/run.js';
export { run as reconcile } from './reconcile/run.js';
export type { ReconcileOptions, ReconcileResult, MissingEvent } from './reconcile/run.js';
export { run as pull } from './pull/run.js';
export type { PullOptions, PullResult, PulledRecord, PullStart, PullStatus } from './pull/run.js';
export { startUi } from './ui/server.js';
export type { UiOptions, UiHandle } from './ui/server.js';
export { startReceiver } from './harness/receiver-process.js';
export type { StartReceiverOptions, ReceiverHandle } from './harness/receiver-process.js';
export { assertCheckPassed, assertChaosPassed, assertSendPassed, HookdrillAssertionError } from './library/assertions.js';
export { ReceiverStartError } from './harness/supervisor.js';
export type { SendOptions, SendResult, SendSummary } from './delivery/send.js';
export type { DeliveryRecord, AttemptRecord, DeliveryOutcome } from './delivery/deliver.js';
export { UsageError, ExpectationError } from './util/errors.js';
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
export type { RouteChange, RouteState } from './worker/index.js';
