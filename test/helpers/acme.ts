/**
 * Acme Payments: a team's own platform, its HMAC scheme declared in a project file as the team's
 * docs would state it — the scheme test/receivers/webhook_receiver.py --provider acme verifies.
 * Tests spread it and change what they are about (where the id is, where the fixtures are).
 */
export const ACME_DECLARATION = {
  title: 'Acme Payments',
  signature: {
    header: 'Acme-Signature',
    algorithm: 'sha256',
    encoding: 'hex',
    content: '{timestamp}.{body}',
    value: 't={timestamp},v1={signature}',
  },
  timestamp: { tolerance: '5m' },
  id: { header: 'Acme-Delivery', prefix: 'dlv_' },
  eventType: { body: 'type' },
  timeout: '10s',
  retries: ['30s', '5m', '1h'],
};
