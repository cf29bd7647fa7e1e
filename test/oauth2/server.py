"""OAuth2 authorisation server for the pulsarc tests (loopback, HTTPS).

Serves OpenID discovery and an RFC 6749 client-credentials token endpoint
whose access tokens are HS256 JWTs signed with the test broker's
tokenSecretKey, so the real broker's token provider accepts them
(sub = the client id).

Leading path segments of the form name=value are options; the rest is the
endpoint. The issuer URL a test configures carries its options, e.g.
https://localhost:PORT/tag=t1/ttl=3 serves
  /tag=t1/ttl=3/.well-known/openid-configuration
  /tag=t1/ttl=3/oauth/token
Options:
  tag=NAME     requests are counted under NAME (GET /stats?tag=NAME)
  ttl=SECONDS  token lifetime (expires_in and exp), default 3600
  fault=KIND   disc-garbage disc-huge disc-500 token-garbage token-huge
               token-500 token-slow token-no-access-token
  faultn=N     the fault hits only the first N requests it applies to
  lie=SECONDS  the JWT's exp is this much earlier than expires_in says (an
               issuer clock ahead of the client's): the broker challenges
               tokens the client still believes valid
Usage: server.py --cert PEM --key PEM --signing-key FILE --clients JSON
                 --port-file FILE
"""
import argparse
import base64
import json
import os
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt

HUGE_BYTES = 32 * 1024 * 1024
SLOW_SECONDS = 20

stats_lock = threading.Lock()
stats = {}  # tag -> {"discovery": n, "token_requests": n, "issued": n, "faults": n}


def count(tag, what):
    with stats_lock:
        s = stats.setdefault(tag, {"discovery": 0, "token_requests": 0, "issued": 0, "faults": 0})
        s[what] += 1
        return s[what]


def split_options(path):
    """(options dict, option prefix, endpoint) of a request path."""
    segs = [s for s in path.split("/") if s]
    opts, used = {}, []
    while segs and "=" in segs[0]:
        k, v = segs.pop(0).split("=", 1)
        opts[k] = v
        used.append(f"{k}={v}")
    prefix = "".join("/" + u for u in used)
    return opts, prefix, "/".join(segs)


class Handler(BaseHTTPRequestHandler):
    server_version = "pulsarc-test-oauth2"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: the tests read results, not logs
        pass

    def send_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def send_raw(self, status, body, ctype="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_huge(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(HUGE_BYTES))
        self.end_headers()
        chunk = b"[" * 65536
        try:
            for _ in range(HUGE_BYTES // len(chunk)):
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass
        self.close_connection = True

    def fault(self, opts, tag, kind_prefix):
        """The fault kind to play for this request, or None."""
        kind = opts.get("fault", "")
        if not kind.startswith(kind_prefix):
            return None
        n = count(tag, "faults")
        limit = opts.get("faultn")
        if limit is not None and n > int(limit):
            return None
        return kind[len(kind_prefix):]

    def play(self, kind):
        if kind == "garbage":
            self.send_raw(200, b"<html>this is not json \x00\xff</html>", "text/html")
        elif kind == "huge":
            self.send_huge()
        elif kind == "500":
            self.send_raw(500, b"internal error")
        elif kind == "slow":
            time.sleep(SLOW_SECONDS)
            self.send_raw(503, b"too slow")
        elif kind == "no-access-token":
            self.send_json(200, {"token_type": "Bearer", "expires_in": 60})
        else:
            self.send_raw(400, b"unknown fault " + kind.encode())

    def issuer(self, prefix):
        host = self.headers.get("Host", f"localhost:{self.server.server_port}")
        return f"https://{host}{prefix}"

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/stats":
            tag = urllib.parse.parse_qs(url.query).get("tag", [""])[0]
            with stats_lock:
                s = dict(stats.get(tag, {"discovery": 0, "token_requests": 0, "issued": 0,
                                         "faults": 0}))
            self.send_json(200, s)
            return
        opts, prefix, endpoint = split_options(url.path)
        if endpoint != ".well-known/openid-configuration":
            self.send_json(404, {"error": "not_found"})
            return
        tag = opts.get("tag", "")
        count(tag, "discovery")
        kind = self.fault(opts, tag, "disc-")
        if kind:
            self.play(kind)
            return
        iss = self.issuer(prefix)
        self.send_json(200, {
            "issuer": iss,
            "token_endpoint": iss + "/oauth/token",
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_post",
                                                      "client_secret_basic"],
            "response_types_supported": ["token"],
        })

    def read_form(self):
        n = int(self.headers.get("Content-Length", "0") or 0)
        if n > 65536:
            return None
        raw = self.rfile.read(n).decode("utf-8", "replace")
        return {k: v[0] for k, v in urllib.parse.parse_qs(raw, keep_blank_values=True).items()}

    def client_auth(self, form):
        """(client_id, secret) from HTTP Basic or the body (RFC 6749 2.3.1)."""
        h = self.headers.get("Authorization", "")
        if h.lower().startswith("basic "):
            try:
                dec = base64.b64decode(h[6:].strip()).decode()
                cid, sec = dec.split(":", 1)
                return urllib.parse.unquote_plus(cid), urllib.parse.unquote_plus(sec)
            except (ValueError, UnicodeDecodeError):
                return None, None
        return form.get("client_id"), form.get("client_secret")

    def do_POST(self):
        opts, prefix, endpoint = split_options(urllib.parse.urlsplit(self.path).path)
        if endpoint != "oauth/token":
            self.send_json(404, {"error": "not_found"})
            return
        tag = opts.get("tag", "")
        count(tag, "token_requests")
        form = self.read_form()
        if form is None:
            self.send_json(400, {"error": "invalid_request",
                                 "error_description": "request body too large"})
            return
        kind = self.fault(opts, tag, "token-")
        if kind:
            self.play(kind)
            return
        if form.get("grant_type") != "client_credentials":
            self.send_json(400, {"error": "unsupported_grant_type",
                                 "error_description": "only client_credentials is supported"})
            return
        cid, secret = self.client_auth(form)
        known = self.server.clients.get(cid or "")
        if not cid or known is None or secret != known:
            self.send_json(401, {"error": "invalid_client",
                                 "error_description": "client authentication failed"})
            return
        ttl = int(opts.get("ttl", "3600"))
        now = int(time.time())
        exp = now + max(ttl - int(opts.get("lie", "0")), 1)
        claims = {"sub": cid, "iat": now, "exp": exp, "iss": self.issuer(prefix)}
        if form.get("audience"):
            claims["aud"] = form["audience"]
        token = jwt.encode(claims, self.server.signing_key, algorithm="HS256")
        count(tag, "issued")
        answer = {"access_token": token, "token_type": "Bearer", "expires_in": ttl}
        if form.get("scope"):
            answer["scope"] = form["scope"]
        self.send_json(200, answer)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def finish_request(self, request, client_address):
        # The TLS handshake runs on the request's own thread, so a client
        # that connects and stalls cannot hold up everyone else.
        try:
            request = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        super().finish_request(request, client_address)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--signing-key", required=True)
    ap.add_argument("--clients", required=True)
    ap.add_argument("--port-file", required=True)
    a = ap.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    srv.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    srv.tls.load_cert_chain(a.cert, a.key)
    with open(a.signing_key, "rb") as f:
        srv.signing_key = f.read()
    with open(a.clients) as f:
        srv.clients = json.load(f)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_port))
    os.replace(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
