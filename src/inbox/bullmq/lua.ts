/*
 * hookdrill's own Lua beside BullMQ's scripts (each one command, so atomic in Redis).
 */

/**
 * Lua: whether a job's data begins with the given text (the put's own nonce). A job id is created
 * by exactly one add, so of many puts of one key exactly one reads its own nonce back.
 */
export const MINE_LUA = `local d = redis.call('HGET', KEYS[1], 'data')
if not d then return 0 end
if string.sub(d, 1, string.len(ARGV[1])) == ARGV[1] then return 1 end
return 0`;

/** Lua: a requeued dead job keeps its last error (BullMQ's retry clears it), unless it has a newer one. */
export const KEEP_ERROR_LUA = `if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HSETNX', KEYS[1], 'failedReason', ARGV[1]) end
return 0`;

/** Lua: replace the requeue record with this id (among the newest) by its new text. */
export const UPDATE_RECORD_LUA = `local items = redis.call('LRANGE', KEYS[1], 0, 99)
for i, v in ipairs(items) do
  local ok, rec = pcall(cjson.decode, v)
  if ok and type(rec) == 'table' and rec['id'] == ARGV[1] then
    redis.call('LSET', KEYS[1], i - 1, ARGV[2])
    return 1
  end
end
return 0`;

/**
 * Lua: a pending job about to be made due now ("retry now"): 1 if it waits in delayed, 2 if it is
 * already waiting, 0 if it is neither (claimed meanwhile, or gone). With ARGV[2] = '1' its attempts
 * start again, as BullMQ's retry with resetAttemptsMade/Started does — only while no worker holds it.
 */
export const PREPARE_RETRY_NOW_LUA = `local where = 0
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then where = 1
elseif redis.call('LPOS', KEYS[3], ARGV[1]) then where = 2 end
if where > 0 and ARGV[2] == '1' then redis.call('HSET', KEYS[1], 'ats', 0, 'atm', 0) end
return where`;

/**
 * Lua: a claimed job about to be put back untried (a release): its attempts started go down by one
 * — BullMQ's moveToDelayed leaves them as the claim counted them — only while this claim's lock
 * (ARGV[1], the fence) holds it. 1 if taken back, 0 if the lock is another's or gone. Run before
 * the move: should the move then fail (the lock ran out in between), the row keeps one attempt
 * more than it has had, never one less.
 */
export const UNCOUNT_ATTEMPT_LUA = `if redis.call('GET', KEYS[1] .. ':lock') ~= ARGV[1] then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'ats') or '0') > 0 then redis.call('HINCRBY', KEYS[1], 'ats', -1) end
return 1`;

/** The scripts above, as ioredis commands (defineCommand). */
export type HookdrillCommands = {
  hookdrillMine(key: string, prefix: string): Promise<number>;
  hookdrillKeepError(key: string, error: string): Promise<number>;
  hookdrillUpdateRecord(key: string, id: string, json: string): Promise<number>;
  hookdrillPrepareRetryNow(job: string, delayed: string, wait: string, id: string, reset: '0' | '1'): Promise<number>;
  hookdrillUncountAttempt(job: string, token: string): Promise<number>;
};
