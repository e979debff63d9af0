import { sign as edSign, verify as edVerify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import { cachedKey, ownPrivateKey, publicKeyHex, signingKey, verifyingKey } from './keys.js';
import type { JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { SignatureError } from './types.js';
import { isObject, parseJson, randomUint32, requireHeader, requireSecrets, sortedKeys, unixSeconds } from './util.js';

/**
 * Discord interactions: the first provider here signed with a private key and verified with a
 * public one. Sources:
 *   - https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint:
 *     `X-Signature-Ed25519` (hex) is the Ed25519 signature of `X-Signature-Timestamp` + the raw
 *     body, checked with the application's public key; the endpoint must answer a PING (type 1)
 *     with `{"type": 1}` (PONG), and Discord checks it *also sends a request with an invalid
 *     signature, which must be answered 401*, before it saves the URL; an interaction is answered
 *     within 3 seconds, and is not sent again (the user sees "This interaction failed").
 *   - discord-interactions (verifyKey): the message is timestamp + body, the signature and key
 *     in hex; no window on the timestamp is checked, so check judges none (`timestamped` false:
 *     it is signed, never held to a clock).
 *   - discord-api-types (APIInteraction): the body, `id` (a snowflake, what to dedupe on), `type`.
 *   - Recorded deliveries (a raw PING through ngrok in a Rust crate's test; an AWS Lambda function
 *     URL event of a command): `User-Agent: Discord-Interactions/1.0 (+https://discord.com)`,
 *     `Content-Type: application/json`; the body's keys sorted; every interaction carries `member`
 *     (in a guild, the invoking user as `member.user`) or `user` (in a DM), a PING `user`. Not
 *     published: the headers' order (test/wire/discord.json holds names and values only).
 * The secret to send with is the private key (hookdrill's own where none is given: see
 * providers/keys.ts); the one a receiver holds is the public key, 64 hex characters.
 */

/** Interaction types (discord-api-types' InteractionType), as event names. */
export const INTERACTION_TYPES: Readonly<Record<number, string>> = {
  1: 'ping',
  2: 'application_command',
  3: 'message_component',
  4: 'application_command_autocomplete',
  5: 'modal_submit',
};

const profile: TimingProfile = {
  name: 'discord',
  summary: 'Discord interactions: answer within 3s; never sent again (the user sees "This interaction failed")',
  published: true,
  timeoutMs: 3_000,
  retryDelaysMs: [],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

const signers = new Map<string, KeyObject>();
const verifiers = new Map<string, KeyObject>();

/** A snowflake: milliseconds since Discord's epoch (2015) shifted 22 bits, plus worker and sequence. */
function snowflake(nowMs = Date.now()): string {
  return ((BigInt(nowMs - 1_420_070_400_000) << 22n) | BigInt(randomUint32() & 0x3fffff)).toString();
}

function typeName(body: JsonValue | undefined): string | undefined {
  if (!isObject(body) || typeof body.type !== 'number') return undefined;
  return INTERACTION_TYPES[body.type] ?? `type_${body.type}`;
}

/**
 * The interaction responses each interaction type takes (discord-api-types' InteractionType and
 * InteractionResponseType; Discord's "Responding to an Interaction"): a command 4 or 5 (or 9, a
 * modal; 10, premium; 12, an Activity), a component 4, 5, 6, 7, 9 or 12, autocomplete 8 only, a
 * modal submit 4, 5, 6 or 7. test/providers.test.ts holds these numbers to discord-api-types' enums.
 */
export const RESPONSES: Record<number, number[]> = {
  1: [1],
  2: [4, 5, 9, 10, 12],
  3: [4, 5, 6, 7, 9, 10, 12],
  4: [8],
  5: [4, 5, 6, 7, 10],
};

/**
 * What a response's `data` must hold for Discord to take it (discord-api-types'
 * APIInteractionResponse members; Discord's "Interaction Response Object"): a message (4) is not
 * empty — content, embeds, components, attachments, a poll or a sticker — and its content at most
 * 2000 characters; autocomplete (8) gives `choices`, at most 25; a modal (9) its custom_id, title
 * and components. Undefined when it holds them.
 */
function dataProblem(type: number, data: JsonValue | undefined): string | undefined {
  const d = isObject(data) ? data : undefined;
  if (type === 4) {
    const nonEmpty = (k: string) => {
      const v = d?.[k];
      return Array.isArray(v) ? v.length > 0 : typeof v === 'string' ? v.length > 0 : v !== undefined && v !== null;
    };
    if (!['content', 'embeds', 'components', 'attachments', 'poll', 'sticker_ids'].some(nonEmpty))
      return 'a message response (type 4) with no content, embeds, components, attachments or poll: Discord answers "Cannot send an empty message"';
    if (typeof d?.content === 'string' && d.content.length > 2000) return `a message of ${d.content.length} characters (at most 2000)`;
  }
  if (type === 8 && (!Array.isArray(d?.choices) || d.choices.length > 25))
    return 'an autocomplete response (type 8) without data.choices, a list of at most 25';
  if (type === 9 && (typeof d?.custom_id !== 'string' || typeof d.title !== 'string' || !Array.isArray(d.components)))
    return 'a modal (type 9) without data.custom_id, data.title and data.components';
  return undefined;
}

export const discord: Provider = {
  name: 'discord',
  title: 'Discord',
  signatureHeader: 'X-Signature-Ed25519',
  signedHeaders: ['X-Signature-Ed25519', 'X-Signature-Timestamp'],
  timestamped: false,
  keyPair: true,
  rotation: false,
  contract: {
    batching: { events: 'one', source: 'discord.com/developers/docs/interactions/receiving-and-responding: one interaction a request' },
    resends: {
      events: 'never',
      source:
        'discord.com/developers/docs/interactions/receiving-and-responding: an interaction not answered within 3 seconds fails; it is not sent again',
    },
    endpointChecks: [
      {
        name: 'PING',
        signed: true,
        answer: '{"type": 1} (PONG); and 401 to a PING signed with another key, which Discord sends as a probe',
        source: 'discord.com/developers/docs/interactions/overview#setting-up-an-endpoint',
      },
    ],
    answer: {
      kind: 'body',
      what: "an interaction response (discord-api-types' APIInteractionResponse: type 1, 4, 5, 6, 7, 8 or 9)",
      deadlineMs: 3_000,
      source: 'discord.com/developers/docs/interactions/receiving-and-responding#responding-to-an-interaction',
    },
  },
  profiles: { discord: profile },
  defaultProfile: 'discord',
  verifier: {
    official: "discord-interactions' verifyKey",
    futureTimestamp: 'accepted',
    // verifyKeyMiddleware parses the body it verified (a PING must be told from a command).
    parsesJson: true,
    parsedBy: "discord-interactions' verifyKeyMiddleware",
    editSignatures: (v, edit) => edit(v),
    unknownType: { path: ['type'], value: 99 },
  },

  ownKey: () => ownPrivateKey('discord'),
  publicKey: publicKeyHex,
  publicKeyName: 'application public key',

  checkSecret(secret) {
    // Sending needs the private key; a public key given here is the receiver's, not ours.
    signingKey(secret);
  },

  checkVerifyingKey(key) {
    try {
      verifyingKey(key);
    } catch {
      // Never the key itself: it may be a private one given by mistake.
      throw new UsageError(
        'discord: the application public key must be 64 hex characters, as the Developer Portal shows it (or a private key to derive it from)',
      );
    }
  },

  sign(rawBody, secrets, ctx) {
    const [secret] = secrets;
    if (secret === undefined) throw new UsageError('discord signs with a private key: none was given');
    const timestamp = String(unixSeconds(ctx.nowMs));
    const signature = edSign(null, Buffer.concat([Buffer.from(timestamp), rawBody]), cachedKey(signers, secret, signingKey)).toString(
      'hex',
    );
    return {
      'Content-Type': 'application/json',
      'User-Agent': 'Discord-Interactions/1.0 (+https://discord.com)',
      'X-Signature-Ed25519': signature,
      'X-Signature-Timestamp': timestamp,
    };
  },

  verify(rawBody, headers, secrets, opts = {}) {
    requireSecrets(secrets);
    const signature = requireHeader(headers, 'X-Signature-Ed25519');
    const timestamp = requireHeader(headers, 'X-Signature-Timestamp');
    if (!/^[0-9a-fA-F]{128}$/.test(signature))
      throw new SignatureError('malformed_header', 'X-Signature-Ed25519 is not 128 hex characters');
    if (opts.headersOnly) return;
    const message = Buffer.concat([Buffer.from(timestamp), rawBody]);
    for (const secret of secrets) {
      let key: KeyObject;
      try {
        key = cachedKey(verifiers, secret, verifyingKey);
      } catch {
        continue;
      }
      if (edVerify(null, message, key, Buffer.from(signature, 'hex'))) return;
    }
    throw new SignatureError('no_match', 'X-Signature-Ed25519 does not verify with the public key');
  },

  deliveryId(_headers, rawBody) {
    const body = parseJson(rawBody);
    return isObject(body) && typeof body.id === 'string' ? body.id : undefined;
  },

  judgeAnswer(rawBody, answer) {
    const request = parseJson(rawBody);
    const kind = isObject(request) && typeof request.type === 'number' ? request.type : undefined;
    let got: JsonValue;
    try {
      got = JSON.parse(answer) as JsonValue;
    } catch {
      return `${JSON.stringify(answer.slice(0, 40))} is not an interaction response (JSON with a "type")`;
    }
    const type = isObject(got) ? got.type : undefined;
    const allowed = RESPONSES[kind ?? 0] ?? [];
    if (typeof type !== 'number' || !allowed.includes(type))
      return `an interaction of type ${kind} takes a response of type ${allowed.join(', ')}; it got ${typeof type === 'number' ? `type ${type}` : 'no "type"'}`;
    return dataProblem(type, isObject(got) ? got.data : undefined);
  },

  deferredAnswer(rawBody) {
    const request = parseJson(rawBody);
    const kind = isObject(request) && typeof request.type === 'number' ? request.type : 0;
    // Autocomplete has no deferred form: an empty list of choices is its quickest right answer.
    return kind === 4 ? { type: 8, data: { choices: [] } } : { type: kind === 3 ? 6 : 5 };
  },

  eventTypeOf(_headers, rawBody) {
    return typeName(parseJson(rawBody));
  },

  challengeAnswer(rawBody) {
    const body = parseJson(rawBody);
    return isObject(body) && body.type === 1 ? { type: 1 } : undefined;
  },

  otherSecret(secret) {
    // Another key pair's private key: its signatures do not verify with the receiver's public key.
    const other = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
    return secret.trim().toLowerCase() === other ? 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7' : other;
  },

  // Compact, every object's keys sorted, as the recorded interactions are written.
  serialize: (body: JsonObject) => JSON.stringify(sortedKeys(body)),

  freshFields(body: JsonObject) {
    return typeof body.id === 'string' ? [{ path: ['id'], make: (now: number) => snowflake(now) }] : [];
  },

  describe(body, fixtureName) {
    const id = isObject(body) && typeof body.id === 'string' ? body.id : undefined;
    return { eventType: typeName(body) ?? fixtureName, ...(id ? { deliveryId: id } : {}) };
  },

  newDeliveryId() {
    return snowflake();
  },
};
