"""Why a receipt did not print: `ReceiptNotPrinted` and its reason codes (kept apart from
the printer module so that screens can name them without importing python-escpos)."""
from __future__ import annotations

NOT_CONFIGURED, UNREACHABLE, OUT_OF_PAPER, TIMEOUT, UNSUPPORTED, FAILED = (
    "not_configured", "unreachable", "out_of_paper", "timeout", "unsupported", "failed")


class ReceiptNotPrinted(Exception):
    """The receipt did not reach the printer. The operation itself is unaffected."""

    def __init__(self, reason: str, detail: str = ""):
        self.reason, self.detail = reason, detail
        super().__init__(f"{reason}: {detail}" if detail else reason)
