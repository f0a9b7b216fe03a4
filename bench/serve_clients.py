#!/usr/bin/env python3
"""resmon --serve under 64 idle or 64 slow (slowloris: a byte every 4 s)
connections, all on 127.0.0.1 (issue 18, items 5 and 6).

usage: bench/serve_clients.py RESMON idle|slow
  idle: the delay from the command's end to resmon's exit
  slow: scrapes answered (of 10, 4 s timeout each) during the attack
"""
import socket, subprocess, sys, time, threading, urllib.request
RESMON = sys.argv[1]; mode = sys.argv[2]
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); return s.getsockname()[1]
port = free_port()
p = subprocess.Popen([RESMON, "-q", "--serve", f"127.0.0.1:{port}", "--", sys.executable, "-c",
    "import sys\nprint('ready', flush=True)\nsys.stdin.read()\n"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
assert p.stdout.readline() == "ready\n"
socks = []
if mode == "idle":
    for _ in range(64):
        socks.append(socket.create_connection(("127.0.0.1", port)))
    time.sleep(0.5)
    t = time.monotonic(); p.stdin.close(); p.wait(); d = time.monotonic() - t
    print(f"exit delay with 64 idle connections: {d:.2f} s")
else:
    stop = False
    def trickle():
        req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-a: " + b"a" * 1000
        for s in socks: 
            try: s.send(req[:1])
            except OSError: pass
        i = 1
        while not stop:
            time.sleep(4)
            for s in socks:
                try: s.send(req[i:i+1])
                except OSError: pass
            i += 1
    for _ in range(64):
        try: socks.append(socket.create_connection(("127.0.0.1", port)))
        except OSError: pass
    th = threading.Thread(target=trickle, daemon=True); th.start()
    time.sleep(0.5)
    ok = 0; t = time.monotonic()
    for _ in range(10):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=4) as r:
                ok += r.status == 200
        except Exception as e: pass
    print(f"scrapes answered during 64 slow connections: {ok} of 10 in {time.monotonic()-t:.1f} s")
    stop = True
    p.stdin.close(); p.wait()
