/** Durability of what Redis holds, as CONFIG GET reports it: for listen's warnings. */
export interface RedisDurability {
  /** False when Redis refuses CONFIG (managed services often rename it): then nothing else is known. */
  known: boolean;
  appendonly?: boolean;
  appendfsync?: string;
  maxmemoryPolicy?: string;
  /** One line each for what can lose a delivery answered 200 (AOF off or not always synced, eviction on); empty: nothing. */
  warnings: string[];
}

/**
 * What CONFIG GET appendonly / appendfsync / maxmemory-policy say about keeping what Redis has
 * acknowledged: a receiver answers 200 once Redis has the job, so anything Redis can lose after
 * that is a delivery lost. Pure (the inbox asks Redis; this reads the answer).
 */
export function durabilityOf(server: string, config: Readonly<Record<string, string>>): RedisDurability {
  const appendonly = config.appendonly === 'yes';
  const appendfsync = config.appendfsync;
  const maxmemoryPolicy = config['maxmemory-policy'];
  const risks: string[] = [];
  if (!appendonly) risks.push('AOF is off (appendonly no): deliveries answered 200 since the last RDB snapshot are lost if Redis restarts');
  else if (appendfsync === 'everysec')
    risks.push(
      'AOF is synced every second (appendfsync everysec): up to a second of deliveries answered 200 can be lost if the host crashes',
    );
  else if (appendfsync === 'no')
    risks.push('AOF is synced when the OS decides (appendfsync no): deliveries answered 200 can be lost if the host crashes');
  if (maxmemoryPolicy && maxmemoryPolicy !== 'noeviction')
    risks.push(`maxmemory-policy is ${maxmemoryPolicy}: Redis may evict stored deliveries under memory pressure (BullMQ needs noeviction)`);
  return {
    known: true,
    appendonly,
    ...(appendfsync !== undefined ? { appendfsync } : {}),
    ...(maxmemoryPolicy !== undefined ? { maxmemoryPolicy } : {}),
    warnings: risks.map((r) => `Redis at ${server}: ${r}`),
  };
}

/** When Redis refuses CONFIG GET: nothing is known, and listen says so. */
export function durabilityUnknown(server: string, why: string): RedisDurability {
  return {
    known: false,
    warnings: [`Redis at ${server} refuses CONFIG GET (${why}): whether deliveries answered 200 survive a Redis restart is unknown`],
  };
}
