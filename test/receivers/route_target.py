"""A local service behind a listen with routes: it takes every POST and records which delivery it got.

Usage: route_target.py PORT LOGFILE [MODE]
MODE ok (the default) answers 200 to each POST and writes it as one JSON line in LOGFILE: the
path, and the X-Hookdrill-Source and X-Hookdrill-Delivery-Id headers listen forwards with.
MODE hang reads each request and never answers (a service stuck on a lock or a dead database
pool): the request is held until the client gives up and closes it. MODE 503 answers
503 to each (a service whose store is down). In every mode each request's arrival is written to
LOGFILE.held with how many requests the service held at that moment, itself included: the most
forwards listen had in flight to it at once. Standard library only; it prints "listening on PORT"
once it is ready.
"""
import json
import select
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
LOG = sys.argv[2]
MODE = sys.argv[3] if len(sys.argv) > 3 else "ok"

lock = threading.Lock()
held = 0


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        global held
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        delivery = self.headers.get("X-Hookdrill-Delivery-Id")
        with lock:
            held += 1
            with open(LOG + ".held", "a", encoding="utf-8") as f:
                f.write(json.dumps({"deliveryId": delivery, "held": held, "mode": MODE}) + "\n")
        try:
            self.answer(delivery)
        finally:
            with lock:
                held -= 1

    def answer(self, delivery):
        if MODE == "hang":
            # Never answer; wait until the client closes the connection (its timeout), so the
            # count of held requests is of those listen still waits on.
            while True:
                ready, _, _ = select.select([self.connection], [], [], 0.5)
                if ready:
                    try:
                        more = self.connection.recv(1, socket.MSG_PEEK)
                    except OSError:
                        more = b""
                    if not more:
                        break
            self.close_connection = True
            return
        if MODE == "503":
            self.send_response(503)
            self.send_header("Content-Length", "10")
            self.end_headers()
            self.wfile.write(b"store down")
            return
        line = {"path": self.path, "source": self.headers.get("X-Hookdrill-Source"), "deliveryId": delivery}
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
print(f"listening on {PORT}", flush=True)
server.serve_forever()
