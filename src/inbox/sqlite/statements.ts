/** Every statement the SQLite inbox runs, each with what it guarantees. Parameters are named. */

/** Idempotent insert: a redelivery of a stored key is a no-op (changes = 0), never an error. */
export const PUT = `
  INSERT INTO deliveries (source, delivery_id, event_type, body, headers, received_at, status, attempts, next_attempt_at, route)
  VALUES (@source, @deliveryId, @eventType, @body, @headers, @receivedAt, 'pending', 0, @receivedAt, @route)
  ON CONFLICT (source, delivery_id) DO NOTHING`;

/**
 * Atomic claim with a lease, in one statement: the oldest due rows — pending and due, or working
 * with a lease that ran out (its worker died) — become working, their attempt count goes up by one
 * (the fence), and next_attempt_at becomes the lease's end. SQLite runs one writer at a time, so
 * two workers can never claim the same row. The partial index hands the rows over in order: no sort
 * of the backlog, however long it is.
 */
export const CLAIM = `
  UPDATE deliveries
     SET status = 'working', attempts = attempts + 1, next_attempt_at = @leaseUntil
   WHERE rowid IN (
     SELECT rowid FROM deliveries INDEXED BY deliveries_claim
      WHERE status IN ('pending', 'working') AND next_attempt_at <= @now
      ORDER BY next_attempt_at, received_at
      LIMIT @limit)
  RETURNING source, delivery_id, event_type, body, headers, received_at, attempts, attempt_base, next_attempt_at, route`;

/**
 * CLAIM, skipping rows recorded with the routes in @exclude (a JSON array: the worker's paused
 * routes). A row with no recorded route is claimed: the worker works its route out and releases it.
 */
export const CLAIM_EXCLUDING = `
  UPDATE deliveries
     SET status = 'working', attempts = attempts + 1, next_attempt_at = @leaseUntil
   WHERE rowid IN (
     SELECT rowid FROM deliveries INDEXED BY deliveries_claim
      WHERE status IN ('pending', 'working') AND next_attempt_at <= @now
        AND (route IS NULL OR route NOT IN (SELECT value FROM json_each(@exclude)))
      ORDER BY next_attempt_at, received_at
      LIMIT @limit)
  RETURNING source, delivery_id, event_type, body, headers, received_at, attempts, attempt_base, next_attempt_at, route`;

/**
 * Put a claimed row back untried: pending, due at @retryAt, its last error kept. attempts (the
 * fence) keeps its new value, so a late outcome of this claim changes nothing; attempt_base moves
 * with it, so the attempt the worker counts (attempts - attempt_base) is not spent.
 */
export const RELEASE = `
  UPDATE deliveries
     SET status = 'pending', next_attempt_at = @retryAt, attempt_base = attempt_base + 1
   WHERE source = @source AND delivery_id = @deliveryId AND status = 'working' AND attempts = @attempt`;

/** Fenced on the claim count (@attempt is the fence): a worker whose lease ran out and was taken over changes nothing. */
export const COMPLETE = `
  UPDATE deliveries
     SET status = 'done', finished_at = @now, last_error = NULL
   WHERE source = @source AND delivery_id = @deliveryId AND status = 'working' AND attempts = @attempt`;

export const RETRY = `
  UPDATE deliveries
     SET status = 'pending', next_attempt_at = @retryAt, last_error = @error
   WHERE source = @source AND delivery_id = @deliveryId AND status = 'working' AND attempts = @attempt`;

export const BURY = `
  UPDATE deliveries
     SET status = 'dead', finished_at = @now, last_error = @error
   WHERE source = @source AND delivery_id = @deliveryId AND status = 'working' AND attempts = @attempt`;

export const GET = `SELECT * FROM deliveries WHERE source = @source AND delivery_id = @deliveryId`;

export const LIST = `SELECT * FROM deliveries ORDER BY received_at, delivery_id LIMIT @limit`;
export const LIST_BY_STATUS = `SELECT * FROM deliveries WHERE status = @status ORDER BY received_at, delivery_id LIMIT @limit`;

export const COUNTS = `SELECT status, COUNT(*) AS n FROM deliveries GROUP BY status`;
export const OLDEST_PENDING = `SELECT MIN(received_at) AS at FROM deliveries WHERE status = 'pending'`;

/** Only finished rows move; a row under a lease (working) is left to its worker. */
export const REQUEUE = `
  UPDATE deliveries
     SET status = 'pending', next_attempt_at = @now, finished_at = NULL,
         attempt_base = CASE WHEN @resetAttempts THEN attempts ELSE attempt_base END
   WHERE source = @source AND delivery_id = @deliveryId AND status IN ('done', 'dead')`;

/** Drop payloads of old done rows; the key stays so a late redelivery is still a duplicate. */
export const PRUNE = `
  UPDATE deliveries SET body = NULL, headers = '{}'
   WHERE status = 'done' AND finished_at < @before AND body IS NOT NULL`;

/**
 * Deliveries per minute over the hour before @now by where they stand now: the minute index
 * (0 = oldest), a status and a count. The received_at index finds the hour's rows; only those are read.
 */
export const PER_MINUTE = `
  SELECT CAST((received_at - @from) / 60000 AS INTEGER) AS minute, status, COUNT(*) AS n
    FROM deliveries WHERE received_at >= @from AND received_at < @now
   GROUP BY minute, status`;

/** Rows `hookdrill check` sent carry its header: NULL here for every other row. */
const CHECK_MARK = `json_extract(headers, '$."x-hookdrill-check"')`;
const REAL_ONLY = `AND ${CHECK_MARK} IS NULL`;

/** Rows of one status grouped by error (served by the (status, last_error) index), with how many check sent. */
const byError = (status: 'dead' | 'pending', only: string) => `
  SELECT COALESCE(last_error, '') AS error, COUNT(*) AS count, MIN(delivery_id) AS exampleId,
         ${status === 'dead' ? 'MAX(finished_at) AS newestAt, MIN(finished_at) AS oldestAt' : 'MIN(next_attempt_at) AS nextAt'},
         SUM(${CHECK_MARK} IS NOT NULL) AS checkRows
    FROM deliveries WHERE status = '${status}'${status === 'pending' ? ' AND last_error IS NOT NULL' : ''} ${only}
   GROUP BY last_error ORDER BY count DESC, error LIMIT 20`;

export const DEAD_BY_ERROR = byError('dead', '');
export const DEAD_BY_ERROR_REAL = byError('dead', REAL_ONLY);
/** Pending rows that failed and wait for their next attempt: an outage before anything is dead. */
export const RETRYING_BY_ERROR = byError('pending', '');
export const RETRYING_BY_ERROR_REAL = byError('pending', REAL_ONLY);

/** Attempts of the rows that are not done: done rows are most of a healthy inbox and say nothing. */
const attempts = (only: string) => `
  SELECT attempts - attempt_base AS attempts, COUNT(*) AS n FROM deliveries WHERE status IN ('pending', 'working', 'dead') ${only} GROUP BY 1`;
export const ATTEMPTS = attempts('');
export const ATTEMPTS_REAL = attempts(REAL_ONLY);

export const RECENT_REQUEUES = `SELECT at, moved, selector, reset_attempts FROM requeue_log ORDER BY id DESC LIMIT 5`;

export const LOG_REQUEUE = `INSERT INTO requeue_log (at, moved, selector, reset_attempts) VALUES (@at, @moved, @selector, @resetAttempts)`;

/** The log entry is written before the first batch and kept current, so even a requeue cut short is on record. */
export const LOG_REQUEUE_PROGRESS = `UPDATE requeue_log SET moved = @moved WHERE id = @id`;

/**
 * Requeue one batch, by rowid, re-checking the status: a row a worker claimed since the batch was
 * chosen is under lease and stays as it is. `+status` keeps SQLite on the rowid: left to itself it
 * walked the status index over every done row, 150 ms a batch on a million-row inbox.
 */
export const REQUEUE_ROWIDS = `
  UPDATE deliveries
     SET status = 'pending', next_attempt_at = MIN(CASE WHEN status = 'pending' THEN next_attempt_at ELSE @now END, @now), finished_at = NULL,
         attempt_base = CASE WHEN @resetAttempts THEN attempts ELSE attempt_base END,
         route = CASE WHEN @reroute THEN NULL ELSE route END
   WHERE rowid IN (SELECT value FROM json_each(@rowids)) AND (+status IN ('done', 'dead') OR (@pending AND +status = 'pending'))`;
