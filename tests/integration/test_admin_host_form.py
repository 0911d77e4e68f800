"""Integration: the admin API's Host rules of RFC 9112 §3.2 without a token (issue 30).

Without a token the Host header is what protects the API from DNS rebinding (a foreign Host is
refused with 403: test_admin_hardening.py). A request that has no Host, two Host header lines, or
an absolute-form target naming another host is answered 400 (a request whose host the server
cannot tell is not one to serve), on every path but /healthz, with one rate-limited log line; an
absolute-form target naming this gateway is served. With a token, the token is the protection."""

from xgtest import Gateway, http_status, raw_http

SYNTH = "adapters:\n  - name: demo\n    type: synth\n"




def req(port, target, headers, version="HTTP/1.1", extra=b""):
    head = f"GET {target} {version}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    return raw_http(port, head.encode() + b"Connection: close\r\n" + extra + b"\r\n")


def test_host_rules_without_token():
    with Gateway(SYNTH) as gw:
        p = gw.port
        bad = [
            ("no Host", "/api/adapters", [], "HTTP/1.1", b"no Host header"),
            ("no Host (1.0)", "/api/entities", [], "HTTP/1.0", b"no Host header"),
            ("two Host", "/api/adapters", [("Host", "127.0.0.1"), ("Host", "127.0.0.1")],
             "HTTP/1.1", b"more than one Host header"),
            ("two Host, one foreign", "/api/entities",
             [("Host", "127.0.0.1"), ("host", "evil.example")], "HTTP/1.1",
             b"more than one Host header"),
            ("absolute-form, foreign", "http://evil.example/api/entities",
             [("Host", "127.0.0.1")], "HTTP/1.1", b"request target names another host"),
            ("absolute-form, foreign, port", f"http://evil.example:{p}/api/adapters",
             [("Host", f"127.0.0.1:{p}")], "HTTP/1.1", b"request target names another host"),
            ("absolute-form, foreign, /", "http://evil.example/", [("Host", "127.0.0.1")],
             "HTTP/1.1", b"request target names another host"),
        ]
        for what, target, headers, version, why in bad:
            resp = req(p, target, headers, version)
            assert http_status(resp) == 400, (what, resp[:300])
            assert why in resp, (what, resp)
            assert b"evil.example" not in resp.split(b"\r\n\r\n", 1)[1], (what, resp)
            assert b"x-content-type-options: nosniff" in resp.lower(), resp
        assert gw.wait_log("no Host header: answered 400")
        assert gw.wait_log("more than one Host header: answered 400")
        assert gw.wait_log("request target names another host ('evil.example'): answered 400")
        # served: one Host naming us; absolute-form naming us
        for target, headers in [("/api/adapters", [("Host", "127.0.0.1")]),
                                (f"http://127.0.0.1:{p}/api/adapters", [("Host", f"127.0.0.1:{p}")]),
                                ("http://localhost/api/adapters", [("Host", "localhost")])]:
            resp = req(p, target, headers)
            assert http_status(resp) == 200, (target, resp[:300])
        # /healthz stays open (probes)
        assert http_status(req(p, "/healthz", [], "HTTP/1.0")) == 200
        assert gw.proc.poll() is None


def test_with_token_the_token_decides():
    with Gateway(SYNTH, env={"XRGATE_ADMIN_TOKEN": "tok-hf"}) as gw:
        resp = req(gw.port, "/api/adapters", [("Authorization", "Bearer tok-hf")], "HTTP/1.0")
        assert http_status(resp) == 200, resp[:300]


if __name__ == "__main__":
    test_host_rules_without_token()
    test_with_token_the_token_decides()
    print("ok")
