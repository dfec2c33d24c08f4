"""Could a small learned judge make the curator generalise? (issue 20) — the sixth session's experiment, not shipped.

(Its successor, with the blind sets written by other hands as training data, is shipped:
`bench/train_curator.py` writes `palimpsest/facts/pairs.py`'s model. This script stays as
the record of the sixth session's figures in bench/RESULTS.md.)

The word rules of `palimpsest.facts.curator.judge` were tuned on dev, dev2 and dev3; on the
blind pairs (written by someone who had never seen them) they decided half correctly. This
script tries what the issue allows: a multinomial logistic regression (numpy, full-batch
gradient descent from zeros: deterministic) over a few features of a pair — the MiniLM cosine
of the two statements, the word / bigram overlaps, the overlap of the rest, the differing words
(number, negation, name, opposite), the slot relation, change / addition / negation markers of
the new statement, holder and attribute match, one subject (`subject`), the length ratio, and
(optionally) the rules' own verdict.

The model's verdict is guarded, since a wrong confirm loses a fact and a wrong supersede
retires a true one: the rules' confirm and supersede stand; the model confirms only past a
threshold, with no number or negation differing (or never, without `confirm` in the grid);
it supersedes only past a threshold and only where the slots or the differing words say a
value changed (slot `changed` / `negated`, a number or a negation); otherwise whatever it
would confirm or supersede is "related". Thresholds are chosen on each fold's training sets:
confirm just above the most probable training non-confirm the model would confirm (+0.05),
supersede the lowest at which its training supersedes stay ≥ 0.95 precise.

Cross-validation by set: train on three of dev (LongMemEval + hand-written + curation-dev.json),
dev2, dev3 and blind, score the fourth, next to the rules on the same pairs; test and fresh are
scored by the model trained on all four. Pairs are judged offline as the curator judges them
(`compare` with the cosine of the two statements' vectors, then `judge` with the candidate later),
so the rules' figures match `bench/curation.py` with the local model except the three explicit
corrections of dev (which name their target; here they are plain statements).

    .venv/bin/python bench/curation_learned.py [--grid] [--l2 1] [--rule-features] [--confirm] [--show]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from curation import HAND, Case, file_cases, lme_cases

from palimpsest.embed import get_embedder
from palimpsest.facts import slots
from palimpsest.facts.curator import compare, judge

TRAIN_SETS = ("dev", "dev2", "dev3", "blind")
MARGIN = 0.05
ACTIONS = ("confirm", "supersede", "related", "new")
SLOTS = ("same", "changed", "negated", "beside", "topic")
DIFFERS = ("number", "numbers", "negation", "name", "opposite")
RULES = ("confirm", "supersede", "related")
NAMES = (["cosine", "lexical", "words", "order", "rest", "cosine*words"] + [f"differs:{d}" for d in DIFFERS]
         + [f"slot:{x}" for x in SLOTS] + [f"rule:{r}" for r in RULES]
         + ["change", "additive", "negated", "holder", "attribute", "subject", "length", "cosine:subject", "cosine:value"])


def parts(text: str) -> tuple[str, str]:
    """What a statement is about (holder and attribute) and what it says of it (value), as
    texts to embed; the whole statement for both when it has no slot."""
    slot = slots.parse(text)
    if slot is None or not slot.value:
        return text, text
    holder = "" if slot.holder in ("", "i", "we") else slot.holder
    return " ".join([holder, *slot.attribute]).strip() or text, " ".join(slot.value)


def _named(holder: str) -> bool:
    return holder not in ("", "i", "we") and "'" not in holder


def subject(a: slots.Slot | None, b: slots.Slot | None, old: str, new: str) -> bool:
    """Both statements are about one thing: their attributes share a content word, or one
    names a holder ("Ana", "Biscuit") that the other one names too (as a whole phrase)."""
    if a is None or b is None:
        return False
    if set(slots.content(a.attribute)) & set(slots.content(b.attribute)):
        return True
    return any(_named(x.holder) and slots.mentions(x.holder.split(), other) for x, other in ((a, new), (b, old)))


def features(s: Any, old: str, new: str, rule: str, part_cosines: tuple[float, float]) -> np.ndarray:
    """The feature vector of one pair: `s` is the curator's `Signals` (with a cosine),
    `rule` its verdict (dispute counts as supersede), `part_cosines` the cosines of the
    subjects and of the values (`parts`)."""
    sem = float(s.semantic or 0.0)
    _, notes = slots.clean(new)
    a, b = slots.parse(old), slots.parse(new)
    holder = float(a is not None and b is not None and slots.same_holder(a, b))
    attribute = float(a is not None and b is not None and slots.same_holder(a, b) and slots.same_attribute(a, b))
    la, lb = len(old.split()), len(new.split())
    rule = "supersede" if rule == "dispute" else rule
    return np.array([sem, s.lexical, s.words, s.order, s.rest, sem * s.words]
                    + [float(d in s.differs) for d in DIFFERS] + [float(s.slot == x) for x in SLOTS]
                    + [float(rule == r) for r in RULES]
                    + [float(bool(notes["change"])), float(bool(notes["additive"])), float(bool(notes["negated"])), holder, attribute,
                       float(subject(a, b, old, new)), min(la, lb) / max(la, lb, 1), *part_cosines], dtype=np.float64)


class Model:
    """Weights (`len(ACTIONS)` × (1 + features)), the features' scaling, and the two thresholds."""

    def __init__(self, weights: Any, mean: Any, scale: Any, confirm: float, supersede: float) -> None:
        self.weights = np.asarray(weights, dtype=np.float64)
        self.mean, self.scale = np.asarray(mean, dtype=np.float64), np.asarray(scale, dtype=np.float64)
        self.confirm, self.supersede = float(confirm), float(supersede)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = np.atleast_2d((x - self.mean) / self.scale)
        logits = np.hstack([np.ones((len(z), 1)), z]) @ self.weights.T
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]

    def decide(self, x: np.ndarray, s: Any, rule: str) -> str:
        """The guarded verdict for one pair (see the docstring of this file)."""
        if rule in ("confirm", "supersede"):
            return rule  # the rules' confirm and supersede stand
        p = self.probabilities(x)[0]
        action = ACTIONS[int(np.argmax(p))]
        if action == "confirm":
            ok = p[0] >= self.confirm and not {"number", "numbers", "negation"} & set(s.differs)
            return "confirm" if ok else "related"
        if action == "supersede":
            replaced = s.slot in ("changed", "negated") or bool({"number", "negation"} & set(s.differs))
            return "supersede" if p[1] >= self.supersede and replaced else "related"
        return action


def train(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 3000, rate: float = 0.5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Multinomial logistic regression by full-batch gradient descent from zeros
    (deterministic): (weights, mean, scale)."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    onehot = np.eye(len(ACTIONS))[y]
    w = np.zeros((len(ACTIONS), z.shape[1]))
    for _ in range(steps):
        logits = z @ w.T
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        grad = (p - onehot).T @ z / len(z)
        penalty = l2 * w / len(z)
        penalty[:, 0] = 0.0
        w -= rate * (grad + penalty)
    return w, mean, scale


def load_sets() -> dict[str, list[Case]]:
    lme, _ = lme_cases()
    sets = {"dev": lme + HAND + file_cases("dev")}
    for name in ("dev2", "dev3", "blind", "test", "fresh"):
        sets[name] = file_cases(name)
    return sets


def featurise(cases: list[Case], embedder: Any) -> tuple[np.ndarray, np.ndarray, list[Any], list[str]]:
    texts = [t for c in cases for t in (c.old, c.new, *parts(c.old), *parts(c.new))]
    v = embedder.checked(texts).reshape(len(cases), 6, -1)
    xs, signals, rules = [], [], []
    for i, c in enumerate(cases):
        s = compare(c.new, c.old, float(v[i, 0] @ v[i, 1]))
        rule = judge(s, True)
        xs.append(features(s, c.old, c.new, rule, (float(v[i, 2] @ v[i, 4]), float(v[i, 3] @ v[i, 5]))))
        signals.append(s)
        rules.append(rule)
    return np.array(xs), np.array([ACTIONS.index(c.label) for c in cases]), signals, rules


def thresholds(model: Model, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    p = model.probabilities(x)
    top = p.argmax(axis=1)
    wrong_confirm = p[(top == 0) & (y != 0), 0]
    confirm = (wrong_confirm.max() if len(wrong_confirm) else 0.5) + MARGIN
    sup = 1.0
    for t in sorted(set(np.round(p[top == 1, 1], 4)), reverse=True):
        chosen = (top == 1) & (p[:, 1] >= t)
        if chosen.any() and (y[chosen] == 1).mean() >= 0.95:
            sup = float(t)
    return float(max(confirm, 0.5)), float(max(sup, 0.5))


def fit(x: np.ndarray, y: np.ndarray, mask: np.ndarray, l2: float, confirms: bool) -> Model:
    w, mean, scale = train(x * mask, y, l2=l2)
    model = Model(w, mean, scale, 0.0, 0.0)
    model.confirm, model.supersede = thresholds(model, x * mask, y)
    if not confirms:
        model.confirm = 2.0  # never: only the rules confirm
    return model


def decide(model: Model, data: tuple[np.ndarray, np.ndarray, list[Any], list[str]], mask: np.ndarray) -> list[str]:
    x, _, signals, rules = data
    return [model.decide(x[i] * mask, signals[i], rules[i]) for i in range(len(x))]


def score(pred: list[str], cases: list[Case]) -> dict[str, float]:
    labels = [c.label for c in cases]
    out: dict[str, float] = {"accuracy": float(np.mean([p == y for p, y in zip(pred, labels)])),
                             "wrong merges": sum(p == "confirm" and y != "confirm" for p, y in zip(pred, labels))}
    for a in ("confirm", "supersede"):
        n_pred, n_true = sum(p == a for p in pred), sum(y == a for y in labels)
        tp = sum(p == a == y for p, y in zip(pred, labels))
        out[f"{a} P"] = tp / n_pred if n_pred else float("nan")
        out[f"{a} R"] = tp / n_true if n_true else float("nan")
    return out


def line(name: str, who: str, s: dict[str, float]) -> str:
    return (f"| {name} | {who} | {s['accuracy']:.2f} | {s['confirm P']:.2f} / {s['confirm R']:.2f} | "
            f"{s['supersede P']:.2f} / {s['supersede R']:.2f} | {s['wrong merges']:.0f} |").replace("nan", "–")


def evaluate(sets: dict[str, list[Case]], data: dict[str, Any], l2: float, rule_features: bool, confirms: bool, parts_cos: bool,
             show: bool = False, quiet: bool = False) -> tuple[float, float, int, dict[str, float]]:
    """Held-out accuracy of the rules and of the model over the four folds (pairs pooled),
    the model's wrong merges there, and its accuracy on test and fresh (trained on all four)."""
    mask = np.array([(rule_features or not n.startswith("rule:")) and (parts_cos or not n.startswith("cosine:")) for n in NAMES], dtype=float)
    right_rules = right_model = total = merges = 0
    for held in TRAIN_SETS:
        others = [n for n in TRAIN_SETS if n != held]
        model = fit(np.vstack([data[n][0] for n in others]), np.concatenate([data[n][1] for n in others]), mask, l2, confirms)
        pred, rules = decide(model, data[held], mask), data[held][3]
        s_rules, s_model = score(rules, sets[held]), score(pred, sets[held])
        right_rules += round(s_rules["accuracy"] * len(pred))
        right_model += round(s_model["accuracy"] * len(pred))
        total += len(pred)
        merges += int(s_model["wrong merges"])
        if not quiet:
            print(line(held, "rules", s_rules))
            confirm = f"confirm ≥ {model.confirm:.2f}" if model.confirm <= 1 else "never confirms"
            print(line(held, f"model trained on {' + '.join(others)} ({confirm}, supersede ≥ {model.supersede:.2f})", s_model))
        if show:
            for c, r, p in zip(sets[held], rules, pred):
                if r != p:
                    mark = "+" if p == c.label else "-" if r == c.label else "~"
                    print(f"    {mark} {c.label}: rules {r}, model {p}: {c.old!r} -> {c.new!r}")
    model = fit(np.vstack([data[n][0] for n in TRAIN_SETS]), np.concatenate([data[n][1] for n in TRAIN_SETS]), mask, l2, confirms)
    unseen = {}
    for name in ("test", "fresh"):
        s_rules, s_model = score(data[name][3], sets[name]), score(decide(model, data[name], mask), sets[name])
        unseen[name] = s_model["accuracy"]
        if not quiet:
            print(line(name, "rules", s_rules))
            print(line(name, "model trained on all four", s_model))
    return right_rules / total, right_model / total, merges, unseen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--l2", type=float, default=1.0, help="L2 penalty of the logistic regression")
    ap.add_argument("--rule-features", action="store_true", help="give the model the rules' verdict as features")
    ap.add_argument("--parts", action="store_true", help="add the cosines of the two subjects and of the two values")
    ap.add_argument("--confirm", action="store_true", help="let the model confirm (past its threshold)")
    ap.add_argument("--show", action="store_true", help="print the held-out pairs where the model and the rules differ")
    ap.add_argument("--grid", action="store_true", help="pooled held-out figures for every l2 × rule features × confirm")
    args = ap.parse_args()
    embedder = get_embedder("local")
    sets = load_sets()
    data = {name: featurise(cases, embedder) for name, cases in sets.items()}
    if args.grid:
        print("| l2 | rule features | part cosines | model confirms | held-out accuracy, rules | held-out accuracy, model | model wrong merges "
              "| test (model) | fresh (model) |\n|---|---|---|---|---|---|---|---|---|")
        for l2 in (0.1, 1.0, 10.0, 30.0):
            for rule_features in (False, True):
                for parts_cos in (False, True):
                    for confirms in (False, True):
                        r, m, merges, unseen = evaluate(sets, data, l2, rule_features, confirms, parts_cos, quiet=True)
                        flags = " | ".join("yes" if f else "no" for f in (rule_features, parts_cos, confirms))
                        print(f"| {l2:g} | {flags} | {r:.3f} | {m:.3f} | {merges} | {unseen['test']:.2f} | {unseen['fresh']:.2f} |")
        return
    print("| held-out set | judge | accuracy | confirm P / R | supersede P / R | wrong merges |\n|---|---|---|---|---|---|")
    r, m, merges, _ = evaluate(sets, data, args.l2, args.rule_features, args.confirm, args.parts, show=args.show)
    print(f"\nfour folds pooled ({sum(len(sets[n]) for n in TRAIN_SETS)} pairs): rules {r:.3f}, model {m:.3f}, "
          f"model wrong merges {merges}")


if __name__ == "__main__":
    main()
