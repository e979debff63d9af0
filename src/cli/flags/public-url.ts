/** One wording for `--public-url` wherever a request is signed for a URL-bound provider (send, check). */
export const PUBLIC_URL_HELP =
  'the URL the provider would post to, when a proxy in front of the receiver forwards to --url: Square, Twilio and HubSpot sign it (requests carry X-Forwarded-Proto and -Host as the proxy adds them) (default: --url)';
