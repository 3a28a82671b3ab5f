"""The ``swppp`` Processing algorithms: a full review, and (later) one per check."""
