import type { DeliveryRecord, RetryScheduled, WireExchange } from './deliver.js';
import type { Progress, RunPlan } from './run.js';
import { resolveTls } from './tls.js';

/** What send and replay (and the library's callers) may hear from a run, and how to trust TLS. */
export interface DeliveryHookOptions {
  onProgress?: (p: Progress) => void;
  /** Each delivery as soon as it is final. */
  onDelivery?: (record: DeliveryRecord) => void;
  /** Each retry as it is scheduled, with when it is due. */
  onRetryScheduled?: (retry: RetryScheduled) => void;
  /** Each attempt's full request and answer (--verbose). */
  onWire?: (w: WireExchange) => void;
  /** Trust this CA file (PEM) for the receiver's certificate. */
  ca?: string;
  /** Accept any certificate from the receiver. */
  insecure?: boolean;
}

/** The hook options as a run plan takes them (only those set), the CA file read now. */
export function deliveryHooks(o: DeliveryHookOptions): Pick<RunPlan, 'onProgress' | 'onDelivery' | 'onRetryScheduled' | 'onWire' | 'tls'> {
  return {
    ...(o.onProgress ? { onProgress: o.onProgress } : {}),
    ...(o.onDelivery ? { onDelivery: o.onDelivery } : {}),
    ...(o.onRetryScheduled ? { onRetryScheduled: o.onRetryScheduled } : {}),
    ...(o.onWire ? { onWire: o.onWire } : {}),
    tls: resolveTls(o),
  };
}
