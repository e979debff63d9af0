"""A local service behind a listen with routes: it takes every POST and records which delivery it got.

Usage: route_target.py PORT LOGFILE
Each request becomes one JSON line in LOGFILE: the path, and the X-Hookdrill-Source and
X-Hookdrill-Delivery-Id headers listen forwards with. Standard library only; it prints
"listening on PORT" once it is ready, and answers 200 to each POST.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
LOG = sys.argv[2]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        line = {
            "path": self.path,
            "source": self.headers.get("X-Hookdrill-Source"),
            "deliveryId": self.headers.get("X-Hookdrill-Delivery-Id"),
        }
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
print(f"listening on {PORT}", flush=True)
server.serve_forever()
