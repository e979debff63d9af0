/** One event in the sender's record. */
export interface SentEvent {
  /** The id the receiver keys it by: Stripe's event id, GitHub's X-GitHub-Delivery guid. */
  id: string;
  type: string;
  /** Unix seconds. */
  created: number;
  /** The sender's own view of its delivery, when its API says (GitHub: "OK", "failed to connect" …). */
  status?: string;
}

/** An event's payload as the sender's API returns it: what --fix stores and --redeliver-to signs. */
export interface FetchedEvent {
  body: Buffer;
  /** Headers the original delivery carried that say what it is (signatures left out). */
  headers: Record<string, string>;
}

/** A provider's API as reconcile reads it: the list of what it sent, and one event's payload. */
export interface SenderRecord {
  readonly provider: 'stripe' | 'github';
  /** What it sent in the range, every page; `onListed` hears how many deliveries were read so far. */
  list(onListed?: (read: number) => void): AsyncGenerator<SentEvent>;
  /** The payload of one listed event (GitHub: one more request per event). */
  fetch(event: SentEvent): Promise<FetchedEvent>;
}
