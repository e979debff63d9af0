"""A receiver of a declared scheme validated as Microsoft Graph validates a notification URL.

Graph (learn.microsoft.com/graph/change-notifications-delivery-webhooks, "Notification endpoint
validation"): when a subscription is created it POSTs to the notification URL with
`?validationToken=<token>` in the query and an empty body; the receiver answers 200 with the
token, URL-decoded, alone as the body, Content-Type text/plain, within 10 seconds. The token is
form-encoded ("Validation%3a+Testing+client+application+reachability+for+subscription+Request-Id%3a+…",
a recorded validation in abraunegg/onedrive's docs/webhooks.md): "+" is a space.

The declared provider it serves (test/declared-query-handshake.test.ts, "notify") sends its
events with the shared token in X-Notify-Token and the delivery id in X-Notify-Id; this receiver
compares the token in constant time, stores each id once (fsync'd), answers 2xx after the store.

  serve --secret S --port P --store FILE [--flaw F]
  ids --store FILE

Flaws (each wrong in exactly one way):
  json-token     answers the validation 200 with {"validationToken": token}, as a JSON API's default does
  encoded-token  echoes the query's value as it arrived, still URL-encoded
  plus-kept      decodes %xx but not "+" (unquote, not unquote_plus): spaces come back as "+"
  verify-first   checks X-Notify-Token before looking at the query: the unsigned validation gets 401
  slow-validation  answers the validation right, after 4 s (Graph waits 10 s for it, 3 s for a notification)
  json-type      echoes the decoded token alone, but as application/json (Graph compares the body:
                 Microsoft's own samples answer "plain/text" and validate)
"""
import argparse, hmac, json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote


def token_answer(raw_query, flaw):
    """(body, content type) answering a validation, or None when the query holds no validationToken."""
    if flaw == 'encoded-token' or flaw == 'plus-kept':
        for part in raw_query.split('&'):
            name, _, value = part.partition('=')
            if name == 'validationToken' and value:
                return (value if flaw == 'encoded-token' else unquote(value)).encode(), 'text/plain'
        return None
    values = parse_qs(raw_query).get('validationToken')
    if not values or not values[0]:
        return None
    if flaw == 'json-token':
        return json.dumps({'validationToken': values[0]}).encode(), 'application/json'
    if flaw == 'json-type':
        return values[0].encode(), 'application/json'
    return values[0].encode(), 'text/plain; charset=utf-8'


class IdStore:
    """Ids kept one a line in a file, each written and fsynced before the answer; read back at start,
    so a restarted receiver still knows what it holds (graph_scheme.py keeps its items here too)."""

    def __init__(self, path):
        self.path, self.lock, self.seen = path, threading.Lock(), set()
        if os.path.exists(path):
            with open(path) as f:
                self.seen.update(line.strip() for line in f if line.strip())

    def add(self, ids):
        with self.lock:
            fresh = [i for i in dict.fromkeys(ids) if i not in self.seen]
            if fresh:
                with open(self.path, 'a') as f:
                    f.write(''.join(i + '\n' for i in fresh))
                    f.flush()
                    os.fsync(f.fileno())
                self.seen.update(fresh)


class Answering(BaseHTTPRequestHandler):
    """A quiet handler with one way to answer: a status, a body and its Content-Type."""

    def log_message(self, *a):
        pass

    def answer(self, status, body=b'', ctype='application/json'):
        self.send_response(status)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def listen(port, handler):
    server = ThreadingHTTPServer(('127.0.0.1', port), handler)
    print(f'listening on {port}', flush=True)
    server.serve_forever()


def cli(serve):
    """`serve --secret S --port P --store F [--flaw X]`, or `ids --store F`: the ids held."""
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('serve')
    s.add_argument('--secret', required=True)
    s.add_argument('--port', type=int, required=True)
    s.add_argument('--store', required=True)
    s.add_argument('--flaw', default='')
    # What a notification is kept under: its resourceData.id (a declared platform's choice) or its own id (Graph's).
    s.add_argument('--key', choices=['resourceData.id', 'id'], default='resourceData.id')
    i = sub.add_parser('ids')
    i.add_argument('--store', required=True)
    args = p.parse_args()
    if args.cmd == 'serve':
        serve(args)
    elif os.path.exists(args.store):
        sys.stdout.write(open(args.store).read())


def serve(args):
    secret = args.secret.encode()
    store = IdStore(args.store)

    class Handler(Answering):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get('Content-Length') or 0))
            path, _, query = self.path.partition('?')
            given = (self.headers.get('X-Notify-Token') or '').encode()
            authentic = hmac.compare_digest(given, secret)
            if args.flaw == 'verify-first' and not authentic:
                return self.answer(401, b'{"error":"token"}')
            validation = token_answer(query, args.flaw)
            if validation is not None:
                if args.flaw == 'slow-validation':
                    time.sleep(4)
                return self.answer(200, *validation)
            if not authentic:
                return self.answer(401, b'{"error":"token"}')
            delivery = self.headers.get('X-Notify-Id') or ''
            if not delivery:
                return self.answer(400, b'{"error":"no id"}')
            store.add([delivery])
            return self.answer(202, b'')

    listen(args.port, Handler)



if __name__ == '__main__':
    cli(serve)
