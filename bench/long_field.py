"""What stands out in a long field's middle (`indexer.standing_out`): its time on three
logs of 8–18 MB, beside the time of one plain `str.split` of the same text in the same run
(a ratio, not an absolute time: these machines are noisy), and whether the one line that
matters was kept.

    .venv/bin/python bench/long_field.py
"""

from __future__ import annotations

import random
import time

from palimpsest.ingest.indexer import standing_out


def logs() -> dict[str, tuple[str, str]]:
    rng = random.Random(1)
    quiet = [f"2025-01-01 12:00:{i % 60:02d} INFO processed batch {i} of job alpha ok" for i in range(200_000)]
    quiet[100_000] = "2025-01-01 ERROR checksum mismatch AUDIT-Z9931 in ledger"
    words = ["alpha", "beta", "gamma", "retry", "connection", "socket", "timeout", "request"]
    noisy = [f"WARN {rng.choice(words)} {rng.choice(words)} failed for id{rng.randint(0, 10**6)} at step {i}" for i in range(150_000)]
    noisy[100_000] = "2025-01-01 ERROR checksum mismatch AUDIT-Z9931 in ledger"
    retries = [f"ERROR retrying upload chunk {i} of 400000" for i in range(400_000)]
    retries[300_000] = "fatal: AUDIT-Z9931 checksum mismatch"
    return {"quiet log, one error": ("\n".join(quiet), "AUDIT-Z9931"), "noisy warnings": ("\n".join(noisy), "AUDIT-Z9931"),
            "400,000 retries of one shape": ("\n".join(retries), "AUDIT-Z9931")}


def main() -> None:
    print("| log | MB | standing_out s | str.split s | ratio | the line kept |")
    print("|---|---|---|---|---|---|")
    for name, (text, needle) in logs().items():
        started = time.perf_counter()
        text.split()
        split = time.perf_counter() - started
        started = time.perf_counter()
        out = standing_out(text, 4000)
        took = time.perf_counter() - started
        print(f"| {name} | {len(text) / 1e6:.1f} | {took:.2f} | {split:.2f} | {took / split:.0f}× | {needle in out} |")


if __name__ == "__main__":
    main()
