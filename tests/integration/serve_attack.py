#!/usr/bin/env python3
"""Attacks on `vitals serve` beside a scraper (issue 23, items 2 and 3).

slowloris PORT ADDRS PER_ADDR SECONDS: ADDRS source addresses (127.0.0.2 on)
  each hold PER_ADDR connections that trickle one header byte every 2 s and
  never finish; meanwhile a scraper from another address (127.0.0.200) asks
  for /metrics once a second.  Prints "answered N of M" and exits 1 when the
  scraper got less than half of its answers.
guess PORT USER PASSWORD SECONDS: 8 threads send wrong passwords as fast as
  they can from 127.0.0.2-9 while a scraper from 127.0.0.200 asks with the
  right one once a second; same output and rule.
"""
import base64, socket, sys, threading, time

def scrape(port, src, auth=None, timeout=3.0):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(src, 0))
        head = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        if auth:
            head += "Authorization: Basic " + base64.b64encode(auth.encode()).decode() + "\r\n"
        s.sendall((head + "\r\n").encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        return data.startswith(b"HTTP/1.1 200")
    except OSError:
        return False

def slowloris(port, naddr, per_addr, seconds):
    stop = time.monotonic() + seconds
    def hold(src):
        socks = []
        while time.monotonic() < stop:
            while len(socks) < per_addr and time.monotonic() < stop:
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=2, source_address=(src, 0))
                    s.sendall(b"GET /metrics HTTP/1.1\r\n")
                    socks.append(s)
                except OSError:
                    time.sleep(0.05)
                    break
            for s in list(socks):
                try:
                    s.sendall(b"X")
                except OSError:
                    socks.remove(s)
                    s.close()
            time.sleep(2)
        for s in socks:
            s.close()
    threads = [threading.Thread(target=hold, args=(f"127.0.0.{2 + i}",), daemon=True) for i in range(naddr)]
    for t in threads:
        t.start()
    time.sleep(3)                      # the slots fill
    asked = got = 0
    while time.monotonic() < stop - 1:
        asked += 1
        got += scrape(port, "127.0.0.200")
        time.sleep(1)
    for t in threads:
        t.join()
    return asked, got

def guess(port, user, password, seconds):
    stop = time.monotonic() + seconds
    tries = [0]
    def flood(src):
        while time.monotonic() < stop:
            scrape(port, src, f"{user}:wrong{tries[0]}", timeout=2)
            tries[0] += 1
    threads = [threading.Thread(target=flood, args=(f"127.0.0.{2 + i}",), daemon=True) for i in range(8)]
    for t in threads:
        t.start()
    time.sleep(1)
    asked = got = 0
    while time.monotonic() < stop - 1:
        asked += 1
        got += scrape(port, "127.0.0.200", f"{user}:{password}")
        time.sleep(1)
    for t in threads:
        t.join()
    print(f"# {tries[0]} wrong guesses meanwhile")
    return asked, got

if __name__ == "__main__":
    if sys.argv[1] == "slowloris":
        asked, got = slowloris(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    else:
        asked, got = guess(int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5]))
    print(f"answered {got} of {asked}")
    sys.exit(0 if asked and got * 2 >= asked else 1)
