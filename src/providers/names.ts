/** Provider names alone, so that `--help` can list them without loading any provider code. */
export const PROVIDER_NAMES = ['stripe', 'github', 'slack', 'standard', 'svix', 'shopify'] as const;
