"""Facts with history: bi-temporal, curated statements (DESIGN.md, "Curation (facts)").

`model.py` holds the model and its vocabulary, `operations.py` the `Facts` part (every
operation journaled as a decision, then applied), `reads.py` queries, history and search
(facts as a source of the one hybrid ranking), `snapshot.py` the snapshot and replay,
`curator.py` the gate that decides what a candidate fact does, `slots.py` the subject,
attribute and value of a statement that the gate compares, `arbiter.py` the LLM for the
pairs the gate cannot settle, `local.py` the deterministic distiller of a turn.
"""

from .curator import Candidate, Curator, Decision, compare, judge
from .model import (
                    DEFAULT_VAULT,
                    DOMAIN,
                    IMPORTANCE_BY_KIND,
                    SYSTEM_SESSION,
                    VAULT_RE,
                    Fact,
                    FactHit,
                    JournaledDecision,
                    normalise,
                    parse_source,
)
from .operations import Facts
from .reads import FactSource

__all__ = ["DEFAULT_VAULT", "DOMAIN", "IMPORTANCE_BY_KIND", "SYSTEM_SESSION", "VAULT_RE", "Candidate", "Curator", "Decision",
           "Fact", "FactHit", "FactSource", "Facts", "JournaledDecision", "compare", "judge", "normalise", "parse_source"]
