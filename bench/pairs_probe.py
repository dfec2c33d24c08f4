"""Probe: would more training pairs, and features read from the vectors of what differs, carry the pair model to
pairs it never saw? Leave-one-set-out over the development sets; held-out sets scored by a model fit on all of them.

    .venv/bin/python bench/pairs_probe.py [--held blind9 ...]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import curation
import train_curator as tc

from palimpsest.embed import get_embedder
from palimpsest.facts import curator, pairs

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


def content(text: str) -> list[tuple[str, str]]:
    """(word, its stem) of each content word."""
    out = []
    for w in WORD.findall(text):
        k = curator.tokens(w)
        if k:
            out.append((w, k[0]))
    return out


def diff_texts(old: str, new: str) -> tuple[str, str, str]:
    a, b = content(old), content(new)
    sa, sb = {k for _, k in a}, {k for _, k in b}
    return (" ".join(w for w, k in a if k not in sb), " ".join(w for w, k in b if k not in sa),
            " ".join(w for w, k in a if k in sb))


def extra(cases, embedder) -> np.ndarray:
    texts = []
    for c in cases:
        only_old, only_new, shared = diff_texts(c.old, c.new)
        texts += [c.old, c.new, only_old or ".", only_new or ".", shared or "."]
    V = embedder.checked(texts).reshape(len(cases), 5, -1)
    rows = []
    for c, (o, n, do, dn, sh) in zip(cases, V):
        only_old, only_new, shared = diff_texts(c.old, c.new)
        eo, en, es = not only_old, not only_new, not shared
        rows.append([
            0.0 if eo or en else float(do @ dn),  # the two differing parts: synonyms, two values of one kind, or two claims
            0.0 if en else float(dn @ o),  # what the newer adds, to the older whole
            0.0 if eo else float(do @ n),
            0.0 if es else float(sh @ o), 0.0 if es else float(sh @ n),
            float(eo), float(en), len(only_old.split()) / max(1, len(content(c.old))), len(only_new.split()) / max(1, len(content(c.new))),
        ])
    return np.array(rows)


def vec_feats(cases, embedder, dims: int) -> np.ndarray:
    V = embedder.checked([t for c in cases for t in (c.old, c.new)]).reshape(len(cases), 2, -1)
    return np.hstack([np.abs(V[:, 0] - V[:, 1])[:, :dims], (V[:, 0] * V[:, 1])[:, :dims]])


def decide(P: np.ndarray, rule: str, s, case, moves: set[str], at: dict[str, float], max_words: int) -> str:
    if rule == "supersede" and "unsupersede" in moves and P[1] < at["unsupersede"]:
        p = P.copy()
        p[0] = p[1] = 0
        return pairs.LABELS[int(p.argmax())]
    if rule in ("confirm", "supersede"):
        return rule
    if max(len(case.new.split()), len(case.old.split())) > max_words:
        return rule
    p = P.copy()
    if "confirm" not in moves or pairs.says_two_things(s) or s.refines or p[0] < at["confirm"]:
        p[0] = 0
    short = max(len(case.new.split()), len(case.old.split())) <= at["move_words"]
    if "supersede" not in moves or p[1] < at["supersede"] or not short or s.slot == "beside" or (s.semantic or 0) < at["sup_cos"]:
        p[1] = 0
    if rule == "new" and ("link" not in moves or not short or (s.semantic or 0) < at["sup_cos"]):
        p[2] = 0
    return pairs.LABELS[int(p.argmax())]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", nargs="*", default=["train1", "train2", "train3", "train4"])
    ap.add_argument("--held", nargs="*", default=["test", "fresh"])
    ap.add_argument("--feats", default="base", help="base | base+diff | base+diff+vec")
    ap.add_argument("--moves", default="confirm", help="comma list of confirm, supersede, link")
    ap.add_argument("--confirm-at", type=float, default=0.95)
    ap.add_argument("--supersede-at", type=float, default=0.9)
    ap.add_argument("--unsupersede-at", type=float, default=0.1)
    ap.add_argument("--l2", type=float, default=0.03)
    ap.add_argument("--move-words", type=int, default=99)
    ap.add_argument("--sup-cos", type=float, default=0.0)
    ap.add_argument("--show", help="print the model's moves to these actions (comma list)")
    ap.add_argument("--dims", type=int, default=384)
    args = ap.parse_args()
    embedder = get_embedder("local")
    sets = tc.dev_sets()
    for n in args.train + args.held:
        sets[n] = curation.file_cases(n)
    names = list(tc.DEV) + args.train
    enc = {}
    for n in names + args.held:
        X, y, rules, signals = tc.encode(sets[n], embedder)
        if "diff" in args.feats:
            X = np.hstack([X, extra(sets[n], embedder)])
        if "vec" in args.feats:
            X = np.hstack([X, vec_feats(sets[n], embedder, args.dims)])
        enc[n] = (X, y, rules, signals)
    moves = set(args.moves.split(","))
    at = {"confirm": args.confirm_at, "supersede": args.supersede_at, "unsupersede": args.unsupersede_at, "move_words": args.move_words, "sup_cos": args.sup_cos}
    max_words = max(len(t.split()) for n in names for c in sets[n] for t in (c.old, c.new))

    def run(model: dict, n: str) -> list[str]:
        Z = np.hstack([(enc[n][0] - model["mean"]) / model["scale"], np.ones((len(enc[n][0]), 1))]) @ model["weights"]
        P = np.exp(Z - Z.max(1, keepdims=True))
        P /= P.sum(1, keepdims=True)
        return [decide(P[i], enc[n][2][i], enc[n][3][i], sets[n][i], moves, at, max_words) for i in range(len(P))]

    def fitted(use: list[str]) -> dict:
        m = tc.fit(np.vstack([enc[n][0] for n in use]), np.concatenate([enc[n][1] for n in use]), args.l2)
        return {k: np.asarray(v) for k, v in m.items()}

    print(f"feats {args.feats} ({enc[names[0]][0].shape[1]}), moves {sorted(moves)}, confirm at {args.confirm_at}, "
          f"supersede at {args.supersede_at}, l2 {args.l2}")
    print("| set | rules | model | merges | sup P / R | families rules → model |")
    total = [0, 0, 0, 0]
    for n in names + args.held:
        model = fitted([m for m in names if m != n])
        labels = [c.label for c in sets[n]]
        pred = run(model, n)
        if args.show:
            for c, r, p_, sg in zip(sets[n], enc[n][2], pred, enc[n][3]):
                if p_ != r and p_ in args.show.split(","):
                    print(f"  {n} {r}->{p_} [{c.label}] cos={sg.semantic:.2f} slot={sg.slot} words={sg.words:.2f} | {c.old} || {c.new}")
        ra, _, _ = tc.score(labels, enc[n][2])
        acc, merges, sp = tc.score(labels, pred)
        sup = [p for p, y in zip(pred, labels) if y == "supersede"]
        fam = {}
        for c, r, p in zip(sets[n], enc[n][2], pred):
            f = fam.setdefault(c.family, [0, 0, 0])
            f[0] += r == c.label
            f[1] += p == c.label
            f[2] += 1
        print(f"| {n} | {ra:.3f} | {acc:.3f} | {merges} | {sp:.2f} / {sup.count('supersede') / max(1, len(sup)):.2f} | "
              + ", ".join(f"{k} {a}→{b}/{t}" for k, (a, b, t) in sorted(fam.items())) + " |")
        if n in names:
            total[0] += ra * len(labels)
            total[1] += acc * len(labels)
            total[2] += len(labels)
            total[3] += merges
    print(f"left-out development pooled: rules {total[0] / total[2]:.3f}, model {total[1] / total[2]:.3f}, merges {total[3]}")


if __name__ == "__main__":
    main()
