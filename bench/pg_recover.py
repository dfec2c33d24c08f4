"""How soon a server answers again after its PostgreSQL comes back, under load.

    python bench/pg_recover.py [--outage 35] [--clients 4]

Starts a throwaway PostgreSQL (`scripts/postgres.sh`), a server on it (in this process: `ServerThread`),
`--clients` threads appending and searching every 0.1 s, pauses the database for `--outage` seconds
and resumes it, then prints how long after the database was back `/readyz` answered 200 and a search
succeeded. Run once with the pool's reconnect timeout as shipped (`_RECONNECT_S`, 5 s) and once with
psycopg_pool's default (300 s: a failed connection retried with backoff 1, 2, 4, 8 … s), in the same
run (these machines are noisy), and prints the ratio.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "postgres.sh"


def once(url: str, pgdata: str, outage: float, clients: int, reconnect: float) -> dict[str, float]:
    import httpx

    import palimpsest.store.postgres as pg
    from palimpsest import Memory, Settings
    from palimpsest.server.run import ServerThread

    pg._RECONNECT_S = reconnect  # type: ignore[attr-defined]
    home = Path("/tmp") / f"pg-recover-{uuid.uuid4().hex[:8]}"
    memory = Memory(home, url, settings=Settings.load(env={}, embedder="none", enable_write=True))
    stop = threading.Event()
    with ServerThread(memory) as base:
        def client(i: int) -> None:
            n = 0
            while not stop.is_set():
                try:
                    httpx.post(f"{base}/api/memory/tool/memory_append", json={"session": f"c{i}", "role": "user", "content": f"note {n}"}, timeout=10)
                    httpx.post(f"{base}/api/memory/tool/memory_search", json={"query": "note"}, timeout=10)
                except httpx.HTTPError:
                    pass
                n += 1
                time.sleep(0.1)

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
        for t in threads:
            t.start()
        time.sleep(2)
        subprocess.run(["bash", str(SCRIPT), "pause", pgdata], check=True, capture_output=True)
        time.sleep(outage)
        subprocess.run(["bash", str(SCRIPT), "resume", pgdata], check=True, capture_output=True)
        back = time.monotonic()
        while httpx.get(f"{base}/readyz", timeout=10).status_code != 200:
            time.sleep(0.2)
        ready = time.monotonic() - back
        while httpx.post(f"{base}/api/memory/tool/memory_search", json={"query": "note"}, timeout=10).status_code != 200:
            time.sleep(0.2)
        searched = time.monotonic() - back
        stop.set()
    memory.close()
    return {"reconnect_timeout": reconnect, "ready_s": round(ready, 1), "search_s": round(searched, 1)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--outage", type=float, default=35.0)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        url, pgdata, reconnect = args.child
        print(json.dumps(once(url, pgdata, args.outage, args.clients, float(reconnect))))
        return
    started = subprocess.run(["bash", str(SCRIPT), "start"], check=True, capture_output=True, text=True,
                             env={**__import__("os").environ, "PG_FAST": "1"}).stdout.strip().splitlines()
    pgdata = next(line.split("=", 1)[1] for line in started if line.startswith("PGDATA="))
    server = started[-1]
    rows = []
    try:
        for reconnect in (300.0, 5.0):
            db = f"recover_{uuid.uuid4().hex[:8]}"
            subprocess.run(["psql", server, "-qc", f"CREATE DATABASE {db}"], check=True, capture_output=True)
            url = server.rsplit("/", 1)[0] + f"/{db}"
            out = subprocess.run([sys.executable, __file__, "--outage", str(args.outage), "--clients", str(args.clients),
                                  "--child", url, pgdata, str(reconnect)], check=True, capture_output=True, text=True).stdout
            rows.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", pgdata], check=False, capture_output=True)
    base = rows[0]
    print(f"outage {args.outage:g} s, {args.clients} clients")
    for r in rows:
        print(f"reconnect_timeout {r['reconnect_timeout']:>5g} s: ready {r['ready_s']:>5} s, search {r['search_s']:>5} s after the "
              f"database  (ratio to the pool default {r['search_s'] / max(base['search_s'], 0.1):.2f})")


if __name__ == "__main__":
    main()
