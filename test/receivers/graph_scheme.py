"""A receiver of change notifications as Microsoft Graph delivers them, for a declared field scheme.

Graph (learn.microsoft.com/graph/change-notifications-delivery-webhooks):
  - "Notification endpoint validation": a POST with ?validationToken=<token> and an empty body is
    answered 200, text/plain, with the token URL-decoded, within 10 s (graph_validation.py holds
    the wrong echoes of it).
  - "Process the change notification": the body is {"value": [ ... ]}, several notifications at
    once; for each, "validate that the clientState property matches the value submitted with the
    subscription request" and discard one that does not; answer 202 Accepted to the request within
    3 s (a non-2xx is retried; a slow endpoint is throttled, then dropped).
So a forged notification is answered 202 like any other and stored nowhere: check judges it by
this receiver's store (--stored), not by the status.

The declared platform it serves (test/declared-field.test.ts, "notify") keys each notification on
its resourceData.id (the test platform's choice); for the built-in provider (test/verdicts-graph.test.ts,
--key id) each is kept under its own id, "Unique ID for the notification" (the changeNotification
resource, microsoftgraph/microsoft-graph-docs PR #8811). A notification without one (a lifecycle
notification, as Exchange sends it) is kept under the SHA-256 of its JSON. Each key is stored once,
fsync'd, before the 202.

  serve --secret S --port P --store FILE [--flaw F] [--key resourceData.id|id]
  ids --store FILE

Flaws (each wrong in exactly one way, or right another way):
  unchecked    stores every notification without comparing its clientState (a forgery is kept)
  refuse-403   answers 403 to a request holding a wrong clientState (right too: nothing is kept)
  first-only   compares the first notification's clientState and, when it matches, keeps the whole
               batch (a notification of another subscription, or forged, rides along)
  slow         stores, then does 4 s of work before answering 202 (Graph waits 3 s)
  resource-key keeps each notification under its resourceData.id (the message's, not the
               notification's): a second change of one message is dropped as a duplicate
  the validation's wrong echoes of graph_validation.py (json-token, json-type, encoded-token, plus-kept)
"""
import hashlib, hmac, json, time

# The store, the answering handler, the command line and the validationToken echo are the
# validation receiver's, beside this file (Python puts a script's own folder on its path).
from graph_validation import Answering, IdStore, cli, listen, token_answer


def serve(args):
    secret = args.secret.encode()
    store = IdStore(args.store)

    class Handler(Answering):
        def do_POST(self):
            length = int(self.headers.get('Content-Length') or 0)
            if length > 32 * 1024 * 1024:  # above any notification Graph sends
                self.close_connection = True
                return self.answer(413, b'{"error":"too large"}')
            body = self.rfile.read(length)
            validation = token_answer(self.path.partition('?')[2], args.flaw)
            if validation is not None:
                return self.answer(200, *validation)
            try:
                items = json.loads(body)['value']
                assert isinstance(items, list)
            except Exception:
                return self.answer(400, b'{"error":"not a notification collection"}')
            keep = []
            first_ok = None
            for item in items:
                if not isinstance(item, dict):
                    continue
                given = item.get('clientState')
                authentic = isinstance(given, str) and hmac.compare_digest(given.encode(), secret)
                if args.flaw == 'first-only':
                    if first_ok is None:
                        first_ok = authentic
                    authentic = first_ok
                if not authentic and args.flaw == 'refuse-403':
                    return self.answer(403, b'{"error":"clientState"}')
                if not authentic and args.flaw != 'unchecked':
                    continue  # discarded, as Graph asks: not from Graph
                if args.key == 'id' and args.flaw != 'resource-key':
                    key = item.get('id') or 'sha256:' + hashlib.sha256(json.dumps(item, separators=(',', ':'), ensure_ascii=False).encode()).hexdigest()
                else:
                    key = (item.get('resourceData') or {}).get('id')
                if isinstance(key, str) and key:
                    keep.append(key)
            store.add(keep)
            if args.flaw == 'slow':
                time.sleep(4)
            return self.answer(202, b'')

    listen(args.port, Handler)


if __name__ == '__main__':
    cli(serve)
