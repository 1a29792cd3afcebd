"""A small evaluation service, as a team would write one, for service-ci's interop tests.

Usage: python3 eval_service.py {http.server|fastapi|flask} KEY PASSING_AGENT FAILING_AGENT

It listens on 127.0.0.1 on a free port and prints `PORT <n>` first, then one JSON line per request
it received: the method, the request target exactly as the request line carried it, and whether
the key came. A run is "running" on its first read and "completed" on the next, with
`results.gate.passed` true for PASSING_AGENT and false for FAILING_AGENT. Every other agent, an
unknown run and any other path are 404, and a wrong key is 401: the http.server one routes
strictly on the path it is handed, as a handler written for it would.
"""

import itertools
import json
import re
import socket
import sys
import threading

FRAMEWORK, KEY, PASSING, FAILING = sys.argv[1:5]
RUNS = {}
NEXT_ID = itertools.count(1)
LOCK = threading.Lock()
TRIGGER = re.compile(r"^/api/v1/agents/([0-9a-f-]{36})/runs$")
READ = re.compile(r"^/api/v1/agents/([0-9a-f-]{36})/runs/([A-Za-z0-9_]+)$")


def log(method, target, key):
    line = json.dumps({"method": method, "target": target, "key": key == KEY}) + "\n"
    with LOCK:  # one whole line at a time, whichever thread answers
        sys.stdout.write(line)
        sys.stdout.flush()


def handle(method, path, key):
    """(status, body) for a request to `path` (the path the framework routes on)."""
    if key != KEY:
        return 401, {"error": {"code": "unauthorized", "message": "invalid API key"}}
    trigger = TRIGGER.match(path)
    if method == "POST" and trigger and trigger.group(1) in (PASSING, FAILING):
        with LOCK:
            run_id = f"run_{next(NEXT_ID)}"
            RUNS[run_id] = {"agent": trigger.group(1), "reads": 0}
        return 201, {"run_id": run_id, "status": "queued"}
    read = READ.match(path)
    if method == "GET" and read and read.group(2) in RUNS:
        with LOCK:
            run = RUNS[read.group(2)]
            run["reads"] += 1
        if run["agent"] != read.group(1):
            return 404, {"error": {"code": "not_found", "message": "no such run"}}
        if run["reads"] == 1:
            return 200, {"run_id": read.group(2), "status": "running"}
        passed = run["agent"] == PASSING
        return 200, {
            "run_id": read.group(2),
            "status": "completed",
            "results": {"gate": {"passed": passed, "rule": "score >= 0.8", "score": 0.9 if passed else 0.4}},
        }
    return 404, {"error": {"code": "not_found", "message": f"no route for {method} {path}"}}


def free_socket():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def serve_http_server():
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            log(self.command, self.path, self.headers.get("X-API-Key"))
            # self.path is the request target as sent: an absolute-form target is not a route.
            status, body = handle(self.command, self.path, self.headers.get("X-API-Key"))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Retry-After", "0")
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


def serve_fastapi():
    import uvicorn
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    app = FastAPI()

    def answer(request: Request):
        target = request.scope.get("raw_path", b"").decode("latin-1") or request.url.path
        log(request.method, target, request.headers.get("x-api-key"))
        status, body = handle(request.method, request.url.path, request.headers.get("x-api-key"))
        return JSONResponse(body, status_code=status, headers={"Retry-After": "0"})

    @app.post("/api/v1/agents/{agent_id}/runs")
    def trigger(agent_id: str, request: Request):
        return answer(request)

    @app.get("/api/v1/agents/{agent_id}/runs/{run_id}")
    def read(agent_id: str, run_id: str, request: Request):
        return answer(request)

    @app.exception_handler(404)
    async def not_found(request: Request, exc):
        log(request.method, request.scope.get("raw_path", b"").decode("latin-1"), request.headers.get("x-api-key"))
        return JSONResponse({"detail": "Not Found"}, status_code=404)

    sock = free_socket()
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


def serve_flask():
    from flask import Flask, jsonify, request
    from werkzeug.serving import make_server

    app = Flask(__name__)

    @app.route("/api/v1/agents/<agent_id>/runs", methods=["POST"])
    @app.route("/api/v1/agents/<agent_id>/runs/<run_id>", methods=["GET"])
    def api(agent_id, run_id=None):
        target = request.environ.get("REQUEST_URI") or request.full_path
        log(request.method, target, request.headers.get("X-API-Key"))
        status, body = handle(request.method, request.path, request.headers.get("X-API-Key"))
        response = jsonify(body)
        response.status_code = status
        response.headers["Retry-After"] = "0"
        return response

    server = make_server("127.0.0.1", 0, app, threaded=True)
    print(f"PORT {server.server_port}", flush=True)
    server.serve_forever()


{"http.server": serve_http_server, "fastapi": serve_fastapi, "flask": serve_flask}[FRAMEWORK]()
