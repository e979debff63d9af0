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
its resourceData.id (Graph's examples carry no id of the notification itself: the test platform's
choice). Each key is stored once, fsync'd, before the 202.

  serve --secret S --port P --store FILE [--flaw F]
  ids --store FILE

Flaws (each wrong in exactly one way, or right another way):
  unchecked    stores every notification without comparing its clientState (a forgery is kept)
  refuse-403   answers 403 to a request holding a wrong clientState (right too: nothing is kept)
"""
import hmac, json

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
            validation = token_answer(self.path.partition('?')[2], '')
            if validation is not None:
                return self.answer(200, *validation)
            try:
                items = json.loads(body)['value']
                assert isinstance(items, list)
            except Exception:
                return self.answer(400, b'{"error":"not a notification collection"}')
            keep = []
            for item in items:
                if not isinstance(item, dict):
                    continue
                given = item.get('clientState')
                authentic = isinstance(given, str) and hmac.compare_digest(given.encode(), secret)
                if not authentic and args.flaw == 'refuse-403':
                    return self.answer(403, b'{"error":"clientState"}')
                if not authentic and args.flaw != 'unchecked':
                    continue  # discarded, as Graph asks: not from Graph
                key = (item.get('resourceData') or {}).get('id')
                if isinstance(key, str) and key:
                    keep.append(key)
            store.add(keep)
            return self.answer(202, b'')

    listen(args.port, Handler)


if __name__ == '__main__':
    cli(serve)
