"""Search: one hybrid ranking (`hybrid.py`) over a source each kind supplies, the query's
words and checks (`query.py`), and the message-specific stages (`messages.py`,
`conversation.py`, `literal.py`)."""

from .conversation import conversation_rerank, query_subject, session_boost
from .floor import floor_for
from .hybrid import MIN_SEMANTIC, Ranking, Scored, Source, Weights, decay, normalise, rank
from .messages import MessageSearch, MessageSource, SearchResult, embedding_text, keyword, temporal_score
from .query import check_limit, check_query, query_terms

__all__ = ["MIN_SEMANTIC", "floor_for", "MessageSearch", "MessageSource", "Ranking", "Scored", "SearchResult", "Source", "Weights",
           "check_limit", "check_query", "conversation_rerank", "decay", "embedding_text", "keyword", "normalise",
           "query_subject", "query_terms", "rank", "session_boost", "temporal_score"]
