import { ACCEPTANCE } from './acceptance.js';
import { BODY_HASH_IN_URL } from './body-hash-url.js';
import { CONTRACT_CASES } from './contract.js';
import { FIELD_ITEM_CASES } from './field-items.js';
import { HANDSHAKE_CASES } from './visit-handshake.js';
import type { CheckCase } from './common.js';
import { JWT_CASES } from './jwt.js';
import { LIMITS } from './limits.js';
import { PROVIDER_QUIRKS } from './provider-quirks.js';
import { REJECTION } from './rejection.js';

export type { CaseOutcome, CaseStatus, CheckCase, CheckContext } from './common.js';
export { LARGE_BODY_BYTES } from './common.js';

/** Every case, in the order check runs and prints them. */
export const CASES: readonly CheckCase[] = [
  ...ACCEPTANCE,
  ...CONTRACT_CASES,
  ...HANDSHAKE_CASES,
  ...REJECTION,
  ...FIELD_ITEM_CASES,
  ...JWT_CASES,
  ...PROVIDER_QUIRKS,
  BODY_HASH_IN_URL,
  ...LIMITS,
];

export const CASE_NAMES = CASES.map((c) => c.name);
