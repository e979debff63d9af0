"""A webhook receiver in Python that keeps the state a handler would (a subscription's status, an
invoice's paid flag, an issue's state), for `hookdrill scenario` tests. Two ways to be written:

  python3 state_receiver.py serve naive|ordered stripe|github SECRET PORT STATE_FILE
  python3 state_receiver.py state STATE_FILE        # prints the state the HOOKDRILL_VAR_* ids name

naive applies whatever arrives last; ordered keeps the newer version by the event's own time
(Stripe's event `created`, GitHub's issue `updated_at`) — what both providers tell you to do;
queued answers 200 at once and a worker applies each event 150 ms later, naively, in arrival order
(its state passes through the right answer on the way to a wrong one).
"""
import hashlib, hmac, json, os, queue, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}

def save(path, state):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(state, f)
    os.replace(tmp, path)

def verify(provider, secret, headers, body):
    if provider == 'stripe':
        parts = dict(p.split('=', 1) for p in headers.get('Stripe-Signature', '').split(',') if '=' in p)
        expected = hmac.new(secret.encode(), f"{parts.get('t', '')}.".encode() + body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, parts.get('v1', ''))
    expected = 'sha256=' + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, headers.get('X-Hub-Signature-256', ''))

def apply(mode, provider, state, event):
    if provider == 'stripe':
        obj, when = event['data']['object'], event['created']
        if event['type'].startswith('customer.subscription.'):
            key, value = 'sub:' + obj['id'], {'status': obj['status']}
        elif event['type'] in ('invoice.paid', 'invoice.payment_failed'):
            key, value = 'inv:' + obj['id'], {'paid': event['type'] == 'invoice.paid'}
        else:
            return
    else:
        issue = event['issue']
        key, value, when = 'issue:' + str(issue['number']), {'state': issue['state']}, issue['updated_at']
    old = state.get(key)
    if mode == 'ordered' and old is not None and old['at'] > when:
        return  # an older version arriving late: keep the newer one
    state[key] = dict(value, at=when)

def serve(mode, provider, secret, port, path):
    work = queue.Queue()
    def worker():
        while True:
            event = work.get()
            time.sleep(0.15)
            with lock:
                state = load(path)
                apply('naive', provider, state, event)
                save(path, state)
    if mode == 'queued':
        threading.Thread(target=worker, daemon=True).start()
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
            if not verify(provider, secret, self.headers, body):
                self.send_response(401); self.end_headers(); return
            if mode == 'queued':
                work.put(json.loads(body))
            else:
                with lock:
                    state = load(path)
                    apply(mode, provider, state, json.loads(body))
                    save(path, state)
            self.send_response(200); self.end_headers(); self.wfile.write(b'ok')
        def log_message(self, *args):
            pass
    ThreadingHTTPServer(('127.0.0.1', int(port)), Handler).serve_forever()

def show(path):
    state, v = load(path), lambda name: os.environ.get('HOOKDRILL_VAR_' + name)
    if v('SUBSCRIPTION'):
        out = {'subscription': v('SUBSCRIPTION'), 'status': state.get('sub:' + v('SUBSCRIPTION'), {}).get('status')}
    elif v('INVOICE'):
        out = {'invoice': v('INVOICE'), 'paid': state.get('inv:' + v('INVOICE'), {}).get('paid')}
    else:
        out = {'issue': int(v('ISSUE')), 'state': state.get('issue:' + v('ISSUE'), {}).get('state')}
    print(json.dumps(out))

if sys.argv[1] == 'serve':
    serve(*sys.argv[2:7])
else:
    show(sys.argv[2])
