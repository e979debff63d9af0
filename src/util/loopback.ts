/** An address only this machine can reach: what the inspector binds to unless told otherwise. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Said on stderr when the inspector is bound elsewhere: it can read the inbox, and sign with the secret. */
export function exposedInspectorWarning(host: string, signs: boolean): string {
  return `warning: the inspector listens on ${host}, reachable from other machines: anyone with its URL can read every delivery${signs ? ', and replay and sign bodies with your secret' : ' and requeue rows'}`;
}
