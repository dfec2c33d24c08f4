"""Packing the block: which items fit the budget, how long each line may be, in what order.

The fill is best-first, in three groups: the leading items (facts, skills, symbols), the
ranked ones (past turns, summaries, wiki statements, document chunks, one score), then
the live tail within its share. What a line costs decides how much evidence a block
holds, so three things keep lines short without losing what they answer:

- **Dates once per day.** The ranked part is shown in time order under a heading per day
  (`### 2023-05-08`); its lines carry only their id. A date on every line took ~7 of a
  recalled turn's ~45 tokens. Time order also shows the model how things went, and which
  of two statements is the later one. Leading items keep their own date on the line.
- **Whole text for the best hits only.** The first `budget // WHOLE_PER` ranked items are
  shown whole up to `budget // TOP_SHARE` tokens (1,000 → 8 items of ≤ 100 tokens; 4,000 →
  32 items of ≤ 400), the rest as a snippet of `SNIPPET_TOKENS` (`snippet.py`): the sentences
  that share the most words with the query, in their order, gaps marked `…`. The full text stays one
  `memory_get_full` away by the line's id.
- **The facts' share.** Facts lead, but at most `FACT_SHARE` of the budget goes to them, so
  a memory with hundreds of distilled facts still shows the turns they came from.

The constants were chosen on one half of each dev set and reported on the other
(docs/recall.md, bench/RESULTS.md).
"""

from __future__ import annotations

from .. import envelope
from ..tokens import count_tokens, count_tokens_batch
from .block import HEADER, LINE_TOKENS, LIVE_SHARE, RecallItem
from .snippet import query_words, snippet

__all__ = ["fill", "query_words", "snippet"]

WHOLE_PER = 125  # one whole-text item per this many tokens of budget
TOP_SHARE = 10  # a whole-text item takes at most budget // TOP_SHARE tokens (and LINE_TOKENS)
SNIPPET_TOKENS = 35  # the other ranked items: their best sentences within this many tokens
FACT_SHARE = 0.6  # at most this share of the budget goes to facts (0.5–0.7 tie on LongMemEval half a)


def _heading(date: str) -> str:
    return f"### {envelope.field(date)}"


LIVE_HEADING = "### live tail"


def _in_time(item: RecallItem) -> tuple[str, str]:
    """Time order; turns said at one moment (a bulk import's one `created_at`) in the order they were
    written — ids are — not in the order of their scores, which put answers before their questions."""
    return item.at or item.date, item.id


def _assemble(lead: list[RecallItem], ranked: list[RecallItem], live: list[RecallItem]) -> str:
    lines = [HEADER, *(i.line() for i in lead)]
    day = None
    for item in sorted(ranked, key=_in_time):
        if item.date != day:
            day = item.date
            lines.append(_heading(day))
        lines.append(item.line(dated=False))
    if live:  # a heading of its own: under the last past day's, the tail read as said that day
        lines += [LIVE_HEADING, *(i.line() for i in live)]
    return envelope.wrap("\n".join(lines))


def _exact(chosen: tuple[list[RecallItem], list[RecallItem], list[RecallItem]], budget: int,
           used: int, words: set[str]) -> tuple[list[RecallItem], list[RecallItem], list[RecallItem]]:
    """The chosen lines counted exactly in one tokenizer pass (they were weighed by
    estimate), walked in the order they were chosen, and those that fit kept; a past turn
    over the room left is cut to it (`RecallItem.shrink`) rather than left out, where half a
    snippet's room is left. The parts
    add up to the assembled block's count: the tokenizer counts no token for a newline."""
    lead_in, ranked_in, live_in = chosen
    lines = [i.line() for i in lead_in] + [i.line() for i in live_in] + [i.line(dated=False) for i in ranked_in]
    costs = iter(count_tokens_batch(lines))
    kept: tuple[list[RecallItem], list[RecallItem], list[RecallItem]] = ([], [], [])
    days: set[str] = set()
    for group, items in ((0, lead_in), (2, live_in), (1, ranked_in)):  # the order `fill` weighed them in
        for item in items:
            heading = count_tokens(_heading(item.date)) if group == 1 and item.date not in days else \
                count_tokens(LIVE_HEADING) if group == 2 and not kept[2] else 0
            cost = next(costs) + heading
            if used + cost > budget and group == 1 and item.shrink(used + cost - budget, words, least=SNIPPET_TOKENS // 2):
                cost = count_tokens(item.line(dated=False)) + heading
            if used + cost <= budget:
                kept[group].append(item)
                used += cost
                if group == 1:
                    days.add(item.date)
            elif group == 2:
                break  # the live tail stays unbroken: newest first, up to the first that does not fit
    return kept


def fill(lead: list[RecallItem], ranked: list[RecallItem], live: list[RecallItem], budget: int,
         words: set[str]) -> tuple[list[RecallItem], int, str]:
    """The items that fit `budget` (in the block's order), its token count and the block."""
    frame = envelope.wrap(HEADER)
    used = count_tokens(frame) + 1
    if used > budget:
        return [], 0, ""
    whole, top = budget // WHOLE_PER, min(LINE_TOKENS, max(SNIPPET_TOKENS, budget // TOP_SHARE))
    fact_room = int(budget * FACT_SHARE)
    live_room = int(budget * LIVE_SHARE)
    chosen: tuple[list[RecallItem], list[RecallItem], list[RecallItem]] = ([], [], [])
    days: set[str] = set()
    # the live tail is weighed newest first, so the room there is holds the latest turns (a short
    # budget kept the oldest of them and left out the last two, an open task among them); shown oldest first. It is
    # weighed before the ranked hits: its share is room kept for it (at 300 tokens the hits had taken it all), and a
    # turn too long for a whole line is shown as a snippet (a 40 KB tool output had ended it before the user's request)
    for group, items in ((0, lead), (2, live[::-1]), (1, ranked)):
        for rank, item in enumerate(items):
            if budget - used < 12:
                break  # not even a short line fits any more
            if group == 1:
                cost = item.prepare(top if rank < whole else SNIPPET_TOKENS, words, dated=False)
                cost += 0 if item.date in days else count_tokens(_heading(item.date)) + 1
            else:
                heading = count_tokens(LIVE_HEADING) + 1 if group == 2 and not chosen[2] else 0
                cost = item.prepare(LINE_TOKENS, words) + heading
                if group == 2 and cost > min(live_room, budget - used):  # (prepared once: cut again, from the whole text)
                    item.text, item.whole, item.tokens = item.whole or item.text, "", 0
                    cost = item.prepare(SNIPPET_TOKENS, words) + heading
            if used + cost > budget:
                if group == 2:
                    break
                continue
            if item.kind == "fact":
                if cost > fact_room:
                    continue
                fact_room -= cost
            if group == 2:
                if cost > live_room:
                    break  # unbroken: up to the first that does not fit
                live_room -= cost
            chosen[group].append(item)
            used += cost
            if group == 1:
                days.add(item.date)
    lead_in, ranked_in, live_in = _exact(chosen, budget, count_tokens(frame), words)
    while lead_in or ranked_in or live_in:  # the exact count of the assembled block has the last word
        shown = live_in[::-1]  # oldest first
        block = _assemble(lead_in, ranked_in, shown)
        tokens = count_tokens(block)
        if tokens <= budget:
            block, tokens = _widen(ranked_in, budget, tokens, words, (lead_in, ranked_in, shown), block)
            return [*lead_in, *sorted(ranked_in, key=_in_time), *shown], tokens, block
        (ranked_in or live_in or lead_in).pop()  # the last ranked hit first, then the oldest of the live tail
    return [], 0, ""


def _widen(ranked: list[RecallItem], budget: int, tokens: int, words: set[str],
           chosen: tuple[list[RecallItem], list[RecallItem], list[RecallItem]], block: str) -> tuple[str, int]:
    """Spend what the block left of its budget on the cut lines, best hit first: a turn cut
    to a snippet while the block had room for all of it shows more of itself (up to
    `LINE_TOKENS`). Weighed by the lines' token counts, then counted once; what overshoots is undone."""
    widened: list[tuple[RecallItem, str, int, str]] = []
    planned = tokens + budget // 50  # a margin for the lines' counts, which are partly estimates
    for item in ranked:
        room = budget - planned
        if room < 8:
            break
        saved = (item.text, item.tokens, item.whole)
        if item.widen(item.tokens + room, words):
            planned += item.tokens - saved[1]
            widened.append((item, *saved))
    if not widened:
        return block, tokens
    while True:
        block = _assemble(*chosen)
        exact = count_tokens(block)
        if exact <= budget or not widened:
            return block, exact
        item, text, n, whole = widened.pop()  # the last widening overshot: undone
        item.text, item.tokens, item.whole = text, n, whole
