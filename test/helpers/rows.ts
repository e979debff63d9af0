import type { NewDelivery } from '../../src/inbox/index.js';

/** A Stripe delivery as the tests put it straight into an inbox: `{}`, no headers, received now unless `more` says otherwise. */
export function stripeRow(deliveryId: string, more: Partial<NewDelivery> = {}): NewDelivery {
  return { source: 'stripe', deliveryId, eventType: 'invoice.paid', body: Buffer.from('{}'), headers: {}, receivedAt: Date.now(), ...more };
}
