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
import argparse, hmac, json, os, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs


def serve(args):
    secret = args.secret.encode()
    lock = threading.Lock()
    seen = set()
    if os.path.exists(args.store):
        with open(args.store) as f:
            seen.update(line.strip() for line in f if line.strip())

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def answer(self, status, body=b'', ctype='application/json'):
            self.send_response(status)
            self.send_header('Content-Type', ctype)
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            length = int(self.headers.get('Content-Length') or 0)
            if length > 32 * 1024 * 1024:  # above any notification Graph sends
                self.close_connection = True
                return self.answer(413, b'{"error":"too large"}')
            body = self.rfile.read(length)
            token = parse_qs(self.path.partition('?')[2]).get('validationToken')
            if token and token[0]:
                return self.answer(200, token[0].encode(), 'text/plain; charset=utf-8')
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
            with lock:
                fresh = [k for k in keep if k not in seen]
                if fresh:
                    with open(args.store, 'a') as f:
                        f.write(''.join(k + '\n' for k in fresh))
                        f.flush()
                        os.fsync(f.fileno())
                    seen.update(fresh)
            return self.answer(202, b'')

    server = ThreadingHTTPServer(('127.0.0.1', args.port), Handler)
    print(f'listening on {args.port}', flush=True)
    server.serve_forever()


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('serve')
    s.add_argument('--secret', required=True)
    s.add_argument('--port', type=int, required=True)
    s.add_argument('--store', required=True)
    s.add_argument('--flaw', default='')
    i = sub.add_parser('ids')
    i.add_argument('--store', required=True)
    args = p.parse_args()
    if args.cmd == 'serve':
        serve(args)
    elif os.path.exists(args.store):
        sys.stdout.write(open(args.store).read())


if __name__ == '__main__':
    main()
