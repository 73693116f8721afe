"""A smart-HTTP git server over TLS for Proven's tests: `git http-backend` as CGI.

Usage: git_https_server.py ROOT CERT KEY AUTH PORT_FILE LOG
AUTH is "user:secret" (Basic authentication required) or "" (none). The chosen port is
written to PORT_FILE once the server listens. LOG gets one line per request: the method,
the path and whether it was authorised; never a header.
"""
import base64
import http.server
import os
import socketserver
import ssl
import subprocess
import sys

root, cert, key, auth, port_file, log = sys.argv[1:7]
expected = ("Basic " + base64.b64encode(auth.encode()).decode()) if auth else None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):
        pass

    def note(self, outcome):
        with open(log, "a") as f:
            f.write("%s %s %s\n" % (self.command, self.path.split("?")[0], outcome))

    def do_GET(self):
        self.cgi()

    def do_POST(self):
        self.cgi()

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = self.headers.get("Content-Length")
        return self.rfile.read(int(length)) if length else b""

    def cgi(self):
        if expected and self.headers.get("Authorization") != expected:
            self.note("unauthorised")
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.note("ok")
        path, _, query = self.path.partition("?")
        body = self.body()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": root,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_PROJECT_ROOT": root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
        }
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True
        ).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.split(b"\r\n"):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


httpd = Server(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
with open(port_file + ".tmp", "w") as f:
    f.write(str(httpd.server_address[1]))
os.rename(port_file + ".tmp", port_file)
httpd.serve_forever()
