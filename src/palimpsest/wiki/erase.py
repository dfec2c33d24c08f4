"""What an erasure (`palimpsest erase`) takes out of the wiki besides the rows of the erased leaves.

A support bot's wiki, mined from two customers' leaves, kept after one of them was erased the pages
only her leaves had made ("Lena Novak", "Rue Oberkampf": empty, titled with her name and street) and,
on the page both customers' leaves wrote ("Chronopost"), the entities her leaves had added ("Rue
Oberkampf", "Lena Novak") — in the store and in the wiki journal's topic rows, so `replay` restored
them. A page's patches say what each leaf did to it: a page every patch of which came from an erased
leaf goes whole; from a page that stays, the names that only erased leaves' patches added go.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..store.wiki_base import Patch, Topic, WikiChange, WikiStoreContract

_ADDING = ("entities", "alias")  # the ops that add names to a page (`Miner.entities`, `Miner._aliases`)


@dataclass
class PagesErased:
    """The pages drawn only from erased leaves (`gone`) and, of the pages that stay, the names to drop."""

    gone: set[str] = field(default_factory=set)
    dropped: dict[str, set[str]] = field(default_factory=dict)  # topic id → entities and aliases only erased leaves added

    def change(self, topics: list[Topic]) -> WikiChange:
        """The store change that takes the dropped names off these (kept) topics."""
        kept = [t for t in topics if t.id in self.dropped]
        return WikiChange(topics=[self.trimmed(t) for t in kept],
                          drop_keys=[(a, t.id) for t in kept for a in t.aliases if a in self.dropped[t.id]])

    def trimmed(self, topic: Topic) -> Topic:
        names = self.dropped.get(topic.id, set())
        return Topic(**{**topic.__dict__, "entities": [e for e in topic.entities if e not in names],
                        "aliases": [a for a in topic.aliases if a not in names]})

    def scrub_line(self, line: dict[str, Any]) -> dict[str, Any]:
        """A wiki journal line with the dropped names off its topic rows and alias keys (replay restores no more)."""
        change = (line.get("metadata") or {}).get("change")
        if not self.dropped or not isinstance(change, dict):
            return line
        topics = [self.trimmed(Topic.from_dict(t)).__dict__ if t.get("id") in self.dropped else t for t in change.get("topics", [])]
        keys = [k for k in change.get("keys", []) if not (k[1] in self.dropped and k[0] in self.dropped[k[1]])]
        return {**line, "metadata": {**line["metadata"], "change": {**change, "topics": topics, "keys": keys}}}


def pages_drawn_from(store: WikiStoreContract, summaries: set[str]) -> PagesErased:
    """What erasing these leaf summaries takes out of the pages they patched."""
    found = PagesErased()
    touched = {t for mark in store.wiki_leaf_marks(sorted(summaries)).values() for t in mark.topics}
    for topic in sorted(touched):
        patches = store.wiki_patches(topic)
        erased = [p for p in patches if p.summary_id in summaries]
        kept = [p for p in patches if p.summary_id not in summaries]
        if not kept:
            found.gone.add(topic)
        elif names := _added(erased) - _said(kept):
            found.dropped[topic] = names
    return found


def _added(patches: list[Patch]) -> set[str]:
    out: set[str] = set()
    for p in patches:
        for op in p.ops:
            if op.get("op") in _ADDING:
                add = op.get("add")
                out.update(str(n) for n in (add if isinstance(add, list) else [add]))
    return out


def _said(patches: list[Patch]) -> set[str]:
    """Every string the kept patches' ops hold: a name one of them added or named stays."""
    out: set[str] = set()
    def walk(v: Any) -> None:
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, dict | list):
            for x in v.values() if isinstance(v, dict) else v:
                walk(x)
    walk([p.ops for p in patches])
    return out
