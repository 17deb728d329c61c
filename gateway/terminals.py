"""Terminal identity lives in core/terminals.py (the back office enrols and revokes too);
the gateway and cashierctl import it from here as before."""
from core.terminals import *  # noqa: F401,F403
from core.terminals import CACHE_S, INDEX_KEY, KEY_PREFIX, LAST_SEEN_EVERY_S, MAX_VERSION_LEN  # noqa: F401
